/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/client.c - librdn (see client.h): the handshake, the GET pipeline
 * over the NIC half (rdn/librdn/nic_client.h), the judgement of every answer,
 * the TCP fallback through libmemcached, and LRU reports.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libmemcached/memcached.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/keyhash.h"
#include "proto/rdn_framing.h"
#include "rdn/librdn/client.h"
#include "rdn/librdn/nic_client.h"

#define RDN_DEFAULT_DEPTH   8
#define RDN_DEFAULT_TIMEOUT 5000
#define RDN_MAX_TRIES       4    /* NIC attempts per key (torn, stale) */
#define RDN_HITS_EVERY_MS   1000 /* LRU reports at least this often */
#define RDN_RECONNECT_MS    1000 /* a broken RDMA path is retried after, */
#define RDN_REPROBE_MS                                                         \
    10000                     /* doubling up to this while it fails; a         \
                                 server without --rdn-port: asked again */
#define RDN_SPIN_ROUNDS   256 /* polls of all servers before sleeping */
#define RDN_WAIT_SLICE_MS 1   /* one sleep on one server's answers */

/* One server of the list and its NIC path. */
struct rdn_srv {
    char host[256];
    int tcp_port;
    int rdn_port;      /* from its stats (or the caller); 0: none */
    bool fixed_port;   /* given by the caller: its stats are not asked */
    bool was_up;       /* its NIC path worked once (a retry reconnects) */
    uint32_t retry_ms; /* wait before the next nic_retry() */
    char why[160];     /* why its keys go over TCP (while !nic_ok) */
    const struct rdn_opts *opts; /* the connection's */
    int ctl;                     /* the handshake connection */
    uint64_t ctl_check_ms;       /* when ctl_retry() last looked at it */
    struct rnic_device *dev;
    struct ofl_client nic;
    bool nic_ok;          /* false: TCP only, for now */
    bool down;            /* its process is gone (RDN_DOWN_TCP): TCP only */
    uint64_t nic_lost_ms; /* when it failed (or a reconnection did) */
    struct rdn_geometry geo;
    uint64_t geo_ms; /* when geo.server_time was current */
    uint32_t id;
    uint64_t token; /* the welcome's (RESUME proves who we are) */
    struct ofl_hits hits;
    uint64_t hit_fp[RDN_HITS_MAX];
    uint64_t hits_since_ms;
    struct rdn_client_stats st;
};

struct mget;

struct rdn_conn {
    memcached_st *mc;
    bool own_mc;
    char user[RDN_AUTH_MAX + 1]; /* copies of opts' login */
    char password[RDN_AUTH_MAX + 1];
    bool tcp_renew; /* rdn_connect(): a disabled handle is replaced */
    bool tcp_sasl;  /* the own handle speaks binary with a SASL login */
    struct rdn_opts opts;
    struct rdn_srv **srv; /* in the order of the handle's server list */
    uint32_t nsrv;
    enum rdn_source last_src;
    const char *last_why;
    struct mget *m; /* rdn_mget()'s arrays, kept for the next call */
};

static uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the handshake ---------------------------------------------------- */

/* connect() within timeout_ms: 0 or -errno (-ETIMEDOUT). */
static int connect_within(int fd, const struct sockaddr *sa, socklen_t len,
                          int timeout_ms)
{
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    int fl = fcntl(fd, F_GETFL), err = 0;
    socklen_t elen = sizeof(err);

    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    if (connect(fd, sa, len) < 0) {
        if (errno != EINPROGRESS)
            return -errno;
        if (poll(&pfd, 1, timeout_ms) <= 0)
            return -ETIMEDOUT;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
            return -errno;
        if (err)
            return -err;
    }
    return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

/* A TCP connection to host:port within timeout_ms (a server on a host
 * that is down must not hold GETs up for the kernel's minutes). */
static int tcp_connect(const char *host, int port, int timeout_ms)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM};
    struct addrinfo *res, *ai;
    char svc[16];
    int fd = -ECONNREFUSED, one = 1;

    snprintf(svc, sizeof(svc), "%d", port);
    if (getaddrinfo(host, svc, &hints, &res) != 0)
        return -EHOSTUNREACH;
    for (ai = res; ai; ai = ai->ai_next) {
        int rc;

        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            fd = -errno;
            continue;
        }
        rc = connect_within(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms);
        if (rc == 0)
            break;
        close(fd);
        fd = rc;
    }
    freeaddrinfo(res);
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Waits for message `want`; a REJECT yields its status. */
static int expect_msg(struct rdn_srv *s, uint16_t want, void *buf, size_t len)
{
    union {
        struct rdn_reject rej;
        uint8_t raw[256];
    } u;
    uint16_t type;
    int n =
        ofl_wire_recv(s->ctl, s->opts->timeout_ms, &type, u.raw, sizeof(u.raw));

    if (n < 0)
        return n;
    if (type == RDN_MSG_REJECT && n == sizeof(u.rej))
        return u.rej.status < 0 ? u.rej.status : -EPROTO;
    if (type != want || (size_t)n != len)
        return -EPROTO;
    memcpy(buf, u.raw, len);
    return 0;
}

static int geometry_ok(const struct rdn_geometry *g)
{
    return strncmp(g->hash, RDN_HASH_NAME, sizeof(g->hash)) == 0 &&
           g->fp_bits == RDN_FP_BITS && g->bucket_slots == RDN_BUCKET_SLOTS &&
           g->bucket_bytes == sizeof(struct rdn_bucket) && g->hashpower >= 1 &&
           g->hashpower <= 40 && g->gen_word != 0 && g->item_size_max > 0 &&
           g->item_size_max <= (1u << 30);
}

/* The login, first on a new handshake connection, when there is one. */
static int authenticate(struct rdn_srv *s)
{
    const char *user = s->opts->user, *pass = s->opts->password;
    uint8_t buf[sizeof(struct rdn_auth) + 2 * RDN_AUTH_MAX];
    uint8_t none;

    if (user == NULL)
        return 0;
    struct rdn_auth a = {.user_len = (uint16_t)strlen(user),
                         .pass_len = (uint16_t)strlen(pass)};
    memcpy(buf, &a, sizeof(a));
    memcpy(buf + sizeof(a), user, a.user_len);
    memcpy(buf + sizeof(a) + a.user_len, pass, a.pass_len);
    int rc = ofl_wire_send(s->ctl, RDN_MSG_AUTH, buf,
                           (uint32_t)(sizeof(a) + a.user_len + a.pass_len), 0);
    return rc < 0 ? rc : expect_msg(s, RDN_MSG_AUTH_OK, &none, 0);
}

/* Sends msg on the handshake connection and takes the GEOMETRY answer. */
static int ask_geometry(struct rdn_srv *s, uint16_t msg, const void *payload,
                        uint32_t len)
{
    struct rdn_geometry g;
    int rc = ofl_wire_send(s->ctl, msg, payload, len, 0);

    if (rc == 0)
        rc = expect_msg(s, RDN_MSG_GEOMETRY, &g, sizeof(g));
    if (rc == 0 && !geometry_ok(&g))
        rc = -EPROTO;
    if (rc < 0)
        return rc;
    s->geo = g;
    s->geo_ms = mono_ms();
    return 0;
}

/*
 * A new handshake connection for this client (RESUME): the server that
 * the old one went to died, and the one that re-attached our chain takes
 * the new one. Gives the current geometry too.
 */
static int ctl_resume(struct rdn_srv *s)
{
    struct rdn_resume r = {.token = s->token, .client_id = s->id};
    int fd = tcp_connect(s->host, s->rdn_port, s->opts->timeout_ms), rc;

    if (fd < 0)
        return fd;
    if (s->ctl >= 0)
        close(s->ctl);
    s->ctl = fd;
    rc = authenticate(s);
    if (rc == 0)
        rc = ask_geometry(s, RDN_MSG_RESUME, &r, sizeof(r));
    if (rc == 0)
        s->st.resumes++;
    return rc;
}

/* Asks for the current geometry (REFRESH), over a resumed connection if
 * the old one died with its server. */
static int refresh(struct rdn_srv *s)
{
    int rc = ask_geometry(s, RDN_MSG_REFRESH, NULL, 0);

    if (rc < 0 && s->nic_ok && ctl_resume(s) == 0)
        rc = 0;
    return rc;
}

/* Opens the NIC side sized for the server's items and says hello. */
static int hello(struct rdn_srv *s)
{
    struct rdn_welcome w;
    struct rdn_hello h;
    int rc;

    rc = rnic_open(s->opts->device, NULL, &s->dev);
    if (rc == 0)
        rc = ofl_client_open(s->dev, s->opts->depth,
                             (uint32_t)rdn_resp_slot_size(s->geo.item_size_max),
                             &s->nic);
    /* the QP speaks from where the server was reached (a NIC on every
     * address: rdn-nicd --listen 0.0.0.0) */
    if (rc == 0)
        rc = rnic_qp_set_gid_sock(s->nic.q.qp, s->ctl);
    if (rc >= 0)
        rc = ofl_client_hello(&s->nic, &h);
    h.flags = s->opts->search_seq ? RDN_HELLO_SEQ : 0;
    if (rc == 0)
        rc = ofl_wire_send(s->ctl, RDN_MSG_HELLO, &h, sizeof(h), 0);
    if (rc == 0)
        rc = expect_msg(s, RDN_MSG_WELCOME, &w, sizeof(w));
    if (rc == 0 &&
        (!geometry_ok(&w.geo) || w.depth == 0 || w.depth > s->opts->depth ||
         (w.depth & (w.depth - 1)) || w.rq_window < w.depth))
        rc = -EPROTO;
    if (rc < 0)
        return rc;
    s->nic.depth = w.depth; /* fewer slots granted: use the first ones */
    s->nic.rq_window = w.rq_window;
    s->geo = w.geo;
    s->geo_ms = mono_ms();
    s->id = w.client_id;
    s->token = w.token;
    return ofl_client_connect(&s->nic, w.qp_addr);
}

static void close_ctl(struct rdn_srv *s);

/* Tears the RDMA side down (the server's side first, see close_ctl()). */
static void nic_down(struct rdn_srv *s)
{
    if (s->ctl >= 0)
        close_ctl(s);
    s->ctl = -1;
    ofl_client_close(&s->nic);
    if (s->dev)
        rnic_close(s->dev);
    s->dev = NULL;
}

/* The handshake: geometry, QP, response slots. */
static int nic_up(struct rdn_srv *s)
{
    int rc;

    s->ctl = tcp_connect(s->host, s->rdn_port, s->opts->timeout_ms);
    rc = s->ctl < 0 ? s->ctl : 0;
    if (rc == 0)
        rc = authenticate(s);
    if (rc == 0)
        rc = refresh(s);
    if (rc == 0)
        rc = hello(s);
    if (rc < 0)
        nic_down(s);
    return rc;
}

/* ---- finding a server's RDMA port ------------------------------------- */

/* A reader of "\r\n"-ended lines on a socket. */
struct lines {
    int fd;
    uint64_t deadline;
    char buf[4096];
    size_t len, off;
};

/* More bytes within the deadline: 0 or -errno. */
static int lines_fill(struct lines *r)
{
    struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
    uint64_t now = mono_ms();
    ssize_t got;

    if (now >= r->deadline || poll(&pfd, 1, (int)(r->deadline - now)) <= 0)
        return -ETIMEDOUT;
    got = read(r->fd, r->buf, sizeof(r->buf));
    if (got <= 0)
        return got < 0 ? -errno : -ECONNRESET;
    r->len = (size_t)got;
    r->off = 0;
    return 0;
}

/* The next line (without "\r\n", cut to cap - 1 bytes) within the
 * deadline: 0 or -errno. */
static int next_line(struct lines *r, char *line, size_t cap)
{
    size_t n = 0;
    char prev = 0;
    int rc;

    for (;;) {
        while (r->off < r->len) {
            char ch = r->buf[r->off++];

            if (ch == '\n' && prev == '\r') {
                if (n && line[n - 1] == '\r')
                    n--;
                line[n] = '\0';
                return 0;
            }
            if (n + 1 < cap)
                line[n++] = ch;
            prev = ch;
        }
        rc = lines_fill(r);
        if (rc < 0)
            return rc;
    }
}

/* Exactly n bytes within the deadline: 0 or -errno. */
static int next_bytes(struct lines *r, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n;) {
        if (r->off == r->len) {
            int rc = lines_fill(r);
            if (rc < 0)
                return rc;
        }
        size_t k = r->len - r->off < n - i ? r->len - r->off : n - i;
        memcpy(out + i, r->buf + r->off, k);
        r->off += k;
        i += k;
    }
    return 0;
}

/* A binary-protocol request (memcached's, no extras, CAS 0). */
static int bin_send(int fd, uint8_t op, const char *key, size_t nkey,
                    const char *value, size_t nvalue)
{
    uint8_t p[24 + 2 * RDN_AUTH_MAX + 64] = {0x80, op};
    size_t body = nkey + nvalue;

    if (body > sizeof(p) - 24)
        return -EINVAL;
    p[2] = (uint8_t)(nkey >> 8), p[3] = (uint8_t)nkey;
    for (int i = 0; i < 4; i++)
        p[8 + i] = (uint8_t)(body >> (24 - 8 * i));
    memcpy(p + 24, key, nkey);
    memcpy(p + 24 + nkey, value, nvalue);
    return write(fd, p, 24 + body) == (ssize_t)(24 + body) ? 0 : -EIO;
}

/* The next binary response: its status, key length and body (at most
 * cap bytes, else -EPROTO). 0 or -errno. */
static int bin_recv(struct lines *r, uint16_t *status, uint16_t *nkey,
                    uint8_t *body, size_t cap, size_t *nbody)
{
    uint8_t h[24];
    int rc = next_bytes(r, h, sizeof(h));

    if (rc < 0)
        return rc;
    *status = (uint16_t)(h[6] << 8 | h[7]);
    *nkey = (uint16_t)(h[2] << 8 | h[3]);
    *nbody =
        (size_t)h[8] << 24 | (size_t)h[9] << 16 | (size_t)h[10] << 8 | h[11];
    if (h[0] != 0x81 || *nbody > cap || *nkey > *nbody)
        return -EPROTO;
    return next_bytes(r, body, *nbody);
}

/*
 * "stats rdn" of a server that speaks the binary protocol only (memcached
 * -S): a SASL PLAIN login with opts' user and password, then STAT "rdn".
 * Sets s->rdn_port; 0 or -errno (-EACCES: the login was refused).
 */
static int probe_sasl(struct rdn_srv *s)
{
    char plain[2 * RDN_AUTH_MAX + 2], val[32];
    uint8_t body[512];
    struct lines r = {
        .fd = tcp_connect(s->host, s->tcp_port, s->opts->timeout_ms),
        .deadline = mono_ms() + (uint64_t)s->opts->timeout_ms};
    size_t nu = strlen(s->opts->user), np = strlen(s->opts->password), nb;
    uint16_t status, nkey;
    int rc, port = 0;

    if (r.fd < 0)
        return r.fd;
    plain[0] = '\0';
    memcpy(plain + 1, s->opts->user, nu);
    plain[1 + nu] = '\0';
    memcpy(plain + 2 + nu, s->opts->password, np);
    rc = bin_send(r.fd, 0x21, "PLAIN", 5, plain, 2 + nu + np); /* SASL_AUTH */
    if (rc == 0)
        rc = bin_recv(&r, &status, &nkey, body, sizeof(body), &nb);
    if (rc == 0 && status != 0)
        rc = -EACCES;
    if (rc == 0)
        rc = bin_send(r.fd, 0x10, "rdn", 3, "", 0); /* STAT */
    while (rc == 0 &&
           (rc = bin_recv(&r, &status, &nkey, body, sizeof(body), &nb)) == 0) {
        if (status != 0) {
            rc = -EPROTO; /* not a server that knows STAT "rdn" */
            break;
        }
        if (nkey == 0)
            break;
        if (nkey == 8 && memcmp(body, "rdn_port", 8) == 0 &&
            nb - nkey < sizeof(val)) {
            memcpy(val, body + nkey, nb - nkey);
            val[nb - nkey] = '\0';
            port = atoi(val);
        }
    }
    close(r.fd);
    if (rc == 0)
        s->rdn_port = port > 0 && port <= 65535 ? port : 0;
    return rc;
}

/* Sends the whole string s on fd: 0 or -EIO. */
static int send_str(int fd, const char *str)
{
    size_t n = strlen(str);

    return write(fd, str, n) == (ssize_t)n ? 0 : -EIO;
}

/* Whether the server at host:port closes an ASCII connection unanswered
 * but answers a binary VERSION, as memcached -S does (it speaks the binary
 * protocol only); a server that is going away does neither. */
static bool binary_only(const char *host, int port, int timeout_ms)
{
    struct lines r = {.fd = tcp_connect(host, port, timeout_ms),
                      .deadline = mono_ms() + (uint64_t)timeout_ms};
    uint8_t body[256];
    uint16_t status, nkey;
    size_t nb;
    char line[512];
    int rc;

    if (r.fd < 0)
        return false;
    /* padded to a binary header's 24 bytes, as probe()'s */
    rc = send_str(r.fd, "version               \r\n");
    if (rc == 0)
        rc = next_line(&r, line, sizeof(line));
    close(r.fd);
    if (rc != -ECONNRESET)
        return false;
    r = (struct lines){.fd = tcp_connect(host, port, timeout_ms),
                       .deadline = mono_ms() + (uint64_t)timeout_ms};
    if (r.fd < 0)
        return false;
    rc = bin_send(r.fd, 0x0b, "", 0, "", 0); /* VERSION */
    if (rc == 0)
        rc = bin_recv(&r, &status, &nkey, body, sizeof(body), &nb);
    close(r.fd);
    return rc == 0;
}

/* memcached -Y's login on an ASCII connection: a set whose data is
 * "user password". 0, or -EACCES (refused), -EIO. */
static int ascii_login(struct rdn_srv *s, struct lines *r)
{
    char cmd[2 * RDN_AUTH_MAX + 64], line[512];
    int n = snprintf(cmd, sizeof(cmd), "set rdn 0 0 %zu\r\n%s %s\r\n",
                     strlen(s->opts->user) + 1 + strlen(s->opts->password),
                     s->opts->user, s->opts->password);
    int rc = n > 0 && (size_t)n < sizeof(cmd) ? send_str(r->fd, cmd) : -EIO;

    if (rc == 0)
        rc = next_line(r, line, sizeof(line));
    return rc < 0 ? rc : strcmp(line, "STORED") == 0 ? 0 : -EACCES;
}

/*
 * Asks the server for "stats rdn" on a connection of its own (not the
 * application's handle, whose state is libmemcached's): sets s->rdn_port
 * from rdn_port, 0 if the server has none (rdn_enabled no). A server that
 * wants a login first gets opts' one: -Y's ASCII login, or for a server
 * that closes an ASCII connection (-S) SASL over the binary protocol. Returns 0
 * or a negative errno (the server did not answer, -EACCES: no login or a
 * refused one).
 */
static int probe(struct rdn_srv *s)
{
    /* Spaces to a binary header's 24 bytes: the same command to an ASCII
     * server, and a server of the binary protocol only closes at once
     * rather than wait for the rest of a header. */
    static const char cmd[] = "stats rdn             \r\n";
    struct lines r = {
        .fd = tcp_connect(s->host, s->tcp_port, s->opts->timeout_ms),
        .deadline = mono_ms() + (uint64_t)s->opts->timeout_ms};
    int fd = r.fd, rc, port = 0;
    bool logged_in = false;
    char line[512];

    if (fd < 0)
        return fd;
    rc = send_str(fd, cmd);
    while (rc == 0 && (rc = next_line(&r, line, sizeof(line))) == 0) {
        if (strcmp(line, "END") == 0)
            break;
        if (strcmp(line, "CLIENT_ERROR unauthenticated") == 0 && !logged_in) {
            rc = s->opts->user ? ascii_login(s, &r) : -EACCES;
            if (rc == 0)
                rc = send_str(fd, cmd);
            logged_in = true;
            continue;
        }
        if (strncmp(line, "STAT ", 5) != 0) {
            rc = -EPROTO; /* ERROR: not a memcached that knows "stats rdn" */
            break;
        }
        if (sscanf(line, "STAT rdn_port %d", &port) == 1 &&
            (port <= 0 || port > 65535))
            port = 0;
    }
    close(fd);
    /* Closed unanswered: a server of the binary protocol only (-S). */
    if (rc == -ECONNRESET && s->opts->user)
        return probe_sasl(s);
    if (rc == 0)
        s->rdn_port = port;
    return rc;
}

/* Sets the server's NIC path up (its port from its stats unless given);
 * on failure s->why says why. */
static int srv_up(struct rdn_srv *s)
{
    int rc;

    if (s->tcp_port == 0) {
        snprintf(s->why, sizeof(s->why), "a UNIX socket: no RDMA port");
        return -ENOTSUP;
    }
    if (!s->fixed_port) {
        rc = probe(s);
        if (rc < 0) {
            snprintf(s->why, sizeof(s->why), "stats rdn failed: %s",
                     strerror(-rc));
            return rc;
        }
        if (s->rdn_port == 0) {
            snprintf(s->why, sizeof(s->why),
                     "no rdn_port in its stats (no --rdn-port)");
            return -ENOTSUP;
        }
    }
    rc = nic_up(s);
    if (rc < 0) {
        snprintf(s->why, sizeof(s->why), "rdn_port %d: handshake failed: %s",
                 s->rdn_port, strerror(-rc));
        return rc;
    }
    s->nic_ok = true;
    s->was_up = true;
    s->down = false;
    s->retry_ms = RDN_RECONNECT_MS;
    return 0;
}

/* The RDMA path failed (rc: how, or 0): TCP answers until a reconnection
 * works. */
static void nic_lost(struct rdn_srv *s, const char *why, int rc)
{
    s->nic_ok = false;
    s->nic_lost_ms = mono_ms();
    s->retry_ms = RDN_RECONNECT_MS;
    if (rc < 0)
        snprintf(s->why, sizeof(s->why), "%s: %s", why, strerror(-rc));
    else
        snprintf(s->why, sizeof(s->why), "%s", why);
}

/*
 * The server never speaks first on the handshake connection: anything to
 * read there is its end (the server died). While the NIC path works, the
 * connection is resumed on a restarted server that re-attached our chain,
 * so LRU reports reach it again; until then, with RDN_DOWN_TCP, the server
 * is down (its keys go to libmemcached). At most once per RDN_RECONNECT_MS,
 * and while it is down at doubling intervals up to RDN_REPROBE_MS.
 */
static void ctl_retry(struct rdn_srv *s)
{
    struct pollfd pfd = {.fd = s->ctl, .events = POLLIN};
    uint64_t now = mono_ms();
    int rc;

    if (!s->nic_ok ||
        now - s->ctl_check_ms < (s->down ? s->retry_ms : RDN_RECONNECT_MS))
        return;
    s->ctl_check_ms = now;
    if (!s->down && s->ctl >= 0 && poll(&pfd, 1, 0) == 0)
        return; /* alive */
    rc = ctl_resume(s);
    if (rc == 0) {
        s->down = false;
        s->retry_ms = RDN_RECONNECT_MS;
    } else if (s->opts->while_down == RDN_DOWN_TCP) {
        /* A host that is down costs a connect timeout: less often. */
        if (s->down && s->retry_ms < RDN_REPROBE_MS)
            s->retry_ms = s->retry_ms * 2 < RDN_REPROBE_MS ? s->retry_ms * 2
                                                           : RDN_REPROBE_MS;
        s->down = true;
        snprintf(s->why, sizeof(s->why),
                 "server gone (handshake connection closed, RESUME: %s)",
                 strerror(-rc));
    }
}

/* Its keys are asked on its NIC. */
static bool on_nic(const struct rdn_srv *s)
{
    return s->nic_ok && !s->down;
}

/*
 * srv_up() failed: the next try RDN_RECONNECT_MS after a failure, twice as
 * long after each failed retry up to RDN_REPROBE_MS (a server that is down
 * costs the GETs little); a server without --rdn-port every RDN_REPROBE_MS.
 */
static void srv_failed(struct rdn_srv *s, bool first)
{
    s->nic_lost_ms = mono_ms();
    if (s->rdn_port == 0 && !s->fixed_port)
        s->retry_ms = RDN_REPROBE_MS;
    else if (first)
        s->retry_ms = RDN_RECONNECT_MS;
    else if (s->retry_ms < RDN_REPROBE_MS / 2)
        s->retry_ms *= 2;
    else
        s->retry_ms = RDN_REPROBE_MS;
}

/* Retries a server off the NIC when its time has come (srv_failed()). */
static void nic_retry(struct rdn_srv *s)
{
    bool was_up = s->was_up;

    if (s->nic_ok || mono_ms() - s->nic_lost_ms < s->retry_ms)
        return;
    nic_down(s);
    if (srv_up(s) == 0) {
        if (was_up)
            s->st.reconnects++;
    } else {
        srv_failed(s, false);
    }
}

/* ---- the server list -------------------------------------------------- */

static void send_hits(struct rdn_srv *s);
static void mget_free(struct mget *m);

static void srv_free(struct rdn_srv *s)
{
    if (!s)
        return;
    if (s->nic_ok)
        send_hits(s);
    nic_down(s);
    free(s);
}

static struct rdn_srv *srv_new(const struct rdn_conn *c, const char *host,
                               int tcp_port)
{
    struct rdn_srv *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    snprintf(s->host, sizeof(s->host), "%s", host);
    s->tcp_port = tcp_port;
    s->opts = &c->opts;
    s->ctl = -1;
    s->retry_ms = RDN_RECONNECT_MS;
    ofl_hits_reset(&s->hits);
    return s;
}

static bool srv_is(const struct rdn_srv *s, const memcached_instance_st *in)
{
    return strcmp(s->host, memcached_server_name(in)) == 0 &&
           s->tcp_port == (int)memcached_server_port(in);
}

/*
 * Follows the handle's server list: servers still in it keep their NIC
 * paths, new ones are set up, removed ones are closed. Cheap when the
 * list did not change (one comparison per server).
 */
static int sync_servers(struct rdn_conn *c)
{
    uint32_t n = memcached_server_count(c->mc);
    struct rdn_srv **ns;
    bool same = n == c->nsrv;

    for (uint32_t i = 0; same && i < n; i++)
        same =
            srv_is(c->srv[i], memcached_server_instance_by_position(c->mc, i));
    if (same)
        return 0;
    ns = calloc(n ? n : 1, sizeof(*ns));
    if (!ns)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const memcached_instance_st *in =
            memcached_server_instance_by_position(c->mc, i);

        for (uint32_t j = 0; j < c->nsrv && !ns[i]; j++)
            if (c->srv[j] && srv_is(c->srv[j], in)) {
                ns[i] = c->srv[j];
                c->srv[j] = NULL;
            }
        if (!ns[i]) {
            ns[i] = srv_new(c, memcached_server_name(in),
                            (int)memcached_server_port(in));
            if (!ns[i]) {
                for (uint32_t k = 0; k < i; k++)
                    srv_free(ns[k]);
                free(ns);
                return -ENOMEM;
            }
            if (srv_up(ns[i]) < 0)
                srv_failed(ns[i], true);
        }
    }
    for (uint32_t j = 0; j < c->nsrv; j++)
        srv_free(c->srv[j]);
    free(c->srv);
    c->srv = ns;
    c->nsrv = n;
    return 0;
}

_Static_assert(sizeof(struct rdn_opts) % 8 == 0 &&
                   offsetof(struct rdn_opts, device) + 8 == RDN_OPTS_SIZE_MIN,
               "struct rdn_opts grows in 8-byte steps after size and device");

/*
 * The caller's options (NULL: none) as this librdn's struct, checked (see
 * struct rdn_opts for the size rules), with the defaults filled in and the
 * login copied into c. 0, -EINVAL or -E2BIG.
 */
static int set_opts(struct rdn_conn *c, const struct rdn_opts *in,
                    enum rdn_down while_down)
{
    struct rdn_opts *o = &c->opts;

    memset(o, 0, sizeof(*o));
    if (in) {
        if (in->size < RDN_OPTS_SIZE_MIN || in->size % 8 || in->rsvd)
            return -EINVAL;
        const unsigned char *newer = (const unsigned char *)in + sizeof(*o);
        for (size_t i = sizeof(*o); i < in->size; i++)
            if (*newer++)
                return -E2BIG;
        memcpy(o, in, in->size < sizeof(*o) ? in->size : sizeof(*o));
    }
    o->size = sizeof(*o);
    if ((o->depth & (o->depth - 1)) || o->timeout_ms < 0 ||
        o->while_down < RDN_DOWN_DEFAULT || o->while_down > RDN_DOWN_NIC ||
        (o->user && (!*o->user || strlen(o->user) > RDN_AUTH_MAX ||
                     (o->password && strlen(o->password) > RDN_AUTH_MAX))))
        return -EINVAL;
    if (o->user) {
        snprintf(c->user, sizeof(c->user), "%s", o->user);
        snprintf(c->password, sizeof(c->password), "%s",
                 o->password ? o->password : "");
        o->user = c->user;
        o->password = c->password;
    }
    if (o->while_down == RDN_DOWN_DEFAULT)
        o->while_down = while_down;
    if (!o->depth)
        o->depth = RDN_DEFAULT_DEPTH;
    if (!o->timeout_ms)
        o->timeout_ms = RDN_DEFAULT_TIMEOUT;
    return 0;
}

int rdn_connect_memc(memcached_st *mc, const struct rdn_opts *opts,
                     struct rdn_conn **out)
{
    struct rdn_conn *c;
    int rc;

    if (!mc || !out || memcached_server_count(mc) == 0)
        return -EINVAL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    rc = set_opts(c, opts, RDN_DOWN_TCP);
    if (rc < 0) {
        free(c);
        return rc;
    }
    c->mc = mc;
    rc = sync_servers(c);
    if (rc < 0) {
        rdn_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

int rdn_connect_config(const char *config, const struct rdn_opts *opts,
                       struct rdn_conn **out, char *err, size_t errlen)
{
    char msg[256] = "";
    memcached_st *mc;
    int rc;

    if (!config || !out)
        return -EINVAL;
    if (libmemcached_check_configuration(config, strlen(config), msg,
                                         sizeof(msg)) != MEMCACHED_SUCCESS) {
        if (err && errlen)
            snprintf(err, errlen, "%s", msg);
        return -EINVAL;
    }
    mc = memcached(config, strlen(config));
    if (!mc)
        return -ENOMEM;
    rc = rdn_connect_memc(mc, opts, out);
    if (rc < 0) {
        if (err && errlen)
            snprintf(err, errlen, "%s", strerror(-rc));
        memcached_free(mc);
        return rc;
    }
    (*out)->own_mc = true;
    return 0;
}

/* The handle of rdn_connect(): one server. */
static memcached_st *one_server(const char *host, int tcp_port)
{
    memcached_st *mc = memcached_create(NULL);

    if (mc && memcached_server_add(mc, host, (in_port_t)tcp_port) !=
                  MEMCACHED_SUCCESS) {
        memcached_free(mc);
        return NULL;
    }
    if (mc) {
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    }
    return mc;
}

int rdn_connect_opts(const char *host, int rdn_port, int tcp_port,
                     const struct rdn_opts *opts, struct rdn_conn **out)
{
    struct rdn_conn *c;
    struct rdn_srv *s;
    int rc;

    if (!host || !out || rdn_port <= 0 || rdn_port > 65535 || tcp_port < 0 ||
        tcp_port > 65535 || strlen(host) >= sizeof(s->host))
        return -EINVAL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    rc = set_opts(c, opts, RDN_DOWN_NIC);
    if (rc < 0) {
        free(c);
        return rc;
    }
    c->own_mc = true;
    c->tcp_renew = true;
    c->mc = one_server(host, tcp_port);
    c->srv = calloc(1, sizeof(*c->srv));
    /* The port as libmemcached has it (0 is its default port). */
    s = c->srv && c->mc
            ? srv_new(c, host,
                      memcached_server_port(
                          memcached_server_instance_by_position(c->mc, 0)))
            : NULL;
    if (!s) {
        rdn_close(c);
        return -ENOMEM;
    }
    c->srv[0] = s;
    c->nsrv = 1;
    s->rdn_port = rdn_port;
    s->fixed_port = true;
    rc = srv_up(s);
    if (rc < 0) {
        rdn_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

int rdn_connect(const char *host, int rdn_port, int tcp_port,
                struct rdn_conn **out)
{
    return rdn_connect_opts(host, rdn_port, tcp_port, NULL, out);
}

memcached_st *rdn_memc(const struct rdn_conn *c)
{
    return c->mc;
}

/* ---- LRU reports ------------------------------------------------------ */

static void send_hits(struct rdn_srv *s)
{
    if (s->hits.count && s->ctl >= 0)
        ofl_wire_send(s->ctl, RDN_MSG_HITS, s->hits.buf, (uint32_t)s->hits.len,
                      0);
    ofl_hits_reset(&s->hits);
}

/* Notes a NIC hit; sends the batch when full or a second old. */
static void note_hit(struct rdn_srv *s, const char *key, size_t nkey,
                     uint64_t fp)
{
    uint64_t now = mono_ms();

    for (unsigned i = 0; i < s->hits.count; i++)
        if (s->hit_fp[i] == fp)
            goto maybe_send; /* reported in this batch already */
    if (s->hits.count == 0)
        s->hits_since_ms = now;
    s->hit_fp[s->hits.count] = fp;
    ofl_hits_add(&s->hits, key, nkey);
maybe_send:
    if (s->hits.count == RDN_HITS_MAX ||
        now - s->hits_since_ms >= RDN_HITS_EVERY_MS)
        send_hits(s);
}

/*
 * Closes the handshake connection and waits (briefly) until the server
 * closed its side too: it has then destroyed its QPs, so destroying ours
 * afterwards is an orderly goodbye, not an RDMA error on its side.
 */
static void close_ctl(struct rdn_srv *s)
{
    uint64_t end = mono_ms() + 1000;
    char buf[256];

    shutdown(s->ctl, SHUT_WR);
    while (mono_ms() < end) {
        struct pollfd pfd = {.fd = s->ctl, .events = POLLIN};

        if (poll(&pfd, 1, 100) > 0 && read(s->ctl, buf, sizeof(buf)) <= 0)
            break;
    }
    close(s->ctl);
}

void rdn_close(struct rdn_conn *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->nsrv; i++)
        srv_free(c->srv[i]);
    free(c->srv);
    mget_free(c->m);
    if (c->mc && c->own_mc)
        memcached_free(c->mc);
    free(c);
}

/* ---- TCP -------------------------------------------------------------- */

/*
 * Asks for one key over TCP through the handle, which places it on the
 * server libmemcached picks and applies libmemcached's failure settings.
 * rdn_connect()'s own handle is the exception: after a connection failure
 * libmemcached refuses to try the server again until a retry time, in
 * whole seconds and never less than the next second tick, however
 * RETRY_TIMEOUT is set, so every GET in that window would fail although a
 * restarted server is back already; that handle is replaced by a fresh
 * one that connects at once (a dead process on a live host refuses in no
 * time).
 */
/* Switches a handle to the binary protocol with a SASL PLAIN login of
 * opts' user (libmemcached logs in on every connection it makes). 0 or
 * -EIO. */
static int tcp_sasl_on(struct rdn_conn *c, memcached_st *mc)
{
    if (memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1) !=
            MEMCACHED_SUCCESS ||
        memcached_set_sasl_auth_data(mc, c->user, c->password) !=
            MEMCACHED_SUCCESS)
        return -EIO;
    return 0;
}

static memcached_return_t tcp_mget(struct rdn_conn *c, const char *key,
                                   size_t nkey)
{
    const char *keys[1] = {key};
    size_t lens[1] = {nkey};
    memcached_return_t rc = memcached_mget(c->mc, keys, lens, 1);

    if (c->tcp_renew && (rc == MEMCACHED_SERVER_TEMPORARILY_DISABLED ||
                         rc == MEMCACHED_SERVER_MARKED_DEAD)) {
        memcached_st *mc = one_server(c->srv[0]->host, c->srv[0]->tcp_port);

        if (!mc || (c->tcp_sasl && tcp_sasl_on(c, mc) < 0)) {
            if (mc)
                memcached_free(mc);
            return MEMCACHED_FAILURE;
        }
        memcached_free(c->mc);
        c->mc = mc;
        rc = memcached_mget(c->mc, keys, lens, 1);
    }
    return rc;
}

/*
 * Copies a value of n bytes (and a NUL) into into's buffer, grown if it is
 * too small, or else into a new malloc'ed one; r->value points at the copy.
 * Returns 0 or -ENOMEM (r->value NULL, into's buffer kept).
 */
static int keep_value(struct rdn_result *r, struct rdn_value *into,
                      const void *p, size_t n)
{
    r->value = NULL;
    if (n == SIZE_MAX)
        return -ENOMEM;
    if (!into) {
        r->value = malloc(n + 1);
    } else if (into->cap > n) {
        r->value = into->buf;
    } else {
        /* A quarter more: the values of one key vary a little. */
        size_t cap = n + 1, more = cap / 4;
        char *b;

        cap += more <= SIZE_MAX - cap ? more : 0;
        b = realloc(into->buf, cap);

        if (b) {
            into->buf = b;
            into->cap = cap;
        }
        r->value = b;
    }
    if (!r->value)
        return -ENOMEM;
    memcpy(r->value, p, n);
    r->value[n] = '\0';
    r->len = n;
    return 0;
}

/* A value libmemcached fetched, into r (and into, if not NULL). */
static void take_result(struct rdn_result *r, struct rdn_value *into,
                        const memcached_result_st *res)
{
    keep_value(r, into, memcached_result_value(res),
               memcached_result_length(res));
    r->flags = memcached_result_flags(res);
    r->cas = memcached_result_cas(res);
    r->status = r->value ? 0 : -ENOMEM;
}

/* libmemcached's refusals of a login: -EACCES; other failures -EIO. */
static int tcp_failure(memcached_return_t rc)
{
    return rc == MEMCACHED_AUTH_FAILURE || rc == MEMCACHED_AUTH_PROBLEM
               ? -EACCES
               : -EIO;
}

static int tcp_get_once(struct rdn_conn *c, const char *key, size_t nkey,
                        struct rdn_result *r, struct rdn_value *into)
{
    memcached_return_t rc = tcp_mget(c, key, nkey);
    memcached_result_st *res;

    r->src = RDN_SRC_TCP;
    if (rc != MEMCACHED_SUCCESS)
        return r->status = tcp_failure(rc);
    res = memcached_fetch_result(c->mc, NULL, &rc);
    if (!res && rc != MEMCACHED_END && rc != MEMCACHED_NOTFOUND)
        return r->status = tcp_failure(rc);
    /* libmemcached reads a refused command (memcached -Y's "CLIENT_ERROR
     * unauthenticated") as a miss: it is none. */
    if (!res)
        return r->status = memcached_last_error(c->mc) == MEMCACHED_CLIENT_ERROR
                               ? -EACCES
                               : -ENOENT;
    take_result(r, into, res);
    memcached_result_free(res);
    /* Read up to END so the connection stays in step. */
    while ((res = memcached_fetch_result(c->mc, NULL, &rc)))
        memcached_result_free(res);
    return r->status;
}

/* Whether key's server speaks the binary protocol only (-S). */
static bool key_binary_only(struct rdn_conn *c, const char *key, size_t nkey)
{
    memcached_return_t rc;
    const memcached_instance_st *in =
        memcached_server_by_key(c->mc, key, nkey, &rc);

    return in &&
           binary_only(memcached_server_name(in),
                       (int)memcached_server_port(in), c->opts.timeout_ms);
}

/*
 * Logs the handle in where a TCP GET of key failed with status, with opts'
 * user: a refusal ("CLIENT_ERROR unauthenticated", memcached -Y) gets -Y's
 * ASCII login on the connection to key's server (a set whose data is
 * "user password", sent to the server libmemcached places key on); a
 * server that closed the ASCII connection (-S speaks binary only) makes
 * librdn's own handle speak binary with a SASL PLAIN login. An
 * application's handle is never switched: its SASL setup is its own.
 * Without a user, a -S server's hang-up is -EACCES too. Returns 0 when
 * the GET is worth asking again, else -EACCES (the login was refused, or
 * is missing) or status. A handle speaks one protocol: a list that mixes
 * -S servers with others cannot be read over TCP through one handle.
 */
static int tcp_login(struct rdn_conn *c, const char *key, size_t nkey,
                     int status)
{
    char data[2 * RDN_AUTH_MAX + 2];

    if (!c->opts.user) /* a -S server that hung up wants a login too */
        return status == -EIO && key_binary_only(c, key, nkey) ? -EACCES
                                                               : status;
    if (status == -EACCES && !c->tcp_sasl) {
        int n = snprintf(data, sizeof(data), "%s %s", c->user, c->password);
        memcached_return_t rc = memcached_set_by_key(c->mc, key, nkey, "rdn", 3,
                                                     data, (size_t)n, 0, 0);
        return rc == MEMCACHED_SUCCESS ? 0 : -EACCES;
    }
    if (status == -EIO && c->own_mc && !c->tcp_sasl) {
        if (!key_binary_only(c, key, nkey) || tcp_sasl_on(c, c->mc) < 0)
            return status;
        c->tcp_sasl = true;
        return 0;
    }
    return status;
}

/* A GET over TCP, logged in first when the server wants it. */
static int tcp_get(struct rdn_conn *c, const char *key, size_t nkey,
                   struct rdn_result *r, struct rdn_value *into)
{
    int rc = tcp_get_once(c, key, nkey, r, into);

    if (rc == -EACCES || rc == -EIO) {
        int lrc = tcp_login(c, key, nkey, rc);
        rc = lrc == 0 ? tcp_get_once(c, key, nkey, r, into) : (r->status = lrc);
    }
    return rc;
}

/* ---- the NIC pipeline ------------------------------------------------- */

/* A key of an rdn_mget() and what the NIC did with it. */
struct job {
    const char *key; /* the application's */
    size_t nkey;
    const char *wkey; /* on the wire: the handle's namespace + key */
    size_t nwkey;
    struct rdn_result *res;
    struct rdn_value *into; /* the caller's reused buffer, or NULL */
    struct rdn_keyhash kh;
    int tries;
    bool done; /* answered (by the NIC) or given to TCP */
    bool tcp;
};

/* What a request in flight was sent under. */
struct flight {
    struct job *job;
    uint64_t gen_word;
    uint32_t flags;
};

/* One server's share of an rdn_mget(). */
struct lane {
    struct rdn_srv *s;
    struct job **q;     /* its jobs */
    size_t nq, next;    /* next job never asked */
    struct job **retry; /* jobs to ask again (room for nq) */
    size_t nretry;
    struct flight *fl; /* [request number % depth] */
    uint32_t inflight;
    uint64_t quiet_since; /* no answer since (while some are in flight) */
};

static uint32_t server_now(const struct rdn_srv *s)
{
    return s->geo.server_time + (uint32_t)((mono_ms() - s->geo_ms) / 1000);
}

static void to_tcp(struct job *j, const char *why)
{
    j->tcp = true;
    j->done = true;
    j->res->why = why;
}

static void retry_or_tcp(struct lane *l, struct job *j, const char *why)
{
    if (++j->tries >= RDN_MAX_TRIES)
        to_tcp(j, why);
    else
        l->retry[l->nretry++] = j;
}

/* A verified hit: copy the value out of the slot. */
static void take_hit(struct rdn_srv *s, struct job *j,
                     const struct rdn_item *it)
{
    struct rdn_result *r = j->res;

    if (keep_value(r, j->into, rdn_item_value((struct rdn_item *)it),
                   it->nbytes) < 0) {
        to_tcp(j, "out of memory");
        return;
    }
    r->flags = it->flags;
    r->cas = it->stamp;
    r->status = 0;
    r->src = RDN_SRC_NIC;
    j->done = true;
    s->st.nic_hits++;
    note_hit(s, j->wkey, j->nwkey, j->kh.fp);
}

/* The lane's server broke: what it has not answered goes to TCP. */
static void lane_lost(struct lane *l, const char *why, int rc)
{
    nic_lost(l->s, why, rc);
    for (size_t i = 0; i < l->nq; i++)
        if (!l->q[i]->done)
            to_tcp(l->q[i], l->s->why);
    l->inflight = 0;
    l->nretry = 0;
}

/* Judges the answer to request n and decides the job's fate. */
static void handle_answer(struct lane *l, uint64_t n)
{
    struct rdn_srv *s = l->s;
    struct flight *f = &l->fl[n & (s->nic.depth - 1)];
    struct job *j = f->job;
    struct rdn_geometry g = s->geo;
    const struct rdn_item *it = NULL;
    enum ofl_verdict v;

    g.gen_word = f->gen_word; /* judged against what it was sent with */
    v = ofl_client_judge(&s->nic, n, &g, j->wkey, j->nwkey, server_now(s), &it);
    l->inflight--;
    switch (v) {
    case OFL_HIT:
        take_hit(s, j, it);
        break;
    case OFL_MISS:
        if (f->flags & RDN_GEO_EXPANDING) {
            to_tcp(j, "table growing: a miss is not final");
        } else {
            j->res->status = -ENOENT;
            j->res->src = RDN_SRC_NIC;
            j->done = true;
            s->st.nic_misses++;
        }
        break;
    case OFL_STALE:
        if (s->geo.gen_word == f->gen_word) {
            s->st.refreshes++;
            int rc = refresh(s);

            if (rc < 0) {
                to_tcp(j, "refresh failed");
                lane_lost(l, "refresh failed", rc);
                break;
            }
        }
        retry_or_tcp(l, j, "table changed repeatedly");
        break;
    case OFL_TORN:
        s->st.torn_retries++;
        retry_or_tcp(l, j, "torn reads");
        break;
    case OFL_OTHER_KEY:
        s->st.collisions++;
        to_tcp(j, "fingerprint collision");
        break;
    case OFL_EXPIRY_DOUBT:
        to_tcp(j, "expires now");
        break;
    }
}

/* The next job to ask: retries first, then new keys. */
static struct job *next_job(struct lane *l)
{
    if (l->nretry)
        return l->retry[--l->nretry];
    while (l->next < l->nq) {
        struct job *j = l->q[l->next++];

        if (!j->done)
            return j;
    }
    return NULL;
}

/* Sends one job: 0, -EBUSY (send ring full: try later) or -errno. */
static int send_job(struct lane *l, struct job *j)
{
    struct rdn_srv *s = l->s;
    int64_t n;

    rdn_keyhash(j->wkey, j->nwkey, s->geo.hashpower, &j->kh);
    n = ofl_client_send(&s->nic, &s->geo, &j->kh);
    if (n < 0) {
        l->retry[l->nretry++] = j; /* not sent: still to do */
        return (int)n;
    }
    l->fl[(uint64_t)n & (s->nic.depth - 1)] =
        (struct flight){j, s->geo.gen_word, s->geo.flags};
    if (l->inflight++ == 0)
        l->quiet_since = mono_ms();
    return 0;
}

/* Sends what may be sent; true if something is left that could not be. */
static bool send_some(struct lane *l)
{
    struct job *j;

    while (l->inflight < l->s->nic.depth && (j = next_job(l))) {
        int rc = send_job(l, j);

        if (rc == -EBUSY)
            return true;
        if (rc < 0) {
            lane_lost(l, "RDMA send failed", rc);
            return false;
        }
    }
    return false;
}

/* Takes the answers that are there; true if there were any. */
static bool reap_lane(struct lane *l)
{
    bool any = false;
    uint64_t n;
    int rc;

    while (l->s->nic_ok && l->inflight &&
           (rc = ofl_client_poll(&l->s->nic, &n)) != 0) {
        if (rc < 0) {
            lane_lost(l, "RDMA answer failed", rc);
            break;
        }
        handle_answer(l, n);
        any = true;
    }
    if (any)
        l->quiet_since = mono_ms();
    return any;
}

/*
 * Runs every lane on its server's NIC at once until each job is answered
 * or given to TCP: sends fill every server's pipeline, answers are taken
 * from whichever server has them. With nothing to take, it spins a while
 * over all servers, then sleeps briefly on one of them (an RDMA client
 * cannot sleep on several completion queues at once); a server with no
 * answer for timeout_ms is given up (its keys go to TCP), the others go
 * on.
 */
static void run_nic(struct lane *lanes, uint32_t nl, int timeout_ms)
{
    uint64_t blocked_since = 0;
    unsigned idle = 0;
    uint32_t turn = 0;

    for (;;) {
        bool busy = false, waiting = false, progress = false;

        for (uint32_t i = 0; i < nl; i++) {
            struct lane *l = &lanes[i];

            if (!l->s->nic_ok)
                continue;
            busy |= send_some(l);
            progress |= reap_lane(l);
            if (!l->s->nic_ok)
                continue;
            busy |= l->nretry || l->next < l->nq;
            if (l->inflight) {
                waiting = true;
                if (mono_ms() - l->quiet_since > (uint64_t)timeout_ms)
                    lane_lost(l, "RDMA answers lost", -ETIMEDOUT);
            }
        }
        if (!busy && !waiting)
            return;
        if (progress) {
            idle = 0;
            blocked_since = 0;
            continue;
        }
        if (++idle < RDN_SPIN_ROUNDS)
            continue;
        /* Sleep on one waiting server, a different one each time. */
        for (uint32_t k = 0; k < nl; k++) {
            struct lane *l = &lanes[(turn + k) % nl];
            uint64_t n;
            int rc;

            if (!l->s->nic_ok || !l->inflight)
                continue;
            turn = (turn + k + 1) % nl;
            rc = ofl_client_wait(&l->s->nic, RDN_WAIT_SLICE_MS, &n);
            if (rc < 0) {
                lane_lost(l, "RDMA answer failed", rc);
            } else if (rc > 0) {
                handle_answer(l, n);
                l->quiet_since = mono_ms();
            }
            break;
        }
        if (!waiting) {
            /* Only sends not yet acknowledged block us: briefly. */
            struct timespec nap = {0, 50 * 1000};

            blocked_since = blocked_since ? blocked_since : mono_ms();
            for (uint32_t i = 0; i < nl; i++) {
                struct lane *l = &lanes[i];

                if (mono_ms() - blocked_since > (uint64_t)timeout_ms &&
                    l->s->nic_ok && (l->nretry || l->next < l->nq))
                    lane_lost(l, "RDMA sends stuck", -ETIMEDOUT);
            }
            nanosleep(&nap, NULL);
        } else {
            blocked_since = 0;
        }
        idle = 0;
    }
}

/* The handle's namespace (prepended to every key on the wire). */
static const char *name_space(const struct rdn_conn *c, size_t *len)
{
    memcached_return_t rc;
    const char *ns =
        memcached_callback_get(c->mc, MEMCACHED_CALLBACK_NAMESPACE, &rc);

    *len = ns && rc == MEMCACHED_SUCCESS ? strlen(ns) : 0;
    return *len ? ns : "";
}

/* A key for TCP, ordered by name (tcp_many() finds a reply's jobs). */
struct tcp_key {
    struct job *job;
    bool answered;
};

/*
 * The arrays of an rdn_mget(), kept by the connection from call to call and
 * grown when a call needs more: steady GETs allocate nothing here.
 */
struct mget {
    struct job *jobs;
    struct job **q, **retry; /* n each, cut into lanes */
    struct tcp_key *tk;      /* n: the keys for TCP */
    struct lane *lanes;
    size_t *count;     /* jobs per server */
    struct flight *fl; /* sum of the depths, cut into lanes */
    char *wkeys;       /* namespaced keys, when there is a namespace */
    size_t jobs_cap, q_cap, retry_cap, tk_cap, lanes_cap, count_cap, fl_cap,
        wkeys_cap;
};

static void mget_free(struct mget *m)
{
    if (!m)
        return;
    free(m->jobs);
    free(m->q);
    free(m->retry);
    free(m->tk);
    free(m->lanes);
    free(m->count);
    free(m->fl);
    free(m->wkeys);
    free(m);
}

/* Makes *arr hold at least n elements of size sz (*cap of them now). */
static int reserve(void *arr, size_t *cap, size_t n, size_t sz)
{
    void **p = arr, *np;

    if (n <= *cap)
        return 0;
    if (n > SIZE_MAX / sz)
        return -ENOMEM;
    np = realloc(*p, n * sz);
    if (!np)
        return -ENOMEM;
    *p = np;
    *cap = n;
    return 0;
}

/* Room in m for n keys on nsrv servers, fl_total flights, wkeys bytes. */
static int mget_reserve(struct mget *m, size_t n, uint32_t nsrv,
                        size_t fl_total, size_t wkeys)
{
    n = n ? n : 1;
    if (reserve(&m->jobs, &m->jobs_cap, n, sizeof(*m->jobs)) < 0 ||
        reserve(&m->q, &m->q_cap, n, sizeof(*m->q)) < 0 ||
        reserve(&m->retry, &m->retry_cap, n, sizeof(*m->retry)) < 0 ||
        reserve(&m->tk, &m->tk_cap, n, sizeof(*m->tk)) < 0 ||
        reserve(&m->lanes, &m->lanes_cap, nsrv, sizeof(*m->lanes)) < 0 ||
        reserve(&m->count, &m->count_cap, nsrv, sizeof(*m->count)) < 0 ||
        reserve(&m->fl, &m->fl_cap, fl_total, sizeof(*m->fl)) < 0 ||
        reserve(&m->wkeys, &m->wkeys_cap, wkeys ? wkeys : 1, 1) < 0)
        return -ENOMEM;
    return 0;
}

/* Places the jobs on their servers (libmemcached's choice) and cuts the
 * arrays into lanes. */
static int mget_plan(struct rdn_conn *c, struct mget *m, size_t n,
                     const char *const *keys, const size_t *keylens,
                     struct rdn_result *out, struct rdn_value *into)
{
    size_t nsl, fl_total = 0, at = 0, wat = 0, *count;
    const char *ns = name_space(c, &nsl);

    for (uint32_t i = 0; i < c->nsrv; i++)
        fl_total += c->srv[i]->nic.depth ? c->srv[i]->nic.depth : 1;
    if (nsl)
        for (size_t i = 0; i < n; i++)
            wat += keylens[i] <= RDN_KEY_MAX ? nsl + keylens[i] : 0;
    if (mget_reserve(m, n, c->nsrv, fl_total, wat) < 0)
        return -ENOMEM;
    count = m->count;
    memset(count, 0, c->nsrv * sizeof(*count));
    memset(m->lanes, 0, c->nsrv * sizeof(*m->lanes));
    /* libmemcached's placement, after its own redistribution check (a
     * server ejected or back after its retry timeout). */
    memcached_autoeject(c->mc);
    wat = 0;
    for (size_t i = 0; i < n; i++) {
        struct job *j = &m->jobs[i];
        uint32_t srv = memcached_generate_hash(c->mc, keys[i], keylens[i]);

        *j = (struct job){.key = keys[i],
                          .nkey = keylens[i],
                          .res = &out[i],
                          .into = into ? &into[i] : NULL};
        out[i].server = srv < c->nsrv ? srv : 0;
        if (keylens[i] == 0 || nsl + keylens[i] > RDN_KEY_MAX ||
            srv >= c->nsrv) {
            out[i].status = -EINVAL;
            j->done = true;
            continue;
        }
        if (nsl) {
            memcpy(m->wkeys + wat, ns, nsl);
            memcpy(m->wkeys + wat + nsl, keys[i], keylens[i]);
            j->wkey = m->wkeys + wat;
            wat += nsl + keylens[i];
        } else {
            j->wkey = keys[i];
        }
        j->nwkey = nsl + keylens[i];
        count[srv]++;
    }
    fl_total = 0;
    for (uint32_t i = 0; i < c->nsrv; i++) {
        struct lane *l = &m->lanes[i];

        l->s = c->srv[i];
        l->q = m->q + at;
        l->retry = m->retry + at;
        l->fl = m->fl + fl_total;
        at += count[i];
        fl_total += c->srv[i]->nic.depth ? c->srv[i]->nic.depth : 1;
    }
    for (size_t i = 0; i < n; i++)
        if (!m->jobs[i].done) {
            struct lane *l = &m->lanes[out[i].server];

            l->q[l->nq++] = &m->jobs[i];
        }
    return 0;
}

static int key_cmp(const char *a, size_t na, const char *b, size_t nb)
{
    int d = memcmp(a, b, na < nb ? na : nb);

    return d ? d : (na > nb) - (na < nb);
}

static int tcp_key_cmp(const void *a, const void *b)
{
    const struct job *x = ((const struct tcp_key *)a)->job;
    const struct job *y = ((const struct tcp_key *)b)->job;

    return key_cmp(x->key, x->nkey, y->key, y->nkey);
}

/*
 * The keys for TCP in one libmemcached multi-get (every server at once);
 * returns how many it settled. A key it leaves (its server failed, or the
 * multi-get could not be made) is asked alone, so its result says how it
 * failed. The replies' keys are the application's (libmemcached strips
 * the namespace).
 */
static size_t tcp_many(struct rdn_conn *c, struct tcp_key *tk, size_t k)
{
    const char **keys = malloc(k * sizeof(*keys));
    size_t *lens = malloc(k * sizeof(*lens)), settled = 0;
    memcached_return_t rc = MEMCACHED_FAILURE, frc;
    memcached_result_st *res;

    if (keys && lens) {
        qsort(tk, k, sizeof(*tk), tcp_key_cmp);
        for (size_t i = 0; i < k; i++) {
            keys[i] = tk[i].job->key;
            lens[i] = tk[i].job->nkey;
        }
        rc = memcached_mget(c->mc, keys, lens, k);
    }
    free(keys);
    free(lens);
    if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_SOME_ERRORS)
        return 0;
    while ((res = memcached_fetch_result(c->mc, NULL, &frc))) {
        const char *rk = memcached_result_key_value(res);
        size_t nrk = memcached_result_key_length(res), lo = 0, hi = k;

        while (lo < hi) { /* the first job of that key */
            size_t mid = lo + (hi - lo) / 2;

            if (key_cmp(tk[mid].job->key, tk[mid].job->nkey, rk, nrk) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < k && !key_cmp(tk[lo].job->key, tk[lo].job->nkey, rk, nrk);
             lo++)
            if (!tk[lo].answered) {
                take_result(tk[lo].job->res, tk[lo].job->into, res);
                tk[lo].answered = true;
                settled++;
            }
        memcached_result_free(res);
    }
    /* Everything asked and read: the keys with no reply are not there. */
    if (rc == MEMCACHED_SUCCESS && frc == MEMCACHED_END)
        for (size_t i = 0; i < k; i++)
            if (!tk[i].answered) {
                tk[i].job->res->status = -ENOENT;
                tk[i].answered = true;
                settled++;
            }
    return settled;
}

/* What the NIC did not answer, over TCP through the handle. */
static void mget_tcp(struct rdn_conn *c, struct mget *m, size_t n)
{
    struct tcp_key *tk = m->tk;
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        if (m->jobs[i].tcp) {
            m->jobs[i].res->src = RDN_SRC_TCP;
            c->srv[m->jobs[i].res->server]->st.tcp_gets++;
            tk[k++] = (struct tcp_key){.job = &m->jobs[i]};
        }
    if (k > 1 && !c->tcp_renew)
        tcp_many(c, tk, k);
    for (size_t i = 0; i < k; i++)
        if (!tk[i].answered)
            tcp_get(c, tk[i].job->key, tk[i].job->nkey, tk[i].job->res,
                    tk[i].job->into);
}

/* rdn_mget(), the values copied into into[i] when into is not NULL. */
static int mget_run(struct rdn_conn *c, size_t n, const char *const *keys,
                    const size_t *keylens, struct rdn_result *out,
                    struct rdn_value *into)
{
    struct mget *m;
    int rc;

    if (!c || (n && (!keys || !keylens || !out)))
        return -EINVAL;
    memset(out, 0, n * sizeof(*out));
    rc = sync_servers(c);
    if (rc < 0)
        return rc;
    if (c->nsrv == 0)
        return -ENOTCONN; /* the application emptied the handle's list */
    if (!c->m && !(c->m = calloc(1, sizeof(*c->m))))
        return -ENOMEM;
    m = c->m;
    /* First: a reconnection sets the depth that the flights are sized for. */
    for (uint32_t i = 0; i < c->nsrv; i++) {
        nic_retry(c->srv[i]);
        ctl_retry(c->srv[i]);
    }
    rc = mget_plan(c, m, n, keys, keylens, out, into);
    if (rc < 0)
        return rc;
    for (uint32_t i = 0; i < c->nsrv; i++) {
        struct lane *l = &m->lanes[i];

        if (!on_nic(l->s))
            for (size_t k = 0; k < l->nq; k++)
                to_tcp(l->q[k], l->s->why);
    }
    run_nic(m->lanes, c->nsrv, c->opts.timeout_ms);
    if (c->opts.no_fallback) {
        for (size_t i = 0; i < n; i++)
            if (m->jobs[i].tcp)
                out[i].status = -EAGAIN;
    } else {
        mget_tcp(c, m, n);
    }
    return 0;
}

int rdn_mget(struct rdn_conn *c, size_t n, const char *const *keys,
             const size_t *keylens, struct rdn_result *out)
{
    return mget_run(c, n, keys, keylens, out, NULL);
}

/* One key through mget_run(); rdn_last_source() and _reason() follow it. */
static int get_one(struct rdn_conn *c, const char *key, size_t keylen,
                   struct rdn_result *r, struct rdn_value *into)
{
    int rc = mget_run(c, 1, &key, &keylen, r, into);

    if (rc < 0)
        return rc;
    c->last_src = r->src;
    c->last_why = r->src == RDN_SRC_TCP || r->status == -EAGAIN ? r->why : NULL;
    return r->status;
}

int rdn_get(struct rdn_conn *c, const char *key, size_t keylen, char **value,
            size_t *len, uint32_t *flags, uint64_t *cas)
{
    struct rdn_result r = {0};
    int rc;

    if (!c || !key || !value)
        return -EINVAL;
    rc = get_one(c, key, keylen, &r, NULL);
    *value = r.value;
    if (len)
        *len = r.len;
    if (flags)
        *flags = r.flags;
    if (cas)
        *cas = r.cas;
    return rc;
}

int rdn_get_value(struct rdn_conn *c, const char *key, size_t keylen,
                  struct rdn_value *v)
{
    struct rdn_result r = {0};
    int rc;

    if (!c || !key || !v || (v->cap && !v->buf))
        return -EINVAL;
    rc = get_one(c, key, keylen, &r, v);
    v->len = rc == 0 ? r.len : 0;
    v->flags = rc == 0 ? r.flags : 0;
    v->cas = rc == 0 ? r.cas : 0;
    v->src = r.src;
    return rc;
}

void rdn_value_free(struct rdn_value *v)
{
    if (!v)
        return;
    free(v->buf);
    memset(v, 0, sizeof(*v));
}

enum rdn_source rdn_last_source(const struct rdn_conn *c)
{
    return c->last_src;
}

const char *rdn_last_reason(const struct rdn_conn *c)
{
    return c->last_why ? c->last_why : "";
}

void rdn_client_stats(const struct rdn_conn *c, struct rdn_client_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (uint32_t i = 0; i < c->nsrv; i++) {
        const struct rdn_client_stats *s = &c->srv[i]->st;

        out->nic_hits += s->nic_hits;
        out->nic_misses += s->nic_misses;
        out->tcp_gets += s->tcp_gets;
        out->torn_retries += s->torn_retries;
        out->refreshes += s->refreshes;
        out->collisions += s->collisions;
        out->reconnects += s->reconnects;
        out->resumes += s->resumes;
    }
}

uint32_t rdn_client_id(const struct rdn_conn *c)
{
    return c->nsrv ? c->srv[0]->id : 0;
}

uint32_t rdn_server_count(const struct rdn_conn *c)
{
    return c->nsrv;
}

int rdn_server_info(const struct rdn_conn *c, uint32_t i,
                    struct rdn_server_info *out)
{
    const struct rdn_srv *s;

    if (i >= c->nsrv)
        return -ERANGE;
    s = c->srv[i];
    *out = (struct rdn_server_info){.host = s->host,
                                    .tcp_port = s->tcp_port,
                                    .rdn_port = s->rdn_port,
                                    .nic = on_nic(s),
                                    .why = on_nic(s) ? "" : s->why,
                                    .client_id = s->id,
                                    .st = s->st};
    return 0;
}
