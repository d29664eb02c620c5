/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/offload/ctl.c - the control thread: the handshake listener and every
 * client's control connection (proto/rdn_wire.h). An AUTH logs the client
 * in, first, when the cache wants logins (ops.auth). A HELLO creates the
 * client's pipeline and is answered with WELCOME; REFRESH is answered with
 * the current geometry; HITS feeds the cache's LRU; RESUME hands a new
 * connection to a client whose old one died with the previous server (its
 * pipeline was re-attached). A closed connection, a malformed message or a
 * client the watch thread failed is torn down.
 *
 * Sockets are nonblocking and messages are assembled per connection, so a
 * slow or hostile client never stalls the thread; replies that the socket
 * cannot take at once cost the client its connection.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/barrier.h"
#include "rdn/offload/offload_int.h"

#define OFL_POLL_MS 200

int ofl_ctl_listen(struct rdn_offload *o)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)o->cfg.port)};
    socklen_t alen = sizeof(a);
    int one = 1;

    if (inet_pton(AF_INET, o->cfg.listen_addr, &a.sin_addr) != 1)
        return ofl_err(-EINVAL, "bad listen address %s", o->cfg.listen_addr);
    if (pipe2(o->wake, O_NONBLOCK | O_CLOEXEC) < 0)
        return ofl_err(-errno, "wake pipe: %s", strerror(errno));
    o->listen_fd =
        socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (o->listen_fd < 0)
        return ofl_err(-errno, "socket: %s", strerror(errno));
    setsockopt(o->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(o->listen_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(o->listen_fd, 64) < 0 ||
        getsockname(o->listen_fd, (struct sockaddr *)&a, &alen) < 0)
        return ofl_err(-errno, "cannot listen on %s:%d: %s", o->cfg.listen_addr,
                       o->cfg.port, strerror(errno));
    o->port = ntohs(a.sin_port);
    return 0;
}

void ofl_ctl_wake(struct rdn_offload *o)
{
    char b = 1;

    if (o->wake[1] >= 0 && write(o->wake[1], &b, 1) < 0) {
        /* full pipe: the thread is awake anyway */
    }
}

void ofl_conn_stop(struct rdn_offload *o, struct ofl_conn *c)
{
    if (c->state != OFL_CONN_READY)
        return;
    ofl_client_forget(o, c);
    fetch_add_seq_cst(&o->hits, c->pipe.hits);
    fetch_add_seq_cst(&o->misses, c->pipe.misses);
    ofl_pipe_close(&c->pipe);
    fetch_sub_seq_cst(&o->active, 1);
    c->state = OFL_CONN_DEAD;
}

void ofl_conn_fail(struct rdn_offload *o, struct ofl_conn *c, const char *why)
{
    if (c->state == OFL_CONN_DEAD)
        return;
    if (c->state == OFL_CONN_READY)
        fetch_add_seq_cst(&o->qp_errors, 1);
    ofl_log(o, "client %u (%s) failed: %s", c->id, c->peer, why);
    ofl_conn_stop(o, c);
    c->state = OFL_CONN_DEAD;
    ofl_ctl_wake(o); /* it frees the client */
}

void ofl_conn_free(struct rdn_offload *o, struct ofl_conn *c)
{
    struct ofl_conn **pp;

    /* A client that vanished with a broken QP still counts as an error. */
    if (c->state == OFL_CONN_READY && ofl_pipe_failed(&c->pipe))
        fetch_add_seq_cst(&o->qp_errors, 1);
    ofl_conn_stop(o, c);
    for (pp = &o->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    o->nconns--;
    if (c->fd >= 0)
        close(c->fd);
    ofl_inbuf_free(&c->in);
    free(c);
}

static void reject(int fd, int status, const char *msg)
{
    struct rdn_reject r = {.status = status};

    snprintf(r.msg, sizeof(r.msg), "%s", msg);
    ofl_wire_send(fd, RDN_MSG_REJECT, &r, sizeof(r), 1);
}

/* ---- messages --------------------------------------------------------- */

static int hello_check(const struct rdn_offload *o, const struct rdn_hello *h)
{
    if (h->depth == 0 || (h->depth & (h->depth - 1)) || h->depth > 65536 ||
        (h->flags & ~(uint32_t)RDN_HELLO_SEQ))
        return -EINVAL;
    if (h->slot_size < rdn_resp_slot_size(o->cfg.item_size_max) ||
        h->slot_size % 64 || h->buf_addr == 0)
        return -EMSGSIZE;
    return 0;
}

/*
 * Makes the client's pipeline answer from the address the client reached
 * the handshake port at, so that a server on several addresses (-l
 * 0.0.0.0) hands each client one it can reach. A NIC that does not speak
 * from that address (a loopback client: the in-memory path; an rdn-nicd
 * listening on one address; a provider with one address per device) keeps
 * its default one.
 */
static int pipe_source(struct rdn_offload *o, struct ofl_conn *c)
{
    int rc = ofl_pipe_source(&c->pipe, c->fd);

    if (rc == 0)
        ofl_log(o, "client %u: the NIC keeps its default address", c->id);
    return rc < 0 ? rc : 0;
}

/*
 * Creates and starts the client's pipeline, persistent when the offload
 * is: from then on it answers even while no server lives. Building it
 * (hundreds of WQEs, receives, NIC round trips) runs outside o->lock, so
 * the watch thread, and with it the reclaim horizon, never waits for it;
 * the client counts (READY) from before the kick, so the horizon covers
 * it from its first GET.
 */
static int pipe_up(struct rdn_offload *o, struct ofl_conn *c,
                   const struct rdn_hello *h, struct rnic_addr *mine)
{
    struct ofl_pclient pc = {.id = c->id,
                             .depth = c->depth,
                             .slot_size = h->slot_size,
                             .slot_rkey = h->buf_rkey,
                             .slot_addr = h->buf_addr,
                             .flags = h->flags,
                             .token = c->token};
    struct ofl_pipe_cfg cfg;
    struct rnic_addr peer;
    int rc;

    /* Built in place (queues point into themselves): c is not READY yet,
     * so no other thread looks at c->pipe. */
    memcpy(peer.bytes, h->qp_addr, sizeof(peer.bytes));
    ofl_pipe_cfg_of(o, &pc, &cfg);
    rc = ofl_pipe_open(o->dev, &cfg, &c->pipe);
    if (rc < 0)
        return rc;
    rc = pipe_source(o, c);
    if (rc < 0)
        goto err_close_pipe;
    rc = ofl_pipe_addr(&c->pipe, mine);
    if (rc < 0)
        goto err_close_pipe;
    rc = ofl_pipe_connect(&c->pipe, &peer);
    if (rc < 0)
        goto err_close_pipe;
    rc = ofl_client_persist(o, c);
    if (rc < 0)
        goto err_close_pipe;
    pthread_mutex_lock(&o->lock);
    memset(c->mark, 0, sizeof(c->mark));
    c->state = OFL_CONN_READY;
    fetch_add_seq_cst(&o->active, 1);
    rc = ofl_pipe_start(&c->pipe);
    if (rc == 0)
        rc = ofl_client_record(o, &pc);
    if (rc < 0)
        ofl_conn_stop(o, c);
    c->stuck_since_ms = ofl_now_ms();
    pthread_mutex_unlock(&o->lock);
    return rc;

err_close_pipe:
    ofl_pipe_close(&c->pipe);
    return rc;
}

/* The network address in a (IPv4 GID) as text, "-" without one. */
static const char *addr_str(const struct rnic_addr *a, char *buf, size_t len)
{
    if (!(a->flags & RNIC_ADDR_GID) ||
        !inet_ntop(AF_INET, a->gid + 12, buf, (socklen_t)len))
        snprintf(buf, len, "-");
    return buf;
}

static int do_hello(struct rdn_offload *o, struct ofl_conn *c, const uint8_t *p,
                    uint32_t len)
{
    char where[INET_ADDRSTRLEN];
    struct rdn_welcome w;
    struct rdn_hello h;
    struct rnic_addr mine;
    int rc;

    if (len != sizeof(h)) {
        reject(c->fd, -EPROTO, "malformed hello");
        return -EPROTO;
    }
    memcpy(&h, p, sizeof(h));
    rc = hello_check(o, &h);
    if (rc < 0) {
        reject(c->fd, rc,
               rc == -EMSGSIZE ? "response slots too small"
                               : "bad depth or flags");
        return rc;
    }
    if (load_seq_cst(&o->active) >= o->cfg.max_clients) {
        reject(c->fd, -EUSERS, "too many clients");
        return -EUSERS;
    }
    if (getrandom(&c->token, sizeof(c->token), 0) != sizeof(c->token)) {
        reject(c->fd, -EAGAIN, "no randomness for the client's token");
        return -EAGAIN;
    }
    c->depth = h.depth < o->cfg.max_depth ? h.depth : o->cfg.max_depth;
    rc = pipe_up(o, c, &h, &mine);
    if (rc < 0) {
        ofl_log(o, "client %u: pipeline: %s (%s)", c->id, strerror(-rc),
                ofl_errmsg());
        reject(c->fd, rc, "cannot create the NIC pipeline");
        return rc;
    }
    memset(&w, 0, sizeof(w));
    memcpy(w.qp_addr, mine.bytes, sizeof(w.qp_addr));
    ofl_geometry(o, &w.geo);
    w.client_id = c->id;
    w.depth = c->depth;
    w.slot_min = (uint32_t)rdn_resp_slot_size(o->cfg.item_size_max);
    w.token = c->token;
    ofl_pipe_plan(&c->pipe.cfg, &w.plan);
    /* The QPN too: the operator (and t/offload_hosts.sh, aiming forged
     * packets at it) can tell a client's QP in rdn-nicd's counters and a
     * capture. */
    ofl_log(o, "client %u (%s) connected, depth %u, QPN %#x, RDMA address %s",
            c->id, c->peer, c->depth,
            (unsigned)(be32_to_cpu(mine.qpn) & 0xffffff),
            addr_str(&mine, where, sizeof(where)));
    return ofl_wire_send(c->fd, RDN_MSG_WELCOME, &w, sizeof(w), 1);
}

/* Sends the current geometry, once no item a flush killed is left in the
 * table. */
static int send_geometry(struct rdn_offload *o, int fd)
{
    struct rdn_geometry g;

    o->ops.quiesce(o->ops.ctx);
    ofl_geometry(o, &g);
    return ofl_wire_send(fd, RDN_MSG_GEOMETRY, &g, sizeof(g), 1);
}

static int do_refresh(struct rdn_offload *o, struct ofl_conn *c)
{
    if (c->state == OFL_CONN_READY) { /* not the one before the hello */
        fetch_add_seq_cst(&o->refreshes, 1);
        c->refreshes++;
    }
    return send_geometry(o, c->fd);
}

/*
 * A client whose handshake connection died with the previous server (its
 * pipeline was re-attached: READY, no socket) hands over this connection:
 * the socket moves to that client and c, now empty, is dropped quietly.
 */
static int do_resume(struct rdn_offload *o, struct ofl_conn *c,
                     const uint8_t *p, uint32_t len)
{
    struct ofl_conn *a;
    struct rdn_resume r;

    if (len != sizeof(r)) {
        reject(c->fd, -EPROTO, "malformed resume");
        return -EPROTO;
    }
    memcpy(&r, p, sizeof(r));
    pthread_mutex_lock(&o->lock);
    for (a = o->conns; a; a = a->next)
        if (a->fd < 0 && a->state == OFL_CONN_READY && a->id == r.client_id &&
            a->token == r.token)
            break;
    if (a) {
        a->fd = c->fd;
        a->authed = c->authed; /* the login came on this connection */
        c->fd = -1;
        c->state = OFL_CONN_DEAD; /* freed without a word */
        memcpy(a->peer, c->peer, sizeof(a->peer));
    }
    pthread_mutex_unlock(&o->lock);
    if (!a) {
        reject(c->fd, -ENOENT, "no such client");
        return -ENOENT;
    }
    ofl_log(o, "client %u (%s) resumed", a->id, a->peer);
    send_geometry(o, a->fd); /* a failed send shows as a's hang-up */
    return -ECONNABORTED;
}

/*
 * AUTH: the login the cache checks (ops.auth). Without one the offload
 * needs no login and takes any. A refused login costs the connection.
 */
static int do_auth(struct rdn_offload *o, struct ofl_conn *c, const uint8_t *p,
                   uint32_t len)
{
    struct rdn_auth a;

    if (len < sizeof(a)) {
        reject(c->fd, -EPROTO, "malformed auth");
        return -EPROTO;
    }
    memcpy(&a, p, sizeof(a));
    if (a.user_len == 0 || a.user_len > RDN_AUTH_MAX ||
        a.pass_len > RDN_AUTH_MAX ||
        len != sizeof(a) + (uint32_t)a.user_len + a.pass_len) {
        reject(c->fd, -EPROTO, "malformed auth");
        return -EPROTO;
    }
    const char *user = (const char *)p + sizeof(a);
    if (o->ops.auth && !o->ops.auth(o->ops.ctx, user, a.user_len,
                                    user + a.user_len, a.pass_len)) {
        fetch_add_seq_cst(&o->auth_failures, 1);
        ofl_log(o, "client %u (%s): authentication failure", c->id, c->peer);
        reject(c->fd, -EACCES, "authentication failure");
        return -EACCES;
    }
    c->authed = true;
    return ofl_wire_send(c->fd, RDN_MSG_AUTH_OK, NULL, 0, 1);
}

static void touch_key(void *ctx, const char *key, size_t nkey)
{
    struct rdn_offload *o = ctx;

    o->ops.touch(o->ops.ctx, key, nkey);
}

/* Handles one message; a negative return ends the connection. */
static int dispatch(struct rdn_offload *o, struct ofl_conn *c,
                    const struct rdn_msg_hdr *h, const uint8_t *p)
{
    int rc;

    /* A login comes first, once, when the cache wants one. */
    if (h->type == RDN_MSG_AUTH)
        return c->state == OFL_CONN_HELLO && !c->authed
                   ? do_auth(o, c, p, h->len)
                   : -EPROTO;
    if (o->ops.auth && !c->authed) {
        fetch_add_seq_cst(&o->auth_failures, 1);
        reject(c->fd, -EACCES, "authentication required");
        return -EACCES;
    }
    /* Before its hello a client may ask for the geometry (to size its
     * response slots for the server's item size). */
    if (c->state == OFL_CONN_HELLO && h->type == RDN_MSG_HELLO)
        return do_hello(o, c, p, h->len);
    if (c->state == OFL_CONN_HELLO && h->type == RDN_MSG_RESUME)
        return do_resume(o, c, p, h->len); /* c is done either way */
    if (c->state == OFL_CONN_HELLO && h->type != RDN_MSG_REFRESH)
        return -EPROTO;
    switch (h->type) {
    case RDN_MSG_REFRESH:
        return h->len == 0 ? do_refresh(o, c) : -EPROTO;
    case RDN_MSG_HITS:
        rc = ofl_hits_each(p, h->len, touch_key, o);
        if (rc == 0)
            c->touches += (uint64_t)(p[0] | (unsigned)p[1] << 8);
        return rc;
    default:
        return -EPROTO;
    }
}

/* Reads and handles what the client sent; false: drop it. */
static bool conn_input(struct rdn_offload *o, struct ofl_conn *c)
{
    struct rdn_msg_hdr h = {.version = RDN_WIRE_VERSION};
    const uint8_t *p;
    int rc;

    while ((rc = ofl_inbuf_read(c->fd, &c->in, &h, &p)) == 1) {
        if (c->state == OFL_CONN_DEAD)
            return false;
        rc = dispatch(o, c, &h, p);
        ofl_inbuf_consume(&c->in);
        if (rc < 0)
            return false;
    }
    if (rc == -EPROTO && c->state == OFL_CONN_HELLO &&
        h.magic == RDN_WIRE_MAGIC && h.version != RDN_WIRE_VERSION)
        reject(c->fd, -EPROTONOSUPPORT, "protocol version not supported");
    return rc == 0;
}

/*
 * Connections with a socket (lock): re-attached clients whose connection
 * died with the previous server do not count, or a full server could never
 * take their RESUME.
 */
static unsigned sockets_open(const struct rdn_offload *o)
{
    unsigned n = 0;

    for (const struct ofl_conn *c = o->conns; c; c = c->next)
        n += c->fd >= 0;
    return n;
}

static void accept_all(struct rdn_offload *o)
{
    for (;;) {
        struct sockaddr_in a;
        socklen_t alen = sizeof(a);
        int one = 1, fd = accept4(o->listen_fd, (struct sockaddr *)&a, &alen,
                                  SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct ofl_conn *c;

        if (fd < 0)
            return;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        bool broken = load_seq_cst(&o->broken);

        pthread_mutex_lock(&o->lock);
        c = sockets_open(o) < o->cfg.max_clients && !broken
                ? calloc(1, sizeof(*c))
                : NULL;
        pthread_mutex_unlock(&o->lock);
        if (!c) {
            reject(fd, broken ? -EIO : -EUSERS,
                   broken ? "offload failed" : "too many clients");
            close(fd);
            continue;
        }
        c->fd = fd;
        snprintf(c->peer, sizeof(c->peer), "%s:%u", inet_ntoa(a.sin_addr),
                 ntohs(a.sin_port));
        pthread_mutex_lock(&o->lock);
        c->id = ++o->next_id;
        ofl_ps(o)->next_id =
            o->next_id; /* never reused, even after a restart */
        c->next = o->conns;
        o->conns = c;
        o->nconns++;
        pthread_mutex_unlock(&o->lock);
    }
}

/* Frees the clients that failed or hung up (this thread only frees). */
static void reap(struct rdn_offload *o, struct ofl_conn **gone, unsigned n)
{
    pthread_mutex_lock(&o->lock);
    for (struct ofl_conn *c = o->conns, *next; c; c = next) {
        bool drop = c->state == OFL_CONN_DEAD;

        next = c->next;
        for (unsigned i = 0; i < n && !drop; i++)
            drop = gone[i] == c;
        if (drop) {
            if (c->state != OFL_CONN_DEAD)
                ofl_log(o, "client %u (%s) left", c->id, c->peer);
            ofl_conn_free(o, c);
        }
    }
    pthread_mutex_unlock(&o->lock);
}

void *ofl_ctl_main(void *arg)
{
    struct rdn_offload *o = arg;
    size_t cap = 0;
    struct pollfd *pfd = NULL;
    struct ofl_conn **conn = NULL, **gone = NULL;

    while (!load_seq_cst(&o->stop)) {
        unsigned n = 2, ngone = 0;
        char drain[64];

        if (cap < o->nconns + 2) {
            cap = 2 * (o->nconns + 2);
            pfd = realloc(pfd, cap * sizeof(*pfd));
            conn = realloc(conn, cap * sizeof(*conn));
            gone = realloc(gone, cap * sizeof(*gone));
            if (!pfd || !conn || !gone)
                break; /* out of memory: stop serving handshakes */
        }
        pfd[0] = (struct pollfd){.fd = o->listen_fd, .events = POLLIN};
        pfd[1] = (struct pollfd){.fd = o->wake[0], .events = POLLIN};
        for (struct ofl_conn *c = o->conns; c; c = c->next, n++) {
            pfd[n] = (struct pollfd){.fd = c->fd, .events = POLLIN};
            conn[n] = c;
        }
        if (poll(pfd, n, OFL_POLL_MS) < 0)
            continue;
        while (read(o->wake[0], drain, sizeof(drain)) > 0)
            ;
        for (unsigned i = 2; i < n; i++)
            if (pfd[i].revents && !conn_input(o, conn[i]))
                gone[ngone++] = conn[i];
        reap(o, gone, ngone);
        if (pfd[0].revents & POLLIN)
            accept_all(o);
    }
    free(pfd);
    free(conn);
    free(gone);
    return NULL;
}
