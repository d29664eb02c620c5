/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_softnic_strict.c - strict mode (prefetch window on send queues).
 *
 * The racy chain: on one ordinary (unmanaged) queue, WQE 0 WRITEs a new
 * control segment over WQE 2 (a NOP becomes a WRITE), WQE 1 WAITs for WQE
 * 0's completion, WQE 2 runs. With just-in-time fetch WQE 2 runs as
 * rewritten; a real NIC prefetches WQE 2 at doorbell time, so the rewrite
 * comes too late. Strict mode snapshots WQEs up to the window at doorbell
 * time and so fails the chain as hardware would. The correct chain
 * (doorbell ordering: WQE 2 on a managed queue enabled after the WAIT)
 * works in strict mode too.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "proto/byteorder.h"
#include "t/support/test_softnic_util.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

struct rig {
    struct tdev d;
    struct tq q; /* cross-channel, connected to itself */
    struct rnic_mr *ring_mr;
    uint64_t *dst, *val;
};

static void rig_open(struct rig *r, int strict)
{
    struct rnic_open_opts o = {.strict = strict};

    tdev_open(&r->d, &o, 1 << 20, ALL_ACCESS);
    tq_create(&r->q, &r->d, RNIC_QP_CROSS_CHANNEL, 64, 0);
    tq_connect(&r->q, &r->q);
    r->dst = (uint64_t *)(r->d.mem + 4096);
    r->val = (uint64_t *)r->d.mem;
    *r->val = 0x600d;
}

/*
 * Posts at target (on queue t) a NOP carrying a WRITE's segments (to
 * r->dst), and stores at src the control segment that turns it into that
 * WRITE. Returns the target's index.
 */
static uint32_t post_placeholder(struct rig *r, struct tq *t, uint8_t *src)
{
    struct tw w;
    uint32_t idx;

    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)r->dst, r->d.mr->rkey);
    tw_data(&w, 8, r->d.mr->lkey, r->val);
    idx = tq_post(t, &w);
    memcpy(src, tq_wqe(t, idx), 16);
    ((struct mlx5_ctrl_seg *)src)->opmod_idx_opcode =
        cpu_to_be32(mlx5_ctrl_word0(0, (uint16_t)idx, MLX5_OPCODE_RDMA_WRITE));
    return idx;
}

/* WQE 0 of the chain: WRITE the 16 control bytes at src over target. */
static void post_rewrite(struct rig *r, struct tq *t, uint32_t target,
                         uint8_t *src)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)tq_wqe(t, target), r->ring_mr->rkey);
    tw_data(&w, 16, r->d.mr->lkey, src);
    tq_post(&r->q, &w);
}

static void post_wait(struct tq *q, struct rnic_cq *cq, uint32_t n)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_WAIT, 0);
    tw_waiten(&w, n, rnic_cq_num(cq));
    tq_post(q, &w);
}

/* Runs the racy chain; returns 1 if WQE 2 ran as the rewritten WRITE. */
static int racy_chain(int strict)
{
    struct rig r;
    struct rnic_wc wc[2];
    uint8_t *src;
    uint32_t idx2;
    int wrote;

    rig_open(&r, strict);
    ck_assert_int_eq(rnic_reg_mr(r.d.dev, r.q.sq.buf, r.q.sq.wqebb_cnt * 64,
                                 ALL_ACCESS, &r.ring_mr),
                     0);
    src = r.d.mem + 512;
    /* WQE 0 is the WRITE, WQE 1 the WAIT, WQE 2 (index 2) the target. */
    post_rewrite(&r, &r.q, 2, src);
    post_wait(&r.q, r.d.scq, 1);
    idx2 = post_placeholder(&r, &r.q, src);
    ck_assert_uint_eq(idx2, 2);
    tq_ring(&r.q);
    ck_assert_int_eq(tpoll(r.d.scq, wc, 2, TMS), 2);
    ck_assert_uint_eq(wc[0].status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc[1].status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc[1].wqe_counter, 2);
    wrote = *r.dst == 0x600d;
    ck_assert_uint_eq(wc[1].opcode, wrote ? RNIC_WC_RDMA_WRITE : RNIC_WC_NOP);
    /* The ring holds the rewritten WQE either way. */
    ck_assert_uint_eq(tq_wqe(&r.q, 2)[3], MLX5_OPCODE_RDMA_WRITE);
    tdev_close(&r.d);
    return wrote;
}

START_TEST(jit_fetch_runs_the_rewrite)
{
    ck_assert_int_eq(racy_chain(0), 1);
}
END_TEST

START_TEST(strict_mode_catches_the_racy_chain)
{
    ck_assert_int_eq(racy_chain(8), 0);
}
END_TEST

START_TEST(strict_window_is_bounded)
{
    /*
     * The window slides with execution: with 2 blocks, WQE 2 is fetched
     * as WQE 0 starts (too early); with 1 block, only once the WAIT
     * (WQE 1) completed, which is after the rewrite landed.
     */
    ck_assert_int_eq(racy_chain(2), 0);
    ck_assert_int_eq(racy_chain(1), 1);
}
END_TEST

START_TEST(doorbell_ordering_is_safe_in_strict_mode)
{
    struct rig r;
    struct rnic_qp_init_attr a = {.sq_wqebb = 16,
                                  .flags = RNIC_QP_MANAGED_SEND};
    struct rnic_cq *mcq;
    struct tq m;
    struct tw w;
    struct rnic_wc wc;
    uint8_t *src;
    uint32_t idx;

    rig_open(&r, 64);
    ck_assert_int_eq(rnic_create_cq(r.d.dev, 16, &mcq), 0);
    a.send_cq = mcq;
    memset(&m, 0, sizeof(m));
    ck_assert_int_eq(rnic_create_qp(r.d.dev, &a, &m.qp), 0);
    ck_assert_int_eq(rnic_qp_sq(m.qp, &m.sq), 0);
    tq_connect(&m, &m);
    ck_assert_int_eq(rnic_reg_mr(r.d.dev, m.sq.buf, m.sq.wqebb_cnt * 64,
                                 ALL_ACCESS, &r.ring_mr),
                     0);
    src = r.d.mem + 512;
    idx = post_placeholder(&r, &m, src);
    post_rewrite(&r, &m, idx, src);
    post_wait(&r.q, r.d.scq, 1);
    tw_ctrl(&w, MLX5_OPCODE_SEND_EN, 0);
    tw_waiten(&w, 1, rnic_qp_num(m.qp));
    tq_post(&r.q, &w);
    tq_ring(&r.q);
    ck_assert_int_eq(tpoll(mcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_RDMA_WRITE);
    ck_assert_uint_eq(*r.dst, 0x600d);
    tdev_close(&r.d);
}
END_TEST

static Suite *strict_suite(void)
{
    Suite *s = suite_create("softnic-strict");
    TCase *tc = tcase_create("strict");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, jit_fetch_runs_the_rewrite);
    tcase_add_test(tc, strict_mode_catches_the_racy_chain);
    tcase_add_test(tc, strict_window_is_bounded);
    tcase_add_test(tc, doorbell_ordering_is_safe_in_strict_mode);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return trun(strict_suite, "1,2");
}
