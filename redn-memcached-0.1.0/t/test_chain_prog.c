/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_chain_prog.c - programs that run on the NIC alone: the linked-list
 * walk (1..8 nodes, key at every position or absent, with and without
 * break, value returned to a remote client QP), the recycled counter that
 * a remote client stops after >= 100,000 laps, and Turing machines (busy
 * beavers) checked against a CPU reference.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rdn/programs/counter_loop.h"
#include "rdn/programs/list_walk.h"
#include "rdn/programs/turing.h"
#include "t/support/chain_testutil.h"

#define VALUE_LEN 24

/* softnic's strict prefetch window for the current test (0: JIT). */
static int strict;
#define NODES_OFF 0
#define VALS_OFF  1024
#define REQ_OFF   2048

static uint64_t key_of(unsigned i, unsigned n)
{
    if (i == 0)
        return 0; /* boundary operands are ordinary keys */
    if (i + 1 == n)
        return CHAIN_ID48_MAX;
    return 0x5a5a00000000ull + 0x10101ull * i;
}

struct lw_env {
    struct rnic_device *dev;
    struct chain_q client;
    struct chain_buf srv, cli;
    struct list_walk lw;
};

/* Lays out n nodes with values on the server side. */
static void lay_list(struct lw_env *e, unsigned n)
{
    struct list_node *nodes = (struct list_node *)(e->srv.ptr + NODES_OFF);

    for (unsigned i = 0; i < n; i++) {
        uint8_t *v = e->srv.ptr + VALS_OFF + 32 * i;

        snprintf((char *)v, 32, "value of node %u ......", i);
        list_node_set(&nodes[i], key_of(i, n), VALUE_LEN, e->srv.mr->lkey,
                      (uint64_t)(uintptr_t)v,
                      i + 1 < n ? (uint64_t)(uintptr_t)&nodes[i + 1] : 0);
    }
}

static void lw_open(struct lw_env *e, unsigned n, bool brk)
{
    struct list_walk_cfg cfg = {.nodes = n, .brk = brk};
    struct rnic_sge rs;

    e->dev = tc_open(strict);
    tc_buf(e->dev, 4096, &e->srv);
    tc_buf(e->dev, 4096, &e->cli);
    tc_q_open(e->dev, 0, 16, 4, &e->client);
    lay_list(e, n);
    cfg.head = (uint64_t)(uintptr_t)(e->srv.ptr + NODES_OFF);
    cfg.nodes_rkey = e->srv.mr->rkey;
    cfg.client = &e->client;
    cfg.reply = chain_buf_loc(&e->cli, 0, 64);
    ck_assert_msg(list_walk_build(&e->lw, e->dev, &cfg) == 0, "build: %s",
                  chain_errmsg());
    rs = chain_loc_sge(chain_buf_loc(&e->cli, 64, 8));
    ck_assert_int_eq(chain_post_recv(&e->client, &rs, 1, 7), 0);
}

static void lw_close(struct lw_env *e)
{
    list_walk_destroy(&e->lw);
    chain_q_close(&e->client);
    chain_buf_close(&e->cli);
    chain_buf_close(&e->srv);
    rnic_close(e->dev);
}

/* The client asks for key; returns the reply's immediate data. */
static uint32_t ask(struct lw_env *e, uint64_t key)
{
    uint32_t len =
        list_walk_request(key, e->lw.cfg.nodes, e->cli.ptr + REQ_OFF);
    struct rnic_sge sg = chain_loc_sge(chain_buf_loc(&e->cli, REQ_OFF, len));
    struct rnic_wc wc;

    ck_assert_int_eq(list_walk_start(&e->lw), 0);
    ck_assert_int_eq(chain_send(&e->client, &sg, 1, 0, NULL), 0);
    ck_assert_int_eq(chain_q_doorbell(&e->client), 0);
    tc_poll(e->client.rcq, &wc);
    ck_assert_int_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(wc.opcode, RNIC_WC_RECV_RDMA_IMM);
    return wc.imm;
}

/* Walks n nodes for the key at position `at` (n: absent). */
static void expect_walk(unsigned n, unsigned at, bool brk)
{
    struct lw_env e;
    uint64_t key = at < n ? key_of(at, n) : 0x0000deadbeefull;
    char want[40];
    uint32_t imm;

    lw_open(&e, n, brk);
    imm = ask(&e, key);
    if (at < n) {
        snprintf(want, sizeof(want), "value of node %u ......", at);
        ck_assert_int_eq(memcmp(e.cli.ptr, want, VALUE_LEN), 0);
        ck_assert_uint_eq(imm, brk ? LIST_IMM_HIT | at : LIST_IMM_DONE);
    } else {
        for (int i = 0; i < VALUE_LEN; i++)
            ck_assert_uint_eq(e.cli.ptr[i], 0);
        ck_assert_uint_eq(imm, brk ? LIST_IMM_MISS : LIST_IMM_DONE);
    }
    if (brk && at < n)
        usleep(20000); /* a walk that failed to stop would go on */
    for (unsigned i = 0; i < n; i++)
        ck_assert_msg(list_walk_iter_ran(&e.lw, i) == (!brk || i <= at),
                      "n=%u at=%u brk=%d: iteration %u", n, at, brk, i);
    lw_close(&e);
}

START_TEST(list_walk_every_position)
{
    unsigned n = (unsigned)_i + 1;

    for (unsigned at = 0; at <= n; at++) {
        expect_walk(n, at, false);
        expect_walk(n, at, true);
    }
}
END_TEST

/* The counter runs >= 100,000 laps with no CPU, then a client stops it. */
START_TEST(counter_stopped_by_client)
{
    struct rnic_device *dev = tc_open(0);
    struct chain_q client;
    struct chain_buf buf;
    struct counter_loop c;
    struct rnic_sge stop;
    uint64_t laps;
    int waited = 0;

    ck_assert_msg(counter_loop_build(&c, dev, 0) == 0, "build: %s",
                  chain_errmsg());
    tc_buf(dev, 4096, &buf);
    tc_q(dev, 0, 16, 0, &c.door, &client);
    *(uint64_t *)buf.ptr = COUNTER_STOP;
    stop = chain_loc_sge(chain_buf_loc(&buf, 0, 8));
    ck_assert_int_eq(counter_loop_start(&c), 0);
    /* bounded: the engine does well over 100k laps in a few seconds */
    while (counter_loop_laps(&c) < 100000 && waited < 45000) {
        usleep(10000);
        waited += 10;
    }
    ck_assert_msg(counter_loop_laps(&c) >= 100000, "only %llu laps in 45 s",
                  (unsigned long long)counter_loop_laps(&c));
    ck_assert_int_eq(
        chain_write(&client, &stop, 1, counter_loop_stop_word(&c), 0, NULL), 0);
    ck_assert_int_eq(chain_q_doorbell(&client), 0);
    /* stopped: laps settles and the lap's second half caught up with it */
    for (int tries = 0;; tries++) {
        laps = tc_settle_u64(c.mem.ptr + COUNTER_LAPS_OFF, 50, TC_MS);
        if (tc_wait_u64(c.mem.ptr + COUNTER_TAIL_OFF, laps, 1000) &&
            counter_loop_laps(&c) == laps)
            break;
        ck_assert_msg(tries < 50, "the counter did not stop");
    }
    ck_assert_uint_ge(laps, 100000);
    ck_assert_uint_eq(counter_loop_tail(&c), laps);
    chain_q_close(&client);
    chain_buf_close(&buf);
    counter_loop_destroy(&c);
    rnic_close(dev);
}
END_TEST

static void expect_machine(const struct tm_machine *m, uint64_t steps,
                           unsigned ones)
{
    struct rnic_device *dev = tc_open(strict);
    struct tm_result ref, nic;
    struct turing t;

    ck_assert(tm_reference(m, 64, 32, 100000, &ref));
    ck_assert_uint_eq(ref.steps, steps);
    ck_assert_uint_eq(ref.ones, ones);
    ck_assert_msg(turing_build(&t, dev, m, 64, 32) == 0, "build: %s",
                  chain_errmsg());
    ck_assert_int_eq(turing_start(&t), 0);
    /* the last step's write and move land after its step count */
    for (int waited = 0;; waited++) {
        turing_result(&t, &nic);
        if (nic.steps == ref.steps && nic.head == ref.head &&
            !memcmp(nic.tape, ref.tape, 64))
            break;
        ck_assert_msg(waited < TC_MS, "%s: %llu steps, head %u", m->name,
                      (unsigned long long)nic.steps, nic.head);
        usleep(1000);
    }
    usleep(20000); /* a machine that failed to halt would go on */
    turing_result(&t, &nic);
    ck_assert_uint_eq(nic.steps, ref.steps);
    ck_assert_uint_eq(nic.head, ref.head);
    ck_assert_uint_eq(nic.ones, ref.ones);
    ck_assert_int_eq(memcmp(nic.tape, ref.tape, 64), 0);
    turing_destroy(&t);
    rnic_close(dev);
}

START_TEST(turing_busy_beavers)
{
    expect_machine(&tm_bb2, 6, 4);
    expect_machine(&tm_bb3, 14, 6);
    expect_machine(&tm_bb4, 107, 13);
}
END_TEST

/* The same programs with softnic modelling hardware prefetch. */
START_TEST(programs_under_strict_prefetch)
{
    struct rnic_device *dev;
    struct counter_loop c;

    strict = 16;
    expect_walk(8, 0, true);
    expect_walk(8, 5, true);
    expect_walk(8, 8, true);
    expect_walk(8, 3, false);
    expect_machine(&tm_bb4, 107, 13);
    dev = tc_open(strict);
    ck_assert_int_eq(counter_loop_build(&c, dev, 3000), 0);
    ck_assert_int_eq(counter_loop_start(&c), 0);
    ck_assert(tc_wait_u64(c.mem.ptr + COUNTER_TAIL_OFF, 3000, TC_MS));
    ck_assert_uint_eq(tc_settle_u64(c.mem.ptr + COUNTER_LAPS_OFF, 30, TC_MS),
                      3000);
    counter_loop_destroy(&c);
    rnic_close(dev);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chain_prog");
    TCase *tc = tcase_create("prog");

    tcase_set_timeout(tc, 55);
    tcase_add_loop_test(tc, list_walk_every_position, 0, LIST_MAX_NODES);
    tcase_add_test(tc, counter_stopped_by_client);
    tcase_add_test(tc, turing_busy_beavers);
    tcase_add_test(tc, programs_under_strict_prefetch);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
