/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/slab_mover.h - "slabs reassign" and "slabs automove": the
 * thread that moves slab pages between classes (memcached's slab
 * rebalancer).
 *
 * A move (slabs.h, slabs_move_begin()) withdraws a page of the source
 * class from allocation; this thread then empties it: every live item in
 * the page is copied to another chunk of its class if one is free
 * (memcached's rescue, keeping its CAS) or else unlinked (evicted), and
 * the page changes class once all of its chunks are back. A chunk comes
 * back only when it would be reusable by any free: after its last CPU
 * reference is dropped and after the NIC reader horizon has passed it, so
 * the NIC never reads a chunk that already belongs to the new class.
 *
 * automove, memcached 1.6.18's levels: 1, this thread samples the classes
 * about once a second and moves what slab_automove.h decides (windowed LRU
 * tail ages, idle free pages to the global pool); 2, every eviction asks
 * for a page for its class from the next class with one to spare
 * (items.c calls slab_mover_reassign(-1, class)).
 */
#ifndef MEMCACHED_SLAB_MOVER_H
#define MEMCACHED_SLAB_MOVER_H

#include <stdint.h>

#include "memcached/slabs.h"

/* Starts / stops (and joins) the thread; start returns 0 or -errno. */
int slab_mover_start(void);
void slab_mover_stop(void);

/* "slabs reassign src dst": begins a move (slabs_move_begin()) and wakes
 * the thread. Returns the outcome (RUNNING also while the thread is not
 * running). Any thread. */
enum slabs_reassign slab_mover_reassign(int src, int dst);

/* memcached's slab_reassign_* counters and whether a move runs. */
struct slab_mover_stats {
    uint64_t rescues;         /* live items copied out of a moving page */
    uint64_t evictions_nomem; /* live items unlinked: no chunk to copy to */
    uint64_t inline_reclaim;  /* expired or flushed items unlinked */
    uint64_t busy_items;      /* items still referenced when unlinked */
    uint64_t running;         /* 1 while a page is being emptied */
};
void slab_mover_stats(struct slab_mover_stats *s);

#endif /* MEMCACHED_SLAB_MOVER_H */
