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
    uint64_t bytes; /* their chunk bytes (mem_requested) */
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

#endif /* MEMCACHED_ITEMS_INT_H */
