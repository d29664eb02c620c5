/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_softnic_order.c - ordering and self-modification on softnic:
 * WAIT (absolute CQ counts), SEND_EN / RECV_EN of managed queues, managed
 * queues ignoring doorbells, FENCE, and WQEs rewritten by an earlier WRITE,
 * RECV scatter or CAS running as rewritten (just-in-time fetch).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/byteorder.h"
#include "t/support/test_softnic_util.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

static struct tdev D;
static struct tq C;         /* cross-channel controller, connected to itself */
static struct tq M;         /* managed send queue, connected to itself */
static struct rnic_cq *MCQ; /* M's send CQ (what C WAITs on) */

static void setup(void)
{
    struct rnic_qp_init_attr a = {.sq_wqebb = 64, .flags = 0};

    tdev_open(&D, NULL, 1 << 20, ALL_ACCESS);
    tq_create(&C, &D, RNIC_QP_CROSS_CHANNEL, 64, 16);
    tq_connect(&C, &C);
    ck_assert_int_eq(rnic_create_cq(D.dev, 256, &MCQ), 0);
    a.send_cq = MCQ;
    a.recv_cq = D.rcq;
    a.rq_wqe = 16;
    a.max_recv_sge = 16;
    a.flags = RNIC_QP_MANAGED_SEND | RNIC_QP_MANAGED_RECV;
    memset(&M, 0, sizeof(M));
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &M.qp), 0);
    ck_assert_int_eq(rnic_qp_sq(M.qp, &M.sq), 0);
    tq_connect(&M, &M);
}

static void teardown(void)
{
    tdev_close(&D);
}

static void post_nop(struct tq *q, uint8_t flags)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_NOP, flags);
    tq_post(q, &w);
}

static void post_wait(struct tq *q, struct rnic_cq *cq, uint32_t count,
                      uint8_t flags)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_WAIT, flags);
    tw_waiten(&w, count, rnic_cq_num(cq));
    tq_post(q, &w);
}

static void post_en(struct tq *q, uint8_t op, struct tq *target, uint32_t index,
                    uint8_t flags)
{
    struct tw w;

    tw_ctrl(&w, op, flags);
    tw_waiten(&w, index, rnic_qp_num(target->qp));
    tq_post(q, &w);
}

/* An 8-byte WRITE of *val to dst (signaled per flags). */
static void post_write8(struct tq *q, void *dst, uint64_t *val, uint8_t flags)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, flags);
    tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, val);
    tq_post(q, &w);
}

START_TEST(managed_queue_ignores_doorbell)
{
    uint64_t *dst = (uint64_t *)(D.mem + 4096), *val = (uint64_t *)D.mem;

    *val = 77;
    post_write8(&M, dst, val, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_ring(&M);
    ck_assert_int_eq(tquiet(MCQ, 50), 0);
    ck_assert_uint_eq(*dst, 0);
}
END_TEST

START_TEST(send_en_releases_exactly_to_index)
{
    uint64_t *dst = (uint64_t *)(D.mem + 4096), *val = (uint64_t *)D.mem;
    struct rnic_wc wc[4];

    for (int i = 0; i < 3; i++) {
        val[i] = 100 + (uint64_t)i;
        post_write8(&M, &dst[i], &val[i], MLX5_WQE_CTRL_CQ_UPDATE);
    }
    post_en(&C, MLX5_OPCODE_SEND_EN, &M, 2, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_ring(&C);
    ck_assert_int_eq(tpoll(D.scq, wc, 1, TMS), 1);
    ck_assert_uint_eq(wc[0].opcode, RNIC_WC_SEND_EN);
    ck_assert_uint_eq(wc[0].status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(tpoll(MCQ, wc, 2, TMS), 2);
    ck_assert_int_eq(tquiet(MCQ, 30), 0);
    ck_assert_uint_eq(dst[0], 100);
    ck_assert_uint_eq(dst[1], 101);
    ck_assert_uint_eq(dst[2], 0);
    post_en(&C, MLX5_OPCODE_SEND_EN, &M, 1, 0); /* lower: no effect */
    post_en(&C, MLX5_OPCODE_SEND_EN, &M, 3, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_ring(&C);
    ck_assert_int_eq(tpoll(MCQ, wc, 1, TMS), 1);
    ck_assert_uint_eq(dst[2], 102);
}
END_TEST

START_TEST(wait_blocks_until_absolute_count)
{
    uint64_t *dst = (uint64_t *)(D.mem + 4096), *val = (uint64_t *)D.mem;
    struct rnic_wc wc[4];

    /* C: WAIT(MCQ >= 2) then WRITE. M's completions come from C's EN. */
    *val = 5;
    post_wait(&C, MCQ, 2, 0);
    post_write8(&C, dst, val, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_ring(&C);
    ck_assert_int_eq(tquiet(D.scq, 30), 0);
    ck_assert_uint_eq(*dst, 0);
    /* One completion on MCQ: not enough. */
    post_nop(&M, MLX5_WQE_CTRL_CQ_UPDATE);
    post_nop(&M, MLX5_WQE_CTRL_CQ_UPDATE);
    struct tq ctl2;

    tq_create(&ctl2, &D, RNIC_QP_CROSS_CHANNEL, 16, 0);
    tq_connect(&ctl2, &ctl2);
    post_en(&ctl2, MLX5_OPCODE_SEND_EN, &M, 1, 0);
    tq_ring(&ctl2);
    ck_assert_int_eq(tpoll(MCQ, wc, 1, TMS), 1);
    ck_assert_int_eq(tquiet(D.scq, 30), 0);
    ck_assert_uint_eq(*dst, 0);
    /* The second one releases the WAIT. */
    post_en(&ctl2, MLX5_OPCODE_SEND_EN, &M, 2, 0);
    tq_ring(&ctl2);
    ck_assert_int_eq(tpoll(D.scq, wc, 1, TMS), 1);
    ck_assert_uint_eq(wc[0].opcode, RNIC_WC_RDMA_WRITE);
    ck_assert_uint_eq(*dst, 5);
}
END_TEST

START_TEST(wait_on_count_already_reached_passes)
{
    struct rnic_wc wc;

    post_nop(&C, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_ring(&C);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    post_wait(&C, D.scq, 1, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_ring(&C);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_WAIT);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
}
END_TEST

START_TEST(wait_needs_cross_channel)
{
    struct tq plain;
    struct rnic_wc wc;

    tq_create(&plain, &D, 0, 16, 0);
    tq_connect(&plain, &plain);
    post_wait(&plain, D.scq, 0, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_ring(&plain);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_LOC_QP_OP_ERR);
    ck_assert_int_eq(rnic_qp_state(plain.qp), RNIC_QPS_ERR);
    post_en(&plain, MLX5_OPCODE_SEND_EN, &M, 1, 0);
    tq_ring(&plain);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_WR_FLUSH_ERR);
    ck_assert_int_eq(tquiet(MCQ, 20), 0);
}
END_TEST

START_TEST(recv_en_releases_receives)
{
    uint8_t *r = D.mem + 8192, *src = D.mem;
    struct rnic_sge sge = {(uintptr_t)r, 64, D.mr->lkey};
    struct tq s;
    struct tw w;
    struct rnic_wc wc;

    /* A sender connected to M; M's receive queue is managed. */
    tq_create(&s, &D, 0, 16, 0);
    /* M is connected to itself; use a second managed-recv QP instead. */
    struct rnic_qp_init_attr a = {.send_cq = D.scq,
                                  .recv_cq = D.rcq,
                                  .sq_wqebb = 16,
                                  .rq_wqe = 4,
                                  .max_recv_sge = 1,
                                  .flags = RNIC_QP_MANAGED_RECV};
    struct tq rq;

    memset(&rq, 0, sizeof(rq));
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &rq.qp), 0);
    ck_assert_int_eq(rnic_qp_sq(rq.qp, &rq.sq), 0);
    tq_connect(&s, &rq);
    memcpy(src, "managed!", 8);
    ck_assert_int_eq(rnic_post_recv(rq.qp, &sge, 1, 9), 0);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 8, D.mr->lkey, src);
    tq_post(&s, &w);
    tq_ring(&s);
    ck_assert_int_eq(tquiet(D.rcq, 40), 0); /* posted, not enabled */
    post_en(&C, MLX5_OPCODE_RECV_EN, &rq, 1, 0);
    tq_ring(&C);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.wr_id, 9);
    ck_assert_mem_eq(r, "managed!", 8);
}
END_TEST

/* C: WAIT(M's first completion) -> SEND_EN(M, 2): doorbell ordering. */
START_TEST(doorbell_order_chain)
{
    uint64_t *log = (uint64_t *)(D.mem + 4096), *vals = (uint64_t *)D.mem;
    struct rnic_wc wc[8];

    for (int i = 0; i < 4; i++) {
        vals[i] = 10 + (uint64_t)i;
        post_write8(&M, &log[i], &vals[i], MLX5_WQE_CTRL_CQ_UPDATE);
    }
    post_en(&C, MLX5_OPCODE_SEND_EN, &M, 1, 0);
    for (uint32_t i = 1; i < 4; i++) {
        post_wait(&C, MCQ, i, 0);
        post_en(&C, MLX5_OPCODE_SEND_EN, &M, i + 1, 0);
    }
    tq_ring(&C);
    ck_assert_int_eq(tpoll(MCQ, wc, 4, TMS), 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(wc[i].status, RNIC_WC_SUCCESS);
        ck_assert_uint_eq(wc[i].wqe_counter, (uint16_t)i);
        ck_assert_uint_eq(log[i], 10 + (uint64_t)i);
    }
}
END_TEST

/* A WRITE rewrites a later managed WQE's ctrl: NOP becomes WRITE. */
START_TEST(write_rewrites_later_wqe)
{
    uint64_t *dst = (uint64_t *)(D.mem + 4096), *val = (uint64_t *)D.mem;
    struct rnic_mr *ring_mr;
    struct tw w, wr;
    struct rnic_wc wc[4];
    uint32_t nop_idx;

    ck_assert_int_eq(
        rnic_reg_mr(D.dev, M.sq.buf, M.sq.wqebb_cnt * 64, ALL_ACCESS, &ring_mr),
        0);
    *val = 0x5555;
    /* M[0]: a NOP with the WRITE's other segments already in place. */
    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, val);
    nop_idx = tq_post(&M, &w);
    /* The replacement ctrl segment: a WRITE with the same ds. */
    tw_ctrl(&wr, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    {
        struct mlx5_ctrl_seg *c = (struct mlx5_ctrl_seg *)wr.b;

        c->opmod_idx_opcode = cpu_to_be32(
            mlx5_ctrl_word0(0, (uint16_t)nop_idx, MLX5_OPCODE_RDMA_WRITE));
        c->qpn_ds = cpu_to_be32(mlx5_ctrl_word1(rnic_qp_num(M.qp), 3));
    }
    memcpy(D.mem + 512, wr.b, 16);
    /* C: WRITE the new ctrl over M[0], WAIT for it, then SEND_EN(M, 1). */
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)tq_wqe(&M, nop_idx), ring_mr->rkey);
    tw_data(&w, 16, D.mr->lkey, D.mem + 512);
    tq_post(&C, &w);
    post_wait(&C, D.scq, 1, 0);
    post_en(&C, MLX5_OPCODE_SEND_EN, &M, 1, 0);
    tq_ring(&C);
    ck_assert_int_eq(tpoll(MCQ, wc, 1, TMS), 1);
    ck_assert_uint_eq(wc[0].status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc[0].opcode, RNIC_WC_RDMA_WRITE);
    ck_assert_uint_eq(*dst, 0x5555);
}
END_TEST

/*
 * The paper's if: CAS on M's NOP ctrl word (fingerprint in id bits)
 * turns it into a WRITE only when the fingerprint matches.
 */
static void cas_if(uint64_t stored_fp, uint64_t probe_fp, int expect_write)
{
    uint64_t *dst = (uint64_t *)(D.mem + 4096), *val = (uint64_t *)D.mem;
    uint64_t *old = (uint64_t *)(D.mem + 64);
    struct rnic_mr *ring_mr;
    struct tw w;
    struct rnic_wc wc[2];
    uint32_t idx;
    uint64_t nop_word, write_word;

    ck_assert_int_eq(
        rnic_reg_mr(D.dev, M.sq.buf, M.sq.wqebb_cnt * 64, ALL_ACCESS, &ring_mr),
        0);
    *val = 0xfeed;
    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, val);
    idx = tq_post(&M, &w);
    /* Put the stored fingerprint into the NOP's id bits (as a table). */
    nop_word = mlx5_ctrl_id48_word(stored_fp, MLX5_OPCODE_NOP, 3);
    memcpy(tq_wqe(&M, idx), &nop_word, 8);
    write_word = mlx5_ctrl_id48_word(0, MLX5_OPCODE_RDMA_WRITE, 3);
    /* CAS compares host-endian 8 bytes: operands are the memory words. */
    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_CS, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)tq_wqe(&M, idx), ring_mr->rkey);
    tw_atomic(&w, write_word,
              mlx5_ctrl_id48_word(probe_fp, MLX5_OPCODE_NOP, 3));
    tw_data(&w, 8, D.mr->lkey, old);
    tq_post(&C, &w);
    post_wait(&C, D.scq, 1, 0);
    post_en(&C, MLX5_OPCODE_SEND_EN, &M, 1, 0);
    tq_ring(&C);
    ck_assert_int_eq(tpoll(MCQ, wc, 1, TMS), 1);
    ck_assert_uint_eq(wc[0].status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(*old, nop_word);
    if (expect_write) {
        ck_assert_uint_eq(wc[0].opcode, RNIC_WC_RDMA_WRITE);
        ck_assert_uint_eq(*dst, 0xfeed);
    } else {
        ck_assert_uint_eq(wc[0].opcode, RNIC_WC_NOP);
        ck_assert_uint_eq(*dst, 0);
    }
}

START_TEST(cas_if_match_turns_nop_into_write)
{
    cas_if(0x123456789abcull, 0x123456789abcull, 1);
}
END_TEST

START_TEST(cas_if_mismatch_keeps_nop)
{
    cas_if(0x123456789abcull, 0x123456789abdull, 0);
}
END_TEST

/* A SEND's payload, scattered by a RECV, rewrites a later WQE's raddr. */
START_TEST(recv_scatter_rewrites_later_wqe)
{
    uint64_t *dst = (uint64_t *)(D.mem + 4096), *val = (uint64_t *)D.mem;
    uint8_t *msg = D.mem + 1024;
    struct rnic_qp_init_attr a = {.send_cq = MCQ,
                                  .recv_cq = D.rcq,
                                  .sq_wqebb = 16,
                                  .rq_wqe = 4,
                                  .max_recv_sge = 2,
                                  .flags = RNIC_QP_MANAGED_SEND};
    struct mlx5_raddr_seg r = {cpu_to_be64((uintptr_t)dst), cpu_to_be32(0), 0};
    struct rnic_mr *ring_mr;
    struct tq s, rq;
    struct tw w;
    struct rnic_wc wc;
    struct rnic_sge sge;
    uint32_t idx;

    memset(&rq, 0, sizeof(rq));
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &rq.qp), 0);
    ck_assert_int_eq(rnic_qp_sq(rq.qp, &rq.sq), 0);
    tq_create(&s, &D, 0, 16, 0);
    tq_connect(&s, &rq);
    ck_assert_int_eq(rnic_reg_mr(D.dev, rq.sq.buf, rq.sq.wqebb_cnt * 64,
                                 ALL_ACCESS, &ring_mr),
                     0);
    *val = 0xabcabc;
    /* rq[0]: a WRITE to a placeholder the message replaces. */
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, 0xdead0000, 0x1234);
    tw_data(&w, 8, D.mr->lkey, val);
    idx = tq_post(&rq, &w);
    sge.addr = (uintptr_t)(tq_wqe(&rq, idx) + 16);
    sge.length = 16;
    sge.lkey = ring_mr->lkey;
    ck_assert_int_eq(rnic_post_recv(rq.qp, &sge, 1, 1), 0);
    /* C: WAIT for the receive, then enable rq[0]. */
    post_wait(&C, D.rcq, 1, 0);
    post_en(&C, MLX5_OPCODE_SEND_EN, &rq, 1, 0);
    tq_ring(&C);
    r.rkey = cpu_to_be32(D.mr->rkey);
    memcpy(msg, &r, 16);
    tw_ctrl(&w, MLX5_OPCODE_SEND, 0);
    tw_data(&w, 16, D.mr->lkey, msg);
    tq_post(&s, &w);
    tq_ring(&s);
    ck_assert_int_eq(tpoll(MCQ, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(*dst, 0xabcabc);
}
END_TEST

/* FENCE: a WRITE after a READ into its source waits for the READ. */
START_TEST(fence_waits_for_read)
{
    uint64_t *remote = (uint64_t *)(D.mem + 4096);
    uint64_t *buf = (uint64_t *)D.mem, *dst = (uint64_t *)(D.mem + 8192);
    struct tq q;
    struct tw w;
    struct rnic_wc wc;

    tq_create(&q, &D, 0, 64, 0);
    tq_connect(&q, &q);
    for (int i = 0; i < 20; i++) {
        *remote = 1000 + (uint64_t)i;
        *buf = 0;
        tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, 0);
        tw_raddr(&w, (uintptr_t)remote, D.mr->rkey);
        tw_data(&w, 8, D.mr->lkey, buf);
        tq_post(&q, &w);
        tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE,
                MLX5_WQE_CTRL_FENCE | MLX5_WQE_CTRL_CQ_UPDATE);
        tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
        tw_data(&w, 8, D.mr->lkey, buf);
        tq_post(&q, &w);
        tq_ring(&q);
        ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
        ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
        ck_assert_uint_eq(*dst, 1000 + (uint64_t)i);
    }
}
END_TEST

/*
 * A queue released by a SEND_EN of the same engine thread runs before the
 * queue that released it goes on (docs/softnic.md, "Threads"): M's WRITE
 * lands before the READ C posted after the SEND_EN reads its target. Not
 * a rule of the InfiniBand spec (queues run side by side on a NIC), but
 * what lets an offloaded GET's answer leave before its bookkeeping. The
 * rule is about one thread's turns, so the queues are made again on an
 * engine of one thread (with more, C and M land on two).
 */
START_TEST(released_queue_runs_first)
{
    const char *env = getenv("RDN_SOFTNIC_THREADS");
    char threads[16];
    uint64_t *dst, *val, *seen;
    struct rnic_wc wc;
    struct tw w;

    snprintf(threads, sizeof(threads), "%s", env ? env : "");
    teardown();
    setenv("RDN_SOFTNIC_THREADS", "1", 1);
    setup();
    if (env)
        setenv("RDN_SOFTNIC_THREADS", threads, 1);
    else
        unsetenv("RDN_SOFTNIC_THREADS");
    dst = (uint64_t *)(D.mem + 4096);
    val = (uint64_t *)D.mem;
    seen = (uint64_t *)(D.mem + 8192);

    *val = 77;
    post_write8(&M, dst, val, 0);
    post_en(&C, MLX5_OPCODE_SEND_EN, &M, 1, 0);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, seen);
    tq_post(&C, &w);
    tq_ring(&C);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(*seen, 77);
}
END_TEST

static Suite *order_suite(void)
{
    Suite *s = suite_create("softnic-order");
    TCase *tc = tcase_create("order");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, managed_queue_ignores_doorbell);
    tcase_add_test(tc, send_en_releases_exactly_to_index);
    tcase_add_test(tc, wait_blocks_until_absolute_count);
    tcase_add_test(tc, wait_on_count_already_reached_passes);
    tcase_add_test(tc, wait_needs_cross_channel);
    tcase_add_test(tc, recv_en_releases_receives);
    tcase_add_test(tc, doorbell_order_chain);
    tcase_add_test(tc, write_rewrites_later_wqe);
    tcase_add_test(tc, cas_if_match_turns_nop_into_write);
    tcase_add_test(tc, cas_if_mismatch_keeps_nop);
    tcase_add_test(tc, recv_scatter_rewrites_later_wqe);
    tcase_add_test(tc, fence_waits_for_read);
    tcase_add_test(tc, released_queue_runs_first);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return trun(order_suite, "1,3");
}
