/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_items.c - unit tests of memcached/items.c: copy-on-write stamps,
 * store semantics, CAS, expiry, flush, incr/decr edge cases, LRU eviction
 * and the expiry crawler. Each test runs in its own process (Check's fork
 * mode) on freshly built storage.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memcached/assoc.h"
#include "memcached/crawler.h"
#include "memcached/items.h"
#include "memcached/items_int.h"
#include "memcached/settings.h"
#include "memcached/slabs.h"
#include "memcached/stats.h"
#include "proto/barrier.h"
#include "t/support/testutil.h"

static void storage_up(size_t mem_limit, bool evict)
{
    settings_init();
    settings.lru_crawler = false;
    settings.maxbytes = mem_limit;
    settings.evict_to_free = evict;
    ck_assert_int_eq(slabs_init(mem_limit, 1.25, 48, 1024 * 1024, false), 0);
    ck_assert_int_eq(assoc_init(12, NULL), 0);
    ck_assert_int_eq(items_init(), 0);
}

static void setup(void)
{
    storage_up(64 * 1024 * 1024, true);
}

static void teardown(void)
{
    items_stop();
    assoc_stop();
}

/* Allocates key=value and stores it with op; returns the status (the
 * allocation's when it fails). */
static enum item_status put(const char *key, const char *val, enum store_op op,
                            uint64_t cas, uint32_t exptime)
{
    enum item_status why;
    struct store_req req = {.op = op, .cas = cas};
    struct item *it =
        item_alloc(key, strlen(key), 7, exptime, strlen(val), &why);

    if (it == NULL)
        return why;
    memcpy(item_value(it), val, strlen(val));
    enum item_status st = item_store(it, &req, NULL);
    item_release(it);
    return st;
}

static void set(const char *key, const char *val)
{
    ck_assert_int_eq(put(key, val, STORE_SET, 0, 0), ITEM_OK);
}

/* The value of key as a string ("" = miss), valid until the next call. */
static const char *value_of(const char *key)
{
    static char buf[4096];
    struct item *it = item_get(key, strlen(key), FETCH_PEEK, 0);

    if (it == NULL)
        return "";
    ck_assert_uint_lt(it->nic.nbytes, sizeof(buf));
    memcpy(buf, item_value(it), it->nic.nbytes);
    buf[it->nic.nbytes] = '\0';
    item_release(it);
    return buf;
}

static uint64_t cas_of(const char *key)
{
    struct item *it = item_get(key, strlen(key), FETCH_PEEK, 0);
    uint64_t cas;

    ck_assert_ptr_nonnull(it);
    cas = item_cas(it);
    item_release(it);
    return cas;
}

/* ---- layout and copy-on-write ---- */

START_TEST(test_stamps_head_and_tail)
{
    set("k", "hello");
    struct item *it = item_get("k", 1, FETCH_PEEK, 0);
    ck_assert_ptr_nonnull(it);
    ck_assert_uint_ne(it->nic.stamp, 0);
    ck_assert_uint_eq(*rdn_item_tail(&it->nic), it->nic.stamp);
    ck_assert_uint_eq(it->nic.nkey, 1);
    ck_assert_uint_eq(it->nic.nbytes, 5);
    ck_assert_uint_eq(it->nic.flags, 7);
    ck_assert_mem_eq(rdn_item_key(&it->nic), "khello", 6);
    /* padding between value and tail stamp is zero */
    char *end = item_value(it) + 5;
    for (char *p = end; p < (char *)rdn_item_tail(&it->nic); p++)
        ck_assert_int_eq(*p, 0);
    item_release(it);
}
END_TEST

START_TEST(test_copy_on_write)
{
    set("k", "one");
    struct item *old = item_get("k", 1, FETCH_PEEK, 0);
    uint64_t old_stamp = old->nic.stamp;

    set("k", "two");
    /* The reader still holding the old version sees it intact. */
    ck_assert_uint_eq(old->nic.stamp, old_stamp);
    ck_assert_mem_eq(item_value(old), "one", 3);
    ck_assert_str_eq(value_of("k"), "two");
    struct item *cur = item_get("k", 1, FETCH_PEEK, 0);
    ck_assert_ptr_ne(cur, old);
    ck_assert_uint_gt(cur->nic.stamp, old_stamp);
    ck_assert_uint_eq(*rdn_item_tail(&cur->nic), cur->nic.stamp);
    item_release(cur);
    /* The last reference gone, the old head stamp is cleared before the
     * chunk is freed (the chunk stays in the arena, readable). */
    item_release(old);
    ck_assert_uint_eq(old->nic.stamp, 0);
}
END_TEST

START_TEST(test_append_prepend_copy)
{
    set("k", "mid");
    uint64_t c1 = cas_of("k");
    ck_assert_int_eq(put("k", ">", STORE_APPEND, 0, 0), ITEM_OK);
    ck_assert_int_eq(put("k", "<", STORE_PREPEND, 0, 0), ITEM_OK);
    ck_assert_str_eq(value_of("k"), "<mid>");
    ck_assert_uint_gt(cas_of("k"), c1);
    ck_assert_int_eq(put("none", "x", STORE_APPEND, 0, 0), ITEM_NOT_STORED);
    ck_assert_int_eq(put("k", "!", STORE_APPEND, 1, 0), ITEM_EXISTS);
    ck_assert_int_eq(put("k", "!", STORE_APPEND, cas_of("k"), 0), ITEM_OK);
    ck_assert_str_eq(value_of("k"), "<mid>!");
}
END_TEST

START_TEST(test_add_replace)
{
    ck_assert_int_eq(put("k", "1", STORE_REPLACE, 0, 0), ITEM_NOT_STORED);
    ck_assert_int_eq(put("k", "1", STORE_ADD, 0, 0), ITEM_OK);
    ck_assert_int_eq(put("k", "2", STORE_ADD, 0, 0), ITEM_NOT_STORED);
    ck_assert_int_eq(put("k", "3", STORE_REPLACE, 0, 0), ITEM_OK);
    ck_assert_str_eq(value_of("k"), "3");
}
END_TEST

/* ---- CAS ---- */

START_TEST(test_cas)
{
    uint64_t out = 0;
    enum item_status why;

    ck_assert_int_eq(put("k", "v", STORE_CAS, 5, 0), ITEM_NOT_FOUND);
    set("k", "v");
    uint64_t c = cas_of("k");
    ck_assert_uint_ne(c, 0);
    ck_assert_int_eq(put("k", "w", STORE_CAS, c + 1, 0), ITEM_EXISTS);
    ck_assert_str_eq(value_of("k"), "v");
    struct item *it = item_alloc("k", 1, 0, 0, 1, &why);
    memcpy(item_value(it), "x", 1);
    struct store_req req = {.op = STORE_CAS, .cas = c};
    ck_assert_int_eq(item_store(it, &req, &out), ITEM_OK);
    item_release(it);
    ck_assert_uint_eq(out, cas_of("k"));
    ck_assert_uint_ne(out, c);
    ck_assert_str_eq(value_of("k"), "x");
    /* The CAS ids are unique and increasing. */
    set("a", "1");
    set("b", "1");
    ck_assert_uint_lt(cas_of("a"), cas_of("b"));
}
END_TEST

START_TEST(test_cas_stale_set)
{
    enum item_status why;

    set("k", "v1");
    uint64_t old = cas_of("k");
    set("k", "v2");
    uint64_t cur = cas_of("k");
    /* meta I: an older CAS stores, marked stale, under a new CAS */
    struct item *it = item_alloc("k", 1, 0, 0, 2, &why);
    memcpy(item_value(it), "v3", 2);
    struct store_req req = {.op = STORE_CAS, .cas = old, .set_stale = true};
    ck_assert_int_eq(item_store(it, &req, NULL), ITEM_OK);
    item_release(it);
    struct item *got = item_get("k", 1, FETCH_PEEK, 0);
    ck_assert(item_has_flag(got, ITEM_STALE));
    ck_assert_uint_gt(item_cas(got), cur);
    item_release(got);
}
END_TEST

/* ---- expiry and flush ---- */

START_TEST(test_realtime)
{
    uint32_t now = items_now();

    ck_assert_uint_eq(items_realtime(0), 0);
    ck_assert_uint_eq(items_realtime(-1), 1);
    ck_assert_uint_eq(items_realtime(100), now + 100);
    ck_assert_uint_eq(items_realtime(60 * 60 * 24 * 30), now + 2592000);
    ck_assert_uint_eq(items_realtime(60 * 60 * 24 * 30 + 1), 2592001);
    ck_assert_uint_eq(items_realtime(1900000000), 1900000000u);
}
END_TEST

START_TEST(test_lazy_expiry)
{
    ck_assert_int_eq(put("t", "v", STORE_SET, 0, items_realtime(10)), ITEM_OK);
    ck_assert_int_eq(put("n", "v", STORE_SET, 0, 0), ITEM_OK);
    ck_assert_int_eq(put("x", "v", STORE_SET, 0, items_realtime(-1)), ITEM_OK);
    ck_assert_str_eq(value_of("x"), "");
    ck_assert_str_eq(value_of("t"), "v");
    items_clock_shift(9);
    ck_assert_str_eq(value_of("t"), "v");
    items_clock_shift(2);
    ck_assert_str_eq(value_of("t"), "");
    ck_assert_str_eq(value_of("n"), "v");
    /* the expired item was unlinked by the lookup */
    ck_assert_uint_eq(assoc_count(), 1);
    /* touch moves the deadline */
    ck_assert_int_eq(put("t", "v", STORE_SET, 0, items_realtime(5)), ITEM_OK);
    ck_assert_int_eq(item_touch("t", 1, items_realtime(100)), ITEM_OK);
    items_clock_shift(10);
    ck_assert_str_eq(value_of("t"), "v");
    ck_assert_int_eq(item_touch("gone", 4, 0), ITEM_NOT_FOUND);
}
END_TEST

START_TEST(test_flush)
{
    set("a", "1");
    set("b", "1");
    items_flush(0);
    ck_assert_str_eq(value_of("a"), "");
    ck_assert_str_eq(value_of("b"), "");
    set("a", "2");
    ck_assert_str_eq(value_of("a"), "2");
    /* delayed */
    items_flush(items_now() + 5);
    ck_assert_str_eq(value_of("a"), "2");
    items_clock_shift(6);
    ck_assert_str_eq(value_of("a"), "");
    set("c", "3");
    ck_assert_str_eq(value_of("c"), "3");
}
END_TEST

static int due_calls;

static void note_due(void)
{
    due_calls++;
}

/*
 * The due hook runs once per cut-off, when a reader first finds a delayed
 * flush_all in force, before that reader takes an item for flushed (the
 * glue stops the NIC there); not while the flush is still pending.
 */
START_TEST(test_flush_due_hook)
{
    set("a", "1");
    items_set_due_hook(note_due);
    items_flush(items_now() + 5);
    ck_assert_str_eq(value_of("a"), "1");
    ck_assert_int_eq(due_calls, 0);
    items_clock_shift(6);
    ck_assert_str_eq(value_of("a"), "");
    ck_assert_int_eq(due_calls, 1);
    set("b", "2");
    ck_assert_str_eq(value_of("b"), "2");
    ck_assert_int_eq(due_calls, 1);
    items_set_due_hook(NULL);
}
END_TEST

/* The exptime the NIC's clients see for key (no lookup: a CPU lookup
 * unlinks a dead item). */
static uint32_t nic_exptime_of(const char *key)
{
    struct rdn_keyhash kh;
    struct rdn_item *it;

    assoc_keyhash(key, strlen(key), &kh);
    it = assoc_find(key, strlen(key), &kh);
    ck_assert_ptr_nonnull(it);
    return load_relaxed(&it->exptime);
}

/*
 * flush_all 1 cuts at this second: what is stored before the clock ticks
 * is dead at birth (memcached's rule), and must look expired to the NIC's
 * clients, who do not read the cut-off. It counts as flushed, as in
 * memcached. What is stored a second later lives.
 */
START_TEST(test_flush_kills_at_birth)
{
    uint64_t before[TC_COUNT], after[TC_COUNT];
    uint32_t t0;
    int tries = 0;

    do {
        ck_assert_int_lt(tries++, 3); /* the clock ticked each time */
        t0 = items_now();
        items_flush(t0 + 1);
        set("a", "1");
    } while (items_now() != t0);
    ck_assert_uint_eq(nic_exptime_of("a"), ITEMS_EXPTIME_PAST);
    stats_sum(before);
    ck_assert_ptr_null(item_get("a", 1, 0, 0));
    stats_sum(after);
    ck_assert_uint_eq(after[TC_GET_FLUSHED] - before[TC_GET_FLUSHED], 1);
    ck_assert_uint_eq(after[TC_GET_EXPIRED], before[TC_GET_EXPIRED]);
    items_clock_shift(1);
    ck_assert_int_eq(put("b", "2", STORE_SET, 0, items_realtime(100)), ITEM_OK);
    ck_assert_uint_eq(nic_exptime_of("b"), items_now() + 100);
    ck_assert_str_eq(value_of("b"), "2");
}
END_TEST

START_TEST(test_crawler_reclaims)
{
    for (int i = 0; i < 100; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        ck_assert_int_eq(
            put(k, "v", STORE_SET, 0, i % 2 ? items_realtime(5) : 0), ITEM_OK);
    }
    struct items_totals t;
    items_totals(&t);
    ck_assert_uint_eq(t.curr_items, 100);
    items_clock_shift(10);
    unsigned cls = slabs_clsid(item_ntotal(3, 1));
    ck_assert_uint_eq(crawler_crawl_class(cls), 50);
    items_totals(&t);
    ck_assert_uint_eq(t.curr_items, 50);
    ck_assert_uint_eq(t.crawler_reclaimed, 50);
    ck_assert_uint_eq(assoc_count(), 50);
}
END_TEST

/*
 * flush_all while the crawler is busy with a crawl that already passed the
 * flushed items: the flush's crawl must still happen right after (it used
 * to be refused as "busy", leaving flushed items linked, and visible to NIC
 * readers, until the next automatic crawl 10 s later).
 */
START_TEST(test_flush_during_crawl)
{
    unsigned cls = slabs_clsid(item_ntotal(1, 1));
    unsigned blocker = cls + 1;
    struct items_totals t;

    settings.lru_crawler = true;
    ck_assert_int_eq(crawler_start(), 0);
    set("a", "1");
    /* The crawl checks "a" (alive), then waits for the next class. */
    pthread_mutex_lock(&lrus[blocker].lock);
    ck_assert(crawler_request((UINT64_C(1) << cls) | (UINT64_C(1) << blocker)));
    for (;;) {
        pthread_mutex_lock(&lrus[cls].lock);
        uint64_t checked = lrus[cls].crawler_items_checked;
        pthread_mutex_unlock(&lrus[cls].lock);
        if (checked == 1)
            break;
        usleep(1000);
    }
    ck_assert(crawler_running());
    items_flush(0);
    pthread_mutex_unlock(&lrus[blocker].lock);
    /* Bounded by the test timeout; the automatic crawl is 10 s away. */
    while (assoc_count() != 0)
        usleep(1000);
    items_totals(&t);
    ck_assert_uint_eq(t.curr_items, 0);
    ck_assert_uint_eq(t.crawler_reclaimed, 1);
}
END_TEST

/* ---- incr / decr ---- */

static enum item_status arith(const char *key, bool incr, uint64_t delta,
                              uint64_t *out)
{
    struct arith_req req = {.incr = incr, .delta = delta};
    struct arith_res res;
    enum item_status st = item_arith(key, strlen(key), &req, &res);

    *out = res.value;
    return st;
}

START_TEST(test_incr_decr)
{
    uint64_t v;

    ck_assert_int_eq(arith("n", true, 1, &v), ITEM_NOT_FOUND);
    set("n", "10");
    ck_assert_int_eq(arith("n", true, 5, &v), ITEM_OK);
    ck_assert_uint_eq(v, 15);
    ck_assert_int_eq(arith("n", false, 100, &v), ITEM_OK);
    ck_assert_uint_eq(v, 0);
    ck_assert_str_eq(value_of("n"), "0 "); /* length kept, padded */
    set("w", "18446744073709551615");
    ck_assert_int_eq(arith("w", true, 1, &v), ITEM_OK);
    ck_assert_uint_eq(v, 0);
    set("g", "99");
    ck_assert_int_eq(arith("g", true, 1, &v), ITEM_OK);
    ck_assert_str_eq(value_of("g"), "100");
    set("big", "18446744073709551616");
    ck_assert_int_eq(arith("big", true, 1, &v), ITEM_NON_NUMERIC);
    set("s", "12abc");
    ck_assert_int_eq(arith("s", true, 1, &v), ITEM_NON_NUMERIC);
    set("m", "-1");
    ck_assert_int_eq(arith("m", false, 1, &v), ITEM_NON_NUMERIC);
    set("e", "");
    ck_assert_int_eq(arith("e", true, 1, &v), ITEM_NON_NUMERIC);
    set("sp", " 7 ");
    ck_assert_int_eq(arith("sp", true, 1, &v), ITEM_OK);
    ck_assert_uint_eq(v, 8);
}
END_TEST

START_TEST(test_incr_copy_on_write)
{
    set("n", "41");
    struct item *old = item_get("n", 1, FETCH_PEEK, 0);
    uint64_t v;
    ck_assert_int_eq(arith("n", true, 1, &v), ITEM_OK);
    /* the held version is untouched; the new one has its own stamp */
    ck_assert_mem_eq(item_value(old), "41", 2);
    struct item *cur = item_get("n", 1, FETCH_PEEK, 0);
    ck_assert_ptr_ne(cur, old);
    ck_assert_uint_gt(item_cas(cur), item_cas(old));
    ck_assert_uint_eq(*rdn_item_tail(&cur->nic), item_cas(cur));
    ck_assert_uint_eq(cur->nic.flags, 7);
    item_release(cur);
    item_release(old);
}
END_TEST

START_TEST(test_arith_vivify_and_cas)
{
    struct arith_req req = {
        .incr = true, .delta = 1, .vivify = true, .initial = 40};
    struct arith_res res;

    ck_assert_int_eq(item_arith("v", 1, &req, &res), ITEM_OK);
    ck_assert(res.created);
    ck_assert_uint_eq(res.value, 40);
    req.cas = res.cas + 1;
    ck_assert_int_eq(item_arith("v", 1, &req, &res), ITEM_EXISTS);
    req.cas = cas_of("v");
    ck_assert_int_eq(item_arith("v", 1, &req, &res), ITEM_OK);
    ck_assert_uint_eq(res.value, 41);
}
END_TEST

/* ---- deletes and meta semantics ---- */

START_TEST(test_delete)
{
    struct delete_req plain = {0};

    ck_assert_int_eq(item_delete("k", 1, &plain), ITEM_NOT_FOUND);
    set("k", "v");
    struct delete_req wrong = {.cas = cas_of("k") + 1};
    ck_assert_int_eq(item_delete("k", 1, &wrong), ITEM_EXISTS);
    ck_assert_int_eq(item_delete("k", 1, &plain), ITEM_OK);
    ck_assert_str_eq(value_of("k"), "");
    ck_assert_uint_eq(assoc_count(), 0);
}
END_TEST

START_TEST(test_meta_win_and_stale)
{
    struct mget_req viv = {.vivify = true, .viv_exptime = 0};
    struct mget_res r;

    item_meta_get("w", 1, &viv, &r);
    ck_assert_ptr_nonnull(r.it);
    ck_assert(r.won);
    ck_assert(!r.token_sent);
    item_release(r.it);
    item_meta_get("w", 1, &viv, &r);
    ck_assert(!r.won);
    ck_assert(r.token_sent);
    item_release(r.it);

    set("s", "data");
    uint64_t c = cas_of("s");
    struct delete_req stale = {.stale = true};
    ck_assert_int_eq(item_delete("s", 1, &stale), ITEM_OK);
    ck_assert_str_eq(value_of("s"), "data");
    ck_assert_uint_gt(cas_of("s"), c);
    struct mget_req plain = {0};
    item_meta_get("s", 1, &plain, &r);
    ck_assert(r.stale && r.won && !r.token_sent);
    item_release(r.it);
    item_meta_get("s", 1, &plain, &r);
    ck_assert(r.stale && !r.won && r.token_sent);
    item_release(r.it);
}
END_TEST

START_TEST(test_meta_fetched_and_recache)
{
    struct mget_req plain = {0}, nobump = {.no_bump = true};
    struct mget_res r;

    set("f", "v");
    item_meta_get("f", 1, &nobump, &r);
    ck_assert(!r.fetched);
    item_release(r.it);
    item_meta_get("f", 1, &plain, &r);
    ck_assert(!r.fetched);
    item_release(r.it);
    item_meta_get("f", 1, &plain, &r);
    ck_assert(r.fetched);
    item_release(r.it);

    ck_assert_int_eq(put("r", "v", STORE_SET, 0, items_realtime(30)), ITEM_OK);
    struct mget_req rc = {.recache = true, .recache_ttl = items_realtime(10)};
    item_meta_get("r", 1, &rc, &r);
    ck_assert(!r.won); /* 30 s left is more than 10 */
    item_release(r.it);
    rc.recache_ttl = items_realtime(60);
    item_meta_get("r", 1, &rc, &r);
    ck_assert(r.won);
    item_release(r.it);
    item_meta_get("r", 1, &rc, &r);
    ck_assert(!r.won && r.token_sent);
    item_release(r.it);
}
END_TEST

/* ---- eviction ---- */

static void evict_setup(void)
{
    storage_up(2 * 1024 * 1024, true);
}

static void noevict_setup(void)
{
    storage_up(2 * 1024 * 1024, false);
}

static enum item_status put_kv(int i, size_t vlen)
{
    char key[32], val[2000];

    snprintf(key, sizeof(key), "key%d", i);
    memset(val, 'v', vlen);
    val[vlen] = '\0';
    return put(key, val, STORE_SET, 0, 0);
}

START_TEST(test_lru_eviction)
{
    for (int i = 0; i < 6000; i++)
        ck_assert_int_eq(put_kv(i, 1000), ITEM_OK);
    struct items_totals t;
    items_totals(&t);
    ck_assert_uint_gt(t.evictions, 0);
    ck_assert_uint_eq(t.curr_items + t.evictions, 6000);
    ck_assert_str_eq(value_of("key0"), "");
    ck_assert_uint_eq(strlen(value_of("key5999")), 1000);
}
END_TEST

START_TEST(test_lru_recently_used_survives)
{
    /* Fill, then keep touching key0 (an LRU bump happens at most once a
     * minute, so move the clock) while filling more. */
    for (int i = 0; i < 1500; i++)
        ck_assert_int_eq(put_kv(i, 1000), ITEM_OK);
    for (int i = 1500; i < 6000; i++) {
        if (i % 500 == 0) {
            items_clock_shift(61);
            struct item *it = item_get("key0", 4, FETCH_BUMP, 0);
            ck_assert_ptr_nonnull(it);
            item_release(it);
        }
        ck_assert_int_eq(put_kv(i, 1000), ITEM_OK);
    }
    ck_assert_uint_eq(strlen(value_of("key0")), 1000);
    ck_assert_str_eq(value_of("key1"), "");
}
END_TEST

START_TEST(test_referenced_tail_not_evicted)
{
    ck_assert_int_eq(put_kv(0, 1000), ITEM_OK);
    struct item *held = item_get("key0", 4, FETCH_PEEK, 0);
    for (int i = 1; i < 6000; i++)
        ck_assert_int_eq(put_kv(i, 1000), ITEM_OK);
    /* key0 sat at the tail referenced: skipped, never freed under us */
    ck_assert_uint_ne(held->nic.stamp, 0);
    ck_assert_mem_eq(item_value(held), "vvvv", 4);
    struct items_totals t;
    items_totals(&t);
    ck_assert_uint_gt(t.lrutail_reflocked, 0);
    item_release(held);
}
END_TEST

START_TEST(test_no_eviction_with_M)
{
    int stored = 0, oom = 0;

    for (int i = 0; i < 6000; i++) {
        enum item_status why;
        char key[32];
        snprintf(key, sizeof(key), "key%d", i);
        struct item *it = item_alloc(key, strlen(key), 0, 0, 1000, &why);
        if (it == NULL) {
            ck_assert_int_eq(why, ITEM_NO_MEMORY);
            oom++;
            continue;
        }
        struct store_req req = {.op = STORE_SET};
        memset(item_value(it), 'v', 1000);
        ck_assert_int_eq(item_store(it, &req, NULL), ITEM_OK);
        item_release(it);
        stored++;
    }
    ck_assert_int_gt(oom, 0);
    ck_assert_int_gt(stored, 0);
    ck_assert_str_ne(value_of("key0"), "");
    struct items_totals t;
    items_totals(&t);
    ck_assert_uint_eq(t.evictions, 0);
    /* expired items are still reclaimed under -M */
    items_flush(0);
    ck_assert_int_eq(put_kv(7000, 1000), ITEM_OK);
}
END_TEST

/* A NIC reader horizon the test moves by hand (slabs_set_horizon()). */
static uint64_t test_horizon;

static uint64_t fake_horizon(void *ctx)
{
    (void)ctx;
    return load_acquire(&test_horizon);
}

static void *release_limbo_later(void *arg)
{
    (void)arg;
    usleep(50 * 1000);
    store_release(&test_horizon, UINT64_MAX);
    return NULL;
}

START_TEST(test_set_waits_for_limbo)
{
    int i = 0;
    enum item_status st = ITEM_OK;

    /* With the horizon held back, evicted chunks stay in limbo, so the
     * full class runs out of memory after a while. */
    store_release(&test_horizon, 0);
    slabs_set_horizon(fake_horizon, NULL);
    while (i < 6000 && (st = put_kv(i, 1000)) == ITEM_OK)
        i++;
    ck_assert_int_eq(st, ITEM_NO_MEMORY);
    char key[32];
    snprintf(key, sizeof(key), "key%d", i);
    unsigned clsid = slabs_clsid(item_ntotal(strlen(key), 1000));
    ck_assert_uint_gt(slabs_limbo_count(clsid), 0);

    /* The horizon passes them 50 ms later: a SET meanwhile waits for the
     * chunks instead of failing. */
    pthread_t thr;
    ck_assert_int_eq(pthread_create(&thr, NULL, release_limbo_later, NULL), 0);
    ck_assert_int_eq(put_kv(i, 1000), ITEM_OK);
    pthread_join(thr, NULL);
    ck_assert_uint_eq(strlen(value_of(key)), 1000);
    slabs_set_horizon(NULL, NULL);
}
END_TEST

START_TEST(test_too_large)
{
    enum item_status why;

    ck_assert_ptr_null(item_alloc("k", 1, 0, 0, 1024 * 1024, &why));
    ck_assert_int_eq(why, ITEM_TOO_LARGE);
    struct item *it = item_alloc("k", 1, 0, 0, 1000 * 1000, &why);
    ck_assert_ptr_nonnull(it);
    item_release(it);
}
END_TEST

static Suite *items_suite(void)
{
    Suite *s = suite_create("items");
    TCase *tc = tcase_create("core");
    TCase *ev = tcase_create("eviction");
    TCase *nm = tcase_create("no-evict");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_stamps_head_and_tail);
    tcase_add_test(tc, test_copy_on_write);
    tcase_add_test(tc, test_append_prepend_copy);
    tcase_add_test(tc, test_add_replace);
    tcase_add_test(tc, test_cas);
    tcase_add_test(tc, test_cas_stale_set);
    tcase_add_test(tc, test_realtime);
    tcase_add_test(tc, test_lazy_expiry);
    tcase_add_test(tc, test_flush);
    tcase_add_test(tc, test_flush_due_hook);
    tcase_add_test(tc, test_flush_kills_at_birth);
    tcase_add_test(tc, test_crawler_reclaims);
    tcase_add_test(tc, test_flush_during_crawl);
    tcase_add_test(tc, test_incr_decr);
    tcase_add_test(tc, test_incr_copy_on_write);
    tcase_add_test(tc, test_arith_vivify_and_cas);
    tcase_add_test(tc, test_delete);
    tcase_add_test(tc, test_meta_win_and_stale);
    tcase_add_test(tc, test_meta_fetched_and_recache);
    tcase_add_test(tc, test_too_large);
    suite_add_tcase(s, tc);

    tcase_add_checked_fixture(ev, evict_setup, teardown);
    tcase_add_test(ev, test_lru_eviction);
    tcase_add_test(ev, test_lru_recently_used_survives);
    tcase_add_test(ev, test_referenced_tail_not_evicted);
    tcase_add_test(ev, test_set_waits_for_limbo);
    suite_add_tcase(s, ev);

    tcase_add_checked_fixture(nm, noevict_setup, teardown);
    tcase_add_test(nm, test_no_eviction_with_M);
    suite_add_tcase(s, nm);
    return s;
}

int main(void)
{
    return run_suite(items_suite());
}
