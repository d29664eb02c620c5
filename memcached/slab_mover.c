/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/slab_mover.c - the page mover thread (see slab_mover.h).
 *
 * While a move is under way the thread sweeps the page every
 * SWEEP_INTERVAL_MS: each pass moves out the items linked since the last
 * one (a chunk handed out just before the move began may be stored later),
 * then asks the allocator whether every chunk is back. Freed chunks come
 * back through the allocator's limbo, i.e. after the NIC reader horizon.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "memcached/items_int.h"
#include "memcached/settings.h"
#include "memcached/slab_automove.h"
#include "memcached/slab_mover.h"
#include "memcached/stats.h"
#include "memcached/watch.h"

#define SWEEP_INTERVAL_MS 10
#define IDLE_WAIT_MS      100 /* between looks at the automove setting */

static struct {
    pthread_mutex_t lock; /* protects everything below */
    pthread_cond_t cond;
    pthread_t tid;
    bool started, stopping;
    struct slab_mover_stats st;
} mv = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
};

/* One pass over the moving page; counts what it did. */
static void sweep(const struct slabs_move *m)
{
    struct slab_mover_stats d = {0};

    for (unsigned j = 0; j < m->perslab; j++) {
        enum item_evacuation r = item_evacuate(
            (struct item *)(m->page + j * m->chunk_size), m->chunk_size);
        switch (r & ~EVAC_BUSY) {
        case EVAC_RECLAIMED:
            d.inline_reclaim++;
            break;
        case EVAC_RESCUED:
            d.rescues++;
            break;
        case EVAC_EVICTED:
            d.evictions_nomem++;
            break;
        default:
            break;
        }
        if (r & EVAC_BUSY)
            d.busy_items++;
    }
    pthread_mutex_lock(&mv.lock);
    mv.st.inline_reclaim += d.inline_reclaim;
    mv.st.rescues += d.rescues;
    mv.st.evictions_nomem += d.evictions_nomem;
    mv.st.busy_items += d.busy_items;
    pthread_mutex_unlock(&mv.lock);
}

/* The automove samples of every class now (slab_automove.h). */
static void take_samples(struct automove_sample *out)
{
    unsigned n = slabs_nclasses();
    uint32_t now = items_now();

    memset(out, 0, SLABS_MAX_CLASSES * sizeof(*out));
    for (unsigned i = 1; i <= n && i < SLABS_MAX_CLASSES; i++) {
        struct automove_sample *s = &out[i];
        struct lru *l = &lrus[i];

        pthread_mutex_lock(&l->lock);
        s->evicted = l->evicted;
        s->outofmemory = l->outofmemory;
        struct item *tail = l->tail;
        if (tail && item_has_flag(tail, ITEM_CRAWLER))
            tail = tail->prev; /* the crawler's marker: the item before it */
        s->age = tail && now > tail->btime ? now - tail->btime : 0;
        pthread_mutex_unlock(&l->lock);
        slabs_class_pages(i, &s->pages, &s->free_chunks);
        s->perslab = slabs_perslab(i);
    }
}

/*
 * automove 1, about once a second (mover thread, mv.lock not held): runs
 * the decision and starts the move it asks for, unless one is under way.
 * Returns true when it asked for a page to go to the pool, after which
 * memcached looks again at once.
 */
static bool automove_step(struct automove **am, double *ratio)
{
    struct automove_sample now[SLABS_MAX_CLASSES];
    int src, dst;

    take_samples(now);
    if (*am == NULL || *ratio != settings_automove_ratio()) {
        /* A new ratio starts a new history, as in memcached. */
        automove_free(*am);
        *ratio = settings_automove_ratio();
        *am =
            automove_new((unsigned)settings.slab_automove_window, *ratio, now);
        return false;
    }
    automove_run(*am, now, &src, &dst);
    if (src == -1 || dst == -1)
        return false;
    pthread_mutex_lock(&mv.lock);
    bool ok = slabs_move_begin(src, dst) == SLABS_REASSIGN_OK;
    pthread_mutex_unlock(&mv.lock);
    if (ok)
        watch_log_slab_move((unsigned)src, (unsigned)dst);
    return dst == 0;
}

static void wait_ms(unsigned ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)ms * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&mv.cond, &mv.lock, &ts);
}

static void *mover_main(void *arg)
{
    struct slabs_move m;
    struct automove *am = NULL;
    double ratio = 0;
    uint32_t last_automove = 0;

    (void)arg;
    stats_thread_register();
    pthread_mutex_lock(&mv.lock);
    while (!mv.stopping) {
        /* Samples go on while a page moves, as memcached's (a decision
         * then is BUSY and dropped). */
        if (SETTING_GET(slab_automove) == 1 && items_now() != last_automove) {
            pthread_mutex_unlock(&mv.lock);
            if (!automove_step(&am, &ratio))
                last_automove = items_now();
            pthread_mutex_lock(&mv.lock);
        }
        bool busy = slabs_move_current(&m);
        mv.st.running = busy;
        if (!busy) {
            wait_ms(IDLE_WAIT_MS);
            continue;
        }
        pthread_mutex_unlock(&mv.lock);
        sweep(&m);
        bool done = slabs_move_finish();
        pthread_mutex_lock(&mv.lock);
        if (!done)
            wait_ms(SWEEP_INTERVAL_MS);
    }
    mv.st.running = 0;
    pthread_mutex_unlock(&mv.lock);
    automove_free(am);
    return NULL;
}

int slab_mover_start(void)
{
    int rc = 0;

    pthread_mutex_lock(&mv.lock);
    if (!mv.started) {
        mv.stopping = false;
        rc = pthread_create(&mv.tid, NULL, mover_main, NULL);
        mv.started = rc == 0;
    }
    pthread_mutex_unlock(&mv.lock);
    return -rc;
}

void slab_mover_stop(void)
{
    pthread_mutex_lock(&mv.lock);
    if (!mv.started) {
        pthread_mutex_unlock(&mv.lock);
        return;
    }
    mv.stopping = true;
    pthread_cond_signal(&mv.cond);
    pthread_mutex_unlock(&mv.lock);
    pthread_join(mv.tid, NULL);
    pthread_mutex_lock(&mv.lock);
    mv.started = false;
    pthread_mutex_unlock(&mv.lock);
}

enum slabs_reassign slab_mover_reassign(int src, int dst)
{
    enum slabs_reassign r = SLABS_REASSIGN_RUNNING;

    pthread_mutex_lock(&mv.lock);
    if (mv.started && !mv.stopping) {
        r = slabs_move_begin(src, dst);
        if (r == SLABS_REASSIGN_OK) {
            mv.st.running = 1;
            pthread_cond_signal(&mv.cond);
        }
    }
    pthread_mutex_unlock(&mv.lock);
    return r;
}

void slab_mover_stats(struct slab_mover_stats *s)
{
    pthread_mutex_lock(&mv.lock);
    *s = mv.st;
    pthread_mutex_unlock(&mv.lock);
}
