/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_softnic_golden.c - golden WQE bytes. For every opcode: the bytes
 * of a WQE with known fields, written out by hand from the mlx5 layout of
 * docs/softnic.md, "WQE format" (offsets, big-endian fields, ds counts), must equal
 * what proto/mlx5.h's structures and helpers produce; and WQEs whose bytes
 * are placed one by one at those offsets (no structs, no htobe) must
 * execute on softnic with the expected effect.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "t/support/test_softnic_util.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

/* ---- part 1: byte images ----------------------------------------------- */

/* Fills the ctrl index/qpn/ds of w the way proto/mlx5.h says. */
static void set_ctrl(struct tw *w, uint16_t idx, uint32_t qpn)
{
    struct mlx5_ctrl_seg *c = (struct mlx5_ctrl_seg *)w->b;
    uint8_t op = mlx5_ctrl_opcode(c);

    c->opmod_idx_opcode = cpu_to_be32(mlx5_ctrl_word0(0, idx, op));
    c->qpn_ds = cpu_to_be32(mlx5_ctrl_word1(qpn, (uint8_t)w->ds));
}

static void check_bytes(const struct tw *w, const uint8_t *want, size_t n)
{
    ck_assert_uint_eq(w->ds * 16, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(w->b[i] == want[i], "byte %zu: %02x, want %02x", i,
                      w->b[i], want[i]);
}

START_TEST(golden_nop)
{
    static const uint8_t want[16] = {0x00, 0x01, 0x02, 0x00, 0x34, 0x56,
                                     0x78, 0x01, 0x00, 0x00, 0x00, 0x08,
                                     0x00, 0x00, 0x00, 0x00};
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    set_ctrl(&w, 0x0102, 0x345678);
    check_bytes(&w, want, sizeof(want));
}
END_TEST

START_TEST(golden_write)
{
    static const uint8_t want[48] = {
        0x00, 0x00, 0x07, 0x08, 0x00, 0x00, 0x11, 0x03, /* ctrl */
        0x00, 0x00, 0x00, 0x88, 0x00, 0x00, 0x00, 0x00, /* fence|ce */
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* raddr */
        0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00, 0x00, 0x00, /* rkey */
        0x00, 0x00, 0x00, 0x40, 0x01, 0x02, 0x03, 0x04, /* len, lkey */
        0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78, /* addr */
    };
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE,
            MLX5_WQE_CTRL_FENCE | MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, 0x1122334455667788ull, 0xaabbccdd);
    tw_data(&w, 0x40, 0x01020304, (void *)(uintptr_t)0x7f0012345678ull);
    set_ctrl(&w, 7, 0x11);
    check_bytes(&w, want, sizeof(want));
}
END_TEST

START_TEST(golden_write_imm_and_send_imm)
{
    static const uint8_t want_w[16] = {0x00, 0x00, 0x00, 0x09, 0x00, 0x00,
                                       0x01, 0x03, 0x00, 0x00, 0x00, 0x0a,
                                       0xde, 0xad, 0xbe, 0xef};
    static const uint8_t want_s[16] = {0x00, 0x00, 0x00, 0x0b, 0x00, 0x00,
                                       0x01, 0x02, 0x00, 0x00, 0x00, 0x08,
                                       0x01, 0x02, 0x03, 0x04};
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE_IMM,
            MLX5_WQE_CTRL_CQ_UPDATE | MLX5_WQE_CTRL_SOLICITED);
    tw_imm(&w, 0xdeadbeef);
    tw_raddr(&w, 0, 0);
    tw_data(&w, 0, 0, NULL);
    set_ctrl(&w, 0, 1);
    ck_assert_mem_eq(w.b, want_w, 16);
    ck_assert_uint_eq(w.ds, 3);
    tw_ctrl(&w, MLX5_OPCODE_SEND_IMM, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_imm(&w, 0x01020304);
    tw_data(&w, 0, 0, NULL);
    set_ctrl(&w, 0, 1);
    ck_assert_mem_eq(w.b, want_s, 16);
    ck_assert_uint_eq(w.ds, 2);
}
END_TEST

START_TEST(golden_send_gather)
{
    static const uint8_t want[48] = {
        0x00, 0xff, 0xff, 0x0a, 0xff, 0xff, 0xff, 0x03, 0x00, 0x00, 0x00, 0x08,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x01, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x08,
    };
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 5, 0x100, (void *)(uintptr_t)0x1000);
    tw_data(&w, 0x80000000u, 0x201, (void *)(uintptr_t)0x2008);
    set_ctrl(&w, 0xffff, 0xffffff);
    check_bytes(&w, want, sizeof(want));
}
END_TEST

START_TEST(golden_read)
{
    static const uint8_t want[48] = {
        0x00, 0x00, 0x02, 0x10, 0x00, 0x00, 0x05, 0x03, 0x00, 0x00, 0x00, 0x08,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
        0x00, 0x00, 0x12, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,
        0x00, 0x00, 0x12, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00,
    };
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, 0x1000, 0x1207);
    tw_data(&w, 64, 0x1207, (void *)(uintptr_t)0x2000);
    set_ctrl(&w, 2, 5);
    check_bytes(&w, want, sizeof(want));
}
END_TEST

START_TEST(golden_atomics)
{
    static const uint8_t want[64] = {
        0x00, 0x00, 0x03, 0x11, 0x00, 0x00, 0x09, 0x04, /* CAS, ds 4 */
        0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, /* */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x08, /* raddr */
        0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, /* rkey */
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* swap (be) */
        0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0, 0x00, 0x11, /* compare (be) */
        0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x01, 0x01, /* 8 bytes */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, /* result addr */
    };
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_CS, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, 0x3008, 0x101);
    tw_atomic(&w, 0x0102030405060708ull, 0xa0b0c0d0e0f00011ull);
    tw_data(&w, 8, 0x101, (void *)(uintptr_t)0x4000);
    set_ctrl(&w, 3, 9);
    check_bytes(&w, want, sizeof(want));
    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_FA, 0);
    ck_assert_uint_eq(w.b[3], 0x12);
}
END_TEST

START_TEST(golden_wait_and_enables)
{
    static const uint8_t want[32] = {
        0x00, 0x00, 0x04, 0x0f, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x00, 0x00, 0x40, 0x05,
    };
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_WAIT, 0);
    tw_waiten(&w, 0x10203, 0x4005);
    set_ctrl(&w, 4, 2);
    check_bytes(&w, want, sizeof(want));
    tw_ctrl(&w, MLX5_OPCODE_SEND_EN, 0);
    ck_assert_uint_eq(w.b[3], 0x17);
    tw_ctrl(&w, MLX5_OPCODE_RECV_EN, 0);
    ck_assert_uint_eq(w.b[3], 0x16);
}
END_TEST

START_TEST(golden_id48_word)
{
    /* fp 0xa1b2c3d4e5f6 in opmod|index|qpn of a NOP with ds 3. */
    static const uint8_t want[8] = {0xa1, 0xb2, 0xc3, 0x00,
                                    0xd4, 0xe5, 0xf6, 0x03};
    uint64_t w = mlx5_ctrl_id48_word(0xa1b2c3d4e5f6ull, MLX5_OPCODE_NOP, 3);

    ck_assert_mem_eq(&w, want, 8);
}
END_TEST

/* ---- part 2: bytes placed by offset execute as documented ---------- */

static struct tdev D;
static struct tq Q, C;

static void setup(void)
{
    tdev_open(&D, NULL, 1 << 20, ALL_ACCESS);
    tq_create(&Q, &D, 0, 64, 16);
    tq_connect(&Q, &Q);
    tq_create(&C, &D, RNIC_QP_CROSS_CHANNEL, 64, 0);
    tq_connect(&C, &C);
}

static void teardown(void)
{
    tdev_close(&D);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* Raw ctrl segment at p: opcode @3, index @1-2, qpn @4-6, ds @7, @11. */
static void raw_ctrl(uint8_t *p, struct tq *q, uint8_t op, uint8_t ds,
                     uint8_t flags, uint32_t imm)
{
    memset(p, 0, 16);
    p[1] = (uint8_t)(q->pi >> 8);
    p[2] = (uint8_t)q->pi;
    p[3] = op;
    p[4] = (uint8_t)(rnic_qp_num(q->qp) >> 16);
    p[5] = (uint8_t)(rnic_qp_num(q->qp) >> 8);
    p[6] = (uint8_t)rnic_qp_num(q->qp);
    p[7] = ds;
    p[11] = flags;
    put32(p + 12, imm);
}

static void raw_data(uint8_t *p, uint32_t len, uint32_t lkey, const void *a)
{
    put32(p, len);
    put32(p + 4, lkey);
    put64(p + 8, (uintptr_t)a);
}

/* Copies a raw WQE of ds segments into q's ring and advances pi. */
static void raw_post(struct tq *q, const uint8_t *b, unsigned ds)
{
    for (unsigned off = 0; off < ds * 16; off += 64)
        memcpy(tq_wqe(q, q->pi + off / 64), b + off,
               ds * 16 - off < 64 ? ds * 16 - off : 64);
    q->pi += (ds * 16 + 63) / 64;
}

static struct rnic_wc raw_run(struct tq *q)
{
    struct rnic_wc wc;

    tq_ring(q);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_msg(wc.status == RNIC_WC_SUCCESS, "status %s",
                  rnic_wc_status_str(wc.status));
    return wc;
}

START_TEST(raw_write_and_imm)
{
    uint8_t b[64], *src = D.mem, *dst = D.mem + 4096;
    struct rnic_sge sge = {(uintptr_t)D.mem + 8192, 8, D.mr->lkey};
    struct rnic_wc wc;

    memcpy(src, "golden-bytes-ok!", 16);
    ck_assert_int_eq(rnic_post_recv(Q.qp, &sge, 1, 3), 0);
    raw_ctrl(b, &Q, 0x09, 3, 0x08, 0xcafef00d);
    put64(b + 16, (uintptr_t)dst);
    put32(b + 24, D.mr->rkey);
    raw_data(b + 32, 16, D.mr->lkey, src);
    raw_post(&Q, b, 3);
    wc = raw_run(&Q);
    ck_assert_uint_eq(wc.byte_len, 16);
    ck_assert_mem_eq(dst, "golden-bytes-ok!", 16);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.imm, 0xcafef00d);
}
END_TEST

START_TEST(raw_send_two_segments_across_blocks)
{
    uint8_t b[128], *r = D.mem + 8192;
    struct rnic_sge sge = {(uintptr_t)r, 64, D.mr->lkey};
    struct rnic_wc wc;

    memcpy(D.mem, "abcd", 4);
    memcpy(D.mem + 100, "efgh", 4);
    ck_assert_int_eq(rnic_post_recv(Q.qp, &sge, 1, 1), 0);
    /* 5 segments (2 blocks): ctrl + 3 zero-byte-free data segments. */
    raw_ctrl(b, &Q, 0x0a, 5, 0x08, 0);
    raw_data(b + 16, 2, D.mr->lkey, D.mem);
    raw_data(b + 32, 2, D.mr->lkey, D.mem + 2);
    raw_data(b + 48, 2, D.mr->lkey, D.mem + 100);
    raw_data(b + 64, 2, D.mr->lkey, D.mem + 102);
    raw_post(&Q, b, 5);
    wc = raw_run(&Q);
    ck_assert_uint_eq(wc.byte_len, 8);
    ck_assert_uint_eq(wc.wqe_counter, 0);
    ck_assert_uint_eq(Q.pi, 2);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_mem_eq(r, "abcdefgh", 8);
}
END_TEST

START_TEST(raw_read)
{
    uint8_t b[64];

    memcpy(D.mem + 4096, "remote!!", 8);
    raw_ctrl(b, &Q, 0x10, 3, 0x08, 0);
    put64(b + 16, (uintptr_t)D.mem + 4096);
    put32(b + 24, D.mr->rkey);
    raw_data(b + 32, 8, D.mr->lkey, D.mem);
    raw_post(&Q, b, 3);
    raw_run(&Q);
    ck_assert_mem_eq(D.mem, "remote!!", 8);
}
END_TEST

START_TEST(raw_cas_and_fadd)
{
    uint8_t b[64];
    uint64_t *t = (uint64_t *)(D.mem + 4096), *res = (uint64_t *)D.mem;

    *t = 41;
    raw_ctrl(b, &Q, 0x11, 4, 0x08, 0);
    put64(b + 16, (uintptr_t)t);
    put32(b + 24, D.mr->rkey);
    put64(b + 32, 1000); /* swap @32 */
    put64(b + 40, 41);   /* compare @40 */
    raw_data(b + 48, 8, D.mr->lkey, res);
    raw_post(&Q, b, 4);
    raw_run(&Q);
    ck_assert_uint_eq(*t, 1000);
    ck_assert_uint_eq(*res, 41);
    raw_ctrl(b, &Q, 0x12, 4, 0x08, 0);
    put64(b + 16, (uintptr_t)t);
    put32(b + 24, D.mr->rkey);
    put64(b + 32, 24); /* add @32 */
    put64(b + 40, 0);
    raw_data(b + 48, 8, D.mr->lkey, res);
    raw_post(&Q, b, 4);
    raw_run(&Q);
    ck_assert_uint_eq(*t, 1024);
    ck_assert_uint_eq(*res, 1000);
}
END_TEST

START_TEST(raw_wait_and_send_en)
{
    uint8_t b[64];
    struct rnic_cq *mcq;
    struct rnic_qp_init_attr a = {.sq_wqebb = 16,
                                  .flags = RNIC_QP_MANAGED_SEND};
    struct tq m;
    struct rnic_wc wc;

    ck_assert_int_eq(rnic_create_cq(D.dev, 16, &mcq), 0);
    a.send_cq = mcq;
    memset(&m, 0, sizeof(m));
    ck_assert_int_eq(rnic_create_qp(D.dev, &a, &m.qp), 0);
    ck_assert_int_eq(rnic_qp_sq(m.qp, &m.sq), 0);
    tq_connect(&m, &m);
    raw_ctrl(b, &m, 0x00, 1, 0x08, 0);
    raw_post(&m, b, 1);
    /* SEND_EN: index @24, QPN @28 (wait/en segment at 16). */
    raw_ctrl(b, &C, 0x17, 2, 0, 0);
    put32(b + 24, 1);
    put32(b + 28, rnic_qp_num(m.qp));
    raw_post(&C, b, 2);
    /* WAIT: count @24, CQN @28. */
    raw_ctrl(b, &C, 0x0f, 2, 0x08, 0);
    put32(b + 24, 1);
    put32(b + 28, rnic_cq_num(mcq));
    raw_post(&C, b, 2);
    tq_ring(&C);
    ck_assert_int_eq(tpoll(mcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_NOP);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_WAIT);
    ck_assert_uint_eq(wc.wqe_counter, 1);
}
END_TEST

static Suite *golden_suite(void)
{
    Suite *s = suite_create("softnic-golden");
    TCase *img = tcase_create("images");
    TCase *raw = tcase_create("raw");

    tcase_add_test(img, golden_nop);
    tcase_add_test(img, golden_write);
    tcase_add_test(img, golden_write_imm_and_send_imm);
    tcase_add_test(img, golden_send_gather);
    tcase_add_test(img, golden_read);
    tcase_add_test(img, golden_atomics);
    tcase_add_test(img, golden_wait_and_enables);
    tcase_add_test(img, golden_id48_word);
    suite_add_tcase(s, img);
    tcase_add_checked_fixture(raw, setup, teardown);
    tcase_set_timeout(raw, 30);
    tcase_add_test(raw, raw_write_and_imm);
    tcase_add_test(raw, raw_send_two_segments_across_blocks);
    tcase_add_test(raw, raw_read);
    tcase_add_test(raw, raw_cas_and_fadd);
    tcase_add_test(raw, raw_wait_and_send_en);
    suite_add_tcase(s, raw);
    return s;
}

int main(void)
{
    return trun(golden_suite, "1");
}
