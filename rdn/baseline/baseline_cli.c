/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/baseline/baseline_cli.c - the clients of the RDMA baselines (see
 * baseline_cli.h). One request at a time per connection: these clients
 * exist to measure latency, and throughput runs use one connection per
 * thread.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/byteorder.h"
#include "proto/keyhash.h"
#include "proto/rdn_framing.h"
#include "rdn/baseline/baseline_cli.h"
#include "rdn/chain/chain.h"

#define BL_TIMEOUT_MS 5000
#define BL_TRIES      4 /* one-sided attempts per key (torn reads) */
#define BL_ITEM_MAX   (1024 * 1024 + 4096) /* largest item read back */
#define BL_BUCKETS    (2 * sizeof(struct rdn_bucket))

struct bl_conn {
    enum bl_kind kind;
    int fd; /* the baseline handshake connection, kept open */
    struct rnic_device *dev;
    struct chain_q q;
    struct chain_buf buf; /* buckets, then the item (or the RPC reply) */
    struct chain_buf req; /* RPC request */
    struct rdn_geometry geo;
    struct bl_welcome w;
    struct bl_loc last;
    uint32_t next_id;
    int timeout_ms; /* for each answer (bl_set_timeout) */
    bool broken;    /* a request failed: requests and answers may be out of
                       step, so the connection answers nothing any more */
};

static int tcp_connect(const char *host, int port)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res;
    char svc[16];
    int fd, one = 1;

    snprintf(svc, sizeof(svc), "%d", port);
    if (getaddrinfo(host, svc, &hints, &res) != 0)
        return -EHOSTUNREACH;
    fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        fd = -errno;
    freeaddrinfo(res);
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

int bl_geometry(const char *host, int rdn_port, struct rdn_geometry *g)
{
    int fd = tcp_connect(host, rdn_port), rc;
    uint16_t type;

    if (fd < 0)
        return fd;
    rc = ofl_wire_send(fd, RDN_MSG_REFRESH, NULL, 0, 0);
    if (rc == 0)
        rc = ofl_wire_recv(fd, BL_TIMEOUT_MS, &type, g, sizeof(*g));
    close(fd);
    if (rc >= 0)
        rc = rc == sizeof(*g) && type == RDN_MSG_GEOMETRY && g->hashpower &&
                     g->hashpower <= 40
                 ? 0
                 : -EPROTO;
    return rc;
}

static int open_nic(struct bl_conn *c, const char *device)
{
    struct chain_q_attr a = {.sq_wqebb = 16,
                             .rq_wqe = c->kind == BL_ONESIDED ? 0 : 1,
                             .max_recv_sge = 1};
    int rc = rnic_open(device, NULL, &c->dev);

    if (rc < 0)
        return rc;
    rc = chain_q_open(c->dev, &a, &c->q);
    if (rc < 0)
        goto err_close_dev;
    rc = chain_buf_open(c->dev, BL_BUCKETS + BL_ITEM_MAX,
                        RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE,
                        &c->buf);
    if (rc < 0)
        goto err_close_q;
    if (c->kind != BL_ONESIDED) {
        rc = chain_buf_open(c->dev, sizeof(struct bl_rpc_req),
                            RNIC_ACCESS_LOCAL_WRITE, &c->req);
        if (rc < 0)
            goto err_close_buf;
    }
    return 0;

err_close_buf:
    chain_buf_close(&c->buf);
err_close_q:
    chain_q_close(&c->q);
err_close_dev:
    rnic_close(c->dev);
    c->dev = NULL;
    return rc;
}

/* A receive for the next RPC reply (WRITE_IMM consumes it). */
static int post_reply_recv(struct bl_conn *c)
{
    struct rnic_sge s = chain_loc_sge(chain_loc_part(c->q.sink, 0, 8));

    return chain_post_recv(&c->q, &s, 1, 0);
}

static int handshake(struct bl_conn *c)
{
    struct bl_hello h = {.kind = c->kind, .depth = 1};
    struct rnic_addr a;
    uint16_t type;
    int rc = rnic_qp_set_gid_sock(c->q.qp, c->fd); /* as librdn does */

    if (rc >= 0)
        rc = rnic_qp_addr(c->q.qp, &a);
    if (rc < 0)
        return rc;
    memcpy(h.qp_addr, a.bytes, sizeof(h.qp_addr));
    h.buf_addr = (uint64_t)(uintptr_t)(c->buf.ptr + BL_BUCKETS);
    h.buf_rkey = c->buf.mr->rkey;
    h.slot_size = BL_ITEM_MAX;
    rc = ofl_wire_send(c->fd, BL_MSG_HELLO, &h, sizeof(h), 0);
    if (rc == 0)
        rc = ofl_wire_recv(c->fd, BL_TIMEOUT_MS, &type, &c->w, sizeof(c->w));
    if (rc >= 0 && (rc != sizeof(c->w) || type != BL_MSG_WELCOME ||
                    c->w.nregions > BL_MAX_REGIONS))
        rc = -EPROTO;
    if (rc < 0)
        return rc;
    memcpy(a.bytes, c->w.qp_addr, sizeof(a.bytes));
    rc = rnic_connect(c->q.qp, &a);
    if (rc == 0 && c->kind != BL_ONESIDED)
        rc = post_reply_recv(c);
    return rc;
}

int bl_connect(const char *host, int bl_port, int rdn_port, enum bl_kind kind,
               const char *device, struct bl_conn **out)
{
    struct bl_conn *c;
    int rc;

    if (!host || !out || kind < BL_ONESIDED || kind > BL_RPC_EVENT)
        return -EINVAL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->kind = kind;
    c->fd = -1;
    c->timeout_ms = BL_TIMEOUT_MS;
    if (kind == BL_ONESIDED) {
        rc = bl_geometry(host, rdn_port, &c->geo);
        if (rc < 0)
            goto err_close;
    }
    /* The NIC first: the server gives a new connection 2 s for its HELLO
     * (BL_HELLO_MS, baseline_srv.c), and opening a device and a QP and
     * registering memory can take longer (rxe in a loaded VM did). */
    rc = open_nic(c, device);
    if (rc < 0)
        goto err_close;
    rc = c->fd = tcp_connect(host, bl_port);
    if (rc < 0)
        goto err_close;
    rc = handshake(c);
    if (rc < 0)
        goto err_close;
    *out = c;
    return 0;

err_close:
    bl_close(c); /* closes whatever of c is open */
    return rc;
}

void bl_close(struct bl_conn *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    chain_q_close(&c->q);
    chain_buf_close(&c->buf);
    chain_buf_close(&c->req);
    if (c->dev)
        rnic_close(c->dev);
    free(c);
}

int bl_set_timeout(struct bl_conn *c, int timeout_ms)
{
    if (!c || timeout_ms <= 0)
        return -EINVAL;
    c->timeout_ms = timeout_ms;
    return 0;
}

/* Rings the doorbell and waits for one completion of cq. */
static int run(struct bl_conn *c, struct chain_cq *cq, struct rnic_wc *wc)
{
    int rc = chain_q_doorbell(&c->q);

    if (rc == 0)
        rc = chain_cq_poll_wait(cq, wc, c->timeout_ms);
    if (rc == 0)
        return -ETIMEDOUT;
    if (rc < 0)
        return rc;
    if (wc->status != RNIC_WC_SUCCESS)
        return -EIO;
    if (cq == c->q.scq)
        chain_q_retire(&c->q, c->q.pi);
    return 0;
}

/* ---- one-sided -------------------------------------------------------- */

/* The rkey of an exposed region holding [addr, addr+len), or 0. */
static uint32_t region_rkey(const struct bl_conn *c, uint64_t addr,
                            uint64_t len)
{
    for (uint32_t i = 0; i < c->w.nregions; i++) {
        const struct bl_region *r = &c->w.region[i];

        if (addr >= r->addr && addr + len <= r->addr + r->len &&
            addr + len >= addr)
            return r->rkey;
    }
    return 0;
}

/* Both candidate buckets, two READs in flight, one completion. */
static int read_buckets(struct bl_conn *c, const struct rdn_keyhash *kh)
{
    uint64_t b[2] = {rdn_bucket_addr(&c->geo, kh->bucket1),
                     rdn_bucket_addr(&c->geo, kh->bucket2)};
    struct rnic_wc wc;
    int rc = 0;

    for (int i = 0; i < 2 && rc == 0; i++) {
        uint32_t rkey = region_rkey(c, b[i], sizeof(struct rdn_bucket));
        struct rnic_sge sg = chain_loc_sge(chain_buf_loc(
            &c->buf, i * sizeof(struct rdn_bucket), sizeof(struct rdn_bucket)));
        struct chain_loc src = {.ptr = (uint8_t *)(uintptr_t)b[i],
                                .len = sizeof(struct rdn_bucket),
                                .rkey = rkey};

        if (!rkey)
            return -EFAULT;
        rc = chain_read(&c->q, &sg, 1, src, i ? CHAIN_SIGNALED : 0, NULL);
    }
    return rc < 0 ? rc : run(c, c->q.scq, &wc);
}

/* Reads loc into the item buffer and checks both stamps. */
static int read_item(struct bl_conn *c, const struct bl_loc *loc,
                     const struct rdn_item **out)
{
    const struct rdn_item *it = (const void *)(c->buf.ptr + BL_BUCKETS);
    struct rnic_sge sg =
        chain_loc_sge(chain_buf_loc(&c->buf, BL_BUCKETS, loc->len));
    struct chain_loc src = {.ptr = (uint8_t *)(uintptr_t)loc->addr,
                            .len = loc->len,
                            .rkey = loc->rkey};
    struct rnic_wc wc;
    int rc;

    if (loc->len < rdn_item_total_len(1, 0) || loc->len > BL_ITEM_MAX)
        return -EAGAIN;
    rc = chain_read(&c->q, &sg, 1, src, CHAIN_SIGNALED, NULL);
    if (rc == 0)
        rc = run(c, c->q.scq, &wc);
    if (rc < 0)
        return rc;
    if (it->stamp == 0 || it->nkey == 0 || it->nkey > RDN_KEY_MAX ||
        rdn_item_total_len(it->nkey, it->nbytes) != loc->len ||
        *rdn_item_tail((struct rdn_item *)it) != it->stamp) {
        return -EAGAIN;
    }
    *out = it;
    return 0;
}

static int onesided_try(struct bl_conn *c, const char *key, size_t nkey,
                        const struct rdn_keyhash *kh,
                        const struct rdn_item **out)
{
    /* both buckets, as read; item reads land after them */
    const struct rdn_slot *s = (const void *)c->buf.ptr;
    uint64_t match = rdn_slot_match(kh->fp);
    int rc = read_buckets(c, kh);

    if (rc < 0)
        return rc;
    for (unsigned i = 0; i < 2 * RDN_BUCKET_SLOTS; i++) {
        struct bl_loc loc = {.addr = be64_to_cpu(s[i].desc.addr),
                             .len = be32_to_cpu(s[i].desc.byte_count)};
        const struct rdn_item *it;

        if (s[i].match != match)
            continue;
        loc.rkey = region_rkey(c, loc.addr, loc.len);
        if (!loc.rkey)
            return -EAGAIN; /* a torn slot, or a region we do not know */
        rc = read_item(c, &loc, &it);
        if (rc < 0)
            return rc;
        if (it->nkey == nkey &&
            memcmp(rdn_item_key((struct rdn_item *)it), key, nkey) == 0) {
            c->last = loc;
            *out = it;
            return 0;
        }
    }
    return -ENOENT;
}

/* ---- RPC -------------------------------------------------------------- */

/* The reply to a request for key, immediate imm, in the reply slot. */
static int rpc_judge(const struct rdn_item *it, uint32_t imm, const char *key,
                     size_t nkey, const struct rdn_item **out)
{
    if (imm & BL_IMM_MISS)
        return -ENOENT;
    if (it->stamp == 0 || it->nkey != nkey ||
        *rdn_item_tail((struct rdn_item *)it) != it->stamp ||
        memcmp(rdn_item_key((struct rdn_item *)it), key, nkey) != 0)
        return -EAGAIN;
    *out = it;
    return 0;
}

static int rpc_get(struct bl_conn *c, const char *key, size_t nkey,
                   const struct rdn_item **out)
{
    struct bl_rpc_req *r = (struct bl_rpc_req *)c->req.ptr;
    uint32_t id = c->next_id++ & BL_REQ_MASK;
    size_t len = offsetof(struct bl_rpc_req, key) + nkey;
    struct rnic_sge sg =
        chain_loc_sge(chain_buf_loc(&c->req, 0, (uint32_t)len));
    const struct rdn_item *it = (const void *)(c->buf.ptr + BL_BUCKETS);
    struct rnic_wc reply, sent;
    int rc;

    r->req_id = id;
    r->nkey = (uint16_t)nkey;
    memcpy(r->key, key, nkey);
    rc = chain_send(&c->q, &sg, 1, CHAIN_SIGNALED, NULL);
    if (rc == 0)
        rc = run(c, c->q.rcq, &reply);
    if (rc == 0)
        rc = post_reply_recv(c);
    /* the SEND's own completion: reaped so the ring never fills */
    if (rc == 0 && chain_cq_poll_wait(c->q.scq, &sent, c->timeout_ms) != 1)
        rc = -EIO;
    if (rc < 0)
        return rc;
    chain_q_retire(&c->q, c->q.pi);
    if (!(reply.flags & RNIC_WC_WITH_IMM) || (reply.imm & BL_REQ_MASK) != id)
        return -EPROTO;
    return rpc_judge(it, reply.imm, key, nkey, out);
}

int bl_get(struct bl_conn *c, const char *key, size_t nkey,
           const struct rdn_item **it)
{
    struct rdn_keyhash kh;
    int rc;

    if (!c || !key || !it || nkey == 0 || nkey > RDN_KEY_MAX)
        return -EINVAL;
    if (c->broken)
        return -EIO;
    if (c->kind != BL_ONESIDED) {
        rc = rpc_get(c, key, nkey, it);
    } else {
        rdn_keyhash(key, nkey, c->geo.hashpower, &kh);
        rc = -EAGAIN;
        for (int t = 0; t < BL_TRIES && rc == -EAGAIN; t++)
            rc = onesided_try(c, key, nkey, &kh, it);
    }
    if (rc < 0 && rc != -ENOENT && rc != -EAGAIN)
        c->broken = true;
    return rc;
}

int bl_last_loc(const struct bl_conn *c, struct bl_loc *out)
{
    if (!c || !out || c->kind != BL_ONESIDED || !c->last.len)
        return -EINVAL;
    *out = c->last;
    return 0;
}

int bl_read(struct bl_conn *c, const struct bl_loc *loc,
            const struct rdn_item **it)
{
    int rc;

    if (!c || !loc || !it || c->kind != BL_ONESIDED)
        return -EINVAL;
    if (c->broken)
        return -EIO;
    rc = read_item(c, loc, it);
    if (rc < 0 && rc != -EAGAIN)
        c->broken = true;
    return rc;
}
