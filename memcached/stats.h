/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/stats.h - the server's counters and the "stats" command family.
 *
 * Hot-path counters live in one block per thread, written only by their
 * thread (relaxed atomic stores, so readers on other threads see whole
 * values) and summed when a client asks. "stats reset" records the sums as
 * a baseline instead of writing other threads' blocks; reports subtract it.
 * Per-class operation counters are kept by slabs.c (slabs_count()), LRU
 * counters by items.c, under their own locks.
 */
#ifndef MEMCACHED_STATS_H
#define MEMCACHED_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memcached/stat_sink.h"
#include "proto/barrier.h"

enum thread_counter {
    TC_GET_CMDS,
    TC_GET_HITS,
    TC_GET_MISSES,
    TC_GET_EXPIRED,
    TC_GET_FLUSHED,
    TC_SET_CMDS,
    TC_TOUCH_CMDS,
    TC_TOUCH_HITS,
    TC_TOUCH_MISSES,
    TC_FLUSH_CMDS,
    TC_META_CMDS,
    TC_DELETE_HITS,
    TC_DELETE_MISSES,
    TC_INCR_HITS,
    TC_INCR_MISSES,
    TC_DECR_HITS,
    TC_DECR_MISSES,
    TC_CAS_HITS,
    TC_CAS_MISSES,
    TC_CAS_BADVAL,
    TC_STORE_TOO_LARGE,
    TC_STORE_NO_MEMORY,
    TC_BYTES_READ,
    TC_BYTES_WRITTEN,
    TC_CONN_YIELDS,
    TC_IDLE_KICKS,
    TC_TOTAL_ITEMS,
    TC_TOTAL_CONNS,
    TC_REJECTED_CONNS,
    TC_AUTH_CMDS,
    TC_AUTH_ERRORS,
    TC_COUNT
};

struct thread_stats {
    uint64_t c[TC_COUNT];
    struct thread_stats *next; /* registry list, stats.c's lock */
};

extern __thread struct thread_stats *thread_stats_tls;

/* Gives the calling thread its counter block (idempotent). */
struct thread_stats *stats_thread_register(void);

/* Adds n to one of the calling thread's counters. */
static inline void stats_add(enum thread_counter which, uint64_t n)
{
    struct thread_stats *ts = thread_stats_tls;

    if (__builtin_expect(ts == NULL, 0))
        ts = stats_thread_register();
    store_relaxed(&ts->c[which], ts->c[which] + n);
}

static inline void stats_inc(enum thread_counter which)
{
    stats_add(which, 1);
}

/* Sums every thread's counters, minus the "stats reset" baseline. */
void stats_sum(uint64_t out[TC_COUNT]);

/* stats_init records the process start (for uptime); the other returns it. */
void stats_init(void);
uint32_t stats_process_started(void);

/* "stats reset": a new baseline for every counter that can be reset. */
void stats_reset(void);

#endif /* MEMCACHED_STATS_H */
