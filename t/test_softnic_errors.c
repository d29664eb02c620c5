/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_softnic_errors.c - softnic's error model, as ibverbs has it: every
 * protection or length violation gives the right error completion, moves
 * the QP (and its RC peer) to the error state, flushes what follows, never
 * touches memory outside registered regions, and leaves every other QP
 * working.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "proto/byteorder.h"
#include "t/support/test_softnic_util.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

static struct tdev D;
static struct tq A, B; /* A -> B */
static struct tq X;    /* a bystander, connected to itself */
static struct rnic_cq *XCQ;

static void setup(void)
{
    struct rnic_qp_init_attr a = {.sq_wqebb = 16};

    tdev_open(&D, NULL, 1 << 20, ALL_ACCESS);
    tq_create(&A, &D, 0, 64, 16);
    tq_create(&B, &D, 0, 64, 16);
    tq_connect(&A, &B);
    ck_assert_int_eq(rnic_create_cq(D.dev, 64, &XCQ), 0);
    a.send_cq = XCQ;
    memset(&X, 0, sizeof(X));
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &X.qp), 0);
    ck_assert_int_eq(rnic_qp_sq(X.qp, &X.sq), 0);
    tq_connect(&X, &X);
}

static void teardown(void)
{
    tdev_close(&D);
}

/* The bystander still works: an 8-byte WRITE lands. */
static void bystander_ok(void)
{
    static uint64_t n = 1;
    uint64_t *src = (uint64_t *)(D.mem + 65536);
    uint64_t *dst = (uint64_t *)(D.mem + 65536 + 64);
    struct tw w;
    struct rnic_wc wc;

    *src = ++n;
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, src);
    tq_post(&X, &w);
    tq_ring(&X);
    ck_assert_int_eq(tpoll(XCQ, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(*dst, n);
    ck_assert_int_eq(rnic_qp_state(X.qp), RNIC_QPS_RTS);
}

static void post_write(struct tq *q, uint64_t raddr, uint32_t rkey,
                       uint32_t len, uint32_t lkey, const void *src)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, raddr, rkey);
    tw_data(&w, len, lkey, src);
    tq_post(q, &w);
}

static void post_nop(struct tq *q)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_NOP, 0); /* unsignaled: flushed ones complete */
    tq_post(q, &w);
}

/*
 * Runs A's queue (already posted: a failing WQE then one NOP) and checks:
 * the first completion has status, the NOP is flushed, A is in ERR and so
 * is B when peer_err, and the bystander works.
 */
static void expect_failure(uint8_t status, int peer_err)
{
    struct rnic_wc wc[2];

    tq_ring(&A);
    ck_assert_int_eq(tpoll(D.scq, wc, 2, TMS), 2);
    ck_assert_msg(wc[0].status == status, "status %s, want %s",
                  rnic_wc_status_str(wc[0].status), rnic_wc_status_str(status));
    ck_assert_uint_eq(wc[0].wqe_counter, 0);
    ck_assert_uint_eq(wc[1].status, RNIC_WC_WR_FLUSH_ERR);
    ck_assert_uint_eq(wc[1].wqe_counter, 1);
    ck_assert_int_eq(rnic_qp_state(A.qp), RNIC_QPS_ERR);
    if (peer_err) {
        for (int i = 0; i < 500 && rnic_qp_state(B.qp) != RNIC_QPS_ERR; i++)
            tquiet(D.rcq, 2);
        ck_assert_int_eq(rnic_qp_state(B.qp), RNIC_QPS_ERR);
    }
    bystander_ok();
}

START_TEST(bad_lkey_is_local_protection)
{
    post_write(&A, (uintptr_t)D.mem + 4096, D.mr->rkey, 8, D.mr->lkey ^ 0x55,
               D.mem);
    post_nop(&A);
    expect_failure(RNIC_WC_LOC_PROT_ERR, 1);
}
END_TEST

START_TEST(bad_rkey_is_remote_access)
{
    post_write(&A, (uintptr_t)D.mem + 4096, D.mr->rkey + 0x100, 8, D.mr->lkey,
               D.mem);
    post_nop(&A);
    expect_failure(RNIC_WC_REM_ACCESS_ERR, 1);
}
END_TEST

START_TEST(local_out_of_bounds_is_local_protection)
{
    post_write(&A, (uintptr_t)D.mem, D.mr->rkey, 64, D.mr->lkey,
               D.mem + D.len - 32);
    post_nop(&A);
    expect_failure(RNIC_WC_LOC_PROT_ERR, 1);
}
END_TEST

START_TEST(remote_out_of_bounds_touches_nothing)
{
    struct rnic_mr *small;
    uint8_t *guard = D.mem + 8192;

    memset(guard, 0x5a, 256);
    ck_assert_int_eq(rnic_reg_mr(D.dev, guard + 64, 64, ALL_ACCESS, &small), 0);
    memset(D.mem, 0x11, 128);
    /* 65 bytes into a 64-byte MR: nothing may be written, not even 64. */
    post_write(&A, (uintptr_t)guard + 64, small->rkey, 65, D.mr->lkey, D.mem);
    post_nop(&A);
    expect_failure(RNIC_WC_REM_ACCESS_ERR, 1);
    for (int i = 0; i < 256; i++)
        ck_assert_uint_eq(guard[i], 0x5a);
}
END_TEST

START_TEST(zero_byte_count_means_2GB)
{
    post_write(&A, (uintptr_t)D.mem + 4096, D.mr->rkey, 0, D.mr->lkey, D.mem);
    post_nop(&A);
    expect_failure(RNIC_WC_LOC_PROT_ERR, 1);
}
END_TEST

START_TEST(missing_remote_write_access)
{
    struct rnic_mr *ro;

    ck_assert_int_eq(
        rnic_reg_mr(D.dev, D.mem + 4096, 4096, RNIC_ACCESS_REMOTE_READ, &ro),
        0);
    post_write(&A, (uintptr_t)D.mem + 4096, ro->rkey, 8, D.mr->lkey, D.mem);
    post_nop(&A);
    expect_failure(RNIC_WC_REM_ACCESS_ERR, 1);
}
END_TEST

START_TEST(missing_remote_read_access)
{
    struct rnic_mr *wo;
    struct tw w;

    ck_assert_int_eq(
        rnic_reg_mr(D.dev, D.mem + 4096, 4096,
                    RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE, &wo),
        0);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + 4096, wo->rkey);
    tw_data(&w, 8, D.mr->lkey, D.mem);
    tq_post(&A, &w);
    post_nop(&A);
    expect_failure(RNIC_WC_REM_ACCESS_ERR, 1);
}
END_TEST

START_TEST(missing_remote_atomic_access)
{
    struct rnic_mr *rw;
    struct tw w;

    ck_assert_int_eq(rnic_reg_mr(D.dev, D.mem + 4096, 4096,
                                 RNIC_ACCESS_LOCAL_WRITE |
                                     RNIC_ACCESS_REMOTE_WRITE |
                                     RNIC_ACCESS_REMOTE_READ,
                                 &rw),
                     0);
    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_FA, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + 4096, rw->rkey);
    tw_atomic(&w, 1, 0);
    tw_data(&w, 8, D.mr->lkey, D.mem);
    tq_post(&A, &w);
    post_nop(&A);
    expect_failure(RNIC_WC_REM_ACCESS_ERR, 1);
    ck_assert_uint_eq(*(uint64_t *)(D.mem + 4096), 0);
}
END_TEST

START_TEST(read_into_readonly_local_memory)
{
    struct rnic_mr *ro;
    struct tw w;

    ck_assert_int_eq(
        rnic_reg_mr(D.dev, D.mem + 4096, 4096, RNIC_ACCESS_REMOTE_READ, &ro),
        0);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem, D.mr->rkey);
    tw_data(&w, 8, ro->lkey, D.mem + 4096);
    tq_post(&A, &w);
    post_nop(&A);
    expect_failure(RNIC_WC_LOC_PROT_ERR, 1);
}
END_TEST

START_TEST(misaligned_atomic_is_invalid_request)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_CS, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + 4100, D.mr->rkey);
    tw_atomic(&w, 1, 0);
    tw_data(&w, 8, D.mr->lkey, D.mem);
    tq_post(&A, &w);
    post_nop(&A);
    expect_failure(RNIC_WC_REM_INV_REQ_ERR, 1);
}
END_TEST

START_TEST(atomic_result_must_be_8_bytes)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_CS, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + 4096, D.mr->rkey);
    tw_atomic(&w, 1, 0);
    tw_data(&w, 4, D.mr->lkey, D.mem);
    tq_post(&A, &w);
    post_nop(&A);
    expect_failure(RNIC_WC_LOC_LEN_ERR, 1);
}
END_TEST

START_TEST(bad_opcode_is_qp_operation_error)
{
    struct tw w;

    tw_ctrl(&w, 0x55, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_post(&A, &w);
    post_nop(&A);
    expect_failure(RNIC_WC_LOC_QP_OP_ERR, 1);
}
END_TEST

START_TEST(ds_zero_is_qp_operation_error)
{
    struct tw w;
    struct mlx5_ctrl_seg *c;

    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_post(&A, &w);
    c = (struct mlx5_ctrl_seg *)tq_wqe(&A, 0);
    c->qpn_ds = cpu_to_be32(mlx5_ctrl_word1(rnic_qp_num(A.qp), 0));
    post_nop(&A);
    expect_failure(RNIC_WC_LOC_QP_OP_ERR, 1);
}
END_TEST

START_TEST(atomic_with_short_ds_is_qp_operation_error)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_FA, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + 4096, D.mr->rkey);
    tw_atomic(&w, 1, 0);
    tq_post(&A, &w);
    post_nop(&A);
    expect_failure(RNIC_WC_LOC_QP_OP_ERR, 1);
}
END_TEST

START_TEST(send_ring_overflow_is_qp_operation_error)
{
    struct rnic_wc wc;

    /* Claim 65 WQEs in a 64-block ring: the NIC sees an overrun. */
    ck_assert_int_eq(rnic_ring_doorbell(A.qp, 65), 0);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_LOC_QP_OP_ERR);
    ck_assert_int_eq(rnic_qp_state(A.qp), RNIC_QPS_ERR);
    bystander_ok();
}
END_TEST

START_TEST(send_longer_than_receive)
{
    struct rnic_sge sge = {(uintptr_t)D.mem + 8192, 8, D.mr->lkey};
    struct tw w;
    struct rnic_wc wc;

    ck_assert_int_eq(rnic_post_recv(B.qp, &sge, 1, 5), 0);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 16, D.mr->lkey, D.mem);
    tq_post(&A, &w);
    post_nop(&A);
    expect_failure(RNIC_WC_REM_INV_REQ_ERR, 1);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_LOC_LEN_ERR);
    ck_assert_uint_eq(wc.wr_id, 5);
}
END_TEST

START_TEST(receive_into_readonly_memory)
{
    struct rnic_mr *ro;
    struct rnic_sge sge;
    struct tw w;
    struct rnic_wc wc;

    ck_assert_int_eq(
        rnic_reg_mr(D.dev, D.mem + 8192, 4096, RNIC_ACCESS_REMOTE_READ, &ro),
        0);
    sge.addr = (uintptr_t)D.mem + 8192;
    sge.length = 64;
    sge.lkey = ro->lkey;
    ck_assert_int_eq(rnic_post_recv(B.qp, &sge, 1, 6), 0);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 16, D.mr->lkey, D.mem);
    tq_post(&A, &w);
    post_nop(&A);
    expect_failure(RNIC_WC_REM_OP_ERR, 1);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_LOC_PROT_ERR);
}
END_TEST

/*
 * A QP connected to itself is requester and responder at once: a WQE that
 * fails at the responder must still complete with its own status (not as
 * flushed), the WQE before it with success, and only the later ones are
 * flushed, as with two QPs.
 */
static void loopback_failure(uint8_t opcode, uint32_t rkey, uint8_t status)
{
    uint64_t *src = (uint64_t *)(D.mem + 65536);
    uint64_t *dst = (uint64_t *)(D.mem + 65536 + 64);
    struct rnic_wc wc[4];
    struct tw w;

    *src = 0x1234;
    *dst = 0;
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, src);
    tq_post(&X, &w);
    tw_ctrl(&w, opcode, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + 4096, rkey);
    if (opcode == MLX5_OPCODE_ATOMIC_CS)
        tw_atomic(&w, 1, 0);
    tw_data(&w, 8, D.mr->lkey, D.mem + 8192);
    tq_post(&X, &w);
    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_post(&X, &w);
    tq_ring(&X);
    ck_assert_int_eq(tpoll(XCQ, wc, 3, TMS), 3);
    ck_assert_uint_eq(wc[0].status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc[0].wqe_counter, 0);
    ck_assert_msg(wc[1].status == status, "status %s, want %s",
                  rnic_wc_status_str(wc[1].status), rnic_wc_status_str(status));
    ck_assert_uint_eq(wc[1].wqe_counter, 1);
    ck_assert_uint_eq(wc[2].status, RNIC_WC_WR_FLUSH_ERR);
    ck_assert_uint_eq(wc[2].wqe_counter, 2);
    ck_assert_int_eq(tquiet(XCQ, 20), 0);
    ck_assert_uint_eq(*dst, 0x1234);
    ck_assert_int_eq(rnic_qp_state(X.qp), RNIC_QPS_ERR);
}

START_TEST(loopback_failure_keeps_its_status)
{
    struct rnic_mr *lw;

    ck_assert_int_eq(
        rnic_reg_mr(D.dev, D.mem + 4096, 4096, RNIC_ACCESS_LOCAL_WRITE, &lw),
        0);
    switch (_i) {
    case 0:
        loopback_failure(MLX5_OPCODE_ATOMIC_CS, lw->rkey,
                         RNIC_WC_REM_ACCESS_ERR);
        break;
    case 1:
        loopback_failure(MLX5_OPCODE_RDMA_READ, lw->rkey,
                         RNIC_WC_REM_ACCESS_ERR);
        break;
    default:
        loopback_failure(MLX5_OPCODE_RDMA_WRITE, D.mr->rkey ^ 0x5500,
                         RNIC_WC_REM_ACCESS_ERR);
        break;
    }
}
END_TEST

START_TEST(send_without_receive_queue)
{
    struct tq s, r;
    struct tw w;
    struct rnic_wc wc;

    tq_create(&s, &D, 0, 16, 0);
    tq_create(&r, &D, 0, 16, 0);
    tq_connect(&s, &r);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 16, D.mr->lkey, D.mem);
    tq_post(&s, &w);
    tq_ring(&s);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_REM_INV_REQ_ERR);
    bystander_ok();
}
END_TEST

START_TEST(peer_destroyed_is_retry_exceeded)
{
    struct rnic_wc wc[2];

    ck_assert_int_eq(rnic_destroy_qp(B.qp), 0);
    /* A learned that its peer went away: later WQEs flush. */
    for (int i = 0; i < 500 && rnic_qp_state(A.qp) != RNIC_QPS_ERR; i++)
        tquiet(D.scq, 2);
    ck_assert_int_eq(rnic_qp_state(A.qp), RNIC_QPS_ERR);
    post_write(&A, (uintptr_t)D.mem + 4096, D.mr->rkey, 8, D.mr->lkey, D.mem);
    tq_ring(&A);
    ck_assert_int_eq(tpoll(D.scq, wc, 1, TMS), 1);
    ck_assert_uint_eq(wc[0].status, RNIC_WC_WR_FLUSH_ERR);
    bystander_ok();
}
END_TEST

START_TEST(unconnected_peer_is_retry_exceeded)
{
    struct tq s, r;
    struct rnic_addr ra;
    struct tw w;
    struct rnic_wc wc;

    tq_create(&s, &D, 0, 16, 0);
    tq_create(&r, &D, 0, 16, 0);
    ck_assert_int_eq(rnic_qp_addr(r.qp, &ra), 0);
    ck_assert_int_eq(rnic_connect(s.qp, &ra), 0); /* r not connected */
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + 4096, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, D.mem);
    tq_post(&s, &w);
    tq_ring(&s);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_RETRY_EXC_ERR);
    ck_assert_int_eq(rnic_qp_state(s.qp), RNIC_QPS_ERR);
}
END_TEST

START_TEST(error_flushes_posted_receives)
{
    struct rnic_sge sge = {(uintptr_t)D.mem + 8192, 64, D.mr->lkey};
    struct rnic_wc wc[3];

    ck_assert_int_eq(rnic_post_recv(B.qp, &sge, 1, 71), 0);
    ck_assert_int_eq(rnic_post_recv(B.qp, &sge, 1, 72), 0);
    post_write(&A, (uintptr_t)D.mem + 4096, D.mr->rkey + 0x100, 8, D.mr->lkey,
               D.mem);
    post_nop(&A);
    expect_failure(RNIC_WC_REM_ACCESS_ERR, 1);
    ck_assert_int_eq(tpoll(D.rcq, wc, 2, TMS), 2);
    ck_assert_uint_eq(wc[0].status, RNIC_WC_WR_FLUSH_ERR);
    ck_assert_uint_eq(wc[0].wr_id, 71);
    ck_assert_uint_eq(wc[1].wr_id, 72);
    /* A receive posted later is flushed too. */
    ck_assert_int_eq(rnic_post_recv(B.qp, &sge, 1, 73), 0);
    ck_assert_int_eq(tpoll(D.rcq, wc, 1, TMS), 1);
    ck_assert_uint_eq(wc[0].status, RNIC_WC_WR_FLUSH_ERR);
    ck_assert_uint_eq(wc[0].wr_id, 73);
}
END_TEST

START_TEST(cq_overflow_is_reported)
{
    struct rnic_cq *small;
    struct rnic_qp_init_attr a = {.sq_wqebb = 16};
    struct tq q;
    struct rnic_wc wc[8];

    ck_assert_int_eq(rnic_create_cq(D.dev, 4, &small), 0);
    a.send_cq = small;
    memset(&q, 0, sizeof(q));
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &q.qp), 0);
    ck_assert_int_eq(rnic_qp_sq(q.qp, &q.sq), 0);
    tq_connect(&q, &q);
    for (int i = 0; i < 5; i++) {
        struct tw w;

        tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
        tq_post(&q, &w);
    }
    tq_ring(&q);
    for (int i = 0; i < 500; i++) {
        if (rnic_poll_cq(small, 0, wc) < 0)
            break;
        tquiet(XCQ, 2);
    }
    ck_assert_int_eq(rnic_poll_cq(small, 8, wc), -EOVERFLOW);
    bystander_ok();
}
END_TEST

START_TEST(ignore_overrun_cq_keeps_counting)
{
    struct rnic_cq_init_attr ca = {.depth = 4, .flags = RNIC_CQ_IGNORE_OVERRUN};
    struct rnic_cq *cnt;
    struct rnic_qp_init_attr a = {.sq_wqebb = 64,
                                  .flags = RNIC_QP_CROSS_CHANNEL};
    struct tq q;
    struct tw w;
    struct rnic_wc wc[8];
    uint64_t *dst = (uint64_t *)(D.mem + 4096), *src = (uint64_t *)D.mem;

    ck_assert_int_eq(rnic_create_cq_ex(D.dev, &ca, &cnt), 0);
    a.send_cq = cnt;
    memset(&q, 0, sizeof(q));
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &q.qp), 0);
    ck_assert_int_eq(rnic_qp_sq(q.qp, &q.sq), 0);
    tq_connect(&q, &q);
    for (int i = 0; i < 10; i++) {
        tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
        tq_post(&q, &w);
    }
    /* WAIT for the 10th completion of a 4-deep CQ, then WRITE. */
    tw_ctrl(&w, MLX5_OPCODE_WAIT, 0);
    tw_waiten(&w, 10, rnic_cq_num(cnt));
    tq_post(&q, &w);
    *src = 99;
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, 0);
    tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, src);
    tq_post(&q, &w);
    tq_ring(&q);
    ck_assert(twait_u64(dst, 99, TMS));
    /* A late poller gets the newest depth entries. */
    ck_assert_int_eq(rnic_poll_cq(cnt, 8, wc), 4);
    ck_assert_uint_eq(wc[3].wqe_counter, 9);
}
END_TEST

static Suite *errors_suite(void)
{
    Suite *s = suite_create("softnic-errors");
    TCase *tc = tcase_create("errors");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, bad_lkey_is_local_protection);
    tcase_add_test(tc, bad_rkey_is_remote_access);
    tcase_add_test(tc, local_out_of_bounds_is_local_protection);
    tcase_add_test(tc, remote_out_of_bounds_touches_nothing);
    tcase_add_test(tc, zero_byte_count_means_2GB);
    tcase_add_test(tc, missing_remote_write_access);
    tcase_add_test(tc, missing_remote_read_access);
    tcase_add_test(tc, missing_remote_atomic_access);
    tcase_add_test(tc, read_into_readonly_local_memory);
    tcase_add_test(tc, misaligned_atomic_is_invalid_request);
    tcase_add_test(tc, atomic_result_must_be_8_bytes);
    tcase_add_test(tc, bad_opcode_is_qp_operation_error);
    tcase_add_test(tc, ds_zero_is_qp_operation_error);
    tcase_add_test(tc, atomic_with_short_ds_is_qp_operation_error);
    tcase_add_test(tc, send_ring_overflow_is_qp_operation_error);
    tcase_add_test(tc, send_longer_than_receive);
    tcase_add_test(tc, receive_into_readonly_memory);
    tcase_add_test(tc, send_without_receive_queue);
    tcase_add_loop_test(tc, loopback_failure_keeps_its_status, 0, 3);
    tcase_add_test(tc, peer_destroyed_is_retry_exceeded);
    tcase_add_test(tc, unconnected_peer_is_retry_exceeded);
    tcase_add_test(tc, error_flushes_posted_receives);
    tcase_add_test(tc, cq_overflow_is_reported);
    tcase_add_test(tc, ignore_overrun_cq_keeps_counting);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return trun(errors_suite, "1,3");
}
