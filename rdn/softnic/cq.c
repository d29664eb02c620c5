/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/cq.c - producing completions.
 *
 * Any engine thread may complete into any CQ, so the producer side takes
 * the CQ's spinlock when the engine has more than one thread. The absolute
 * count (cq->count) is what WAIT compares against; the host sees prod in
 * shared memory, and each entry carries seq (its index) so a poller of an
 * IGNORE_OVERRUN CQ can tell an entry that was overwritten under it.
 */
#include "config.h"

#include <limits.h>

#include "proto/barrier.h"
#include "rdn/softnic/engine_int.h"

static void sn_cq_lock(uint32_t *l)
{
    while (exchange_acquire(l, 1))
        while (load_relaxed(l))
            cpu_relax();
}

static void sn_cq_unlock(uint32_t *l)
{
    store_release(l, 0);
}

/* Tells every engine thread that has a WAIT on cq that it advanced. */
static void sn_cq_notify(struct sn_thread *t, struct sn_cq *cq)
{
    uint64_t waiters = load_seq_cst(&cq->waiters);

    while (waiters) {
        unsigned i = (unsigned)__builtin_ctzll(waiters);
        struct sn_thread *u = t->eng->thr[i];
        uint32_t w = cq->idx / 64;

        waiters &= waiters - 1;
        if (u == t) { /* our own WAITs: kick them now */
            sn_cq_event(t, cq->idx);
            continue;
        }
        fetch_or_seq_cst(&u->cq_ev.bits[w], 1ull << (cq->idx % 64));
        fetch_or_seq_cst(&u->cq_ev.summary[w / 64], 1ull << (w % 64));
        sn_wake(u->sh);
    }
    if (load_seq_cst(&cq->sh->armed) && exchange_seq_cst(&cq->sh->armed, 0)) {
        fetch_add_seq_cst(&cq->sh->evseq, 1);
        sn_futex_wake(&cq->sh->evseq, INT_MAX);
    }
}

void sn_cq_push(struct sn_thread *t, struct sn_cq *cq, struct sn_cqe *cqe)
{
    bool lock = t->eng->nthreads > 1;
    struct sn_cqe *slot;
    uint64_t idx;

    if (lock)
        sn_cq_lock(&cq->lock);
    idx = cq->count;
    if (cq->overflowed || (!(cq->flags & RNIC_CQ_IGNORE_OVERRUN) &&
                           idx - load_acquire(&cq->sh->cons) >= cq->depth)) {
        cq->overflowed = true;
        store_seq_cst(&cq->sh->overflow, 1); /* before armed: see prod */
        if (lock)
            sn_cq_unlock(&cq->lock);
        sn_cq_notify(t, cq);
        return;
    }
    slot = &cq->ring[idx & cq->mask];
    store_relaxed(&slot->seq, (uint32_t)idx - 1);
    fence_release();
    slot->wr_id = cqe->wr_id;
    slot->qpn = cqe->qpn;
    slot->byte_len = cqe->byte_len;
    slot->imm = cqe->imm;
    slot->wqe_counter = cqe->wqe_counter;
    slot->opcode = cqe->opcode;
    slot->status = cqe->status;
    slot->flags = cqe->flags;
    slot->ready_ns = cqe->ready_ns;
    slot->nic_ns = cqe->nic_ns;
    if (cqe->nic_ns > cq->last_ns)
        store_relaxed(&cq->last_ns, cqe->nic_ns);
    slot->upto_ns = cq->last_ns;
    store_release(&slot->seq, (uint32_t)idx);
    store_release(&cq->count, idx + 1);
    store_release(&cq->sh->prod, idx + 1);
    /* One full fence for both stores: a waiter stores armed (the host's
     * rnic_cq_wait) or its waiters bit (an engine thread's WAIT), then
     * loads prod or count, and sn_cq_notify() wakes it only if it loads
     * that flag set. Without the fence the stores above could pass
     * notify's later loads (x86 reorders a store with a later load); then
     * each side misses the other's store and the waiter sleeps out its
     * timeout, or a WAIT is never kicked. */
    fence_seq_cst();
    if (lock)
        sn_cq_unlock(&cq->lock);
    sn_cq_notify(t, cq);
}
