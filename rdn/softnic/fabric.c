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

static const uint32_t sn_pool_cap[SN_POOL_CLASSES] = {256, 4096, 65536};
#define SN_POOL_KEEP 1024

struct sn_pkt *sn_pkt_alloc(struct sn_thread *t, uint32_t payload)
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
    p->next = NULL;
    p->tm.at = 0;
    p->tm.pos = SN_TIMER_IDLE;
    memset(&p->h, 0, sizeof(p->h));
    return p;
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

/* Arrival time of a packet leaving dev's port at depart (timed devices). */
static uint64_t sn_wire_arrival(struct sn_dev *dev, const struct sn_pkt *p,
                                uint64_t depart)
{
    uint64_t ser = sn_timing_ser_ns(&dev->tm, sn_pkt_payload(p));
    uint64_t free_at = load_relaxed(&dev->tx_free_ns), start;

    do {
        start = depart > free_at ? depart : free_at;
    } while (!cas_relaxed(&dev->tx_free_ns, &free_at, start + ser));
    return start + ser + dev->tm.wire_ns;
}

/* Hands p to the thread of QP dst (ready at p->tm.at, 0 = now). */
static void sn_route(struct sn_thread *t, struct sn_qp *dst, struct sn_pkt *p)
{
    struct sn_thread *dt = dst->thr;

    if (dt == t) {
        if (p->tm.at) {
            sn_timer_pkt(t, p);
        } else if (t->local_tail) {
            t->local_tail->next = p;
            t->local_tail = p;
        } else {
            t->local = t->local_tail = p;
        }
        return;
    }
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

void sn_send(struct sn_thread *t, struct sn_dev *dev, struct sn_pkt *p,
             uint64_t depart)
{
    struct sn_qp *dst = sn_qp_lookup(t->eng, p->h.dst_qpn);

    if (!dst) {
        sn_bounce(t, p, RNIC_WC_RETRY_EXC_ERR);
        return;
    }
    p->tm.at = dev->tm.timed ? sn_wire_arrival(dev, p, depart) : 0;
    sn_route(t, dst, p);
}

void sn_deliver(struct sn_thread *t, struct sn_pkt *p)
{
    struct sn_qp *qp = sn_qp_lookup(t->eng, p->h.dst_qpn);

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
