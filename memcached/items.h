/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/items.h - cached items: allocation, lookup, the store
 * operations, LRU eviction, expiry and flush.
 *
 * An item is one slab chunk: the CPU-side header (struct item) followed by
 * the NIC-visible struct rdn_item, its key, value, padding and tail stamp
 * (proto/item.h). Items are immutable once published: every mutation
 * (set, append, incr, marking stale, ...) builds a new item, stamps it with
 * a new CAS id at head and tail, and swaps it into the index with
 * assoc_replace(). Only CPU-side header fields and the 4-byte exptime
 * (touch) change in place.
 *
 * Lifetime: the index holds one reference on a linked item; every reader
 * (a connection sending the value) holds one more. The last release clears
 * the head stamp and hands the chunk to slabs_free(), which defers reuse
 * while NIC readers may still be in it.
 *
 * Locks (memcached's scheme): a striped item lock, chosen by the key's
 * lock32, serialises every lookup-and-use and every mutation of a key. Each
 * slab class has an LRU lock protecting its list and counters. Order: item
 * lock, then LRU lock; eviction and the crawler go the other way only with
 * trylock.
 */
#ifndef MEMCACHED_ITEMS_H
#define MEMCACHED_ITEMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memcached/settings.h"
#include "memcached/stat_sink.h"
#include "proto/barrier.h"
#include "proto/item.h"

/* it_flags bits. */
#define ITEM_LINKED     0x01 /* in the index and its class's LRU */
#define ITEM_FETCHED    0x02 /* read at least once since stored */
#define ITEM_STALE      0x04 /* marked stale (meta I flag) */
#define ITEM_TOKEN_SENT 0x08 /* a client was given the recache win (W) */
#define ITEM_CRAWLER    0x10 /* not an item: the crawler's LRU cursor */
#define ITEM_KEY_BINARY 0x20 /* stored by meta with a base64 (b) key */

struct item {
    struct item *next; /* LRU, toward the tail; class LRU lock */
    struct item *prev; /* LRU, toward the head; class LRU lock */
    uint32_t refcount; /* atomic; the index's link holds one */
    uint32_t atime;    /* last access, unix s (relaxed atomic) */
    uint32_t btime;    /* last LRU bump, unix s; class LRU lock */
    uint16_t it_flags; /* ITEM_*, atomic bit operations */
    uint8_t clsid;     /* slab class */
    uint8_t rsvd;
    struct rdn_item nic; /* last: key, value, pad, tail stamp follow */
};

_Static_assert(sizeof(struct item) % 8 == 0, "item header keeps alignment");

static inline char *item_key(struct item *it)
{
    return rdn_item_key(&it->nic);
}

static inline char *item_value(struct item *it)
{
    return rdn_item_value(&it->nic);
}

/* Chunk bytes of an item with this key and value length. */
static inline size_t item_ntotal(size_t nkey, size_t nbytes)
{
    return offsetof(struct item, nic) + rdn_item_total_len(nkey, nbytes);
}

/*
 * The item's size as memcached 1.6.18 accounts it (ITEM_ntotal): its 48-byte
 * header, the key and its NUL, 4 bytes of client flags unless they are 0,
 * the value with its "\r\n", and 8 bytes of CAS unless -C. The `bytes` and
 * `mem_requested` stats, "stats sizes", metadump and `me` report this, so
 * they read as memcached's for the same items; the chunk a class is chosen
 * by is item_ntotal() (our layout: the NIC-visible header and stamps).
 */
static inline size_t item_mc_ntotal(const struct item *it)
{
    return 48 + it->nic.nkey + 1 + (it->nic.flags ? 4 : 0) + it->nic.nbytes +
           2 + (settings.use_cas ? 8 : 0);
}

/* The CAS unique id a client sees: the item's stamp, or 0 with -C (no
 * CAS, as memcached: every compare with a given CAS then fails). The
 * stamp itself is always there, since the NIC path needs it. */
static inline uint64_t item_cas(const struct item *it)
{
    return settings.use_cas ? it->nic.stamp : 0;
}

static inline bool item_has_flag(struct item *it, uint16_t flag)
{
    return load_relaxed(&it->it_flags) & flag;
}

enum item_status {
    ITEM_OK,          /* STORED, DELETED, TOUCHED, or incr done */
    ITEM_NOT_STORED,  /* add/replace/append condition not met */
    ITEM_EXISTS,      /* CAS mismatch */
    ITEM_NOT_FOUND,   /* no such key (cas, delete, touch, incr) */
    ITEM_NON_NUMERIC, /* incr/decr on a value that is no number */
    ITEM_NO_MEMORY,   /* no memory, eviction impossible or disabled */
    ITEM_TOO_LARGE,   /* larger than the largest slab class */
};

enum store_op {
    STORE_SET,
    STORE_ADD,
    STORE_REPLACE,
    STORE_APPEND,
    STORE_PREPEND,
    STORE_CAS,
};

/*
 * Starts the LRUs, item locks and (settings.lru_crawler) the background
 * expiry crawler. slabs_init() and assoc_init() must have succeeded.
 * Returns 0 or a negative errno.
 */
int items_init(void);

/* Stops the crawler thread (shutdown and tests). */
void items_stop(void);

/* The clock items use: unix seconds, shifted by items_clock_shift(). */
uint32_t items_now(void);
void items_clock_shift(int32_t secs);

/*
 * memcached's exptime rule: 0 = never, negative = already expired, up to
 * 30 days = relative to now, beyond = absolute unix time. Returns the
 * absolute unix time (0 = never).
 */
uint32_t items_realtime(int64_t exptime);

/* An exptime every clock has passed: what a negative exptime becomes, and
 * what an item flush_all killed at birth carries for the NIC's clients. */
#define ITEMS_EXPTIME_PAST 1

/* True if an item with this exptime is expired at now. */
static inline bool items_exptime_passed(uint32_t exptime, uint32_t now)
{
    return exptime != 0 && exptime <= now;
}

/* memcached's names of a store's outcome and command, as "watch
 * mutations" reports them ("stored", ...; "set", ...). */
const char *item_store_status(enum item_status st);
const char *store_op_name(enum store_op op);

/*
 * A new, unlinked item with its header and key filled in and room for
 * nbytes of value (item_value()); the caller owns one reference and fills
 * the value. Evicts from the class's LRU when memory is short (unless -M).
 * Returns NULL with *why = ITEM_TOO_LARGE or ITEM_NO_MEMORY (storage
 * commands count those in store_too_large / store_no_memory). May be called
 * with an item lock held.
 */
struct item *item_alloc(const char *key, size_t nkey, uint32_t flags,
                        uint32_t exptime, size_t nbytes, enum item_status *why);

/* Drops one reference; the last one frees the chunk. */
void item_release(struct item *it);

/* How a fetch affects the item it finds. */
enum item_fetch {
    FETCH_BUMP = 0,    /* count a hit: mark fetched, LRU bump */
    FETCH_NO_BUMP = 1, /* meta 'u': leave access state alone */
    FETCH_TOUCH = 2,   /* also set exptime (gat, mg T) */
    FETCH_PEEK = 4,    /* internal reads: no statistics either */
};

/*
 * The live item for key, with a reference the caller releases, or NULL.
 * Expired and flushed items are unlinked on the way (lazy expiry). how is
 * a mask of enum item_fetch; exptime is used with FETCH_TOUCH. Counts
 * get_hits/get_misses (or touch_* with FETCH_TOUCH).
 */
struct item *item_get(const char *key, size_t nkey, unsigned how,
                      uint32_t exptime);

/* What a storage command asks for. */
struct store_req {
    enum store_op op;
    uint64_t cas;   /* compare value (STORE_CAS, meta C); 0 = none */
    bool set_stale; /* meta I: an older CAS stores the item as stale */
};

/*
 * Stores it (allocated by item_alloc, value filled) as req says. On
 * ITEM_OK, *cas_out (if not NULL) receives the stored item's CAS. The
 * caller keeps its reference on it and releases it. ITEM_NO_MEMORY: an
 * append/prepend could not allocate the combined item.
 */
enum item_status item_store(struct item *it, const struct store_req *req,
                            uint64_t *cas_out);

/* Sets a live item's exptime. ITEM_OK or ITEM_NOT_FOUND. */
enum item_status item_touch(const char *key, size_t nkey, uint32_t exptime);

/*
 * Deletes key; with cas != 0 (or cas_given) only if the item's CAS equals
 * it (else ITEM_EXISTS). With stale, the item is not removed but replaced by a
 * copy marked stale with a new CAS (meta md I), and exptime set when
 * set_exptime. ITEM_OK, ITEM_NOT_FOUND, ITEM_EXISTS, ITEM_NO_MEMORY.
 */
struct delete_req {
    uint64_t cas;
    bool cas_given; /* compare even a cas of 0 (meta md C0, as memcached) */
    bool stale;
    bool set_exptime;
    uint32_t exptime;
};
enum item_status item_delete(const char *key, size_t nkey,
                             const struct delete_req *req);

/* Removes key if present, without statistics: a set whose value could not
 * be stored must not leave the old value behind (as memcached). */
void item_unlink_key(const char *key, size_t nkey);

/* incr/decr and meta arithmetic. */
struct arith_req {
    bool incr;
    uint64_t delta;
    uint64_t cas; /* compare value; 0 = none */
    bool vivify;  /* create the item on a miss (meta N) */
    uint32_t viv_exptime;
    uint64_t initial; /* its value (meta J) */
    bool set_exptime; /* meta T: new exptime on success */
    uint32_t exptime;
};
struct arith_res {
    uint64_t value;
    uint64_t cas;
    uint32_t exptime;
    bool created; /* vivified on a miss */
};

/*
 * Applies delta to the decimal 64-bit unsigned value of key: incr wraps at
 * 2^64, decr stops at 0. The new value is stored as a new item (the same
 * length, space padded, when the number got shorter, as memcached does).
 * ITEM_OK, ITEM_NOT_FOUND, ITEM_EXISTS, ITEM_NON_NUMERIC, ITEM_NO_MEMORY.
 */
enum item_status item_arith(const char *key, size_t nkey,
                            const struct arith_req *req, struct arith_res *res);

/* Meta get's item-changing flags (N, R, T, u). */
struct mget_req {
    bool no_bump;     /* u */
    bool touch;       /* T */
    uint32_t exptime; /* T's exptime */
    bool vivify;      /* N */
    uint32_t viv_exptime;
    bool recache;         /* R */
    uint32_t recache_ttl; /* absolute time the item must outlive */
    bool key_binary;      /* b: a vivified item keeps a binary key */
};

/* What the client may be told, as of before this request changed it. */
struct mget_res {
    struct item *it;      /* referenced; NULL on a miss */
    bool fetched;         /* h: hit before this request */
    uint32_t last_access; /* l: seconds since the access before */
    bool won;             /* W */
    bool stale;           /* X */
    bool token_sent;      /* Z: a win went to another client already */
    uint32_t old_exptime; /* exptime before T changed it */
};

/* Meta get: a lookup with the win/stale protocol. res->it is NULL on a
 * miss (or if vivify could not allocate). */
void item_meta_get(const char *key, size_t nkey, const struct mget_req *req,
                   struct mget_res *res);

/*
 * flush_all: items stored or bumped before the absolute time when (0 =
 * now) are invalid from then on. An immediate flush also asks the crawler
 * to unlink them at once.
 */
void items_flush(uint32_t when);

/* True if it is expired or flushed at now. */
bool item_is_dead(struct item *it, uint32_t now);

/*
 * flush_all's cut-off: items bumped at or before oldest_live (0 = none), or
 * with a CAS below oldest_cas (0 = none), are dead once oldest_live <= now.
 * item_is_dead_by() judges it by a given cut-off instead of the current
 * one. Persistence: the flush hook (set before serving, called by
 * items_flush() while flush_all runs, before its reply) is told each new
 * cut-off; items_flush_restore() installs a recorded one (after
 * items_init()).
 */
struct items_flush_cut {
    uint32_t oldest_live;
    uint64_t oldest_cas;
};
bool item_is_dead_by(struct item *it, uint32_t now,
                     const struct items_flush_cut *cut);
typedef void (*items_flush_fn)(void *ctx, const struct items_flush_cut *cut);
void items_set_flush_hook(items_flush_fn fn, void *ctx);
/*
 * The due hook (set before serving) runs when item_is_dead() first finds a
 * cut-off in force that it has not run for: a delayed flush_all that just
 * came due (or an immediate one). The reader waits for it before it takes
 * any item for flushed, so whoever serves items elsewhere (the NIC) can
 * stop first. Called from any thread, with an LRU lock possibly held;
 * several may call it at once for one cut-off: it must be idempotent.
 */
typedef void (*items_due_fn)(void);
void items_set_due_hook(items_due_fn fn);
void items_flush_restore(const struct items_flush_cut *cut);
/* The cut-off in force (or pending, for a delayed flush_all). */
struct items_flush_cut items_flush_current(void);

/*
 * Re-attach (memcached/persist.h), before clients are served: item_adopt()
 * links an item that is already in the index and lies in a chunk of class
 * clsid into that class's LRU (in the order of the calls, the last one
 * most recent) and counts it in curr_items and bytes (not total_items);
 * items_cas_floor() makes every CAS id handed out from now on greater
 * than last.
 */
void item_adopt(struct item *it, unsigned clsid);
void items_cas_floor(uint64_t last);
/*
 * fn(ctx, mark) is called before any CAS id >= the current mark is handed
 * out, with a new mark above it; the caller records it so that a later
 * process starts above it (items_cas_floor()). mark: the first one, ids
 * below it need no call. fn NULL: no marks.
 */
#define ITEMS_CAS_BLOCK (UINT64_C(1) << 20) /* marks move this far */
typedef void (*items_cas_fn)(void *ctx, uint64_t mark);
void items_set_cas_hook(items_cas_fn fn, void *ctx, uint64_t mark);

/* Totals over every class for "stats". */
struct items_totals {
    uint64_t curr_items;
    uint64_t bytes;
    uint64_t evictions;
    uint64_t reclaimed;
    uint64_t expired_unfetched;
    uint64_t evicted_unfetched;
    uint64_t evicted_active;
    uint64_t crawler_reclaimed;
    uint64_t crawler_items_checked;
    uint64_t lrutail_reflocked;
    uint64_t direct_reclaims;
    uint64_t crawler_starts;
};
/* Fills *t with the totals now (each class's lock taken in turn). */
void items_totals(struct items_totals *t);

/* "stats items" (per class with items, memcached 1.6.18 names). */
void items_stats(stat_sink_fn sink, void *ctx);

/* "stats sizes": histogram of live items by 32-byte size buckets. */
bool items_sizes_enabled(void);
void items_sizes_enable(bool on);
void items_sizes_stats(stat_sink_fn sink, void *ctx);

/* Zeroes the LRU counters ("stats reset"). */
void items_stats_reset(void);

/*
 * "stats cachedump": calls fn for up to limit live items (0 = all) of class
 * clsid from the LRU head, until fn returns false (its output is full).
 */
typedef bool (*item_dump_fn)(void *ctx, const char *key, size_t nkey,
                             uint32_t nbytes, uint32_t exptime);
void items_cachedump(unsigned clsid, unsigned limit, item_dump_fn fn,
                     void *ctx);

#endif /* MEMCACHED_ITEMS_H */
