/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_softnic_access.c - per-QP responder access (rnic_qp_init_attr's
 * access with RNIC_QP_RESTRICT_ACCESS, verbs' qp_access_flags) and the
 * random tags of memory keys.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "t/support/test_softnic_util.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

#define TARGET 4096 /* offset of the word inbound requests aim at */
#define LOCAL  8192 /* offset of the requester's local buffer */
#define MAGIC  0x1122334455667788ull

static struct tdev D;
static struct tq A; /* requester, default access */
static struct tq R; /* responder, restricted */

/* Creates R with the given responder access, connected to A. */
static void responder(unsigned access)
{
    struct rnic_qp_init_attr a = {
        .send_cq = D.scq,
        .recv_cq = D.rcq,
        .sq_wqebb = 16,
        .rq_wqe = 16,
        .max_recv_sge = 1,
        .flags = RNIC_QP_RESTRICT_ACCESS,
        .access = access,
    };

    memset(&R, 0, sizeof(R));
    ck_assert_msg(rnic_create_qp(D.dev, &a, &R.qp) == 0, "create_qp: %s",
                  rnic_errmsg());
    ck_assert_int_eq(rnic_qp_sq(R.qp, &R.sq), 0);
    tq_connect(&A, &R);
}

static void setup(void)
{
    tdev_open(&D, NULL, 1 << 16, ALL_ACCESS);
    tq_create(&A, &D, 0, 16, 0);
    *(uint64_t *)(D.mem + TARGET) = MAGIC;
}

static void teardown(void)
{
    tdev_close(&D);
}

/* Posts one signaled inbound operation of kind op (0 WRITE, 1 READ, 2 CAS) */
static void post_op(int op)
{
    static const uint8_t opcodes[] = {
        MLX5_OPCODE_RDMA_WRITE, MLX5_OPCODE_RDMA_READ, MLX5_OPCODE_ATOMIC_CS};
    struct tw w;

    memset(D.mem + LOCAL, 0xab, 8);
    tw_ctrl(&w, opcodes[op], MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + TARGET, D.mr->rkey);
    if (op == 2)
        tw_atomic(&w, 7, MAGIC);
    tw_data(&w, 8, D.mr->lkey, D.mem + LOCAL);
    tq_post(&A, &w);
    tq_ring(&A);
}

static const unsigned op_access[] = {RNIC_ACCESS_REMOTE_WRITE,
                                     RNIC_ACCESS_REMOTE_READ,
                                     RNIC_ACCESS_REMOTE_ATOMIC};

/* An operation the responder does not serve: REM_ACCESS_ERR, both ERR. */
START_TEST(unserved_operation_is_remote_access_error)
{
    struct rnic_wc wc;
    int op = _i % 3;

    /* Serve everything except op (loop 0..2), or nothing (loop 3..5). */
    responder(_i < 3 ? (RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ |
                        RNIC_ACCESS_REMOTE_ATOMIC) &
                           ~op_access[op]
                     : 0);
    post_op(op);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_msg(wc.status == RNIC_WC_REM_ACCESS_ERR, "op %d: status %s", op,
                  rnic_wc_status_str(wc.status));
    ck_assert_uint_eq(*(uint64_t *)(D.mem + TARGET), MAGIC);
    ck_assert_int_eq(rnic_qp_state(A.qp), RNIC_QPS_ERR);
    ck_assert_int_eq(rnic_qp_state(R.qp), RNIC_QPS_ERR);
}
END_TEST

/* An operation the responder serves works as usual. */
START_TEST(served_operation_works)
{
    struct rnic_wc wc;
    int op = _i;

    responder(op_access[op]);
    post_op(op);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_msg(wc.status == RNIC_WC_SUCCESS, "op %d: status %s", op,
                  rnic_wc_status_str(wc.status));
    if (op == 0) {
        ck_assert_uint_eq(*(uint64_t *)(D.mem + TARGET), 0xababababababababull);
    } else {
        ck_assert_uint_eq(*(uint64_t *)(D.mem + LOCAL), MAGIC);
        ck_assert_uint_eq(*(uint64_t *)(D.mem + TARGET), op == 2 ? 7 : MAGIC);
    }
    ck_assert_int_eq(rnic_qp_state(R.qp), RNIC_QPS_RTS);
}
END_TEST

/* SENDs need no responder access: a QP that serves nothing receives. */
START_TEST(send_needs_no_access)
{
    struct rnic_sge sge = {(uintptr_t)D.mem + 12288, 64, D.mr->lkey};
    struct rnic_wc wc;
    struct tw w;

    responder(0);
    ck_assert_int_eq(rnic_post_recv(R.qp, &sge, 1, 9), 0);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 8, D.mr->lkey, D.mem + TARGET);
    tq_post(&A, &w);
    tq_ring(&A);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.wr_id, 9);
    ck_assert_uint_eq(*(uint64_t *)(D.mem + 12288), MAGIC);
}
END_TEST

/* A QP connected to itself obeys its own access too. */
START_TEST(loopback_obeys_access)
{
    struct rnic_qp_init_attr a = {
        .send_cq = D.scq,
        .sq_wqebb = 16,
        .flags = RNIC_QP_RESTRICT_ACCESS,
        .access = RNIC_ACCESS_REMOTE_READ,
    };
    struct rnic_wc wc;
    struct tw w;

    memset(&R, 0, sizeof(R));
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &R.qp), 0);
    ck_assert_int_eq(rnic_qp_sq(R.qp, &R.sq), 0);
    tq_connect(&R, &R);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + TARGET, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, D.mem + LOCAL);
    tq_post(&R, &w);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + TARGET, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, D.mem + LOCAL + 64);
    tq_post(&R, &w);
    tq_ring(&R);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_REM_ACCESS_ERR);
    ck_assert_uint_eq(*(uint64_t *)(D.mem + TARGET), MAGIC);
    ck_assert_int_eq(rnic_qp_state(R.qp), RNIC_QPS_ERR);
}
END_TEST

/* access is checked at the API boundary. */
START_TEST(bad_access_is_rejected)
{
    struct rnic_qp_init_attr a = {.send_cq = D.scq, .sq_wqebb = 16};
    struct rnic_qp *qp;

    a.access = RNIC_ACCESS_REMOTE_READ; /* without RESTRICT_ACCESS */
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &qp), -EINVAL);
    a.flags = RNIC_QP_RESTRICT_ACCESS;
    a.access = RNIC_ACCESS_LOCAL_WRITE; /* not a responder right */
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &qp), -EINVAL);
    a.access = 1u << 9;
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &qp), -EINVAL);
    a.access = RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC;
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &qp), 0);
    ck_assert_int_eq(rnic_destroy_qp(qp), 0);
}
END_TEST

/*
 * Keys of one MR slot registered again and again: never 0 or the invalid
 * key, never the slot's previous key, and the tags are spread (a fixed or
 * counting tag would give at most a few distinct values in a row; 64
 * random draws from 255 give fewer than 20 distinct with probability
 * below 1e-30).
 */
START_TEST(key_tags_are_random)
{
    bool seen[256] = {false};
    uint32_t prev = 0;
    int distinct = 0;

    for (int i = 0; i < 64; i++) {
        struct rnic_mr *mr;

        ck_assert_int_eq(
            rnic_reg_mr(D.dev, D.mem, 4096, RNIC_ACCESS_REMOTE_READ, &mr), 0);
        ck_assert_uint_ne(mr->rkey, 0);
        ck_assert_uint_ne(mr->rkey, MLX5_INVALID_LKEY);
        ck_assert_uint_ne(mr->rkey & 0xff, 0);
        ck_assert_uint_eq(mr->lkey, mr->rkey);
        if (prev && (prev >> 8) == (mr->rkey >> 8))
            ck_assert_uint_ne(prev, mr->rkey);
        if (!seen[mr->rkey & 0xff])
            distinct++;
        seen[mr->rkey & 0xff] = true;
        prev = mr->rkey;
        ck_assert_int_eq(rnic_dereg_mr(mr), 0);
    }
    ck_assert_int_ge(distinct, 20);
}
END_TEST

static Suite *access_suite(void)
{
    Suite *s = suite_create("softnic-access");
    TCase *tc = tcase_create("access");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, unserved_operation_is_remote_access_error, 0, 6);
    tcase_add_loop_test(tc, served_operation_works, 0, 3);
    tcase_add_test(tc, send_needs_no_access);
    tcase_add_test(tc, loopback_obeys_access);
    tcase_add_test(tc, bad_access_is_rejected);
    tcase_add_test(tc, key_tags_are_random);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return trun(access_suite, "1,3");
}
