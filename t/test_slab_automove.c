/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_slab_automove.c - unit tests of memcached/slab_automove.c, the
 * "slabs automove 1" decision, fed with made-up samples: nothing moves
 * before the window has filled; the youngest evicting class takes a page
 * from the oldest class only past the age ratio, and only while it evicts;
 * a source keeps more than two pages; a destination is a class that
 * evicted in more than half of the window or took more than a quarter of
 * the evictions; a class idle for a whole window with more than 2.5 pages
 * free gives a page to the global pool, and one that got a page, evicted
 * or ran out of memory within the window does not.
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "memcached/slab_automove.h"
#include "t/support/testutil.h"

#define PERSLAB 100

static struct automove_sample cur[SLABS_MAX_CLASSES];
static struct automove *am;

/* Class n holds pages pages with free free chunks, its tail age old. */
static void set_class(unsigned n, uint64_t pages, uint64_t free, uint64_t age)
{
    cur[n].pages = pages;
    cur[n].free_chunks = free;
    cur[n].age = age;
    cur[n].perslab = PERSLAB;
}

static void start(unsigned window, double ratio)
{
    automove_free(am);
    am = automove_new(window, ratio, cur);
    ck_assert_ptr_nonnull(am);
}

/* One run; returns src * 100 + dst, or -1 for no move. */
static int run(void)
{
    int src, dst;

    automove_run(am, cur, &src, &dst);
    if (src == -1 || dst == -1) {
        ck_assert_int_eq(src, -1);
        ck_assert_int_eq(dst, -1);
        return -1;
    }
    return src * 100 + dst;
}

static void setup(void)
{
    memset(cur, 0, sizeof(cur));
    am = NULL;
}

static void teardown(void)
{
    automove_free(am);
}

/* Class 1: old (age 100), 4 full pages; class 2: young (age 10),
 * evicting every interval. */
static void old_and_young(void)
{
    set_class(1, 4, 0, 100);
    set_class(2, 4, 0, 10);
}

START_TEST(test_waits_for_window)
{
    old_and_young();
    start(5, 0.8);
    for (int i = 1; i <= 5; i++) {
        cur[2].evicted += 10;
        ck_assert_int_eq(run(), -1); /* window not filled yet */
    }
    cur[2].evicted += 10;
    ck_assert_int_eq(run(), 102);
    cur[2].evicted += 10;
    ck_assert_int_eq(run(), 102); /* the mover carries it out; asks again */
}
END_TEST

START_TEST(test_ratio)
{
    /* Youngest 85 vs oldest 100: inside 0.8, outside 0.9. */
    set_class(1, 4, 0, 100);
    set_class(2, 4, 0, 85);
    start(3, 0.8);
    for (int i = 0; i < 6; i++) {
        cur[2].evicted++;
        ck_assert_int_eq(run(), -1);
    }
    start(3, 0.9);
    int last = -1;
    for (int i = 0; i < 4; i++) {
        cur[2].evicted++;
        last = run();
    }
    ck_assert_int_eq(last, 102);
}
END_TEST

START_TEST(test_youngest_must_evict_now)
{
    old_and_young();
    start(4, 0.8);
    for (int i = 0; i < 5; i++) {
        cur[2].evicted += 5;
        run();
    }
    /* The window still says class 2 evicts, but not this interval. */
    ck_assert_int_eq(run(), -1);
    cur[2].evicted += 5;
    ck_assert_int_eq(run(), 102);
}
END_TEST

START_TEST(test_source_keeps_two_pages)
{
    set_class(1, 2, 0, 100); /* oldest, but only 2 pages */
    set_class(3, 3, 0, 50);  /* older than 2, 3 pages */
    set_class(2, 4, 0, 10);
    start(3, 0.8);
    int last = -1;
    for (int i = 0; i < 4; i++) {
        cur[2].evicted++;
        last = run();
    }
    ck_assert_int_eq(last, 302);
}
END_TEST

START_TEST(test_evicting_majority_of_window)
{
    /* Window 4: class 2 takes 1% of the evictions in 3 slots (more than
     * half of the window) and qualifies; class 3, younger, evicts in 2
     * slots only with a 1% share and does not. Class 4 takes the rest. */
    set_class(1, 4, 0, 100);
    set_class(2, 4, 0, 20);
    set_class(3, 4, 0, 5);
    set_class(4, 4, 0, 90);
    start(4, 0.8);
    int last = -1;
    for (int i = 1; i <= 5; i++) {
        cur[2].evicted += i >= 3 ? 1 : 0; /* runs 3, 4, 5 */
        cur[3].evicted += i >= 4 ? 1 : 0; /* runs 4, 5 */
        cur[4].evicted += 98;
        last = run();
    }
    ck_assert_int_eq(last, 102);
}
END_TEST

START_TEST(test_evicting_share_of_window)
{
    /* Window 4: class 3 evicts in only 2 of 4 slots (not more than half)
     * but takes all evictions then: a mean share of 0.5 > 0.25. With one
     * such slot (mean share 0.25) it does not qualify. */
    set_class(1, 4, 0, 100);
    set_class(3, 4, 0, 5);
    start(4, 0.8);
    for (int i = 1; i <= 5; i++) {
        cur[3].evicted += i == 5 ? 7 : 0;
        ck_assert_int_eq(run(), -1);
    }
    for (int i = 1; i <= 3; i++) /* slide the one slot out */
        run();
    cur[3].evicted += 7;
    ck_assert_int_eq(run(), -1); /* one slot in 4 */
    cur[3].evicted += 7;
    ck_assert_int_eq(run(), 103); /* two slots in 4 */
}
END_TEST

START_TEST(test_reclaim_to_pool)
{
    /* 251 free chunks of 100 per page: more than 2.5 pages, clean window:
     * at the first run, window filled or not. */
    set_class(5, 6, 251, 30);
    start(30, 0.8);
    ck_assert_int_eq(run(), 500);
    set_class(5, 6, 250, 30); /* exactly 2.5 pages: kept */
    ck_assert_int_eq(run(), -1);
}
END_TEST

START_TEST(test_reclaim_waits_for_clean_window)
{
    set_class(5, 6, 300, 30);
    start(3, 0.8);
    cur[5].pages = 7; /* got a page: dirty */
    ck_assert_int_eq(run(), -1);
    cur[5].outofmemory++; /* dirty */
    ck_assert_int_eq(run(), -1);
    cur[5].evicted++; /* dirty */
    ck_assert_int_eq(run(), -1);
    ck_assert_int_eq(run(), -1);  /* two dirty slots remain */
    ck_assert_int_eq(run(), -1);  /* one */
    ck_assert_int_eq(run(), 500); /* three clean ones */
}
END_TEST

START_TEST(test_reclaim_first_class_wins)
{
    /* The first idle class in id order goes before any age decision. */
    old_and_young();
    set_class(7, 6, 400, 1);
    set_class(9, 6, 400, 1);
    start(3, 0.8);
    for (int i = 0; i < 5; i++) {
        cur[2].evicted++;
        ck_assert_int_eq(run(), 700);
    }
}
END_TEST

START_TEST(test_idle_cache)
{
    /* Nothing evicts: no move, however old the classes. */
    old_and_young();
    start(3, 0.8);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(run(), -1);
}
END_TEST

static Suite *automove_suite(void)
{
    Suite *s = suite_create("slab_automove");
    TCase *tc = tcase_create("decide");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_waits_for_window);
    tcase_add_test(tc, test_ratio);
    tcase_add_test(tc, test_youngest_must_evict_now);
    tcase_add_test(tc, test_source_keeps_two_pages);
    tcase_add_test(tc, test_evicting_majority_of_window);
    tcase_add_test(tc, test_evicting_share_of_window);
    tcase_add_test(tc, test_reclaim_to_pool);
    tcase_add_test(tc, test_reclaim_waits_for_clean_window);
    tcase_add_test(tc, test_reclaim_first_class_wins);
    tcase_add_test(tc, test_idle_cache);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(automove_suite());
}
