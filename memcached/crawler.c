/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/crawler.c - the background expiry crawler (see crawler.h).
 *
 * The walk keeps its place with a cursor: a header-only struct item marked
 * ITEM_CRAWLER that sits in the LRU list and steps toward the head one item
 * at a time, so the LRU lock is held for one step only and other threads
 * (which skip cursors) keep working. Dead items are unlinked under the LRU
 * lock with a trylock of their item lock, like eviction does.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memcached/assoc.h"
#include "memcached/crawler.h"
#include "memcached/items_int.h"
#include "memcached/settings.h"
#include "memcached/stats.h"

#define CRAWL_INTERVAL_MIN 5    /* seconds between automatic crawls */
#define CRAWL_INTERVAL_MAX 60   /* ... stretched while they find nothing */
#define CRAWL_SLEEP_EVERY  1000 /* items between lru_crawler_sleep naps */

static struct {
    pthread_mutex_t lock; /* protects everything below but the thread id */
    pthread_cond_t cond;
    pthread_t tid;
    bool started;
    bool stopping;
    bool running;
    uint64_t requested; /* class mask asked for, 0 = none */
    uint64_t starts;
} cr = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
};

/* Moves the cursor one item toward the head, past item it (LRU lock). */
static void cursor_step(struct lru *l, struct item *cursor, struct item *it)
{
    lru_remove(l, cursor);
    cursor->next = it;
    cursor->prev = it->prev;
    if (it->prev)
        it->prev->next = cursor;
    else
        l->head = cursor;
    it->prev = cursor;
}

/* Reclaims it if dead (LRU lock held). Returns 1 if it went away. */
static unsigned crawl_one(struct lru *l, struct item *it, void *ctx)
{
    struct rdn_keyhash kh;
    uint32_t now = items_now();
    unsigned reclaimed = 0;

    (void)ctx;
    l->crawler_items_checked++;
    if (!item_is_dead(it, now))
        return 0;
    assoc_keyhash(item_key(it), it->nic.nkey, &kh);
    pthread_mutex_t *lk = item_lock_for(kh.lock32);
    if (pthread_mutex_trylock(lk) != 0)
        return 0;
    if (item_has_flag(it, ITEM_LINKED) && item_is_dead(it, now)) {
        l->crawler_reclaimed++;
        if (!item_has_flag(it, ITEM_FETCHED))
            l->expired_unfetched++;
        do_item_unlink(it, &kh, true);
        reclaimed = 1;
    }
    pthread_mutex_unlock(lk);
    return reclaimed;
}

/*
 * Walks class clsid's LRU from tail to head with a cursor, calling
 * visit(l, it, ctx) for each item with the LRU lock held (the item stays
 * linked, hence valid, while it runs; it may unlink it), at most limit
 * items (0 = all). nap: sleep lru_crawler_sleep every CRAWL_SLEEP_EVERY
 * items. Returns the sum of visit's results.
 */
static uint64_t walk_class(unsigned clsid, uint32_t limit, bool nap,
                           unsigned (*visit)(struct lru *l, struct item *it,
                                             void *ctx),
                           void *ctx)
{
    struct lru *l = &lrus[clsid];
    struct item cursor;
    uint64_t sum = 0, checked = 0;

    memset(&cursor, 0, sizeof(cursor));
    cursor.it_flags = ITEM_CRAWLER;
    pthread_mutex_lock(&l->lock);
    if (l->tail == NULL) {
        pthread_mutex_unlock(&l->lock);
        return 0;
    }
    cursor.prev = l->tail;
    l->tail->next = &cursor;
    l->tail = &cursor;
    pthread_mutex_unlock(&l->lock);

    for (;;) {
        pthread_mutex_lock(&l->lock);
        struct item *it = cursor.prev;
        if (it == NULL || (limit != 0 && checked >= limit)) {
            lru_remove(l, &cursor);
            pthread_mutex_unlock(&l->lock);
            break;
        }
        cursor_step(l, &cursor, it);
        if (!item_has_flag(it, ITEM_CRAWLER)) {
            checked++;
            sum += visit(l, it, ctx);
        }
        pthread_mutex_unlock(&l->lock);
        int sleep_us = SETTING_GET(lru_crawler_sleep);
        if (nap && checked % CRAWL_SLEEP_EVERY == 0 && sleep_us)
            usleep((useconds_t)sleep_us);
    }
    return sum;
}

uint64_t crawler_crawl_class(unsigned clsid)
{
    return walk_class(clsid, SETTING_GET(lru_crawler_tocrawl), true, crawl_one,
                      NULL);
}

struct crawler_dump {
    struct item cursor; /* in class clsid's LRU while linked */
    bool linked;
    unsigned clsid; /* the class being walked; 0 before the first */
    uint64_t mask;
};

struct crawler_dump *crawler_dump_begin(uint64_t class_mask)
{
    struct crawler_dump *d = calloc(1, sizeof(*d));

    if (d == NULL)
        return NULL;
    d->cursor.it_flags = ITEM_CRAWLER;
    d->mask = class_mask;
    return d;
}

/* Puts the cursor at the tail of the next class to walk that has items
 * (LRU lock of that class taken and released). False: none is left. */
static bool dump_next_class(struct crawler_dump *d)
{
    while (++d->clsid < SLABS_MAX_CLASSES) {
        if (!(d->mask & (UINT64_C(1) << d->clsid)))
            continue;
        struct lru *l = &lrus[d->clsid];
        pthread_mutex_lock(&l->lock);
        if (l->tail != NULL) {
            d->cursor.next = NULL;
            d->cursor.prev = l->tail;
            l->tail->next = &d->cursor;
            l->tail = &d->cursor;
            d->linked = true;
        }
        pthread_mutex_unlock(&l->lock);
        if (d->linked)
            return true;
    }
    return false;
}

bool crawler_dump_next(struct crawler_dump *d, unsigned max, crawler_dump_fn fn,
                       void *ctx)
{
    unsigned passed = 0; /* items stepped over */

    while (passed < max) {
        if (!d->linked && !dump_next_class(d))
            return true;
        struct lru *l = &lrus[d->clsid];
        uint32_t now = items_now();
        pthread_mutex_lock(&l->lock);
        while (passed < max) {
            struct item *it = d->cursor.prev;
            if (it == NULL) {
                lru_remove(l, &d->cursor);
                d->linked = false;
                break;
            }
            cursor_step(l, &d->cursor, it);
            passed++; /* dead ones too: they bound the lock hold as well */
            /* memcached's metadump skips expired and flushed items */
            if (!item_has_flag(it, ITEM_CRAWLER) && !item_is_dead(it, now))
                fn(ctx, it);
        }
        pthread_mutex_unlock(&l->lock);
    }
    return false;
}

void crawler_dump_end(struct crawler_dump *d)
{
    if (d == NULL)
        return;
    if (d->linked) {
        struct lru *l = &lrus[d->clsid];
        pthread_mutex_lock(&l->lock);
        lru_remove(l, &d->cursor);
        pthread_mutex_unlock(&l->lock);
    }
    free(d);
}

static uint64_t crawl_classes(uint64_t mask)
{
    uint64_t reclaimed = 0;

    for (unsigned i = 1; i < SLABS_MAX_CLASSES; i++) {
        if (mask & (UINT64_C(1) << i))
            reclaimed += crawler_crawl_class(i);
    }
    return reclaimed;
}

/* Waits for a request, the next automatic crawl, or stop. Called with
 * cr.lock held; returns the classes to crawl (0 = stop). */
static uint64_t wait_for_work(unsigned interval)
{
    struct timespec deadline;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += interval;
    while (!cr.stopping && cr.requested == 0) {
        if (pthread_cond_timedwait(&cr.cond, &cr.lock, &deadline) == ETIMEDOUT)
            return cr.stopping ? 0 : CRAWLER_ALL_CLASSES;
    }
    if (cr.stopping)
        return 0;
    uint64_t mask = cr.requested;
    cr.requested = 0;
    return mask;
}

static void *crawler_main(void *arg)
{
    unsigned interval = CRAWL_INTERVAL_MIN;

    (void)arg;
    stats_thread_register();
    pthread_mutex_lock(&cr.lock);
    for (;;) {
        uint64_t mask = wait_for_work(interval);
        if (mask == 0)
            break;
        cr.running = true;
        cr.starts++;
        pthread_mutex_unlock(&cr.lock);
        uint64_t reclaimed = crawl_classes(mask);
        pthread_mutex_lock(&cr.lock);
        cr.running = false;
        if (reclaimed > 0)
            interval = CRAWL_INTERVAL_MIN;
        else if (interval < CRAWL_INTERVAL_MAX)
            interval *= 2;
    }
    pthread_mutex_unlock(&cr.lock);
    return NULL;
}

int crawler_start(void)
{
    pthread_mutex_lock(&cr.lock);
    if (cr.started) {
        pthread_mutex_unlock(&cr.lock);
        return -EALREADY;
    }
    cr.stopping = false;
    cr.requested = 0;
    int rc = pthread_create(&cr.tid, NULL, crawler_main, NULL);
    cr.started = rc == 0;
    if (cr.started)
        SETTING_SET(lru_crawler, true);
    pthread_mutex_unlock(&cr.lock);
    return -rc;
}

void crawler_stop(void)
{
    pthread_mutex_lock(&cr.lock);
    if (!cr.started) {
        pthread_mutex_unlock(&cr.lock);
        return;
    }
    cr.stopping = true;
    SETTING_SET(lru_crawler, false);
    pthread_cond_signal(&cr.cond);
    pthread_mutex_unlock(&cr.lock);
    pthread_join(cr.tid, NULL);
    pthread_mutex_lock(&cr.lock);
    cr.started = false;
    pthread_mutex_unlock(&cr.lock);
}

bool crawler_request(uint64_t class_mask)
{
    bool ok;

    pthread_mutex_lock(&cr.lock);
    ok = cr.started && !cr.running && cr.requested == 0;
    if (ok) {
        cr.requested = class_mask;
        pthread_cond_signal(&cr.cond);
    }
    pthread_mutex_unlock(&cr.lock);
    return ok;
}

void crawler_queue(uint64_t class_mask)
{
    pthread_mutex_lock(&cr.lock);
    if (cr.started) {
        cr.requested |= class_mask;
        pthread_cond_signal(&cr.cond);
    }
    pthread_mutex_unlock(&cr.lock);
}

uint64_t crawler_starts(void)
{
    pthread_mutex_lock(&cr.lock);
    uint64_t n = cr.starts;
    pthread_mutex_unlock(&cr.lock);
    return n;
}

bool crawler_running(void)
{
    pthread_mutex_lock(&cr.lock);
    bool r = cr.running;
    pthread_mutex_unlock(&cr.lock);
    return r;
}
