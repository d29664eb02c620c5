/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/settings.c - the configuration's defaults.
 */
#include "config.h"

#include "memcached/settings.h"

struct settings settings;

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
        .slab_chunk_max = MC_SLAB_PAGE_SIZE / 2,
        .track_sizes = false,
        .daemonize = false,
        .pid_file = NULL,
        .username = NULL,
    };
}
