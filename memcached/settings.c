/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/settings.c - the configuration's defaults.
 */
#include "config.h"

#include <pthread.h>

#include "memcached/settings.h"

struct settings settings;

/* Guards the run-time tunables that are not a single word. */
static pthread_mutex_t lru_lock = PTHREAD_MUTEX_INITIALIZER;

void settings_lru_get(struct lru_tunables *out)
{
    pthread_mutex_lock(&lru_lock);
    *out = settings.lru;
    pthread_mutex_unlock(&lru_lock);
}

void settings_lru_set(const struct lru_tunables *in)
{
    pthread_mutex_lock(&lru_lock);
    settings.lru = *in;
    pthread_mutex_unlock(&lru_lock);
}

double settings_automove_ratio(void)
{
    pthread_mutex_lock(&lru_lock);
    double r = settings.slab_automove_ratio;
    pthread_mutex_unlock(&lru_lock);
    return r;
}

void settings_set_automove_ratio(double ratio)
{
    pthread_mutex_lock(&lru_lock);
    settings.slab_automove_ratio = ratio;
    pthread_mutex_unlock(&lru_lock);
}

void settings_init(void)
{
    settings = (struct settings){
        .maxbytes = 64 * 1024 * 1024,
        .maxconns = 1024,
        .port = 11211,
        .udpport = 0,
        .inter = NULL,
        .verbose = 0,
        .evict_to_free = true,
        .socketpath = NULL,
        .access = 0700,
        .shutdown_command = false,
        .factor = 1.25,
        .chunk_size = 48,
        .num_threads = 4,
        .prefix_delimiter = ':',
        .detail_enabled = false,
        .reqs_per_event = 20,
        .backlog = 1024,
        .protocol = MC_PROTO_NEGOTIATE,
        .item_size_max = 1024 * 1024,
        .maxconns_fast = true,
        .hashpower_init = 0,
        .flush_enabled = true,
        .use_cas = true,
        .dump_enabled = true,
        .lru_crawler = true,
        .lru_crawler_sleep = 100,
        .lru_crawler_tocrawl = 0,
        .idle_timeout = 0,
        .watcher_logbuf_size = 256 * 1024,
        .worker_logbuf_size = 64 * 1024,
        .read_buf_mem_limit = 0,
        .slab_chunk_max = MC_SLAB_PAGE_SIZE / 2,
        .slab_reassign = 1,
        .slab_automove = 1,
        .slab_automove_ratio = 0.8,
        .slab_automove_window = 30,
        .lru_maintainer = 1,
        .lru =
            {
                .hot_lru_pct = 20,
                .warm_lru_pct = 40,
                .hot_max_factor = 0.2,
                .warm_max_factor = 2.0,
                .segmented = true,
                .temp_lru = false,
                .temporary_ttl = 61,
            },
        .watch_enabled = true,
        .track_sizes = false,
        .daemonize = false,
        .pid_file = NULL,
        .username = NULL,
    };
}
