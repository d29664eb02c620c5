/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_slabs.c - the arena and the slab allocator: size classes as
 * memcached 1.6.18 computes them, memory limit, reuse, deferred reuse under
 * a reader horizon, statistics, threads.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/arena.h"
#include "memcached/slabs.h"
#include "t/support/testutil.h"

#define MB (1024 * 1024)

static void collect(struct stat_rec *r)
{
    memset(r, 0, sizeof(*r));
    slabs_stats(record_stat, r);
}

/* ---- class sizes ------------------------------------------------------ */

static void fresh(size_t limit, double f, size_t n, size_t imax, bool pre)
{
    slabs_destroy();
    arena_destroy();
    ck_assert_int_eq(slabs_init(limit, f, n, imax, pre), 0);
}

/* `memcached -vv` of memcached 1.6.18 (chunk sizes, -I 1m = 512 KB max). */
static const size_t mc_default[] = {
    96,    120,    152,    192,    240,    304,    384,    480,    600,   752,
    944,   1184,   1480,   1856,   2320,   2904,   3632,   4544,   5680,  7104,
    8880,  11104,  13880,  17352,  21696,  27120,  33904,  42384,  52984, 66232,
    82792, 103496, 129376, 161720, 202152, 252696, 315872, 394840, 524288};
static const size_t mc_f2_n16[] = {64,    128,    256,   512,   1024,
                                   2048,  4096,   8192,  16384, 32768,
                                   65536, 131072, 524288};
static const size_t mc_f15_n100[] = {
    152,   232,   352,    528,    792,    1192,   1792,
    2688,  4032,  6048,   9072,   13608,  20416,  30624,
    45936, 68904, 103360, 155040, 232560, 348840, 524288};
static const size_t mc_f11[] = {
    96,    112,   128,   144,   160,   176,   200,   224,   248,   272,   304,
    336,   376,   416,   464,   512,   568,   624,   688,   760,   840,   928,
    1024,  1128,  1240,  1368,  1504,  1656,  1824,  2008,  2208,  2432,  2680,
    2952,  3248,  3576,  3936,  4336,  4776,  5256,  5784,  6368,  7008,  7712,
    8488,  9336,  10272, 11304, 12440, 13688, 15056, 16568, 18224, 20048, 22056,
    24264, 26696, 29368, 32304, 35536, 39096, 43008, 524288};
static const size_t mc_n5_f108[] = {
    56,   64,   72,   80,   88,   96,   104,  112,   120,  136,  152,
    168,  184,  200,  216,  240,  264,  288,  312,   336,  368,  400,
    432,  472,  512,  552,  600,  648,  704,  760,   824,  896,  968,
    1048, 1136, 1232, 1336, 1448, 1568, 1696, 1832,  1984, 2144, 2320,
    2512, 2712, 2928, 3168, 3424, 3704, 4000, 4320,  4672, 5048, 5456,
    5896, 6368, 6880, 7432, 8032, 8680, 9376, 524288};

struct mc_case {
    double factor;
    size_t min;
    const size_t *sizes;
    unsigned n;
};

#define MC_CASE(f, m, a)                                                       \
    {                                                                          \
        f, m, a, sizeof(a) / sizeof(a[0])                                      \
    }
static const struct mc_case mc_cases[] = {
    MC_CASE(1.25, 48, mc_default), MC_CASE(2.0, 16, mc_f2_n16),
    MC_CASE(1.5, 100, mc_f15_n100), MC_CASE(1.1, 48, mc_f11),
    MC_CASE(1.08, 5, mc_n5_f108)};

/*
 * memcached caps its classes at 512 KB (half a page) and chains larger
 * items; with item_size_max 512 KB our classes must be exactly its list.
 */
START_TEST(test_sizes_match_memcached)
{
    const struct mc_case *c = &mc_cases[_i];

    fresh(64 * MB, c->factor, c->min, 512 * 1024, false);
    ck_assert_uint_eq(slabs_nclasses(), c->n);
    for (unsigned i = 0; i < c->n; i++)
        REQUIRE(slabs_chunk_size(i + 1) == c->sizes[i]);
    ck_assert_uint_eq(slabs_chunk_size(0), 0);
    ck_assert_uint_eq(slabs_chunk_size(c->n + 1), 0);
}
END_TEST

/* Defaults: memcached's sequence, continued up to -I = 1 MB. */
START_TEST(test_default_classes)
{
    static const size_t tail[] = {493552, 616944, 771184, 1048576};

    fresh(64 * MB, SLABS_DEFAULT_FACTOR, SLABS_DEFAULT_MIN,
          SLABS_DEFAULT_ITEMMAX, false);
    ck_assert_uint_eq(slabs_nclasses(), 38 + 4);
    for (unsigned i = 0; i < 38; i++)
        REQUIRE(slabs_chunk_size(i + 1) == mc_default[i]);
    for (unsigned i = 0; i < 4; i++)
        REQUIRE(slabs_chunk_size(39 + i) == tail[i]);
    ck_assert_uint_eq(slabs_page_size(), MB);
}
END_TEST

/* -I 2m: pages are 2 MB and the last class holds exactly 2 MB. */
START_TEST(test_large_item_max)
{
    unsigned n;

    fresh(64 * MB, 1.25, 48, 2 * MB, false);
    n = slabs_nclasses();
    ck_assert_uint_eq(slabs_page_size(), 2 * MB);
    ck_assert_uint_eq(slabs_chunk_size(n), 2 * MB);
    for (unsigned i = 1; i < n; i++) {
        REQUIRE(slabs_chunk_size(i) < slabs_chunk_size(i + 1));
        REQUIRE((slabs_chunk_size(i) % 8) == 0);
    }
    ck_assert_uint_eq(slabs_chunk_size(n - 1), 1506232);
    ck_assert_uint_eq(slabs_clsid(2 * MB), n);
    ck_assert_uint_eq(slabs_clsid(2 * MB + 1), 0);
    void *p = slabs_alloc(2 * MB, n);
    ck_assert_ptr_nonnull(p);
    memset(p, 0xab, 2 * MB); /* contiguous and writable */
}
END_TEST

START_TEST(test_clsid)
{
    fresh(64 * MB, 1.25, 48, MB, false);
    ck_assert_uint_eq(slabs_clsid(0), 0);
    ck_assert_uint_eq(slabs_clsid(1), 1);
    ck_assert_uint_eq(slabs_clsid(96), 1);
    ck_assert_uint_eq(slabs_clsid(97), 2);
    ck_assert_uint_eq(slabs_clsid(1184), 12);
    ck_assert_uint_eq(slabs_clsid(1185), 13);
    ck_assert_uint_eq(slabs_clsid(MB), slabs_nclasses());
    ck_assert_uint_eq(slabs_clsid(MB + 1), 0);
    for (size_t sz = 1; sz <= MB; sz += 997) {
        unsigned c = slabs_clsid(sz);

        REQUIRE(slabs_chunk_size(c) >= sz);
        if (c > 1)
            REQUIRE(slabs_chunk_size(c - 1) < sz);
    }
}
END_TEST

START_TEST(test_invalid_settings)
{
    ck_assert_int_eq(slabs_init(64 * MB, 1.0, 48, MB, false), -EINVAL);
    ck_assert_int_eq(slabs_init(64 * MB, 1.25, 0, MB, false), -EINVAL);
    ck_assert_int_eq(slabs_init(64 * MB, 1.25, 48, 512, false), -EINVAL);
    ck_assert_int_eq(slabs_init(64 * MB, 1.25, 48, (size_t)2048 * MB, false),
                     -EINVAL);
    ck_assert_uint_eq(slabs_arena_bytes(64 * MB, 0.5, 48, MB), 0);
    ck_assert_int_eq(slabs_init(64 * MB, 1.25, 48, MB, false), 0);
    ck_assert_int_eq(slabs_init(64 * MB, 1.25, 48, MB, false), -EBUSY);
    ck_assert_ptr_null(slabs_alloc(10, 0));
    ck_assert_ptr_null(slabs_alloc(10, slabs_nclasses() + 1));
    ck_assert_ptr_null(slabs_alloc(97, 1)); /* larger than the chunk */
}
END_TEST

/* ---- allocation, limit, reuse ----------------------------------------- */

START_TEST(test_alloc_layout)
{
    enum { N = 3000 };
    static char *p[N];
    unsigned cls = 3;
    size_t sz;

    fresh(64 * MB, 1.25, 48, MB, false);
    sz = slabs_chunk_size(cls);
    for (int i = 0; i < N; i++) {
        p[i] = slabs_alloc(sz, cls);
        REQUIRE(p[i] != NULL);
        REQUIRE(((uintptr_t)p[i] % 8) == 0);
        REQUIRE(arena_contains(p[i], sz));
        memset(p[i], i & 0xff, sz);
    }
    for (int i = 0; i < N; i++)
        for (size_t k = 0; k < sz; k += 17)
            REQUIRE(((unsigned char)p[i][k]) == (i & 0xff));
    /* 1 MB / 152 = 6898 per page: all carved in order from one page */
    ck_assert_ptr_eq(p[1], p[0] + sz);
}
END_TEST

START_TEST(test_memory_limit)
{
    unsigned per = MB / 96, got = 0;
    struct stat_rec r;

    fresh(2 * MB, 1.25, 48, MB, false);
    while (slabs_alloc(96, 1) != NULL)
        got++;
    ck_assert_uint_eq(got, 2 * per);
    ck_assert_uint_eq(slabs_total_malloced(), 2 * MB);
    /* a class without a page always gets its first one */
    ck_assert_ptr_nonnull(slabs_alloc(200, slabs_clsid(200)));
    ck_assert_uint_eq(slabs_total_malloced(), 3 * MB);
    ck_assert_ptr_null(slabs_alloc(96, 1));
    collect(&r);
    ck_assert_int_eq(stat_num(&r, "active_slabs"), 2);
    ck_assert_int_eq(stat_num(&r, "total_malloced"), 3 * MB);
    ck_assert_int_eq(stat_num(&r, "1:total_pages"), 2);
    ck_assert_int_eq(stat_num(&r, "1:used_chunks"), 2 * per);
    ck_assert_int_eq(stat_num(&r, "1:free_chunks"), 0);
}
END_TEST

START_TEST(test_free_and_reuse)
{
    void *a, *b;
    unsigned per = MB / 96;

    fresh(MB, 1.25, 48, MB, false);
    a = slabs_alloc(50, 1);
    slabs_free(a, 50, 1);
    b = slabs_alloc(60, 1);
    ck_assert_ptr_eq(a, b);
    for (unsigned i = 1; i < per; i++)
        REQUIRE(slabs_alloc(96, 1) != NULL);
    ck_assert_ptr_null(slabs_alloc(96, 1)); /* limit reached */
    slabs_free(b, 60, 1);
    ck_assert_ptr_eq(slabs_alloc(96, 1), b);
    ck_assert_ptr_null(slabs_alloc(96, 1));
}
END_TEST

static uint64_t test_horizon;
static int horizon_calls;

static uint64_t oldest_reader(void *ctx)
{
    ck_assert_ptr_eq(ctx, &test_horizon);
    horizon_calls++;
    return test_horizon;
}

/* A freed chunk is reused only once the reader horizon passed its epoch. */
START_TEST(test_deferred_reuse)
{
    unsigned per = MB / 96;
    void *p = NULL, *q;
    struct stat_rec r;

    fresh(MB, 1.25, 48, MB, false);
    for (unsigned i = 0; i < per; i++)
        REQUIRE((p = slabs_alloc(96, 1)) != NULL);
    ck_assert_uint_eq(slabs_epoch(), 1);
    test_horizon = 1; /* a reader started in epoch 1 still runs */
    slabs_set_horizon(oldest_reader, &test_horizon);
    slabs_free(p, 96, 1);
    collect(&r);
    ck_assert_int_eq(stat_num(&r, "limbo_chunks"), 1);
    ck_assert_int_eq(stat_num(&r, "1:used_chunks"), per);
    ck_assert_ptr_null(slabs_alloc(96, 1));
    ck_assert_int_gt(horizon_calls, 0);
    slabs_epoch_advance();
    ck_assert_uint_eq(slabs_epoch(), 2);
    q = slabs_alloc(96, 1);
    ck_assert_ptr_null(q); /* the epoch moved, the reader did not */
    test_horizon = 2;      /* every reader of epoch 1 is done */
    ck_assert_ptr_eq(slabs_alloc(96, 1), p);

    /* freed in epoch 2, horizon 2: waits; removing the horizon frees */
    slabs_free(p, 96, 1);
    ck_assert_ptr_null(slabs_alloc(96, 1));
    slabs_set_horizon(NULL, NULL);
    ck_assert_ptr_eq(slabs_alloc(96, 1), p);
    collect(&r);
    ck_assert_int_eq(stat_num(&r, "limbo_chunks"), 0);
}
END_TEST

/* memcached's reassign outcomes, before any chunk is looked at. */
START_TEST(test_move_refusals)
{
    fresh(0, 1.25, 48, MB, false);
    REQUIRE(slabs_alloc(96, 1) != NULL);
    ck_assert_int_eq(slabs_move_begin(1, 1), SLABS_REASSIGN_SAME);
    ck_assert_int_eq(slabs_move_begin(1, 99), SLABS_REASSIGN_BADCLASS);
    ck_assert_int_eq(slabs_move_begin(-2, 2), SLABS_REASSIGN_BADCLASS);
    ck_assert_int_eq(slabs_move_begin(-1, 2), SLABS_REASSIGN_BADCLASS);
    ck_assert_int_eq(slabs_move_begin(1, 2), SLABS_REASSIGN_NOSPARE);
    ck_assert_int_eq(slabs_move_begin(0, 2), SLABS_REASSIGN_NOSPARE);
    ck_assert(!slabs_move_finish());
}
END_TEST

/*
 * A moving page hands out none of its chunks; a chunk of it freed under a
 * reader horizon joins the move only once the horizon passed it; then the
 * page is the destination's, and its chunks are allocatable there.
 */
START_TEST(test_move_waits_for_readers)
{
    unsigned per = MB / 96;
    char *first = NULL, *p;
    struct slabs_move m;
    struct stat_rec r;

    fresh(0, 1.25, 48, MB, false);
    for (unsigned i = 0; i < per + 1; i++) {
        REQUIRE((p = slabs_alloc(96, 1)) != NULL);
        if (i == 0)
            first = p;
    }
    for (unsigned i = 1; i < per; i++)
        slabs_free(first + i * 96, 96, 1); /* all of page 0 but its first */
    test_horizon = 1;
    slabs_set_horizon(oldest_reader, &test_horizon);
    ck_assert_int_eq(slabs_move_begin(1, 5), SLABS_REASSIGN_OK);
    ck_assert_int_eq(slabs_move_begin(2, 5), SLABS_REASSIGN_RUNNING);
    ck_assert(slabs_move_current(&m));
    ck_assert_ptr_eq(m.page, first);
    ck_assert_uint_eq(m.captured, per - 1);
    /* page 1 has per - 1 uncarved chunks: none of page 0 comes out */
    for (unsigned i = 0; i < per - 1; i++) {
        REQUIRE((p = slabs_alloc(96, 1)) != NULL);
        ck_assert(p < first || p >= first + MB);
    }
    slabs_free(first, 96, 1); /* its last item goes, a reader may be in it */
    ck_assert(!slabs_move_finish());
    slabs_epoch_advance();
    ck_assert(!slabs_move_finish()); /* the reader of epoch 1 still runs */
    test_horizon = 2;
    ck_assert(slabs_move_finish());
    ck_assert(!slabs_move_current(&m));
    uint64_t moved, pool;
    slabs_page_counts(&moved, &pool);
    ck_assert_uint_eq(moved, 1);
    ck_assert_uint_eq(pool, 0);
    collect(&r);
    ck_assert_int_eq(stat_num(&r, "1:total_pages"), 1);
    ck_assert_int_eq(stat_num(&r, "5:total_pages"), 1);
    ck_assert_int_eq(stat_num(&r, "5:free_chunks"), (int)slabs_perslab(5));
    p = slabs_alloc(slabs_chunk_size(5), 5);
    ck_assert(p >= first && p < first + MB);
    slabs_set_horizon(NULL, NULL);
}
END_TEST

/* Class 0 is the pool: a page moved there goes to the next class needing
 * one, before any new page. */
START_TEST(test_move_to_pool)
{
    unsigned per = MB / 96;
    char *first = NULL, *p;
    uint64_t moved, pool;

    fresh(0, 1.25, 48, MB, false);
    for (unsigned i = 0; i < per + 1; i++) {
        REQUIRE((p = slabs_alloc(96, 1)) != NULL);
        if (i == 0)
            first = p;
    }
    for (unsigned i = 0; i < per; i++)
        slabs_free(first + i * 96, 96, 1);
    ck_assert_int_eq(slabs_move_begin(1, 0), SLABS_REASSIGN_OK);
    ck_assert(slabs_move_finish());
    slabs_page_counts(&moved, &pool);
    ck_assert_uint_eq(pool, 1);
    p = slabs_alloc(120, 2);
    ck_assert_ptr_eq(p, first);
    slabs_page_counts(&moved, &pool);
    ck_assert_uint_eq(pool, 0);
}
END_TEST

/* Limbo is FIFO by epoch: older frees come back first, newer ones wait. */
START_TEST(test_limbo_order)
{
    void *a, *b;

    fresh(MB, 1.25, 48, MB, false);
    a = slabs_alloc(96, 1);
    b = slabs_alloc(96, 1);
    test_horizon = 1;
    slabs_set_horizon(oldest_reader, &test_horizon);
    slabs_free(a, 96, 1); /* epoch 1 */
    slabs_epoch_advance();
    slabs_free(b, 96, 1); /* epoch 2 */
    for (unsigned i = 2; i < MB / 96; i++)
        REQUIRE(slabs_alloc(96, 1) != NULL);
    test_horizon = 2;
    ck_assert_ptr_eq(slabs_alloc(96, 1), a);
    ck_assert_ptr_null(slabs_alloc(96, 1));
    test_horizon = 3;
    ck_assert_ptr_eq(slabs_alloc(96, 1), b);
}
END_TEST

/* ---- statistics ------------------------------------------------------ */

START_TEST(test_stats_fields)
{
    static const char *const fields[] = {
        "chunk_size",  "chunks_per_page", "total_pages",     "total_chunks",
        "used_chunks", "free_chunks",     "free_chunks_end", "get_hits",
        "cmd_set",     "delete_hits",     "incr_hits",       "decr_hits",
        "cas_hits",    "cas_badval",      "touch_hits"};
    struct stat_rec r;
    unsigned c;
    char name[64];

    fresh(64 * MB, 1.25, 48, MB, false);
    c = slabs_clsid(1000);
    for (int i = 0; i < 10; i++)
        slabs_alloc(1000, c);
    slabs_free(slabs_alloc(1000, c), 1000, c);
    slabs_count(c, SLABS_GET_HITS);
    slabs_count(c, SLABS_GET_HITS);
    slabs_count(c, SLABS_CMD_SET);
    slabs_count(c, SLABS_TOUCH_HITS);
    slabs_count(c, SLABS_CAS_BADVAL);
    slabs_count(0, SLABS_GET_HITS); /* ignored */
    collect(&r);
    ck_assert_int_eq(r.n, 15 + 3); /* one class, then the totals */
    for (int i = 0; i < 15; i++) {
        snprintf(name, sizeof(name), "%u:%s", c, fields[i]);
        REQUIRE(strcmp(r.name[i], name) == 0);
    }
    ck_assert_str_eq(r.name[15], "active_slabs");
    ck_assert_str_eq(r.name[16], "total_malloced");
    ck_assert_str_eq(r.name[17], "limbo_chunks");
    ck_assert_int_eq(atoll(r.value[0]), 1184);
    ck_assert_int_eq(atoll(r.value[1]), MB / 1184);
    ck_assert_int_eq(atoll(r.value[2]), 1);
    ck_assert_int_eq(atoll(r.value[3]), MB / 1184);
    ck_assert_int_eq(atoll(r.value[4]), 10);
    ck_assert_int_eq(atoll(r.value[5]), MB / 1184 - 10);
    ck_assert_int_eq(atoll(r.value[6]), 0);
    ck_assert_int_eq(atoll(r.value[7]), 2);  /* get_hits */
    ck_assert_int_eq(atoll(r.value[8]), 1);  /* cmd_set */
    ck_assert_int_eq(atoll(r.value[13]), 1); /* cas_badval */
    ck_assert_int_eq(atoll(r.value[14]), 1); /* touch_hits */
    ck_assert_int_eq(atoll(r.value[9]), 0);
    ck_assert_int_eq(stat_num(&r, "active_slabs"), 1);
    ck_assert_int_eq(stat_num(&r, "total_malloced"), MB);
}
END_TEST

START_TEST(test_prealloc)
{
    struct stat_rec r;

    fresh(64 * MB, 1.25, 48, MB, true);
    collect(&r);
    ck_assert_int_eq(stat_num(&r, "active_slabs"), slabs_nclasses());
    ck_assert_int_eq(stat_num(&r, "total_malloced"),
                     (long long)slabs_nclasses() * MB);
    ck_assert_int_eq(stat_num(&r, "1:total_pages"), 1);
    ck_assert_int_eq(stat_num(&r, "1:used_chunks"), 0);
}
END_TEST

/* ---- threads ---------------------------------------------------------- */

struct churn {
    unsigned cls;
    uint64_t tag;
    int errors;
};

/* Allocates, tags, checks and frees chunks; a chunk handed out twice
 * would have its tag overwritten by the other thread. */
static void *churn_thread(void *arg)
{
    struct churn *c = arg;
    enum { HELD = 64 };
    uint64_t *held[HELD] = {0};
    size_t sz = slabs_chunk_size(c->cls);

    for (unsigned i = 0; i < 200000; i++) {
        unsigned k = i % HELD;

        if (held[k] != NULL) {
            if (held[k][2] != c->tag + k || held[k][3] != c->tag)
                c->errors++;
            slabs_free(held[k], sz, c->cls);
        }
        held[k] = slabs_alloc(sz, c->cls);
        if (held[k] == NULL) {
            c->errors++;
            continue;
        }
        held[k][2] = c->tag + k;
        held[k][3] = c->tag;
    }
    return NULL;
}

START_TEST(test_threads)
{
    struct churn c[2] = {{2, 1000, 0}, {2, 2000, 0}};
    pthread_t t[2];

    fresh(64 * MB, 1.25, 48, MB, false);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, churn_thread, &c[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(c[0].errors, 0);
    ck_assert_int_eq(c[1].errors, 0);
    ck_assert_uint_eq(slabs_total_malloced(), MB);
}
END_TEST

/* ---- arena ------------------------------------------------------------- */

struct hook_log {
    int maps, unmaps;
    size_t mapped_len;
    void *mapped;
};

static void *log_map(size_t len, void *ctx)
{
    struct hook_log *l = ctx;

    l->maps++;
    l->mapped_len = len;
    l->mapped = arena_anon_hooks.map(len, NULL);
    return l->mapped;
}

static void log_unmap(void *addr, size_t len, void *ctx)
{
    struct hook_log *l = ctx;

    ck_assert_ptr_eq(addr, l->mapped);
    ck_assert_uint_eq(len, l->mapped_len);
    l->unmaps++;
    arena_anon_hooks.unmap(addr, len, NULL);
}

START_TEST(test_arena)
{
    struct hook_log log = {0};
    struct arena_hooks hooks = {log_map, log_unmap, &log};
    struct arena_hooks bad = {NULL, log_unmap, &log};
    char *a, *b;

    ck_assert(!arena_ready());
    ck_assert_ptr_null(arena_page_alloc(64));
    ck_assert_int_eq(arena_init(0, NULL), -EINVAL);
    ck_assert_int_eq(arena_init(4096, &bad), -EINVAL);
    ck_assert_int_eq(arena_init(3 * MB + 1, &hooks), 0);
    ck_assert_int_eq(arena_init(MB, NULL), -EBUSY);
    ck_assert_int_eq(log.maps, 1);
    ck_assert_ptr_eq(arena_hooks()->ctx, &log);
    ck_assert_uint_ge(arena_size(), 3 * MB + 1);
    ck_assert_uint_ge(log.mapped_len, arena_size());
    a = arena_page_alloc(100);
    b = arena_page_alloc(MB);
    ck_assert_ptr_eq(a, arena_base());
    ck_assert_ptr_eq(b, a + 128); /* rounded to 64 */
    ck_assert_uint_eq(arena_used(), 128 + MB);
    ck_assert(arena_contains(b, MB));
    ck_assert(!arena_contains(b, arena_size()));
    ck_assert(!arena_contains((char *)arena_base() - 1, 1));
    ck_assert_ptr_nonnull(arena_page_alloc(2 * MB));
    ck_assert_ptr_null(arena_page_alloc(MB)); /* exhausted */

    /* slabs uses an arena that is already set up, with its hooks */
    ck_assert_int_eq(slabs_init(0, 1.25, 48, MB, false), 0);
    ck_assert_ptr_null(slabs_alloc(96, 1)); /* no page left */
    ck_assert_int_eq(log.maps, 1);
    slabs_destroy();
    arena_destroy();
    ck_assert_int_eq(log.unmaps, 1);
    ck_assert(!arena_ready());
    ck_assert_ptr_eq(arena_hooks(), &arena_anon_hooks);
}
END_TEST

/* slabs_init() maps an arena of slabs_arena_bytes() when there is none. */
START_TEST(test_slabs_maps_arena)
{
    size_t need = slabs_arena_bytes(10 * MB, 1.25, 48, MB);

    ck_assert_uint_eq(need, (10 + 42) * (size_t)MB);
    ck_assert_int_eq(slabs_init(10 * MB, 1.25, 48, MB, false), 0);
    ck_assert(arena_ready());
    ck_assert_uint_eq(arena_size(), need);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("slabs");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_sizes_match_memcached, 0,
                        sizeof(mc_cases) / sizeof(mc_cases[0]));
    tcase_add_test(tc, test_default_classes);
    tcase_add_test(tc, test_large_item_max);
    tcase_add_test(tc, test_clsid);
    tcase_add_test(tc, test_invalid_settings);
    tcase_add_test(tc, test_alloc_layout);
    tcase_add_test(tc, test_memory_limit);
    tcase_add_test(tc, test_free_and_reuse);
    tcase_add_test(tc, test_deferred_reuse);
    tcase_add_test(tc, test_limbo_order);
    tcase_add_test(tc, test_move_refusals);
    tcase_add_test(tc, test_move_waits_for_readers);
    tcase_add_test(tc, test_move_to_pool);
    tcase_add_test(tc, test_stats_fields);
    tcase_add_test(tc, test_prealloc);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_arena);
    tcase_add_test(tc, test_slabs_maps_arena);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
