/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_chain_check.c - the chain checker: it passes the good chains (the
 * if-construct, the list walk with and without break, the recycled counter
 * and the Turing machine) and flags deliberately broken ones: a target
 * released before its CAS completed, a missing FENCE, a READ rewriting a
 * CAS of its own queue (which softnic's strict mode really breaks), a WQE
 * released by a second, unordered master before it was rewritten, a dead
 * WAIT, ring overflow, releasing unposted slots, a WAIT on a shared CQ, a
 * request rewriting a WQE its chain unit fetches before the answer, unless
 * the request is gated on that answer (chain_check_inject_after), and a
 * message sent once a QP's WRITE_IMM arrived whose receive rewrites what
 * the QP's WRITE before it wrote (ordered: RC placed the WRITE first).
 * It must not touch the real memory.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/byteorder.h"
#include "rdn/programs/counter_loop.h"
#include "rdn/programs/list_walk.h"
#include "rdn/programs/turing.h"
#include "t/support/chain_testutil.h"

#define SRC_OFF 0
#define DST_OFF 64
#define KEY_OFF 128
#define SRC_VAL 0x0102030405060708ull

static struct rnic_device *dev;
static struct chain_q ctl, tgt;
static struct chain_buf mem;
static struct chain_report rep;

static void open_env(int strict)
{
    dev = tc_open(strict);
    tc_q(dev, RNIC_QP_CROSS_CHANNEL, 64, 0, NULL, &ctl);
    tc_q(dev, TC_MANAGED, 64, 0, NULL, &tgt);
    tc_buf(dev, 4096, &mem);
    memcpy(mem.ptr + SRC_OFF, &(uint64_t){SRC_VAL}, 8);
}

static void setup(void)
{
    open_env(0);
}

static void teardown(void)
{
    chain_q_close(&tgt);
    chain_q_close(&ctl);
    chain_buf_close(&mem);
    rnic_close(dev);
}

/* Checks queues qs[0..n) plus mem; returns the number of hazards. */
static unsigned check(struct chain_q **qs, unsigned n, uint32_t max_steps)
{
    struct chain_check_opts o = {.max_steps = max_steps};
    struct chain_check *c;

    ck_assert_int_eq(chain_check_new(&o, &c), 0);
    for (unsigned i = 0; i < n; i++)
        ck_assert_int_eq(chain_check_add_q(c, qs[i]), 0);
    ck_assert_int_eq(chain_check_add_mem(c, mem.ptr, mem.len), 0);
    ck_assert_msg(chain_check_run(c, &rep) == 0, "check: %s", chain_errmsg());
    chain_check_free(c);
    return rep.nhazards;
}

static unsigned check2(void)
{
    struct chain_q *qs[] = {&ctl, &tgt};

    return check(qs, 2, 0);
}

static struct chain_wr write_wr(const struct rnic_sge *sg)
{
    struct chain_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE,
                          .flags = CHAIN_SIGNALED,
                          .sg = sg,
                          .nsg = 1,
                          .raddr = (uint64_t)(uintptr_t)(mem.ptr + DST_OFF),
                          .rkey = mem.mr->rkey};

    return wr;
}

/*
 * ctl: READ x into the target's id bits, CAS (fenced if `fence`), then the
 * guard, or only a SEND_EN (no WAIT) if !wait.
 */
static struct chain_if build_if(uint64_t xmem, uint64_t y, bool fence,
                                bool wait)
{
    static struct rnic_sge src;
    struct rnic_sge ph = chain_loc_sge(chain_loc_part(ctl.sink, 0, 3));
    struct rnic_sge phs[2] = {ph, ph}, id[2];
    struct chain_wr wr;
    struct chain_wqe rd;
    struct chain_if iff;
    uint8_t be[6];

    src = chain_loc_sge(chain_buf_loc(&mem, SRC_OFF, 8));
    wr = write_wr(&src);
    chain_id48_to_be(xmem, be);
    memcpy(mem.ptr + KEY_OFF, be, 6);
    ck_assert_int_eq(
        chain_read(&ctl, phs, 2, chain_buf_loc(&mem, KEY_OFF, 6), 0, &rd), 0);
    ck_assert_int_eq(chain_if_post(&ctl, &tgt, &wr, 0, y, CHAIN_IF_ARM,
                                   fence ? CHAIN_FENCE : 0, &iff),
                     0);
    chain_id48_sges(&iff.target, id);
    chain_wqe_set_sge(&rd, 0, &id[0]);
    chain_wqe_set_sge(&rd, 1, &id[1]);
    if (wait)
        ck_assert_int_eq(chain_guard(&ctl, &tgt), 0);
    else
        ck_assert_int_eq(chain_send_en(&ctl, &tgt, tgt.pi, 0, NULL), 0);
    return iff;
}

START_TEST(good_if_passes_and_memory_untouched)
{
    uint8_t *ring_before = malloc(64 * 64), *mem_before = malloc(4096);
    struct rnic_wc wc;

    build_if(42, 42, true, true);
    memcpy(ring_before, ctl.sq.buf, 64 * 64);
    memcpy(mem_before, mem.ptr, 4096);
    ck_assert_uint_eq(check2(), 0);
    ck_assert(rep.finished);
    ck_assert_uint_eq(rep.steps, 5); /* READ CAS WAIT SEND_EN + WRITE */
    ck_assert_int_eq(memcmp(ring_before, ctl.sq.buf, 64 * 64), 0);
    ck_assert_int_eq(memcmp(mem_before, mem.ptr, 4096), 0);
    /* and the chain still runs right on the NIC */
    ck_assert_int_eq(chain_q_doorbell(&ctl), 0);
    tc_poll(tgt.scq, &wc);
    ck_assert_int_eq(wc.opcode, RNIC_WC_RDMA_WRITE);
    ck_assert_uint_eq(tc_load_u64(mem.ptr + DST_OFF), SRC_VAL);
    free(ring_before);
    free(mem_before);
}
END_TEST

START_TEST(good_if_false_branch_passes)
{
    build_if(42, 43, true, true);
    ck_assert_uint_eq(check2(), 0);
    ck_assert(rep.finished);
}
END_TEST

/* The target released right after the CAS, not after its completion. */
START_TEST(flags_release_before_cas_completed)
{
    build_if(42, 42, true, false);
    ck_assert_uint_gt(check2(), 0);
    ck_assert_uint_gt(rep.nkind[CHAIN_HZ_STALE_FETCH], 0);
    ck_assert_uint_eq(rep.hz[0].qpn, tgt.qpn);
}
END_TEST

/* The CAS may compare before the READ's data landed. */
START_TEST(flags_missing_fence)
{
    build_if(42, 42, false, true);
    ck_assert_uint_gt(check2(), 0);
    ck_assert_uint_gt(rep.nkind[CHAIN_HZ_DATA_RACE], 0);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_STALE_FETCH], 0);
}
END_TEST

/*
 * A READ rewrites the compare field of the next CAS of its own queue: the
 * NIC may have prefetched that CAS. The checker flags it, and softnic in
 * strict mode (prefetch window 8) indeed runs the stale CAS: the WRITE
 * that x == y should arm never happens. Just-in-time fetch hides the bug.
 */
static uint64_t run_self_patch(bool check_it)
{
    struct rnic_sge ph = chain_loc_sge(chain_loc_part(ctl.sink, 0, 3));
    struct rnic_sge phs[2] = {ph, ph}, cmp[2];
    struct rnic_sge src = chain_loc_sge(chain_buf_loc(&mem, SRC_OFF, 8));
    struct chain_wr wr = write_wr(&src);
    uint64_t le = htole64(0x777777777777ull);
    struct chain_wqe rd;
    struct chain_if iff;
    struct rnic_wc wc;

    memcpy(mem.ptr + KEY_OFF, &le, 6);
    ck_assert_int_eq(
        chain_read(&ctl, phs, 2, chain_buf_loc(&mem, KEY_OFF, 6), 0, &rd), 0);
    ck_assert_int_eq(chain_if_eq(&ctl, &tgt, &wr, 0x777777777777ull, 1,
                                 CHAIN_IF_ARM, CHAIN_FENCE, &iff),
                     0);
    chain_compare_id48_sges(&iff.cas, cmp);
    chain_wqe_set_sge(&rd, 0, &cmp[0]);
    chain_wqe_set_sge(&rd, 1, &cmp[1]);
    if (check_it) {
        ck_assert_uint_gt(check2(), 0);
        ck_assert_uint_gt(rep.nkind[CHAIN_HZ_STALE_FETCH], 0);
        ck_assert_uint_eq(rep.hz[0].qpn, ctl.qpn);
    }
    ck_assert_int_eq(chain_q_doorbell(&ctl), 0);
    tc_poll(tgt.scq, &wc);
    return tc_load_u64(mem.ptr + DST_OFF);
}

START_TEST(flags_self_patch_and_strict_breaks_it)
{
    ck_assert_uint_eq(run_self_patch(true), SRC_VAL); /* JIT: lucky */
    teardown();
    open_env(8);
    ck_assert_uint_eq(run_self_patch(false), 0); /* strict: stale CAS */
}
END_TEST

/*
 * Two masters release the managed queue tgt: b only after its WRITE
 * rewrote a WQE there, a (if racing) without waiting for anything. The
 * walk runs b's release first (b is added first), but on the NIC a's may
 * run first and let the WQE be fetched before the rewrite landed: a stale
 * fetch, whichever release the walk happened to run first.
 */
static unsigned two_releases(bool racing)
{
    struct rnic_sge src = chain_loc_sge(chain_buf_loc(&mem, SRC_OFF, 4));
    struct chain_wqe victim, wr;
    struct chain_loc imm;
    struct chain_q a, b;
    struct chain_q *qs[] = {&b, &tgt, &a};
    unsigned n;

    tc_q(dev, RNIC_QP_CROSS_CHANNEL, 16, 0, NULL, &b);
    tc_q(dev, RNIC_QP_CROSS_CHANNEL, 16, 0, NULL, &a);
    ck_assert_int_eq(chain_nop(&tgt, 0, NULL), 0);
    ck_assert_int_eq(chain_nop(&tgt, 0, &victim), 0);
    ck_assert_int_eq(chain_field(&victim, CHAIN_F_IMM, 0, &imm), 0);
    ck_assert_int_eq(chain_write(&b, &src, 1, imm, CHAIN_SIGNALED, &wr), 0);
    ck_assert_int_eq(chain_wait_wqe(&b, &wr, 0, NULL), 0);
    ck_assert_int_eq(chain_send_en(&b, &tgt, tgt.pi, 0, NULL), 0);
    if (racing)
        ck_assert_int_eq(chain_send_en(&a, &tgt, tgt.pi, 0, NULL), 0);
    n = check(qs, racing ? 3 : 2, 0);
    ck_assert(rep.finished);
    chain_q_close(&a);
    chain_q_close(&b);
    return n;
}

START_TEST(flags_release_by_an_unordered_master)
{
    ck_assert_uint_gt(two_releases(true), 0);
    ck_assert_uint_gt(rep.nkind[CHAIN_HZ_STALE_FETCH], 0);
    ck_assert_uint_eq(rep.hz[0].qpn, tgt.qpn);
    ck_assert_uint_eq(rep.hz[0].index, 1);
}
END_TEST

START_TEST(good_release_after_rewrite_passes)
{
    ck_assert_uint_eq(two_releases(false), 0);
}
END_TEST

START_TEST(flags_dead_wait)
{
    ck_assert_int_eq(chain_nop(&tgt, CHAIN_SIGNALED, NULL), 0);
    ck_assert_int_eq(chain_send_en(&ctl, &tgt, tgt.pi, 0, NULL), 0);
    ck_assert_int_eq(chain_wait(&ctl, tgt.scq, 2, 0, NULL), 0);
    ck_assert_uint_eq(check2(), 1);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_DEAD_WAIT], 1);
    ck_assert_uint_eq(rep.hz[0].qpn, ctl.qpn);
    ck_assert(rep.finished);
}
END_TEST

START_TEST(good_wait_passes)
{
    ck_assert_int_eq(chain_nop(&tgt, CHAIN_SIGNALED, NULL), 0);
    ck_assert_int_eq(chain_send_en(&ctl, &tgt, tgt.pi, 0, NULL), 0);
    ck_assert_int_eq(chain_wait(&ctl, tgt.scq, 1, 0, NULL), 0);
    ck_assert_uint_eq(check2(), 0);
}
END_TEST

START_TEST(flags_overflow_and_unposted)
{
    for (int i = 0; i < 64; i++)
        ck_assert_int_eq(chain_nop(&tgt, 0, NULL), 0);
    ck_assert_int_eq(chain_send_en(&ctl, &tgt, 70, 0, NULL), 0);
    ck_assert_uint_gt(check2(), 0);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_OVERFLOW], 1);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_UNPOSTED], 0);

    teardown();
    setup();
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(chain_nop(&tgt, 0, NULL), 0);
    ck_assert_int_eq(chain_send_en(&ctl, &tgt, 10, 0, NULL), 0);
    ck_assert_uint_gt(check2(), 0);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_UNPOSTED], 1);
}
END_TEST

START_TEST(flags_shared_cq_wait)
{
    struct chain_q a, b;
    struct chain_q_attr at = {.sq_wqebb = 16, .scq = tgt.scq};
    struct chain_q *qs[] = {&ctl, &a, &b};

    ck_assert_int_eq(chain_q_open(dev, &at, &a), 0);
    ck_assert_int_eq(chain_q_open(dev, &at, &b), 0);
    ck_assert_int_eq(chain_q_connect(&a, &b), 0);
    ck_assert_int_eq(chain_nop(&a, CHAIN_SIGNALED, NULL), 0);
    ck_assert_int_eq(chain_nop(&b, CHAIN_SIGNALED, NULL), 0);
    ck_assert_int_eq(chain_wait(&ctl, tgt.scq, 1, 0, NULL), 0);
    ck_assert_uint_gt(check(qs, 3, 0), 0);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_AMBIGUOUS], 1);
    chain_q_close(&b);
    chain_q_close(&a);
}
END_TEST

/*
 * A chain unit serving two requests in two laps of its ring (unit, 4
 * WQEBBs, managed): SEND_EN of tgt up to an index each request's receive
 * (on srv) rewrites, two NOPs, and the answer, a WRITE_IMM to the client
 * cli (whose receive CQ counts the answers). ctl releases lap 1 after
 * request 1, lap 2 after lap 1's answer and request 2. Request 2 rewrites
 * the SEND_EN that lap 1 fetches: only a client that sends it after it saw
 * answer 1 orders it after that fetch (as the offloaded GET's client sends
 * request n after the answer of n - depth).
 */
struct laps {
    struct chain_q unit, srv, cli;
    struct chain_wqe en;
};

static void laps_build(struct laps *l)
{
    struct rnic_sge src = chain_loc_sge(chain_buf_loc(&mem, SRC_OFF, 8));
    struct rnic_sge sink, idx;
    struct chain_loc f;

    tc_q_open(dev, 0, 16, 4, &l->cli);
    tc_q(dev, TC_MANAGED, 4, 0, &l->cli, &l->unit);
    tc_q_open(dev, 0, 16, 4, &l->srv);
    ck_assert_int_eq(chain_nop(&tgt, 0, NULL), 0);
    ck_assert_int_eq(chain_nop(&tgt, 0, NULL), 0);
    ck_assert_int_eq(chain_send_en(&l->unit, &tgt, 1, 0, &l->en), 0);
    ck_assert_int_eq(chain_nop(&l->unit, 0, NULL), 0);
    ck_assert_int_eq(chain_nop(&l->unit, 0, NULL), 0);
    ck_assert_int_eq(chain_write_imm(&l->unit, &src, 1, l->cli.sink, 1,
                                     CHAIN_SIGNALED, NULL),
                     0);
    ck_assert_int_eq(chain_field(&l->en, CHAIN_F_INDEX, 0, &f), 0);
    idx = chain_loc_sge(f);
    sink = chain_loc_sge(l->cli.sink);
    for (uint64_t i = 0; i < 2; i++) {
        ck_assert_int_eq(chain_post_recv(&l->srv, &idx, 1, i), 0);
        ck_assert_int_eq(chain_post_recv(&l->cli, &sink, 1, i), 0);
    }
    ck_assert_int_eq(chain_wait(&ctl, l->srv.rcq, 1, 0, NULL), 0);
    ck_assert_int_eq(chain_send_en(&ctl, &l->unit, 4, 0, NULL), 0);
    ck_assert_int_eq(chain_wait(&ctl, l->unit.scq, 1, 0, NULL), 0);
    ck_assert_int_eq(chain_wait(&ctl, l->srv.rcq, 2, 0, NULL), 0);
    ck_assert_int_eq(chain_send_en(&ctl, &l->unit, 8, 0, NULL), 0);
}

static void laps_close(struct laps *l)
{
    chain_q_close(&l->srv);
    chain_q_close(&l->unit);
    chain_q_close(&l->cli);
}

/* A checker of the laps chain (with cli if `cli`), nothing injected. */
static struct chain_check *laps_checker(struct laps *l, bool cli)
{
    struct chain_q *qs[] = {&ctl, &l->unit, &tgt, &l->srv, &l->cli};
    struct chain_check *c;

    ck_assert_int_eq(chain_check_new(NULL, &c), 0);
    for (unsigned i = 0; i < (cli ? 5u : 4u); i++)
        ck_assert_int_eq(chain_check_add_q(c, qs[i]), 0);
    ck_assert_int_eq(chain_check_add_mem(c, mem.ptr, mem.len), 0);
    return c;
}

/*
 * Request 1 (index 1), then request 2 (index `index2`) gated on the
 * count-th answer (gate NULL: ungated), then with `late` an ungated
 * request 2 again; returns the number of hazards.
 */
static unsigned check_laps(struct laps *l, const struct chain_cq *gate,
                           uint32_t count, uint32_t index2, bool late)
{
    be32 req[2] = {cpu_to_be32(1), cpu_to_be32(index2)};
    struct chain_check *c = laps_checker(l, true);

    ck_assert_int_eq(chain_check_inject(c, &l->srv, &req[0], 4), 0);
    ck_assert_int_eq(
        chain_check_inject_after(c, &l->srv, &req[1], 4, gate, count), 0);
    if (late)
        ck_assert_int_eq(chain_check_inject(c, &l->srv, &req[1], 4), 0);
    ck_assert_int_eq(chain_check_run(c, &rep), 0);
    chain_check_free(c);
    return rep.nhazards;
}

START_TEST(flags_request_rewriting_a_fetched_wqe)
{
    struct laps l;

    laps_build(&l);
    ck_assert_uint_gt(check_laps(&l, NULL, 0, 2, false), 0);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_STALE_FETCH], rep.nhazards);
    ck_assert_uint_eq(rep.hz[0].qpn, l.unit.qpn);
    ck_assert_uint_eq(rep.hz[0].index, l.en.index);
    ck_assert_uint_eq(rep.hz[0].by_qpn, l.srv.qpn);
    ck_assert_uint_eq(rep.hz[0].by_index, 1); /* srv's receive 1 */
    ck_assert(rep.finished);
    laps_close(&l);
}
END_TEST

/*
 * Gated on answer 1, request 2 comes after lap 1's fetch: no hazard, and
 * lap 2's SEND_EN runs with the index it wrote: tgt runs both its NOPs
 * (5 + 8 + 2 steps), one when request 2 repeats index 1.
 */
START_TEST(good_request_gated_on_the_answer_passes)
{
    struct laps l;

    laps_build(&l);
    ck_assert_uint_eq(check_laps(&l, l.cli.rcq, 1, 2, false), 0);
    ck_assert(rep.finished);
    ck_assert_uint_eq(rep.steps, 15);
    ck_assert_uint_eq(check_laps(&l, l.cli.rcq, 1, 1, false), 0);
    ck_assert_uint_eq(rep.steps, 14);
    laps_close(&l);
}
END_TEST

/*
 * Gated on answer 2, which only lap 2 sends, request 2 never goes: nor
 * does the ungated request queued after it on srv (RC order). ctl waits
 * forever for it; the walk ends; real memory is untouched.
 */
START_TEST(gate_never_reached_holds_the_queue)
{
    struct laps l;
    uint8_t *ring = malloc(4 * 64), *mem_before = malloc(4096);
    struct chain_loc f;
    be32 idx;

    laps_build(&l);
    memcpy(ring, l.unit.sq.buf, 4 * 64);
    memcpy(mem_before, mem.ptr, 4096);
    ck_assert_uint_eq(check_laps(&l, l.cli.rcq, 2, 2, true), 1);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_DEAD_WAIT], 1);
    ck_assert_uint_eq(rep.hz[0].qpn, ctl.qpn);
    ck_assert_uint_eq(rep.hz[0].index, 3); /* WAIT for request 2 */
    ck_assert(rep.finished);
    ck_assert_uint_eq(rep.steps, 3 + 4 + 1);
    ck_assert_int_eq(memcmp(ring, l.unit.sq.buf, 4 * 64), 0);
    ck_assert_int_eq(memcmp(mem_before, mem.ptr, 4096), 0);
    ck_assert_int_eq(chain_field(&l.en, CHAIN_F_INDEX, 0, &f), 0);
    memcpy(&idx, f.ptr, 4);
    ck_assert_uint_eq(be32_to_cpu(idx), 1);
    free(ring);
    free(mem_before);
    laps_close(&l);
}
END_TEST

/*
 * A gate on a CQ the checker does not know (no added queue's, or that of
 * a queue added only later) is -EINVAL and queues nothing: ctl then waits
 * forever for request 2.
 */
START_TEST(gate_on_unknown_cq_is_einval)
{
    be32 req = cpu_to_be32(1);
    struct chain_cq other;
    struct chain_check *c;
    struct laps l;

    laps_build(&l);
    ck_assert_int_eq(chain_cq_open(dev, 16, 0, &other), 0);
    c = laps_checker(&l, false);
    ck_assert_int_eq(chain_check_inject_after(c, &l.srv, &req, 4, &other, 1),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(chain_errmsg(), "CQ"));
    ck_assert_int_eq(chain_check_inject_after(c, &l.srv, &req, 4, l.cli.rcq, 1),
                     -EINVAL);
    ck_assert_int_eq(chain_check_inject_after(NULL, &l.srv, &req, 4, NULL, 0),
                     -EINVAL);
    ck_assert_int_eq(chain_check_inject(c, &l.srv, &req, 4), 0);
    ck_assert_int_eq(chain_check_run(c, &rep), 0);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_DEAD_WAIT], 1);
    ck_assert_uint_eq(rep.hz[0].qpn, ctl.qpn);
    ck_assert_uint_eq(rep.hz[0].index, 3);
    chain_check_free(c);
    chain_cq_close(&other);
    laps_close(&l);
}
END_TEST

/*
 * Queue a (connected to b) WRITEs 8 bytes into X (mem at DST_OFF), then a
 * WRITE_IMM takes b's receive. A client that saw that receive's completion
 * sends a message r's receive scatters into X: RC's responder placed a's
 * WRITE before it took the WRITE_IMM, so the two writes of X are ordered.
 * Sent ungated, the message races the WRITE. Returns the hazards.
 */
static unsigned check_placed(bool gated)
{
    struct rnic_sge src = chain_loc_sge(chain_buf_loc(&mem, SRC_OFF, 8));
    struct rnic_sge x = chain_loc_sge(chain_buf_loc(&mem, DST_OFF, 8)), sink;
    uint64_t msg = ~SRC_VAL;
    struct chain_q a, b, r;
    struct chain_check *c;

    tc_q_open(dev, 0, 16, 4, &b);
    tc_q(dev, 0, 16, 0, &b, &a);
    tc_q_open(dev, 0, 16, 4, &r);
    sink = chain_loc_sge(b.sink);
    ck_assert_int_eq(chain_post_recv(&b, &sink, 1, 0), 0);
    ck_assert_int_eq(chain_post_recv(&r, &x, 1, 0), 0);
    ck_assert_int_eq(
        chain_write(&a, &src, 1, chain_buf_loc(&mem, DST_OFF, 8), 0, NULL), 0);
    ck_assert_int_eq(chain_write_imm(&a, &src, 1, b.sink, 1, 0, NULL), 0);
    ck_assert_int_eq(chain_check_new(NULL, &c), 0);
    ck_assert_int_eq(chain_check_add_q(c, &a), 0);
    ck_assert_int_eq(chain_check_add_q(c, &b), 0);
    ck_assert_int_eq(chain_check_add_q(c, &r), 0);
    ck_assert_int_eq(chain_check_add_mem(c, mem.ptr, mem.len), 0);
    ck_assert_int_eq(
        chain_check_inject_after(c, &r, &msg, 8, gated ? b.rcq : NULL, 1), 0);
    ck_assert_int_eq(chain_check_run(c, &rep), 0);
    ck_assert(rep.finished);
    ck_assert_uint_eq(rep.steps, 2);
    if (rep.nhazards) /* a's WRITE and r's receive, in either order */
        ck_assert((rep.hz[0].qpn == a.qpn && rep.hz[0].by_qpn == r.qpn) ||
                  (rep.hz[0].qpn == r.qpn && rep.hz[0].by_qpn == a.qpn));
    chain_check_free(c);
    chain_q_close(&r);
    chain_q_close(&a);
    chain_q_close(&b);
    return rep.nhazards;
}

START_TEST(good_write_placed_before_the_next_message)
{
    ck_assert_uint_eq(check_placed(true), 0);
    ck_assert_uint_eq(check_placed(false), 1);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_DATA_RACE], 1);
}
END_TEST

/*
 * The list walk with the request injected. hasty: a second master releases
 * the walk without waiting for the request (the mistake the checker must
 * catch: the request rewrites CAS compare fields already released).
 */
static void check_walk(bool brk, uint64_t key, bool hasty)
{
    struct chain_q client, early;
    struct chain_buf srv;
    struct list_walk lw;
    struct list_walk_cfg cfg = {.nodes = 8, .brk = brk};
    struct list_node *nodes;
    struct chain_check *c;
    uint8_t req[6 * LIST_MAX_NODES];

    tc_buf(dev, 4096, &srv);
    tc_q_open(dev, 0, 16, 4, &client);
    tc_q(dev, RNIC_QP_CROSS_CHANNEL, 16, 0, NULL, &early);
    nodes = (struct list_node *)srv.ptr;
    for (unsigned i = 0; i < 8; i++)
        list_node_set(&nodes[i], 100 + i, 8, srv.mr->lkey,
                      (uint64_t)(uintptr_t)(srv.ptr + 1024 + 8 * i),
                      i < 7 ? (uint64_t)(uintptr_t)&nodes[i + 1] : 0);
    cfg.head = (uint64_t)(uintptr_t)nodes;
    cfg.nodes_rkey = srv.mr->rkey;
    cfg.client = &client;
    cfg.reply = chain_buf_loc(&mem, 0, 64);
    ck_assert_int_eq(list_walk_build(&lw, dev, &cfg), 0);
    if (hasty)
        ck_assert_int_eq(
            chain_send_en(&early, &lw.work, lw.loop.first_end, 0, NULL), 0);
    ck_assert_int_eq(chain_check_new(NULL, &c), 0);
    ck_assert_int_eq(chain_check_add_q(c, &early), 0);
    ck_assert_int_eq(chain_check_add_q(c, &lw.master), 0);
    ck_assert_int_eq(chain_check_add_q(c, &lw.work), 0);
    ck_assert_int_eq(chain_check_add_q(c, &lw.resp), 0);
    ck_assert_int_eq(chain_check_add_mem(c, srv.ptr, srv.len), 0);
    ck_assert_int_eq(
        chain_check_inject(c, &lw.resp, req, list_walk_request(key, 8, req)),
        0);
    ck_assert_int_eq(chain_check_run(c, &rep), 0);
    chain_check_free(c);
    if (rep.nhazards && !hasty)
        chain_report_print(&rep, stderr);
    if (hasty) {
        ck_assert_uint_gt(rep.nkind[CHAIN_HZ_STALE_FETCH], 0);
    } else {
        ck_assert_uint_eq(rep.nhazards, 0);
        ck_assert(rep.finished);
        ck_assert_uint_gt(rep.steps, 8);
    }
    list_walk_destroy(&lw);
    chain_q_close(&early);
    chain_q_close(&client);
    chain_buf_close(&srv);
}

START_TEST(good_list_walk_passes)
{
    check_walk(false, 103, false);
    check_walk(false, 999, false);
    check_walk(true, 103, false);
    check_walk(true, 999, false);
}
END_TEST

START_TEST(flags_walk_released_before_request)
{
    check_walk(true, 103, true);
}
END_TEST

START_TEST(good_recycled_counter_passes)
{
    struct counter_loop cl;
    struct chain_check *c;
    /*
     * 15 WQEs, 32 WQEBBs per lap: 40000 steps run about 2660 laps, past
     * the 16-bit wrap of the enable index (2048 laps).
     */
    struct chain_check_opts o = {.max_steps = 40000};

    ck_assert_int_eq(counter_loop_build(&cl, dev, 0), 0);
    ck_assert_int_eq(chain_check_new(&o, &c), 0);
    chain_check_add_q(c, &cl.master);
    chain_check_add_q(c, &cl.loop);
    chain_check_add_mem(c, cl.mem.ptr, cl.mem.len);
    ck_assert_int_eq(chain_check_run(c, &rep), 0);
    if (rep.nhazards)
        chain_report_print(&rep, stderr);
    ck_assert_uint_eq(rep.nhazards, 0);
    ck_assert(!rep.finished); /* runs forever */
    ck_assert_uint_ge(rep.steps, 40000);
    chain_check_free(c);
    counter_loop_destroy(&cl);
}
END_TEST

START_TEST(good_turing_passes)
{
    struct turing t;
    struct chain_check *c;

    ck_assert_int_eq(turing_build(&t, dev, &tm_bb3, 16, 8), 0);
    ck_assert_int_eq(chain_check_new(NULL, &c), 0);
    chain_check_add_q(c, &t.master);
    chain_check_add_q(c, &t.loop);
    chain_check_add_mem(c, t.mem.ptr, t.mem.len);
    ck_assert_int_eq(chain_check_run(c, &rep), 0);
    if (rep.nhazards)
        chain_report_print(&rep, stderr);
    ck_assert_uint_eq(rep.nhazards, 0);
    ck_assert(rep.finished); /* the machine halts */
    chain_check_free(c);
    turing_destroy(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chain_check");
    TCase *tc = tcase_create("check");

    tcase_add_checked_fixture(tc, setup, teardown);
    /* good_recycled_counter_passes alone takes seconds of CPU (the race
     * sweep compares every lap's accesses to a slot with each other): its
     * bound must hold with a dozen other processes on two cores. */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, good_if_passes_and_memory_untouched);
    tcase_add_test(tc, good_if_false_branch_passes);
    tcase_add_test(tc, flags_release_before_cas_completed);
    tcase_add_test(tc, flags_missing_fence);
    tcase_add_test(tc, flags_self_patch_and_strict_breaks_it);
    tcase_add_test(tc, flags_release_by_an_unordered_master);
    tcase_add_test(tc, good_release_after_rewrite_passes);
    tcase_add_test(tc, flags_dead_wait);
    tcase_add_test(tc, good_wait_passes);
    tcase_add_test(tc, flags_overflow_and_unposted);
    tcase_add_test(tc, flags_shared_cq_wait);
    tcase_add_test(tc, flags_request_rewriting_a_fetched_wqe);
    tcase_add_test(tc, good_request_gated_on_the_answer_passes);
    tcase_add_test(tc, gate_never_reached_holds_the_queue);
    tcase_add_test(tc, gate_on_unknown_cq_is_einval);
    tcase_add_test(tc, good_write_placed_before_the_next_message);
    tcase_add_test(tc, good_list_walk_passes);
    tcase_add_test(tc, flags_walk_released_before_request);
    tcase_add_test(tc, good_recycled_counter_passes);
    tcase_add_test(tc, good_turing_passes);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
