/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_chain_if.c - the if-construct on softnic: both branches, the
 * boundary operands 0 and 2^48-1, every id byte taking part in the
 * comparison, arming and disarming, NOP becoming WRITE, WRITE_IMM and
 * SEND, and operands copied in at run time by a READ (x) and a RECV (y).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "t/support/chain_testutil.h"

#define SRC_OFF 0
#define DST_OFF 64
#define RCV_OFF 128
#define KEY_OFF 192
#define SRC_VAL 0x1122334455667788ull

static struct rnic_device *dev;
static struct chain_q ctl, tgt;
static struct chain_buf mem;

static void setup(void)
{
    dev = tc_open(0);
    tc_q(dev, RNIC_QP_CROSS_CHANNEL, 256, 0, NULL, &ctl);
    tc_q(dev, TC_MANAGED, 64, 8, NULL, &tgt);
    tc_buf(dev, 4096, &mem);
    memcpy(mem.ptr + SRC_OFF, &(uint64_t){SRC_VAL}, 8);
}

static void teardown(void)
{
    chain_q_close(&tgt);
    chain_q_close(&ctl);
    chain_buf_close(&mem);
    rnic_close(dev);
}

static struct rnic_sge src_sge(void)
{
    return chain_loc_sge(chain_buf_loc(&mem, SRC_OFF, 8));
}

/* Runs one if on a fresh part of the rings; returns what tgt completed. */
static int run_if(const struct chain_wr *wr, uint64_t x, uint64_t y,
                  enum chain_if_mode mode, struct chain_if *iff)
{
    struct rnic_wc wc;

    memset(mem.ptr + DST_OFF, 0, 8);
    ck_assert_msg(chain_if_eq(&ctl, &tgt, wr, x, y, mode, 0, iff) == 0,
                  "chain_if_eq: %s", chain_errmsg());
    ck_assert_int_eq(chain_q_doorbell(&ctl), 0);
    tc_poll(tgt.scq, &wc);
    ck_assert_int_eq(wc.status, RNIC_WC_SUCCESS);
    chain_q_retire(&ctl, ctl.pi);
    chain_q_retire(&tgt, tgt.pi);
    return wc.opcode;
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

/* x == y arms the WRITE; x != y leaves a NOP. */
static void expect_if(uint64_t x, uint64_t y)
{
    struct rnic_sge sg = src_sge();
    struct chain_wr wr = write_wr(&sg);
    struct chain_if iff;
    int op = run_if(&wr, x, y, CHAIN_IF_ARM, &iff);
    uint64_t dst;

    memcpy(&dst, mem.ptr + DST_OFF, 8);
    if (x == y) {
        ck_assert_msg(op == RNIC_WC_RDMA_WRITE, "x=%llx y=%llx: op %d",
                      (unsigned long long)x, (unsigned long long)y, op);
        ck_assert_uint_eq(dst, SRC_VAL);
        ck_assert_uint_eq(chain_wqe_opcode_now(&iff.target),
                          MLX5_OPCODE_RDMA_WRITE);
    } else {
        ck_assert_msg(op == RNIC_WC_NOP, "x=%llx y=%llx: op %d",
                      (unsigned long long)x, (unsigned long long)y, op);
        ck_assert_uint_eq(dst, 0);
        ck_assert_uint_eq(chain_wqe_opcode_now(&iff.target), MLX5_OPCODE_NOP);
    }
}

START_TEST(if_true_false)
{
    expect_if(5, 5);
    expect_if(5, 6);
    expect_if(6, 5);
}
END_TEST

START_TEST(if_boundaries)
{
    expect_if(0, 0);
    expect_if(CHAIN_ID48_MAX, CHAIN_ID48_MAX);
    expect_if(CHAIN_ID48_MAX, 0);
    expect_if(0, CHAIN_ID48_MAX);
    expect_if(CHAIN_ID48_MAX - 1, CHAIN_ID48_MAX);
    expect_if(1ull << 47, 1ull << 47);
}
END_TEST

/* Each of the six id bytes takes part in the comparison. */
START_TEST(if_every_byte)
{
    const uint64_t y = 0x0123456789abull;

    expect_if(y, y);
    for (int b = 0; b < 6; b++)
        expect_if(y ^ (0xffull << (8 * b)), y);
}
END_TEST

START_TEST(if_operand_too_wide)
{
    struct rnic_sge sg = src_sge();
    struct chain_wr wr = write_wr(&sg);
    struct chain_if iff;

    ck_assert_int_lt(chain_if_eq(&ctl, &tgt, &wr, CHAIN_ID48_MAX + 1, 0,
                                 CHAIN_IF_ARM, 0, &iff),
                     0);
    ck_assert_int_lt(chain_if_eq(&ctl, &ctl, &wr, 1, 1, CHAIN_IF_ARM, 0, &iff),
                     0);
    ck_assert_int_lt(chain_if_eq(&tgt, &ctl, &wr, 1, 1, CHAIN_IF_ARM, 0, &iff),
                     0); /* target not managed */
    ck_assert_int_eq(chain_q_doorbell(NULL), -EINVAL);
    ck_assert_int_eq(chain_cq_poll_wait(NULL, NULL, 0), -EINVAL);
    ck_assert_int_eq(chain_cq_poll_wait(ctl.scq, NULL, 0), -EINVAL);
}
END_TEST

START_TEST(if_disarm)
{
    struct rnic_sge sg = src_sge();
    struct chain_wr wr = write_wr(&sg);
    struct chain_if iff;

    ck_assert_int_eq(run_if(&wr, 7, 7, CHAIN_IF_DISARM, &iff), RNIC_WC_NOP);
    ck_assert_uint_eq(tc_load_u64(mem.ptr + DST_OFF), 0);
    ck_assert_int_eq(run_if(&wr, 7, 8, CHAIN_IF_DISARM, &iff),
                     RNIC_WC_RDMA_WRITE);
    ck_assert_uint_eq(tc_load_u64(mem.ptr + DST_OFF), SRC_VAL);
}
END_TEST

/* NOP -> WRITE_IMM / SEND into tgt's own receive queue (loopback). */
static void expect_message(uint8_t opcode, uint64_t x, uint64_t y)
{
    struct rnic_sge sg = src_sge();
    struct rnic_sge rs = chain_loc_sge(chain_buf_loc(&mem, RCV_OFF, 8));
    struct chain_wr wr = write_wr(&sg);
    struct chain_if iff;
    struct rnic_wc wc;
    int op;

    memset(mem.ptr + RCV_OFF, 0, 8);
    wr.opcode = opcode;
    wr.imm = 0xabcdef12;
    ck_assert_int_eq(chain_post_recv(&tgt, &rs, 1, 99), 0);
    op = run_if(&wr, x, y, CHAIN_IF_ARM, &iff);
    if (x != y) {
        ck_assert_int_eq(op, RNIC_WC_NOP);
        /* tgt ran its NOP: nothing was sent, so nothing can arrive */
        ck_assert_int_eq(rnic_poll_cq(tgt.rcq->cq, 1, &wc), 0);
        return;
    }
    tc_poll(tgt.rcq, &wc);
    ck_assert_int_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.wr_id, 99);
    if (opcode == MLX5_OPCODE_SEND) {
        ck_assert_int_eq(op, RNIC_WC_SEND);
        ck_assert_int_eq(wc.opcode, RNIC_WC_RECV);
        ck_assert_uint_eq(tc_load_u64(mem.ptr + RCV_OFF), SRC_VAL);
    } else {
        ck_assert_int_eq(op, RNIC_WC_RDMA_WRITE);
        ck_assert_int_eq(wc.opcode, RNIC_WC_RECV_RDMA_IMM);
        ck_assert(wc.flags & RNIC_WC_WITH_IMM);
        ck_assert_uint_eq(wc.imm, 0xabcdef12);
        ck_assert_uint_eq(tc_load_u64(mem.ptr + DST_OFF), SRC_VAL);
    }
}

START_TEST(if_write_imm_and_send)
{
    expect_message(MLX5_OPCODE_RDMA_WRITE_IMM, 3, 3);
    expect_message(MLX5_OPCODE_SEND, 4, 4);
    expect_message(MLX5_OPCODE_SEND, 4, 5);
    /* the receive posted for the false branch is still there */
    expect_message(MLX5_OPCODE_RDMA_WRITE_IMM, CHAIN_ID48_MAX, CHAIN_ID48_MAX);
}
END_TEST

/* x copied at run time by a READ just before the (fenced) CAS. */
static void expect_x_by_read(uint64_t xmem, uint64_t y)
{
    struct rnic_sge sg = src_sge(), id[2];
    struct chain_wr wr = write_wr(&sg);
    struct chain_if iff;
    struct rnic_wc wc;
    uint8_t be[6];

    struct chain_wqe rd;
    struct rnic_sge ph = chain_loc_sge(chain_loc_part(ctl.sink, 0, 3));
    struct rnic_sge phs[2] = {ph, ph};

    memset(mem.ptr + DST_OFF, 0, 8);
    chain_id48_to_be(xmem, be);
    memcpy(mem.ptr + KEY_OFF, be, 6);
    /* READ first (aimed once the target exists), then the fenced CAS */
    ck_assert_int_eq(
        chain_read(&ctl, phs, 2, chain_buf_loc(&mem, KEY_OFF, 6), 0, &rd), 0);
    ck_assert_int_eq(
        chain_if_post(&ctl, &tgt, &wr, 0, y, CHAIN_IF_ARM, CHAIN_FENCE, &iff),
        0);
    chain_id48_sges(&iff.target, id);
    chain_wqe_set_sge(&rd, 0, &id[0]);
    chain_wqe_set_sge(&rd, 1, &id[1]);
    ck_assert_int_eq(chain_guard(&ctl, &tgt), 0);
    ck_assert_int_eq(chain_q_doorbell(&ctl), 0);
    tc_poll(tgt.scq, &wc);
    chain_q_retire(&ctl, ctl.pi);
    chain_q_retire(&tgt, tgt.pi);
    ck_assert_int_eq(wc.opcode, xmem == y ? RNIC_WC_RDMA_WRITE : RNIC_WC_NOP);
    ck_assert_uint_eq(tc_load_u64(mem.ptr + DST_OFF), xmem == y ? SRC_VAL : 0);
}

START_TEST(if_x_copied_by_read)
{
    expect_x_by_read(0xfedcba987654ull, 0xfedcba987654ull);
    expect_x_by_read(0xfedcba987654ull, 0xfedcba987655ull);
    expect_x_by_read(0, 0);
    expect_x_by_read(CHAIN_ID48_MAX, CHAIN_ID48_MAX);
}
END_TEST

/*
 * y copied by a RECV: a client SENDs the 6 little-endian bytes into the
 * CAS's compare field; the managed control queue is released by the
 * master only after the receive completed.
 */
static void expect_y_by_recv(uint64_t x, uint64_t ymsg)
{
    struct chain_q master, mctl, client;
    struct rnic_sge sg = src_sge(), cmp[2];
    struct chain_wr wr = write_wr(&sg);
    struct rnic_sge msg = chain_loc_sge(chain_buf_loc(&mem, KEY_OFF, 6));
    struct chain_if iff;
    struct rnic_wc wc;
    uint64_t le = htole64(ymsg);

    tc_q(dev, RNIC_QP_CROSS_CHANNEL, 16, 0, NULL, &master);
    tc_q_open(dev, TC_MANAGED, 64, 4, &mctl);
    tc_q(dev, 0, 16, 0, &mctl, &client);
    memset(mem.ptr + DST_OFF, 0, 8);
    memcpy(mem.ptr + KEY_OFF, &le, 6);
    ck_assert_int_eq(chain_if_eq(&mctl, &tgt, &wr, x, 0, CHAIN_IF_ARM, 0, &iff),
                     0);
    chain_compare_id48_sges(&iff.cas, cmp);
    ck_assert_int_eq(chain_post_recv(&mctl, cmp, 2, 1), 0);
    ck_assert_int_eq(
        chain_wait(&master, mctl.rcq, chain_cq_expect(mctl.rcq, 1), 0, NULL),
        0);
    ck_assert_int_eq(chain_kick(&master, &mctl), 0);
    ck_assert_int_eq(chain_send(&client, &msg, 1, 0, NULL), 0);
    ck_assert_int_eq(chain_q_doorbell(&client), 0);
    tc_poll(tgt.scq, &wc);
    chain_q_retire(&tgt, tgt.pi);
    ck_assert_int_eq(wc.opcode, x == ymsg ? RNIC_WC_RDMA_WRITE : RNIC_WC_NOP);
    ck_assert_uint_eq(tc_load_u64(mem.ptr + DST_OFF), x == ymsg ? SRC_VAL : 0);
    chain_q_close(&client);
    chain_q_close(&mctl);
    chain_q_close(&master);
}

START_TEST(if_y_copied_by_recv)
{
    expect_y_by_recv(0x112233445566ull, 0x112233445566ull);
    expect_y_by_recv(0x112233445566ull, 0x112233445567ull);
    expect_y_by_recv(CHAIN_ID48_MAX, CHAIN_ID48_MAX);
    expect_y_by_recv(0, 0);
}
END_TEST

/*
 * A ring registered for just what the if needs (a CAS arrives on it) runs
 * the if; without REMOTE_ATOMIC the CAS fails with a remote access error.
 */
static int if_on_ring_with(unsigned access)
{
    struct chain_q_attr a = {
        .sq_wqebb = 16, .flags = TC_MANAGED, .ring_access = access};
    struct rnic_sge sg = src_sge();
    struct chain_wr wr = write_wr(&sg);
    struct chain_q narrow, c2, peer;
    struct chain_if iff;
    struct rnic_wc wc;

    ck_assert_int_eq(chain_q_open(dev, &a, &narrow), 0);
    ck_assert_int_eq(chain_q_connect(&narrow, &narrow), 0);
    /* the CAS goes through a second QP (see softnic-bugs: a loopback QP
     * reports a responder error as a flush) */
    tc_q_open(dev, 0, 16, 0, &peer);
    tc_q(dev, RNIC_QP_CROSS_CHANNEL, 16, 0, &peer, &c2);
    ck_assert_int_eq(
        chain_if_eq(&c2, &narrow, &wr, 9, 9, CHAIN_IF_ARM, 0, &iff), 0);
    ck_assert_int_eq(chain_q_doorbell(&c2), 0);
    tc_poll(c2.scq, &wc); /* the CAS */
    if (wc.status == RNIC_WC_SUCCESS) {
        tc_poll(narrow.scq, &wc);
        ck_assert_int_eq(wc.opcode, RNIC_WC_RDMA_WRITE);
    }
    chain_q_close(&c2);
    chain_q_close(&peer);
    chain_q_close(&narrow);
    return wc.status;
}

START_TEST(if_ring_access)
{
    ck_assert_int_eq(
        if_on_ring_with(RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_ATOMIC),
        RNIC_WC_SUCCESS);
    ck_assert_int_eq(if_on_ring_with(RNIC_ACCESS_LOCAL_WRITE),
                     RNIC_WC_REM_ACCESS_ERR);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chain_if");
    TCase *tc = tcase_create("if");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, if_true_false);
    tcase_add_test(tc, if_boundaries);
    tcase_add_test(tc, if_every_byte);
    tcase_add_test(tc, if_operand_too_wide);
    tcase_add_test(tc, if_disarm);
    tcase_add_test(tc, if_write_imm_and_send);
    tcase_add_test(tc, if_x_copied_by_read);
    tcase_add_test(tc, if_y_copied_by_recv);
    tcase_add_test(tc, if_ring_access);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
