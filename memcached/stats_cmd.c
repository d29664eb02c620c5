/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/stats_cmd.c - the "stats" command family, with memcached
 * 1.6.18's names and order so tools that parse them work.
 */
#include "config.h"

#include <event2/event.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "memcached/assoc.h"
#include "memcached/compat_opts.h"
#include "memcached/conn.h"
#include "memcached/crawler.h"
#include "memcached/items.h"
#include "memcached/listen.h"
#include "memcached/proto_parse.h"
#include "memcached/rdn_glue.h"
#include "memcached/settings.h"
#include "memcached/slab_mover.h"
#include "memcached/slabs.h"
#include "memcached/stats.h"
#include "memcached/stats_cmd.h"
#include "memcached/stats_prefix.h"
#include "memcached/thread.h"
#include "memcached/tls.h"
#include "memcached/watch.h"

#define CACHEDUMP_MAX_BYTES (2 * 1024 * 1024) /* as memcached */

static void conn_sink(void *ctx, const char *name, const char *value)
{
    conn_out_printf(ctx, "STAT %s %s\r\n", name, value);
}

/* In the reporting functions: sink and ctx are their parameters. */
#define STAT_U64(name, v) stat_sinkf(sink, ctx, name, "%" PRIu64, (uint64_t)(v))
#define STAT_STR(name, v) sink(ctx, name, v)

static void rusage_stats(stat_sink_fn sink, void *ctx)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    stat_sinkf(sink, ctx, "rusage_user", "%ld.%06ld", (long)ru.ru_utime.tv_sec,
               (long)ru.ru_utime.tv_usec);
    stat_sinkf(sink, ctx, "rusage_system", "%ld.%06ld",
               (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
}

void stats_general(stat_sink_fn sink, void *ctx)
{
    uint64_t s[TC_COUNT];
    struct items_totals it;
    struct slab_mover_stats mv;
    struct watch_stats ws;
    uint64_t moved, pool, bufs, bufs_free;
    uint32_t now = items_now();

    stats_sum(s);
    items_totals(&it);
    STAT_U64("pid", getpid());
    STAT_U64("uptime", now - stats_process_started());
    STAT_U64("time", now);
    STAT_STR("version", MC_VERSION);
    STAT_STR("libevent", event_get_version());
    STAT_U64("pointer_size", 8 * sizeof(void *));
    rusage_stats(sink, ctx);
    STAT_U64("max_connections", settings.maxconns);
    STAT_U64("curr_connections", conns_current());
    STAT_U64("total_connections", s[TC_TOTAL_CONNS]);
    STAT_U64("rejected_connections", s[TC_REJECTED_CONNS]);
    STAT_U64("connection_structures", conns_structures());
    /* memcached's response objects and read buffers are one kind of
     * buffer here, the workers': counted as read buffers. */
    threads_buf_stats(&bufs, &bufs_free);
    STAT_U64("response_obj_oom", 0);
    STAT_U64("response_obj_count", 0);
    STAT_U64("response_obj_bytes", 0);
    STAT_U64("read_buf_count", bufs);
    STAT_U64("read_buf_bytes", bufs * WORKER_BUF_SIZE);
    STAT_U64("read_buf_bytes_free", bufs_free * WORKER_BUF_SIZE);
    STAT_U64("read_buf_oom", 0);
    /* memcached holds 5 descriptors per worker back from -c, which is
     * its descriptor limit too; here -c counts client connections only */
    STAT_U64("reserved_fds", 0);
    STAT_U64("cmd_get", s[TC_GET_CMDS]);
    STAT_U64("cmd_set", s[TC_SET_CMDS]);
    STAT_U64("cmd_flush", s[TC_FLUSH_CMDS]);
    STAT_U64("cmd_touch", s[TC_TOUCH_CMDS]);
    STAT_U64("cmd_meta", s[TC_META_CMDS]);
    STAT_U64("get_hits", s[TC_GET_HITS]);
    STAT_U64("get_misses", s[TC_GET_MISSES]);
    STAT_U64("get_expired", s[TC_GET_EXPIRED]);
    STAT_U64("get_flushed", s[TC_GET_FLUSHED]);
    STAT_U64("delete_misses", s[TC_DELETE_MISSES]);
    STAT_U64("delete_hits", s[TC_DELETE_HITS]);
    STAT_U64("incr_misses", s[TC_INCR_MISSES]);
    STAT_U64("incr_hits", s[TC_INCR_HITS]);
    STAT_U64("decr_misses", s[TC_DECR_MISSES]);
    STAT_U64("decr_hits", s[TC_DECR_HITS]);
    STAT_U64("cas_misses", s[TC_CAS_MISSES]);
    STAT_U64("cas_hits", s[TC_CAS_HITS]);
    STAT_U64("cas_badval", s[TC_CAS_BADVAL]);
    STAT_U64("touch_hits", s[TC_TOUCH_HITS]);
    STAT_U64("touch_misses", s[TC_TOUCH_MISSES]);
    STAT_U64("store_too_large", s[TC_STORE_TOO_LARGE]);
    STAT_U64("store_no_memory", s[TC_STORE_NO_MEMORY]);
    STAT_U64("auth_cmds", s[TC_AUTH_CMDS]);
    STAT_U64("auth_errors", s[TC_AUTH_ERRORS]);
    if (settings.idle_timeout)
        STAT_U64("idle_kicks", s[TC_IDLE_KICKS]); /* as memcached */
    STAT_U64("bytes_read", s[TC_BYTES_READ]);
    STAT_U64("bytes_written", s[TC_BYTES_WRITTEN]);
    STAT_U64("limit_maxbytes", SETTING_GET(maxbytes));
    STAT_U64("accepting_conns", conns_accepting());
    STAT_U64("listen_disabled_num", listen_disabled_count());
    STAT_U64("time_in_listen_disabled_us", 0);
    STAT_U64("threads", settings.num_threads);
    STAT_U64("conn_yields", s[TC_CONN_YIELDS]);
    assoc_stats(sink, ctx);
    slab_mover_stats(&mv);
    STAT_U64("slab_reassign_rescues", mv.rescues);
    STAT_U64("slab_reassign_chunk_rescues", 0); /* no chunked items here */
    STAT_U64("slab_reassign_evictions_nomem", mv.evictions_nomem);
    STAT_U64("slab_reassign_inline_reclaim", mv.inline_reclaim);
    STAT_U64("slab_reassign_busy_items", mv.busy_items);
    STAT_U64("slab_reassign_busy_deletes", 0); /* no chunked items here */
    STAT_U64("slab_reassign_running", mv.running);
    slabs_page_counts(&moved, &pool);
    STAT_U64("slabs_moved", moved);
    STAT_U64("lru_crawler_running", crawler_running());
    STAT_U64("lru_crawler_starts", it.crawler_starts);
    if (settings.lru_maintainer)
        STAT_U64("lru_maintainer_juggles", 0); /* no LRU maintainer here */
    STAT_U64("malloc_fails", 0);
    watch_stats(&ws);
    STAT_U64("log_worker_dropped", ws.worker_dropped);
    STAT_U64("log_worker_written", ws.worker_written);
    STAT_U64("log_watcher_skipped", ws.watcher_skipped);
    STAT_U64("log_watcher_sent", ws.watcher_sent);
    STAT_U64("log_watchers", ws.watchers);
    tls_stats(sink, ctx);
    STAT_U64("unexpected_napi_ids", 0);
    STAT_U64("round_robin_fallback", 0);
    STAT_U64("bytes", it.bytes);
    STAT_U64("curr_items", it.curr_items);
    STAT_U64("total_items", s[TC_TOTAL_ITEMS]);
    STAT_U64("slab_global_page_pool", pool);
    STAT_U64("expired_unfetched", it.expired_unfetched);
    STAT_U64("evicted_unfetched", it.evicted_unfetched);
    STAT_U64("evicted_active", it.evicted_active);
    STAT_U64("evictions", it.evictions);
    STAT_U64("reclaimed", it.reclaimed);
    STAT_U64("crawler_reclaimed", it.crawler_reclaimed);
    STAT_U64("crawler_items_checked", it.crawler_items_checked);
    STAT_U64("lrutail_reflocked", it.lrutail_reflocked);
    STAT_U64("moves_to_cold", 0);
    STAT_U64("moves_to_warm", 0);
    STAT_U64("moves_within_lru", 0);
    STAT_U64("direct_reclaims", it.direct_reclaims);
    STAT_U64("lru_bumps_dropped", 0);
    rdn_glue_stats(sink, ctx);
}

static const char *yes_no(bool b)
{
    return b ? "yes" : "no";
}

static const char *const protocol_names[] = {
    [MC_PROTO_NEGOTIATE] = "auto-negotiate",
    [MC_PROTO_ASCII] = "ascii",
    [MC_PROTO_BINARY] = "binary",
};

void stats_settings(stat_sink_fn sink, void *ctx)
{
    struct lru_tunables lt;

    STAT_U64("maxbytes", SETTING_GET(maxbytes));
    STAT_U64("maxconns", settings.maxconns);
    STAT_U64("tcpport", settings.port);
    STAT_U64("udpport", settings.udpport);
    STAT_STR("inter", settings.inter ? settings.inter : "NULL");
    STAT_U64("verbosity", SETTING_GET(verbose));
    STAT_U64("oldest", 0);
    STAT_STR("evictions", settings.evict_to_free ? "on" : "off");
    STAT_STR("domain_socket",
             settings.socketpath ? settings.socketpath : "NULL");
    stat_sinkf(sink, ctx, "umask", "%o", settings.access);
    STAT_STR("shutdown_command", yes_no(settings.shutdown_command));
    stat_sinkf(sink, ctx, "growth_factor", "%.2f", settings.factor);
    STAT_U64("chunk_size", settings.chunk_size);
    STAT_U64("num_threads", settings.num_threads);
    STAT_U64("num_threads_per_udp", settings.num_threads);
    stat_sinkf(sink, ctx, "stat_key_prefix", "%c", settings.prefix_delimiter);
    STAT_STR("detail_enabled", yes_no(SETTING_GET(detail_enabled)));
    STAT_U64("reqs_per_event", settings.reqs_per_event);
    STAT_STR("cas_enabled", yes_no(settings.use_cas));
    STAT_U64("tcp_backlog", settings.backlog);
    STAT_STR("binding_protocol", protocol_names[settings.protocol]);
    STAT_STR("auth_enabled_sasl", yes_no(settings.sasl));
    STAT_STR("auth_enabled_ascii",
             settings.auth_file ? settings.auth_file : "no");
    STAT_U64("item_size_max", settings.item_size_max);
    STAT_STR("maxconns_fast", yes_no(settings.maxconns_fast));
    STAT_U64("hashpower_init", settings.hashpower_init);
    STAT_STR("slab_reassign", yes_no(settings.slab_reassign));
    STAT_U64("slab_automove", SETTING_GET(slab_automove));
    stat_sinkf(sink, ctx, "slab_automove_ratio", "%.2f",
               settings_automove_ratio());
    STAT_U64("slab_automove_window", settings.slab_automove_window);
    stat_sinkf(sink, ctx, "slab_chunk_max", "%d", settings.slab_chunk_max);
    STAT_STR("lru_crawler", yes_no(SETTING_GET(lru_crawler)));
    STAT_U64("lru_crawler_sleep", SETTING_GET(lru_crawler_sleep));
    STAT_U64("lru_crawler_tocrawl", SETTING_GET(lru_crawler_tocrawl));
    STAT_U64("tail_repair_time", 0);
    STAT_STR("flush_enabled", yes_no(settings.flush_enabled));
    STAT_STR("dump_enabled", yes_no(settings.dump_enabled));
    STAT_STR("hash_algorithm", "murmur3");
    /* memcached's segmented-LRU knobs: kept and shown, no effect here. */
    settings_lru_get(&lt);
    STAT_STR("lru_maintainer_thread", yes_no(settings.lru_maintainer));
    STAT_STR("lru_segmented", yes_no(lt.segmented));
    STAT_U64("hot_lru_pct", lt.hot_lru_pct);
    STAT_U64("warm_lru_pct", lt.warm_lru_pct);
    stat_sinkf(sink, ctx, "hot_max_factor", "%.2f", lt.hot_max_factor);
    stat_sinkf(sink, ctx, "warm_max_factor", "%.2f", lt.warm_max_factor);
    STAT_STR("temp_lru", yes_no(lt.temp_lru));
    STAT_U64("temporary_ttl", lt.temporary_ttl);
    stat_sinkf(sink, ctx, "idle_timeout", "%d", settings.idle_timeout);
    STAT_U64("watcher_logbuf_size", settings.watcher_logbuf_size);
    STAT_U64("worker_logbuf_size", settings.worker_logbuf_size);
    STAT_U64("read_buf_mem_limit", settings.read_buf_mem_limit);
    STAT_STR("track_sizes", yes_no(items_sizes_enabled()));
    STAT_STR("inline_ascii_response", "no");
    compat_stats(sink, ctx);
    tls_settings_stats(sink, ctx);
    compat_napi_stats(sink, ctx);
    STAT_STR("memory_file", "(null)");
}

void stats_sizes_switch(bool on, stat_sink_fn sink, void *ctx)
{
    if (on && !settings.use_cas) {
        /* The histogram tells items apart from older ones by CAS. */
        STAT_STR("sizes_status", "error");
        STAT_STR("sizes_error", "cas_support_disabled");
        return;
    }
    items_sizes_enable(on);
    STAT_STR("sizes_status", on ? "enabled" : "disabled");
}

static void detail_command(struct conn *c, struct token *t, size_t nt)
{
    const char *arg = nt >= 4 ? t[2].value : "";

    if (strcmp(arg, "on") == 0) {
        SETTING_SET(detail_enabled, true);
        conn_out_line(c, "OK");
    } else if (strcmp(arg, "off") == 0) {
        SETTING_SET(detail_enabled, false);
        conn_out_line(c, "OK");
    } else if (strcmp(arg, "dump") == 0) {
        size_t len;
        char *dump = stats_prefix_dump(&len);
        if (dump == NULL) {
            conn_out_line(c, "SERVER_ERROR out of memory writing stats");
            return;
        }
        conn_out_text(c, dump, len);
        free(dump);
    } else {
        conn_out_line(c, "CLIENT_ERROR usage: stats detail on|off|dump");
    }
}

struct dump_ctx {
    struct conn *c;
    size_t bytes;
};

static bool dump_item(void *ctx, const char *key, size_t nkey, uint32_t nbytes,
                      uint32_t exptime)
{
    struct dump_ctx *d = ctx;
    char line[KEY_MAX_LENGTH + 64];
    int n = snprintf(line, sizeof(line), "ITEM %.*s [%u b; %u s]\r\n",
                     (int)nkey, key, nbytes, exptime);

    if (d->bytes + (size_t)n + 5 > CACHEDUMP_MAX_BYTES)
        return false;
    d->bytes += (size_t)n;
    conn_out_text(d->c, line, (size_t)n);
    return true;
}

static void cachedump_command(struct conn *c, struct token *t, size_t nt)
{
    uint32_t id, limit;
    struct dump_ctx d = {.c = c};

    if (!settings.dump_enabled) {
        conn_out_line(c, "CLIENT_ERROR stats cachedump not allowed");
        return;
    }
    if (nt < 5) {
        conn_out_line(c, "CLIENT_ERROR bad command line");
        return;
    }
    if (!parse_u32(t[2].value, &id) || !parse_u32(t[3].value, &limit)) {
        conn_out_line(c, "CLIENT_ERROR bad command line format");
        return;
    }
    if (id >= SLABS_MAX_CLASSES) {
        conn_out_line(c, "CLIENT_ERROR Illegal slab id");
        return;
    }
    items_cachedump(id, limit, dump_item, &d);
    conn_out_text(c, "END\r\n", 5);
}

void stats_command(struct conn *c, struct token *t, size_t nt)
{
    const char *sub = nt > 2 ? t[1].value : NULL;

    if (sub == NULL) {
        stats_general(conn_sink, c);
    } else if (strcmp(sub, "reset") == 0) {
        stats_reset();
        conn_out_line(c, "RESET");
        return;
    } else if (strcmp(sub, "detail") == 0) {
        detail_command(c, t, nt);
        return;
    } else if (strcmp(sub, "cachedump") == 0) {
        cachedump_command(c, t, nt);
        return;
    } else if (strcmp(sub, "settings") == 0) {
        stats_settings(conn_sink, c);
    } else if (strcmp(sub, "conns") == 0) {
        conns_stats(conn_sink, c);
    } else if (strcmp(sub, "items") == 0) {
        items_stats(conn_sink, c);
    } else if (strcmp(sub, "slabs") == 0) {
        slabs_stats(conn_sink, c);
    } else if (strcmp(sub, "sizes") == 0) {
        items_sizes_stats(conn_sink, c);
    } else if (strcmp(sub, "rdn") == 0) {
        rdn_glue_stats_rdn(conn_sink, c);
    } else if (strcmp(sub, "sizes_enable") == 0) {
        stats_sizes_switch(true, conn_sink, c);
        return; /* memcached ends these without END */
    } else if (strcmp(sub, "sizes_disable") == 0) {
        stats_sizes_switch(false, conn_sink, c);
        return;
    } else {
        conn_out_line(c, "ERROR");
        return;
    }
    conn_out_text(c, "END\r\n", 5);
}
