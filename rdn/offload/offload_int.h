/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/offload/offload_int.h - what the offload module's files share: the module
 * (offload.c: memory, geometry, horizon, stats), the control thread
 * (ctl.c: handshake connections) and the watch thread
 * (watch.c: completions, failures, reclaim epochs).
 *
 * Locks:
 *   o->lock      the client list, the pipelines of READY clients (their
 *                CQs, counters), polling the done CQ, the master queue,
 *                the epoch snapshots, the state's client list. A client
 *                not READY yet is the control thread's alone: it builds
 *                its pipeline without the lock (the only other user of
 *                the done CQ's expected count, which building bumps).
 *   o->geo_lock  the table geometry and the generation word's parts. It is
 *                taken by rdn_offload_set_table() under the cache's table
 *                lock, so nothing is called while holding it.
 * A client (struct ofl_conn) is added and freed only by the control
 * thread, under o->lock; the watch thread marks failed clients dead and
 * the control thread frees them. The statistics are relaxed atomics.
 */
#ifndef RDN_OFFLOAD_OFFLOAD_INT_H
#define RDN_OFFLOAD_OFFLOAD_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "proto/barrier.h"
#include "proto/rdn_framing.h"
#include "rdn/offload/offload.h"
#include "rdn/offload/pipeline.h"

#define OFL_SNAPS       64 /* epoch snapshots in flight (horizon) */
#define OFL_TABLE_ALIGN 4096
#define OFL_STUCK_MS    2000 /* a GET unanswered this long fails its client */
/* A re-attached client that has not resumed its handshake connection
 * this long is taken for gone (its process died with the server, or it
 * stays idle: it reconnects on its next GET). */
#define OFL_UNCLAIMED_MS 60000

enum ofl_conn_state {
    OFL_CONN_HELLO, /* waiting for the client's hello */
    OFL_CONN_READY, /* pipeline running */
    OFL_CONN_DEAD,  /* failed: the control thread frees it */
};

struct ofl_conn {
    struct ofl_conn *next;
    uint32_t id;
    int fd;
    char peer[48];
    enum ofl_conn_state state;
    struct ofl_inbuf in;
    struct ofl_pipe pipe; /* when READY */
    uint32_t depth;
    uint64_t mark[OFL_SNAPS]; /* receives seen at each epoch snapshot */
    uint64_t stuck_since_ms;  /* in-flight GETs without progress since */
    uint64_t adopted_ms;      /* re-attached then (fd < 0 until RESUME) */
    uint64_t token;           /* the welcome's */
    bool authed;              /* its AUTH passed (or none is needed) */
    uint64_t last_done;
    uint64_t refreshes, touches;
};

/* One mapped item arena; its memory has slack beyond len (arena_map). */
struct ofl_arena {
    struct ofl_arena *next;
    struct chain_buf buf;
    size_t len;
};

/*
 * What the offload keeps in its domain besides the objects themselves
 * (persist.c): the configuration the objects were made for, the
 * counters a restarted server must continue, and the clients whose
 * pipelines are persistent. Updated in place as things change.
 */
struct ofl_pclient {
    uint32_t id; /* 0: a free entry */
    uint32_t depth, slot_size, slot_rkey;
    uint64_t slot_addr;
    uint32_t flags; /* the hello's RDN_HELLO_* */
    uint32_t rsvd;
    uint64_t token; /* the welcome's (RESUME proves it) */
};

struct ofl_pstate {
    uint64_t magic;
    uint64_t tregion_len, meta_len, item_size_max;
    uint32_t iters, max_clients;
    uint32_t inval, next_id;
    uint64_t tregion_used;
    uint32_t narenas, table_gen; /* table_gen: the generation word's half */
    struct ofl_pclient client[];
};

struct rdn_offload {
    struct rdn_offload_cfg cfg;
    char listen_addr[64];
    struct rdn_cache_ops ops;
    struct rnic_device *dev;

    /* NIC memory. arena_lock guards the arena list. */
    pthread_mutex_t arena_lock;
    struct ofl_arena *arenas;
    unsigned narenas; /* mapped so far (names the next one) */
    uint32_t arena_lkey;
    struct chain_buf tbuf; /* the table region: chains READ buckets here */
    size_t tregion_used;
    struct chain_buf gen;   /* the generation word the chains write */
    struct chain_buf meta;  /* the cache's metadata (cfg.meta_len) */
    struct chain_buf state; /* struct ofl_pstate */

    /* Geometry (geo_lock). */
    pthread_mutex_t geo_lock;
    uint64_t table_addr;
    unsigned hashpower;
    uint32_t table_gen, inval;

    /* Chains and clients (lock). */
    pthread_mutex_t lock;
    struct chain_cq done;
    struct chain_q master;
    struct ofl_conn *conns;
    unsigned nconns;
    uint32_t next_id;
    uint64_t snap_epoch[OFL_SNAPS];
    uint64_t snap_head, snap_tail; /* pending snapshots [head, tail) */

    uint64_t horizon;
    unsigned active; /* clients whose pipeline may run */

    /* Threads. */
    int listen_fd, port;
    int wake[2]; /* wakes the control thread */
    pthread_t ctl_thread, watch_thread;
    bool started;
    bool stop;
    bool broken; /* the done CQ failed: no client can be served */

    /* Persistence (set at open). */
    bool persistent; /* objects are persistent in cfg.domain */
    bool reattached; /* the domain's previous resources are in use */

    /* Totals (relaxed). */
    uint64_t hits, misses, refreshes, qp_errors;
    uint64_t auth_failures; /* handshakes refused for their login */
};

/* pipeline.c */
/*
 * Records the thread's offload error message (printf format; read with
 * ofl_errmsg()) and returns err. Every ofl_ function that returns -errno
 * calls it on the way out, so its callers never print a stale message.
 */
int ofl_err(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* offload.c */
void ofl_geometry(struct rdn_offload *o, struct rdn_geometry *g);
void ofl_log(const struct rdn_offload *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
uint64_t ofl_now_ms(void);

/* ctl.c */
int ofl_ctl_listen(struct rdn_offload *o);
void *ofl_ctl_main(void *arg);
void ofl_ctl_wake(struct rdn_offload *o);
/* Frees a client (lock held): pipeline, socket, memory. */
void ofl_conn_free(struct rdn_offload *o, struct ofl_conn *c);
/* Stops a client's pipeline, keeping its counts in the totals (lock). */
void ofl_conn_stop(struct rdn_offload *o, struct ofl_conn *c);

/* The persistent state (always present; in the domain when persistent). */
static inline struct ofl_pstate *ofl_ps(const struct rdn_offload *o)
{
    return (struct ofl_pstate *)(void *)o->state.ptr;
}

/* persist.c (see offload.h, "Persistence") */
int ofl_nic_open(struct rdn_offload *o, const char *device);
void ofl_nic_close(struct rdn_offload *o);
/* The pipeline config of a client (its pipe.cfg, or for re-attaching). */
void ofl_pipe_cfg_of(struct rdn_offload *o, const struct ofl_pclient *pc,
                     struct ofl_pipe_cfg *out);
/* Item arenas: a re-attached one, or a fresh one (persistent if we are). */
int ofl_arena_get(struct rdn_offload *o, size_t len, size_t total,
                  struct ofl_arena *a);
/*
 * A client's pipeline in the domain: persist its objects (built, before it
 * counts: no lock), record it in the state once it runs, and forget it
 * before it is destroyed (both under o->lock).
 */
int ofl_client_persist(struct rdn_offload *o, struct ofl_conn *c);
int ofl_client_record(struct rdn_offload *o, const struct ofl_pclient *pc);
void ofl_client_forget(struct rdn_offload *o, struct ofl_conn *c);

/* watch.c */
void *ofl_watch_main(void *arg);
/*
 * Counts the receives and completions the watch thread has not seen yet
 * (lock held), so that reported counts are current although the thread
 * ticks in batches under load.
 */
void ofl_watch_catch_up(struct rdn_offload *o);
/* Fails a client (lock held): counted, pipeline closed, marked dead. */
void ofl_conn_fail(struct rdn_offload *o, struct ofl_conn *c, const char *why);

#endif /* RDN_OFFLOAD_OFFLOAD_INT_H */
