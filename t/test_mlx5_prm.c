/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_mlx5_prm.c - the mlx5 provider's pure parts (rdn/mlx5/mlx5_prm.h):
 * DevX command bytes, the cross-channel and overrun bits at the PRM's
 * offsets, doorbells, CQE decoding and capability verdicts. No ConnectX
 * is needed (or was ever used): expected bytes are computed by hand from
 * the PRM's bit offsets, which are given next to each check.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "proto/byteorder.h"
#include "proto/mlx5.h"
#include "rdn/mlx5/mlx5_prm.h"
#include "t/support/testutil.h"

static uint32_t be32_at(const uint8_t *p)
{
    be32 v;

    memcpy(&v, p, 4);
    return be32_to_cpu(v);
}

/* Byte and mask of a 1-bit PRM field at bit offset off. */
#define BYTE(off) ((off) / 8)
#define MASK(off) (0x80 >> ((off) % 8))

START_TEST(set_get)
{
    uint8_t b[16] = {0};
    struct m5_field a = {0x04, 4}, c = {0x08, 24}, d = {0x20, 32},
                    e = {0x40, 64};

    m5_set(b, a, 0xf);
    m5_set(b, c, 0xabcdef);
    m5_set(b, d, 0x01020304);
    m5_set(b, e, 0x1122334455667788ull);
    ck_assert_uint_eq(b[0], 0x0f);
    ck_assert_uint_eq(b[1], 0xab);
    ck_assert_uint_eq(b[3], 0xef);
    ck_assert_uint_eq(b[4], 0x01);
    ck_assert_uint_eq(b[8], 0x11);
    ck_assert_uint_eq(b[15], 0x88);
    ck_assert_uint_eq(m5_get(b, a), 0xf);
    ck_assert_uint_eq(m5_get(b, c), 0xabcdef);
    ck_assert_uint_eq(m5_get(b, d), 0x01020304);
    ck_assert_uint_eq(m5_get(b, e), 0x1122334455667788ull);
    /* Values wider than the field are cut, neighbours untouched. */
    m5_set(b, a, 0x10);
    ck_assert_uint_eq(b[0], 0x00);
    ck_assert_uint_eq(b[1], 0xab);
}
END_TEST

static struct m5_qp_params qp_params(unsigned flags)
{
    return (struct m5_qp_params){.pdn = 0x12345,
                                 .uar_page = 0x77,
                                 .cqn_snd = 0x401,
                                 .cqn_rcv = 0x402,
                                 .sq_wqebb = 64,
                                 .rq_wqe = 16,
                                 .rq_stride = 256,
                                 .flags = flags,
                                 .wq_umem_id = 9,
                                 .dbr_umem_id = 10,
                                 .dbr_offset = 0x40};
}

/* The QPC sits at bit 0xc0 of CREATE_QP; cd_master is QPC bit 0x49f. */
START_TEST(create_qp_cross_channel)
{
    uint8_t in[M5_CREATE_QP_IN];
    struct m5_qp_params p = qp_params(RNIC_QP_CROSS_CHANNEL);
    const unsigned cd_master = 0xc0 + 0x49f, cd_send = 0xc0 + 0x49e,
                   cd_recv = 0xc0 + 0x49d;

    m5_create_qp_in(in, &p);
    ck_assert_uint_eq(in[0], 0x05); /* CREATE_QP 0x500 */
    ck_assert_uint_eq(in[1], 0x00);
    ck_assert(in[BYTE(cd_master)] & MASK(cd_master));
    ck_assert(!(in[BYTE(cd_send)] & MASK(cd_send)));
    ck_assert(!(in[BYTE(cd_recv)] & MASK(cd_recv)));
    p = qp_params(RNIC_QP_MANAGED_SEND | RNIC_QP_MANAGED_RECV);
    m5_create_qp_in(in, &p);
    ck_assert(!(in[BYTE(cd_master)] & MASK(cd_master)));
    ck_assert(in[BYTE(cd_send)] & MASK(cd_send));
    ck_assert(in[BYTE(cd_recv)] & MASK(cd_recv));
    /* Only those three bits differ from a plain QP's context. */
    {
        uint8_t plain[M5_CREATE_QP_IN];
        struct m5_qp_params q =
            qp_params(RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND |
                      RNIC_QP_MANAGED_RECV);

        m5_create_qp_in(in, &q);
        q.flags = 0;
        m5_create_qp_in(plain, &q);
        in[BYTE(cd_master)] ^= 0x07;
        ck_assert(memcmp(in, plain, sizeof(in)) == 0);
    }
}
END_TEST

START_TEST(create_qp_fields)
{
    uint8_t in[M5_CREATE_QP_IN];
    struct m5_qp_params p = qp_params(0);

    m5_create_qp_in(in, &p);
    /* pd: QPC 0x28, 24 bits -> bytes 0x1d..0x1f of the command. */
    ck_assert_uint_eq(in[0x1d], 0x01);
    ck_assert_uint_eq(in[0x1e], 0x23);
    ck_assert_uint_eq(in[0x1f], 0x45);
    /* log_sq_size: QPC 0x51, 4 bits: 64 WQEBBs -> 6, at byte 34 bits 1-4. */
    ck_assert_uint_eq((in[34] >> 3) & 0xf, 6);
    /* log_rq_size QPC 0x49 (4 bits) = 4, log_rq_stride 0x4d (3) = 4. */
    ck_assert_uint_eq((in[33] >> 3) & 0xf, 4);
    ck_assert_uint_eq(((in[33] & 0x7) << 0), 4);
    /* pm_state migrated (QPC 0x13, 2 bits) and st RC (0). */
    ck_assert_uint_eq((in[0x1a] >> 3) & 0x3, 3);
    /* cqn_snd QPC 0x3e8 and cqn_rcv 0x4e8 (24 bits each). */
    ck_assert_uint_eq(be32_at(in + (0xc0 + 0x3e0) / 8), 0x401);
    ck_assert_uint_eq(be32_at(in + (0xc0 + 0x4e0) / 8), 0x402);
    /* The WQ and doorbell umems (create_qp_in 0x840, QPC 0x720). */
    ck_assert_uint_eq(be32_at(in + 0x840 / 8), 9);
    ck_assert(in[0x860 / 8] & 0x80);
    ck_assert_uint_eq(be32_at(in + (0xc0 + 0x720) / 8), 10);
    /* No receive queue: rq_type zero-size (QPC 0x565, 3 bits) = 3. */
    p.rq_wqe = 0;
    m5_create_qp_in(in, &p);
    ck_assert_uint_eq((in[(0xc0 + 0x565) / 8] >> 0) & 0x7, 3);
}
END_TEST

START_TEST(modify_qp)
{
    uint8_t in[M5_MODIFY_QP_IN];
    struct m5_path p = {
        .rgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 1},
        .rmac = {0x52, 0x54, 0, 0x77, 0, 1},
        .sgid_index = 3,
        .hop_limit = 64,
        .port = 1,
        .mtu = 3,
        .remote_qpn = 0xabcdef,
        .rq_psn = 0x111111,
        .sq_psn = 0x222222,
        .log_rd_atomic = 4};
    const unsigned ads = 0xc0 + 0xc0;

    m5_rst2init_in(in, 0x42, 1, RNIC_ACCESS_REMOTE_READ);
    ck_assert_uint_eq(in[0], 0x05);
    ck_assert_uint_eq(in[1], 0x02);
    ck_assert_uint_eq(in[0xb], 0x42);                          /* qpn at 0x48 */
    ck_assert(in[BYTE(0xc0 + 0x490)] & MASK(0xc0 + 0x490));    /* rre */
    ck_assert(!(in[BYTE(0xc0 + 0x491)] & MASK(0xc0 + 0x491))); /* rwe */
    m5_init2rtr_in(in, 0x42, &p);
    ck_assert_uint_eq(in[1], 0x03);
    ck_assert(memcmp(in + (ads + 0x80) / 8, p.rgid, 16) == 0);
    ck_assert_uint_eq(in[(ads + 0x130) / 8], 0x52);
    ck_assert_uint_eq(in[(ads + 0x140) / 8 + 3], 0x01);
    ck_assert_uint_eq(in[(ads + 0x48) / 8], 3);         /* src_addr_index */
    ck_assert(in[BYTE(ads + 0x28)] & MASK(ads + 0x28)); /* grh */
    ck_assert_uint_eq(in[(0xc0 + 0xa8) / 8], 0xab);     /* remote_qpn */
    ck_assert_uint_eq(in[(0xc0 + 0x40) / 8] >> 5, 3);   /* mtu */
    m5_rtr2rts_in(in, 0x42, &p);
    ck_assert_uint_eq(in[1], 0x04);
    ck_assert_uint_eq(in[(0xc0 + 0x3c8) / 8], 0x22); /* next_send_psn */
}
END_TEST

/* The CQC at 0x80 of CREATE_CQ; oi is CQC bit 0xf. */
START_TEST(create_cq)
{
    uint8_t in[M5_CREATE_CQ_IN];
    struct m5_cq_params p = {.depth = 1024,
                             .uar_page = 5,
                             .eqn = 7,
                             .overrun_ignore = true,
                             .cq_umem_id = 3,
                             .dbr_umem_id = 4,
                             .dbr_offset = 0x80};
    const unsigned oi = 0x80 + 0xf;

    m5_create_cq_in(in, &p);
    ck_assert_uint_eq(in[0], 0x04);
    ck_assert_uint_eq(in[1], 0x00);
    ck_assert(in[BYTE(oi)] & MASK(oi));
    ck_assert_uint_eq(in[(0x80 + 0x60) / 8] & 0x1f, 10); /* log_cq_size */
    ck_assert_uint_eq(in[(0x80 + 0xb8) / 8], 7);         /* c_eqn */
    ck_assert_uint_eq(be32_at(in + 0x2c0 / 8), 3);
    p.overrun_ignore = false;
    m5_create_cq_in(in, &p);
    ck_assert(!(in[BYTE(oi)] & MASK(oi)));
}
END_TEST

START_TEST(out_fields)
{
    uint8_t out[M5_CMD_OUT] = {0x05, 0,    0, 0,    0x12, 0x34,
                               0x56, 0x78, 0, 0x0a, 0xbc, 0xde};

    ck_assert_uint_eq(m5_out_status(out), 5);
    ck_assert_uint_eq(m5_out_syndrome(out), 0x12345678);
    ck_assert_uint_eq(m5_out_obj(out), 0x0abcde);
}
END_TEST

/* The UAR word is a clean ctrl segment head: what a driver would write. */
START_TEST(doorbells)
{
    ck_assert_uint_eq(be32_to_cpu(m5_dbr_value(0x12345)), 0x2345);
    ck_assert_uint_eq(be32_to_cpu(m5_cq_ci_value(0x1234567)), 0x234567);
    ck_assert_uint_eq(
        m5_uar_db_word(MLX5_OPCODE_RDMA_WRITE, 3, 0xfffe, 0x123456),
        mlx5_ctrl_id48_word((uint64_t)0xfffe << 24 | 0x123456,
                            MLX5_OPCODE_RDMA_WRITE, 3));
    ck_assert_uint_eq(m5_sq_offset(16, 256), 4096);
    ck_assert_uint_eq(m5_wq_bytes(64, 16, 256), 4096 + 64 * 64);
    ck_assert_uint_eq(m5_wq_bytes(64, 0, 0), 4096);
}
END_TEST

/* The doorbell names the last WQE rung: found by walking ds from the last. */
START_TEST(last_wqe)
{
    uint8_t ring[8 * MLX5_SEND_WQE_BB] = {0};
    const uint8_t ds[] = {1, 5, 2}; /* 1, 2 and 1 blocks: at 6, 7, 9 (=1) */

    for (unsigned i = 0, idx = 6; i < 3; i++) {
        struct mlx5_ctrl_seg *c = (void *)(ring + (idx % 8) * MLX5_SEND_WQE_BB);

        c->qpn_ds = cpu_to_be32(mlx5_ctrl_word1(0x42, ds[i]));
        idx += (ds[i] * 16 + 63) / 64;
    }
    ck_assert_uint_eq(m5_last_wqe(ring, 8, 6, 10), 9);
    ck_assert_uint_eq(m5_last_wqe(ring, 8, 6, 9), 7);
    ck_assert_uint_eq(m5_last_wqe(ring, 8, 6, 7), 6);
    ck_assert_uint_eq(m5_last_wqe(ring, 8, 6, 6), 6); /* nothing new */
    /* ds 0 stops the walk. */
    ck_assert_uint_eq(m5_last_wqe(ring, 8, 2, 4), 4);
    /* The UAR word names WQE 9 (ds 2) with its true index and QPN, even
     * though the ring's ctrl segment keeps other bits in its index. */
    {
        struct m5_db_plan p;

        m5_db_plan(ring, 8, 6, 10, 0x42, 0, &p);
        ck_assert_int_eq(p.path, M5_DB_REGULAR);
        ck_assert_uint_eq(p.last, 9);
        ck_assert_uint_eq(p.word, m5_uar_db_word(0, 2, 9, 0x42));
        m5_db_plan(ring, 8, 10, 10, 0x42, 256, &p);
        ck_assert_int_eq(p.path, M5_DB_NONE);
    }
}
END_TEST

/* Writes a WQE of ds units at index idx of a ring of cnt blocks: its ctrl
 * head holds operand bits (index 0xbeef, QPN 0x777) the doorbell must not
 * repeat, and every other byte of block k is 0x10 * (k + 1) + idx. */
static void put_wqe(uint8_t *ring, uint32_t cnt, uint32_t idx, uint8_t ds)
{
    for (uint32_t k = 0; k < (ds * 16u + 63) / 64; k++)
        memset(ring + ((idx + k) % cnt) * MLX5_SEND_WQE_BB,
               (int)(0x10 * (k + 1) + idx), MLX5_SEND_WQE_BB);
    {
        struct mlx5_ctrl_seg *c = (void *)(ring + idx % cnt * MLX5_SEND_WQE_BB);

        c->opmod_idx_opcode =
            cpu_to_be32(mlx5_ctrl_word0(0, 0xbeef, MLX5_OPCODE_RDMA_WRITE));
        c->qpn_ds = cpu_to_be32(mlx5_ctrl_word1(0x777, ds));
    }
}

/* BlueFlame only for one pending WQE that fits the buffer, and only on a
 * write-combining page; anything else takes the regular doorbell. */
START_TEST(db_plan_path)
{
    uint8_t ring[16 * MLX5_SEND_WQE_BB] = {0};
    struct m5_db_plan p;

    put_wqe(ring, 16, 3, 3); /* one block: 3..4 */
    m5_db_plan(ring, 16, 3, 4, 0x1234, 256, &p);
    ck_assert_int_eq(p.path, M5_DB_BLUEFLAME);
    ck_assert_uint_eq(p.bf_bytes, 64);
    ck_assert_uint_eq(p.word,
                      m5_uar_db_word(MLX5_OPCODE_RDMA_WRITE, 3, 3, 0x1234));
    m5_db_plan(ring, 16, 3, 4, 0x1234, 0, &p); /* no BlueFlame */
    ck_assert_int_eq(p.path, M5_DB_REGULAR);
    ck_assert_uint_eq(p.bf_bytes, 0);
    /* Two pending: the doorbell names the second, the NIC fetches both. */
    put_wqe(ring, 16, 4, 8); /* two blocks: 4..6 */
    m5_db_plan(ring, 16, 3, 6, 0x1234, 256, &p);
    ck_assert_int_eq(p.path, M5_DB_REGULAR);
    ck_assert_uint_eq(p.last, 4);
    /* The largest WQE BlueFlame takes: 4 blocks (ds 16). */
    put_wqe(ring, 16, 6, 16);
    m5_db_plan(ring, 16, 6, 10, 0x1234, 256, &p);
    ck_assert_int_eq(p.path, M5_DB_BLUEFLAME);
    ck_assert_uint_eq(p.bf_bytes, M5_BF_MAX);
    /* Smaller BlueFlame buffers take less. */
    m5_db_plan(ring, 16, 6, 10, 0x1234, 128, &p);
    ck_assert_int_eq(p.path, M5_DB_REGULAR);
    /* One more unit is a fifth block: too big for the buffer. */
    put_wqe(ring, 16, 6, 17);
    m5_db_plan(ring, 16, 6, 11, 0x1234, 256, &p);
    ck_assert_int_eq(p.path, M5_DB_REGULAR);
    ck_assert_uint_eq(p.word,
                      m5_uar_db_word(MLX5_OPCODE_RDMA_WRITE, 17, 6, 0x1234));
    /* Indexes past 2^16: the word carries the low 16 bits. */
    put_wqe(ring, 16, 0x10003, 2);
    m5_db_plan(ring, 16, 0x10003, 0x10004, 0x1234, 256, &p);
    ck_assert_int_eq(p.path, M5_DB_BLUEFLAME);
    ck_assert_uint_eq(p.word,
                      m5_uar_db_word(MLX5_OPCODE_RDMA_WRITE, 2, 3, 0x1234));
}
END_TEST

/* BlueFlame only on a write-combining page, and never for the queues of
 * cross-channel constructs, whose WQEs chains rewrite behind WAITs. */
START_TEST(bf_max_per_qp)
{
    ck_assert_uint_eq(m5_qp_bf_max(256, true, 0), 256);
    ck_assert_uint_eq(m5_qp_bf_max(256, true, RNIC_QP_RESTRICT_ACCESS), 256);
    ck_assert_uint_eq(m5_qp_bf_max(512, true, 0), M5_BF_MAX);
    ck_assert_uint_eq(m5_qp_bf_max(128, true, 0), 128);
    ck_assert_uint_eq(m5_qp_bf_max(256, false, 0), 0);
    ck_assert_uint_eq(m5_qp_bf_max(0, true, 0), 0);
    ck_assert_uint_eq(m5_qp_bf_max(256, true, RNIC_QP_CROSS_CHANNEL), 0);
    ck_assert_uint_eq(m5_qp_bf_max(256, true, RNIC_QP_MANAGED_SEND), 0);
    ck_assert_uint_eq(m5_qp_bf_max(256, true, RNIC_QP_MANAGED_RECV), 0);
}
END_TEST

/* The copy is the WQE from the ring, wrapped at its end, with the true
 * ctrl head; bytes past it are not touched. */
START_TEST(bf_image)
{
    uint8_t ring[8 * MLX5_SEND_WQE_BB] = {0}, out[M5_BF_MAX];
    struct m5_db_plan p;

    put_wqe(ring, 8, 6, 12); /* three blocks: 6, 7, then 0 */
    m5_db_plan(ring, 8, 6, 9, 0x55, 256, &p);
    ck_assert_int_eq(p.path, M5_DB_BLUEFLAME);
    ck_assert_uint_eq(p.bf_bytes, 192);
    memset(out, 0xee, sizeof(out));
    m5_bf_image(ring, 8, &p, out);
    ck_assert_mem_eq(out, &p.word, 8);
    ck_assert_mem_eq(out + 8, ring + 6 * 64 + 8, 56);
    ck_assert_mem_eq(out + 64, ring + 7 * 64, 64);
    ck_assert_mem_eq(out + 128, ring, 64); /* wrapped */
    for (unsigned i = 192; i < M5_BF_MAX; i++)
        ck_assert_uint_eq(out[i], 0xee);
    /* The ring itself keeps the chain's operand bits. */
    ck_assert_uint_eq(
        mlx5_ctrl_wqe_index((const struct mlx5_ctrl_seg *)(ring + 6 * 64)),
        0xbeef);
}
END_TEST

/* What rdn-hwcheck prints for an mlx5 device, and cut to fit. */
START_TEST(caps_describe)
{
    struct m5_caps c = {.cd = true,
                        .cq_oi = true,
                        .atomic = true,
                        .wqe_index_ignore = false,
                        .bf = true,
                        .log_bf_reg_size = 9,
                        .log_max_qp_sz = 15,
                        .log_max_cq_sz = 22};
    char buf[200], small[8];

    m5_caps_describe(&c, true, buf, sizeof(buf));
    ck_assert_str_eq(buf, "cd 1, cq_oi 1, atomic 1, wqe_index_ignore_cap 0, "
                          "bf 1 (256-byte buffers, UAR write-combining), "
                          "log_max_qp_sz 15, log_max_cq_sz 22");
    m5_caps_describe(&c, false, small, sizeof(small));
    ck_assert_str_eq(small, "cd 1, c");
}
END_TEST

/* Successive rings use the two halves of the register in turn; the
 * halves' size comes from the capability (log_bf_reg_size, bit 0x26b). */
START_TEST(bf_alternation)
{
    uint8_t out[M5_QUERY_CAP_OUT] = {0};
    struct m5_caps c;
    uint32_t off = 0, half;

    /* bf (bit 0x260) and log_bf_reg_size 9 (bits 0x26b-0x26f): 512. */
    out[BYTE(0x80 + 0x260)] |= MASK(0x80 + 0x260);
    out[BYTE(0x80 + 0x26f)] |= 9; /* the field ends at bit 0x26f */
    m5_caps_parse(out, &c);
    ck_assert(c.bf);
    ck_assert_uint_eq(c.log_bf_reg_size, 9);
    half = m5_bf_half(&c);
    ck_assert_uint_eq(half, 256);
    for (int i = 0; i < 6; i++) {
        ck_assert_uint_eq(off, i % 2 ? 256 : 0);
        off = m5_bf_next(off, half);
    }
    /* No bf capability: no BlueFlame, and the offset stays put. */
    c.bf = false;
    ck_assert_uint_eq(m5_bf_half(&c), 0);
    ck_assert_uint_eq(m5_bf_next(0, m5_bf_half(&c)), 0);
    /* A register too small for a doorbell word counts as none. */
    c.bf = true;
    c.log_bf_reg_size = 3;
    ck_assert_uint_eq(m5_bf_half(&c), 0);
}
END_TEST

/* The arm: sn in bits 29:28 (mod 4), "any CQE" (bit 24 clear), the
 * consumer index's low 24 bits; the UAR word adds the CQN after it. */
START_TEST(cq_arm)
{
    uint64_t w = m5_cq_arm_db_word(5, 0x1234567, 0xabcdef);
    uint8_t b[8];

    ck_assert_uint_eq(be32_to_cpu(m5_cq_arm_value(0, 7)), 7);
    ck_assert_uint_eq(be32_to_cpu(m5_cq_arm_value(5, 0x1234567)), 0x10234567);
    ck_assert_uint_eq(be32_to_cpu(m5_cq_arm_value(3, 0xffffff)), 0x30ffffff);
    memcpy(b, &w, 8);
    ck_assert_uint_eq(be32_at(b), 0x10234567);
    ck_assert_uint_eq(be32_at(b + 4), 0xabcdef);
    ck_assert_uint_eq(M5_CQ_DOORBELL, 0x20);
}
END_TEST

/* Unused scatter entries end the list with the invalid lkey. */
START_TEST(recv_wqe)
{
    uint8_t w[64];
    struct rnic_sge s = {.addr = 0x1000, .length = 8, .lkey = 0x55};
    const struct mlx5_data_seg *d = (const void *)w;

    memset(w, 0xee, sizeof(w));
    m5_put_recv(w, 64, &s, 1);
    ck_assert_uint_eq(be32_to_cpu(d[0].byte_count), 8);
    ck_assert_uint_eq(be32_to_cpu(d[0].lkey), 0x55);
    ck_assert_uint_eq(be64_to_cpu(d[0].addr), 0x1000);
    for (int i = 1; i < 4; i++) {
        ck_assert_uint_eq(be32_to_cpu(d[i].lkey), MLX5_INVALID_LKEY);
        ck_assert_uint_eq(be32_to_cpu(d[i].byte_count), 0);
    }
}
END_TEST

static void cqe(uint8_t c[M5_CQE_BYTES], uint8_t op, uint8_t owner,
                uint8_t wqe_op, uint32_t qpn, uint16_t ctr)
{
    be32 w = cpu_to_be32((uint32_t)wqe_op << 24 | qpn);

    memset(c, 0, M5_CQE_BYTES);
    memcpy(c + 56, &w, 4);
    c[60] = (uint8_t)(ctr >> 8);
    c[61] = (uint8_t)ctr;
    c[63] = (uint8_t)(op << 4 | owner);
}

START_TEST(cqe_decoding)
{
    uint8_t c[M5_CQE_BYTES];
    struct rnic_wc wc;
    be32 v;

    cqe(c, 0x0, 0, MLX5_OPCODE_RDMA_READ, 0x77, 0x1234);
    v = cpu_to_be32(4096);
    memcpy(c + 44, &v, 4);
    ck_assert_int_eq(m5_cqe_decode(c, 0, 8, &wc), 1);
    ck_assert_int_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(wc.opcode, RNIC_WC_RDMA_READ);
    ck_assert_uint_eq(wc.qpn, 0x77);
    ck_assert_uint_eq(wc.wqe_counter, 0x1234);
    ck_assert_uint_eq(wc.byte_len, 4096);
    /* Owner parity: lap 1 (ci 8..15) wants owner 1. */
    ck_assert_int_eq(m5_cqe_decode(c, 8, 8, &wc), 0);
    cqe(c, 0x0, 1, MLX5_OPCODE_WAIT, 0x77, 9);
    ck_assert_int_eq(m5_cqe_decode(c, 9, 8, &wc), 1);
    ck_assert_int_eq(wc.opcode, RNIC_WC_WAIT);
    /* Not written yet. */
    cqe(c, 0xf, 0, 0, 0, 0);
    ck_assert_int_eq(m5_cqe_decode(c, 0, 8, &wc), 0);
    /* A remote access error (syndrome 0x13 at byte 55). */
    cqe(c, 0xd, 0, 0, 0x77, 3);
    c[55] = 0x13;
    ck_assert_int_eq(m5_cqe_decode(c, 0, 8, &wc), 1);
    ck_assert_int_eq(wc.status, RNIC_WC_REM_ACCESS_ERR);
    c[55] = 0x05;
    m5_cqe_decode(c, 0, 8, &wc);
    ck_assert_int_eq(wc.status, RNIC_WC_WR_FLUSH_ERR);
    /* WRITE_IMM received: immediate at byte 36. */
    cqe(c, 0x1, 0, 0, 0x78, 0);
    v = cpu_to_be32(0xcafe);
    memcpy(c + 36, &v, 4);
    ck_assert_int_eq(m5_cqe_decode(c, 0, 8, &wc), 1);
    ck_assert_int_eq(wc.opcode, RNIC_WC_RECV_RDMA_IMM);
    ck_assert(wc.flags & RNIC_WC_WITH_IMM);
    ck_assert_uint_eq(wc.imm, 0xcafe);
}
END_TEST

/* cmd_hca_cap at bit 0x80 of the output: cd 0x22c, cq_oi 0x220. */
START_TEST(caps)
{
    uint8_t out[M5_QUERY_CAP_OUT];
    uint8_t in[M5_QUERY_CAP_IN];
    struct m5_caps c;
    struct rnic_qp_init_attr qa = {.sq_wqebb = 64,
                                   .flags = RNIC_QP_CROSS_CHANNEL};
    struct rnic_cq_init_attr ca = {.depth = 64,
                                   .flags = RNIC_CQ_IGNORE_OVERRUN};
    char why[128];

    m5_query_cap_in(in);
    ck_assert_uint_eq(in[0], 0x01);
    ck_assert_uint_eq(in[7], 0x01); /* op_mod: general, current */
    memset(out, 0, sizeof(out));
    out[(0x80 + 0x88) / 8] = 15; /* log_max_qp_sz */
    out[(0x80 + 0xc8) / 8] = 22; /* log_max_cq_sz */
    m5_caps_parse(out, &c);
    ck_assert(!c.cd && !c.cq_oi && !c.atomic && !c.bf && !c.wqe_index_ignore);
    ck_assert_int_eq(m5_caps_check_qp(&c, &qa, why, sizeof(why)), -EOPNOTSUPP);
    ck_assert_ptr_nonnull(strstr(why, "cross-channel"));
    ck_assert_int_eq(m5_caps_check_cq(&c, &ca, why, sizeof(why)), -EOPNOTSUPP);
    out[BYTE(0x80 + 0x22c)] |= MASK(0x80 + 0x22c);
    out[BYTE(0x80 + 0x220)] |= MASK(0x80 + 0x220);
    out[BYTE(0x80 + 0x21e)] |= MASK(0x80 + 0x21e);
    out[BYTE(0x80 + 0x99)] |= MASK(0x80 + 0x99); /* wqe_index_ignore_cap */
    m5_caps_parse(out, &c);
    ck_assert(c.cd && c.cq_oi && c.atomic && c.wqe_index_ignore);
    ck_assert_uint_eq(c.log_max_cq_sz, 22); /* its neighbours untouched */
    ck_assert_uint_eq(c.log_max_qp_sz, 15);
    ck_assert_int_eq(m5_caps_check_qp(&c, &qa, why, sizeof(why)), 0);
    ck_assert_int_eq(m5_caps_check_cq(&c, &ca, why, sizeof(why)), 0);
    qa.sq_wqebb = 1u << 16;
    ck_assert_int_eq(m5_caps_check_qp(&c, &qa, why, sizeof(why)), -EINVAL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mlx5_prm");
    TCase *tc = tcase_create("prm");

    tcase_add_test(tc, set_get);
    tcase_add_test(tc, create_qp_cross_channel);
    tcase_add_test(tc, create_qp_fields);
    tcase_add_test(tc, modify_qp);
    tcase_add_test(tc, create_cq);
    tcase_add_test(tc, out_fields);
    tcase_add_test(tc, doorbells);
    tcase_add_test(tc, last_wqe);
    tcase_add_test(tc, db_plan_path);
    tcase_add_test(tc, bf_max_per_qp);
    tcase_add_test(tc, bf_image);
    tcase_add_test(tc, bf_alternation);
    tcase_add_test(tc, caps_describe);
    tcase_add_test(tc, cq_arm);
    tcase_add_test(tc, recv_wqe);
    tcase_add_test(tc, cqe_decoding);
    tcase_add_test(tc, caps);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
