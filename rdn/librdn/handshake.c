/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/handshake.c - librdn's handshake connection to a server's
 * --rdn-port (docs/wire.md): the login (AUTH), the geometry, the NIC side
 * opened and announced (HELLO), a connection resumed with a restarted
 * server (RESUME), and the LRU reports (HITS) sent on it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdn/librdn/client_int.h"

#define RDN_HITS_EVERY_MS 1000 /* LRU reports at least this often */

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
int rdnc_tcp_connect(const char *host, int port, int timeout_ms)
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
int rdnc_ctl_resume(struct rdn_srv *s)
{
    struct rdn_resume r = {.token = s->token, .client_id = s->id};
    int fd = rdnc_tcp_connect(s->host, s->rdn_port, s->opts->timeout_ms), rc;

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
int rdnc_refresh(struct rdn_srv *s)
{
    int rc = ask_geometry(s, RDN_MSG_REFRESH, NULL, 0);

    if (rc < 0 && s->nic_ok && rdnc_ctl_resume(s) == 0)
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
    if (rc == 0 && (!geometry_ok(&w.geo) || w.depth == 0 ||
                    w.depth > s->opts->depth || (w.depth & (w.depth - 1))))
        rc = -EPROTO;
    if (rc < 0)
        return rc;
    s->nic.depth = w.depth; /* fewer slots granted: use the first ones */
    s->nic.plan = w.plan;
    s->geo = w.geo;
    s->geo_ms = mono_ms();
    s->id = w.client_id;
    s->token = w.token;
    return ofl_client_connect(&s->nic, w.qp_addr);
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

/* Tears the RDMA side down (the server's side first, see close_ctl()). */
void rdnc_nic_down(struct rdn_srv *s)
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
int rdnc_nic_up(struct rdn_srv *s)
{
    int rc;

    s->ctl = rdnc_tcp_connect(s->host, s->rdn_port, s->opts->timeout_ms);
    rc = s->ctl < 0 ? s->ctl : 0;
    if (rc == 0)
        rc = authenticate(s);
    if (rc == 0)
        rc = rdnc_refresh(s);
    if (rc == 0)
        rc = hello(s);
    if (rc < 0)
        rdnc_nic_down(s);
    return rc;
}

void rdnc_send_hits(struct rdn_srv *s)
{
    if (s->hits.count && s->ctl >= 0)
        ofl_wire_send(s->ctl, RDN_MSG_HITS, s->hits.buf, (uint32_t)s->hits.len,
                      0);
    ofl_hits_reset(&s->hits);
    memset(s->hit_slot, 0, sizeof(s->hit_slot));
}

_Static_assert((RDN_HITS_MAX & (RDN_HITS_MAX - 1)) == 0 &&
                   RDN_HITS_MAX < UINT16_MAX,
               "hit_slot is a power-of-two table of 16-bit indexes");

/*
 * Where fingerprint fp is in the batch's table, or the free slot where it
 * goes: the table has twice the batch's room, so a free slot is near.
 */
static uint16_t *hit_slot_of(struct rdn_srv *s, uint64_t fp)
{
    const uint32_t mask = 2 * RDN_HITS_MAX - 1;
    uint32_t h = (uint32_t)fp & mask;

    while (s->hit_slot[h] && s->hit_fp[s->hit_slot[h] - 1] != fp)
        h = (h + 1) & mask;
    return &s->hit_slot[h];
}

/* Notes a NIC hit; sends the batch when full or a second old. */
void rdnc_note_hit(struct rdn_srv *s, const char *key, size_t nkey, uint64_t fp,
                   uint64_t now)
{
    uint16_t *slot = hit_slot_of(s, fp);

    if (!*slot) { /* not reported in this batch yet */
        if (s->hits.count == 0)
            s->hits_since_ms = now;
        s->hit_fp[s->hits.count] = fp;
        if (ofl_hits_add(&s->hits, key, nkey))
            *slot = (uint16_t)s->hits.count;
    }
    if (s->hits.count == RDN_HITS_MAX ||
        now - s->hits_since_ms >= RDN_HITS_EVERY_MS)
        rdnc_send_hits(s);
}
