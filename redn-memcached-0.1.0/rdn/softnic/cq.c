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

#include "rdn/softnic/engine_int.h"

static void sn_cq_lock(uint32_t *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#else
            ;
#endif
}

static void sn_cq_unlock(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* Tells every engine thread that has a WAIT on cq that it advanced. */
static void sn_cq_notify(struct sn_thread *t, struct sn_cq *cq)
{
    uint64_t waiters = __atomic_load_n(&cq->waiters, __ATOMIC_SEQ_CST);

    while (waiters) {
        unsigned i = (unsigned)__builtin_ctzll(waiters);
        struct sn_thread *u = t->eng->thr[i];
        uint32_t w = cq->idx / 64;

        waiters &= waiters - 1;
        if (u == t) { /* our own WAITs: kick them now */
            sn_cq_event(t, cq->idx);
            continue;
        }
        __atomic_fetch_or(&u->cq_ev.bits[w], 1ull << (cq->idx % 64),
                          __ATOMIC_SEQ_CST);
        __atomic_fetch_or(&u->cq_ev.summary[w / 64], 1ull << (w % 64),
                          __ATOMIC_SEQ_CST);
        sn_wake(u->sh);
    }
    if (__atomic_load_n(&cq->sh->armed, __ATOMIC_SEQ_CST) &&
        __atomic_exchange_n(&cq->sh->armed, 0, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&cq->sh->evseq, 1, __ATOMIC_SEQ_CST);
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
    if (cq->overflowed ||
        (!(cq->flags & RNIC_CQ_IGNORE_OVERRUN) &&
         idx - __atomic_load_n(&cq->sh->cons, __ATOMIC_ACQUIRE) >= cq->depth)) {
        cq->overflowed = true;
        __atomic_store_n(&cq->sh->overflow, 1, __ATOMIC_RELEASE);
        if (lock)
            sn_cq_unlock(&cq->lock);
        sn_cq_notify(t, cq);
        return;
    }
    slot = &cq->ring[idx & cq->mask];
    __atomic_store_n(&slot->seq, (uint32_t)idx - 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
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
        __atomic_store_n(&cq->last_ns, cqe->nic_ns, __ATOMIC_RELAXED);
    slot->upto_ns = cq->last_ns;
    __atomic_store_n(&slot->seq, (uint32_t)idx, __ATOMIC_RELEASE);
    __atomic_store_n(&cq->count, idx + 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&cq->sh->prod, idx + 1, __ATOMIC_RELEASE);
    if (lock)
        sn_cq_unlock(&cq->lock);
    sn_cq_notify(t, cq);
}
