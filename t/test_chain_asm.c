/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_chain_asm.c - the chain assembler without a NIC: golden WQE bytes
 * for every opcode (mlx5 layout, big-endian fields, ds counts), ring wrap,
 * field locations, byte-order helpers, index and completion bookkeeping.
 * The queue is a fake: a plain buffer stands in for the send ring.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/byteorder.h"
#include "rdn/chain/chain.h"
#include "t/support/testutil.h"

#define RING_BB 8
#define QPN     0x123

static uint8_t ring[RING_BB * 64] __attribute__((aligned(64)));
static uint8_t sink[64] __attribute__((aligned(64)));
static struct rnic_mr ring_mr = {.lkey = 0x1111, .rkey = 0x2222};
static struct rnic_mr sink_mr = {.lkey = 0x3333, .rkey = 0x4444};
static struct chain_cq cq = {.num = 0x77};
static struct chain_q q;

static void setup(void)
{
    memset(ring, 0xee, sizeof(ring));
    memset(&q, 0, sizeof(q));
    memset(&cq, 0, sizeof(cq));
    cq.num = 0x77;
    q.qp = (struct rnic_qp *)&q; /* never dereferenced by the assembler */
    q.qpn = QPN;
    q.flags = RNIC_QP_CROSS_CHANNEL;
    q.sq.buf = ring;
    q.sq.wqebb_cnt = RING_BB;
    q.ring_mr = &ring_mr;
    q.scq = &cq;
    q.sink = chain_loc_mr(&sink_mr, sink, sizeof(sink));
}

/* Skips n WQEBBs so the next WQE lands at index n. */
static void skip_to(uint32_t n)
{
    q.pi = q.retired = n;
}

static const struct rnic_sge sg1 = {
    .addr = 0x1122334455667788ull, .length = 64, .lkey = 0xaabbccdd};
static const struct rnic_sge sg2 = {
    .addr = 0x0000000000001000ull, .length = 8, .lkey = 0x01020304};

static struct chain_loc rem(uint64_t addr, uint32_t rkey)
{
    struct chain_loc l = {.ptr = (uint8_t *)(uintptr_t)addr, .rkey = rkey};

    return l;
}

static void expect_bytes(const uint8_t *got, const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "byte %zu: got %02x want %02x", i,
                      got[i], want[i]);
}

START_TEST(golden_write)
{
    static const uint8_t want[64] = {
        /* ctrl: idx 5, opcode 0x08 | qpn 0x123, ds 4 | CQ_UPDATE */
        0x00, 0x00, 0x05, 0x08, 0x00, 0x01, 0x23, 0x04, 0x00, 0x00, 0x00, 0x08,
        0x00, 0x00, 0x00, 0x00,
        /* raddr seg */
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x99, 0x88, 0x77, 0x66,
        0x00, 0x00, 0x00, 0x00,
        /* data seg 0 */
        0x00, 0x00, 0x00, 0x40, 0xaa, 0xbb, 0xcc, 0xdd, 0x11, 0x22, 0x33, 0x44,
        0x55, 0x66, 0x77, 0x88,
        /* data seg 1 */
        0x00, 0x00, 0x00, 0x08, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x10, 0x00};
    struct rnic_sge sg[2] = {sg1, sg2};
    struct chain_wqe w;

    skip_to(5);
    ck_assert_int_eq(chain_write(&q, sg, 2,
                                 rem(0x0102030405060708ull, 0x99887766),
                                 CHAIN_SIGNALED, &w),
                     0);
    ck_assert_uint_eq(w.index, 5);
    ck_assert_uint_eq(w.ds, 4);
    ck_assert_uint_eq(w.nbb, 1);
    ck_assert_uint_eq(w.cq_count, 1);
    ck_assert_uint_eq(q.pi, 6);
    expect_bytes(ring + 5 * 64, want, 64);
}
END_TEST

START_TEST(golden_write_imm_and_send)
{
    static const uint8_t wimm[16] = {0x00, 0x00, 0x00, 0x09, 0x00, 0x01,
                                     0x23, 0x03, 0x00, 0x00, 0x00, 0x00,
                                     0xde, 0xad, 0xbe, 0xef};
    static const uint8_t send[32] = {
        0x00, 0x00, 0x01, 0x0a, 0x00, 0x01, 0x23, 0x02, 0x00, 0x00, 0x00,
        0x82, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0xaa, 0xbb,
        0xcc, 0xdd, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    static const uint8_t simm[16] = {0x00, 0x00, 0x02, 0x0b, 0x00, 0x01,
                                     0x23, 0x02, 0x00, 0x00, 0x00, 0x00,
                                     0x00, 0x00, 0x00, 0x2a};
    struct chain_wqe w;

    ck_assert_int_eq(chain_write_imm(&q, &sg1, 1, rem(8, 1), 0xdeadbeef, 0, &w),
                     0);
    expect_bytes(ring, wimm, 16);
    ck_assert_int_eq(chain_send(&q, &sg1, 1, CHAIN_FENCE | CHAIN_SOLICITED, &w),
                     0);
    ck_assert_uint_eq(w.ds, 2);
    expect_bytes(ring + 64, send, 32);
    ck_assert_int_eq(chain_send_imm(&q, &sg1, 1, 42, 0, &w), 0);
    expect_bytes(ring + 128, simm, 16);
    ck_assert_uint_eq(cq.count, 0); /* nothing signaled */
}
END_TEST

START_TEST(golden_read)
{
    static const uint8_t want[48] = {
        0x00, 0x00, 0x00, 0x10, 0x00, 0x01, 0x23, 0x03, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7f, 0xff, 0x00, 0x00, 0x12, 0x34,
        0x00, 0x00, 0xab, 0xcd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08,
        0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00};
    struct chain_wqe w;

    ck_assert_int_eq(
        chain_read(&q, &sg2, 1, rem(0x7fff00001234ull, 0xabcd), 0, &w), 0);
    expect_bytes(ring, want, 48);
}
END_TEST

START_TEST(golden_atomics)
{
    static uint8_t cas[64] = {0x00, 0x00, 0x00, 0x11, 0x00, 0x01, 0x23, 0x04,
                              0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
                              /* raddr */
                              0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00,
                              0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
                              /* swap, compare (big-endian) */
                              0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
                              0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,
                              /* result buffer: the sink */
                              0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x33, 0x33, 0,
                              0, 0, 0, 0, 0, 0, 0};
    struct chain_wqe w;
    uint64_t sinkaddr = (uint64_t)(uintptr_t)sink;
    uint8_t be[8];
    struct rnic_sge bad = sg1;

    ck_assert_int_eq(chain_cas(&q, rem(0x2000, 5), 0x2122232425262728ull,
                               0x1112131415161718ull, NULL, CHAIN_SIGNALED, &w),
                     0);
    chain_put_be64(be, sinkaddr);
    memcpy(cas + 56, be, 8);
    expect_bytes(ring, cas, 64);
    ck_assert_int_eq(chain_fadd(&q, rem(0x2008, 5), 3, &sg2, 0, &w), 0);
    ck_assert_uint_eq(ring[64 + 3], 0x12);
    ck_assert_uint_eq(ring[64 + 32 + 7], 3); /* addend */
    for (int i = 0; i < 8; i++)
        ck_assert_uint_eq(ring[64 + 40 + i], 0); /* no compare */
    ck_assert_int_lt(chain_fadd(&q, rem(0x2008, 5), 1, &bad, 0, NULL), 0);
}
END_TEST

START_TEST(golden_wait_enable_nop)
{
    static const uint8_t wait[32] = {
        0x00, 0x00, 0x00, 0x0f, 0x00, 0x01, 0x23, 0x02, 0, 0,   0,
        0,    0,    0,    0,    0,    0,    0,    0,    0, 0,   0,
        0,    0,    0,    0,    0x01, 0x02, 0,    0,    0, 0x77};
    static const uint8_t en[32] = {
        0x00, 0x00, 0x01, 0x17, 0x00, 0x01, 0x23, 0x02, 0,    0,   0,
        0,    0,    0,    0,    0,    0,    0,    0,    0,    0,   0,
        0,    0,    0,    0,    0x00, 0x40, 0,    0,    0x01, 0x23};
    static const uint8_t nop[16] = {
        0x00, 0x00, 0x03, 0x00, 0x00, 0x01, 0x23, 0x01, 0, 0, 0, 0, 0, 0, 0, 0};
    struct chain_wqe w;

    ck_assert_int_eq(chain_wait(&q, &cq, 0x102, 0, &w), 0);
    expect_bytes(ring, wait, 32);
    ck_assert_int_eq(chain_send_en(&q, &q, 0x40, 0, &w), 0);
    expect_bytes(ring + 64, en, 32);
    ck_assert_uint_eq(q.enabled, 0x40);
    ck_assert_int_eq(chain_recv_en(&q, &q, 3, 0, &w), 0);
    ck_assert_uint_eq(ring[128 + 3], 0x16);
    ck_assert_uint_eq(q.rq_enabled, 3);
    ck_assert_int_eq(chain_nop(&q, 0, &w), 0);
    expect_bytes(ring + 192, nop, 16);
}
END_TEST

START_TEST(cross_channel_required)
{
    q.flags = 0;
    ck_assert_int_eq(chain_wait(&q, &cq, 1, 0, NULL), -EINVAL);
    ck_assert_int_eq(chain_send_en(&q, &q, 1, 0, NULL), -EINVAL);
    ck_assert_uint_eq(q.pi, 0);
}
END_TEST

/* A WQE of 3 WQEBBs that starts at the ring's last block wraps. */
START_TEST(ring_wrap)
{
    struct rnic_sge sg[10];
    struct chain_wqe w;
    struct chain_loc l;

    for (int i = 0; i < 10; i++) {
        sg[i] = sg2;
        sg[i].addr = 0x100 * (uint64_t)(i + 1);
    }
    skip_to(RING_BB * 3 - 1); /* absolute index 23, ring slot 7 */
    ck_assert_int_eq(chain_read(&q, sg, 10, rem(0x5000, 9), 0, &w), 0);
    ck_assert_uint_eq(w.index, 23);
    ck_assert_uint_eq(w.ds, 12);
    ck_assert_uint_eq(w.nbb, 3);
    ck_assert_uint_eq(q.pi, 26);
    ck_assert_uint_eq(ring[7 * 64 + 3], 0x10); /* ctrl in the last block */
    ck_assert_uint_eq(ring[7 * 64 + 2], 23);   /* wqe_index low byte */
    /* data segment 2 is segment 4: the ring's first segment */
    ck_assert_int_eq(chain_field(&w, CHAIN_F_ADDR, 2, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 8);
    ck_assert_uint_eq(l.lkey, ring_mr.lkey);
    ck_assert_uint_eq(l.rkey, ring_mr.rkey);
    ck_assert_uint_eq(be64_to_cpu(*(be64 *)l.ptr), 0x300);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_BYTE_COUNT, 9, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 64 + 3 * 16); /* (7*64+11*16) % 512 */
    ck_assert_int_eq(chain_field(&w, CHAIN_F_DATA, 10, &l), -EINVAL);
}
END_TEST

START_TEST(ring_full_and_retire)
{
    struct rnic_sge sg[10];

    memset(sg, 0, sizeof(sg));
    for (int i = 0; i < 10; i++)
        sg[i].length = 1;
    for (int i = 0; i < RING_BB - 2; i++)
        ck_assert_int_eq(chain_nop(&q, 0, NULL), 0);
    ck_assert_uint_eq(chain_q_room(&q), 2);
    ck_assert_int_eq(chain_read(&q, sg, 10, rem(0, 0), 0, NULL), -ENOSPC);
    ck_assert_uint_eq(q.pi, RING_BB - 2);
    chain_q_retire(&q, 4);
    ck_assert_uint_eq(chain_q_room(&q), 6);
    ck_assert_int_eq(chain_read(&q, sg, 10, rem(0, 0), 0, NULL), 0);
    chain_q_retire(&q, 100); /* past pi: ignored */
    ck_assert_uint_eq(q.retired, 4);
}
END_TEST

START_TEST(fields)
{
    struct chain_wqe w;
    struct chain_loc l;

    ck_assert_int_eq(chain_cas(&q, rem(0x40, 1), 1, 2, NULL, 0, &w), 0);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_CTRL, 0, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring);
    ck_assert_uint_eq(l.len, 8);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_RADDR, 0, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 16);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_RKEY, 0, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 24);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_SWAP, 0, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 32);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_COMPARE, 0, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 40);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_LKEY, 0, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 52);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_IMM, 0, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 12);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_FLAGS, 0, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 11);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_INDEX, 0, &l), -EINVAL);

    ck_assert_int_eq(chain_wait(&q, &cq, 9, 0, &w), 0);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_INDEX, 0, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 64 + 24);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_OBJ, 0, &l), 0);
    ck_assert_ptr_eq(l.ptr, ring + 64 + 28);
    ck_assert_int_eq(chain_field(&w, CHAIN_F_RADDR, 0, &l), -EINVAL);
    ck_assert_int_eq(chain_wqe_set_index(&w, 0xabcdef01), 0);
    ck_assert_uint_eq(be32_to_cpu(*(be32 *)(ring + 64 + 24)), 0xabcdef01);
}
END_TEST

/* The CAS operand is the ctrl word's bytes read as a host integer. */
START_TEST(ctrl_word_byte_order)
{
    static const uint64_t ids[] = {0, 1, 0x123456789abcull, CHAIN_ID48_MAX};

    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        struct chain_wr wr = {
            .opcode = MLX5_OPCODE_NOP, .flags = CHAIN_ID48, .id48 = ids[i]};
        struct chain_wqe w;
        uint64_t mem;
        uint8_t be[6];

        setup();
        ck_assert_int_eq(chain_post(&q, &wr, &w), 0);
        memcpy(&mem, ring, 8);
        ck_assert_uint_eq(mem, chain_ctrl_word(MLX5_OPCODE_NOP, 1, ids[i]));
        ck_assert_uint_eq(mem, mlx5_ctrl_id48_word(ids[i], 0, 1));
        /* the id bits are the big-endian bytes, opcode byte skipped */
        chain_id48_to_be(ids[i], be);
        ck_assert_int_eq(memcmp(ring, be, 3), 0);
        ck_assert_int_eq(memcmp(ring + 4, be + 3, 3), 0);
        ck_assert_uint_eq(ring[3], MLX5_OPCODE_NOP);
        ck_assert_uint_eq(ring[7], 1);
    }
    {
        struct chain_wr wr = {.opcode = MLX5_OPCODE_NOP,
                              .flags = CHAIN_ID48,
                              .id48 = CHAIN_ID48_MAX + 1};

        ck_assert_int_eq(chain_post(&q, &wr, NULL), -EINVAL);
    }
}
END_TEST

/* Simulates a scatter list: bytes of src land where the entries say. */
static void scatter(const struct rnic_sge *sg, int n, const uint8_t *src)
{
    for (int i = 0; i < n; i++) {
        memcpy((void *)(uintptr_t)sg[i].addr, src, sg[i].length);
        src += sg[i].length;
    }
}

START_TEST(scatter_helpers)
{
    static const uint64_t keys[] = {0, 0xa1b2c3d4e5f6ull, CHAIN_ID48_MAX};
    struct chain_wqe nop, cas, wait;
    struct rnic_sge sg[6];
    struct chain_loc idx;

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        uint64_t le = htole64(keys[i]), got;
        uint8_t be[6];

        setup();
        ck_assert_int_eq(chain_nop(&q, 0, &nop), 0);
        ck_assert_int_eq(chain_cas(&q, rem(0x40, 1), 0, 0, NULL, 0, &cas), 0);
        ck_assert_int_eq(chain_wait(&q, &cq, 0, 0, &wait), 0);

        chain_id48_to_be(keys[i], be);
        ck_assert_int_eq(chain_id48_sges(&nop, sg), 2);
        scatter(sg, 2, be);
        memcpy(&got, ring, 8);
        ck_assert_uint_eq(got, chain_ctrl_word(0, 1, keys[i]));

        ck_assert_int_eq(chain_id48_le_sges(&nop, sg), 6);
        memset(ring, 0, 3);
        memset(ring + 4, 0, 3);
        scatter(sg, 6, (const uint8_t *)&le);
        memcpy(&got, ring, 8);
        ck_assert_uint_eq(got, chain_ctrl_word(0, 1, keys[i]));

        /* a little-endian key into the compare field of the CAS */
        ck_assert_int_eq(chain_compare_id48_sges(&cas, sg), 2);
        chain_put_be64(ring + 64 + 40, chain_ctrl_word(0, 1, 0));
        scatter(sg, 2, (const uint8_t *)&le);
        got = be64_to_cpu(*(be64 *)(ring + 64 + 40));
        ck_assert_uint_eq(got, chain_ctrl_word(0, 1, keys[i]));

        chain_field(&wait, CHAIN_F_INDEX, 0, &idx);
        ck_assert_int_eq(chain_be32_le_sges(idx, sg), 4);
        le = htole64(0x89abcdefu);
        scatter(sg, 4, (const uint8_t *)&le);
        ck_assert_uint_eq(be32_to_cpu(*(be32 *)idx.ptr), 0x89abcdef);
    }
    ck_assert_int_lt(chain_compare_id48_sges(&nop, sg), 0);
}
END_TEST

START_TEST(signaled_counts)
{
    struct chain_wqe a, b;

    ck_assert_int_eq(chain_nop(&q, CHAIN_SIGNALED, &a), 0);
    ck_assert_int_eq(chain_nop(&q, 0, NULL), 0);
    ck_assert_int_eq(chain_nop(&q, CHAIN_SIGNALED, &b), 0);
    ck_assert_uint_eq(a.cq_count, 1);
    ck_assert_uint_eq(b.cq_count, 2);
    ck_assert_uint_eq(chain_cq_expect(&cq, 3), 5);
    ck_assert_int_eq(chain_wait_wqe(&q, &b, 0, &a), 0);
    ck_assert_uint_eq(be32_to_cpu(*(be32 *)(ring + 3 * 64 + 24)), 2);
    ck_assert_int_eq(chain_wait_wqe(&q, &a, 0, NULL), -EINVAL);
}
END_TEST

START_TEST(bad_requests)
{
    struct chain_wr wr = {.opcode = 0x05};
    struct rnic_sge many[CHAIN_MAX_SGE + 1];

    memset(many, 0, sizeof(many));
    ck_assert_int_eq(chain_post(&q, &wr, NULL), -EINVAL);
    wr.opcode = MLX5_OPCODE_NOP;
    wr.sg = many;
    wr.nsg = 1;
    ck_assert_int_eq(chain_post(&q, &wr, NULL), -EINVAL);
    wr.opcode = MLX5_OPCODE_SEND;
    wr.nsg = CHAIN_MAX_SGE + 1;
    ck_assert_int_eq(chain_post(&q, &wr, NULL), -EINVAL);
    ck_assert_uint_eq(q.pi, 0);
    ck_assert_str_ne(chain_errmsg(), "no error");
}
END_TEST

/*
 * Arguments the NIC would misread are refused: flag bits that are not
 * chain_wr_flags (0x01 would land in fm_ce_se), an unaligned atomic
 * target, a NULL queue (the NIC side: t/test_chain_if).
 */
START_TEST(bad_flags_alignment_null)
{
    struct chain_wr wr = {.opcode = MLX5_OPCODE_NOP, .flags = 0x01};

    ck_assert_int_eq(chain_post(&q, &wr, NULL), -EINVAL);
    wr.flags = 0x200;
    ck_assert_int_eq(chain_post(&q, &wr, NULL), -EINVAL);
    wr.flags = CHAIN_SIGNALED | CHAIN_FENCE | CHAIN_SOLICITED;
    ck_assert_int_eq(chain_post(&q, &wr, NULL), 0);
    ck_assert_int_eq(chain_cas(&q, rem(0x2004, 5), 0, 1, NULL, 0, NULL),
                     -EINVAL);
    ck_assert_int_eq(chain_fadd(&q, rem(0x2001, 5), 1, NULL, 0, NULL), -EINVAL);
    ck_assert_int_eq(chain_cas(NULL, rem(0x2000, 5), 0, 1, NULL, 0, NULL),
                     -EINVAL);
    ck_assert_uint_eq(q.pi, 1);
}
END_TEST

/* The one-byte places: opcode byte, id48 bytes, bytes of a BE field. */
START_TEST(byte_fields)
{
    static const uint8_t pos[6] = {6, 5, 4, 2, 1, 0};
    struct chain_wqe nop, rd;
    struct chain_loc l, raddr;

    ck_assert_int_eq(chain_nop(&q, 0, &nop), 0);
    ck_assert_int_eq(
        chain_read(&q, &sg1, 1, rem(0x0102030405060708ull, 9), 0, &rd), 0);
    ck_assert_int_eq(chain_field(&rd, CHAIN_F_OPCODE, 0, &l), 0);
    ck_assert_uint_eq(*l.ptr, MLX5_OPCODE_RDMA_READ);
    ck_assert_uint_eq(l.len, 1);
    for (unsigned k = 0; k < 6; k++) {
        uint64_t word;

        ck_assert_int_eq(chain_id48_byte(&nop, k, &l), 0);
        ck_assert_ptr_eq(l.ptr, ring + pos[k]);
        memset(ring, 0, 8);
        *l.ptr = 0xab;
        memcpy(&word, ring, 8);
        ck_assert_uint_eq(word, chain_ctrl_word(0, 0, (uint64_t)0xab << 8 * k));
    }
    ck_assert_int_eq(chain_id48_byte(&nop, 6, &l), -EINVAL);
    ck_assert_int_eq(chain_field(&rd, CHAIN_F_RADDR, 0, &raddr), 0);
    for (unsigned k = 0; k < 8; k++)
        ck_assert_uint_eq(*chain_be_byte(raddr, k).ptr, 8 - k);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("chain_asm");
    TCase *tc = tcase_create("asm");

    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, golden_write);
    tcase_add_test(tc, golden_write_imm_and_send);
    tcase_add_test(tc, golden_read);
    tcase_add_test(tc, golden_atomics);
    tcase_add_test(tc, golden_wait_enable_nop);
    tcase_add_test(tc, cross_channel_required);
    tcase_add_test(tc, ring_wrap);
    tcase_add_test(tc, ring_full_and_retire);
    tcase_add_test(tc, fields);
    tcase_add_test(tc, ctrl_word_byte_order);
    tcase_add_test(tc, scatter_helpers);
    tcase_add_test(tc, signaled_counts);
    tcase_add_test(tc, bad_requests);
    tcase_add_test(tc, bad_flags_alignment_null);
    tcase_add_test(tc, byte_fields);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
