/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/offload/offload.h - the server side of the offloaded GET: NIC memory for
 * the cache's table and items, the handshake listener (--rdn-port), one GET
 * pipeline per client (rdn/offload/pipeline.h), the watch thread, the reader
 * horizon that keeps freed item memory from being reused under a chain,
 * and the statistics.
 *
 * The offload never sees the cache's structures (rdn/ does not include
 * memcached/): it gets NIC memory requests through the map functions below
 * (the cache's arena and table hooks call them), the table geometry through
 * rdn_offload_set_table(), and everything else through struct
 * rdn_cache_ops.
 *
 * Order of use: rdn_offload_open(); the cache maps its arena and table
 * (rdn_offload_arena_map / _table_map) and reports the table
 * (rdn_offload_set_table); rdn_offload_start(); ...; rdn_offload_close().
 *
 * Threads: map/unmap, set_table, invalidate, horizon and the stats
 * functions are thread-safe; open, start and close are not.
 */
#ifndef RDN_OFFLOAD_OFFLOAD_H
#define RDN_OFFLOAD_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rdn_offload;

/* Receives one statistic (same shape as memcached's stat sink). */
typedef void (*rdn_stat_fn)(void *ctx, const char *name, const char *value);

/*
 * What the offload asks of the cache. Called from the offload's threads,
 * never with an offload lock held.
 */
struct rdn_cache_ops {
    void *ctx;
    /* The cache's clock (unix seconds, as item expiry times use it). */
    uint32_t (*now)(void *ctx);
    /* The reclaim epoch, and advancing it by one (see the horizon). */
    uint64_t (*epoch)(void *ctx);
    void (*epoch_advance)(void *ctx);
    /* A client reports that the NIC served this key: LRU bookkeeping. */
    void (*touch)(void *ctx, const char *key, size_t nkey);
    /*
     * Called before a client is given a geometry after an invalidation:
     * returns once the table holds no item the invalidation (flush_all)
     * killed. May block (for a crawl).
     */
    void (*quiesce)(void *ctx);
    /*
     * Optional (NULL: the handshake needs no login). Whether user:pass
     * (lengths given, any bytes) may use the offload. Set, every handshake
     * connection must send an AUTH that passes before anything else
     * (docs/wire.md); nothing about the NIC path is told before. Called
     * from the control thread; may block briefly (a password database).
     */
    bool (*auth)(void *ctx, const char *user, size_t nuser, const char *pass,
                 size_t npass);
};

struct rdn_offload_cfg {
    const char *device;      /* rnic_open() name; NULL: $RDN_DEVICE/softnic */
    const char *listen_addr; /* IPv4 address for the handshake port */
    int port;                /* handshake port; 0: any free one */
    unsigned max_clients;    /* connected clients at most */
    uint32_t iters;       /* units of each client's recycled chain (<= 512) */
    uint32_t max_depth;   /* response slots a client may have */
    size_t item_size_max; /* largest value the cache stores */
    size_t table_reserve; /* NIC bytes for all tables, ever */
    int verbose;          /* log clients coming and going to stderr */
    /*
     * Persistence (see below): the rdn-nicd domain the NIC resources live
     * in (NULL: none), the bytes of persistent metadata the cache keeps
     * there (rdn_offload_meta()), and whether rdn_offload_close() leaves
     * everything to the daemon for the next process (true) or releases it.
     */
    const char *domain;
    size_t meta_len;
    bool keep_on_close;
};

/* Fills *cfg with the defaults: iters 128, max_depth 16, max_clients 64,
 * 127.0.0.1, no domain. */
void rdn_offload_cfg_init(struct rdn_offload_cfg *cfg);

/*
 * Opens the NIC device and the memory the chains need (the table region,
 * the generation word, the master queue and done CQ), re-attaching a
 * domain a previous process left (see "Persistence" below). cfg and ops
 * (every callback set but auth) are copied.
 *
 * Returns 0 with *out set, or -EINVAL (a bad configuration or callback
 * table), -ENOMEM, or the NIC's error (rnic_open(), chain_*; the reason
 * is printed on stderr and in ofl_errmsg()). The caller owns the offload and
 * closes it with rdn_offload_close().
 */
int rdn_offload_open(const struct rdn_offload_cfg *cfg,
                     const struct rdn_cache_ops *ops, struct rdn_offload **out);

/*
 * Item memory: len zeroed bytes of NIC memory, registered for the NIC's
 * local reads (response WRITEs gather from it; no remote access). Any
 * number of arenas may be mapped; a descriptor's lkey is
 * rdn_offload_arena_lkey() of the first one. NULL on failure.
 */
void *rdn_offload_arena_map(struct rdn_offload *o, size_t len);
/* Frees an arena from rdn_offload_arena_map() (no GET may still read it). */
void rdn_offload_arena_unmap(struct rdn_offload *o, void *addr, size_t len);
/* Returns the lkey the table's descriptors name for item memory. */
uint32_t rdn_offload_arena_lkey(const struct rdn_offload *o);

/*
 * Table memory: len zeroed bytes carved from the table region (one MR the
 * chains READ through, sized by cfg.table_reserve). Memory is never handed
 * out twice and stays readable until rdn_offload_close(), so chains of
 * clients with a stale geometry read an old table, not freed memory.
 * NULL when the region is exhausted.
 */
void *rdn_offload_table_map(struct rdn_offload *o, size_t len);
/* Gives a table back; its memory stays readable (see above), so this
 * only says the cache no longer uses it. */
void rdn_offload_table_unmap(struct rdn_offload *o, void *addr, size_t len);

/*
 * The table GETs read from now on: buckets (from rdn_offload_table_map),
 * its hashpower, and the cache's table generation (odd while a growth
 * migrates keys: NIC misses are then not final). Changes the generation
 * word, so every client refreshes. Must not block: called under the
 * cache's table lock.
 */
void rdn_offload_set_table(struct rdn_offload *o, void *buckets,
                           unsigned hashpower, uint64_t generation);

/* Makes every client refresh (flush_all): changes the generation word. */
void rdn_offload_invalidate(struct rdn_offload *o);

/*
 * The reclaim horizon: the epoch in which the oldest GET that may still
 * read item memory started, or UINT64_MAX when no client is connected.
 * Item memory freed in epoch e may be reused once this is > e.
 */
uint64_t rdn_offload_horizon(struct rdn_offload *o);

/* Returns the NIC device the offload opened (its memory lives there;
 * owned by the offload). */
struct rnic_device *rdn_offload_device(const struct rdn_offload *o);

/*
 * Starts the handshake listener (cfg.listen_addr, cfg.port) and the
 * control and watch threads; from then on the ops callbacks are called
 * from those threads. Returns 0, -EINVAL (no table or arena mapped, or
 * started already), the listen socket's error (-EADDRINUSE, ...), or
 * pthread_create()'s.
 */
int rdn_offload_start(struct rdn_offload *o);
/*
 * Returns the handshake port it listens on, once started (-1 for NULL):
 * how a caller that asked for cfg.port 0 (any free port) learns which.
 */
int rdn_offload_port(const struct rdn_offload *o);

/* Reports "stats" lines through fn: rdn_clients, rdn_get_hits,
 * rdn_get_misses, rdn_refreshes, rdn_qp_errors. */
void rdn_offload_stats(struct rdn_offload *o, rdn_stat_fn fn, void *ctx);
/* Reports "stats rdn": the totals, then per client
 * "client_<id>:<name>". */
void rdn_offload_client_stats(struct rdn_offload *o, rdn_stat_fn fn, void *ctx);

/*
 * Persistence. With cfg.domain set on a device that can persist (softnic
 * through rdn-nicd), every NIC resource is a persistent object of that
 * domain: the arena, the table region, the generation word, the cache's
 * metadata, and each client's recycled GET pipeline, which keeps answering
 * GETs with no CPU while no process owns the domain. rdn_offload_open()
 * on a domain a previous process left (it died, or closed with
 * keep_on_close) re-attaches all of it:
 *   - rdn_offload_reattached() is true;
 *   - rdn_offload_meta() returns the previous metadata, intact;
 *   - rdn_offload_arena_map() returns the previous arena (same address,
 *     contents intact) when len equals its length; another len discards
 *     everything first (rdn_offload_discard()) and maps a fresh arena;
 *   - rdn_offload_table_map() carves after the previous tables, which stay
 *     where they were (the cache finds its buckets through its metadata);
 *   - the previous clients' pipelines keep running, are watched again
 *     (statistics, failures, the reclaim horizon), and count in
 *     rdn_clients.
 * On a device without persistence, cfg.domain is ignored (logged once).
 */
bool rdn_offload_reattached(const struct rdn_offload *o);

/*
 * The cache's metadata: cfg.meta_len bytes of persistent memory (zeroed
 * when fresh), at the same address in every process of the domain. Not
 * reachable by the NIC. NULL when cfg.meta_len is 0.
 */
void *rdn_offload_meta(struct rdn_offload *o);

/*
 * Forgets what was re-attached (the cache found it invalid): closes the
 * previous clients' pipelines (their clients see an RDMA error and fall
 * back to TCP, then reconnect), zeroes the metadata, the arena and the
 * table region in place (addresses and keys unchanged), changes the
 * generation word, and from then on behaves as a fresh open.
 * rdn_offload_reattached() becomes false. 0 or -errno.
 */
int rdn_offload_discard(struct rdn_offload *o);

/*
 * Stops the listener and the threads: no cache operation is called any
 * more, the NIC goes on serving. Idempotent; rdn_offload_close() does it
 * too.
 */
void rdn_offload_stop(struct rdn_offload *o);

/*
 * Stops the threads, then either leaves every resource to the domain
 * (cfg.keep_on_close with persistence: pipelines keep serving; the next
 * rdn_offload_open() of the domain re-attaches) or tears every client
 * down and frees the NIC memory.
 */
void rdn_offload_close(struct rdn_offload *o);

#endif /* RDN_OFFLOAD_OFFLOAD_H */
