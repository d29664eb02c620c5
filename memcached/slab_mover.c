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
#include <time.h>

#include "memcached/items_int.h"
#include "memcached/settings.h"
#include "memcached/slab_mover.h"
#include "memcached/stats.h"
#include "memcached/watch.h"

#define SWEEP_INTERVAL_MS 10
#define IDLE_WAIT_MS      100 /* between looks at the automove setting */
#define AUTOMOVE_EVERY_S  10  /* automove looks at the classes this often */

static struct {
    pthread_mutex_t lock; /* protects everything below */
    pthread_cond_t cond;
    pthread_t tid;
    bool started, stopping;
    struct slab_mover_stats st;
    uint64_t last_evicted[SLABS_MAX_CLASSES]; /* automove's last look */
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

/* Evictions of class i so far (its LRU lock). */
static uint64_t class_evictions(unsigned i)
{
    pthread_mutex_lock(&lrus[i].lock);
    uint64_t n = lrus[i].evicted;
    pthread_mutex_unlock(&lrus[i].lock);
    return n;
}

/*
 * automove: the class that evicted most since the last look takes a page
 * from one whose free chunks fill two pages (so it keeps one to spare).
 * mv.lock held.
 */
static void automove(void)
{
    unsigned n = slabs_nclasses(), dst = 0, src = 0;
    uint64_t most = 0;

    for (unsigned i = 1; i <= n; i++) {
        uint64_t e = class_evictions(i);
        if (e - mv.last_evicted[i] > most) {
            most = e - mv.last_evicted[i];
            dst = i;
        }
        mv.last_evicted[i] = e;
    }
    for (unsigned i = 1; i <= n && dst != 0 && src == 0; i++) {
        if (i != dst && slabs_free_chunks(i) >= 2ull * slabs_perslab(i))
            src = i;
    }
    if (dst != 0 && src != 0 &&
        slabs_move_begin((int)src, (int)dst) == SLABS_REASSIGN_OK)
        watch_log_slab_move(src, dst);
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
    uint32_t next_automove = items_now() + AUTOMOVE_EVERY_S;

    (void)arg;
    stats_thread_register();
    pthread_mutex_lock(&mv.lock);
    while (!mv.stopping) {
        bool busy = slabs_move_current(&m);
        mv.st.running = busy;
        if (!busy) {
            wait_ms(IDLE_WAIT_MS);
            if (items_now() >= next_automove) {
                next_automove = items_now() + AUTOMOVE_EVERY_S;
                if (SETTING_GET(slab_automove) > 0)
                    automove();
            }
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
