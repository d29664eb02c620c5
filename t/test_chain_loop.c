/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_chain_loop.c - loops on softnic. Unrolled: 1..8 iterations, with
 * and without break, the break taken at the first, a middle and the last
 * iteration or never, triggers on their own queue or on the body. Recycled:
 * laps counted exactly for several limits, and a 3-segment lap; the
 * per-lap index arithmetic across the 2^32 wrap of the WAIT counts.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "proto/byteorder.h"
#include "rdn/programs/count_while.h"
#include "rdn/programs/counter_loop.h"
#include "t/support/chain_testutil.h"

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

/* The opmod byte (id byte 5) of w's ctrl segment as it is now. */
static uint8_t opmod_now(const struct chain_wqe *w)
{
    struct chain_loc b;

    ck_assert_int_eq(chain_id48_byte(w, 5, &b), 0);
    return *(volatile uint8_t *)b.ptr;
}

/*
 * A break in DISARM mode (x != y here: the guarded WRITE stays, the loop
 * goes on). The trigger carries the target's idle opcode (WRITE), and it
 * executes as a SEND_EN: that byte must not sit in opmod, which ConnectX
 * reads for some opcodes; it used to.
 */
START_TEST(unrolled_trigger_keeps_opmod_zero)
{
    struct rnic_device *dev = tc_open(0);
    struct count_while w;
    struct chain_unrolled l;
    struct chain_wqe first;
    struct chain_if iff;
    struct rnic_sge one;
    struct chain_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE, .nsg = 1};

    ck_assert_int_eq(count_while_open(&w, dev, true), 0);
    *(uint64_t *)(w.mem.ptr + CW_ONE_OFF) = 1;
    one = chain_loc_sge(chain_buf_loc(&w.mem, CW_ONE_OFF, 8));
    wr.sg = &one;
    wr.raddr = chain_loc_addr(chain_buf_loc(&w.mem, CW_MARK_OFF, 8));
    wr.rkey = w.mem.mr->rkey;
    ck_assert_int_eq(chain_unrolled_begin(&l, &w.body, &w.trig), 0);
    ck_assert_int_eq(chain_unrolled_iter(&l), 0);
    ck_assert_int_eq(
        chain_if_post(&w.body, &w.trig, &wr, 1, 2, CHAIN_IF_DISARM, 0, &iff),
        0);
    ck_assert_int_eq(chain_unrolled_end_iter(&l, &iff), 0);
    first = l.trigger;
    ck_assert_uint_eq(opmod_now(&first), 0);
    ck_assert_int_eq(chain_unrolled_iter(&l), 0);
    ck_assert_int_eq(chain_unrolled_end_iter(&l, NULL), 0);
    ck_assert_int_eq(chain_fadd(&w.body, chain_buf_loc(&w.mem, CW_DONE_OFF, 8),
                                1, NULL, 0, NULL),
                     0);
    ck_assert_int_eq(chain_unrolled_finish(&l), 0);
    ck_assert_int_eq(chain_send_en(&w.master, &w.body, l.first_end, 0, NULL),
                     0);
    ck_assert_int_eq(count_while_start(&w), 0);
    ck_assert(tc_wait_u64(w.mem.ptr + CW_DONE_OFF, 1, TC_MS));
    ck_assert_uint_eq(tc_load_u64(w.mem.ptr + CW_MARK_OFF), 1);
    ck_assert_uint_eq(opmod_now(&first), 0);
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

/* 5000 laps of the 32-WQEBB ring cross the 16-bit enable index wrap twice. */
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

static uint64_t field_be64(const struct chain_wqe *w, enum chain_field f,
                           unsigned i)
{
    struct chain_loc l;
    be64 v;

    ck_assert_int_eq(chain_field(w, f, i, &l), 0);
    memcpy(&v, l.ptr, 8);
    return be64_to_cpu(v);
}

static uint32_t field_be32(const struct chain_wqe *w, enum chain_field f,
                           unsigned i)
{
    struct chain_loc l;
    be32 v;

    ck_assert_int_eq(chain_field(w, f, i, &l), 0);
    memcpy(&v, l.ptr, 4);
    return be32_to_cpu(v);
}

/*
 * Plays the NIC's part for lap n >= 1 of segment j of a built (never
 * started) recycled loop: the counter feeding j, bumped as many times as
 * the FADD before it ran by then (64-bit wrapping adds, as the NIC's), is
 * copied by the READ's scatter list into j's WAIT and SEND_EN. Returns the
 * WAIT count and the low 16 bits of the enable index they then hold.
 */
static void nic_lap(const struct chain_recycled *l, unsigned j, uint64_t n,
                    uint32_t *wait, uint16_t *en)
{
    unsigned s = (j + l->nseg - 1) % l->nseg; /* the segment patching j */
    uint64_t bumps = j == 0 ? n : n + 1, v;
    uint8_t bytes[8];

    memcpy(&v, (void *)(uintptr_t)field_be64(&l->fadd[s], CHAIN_F_RADDR, 0), 8);
    v += bumps * field_be64(&l->fadd[s], CHAIN_F_SWAP, 0);
    memcpy(bytes, &v, 8);
    for (unsigned i = 0, off = 0; i < CHAIN_LAP_SGES; i++) {
        uint64_t dst = field_be64(&l->patch[s], CHAIN_F_ADDR, i);
        uint32_t len = field_be32(&l->patch[s], CHAIN_F_BYTE_COUNT, i);

        ck_assert_uint_le(off + len, 8);
        memcpy((void *)(uintptr_t)dst, bytes + off, len);
        off += len;
    }
    *wait = field_be32(&l->wait[j], CHAIN_F_INDEX, 0);
    *en = (uint16_t)field_be32(&l->en[j], CHAIN_F_INDEX, 0);
}

/*
 * The indexes the NIC computes stay exact across the 2^32 wrap of the
 * completion count (once and several times) and the 2^16 wrap of the
 * enable index. Before the counter had a carry gap, each wrap of the WAIT
 * count added one WQEBB to every later enable index, for good.
 */
START_TEST(recycled_indexes_across_wraps)
{
    struct rnic_device *dev = tc_open(0);
    struct counter_loop c;
    const struct chain_recycled *l = &c.rl;

    ck_assert_int_eq(counter_loop_build(&c, dev, 0), 0);
    for (unsigned k = 0; k <= 6; k++) {
        uint64_t wrap = ((uint64_t)k << 32) / l->lap_cqes;
        const uint64_t laps[] = {wrap, wrap + 1, wrap + 2, wrap + 65536};

        for (unsigned i = 0; i < 4; i++) {
            uint64_t n = laps[i] ? laps[i] : 1;

            for (unsigned j = 0; j < l->nseg; j++) {
                uint32_t wait,
                    want_wait =
                        l->cq_base + (uint32_t)n * l->lap_cqes + l->cqc[j];
                uint32_t want_en =
                    j + 1 < l->nseg
                        ? l->base + (uint32_t)n * l->lap_wqebb + l->end[j + 1]
                        : l->base + (uint32_t)(n + 1) * l->lap_wqebb +
                              l->end[0];
                uint16_t en;

                nic_lap(l, j, n, &wait, &en);
                ck_assert_msg(wait == want_wait && en == (uint16_t)want_en,
                              "lap %llu segment %u: WAIT %u (want %u), "
                              "enable %u (want %u)",
                              (unsigned long long)n, j, wait, want_wait, en,
                              (uint16_t)want_en);
            }
        }
    }
    counter_loop_destroy(&c);
    rnic_close(dev);
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
    tcase_add_test(tc, unrolled_trigger_keeps_opmod_zero);
    tcase_add_test(tc, unrolled_reuses_queues);
    tcase_add_test(tc, recycled_laps_exact);
    tcase_add_test(tc, recycled_indexes_across_wraps);
    tcase_add_test(tc, recycled_misuse);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
