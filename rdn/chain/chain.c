/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain.c - the queues and CQs chains are built on: creation, the
 * registered send ring and sink, connection, doorbells, receives. WQE
 * encoding is in chain_asm.c.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdn/chain/chain_int.h"

#define CHAIN_DEFAULT_CQ_DEPTH 4096
#define CHAIN_SINK_BYTES       64

/* ---- CQs -------------------------------------------------------------- */

int chain_cq_open(struct rnic_device *dev, uint32_t depth, unsigned flags,
                  struct chain_cq *out)
{
    struct rnic_cq_init_attr attr = {.depth = depth, .flags = flags};
    int rc;

    if (!dev || !out || depth == 0)
        return chain_err(-EINVAL, "chain_cq_open: bad argument");
    memset(out, 0, sizeof(*out));
    rc = rnic_create_cq_ex(dev, &attr, &out->cq);
    if (rc < 0)
        return chain_err(rc, "chain_cq_open: %s", rnic_errmsg());
    out->num = rnic_cq_num(out->cq);
    out->dev = dev;
    return 0;
}

void chain_cq_close(struct chain_cq *cq)
{
    if (cq && cq->cq) {
        rnic_destroy_cq(cq->cq);
        cq->cq = NULL;
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

int chain_cq_poll_wait(struct chain_cq *cq, struct rnic_wc *wc, int timeout_ms)
{
    uint64_t start = now_ns();
    uint64_t deadline = start + (uint64_t)timeout_ms * 1000000;

    if (!cq || !cq->cq || !wc || timeout_ms < 0)
        return chain_err(-EINVAL, "chain_cq_poll_wait: bad argument");
    for (int spin = 0;; spin++) {
        int n = rnic_poll_cq(cq->cq, 1, wc);
        uint64_t now;

        if (n != 0)
            return n < 0 ? chain_err(n, "chain_cq_poll_wait: %s", rnic_errmsg())
                         : 1;
        /* Reading the clock costs more than a poll: look every 64. */
        if (spin % 64)
            continue;
        now = now_ns();
        if (now >= deadline)
            return 0;
        if (now - start < CHAIN_POLL_SPIN_NS)
            continue;
        n = rnic_cq_wait(cq->cq, (int)((deadline - now + 999999) / 1000000));
        if (n < 0)
            return chain_err(n, "chain_cq_poll_wait: %s", rnic_errmsg());
    }
}

/* ---- buffers ---------------------------------------------------------- */

int chain_buf_open(struct rnic_device *dev, size_t len, unsigned access,
                   struct chain_buf *out)
{
    void *p;
    int rc;

    if (!dev || !out || !len)
        return chain_err(-EINVAL, "chain_buf_open: bad argument");
    memset(out, 0, sizeof(*out));
    rc = rnic_mem_alloc(dev, len, &p);
    if (rc < 0)
        return chain_err(rc, "chain_buf_open: %s", rnic_errmsg());
    rc = rnic_reg_mr(dev, p, len, access, &out->mr);
    if (rc < 0) {
        rnic_mem_free(dev, p);
        return chain_err(rc, "chain_buf_open: %s", rnic_errmsg());
    }
    out->dev = dev;
    out->ptr = p;
    out->len = len;
    return 0;
}

void chain_buf_close(struct chain_buf *b)
{
    if (!b || !b->dev)
        return;
    rnic_dereg_mr(b->mr);
    rnic_mem_free(b->dev, b->ptr);
    memset(b, 0, sizeof(*b));
}

struct chain_loc chain_buf_loc(const struct chain_buf *b, size_t off,
                               uint32_t len)
{
    return chain_loc_mr(b->mr, b->ptr + off, len);
}

/* ---- queues ----------------------------------------------------------- */

static bool is_pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

/* Opens the CQ a queue owns when the caller gave none. */
static int own_cq(struct chain_q *q, const struct chain_q_attr *attr,
                  struct chain_cq *given, struct chain_cq *own,
                  struct chain_cq **slot)
{
    int rc;

    if (given) {
        *slot = given;
        return 0;
    }
    rc = chain_cq_open(q->dev,
                       attr->cq_depth ? attr->cq_depth : CHAIN_DEFAULT_CQ_DEPTH,
                       attr->cq_flags, own);
    if (rc == 0)
        *slot = own;
    return rc;
}

/*
 * Registers the send ring, if the QP has one, (so WQEs can be RDMA
 * targets) with `access` (0: everything) and the sink.
 */
static int register_ring(struct chain_q *q, unsigned access)
{
    const unsigned all = RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |
                         RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC;
    int rc;

    if (q->sq.buf) {
        rc = rnic_reg_mr(q->dev, q->sq.buf,
                         (size_t)q->sq.wqebb_cnt * MLX5_SEND_WQE_BB,
                         access ? access : all, &q->ring_mr);
        if (rc < 0)
            return chain_err(rc, "chain_q_open: ring MR: %s", rnic_errmsg());
    }
    rc = chain_buf_open(q->dev, CHAIN_SINK_BYTES, all, &q->sink_buf);
    if (rc == 0)
        q->sink = chain_buf_loc(&q->sink_buf, 0, CHAIN_SINK_BYTES);
    return rc;
}

/* Registers the receive doorbell record, so that RDMA may store counts. */
static int register_rq_db(struct chain_q *q)
{
    void *db = rnic_qp_rq_doorbell(q->qp);
    int rc;

    if (!db)
        return chain_err(-EOPNOTSUPP,
                         "chain_q_open: QP %u has no receive "
                         "doorbell record",
                         q->qpn);
    rc = rnic_reg_mr(q->dev, db, sizeof(uint32_t),
                     RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE,
                     &q->rq_db_mr);
    if (rc < 0)
        return chain_err(rc, "chain_q_open: doorbell record MR: %s",
                         rnic_errmsg());
    q->rq_db = chain_loc_mr(q->rq_db_mr, db, sizeof(uint32_t));
    return 0;
}

/*
 * Creates a QP (and the CQs the caller did not give) whose send ring the
 * assembler will write. The ring, a 64-byte sink and the receive doorbell
 * record (rq_db, with a receive queue) are registered.
 */
int chain_q_open(struct rnic_device *dev, const struct chain_q_attr *attr,
                 struct chain_q *out)
{
    struct rnic_qp_init_attr qa;
    int rc;

    if (!dev || !attr || !out)
        return chain_err(-EINVAL, "chain_q_open: bad argument");
    if (!is_pow2(attr->sq_wqebb) || (attr->rq_wqe && !is_pow2(attr->rq_wqe)))
        return chain_err(-EINVAL, "chain_q_open: ring sizes must be powers "
                                  "of two");
    memset(out, 0, sizeof(*out));
    out->dev = dev;
    out->flags = attr->flags;
    rc = own_cq(out, attr, attr->scq, &out->own_scq, &out->scq);
    if (rc == 0 && attr->rq_wqe)
        rc = own_cq(out, attr, attr->rcq, &out->own_rcq, &out->rcq);
    if (rc < 0)
        goto fail;
    memset(&qa, 0, sizeof(qa));
    qa.send_cq = out->scq->cq;
    qa.recv_cq = out->rcq ? out->rcq->cq : out->scq->cq;
    qa.sq_wqebb = attr->sq_wqebb;
    qa.rq_wqe = attr->rq_wqe;
    qa.max_recv_sge =
        attr->max_recv_sge ? attr->max_recv_sge : CHAIN_RECV_MAX_SGE;
    qa.flags = attr->flags;
    rc = rnic_create_qp(dev, &qa, &out->qp);
    if (rc < 0) {
        rc = chain_err(rc, "chain_q_open: %s", rnic_errmsg());
        goto fail;
    }
    out->qpn = rnic_qp_num(out->qp);
    rc = rnic_qp_sq(out->qp, &out->sq);
    if (rc == -EOPNOTSUPP) {
        /* No raw ring (verbs): requests go through rnic_post_send(), and
         * the ring's size still bounds what is in flight. */
        out->sq.wqebb_cnt = attr->sq_wqebb;
    } else if (rc < 0) {
        rc = chain_err(rc, "chain_q_open: %s", rnic_errmsg());
        goto fail;
    }
    rc = register_ring(out, attr->ring_access);
    if (rc < 0)
        goto fail;
    if (attr->rq_wqe) {
        if (out->sq.buf)
            rc = register_rq_db(out);
        if (rc < 0)
            goto fail;
        out->rq_size = attr->rq_wqe;
        out->recvs = calloc(attr->rq_wqe, sizeof(*out->recvs));
        if (!out->recvs) {
            rc = chain_err(-ENOMEM, "chain_q_open: out of memory");
            goto fail;
        }
    }
    return 0;
fail:
    chain_q_close(out);
    return rc;
}

void chain_q_close(struct chain_q *q)
{
    if (!q || !q->dev)
        return;
    if (q->qp)
        rnic_destroy_qp(q->qp);
    if (q->ring_mr)
        rnic_dereg_mr(q->ring_mr);
    if (q->rq_db_mr)
        rnic_dereg_mr(q->rq_db_mr);
    chain_buf_close(&q->sink_buf);
    chain_cq_close(&q->own_scq);
    chain_cq_close(&q->own_rcq);
    free(q->recvs);
    memset(q, 0, sizeof(*q));
}

int chain_q_connect(struct chain_q *a, struct chain_q *b)
{
    struct rnic_addr aa, ba;
    int rc;

    if (!a || !b)
        return chain_err(-EINVAL, "chain_q_connect: bad argument");
    rc = rnic_qp_addr(a->qp, &aa);
    if (rc == 0)
        rc = rnic_qp_addr(b->qp, &ba);
    if (rc == 0)
        rc = rnic_connect(a->qp, &ba);
    if (rc == 0 && a != b)
        rc = rnic_connect(b->qp, &aa);
    if (rc < 0)
        return chain_err(rc, "chain_q_connect: %s", rnic_errmsg());
    a->peer = b;
    b->peer = a;
    return 0;
}

int chain_q_doorbell(struct chain_q *q)
{
    int rc;

    if (!q || !q->qp)
        return chain_err(-EINVAL, "chain_q_doorbell: bad argument");
    if (q->flags & RNIC_QP_MANAGED_SEND)
        return chain_err(-EINVAL,
                         "chain_q_doorbell: QP %u is managed: "
                         "only SEND_EN releases its WQEs",
                         q->qpn);
    if (!q->sq.buf) { /* rnic_post_send() released every WQE */
        q->doorbell = q->pi;
        return 0;
    }
    rc = rnic_ring_doorbell(q->qp, q->pi);
    if (rc < 0)
        return chain_err(rc, "chain_q_doorbell: %s", rnic_errmsg());
    q->doorbell = q->pi;
    return 0;
}

/* Posts a receive and keeps a copy of its scatter list for the checker. */
int chain_post_recv(struct chain_q *q, const struct rnic_sge *sge, unsigned n,
                    uint64_t wr_id)
{
    struct chain_recv *r;
    int rc;

    if (!q || !q->rq_size)
        return chain_err(-EINVAL, "chain_post_recv: no receive queue");
    if (n == 0 || n > CHAIN_RECV_MAX_SGE || !sge)
        return chain_err(-EINVAL, "chain_post_recv: %u scatter entries", n);
    rc = rnic_post_recv(q->qp, sge, n, wr_id);
    if (rc < 0)
        return chain_err(rc, "chain_post_recv: %s", rnic_errmsg());
    r = &q->recvs[q->rq_pi % q->rq_size];
    memcpy(r->sge, sge, n * sizeof(*sge));
    r->n = n;
    q->rq_pi++;
    return 0;
}

int chain_kick(struct chain_q *master, struct chain_q *tgt)
{
    int rc;

    if (!master || !tgt)
        return chain_err(-EINVAL, "chain_kick: bad argument");
    rc = chain_send_en(master, tgt, tgt->pi, 0, NULL);
    return rc < 0 ? rc : chain_q_doorbell(master);
}
