/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_persist.c - unit tests of memcached/persist.c: a restart simulated
 * in-process. The "previous server" is a forked child that builds the
 * storage over shared memory (arena, table region and metadata mapped
 * MAP_SHARED before the fork, at the same addresses in both), stores items
 * and then kills itself with SIGKILL; the test process adopts what it left
 * and compares every key, value, flags and CAS. Also: one inconsistent slot
 * is dropped, a half-finished cuckoo move loses nothing, two corrupt slots
 * or a corrupt superblock or other settings are refused, expired and
 * flushed items are not re-linked, a kill in the middle of a SET storm or of a
 * table growth leaves nothing torn.
 */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memcached/assoc.h"
#include "memcached/crawler.h"
#include "memcached/items.h"
#include "memcached/persist_int.h"
#include "memcached/settings.h"
#include "memcached/slabs.h"
#include "proto/byteorder.h"
#include "t/support/testutil.h"

#define NKEYS       3000
#define MEM_LIMIT   (32u << 20)
#define TABLE_BYTES (64u << 20)
#define META_BYTES  (1u << 20)
#define STORM_KEYS  400

/* What both sides of the fork share besides the memory itself. */
struct shared {
    size_t table_used; /* the table region's carve pointer */
    int discards;
    int child_ok;
    uint64_t cas[NKEYS];
};

static struct shared *sh;
static char *arena_mem, *table_mem, *meta_mem;
static size_t arena_cap;

static void *shared_map(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    ck_assert_ptr_ne(p, MAP_FAILED);
    return p;
}

/* The arena hook: always the same shared memory, contents kept. */
static void *arena_map(size_t len, void *ctx)
{
    (void)ctx;
    return len <= arena_cap ? arena_mem : NULL;
}

static void no_unmap(void *addr, size_t len, void *ctx)
{
    (void)addr, (void)len, (void)ctx;
}

/* The table hook: carves the shared region, as the offload does. */
static void *table_map(size_t len, void *ctx)
{
    size_t n = (len + 4095) & ~(size_t)4095;

    (void)ctx;
    if (sh->table_used + n > TABLE_BYTES)
        return NULL;
    sh->table_used += n;
    return table_mem + sh->table_used - n;
}

static int discard(void *ctx)
{
    (void)ctx;
    memset(meta_mem, 0, META_BYTES);
    memset(arena_mem, 0, arena_cap);
    memset(table_mem, 0, sh->table_used);
    sh->table_used = 0;
    sh->discards++;
    return 0;
}

static const struct arena_hooks arena_hooks_shared = {arena_map, no_unmap,
                                                      NULL};
static const struct arena_hooks table_hooks_shared = {table_map, no_unmap,
                                                      NULL};

static void settings_up(void)
{
    settings_init();
    settings.lru_crawler = false;
    settings.maxbytes = MEM_LIMIT;
    settings.hashpower_init = 12;
}

static void setup(void)
{
    settings_up();
    arena_cap =
        slabs_arena_bytes(settings.maxbytes, settings.factor,
                          (size_t)settings.chunk_size, settings.item_size_max) +
        (1u << 20);
    ck_assert_uint_le(persist_meta_len(), META_BYTES);
    sh = shared_map(sizeof(*sh));
    arena_mem = shared_map(arena_cap);
    table_mem = shared_map(TABLE_BYTES);
    meta_mem = shared_map(META_BYTES);
}

/* Builds the storage over the shared memory; res may be NULL. */
static void storage_up(bool reattached, struct persist_result *res)
{
    struct persist_env env = {
        .arena_hooks = &arena_hooks_shared,
        .table_hooks = &table_hooks_shared,
        .meta = meta_mem,
        .reattached = reattached,
        .discard = discard,
    };

    ck_assert_int_eq(persist_storage_init(&env, res), 0);
}

/* ---- keys and values -------------------------------------------------- */

static size_t value_len(int i)
{
    if (i % 600 == 0)
        return 300000;
    if (i % 97 == 0)
        return 20000;
    return (size_t)(i * 37) % 1500;
}

static void key_of(int i, char *buf)
{
    sprintf(buf, "key:%d", i);
}

static char value_byte(int i, int version, size_t j)
{
    return (char)((size_t)i * 131 + j * 7 + (size_t)version * 29);
}

/* Stores version of key i; returns its CAS. */
static uint64_t put(int i, int version, uint32_t exptime)
{
    char key[32];
    enum item_status why;
    struct store_req req = {.op = STORE_SET};
    size_t n = value_len(i);
    struct item *it;
    uint64_t cas = 0;

    static char buf[300000];

    key_of(i, key);
    it = item_alloc(key, strlen(key), (uint32_t)i * 3, exptime, n, &why);
    REQUIRE(it != NULL);
    for (size_t j = 0; j < n; j++)
        buf[j] = value_byte(i, version, j);
    memcpy(item_value(it), buf, n);
    REQUIRE(item_store(it, &req, &cas) == ITEM_OK);
    item_release(it);
    return cas;
}

/* Key i holds version with CAS cas (0: any CAS); or is absent (version
 * < 0). */
static void expect(int i, int version, uint64_t cas)
{
    char key[32];
    struct item *it;

    key_of(i, key);
    it = item_get(key, strlen(key), FETCH_PEEK, 0);
    if (version < 0) {
        if (it != NULL)
            ck_abort_msg("%s should be absent", key);
        return;
    }
    if (it == NULL)
        ck_abort_msg("%s is missing", key);
    REQUIRE(it->nic.nbytes == value_len(i));
    REQUIRE(it->nic.flags == (uint32_t)i * 3);
    REQUIRE(cas == 0 || item_cas(it) == cas);
    for (size_t j = 0; j < value_len(i); j++)
        REQUIRE(item_value(it)[j] == value_byte(i, version, j));
    item_release(it);
}

static uint64_t curr_items(void)
{
    struct items_totals t;

    items_totals(&t);
    return t.curr_items;
}

/* ---- the previous process ---------------------------------------------- */

/* Runs fn in a child that then dies by SIGKILL; fn sets sh->child_ok. */
static void previous_process(void (*fn)(void))
{
    pid_t pid = fork();
    int status;

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        fn();
        kill(getpid(), SIGKILL);
        _exit(99);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    ck_assert_int_eq(sh->child_ok, 1);
    sh->child_ok = 0;
}

static void fill(void)
{
    struct items_totals t;

    storage_up(false, NULL);
    for (int i = 0; i < NKEYS; i++)
        sh->cas[i] = put(i, 0, 0);
    items_totals(&t);
    sh->child_ok = t.evictions == 0 && t.curr_items == NKEYS;
}

/* A second life: adopts, overwrites the even keys, deletes every tenth. */
static void modify(void)
{
    struct persist_result res;
    struct delete_req del = {0};
    char key[32];

    storage_up(true, &res);
    if (!res.adopted || res.items != NKEYS)
        return;
    for (int i = 0; i < NKEYS; i += 2)
        sh->cas[i] = put(i, 1, 0);
    for (int i = 0; i < NKEYS; i += 10) {
        key_of(i, key);
        if (item_delete(key, strlen(key), &del) != ITEM_OK)
            return;
    }
    sh->child_ok = 1;
}

/* ---- inspecting and corrupting the table the child left --------------- */

static const struct persist_sb *sb(void)
{
    return (const struct persist_sb *)meta_mem;
}

/* The words of the n-th non-empty slot of the current table. */
static uint64_t *nth_slot(int n)
{
    const struct persist_table *t = persist_table_current(sb());
    uint64_t *w = (uint64_t *)(uintptr_t)t->buckets;
    uint64_t nslots = (UINT64_C(1) << t->hashpower) * RDN_BUCKET_SLOTS;

    for (uint64_t i = 0; i < nslots; i++, w += 3)
        if (w[0] != rdn_slot_match(0) && n-- == 0)
            return w;
    ck_abort_msg("no slot %d", n);
    return NULL;
}

/* The key index of the item a slot names. */
static int key_in_slot(const uint64_t *w)
{
    const struct rdn_item *it =
        (const void *)(uintptr_t)be64_to_cpu(*(const be64 *)&w[2]);
    char key[32] = {0};

    memcpy(key, rdn_item_key((struct rdn_item *)it), it->nkey);
    return atoi(key + 4);
}

/* ---- tests ------------------------------------------------------------ */

START_TEST(test_restart_keeps_everything)
{
    struct persist_result res;
    struct delete_req del = {0};
    uint64_t max_cas = 0;

    previous_process(fill);
    previous_process(modify);
    storage_up(true, &res);
    ck_assert(res.adopted);
    ck_assert_ptr_null(res.refused);
    ck_assert_uint_eq(res.dropped, 0);
    ck_assert_uint_eq(res.items, NKEYS - NKEYS / 10);
    ck_assert_uint_eq(curr_items(), NKEYS - NKEYS / 10);
    ck_assert_uint_eq(assoc_count(), NKEYS - NKEYS / 10);
    for (int i = 0; i < NKEYS; i++) {
        expect(i, i % 10 == 0 ? -1 : i % 2 == 0 ? 1 : 0, sh->cas[i]);
        if (sh->cas[i] > max_cas)
            max_cas = sh->cas[i];
    }
    /* The cache works on: new CAS ids are new, SET and DELETE work, and
     * memory freed before the crash is found again. */
    ck_assert_uint_gt(put(1, 5, 0), max_cas);
    expect(1, 5, 0);
    ck_assert_int_eq(item_delete("key:3", 5, &del), ITEM_OK);
    expect(3, -1, 0);
    for (int i = 0; i < NKEYS; i += 10)
        put(i, 2, 0);
    expect(10, 2, 0);
    ck_assert_uint_eq(curr_items(), NKEYS - 1);
    struct items_totals t;
    items_totals(&t);
    ck_assert_uint_eq(t.evictions, 0);
}
END_TEST

START_TEST(test_one_bad_slot_dropped)
{
    struct persist_result res;
    struct rdn_slot *s;
    uint64_t *w;
    int victim;

    previous_process(fill);
    w = nth_slot(100);
    victim = key_in_slot(w);
    /* A replace cut between its two descriptor stores: the length is
     * another item's. */
    s = (struct rdn_slot *)w;
    s->desc.byte_count = cpu_to_be32(be32_to_cpu(s->desc.byte_count) + 8);
    storage_up(true, &res);
    ck_assert(res.adopted);
    ck_assert_uint_eq(res.dropped, 1);
    ck_assert_uint_eq(res.items, NKEYS - 1);
    for (int i = 0; i < NKEYS; i++)
        expect(i, i == victim ? -1 : 0, sh->cas[i]);
    ck_assert_uint_eq(sh->discards, 0);
}
END_TEST

START_TEST(test_half_move_loses_nothing)
{
    struct persist_result res;
    const struct persist_table *t;
    struct rdn_keyhash kh;
    uint64_t *w = NULL, *dst = NULL, mask, b, *words;

    previous_process(fill);
    t = persist_table_current(sb());
    mask = (UINT64_C(1) << t->hashpower) - 1;
    words = (uint64_t *)(uintptr_t)t->buckets;
    /* A slot whose other bucket has room: copy it there, as a cuckoo move
     * that the kill cut before it cleared the source. */
    for (int n = 0; dst == NULL; n++) {
        char key[32];
        int k;

        w = nth_slot(n);
        k = key_in_slot(w);
        key_of(k, key);
        assoc_keyhash(key, strlen(key), &kh);
        b = (uint64_t)(w - words) / 3 / RDN_BUCKET_SLOTS;
        b = (kh.bucket1 & mask) == b ? kh.bucket2 & mask : kh.bucket1 & mask;
        for (unsigned s = 0; s < RDN_BUCKET_SLOTS && dst == NULL; s++)
            if (words[(b * RDN_BUCKET_SLOTS + s) * 3] == rdn_slot_match(0))
                dst = &words[(b * RDN_BUCKET_SLOTS + s) * 3];
    }
    memcpy(dst, w, 24);
    storage_up(true, &res);
    ck_assert(res.adopted);
    ck_assert_uint_eq(res.dropped, 1);
    ck_assert_uint_eq(res.items, NKEYS);
    for (int i = 0; i < NKEYS; i++)
        expect(i, 0, sh->cas[i]);
    ck_assert_uint_eq(assoc_count(), NKEYS);
}
END_TEST

/* Refused: empty, discarded once, and working. */
static void assert_refused(const struct persist_result *res, const char *why)
{
    ck_assert(!res->adopted);
    ck_assert_ptr_nonnull(res->refused);
    ck_assert_msg(strstr(res->refused, why) != NULL, "refused: %s",
                  res->refused);
    ck_assert_int_eq(sh->discards, 1);
    ck_assert_uint_eq(curr_items(), 0);
    for (int i = 0; i < NKEYS; i += 7)
        expect(i, -1, 0);
    put(5, 3, 0);
    expect(5, 3, 0);
    ck_assert_uint_eq(sb()->magic, PERSIST_MAGIC);
    ck_assert_uint_eq(sb()->npages, 1);
}

START_TEST(test_two_bad_slots_refused)
{
    struct persist_result res;
    be64 *a;

    previous_process(fill);
    a = (be64 *)&nth_slot(10)[2];
    *a = cpu_to_be64(be64_to_cpu(*a) ^ 8);  /* off a chunk boundary */
    nth_slot(2000)[0] ^= UINT64_C(1) << 40; /* another fingerprint */
    storage_up(true, &res);
    assert_refused(&res, "more than one inconsistent slot");
}
END_TEST

START_TEST(test_torn_items_refused)
{
    struct persist_result res;

    previous_process(fill);
    for (int n = 0; n < 50; n++) {
        struct rdn_item *it = (struct rdn_item *)(uintptr_t)be64_to_cpu(
            *(const be64 *)&nth_slot(n * 7)[2]);

        *rdn_item_tail(it) += 1;
    }
    storage_up(true, &res);
    assert_refused(&res, "torn item");
}
END_TEST

START_TEST(test_superblock_corrupt_refused)
{
    struct persist_result res;

    previous_process(fill);
    meta_mem[offsetof(struct persist_sb, geo) + 3] ^= 1;
    storage_up(true, &res);
    assert_refused(&res, "superblock checksum");
}
END_TEST

START_TEST(test_table_record_corrupt_refused)
{
    struct persist_result res;
    struct persist_sb *s = (struct persist_sb *)meta_mem;

    previous_process(fill);
    s->table[s->table_seq & 1].buckets += sizeof(struct rdn_bucket);
    storage_up(true, &res);
    assert_refused(&res, "table record");
}
END_TEST

START_TEST(test_other_settings_refused)
{
    struct persist_result res;

    previous_process(fill);
    settings.maxbytes = MEM_LIMIT / 2;
    storage_up(true, &res);
    assert_refused(&res, "memory limit");
}
END_TEST

static void fill_expiring(void)
{
    storage_up(false, NULL);
    for (int i = 0; i < NKEYS; i++)
        sh->cas[i] = put(i, 0, i % 2 ? items_now() + 100 : 0);
    sh->child_ok = 1;
}

START_TEST(test_expired_not_relinked)
{
    struct persist_result res;
    struct stat_rec st = {0};
    long long used = 0;

    previous_process(fill_expiring);
    items_clock_shift(200);
    storage_up(true, &res);
    ck_assert(res.adopted);
    ck_assert_uint_eq(res.expired, NKEYS / 2);
    ck_assert_uint_eq(res.items, NKEYS / 2);
    for (int i = 0; i < NKEYS; i++)
        expect(i, i % 2 ? -1 : 0, sh->cas[i]);
    /* Their chunks are free again: only the live items' are in use. */
    slabs_stats(record_stat, &st);
    for (int i = 0; i < st.n; i++)
        if (strstr(st.name[i], ":used_chunks"))
            used += atoll(st.value[i]);
    ck_assert_int_eq(used, NKEYS / 2);
}
END_TEST

/* flush_all, then one SET in the same second, then the kill before any
 * crawl: the flush still holds after the restart. */
static void fill_flush_set(void)
{
    fill();
    items_flush(0);
    sh->cas[7] = put(7, 9, 0);
}

START_TEST(test_flush_survives_restart)
{
    struct persist_result res;

    previous_process(fill_flush_set);
    storage_up(true, &res);
    ck_assert(res.adopted);
    ck_assert_uint_eq(res.items, 1);
    ck_assert_uint_eq(res.expired, NKEYS - 1); /* key 7 was replaced */
    for (int i = 0; i < NKEYS; i++)
        expect(i, i == 7 ? 9 : -1, sh->cas[i]);
}
END_TEST

/* flush_all and the crawl that empties the table, then nothing: the next
 * life's first SETs must not be born flushed, nor reuse a CAS id of the
 * previous life, though no item tells it how far the ids went. */
static void fill_flush(void)
{
    fill();
    items_flush(0);
    for (unsigned id = 1; id <= slabs_nclasses(); id++)
        crawler_crawl_class(id);
}

/* Every key deleted, no flush: only the CAS mark remembers how far the
 * ids went. */
static void fill_delete_all(void)
{
    struct delete_req del = {0};
    char key[32];

    fill();
    for (int i = 0; i < NKEYS; i++) {
        key_of(i, key);
        REQUIRE(item_delete(key, strlen(key), &del) == ITEM_OK);
    }
}

START_TEST(test_cas_ids_not_reused)
{
    struct persist_result res;
    uint64_t old_max = 0;

    previous_process(fill_delete_all);
    storage_up(true, &res);
    ck_assert(res.adopted);
    ck_assert_uint_eq(res.items, 0);
    for (int i = 0; i < NKEYS; i++)
        old_max = sh->cas[i] > old_max ? sh->cas[i] : old_max;
    ck_assert_uint_gt(put(5, 1, 0), old_max);
}
END_TEST

START_TEST(test_cas_mark_corrupt_refused)
{
    struct persist_result res;

    previous_process(fill);
    ((struct persist_sb *)meta_mem)->cas_mark = UINT64_MAX - 5;
    storage_up(true, &res);
    assert_refused(&res, "CAS mark corrupt");
}
END_TEST

START_TEST(test_set_after_flush_and_restart)
{
    struct persist_result res;
    uint64_t cas, old_max = 0;

    previous_process(fill_flush);
    storage_up(true, &res);
    ck_assert(res.adopted);
    ck_assert_uint_eq(res.items, 0);
    ck_assert_uint_eq(res.expired, 0); /* the crawl took them all */
    for (int i = 0; i < NKEYS; i++)
        old_max = sh->cas[i] > old_max ? sh->cas[i] : old_max;
    cas = put(3, 5, 0);
    ck_assert_uint_gt(cas, old_max);
    expect(3, 5, cas);
}
END_TEST

/* ---- a kill in the middle of a SET storm ------------------------------ */

/* A value that names its key and version and checks itself. */
static size_t storm_value(int k, unsigned ver, char *buf)
{
    size_t n = 16 + (size_t)(k * 13 + ver * 31) % 3000;
    uint32_t sum = 0;

    for (size_t j = 12; j < n; j++)
        sum += (uint8_t)(buf[j] = (char)(k + ver * 7 + j));
    memcpy(buf, &k, 4);
    memcpy(buf + 4, &ver, 4);
    memcpy(buf + 8, &sum, 4);
    return n;
}

static bool storm_value_ok(int k, const char *v, size_t n)
{
    char want[4096];
    unsigned ver;

    if (n < 12)
        return false;
    memcpy(&ver, v + 4, 4);
    return storm_value(k, ver, want) == n && memcmp(want, v, n) == 0;
}

static void *storm_writer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    char buf[4096], key[32];

    for (unsigned ver = 1;; ver++) {
        int k = (int)(rand_r(&seed) % STORM_KEYS);
        size_t n = storm_value(k, ver, buf);
        struct store_req req = {.op = STORE_SET};
        enum item_status why;
        struct item *it;

        sprintf(key, "storm:%d", k);
        it = item_alloc(key, strlen(key), 0, 0, n, &why);
        if (it == NULL)
            continue;
        memcpy(item_value(it), buf, n);
        item_store(it, &req, NULL);
        item_release(it);
        if (rand_r(&seed) % 16 == 0)
            item_unlink_key(key, strlen(key));
    }
    return NULL;
}

static void storm(void)
{
    pthread_t th[4];

    storage_up(false, NULL);
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, storm_writer, (void *)(i + 1));
    usleep(30000 + (useconds_t)(getpid() % 40) * 1000);
    sh->child_ok = 1;
}

START_TEST(test_kill_during_set_storm)
{
    for (int round = 0; round < 4; round++) {
        struct persist_result res;
        int present = 0;

        previous_process(storm);
        storage_up(true, &res);
        ck_assert_msg(res.adopted, "round %d refused: %s", round,
                      res.refused ? res.refused : "?");
        ck_assert_uint_le(res.dropped, 1);
        for (int k = 0; k < STORM_KEYS; k++) {
            char key[32];
            struct item *it;

            sprintf(key, "storm:%d", k);
            it = item_get(key, strlen(key), FETCH_PEEK, 0);
            if (it == NULL)
                continue;
            present++;
            ck_assert_msg(storm_value_ok(k, item_value(it), it->nic.nbytes),
                          "round %d: %s torn", round, key);
            item_release(it);
        }
        ck_assert_int_gt(present, STORM_KEYS / 2);
        ck_assert_uint_eq(curr_items(), (uint64_t)present);
        /* The next life starts from this one's memory. */
        items_stop();
        assoc_stop();
        slabs_destroy();
        arena_destroy();
        sh->table_used = 0;
        memset(meta_mem, 0, META_BYTES);
    }
}
END_TEST

/* ---- a kill in the middle of a table growth --------------------------- */

#define GROW_KEYS 12000

static void grow(void)
{
    char key[32];

    storage_up(false, NULL);
    for (int i = 0; i < GROW_KEYS; i++) {
        enum item_status why;
        struct store_req req = {.op = STORE_SET};
        struct item *it;

        sprintf(key, "g%d", i);
        it = item_alloc(key, strlen(key), (uint32_t)i, 0, 8, &why);
        memcpy(item_value(it), "grown-up", 8);
        item_store(it, &req, NULL);
        item_release(it);
    }
    sh->child_ok = assoc_expand(false) == 0;
}

START_TEST(test_kill_during_growth)
{
    struct persist_result res;
    const struct persist_table *t;

    /* A big table, so that its migration is still running at the kill. */
    settings.hashpower_init = 15;
    previous_process(grow);
    t = persist_table_current(sb());
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_ne(t->old_buckets, 0); /* the kill came mid-migration */
    storage_up(true, &res);
    ck_assert(res.adopted);
    ck_assert_uint_le(res.dropped, 1);
    ck_assert_uint_eq(res.items, GROW_KEYS);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < GROW_KEYS; i++) {
            char key[32];
            struct item *it;

            sprintf(key, "g%d", i);
            it = item_get(key, strlen(key), FETCH_PEEK, 0);
            REQUIRE(it != NULL && it->nic.flags == (uint32_t)i);
            item_release(it);
        }
        /* Then once the resumed migration is over. */
        for (;;) {
            struct assoc_info info;

            assoc_get_info(&info);
            if (!info.expanding)
                break;
            usleep(1000);
        }
    }
    ck_assert_uint_eq(assoc_count(), GROW_KEYS + 0u);
}
END_TEST

static Suite *persist_suite(void)
{
    Suite *s = suite_create("persist");
    TCase *tc = tcase_create("restart");

    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_restart_keeps_everything);
    tcase_add_test(tc, test_one_bad_slot_dropped);
    tcase_add_test(tc, test_half_move_loses_nothing);
    tcase_add_test(tc, test_two_bad_slots_refused);
    tcase_add_test(tc, test_torn_items_refused);
    tcase_add_test(tc, test_superblock_corrupt_refused);
    tcase_add_test(tc, test_table_record_corrupt_refused);
    tcase_add_test(tc, test_other_settings_refused);
    tcase_add_test(tc, test_expired_not_relinked);
    tcase_add_test(tc, test_flush_survives_restart);
    tcase_add_test(tc, test_set_after_flush_and_restart);
    tcase_add_test(tc, test_cas_ids_not_reused);
    tcase_add_test(tc, test_cas_mark_corrupt_refused);
    tcase_add_test(tc, test_kill_during_set_storm);
    tcase_add_test(tc, test_kill_during_growth);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(persist_suite());
}
