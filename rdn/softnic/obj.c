/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/obj.c - creating, connecting and destroying CQs and QPs.
 *
 * Numbers (CQN, QPN) are a 14-bit table index with a 10-bit generation
 * above it, so a stale number does not find a new object. A QP is bound to
 * one engine thread for life (round robin). Destroying a QP is a handshake:
 * the control side marks it dying and pokes its thread, the thread lets go
 * of it (lists, timers, packets) and tells the peer; then the table entry
 * is cleared and the memory freed after every thread passed a quiescent
 * point.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "rdn/softnic/obj_int.h"
#include "rdn/softnic/roce_int.h"

static uint32_t sn_pow2(uint32_t v)
{
    uint32_t p = 1;

    while (p < v)
        p <<= 1;
    return p;
}

/* A free index in table (of SN_MAX_OBJS entries), 0 if none. */
static uint32_t sn_slot(void *const *table, uint32_t *hint)
{
    for (uint32_t n = 1; n < SN_MAX_OBJS; n++) {
        uint32_t i = (*hint + n) % SN_MAX_OBJS;

        if (i && !table[i]) {
            *hint = i;
            return i;
        }
    }
    return 0;
}

static uint32_t sn_number(uint16_t *gen, uint32_t idx)
{
    if (++gen[idx] >= 1024)
        gen[idx] = 1;
    return (uint32_t)gen[idx] << SN_OBJ_BITS | idx;
}

int sn_cq_create(struct sn_dev *d, int fd, uint64_t va, uint32_t depth,
                 uint32_t flags, struct sn_ctl_resp *resp, struct sn_cq **out)
{
    struct sn_engine *e = d->eng;
    uint32_t idx = sn_slot((void *const *)e->cqs, &e->cq_hint);
    struct sn_cq *cq;
    int rc;

    if (depth == 0 || depth > (1u << 22) ||
        (flags & ~(uint32_t)RNIC_CQ_IGNORE_OVERRUN))
        return sn_fail(resp, -EINVAL, "rnic_create_cq: bad depth or flags");
    depth = sn_pow2(depth);
    if (!idx)
        return sn_fail(resp, -ENOMEM, "rnic_create_cq: CQ table full");
    cq = calloc(1, sizeof(*cq));
    if (!cq)
        return sn_fail(resp, -ENOMEM, "out of memory");
    rc = sn_area_new(d, fd, va, sn_cq_shm_size(depth), false, resp, &cq->area);
    if (rc) {
        free(cq);
        return rc;
    }
    cq->idx = idx;
    cq->cqn = sn_number(e->cq_gen, idx);
    cq->dev = d;
    cq->sh = (struct sn_cq_shm *)cq->area->eng;
    cq->ring = sn_cq_ring(cq->area->eng);
    cq->depth = depth;
    cq->mask = depth - 1;
    cq->flags = flags;
    cq->sh->depth = depth;
    cq->sh->flags = flags;
    sn_list_add_tail(&d->cqs, &cq->node);
    store_release(&e->cqs[idx], cq);
    *out = cq;
    return 0;
}

struct sn_cq *sn_cq_find(struct sn_dev *d, uint32_t cqn)
{
    struct sn_cq *cq = sn_cq_lookup(d->eng, cqn);

    return cq && cq->dev == d ? cq : NULL;
}

int sn_cq_destroy(struct sn_cq *cq, struct sn_ctl_resp *resp)
{
    struct sn_engine *e = cq->dev->eng;

    if (cq->qp_refs)
        return sn_fail(resp, -EBUSY, "rnic_destroy_cq: QPs still use it");
    store_release(&e->cqs[cq->idx], NULL);
    sn_engine_sync(e);
    sn_list_del(&cq->node);
    sn_area_put(cq->area);
    free(cq);
    return 0;
}

void sn_cq_describe(const struct sn_cq *cq, struct sn_ctl_obj *o)
{
    memset(o, 0, sizeof(*o));
    o->va = cq->area->app;
    o->len = cq->area->len;
    o->num = cq->cqn;
    o->depth = cq->depth;
    o->flags = cq->flags;
}

static int sn_qp_check(struct sn_dev *d, const struct sn_ctl_req *req,
                       struct sn_ctl_resp *resp)
{
    const typeof(req->u.qp) *a = &req->u.qp;

    if (!a->sq_wqebb || (a->sq_wqebb & (a->sq_wqebb - 1)) ||
        a->sq_wqebb > (1u << 15))
        return sn_fail(resp, -EINVAL, "rnic_create_qp: bad sq_wqebb");
    if (a->rq_wqe && ((a->rq_wqe & (a->rq_wqe - 1)) || a->rq_wqe > 1u << 15 ||
                      !a->rq_sge || a->rq_sge > MLX5_RECV_MAX_SGE))
        return sn_fail(resp, -EINVAL, "rnic_create_qp: bad receive queue");
    if (!sn_cq_find(d, a->send_cqn) ||
        (a->rq_wqe && !sn_cq_find(d, a->recv_cqn)))
        return sn_fail(resp, -EINVAL, "rnic_create_qp: no such CQ");
    if (a->rc.set &&
        (a->rc.timeout < 1 || a->rc.timeout > 31 || a->rc.retry_cnt > 7 ||
         a->rc.rnr_retry > 7 || a->rc.min_rnr_timer > 31))
        return sn_fail(resp, -EINVAL, "rnic_create_qp: bad rc attributes");
    return 0;
}

static void sn_qp_free(struct sn_qp *qp)
{
    sn_rc_free(qp);
    free(qp->out);
    free(qp->shadow);
    free(qp);
}

int sn_qp_create(struct sn_dev *d, int fd, const struct sn_ctl_req *req,
                 struct sn_ctl_resp *resp, struct sn_qp **out)
{
    const typeof(req->u.qp) *a = &req->u.qp;
    struct sn_engine *e = d->eng;
    struct sn_qp_layout l;
    struct sn_qp *qp;
    uint32_t idx, nout;
    int rc = sn_qp_check(d, req, resp);

    if (rc)
        return rc;
    idx = sn_slot((void *const *)e->qps, &e->qp_hint);
    if (!idx)
        return sn_fail(resp, -ENOMEM, "rnic_create_qp: QP table full");
    l = sn_qp_layout(a->sq_wqebb, a->rq_wqe, a->rq_wqe ? a->rq_sge : 1);
    nout = sn_pow2(a->sq_wqebb < 64 ? 64 : a->sq_wqebb);
    qp = calloc(1, sizeof(*qp));
    if (qp)
        qp->out = calloc(nout, sizeof(*qp->out));
    if (qp && d->strict)
        qp->shadow = malloc((size_t)a->sq_wqebb * MLX5_SEND_WQE_BB);
    if (!qp || !qp->out || (d->strict && !qp->shadow)) {
        if (qp)
            sn_qp_free(qp);
        return sn_fail(resp, -ENOMEM, "out of memory");
    }
    rc = sn_area_new(d, fd, a->va, l.size, true, resp, &qp->area);
    if (rc) {
        sn_qp_free(qp);
        return rc;
    }
    qp->idx = idx;
    qp->qpn = sn_number(e->qp_gen, idx);
    if (a->rq_wqe)
        qp->area->rq_db_qpn = qp->qpn;
    qp->dev = d;
    qp->thr = e->thr[e->next_thr++ % e->nthreads];
    qp->flags = a->flags;
    qp->access =
        a->access & (RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ |
                     RNIC_ACCESS_REMOTE_ATOMIC);
    qp->scq = sn_cq_find(d, a->send_cqn);
    qp->rcq = a->rq_wqe ? sn_cq_find(d, a->recv_cqn) : NULL;
    qp->scq->qp_refs++;
    if (qp->rcq)
        qp->rcq->qp_refs++;
    qp->sh = (struct sn_qp_shm *)qp->area->eng;
    qp->sq = qp->area->eng + l.sq_off;
    qp->sq_cnt = a->sq_wqebb;
    qp->rq = qp->area->eng + l.rq_off;
    qp->rq_cnt = a->rq_wqe;
    qp->rq_sge = a->rq_wqe ? a->rq_sge : 0;
    qp->rq_stride = sn_rq_stride(a->rq_wqe ? a->rq_sge : 1);
    qp->wrid = (uint64_t *)(qp->area->eng + l.wrid_off);
    qp->out_mask = nout - 1;
    qp->tm.pos = SN_TIMER_IDLE;
    qp->rc_attr = a->rc;
    if (getrandom(&qp->rc_ipsn, sizeof(qp->rc_ipsn), 0) < 0)
        qp->rc_ipsn = (uint32_t)sn_now_ns();
    qp->rc_ipsn &= 0xffffffu;
    sn_list_init(&qp->run);
    sn_list_init(&qp->wait);
    sn_list_init(&qp->dirty);
    qp->sh->state = RNIC_QPS_RESET;
    sn_list_add_tail(&d->qps, &qp->node);
    store_release(&e->qps[idx], qp);
    *out = qp;
    return 0;
}

struct sn_qp *sn_qp_find(struct sn_dev *d, uint32_t qpn)
{
    struct sn_qp *qp = sn_qp_lookup(d->eng, qpn);

    return qp && qp->dev == d ? qp : NULL;
}

void sn_qp_destroy(struct sn_qp *qp)
{
    struct sn_engine *e = qp->dev->eng;

    store_release(&qp->dying, 1);
    while (!load_acquire(&qp->detached)) {
        struct timespec ts = {0, 20000};

        sn_poke_qp(e->ctl, qp->thr->idx, qp->idx);
        nanosleep(&ts, NULL);
    }
    store_release(&e->qps[qp->idx], NULL);
    sn_engine_sync(e);
    qp->scq->qp_refs--;
    if (qp->rcq)
        qp->rcq->qp_refs--;
    sn_list_del(&qp->node);
    sn_area_unlink(qp->area);
    sn_area_put(qp->area);
    sn_qp_free(qp);
}

int sn_qp_connect(struct sn_qp *qp, const struct rnic_addr *remote,
                  struct sn_ctl_resp *resp)
{
    uint32_t qpn = be32_to_cpu(remote->qpn);
    int rc;

    if (load_acquire(&qp->state) != RNIC_QPS_RESET)
        return sn_fail(resp, -EINVAL,
                       "rnic_connect: QP already "
                       "connected");
    if (!sn_roce_addr_local(qp->dev->eng, remote)) {
        rc = sn_rc_connect(qp, remote);
        if (rc == -EHOSTUNREACH)
            return sn_fail(resp, rc,
                           "rnic_connect: the peer QP %#x is on another "
                           "host, and this rdn-nicd has no RoCE endpoint "
                           "(--listen) or the peer has no IPv4 GID",
                           qpn);
        if (rc)
            return sn_fail(resp, rc, "rnic_connect: %s", strerror(-rc));
    } else if (!sn_qp_lookup(qp->dev->eng, qpn)) {
        return sn_fail(resp, -ENOENT, "rnic_connect: no QP %#x", qpn);
    } else {
        qp->peer_qpn = qpn;
    }
    store_release(&qp->state, RNIC_QPS_RTS);
    store_release(&qp->sh->state, RNIC_QPS_RTS);
    sn_poke_qp(qp->dev->eng->ctl, qp->thr->idx, qp->idx);
    return 0;
}

int sn_qp_source(struct sn_qp *qp, const uint8_t gid[16],
                 struct sn_ctl_resp *resp)
{
    int rc;

    if (load_acquire(&qp->state) != RNIC_QPS_RESET)
        return sn_fail(resp, -EINVAL, "rnic_qp_set_gid: QP not in RESET");
    rc = sn_roce_set_src(qp, gid);
    if (rc == -EADDRNOTAVAIL)
        return sn_fail(resp, rc,
                       "rnic_qp_set_gid: not an address this rdn-nicd "
                       "listens on (--listen)");
    if (rc)
        return sn_fail(resp, rc, "rnic_qp_set_gid: %s", strerror(-rc));
    return 0;
}

void sn_qp_describe(const struct sn_qp *qp, struct sn_ctl_obj *o)
{
    memset(o, 0, sizeof(*o));
    o->va = qp->area->app;
    o->len = qp->area->len;
    o->num = qp->qpn;
    o->flags = qp->flags;
    o->access = qp->access;
    o->thread = qp->thr->idx;
    o->send_cqn = qp->scq->cqn;
    o->recv_cqn = qp->rcq ? qp->rcq->cqn : 0;
    o->sq_wqebb = qp->sq_cnt;
    o->rq_wqe = qp->rq_cnt;
    o->rq_sge = qp->rq_sge;
}
