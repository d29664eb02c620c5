/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/rdn_glue.c - the cache's side of the offloaded GET (see
 * rdn_glue.h and rdn/offload/offload.h).
 *
 * What the NIC cannot do by itself, the glue does for it:
 *   - it has no clock: the expiry thread crawls every class once a second
 *     (crawler_crawl_class() unlinks expired and flushed items), so an
 *     expired item leaves the table within about a second; clients also
 *     check expiry times themselves (rdn/librdn/nic_client.c);
 *   - flush_all kills items without touching them: the glue changes the
 *     generation word at once (every client then asks the server, and
 *     refreshes), crawls, and holds refresh answers until the crawl ends
 *     (what the flush kills that is linked later, items.c marks expired);
 *   - freed items: slabs' reader horizon is the offload's;
 *   - LRU: clients report the keys the NIC served, in batches; each report
 *     bumps the item as a GET would (and counts as a get hit).
 *
 * Persistence: the NIC resources live in the rdn-nicd domain
 * "memcached-<tcp port>-<rdn port>", with the cache's superblock in the
 * offload's metadata (memcached/persist.h). A restarted server re-attaches
 * them and adopts the items; a clean shutdown keeps them only with
 * --rdn-keep-on-exit (a kill -9 always leaves them to the daemon).
 *
 * Locks: glue.lock protects the flush bookkeeping; the expiry thread waits
 * on glue.cond.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memcached/assoc.h"
#include "memcached/auth.h"
#include "memcached/bl_glue.h"
#include "memcached/crawler.h"
#include "memcached/items.h"
#include "memcached/persist.h"
#include "memcached/rdn_glue.h"
#include "memcached/settings.h"
#include "memcached/slabs.h"
#include "rdn/offload/offload.h"

#define EXPIRY_PERIOD_MS 1000
#define QUIESCE_MAX_S    10

static struct {
    int port; /* 0: off */
    const char *device;
    unsigned clients;
    bool keep; /* --rdn-keep-on-exit */
    char domain[64];
    struct rdn_offload *off;
    struct arena_hooks arena, table;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t expiry;
    bool expiry_started;
    bool expiry_stop;     /* (lock) */
    uint64_t flush_asked; /* flushes that took effect (lock) */
    uint64_t flush_done;  /* of those, how many crawls finished (lock) */
    uint32_t flush_at;    /* a delayed flush's time, 0 = none (lock) */
} glue = {
    .clients = 64,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
};

int rdn_glue_option(int opt, const char *value)
{
    char *end;
    long v;

    switch (opt) {
    case RDN_OPT_DEVICE:
        glue.device = value;
        return 0;
    case RDN_OPT_BASELINES:
        return bl_glue_option(value);
    case RDN_OPT_KEEP:
        glue.keep = true;
        return 0;
    case RDN_OPT_PORT:
    case RDN_OPT_CLIENTS:
        errno = 0;
        v = strtol(value, &end, 10);
        if (errno || end == value || *end || v < 1 ||
            v > (opt == RDN_OPT_PORT ? 65535 : 4096))
            return -EINVAL;
        if (opt == RDN_OPT_PORT)
            glue.port = (int)v;
        else
            glue.clients = (unsigned)v;
        return 0;
    default:
        return -EINVAL;
    }
}

bool rdn_glue_enabled(void)
{
    return glue.port != 0;
}

/* ---- hooks and cache operations --------------------------------------- */

static void *arena_map(size_t len, void *ctx)
{
    void *p = rdn_offload_arena_map(ctx, len);

    bl_glue_expose(p, len);
    return p;
}

static void arena_unmap(void *addr, size_t len, void *ctx)
{
    rdn_offload_arena_unmap(ctx, addr, len);
}

static void *table_map(size_t len, void *ctx)
{
    void *p = rdn_offload_table_map(ctx, len);

    bl_glue_expose(p, len);
    return p;
}

static void table_unmap(void *addr, size_t len, void *ctx)
{
    rdn_offload_table_unmap(ctx, addr, len);
}

static uint32_t op_now(void *ctx)
{
    (void)ctx;
    return items_now();
}

static uint64_t op_epoch(void *ctx)
{
    (void)ctx;
    return slabs_epoch();
}

static void op_epoch_advance(void *ctx)
{
    (void)ctx;
    slabs_epoch_advance();
}

static void op_touch(void *ctx, const char *key, size_t nkey)
{
    struct item *it = item_get(key, nkey, FETCH_BUMP, 0);

    (void)ctx;
    if (it)
        item_release(it);
}

/* Waits until every flush that took effect has been crawled out. */
static void op_quiesce(void *ctx)
{
    struct timespec until;

    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += QUIESCE_MAX_S;
    pthread_mutex_lock(&glue.lock);
    while (glue.flush_done < glue.flush_asked)
        if (pthread_cond_timedwait(&glue.cond, &glue.lock, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&glue.lock);
}

/* The handshake's login (docs/wire.md, AUTH): -Y's or -S's credentials. */
static bool op_auth(void *ctx, const char *user, size_t nuser, const char *pass,
                    size_t npass)
{
    (void)ctx;
    return auth_check(user, nuser, pass, npass);
}

static uint64_t horizon(void *ctx)
{
    return rdn_offload_horizon(ctx);
}

static uint32_t arena_lkey(void *ctx)
{
    return rdn_offload_arena_lkey(ctx);
}

static int discard(void *ctx)
{
    return rdn_offload_discard(ctx);
}

static void table_switched(void *ctx, const struct assoc_info *info)
{
    rdn_offload_set_table(ctx, info->buckets, info->hashpower,
                          info->generation);
}

/*
 * NIC bytes for every table the cache may ever map: tables double, so all
 * of them together stay under twice the last one. The last one is sized
 * for an arena full of the smallest items at the growth threshold, one
 * doubling more for growths forced by collisions.
 */
static size_t table_reserve(void)
{
    size_t arena =
        slabs_arena_bytes(settings.maxbytes, settings.factor,
                          (size_t)settings.chunk_size, settings.item_size_max);
    uint64_t items = arena / (SLABS_ITEM_HEADER + (size_t)settings.chunk_size);
    uint64_t buckets = items * 100 / ASSOC_EXPAND_PERCENT / RDN_BUCKET_SLOTS;
    unsigned hp = settings.hashpower_init ? (unsigned)settings.hashpower_init
                                          : ASSOC_DEFAULT_HASHPOWER;

    while ((UINT64_C(1) << hp) < buckets)
        hp++;
    return sizeof(struct rdn_bucket) << (hp + 2);
}

const char *rdn_glue_listen_addr(void)
{
    struct in_addr a;

    if (settings.inter && inet_pton(AF_INET, settings.inter, &a) == 1)
        return settings.inter;
    return "127.0.0.1";
}

int rdn_glue_init(void)
{
    struct rdn_cache_ops ops = {
        .now = op_now,
        .epoch = op_epoch,
        .epoch_advance = op_epoch_advance,
        .touch = op_touch,
        .quiesce = op_quiesce,
        /* An authenticating server's NIC path is no way around its login. */
        .auth = auth_enabled() ? op_auth : NULL,
    };
    struct rdn_offload_cfg cfg;
    int rc;

    if (!rdn_glue_enabled()) {
        if (!bl_glue_enabled())
            return 0;
        fprintf(stderr, "--rdn-baselines needs --rdn-port\n");
        return -EINVAL;
    }
    if (bl_glue_enabled() && auth_enabled()) {
        /* They hand out table and item keys to anyone who asks. */
        fprintf(stderr, "--rdn-baselines cannot be used with -S or -Y (the "
                        "baselines have no login)\n");
        return -EINVAL;
    }
    rdn_offload_cfg_init(&cfg);
    cfg.device = glue.device;
    cfg.listen_addr = rdn_glue_listen_addr();
    cfg.port = glue.port;
    cfg.max_clients = glue.clients;
    cfg.item_size_max = settings.item_size_max;
    cfg.table_reserve = table_reserve();
    cfg.verbose = settings.verbose;
    snprintf(glue.domain, sizeof(glue.domain), "memcached-%d-%d", settings.port,
             glue.port);
    cfg.domain = glue.domain;
    cfg.meta_len = persist_meta_len();
    cfg.keep_on_close = glue.keep;
    rc = rdn_offload_open(&cfg, &ops, &glue.off);
    if (rc == 0)
        rc = bl_glue_init(rdn_offload_device(glue.off));
    if (rc < 0)
        return rc;
    glue.arena = (struct arena_hooks){arena_map, arena_unmap, glue.off};
    glue.table = (struct arena_hooks){table_map, table_unmap, glue.off};
    return 0;
}

void rdn_glue_storage_env(struct persist_env *env)
{
    if (!glue.off)
        return;
    env->arena_hooks = &glue.arena;
    env->table_hooks = &glue.table;
    env->meta = rdn_offload_meta(glue.off);
    env->reattached = rdn_offload_reattached(glue.off);
    env->lkey = arena_lkey;
    env->discard = discard;
    env->on_switch = table_switched;
    env->ctx = glue.off;
}

/* ---- expiry and flush ------------------------------------------------- */

static void crawl_all(void)
{
    for (unsigned id = 1; id <= slabs_nclasses(); id++)
        crawler_crawl_class(id);
}

/*
 * Once a second (and at once after a flush): crawls every class. A flush
 * that took effect gets a second pass, for items whose lock was busy.
 */
/* Invalidates the NIC's table for a delayed flush that came due (lock). */
static void flush_if_due(void)
{
    if (glue.flush_at && glue.flush_at <= items_now()) {
        glue.flush_at = 0;
        glue.flush_asked++;
        rdn_offload_invalidate(glue.off);
        pthread_cond_broadcast(&glue.cond);
    }
}

/* items' due hook: a CPU reader found a flush in force; the NIC's clients
 * stop trusting the table before that reader takes any item for flushed
 * (the expiry thread alone would do it only when it next wakes). */
static void flush_due(void)
{
    pthread_mutex_lock(&glue.lock);
    flush_if_due();
    pthread_mutex_unlock(&glue.lock);
}

static void *expiry_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&glue.lock);
    while (!glue.expiry_stop) {
        struct timespec until;
        uint64_t asked;
        bool flush;

        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += EXPIRY_PERIOD_MS / 1000;
        /* A delayed flush due next second: wake when that second starts. */
        if (glue.flush_at && (int32_t)(glue.flush_at - items_now()) < 2)
            until.tv_nsec = 0, until.tv_sec = time(NULL) + 1;
        if (glue.flush_done == glue.flush_asked &&
            !(glue.flush_at && glue.flush_at <= items_now()))
            pthread_cond_timedwait(&glue.cond, &glue.lock, &until);
        if (glue.expiry_stop)
            break;
        flush_if_due();
        asked = glue.flush_asked;
        flush = glue.flush_done < asked;
        pthread_mutex_unlock(&glue.lock);
        crawl_all();
        if (flush)
            crawl_all();
        pthread_mutex_lock(&glue.lock);
        if (flush) {
            glue.flush_done = asked;
            pthread_cond_broadcast(&glue.cond);
        }
    }
    pthread_mutex_unlock(&glue.lock);
    return NULL;
}

void rdn_glue_flush(uint32_t when)
{
    /* The CPU path takes the items for dead from when - 1 (items_flush(),
     * as memcached does): the NIC's clients must stop trusting them then. */
    uint32_t at = when ? when - 1 : 0;

    if (!glue.off)
        return;
    pthread_mutex_lock(&glue.lock);
    if (at == 0 || at <= items_now()) {
        /* Before "OK" goes out: no client may trust the NIC any more. */
        glue.flush_asked++;
        rdn_offload_invalidate(glue.off);
    } else {
        glue.flush_at = at;
    }
    pthread_cond_broadcast(&glue.cond);
    pthread_mutex_unlock(&glue.lock);
}

/* ---- start ------------------------------------------------------------ */

int rdn_glue_start(void)
{
    int rc;

    if (!glue.off)
        return 0;
    /* The table was reported by the storage's switch hook already. */
    assoc_set_lkey(rdn_offload_arena_lkey(glue.off));
    slabs_set_horizon(horizon, glue.off);
    items_set_due_hook(flush_due);
    /* A delayed flush_all the previous server was waiting for (adopted
     * storage): the NIC's clients must stop trusting the table then. */
    if (items_flush_current().oldest_live > items_now())
        rdn_glue_flush(items_flush_current().oldest_live + 1);
    rc = -pthread_create(&glue.expiry, NULL, expiry_main, NULL);
    if (rc == 0) {
        glue.expiry_started = true;
        rc = rdn_offload_start(glue.off);
        if (rc == 0)
            rc = bl_glue_start();
    }
    if (rc < 0)
        fprintf(stderr, "failed to start offloaded GETs: %s\n", strerror(-rc));
    return rc;
}

void rdn_glue_stop(void)
{
    if (!glue.off)
        return;
    bl_glue_stop();
    if (glue.expiry_started) {
        pthread_mutex_lock(&glue.lock);
        glue.expiry_stop = true;
        pthread_cond_broadcast(&glue.cond);
        pthread_mutex_unlock(&glue.lock);
        pthread_join(glue.expiry, NULL);
        glue.expiry_started = false;
    }
    rdn_offload_stop(glue.off);
}

void rdn_glue_close(void)
{
    if (!glue.off)
        return;
    slabs_set_horizon(NULL, NULL);
    rdn_offload_close(glue.off);
    glue.off = NULL;
}

/* ---- stats ------------------------------------------------------------ */

void rdn_glue_stats(stat_sink_fn sink, void *ctx)
{
    if (glue.off)
        rdn_offload_stats(glue.off, sink, ctx);
}

void rdn_glue_stats_rdn(stat_sink_fn sink, void *ctx)
{
    if (glue.off)
        rdn_offload_client_stats(glue.off, sink, ctx);
    else
        sink(ctx, "rdn_enabled", "no");
}
