/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/fabric.c - packets between NICs of one engine: pooled
 * buffers, the wire's timing (serialization on the sender's port, one-way
 * latency) and delivery to the thread that owns the destination QP.
 *
 * Packet buffers come from the allocating thread's pool and return to the
 * freeing thread's pool; requests and responses flow both ways, so pools
 * stay balanced and steady traffic does not call malloc.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proto/barrier.h"
#include "rdn/softnic/engine_int.h"
#include "rdn/softnic/roce_int.h"

static const uint32_t sn_pool_cap[SN_POOL_CLASSES] = {SN_POOL_SMALL, 4096,
                                                      65536};
#define SN_POOL_KEEP 1024

struct sn_pkt *sn_pkt_alloc_any(struct sn_thread *t, uint32_t payload)
{
    struct sn_pkt *p;
    uint8_t c;

    for (c = 0; c < SN_POOL_CLASSES && payload > sn_pool_cap[c]; c++)
        ;
    if (c < SN_POOL_CLASSES && t->pools[c].free) {
        p = t->pools[c].free;
        t->pools[c].free = p->next;
        t->pools[c].count--;
    } else {
        uint32_t cap = c < SN_POOL_CLASSES ? sn_pool_cap[c] : payload;

        p = malloc(sizeof(*p) + cap);
        if (!p)
            return NULL;
        p->cap = cap;
        p->cls = c < SN_POOL_CLASSES ? c : SN_POOL_NONE;
    }
    return sn_pkt_init(p);
}

void sn_pkt_free(struct sn_thread *t, struct sn_pkt *p)
{
    struct sn_pool *pool;

    if (p->cls == SN_POOL_NONE || t->pools[p->cls].count >= SN_POOL_KEEP) {
        free(p);
        return;
    }
    pool = &t->pools[p->cls];
    p->next = pool->free;
    pool->free = p;
    pool->count++;
}

void sn_pool_drain(struct sn_thread *t)
{
    for (int c = 0; c < SN_POOL_CLASSES; c++) {
        while (t->pools[c].free) {
            struct sn_pkt *p = t->pools[c].free;

            t->pools[c].free = p->next;
            free(p);
        }
        t->pools[c].count = 0;
    }
}

static bool sn_pkt_is_request(const struct sn_pkt *p)
{
    return p->h.type < SN_PKT_ACK;
}

/* Bytes of payload the packet carries on the wire. */
static uint32_t sn_pkt_payload(const struct sn_pkt *p)
{
    switch (p->h.type) {
    case SN_PKT_WRITE:
    case SN_PKT_WRITE_IMM:
    case SN_PKT_SEND:
    case SN_PKT_SEND_IMM:
    case SN_PKT_READ_RESP:
        return p->h.len;
    case SN_PKT_ATOMIC_RESP:
        return 8;
    default:
        return 0;
    }
}

/* Port time of a message that starts a request (its rate), else 0. */
static uint32_t sn_pkt_msg_ns(const struct sn_timing *tm,
                              const struct sn_pkt *p)
{
    switch (p->h.type) {
    case SN_PKT_READ:
        return tm->rd_msg_ns;
    case SN_PKT_WRITE:
    case SN_PKT_WRITE_IMM:
    case SN_PKT_SEND:
    case SN_PKT_SEND_IMM:
        return tm->wr_msg_ns;
    default:
        return 0;
    }
}

/*
 * Arrival time at dst of a packet leaving dev's port at depart (timed
 * devices): it holds the port for its serialization or its message time,
 * whichever is longer, then crosses the wire, and the network beyond the
 * NIC unless it loops back into the same NIC. A connection delivers in
 * order: never before the packet sent to dst before it in the same
 * direction (requests, responses), whatever order the port was claimed in.
 */
static uint64_t sn_wire_arrival(struct sn_dev *dev, struct sn_qp *dst,
                                const struct sn_pkt *p, uint64_t depart)
{
    const struct sn_timing *tm = &dev->tm;
    uint64_t ser = sn_timing_ser_ns(tm, sn_pkt_payload(p));
    uint64_t busy = ser > sn_pkt_msg_ns(tm, p) ? ser : sn_pkt_msg_ns(tm, p);
    uint64_t start = sn_timing_claim(&dev->tx, depart, busy);
    uint64_t at =
        start + ser + tm->wire_ns + (dst->dev != dev ? tm->net_ns : 0);
    uint64_t *last = p->h.type >= SN_PKT_ACK && p->h.type <= SN_PKT_NAK
                         ? &dst->rx_resp_ns
                         : &dst->rx_req_ns;

    if (at < load_relaxed(last))
        at = load_relaxed(last);
    store_relaxed(last, at);
    return at;
}

void sn_thread_push(struct sn_thread *dt, struct sn_pkt *p)
{
    p->next = load_relaxed(&dt->inbox);
    while (!cas_seq_cst(&dt->inbox, &p->next, p))
        ;
    sn_wake(dt->sh);
}

/* Turns request p into a NAK back to its sender (the target is gone). */
static void sn_bounce(struct sn_thread *t, struct sn_pkt *p, uint8_t status)
{
    struct sn_qp *src = sn_qp_lookup(t->eng, p->h.src_qpn);
    uint32_t dst = p->h.dst_qpn;

    if (!src || !sn_pkt_is_request(p)) {
        sn_pkt_free(t, p);
        return;
    }
    p->h.type = SN_PKT_NAK;
    p->h.status = status;
    p->h.dst_qpn = p->h.src_qpn;
    p->h.src_qpn = dst;
    p->h.len = 0;
    p->tm.at = src->dev->tm.timed ? sn_now_ns() : 0;
    sn_route(t, src, p);
}

void sn_send_any(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p,
                 uint64_t depart)
{
    struct sn_dev *dev = qp->dev;
    struct sn_qp *dst;

    if (qp->rc) {
        sn_rc_output(t, qp, p);
        return;
    }
    dst = sn_qp_lookup(t->eng, p->h.dst_qpn);
    if (!dst) {
        sn_bounce(t, p, RNIC_WC_RETRY_EXC_ERR);
        return;
    }
    p->tm.at = dev->tm.timed ? sn_wire_arrival(dev, dst, p, depart) : 0;
    sn_route(t, dst, p);
}

/*
 * Delivers p to qp, the QP its number names now (NULL: none, or dying).
 * Inline in sn_deliver and sn_run_local: every packet passes here.
 */
static inline void sn_deliver_to(struct sn_thread *t, struct sn_qp *qp,
                                 struct sn_pkt *p)
{
    if (!qp || qp->thr != t) {
        sn_bounce(t, p, RNIC_WC_RETRY_EXC_ERR);
        return;
    }
    if (p->h.type >= SN_PKT_ACK && p->h.type <= SN_PKT_NAK) {
        sn_qp_response(t, qp, p);
        sn_pkt_free(t, p);
        return;
    }
    if (qp->stall && p->h.type != SN_PKT_ERR) {
        /* Keep the connection's order behind a message waiting (RNR). */
        qp->stall_tail->next = p;
        qp->stall_tail = p;
        return;
    }
    if (sn_resp_request(t, qp, p)) {
        sn_pkt_free(t, p);
        return;
    }
    qp->stall = qp->stall_tail = p;
}

void sn_deliver(struct sn_thread *t, struct sn_pkt *p)
{
    struct sn_qp *qp = sn_qp_lookup(t->eng, p->h.dst_qpn);

    if (p->h.type == SN_PKT_WIRE) {
        if (!qp || !load_acquire(&qp->rc))
            sn_rc_drop(t, p, SN_RC_DROP_NOQP);
        else if (qp->thr != t)
            sn_thread_push(qp->thr, p); /* the port delivers to thread 0 */
        else
            sn_rc_input(t, qp, p);
        return;
    }
    sn_deliver_to(t, qp, p);
}

/*
 * p->to is what a lookup of p's destination finds, unless the QP began
 * dying since: the table entry is cleared only after that, and a QP's
 * number, thread and memory do not change before the table lets go of it
 * and every thread passed a quiescent point.
 */
int sn_run_local(struct sn_thread *t)
{
    int n = 0;

    while (t->local) {
        struct sn_pkt *p = sn_pkt_pop(&t->local, &t->local_tail);

        sn_deliver_to(t, load_relaxed(&p->to->dying) ? NULL : p->to, p);
        n++;
    }
    return n;
}
