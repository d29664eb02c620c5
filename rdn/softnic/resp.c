/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/resp.c - the responder: executes incoming requests against
 * local memory (through the MR table, with remote access checks), consumes
 * receive WQEs for SEND and WRITE_IMM, and answers every request once.
 *
 * Inbound WRITE, READ and atomics need the QP's responder access (verbs'
 * qp_access_flags) and then the rkey's MR access, bounds and device.
 *
 * A receive WQE is read from the receive ring when a message needs it, so
 * a scatter list rewritten by an earlier operation is used as rewritten.
 * A message that finds no enabled receive waits (RNR, infinite retry) and
 * blocks the connection behind it until rnic_post_recv() or RECV_EN pokes.
 */
#include "config.h"

#include <string.h>

#include "proto/barrier.h"
#include "proto/byteorder.h"
#include "rdn/softnic/engine_int.h"

void sn_respond(struct sn_thread *t, struct sn_qp *qp, const struct sn_pkt *req,
                uint8_t type, uint8_t status, const void *data, uint32_t len,
                uint64_t depart)
{
    struct sn_pkt *p = sn_pkt_alloc(t, len);

    if (!p)
        return; /* the requester's WQE then never completes */
    p->h.type = type;
    p->h.status = status;
    p->h.dst_qpn = req->h.src_qpn;
    p->h.src_qpn = qp->qpn;
    p->h.psn = req->h.psn;
    p->h.len = len;
    if (len)
        memcpy(p->data, data, len);
    sn_send(t, qp, p, depart);
}

/* Now, for a timed device: when the request arrived (its ready time). */
static uint64_t sn_arrival(struct sn_thread *t, const struct sn_pkt *p)
{
    return p->tm.at ? p->tm.at : t->now;
}

/*
 * Moves the responder to the error state, then answers req with a NAK
 * (which tells the peer). In that order, so that whoever sees the NAK's
 * error completion also sees the responder in ERR, with its failed receive
 * (if any) already in its CQ.
 *
 * A QP connected to itself is its own requester: the request that failed
 * and the ones before it are answered in order (their responses are on
 * the way), so only the WQEs after it are flushed here, and the failed one
 * completes with the NAK's status, exactly as with two QPs.
 */
static void sn_nak(struct sn_thread *t, struct sn_qp *qp,
                   const struct sn_pkt *req, uint8_t status)
{
    if (qp->peer_qpn == qp->qpn)
        sn_qp_fail(t, qp, req->h.psn + 1, false);
    else
        sn_qp_peer_failed(t, qp);
    sn_respond(t, qp, req, SN_PKT_NAK, status, NULL, 0, sn_arrival(t, req));
}

/*
 * Receive WQEs posted, not yet consumed: the doorbell record's count
 * (big-endian, low 16 bits, as mlx5) ahead of rq_ci. Capped at the ring,
 * since the application, or RDMA, may have stored nonsense there.
 */
static uint32_t sn_rq_posted(const struct sn_qp *qp)
{
    uint32_t pi = be32_to_cpu(load_acquire_be32(&qp->sh->rq_db));
    uint32_t n = (uint16_t)(pi - qp->rq_ci);

    return n > qp->rq_cnt ? qp->rq_cnt : n;
}

uint32_t sn_rq_avail(struct sn_qp *qp)
{
    uint32_t n = sn_rq_posted(qp);

    if (qp->flags & RNIC_QP_MANAGED_RECV) {
        int32_t en = (int32_t)(load_acquire(&qp->rq_en) - qp->rq_ci);

        if (en < (int32_t)n)
            n = en > 0 ? (uint32_t)en : 0;
    }
    return n;
}

bool sn_rq_head_room(const struct sn_qp *qp, uint64_t *room)
{
    const struct mlx5_data_seg *seg;
    uint64_t n = 0;

    *room = 0;
    if (!qp->rq_cnt)
        return true;
    if (!sn_rq_posted(qp))
        return false;
    seg = (const void *)(qp->rq + (size_t)(qp->rq_ci & (qp->rq_cnt - 1)) *
                                      qp->rq_stride);
    for (uint32_t i = 0; i < qp->rq_sge && n < SN_MAX_MSG; i++) {
        uint32_t bc = be32_to_cpu(seg[i].byte_count);

        if (be32_to_cpu(seg[i].lkey) == MLX5_INVALID_LKEY)
            break;
        n += bc ? bc : SN_MAX_MSG;
    }
    *room = n < SN_MAX_MSG ? n : SN_MAX_MSG;
    return true;
}

/* Is a receive available? Arms rnr_wait first when there is none. */
static bool sn_rq_ready(struct sn_qp *qp)
{
    if (sn_rq_avail(qp))
        return true;
    store_seq_cst(&qp->sh->rnr_wait, 1);
    return sn_rq_avail(qp) != 0;
}

/*
 * Completes the receive at rq_ci for the message h, which came at
 * arrival (timed devices only).
 */
static void sn_recv_complete(struct sn_thread *t, struct sn_qp *qp,
                             const struct sn_wire *h, uint64_t arrival,
                             uint8_t opcode, uint8_t status, uint32_t len)
{
    uint32_t slot = qp->rq_ci & (qp->rq_cnt - 1);
    struct sn_cqe c = {
        .wr_id = qp->wrid[slot],
        .qpn = qp->qpn,
        .byte_len = len,
        .wqe_counter = (uint16_t)qp->rq_ci,
        .opcode = opcode,
        .status = status,
    };

    if (h->type == SN_PKT_WRITE_IMM || h->type == SN_PKT_SEND_IMM) {
        c.imm = h->imm;
        c.flags = RNIC_WC_WITH_IMM;
    }
    if (qp->dev->tm.timed) {
        c.nic_ns = arrival;
        c.ready_ns = c.nic_ns + qp->dev->tm.cqe_ns;
    }
    qp->rq_ci++;
    store_release(&qp->sh->rq_ci, qp->rq_ci);
    sn_cq_push(t, qp->rcq, &c);
}

/* Where one entry of a receive's scatter list puts its part of a SEND. */
struct sn_recv_span {
    const struct sn_mr *mr;
    uint64_t addr;
    uint8_t *dst;
    uint64_t len;
};

/*
 * Resolves the next receive's scatter list for len bytes into span[] (*n
 * entries). Returns 0, or the receive's error status (LOC_LEN: too short;
 * LOC_PROT: entry *n is bad, the ones before it good). The list is read
 * once, before anything lands: the payload may overwrite it.
 */
static int sn_recv_spans(struct sn_thread *t, struct sn_qp *qp, uint64_t len,
                         struct sn_recv_span *span, uint32_t *n)
{
    uint32_t slot = qp->rq_ci & (qp->rq_cnt - 1);
    const struct mlx5_data_seg *seg =
        (const void *)(qp->rq + (size_t)slot * qp->rq_stride);
    const struct sn_mr *mr = NULL;
    uint64_t off = 0;
    uint32_t i;
    int st = 0;

    for (i = 0; i < qp->rq_sge && off < len; i++) {
        uint32_t lkey = be32_to_cpu(seg[i].lkey);
        uint32_t bc = be32_to_cpu(seg[i].byte_count);
        uint64_t room = bc ? bc : SN_MAX_MSG;
        struct sn_recv_span *sp = &span[i];

        if (lkey == MLX5_INVALID_LKEY)
            break;
        sp->len = room < len - off ? room : len - off;
        sp->addr = be64_to_cpu(seg[i].addr);
        sp->mr = mr = sn_mr_lookup_next(t->eng, qp->dev, lkey, mr);
        sp->dst = sn_mr_addr(mr, sp->addr, sp->len, RNIC_ACCESS_LOCAL_WRITE);
        if (!sp->dst) {
            st = RNIC_WC_LOC_PROT_ERR;
            break;
        }
        off += sp->len;
    }
    *n = i;
    if (!st && off < len)
        st = RNIC_WC_LOC_LEN_ERR;
    return st;
}

/* Stores data into the n spans sn_recv_spans() resolved. */
static void sn_recv_store(struct sn_thread *t, const struct sn_recv_span *span,
                          uint32_t n, const uint8_t *data)
{
    for (uint32_t i = 0; i < n; i++) {
        memcpy(span[i].dst, data, span[i].len);
        sn_mr_stored_mr(t, span[i].mr, span[i].addr, span[i].len);
        data += span[i].len;
    }
}

/* SEND, SEND_IMM: consumes a receive. Returns false to wait (RNR). */
static bool sn_resp_send(struct sn_thread *t, struct sn_qp *qp,
                         struct sn_pkt *p)
{
    struct sn_recv_span span[MLX5_RECV_MAX_SGE];
    uint32_t n;
    int st;

    if (!qp->rq_cnt) {
        sn_nak(t, qp, p, RNIC_WC_REM_INV_REQ_ERR);
        return true;
    }
    if (!sn_rq_ready(qp))
        return false;
    st = sn_recv_spans(t, qp, p->h.len, span, &n);
    sn_recv_store(t, span, n, p->data); /* as far as the list is good */
    sn_recv_complete(t, qp, &p->h, sn_arrival(t, p), RNIC_WC_RECV, (uint8_t)st,
                     p->h.len);
    if (st) {
        sn_nak(t, qp, p,
               st == RNIC_WC_LOC_LEN_ERR ? RNIC_WC_REM_INV_REQ_ERR
                                         : RNIC_WC_REM_OP_ERR);
        return true;
    }
    sn_respond(t, qp, p, SN_PKT_ACK, 0, NULL, 0, sn_arrival(t, p));
    return true;
}

/*
 * Stores a WRITE's payload and completes a WRITE_IMM's receive (which the
 * caller checked is there); false, having done nothing, if the rkey or
 * the QP's access refuses the range.
 */
static bool sn_write_apply(struct sn_thread *t, struct sn_qp *qp,
                           const struct sn_wire *h, const uint8_t *data,
                           uint64_t arrival)
{
    uint8_t *dst = sn_remote_xlate(t, qp, h->rkey, h->raddr, h->len,
                                   RNIC_ACCESS_REMOTE_WRITE);

    if (!dst)
        return false;
    memcpy(dst, data, h->len);
    sn_mr_stored(t, h->rkey, h->raddr, h->len);
    if (h->type == SN_PKT_WRITE_IMM)
        sn_recv_complete(t, qp, h, arrival, RNIC_WC_RECV_RDMA_IMM, 0, h->len);
    return true;
}

/* WRITE, WRITE_IMM. Returns false to wait for a receive (WRITE_IMM). */
static bool sn_resp_write(struct sn_thread *t, struct sn_qp *qp,
                          struct sn_pkt *p)
{
    bool imm = p->h.type == SN_PKT_WRITE_IMM;

    if (imm && !qp->rq_cnt) {
        sn_nak(t, qp, p, RNIC_WC_REM_INV_REQ_ERR);
        return true;
    }
    if (imm && !sn_rq_ready(qp))
        return false;
    if (!sn_write_apply(t, qp, &p->h, p->data, sn_arrival(t, p))) {
        sn_nak(t, qp, p, RNIC_WC_REM_ACCESS_ERR);
        return true;
    }
    sn_respond(t, qp, p, SN_PKT_ACK, 0, NULL, 0, sn_arrival(t, p));
    return true;
}

bool sn_resp_now(struct sn_thread *t, struct sn_qp *qp, const struct sn_wire *h,
                 const uint8_t *data)
{
    struct sn_recv_span span[MLX5_RECV_MAX_SGE];
    uint32_t n;

    switch (h->type) {
    case SN_PKT_WRITE:
        return sn_write_apply(t, qp, h, data, 0);
    case SN_PKT_WRITE_IMM:
        return sn_rq_avail(qp) && sn_write_apply(t, qp, h, data, 0);
    case SN_PKT_SEND:
    case SN_PKT_SEND_IMM:
        if (!sn_rq_avail(qp) || sn_recv_spans(t, qp, h->len, span, &n))
            return false;
        sn_recv_store(t, span, n, data);
        sn_recv_complete(t, qp, h, 0, RNIC_WC_RECV, 0, h->len);
        return true;
    default:
        return false;
    }
}

static void sn_resp_read(struct sn_thread *t, struct sn_qp *qp,
                         struct sn_pkt *p)
{
    const uint8_t *src = sn_remote_xlate(t, qp, p->h.rkey, p->h.raddr, p->h.len,
                                         RNIC_ACCESS_REMOTE_READ);

    if (!src) {
        sn_nak(t, qp, p, RNIC_WC_REM_ACCESS_ERR);
        return;
    }
    sn_respond(t, qp, p, SN_PKT_READ_RESP, 0, src, p->h.len,
               sn_arrival(t, p) + qp->dev->tm.dma_ns * qp->dev->tm.timed);
}

/* When the atomic unit has served p (timed devices): it takes one request
 * at a time, then the target's DMA read follows. */
static uint64_t sn_atomic_done(struct sn_thread *t, struct sn_qp *qp,
                               const struct sn_pkt *p)
{
    const struct sn_timing *tm = &qp->dev->tm;
    uint64_t at = sn_arrival(t, p);

    if (!tm->timed)
        return 0;
    if (tm->atomic_ns)
        at = sn_timing_claim(&qp->dev->atomic, at, tm->atomic_ns);
    return at + tm->dma_ns;
}

/* CAS and FADD on 8 host-endian bytes; answers with the old 8 bytes. */
static void sn_resp_atomic(struct sn_thread *t, struct sn_qp *qp,
                           struct sn_pkt *p)
{
    uint64_t *target, old;

    if (p->h.raddr % 8 || p->h.len != 8) {
        sn_nak(t, qp, p, RNIC_WC_REM_INV_REQ_ERR);
        return;
    }
    target = (uint64_t *)sn_remote_xlate(t, qp, p->h.rkey, p->h.raddr, 8,
                                         RNIC_ACCESS_REMOTE_ATOMIC);
    if (!target) {
        sn_nak(t, qp, p, RNIC_WC_REM_ACCESS_ERR);
        return;
    }
    old = sn_atomic_apply(t, target, p->h.type == SN_PKT_CAS, p->h.compare,
                          p->h.swap_add, p->h.rkey, p->h.raddr);
    sn_respond(t, qp, p, SN_PKT_ATOMIC_RESP, 0, &old, 8,
               sn_atomic_done(t, qp, p));
}

bool sn_resp_request(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p)
{
    uint32_t st = load_acquire(&qp->state);

    if (p->h.type == SN_PKT_ERR) {
        if (st == RNIC_QPS_RTS && p->h.src_qpn == qp->peer_qpn)
            sn_qp_peer_failed(t, qp);
        return true;
    }
    if (st != RNIC_QPS_RTS || p->h.src_qpn != qp->peer_qpn) {
        sn_respond(t, qp, p, SN_PKT_NAK, RNIC_WC_RETRY_EXC_ERR, NULL, 0,
                   sn_arrival(t, p));
        return true;
    }
    switch (p->h.type) {
    case SN_PKT_WRITE:
    case SN_PKT_WRITE_IMM:
        return sn_resp_write(t, qp, p);
    case SN_PKT_SEND:
    case SN_PKT_SEND_IMM:
        return sn_resp_send(t, qp, p);
    case SN_PKT_READ:
        sn_resp_read(t, qp, p);
        return true;
    case SN_PKT_CAS:
    case SN_PKT_FADD:
        sn_resp_atomic(t, qp, p);
        return true;
    default:
        sn_nak(t, qp, p, RNIC_WC_REM_INV_REQ_ERR);
        return true;
    }
}

void sn_resp_unstall(struct sn_thread *t, struct sn_qp *qp)
{
    store_seq_cst(&qp->sh->rnr_wait, 0);
    while (qp->stall) {
        struct sn_pkt *p = sn_pkt_pop(&qp->stall, &qp->stall_tail);

        if (!sn_resp_request(t, qp, p)) {
            p->next = qp->stall;
            qp->stall = p;
            if (!qp->stall_tail)
                qp->stall_tail = p;
            return;
        }
        sn_pkt_free(t, p);
    }
}

void sn_rq_flush(struct sn_thread *t, struct sn_qp *qp)
{
    uint32_t n;

    if (!qp->rq_cnt)
        return;
    n = sn_rq_posted(qp);
    while (n--) {
        uint32_t slot = qp->rq_ci & (qp->rq_cnt - 1);
        struct sn_cqe c = {
            .wr_id = qp->wrid[slot],
            .qpn = qp->qpn,
            .wqe_counter = (uint16_t)qp->rq_ci,
            .opcode = RNIC_WC_RECV,
            .status = RNIC_WC_WR_FLUSH_ERR,
            .ready_ns = t->now,
        };

        qp->rq_ci++;
        sn_cq_push(t, qp->rcq, &c);
    }
    store_release(&qp->sh->rq_ci, qp->rq_ci);
}
