/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/items_int.h - the LRU structures items.c shares with the
 * crawler (crawler.c). Not for the protocol layer.
 */
#ifndef MEMCACHED_ITEMS_INT_H
#define MEMCACHED_ITEMS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "memcached/items.h"
#include "memcached/slabs.h"
#include "proto/keyhash.h"

/* One slab class's LRU: a list of linked items, most recent at the head,
 * plus its counters. Everything here is protected by lock. */
struct lru {
    pthread_mutex_t lock;
    struct item *head, *tail;
    uint64_t count; /* linked items */
    uint64_t bytes; /* their item_mc_ntotal() sum (mem_requested) */
    uint64_t evicted, evicted_nonzero, evicted_time, outofmemory;
    uint64_t reclaimed, expired_unfetched, evicted_unfetched, evicted_active;
    uint64_t crawler_reclaimed, crawler_items_checked, lrutail_reflocked;
    uint64_t direct_reclaims;
};

extern struct lru lrus[SLABS_MAX_CLASSES];

/* The striped item lock of a key hash. */
pthread_mutex_t *item_lock_for(uint32_t lock32);

/* List operations; the caller holds l->lock. */
void lru_insert_head(struct lru *l, struct item *it);
void lru_remove(struct lru *l, struct item *it);

/* Unlinks a linked item (its item lock held; lru_locked: its class's LRU
 * lock is held too). The index's reference is dropped. */
void do_item_unlink(struct item *it, const struct rdn_keyhash *kh,
                    bool lru_locked);

/*
 * Page moves (slab_mover.c): if chunk (of a class whose chunks are
 * chunk_size bytes) holds a live linked item, moves it out: unlinks it if
 * expired or flushed, else copies it to another chunk of its class (same
 * CAS; no eviction to make room) or, with no free chunk, unlinks it.
 * chunk may be free or half-written: the key is checked against the
 * index under its item lock. EVAC_BUSY is or'ed in when readers still held
 * the old item (its chunk comes back when they let go).
 */
enum item_evacuation {
    EVAC_NOT_LIVE = 0,
    EVAC_RECLAIMED = 1,
    EVAC_RESCUED = 2,
    EVAC_EVICTED = 3,
    EVAC_BUSY = 4,
};
enum item_evacuation item_evacuate(struct item *chunk, size_t chunk_size);

#endif /* MEMCACHED_ITEMS_INT_H */
