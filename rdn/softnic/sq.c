/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/sq.c - the requester: executes a QP's send WQEs in order,
 * keeps the executed ones in the out ring until they complete (in order),
 * and handles the responses, errors and flushes.
 *
 * A WQE is read from the ring when it is about to execute (or from the
 * strict-mode snapshot), parsed from that private copy, and executed: local
 * WQEs (NOP, WAIT, SEND_EN, RECV_EN) are done at once, the others send one
 * request packet and are done when its response arrives. Timed devices
 * give every WQE a start time (the QP's next_ns, moved by doorbells,
 * enables, WAITs and the previous WQE's cost) and a completion time; a QP
 * whose next step lies in the future arms its timer instead of running.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proto/barrier.h"
#include "proto/byteorder.h"
#include "rdn/rnic/provider.h"
#include "rdn/softnic/engine_int.h"
#include "rdn/softnic/roce_int.h"

/*
 * What a step tells sn_qp_run(): the QP cannot go on now, it may go on, or
 * it may go on after the queues its WQE released had their turn.
 */
enum { SN_STEP_BLOCKED = 0, SN_STEP_DONE = 1, SN_STEP_YIELD = 2 };

static inline uint64_t sn_max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* ---- reading WQEs ----------------------------------------------------- */

/*
 * Copies len bytes of the WQE at block bb, from byte off of that block on
 * (off < 64), from the snapshot where prefetched: one memcpy per
 * contiguous run of the ring (or of the snapshot).
 */
static void sn_sq_copy(const struct sn_qp *qp, uint32_t bb, uint32_t off,
                       uint8_t *dst, size_t len)
{
    while (len) {
        uint32_t slot = bb & (qp->sq_cnt - 1);
        uint32_t run = qp->sq_cnt - slot; /* blocks to the ring's end */
        const uint8_t *base = qp->sq;
        size_t n;

        if (qp->shadow && (int32_t)(bb - qp->fetched) < 0) {
            base = qp->shadow;
            if (qp->fetched - bb < run)
                run = qp->fetched - bb;
        }
        n = (size_t)run * MLX5_SEND_WQE_BB - off;
        if (n > len)
            n = len;
        memcpy(dst, base + (size_t)slot * MLX5_SEND_WQE_BB + off, n);
        dst += n;
        len -= n;
        bb += run;
        off = 0;
    }
}

/*
 * sn_sq_copy() with the common case inline: no snapshot, no wrap. A block,
 * or at most three segments (the rest of a two-block WQE), is a copy of a
 * constant size, a few moves; the compiler makes one of variable size a
 * string copy, whose start alone takes longer. Longer rests (a READ's
 * scatter list) are one memcpy.
 */
static inline void sn_sq_read(const struct sn_qp *qp, uint32_t bb, uint32_t off,
                              uint8_t *dst, size_t len)
{
    size_t at = (size_t)(bb & (qp->sq_cnt - 1)) * MLX5_SEND_WQE_BB + off;
    const uint8_t *src = qp->sq + at;

    if (qp->shadow || at + len > (size_t)qp->sq_cnt * MLX5_SEND_WQE_BB) {
        sn_sq_copy(qp, bb, off, dst, len);
        return;
    }
    switch (len) {
    case 0:
        break;
    case MLX5_SEND_WQE_DS:
        memcpy(dst, src, MLX5_SEND_WQE_DS);
        break;
    case 2 * MLX5_SEND_WQE_DS:
        memcpy(dst, src, 2 * MLX5_SEND_WQE_DS);
        break;
    case 3 * MLX5_SEND_WQE_DS:
        memcpy(dst, src, 3 * MLX5_SEND_WQE_DS);
        break;
    case MLX5_SEND_WQE_BB:
        memcpy(dst, src, MLX5_SEND_WQE_BB);
        break;
    default:
        memcpy(dst, src, len);
    }
}

/* Strict mode: snapshot WQEBBs up to the window ahead of ci. */
static void sn_sq_snapshot(struct sn_qp *qp)
{
    uint32_t window = qp->dev->strict;

    if ((int32_t)(qp->fetched - qp->ci) < 0)
        qp->fetched = qp->ci;
    while (qp->fetched != qp->limit && qp->fetched - qp->ci < window &&
           qp->limit - qp->ci <= qp->sq_cnt) {
        size_t off = (size_t)(qp->fetched & (qp->sq_cnt - 1)) * 64;

        memcpy(qp->shadow + off, qp->sq + off, MLX5_SEND_WQE_BB);
        qp->fetched++;
    }
}

/*
 * sn_sq_snapshot() on a strict-mode queue: every WQE executed and every
 * limit raised asks, and most queues have no snapshot.
 */
static inline void sn_sq_prefetch(struct sn_qp *qp)
{
    if (qp->shadow)
        sn_sq_snapshot(qp);
}

/* ---- completions ------------------------------------------------------ */

static void sn_complete(struct sn_thread *t, struct sn_qp *qp,
                        const struct sn_out *o)
{
    struct sn_cqe c = {
        .qpn = qp->qpn,
        .byte_len = o->byte_len,
        .wqe_counter = o->wqe_counter,
        .opcode = rnic_wc_opcode_of(o->opcode),
        .status = o->status,
    };

    if (qp->dev->tm.timed) {
        c.nic_ns = o->done_ns;
        c.ready_ns = o->done_ns + qp->dev->tm.cqe_ns;
    }
    sn_cq_push(t, qp->scq, &c);
}

/* Retires done entries from the head of the out ring, in order. */
static void sn_qp_retire_done(struct sn_thread *t, struct sn_qp *qp)
{
    bool timed = qp->dev->tm.timed;

    while (qp->out_head != qp->out_tail) {
        struct sn_out *o = &qp->out[qp->out_head & qp->out_mask];

        if (!o->done)
            break;
        if (timed && o->done_ns > t->now) {
            t->now = sn_now_ns();
            if (o->done_ns > t->now) {
                sn_timer_qp(t, qp, o->done_ns);
                break;
            }
        }
        if (timed && qp->retire_wake) /* a blocked step resumes now */
            qp->next_ns = sn_max64(qp->next_ns, o->done_ns);
        if (o->signaled || o->status)
            sn_complete(t, qp, o);
        if (qp->dev->trace)
            sn_trace_wqe(qp->dev->trace, qp->dev->id, qp->qpn, o,
                         timed ? o->done_ns : sn_now_ns());
        if (o->rd)
            qp->rd_used &= ~(1u << (o->rd - 1));
        qp->out_head++;
    }
}

/*
 * sn_qp_retire_done() when the head entry is done: a run retires after
 * every step, and mostly the head still waits for its response.
 */
static inline void sn_qp_retire(struct sn_thread *t, struct sn_qp *qp)
{
    if (qp->out_head != qp->out_tail &&
        qp->out[qp->out_head & qp->out_mask].done)
        sn_qp_retire_done(t, qp);
}

/* ---- WAIT bookkeeping ------------------------------------------------- */

static void sn_wait_register(struct sn_thread *t, struct sn_qp *qp,
                             struct sn_cq *cq)
{
    if (qp->in_wait)
        return;
    sn_list_add_tail(&t->cqwait[cq->idx], &qp->wait);
    qp->in_wait = true;
    fetch_or_seq_cst(&cq->waiters, 1ull << t->idx);
}

static void sn_wait_unregister(struct sn_thread *t, struct sn_qp *qp)
{
    uint32_t idx = qp->wait_cqn & (SN_MAX_OBJS - 1);
    struct sn_cq *cq;

    if (!qp->in_wait)
        return;
    sn_list_del(&qp->wait);
    qp->in_wait = false;
    cq = sn_cq_lookup(t->eng, qp->wait_cqn);
    if (cq && sn_list_empty(&t->cqwait[idx]))
        fetch_and_seq_cst(&cq->waiters, ~(1ull << t->idx));
}

/* ---- errors and flushes ----------------------------------------------- */

void sn_qp_fail(struct sn_thread *t, struct sn_qp *qp, uint32_t from,
                bool tell_peer)
{
    bool was_rts = load_acquire(&qp->state) == RNIC_QPS_RTS;

    for (uint32_t i = qp->out_head; i != qp->out_tail; i++) {
        struct sn_out *o = &qp->out[i & qp->out_mask];

        /* Later WQEs flush even if executed: they cannot retire first. */
        if ((int32_t)(o->psn - from) >= 0 &&
            (!o->done || o->status == RNIC_WC_SUCCESS)) {
            o->done = 1;
            o->status = RNIC_WC_WR_FLUSH_ERR;
            o->done_ns = t->now;
        }
    }
    if (!was_rts)
        return;
    store_release(&qp->state, RNIC_QPS_ERR);
    store_release(&qp->sh->state, RNIC_QPS_ERR);
    sn_rc_reset(t, qp);
    sn_wait_unregister(t, qp);
    qp->block = SN_BLK_NONE;
    while (qp->stall) {
        struct sn_pkt *p = qp->stall;

        qp->stall = p->next;
        sn_pkt_free(t, p);
    }
    qp->stall_tail = NULL;
    if (tell_peer && qp->peer_qpn != qp->qpn) {
        struct sn_pkt *p = sn_pkt_alloc(t, 0);

        if (p) {
            p->h.type = SN_PKT_ERR;
            p->h.dst_qpn = qp->peer_qpn;
            p->h.src_qpn = qp->qpn;
            sn_send(t, qp, p, t->now);
        }
    }
    sn_rq_flush(t, qp);
    sn_kick(t, qp);
}

/* The psn of the oldest WQE not yet retired (or the next one). */
static uint32_t sn_oldest_psn(const struct sn_qp *qp)
{
    if (qp->out_head == qp->out_tail)
        return qp->psn;
    return qp->out[qp->out_head & qp->out_mask].psn;
}

/* Error state, out ring empty: every posted WQE completes flushed. */
static void sn_sq_flush(struct sn_thread *t, struct sn_qp *qp)
{
    uint32_t n = 0;

    while (qp->ci != qp->limit && n++ < qp->sq_cnt) {
        struct mlx5_ctrl_seg c;
        struct sn_out o = {.status = RNIC_WC_WR_FLUSH_ERR};
        uint32_t nbb;

        sn_sq_copy(qp, qp->ci, 0, (uint8_t *)&c, sizeof(c));
        nbb = (mlx5_ctrl_ds(&c) * 16u + 63) / 64;
        if (nbb == 0 || nbb > qp->limit - qp->ci)
            nbb = 1;
        o.wqe_counter = (uint16_t)qp->ci;
        o.opcode = mlx5_ctrl_opcode(&c);
        o.done_ns = t->now;
        sn_complete(t, qp, &o);
        qp->ci += nbb;
    }
    qp->ci = qp->limit;
    qp->fetched = qp->ci;
}

/* ---- executing WQEs --------------------------------------------------- */

static void sn_qp_update_limit(struct sn_thread *t, struct sn_qp *qp);

/* A WQE being executed: its private copy and decoded control fields. */
struct sn_wqe {
    uint8_t b[SN_WQE_MAX];
    uint8_t opcode, ds, flags;
    uint32_t nbb;
    uint64_t start, end; /* timed devices */
};

static const struct mlx5_data_seg *sn_wqe_dseg(const struct sn_wqe *w,
                                               unsigned seg)
{
    return (const struct mlx5_data_seg *)(w->b + seg * MLX5_SEND_WQE_DS);
}

/* Length a data segment stands for (byte_count 0 means 2^31, as mlx5). */
static uint64_t sn_dseg_len(uint32_t bc)
{
    return bc ? bc : SN_MAX_MSG;
}

/*
 * Resolves the gather list (segments first..ds-1) for reading; fills ptr[]
 * and len[] and returns 0 or a completion status.
 */
static int sn_gather(struct sn_thread *t, struct sn_qp *qp,
                     const struct sn_wqe *w, unsigned first,
                     const uint8_t **ptr, uint32_t *len, uint64_t *total)
{
    const struct sn_mr *mr = NULL;

    *total = 0;
    for (unsigned s = first; s < w->ds; s++) {
        const struct mlx5_data_seg *d = sn_wqe_dseg(w, s);
        uint32_t bc = be32_to_cpu(d->byte_count);
        uint64_t n = sn_dseg_len(bc);

        if (bc & 0x80000000u)
            return RNIC_WC_LOC_QP_OP_ERR; /* inline data: unsupported */
        *total += n;
        if (*total > SN_MAX_MSG)
            return RNIC_WC_LOC_LEN_ERR;
        mr = sn_mr_lookup_next(t->eng, qp->dev, be32_to_cpu(d->lkey), mr);
        ptr[s - first] = sn_mr_addr(mr, be64_to_cpu(d->addr), n, 0);
        if (!ptr[s - first])
            return RNIC_WC_LOC_PROT_ERR;
        len[s - first] = (uint32_t)n;
    }
    return 0;
}

/* Checks a scatter list (segments first..ds-1) and stores it in rd. */
static int sn_scatter_list(struct sn_thread *t, struct sn_qp *qp,
                           const struct sn_wqe *w, unsigned first,
                           struct sn_rd *rd, uint64_t *total)
{
    const struct sn_mr *mr = NULL;

    *total = 0;
    rd->nsge = w->ds - first;
    for (unsigned s = first; s < w->ds; s++) {
        const struct mlx5_data_seg *d = sn_wqe_dseg(w, s);
        struct sn_sge *r = &rd->sge[s - first];
        uint32_t bc = be32_to_cpu(d->byte_count);

        if (bc & 0x80000000u)
            return RNIC_WC_LOC_QP_OP_ERR;
        r->byte_count = bc;
        r->lkey = be32_to_cpu(d->lkey);
        r->addr = be64_to_cpu(d->addr);
        *total += sn_dseg_len(bc);
        if (*total > SN_MAX_MSG)
            return RNIC_WC_LOC_LEN_ERR;
        mr = sn_mr_lookup_next(t->eng, qp->dev, r->lkey, mr);
        if (!sn_mr_addr(mr, r->addr, sn_dseg_len(bc), RNIC_ACCESS_LOCAL_WRITE))
            return RNIC_WC_LOC_PROT_ERR;
    }
    return 0;
}

/* The header of a request of type from qp's WQE entry o, len bytes. */
static struct sn_wire sn_request_wire(const struct sn_qp *qp, uint8_t type,
                                      uint32_t len, const struct sn_out *o)
{
    return (struct sn_wire){
        .type = type,
        .dst_qpn = qp->peer_qpn,
        .src_qpn = qp->qpn,
        .psn = o->psn,
        .len = len,
    };
}

static struct sn_pkt *sn_request(struct sn_thread *t, struct sn_qp *qp,
                                 uint8_t type, uint32_t payload,
                                 const struct sn_out *o)
{
    struct sn_pkt *p = sn_pkt_alloc(t, payload);

    if (p)
        p->h = sn_request_wire(qp, type, payload, o);
    return p;
}

/* Largest request served in place: its data is copied aside first. */
#define SN_NOW_MAX 512

/*
 * The responder of qp when a request qp sends now may be served in place:
 * both untimed, a QP of this thread ready to serve qp, and no packet of
 * this thread on its way. Then nothing qp sent before is unserved (RC
 * serves a QP's requests in order; one waiting for a receive is in
 * dst->stall), and whatever a queue that ran before it sent has landed
 * (so a queue released first still lands first, docs/softnic.md
 * "Threads"). Not in strict mode: its snapshot of the WQEs ahead must be
 * taken before the answer lands, as a prefetching NIC's would. NULL: send
 * it.
 */
static struct sn_qp *sn_now_responder(struct sn_thread *t, struct sn_qp *qp)
{
    struct sn_qp *dst;

    if (qp->rc || qp->dev->tm.timed || qp->shadow || t->local)
        return NULL;
    dst = sn_qp_lookup(t->eng, qp->peer_qpn);
    if (!dst || dst->thr != t || dst->rc || dst->dev->tm.timed || dst->stall ||
        dst->peer_qpn != qp->qpn || load_acquire(&dst->state) != RNIC_QPS_RTS)
        return NULL;
    return dst;
}

/* Copies the n gathered pieces one after the other into to. */
static void sn_gather_copy(uint8_t *to, const uint8_t *const *ptr,
                           const uint32_t *len, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        memcpy(to, ptr[i], len[i]);
        to += len[i];
    }
}

/*
 * A WRITE, WRITE_IMM, SEND or SEND_IMM (header h, the n gathered pieces)
 * served at once, as sn_rd_now() serves a READ, when sn_now_responder()
 * allows and the responder takes it on arrival (sn_resp_now()); returns
 * false to send the packet, whose path keeps the RNR waits and NAKs. The
 * pieces are copied aside first, as the packet would hold them: a piece
 * may overlap the destination.
 */
static bool sn_data_now(struct sn_thread *t, struct sn_qp *qp,
                        const struct sn_wire *h, const uint8_t *const *ptr,
                        const uint32_t *len, unsigned n)
{
    uint8_t copy[SN_NOW_MAX];
    struct sn_qp *dst;

    if (h->len > sizeof(copy))
        return false;
    dst = sn_now_responder(t, qp);
    if (!dst)
        return false;
    sn_gather_copy(copy, ptr, len, n);
    return sn_resp_now(t, dst, h, copy);
}

/*
 * WRITE, WRITE_IMM, SEND, SEND_IMM: gather, then one request packet, or
 * serve it in place (*now set: the entry is done).
 */
static int sn_op_data(struct sn_thread *t, struct sn_qp *qp,
                      const struct sn_wqe *w, struct sn_out *o, bool *now)
{
    bool is_write = w->opcode == MLX5_OPCODE_RDMA_WRITE ||
                    w->opcode == MLX5_OPCODE_RDMA_WRITE_IMM;
    unsigned first = is_write ? 2 : 1;
    const struct mlx5_ctrl_seg *c = (const void *)w->b;
    const uint8_t *ptr[SN_MAX_SGE];
    uint32_t len[SN_MAX_SGE];
    struct sn_wire h;
    uint64_t total;
    struct sn_pkt *p;
    int st;

    if (w->ds < first || w->ds - first > SN_MAX_SGE)
        return RNIC_WC_LOC_QP_OP_ERR;
    st = sn_gather(t, qp, w, first, ptr, len, &total);
    if (st)
        return st;
    static const uint8_t types[] = {
        [MLX5_OPCODE_RDMA_WRITE] = SN_PKT_WRITE,
        [MLX5_OPCODE_RDMA_WRITE_IMM] = SN_PKT_WRITE_IMM,
        [MLX5_OPCODE_SEND] = SN_PKT_SEND,
        [MLX5_OPCODE_SEND_IMM] = SN_PKT_SEND_IMM,
    };
    h = sn_request_wire(qp, types[w->opcode], (uint32_t)total, o);
    if (is_write) {
        const struct mlx5_raddr_seg *r = (const void *)(w->b + 16);

        h.raddr = be64_to_cpu(r->raddr);
        h.rkey = be32_to_cpu(r->rkey);
    }
    h.imm = be32_to_cpu(c->imm);
    if (w->flags & MLX5_WQE_CTRL_SOLICITED)
        h.flags |= SN_PKT_F_SOLICITED;
    o->byte_len = (uint32_t)total;
    if (sn_data_now(t, qp, &h, ptr, len, w->ds - first)) {
        *now = true;
        return 0;
    }
    p = sn_pkt_alloc(t, h.len);
    if (!p)
        return RNIC_WC_LOC_QP_OP_ERR;
    p->h = h;
    sn_gather_copy(p->data, ptr, len, w->ds - first);
    sn_send(t, qp, p, w->end);
    return 0;
}

/* The lowest free READ/atomic slot, or -1 when all SN_MAX_RD are busy. */
static int sn_rd_slot(const struct sn_qp *qp)
{
    uint32_t free = ~qp->rd_used & ((1u << SN_MAX_RD) - 1);

    return free ? __builtin_ctz(free) : -1;
}

/* Writes a READ / atomic response into the local scatter list. */
static int sn_scatter_resp(struct sn_thread *t, struct sn_qp *qp,
                           const struct sn_rd *rd, const uint8_t *data,
                           uint64_t len)
{
    const struct sn_mr *mr = NULL;
    uint64_t off = 0;

    for (uint32_t i = 0; i < rd->nsge && off < len; i++) {
        const struct sn_sge *s = &rd->sge[i];
        uint64_t n = sn_dseg_len(s->byte_count);
        uint8_t *dst;

        if (n > len - off)
            n = len - off;
        mr = sn_mr_lookup_next(t->eng, qp->dev, s->lkey, mr);
        dst = sn_mr_addr(mr, s->addr, n, RNIC_ACCESS_LOCAL_WRITE);
        if (!dst)
            return RNIC_WC_LOC_PROT_ERR;
        memcpy(dst, data + off, n);
        sn_mr_stored_mr(t, mr, s->addr, n);
        off += n;
    }
    return 0;
}

/*
 * A READ or atomic served at once, as its responder would serve it on
 * arrival, when sn_now_responder() allows and the request would succeed
 * there; returns false to send it as packets instead, which keeps the
 * responder's refusals (NAKs, its error state) on the one path that has
 * them. *st is the local scatter's status.
 */
static bool sn_rd_now(struct sn_thread *t, struct sn_qp *qp,
                      const struct sn_wqe *w, const struct sn_rd *rd,
                      uint64_t len, int *st)
{
    const struct mlx5_raddr_seg *r = (const void *)(w->b + 16);
    uint64_t raddr = be64_to_cpu(r->raddr);
    uint32_t rkey = be32_to_cpu(r->rkey);
    bool read = w->opcode == MLX5_OPCODE_RDMA_READ;
    uint8_t copy[SN_NOW_MAX];
    struct sn_qp *dst;
    uint8_t *src;

    if ((read && len > sizeof(copy)) || (!read && raddr % 8))
        return false;
    dst = sn_now_responder(t, qp);
    if (!dst)
        return false;
    src = sn_remote_xlate(t, dst, rkey, raddr, len,
                          read ? RNIC_ACCESS_REMOTE_READ
                               : RNIC_ACCESS_REMOTE_ATOMIC);
    if (!src)
        return false;
    if (read) {
        memcpy(copy, src, len); /* a scatter entry may overlap the source */
    } else {
        const struct mlx5_atomic_seg *a = (const void *)(w->b + 32);
        uint64_t old = sn_atomic_apply(
            t, (uint64_t *)src, w->opcode == MLX5_OPCODE_ATOMIC_CS,
            be64_to_cpu(a->compare), be64_to_cpu(a->swap_add), rkey, raddr);

        memcpy(copy, &old, 8);
    }
    *st = sn_scatter_resp(t, qp, rd, copy, len);
    return true;
}

/*
 * READ and the atomics: remember where the response goes, then send, or
 * serve it in place (*now set: the entry is done).
 */
static int sn_op_rd(struct sn_thread *t, struct sn_qp *qp,
                    const struct sn_wqe *w, struct sn_out *o, bool *now)
{
    const struct mlx5_raddr_seg *r = (const void *)(w->b + 16);
    bool atomic = w->opcode != MLX5_OPCODE_RDMA_READ;
    unsigned first = atomic ? 3 : 2;
    int slot = sn_rd_slot(qp);
    struct sn_rd *rd = &qp->rd[slot];
    uint64_t total;
    struct sn_pkt *p;
    int st;

    if (w->ds < first || w->ds - first > SN_MAX_SGE || (atomic && w->ds != 4))
        return RNIC_WC_LOC_QP_OP_ERR;
    st = sn_scatter_list(t, qp, w, first, rd, &total);
    if (st)
        return st;
    if (atomic && total != 8)
        return RNIC_WC_LOC_LEN_ERR;
    o->byte_len = (uint32_t)total;
    if (sn_rd_now(t, qp, w, rd, total, &st)) {
        *now = true;
        return st;
    }
    p = sn_request(t, qp,
                   w->opcode == MLX5_OPCODE_RDMA_READ   ? SN_PKT_READ
                   : w->opcode == MLX5_OPCODE_ATOMIC_CS ? SN_PKT_CAS
                                                        : SN_PKT_FADD,
                   0, o);
    if (!p)
        return RNIC_WC_LOC_QP_OP_ERR;
    p->h.raddr = be64_to_cpu(r->raddr);
    p->h.rkey = be32_to_cpu(r->rkey);
    p->h.len = (uint32_t)total;
    if (atomic) {
        const struct mlx5_atomic_seg *a = (const void *)(w->b + 32);

        p->h.swap_add = be64_to_cpu(a->swap_add);
        p->h.compare = be64_to_cpu(a->compare);
    }
    qp->rd_used |= 1u << slot;
    o->rd = (uint8_t)(slot + 1);
    sn_send(t, qp, p, w->end);
    return 0;
}

/* Raises a 16-bit-counting enable limit to idx (never lowers it). */
static void sn_raise(uint32_t *limit, uint32_t idx)
{
    uint32_t cur = load_relaxed(limit), want;

    do {
        int16_t d = (int16_t)((uint16_t)idx - (uint16_t)cur);

        if (d <= 0)
            return;
        want = cur + (uint32_t)d;
    } while (!cas_release(limit, &cur, want));
}

/*
 * SEND_EN / RECV_EN: raise the managed queue's limit and poke it. A
 * SEND_EN of the queue itself sets *self instead: the queue is running
 * and reads its new limit as soon as this WQE is done. *yield is set when
 * the queue released is one of this thread's: on a NIC it would start at
 * once, beside the queue that released it, so it runs before that queue
 * goes on (a chain's answer then leaves before its bookkeeping runs).
 */
static int sn_op_enable(struct sn_thread *t, struct sn_qp *qp,
                        const struct sn_wqe *w, bool *self, bool *yield)
{
    const struct mlx5_wait_en_seg *s = (const void *)(w->b + 16);
    struct sn_qp *q = sn_qp_lookup(t->eng, be32_to_cpu(s->obj_num));
    bool send = w->opcode == MLX5_OPCODE_SEND_EN;

    if (!(qp->flags & RNIC_QP_CROSS_CHANNEL) || w->ds < 2 || !q ||
        q->dev != qp->dev ||
        !(q->flags & (send ? RNIC_QP_MANAGED_SEND : RNIC_QP_MANAGED_RECV)) ||
        (!send && !q->rq_cnt))
        return RNIC_WC_LOC_QP_OP_ERR;
    if (qp->dev->tm.timed)
        store_relaxed(&q->en_ns, w->end);
    sn_raise(send ? &q->en_req : &q->rq_en, be32_to_cpu(s->index));
    if (q == qp && send)
        *self = true; /* the caller takes the new limit after this WQE */
    else if (q->thr == t && q != qp) {
        sn_qp_dirty(t, q); /* ours: no need to go through the mailbox */
        *yield = true;
    } else
        sn_poke(t, q);
    return 0;
}

/* WAIT: returns false when met (or failed), true after queueing the QP. */
static bool sn_op_wait(struct sn_thread *t, struct sn_qp *qp, struct sn_wqe *w,
                       int *status)
{
    const struct mlx5_wait_en_seg *s = (const void *)(w->b + 16);
    struct sn_cq *cq = sn_cq_lookup(t->eng, be32_to_cpu(s->obj_num));

    *status = 0;
    if (!(qp->flags & RNIC_QP_CROSS_CHANNEL) || w->ds < 2 || !cq ||
        cq->dev != qp->dev) {
        *status = RNIC_WC_LOC_QP_OP_ERR;
        return false;
    }
    qp->wait_cqn = cq->cqn;
    qp->wait_idx = be32_to_cpu(s->index);
    if ((int32_t)(sn_cq_count(cq) - qp->wait_idx) < 0) {
        sn_wait_register(t, qp, cq);
        /* seq_cst after the waiters bit: pairs with sn_cq_push()'s fence */
        if ((int32_t)((uint32_t)load_seq_cst(&cq->count) - qp->wait_idx) < 0) {
            qp->block = SN_BLK_WAIT;
            qp->wait_fetch_ns = qp->dev->trace ? sn_now_ns() : 0;
            qp->wait_nbb = w->nbb;
            qp->wait_sig = w->flags & MLX5_WQE_CTRL_CQ_UPDATE;
            return true;
        }
        sn_wait_unregister(t, qp);
    }
    if (qp->dev->tm.timed) { /* runs once the completion it needs exists */
        qp->next_ns = sn_max64(qp->next_ns, sn_cq_count_ns(cq, qp->wait_idx));
        w->end = qp->next_ns + qp->dev->tm.wait_ns;
    }
    return false;
}

/*
 * Fills the out entry of the WQE at ci and returns it (not yet pushed).
 * This and sn_out_end() are inline: every WQE executed takes both, and as
 * calls from sn_sq_step's cases they cost about what their bodies do.
 */
static inline struct sn_out *sn_out_begin(struct sn_qp *qp, uint8_t opcode,
                                          uint8_t flags)
{
    struct sn_out *o = &qp->out[qp->out_tail & qp->out_mask];

    memset(o, 0, sizeof(*o));
    o->psn = qp->psn;
    o->wqe_counter = (uint16_t)qp->ci;
    o->opcode = opcode;
    o->signaled = (flags & MLX5_WQE_CTRL_CQ_UPDATE) != 0;
    if (qp->dev->trace)
        o->fetch_ns = o->start_ns = sn_now_ns();
    return o;
}

/* Pushes the out entry, advances ci past nbb blocks, fails on error. */
static inline void sn_out_end(struct sn_thread *t, struct sn_qp *qp,
                              struct sn_out *o, uint32_t nbb, int status,
                              bool local, uint64_t end)
{
    if (qp->dev->tm.timed) { /* the trace shows model times */
        o->start_ns = qp->next_ns;
        o->fetch_ns = o->opcode == MLX5_OPCODE_WAIT && qp->wait_fetch_ns
                          ? o->fetch_ns
                          : o->start_ns;
        o->done_ns = end;
        qp->next_ns = end;
    }
    o->done = local || status;
    o->status = (uint8_t)status;
    qp->psn++;
    qp->out_tail++;
    qp->ci += nbb;
    sn_sq_prefetch(qp);
    if (status)
        sn_qp_fail(t, qp, o->psn + 1, true);
}

/* A blocked WAIT: completes it once its CQ count is met. */
static int sn_wait_resume(struct sn_thread *t, struct sn_qp *qp)
{
    struct sn_cq *cq = sn_cq_lookup(t->eng, qp->wait_cqn);
    struct sn_out *o;
    uint64_t end = 0;

    if (!cq || (int32_t)(sn_cq_count(cq) - qp->wait_idx) < 0)
        return SN_STEP_BLOCKED;
    sn_wait_unregister(t, qp);
    qp->block = SN_BLK_NONE;
    o = sn_out_begin(qp, MLX5_OPCODE_WAIT,
                     qp->wait_sig ? MLX5_WQE_CTRL_CQ_UPDATE : 0);
    if (qp->wait_fetch_ns)
        o->fetch_ns = qp->wait_fetch_ns;
    if (qp->dev->tm.timed) {
        qp->next_ns = sn_max64(qp->next_ns, sn_cq_count_ns(cq, qp->wait_idx));
        end = qp->next_ns + qp->dev->tm.wait_ns;
    }
    sn_out_end(t, qp, o, qp->wait_nbb, 0, true, end);
    qp->wait_fetch_ns = 0;
    return SN_STEP_DONE;
}

/* Reads the WQE at ci into w; returns 0 or a completion status. */
static int sn_fetch(struct sn_qp *qp, struct sn_wqe *w)
{
    const struct mlx5_ctrl_seg *c = (const void *)w->b;

    /* The whole first block: it holds all of most WQEs. */
    sn_sq_read(qp, qp->ci, 0, w->b, MLX5_SEND_WQE_BB);
    w->opcode = mlx5_ctrl_opcode(c);
    w->ds = mlx5_ctrl_ds(c);
    w->flags = c->fm_ce_se;
    w->nbb = (w->ds * 16u + 63) / 64;
    if (w->ds == 0 || w->nbb > qp->limit - qp->ci) {
        w->nbb = 1;
        return RNIC_WC_LOC_QP_OP_ERR;
    }
    if (w->nbb > 1 && w->opcode != MLX5_OPCODE_NOP) /* a NOP uses none */
        sn_sq_read(qp, qp->ci + 1, 0, w->b + MLX5_SEND_WQE_BB,
                   (w->ds - MLX5_SEND_WQE_BB / MLX5_SEND_WQE_DS) *
                       MLX5_SEND_WQE_DS);
    return 0;
}

static bool sn_is_rd(uint8_t opcode)
{
    return opcode == MLX5_OPCODE_RDMA_READ || opcode == MLX5_OPCODE_ATOMIC_CS ||
           opcode == MLX5_OPCODE_ATOMIC_FA;
}

/*
 * Executes one WQE; SN_STEP_BLOCKED when the QP cannot go on now. The
 * caller checked that there is one (sn_sq_idle).
 */
static int sn_sq_step(struct sn_thread *t, struct sn_qp *qp)
{
    const struct sn_timing *tm = &qp->dev->tm;
    struct sn_wqe w;
    struct sn_out *o;
    int st;

    if (qp->block == SN_BLK_WAIT)
        return sn_wait_resume(t, qp);
    if (qp->out_tail - qp->out_head > qp->out_mask) {
        qp->retire_wake = true; /* retiring kicks us */
        return SN_STEP_BLOCKED;
    }
    if (tm->timed && qp->next_ns > t->now) {
        t->now = sn_now_ns();
        if (qp->next_ns > t->now) {
            sn_timer_qp(t, qp, qp->next_ns);
            return SN_STEP_BLOCKED;
        }
    }
    if (qp->limit - qp->ci > qp->sq_cnt) { /* the ring was overrun */
        w.nbb = 1;
        w.opcode = 0;
        w.flags = 0;
        st = RNIC_WC_LOC_QP_OP_ERR;
    } else {
        st = sn_fetch(qp, &w);
    }
    if (!st && (((w.flags & MLX5_WQE_CTRL_FENCE) && qp->rd_used) ||
                (sn_is_rd(w.opcode) && sn_rd_slot(qp) < 0))) {
        qp->retire_wake = true; /* retiring the READs/atomics kicks us */
        return SN_STEP_BLOCKED;
    }
    qp->retire_wake = false;
    w.start = qp->next_ns;
    if (tm->timed && w.opcode != MLX5_OPCODE_WAIT) /* a WAIT holds no unit */
        qp->next_ns = w.start = sn_timing_claim_pool(
            qp->dev->pu_free_ns, tm->pu_n, w.start, tm->wqe_ns);
    w.end = tm->timed ? w.start + (w.opcode == MLX5_OPCODE_WAIT ? tm->wait_ns
                                                                : tm->wqe_ns)
                      : 0;
    o = sn_out_begin(qp, w.opcode, w.flags);
    if (st) {
        sn_out_end(t, qp, o, w.nbb, st, true, w.end);
        return SN_STEP_DONE;
    }
    switch (w.opcode) {
    case MLX5_OPCODE_NOP:
        sn_out_end(t, qp, o, w.nbb, 0, true, w.end);
        return SN_STEP_DONE;
    case MLX5_OPCODE_RDMA_WRITE:
    case MLX5_OPCODE_RDMA_WRITE_IMM:
    case MLX5_OPCODE_SEND:
    case MLX5_OPCODE_SEND_IMM:
    case MLX5_OPCODE_RDMA_READ:
    case MLX5_OPCODE_ATOMIC_CS:
    case MLX5_OPCODE_ATOMIC_FA: {
        bool now = false;

        st = sn_is_rd(w.opcode) ? sn_op_rd(t, qp, &w, o, &now)
                                : sn_op_data(t, qp, &w, o, &now);
        sn_out_end(t, qp, o, w.nbb, st, now, w.end);
        return SN_STEP_DONE;
    }
    case MLX5_OPCODE_SEND_EN:
    case MLX5_OPCODE_RECV_EN: {
        bool self = false, yield = false;

        st = sn_op_enable(t, qp, &w, &self, &yield);
        sn_out_end(t, qp, o, w.nbb, st, true, w.end);
        if (self && !st)
            sn_qp_update_limit(t, qp);
        return yield && !st ? SN_STEP_YIELD : SN_STEP_DONE;
    }
    case MLX5_OPCODE_WAIT:
        if (sn_op_wait(t, qp, &w, &st))
            return SN_STEP_BLOCKED;
        sn_out_end(t, qp, o, w.nbb, st, true, w.end);
        return SN_STEP_DONE;
    default:
        sn_out_end(t, qp, o, w.nbb, RNIC_WC_LOC_QP_OP_ERR, true, w.end);
        return SN_STEP_DONE;
    }
}

/*
 * Nothing posted or enabled to execute, no WAIT to resume: a run mostly
 * ends here (after retiring what a response completed), so it is checked
 * before sn_sq_step() sets up its frame for a WQE.
 */
static inline bool sn_sq_idle(const struct sn_qp *qp)
{
    return qp->block != SN_BLK_WAIT && qp->ci == qp->limit;
}

void sn_qp_run(struct sn_thread *t, struct sn_qp *qp)
{
    uint32_t st = load_acquire(&qp->state);
    int budget = SN_RUN_BUDGET;

    if (st == RNIC_QPS_RESET)
        return;
    sn_qp_retire(t, qp);
    if (st == RNIC_QPS_ERR) {
        if (qp->out_head == qp->out_tail)
            sn_sq_flush(t, qp);
        return;
    }
    while (budget > 0) {
        int step = sn_sq_idle(qp) ? SN_STEP_BLOCKED : sn_sq_step(t, qp);

        if (step == SN_STEP_BLOCKED)
            return;
        budget--;
        sn_qp_retire(t, qp);
        if (load_relaxed(&qp->state) != RNIC_QPS_RTS)
            return;
        if (step == SN_STEP_YIELD)
            break; /* behind the queue it released */
    }
    sn_kick(t, qp);
}

/* ---- pokes and responses ---------------------------------------------- */

/* Takes the doorbell record or the enable limit into account. */
static void sn_qp_update_limit(struct sn_thread *t, struct sn_qp *qp)
{
    const struct sn_timing *tm = &qp->dev->tm;
    uint64_t ready = 0;
    uint32_t nl;

    if (qp->flags & RNIC_QP_MANAGED_SEND) {
        nl = load_acquire(&qp->en_req);
        if (tm->timed)
            ready = load_relaxed(&qp->en_ns) + tm->dma_ns;
    } else {
        uint32_t db = load_acquire(&qp->sh->sq_db);

        nl = qp->limit + (uint16_t)(db - (uint16_t)qp->limit);
        if (tm->timed)
            ready = load_relaxed(&qp->sh->db_ns) + tm->db_ns + tm->dma_ns;
    }
    if ((int32_t)(nl - qp->limit) <= 0)
        return;
    if (tm->timed && qp->ci == qp->limit && qp->block == SN_BLK_NONE)
        qp->next_ns = sn_max64(qp->next_ns, ready); /* the queue was idle */
    qp->limit = nl;
    sn_sq_prefetch(qp);
}

void sn_qp_dirty(struct sn_thread *t, struct sn_qp *qp)
{
    uint32_t st;

    if (load_acquire(&qp->dying)) {
        sn_qp_detach(t, qp);
        return;
    }
    st = load_acquire(&qp->state);
    if (st == RNIC_QPS_RESET)
        return;
    sn_qp_update_limit(t, qp);
    if (st == RNIC_QPS_ERR)
        sn_rq_flush(t, qp);
    else if (qp->stall)
        sn_resp_unstall(t, qp);
    sn_kick(t, qp);
}

void sn_qp_response(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p)
{
    uint32_t oldest = sn_oldest_psn(qp);
    uint32_t i = qp->out_head + (p->h.psn - oldest);
    struct sn_out *o;
    int st = 0;

    if (i - qp->out_head >= qp->out_tail - qp->out_head)
        return; /* not outstanding (flushed meanwhile): ignore */
    o = &qp->out[i & qp->out_mask];
    if (o->done || o->psn != p->h.psn)
        return;
    switch (p->h.type) {
    case SN_PKT_READ_RESP:
    case SN_PKT_ATOMIC_RESP:
        if (o->rd)
            st = sn_scatter_resp(t, qp, &qp->rd[o->rd - 1], p->data, p->h.len);
        break;
    case SN_PKT_NAK:
        st = p->h.status;
        break;
    default:
        break;
    }
    o->done = 1;
    o->status = (uint8_t)st;
    if (qp->dev->tm.timed)
        o->done_ns = sn_max64(p->tm.at, o->done_ns);
    if (st)
        sn_qp_fail(t, qp, o->psn + 1, p->h.type != SN_PKT_NAK);
    sn_kick(t, qp);
}

void sn_qp_detach(struct sn_thread *t, struct sn_qp *qp)
{
    if (load_acquire(&qp->detached))
        return;
    if (qp->in_run) {
        sn_list_del(&qp->run);
        qp->in_run = false;
    }
    if (qp->in_dirty) {
        sn_list_del(&qp->dirty);
        qp->in_dirty = false;
    }
    sn_wait_unregister(t, qp);
    sn_timer_cancel(t, &qp->tm);
    sn_rc_reset(t, qp);
    while (qp->stall) {
        struct sn_pkt *p = qp->stall;

        qp->stall = p->next;
        sn_pkt_free(t, p);
    }
    if (load_acquire(&qp->state) == RNIC_QPS_RTS && qp->peer_qpn != qp->qpn) {
        struct sn_pkt *p = sn_pkt_alloc(t, 0);

        if (p) {
            p->h.type = SN_PKT_ERR;
            p->h.dst_qpn = qp->peer_qpn;
            p->h.src_qpn = qp->qpn;
            sn_send(t, qp, p, sn_now_ns());
        }
    }
    store_release(&qp->detached, 1);
}

void sn_qp_peer_failed(struct sn_thread *t, struct sn_qp *qp)
{
    sn_qp_fail(t, qp, sn_oldest_psn(qp), false);
}
