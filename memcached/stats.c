/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/stats.c - the per-thread counters: registration, sums and the
 * "stats reset" baseline.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/items.h"
#include "memcached/slabs.h"
#include "memcached/stats.h"
#include "memcached/stats_prefix.h"
#include "proto/barrier.h"

__thread struct thread_stats *thread_stats_tls;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_stats *registry; /* registry_lock */
static uint64_t baseline[TC_COUNT];   /* registry_lock */
static uint32_t process_started;

struct thread_stats *stats_thread_register(void)
{
    if (thread_stats_tls)
        return thread_stats_tls;
    struct thread_stats *ts = calloc(1, sizeof(*ts));
    if (ts == NULL)
        abort(); /* a few hundred bytes at thread start */
    pthread_mutex_lock(&registry_lock);
    ts->next = registry;
    registry = ts;
    pthread_mutex_unlock(&registry_lock);
    thread_stats_tls = ts;
    return ts;
}

/* Raw sums (registry_lock held). */
static void sum_raw(uint64_t out[TC_COUNT])
{
    memset(out, 0, sizeof(uint64_t) * TC_COUNT);
    for (struct thread_stats *ts = registry; ts; ts = ts->next) {
        for (int i = 0; i < TC_COUNT; i++)
            out[i] += load_relaxed(&ts->c[i]);
    }
}

void stats_sum(uint64_t out[TC_COUNT])
{
    pthread_mutex_lock(&registry_lock);
    sum_raw(out);
    for (int i = 0; i < TC_COUNT; i++)
        out[i] -= baseline[i];
    pthread_mutex_unlock(&registry_lock);
}

void stats_reset(void)
{
    pthread_mutex_lock(&registry_lock);
    sum_raw(baseline);
    pthread_mutex_unlock(&registry_lock);
    items_stats_reset();
    slabs_stats_reset();
    stats_prefix_clear();
}

void stats_init(void)
{
    process_started = items_now();
}

uint32_t stats_process_started(void)
{
    return process_started;
}
