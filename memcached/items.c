/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/items.c - items: allocation with LRU eviction, lookup with lazy
 * expiry, copy-on-write mutations, flush_all and the per-class LRUs.
 *
 * The background crawler that reclaims expired items lives in crawler.c;
 * it uses the LRU primitives exported through items_internal.h.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memcached/assoc.h"
#include "memcached/crawler.h"
#include "memcached/slab_mover.h"
#include "memcached/watch.h"
#include "memcached/items.h"
#include "memcached/items_int.h"
#include "memcached/settings.h"
#include "memcached/slabs.h"
#include "memcached/stats.h"
#include "proto/barrier.h"

#define ITEM_LOCK_COUNT      4096 /* striped item locks, a power of two */
#define ITEM_UPDATE_INTERVAL 60   /* seconds between LRU bumps of an item */
#define LRU_TAIL_SEARCH      5    /* tail items tried per eviction */
#define ALLOC_EVICT_TRIES    10   /* evictions tried per allocation */
#define ALLOC_LIMBO_WAIT_MS  500  /* longest wait for limbo chunks */
#define REALTIME_MAXDELTA    (60 * 60 * 24 * 30)
#define SIZES_BUCKET         32

/*
 * Who protects what (items.h has the lock order):
 *   item_locks[]   striped by a key's lock32: every lookup-and-use and
 *                  every mutation of that key, and an item's LINKED flag.
 *   lrus[c].lock   class c's LRU list (item next/prev/btime) and counters.
 *   clock_shift, next_cas_id, oldest_live, oldest_cas  atomics, no lock.
 *   sizes_lock     turning "stats sizes" on and off and reading it;
 *                  sizes_hist[] buckets are counted with atomic adds.
 *   item refcount and flags  atomic operations.
 */
struct lru lrus[SLABS_MAX_CLASSES];

static pthread_mutex_t item_locks[ITEM_LOCK_COUNT];
static int32_t clock_shift;
static uint64_t next_cas_id;

/* flush_all state: items updated at or before oldest_live, or with a CAS
 * below oldest_cas, are dead once oldest_live <= now. flush_fn (set before
 * serving) is told every new cut-off. */
static uint32_t oldest_live;
static uint64_t oldest_cas;
static items_flush_fn flush_fn;
static void *flush_ctx;
static items_due_fn due_fn;
static uint32_t due_done; /* the oldest_live due_fn last ran for */

/* "stats sizes" histogram; only items stored after it was enabled count. */
static uint64_t *sizes_hist;
static size_t sizes_nbuckets;
static uint64_t sizes_cas_min;
static bool sizes_on;
static pthread_mutex_t sizes_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- clock, CAS ids, locks ---- */

uint32_t items_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (uint32_t)ts.tv_sec + (uint32_t)load_relaxed(&clock_shift);
}

void items_clock_shift(int32_t secs)
{
    fetch_add_relaxed(&clock_shift, secs);
}

uint32_t items_realtime(int64_t exptime)
{
    if (exptime == 0)
        return 0;
    if (exptime < 0)
        return ITEMS_EXPTIME_PAST;
    if (exptime > REALTIME_MAXDELTA)
        return exptime > UINT32_MAX ? UINT32_MAX : (uint32_t)exptime;
    uint64_t t = (uint64_t)items_now() + (uint64_t)exptime;
    return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/*
 * CAS ids are handed out below a reserved mark that a hook records (the
 * superblock, so a restarted server never hands out an id again); the
 * mark moves ITEMS_CAS_BLOCK ids at a time, so the hook runs rarely.
 * cas_reserve_lock serialises moving it.
 */
static uint64_t cas_reserved = UINT64_MAX; /* no hook: no mark */
static items_cas_fn cas_fn;
static void *cas_ctx;
static pthread_mutex_t cas_reserve_lock = PTHREAD_MUTEX_INITIALIZER;

static void cas_reserve(uint64_t id)
{
    pthread_mutex_lock(&cas_reserve_lock);
    while (id >= load_relaxed(&cas_reserved)) {
        uint64_t mark = cas_reserved + ITEMS_CAS_BLOCK;

        cas_fn(cas_ctx, mark);
        store_relaxed(&cas_reserved, mark);
    }
    pthread_mutex_unlock(&cas_reserve_lock);
}

static uint64_t next_cas(void)
{
    uint64_t id = fetch_add_relaxed(&next_cas_id, 1) + 1;

    if (id >= load_relaxed(&cas_reserved))
        cas_reserve(id);
    return id;
}

pthread_mutex_t *item_lock_for(uint32_t lock32)
{
    return &item_locks[lock32 & (ITEM_LOCK_COUNT - 1)];
}

static inline void flag_set(struct item *it, uint16_t f)
{
    fetch_or_relaxed(&it->it_flags, f);
}

static inline void flag_clear(struct item *it, uint16_t f)
{
    fetch_and_relaxed(&it->it_flags, (uint16_t)~f);
}

static inline struct item *item_of(struct rdn_item *n)
{
    return n ? (struct item *)((char *)n - offsetof(struct item, nic)) : NULL;
}

static inline size_t item_total(struct item *it)
{
    return item_ntotal(it->nic.nkey, it->nic.nbytes);
}

/* ---- sizes histogram ---- */

/* Adds delta (+/- one item) to the "stats sizes" bucket of it's size, if
 * tracking is on; items stored before it began are never subtracted. */
static void sizes_account(struct item *it, int64_t delta)
{
    if (!load_acquire(&sizes_on))
        return;
    if (delta < 0 && it->nic.stamp < sizes_cas_min)
        return; /* stored before tracking began: never counted */
    size_t bucket = (item_mc_ntotal(it) + SIZES_BUCKET - 1) / SIZES_BUCKET;
    if (bucket < sizes_nbuckets)
        fetch_add_relaxed(&sizes_hist[bucket], (uint64_t)delta);
}

bool items_sizes_enabled(void)
{
    return load_acquire(&sizes_on);
}

/* Turns "stats sizes" tracking on (from an empty histogram) or off;
 * takes sizes_lock. */
void items_sizes_enable(bool on)
{
    pthread_mutex_lock(&sizes_lock);
    if (on && !sizes_on) {
        memset(sizes_hist, 0, sizes_nbuckets * sizeof(*sizes_hist));
        sizes_cas_min = next_cas();
    }
    store_release(&sizes_on, on);
    pthread_mutex_unlock(&sizes_lock);
}

/* Reports the histogram's non-empty buckets, or "sizes_status disabled"
 * (sizes_lock held while reading). */
void items_sizes_stats(stat_sink_fn sink, void *ctx)
{
    char name[32];

    pthread_mutex_lock(&sizes_lock);
    if (!sizes_on) {
        sink(ctx, "sizes_status", "disabled");
    } else {
        for (size_t i = 0; i < sizes_nbuckets; i++) {
            uint64_t n = load_relaxed(&sizes_hist[i]);
            if (n == 0 || (int64_t)n < 0)
                continue;
            snprintf(name, sizeof(name), "%zu", i * SIZES_BUCKET);
            stat_sinkf(sink, ctx, name, "%" PRIu64, n);
        }
    }
    pthread_mutex_unlock(&sizes_lock);
}

/* ---- the LRU lists (caller holds the class's LRU lock) ---- */

/* Links it at the head (most recent end) of l. l->lock held; it is on
 * no list. */
void lru_insert_head(struct lru *l, struct item *it)
{
    it->prev = NULL;
    it->next = l->head;
    if (l->head)
        l->head->prev = it;
    l->head = it;
    if (l->tail == NULL)
        l->tail = it;
}

/* Unlinks it from l, wherever it is. l->lock held; it is on l. */
void lru_remove(struct lru *l, struct item *it)
{
    if (it->prev)
        it->prev->next = it->next;
    else
        l->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        l->tail = it->prev;
    it->next = it->prev = NULL;
}

/* ---- lifetime ---- */

/* Last reference gone: invalidate the NIC view, give the chunk back. */
static void item_free(struct item *it)
{
    size_t ntotal = item_total(it);

    store_release(&it->nic.stamp, 0);
    slabs_free(it, ntotal, it->clsid);
}

/* Drops one reference; the last one frees the item (after zeroing its
 * stamp, so a NIC reader sees it invalid). Any thread, no lock. */
void item_release(struct item *it)
{
    if (fetch_sub_acq_rel(&it->refcount, 1) == 1)
        item_free(it);
}

static inline void item_ref(struct item *it)
{
    fetch_add_relaxed(&it->refcount, 1);
}

/* Writes the pad and both stamps: the item is complete and valid. */
static void item_seal(struct item *it, uint64_t cas)
{
    char *end = item_value(it) + it->nic.nbytes;
    uint64_t *tail = rdn_item_tail(&it->nic);

    memset(end, 0, (size_t)((char *)tail - end));
    *tail = cas;
    store_release(&it->nic.stamp, cas);
}

/* Whether the cut-off, in force at now, flushed it: bumped at or before
 * oldest_live, or older than oldest_cas. Lock-free reads only. */
static bool item_is_flushed_by(struct item *it, uint32_t now,
                               const struct items_flush_cut *cut)
{
    if (cut->oldest_live == 0 || cut->oldest_live > now)
        return false;
    return load_relaxed(&it->btime) <= cut->oldest_live ||
           (cut->oldest_cas != 0 && it->nic.stamp < cut->oldest_cas);
}

/* Whether it is expired at now or flushed by the cut-off. */
bool item_is_dead_by(struct item *it, uint32_t now,
                     const struct items_flush_cut *cut)
{
    return items_exptime_passed(load_relaxed(&it->nic.exptime), now) ||
           item_is_flushed_by(it, now, cut);
}

bool item_is_dead(struct item *it, uint32_t now)
{
    struct items_flush_cut cut = items_flush_current();

    if (due_fn && cut.oldest_live && cut.oldest_live <= now &&
        cut.oldest_live != load_acquire(&due_done)) {
        due_fn();
        store_release(&due_done, cut.oldest_live);
    }
    return item_is_dead_by(it, now, &cut);
}

/*
 * The NIC's clients do not read flush_all's cut-off, and the glue's crawl
 * for a flush may be over before an item it killed is linked: such an
 * item carries an exptime every clock has passed, which they take for
 * expired (they ask the CPU, which misses).
 */
static void item_mark_if_flushed(struct item *it, uint32_t now)
{
    struct items_flush_cut cut = items_flush_current();

    if (item_is_flushed_by(it, now, &cut))
        store_relaxed(&it->nic.exptime, ITEMS_EXPTIME_PAST);
}

/* Stamps it as bumped at now (before it is published, but for adoption).
 * memcached's cut-off is the second before a flush's time, so an item
 * stored during that second is flushed at birth (flush_all 1; set; get
 * misses). */
static void item_birth(struct item *it, uint32_t now)
{
    store_relaxed(&it->btime, now);
    item_mark_if_flushed(it, now);
}

/* After lru_link(): a flush_all that cut while it was being linked (its
 * CAS is older) may have had its crawl pass this class's head before it
 * got there; then the LRU lock orders this read of the cut after the
 * flush's store of it. */
static void item_birth_recheck(struct item *it)
{
    item_mark_if_flushed(it, items_now());
}

/* Puts a newly linked item at the head of its class's LRU and counts it
 * (takes the LRU lock). */
static void lru_link(struct lru *l, struct item *it)
{
    pthread_mutex_lock(&l->lock);
    lru_insert_head(l, it);
    l->count++;
    l->bytes += item_mc_ntotal(it);
    pthread_mutex_unlock(&l->lock);
    sizes_account(it, 1);
}

/* Links a sealed item under its key (item lock held, key absent). */
static void do_item_link(struct item *it, const struct rdn_keyhash *kh)
{
    struct lru *l = &lrus[it->clsid];
    uint32_t now = items_now();

    flag_set(it, ITEM_LINKED);
    item_ref(it);
    it->atime = now;
    item_birth(it, now);
    fence_release();
    /* Cannot fail short of a hash multi-collision attack filling the
     * stash; then the key is simply not cached. */
    if (assoc_insert(&it->nic, kh) != 0) {
        flag_clear(it, ITEM_LINKED);
        item_release(it);
        return;
    }
    lru_link(l, it);
    item_birth_recheck(it);
    stats_inc(TC_TOTAL_ITEMS);
}

/* Takes it out of its LRU and drops the index's reference. The item lock
 * is held; lru_locked says whether the class's LRU lock is too. */
static void do_item_unlink_lru(struct item *it, bool lru_locked)
{
    struct lru *l = &lrus[it->clsid];

    if (!lru_locked)
        pthread_mutex_lock(&l->lock);
    lru_remove(l, it);
    l->count--;
    l->bytes -= item_mc_ntotal(it);
    if (!lru_locked)
        pthread_mutex_unlock(&l->lock);
    sizes_account(it, -1);
    item_release(it);
}

/* Removes a linked item from the index and its LRU (item lock held). */
void do_item_unlink(struct item *it, const struct rdn_keyhash *kh,
                    bool lru_locked)
{
    if (!item_has_flag(it, ITEM_LINKED))
        return;
    flag_clear(it, ITEM_LINKED);
    assoc_delete(&it->nic, kh);
    do_item_unlink_lru(it, lru_locked);
}

/* Publishes new_it (sealed) in old_it's place (item lock held). Not
 * counted in total_items: callers count what memcached counts. */
static void do_item_replace(struct item *old_it, struct item *new_it,
                            const struct rdn_keyhash *kh)
{
    struct lru *l = &lrus[new_it->clsid];
    uint32_t now = items_now();

    flag_set(new_it, ITEM_LINKED);
    item_ref(new_it);
    new_it->atime = now;
    item_birth(new_it, now);
    fence_release();
    assoc_replace(&old_it->nic, &new_it->nic, kh);
    flag_clear(old_it, ITEM_LINKED);
    do_item_unlink_lru(old_it, false);
    lru_link(l, new_it);
    item_birth_recheck(new_it);
}

/*
 * A copy of live item it in another chunk of its class, published in its
 * place with the same CAS and the same bytes (stamps included), or false
 * when the class has no free chunk (no eviction for it). Item lock held.
 */
static bool item_rescue(struct item *it, const struct rdn_keyhash *kh)
{
    size_t ntotal = item_total(it);
    struct item *copy = slabs_alloc_spare(ntotal, it->clsid);

    if (copy == NULL)
        return false;
    memcpy(copy, it, ntotal);
    copy->next = copy->prev = NULL;
    copy->refcount = 1;
    copy->it_flags = load_relaxed(&it->it_flags) & (uint16_t)~ITEM_LINKED;
    do_item_replace(it, copy, kh);
    item_release(copy);
    return true;
}

enum item_evacuation item_evacuate(struct item *chunk, size_t chunk_size)
{
    char key[RDN_KEY_MAX];
    struct rdn_keyhash kh;
    size_t nkey = load_relaxed(&chunk->nic.nkey);
    enum item_evacuation r = EVAC_NOT_LIVE;

    /* Unlocked reads of what may be a free chunk or one being filled:
     * only a guess at the key, checked against the index under the lock. */
    if (nkey == 0 || nkey > RDN_KEY_MAX || item_ntotal(nkey, 0) > chunk_size)
        return EVAC_NOT_LIVE;
    memcpy(key, item_key(chunk), nkey);
    assoc_keyhash(key, nkey, &kh);
    pthread_mutex_t *lk = item_lock_for(kh.lock32);
    pthread_mutex_lock(lk);
    if (item_of(assoc_find(key, nkey, &kh)) == chunk) {
        bool busy = load_acquire(&chunk->refcount) > 1;
        if (item_is_dead(chunk, items_now())) {
            do_item_unlink(chunk, &kh, false);
            r = EVAC_RECLAIMED;
        } else if (item_rescue(chunk, &kh)) {
            r = EVAC_RESCUED;
        } else {
            do_item_unlink(chunk, &kh, false);
            r = EVAC_EVICTED;
        }
        if (busy && r != EVAC_NOT_LIVE)
            r |= EVAC_BUSY;
    }
    pthread_mutex_unlock(lk);
    return r;
}

/* Records an access: fetched flag, access time, and an LRU bump at most
 * once per ITEM_UPDATE_INTERVAL. */
static void item_bump(struct item *it, uint32_t now)
{
    if (!item_has_flag(it, ITEM_FETCHED))
        flag_set(it, ITEM_FETCHED);
    if (load_relaxed(&it->atime) != now)
        store_relaxed(&it->atime, now);
    if (load_relaxed(&it->btime) + ITEM_UPDATE_INTERVAL >= now)
        return;
    struct lru *l = &lrus[it->clsid];
    pthread_mutex_lock(&l->lock);
    if (item_has_flag(it, ITEM_LINKED)) {
        lru_remove(l, it);
        lru_insert_head(l, it);
        store_relaxed(&it->btime, now);
    }
    pthread_mutex_unlock(&l->lock);
}

enum miss_why { MISS_NONE, MISS_ABSENT, MISS_EXPIRED, MISS_FLUSHED };

/*
 * The live item for key (item lock held), no reference taken. A dead item
 * found on the way is unlinked (lazy expiry); *why says why it missed.
 */
static struct item *find_live(const char *key, size_t nkey,
                              const struct rdn_keyhash *kh, uint32_t now,
                              enum miss_why *why)
{
    struct item *it = item_of(assoc_find(key, nkey, kh));

    *why = MISS_ABSENT;
    if (it != NULL && item_is_dead(it, now)) {
        /* Flushed first, as memcached counts (and as item_birth() marks a
         * flushed item expired). */
        struct items_flush_cut cut = items_flush_current();
        *why = item_is_flushed_by(it, now, &cut) ? MISS_FLUSHED : MISS_EXPIRED;
        do_item_unlink(it, kh, false);
        it = NULL;
    } else if (it != NULL) {
        *why = MISS_NONE;
    }
    /* memcached logs every lookup (do_item_get) for "watch fetchers". */
    static const char *const status[] = {
        [MISS_NONE] = "found",
        [MISS_ABSENT] = "not_found",
        [MISS_FLUSHED] = "flushed",
        [MISS_EXPIRED] = "expired",
    };
    watch_log_get(key, nkey, status[*why], it);
    return it;
}

/* ---- allocation and eviction ---- */

/* Counts it leaving the tail: as reclaimed if dead, else as an eviction
 * (memcached's counters). l->lock held. */
static void evict_account(struct lru *l, struct item *it, bool dead,
                          uint32_t now)
{
    bool fetched = item_has_flag(it, ITEM_FETCHED);

    if (dead) {
        l->reclaimed++;
        if (!fetched)
            l->expired_unfetched++;
        return;
    }
    l->evicted++;
    l->evicted_time = now - it->atime;
    if (it->nic.exptime != 0)
        l->evicted_nonzero++;
    if (!fetched)
        l->evicted_unfetched++;
}

/*
 * Frees one item from the tail of class clsid: an expired or flushed one,
 * else (unless -M) the least recently used one that nobody is reading.
 * Returns true if an item went away.
 */
static bool lru_pull_tail(unsigned clsid)
{
    struct lru *l = &lrus[clsid];
    uint32_t now = items_now();
    bool freed = false, evicted = false;
    int tries = LRU_TAIL_SEARCH;

    pthread_mutex_lock(&l->lock);
    l->direct_reclaims++;
    for (struct item *it = l->tail, *prev; it && tries > 0; it = prev) {
        prev = it->prev;
        if (item_has_flag(it, ITEM_CRAWLER))
            continue;
        tries--;
        struct rdn_keyhash kh;
        assoc_keyhash(item_key(it), it->nic.nkey, &kh);
        pthread_mutex_t *lk = item_lock_for(kh.lock32);
        if (pthread_mutex_trylock(lk) != 0)
            continue;
        bool dead = item_is_dead(it, now);
        if (load_acquire(&it->refcount) != 1) {
            l->lrutail_reflocked++;
        } else if (dead || settings.evict_to_free) {
            evict_account(l, it, dead, now);
            if (!dead)
                watch_log_eviction(it);
            evicted = !dead;
            do_item_unlink(it, &kh, true);
            freed = true;
        }
        pthread_mutex_unlock(lk);
        if (freed)
            break;
    }
    pthread_mutex_unlock(&l->lock);
    /* automove 2 (memcached's): every eviction asks for a page from any
     * class with one to spare; a move under way makes this a no-op. */
    if (evicted && SETTING_GET(slab_automove) == 2)
        slab_mover_reassign(-1, (int)clsid);
    return freed;
}

/*
 * Freed chunks wait in limbo until the NIC's readers have moved past them
 * (slabs_set_horizon()); the horizon moves when the offload's watch thread
 * runs. On a loaded machine that thread can be descheduled for a while,
 * and a SET must not fail with "out of memory" while memory is on its way
 * back: so while the class has limbo chunks, wait for them, up to
 * ALLOC_LIMBO_WAIT_MS. Returns NULL when none came back in time.
 */
static struct item *alloc_from_limbo(size_t ntotal, unsigned clsid)
{
    for (int ms = 0; ms < ALLOC_LIMBO_WAIT_MS; ms++) {
        if (slabs_limbo_count(clsid) == 0)
            return NULL;
        usleep(1000);
        struct item *it = slabs_alloc(ntotal, clsid);
        if (it != NULL)
            return it;
    }
    return NULL;
}

/*
 * A new unlinked item for key and nbytes of value, with the key copied and the
 * header set (refcount 1, not sealed: the caller writes the value, then stores
 * it). When the class is full, evicts from its LRU tail up to
 * ALLOC_EVICT_TRIES times, then waits (bounded) for the class's chunks in
 * limbo. NULL with *why ITEM_TOO_LARGE (no class fits) or ITEM_NO_MEMORY.
 * May be called with an item lock held: eviction only trylocks item locks,
 * and the wait for limbo takes no item lock.
 */
struct item *item_alloc(const char *key, size_t nkey, uint32_t flags,
                        uint32_t exptime, size_t nbytes, enum item_status *why)
{
    size_t ntotal = item_ntotal(nkey, nbytes);
    unsigned clsid = 0;

    if (nkey >= 1 && nkey <= RDN_KEY_MAX && nbytes <= UINT32_MAX)
        clsid = slabs_clsid(ntotal);
    if (clsid == 0) {
        *why = ITEM_TOO_LARGE;
        return NULL;
    }
    struct item *it = slabs_alloc(ntotal, clsid);
    for (int i = 0; it == NULL && i < ALLOC_EVICT_TRIES; i++) {
        if (!lru_pull_tail(clsid))
            break;
        it = slabs_alloc(ntotal, clsid);
    }
    if (it == NULL)
        it = alloc_from_limbo(ntotal, clsid);
    if (it == NULL) {
        pthread_mutex_lock(&lrus[clsid].lock);
        lrus[clsid].outofmemory++;
        pthread_mutex_unlock(&lrus[clsid].lock);
        *why = ITEM_NO_MEMORY;
        return NULL;
    }
    it->next = it->prev = NULL;
    it->refcount = 1;
    it->atime = it->btime = items_now();
    it->it_flags = 0;
    it->clsid = (uint8_t)clsid;
    it->rsvd = 0;
    it->nic = (struct rdn_item){
        .stamp = 0,
        .nbytes = (uint32_t)nbytes,
        .flags = flags,
        .exptime = exptime,
        .nkey = (uint16_t)nkey,
    };
    memcpy(item_key(it), key, nkey);
    return it;
}

/* A sealed copy of it's value under a new CAS, or NULL (no memory). */
static struct item *item_clone(struct item *it, uint32_t exptime,
                               enum item_status *why)
{
    struct item *copy = item_alloc(item_key(it), it->nic.nkey, it->nic.flags,
                                   exptime, it->nic.nbytes, why);
    if (copy == NULL)
        return NULL;
    memcpy(item_value(copy), item_value(it), it->nic.nbytes);
    return copy;
}

/* ---- reads ---- */

/* Counts a lookup as memcached does: a touch hit/miss, or a get hit/miss
 * with the miss reason; FETCH_PEEK lookups are not counted. */
static void count_get(struct item *it, unsigned how, enum miss_why why)
{
    if (how & FETCH_PEEK)
        return;
    if (how & FETCH_TOUCH) {
        if (it) {
            stats_inc(TC_TOUCH_HITS);
            slabs_count(it->clsid, SLABS_TOUCH_HITS);
        } else {
            stats_inc(TC_TOUCH_MISSES);
        }
        return;
    }
    if (it) {
        stats_inc(TC_GET_HITS);
        slabs_count(it->clsid, SLABS_GET_HITS);
        return;
    }
    stats_inc(TC_GET_MISSES);
    if (why == MISS_EXPIRED)
        stats_inc(TC_GET_EXPIRED);
    else if (why == MISS_FLUSHED)
        stats_inc(TC_GET_FLUSHED);
}

/*
 * The live item of key with a reference the caller releases, or NULL.
 * Under the key's item lock: a dead item found is unlinked, a touch sets
 * exptime, and the item is bumped in its LRU unless how says not to.
 */
struct item *item_get(const char *key, size_t nkey, unsigned how,
                      uint32_t exptime)
{
    struct rdn_keyhash kh;
    enum miss_why why;
    uint32_t now = items_now();

    assoc_keyhash(key, nkey, &kh);
    pthread_mutex_t *lk = item_lock_for(kh.lock32);
    pthread_mutex_lock(lk);
    struct item *it = find_live(key, nkey, &kh, now, &why);
    if (it) {
        item_ref(it);
        if (how & FETCH_TOUCH)
            store_relaxed(&it->nic.exptime, exptime);
        if (!(how & (FETCH_NO_BUMP | FETCH_PEEK)))
            item_bump(it, now);
    }
    pthread_mutex_unlock(lk);
    count_get(it, how, why);
    return it;
}

/*
 * mg's lookup: everything the reply needs is decided under the key's item
 * lock (vivify on miss, win/stale tokens, touch, bump) and returned in
 * *res, with a reference to the item the caller releases.
 */
void item_meta_get(const char *key, size_t nkey, const struct mget_req *req,
                   struct mget_res *res)
{
    struct rdn_keyhash kh;
    enum miss_why why;
    enum item_status err;
    uint32_t now = items_now();
    bool created = false;

    *res = (struct mget_res){0};
    assoc_keyhash(key, nkey, &kh);
    pthread_mutex_t *lk = item_lock_for(kh.lock32);
    pthread_mutex_lock(lk);
    struct item *it = find_live(key, nkey, &kh, now, &why);
    count_get(it, req->touch ? FETCH_TOUCH : 0, why);
    if (it == NULL && req->vivify) {
        it = item_alloc(key, nkey, 0, req->viv_exptime, 0, &err);
        if (it) {
            if (req->key_binary)
                it->it_flags |= ITEM_KEY_BINARY;
            item_seal(it, next_cas());
            do_item_link(it, &kh);
            created = true;
            res->won = true;
        }
    } else if (it) {
        item_ref(it);
    }
    if (it) {
        uint16_t f = load_relaxed(&it->it_flags);
        res->it = it;
        res->fetched = f & ITEM_FETCHED;
        res->last_access = now - it->atime;
        res->token_sent = f & ITEM_TOKEN_SENT;
        res->stale = f & ITEM_STALE;
        res->old_exptime = it->nic.exptime;
        if (req->touch)
            store_relaxed(&it->nic.exptime, req->exptime);
        if (req->recache && !res->token_sent && !created &&
            it->nic.exptime != 0 && it->nic.exptime < req->recache_ttl)
            res->won = true;
        if (res->stale && !res->token_sent)
            res->won = true;
        if (res->won)
            flag_set(it, ITEM_TOKEN_SENT);
        if (!req->no_bump)
            item_bump(it, now);
    }
    pthread_mutex_unlock(lk);
}

/* ---- stores ---- */

/* memcached's CAS comparison outcome. */
enum cas_result { CAS_NONE, CAS_MATCH, CAS_BADVAL, CAS_STALE };

/* How req's CAS compares with old_it's: none given, equal, different, or
 * older (counts as stale only if req allows it, ms I). */
static enum cas_result cas_compare(const struct store_req *req,
                                   struct item *old_it)
{
    if (req->cas == 0)
        return CAS_NONE;
    if (req->cas == item_cas(old_it))
        return CAS_MATCH;
    if (req->set_stale && req->cas < item_cas(old_it))
        return CAS_STALE;
    return CAS_BADVAL;
}

/* append/prepend: a new item holding both values (item lock held). */
static struct item *combine(struct item *old_it, struct item *it,
                            enum store_op op, enum item_status *why)
{
    size_t n_old = old_it->nic.nbytes, n_new = it->nic.nbytes;
    struct item *c = item_alloc(item_key(it), it->nic.nkey, old_it->nic.flags,
                                old_it->nic.exptime, n_old + n_new, why);
    if (c == NULL)
        return NULL;
    c->it_flags = it->it_flags & ITEM_KEY_BINARY;
    if (op == STORE_APPEND) {
        memcpy(item_value(c), item_value(old_it), n_old);
        memcpy(item_value(c) + n_old, item_value(it), n_new);
    } else {
        memcpy(item_value(c), item_value(it), n_new);
        memcpy(item_value(c) + n_new, item_value(old_it), n_old);
    }
    return c;
}

/*
 * Decides a store against the existing item (memcached's do_store_item).
 * Returns the item to publish (it, or a combined copy with a reference the
 * caller drops), or NULL with *st saying why nothing is stored.
 */
static struct item *store_decide(struct item *old_it, struct item *it,
                                 const struct store_req *req,
                                 enum item_status *st)
{
    enum store_op op = req->op;

    if (old_it == NULL) {
        if (op == STORE_SET || op == STORE_ADD)
            return it;
        if (op == STORE_CAS) {
            stats_inc(TC_CAS_MISSES);
            *st = ITEM_NOT_FOUND;
        } else {
            *st = ITEM_NOT_STORED;
        }
        return NULL;
    }
    enum cas_result cr = cas_compare(req, old_it);
    switch (op) {
    case STORE_ADD:
        item_bump(old_it, items_now());
        *st = ITEM_NOT_STORED;
        return NULL;
    case STORE_CAS:
        if (cr == CAS_MATCH) {
            stats_inc(TC_CAS_HITS);
            slabs_count(old_it->clsid, SLABS_CAS_HITS);
            return it;
        }
        if (cr == CAS_STALE) {
            /* An older writer may still store, but as stale data, so
             * readers are told to recache; the win stays taken. It gets a
             * new CAS, as in memcached 1.6.18. */
            flag_set(it, ITEM_STALE | (old_it->it_flags & ITEM_TOKEN_SENT));
            return it;
        }
        stats_inc(TC_CAS_BADVAL);
        slabs_count(old_it->clsid, SLABS_CAS_BADVAL);
        *st = ITEM_EXISTS;
        return NULL;
    case STORE_APPEND:
    case STORE_PREPEND:
        if (cr != CAS_NONE && cr != CAS_MATCH) {
            *st = ITEM_EXISTS;
            return NULL;
        }
        struct item *c = combine(old_it, it, op, st);
        if (c == NULL)
            *st = ITEM_NOT_STORED; /* as memcached, whatever failed */
        return c;
    case STORE_SET:
    case STORE_REPLACE:
        return it;
    }
    return NULL;
}

/*
 * Stores it (allocated by item_alloc, value written) by req's rules under
 * the key's item lock: seals the published item with a new CAS, then links
 * it or replaces the live one in the index and LRU. The caller keeps its
 * reference to it either way. Returns ITEM_OK (and *cas_out, if not NULL)
 * or why nothing was stored.
 */
const char *item_store_status(enum item_status st)
{
    static const char *const names[] = {
        [ITEM_OK] = "stored",
        [ITEM_NOT_STORED] = "not_stored",
        [ITEM_EXISTS] = "exists",
        [ITEM_NOT_FOUND] = "not_found",
        [ITEM_TOO_LARGE] = "too_large",
        [ITEM_NO_MEMORY] = "no_memory",
        [ITEM_NON_NUMERIC] = "not_stored",
    };
    return names[st];
}

const char *store_op_name(enum store_op op)
{
    static const char *const names[] = {
        [STORE_SET] = "set",         [STORE_ADD] = "add",
        [STORE_REPLACE] = "replace", [STORE_APPEND] = "append",
        [STORE_PREPEND] = "prepend", [STORE_CAS] = "cas",
    };
    return names[op];
}

enum item_status item_store(struct item *it, const struct store_req *req,
                            uint64_t *cas_out)
{
    struct rdn_keyhash kh;
    enum miss_why why;
    enum item_status st = ITEM_OK;
    uint64_t cas;

    stats_inc(TC_SET_CMDS);
    slabs_count(it->clsid, SLABS_CMD_SET);
    assoc_keyhash(item_key(it), it->nic.nkey, &kh);
    pthread_mutex_t *lk = item_lock_for(kh.lock32);
    pthread_mutex_lock(lk);
    struct item *old_it =
        find_live(item_key(it), it->nic.nkey, &kh, items_now(), &why);
    struct item *pub = store_decide(old_it, it, req, &st);
    watch_log_store(item_key(it), it->nic.nkey, item_store_status(st),
                    store_op_name(req->op), pub ? pub : it);
    if (pub) {
        /* Only a store that happens takes a CAS id, as in memcached, so
         * clients see the same sequence of ids. */
        cas = next_cas();
        item_seal(pub, cas);
        if (old_it) {
            do_item_replace(old_it, pub, &kh);
            stats_inc(TC_TOTAL_ITEMS);
        } else {
            do_item_link(pub, &kh); /* counted there */
        }
        if (cas_out)
            *cas_out = settings.use_cas ? cas : 0;
        if (pub != it)
            item_release(pub);
    }
    pthread_mutex_unlock(lk);
    return st;
}

enum item_status item_touch(const char *key, size_t nkey, uint32_t exptime)
{
    struct item *it = item_get(key, nkey, FETCH_TOUCH, exptime);

    if (it == NULL)
        return ITEM_NOT_FOUND;
    item_release(it);
    return ITEM_OK;
}

/*
 * Deletes key's live item under its item lock: ITEM_NOT_FOUND, ITEM_EXISTS
 * on a CAS mismatch, or ITEM_OK. With req->stale (md I) the item is
 * replaced by a stale copy instead of unlinked (ITEM_NO_MEMORY if no copy
 * could be made).
 */
enum item_status item_delete(const char *key, size_t nkey,
                             const struct delete_req *req)
{
    struct rdn_keyhash kh;
    enum miss_why why;
    enum item_status st = ITEM_OK;

    assoc_keyhash(key, nkey, &kh);
    pthread_mutex_t *lk = item_lock_for(kh.lock32);
    pthread_mutex_lock(lk);
    struct item *it = find_live(key, nkey, &kh, items_now(), &why);
    if (it == NULL) {
        st = ITEM_NOT_FOUND;
    } else if ((req->cas != 0 || req->cas_given) && req->cas != item_cas(it)) {
        st = ITEM_EXISTS;
    } else if (req->stale) {
        uint32_t exp = req->set_exptime ? req->exptime : it->nic.exptime;
        struct item *copy = item_clone(it, exp, &st);
        if (copy) {
            /* Stale, with the win token free for the next reader. */
            flag_set(copy, ITEM_STALE | (it->it_flags &
                                         (ITEM_FETCHED | ITEM_KEY_BINARY)));
            item_seal(copy, next_cas());
            do_item_replace(it, copy, &kh);
            item_release(copy);
        }
    } else {
        slabs_count(it->clsid, SLABS_DELETE_HITS);
        do_item_unlink(it, &kh, false);
    }
    pthread_mutex_unlock(lk);
    if (st == ITEM_OK)
        stats_inc(TC_DELETE_HITS);
    else if (st != ITEM_NO_MEMORY)
        stats_inc(TC_DELETE_MISSES);
    return st;
}

/* Unlinks whatever key maps to, live or not (a failed set must not leave
 * the old value behind, as memcached). Takes the key's item lock. */
void item_unlink_key(const char *key, size_t nkey)
{
    struct rdn_keyhash kh;

    assoc_keyhash(key, nkey, &kh);
    pthread_mutex_t *lk = item_lock_for(kh.lock32);
    pthread_mutex_lock(lk);
    struct item *it = item_of(assoc_find(key, nkey, &kh));
    watch_log_get(key, nkey, it ? "found" : "not_found", it);
    if (it)
        do_item_unlink(it, &kh, false);
    pthread_mutex_unlock(lk);
}

/* ---- incr / decr ---- */

static bool is_space(char ch)
{
    return ch == ' ' || (ch >= '\t' && ch <= '\r');
}

/*
 * The number incr/decr sees in a value of n bytes, exactly as memcached's
 * safe_strtoull() reads an item's data (which it terminates with CRLF):
 * leading whitespace, an optional sign, decimal digits without overflow, then
 * whitespace or the end of the value; whatever follows that whitespace is
 * ignored ("12 abc" is 12). A minus sign is refused only when the result would
 * be negative as a signed number ("-0" is 0), as strtoull wraps it. A NUL
 * ends the number as the end of the value does.
 */
static bool parse_u64_value(const char *v, size_t n, uint64_t *out)
{
    size_t i = 0;
    bool minus = false;
    uint64_t x = 0;

    while (i < n && is_space(v[i]))
        i++;
    if (i < n && (v[i] == '+' || v[i] == '-'))
        minus = v[i++] == '-';
    size_t digits = i;
    for (; i < n && v[i] >= '0' && v[i] <= '9'; i++) {
        unsigned d = (unsigned)(v[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false; /* ERANGE */
        x = x * 10 + d;
    }
    if (i == digits || (i < n && !is_space(v[i]) && v[i] != '\0'))
        return false;
    if (minus)
        x = -x;
    if (minus && (int64_t)x < 0)
        return false;
    *out = x;
    return true;
}

/* A new numeric item for key (item lock held); NULL if no memory. */
static struct item *number_item(const char *key, size_t nkey, uint32_t flags,
                                uint32_t exptime, uint64_t value,
                                size_t min_len, enum item_status *why)
{
    char buf[24];
    int len = snprintf(buf, sizeof(buf), "%" PRIu64, value);
    size_t n = (size_t)len < min_len ? min_len : (size_t)len;
    struct item *it = item_alloc(key, nkey, flags, exptime, n, why);

    if (it) {
        memcpy(item_value(it), buf, (size_t)len);
        memset(item_value(it) + len, ' ', n - (size_t)len);
    }
    return it;
}

/* ma N (vivify) on a miss: links a new item holding req->initial. The
 * key's item lock held. */
static enum item_status arith_create(const char *key, size_t nkey,
                                     const struct arith_req *req,
                                     const struct rdn_keyhash *kh,
                                     struct arith_res *res)
{
    enum item_status st;
    uint32_t exp = req->set_exptime ? req->exptime : req->viv_exptime;
    struct item *it = number_item(key, nkey, 0, exp, req->initial, 0, &st);

    if (it == NULL)
        return st;
    uint64_t cas = next_cas();
    item_seal(it, cas);
    res->cas = settings.use_cas ? cas : 0;
    do_item_link(it, kh);
    item_release(it);
    res->value = req->initial;
    res->exptime = exp;
    res->created = true;
    return ITEM_OK;
}

/*
 * incr/decr of live item it (its item lock held): checks the CAS, parses
 * the value, applies the delta with memcached's wrap and floor, and
 * replaces it with a new item holding the result (copy-on-write: a NIC
 * reader never sees the number change in place).
 */
static enum item_status arith_apply(struct item *it,
                                    const struct arith_req *req,
                                    const struct rdn_keyhash *kh,
                                    struct arith_res *res)
{
    enum item_status st;
    uint64_t v;

    if (req->cas != 0 && req->cas != item_cas(it))
        return ITEM_EXISTS;
    if (!parse_u64_value(item_value(it), it->nic.nbytes, &v))
        return ITEM_NON_NUMERIC;
    if (req->incr)
        v += req->delta; /* wraps at 2^64, as memcached */
    else
        v = req->delta > v ? 0 : v - req->delta;
    /* Shorter numbers keep the old length, space padded, as memcached
     * does when nobody else holds the item. */
    size_t min_len = load_acquire(&it->refcount) == 1 ? it->nic.nbytes : 0;
    uint32_t exp = req->set_exptime ? req->exptime : it->nic.exptime;
    struct item *n = number_item(item_key(it), it->nic.nkey, it->nic.flags, exp,
                                 v, min_len, &st);
    if (n == NULL)
        return st == ITEM_TOO_LARGE ? ITEM_NO_MEMORY : st;
    /* memcached rewrites a number that fits in place, and counts only a
     * new item in total_items. */
    bool in_place = min_len != 0 && n->nic.nbytes == it->nic.nbytes;
    uint64_t cas = next_cas();
    item_seal(n, cas);
    res->cas = settings.use_cas ? cas : 0;
    do_item_replace(it, n, kh);
    if (!in_place)
        stats_inc(TC_TOTAL_ITEMS);
    item_release(n);
    slabs_count(n->clsid, req->incr ? SLABS_INCR_HITS : SLABS_DECR_HITS);
    res->value = v;
    res->exptime = exp;
    return ITEM_OK;
}

/* incr/decr/ma on key under its item lock, counting hits and misses;
 * *res gets the new value, CAS and expiry on ITEM_OK. */
enum item_status item_arith(const char *key, size_t nkey,
                            const struct arith_req *req, struct arith_res *res)
{
    struct rdn_keyhash kh;
    enum miss_why why;
    enum item_status st;

    *res = (struct arith_res){0};
    assoc_keyhash(key, nkey, &kh);
    pthread_mutex_t *lk = item_lock_for(kh.lock32);
    pthread_mutex_lock(lk);
    struct item *it = find_live(key, nkey, &kh, items_now(), &why);
    if (it)
        st = arith_apply(it, req, &kh, res);
    else if (req->vivify)
        st = arith_create(key, nkey, req, &kh, res);
    else
        st = ITEM_NOT_FOUND;
    pthread_mutex_unlock(lk);
    if (st == ITEM_OK && !res->created)
        stats_inc(req->incr ? TC_INCR_HITS : TC_DECR_HITS);
    else if (st == ITEM_NOT_FOUND)
        stats_inc(req->incr ? TC_INCR_MISSES : TC_DECR_MISSES);
    return st;
}

/* ---- flush_all ---- */

/*
 * flush_all: items bumped before when (0 = now) are dead from then on.
 * An immediate flush also invalidates by CAS (items stored in the same
 * second) and has the crawler unlink every flushed item, since the NIC
 * path does not check oldest_live.
 */
void items_flush(uint32_t when)
{
    uint32_t now = items_now();
    uint32_t at = when ? when : now;

    store_relaxed(&oldest_live, at - 1);
    if (at - 1 <= now)
        store_relaxed(&oldest_cas, next_cas());
    if (flush_fn != NULL) {
        struct items_flush_cut cut = {at - 1, oldest_cas};

        flush_fn(flush_ctx, &cut);
    }
    /* Unlink the flushed items now rather than when next looked up: a NIC
     * reader does not know about flush_all. */
    if (at - 1 <= now)
        crawler_queue(CRAWLER_ALL_CLASSES);
}

void items_set_flush_hook(items_flush_fn fn, void *ctx)
{
    flush_fn = fn;
    flush_ctx = ctx;
}

void items_set_due_hook(items_due_fn fn)
{
    due_fn = fn;
}

void items_flush_restore(const struct items_flush_cut *cut)
{
    store_relaxed(&oldest_live, cut->oldest_live);
    store_relaxed(&oldest_cas, cut->oldest_cas);
}

struct items_flush_cut items_flush_current(void)
{
    struct items_flush_cut cut = {
        load_relaxed(&oldest_live),
        load_relaxed(&oldest_cas),
    };

    return cut;
}

/* ---- statistics ---- */

/* Sums the per-class LRU counters for "stats" (each LRU lock in turn). */
void items_totals(struct items_totals *t)
{
    *t = (struct items_totals){0};
    for (unsigned i = 1; i < SLABS_MAX_CLASSES; i++) {
        struct lru *l = &lrus[i];
        pthread_mutex_lock(&l->lock);
        t->curr_items += l->count;
        t->bytes += l->bytes;
        t->evictions += l->evicted;
        t->reclaimed += l->reclaimed;
        t->expired_unfetched += l->expired_unfetched;
        t->evicted_unfetched += l->evicted_unfetched;
        t->evicted_active += l->evicted_active;
        t->crawler_reclaimed += l->crawler_reclaimed;
        t->crawler_items_checked += l->crawler_items_checked;
        t->lrutail_reflocked += l->lrutail_reflocked;
        t->direct_reclaims += l->direct_reclaims;
        pthread_mutex_unlock(&l->lock);
    }
    t->crawler_starts = crawler_starts();
}

static void class_stat(stat_sink_fn sink, void *ctx, unsigned clsid,
                       const char *name, uint64_t v)
{
    char key[64];

    snprintf(key, sizeof(key), "items:%u:%s", clsid, name);
    stat_sinkf(sink, ctx, key, "%" PRIu64, v);
}

/* "stats items": each non-empty class's counters, copied under its LRU
 * lock and reported after it is dropped. */
void items_stats(stat_sink_fn sink, void *ctx)
{
    uint32_t now = items_now();

    for (unsigned i = 1; i < SLABS_MAX_CLASSES; i++) {
        struct lru *l = &lrus[i];
        pthread_mutex_lock(&l->lock);
        struct lru s = *l; /* counters only; the lock copy is not used */
        struct item *oldest = l->tail;
        while (oldest && item_has_flag(oldest, ITEM_CRAWLER))
            oldest = oldest->prev;
        uint64_t age = oldest ? now - oldest->btime : 0;
        pthread_mutex_unlock(&l->lock);
        if (s.count == 0)
            continue;
        const struct {
            const char *name;
            uint64_t v;
        } rows[] = {
            {"number", s.count},
            {"number_hot", 0},
            {"number_warm", 0},
            {"number_cold", s.count},
            {"age_hot", 0},
            {"age_warm", 0},
            {"age", age},
            {"mem_requested", s.bytes},
            {"evicted", s.evicted},
            {"evicted_nonzero", s.evicted_nonzero},
            {"evicted_time", s.evicted_time},
            {"outofmemory", s.outofmemory},
            {"tailrepairs", 0},
            {"reclaimed", s.reclaimed},
            {"expired_unfetched", s.expired_unfetched},
            {"evicted_unfetched", s.evicted_unfetched},
            {"evicted_active", s.evicted_active},
            {"crawler_reclaimed", s.crawler_reclaimed},
            {"crawler_items_checked", s.crawler_items_checked},
            {"lrutail_reflocked", s.lrutail_reflocked},
            {"moves_to_cold", 0},
            {"moves_to_warm", 0},
            {"moves_within_lru", 0},
            {"direct_reclaims", s.direct_reclaims},
            {"hits_to_hot", 0},
            {"hits_to_warm", 0},
            {"hits_to_cold", 0},
            {"hits_to_temp", 0},
        };
        for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
            class_stat(sink, ctx, i, rows[r].name, rows[r].v);
    }
}

/* "stats reset": zeroes the per-class event counters (not the item and
 * byte counts). */
void items_stats_reset(void)
{
    for (unsigned i = 1; i < SLABS_MAX_CLASSES; i++) {
        struct lru *l = &lrus[i];
        pthread_mutex_lock(&l->lock);
        l->evicted = l->evicted_nonzero = l->evicted_time = 0;
        l->outofmemory = l->reclaimed = l->expired_unfetched = 0;
        l->evicted_unfetched = l->evicted_active = 0;
        l->crawler_reclaimed = l->crawler_items_checked = 0;
        l->lrutail_reflocked = l->direct_reclaims = 0;
        pthread_mutex_unlock(&l->lock);
    }
}

/* "stats cachedump": calls fn on up to limit (0 = all) live items of
 * clsid, most recent first, under the class's LRU lock; fn returning
 * false stops the walk. fn must not take item or LRU locks. */
void items_cachedump(unsigned clsid, unsigned limit, item_dump_fn fn, void *ctx)
{
    if (clsid == 0 || clsid >= SLABS_MAX_CLASSES)
        return;
    struct lru *l = &lrus[clsid];
    unsigned shown = 0;

    uint32_t now = items_now();
    pthread_mutex_lock(&l->lock);
    for (struct item *it = l->head; it && (limit == 0 || shown < limit);
         it = it->next) {
        /* Only live items; binary keys would garble the text format. */
        if (item_has_flag(it, ITEM_CRAWLER | ITEM_KEY_BINARY) ||
            item_is_dead(it, now))
            continue;
        if (!fn(ctx, item_key(it), it->nic.nkey, it->nic.nbytes,
                it->nic.exptime))
            break;
        shown++;
    }
    pthread_mutex_unlock(&l->lock);
}

/* ---- re-attach ---- */

/*
 * Links an item a previous process left in the index (memcached/persist.h):
 * the CPU-side header is rebuilt (the index's reference, LINKED, access
 * times now; the flags that describe the data are kept) and the item goes
 * to the head of its class's LRU. Takes the class's LRU lock.
 */
void item_adopt(struct item *it, unsigned clsid)
{
    struct lru *l = &lrus[clsid];
    uint32_t now = items_now();

    it->refcount = 1;
    it->it_flags = (it->it_flags & (ITEM_FETCHED | ITEM_STALE |
                                    ITEM_TOKEN_SENT | ITEM_KEY_BINARY)) |
                   ITEM_LINKED;
    it->clsid = (uint8_t)clsid;
    it->atime = now;
    item_birth(it, now);
    lru_link(l, it);
}

void items_set_cas_hook(items_cas_fn fn, void *ctx, uint64_t mark)
{
    pthread_mutex_lock(&cas_reserve_lock);
    cas_fn = fn;
    cas_ctx = ctx;
    store_relaxed(&cas_reserved, fn ? mark : UINT64_MAX);
    pthread_mutex_unlock(&cas_reserve_lock);
}

void items_cas_floor(uint64_t last)
{
    uint64_t cur = load_relaxed(&next_cas_id);

    while (cur < last && !cas_relaxed(&next_cas_id, &cur, last))
        ;
}

/* ---- setup ---- */

/* Sets up locks, LRUs and the sizes histogram and starts the crawler if
 * configured. 0 or -ENOMEM; before any worker runs. */
int items_init(void)
{
    for (unsigned i = 0; i < ITEM_LOCK_COUNT; i++)
        pthread_mutex_init(&item_locks[i], NULL);
    for (unsigned i = 0; i < SLABS_MAX_CLASSES; i++) {
        memset(&lrus[i], 0, sizeof(lrus[i]));
        pthread_mutex_init(&lrus[i].lock, NULL);
    }
    oldest_live = 0;
    oldest_cas = 0;
    sizes_nbuckets = settings.item_size_max / SIZES_BUCKET + 64;
    free(sizes_hist);
    sizes_hist = calloc(sizes_nbuckets, sizeof(*sizes_hist));
    if (sizes_hist == NULL)
        return -ENOMEM;
    sizes_on = false;
    if (settings.track_sizes)
        items_sizes_enable(true);
    int rc = slab_mover_start();
    if (rc == 0 && settings.lru_crawler)
        rc = crawler_start();
    return rc == -EALREADY ? 0 : rc; /* a second init keeps its crawler */
}

void items_stop(void)
{
    crawler_stop();
    slab_mover_stop();
}
