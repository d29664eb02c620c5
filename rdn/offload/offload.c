/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/offload/offload.c - the offload module: the NIC device, the memory the
 * cache keeps its table and items in, the table geometry and generation word,
 * the reclaim horizon, statistics, start and stop (see offload.h). The
 * handshake is in ctl.c, the watch thread in watch.c.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/barrier.h"
#include "rdn/offload/offload_int.h"

#define OFL_DEFAULT_ITERS   128
#define OFL_DEFAULT_DEPTH   16
#define OFL_DEFAULT_CLIENTS 64

void rdn_offload_cfg_init(struct rdn_offload_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->listen_addr = "127.0.0.1";
    cfg->max_clients = OFL_DEFAULT_CLIENTS;
    cfg->iters = OFL_DEFAULT_ITERS;
    cfg->max_depth = OFL_DEFAULT_DEPTH;
    cfg->item_size_max = 1024 * 1024;
    cfg->table_reserve = (size_t)96 << 20;
}

uint64_t ofl_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void ofl_log(const struct rdn_offload *o, const char *fmt, ...)
{
    va_list ap;

    if (!o->cfg.verbose)
        return;
    va_start(ap, fmt);
    fputs("rdn: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static bool pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

static bool cfg_ok(const struct rdn_offload_cfg *c)
{
    return c->listen_addr && strlen(c->listen_addr) < 64 &&
           c->max_clients > 0 && c->max_clients <= 4096 && pow2(c->iters) &&
           c->iters >= 4 && c->iters <= OFL_MAX_ITERS && pow2(c->max_depth) &&
           c->max_depth <= c->iters / 2 && c->item_size_max >= 1024 &&
           c->item_size_max <= (1u << 30) &&
           c->table_reserve >= OFL_TABLE_ALIGN && c->port >= 0 &&
           c->port <= 65535;
}

/* Stores the generation word the chains write (geo_lock held). */
static void publish_gen(struct rdn_offload *o)
{
    store_seq_cst((uint64_t *)o->gen.ptr, rdn_gen_word(o->table_gen, o->inval));
    ofl_ps(o)->inval = o->inval;
    ofl_ps(o)->table_gen = o->table_gen;
}

int rdn_offload_open(const struct rdn_offload_cfg *cfg,
                     const struct rdn_cache_ops *ops, struct rdn_offload **out)
{
    struct rdn_offload *o;
    int rc;

    if (!cfg || !ops || !out || !ops->now || !ops->epoch ||
        !ops->epoch_advance || !ops->touch || !ops->quiesce || !cfg_ok(cfg))
        return -EINVAL;
    o = calloc(1, sizeof(*o));
    if (!o)
        return -ENOMEM;
    o->cfg = *cfg;
    strcpy(o->listen_addr, cfg->listen_addr);
    o->cfg.listen_addr = o->listen_addr;
    o->cfg.device = NULL; /* not kept: the caller's string */
    o->ops = *ops;
    o->listen_fd = o->wake[0] = o->wake[1] = -1;
    pthread_mutex_init(&o->arena_lock, NULL);
    pthread_mutex_init(&o->geo_lock, NULL);
    pthread_mutex_init(&o->lock, NULL);
    store_seq_cst(&o->horizon, ops->epoch(ops->ctx));
    rc = ofl_nic_open(o, cfg->device);
    if (rc < 0) {
        fprintf(stderr, "rdn: cannot set up the NIC: %s (%s)\n", strerror(-rc),
                ofl_errmsg());
        rdn_offload_close(o);
        return rc;
    }
    /* A re-attached word stays as the chains write it (clients compare
     * with it) until the cache reports its table again. */
    if (!o->reattached)
        publish_gen(o);
    *out = o;
    return 0;
}

/* ---- memory ----------------------------------------------------------- */

void *rdn_offload_arena_map(struct rdn_offload *o, size_t len)
{
    /* A descriptor racing with a replace may pair a new address with an
     * old, longer byte count: the slack keeps that read inside the MR. */
    size_t slack =
        rdn_item_total_len(RDN_KEY_MAX, o->cfg.item_size_max) + OFL_TABLE_ALIGN;
    struct ofl_arena *a = calloc(1, sizeof(*a));

    if (!a)
        return NULL;
    pthread_mutex_lock(&o->arena_lock);
    if (ofl_arena_get(o, len, len + slack, a) < 0) {
        pthread_mutex_unlock(&o->arena_lock);
        free(a);
        return NULL;
    }
    if (!o->arenas)
        o->arena_lkey = a->buf.mr->lkey;
    a->next = o->arenas;
    o->arenas = a;
    pthread_mutex_unlock(&o->arena_lock);
    return a->buf.ptr;
}

void rdn_offload_arena_unmap(struct rdn_offload *o, void *addr, size_t len)
{
    struct ofl_arena **pp, *a = NULL;

    (void)len;
    pthread_mutex_lock(&o->arena_lock);
    for (pp = &o->arenas; *pp; pp = &(*pp)->next)
        if ((*pp)->buf.ptr == addr) {
            a = *pp;
            *pp = a->next;
            break;
        }
    pthread_mutex_unlock(&o->arena_lock);
    if (!a)
        return;
    chain_buf_close(&a->buf);
    free(a);
}

uint32_t rdn_offload_arena_lkey(const struct rdn_offload *o)
{
    return o->arena_lkey;
}

void *rdn_offload_table_map(struct rdn_offload *o, size_t len)
{
    size_t n = (len + OFL_TABLE_ALIGN - 1) & ~(size_t)(OFL_TABLE_ALIGN - 1);
    size_t off = fetch_add_seq_cst(&o->tregion_used, n);

    if (off + n > o->tbuf.len || off + n < off) {
        fetch_sub_seq_cst(&o->tregion_used, n);
        ofl_log(o, "table region exhausted (%zu bytes reserved)", o->tbuf.len);
        return NULL;
    }
    ofl_ps(o)->tregion_used = off + n; /* the cache maps one at a time */
    return o->tbuf.ptr + off;
}

void rdn_offload_table_unmap(struct rdn_offload *o, void *addr, size_t len)
{
    /* Kept: a client with a stale geometry may still send its address. */
    (void)o;
    (void)addr;
    (void)len;
}

/* ---- geometry --------------------------------------------------------- */

void rdn_offload_set_table(struct rdn_offload *o, void *buckets,
                           unsigned hashpower, uint64_t generation)
{
    pthread_mutex_lock(&o->geo_lock);
    o->table_addr = (uint64_t)(uintptr_t)buckets;
    o->hashpower = hashpower;
    o->table_gen = (uint32_t)generation;
    publish_gen(o);
    pthread_mutex_unlock(&o->geo_lock);
}

void rdn_offload_invalidate(struct rdn_offload *o)
{
    pthread_mutex_lock(&o->geo_lock);
    o->inval++;
    publish_gen(o);
    pthread_mutex_unlock(&o->geo_lock);
}

void ofl_geometry(struct rdn_offload *o, struct rdn_geometry *g)
{
    uint32_t now = o->ops.now(o->ops.ctx);

    memset(g, 0, sizeof(*g));
    strncpy(g->hash, RDN_HASH_NAME, sizeof(g->hash));
    g->fp_bits = RDN_FP_BITS;
    g->bucket_slots = RDN_BUCKET_SLOTS;
    g->bucket_bytes = sizeof(struct rdn_bucket);
    g->item_size_max = (uint32_t)o->cfg.item_size_max;
    g->server_time = now;
    pthread_mutex_lock(&o->geo_lock);
    g->table_addr = o->table_addr;
    g->hashpower = o->hashpower;
    g->gen_word = rdn_gen_word(o->table_gen, o->inval);
    g->flags = (o->table_gen & 1) ? RDN_GEO_EXPANDING : 0;
    pthread_mutex_unlock(&o->geo_lock);
}

uint64_t rdn_offload_horizon(struct rdn_offload *o)
{
    if (load_seq_cst(&o->active) == 0)
        return UINT64_MAX; /* no pipeline exists: nothing reads items */
    return load_seq_cst(&o->horizon);
}

/* ---- start and stop --------------------------------------------------- */

int rdn_offload_start(struct rdn_offload *o)
{
    int rc;

    if (!o || o->started)
        return -EINVAL;
    if (!o->table_addr || !o->arenas) {
        fprintf(stderr, "rdn: no table or arena was mapped\n");
        return -EINVAL;
    }
    rc = ofl_ctl_listen(o);
    if (rc < 0) {
        fprintf(stderr, "rdn: %s\n", ofl_errmsg());
        return rc;
    }
    rc = -pthread_create(&o->watch_thread, NULL, ofl_watch_main, o);
    if (rc < 0)
        return rc;
    rc = -pthread_create(&o->ctl_thread, NULL, ofl_ctl_main, o);
    if (rc < 0)
        goto err_join_watch;
    o->started = true;
    ofl_log(o, "offloaded GETs on port %d (%s)", o->port,
            rnic_device_name(o->dev));
    return 0;

err_join_watch:
    store_seq_cst(&o->stop, true);
    pthread_join(o->watch_thread, NULL);
    return rc;
}

struct rnic_device *rdn_offload_device(const struct rdn_offload *o)
{
    return o ? o->dev : NULL;
}

int rdn_offload_port(const struct rdn_offload *o)
{
    return o ? o->port : -1;
}

void rdn_offload_stop(struct rdn_offload *o)
{
    if (!o || !o->started)
        return;
    store_seq_cst(&o->stop, true);
    ofl_ctl_wake(o);
    pthread_join(o->ctl_thread, NULL);
    pthread_join(o->watch_thread, NULL);
    o->started = false;
}

void rdn_offload_close(struct rdn_offload *o)
{
    if (!o)
        return;
    rdn_offload_stop(o);
    if (o->listen_fd >= 0)
        close(o->listen_fd);
    for (int i = 0; i < 2; i++)
        if (o->wake[i] >= 0)
            close(o->wake[i]);
    if (o->dev)
        ofl_nic_close(o);
    pthread_mutex_destroy(&o->lock);
    pthread_mutex_destroy(&o->geo_lock);
    pthread_mutex_destroy(&o->arena_lock);
    free(o);
}

bool rdn_offload_reattached(const struct rdn_offload *o)
{
    return o->reattached;
}

void *rdn_offload_meta(struct rdn_offload *o)
{
    return o->cfg.meta_len ? o->meta.ptr : NULL;
}

/* ---- statistics ------------------------------------------------------- */

static void stat_u64(rdn_stat_fn fn, void *ctx, const char *name, uint64_t v)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%" PRIu64, v);
    fn(ctx, name, buf);
}

/* Reports the totals: departed clients' counts plus the live pipelines'
 * (under o->lock). */
void rdn_offload_stats(struct rdn_offload *o, rdn_stat_fn fn, void *ctx)
{
    uint64_t hits = load_relaxed(&o->hits);
    uint64_t misses = load_relaxed(&o->misses);

    pthread_mutex_lock(&o->lock);
    ofl_watch_catch_up(o);
    for (struct ofl_conn *c = o->conns; c; c = c->next)
        if (c->state == OFL_CONN_READY) {
            hits += c->pipe.hits;
            misses += c->pipe.misses;
        }
    pthread_mutex_unlock(&o->lock);
    stat_u64(fn, ctx, "rdn_clients", load_seq_cst(&o->active));
    stat_u64(fn, ctx, "rdn_get_hits", hits);
    stat_u64(fn, ctx, "rdn_get_misses", misses);
    stat_u64(fn, ctx, "rdn_refreshes", load_seq_cst(&o->refreshes));
    stat_u64(fn, ctx, "rdn_qp_errors", load_seq_cst(&o->qp_errors));
    stat_u64(fn, ctx, "rdn_auth_failures", load_seq_cst(&o->auth_failures));
}

static void client_stat(rdn_stat_fn fn, void *ctx, const struct ofl_conn *c,
                        const char *what, uint64_t v)
{
    char name[64];

    snprintf(name, sizeof(name), "client_%" PRIu32 ":%s", c->id, what);
    stat_u64(fn, ctx, name, v);
}

void rdn_offload_client_stats(struct rdn_offload *o, rdn_stat_fn fn, void *ctx)
{
    struct rdn_geometry g;
    char name[64];

    rdn_offload_stats(o, fn, ctx);
    ofl_geometry(o, &g);
    stat_u64(fn, ctx, "rdn_port", (uint64_t)o->port);
    fn(ctx, "rdn_device", rnic_device_name(o->dev));
    stat_u64(fn, ctx, "rdn_hashpower", g.hashpower);
    stat_u64(fn, ctx, "rdn_generation_word", g.gen_word);
    stat_u64(fn, ctx, "rdn_iters", o->cfg.iters);
    stat_u64(fn, ctx, "rdn_horizon_lag",
             o->ops.epoch(o->ops.ctx) - load_seq_cst(&o->horizon));
    pthread_mutex_lock(&o->lock);
    ofl_watch_catch_up(o);
    for (struct ofl_conn *c = o->conns; c; c = c->next) {
        if (c->state != OFL_CONN_READY)
            continue;
        snprintf(name, sizeof(name), "client_%" PRIu32 ":peer", c->id);
        fn(ctx, name, c->peer);
        client_stat(fn, ctx, c, "gets", c->pipe.done);
        client_stat(fn, ctx, c, "hits", c->pipe.hits);
        client_stat(fn, ctx, c, "misses", c->pipe.misses);
        client_stat(fn, ctx, c, "inflight", ofl_pipe_inflight(&c->pipe));
        client_stat(fn, ctx, c, "depth", c->depth);
        client_stat(fn, ctx, c, "refreshes", c->refreshes);
        client_stat(fn, ctx, c, "lru_touches", c->touches);
    }
    pthread_mutex_unlock(&o->lock);
}
