/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_softnic.c - every opcode on softnic, byte-exact on memory and
 * completions: NOP, WRITE, WRITE_IMM, SEND, SEND_IMM, READ, CAS, FADD,
 * scatter/gather, immediate data, completion flags, loopback to itself and
 * between two devices; requests served in place keep what packets give.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "t/support/test_softnic_util.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

static struct tdev D;
static struct tq Q; /* connected to itself */

static void setup(void)
{
    tdev_open(&D, NULL, 1 << 20, ALL_ACCESS);
    tq_create(&Q, &D, 0, 64, 16);
    tq_connect(&Q, &Q);
}

static void teardown(void)
{
    tdev_close(&D);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i * 7);
}

/* Posts w, rings, and returns its single completion. */
static struct rnic_wc run1(struct tw *w)
{
    struct rnic_wc wc;
    uint32_t idx = tq_post(&Q, w);

    tq_ring(&Q);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.wqe_counter, (uint16_t)idx);
    ck_assert_uint_eq(wc.qpn, rnic_qp_num(Q.qp));
    return wc;
}

START_TEST(nop_completes)
{
    struct tw w;
    struct rnic_wc wc;

    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_NOP);
}
END_TEST

START_TEST(unsignaled_gives_no_completion)
{
    struct tw w;
    struct rnic_wc wc;

    tw_ctrl(&w, MLX5_OPCODE_NOP, 0);
    tq_post(&Q, &w);
    tw_ctrl(&w, MLX5_OPCODE_NOP, 0);
    tq_post(&Q, &w);
    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_post(&Q, &w);
    tq_ring(&Q);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.wqe_counter, 2);
    ck_assert_int_eq(tquiet(D.scq, 20), 0);
}
END_TEST

START_TEST(write_byte_exact)
{
    uint8_t *src = D.mem, *dst = D.mem + 4096;
    struct tw w;
    struct rnic_wc wc;

    fill(src, 100, 3);
    memset(dst, 0xee, 200);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)dst + 10, D.mr->rkey);
    tw_data(&w, 100, D.mr->lkey, src);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_RDMA_WRITE);
    ck_assert_uint_eq(wc.byte_len, 100);
    ck_assert_mem_eq(dst + 10, src, 100);
    for (int i = 0; i < 10; i++)
        ck_assert_uint_eq(dst[i], 0xee);
    for (int i = 110; i < 200; i++)
        ck_assert_uint_eq(dst[i], 0xee);
}
END_TEST

START_TEST(write_gather_three)
{
    uint8_t *a = D.mem, *b = D.mem + 1000, *c = D.mem + 2000;
    uint8_t *dst = D.mem + 8192, expect[64];
    struct tw w;
    struct rnic_wc wc;

    fill(a, 10, 1);
    fill(b, 20, 50);
    fill(c, 30, 99);
    memcpy(expect, a, 10);
    memcpy(expect + 10, b, 20);
    memcpy(expect + 30, c, 30);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
    tw_data(&w, 10, D.mr->lkey, a);
    tw_data(&w, 20, D.mr->lkey, b);
    tw_data(&w, 30, D.mr->lkey, c);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.byte_len, 60);
    ck_assert_mem_eq(dst, expect, 60);
}
END_TEST

/* A signaled WRITE_IMM of the 32 bytes at src to dst. */
static void write_imm32(struct tw *w, uint8_t *dst, uint8_t *src, uint32_t imm)
{
    tw_ctrl(w, MLX5_OPCODE_RDMA_WRITE_IMM, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_imm(w, imm);
    tw_raddr(w, (uintptr_t)dst, D.mr->rkey);
    tw_data(w, 32, D.mr->lkey, src);
}

START_TEST(write_imm_consumes_receive)
{
    uint8_t *src = D.mem, *dst = D.mem + 4096;
    struct rnic_sge sge = {(uintptr_t)(D.mem + 12288), 16, D.mr->lkey};
    struct tw w;
    struct rnic_wc wc;

    fill(src, 32, 9);
    ck_assert_int_eq(rnic_post_recv(Q.qp, &sge, 1, 0xabcdef), 0);
    write_imm32(&w, dst, src, 0x11223344);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_mem_eq(dst, src, 32);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_RECV_RDMA_IMM);
    ck_assert_uint_eq(wc.flags, RNIC_WC_WITH_IMM);
    ck_assert_uint_eq(wc.imm, 0x11223344);
    ck_assert_uint_eq(wc.byte_len, 32);
    ck_assert_uint_eq(wc.wr_id, 0xabcdef);
}
END_TEST

START_TEST(send_scatters_into_receive)
{
    uint8_t *src = D.mem, *r1 = D.mem + 4096, *r2 = D.mem + 8192;
    struct rnic_sge sge[2] = {{(uintptr_t)r1, 7, D.mr->lkey},
                              {(uintptr_t)r2, 100, D.mr->lkey}};
    struct tw w;
    struct rnic_wc wc;

    fill(src, 50, 77);
    memset(r2, 0xee, 100);
    ck_assert_int_eq(rnic_post_recv(Q.qp, sge, 2, 42), 0);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 20, D.mr->lkey, src);
    tw_data(&w, 30, D.mr->lkey, src + 20);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_SEND);
    ck_assert_uint_eq(wc.byte_len, 50);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_RECV);
    ck_assert_uint_eq(wc.flags, 0);
    ck_assert_uint_eq(wc.byte_len, 50);
    ck_assert_uint_eq(wc.wr_id, 42);
    ck_assert_mem_eq(r1, src, 7);
    ck_assert_mem_eq(r2, src + 7, 43);
    ck_assert_uint_eq(r2[43], 0xee);
}
END_TEST

START_TEST(send_imm_carries_immediate)
{
    uint8_t *src = D.mem, *r = D.mem + 4096;
    struct rnic_sge sge = {(uintptr_t)r, 64, D.mr->lkey};
    struct tw w;
    struct rnic_wc wc;

    fill(src, 8, 5);
    ck_assert_int_eq(rnic_post_recv(Q.qp, &sge, 1, 7), 0);
    tw_ctrl(&w, MLX5_OPCODE_SEND_IMM, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_imm(&w, 0xdeadbeef);
    tw_data(&w, 8, D.mr->lkey, src);
    run1(&w);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.flags, RNIC_WC_WITH_IMM);
    ck_assert_uint_eq(wc.imm, 0xdeadbeef);
    ck_assert_mem_eq(r, src, 8);
}
END_TEST

START_TEST(send_waits_for_receive)
{
    uint8_t *src = D.mem, *r = D.mem + 4096;
    struct rnic_sge sge = {(uintptr_t)r, 64, D.mr->lkey};
    struct tw w;
    struct rnic_wc wc;

    fill(src, 16, 1);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 16, D.mr->lkey, src);
    tq_post(&Q, &w);
    tq_ring(&Q);
    ck_assert_int_eq(tquiet(D.scq, 30), 0); /* RNR: waits, no error */
    ck_assert_int_eq(rnic_post_recv(Q.qp, &sge, 1, 1), 0);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_mem_eq(r, src, 16);
}
END_TEST

START_TEST(read_scatter_byte_exact)
{
    uint8_t *remote = D.mem + 4096, *l1 = D.mem, *l2 = D.mem + 500;
    struct tw w;
    struct rnic_wc wc;

    fill(remote, 64, 200);
    memset(l1, 0, 1024);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)remote, D.mr->rkey);
    tw_data(&w, 24, D.mr->lkey, l1);
    tw_data(&w, 40, D.mr->lkey, l2);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_RDMA_READ);
    ck_assert_uint_eq(wc.byte_len, 64);
    ck_assert_mem_eq(l1, remote, 24);
    ck_assert_mem_eq(l2, remote + 24, 40);
    ck_assert_uint_eq(l1[24], 0);
    ck_assert_uint_eq(l2[40], 0);
}
END_TEST

START_TEST(cas_swaps_on_match_only)
{
    uint64_t *target = (uint64_t *)(D.mem + 4096);
    uint64_t *result = (uint64_t *)D.mem;
    struct tw w;
    struct rnic_wc wc;

    *target = 0x0102030405060708ull;
    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_CS, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)target, D.mr->rkey);
    tw_atomic(&w, 0xaaaa, 0x0102030405060708ull);
    tw_data(&w, 8, D.mr->lkey, result);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_COMP_SWAP);
    ck_assert_uint_eq(*target, 0xaaaa);
    ck_assert_uint_eq(*result, 0x0102030405060708ull);
    /* Mismatch: unchanged, old value returned. */
    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_CS, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)target, D.mr->rkey);
    tw_atomic(&w, 0xbbbb, 0x1234);
    tw_data(&w, 8, D.mr->lkey, result);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(*target, 0xaaaa);
    ck_assert_uint_eq(*result, 0xaaaa);
}
END_TEST

START_TEST(fadd_adds_host_endian)
{
    uint64_t *target = (uint64_t *)(D.mem + 4096);
    uint64_t *result = (uint64_t *)D.mem;
    struct tw w;
    struct rnic_wc wc;

    *target = 0x00000000ffffffffull;
    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_FA, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)target, D.mr->rkey);
    tw_atomic(&w, 1, 0);
    tw_data(&w, 8, D.mr->lkey, result);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_FETCH_ADD);
    ck_assert_uint_eq(*target, 0x0000000100000000ull); /* carry: LE add */
    ck_assert_uint_eq(*result, 0x00000000ffffffffull);
}
END_TEST

/* The atomic segment is big-endian: its bytes in the WQE are exact. */
START_TEST(atomic_operands_are_big_endian)
{
    uint64_t *target = (uint64_t *)(D.mem + 4096);
    uint64_t *result = (uint64_t *)D.mem;
    struct tw w;
    uint8_t *seg;

    *target = 5;
    tw_ctrl(&w, MLX5_OPCODE_ATOMIC_FA, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)target, D.mr->rkey);
    tw_atomic(&w, 0, 0);
    seg = w.b + 32;
    seg[7] = 0x03; /* addend 3, written as big-endian bytes by hand */
    tw_data(&w, 8, D.mr->lkey, result);
    run1(&w);
    ck_assert_uint_eq(*target, 8);
}
END_TEST

START_TEST(two_devices_connect)
{
    struct tdev e;
    struct tq q2;
    struct tw w;
    struct rnic_wc wc;
    uint8_t *src = D.mem;

    tdev_open(&e, NULL, 1 << 16, ALL_ACCESS);
    tq_create(&q2, &e, 0, 16, 0);
    /* Q is connected to itself already: use a fresh QP on D. */
    struct tq q1;

    tq_create(&q1, &D, 0, 16, 0);
    tq_connect(&q1, &q2);
    fill(src, 64, 33);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)e.mem + 64, e.mr->rkey);
    tw_data(&w, 64, D.mr->lkey, src);
    tq_post(&q1, &w);
    tq_ring(&q1);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_mem_eq(e.mem + 64, src, 64);
    /* D's rkey means nothing on e: a remote access error. */
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)D.mem + 64, D.mr->rkey);
    tw_data(&w, 64, D.mr->lkey, src);
    tq_post(&q1, &w);
    tq_ring(&q1);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_REM_ACCESS_ERR);
    ck_assert_int_eq(rnic_qp_state(q2.qp), RNIC_QPS_ERR);
    tdev_close(&e);
}
END_TEST

START_TEST(many_writes_in_order)
{
    uint64_t *slots = (uint64_t *)(D.mem + 8192);
    uint64_t *vals = (uint64_t *)D.mem;
    struct rnic_wc wc[8];
    int done = 0;

    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 8; i++) {
            struct tw w;

            vals[i] = (uint64_t)round * 100 + (uint64_t)i;
            tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE,
                    i == 7 ? MLX5_WQE_CTRL_CQ_UPDATE : 0);
            tw_raddr(&w, (uintptr_t)&slots[i], D.mr->rkey);
            tw_data(&w, 8, D.mr->lkey, &vals[i]);
            tq_post(&Q, &w);
        }
        tq_ring(&Q);
        ck_assert_int_eq(tpoll(D.scq, wc, 1, TMS), 1);
        ck_assert_uint_eq(wc[0].status, RNIC_WC_SUCCESS);
        for (int i = 0; i < 8; i++)
            ck_assert_uint_eq(slots[i], (uint64_t)round * 100 + (uint64_t)i);
        done++;
    }
    ck_assert_int_eq(done, 50);
}
END_TEST

/*
 * More READs than a QP keeps outstanding (softnic: 16): the ones past the
 * limit wait until earlier ones retired; every READ still lands its own
 * bytes and completes in posting order.
 */
START_TEST(reads_past_outstanding_limit)
{
    enum { N = 40 };
    uint64_t *remote = (uint64_t *)(D.mem + 8192);
    uint64_t *local = (uint64_t *)D.mem;
    uint32_t idx[N];
    struct rnic_wc wc[N];

    for (int i = 0; i < N; i++) {
        struct tw w;

        remote[i] = 0x1000u + (uint64_t)i;
        local[i] = 0;
        tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
        tw_raddr(&w, (uintptr_t)&remote[i], D.mr->rkey);
        tw_data(&w, 8, D.mr->lkey, &local[i]);
        idx[i] = tq_post(&Q, &w);
    }
    tq_ring(&Q);
    ck_assert_int_eq(tpoll(D.scq, wc, N, TMS), N);
    for (int i = 0; i < N; i++) {
        ck_assert_uint_eq(wc[i].status, RNIC_WC_SUCCESS);
        ck_assert_uint_eq(wc[i].wqe_counter, (uint16_t)idx[i]);
        ck_assert_uint_eq(local[i], 0x1000u + (uint64_t)i);
    }
}
END_TEST

/*
 * A READ and an FADD posted right behind a WRITE to the same bytes, on
 * the same QP: RC serves a QP's requests in order, so both see the
 * WRITE's value (softnic serves READs and atomics in place only when
 * nothing sent before them is still on its way).
 */
START_TEST(read_and_atomic_after_write_see_it)
{
    uint64_t *x = (uint64_t *)(D.mem + 8192);
    uint64_t *val = (uint64_t *)D.mem, *got = val + 1, *old = val + 2;
    struct rnic_wc wc;

    for (uint64_t round = 1; round <= 50; round++) {
        struct tw w;

        *x = 0;
        *val = round * 1000;
        *got = *old = 0;
        tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, 0);
        tw_raddr(&w, (uintptr_t)x, D.mr->rkey);
        tw_data(&w, 8, D.mr->lkey, val);
        tq_post(&Q, &w);
        tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, 0);
        tw_raddr(&w, (uintptr_t)x, D.mr->rkey);
        tw_data(&w, 8, D.mr->lkey, got);
        tq_post(&Q, &w);
        tw_ctrl(&w, MLX5_OPCODE_ATOMIC_FA, MLX5_WQE_CTRL_CQ_UPDATE);
        tw_raddr(&w, (uintptr_t)x, D.mr->rkey);
        tw_atomic(&w, 1, 0);
        tw_data(&w, 8, D.mr->lkey, old);
        tq_post(&Q, &w);
        tq_ring(&Q);
        ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
        ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
        ck_assert_uint_eq(*got, round * 1000);
        ck_assert_uint_eq(*old, round * 1000);
        ck_assert_uint_eq(*x, round * 1000 + 1);
    }
}
END_TEST

/*
 * A READ whose scatter entries overlap its own source: the bytes read are
 * the source as it was, whichever entry lands first.
 */
START_TEST(read_into_its_own_source_reads_it_first)
{
    uint8_t *buf = D.mem + 8192, orig[16];
    struct tw w;
    struct rnic_wc wc;

    fill(buf, 24, 3);
    memcpy(orig, buf, sizeof(orig));
    tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)buf, D.mr->rkey);
    tw_data(&w, 8, D.mr->lkey, buf + 8);
    tw_data(&w, 8, D.mr->lkey, buf + 16);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_mem_eq(buf, orig, 8);
    ck_assert_mem_eq(buf + 8, orig, 16);
}
END_TEST

/*
 * A SEND whose gather pieces overlap the receive's scatter entries: what
 * lands is the payload as it was when sent (softnic serves a SEND on the
 * same thread in place, after copying it aside).
 */
START_TEST(send_over_its_own_source_sends_it_first)
{
    uint8_t *buf = D.mem + 8192, orig[24];
    /* The first entry overwrites bytes the second one's part comes from. */
    struct rnic_sge sge[2] = {{(uintptr_t)(buf + 12), 8, D.mr->lkey},
                              {(uintptr_t)(buf + 32), 16, D.mr->lkey}};
    struct tw w;
    struct rnic_wc wc;

    fill(buf, 24, 11);
    memcpy(orig, buf, sizeof(orig));
    ck_assert_int_eq(rnic_post_recv(Q.qp, sge, 2, 5), 0);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 12, D.mr->lkey, buf);
    tw_data(&w, 12, D.mr->lkey, buf + 12);
    ck_assert_uint_eq(run1(&w).status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.byte_len, 24);
    ck_assert_mem_eq(buf + 12, orig, 8);
    ck_assert_mem_eq(buf + 32, orig + 8, 16);
}
END_TEST

/*
 * A WRITE_IMM that finds no receive waits (RNR) with its bytes not yet
 * written, then lands whole once a receive is posted.
 */
START_TEST(write_imm_waits_for_receive_unwritten)
{
    uint8_t *src = D.mem, *dst = D.mem + 4096;
    struct rnic_sge sge = {(uintptr_t)(D.mem + 12288), 16, D.mr->lkey};
    struct tw w;
    struct rnic_wc wc;

    fill(src, 32, 21);
    memset(dst, 0xee, 32);
    write_imm32(&w, dst, src, 0x5566);
    tq_post(&Q, &w);
    tq_ring(&Q);
    ck_assert_int_eq(tquiet(D.scq, 30), 0);
    for (int i = 0; i < 32; i++)
        ck_assert_uint_eq(dst[i], 0xee);
    ck_assert_int_eq(rnic_post_recv(Q.qp, &sge, 1, 9), 0);
    ck_assert_int_eq(tpoll(D.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(tpoll(D.rcq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.imm, 0x5566);
    ck_assert_mem_eq(dst, src, 32);
}
END_TEST

/* Runs NOPs until the next WQE starts n blocks before the ring's end. */
static void to_blocks_before_end(uint32_t n)
{
    uint32_t mask = Q.sq.wqebb_cnt - 1, at = Q.sq.wqebb_cnt - n;
    struct tw w;

    while ((Q.pi & mask) != at - 1) {
        tw_ctrl(&w, MLX5_OPCODE_NOP, 0);
        tq_post(&Q, &w);
    }
    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    ck_assert_uint_eq(run1(&w).status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(Q.pi & mask, at);
}

/*
 * A two-block WRITE (five gather entries) that starts in the ring's last
 * block, and a three-block READ (ten scatter entries) that starts in the
 * one before: both use their segments in order across the end.
 */
START_TEST(wqe_across_ring_end)
{
    uint8_t *src = D.mem, *dst = D.mem + 8192, *back = D.mem + 16384;
    struct tw w;
    struct rnic_wc wc;

    fill(src, 5 * 24, 9);
    memset(dst, 0, 256);
    memset(back, 0, 512);
    to_blocks_before_end(1);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
    for (int i = 0; i < 5; i++)
        tw_data(&w, 24, D.mr->lkey, src + (4 - i) * 24);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    for (int i = 0; i < 5; i++)
        ck_assert_mem_eq(dst + i * 24, src + (4 - i) * 24, 24);
    ck_assert_uint_eq(dst[5 * 24], 0);

    to_blocks_before_end(2);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)dst, D.mr->rkey);
    for (int i = 0; i < 10; i++)
        tw_data(&w, 12, D.mr->lkey, back + (9 - i) * 32);
    wc = run1(&w);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.byte_len, 120);
    for (int i = 0; i < 10; i++) {
        ck_assert_mem_eq(back + (9 - i) * 32, dst + i * 12, 12);
        ck_assert_uint_eq(back[(9 - i) * 32 + 12], 0);
    }
}
END_TEST

static Suite *softnic_suite(void)
{
    Suite *s = suite_create("softnic");
    TCase *tc = tcase_create("opcodes");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, nop_completes);
    tcase_add_test(tc, unsignaled_gives_no_completion);
    tcase_add_test(tc, write_byte_exact);
    tcase_add_test(tc, write_gather_three);
    tcase_add_test(tc, write_imm_consumes_receive);
    tcase_add_test(tc, send_scatters_into_receive);
    tcase_add_test(tc, send_imm_carries_immediate);
    tcase_add_test(tc, send_waits_for_receive);
    tcase_add_test(tc, read_scatter_byte_exact);
    tcase_add_test(tc, cas_swaps_on_match_only);
    tcase_add_test(tc, fadd_adds_host_endian);
    tcase_add_test(tc, atomic_operands_are_big_endian);
    tcase_add_test(tc, two_devices_connect);
    tcase_add_test(tc, many_writes_in_order);
    tcase_add_test(tc, reads_past_outstanding_limit);
    tcase_add_test(tc, wqe_across_ring_end);
    tcase_add_test(tc, read_and_atomic_after_write_see_it);
    tcase_add_test(tc, read_into_its_own_source_reads_it_first);
    tcase_add_test(tc, send_over_its_own_source_sends_it_first);
    tcase_add_test(tc, write_imm_waits_for_receive_unwritten);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return trun(softnic_suite, "1,3");
}
