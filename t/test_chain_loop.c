/*
 * t/test_chain_loop.c - loops on softnic. Unrolled: 1..8 iterations, with
 * and without break, the break taken at the first, a middle and the last
 * iteration or never, triggers on their own queue or on the body. Recycled:
 * laps counted exactly for several limits, and a 3-segment lap.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rdn/programs/count_while.h"
#include "rdn/programs/counter_loop.h"
#include "t/chain_testutil.h"

/*
 * Runs n iterations of count_while; returns the settled counter. done: the
 * value of the done word once a run without break is over.
 */
static uint64_t run(struct count_while *w, unsigned n, uint64_t k, bool brk,
                    uint64_t done)
{
    ck_assert_msg(count_while_post(w, n, k, brk) == 0, "post: %s",
                  chain_errmsg());
    ck_assert_int_eq(count_while_start(w), 0);
    if (!brk || k == 0 || k > n)
        ck_assert(tc_wait_u64(w->mem.ptr + CW_DONE_OFF, done, TC_MS));
    else
        ck_assert(
            tc_wait_u64(w->mem.ptr + CW_MARK_OFF + 8 * (k - 1), 1, TC_MS));
    return tc_settle_u64(w->mem.ptr + CW_CTR_OFF, 30, TC_MS);
}

static void expect_unrolled(unsigned n, uint64_t k, bool brk, bool own_trig)
{
    struct rnic_device *dev = tc_open(0);
    bool stops = brk && k >= 1 && k <= n;
    struct count_while w;
    uint64_t ctr;

    ck_assert_int_eq(count_while_open(&w, dev, own_trig), 0);
    ctr = run(&w, n, k, brk, 1);
    ck_assert_msg(ctr == (stops ? k : n), "n=%u k=%llu brk=%d: ctr %llu", n,
                  (unsigned long long)k, brk, (unsigned long long)ctr);
    for (unsigned i = 0; i < n; i++)
        ck_assert_msg(tc_load_u64(w.mem.ptr + CW_MARK_OFF + 8 * i) ==
                          (k == i + 1),
                      "n=%u k=%llu: mark %u", n, (unsigned long long)k, i);
    ck_assert_uint_eq(tc_load_u64(w.mem.ptr + CW_DONE_OFF), stops ? 0 : 1);
    count_while_close(&w);
    rnic_close(dev);
}

START_TEST(unrolled_1_to_8)
{
    unsigned n = (unsigned)_i + 1;
    const uint64_t ks[] = {0, 1, (n + 1) / 2, n, n + 1};

    for (size_t j = 0; j < sizeof(ks) / sizeof(ks[0]); j++) {
        expect_unrolled(n, ks[j], false, true);
        expect_unrolled(n, ks[j], true, true);
    }
}
END_TEST

/* Triggers on the body queue itself (a self-enable per iteration). */
START_TEST(unrolled_trigger_on_body)
{
    expect_unrolled(5, 3, true, false);
    expect_unrolled(5, 3, false, false);
    expect_unrolled(5, 6, true, false);
    expect_unrolled(1, 1, true, false);
}
END_TEST

START_TEST(unrolled_needs_managed_queues)
{
    struct rnic_device *dev = tc_open(0);
    struct count_while w;
    struct chain_unrolled l;

    ck_assert_int_eq(count_while_open(&w, dev, true), 0);
    ck_assert_int_lt(chain_unrolled_begin(&l, &w.master, &w.trig), 0);
    ck_assert_int_eq(chain_unrolled_begin(&l, &w.body, &w.trig), 0);
    ck_assert_int_lt(chain_unrolled_end_iter(&l, NULL), 0);
    ck_assert_int_lt(chain_unrolled_finish(&l), 0);
    ck_assert_int_lt(count_while_post(&w, COUNT_WHILE_MAX + 1, 1, true), 0);
    count_while_close(&w);
    rnic_close(dev);
}
END_TEST

/* One set of queues runs one loop after another (indexes keep going). */
START_TEST(unrolled_reuses_queues)
{
    struct rnic_device *dev = tc_open(0);
    struct count_while w;

    ck_assert_int_eq(count_while_open(&w, dev, true), 0);
    for (unsigned r = 1; r <= 40; r++) {
        ck_assert_uint_eq(run(&w, 16, CHAIN_ID48_MAX, true, r), 16);
        ck_assert_uint_eq(tc_load_u64(w.mem.ptr + CW_DONE_OFF), r);
        count_while_retire(&w);
    }
    count_while_close(&w);
    rnic_close(dev);
}
END_TEST

/* A recycled loop that stops after exactly `limit` laps. */
static void expect_laps(uint64_t limit)
{
    struct rnic_device *dev = tc_open(0);
    struct counter_loop c;
    uint64_t laps;

    ck_assert_msg(counter_loop_build(&c, dev, limit) == 0, "build: %s",
                  chain_errmsg());
    ck_assert_int_eq(counter_loop_start(&c), 0);
    ck_assert_msg(tc_wait_u64(c.mem.ptr + COUNTER_TAIL_OFF, limit, TC_MS * 3),
                  "limit %llu: tail %llu laps %llu", (unsigned long long)limit,
                  (unsigned long long)counter_loop_tail(&c),
                  (unsigned long long)counter_loop_laps(&c));
    laps = tc_settle_u64(c.mem.ptr + COUNTER_LAPS_OFF, 30, TC_MS);
    ck_assert_uint_eq(laps, limit);
    ck_assert_uint_eq(tc_settle_u64(c.mem.ptr + COUNTER_TAIL_OFF, 10, TC_MS),
                      limit);
    counter_loop_destroy(&c);
    rnic_close(dev);
}

START_TEST(recycled_laps_exact)
{
    expect_laps(1);
    expect_laps(2);
    expect_laps(3);
    expect_laps(17);
    expect_laps(1000);
    expect_laps(5000);
}
END_TEST

START_TEST(recycled_misuse)
{
    struct rnic_device *dev = tc_open(0);
    struct chain_q q, unmanaged;
    struct chain_buf mem;
    struct chain_recycled l;

    tc_q(dev, TC_MANAGED, 16, 0, NULL, &q);
    tc_q(dev, RNIC_QP_CROSS_CHANNEL, 16, 0, NULL, &unmanaged);
    tc_buf(dev, 4096, &mem);
    ck_assert_int_lt(
        chain_recycled_begin(&l, &unmanaged, chain_buf_loc(&mem, 0, 64)), 0);
    ck_assert_int_lt(chain_recycled_begin(&l, &q, chain_buf_loc(&mem, 4, 64)),
                     0); /* unaligned state */
    ck_assert_int_eq(chain_recycled_begin(&l, &q, chain_buf_loc(&mem, 0, 64)),
                     0);
    ck_assert_int_lt(chain_recycled_end(&l), 0); /* one segment */
    ck_assert_int_eq(chain_recycled_next(&l), 0);
    for (int i = 0; i < 6; i++) /* fills the ring of 16 */
        ck_assert_int_eq(chain_nop(&q, 0, NULL), 0);
    ck_assert_int_eq(chain_recycled_end(&l), -ENOSPC); /* lap > ring */
    chain_q_close(&unmanaged);
    chain_q_close(&q);
    chain_buf_close(&mem);
    rnic_close(dev);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chain_loop");
    TCase *tc = tcase_create("loop");

    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, unrolled_1_to_8, 0, 8);
    tcase_add_test(tc, unrolled_trigger_on_body);
    tcase_add_test(tc, unrolled_needs_managed_queues);
    tcase_add_test(tc, unrolled_reuses_queues);
    tcase_add_test(tc, recycled_laps_exact);
    tcase_add_test(tc, recycled_misuse);
    suite_add_tcase(s, tc);
    return tc_run_suite(s);
}
