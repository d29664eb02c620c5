/*
 * rdn/offload.h - the server side of the offloaded GET: NIC memory for the
 * cache's table and items, the handshake listener (--rdn-port), one GET
 * pipeline per client (rdn/offload_chain.h), the re-arm thread, the reader
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
#ifndef RDN_OFFLOAD_H
#define RDN_OFFLOAD_H

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
};

struct rdn_offload_cfg {
    const char *device;      /* rnic_open() name; NULL: $RDN_DEVICE/softnic */
    const char *listen_addr; /* IPv4 address for the handshake port */
    int port;                /* handshake port; 0: any free one */
    unsigned max_clients;    /* connected clients at most */
    uint32_t iters;          /* GET iterations kept armed per client */
    uint32_t max_depth;      /* response slots a client may have */
    size_t item_size_max;    /* largest value the cache stores */
    size_t table_reserve;    /* NIC bytes for all tables, ever */
    int verbose;             /* log clients coming and going to stderr */
};

/* Defaults: iters 128, max_depth 16, max_clients 64, 127.0.0.1. */
void rdn_offload_cfg_init(struct rdn_offload_cfg *cfg);

/* Opens the NIC device and the memory the chains need. 0 or -errno. */
int rdn_offload_open(const struct rdn_offload_cfg *cfg,
                     const struct rdn_cache_ops *ops, struct rdn_offload **out);

/*
 * Item memory: len zeroed bytes of NIC memory, registered for the NIC's
 * local reads (response WRITEs gather from it; no remote access). Any
 * number of arenas may be mapped; a descriptor's lkey is
 * rdn_offload_arena_lkey() of the first one. NULL on failure.
 */
void *rdn_offload_arena_map(struct rdn_offload *o, size_t len);
void rdn_offload_arena_unmap(struct rdn_offload *o, void *addr, size_t len);
uint32_t rdn_offload_arena_lkey(const struct rdn_offload *o);

/*
 * Table memory: len zeroed bytes carved from the table region (one MR the
 * chains READ through, sized by cfg.table_reserve). Memory is never handed
 * out twice and stays readable until rdn_offload_close(), so chains of
 * clients with a stale geometry read an old table, not freed memory.
 * NULL when the region is exhausted.
 */
void *rdn_offload_table_map(struct rdn_offload *o, size_t len);
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

/* The NIC device the offload opened (its memory lives there). */
struct rnic_device *rdn_offload_device(const struct rdn_offload *o);

/* Starts the listener and the threads. 0 or -errno. */
int rdn_offload_start(struct rdn_offload *o);
/* The handshake port (after start; useful with cfg.port 0). */
int rdn_offload_port(const struct rdn_offload *o);

/* "stats": rdn_clients, rdn_get_hits, rdn_get_misses, rdn_refreshes,
 * rdn_rearms, rdn_qp_errors. */
void rdn_offload_stats(struct rdn_offload *o, rdn_stat_fn fn, void *ctx);
/* "stats rdn": the totals, then per client "client_<id>:<name>". */
void rdn_offload_client_stats(struct rdn_offload *o, rdn_stat_fn fn, void *ctx);

/* Stops the threads, tears every client down, frees the NIC memory. */
void rdn_offload_close(struct rdn_offload *o);

#endif /* RDN_OFFLOAD_H */
