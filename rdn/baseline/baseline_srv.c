/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/baseline/baseline_srv.c - the server side of the RDMA baselines (see
 * baseline_srv.h): exposed regions, the handshake listener, one polling
 * thread that answers the RPCs of every polling client (a server core
 * that spins on its CQs), and one thread per client that watches its
 * control connection and, for an event-driven client, sleeps on its CQ
 * and answers its RPCs. One-sided clients need no thread's work: the NIC
 * answers their READs.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/barrier.h"
#include "proto/rdn_framing.h"
#include "rdn/baseline/baseline_srv.h"
#include "rdn/baseline/baseline_wire.h"
#include "rdn/chain/chain.h"

#define BL_POLL_MS   100 /* listener / event thread wake-up period */
#define BL_MAX_DEPTH 64
#define BL_HELLO_MS  2000

struct bl_client {
    struct bl_client *next;
    struct bl_srv *srv;
    bool failed; /* the poller saw its QP fail */
    int fd;
    struct bl_hello hello;
    pthread_t thread;
    bool done;          /* the thread has finished: join and free */
    struct chain_cq cq; /* send and receive completions (RPC) */
    struct chain_q q;
    struct chain_buf reqs;   /* depth receive buffers */
    struct chain_buf zero;   /* the miss reply's 8 bytes */
    void *ref[BL_MAX_DEPTH]; /* item references, by reply order */
    uint64_t replies, released;
};

struct bl_srv {
    struct rnic_device *dev;
    char listen_addr[64];
    int port, listen_fd;
    struct bl_cache_ops ops;
    pthread_t thread, poller;
    bool started, poller_started;
    bool stop;

    pthread_mutex_t lock;        /* clients, the poller's start */
    pthread_cond_t poll_cv;      /* a polling client arrived (lock) */
    pthread_mutex_t region_lock; /* regions (taken under lock too) */
    struct bl_region region[BL_MAX_REGIONS];
    struct rnic_mr *mr[BL_MAX_REGIONS];
    unsigned nregions;
    struct bl_client *clients;
};

int bl_srv_open(struct rnic_device *dev, const char *listen_addr, int port,
                const struct bl_cache_ops *ops, struct bl_srv **out)
{
    struct bl_srv *s;

    if (!dev || !listen_addr || strlen(listen_addr) >= 64 || port < 0 ||
        port > 65535 || !ops || !ops->get || !ops->put || !out)
        return -EINVAL;
    s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->dev = dev;
    strcpy(s->listen_addr, listen_addr);
    s->port = port;
    s->listen_fd = -1;
    s->ops = *ops;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->poll_cv, NULL);
    pthread_mutex_init(&s->region_lock, NULL);
    *out = s;
    return 0;
}

int bl_srv_expose(struct bl_srv *s, void *addr, size_t len)
{
    struct rnic_mr *mr;
    int rc;

    if (!s || !addr || !len)
        return -EINVAL;
    pthread_mutex_lock(&s->region_lock);
    if (s->nregions == BL_MAX_REGIONS) {
        pthread_mutex_unlock(&s->region_lock);
        return -ENOSPC;
    }
    rc = rnic_reg_mr(s->dev, addr, len, RNIC_ACCESS_REMOTE_READ, &mr);
    if (rc == 0) {
        s->mr[s->nregions] = mr;
        s->region[s->nregions++] =
            (struct bl_region){(uint64_t)(uintptr_t)addr, len, mr->rkey, 0};
    }
    pthread_mutex_unlock(&s->region_lock);
    return rc;
}

/* The lkey of the exposed region holding [p, p+len), or 0 (region_lock). */
static uint32_t region_lkey(struct bl_srv *s, const void *p, size_t len)
{
    uint64_t a = (uint64_t)(uintptr_t)p;

    for (unsigned i = 0; i < s->nregions; i++)
        if (a >= s->region[i].addr &&
            a + len <= s->region[i].addr + s->region[i].len)
            return s->mr[i]->lkey;
    return 0;
}

/* ---- RPC -------------------------------------------------------------- */

static struct bl_rpc_req *req_buf(struct bl_client *c, uint64_t i)
{
    return (struct bl_rpc_req *)c->reqs.ptr + i;
}

static int post_recv(struct bl_client *c, uint64_t i)
{
    struct rnic_sge sg = chain_loc_sge(chain_buf_loc(
        &c->reqs, i * sizeof(struct bl_rpc_req), sizeof(struct bl_rpc_req)));

    return chain_post_recv(&c->q, &sg, 1, i);
}

/*
 * Answers one request: looks the key up, re-posts the receive (before the
 * reply leaves, so the client's next request always finds it), then
 * WRITE_IMMs the item, or 8 zero bytes on a miss, into the client's slot.
 */
static int answer(struct bl_client *c, const struct rnic_wc *wc)
{
    struct bl_srv *s = c->srv;
    const struct bl_rpc_req *r = req_buf(c, wc->wr_id);
    const struct bl_hello *h = &c->hello;
    uint32_t id = r->req_id & BL_REQ_MASK, imm = id, lkey = 0;
    const struct rdn_item *it = NULL;
    struct chain_loc dst;
    struct rnic_sge sg;
    void *ref = NULL;
    size_t len = 0;
    int rc;

    /* Every reference held must fit c->ref: a client that leaves its
     * replies unacknowledged (no receives posted) is dropped. */
    if (c->replies - c->released >= BL_MAX_DEPTH)
        return -ENOBUFS;
    if (wc->byte_len >= offsetof(struct bl_rpc_req, key) && r->nkey >= 1 &&
        r->nkey <= RDN_KEY_MAX &&
        wc->byte_len >= offsetof(struct bl_rpc_req, key) + r->nkey)
        it = s->ops.get(s->ops.ctx, r->key, r->nkey, &ref);
    if (it) {
        len = rdn_item_total_len(it->nkey, it->nbytes);
        pthread_mutex_lock(&s->region_lock);
        lkey = region_lkey(s, it, len);
        pthread_mutex_unlock(&s->region_lock);
        if (len > h->slot_size || lkey == 0) {
            s->ops.put(s->ops.ctx, ref);
            it = NULL;
        }
    }
    rc = post_recv(c, wc->wr_id);
    if (rc < 0) {
        if (it)
            s->ops.put(s->ops.ctx, ref);
        return rc;
    }
    if (it) {
        sg = (struct rnic_sge){(uint64_t)(uintptr_t)it, (uint32_t)len, lkey};
    } else {
        sg = chain_loc_sge(chain_buf_loc(&c->zero, 0, 8));
        imm |= BL_IMM_MISS;
    }
    dst = (struct chain_loc){
        .ptr = (uint8_t *)(uintptr_t)(h->buf_addr +
                                      (uint64_t)(id & (h->depth - 1)) *
                                          h->slot_size),
        .len = h->slot_size,
        .rkey = h->buf_rkey};
    c->ref[c->replies++ % BL_MAX_DEPTH] = ref;
    rc = chain_write_imm(&c->q, &sg, 1, dst, imm, CHAIN_SIGNALED, NULL);
    return rc < 0 ? rc : chain_q_doorbell(&c->q);
}

/* A reply left: its item may be freed now. */
static void reply_sent(struct bl_client *c, const struct rnic_wc *wc)
{
    void *ref = c->ref[c->released++ % BL_MAX_DEPTH];

    if (ref)
        c->srv->ops.put(c->srv->ops.ctx, ref);
    chain_q_retire(&c->q, c->q.retired +
                              (uint16_t)(wc->wqe_counter + 1 - c->q.retired));
}

/* Handles what the CQ holds: >= 0 completions handled, or -errno. */
static int drain(struct bl_client *c)
{
    struct rnic_wc wc[16];
    int n = rnic_poll_cq(c->cq.cq, 16, wc);

    for (int i = 0; i < n; i++) {
        int rc;

        if (wc[i].status != RNIC_WC_SUCCESS)
            return -EIO;
        if (wc[i].opcode == RNIC_WC_RECV)
            rc = answer(c, &wc[i]);
        else
            reply_sent(c, &wc[i]), rc = 0;
        if (rc < 0)
            return rc;
    }
    return n;
}

/* True when the control connection was closed or the server stops. */
static bool client_gone(struct bl_client *c)
{
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    char b[64];

    if (load_seq_cst(&c->srv->stop))
        return true;
    if (poll(&p, 1, 0) <= 0)
        return false;
    return read(c->fd, b, sizeof(b)) <= 0;
}

/* An event-driven client: sleeps on its CQ between requests. */
static void event_loop(struct bl_client *c)
{
    for (;;) {
        int rc = drain(c);

        if (rc < 0)
            return;
        if (rc == 0 &&
            (rnic_cq_wait(c->cq.cq, BL_POLL_MS) < 0 || client_gone(c)))
            return;
    }
}

static void *client_main(void *arg)
{
    struct bl_client *c = arg;

    if (c->hello.kind == BL_RPC_EVENT) {
        event_loop(c);
    } else {
        /* one-sided, or polled by the poller: watch the connection */
        while (!client_gone(c) && !load_seq_cst(&c->failed))
            poll(&(struct pollfd){.fd = c->fd, .events = POLLIN}, 1,
                 BL_POLL_MS);
    }
    store_seq_cst(&c->done, true);
    return NULL;
}

/* Sleeps (lock held) until a polling client arrives, or BL_POLL_MS. */
static void wait_for_poll_client(struct bl_srv *s)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)BL_POLL_MS * 1000000;
    until.tv_sec += until.tv_nsec / 1000000000;
    until.tv_nsec %= 1000000000;
    pthread_cond_timedwait(&s->poll_cv, &s->lock, &until);
}

/*
 * The polling server core: spins over the CQs of every polling client.
 * The lock is dropped between sweeps, so handshakes and reaping go on;
 * a client is freed only after it left the list under the lock. With no
 * polling client left it sleeps until one arrives: a poller spinning for
 * nobody would steal the core from whatever the machine measures next.
 */
static void *poller_main(void *arg)
{
    struct bl_srv *s = arg;

    while (!load_seq_cst(&s->stop)) {
        bool polled = false;

        pthread_mutex_lock(&s->lock);
        for (struct bl_client *c = s->clients; c; c = c->next) {
            if (c->hello.kind != BL_RPC_POLL || load_seq_cst(&c->done) ||
                load_seq_cst(&c->failed))
                continue;
            polled = true;
            if (drain(c) < 0)
                store_seq_cst(&c->failed, true);
        }
        if (!polled)
            wait_for_poll_client(s);
        pthread_mutex_unlock(&s->lock);
    }
    return NULL;
}

/* ---- clients ---------------------------------------------------------- */

static void client_free(struct bl_client *c)
{
    chain_q_close(&c->q);
    chain_cq_close(&c->cq);
    while (c->released < c->replies) {
        void *ref = c->ref[c->released++ % BL_MAX_DEPTH];

        if (ref)
            c->srv->ops.put(c->srv->ops.ctx, ref);
    }
    chain_buf_close(&c->reqs);
    chain_buf_close(&c->zero);
    close(c->fd);
    free(c);
}

static bool hello_ok(const struct bl_hello *h)
{
    if (h->kind == BL_ONESIDED)
        return true;
    return (h->kind == BL_RPC_POLL || h->kind == BL_RPC_EVENT) &&
           h->depth >= 1 && h->depth <= BL_MAX_DEPTH &&
           !(h->depth & (h->depth - 1)) && h->slot_size >= 64 &&
           h->buf_addr != 0;
}

/* The QP (and for RPC its receives) of a client that said hello. */
static int client_nic(struct bl_client *c)
{
    bool rpc = c->hello.kind != BL_ONESIDED;
    uint32_t depth = rpc ? c->hello.depth : 1;
    struct chain_q_attr a = {.sq_wqebb = 2 * BL_MAX_DEPTH,
                             .rq_wqe = rpc ? depth : 0,
                             .max_recv_sge = 1,
                             .scq = &c->cq,
                             .rcq = rpc ? &c->cq : NULL};
    struct rnic_addr peer;
    int rc = chain_cq_open(c->srv->dev, 4 * BL_MAX_DEPTH, 0, &c->cq);

    if (rc < 0)
        return rc;
    rc = chain_q_open(c->srv->dev, &a, &c->q);
    if (rc < 0)
        goto err_close_cq;
    if (rpc) {
        rc = chain_buf_open(c->srv->dev, depth * sizeof(struct bl_rpc_req),
                            RNIC_ACCESS_LOCAL_WRITE, &c->reqs);
        if (rc < 0)
            goto err_close_q;
        rc = chain_buf_open(c->srv->dev, 64, 0, &c->zero);
        if (rc < 0)
            goto err_close_reqs;
    }
    /* answer from the address the client reached (-l 0.0.0.0) */
    rc = rnic_qp_set_gid_sock(c->q.qp, c->fd);
    memcpy(peer.bytes, c->hello.qp_addr, sizeof(peer.bytes));
    if (rc >= 0)
        rc = rnic_connect(c->q.qp, &peer);
    for (uint32_t i = 0; rc == 0 && rpc && i < depth; i++)
        rc = post_recv(c, i);
    if (rc < 0)
        goto err_close_zero;
    return 0;

err_close_zero:
    chain_buf_close(&c->zero);
err_close_reqs:
    chain_buf_close(&c->reqs);
err_close_q:
    chain_q_close(&c->q);
err_close_cq:
    chain_cq_close(&c->cq);
    return rc;
}

static void reject(int fd, int status, const char *why)
{
    struct rdn_reject r = {.status = status};

    snprintf(r.msg, sizeof(r.msg), "%s", why);
    ofl_wire_send(fd, RDN_MSG_REJECT, &r, sizeof(r), 1);
}

/* Handshake of a new connection; on success the client's thread runs. */
static void client_accept(struct bl_srv *s, int fd)
{
    struct bl_client *c = calloc(1, sizeof(*c));
    struct bl_welcome w;
    struct rnic_addr a;
    uint16_t type;
    int rc;

    if (!c) {
        close(fd);
        return;
    }
    c->srv = s;
    c->fd = fd;
    rc = ofl_wire_recv(fd, BL_HELLO_MS, &type, &c->hello, sizeof(c->hello));
    if (rc != sizeof(c->hello) || type != BL_MSG_HELLO ||
        !hello_ok(&c->hello)) {
        reject(fd, -EPROTO, "bad baseline hello");
        client_free(c);
        return;
    }
    rc = client_nic(c);
    memset(&w, 0, sizeof(w));
    if (rc == 0)
        rc = rnic_qp_addr(c->q.qp, &a);
    if (rc == 0) {
        memcpy(w.qp_addr, a.bytes, sizeof(w.qp_addr));
        pthread_mutex_lock(&s->region_lock);
        if (c->hello.kind == BL_ONESIDED) {
            w.nregions = s->nregions;
            memcpy(w.region, s->region, sizeof(w.region));
        }
        pthread_mutex_unlock(&s->region_lock);
        rc = ofl_wire_send(fd, BL_MSG_WELCOME, &w, sizeof(w), 0);
    } else {
        reject(fd, rc, "cannot create the client's QP");
    }
    if (rc == 0)
        rc = -pthread_create(&c->thread, NULL, client_main, c);
    if (rc < 0) {
        client_free(c);
        return;
    }
    pthread_mutex_lock(&s->lock);
    c->next = s->clients;
    s->clients = c;
    if (c->hello.kind == BL_RPC_POLL && !s->poller_started)
        s->poller_started =
            pthread_create(&s->poller, NULL, poller_main, s) == 0;
    if (c->hello.kind == BL_RPC_POLL)
        pthread_cond_signal(&s->poll_cv);
    pthread_mutex_unlock(&s->lock);
}

/* Joins and frees clients whose thread finished (all of them: force). */
static void reap(struct bl_srv *s, bool force)
{
    struct bl_client **pp = &s->clients;

    pthread_mutex_lock(&s->lock);
    while (*pp) {
        struct bl_client *c = *pp;

        if (!force && !load_seq_cst(&c->done)) {
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        pthread_mutex_unlock(&s->lock);
        pthread_join(c->thread, NULL);
        client_free(c);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
}

static void *listen_main(void *arg)
{
    struct bl_srv *s = arg;

    while (!load_seq_cst(&s->stop)) {
        struct pollfd p = {.fd = s->listen_fd, .events = POLLIN};

        reap(s, false);
        if (poll(&p, 1, BL_POLL_MS) > 0) {
            int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);

            if (fd >= 0)
                client_accept(s, fd);
        }
    }
    return NULL;
}

int bl_srv_start(struct bl_srv *s)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)s->port)};
    socklen_t alen = sizeof(a);
    int one = 1, rc;

    if (!s || s->started)
        return -EINVAL;
    if (inet_pton(AF_INET, s->listen_addr, &a.sin_addr) != 1)
        return -EINVAL;
    s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->listen_fd < 0)
        return -errno;
    setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s->listen_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(s->listen_fd, 16) < 0 ||
        getsockname(s->listen_fd, (struct sockaddr *)&a, &alen) < 0)
        return -errno;
    s->port = ntohs(a.sin_port);
    rc = -pthread_create(&s->thread, NULL, listen_main, s);
    if (rc == 0)
        s->started = true;
    return rc;
}

int bl_srv_port(const struct bl_srv *s)
{
    return s ? s->port : -1;
}

void bl_srv_close(struct bl_srv *s)
{
    if (!s)
        return;
    store_seq_cst(&s->stop, true);
    if (s->started)
        pthread_join(s->thread, NULL);
    if (s->poller_started)
        pthread_join(s->poller, NULL);
    reap(s, true);
    for (unsigned i = 0; i < s->nregions; i++)
        rnic_dereg_mr(s->mr[i]);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    pthread_cond_destroy(&s->poll_cv);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->region_lock);
    free(s);
}
