/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/persist_adopt.c - validating a previous process's table and
 * items and rebuilding the CPU-side state from them (see persist.h for the
 * checks and the consistent-snapshot rule).
 *
 * Two passes. The first only reads: it checks every non-empty slot of the
 * current table and of the table a growth was migrating from, marks the
 * chunk of each valid item in a bitmap per page (which also finds an item
 * named twice), and lists the live items and the slots to clear. If the
 * rule holds, the second pass writes: it clears those slots, gives every
 * page back to its class (unmarked chunks become free), starts the index
 * over the tables and links the live items.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/items.h"
#include "memcached/persist_int.h"
#include "memcached/settings.h"
#include "memcached/slabs.h"
#include "proto/barrier.h"
#include "proto/byteorder.h"

/* One table as the walk sees it. */
struct view {
    struct rdn_bucket *buckets;
    uint64_t mask;
};

/* A slot as 8-byte words: match, count|lkey, address (proto/table.h). */
static uint64_t *slot_at(const struct view *tv, uint64_t b, unsigned s)
{
    return (uint64_t *)&tv->buckets[b].slot[s];
}

/* A slot's content, decoded. */
struct slot_val {
    uint64_t match;
    uint32_t count, lkey;
    uint64_t addr;
};

struct walk {
    const struct persist_sb *sb;
    char *base;
    size_t stride;
    uint32_t lkey, now;
    struct items_flush_cut cut; /* flush_all's, as recorded */
    struct view t[2]; /* the current table, then the one migrated from */
    unsigned nt;
    uint64_t **in_use; /* a chunk bitmap per page */
    struct item **live;
    size_t nlive, cap_live;
    uint64_t **clear; /* match words of slots to empty */
    size_t nclear, cap_clear;
    uint64_t anomalies, max_stamp;
    const char *first_why;
};

/* A refusal's reason outlives persist_adopt(): persist.c logs it. */
static char refusal[192];

static struct slot_val slot_read(const uint64_t *w)
{
    struct mlx5_data_seg d;
    struct slot_val v;

    memcpy(&d, &w[1], sizeof(d));
    v.match = w[0];
    v.count = be32_to_cpu(d.byte_count);
    v.lkey = be32_to_cpu(d.lkey);
    v.addr = be64_to_cpu(d.addr);
    return v;
}

/* Appends p to a growing array; false when memory ran out. */
static bool push(void ***arr, size_t *n, size_t *cap, void *p)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 1024;
        void **a = realloc(*arr, ncap * sizeof(*a));

        if (a == NULL)
            return false;
        *arr = a;
        *cap = ncap;
    }
    (*arr)[(*n)++] = p;
    return true;
}

/* The page and chunk index of item it (already checked to be a chunk). */
static void chunk_of(const struct walk *wk, const struct item *it, size_t *page,
                     unsigned *chunk)
{
    size_t off = (size_t)((const char *)it - wk->base);

    *page = off / wk->stride;
    *chunk = (unsigned)(off % wk->stride /
                        slabs_chunk_size(wk->sb->page_class[*page]));
}

/* Where a slot names: the chunk holding the item, or why it is none. */
static const char *check_place(const struct walk *wk, uint64_t addr,
                               struct item **out)
{
    uint64_t hdr = offsetof(struct item, nic);
    uint64_t base = (uint64_t)(uintptr_t)wk->base, off, in;
    unsigned cls;

    if (addr < base + hdr)
        return "an item outside the arena";
    off = addr - hdr - base;
    if (off / wk->stride >= wk->sb->npages)
        return "an item outside the pages handed out";
    cls = wk->sb->page_class[off / wk->stride];
    if (cls == 0 || cls > slabs_nclasses())
        return "an item in a page without a class";
    in = off % wk->stride;
    if (in % slabs_chunk_size(cls) ||
        in / slabs_chunk_size(cls) >= slabs_perslab(cls))
        return "an item off a chunk boundary";
    *out = (struct item *)(wk->base + off);
    return (*out)->clsid == cls ? NULL
                                : "an item whose class is not its page's";
}

/*
 * Why the slot with content v in bucket b of tv does not name a valid item
 * (persist.h, step 2), or NULL with *out the item and *kh its key's hash.
 */
static const char *check_slot(const struct walk *wk, const struct view *tv,
                              uint64_t b, const struct slot_val *v,
                              struct item **out, struct rdn_keyhash *kh)
{
    const char *why = check_place(wk, v->addr, out);
    struct item *it = *out;

    if (why != NULL)
        return why;
    size_t nkey = it->nic.nkey, nbytes = it->nic.nbytes;
    if (nkey < 1 || nkey > RDN_KEY_MAX || nbytes > settings.item_size_max)
        return "an item with a bad key or value length";
    if (slabs_clsid(item_ntotal(nkey, nbytes)) != it->clsid)
        return "an item whose size is not its class's";
    if (it->nic.stamp == 0 || it->nic.stamp != *rdn_item_tail(&it->nic))
        return "a torn item (head and tail stamps differ)";
    if (v->count != rdn_item_total_len(nkey, nbytes) || v->lkey != wk->lkey)
        return "a descriptor that does not match its item";
    assoc_keyhash(item_key(it), nkey, kh);
    if (v->match != rdn_slot_match(kh->fp))
        return "a fingerprint that is not its key's";
    if ((kh->bucket1 & tv->mask) != b && (kh->bucket2 & tv->mask) != b)
        return "an item in a bucket that is not its key's";
    return NULL;
}

/*
 * True if another valid item with it's key and a greater stamp (or the
 * same stamp at a greater address) is in one of the key's buckets: then it
 * is the one to drop.
 */
static bool key_has_newer(const struct walk *wk, const struct item *it,
                          const struct rdn_keyhash *kh, uint64_t match)
{
    for (unsigned k = 0; k < wk->nt; k++) {
        const struct view *tv = &wk->t[k];
        uint64_t bs[2] = {kh->bucket1 & tv->mask, kh->bucket2 & tv->mask};

        for (int j = 0; j < 2; j++)
            for (unsigned s = 0; s < RDN_BUCKET_SLOTS; s++) {
                struct slot_val v = slot_read(slot_at(tv, bs[j], s));
                struct rdn_keyhash kh2;
                struct item *o;

                if (v.match != match ||
                    v.addr == (uint64_t)(uintptr_t)&it->nic ||
                    check_slot(wk, tv, bs[j], &v, &o, &kh2) != NULL ||
                    o->nic.nkey != it->nic.nkey ||
                    memcmp(item_key(o), item_key((struct item *)it),
                           it->nic.nkey) != 0)
                    continue;
                if (o->nic.stamp > it->nic.stamp ||
                    (o->nic.stamp == it->nic.stamp && o > it))
                    return true;
            }
    }
    return false;
}

/* Counts an inconsistent slot; false once the rule is broken. */
static bool anomaly(struct walk *wk, const char *why)
{
    if (++wk->anomalies == 1) {
        wk->first_why = why;
        return true;
    }
    snprintf(refusal, sizeof(refusal),
             "more than one inconsistent slot (%s; %s)", wk->first_why, why);
    return false;
}

/* Judges one non-empty slot. -ENOMEM, -EINVAL (rule broken) or 0. */
static int walk_slot(struct walk *wk, const struct view *tv, uint64_t b,
                     uint64_t *w, struct persist_result *res)
{
    struct slot_val v = slot_read(w);
    struct rdn_keyhash kh;
    struct item *it;
    const char *why = check_slot(wk, tv, b, &v, &it, &kh);
    size_t page;
    unsigned chunk;

    if (why == NULL) {
        chunk_of(wk, it, &page, &chunk);
        if (wk->in_use[page][chunk / 64] & (UINT64_C(1) << (chunk % 64)))
            why = "an item named by two slots";
        else if (key_has_newer(wk, it, &kh, v.match))
            why = "a key with two items";
    }
    if (why != NULL && !anomaly(wk, why))
        return -EINVAL;
    if (why == NULL && it->nic.stamp > wk->max_stamp)
        wk->max_stamp = it->nic.stamp;
    if (why == NULL && !item_is_dead_by(it, wk->now, &wk->cut)) {
        wk->in_use[page][chunk / 64] |= UINT64_C(1) << (chunk % 64);
        return push((void ***)&wk->live, &wk->nlive, &wk->cap_live, it)
                   ? 0
                   : -ENOMEM;
    }
    if (why == NULL)
        res->expired++;
    return push((void ***)&wk->clear, &wk->nclear, &wk->cap_clear, w) ? 0
                                                                      : -ENOMEM;
}

/* Pass 1 over every slot. 0, -EINVAL (refused) or -ENOMEM. */
static int walk_tables(struct walk *wk, struct persist_result *res)
{
    uint64_t empty = rdn_slot_match(0);

    for (unsigned k = 0; k < wk->nt; k++) {
        struct view *tv = &wk->t[k];

        for (uint64_t b = 0; b <= tv->mask; b++)
            for (unsigned s = 0; s < RDN_BUCKET_SLOTS; s++) {
                uint64_t *w = slot_at(tv, b, s);
                int rc;

                if (w[0] != empty && (rc = walk_slot(wk, tv, b, w, res)) < 0)
                    return rc;
            }
    }
    return 0;
}

/* The tables the record names; NULL or why they cannot be used. */
static const char *take_tables(struct walk *wk, const struct persist_table *t)
{
    if (t == NULL)
        return "table record checksum mismatch";
    if (t->buckets == 0 || t->buckets % 8 ||
        t->hashpower < ASSOC_MIN_HASHPOWER ||
        t->hashpower > ASSOC_MAX_HASHPOWER)
        return "bad table record";
    if ((t->old_buckets != 0) != (t->generation & 1) ||
        (t->old_buckets != 0 &&
         (t->old_buckets % 8 || t->old_hashpower < ASSOC_MIN_HASHPOWER ||
          t->old_hashpower >= t->hashpower)))
        return "bad table record (growth)";
    wk->t[0] = (struct view){(struct rdn_bucket *)(uintptr_t)t->buckets,
                             (UINT64_C(1) << t->hashpower) - 1};
    wk->nt = 1;
    if (t->old_buckets != 0)
        wk->t[wk->nt++] =
            (struct view){(struct rdn_bucket *)(uintptr_t)t->old_buckets,
                          (UINT64_C(1) << t->old_hashpower) - 1};
    return NULL;
}

/* A bitmap per page handed out; false when memory ran out. */
static bool bitmaps_new(struct walk *wk)
{
    size_t n = wk->sb->npages;

    wk->in_use = calloc(n ? n : 1, sizeof(*wk->in_use));
    if (wk->in_use == NULL)
        return false;
    for (size_t p = 0; p < n; p++) {
        unsigned per = slabs_perslab(wk->sb->page_class[p]);

        wk->in_use[p] = calloc(per / 64 + 1, sizeof(uint64_t));
        if (wk->in_use[p] == NULL)
            return false;
    }
    return true;
}

static void walk_free(struct walk *wk)
{
    if (wk->in_use != NULL)
        for (size_t p = 0; p < wk->sb->npages; p++)
            free(wk->in_use[p]);
    free(wk->in_use);
    free(wk->live);
    free(wk->clear);
}

/* The pages' classes must be classes; NULL or why not. */
static const char *check_pages(const struct persist_sb *sb)
{
    for (size_t p = 0; p < sb->npages; p++)
        if (sb->page_class[p] == 0 || sb->page_class[p] > slabs_nclasses())
            return "a page handed out without a valid class";
    return NULL;
}

/* Pass 2: the rule holds; make the memory and the CPU state agree. */
static int apply(struct walk *wk, const struct persist_table *t,
                 const struct persist_env *env, struct persist_result *res)
{
    uint64_t empty = rdn_slot_match(0);
    struct assoc_adopt a = {
        .buckets = wk->t[0].buckets,
        .hashpower = (unsigned)t->hashpower,
        .old_buckets = wk->nt > 1 ? wk->t[1].buckets : NULL,
        .old_hashpower = (unsigned)t->old_hashpower,
        .generation = t->generation,
    };
    int rc;

    for (size_t i = 0; i < wk->nclear; i++)
        store_release(wk->clear[i], empty);
    rc = arena_set_used(wk->sb->npages * wk->stride);
    for (size_t p = 0; rc == 0 && p < wk->sb->npages; p++)
        rc = slabs_adopt_page(p, wk->sb->page_class[p], wk->in_use[p]);
    if (rc < 0)
        return rc; /* the caller destroys the slabs and the arena */
    rc = assoc_adopt(&a, env->table_hooks);
    if (rc < 0)
        return rc;
    rc = items_init();
    if (rc < 0)
        goto err_stop_assoc;
    items_flush_restore(&wk->cut);
    for (size_t i = 0; i < wk->nlive; i++)
        item_adopt(wk->live[i], wk->live[i]->clsid);
    /* Above every id a previous process handed out: the items left, the
     * flush cut-off (a lower id would be flushed at birth), the mark. */
    items_cas_floor(wk->max_stamp);
    items_cas_floor(wk->cut.oldest_cas);
    items_cas_floor(wk->sb->cas_mark);
    res->items = wk->nlive;
    res->dropped = wk->anomalies;
    res->adopted = true;
    if (wk->anomalies)
        fprintf(stderr, "rdn: dropped one inconsistent slot: %s\n",
                wk->first_why);
    return 0;

err_stop_assoc:
    assoc_stop();
    return rc;
}

int persist_adopt(const struct persist_sb *sb, const struct persist_env *env,
                  struct persist_result *res)
{
    const struct persist_table *t = persist_table_current(sb);
    struct walk wk = {
        .sb = sb,
        .base = arena_base(),
        .stride = slabs_page_stride(),
        .lkey = env->lkey ? env->lkey(env->ctx) : 0,
        .now = items_now(),
    };
    const char *why = take_tables(&wk, t);
    int rc = 0;

    if (why == NULL && !persist_flush_current(sb, &wk.cut))
        why = "flush record checksum mismatch";
    if (why == NULL)
        why = check_pages(sb);
    if (why == NULL && !bitmaps_new(&wk))
        rc = -ENOMEM;
    if (why == NULL && rc == 0) {
        rc = walk_tables(&wk, res);
        if (rc == -EINVAL) {
            why = refusal;
            rc = 0;
        }
    }
    if (why != NULL) {
        res->refused = why;
        res->expired = 0;
    } else if (rc == 0)
        rc = apply(&wk, t, env, res);
    walk_free(&wk);
    return rc;
}
