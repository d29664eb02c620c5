/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/slab_automove.h - "slabs automove 1": memcached 1.6.18's
 * decision of which slab page to move where (its slab_automove.c), as a
 * state machine fed with per-class samples, so that the decisions can be
 * tested with made-up samples. The page mover (slab_mover.c) takes the
 * samples about once a second and carries out the decisions.
 *
 * The algorithm, as memcached's: each run appends one slot per class to a
 * window of slab_automove_window slots. A slot holds the class's LRU tail
 * age, whether the class evicted in that interval and its share of all
 * evictions then, and whether it was "dirty" (it evicted, ran out of
 * memory or got a page). Over the window, per class in id order:
 *  - a class with more than 2.5 pages' worth of free chunks and no dirty
 *    slot in the window gives a page to the global pool (dst 0) at once;
 *  - the oldest class (highest mean tail age) holding more than 2 pages
 *    is the candidate source;
 *  - the youngest class that evicted in more than half of the slots, or
 *    took more than a quarter of the evictions on average, is the
 *    candidate destination.
 * Once the window has filled, a page moves from the oldest to the youngest
 * when the youngest evicted in this interval and its age is below
 * slab_automove_ratio times the oldest's.
 *
 * -o slab_automove_freeratio belongs to memcached's extstore variant of
 * the algorithm, which 1.6.18 uses only with -o ext_path; this server has
 * no external storage, so, like memcached without ext_path, it does not
 * use it.
 *
 * Not thread-safe: one state is used by one thread (the mover).
 */
#ifndef MEMCACHED_SLAB_AUTOMOVE_H
#define MEMCACHED_SLAB_AUTOMOVE_H

#include <stdint.h>

#include "memcached/slabs.h"

/* One class's counters at a run (index = class id; 0 and ids beyond the
 * classes are all zero). Counters only grow; age is in seconds. */
struct automove_sample {
    uint64_t evicted;     /* evictions so far */
    uint64_t outofmemory; /* allocations failed so far */
    uint64_t age;         /* now minus the LRU tail's last bump; 0: empty */
    uint64_t pages;       /* pages the class holds */
    uint64_t free_chunks; /* chunks free in them (uncarved ones included) */
    uint64_t perslab;     /* chunks per page */
};

struct automove;

/*
 * A state for windows of window slots (>= 1; memcached requires > 2) and
 * the age ratio (memcached's slab_automove_ratio); first holds the samples
 * the first run's intervals start from (SLABS_MAX_CLASSES entries).
 * Returns NULL when out of memory. The caller frees it with automove_free().
 */
struct automove *automove_new(unsigned window, double ratio,
                              const struct automove_sample *first);
void automove_free(struct automove *a);

/*
 * One run with the samples now (SLABS_MAX_CLASSES entries): sets *src and
 * *dst to the move to make (dst 0: the global pool), or both to -1 for
 * none. The samples become the next run's starting point.
 */
void automove_run(struct automove *a, const struct automove_sample *now,
                  int *src, int *dst);

#endif /* MEMCACHED_SLAB_AUTOMOVE_H */
