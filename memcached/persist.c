/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/persist.c - building the storage fresh or over a previous
 * process's memory, and the superblock that makes the latter possible
 * (see persist.h; the layout is in persist_int.h, the adoption itself in
 * persist_adopt.c).
 *
 * The superblock's mutable words are written by three hooks: the slab page
 * hook (page lock held: page_class[] then npages), the index's switch hook
 * (writer lock held: the spare table record, then table_seq) and the
 * flush hook (persist.flush_lock: the spare flush record, then flush_seq).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memcached/items.h"
#include "memcached/persist_int.h"
#include "memcached/settings.h"
#include "memcached/slabs.h"
#include "proto/barrier.h"

#define SUM_SEED 0x5eedu

/* The superblock the hooks keep current (NULL: nothing persists), and
 * whom table switches are passed on to. Set before serving. */
static struct {
    struct persist_sb *sb;
    assoc_switch_fn on_switch;
    void *ctx;
    pthread_mutex_t flush_lock; /* flush_all may run on several workers */
} persist = {.flush_lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t checksum(const void *p, size_t len)
{
    uint64_t h[2];

    murmur3_x64_128(p, len, SUM_SEED, h);
    return h[0];
}

static unsigned start_hashpower(void)
{
    return settings.hashpower_init ? (unsigned)settings.hashpower_init
                                   : ASSOC_DEFAULT_HASHPOWER;
}

/* The geometry the settings ask for (arena_base unknown: 0). */
static void geo_of_settings(struct persist_geo *g)
{
    size_t page = settings.item_size_max > SLABS_PAGE_SIZE
                      ? settings.item_size_max
                      : SLABS_PAGE_SIZE;
    size_t stride = (page + 63) & ~(size_t)63;
    size_t os_page = (size_t)sysconf(_SC_PAGESIZE);

    memset(g, 0, sizeof(*g));
    g->maxbytes = settings.maxbytes;
    g->item_size_max = settings.item_size_max;
    g->page_size = page;
    memcpy(&g->factor_bits, &settings.factor, sizeof(g->factor_bits));
    g->min_chunk = (uint64_t)settings.chunk_size;
    g->arena_len =
        slabs_arena_bytes(settings.maxbytes, settings.factor,
                          (size_t)settings.chunk_size, settings.item_size_max);
    /* arena_init() rounds the length up to whole system pages. */
    g->max_pages = (g->arena_len + os_page - 1) / os_page * os_page / stride;
    g->item_header = (uint32_t)offsetof(struct item, nic);
    g->min_hashpower = start_hashpower();
}

size_t persist_meta_len(void)
{
    struct persist_geo g;

    geo_of_settings(&g);
    return (sizeof(struct persist_sb) + g.max_pages + 4095) & ~(size_t)4095;
}

/* ---- the superblock --------------------------------------------------- */

static void sb_format(struct persist_sb *sb, const struct persist_geo *g)
{
    memset(sb, 0, sizeof(*sb) + g->max_pages);
    sb->version = PERSIST_VERSION;
    sb->geo = *g;
    sb->flush[0].sum =
        checksum(&sb->flush[0], offsetof(struct persist_flush, sum));
    sb->magic = PERSIST_MAGIC;
    sb->sum = checksum(sb, offsetof(struct persist_sb, sum));
}

/*
 * Why the superblock cannot describe memory for these settings (the arena
 * base is compared once the arena is mapped), or NULL.
 */
static const char *sb_check(const struct persist_sb *sb,
                            const struct persist_geo *g)
{
    const struct persist_geo *o = &sb->geo;

    if (sb->magic != PERSIST_MAGIC)
        return "no superblock";
    if (sb->version != PERSIST_VERSION)
        return "superblock version differs";
    if (sb->sum != checksum(sb, offsetof(struct persist_sb, sum)))
        return "superblock checksum mismatch";
    if (o->maxbytes != g->maxbytes)
        return "memory limit (-m) differs";
    if (o->item_size_max != g->item_size_max || o->page_size != g->page_size)
        return "item size limit (-I) differs";
    if (o->factor_bits != g->factor_bits || o->min_chunk != g->min_chunk)
        return "slab classes (-f, -n) differ";
    if (o->arena_len != g->arena_len || o->max_pages != g->max_pages)
        return "arena length differs";
    if (o->item_header != g->item_header)
        return "item layout differs";
    if (o->min_hashpower != g->min_hashpower)
        return "starting hashpower differs";
    if (sb->npages > o->max_pages)
        return "more pages than the arena holds";
    /* Marks move by whole blocks from 0; far below 2^64, so they never
     * wrap. */
    if (sb->cas_mark % ITEMS_CAS_BLOCK || sb->cas_mark > UINT64_C(1) << 62)
        return "CAS mark corrupt";
    return NULL;
}

const struct persist_table *persist_table_current(const struct persist_sb *sb)
{
    const struct persist_table *t =
        &sb->table[load_acquire(&sb->table_seq) & 1];

    return t->sum == checksum(t, offsetof(struct persist_table, sum)) ? t
                                                                      : NULL;
}

bool persist_flush_current(const struct persist_sb *sb,
                           struct items_flush_cut *cut)
{
    const struct persist_flush *f =
        &sb->flush[load_acquire(&sb->flush_seq) & 1];

    if (f->sum != checksum(f, offsetof(struct persist_flush, sum)))
        return false;
    cut->oldest_live = (uint32_t)f->oldest_live;
    cut->oldest_cas = f->oldest_cas;
    return true;
}

/* The flush hook: the spare copy, then the switch to it. */
static void flush_noted(void *ctx, const struct items_flush_cut *cut)
{
    struct persist_sb *sb = ctx;
    struct persist_flush *f;

    pthread_mutex_lock(&persist.flush_lock);
    f = &sb->flush[(sb->flush_seq + 1) & 1];
    f->oldest_live = cut->oldest_live;
    f->oldest_cas = cut->oldest_cas;
    f->sum = checksum(f, offsetof(struct persist_flush, sum));
    store_release(&sb->flush_seq, sb->flush_seq + 1);
    pthread_mutex_unlock(&persist.flush_lock);
}

/* Records the index's geometry: the spare copy, then the switch. */
static void note_table(const struct assoc_info *info)
{
    struct persist_sb *sb = persist.sb;
    uint64_t seq = sb->table_seq;
    struct persist_table *t = &sb->table[(seq + 1) & 1];

    t->buckets = (uint64_t)(uintptr_t)info->buckets;
    t->hashpower = info->hashpower;
    t->old_buckets = (uint64_t)(uintptr_t)info->old_buckets;
    t->old_hashpower = 0;
    for (uint64_t n = info->old_nbuckets; n > 1; n >>= 1)
        t->old_hashpower++;
    t->generation = info->generation;
    t->sum = checksum(t, offsetof(struct persist_table, sum));
    store_release(&sb->table_seq, seq + 1);
}

/* The index's switch hook (writer lock held). */
static void table_switched(void *ctx, const struct assoc_info *info)
{
    (void)ctx;
    if (persist.sb != NULL)
        note_table(info);
    if (persist.on_switch != NULL)
        persist.on_switch(persist.ctx, info);
}

/* The CAS hook (items' reserve lock held): the mark before the ids. */
static void cas_marked(void *ctx, uint64_t mark)
{
    struct persist_sb *sb = ctx;

    store_release(&sb->cas_mark, mark);
}

/* The slab page hook (page lock held): the class before the count. */
static void page_given(void *ctx, size_t page, unsigned clsid)
{
    struct persist_sb *sb = ctx;

    if (page >= sb->geo.max_pages)
        return; /* cannot happen: max_pages covers the whole arena */
    store_release(&sb->page_class[page], (uint8_t)clsid);
    if (page >= sb->npages)
        store_release(&sb->npages, page + 1);
}

/* ---- building the storage --------------------------------------------- */

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
           (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Refuses the previous memory: says why (always) and forgets it. */
static int refuse(const struct persist_env *env, struct persist_result *res,
                  const char *why)
{
    int rc = env->discard ? env->discard(env->ctx) : 0;

    res->refused = why;
    fprintf(stderr, "rdn: persistent table refused: %s; starting empty\n", why);
    if (rc < 0)
        fprintf(stderr, "rdn: discarding the previous memory failed: %s\n",
                strerror(-rc));
    return rc;
}

/* An empty index and LRUs over the (fresh or discarded) memory. */
static int build_fresh(const struct persist_env *env,
                       const struct persist_geo *g)
{
    int rc;

    if (env->meta != NULL)
        sb_format(env->meta, g);
    rc = assoc_init(start_hashpower(), env->table_hooks);
    if (rc < 0)
        return rc;
    rc = items_init();
    if (rc < 0)
        goto err_stop_assoc;
    return 0;

err_stop_assoc:
    assoc_stop();
    return rc;
}

/* Installs the hooks that keep the superblock current, records the index
 * as it is now, and preallocates (-L). */
static void go_live(const struct persist_env *env)
{
    persist.sb = env->meta;
    persist.on_switch = env->on_switch;
    persist.ctx = env->ctx;
    if (persist.sb != NULL) {
        slabs_set_page_hook(page_given, persist.sb);
        items_set_flush_hook(flush_noted, persist.sb);
        items_set_cas_hook(cas_marked, persist.sb, persist.sb->cas_mark);
    }
    assoc_set_switch_hook(table_switched, NULL);
    assoc_report_geometry();
    if (env->prealloc)
        slabs_prealloc();
}

static void log_adopted(const struct persist_result *res)
{
    fprintf(stderr,
            "rdn: re-attached %llu items (%llu slots dropped, %llu expired) "
            "in %.1f ms\n",
            (unsigned long long)res->items, (unsigned long long)res->dropped,
            (unsigned long long)res->expired, res->ms);
}

int persist_storage_init(const struct persist_env *env,
                         struct persist_result *res)
{
    struct persist_result local;
    struct persist_geo g;
    struct persist_sb *sb = env->meta;
    bool adopt = sb != NULL && env->reattached;
    struct timespec t0;
    const char *why = NULL;
    int rc;

    if (res == NULL)
        res = &local;
    memset(res, 0, sizeof(*res));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    geo_of_settings(&g);
    if (g.arena_len == 0)
        return -EINVAL;
    /* Checked before the arena is mapped: mapping another length makes
     * the offload discard the metadata itself. */
    if (adopt)
        why = sb_check(sb, &g);
    rc = arena_init(g.arena_len, env->arena_hooks);
    if (rc < 0)
        return rc;
    g.arena_base = (uint64_t)(uintptr_t)arena_base();
    if (adopt && why == NULL && sb->magic != PERSIST_MAGIC)
        why = "the NIC side discarded it";
    else if (adopt && why == NULL && sb->geo.arena_base != g.arena_base)
        why = "the arena came back elsewhere";
    if (why != NULL) {
        rc = refuse(env, res, why);
        if (rc < 0)
            goto err_destroy_arena;
    }
    rc = slabs_init(settings.maxbytes, settings.factor,
                    (size_t)settings.chunk_size, settings.item_size_max, false);
    if (rc < 0)
        goto err_destroy_arena;
    if (adopt && why == NULL) {
        rc = persist_adopt(sb, env, res);
        if (rc == 0 && res->refused)
            rc = refuse(env, res, res->refused);
        if (rc < 0)
            goto err_destroy_slabs;
    }
    if (!res->adopted) {
        rc = build_fresh(env, &g);
        if (rc < 0)
            goto err_destroy_slabs;
    }
    go_live(env);
    res->ms = ms_since(&t0);
    if (res->adopted)
        log_adopted(res);
    return 0;

err_destroy_slabs:
    slabs_destroy();
err_destroy_arena:
    arena_destroy();
    return rc;
}
