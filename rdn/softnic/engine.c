/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/engine.c - engine threads: the loop that serves doorbells,
 * packets, CQ events and timers, the sleep/wake protocol, and the
 * quiescent-state bookkeeping that lets the control plane free objects
 * while the data path reads tables without locks.
 *
 * Sleep/wake: a thread with nothing to do spins for spin_ns, then sets
 * sh->sleeping and re-checks its mailboxes before it sleeps on the futex
 * sh->wake; a poker publishes its work with an atomic RMW first and then
 * reads sh->sleeping (both sequentially consistent), so one of the two
 * always sees the other and no wake-up is lost.
 *
 * Spinning politely: engine threads may share a CPU with each other (a
 * 2-core machine running an application that polls, or threads pinned
 * together). A thread that has just handed a packet to another thread and
 * spins would then keep the receiver off that CPU until its spin ends, so
 * every hand-off would cost a whole spin. An idle thread therefore yields
 * its CPU while another engine thread has mail that it leaves untouched
 * (its loop counter does not move), and only pauses otherwise; yielding
 * when nobody else wants the CPU costs one system call.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "proto/barrier.h"
#include "rdn/softnic/engine_int.h"
#include "rdn/softnic/roce_int.h"

#define SN_SLEEP_SLACK_NS 100000u /* timers nearer than this: spin */
#define SN_PEER_CHECK     2       /* spin steps between looks at peers */
#define SN_CLOCK_POLLS    8       /* idle polls between looks at the clock */

void sn_wake(struct sn_shm_thread *sh)
{
    if (load_seq_cst(&sh->sleeping)) {
        fetch_add_seq_cst(&sh->wake, 1);
        sn_futex_wake(&sh->wake, 1);
    }
}

static void sn_bit_set(uint64_t *summary, uint64_t *bits, uint32_t idx)
{
    uint32_t w = idx / 64;

    fetch_or_seq_cst(&bits[w], 1ull << (idx % 64));
    fetch_or_seq_cst(&summary[w / 64], 1ull << (w % 64));
}

void sn_poke_qp(struct sn_shm_ctl *ctl, unsigned thr, uint32_t idx)
{
    struct sn_shm_thread *sh = &ctl->thr[thr % SN_MAX_THREADS];

    sn_bit_set(sh->summary, sh->dirty, idx % SN_MAX_OBJS);
    sn_wake(sh);
}

/*
 * Calls fn for every index whose bit is set, clearing the bits first.
 * Returns how many were found.
 */
static int sn_bits_drain_set(uint64_t *summary, uint64_t *bits, size_t nsum,
                             void (*fn)(struct sn_thread *, uint32_t),
                             struct sn_thread *t)
{
    int n = 0;

    for (size_t s = 0; s < nsum; s++) {
        uint64_t sw;

        if (!load_relaxed(&summary[s]))
            continue;
        sw = exchange_seq_cst(&summary[s], 0);
        while (sw) {
            uint32_t w = (uint32_t)(s * 64 + __builtin_ctzll(sw));
            uint64_t bw = exchange_seq_cst(&bits[w], 0);

            sw &= sw - 1;
            while (bw) {
                fn(t, w * 64 + (uint32_t)__builtin_ctzll(bw));
                bw &= bw - 1;
                n++;
            }
        }
    }
    return n;
}

/*
 * sn_bits_drain_set() behind one look at all summary words at once: the
 * loop drains two mailboxes every iteration, and mostly both are empty.
 */
static inline int sn_bits_drain(uint64_t *summary, uint64_t *bits, size_t nsum,
                                void (*fn)(struct sn_thread *, uint32_t),
                                struct sn_thread *t)
{
    uint64_t any = 0;

    for (size_t s = 0; s < nsum; s++)
        any |= load_relaxed(&summary[s]);
    return any ? sn_bits_drain_set(summary, bits, nsum, fn, t) : 0;
}

/* The RoCE ACKs a batch left due (sn_rc_flush_acks), if any. */
static inline int sn_flush_acks(struct sn_thread *t)
{
    return sn_list_empty(&t->rc_acks) ? 0 : sn_rc_flush_acks(t);
}

void sn_poke(struct sn_thread *t, struct sn_qp *qp)
{
    if (qp->thr != t) {
        sn_poke_qp(t->eng->ctl, qp->thr->idx, qp->idx);
    } else if (!qp->in_dirty) {
        qp->in_dirty = true;
        sn_list_add_tail(&t->dirtyq, &qp->dirty);
    }
}

/* Serves the pokes of t's own QPs (sn_poke); returns how many. */
static int sn_run_dirty(struct sn_thread *t)
{
    int n = 0;

    while (!sn_list_empty(&t->dirtyq)) {
        struct sn_qp *qp = sn_container_of(t->dirtyq.next, struct sn_qp, dirty);

        sn_list_del(&qp->dirty);
        qp->in_dirty = false;
        sn_qp_dirty(t, qp);
        n++;
    }
    return n;
}

/* ---- timers: a binary min-heap on (at, seq) --------------------------- */

static bool sn_timer_less(const struct sn_timer *a, const struct sn_timer *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void sn_heap_set(struct sn_thread *t, uint32_t i, struct sn_timer *tm)
{
    t->heap[i] = tm;
    tm->pos = i;
}

static void sn_heap_up(struct sn_thread *t, uint32_t i)
{
    struct sn_timer *tm = t->heap[i];

    while (i > 0 && sn_timer_less(tm, t->heap[(i - 1) / 2])) {
        sn_heap_set(t, i, t->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    sn_heap_set(t, i, tm);
}

static void sn_heap_down(struct sn_thread *t, uint32_t i)
{
    struct sn_timer *tm = t->heap[i];

    for (;;) {
        uint32_t c = 2 * i + 1;

        if (c >= t->heap_len)
            break;
        if (c + 1 < t->heap_len && sn_timer_less(t->heap[c + 1], t->heap[c]))
            c++;
        if (!sn_timer_less(t->heap[c], tm))
            break;
        sn_heap_set(t, i, t->heap[c]);
        i = c;
    }
    sn_heap_set(t, i, tm);
}

void sn_timer_add(struct sn_thread *t, struct sn_timer *tm)
{
    if (t->heap_len == t->heap_cap) {
        uint32_t cap = t->heap_cap ? t->heap_cap * 2 : 256;
        struct sn_timer **h = realloc(t->heap, cap * sizeof(*h));

        if (!h)
            abort(); /* engine memory exhausted: nothing sane to do */
        t->heap = h;
        t->heap_cap = cap;
    }
    tm->seq = t->timer_seq++;
    sn_heap_set(t, t->heap_len++, tm);
    sn_heap_up(t, tm->pos);
}

void sn_timer_cancel(struct sn_thread *t, struct sn_timer *tm)
{
    uint32_t i = tm->pos;

    if (i == SN_TIMER_IDLE)
        return;
    tm->pos = SN_TIMER_IDLE;
    if (i == --t->heap_len)
        return;
    sn_heap_set(t, i, t->heap[t->heap_len]);
    sn_heap_down(t, i);
    sn_heap_up(t, t->heap[i]->pos);
}

void sn_timer_qp(struct sn_thread *t, struct sn_qp *qp, uint64_t at)
{
    if (qp->tm.pos != SN_TIMER_IDLE) {
        if (qp->tm.at <= at)
            return;
        sn_timer_cancel(t, &qp->tm);
    }
    qp->tm.at = at;
    qp->tm.kind = SN_TM_QP;
    sn_timer_add(t, &qp->tm);
}

void sn_timer_pkt(struct sn_thread *t, struct sn_pkt *p)
{
    p->tm.kind = SN_TM_PKT;
    sn_timer_add(t, &p->tm);
}

static int sn_run_timers(struct sn_thread *t)
{
    int n = 0;

    if (!t->heap_len)
        return 0;
    t->now = sn_now_ns();
    while (t->heap_len && t->heap[0]->at <= t->now) {
        struct sn_timer *tm = t->heap[0];

        sn_timer_cancel(t, tm);
        if (tm->kind == SN_TM_QP)
            sn_kick(t, sn_container_of(tm, struct sn_qp, tm));
        else if (tm->kind == SN_TM_RC)
            sn_rc_timer(t, tm);
        else
            sn_deliver(t, sn_container_of(tm, struct sn_pkt, tm));
        n++;
    }
    return n;
}

/* ---- the loop --------------------------------------------------------- */

static void sn_on_dirty(struct sn_thread *t, uint32_t idx)
{
    struct sn_qp *qp = load_acquire(&t->eng->qps[idx]);

    if (qp && qp->thr == t)
        sn_qp_dirty(t, qp);
}

void sn_cq_event(struct sn_thread *t, uint32_t idx)
{
    struct sn_link *h = &t->cqwait[idx], *l, *next;
    struct sn_cq *cq = load_acquire(&t->eng->cqs[idx]);

    for (l = h->next; l != h; l = next) {
        struct sn_qp *qp = sn_container_of(l, struct sn_qp, wait);

        next = l->next;
        if (cq && qp->wait_cqn == cq->cqn &&
            (int32_t)(sn_cq_count(cq) - qp->wait_idx) >= 0)
            sn_kick(t, qp);
    }
}

static int sn_drain_inbox(struct sn_thread *t)
{
    struct sn_pkt *p, *rev = NULL, *next;
    int n = 0;

    if (!load_relaxed(&t->inbox))
        return 0;
    p = exchange_acquire(&t->inbox, NULL);
    for (; p; p = next) { /* the stack is newest first: reverse it */
        next = p->next;
        p->next = rev;
        rev = p;
    }
    for (p = rev; p; p = next, n++) {
        next = p->next;
        p->next = NULL;
        if (p->tm.at) {
            sn_timer_pkt(t, p);
        } else {
            sn_deliver(t, p);
        }
    }
    return n;
}

/*
 * Runs the queued QPs in rounds: a round runs the QPs queued so far (QPs
 * kicked meanwhile wait for the next round), and a few rounds run before
 * the loop looks at its mailboxes again.
 */
static int sn_run_runq(struct sn_thread *t)
{
    int n = 0;

    for (int round = 0; round < 4; round++) {
        struct sn_link batch;

        n += sn_run_dirty(t);
        if (sn_list_empty(&t->runq))
            break;
        batch = t->runq;

        batch.next->prev = &batch;
        batch.prev->next = &batch;
        sn_list_init(&t->runq);
        while (!sn_list_empty(&batch)) {
            struct sn_qp *qp = sn_container_of(batch.next, struct sn_qp, run);

            sn_list_del(&qp->run);
            qp->in_run = false;
            sn_qp_run(t, qp);
            n++;
        }
        sn_run_local(t);
    }
    return n;
}

/* Is anything waiting in t's mailboxes (dirty QPs, CQ events, packets)? */
static bool sn_has_mail(struct sn_thread *t)
{
    for (size_t i = 0; i < SN_MAX_OBJS / 64 / 64; i++)
        if (load_seq_cst(&t->sh->summary[i]) ||
            load_seq_cst(&t->cq_ev.summary[i]))
            return true;
    return load_seq_cst(&t->inbox) != NULL;
}

static bool sn_has_work(struct sn_thread *t)
{
    return sn_has_mail(t) || load_seq_cst(&t->eng->stop);
}

/*
 * Is another engine thread stalled: mail waiting for it, and its loop
 * counter unchanged since our previous look (it is not running, or busy
 * with a long batch)? A peer that runs picks its mail up by itself and
 * needs no yield; this keeps spinning cheap on machines with a core per
 * thread.
 */
static bool sn_peer_stalled(struct sn_thread *t)
{
    bool stalled = false;

    for (unsigned i = 0; i < t->eng->ctl->nthreads; i++) {
        struct sn_thread *u = load_acquire(&t->eng->thr[i]);
        uint64_t seq;

        if (!u || u == t || !sn_has_mail(u))
            continue;
        seq = load_relaxed(&u->qs_seq);
        if (seq == t->peer_seq[i])
            stalled = true;
        t->peer_seq[i] = seq;
    }
    return stalled;
}

/*
 * One step of an idle thread's spin: a pause, and every few steps (longer
 * than a loop iteration of an idle peer) a look at the peers; the CPU goes
 * to a stalled one, which may be waiting for this very CPU.
 */
static void sn_spin_step(struct sn_thread *t)
{
    cpu_relax();
    if (t->eng->ctl->nthreads > 1 && ++t->spin_steps % SN_PEER_CHECK == 0 &&
        sn_peer_stalled(t)) {
        store_relaxed(&t->sh->yields, load_relaxed(&t->sh->yields) + 1);
        sched_yield();
    }
}

static void sn_sleep(struct sn_thread *t, int64_t timeout_ns)
{
    uint32_t w = load_seq_cst(&t->sh->wake);

    store_seq_cst(&t->sh->sleeping, 1);
    if (!sn_has_work(t)) {
        store_relaxed(&t->sh->sleeps, load_relaxed(&t->sh->sleeps) + 1);
        sn_futex_wait(&t->sh->wake, w, timeout_ns);
    }
    store_seq_cst(&t->sh->sleeping, 0);
}

static void sn_pin(struct sn_thread *t)
{
    cpu_set_t set;

    if (t->cpu < 0)
        return;
    CPU_ZERO(&set);
    CPU_SET(t->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* One engine thread: serve everything ready, spin, then sleep. */
static void *sn_thread_main(void *arg)
{
    struct sn_thread *t = arg;
    uint64_t idle_since = 0;
    unsigned idle_polls = 0;

    sn_pin(t);
    for (;;) {
        int work;

        store_release(&t->qs_seq, t->qs_seq + 1);
        if (load_acquire(&t->eng->stop))
            break;
        work = sn_bits_drain(t->sh->summary, t->sh->dirty,
                             SN_MAX_OBJS / 64 / 64, sn_on_dirty, t);
        work += sn_drain_inbox(t);
        work += sn_flush_acks(t);
        work += sn_bits_drain(t->cq_ev.summary, t->cq_ev.bits,
                              SN_MAX_OBJS / 64 / 64, sn_cq_event, t);
        work += sn_run_timers(t);
        work += sn_run_local(t);
        work += sn_run_runq(t);
        work += sn_run_local(t);
        work += sn_flush_acks(t);
        if (work) {
            idle_since = 0;
            idle_polls = 0;
            continue;
        }
        /* Spinning with no timer queued, read the clock every few polls
         * only: it costs as much as a look at the mailboxes. */
        if (idle_since && !t->heap_len && ++idle_polls % SN_CLOCK_POLLS) {
            sn_spin_step(t);
            continue;
        }
        uint64_t now = sn_now_ns();
        int64_t until_timer = -1;

        if (!idle_since)
            idle_since = now;
        if (t->heap_len)
            until_timer =
                t->heap[0]->at > now ? (int64_t)(t->heap[0]->at - now) : 0;
        if ((until_timer >= 0 && until_timer < SN_SLEEP_SLACK_NS) ||
            now - idle_since < t->spin_ns) {
            sn_spin_step(t);
            continue;
        }
        sn_sleep(t, until_timer < 0 ? -1 : until_timer - SN_SLEEP_SLACK_NS);
        idle_since = 0;
    }
    return NULL;
}

void sn_engine_sync(struct sn_engine *e)
{
    for (unsigned i = 0; i < e->nthreads; i++) {
        struct sn_thread *t = e->thr[i];
        uint64_t s = load_acquire(&t->qs_seq);

        while (load_acquire(&t->qs_seq) == s) {
            struct timespec ts = {0, 20000};

            fetch_add_seq_cst(&t->sh->wake, 1);
            sn_futex_wake(&t->sh->wake, 1);
            nanosleep(&ts, NULL);
        }
    }
}

static struct sn_thread *sn_thread_new(struct sn_engine *e, unsigned i,
                                       const struct sn_engine_opts *o)
{
    struct sn_thread *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->eng = e;
    t->idx = i;
    t->sh = &e->ctl->thr[i];
    t->cpu = o->ncpus ? o->cpus[i % o->ncpus] : -1;
    t->spin_ns = o->spin_ns;
    sn_list_init(&t->runq);
    sn_list_init(&t->dirtyq);
    sn_list_init(&t->rc_acks);
    for (size_t c = 0; c < SN_MAX_OBJS; c++)
        sn_list_init(&t->cqwait[c]);
    return t;
}

int sn_engine_create(const struct sn_engine_opts *opts, struct sn_engine **out)
{
    struct sn_engine *e;
    unsigned n = opts->threads;
    void *ctl;
    int rc;

    if (n < 1 || n > SN_MAX_THREADS)
        return -EINVAL;
    e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    e->ctl_fd =
        sn_memfd_create("softnic-ctl", sizeof(struct sn_shm_ctl) + SN_PAGE);
    if (e->ctl_fd < 0) {
        rc = e->ctl_fd;
        goto err_free_e;
    }
    rc = sn_map(e->ctl_fd, sizeof(struct sn_shm_ctl), NULL, &ctl);
    if (rc < 0)
        goto err_close_ctl_fd;
    e->ctl = ctl;
    e->ctl->magic = SN_CTL_MAGIC;
    e->ctl->nthreads = n;
    e->id = ((uint64_t)getpid() << 32) ^ sn_now_ns() ^ (uintptr_t)e;
    e->ctl->engine_id = e->id;
    pthread_mutex_init(&e->lock, NULL);
    sn_list_init(&e->devs);
    e->next_dev = 1;
    for (unsigned i = 0; i < n; i++) {
        struct sn_thread *t = sn_thread_new(e, i, opts);

        if (!t || pthread_create(&t->tid, NULL, sn_thread_main, t) != 0) {
            free(t);
            e->nthreads = i;
            sn_engine_destroy(e);
            return -ENOMEM;
        }
        store_release(&e->thr[i], t); /* running threads look at their peers */
        e->nthreads = i + 1;
    }
    *out = e;
    return 0;

err_close_ctl_fd:
    close(e->ctl_fd);
err_free_e:
    free(e);
    return rc;
}

/* Frees a stopped thread and the packets it still held. */
static void sn_thread_free(struct sn_thread *t)
{
    while (t->local) {
        struct sn_pkt *p = t->local;

        t->local = p->next;
        sn_pkt_free(t, p);
    }
    for (struct sn_pkt *p = t->inbox, *nx; p; p = nx) {
        nx = p->next;
        sn_pkt_free(t, p);
    }
    while (t->heap_len) {
        struct sn_timer *tm = t->heap[0];

        sn_timer_cancel(t, tm);
        if (tm->kind == SN_TM_PKT)
            sn_pkt_free(t, sn_container_of(tm, struct sn_pkt, tm));
    }
    sn_pool_drain(t);
    free(t->heap);
    free(t);
}

/*
 * Stops the threads and frees the engine; the caller freed the objects.
 * Every thread is joined before any is freed: a running thread may still
 * look at its peers (packets, CQ events, spinning).
 */
void sn_engine_destroy(struct sn_engine *e)
{
    store_seq_cst(&e->stop, 1);
    for (unsigned i = 0; i < e->nthreads; i++) {
        fetch_add_seq_cst(&e->thr[i]->sh->wake, 1);
        sn_futex_wake(&e->thr[i]->sh->wake, 1);
    }
    for (unsigned i = 0; i < e->nthreads; i++)
        pthread_join(e->thr[i]->tid, NULL);
    for (unsigned i = 0; i < e->nthreads; i++)
        sn_thread_free(e->thr[i]);
    if (e->def_trace)
        sn_trace_close(e->def_trace);
    munmap(e->ctl, sizeof(struct sn_shm_ctl));
    close(e->ctl_fd);
    pthread_mutex_destroy(&e->lock);
    free(e);
}
