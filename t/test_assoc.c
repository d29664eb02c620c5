/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_assoc.c - the cuckoo index: insert/find/delete/replace, the slot
 * bytes of proto/table.h, full buckets and displacement paths, colliding
 * fingerprints, the stash, growth (also under concurrent inserts and
 * lookups), the switch hook and statistics.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memcached/arena.h"
#include "memcached/assoc.h"
#include "proto/barrier.h"
#include "t/support/testutil.h"

/* ---- items and keys --------------------------------------------------- */

static uint64_t next_stamp = 1;

/* A NIC-visible item as items.c would build it (malloc'd here). */
static struct rdn_item *item_new(const char *key, const char *value)
{
    size_t nkey = strlen(key), nbytes = strlen(value);
    struct rdn_item *it = calloc(1, rdn_item_total_len(nkey, nbytes));

    REQUIRE(it != NULL);
    it->stamp = fetch_add_relaxed(&next_stamp, 1);
    it->nkey = (uint16_t)nkey;
    it->nbytes = (uint32_t)nbytes;
    memcpy(rdn_item_key(it), key, nkey);
    memcpy(rdn_item_value(it), value, nbytes);
    *rdn_item_tail(it) = it->stamp;
    return it;
}

static void key_name(char *buf, const char *prefix, unsigned i)
{
    snprintf(buf, 64, "%s:%u", prefix, i);
}

static struct rdn_item *find_key(const char *key)
{
    struct rdn_keyhash kh;

    assoc_keyhash(key, strlen(key), &kh);
    return assoc_find(key, strlen(key), &kh);
}

static int insert_item(struct rdn_item *it)
{
    struct rdn_keyhash kh;

    assoc_keyhash(rdn_item_key(it), it->nkey, &kh);
    return assoc_insert(it, &kh);
}

static int delete_item(struct rdn_item *it)
{
    struct rdn_keyhash kh;

    assoc_keyhash(rdn_item_key(it), it->nkey, &kh);
    return assoc_delete(it, &kh);
}

/* ---- statistics ------------------------------------------------------- */

static long long assoc_stat(const char *name)
{
    struct stat_rec r = {0};

    assoc_stats(record_stat, &r);
    return stat_num(&r, name);
}

/* ---- table inspection ------------------------------------------------ */

static uint64_t be64_at(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static uint32_t be32_at(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

/*
 * The match word's bytes as proto/table.h and proto/mlx5.h define them,
 * built byte by byte: opmod = fp[47:40], wqe_index = fp[39:24] (be16),
 * opcode NOP, qpn = fp[23:0] (be24), ds = 3.
 */
static void expected_match(uint64_t fp, uint8_t out[8])
{
    out[0] = (uint8_t)(fp >> 40);
    out[1] = (uint8_t)(fp >> 32);
    out[2] = (uint8_t)(fp >> 24);
    out[3] = 0x00;
    out[4] = (uint8_t)(fp >> 16);
    out[5] = (uint8_t)(fp >> 8);
    out[6] = (uint8_t)fp;
    out[7] = 0x03;
}

static uint64_t match_fp_of(const uint8_t *m)
{
    return (uint64_t)m[0] << 40 | (uint64_t)m[1] << 32 | (uint64_t)m[2] << 24 |
           (uint64_t)m[4] << 16 | (uint64_t)m[5] << 8 | m[6];
}

/*
 * An empty slot's descriptor stays executable by the NIC: the lkey, and
 * either the tombstone or an item that was there (a header with a key).
 */
static void check_empty_desc(const uint8_t *slot, uint32_t lkey)
{
    const struct rdn_item *it =
        (const struct rdn_item *)(uintptr_t)be64_at(slot + 16);

    REQUIRE(be32_at(slot + 12) == lkey);
    REQUIRE(it != NULL);
    if (it == assoc_tombstone()) {
        REQUIRE(be32_at(slot + 8) == rdn_item_total_len(0, 0));
        return;
    }
    REQUIRE(it->nkey >= 1 && it->nkey <= RDN_KEY_MAX);
    REQUIRE(be32_at(slot + 8) == rdn_item_total_len(it->nkey, it->nbytes));
}

/*
 * Walks a table byte by byte and checks every slot: empty slots are the
 * fingerprint-0 word and an executable descriptor; an occupied slot holds its
 * item's fingerprint, sits in one of its key's two buckets and describes
 * the item exactly (be32 total length, be32 lkey, be64 address). Returns
 * the number of occupied slots.
 */
static uint64_t check_table(const void *buckets, uint64_t nbuckets,
                            uint32_t lkey)
{
    const uint8_t *base = buckets;
    uint8_t empty[8], want[8];
    uint64_t used = 0, mask = nbuckets - 1;

    expected_match(0, empty);
    for (uint64_t b = 0; b < nbuckets; b++)
        for (int s = 0; s < RDN_BUCKET_SLOTS; s++) {
            const uint8_t *slot = base + b * sizeof(struct rdn_bucket) + s * 24;
            struct rdn_item *it;
            struct rdn_keyhash kh;

            if (memcmp(slot, empty, 8) == 0) {
                check_empty_desc(slot, lkey);
                continue;
            }
            used++;
            it = (struct rdn_item *)(uintptr_t)be64_at(slot + 16);
            REQUIRE(it != NULL);
            assoc_keyhash(rdn_item_key(it), it->nkey, &kh);
            expected_match(kh.fp, want);
            REQUIRE(memcmp(slot, want, 8) == 0);
            REQUIRE(match_fp_of(slot) == kh.fp);
            REQUIRE(b == (kh.bucket1 & mask) || b == (kh.bucket2 & mask));
            REQUIRE((be32_at(slot + 8)) ==
                    (rdn_item_total_len(it->nkey, it->nbytes)));
            REQUIRE(be32_at(slot + 12) == lkey);
        }
    return used;
}

/* Waits (bounded) until no expansion runs or is due; returns the final
 * info. */
static void wait_stable(struct assoc_info *info)
{
    struct timespec nap = {0, 2 * 1000 * 1000};

    for (int i = 0; i < 5000; i++) {
        assoc_get_info(info);
        /* The load trigger asks the migration thread asynchronously: "not
         * expanding" alone may be seen just before a due growth starts. */
        if (!info->expanding && assoc_count() * 100 < info->nbuckets *
                                                          RDN_BUCKET_SLOTS *
                                                          ASSOC_EXPAND_PERCENT)
            return;
        nanosleep(&nap, NULL);
    }
    ck_abort_msg("expansion did not finish");
}

/* ---- basics ------------------------------------------------------------ */

START_TEST(test_insert_find_delete)
{
    enum { N = 2000 };
    static struct rdn_item *items[N];
    char key[64];

    ck_assert_int_eq(assoc_init(12, NULL), 0);
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "basic", i);
        items[i] = item_new(key, "value");
        REQUIRE(insert_item(items[i]) == 0);
    }
    ck_assert_uint_eq(assoc_count(), N);
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "basic", i);
        REQUIRE(find_key(key) == items[i]);
    }
    ck_assert_ptr_null(find_key("basic:absent"));
    ck_assert_ptr_null(find_key("basic:20000"));
    ck_assert_ptr_null(find_key("basi"));
    for (unsigned i = 0; i < N; i += 2)
        REQUIRE(delete_item(items[i]) == 0);
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "basic", i);
        REQUIRE(find_key(key) == (i % 2 ? items[i] : NULL));
    }
    ck_assert_int_eq(delete_item(items[0]), -ENOENT);
    ck_assert_uint_eq(assoc_count(), N / 2);
    {
        struct assoc_info info;

        assoc_get_info(&info);
        REQUIRE((check_table(info.buckets, info.nbuckets, 0)) == (N / 2));
    }
    assoc_stop();
}
END_TEST

START_TEST(test_replace)
{
    struct rdn_item *a = item_new("rkey", "first");
    struct rdn_item *b = item_new("rkey", "second, longer value");
    struct rdn_item *c = item_new("rkey", "3");
    struct rdn_keyhash kh;
    struct assoc_info info;

    ck_assert_int_eq(assoc_init(4, NULL), 0);
    assoc_keyhash("rkey", 4, &kh);
    ck_assert_int_eq(assoc_replace(a, b, &kh), -ENOENT);
    ck_assert_int_eq(assoc_insert(a, &kh), 0);
    ck_assert_int_eq(assoc_replace(a, b, &kh), 0);
    ck_assert_ptr_eq(find_key("rkey"), b);
    ck_assert_int_eq(assoc_replace(a, c, &kh), -ENOENT);
    ck_assert_int_eq(assoc_replace(b, c, &kh), 0);
    ck_assert_ptr_eq(find_key("rkey"), c);
    ck_assert_uint_eq(assoc_count(), 1);
    assoc_get_info(&info);
    ck_assert_uint_eq(check_table(info.buckets, info.nbuckets, 0), 1);
    ck_assert_int_eq(assoc_delete(b, &kh), -ENOENT);
    ck_assert_int_eq(assoc_delete(c, &kh), 0);
    ck_assert_ptr_null(find_key("rkey"));
    assoc_stop();
}
END_TEST

START_TEST(test_bad_arguments)
{
    struct rdn_keyhash kh;
    struct rdn_item *it = item_new("k", "v");
    char longkey[RDN_KEY_MAX + 2];

    ck_assert_int_eq(assoc_init(0, NULL), -EINVAL);
    ck_assert_int_eq(assoc_init(ASSOC_MAX_HASHPOWER + 1, NULL), -EINVAL);
    assoc_keyhash("k", 1, &kh);
    ck_assert_ptr_null(assoc_find("k", 1, &kh)); /* not initialised */
    ck_assert_int_eq(assoc_insert(it, &kh), -EINVAL);
    ck_assert_int_eq(assoc_init(4, NULL), 0);
    ck_assert_int_eq(assoc_init(4, NULL), -EBUSY);
    ck_assert_int_eq(assoc_insert(NULL, &kh), -EINVAL);
    ck_assert_int_eq(assoc_insert(it, NULL), -EINVAL);
    ck_assert_int_eq(assoc_insert(it, &kh), 0);
    ck_assert_ptr_null(assoc_find(NULL, 1, &kh));
    ck_assert_ptr_null(assoc_find("k", 1, NULL));
    ck_assert_ptr_null(assoc_find("k", 0, &kh));
    memset(longkey, 'k', sizeof(longkey));
    ck_assert_ptr_null(assoc_find(longkey, sizeof(longkey), &kh));
    ck_assert_int_eq(assoc_delete(NULL, &kh), -EINVAL);
    assoc_stop();
    assoc_stop(); /* idempotent */
    ck_assert_int_eq(assoc_init(5, NULL), 0);
    ck_assert_ptr_null(find_key("k")); /* a fresh table */
    assoc_stop();
}
END_TEST

/* ---- slot bytes ------------------------------------------------------ */

START_TEST(test_descriptor_bytes)
{
    struct rdn_item *it = item_new("hello", "world!!");
    struct rdn_item *it2 = item_new("hello", "a much longer value here");
    struct rdn_keyhash kh;
    struct assoc_info info;
    const uint8_t *slot = NULL;
    uint8_t want[8];
    uintptr_t addr = (uintptr_t)it;

    ck_assert_int_eq(assoc_init(8, NULL), 0);
    assoc_set_lkey(0x1234abcd);
    assoc_keyhash("hello", 5, &kh);
    ck_assert_int_eq(assoc_insert(it, &kh), 0);
    assoc_get_info(&info);
    ck_assert_uint_eq(info.nbuckets, 256);
    ck_assert_uint_eq(check_table(info.buckets, 256, 0x1234abcd), 1);
    for (int b = 0; b < 2 && slot == NULL; b++) {
        uint64_t bucket = (b ? kh.bucket2 : kh.bucket1) & 255;

        for (int s = 0; s < RDN_BUCKET_SLOTS; s++) {
            const uint8_t *p = (uint8_t *)info.buckets +
                               bucket * sizeof(struct rdn_bucket) + s * 24;

            if (be64_at(p + 16) == addr)
                slot = p;
        }
    }
    ck_assert_ptr_nonnull(slot);
    expected_match(kh.fp, want);
    ck_assert_mem_eq(slot, want, 8);
    /* be32 byte count: 24 header + (5 + 7 -> 16) + 8 tail = 48 */
    ck_assert_uint_eq(slot[8], 0);
    ck_assert_uint_eq(slot[9], 0);
    ck_assert_uint_eq(slot[10], 0);
    ck_assert_uint_eq(slot[11], 48);
    ck_assert_mem_eq(slot + 12, "\x12\x34\xab\xcd", 4);
    for (int i = 0; i < 8; i++)
        REQUIRE(slot[16 + i] == (uint8_t)(addr >> (56 - 8 * i)));

    /* the lkey of existing slots is rewritten */
    assoc_set_lkey(0x55667788);
    ck_assert_mem_eq(slot + 12, "\x55\x66\x77\x88", 4);
    ck_assert_mem_eq(slot, want, 8);

    /* replace: same match word, new length and address */
    ck_assert_int_eq(assoc_replace(it, it2, &kh), 0);
    ck_assert_mem_eq(slot, want, 8);
    ck_assert_uint_eq(be32_at(slot + 8), 24 + 32 + 8);
    ck_assert_uint_eq(be64_at(slot + 16), (uintptr_t)it2);

    /* delete: back to the empty word; the descriptor still names it2, so
     * a NIC READ that raced with the delete gets a WRITE that executes */
    ck_assert_int_eq(assoc_delete(it2, &kh), 0);
    expected_match(0, want);
    ck_assert_mem_eq(slot, want, 8);
    ck_assert_mem_eq(slot, "\0\0\0\0\0\0\0\x03", 8);
    ck_assert_uint_eq(be32_at(slot + 8), 24 + 32 + 8);
    ck_assert_mem_eq(slot + 12, "\x55\x66\x77\x88", 4);
    ck_assert_uint_eq(be64_at(slot + 16), (uintptr_t)it2);
    ck_assert_uint_eq(check_table(info.buckets, 256, 0x55667788), 0);
    /* the lkey of empty slots is rewritten too */
    assoc_set_lkey(0x01020304);
    ck_assert_mem_eq(slot + 12, "\x01\x02\x03\x04", 4);
    ck_assert_uint_eq(check_table(info.buckets, 256, 0x01020304), 0);
    assoc_stop();
}
END_TEST

/* ---- what a racing NIC READ can see ---------------------------------- */

#define RACE_HP    4
#define RACE_WORDS ((1u << RACE_HP) * RDN_BUCKET_SLOTS * 3)
#define RACE_LKEY  0x0badcafeu

/* An item carved from the arena, as slabs.c hands them out. */
static struct rdn_item *arena_item(const char *key, const char *value)
{
    size_t nkey = strlen(key), nbytes = strlen(value);
    struct rdn_item *it = arena_page_alloc(rdn_item_total_len(nkey, nbytes));

    REQUIRE(it != NULL);
    it->stamp = fetch_add_relaxed(&next_stamp, 1);
    it->nkey = (uint16_t)nkey;
    it->nbytes = (uint32_t)nbytes;
    memcpy(rdn_item_key(it), key, nkey);
    memcpy(rdn_item_value(it), value, nbytes);
    *rdn_item_tail(it) = it->stamp;
    return it;
}

/*
 * Whether a WRITE gathering {count|lkey word, address word} executes on
 * the NIC: the arena's lkey and a range starting at an item (or the
 * tombstone) inside the arena, no longer than the longest item
 * (rdn_offload_arena_map registers that much past the arena's end).
 */
static bool desc_executable(uint64_t count_word, be64 addr_word, size_t longest)
{
    const uint8_t *cw = (const uint8_t *)&count_word;
    uint64_t addr = be64_to_cpu(addr_word);
    uint64_t base = (uintptr_t)arena_base();

    return be32_at(cw + 4) == RACE_LKEY && be32_at(cw) >= 32 &&
           be32_at(cw) <= longest && addr >= base &&
           addr <= base + arena_size() &&
           (addr != base + arena_size() ||
            addr == (uintptr_t)assoc_tombstone());
}

/*
 * A READ racing with a mutation may take each 8-byte word of a slot from
 * before or after it. For every slot and every such mix whose match word
 * matches some key, the descriptor must execute.
 */
static void check_mixes(const uint64_t *pre, const uint64_t *post,
                        size_t longest)
{
    uint64_t empty = rdn_slot_match(0);

    for (unsigned s = 0; s < RACE_WORDS / 3; s++)
        for (unsigned mix = 0; mix < 8; mix++) {
            const uint64_t *w[3];

            for (unsigned k = 0; k < 3; k++)
                w[k] = (mix >> k & 1 ? post : pre) + s * 3 + k;
            if (*w[0] == empty)
                continue;
            REQUIRE(desc_executable(*w[1], *(const be64 *)w[2], longest));
        }
}

/*
 * Inserts (with displacements), replaces, deletes and a growth, all in a
 * tiny table: after each, every slot's descriptor, empty or not, executes,
 * and so does every before/after mix a racing READ could combine.
 */
START_TEST(test_racing_read_never_faults)
{
    enum { N = (1 << RACE_HP) * RDN_BUCKET_SLOTS * 13 / 16 };
    struct rdn_item *items[N];
    uint64_t pre[RACE_WORDS], post[RACE_WORDS];
    struct assoc_info info;
    size_t longest = 0;
    char key[64], val[64];

    ck_assert_int_eq(arena_init(1 << 20, NULL), 0);
    ck_assert_int_eq(assoc_init(RACE_HP, NULL), 0);
    assoc_set_lkey(RACE_LKEY);
    ck_assert_ptr_eq(assoc_tombstone(), arena_zero_tail());
    for (unsigned i = 0; i < ARENA_TAIL_ZERO; i++)
        REQUIRE(((const uint8_t *)assoc_tombstone())[i] == 0);
    assoc_get_info(&info);
    memcpy(post, info.buckets, sizeof(post));
    check_mixes(post, post, 32); /* fresh: every slot the tombstone */
    for (unsigned i = 0; i < 3 * N; i++) {
        struct rdn_item *it = items[i % N];
        struct rdn_keyhash kh;

        key_name(key, "race", i % N);
        snprintf(val, sizeof(val), "%0*u", (int)(i * 7 % 40), i);
        memcpy(pre, info.buckets, sizeof(pre));
        if (i < N) { /* fills the table to 81%: displacements */
            items[i] = arena_item(key, val);
            REQUIRE(insert_item(items[i]) == 0);
        } else if (i < 2 * N) {
            items[i % N] = arena_item(key, val);
            assoc_keyhash(key, strlen(key), &kh);
            REQUIRE(assoc_replace(it, items[i % N], &kh) == 0);
        } else {
            REQUIRE(delete_item(it) == 0);
        }
        if (i < 2 * N && rdn_item_total_len(strlen(key), strlen(val)) > longest)
            longest = rdn_item_total_len(strlen(key), strlen(val));
        memcpy(post, info.buckets, sizeof(post));
        check_mixes(pre, post, longest);
        check_mixes(post, post, longest);
    }
    ck_assert_int_eq(assoc_stat("assoc_expansions"), 0);
    ck_assert_int_ge(assoc_stat("assoc_displacements"), 1);
    ck_assert_uint_eq(assoc_count(), 0);
    ck_assert_uint_eq(check_table(info.buckets, info.nbuckets, RACE_LKEY), 0);
    assoc_stop();
    arena_destroy();
}
END_TEST

/* ---- full buckets, displacement, collisions ------------------------- */

/* Finds keys "prefix:i" whose buckets at hashpower hp satisfy want. */
static int find_keys(const char *prefix, unsigned hp, uint64_t b1, int64_t b2,
                     int64_t not_b2, int count, char out[][64])
{
    uint64_t mask = (UINT64_C(1) << hp) - 1;
    int n = 0;

    for (unsigned i = 0; n < count && i < 10000000; i++) {
        struct rdn_keyhash kh;

        key_name(out[n], prefix, i);
        assoc_keyhash(out[n], strlen(out[n]), &kh);
        if ((kh.bucket1 & mask) != b1)
            continue;
        if (b2 >= 0 && (kh.bucket2 & mask) != (uint64_t)b2)
            continue;
        if (not_b2 >= 0 && (kh.bucket2 & mask) == (uint64_t)not_b2)
            continue;
        n++;
    }
    return n;
}

/*
 * Key K's buckets x and y are both full of keys whose first bucket they
 * are: K can only go in by moving a resident of x or y to its other
 * bucket.
 */
START_TEST(test_displacement_path)
{
    enum { HP = 6 };
    enum { S = RDN_BUCKET_SLOTS };
    char kx[S][64], ky[S][64];
    struct rdn_keyhash kh;
    struct rdn_item *k, *rx[S], *ry[S];
    struct assoc_info info;
    uint64_t x, y;

    ck_assert_int_eq(assoc_init(HP, NULL), 0);
    assoc_keyhash("the-key", 7, &kh);
    x = kh.bucket1 & 63;
    y = kh.bucket2 & 63;
    ck_assert_int_eq(find_keys("x", HP, x, -1, (int64_t)y, S, kx), S);
    ck_assert_int_eq(find_keys("y", HP, y, -1, (int64_t)x, S, ky), S);
    for (int i = 0; i < S; i++) {
        rx[i] = item_new(kx[i], "x");
        ry[i] = item_new(ky[i], "y");
        REQUIRE(insert_item(rx[i]) == 0);
        REQUIRE(insert_item(ry[i]) == 0);
    }
    ck_assert_int_eq(assoc_stat("assoc_displacements"), 0);
    k = item_new("the-key", "k");
    ck_assert_int_eq(assoc_insert(k, &kh), 0);
    ck_assert_int_ge(assoc_stat("assoc_displacements"), 1);
    ck_assert_int_eq(assoc_stat("assoc_stash_items"), 0);
    ck_assert_int_eq(assoc_stat("assoc_expansions"), 0);
    ck_assert_ptr_eq(find_key("the-key"), k);
    for (int i = 0; i < S; i++) {
        REQUIRE(find_key(kx[i]) == rx[i]);
        REQUIRE(find_key(ky[i]) == ry[i]);
    }
    assoc_get_info(&info);
    ck_assert_uint_eq(check_table(info.buckets, info.nbuckets, 0), 2 * S + 1);
    assoc_stop();
}
END_TEST

/*
 * A table filled to 80% with random keys (two-slot buckets place about
 * 85% before an insert finds no path): displacement paths are needed and
 * found, no growth happens, every key stays in one of its buckets.
 */
START_TEST(test_high_load)
{
    enum { HP = 10, N = (1 << HP) * RDN_BUCKET_SLOTS * 80 / 100 };
    static struct rdn_item *items[N];
    char key[64];
    struct assoc_info info;

    ck_assert_int_eq(assoc_init(HP, NULL), 0);
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "load", i);
        items[i] = item_new(key, "v");
        REQUIRE(insert_item(items[i]) == 0);
    }
    ck_assert_int_gt(assoc_stat("assoc_displacements"), 0);
    ck_assert_int_eq(assoc_stat("assoc_expansions"), 0);
    ck_assert_int_eq(assoc_stat("assoc_stash_items"), 0);
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "load", i);
        REQUIRE(find_key(key) == items[i]);
    }
    assoc_get_info(&info);
    ck_assert_uint_eq(info.hashpower, HP);
    ck_assert_uint_eq(check_table(info.buckets, info.nbuckets, 0), N);
    assoc_stop();
}
END_TEST

/*
 * 2 * RDN_BUCKET_SLOTS + 1 keys with one forged key hash (same
 * fingerprint, same buckets): the full key comparison tells them apart;
 * all but the last fill the two buckets and the last, which no
 * displacement can place, goes to the stash.
 */
START_TEST(test_fingerprint_collisions)
{
    enum { N = 2 * RDN_BUCKET_SLOTS + 1 };
    char last[64];
    struct rdn_item *items[N], *repl;
    struct rdn_keyhash kh = {.fp = 0xabcdef123456, .lock32 = 7};
    char key[64];

    kh.bucket1 = 0x1234;
    kh.bucket2 = kh.bucket1 ^ rdn_keyhash_alt(kh.fp, UINT64_MAX);
    ck_assert_int_eq(assoc_init(10, NULL), 0);
    for (int i = 0; i < N; i++) {
        key_name(key, "coll", (unsigned)i);
        items[i] = item_new(key, "v");
        REQUIRE(assoc_insert(items[i], &kh) == 0);
    }
    ck_assert_int_eq(assoc_stat("assoc_stash_items"), 1);
    ck_assert_int_eq(assoc_stat("assoc_items"), N);
    for (int i = 0; i < N; i++) {
        key_name(key, "coll", (unsigned)i);
        REQUIRE(assoc_find(key, strlen(key), &kh) == items[i]);
    }
    key_name(key, "coll", N);
    ck_assert_ptr_null(assoc_find(key, strlen(key), &kh));
    ck_assert_ptr_null(assoc_find("coll", 4, &kh));
    /* the stashed one (the last) can be replaced and deleted */
    key_name(last, "coll", N - 1);
    repl = item_new(last, "replaced");
    ck_assert_int_eq(assoc_replace(items[N - 1], repl, &kh), 0);
    ck_assert_ptr_eq(assoc_find(last, strlen(last), &kh), repl);
    ck_assert_int_eq(assoc_delete(repl, &kh), 0);
    ck_assert_int_eq(assoc_stat("assoc_stash_items"), 0);
    ck_assert_ptr_null(assoc_find(last, strlen(last), &kh));
    ck_assert_int_eq(assoc_delete(items[3], &kh), 0);
    for (int i = 0; i < N - 1; i++) {
        key_name(key, "coll", (unsigned)i);
        REQUIRE((assoc_find(key, strlen(key), &kh)) ==
                (i == 3 ? NULL : items[i]));
    }
    ck_assert_int_eq(assoc_stat("assoc_items"), N - 2);
    assoc_stop();
}
END_TEST

/*
 * Real keys that share both buckets in a 64-bucket table: the one beyond
 * both buckets' slots is stashed; a growth separates them and empties the
 * stash.
 */
START_TEST(test_stash_drains_on_growth)
{
    enum { N = 2 * RDN_BUCKET_SLOTS + 1 };
    char keys[N][64];
    struct rdn_item *items[N];
    struct rdn_keyhash kh;
    struct assoc_info info;
    uint64_t b1, b2;
    bool split = false;

    assoc_keyhash("s:0", 3, &kh);
    b1 = kh.bucket1 & 63;
    b2 = kh.bucket2 & 63;
    ck_assert_int_eq(find_keys("s", 6, b1, (int64_t)b2, -1, N, keys), N);
    for (int i = 1; i < N; i++) { /* at 128 buckets they do not all share */
        struct rdn_keyhash k2;

        assoc_keyhash(keys[i], strlen(keys[i]), &k2);
        split |= (k2.bucket1 & 127) != (kh.bucket1 & 127) ||
                 (k2.bucket2 & 127) != (kh.bucket2 & 127);
    }
    ck_assert(split);
    ck_assert_int_eq(assoc_init(6, NULL), 0);
    for (int i = 0; i < N; i++) {
        items[i] = item_new(keys[i], "v");
        REQUIRE(insert_item(items[i]) == 0);
    }
    ck_assert_int_eq(assoc_stat("assoc_stash_items"), 1);
    ck_assert_int_eq(assoc_expand(true), 0);
    ck_assert_int_eq(assoc_stat("assoc_stash_items"), 0);
    for (int i = 0; i < N; i++)
        REQUIRE(find_key(keys[i]) == items[i]);
    assoc_get_info(&info);
    ck_assert_uint_eq(info.hashpower, 7);
    ck_assert_uint_eq(check_table(info.buckets, info.nbuckets, 0), N);
    assoc_stop();
}
END_TEST

/* ---- growth ------------------------------------------------------------ */

struct switch_log {
    int n;
    struct assoc_info info[8];
};

static void log_switch(void *ctx, const struct assoc_info *info)
{
    struct switch_log *l = ctx;

    if (l->n < 8)
        l->info[l->n] = *info;
    l->n++;
}

START_TEST(test_expand_generation)
{
    enum { N = 256 * RDN_BUCKET_SLOTS / 4 }; /* a quarter full */
    static struct rdn_item *items[N];
    struct switch_log log = {0};
    struct assoc_info info;
    char key[64];

    ck_assert_int_eq(assoc_init(8, NULL), 0);
    assoc_set_switch_hook(log_switch, &log);
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "gen", i);
        items[i] = item_new(key, "v");
        REQUIRE(insert_item(items[i]) == 0);
    }
    assoc_get_info(&info);
    ck_assert_uint_eq(info.generation, 0);
    ck_assert(!info.expanding);
    ck_assert_int_eq(assoc_expand(true), 0);
    ck_assert_int_eq(log.n, 2);
    ck_assert_uint_eq(log.info[0].generation, 1);
    ck_assert(log.info[0].expanding);
    ck_assert_uint_eq(log.info[0].hashpower, 9);
    ck_assert_ptr_eq(log.info[0].old_buckets, info.buckets);
    ck_assert_uint_eq(log.info[0].old_nbuckets, 256);
    ck_assert_uint_eq(log.info[1].generation, 2);
    ck_assert(!log.info[1].expanding);
    ck_assert_ptr_null(log.info[1].old_buckets);
    assoc_get_info(&info);
    ck_assert_uint_eq(info.generation, 2);
    ck_assert_uint_eq(info.hashpower, 9);
    ck_assert_uint_eq(info.nbuckets, 512);
    ck_assert_int_eq(assoc_stat("hash_power_level"), 9);
    ck_assert_int_eq(assoc_stat("hash_bytes"), 512 * sizeof(struct rdn_bucket));
    ck_assert_int_eq(assoc_stat("hash_is_expanding"), 0);
    ck_assert_int_eq(assoc_stat("assoc_generation"), 2);
    ck_assert_int_eq(assoc_stat("assoc_expansions"), 1);
    ck_assert_uint_eq(check_table(info.buckets, info.nbuckets, 0), N);
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "gen", i);
        REQUIRE(find_key(key) == items[i]);
    }
    assoc_set_switch_hook(NULL, NULL);
    assoc_stop();
}
END_TEST

/* Inserts far beyond the first table: it grows by itself, nothing lost. */
START_TEST(test_automatic_growth)
{
    enum { N = 30000 };
    static struct rdn_item *items[N];
    char key[64];
    struct assoc_info info;

    ck_assert_int_eq(assoc_init(2, NULL), 0);
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "grow", i);
        items[i] = item_new(key, "v");
        REQUIRE(insert_item(items[i]) == 0);
    }
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "grow", i);
        REQUIRE(find_key(key) == items[i]);
    }
    wait_stable(&info);
    ck_assert_uint_ge(info.hashpower, 14); /* 30000 / 2 slots / 85% */
    ck_assert_uint_eq(info.generation % 2, 0);
    ck_assert_uint_eq(info.generation,
                      2 * (uint64_t)assoc_stat("assoc_expansions"));
    ck_assert_uint_eq(check_table(info.buckets, info.nbuckets, 0) +
                          (uint64_t)assoc_stat("assoc_stash_items"),
                      N);
    assoc_stop();
}
END_TEST

/* Deletes and replaces while the old table is being migrated. */
START_TEST(test_mutations_during_migration)
{
    enum { N = (1 << 13) * RDN_BUCKET_SLOTS * 6 / 10 };
    static struct rdn_item *items[N];
    char key[64];
    struct assoc_info info;

    ck_assert_int_eq(assoc_init(13, NULL), 0);
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "mig", i);
        items[i] = item_new(key, "v");
        REQUIRE(insert_item(items[i]) == 0);
    }
    ck_assert_int_eq(assoc_expand(false), 0);
    assoc_get_info(&info); /* expanding at generation 1, or done at 2 */
    ck_assert(info.expanding ? info.generation == 1 : info.generation == 2);
    ck_assert_uint_eq(info.hashpower, 14);
    for (unsigned i = 0; i < N; i++) {
        struct rdn_keyhash kh;

        key_name(key, "mig", i);
        assoc_keyhash(key, strlen(key), &kh);
        if (i % 3 == 0) {
            REQUIRE(assoc_delete(items[i], &kh) == 0);
        } else if (i % 3 == 1) {
            struct rdn_item *r = item_new(key, "replaced");

            REQUIRE(assoc_replace(items[i], r, &kh) == 0);
            items[i] = r;
        }
    }
    wait_stable(&info);
    for (unsigned i = 0; i < N; i++) {
        key_name(key, "mig", i);
        REQUIRE(find_key(key) == (i % 3 == 0 ? NULL : items[i]));
    }
    ck_assert_uint_eq(assoc_count(), N - (N + 2) / 3);
    ck_assert_uint_eq(check_table(info.buckets, info.nbuckets, 0),
                      assoc_count());
    assoc_stop();
}
END_TEST

/* ---- concurrency ----------------------------------------------------- */

enum { WRITERS = 2, PER_WRITER = 40000, READERS = 2 };

struct shared {
    struct rdn_item *items[WRITERS][PER_WRITER];
    struct rdn_item *repl[WRITERS][PER_WRITER];
    unsigned published[WRITERS];
    int writers_done;
    long misses, wrong, lookups;
};

static struct shared *sh;

/*
 * Inserts its keys, and replaces every 8th key after inserting it (a
 * reader may then see either version, never neither).
 */
static void *writer(void *arg)
{
    unsigned w = (unsigned)(uintptr_t)arg;
    char key[64];

    for (unsigned i = 0; i < PER_WRITER; i++) {
        struct rdn_keyhash kh;
        struct rdn_item *it = sh->items[w][i];

        key_name(key, w ? "w1" : "w0", i);
        assoc_keyhash(key, strlen(key), &kh);
        REQUIRE(assoc_insert(it, &kh) == 0);
        store_seq_cst(&sh->published[w], i + 1);
        if (i % 8 == 0)
            REQUIRE(assoc_replace(it, sh->repl[w][i], &kh) == 0);
    }
    fetch_add_seq_cst(&sh->writers_done, 1);
    return NULL;
}

/* Looks up random published keys until the writers are done. */
static void *reader(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 7919 + 1;
    char key[64];

    while (load_seq_cst(&sh->writers_done) < WRITERS) {
        for (int k = 0; k < 64; k++) {
            unsigned w = rand_r(&seed) % WRITERS;
            unsigned n = load_seq_cst(&sh->published[w]);
            unsigned i;
            struct rdn_item *it;

            if (n == 0)
                continue;
            i = rand_r(&seed) % n;
            key_name(key, w ? "w1" : "w0", i);
            it = find_key(key);
            fetch_add_seq_cst(&sh->lookups, 1);
            if (it == NULL)
                fetch_add_seq_cst(&sh->misses, 1);
            else if (it != sh->items[w][i] && it != sh->repl[w][i])
                fetch_add_seq_cst(&sh->wrong, 1);
        }
    }
    return NULL;
}

/*
 * Two writers insert 80000 keys into a 16-slot table (about twelve
 * growths, each migrated in the background) while two readers look up
 * keys already inserted: not one lookup may miss or return another item.
 */
START_TEST(test_concurrent_growth)
{
    pthread_t wt[WRITERS], rt[READERS];
    char key[64];
    struct assoc_info info;

    sh = calloc(1, sizeof(*sh));
    for (unsigned w = 0; w < WRITERS; w++)
        for (unsigned i = 0; i < PER_WRITER; i++) {
            key_name(key, w ? "w1" : "w0", i);
            sh->items[w][i] = item_new(key, "value");
            if (i % 8 == 0)
                sh->repl[w][i] = item_new(key, "replacement");
        }
    ck_assert_int_eq(assoc_init(2, NULL), 0);
    for (unsigned r = 0; r < READERS; r++)
        pthread_create(&rt[r], NULL, reader, (void *)(uintptr_t)r);
    for (unsigned w = 0; w < WRITERS; w++)
        pthread_create(&wt[w], NULL, writer, (void *)(uintptr_t)w);
    for (unsigned w = 0; w < WRITERS; w++)
        pthread_join(wt[w], NULL);
    for (unsigned r = 0; r < READERS; r++)
        pthread_join(rt[r], NULL);

    long lookups = load_seq_cst(&sh->lookups),
         misses = load_seq_cst(&sh->misses), wrong = load_seq_cst(&sh->wrong);
    ck_assert_int_gt(lookups, 0);
    ck_assert_int_eq(misses, 0);
    ck_assert_int_eq(wrong, 0);
    ck_assert_int_ge(assoc_stat("assoc_expansions"), 10);
    ck_assert_uint_eq(assoc_count(), WRITERS * PER_WRITER);
    for (unsigned w = 0; w < WRITERS; w++)
        for (unsigned i = 0; i < PER_WRITER; i++) {
            key_name(key, w ? "w1" : "w0", i);
            REQUIRE(find_key(key) ==
                    (i % 8 ? sh->items[w][i] : sh->repl[w][i]));
        }
    wait_stable(&info);
    ck_assert_uint_eq(info.generation,
                      2 * (uint64_t)assoc_stat("assoc_expansions"));
    ck_assert_uint_eq(check_table(info.buckets, info.nbuckets, 0) +
                          (uint64_t)assoc_stat("assoc_stash_items"),
                      WRITERS * PER_WRITER);
    assoc_stop();
}
END_TEST

/* ---- hooks ------------------------------------------------------------- */

static int maps, unmaps;
static size_t mapped_bytes;

static void *count_map(size_t len, void *ctx)
{
    ck_assert_ptr_eq(ctx, &maps);
    fetch_add_seq_cst(&maps, 1);
    fetch_add_seq_cst(&mapped_bytes, len);
    return arena_anon_hooks.map(len, NULL);
}

static void count_unmap(void *addr, size_t len, void *ctx)
{
    fetch_add_seq_cst(&unmaps, 1);
    fetch_sub_seq_cst(&mapped_bytes, len);
    arena_anon_hooks.unmap(addr, len, NULL);
}

/* The table memory comes from the hooks and all of it goes back. */
START_TEST(test_table_hooks)
{
    struct arena_hooks hooks = {count_map, count_unmap, &maps};
    struct assoc_info info;

    ck_assert_int_eq(assoc_init(5, &hooks), 0);
    ck_assert_int_eq(load_seq_cst(&maps), 1);
    ck_assert_uint_eq(load_seq_cst(&mapped_bytes),
                      32 * sizeof(struct rdn_bucket));
    ck_assert_int_eq(assoc_expand(true), 0);
    ck_assert_int_eq(assoc_expand(true), 0);
    wait_stable(&info);
    ck_assert_int_eq(load_seq_cst(&maps), 3);
    assoc_stop();
    ck_assert_int_eq(load_seq_cst(&unmaps), 3);
    ck_assert_uint_eq(load_seq_cst(&mapped_bytes), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("assoc");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_insert_find_delete);
    tcase_add_test(tc, test_replace);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_descriptor_bytes);
    tcase_add_test(tc, test_racing_read_never_faults);
    tcase_add_test(tc, test_displacement_path);
    tcase_add_test(tc, test_high_load);
    tcase_add_test(tc, test_fingerprint_collisions);
    tcase_add_test(tc, test_stash_drains_on_growth);
    tcase_add_test(tc, test_expand_generation);
    tcase_add_test(tc, test_automatic_growth);
    tcase_add_test(tc, test_mutations_during_migration);
    tcase_add_loop_test(tc, test_concurrent_growth, 0, 6);
    tcase_add_test(tc, test_table_hooks);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
