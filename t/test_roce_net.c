/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_roce_net.c - RC between two rdn-nicd daemons over RoCEv2. Run by
 * t/roce_net.sh, which puts each daemon in its own network namespace
 * (hosts joined by veth) and passes their sockets in RDN_TEST_SOCK_A and
 * RDN_TEST_SOCK_B; this process reaches both through their Unix sockets,
 * so every packet between the QPs crosses the veth link.
 *
 * RDN_TEST_ROUNDS repeats the data tests (under netem loss, reordering,
 * duplication): every operation must complete exactly once, with exact
 * data. RDN_TEST_KILL=1 runs only the peer-death test (the script kills
 * daemon B when told through RDN_TEST_KILL_FIFO).
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/support/test_softnic_util.h"

#define MEM_LEN (4u << 20) /* per device: 2 MiB source + 2 MiB sink */
#define BIG     (1u << 20)

static struct tdev A, B;

static void open_dev(struct tdev *d, const char *var)
{
    struct rnic_open_opts o = {.socket = getenv(var), .no_autostart = 1};

    ck_assert_msg(o.socket, "%s not set (run t/roce_net.sh)", var);
    setenv("RDN_TEST_DEVICE", "softnic", 1);
    tdev_open(d, &o, MEM_LEN,
              RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |
                  RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC);
}

static void setup(void)
{
    open_dev(&A, "RDN_TEST_SOCK_A");
    open_dev(&B, "RDN_TEST_SOCK_B");
}

static void teardown(void)
{
    tdev_close(&A);
    tdev_close(&B);
}

/*
 * A QP with RoCE reliability attributes. The ACK timeout is long (1.07 s)
 * where retries must not run out on a loaded machine, short (67 ms) where
 * the test wants them to run out (retry < 7).
 */
static void qp_make(struct tq *q, struct tdev *d, uint32_t rq, uint8_t retry,
                    uint8_t rnr)
{
    struct rnic_qp_init_attr a = {
        .send_cq = d->scq,
        .recv_cq = rq ? d->rcq : NULL,
        .sq_wqebb = 256,
        .rq_wqe = rq,
        .max_recv_sge = rq ? 1 : 0,
        .rc = {.timeout = retry < 7 ? 14 : 18,
               .retry_cnt = retry,
               .rnr_retry = rnr,
               .min_rnr_timer = 4,
               .set = 1},
    };

    memset(q, 0, sizeof(*q));
    ck_assert_msg(rnic_create_qp(d->dev, &a, &q->qp) == 0, "create_qp: %s",
                  rnic_errmsg());
    ck_assert_int_eq(rnic_qp_sq(q->qp, &q->sq), 0);
}

static int rounds(void)
{
    const char *r = getenv("RDN_TEST_ROUNDS");

    return r ? atoi(r) : 1;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 9));
}

/* A second pair, default attributes, from A to peer and connected: what
 * the test does to the first pair must leave it working. */
static void bystander_pair(struct tq *c, struct tq *d, struct tdev *peer)
{
    qp_make(c, &A, 0, 7, 7);
    qp_make(d, peer, 0, 7, 7);
    tq_connect(c, d);
}

/* A data segment, or none for 0 bytes (byte_count 0 means 2^31). */
static void data(struct tw *w, uint32_t n, uint32_t lkey, const void *addr)
{
    if (n)
        tw_data(w, n, lkey, addr);
}

/* One completion on cq within TMS, with status st; returns it. */
static struct rnic_wc one(struct rnic_cq *cq, int st)
{
    struct rnic_wc wc;

    ck_assert_msg(tpoll(cq, &wc, 1, 3 * TMS) == 1, "no completion");
    ck_assert_msg(wc.status == st, "status %s, want %s",
                  rnic_wc_status_str(wc.status), rnic_wc_status_str(st));
    return wc;
}

static const uint32_t sizes[] = {0,    1,    255,   256,   1023,   1024,
                                 1025, 4096, 12345, 65536, 262144, BIG};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---- every opcode at every size ---------------------------------------- */

START_TEST(send_all_sizes)
{
    struct tq a, b;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 64, 7, 7);
    tq_connect(&a, &b);
    for (int r = 0; r < rounds(); r++)
        for (unsigned i = 0; i < NSIZES; i++) {
            uint32_t n = sizes[i];
            bool imm = i & 1;
            struct rnic_sge sge = {(uintptr_t)B.mem + BIG * 2, BIG * 2,
                                   B.mr->lkey};
            struct tw w;
            struct rnic_wc wc;

            fill(A.mem, n, i + r);
            memset(B.mem + BIG * 2, 0xee, n + 16);
            ck_assert_int_eq(rnic_post_recv(b.qp, &sge, 1, 100 + i), 0);
            tw_ctrl(&w, imm ? MLX5_OPCODE_SEND_IMM : MLX5_OPCODE_SEND,
                    MLX5_WQE_CTRL_CQ_UPDATE);
            tw_imm(&w, 0x12345600 + i);
            data(&w, n, A.mr->lkey, A.mem);
            tq_post(&a, &w);
            tq_ring(&a);
            wc = one(A.scq, RNIC_WC_SUCCESS);
            ck_assert_int_eq(wc.opcode, RNIC_WC_SEND);
            wc = one(B.rcq, RNIC_WC_SUCCESS);
            ck_assert_int_eq(wc.wr_id, 100 + i);
            ck_assert_int_eq(wc.byte_len, n);
            ck_assert_int_eq(!!(wc.flags & RNIC_WC_WITH_IMM), imm);
            if (imm)
                ck_assert_uint_eq(wc.imm, 0x12345600 + i);
            ck_assert_msg(memcmp(A.mem, B.mem + BIG * 2, n) == 0,
                          "SEND %u bytes: data differs", n);
            ck_assert_int_eq(B.mem[BIG * 2 + n], 0xee);
        }
    ck_assert_int_eq(tquiet(A.scq, 50) + tquiet(B.rcq, 0), 0);
}
END_TEST

START_TEST(write_all_sizes)
{
    struct tq a, b;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 64, 7, 7);
    tq_connect(&a, &b);
    for (int r = 0; r < rounds(); r++)
        for (unsigned i = 0; i < NSIZES; i++) {
            uint32_t n = sizes[i];
            bool imm = i & 1;
            uint8_t *dst = B.mem + BIG * 2;
            struct rnic_sge sge = {(uintptr_t)B.mem, 0, B.mr->lkey};
            struct tw w;
            struct rnic_wc wc;

            fill(A.mem, n, i + 3 * r);
            memset(dst, 0xee, n + 16);
            if (imm)
                ck_assert_int_eq(rnic_post_recv(b.qp, &sge, 1, 200 + i), 0);
            tw_ctrl(&w,
                    imm ? MLX5_OPCODE_RDMA_WRITE_IMM : MLX5_OPCODE_RDMA_WRITE,
                    MLX5_WQE_CTRL_CQ_UPDATE);
            tw_imm(&w, 0xabc000 + i);
            tw_raddr(&w, (uintptr_t)dst, B.mr->rkey);
            data(&w, n, A.mr->lkey, A.mem);
            tq_post(&a, &w);
            tq_ring(&a);
            wc = one(A.scq, RNIC_WC_SUCCESS);
            ck_assert_int_eq(wc.opcode, RNIC_WC_RDMA_WRITE);
            if (imm) {
                wc = one(B.rcq, RNIC_WC_SUCCESS);
                ck_assert_int_eq(wc.opcode, RNIC_WC_RECV_RDMA_IMM);
                ck_assert_uint_eq(wc.imm, 0xabc000 + i);
                ck_assert_int_eq(wc.byte_len, n);
            }
            ck_assert_msg(memcmp(A.mem, dst, n) == 0,
                          "WRITE %u bytes: data differs", n);
            ck_assert_int_eq(dst[n], 0xee);
        }
    ck_assert_int_eq(tquiet(A.scq, 50) + tquiet(B.rcq, 0), 0);
}
END_TEST

START_TEST(read_all_sizes)
{
    struct tq a, b;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 0, 7, 7);
    tq_connect(&a, &b);
    for (int r = 0; r < rounds(); r++)
        for (unsigned i = 0; i < NSIZES; i++) {
            uint32_t n = sizes[i];
            uint8_t *dst = A.mem + BIG * 2;
            struct tw w;
            struct rnic_wc wc;

            fill(B.mem, n, i + 5 * r);
            memset(dst, 0xee, n + 16);
            tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
            tw_raddr(&w, (uintptr_t)B.mem, B.mr->rkey);
            data(&w, n, A.mr->lkey, dst);
            tq_post(&a, &w);
            tq_ring(&a);
            wc = one(A.scq, RNIC_WC_SUCCESS);
            ck_assert_int_eq(wc.opcode, RNIC_WC_RDMA_READ);
            ck_assert_msg(memcmp(B.mem, dst, n) == 0,
                          "READ %u bytes: data differs", n);
            ck_assert_int_eq(dst[n], 0xee);
        }
    ck_assert_int_eq(tquiet(A.scq, 50), 0);
}
END_TEST

/* Many operations in flight at once, mixed: each completes once, in order. */
START_TEST(pipelined_mix)
{
    enum { N = 96 };
    struct tq a, b;
    uint64_t *ctr = (uint64_t *)(B.mem + BIG * 3);
    uint64_t *olds = (uint64_t *)(A.mem + BIG * 3);
    struct rnic_wc wc[N];
    int got = 0;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 0, 7, 7);
    tq_connect(&a, &b);
    for (int r = 0; r < rounds(); r++) {
        *ctr = 0;
        memset(olds, 0xff, N * 8);
        fill(A.mem, BIG, 40 + r);
        memset(B.mem, 0, 2 * BIG);
        got = 0;
        for (int i = 0; i < N; i++) {
            struct tw w;
            uint32_t n = 3000 + i * 997;

            switch (i % 3) {
            case 0:
                tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
                tw_raddr(&w, (uintptr_t)B.mem + i * 8192ull, B.mr->rkey);
                tw_data(&w, n % 8192, A.mr->lkey, A.mem + i * 8192ull);
                break;
            case 1:
                tw_ctrl(&w, MLX5_OPCODE_ATOMIC_FA, MLX5_WQE_CTRL_CQ_UPDATE);
                tw_raddr(&w, (uintptr_t)ctr, B.mr->rkey);
                tw_atomic(&w, 1, 0);
                tw_data(&w, 8, A.mr->lkey, &olds[i]);
                break;
            default:
                tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
                tw_raddr(&w, (uintptr_t)B.mem + (i - 2) * 8192ull, B.mr->rkey);
                tw_data(&w, 2000, A.mr->lkey, A.mem + BIG + i * 2048ull);
                break;
            }
            tq_post(&a, &w);
        }
        tq_ring(&a);
        got = tpoll(A.scq, wc, N, 6 * TMS);
        ck_assert_int_eq(got, N);
        for (int i = 0; i < N; i++) {
            ck_assert_msg(wc[i].status == RNIC_WC_SUCCESS, "wqe %d: %s", i,
                          rnic_wc_status_str(wc[i].status));
            ck_assert_int_eq(wc[i].wqe_counter, (uint16_t)(a.pi - N + i));
        }
        ck_assert_uint_eq(*ctr, N / 3); /* each FADD applied once */
        for (int i = 1; i < N; i += 3)
            ck_assert_uint_eq(olds[i], (uint64_t)(i / 3));
        for (int i = 0; i < N; i += 3)
            ck_assert(memcmp(B.mem + i * 8192ull, A.mem + i * 8192ull,
                             (3000 + i * 997) % 8192) == 0);
        for (int i = 2; i < N; i += 3)
            ck_assert(memcmp(A.mem + BIG + i * 2048ull,
                             B.mem + (i - 2) * 8192ull, 2000) == 0);
        ck_assert_int_eq(tquiet(A.scq, 20), 0);
    }
}
END_TEST

START_TEST(cas_once)
{
    struct tq a, b;
    uint64_t *t = (uint64_t *)(B.mem + 64);
    uint64_t *res = (uint64_t *)(A.mem + 64);

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 0, 7, 7);
    tq_connect(&a, &b);
    for (int r = 0; r < rounds() * 4; r++) {
        struct tw w;

        *t = 1000 + r;
        tw_ctrl(&w, MLX5_OPCODE_ATOMIC_CS, MLX5_WQE_CTRL_CQ_UPDATE);
        tw_raddr(&w, (uintptr_t)t, B.mr->rkey);
        tw_atomic(&w, 5000 + r, 1000 + r); /* swap, compare */
        tw_data(&w, 8, A.mr->lkey, res);
        tq_post(&a, &w);
        tw_ctrl(&w, MLX5_OPCODE_ATOMIC_CS, MLX5_WQE_CTRL_CQ_UPDATE);
        tw_raddr(&w, (uintptr_t)t, B.mr->rkey);
        tw_atomic(&w, 7, 1000 + r); /* fails: the value is 5000 + r now */
        tw_data(&w, 8, A.mr->lkey, res + 1);
        tq_post(&a, &w);
        tq_ring(&a);
        one(A.scq, RNIC_WC_SUCCESS);
        one(A.scq, RNIC_WC_SUCCESS);
        ck_assert_uint_eq(res[0], 1000 + r);
        ck_assert_uint_eq(res[1], 5000 + r);
        ck_assert_uint_eq(*t, 5000 + r);
    }
}
END_TEST

/* ---- NAKs and errors ---------------------------------------------------- */

START_TEST(bad_rkey_is_remote_access_error)
{
    struct tq a, b, c, d;
    struct tw w;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 0, 7, 7);
    tq_connect(&a, &b);
    bystander_pair(&c, &d, &B);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)B.mem, B.mr->rkey ^ 0x100);
    tw_data(&w, 5000, A.mr->lkey, A.mem);
    tq_post(&a, &w);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)B.mem, B.mr->rkey);
    tw_data(&w, 10, A.mr->lkey, A.mem);
    tq_post(&a, &w);
    tq_ring(&a);
    one(A.scq, RNIC_WC_REM_ACCESS_ERR);
    one(A.scq, RNIC_WC_WR_FLUSH_ERR);
    ck_assert_int_eq(rnic_qp_state(a.qp), RNIC_QPS_ERR);
    for (int i = 0; i < 100 && rnic_qp_state(b.qp) != RNIC_QPS_ERR; i++)
        usleep(10000);
    ck_assert_int_eq(rnic_qp_state(b.qp), RNIC_QPS_ERR);
    /* Out of bounds READ and a misaligned atomic on the other pair. */
    tw_ctrl(&w, MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)B.mem + MEM_LEN - 8, B.mr->rkey);
    tw_data(&w, 16, A.mr->lkey, A.mem);
    tq_post(&c, &w);
    tq_ring(&c);
    one(A.scq, RNIC_WC_REM_ACCESS_ERR);
    ck_assert_int_eq(rnic_qp_state(c.qp), RNIC_QPS_ERR);
}
END_TEST

START_TEST(send_without_rq_is_invalid_request)
{
    struct tq a, b;
    struct tw w;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 0, 7, 7); /* no receive queue */
    tq_connect(&a, &b);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 10, A.mr->lkey, A.mem);
    tq_post(&a, &w);
    tq_ring(&a);
    one(A.scq, RNIC_WC_REM_INV_REQ_ERR);
}
END_TEST

START_TEST(send_too_long_is_invalid_request)
{
    struct tq a, b;
    struct rnic_sge sge = {(uintptr_t)B.mem, 100, B.mr->lkey};
    struct tw w;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 4, 7, 7);
    tq_connect(&a, &b);
    ck_assert_int_eq(rnic_post_recv(b.qp, &sge, 1, 1), 0);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 3000, A.mr->lkey, A.mem);
    tq_post(&a, &w);
    tq_ring(&a);
    one(A.scq, RNIC_WC_REM_INV_REQ_ERR);
    one(B.rcq, RNIC_WC_LOC_LEN_ERR);
}
END_TEST

/* No receive posted: RNR NAKs; a receive posted later lets it through. */
START_TEST(rnr_then_receive)
{
    struct tq a, b;
    struct rnic_sge sge = {(uintptr_t)B.mem, 4096, B.mr->lkey};
    struct tw w;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 4, 7, 7);
    tq_connect(&a, &b);
    fill(A.mem, 3000, 9);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 3000, A.mr->lkey, A.mem);
    tq_post(&a, &w);
    tq_ring(&a);
    ck_assert_int_eq(tquiet(A.scq, 100), 0);
    ck_assert_int_eq(rnic_post_recv(b.qp, &sge, 1, 7), 0);
    one(A.scq, RNIC_WC_SUCCESS);
    one(B.rcq, RNIC_WC_SUCCESS);
    ck_assert(memcmp(A.mem, B.mem, 3000) == 0);
}
END_TEST

START_TEST(rnr_retry_exhausted)
{
    struct tq a, b, c, d;
    struct tw w;

    qp_make(&a, &A, 0, 7, 2);
    qp_make(&b, &B, 4, 7, 7);
    tq_connect(&a, &b);
    bystander_pair(&c, &d, &B);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 10, A.mr->lkey, A.mem);
    tq_post(&a, &w);
    tq_ring(&a);
    one(A.scq, RNIC_WC_RNR_RETRY_EXC_ERR);
    ck_assert_int_eq(rnic_qp_state(a.qp), RNIC_QPS_ERR);
    /* The other pair is untouched. */
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)B.mem, B.mr->rkey);
    tw_data(&w, 10, A.mr->lkey, A.mem);
    tq_post(&c, &w);
    tq_ring(&c);
    one(A.scq, RNIC_WC_SUCCESS);
}
END_TEST

/* A peer QP that is gone: retries run out, only that QP errors. */
START_TEST(peer_qp_destroyed_retry_exceeded)
{
    struct tq a, b, c, d;
    struct tw w;

    qp_make(&a, &A, 0, 2, 7);
    qp_make(&b, &B, 0, 7, 7);
    tq_connect(&a, &b);
    bystander_pair(&c, &d, &B);
    ck_assert_int_eq(rnic_destroy_qp(b.qp), 0);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)B.mem, B.mr->rkey);
    tw_data(&w, 10, A.mr->lkey, A.mem);
    tq_post(&a, &w);
    tq_ring(&a);
    one(A.scq, RNIC_WC_RETRY_EXC_ERR);
    tq_post(&c, &w);
    tq_ring(&c);
    one(A.scq, RNIC_WC_SUCCESS);
    ck_assert_int_eq(rnic_qp_state(c.qp), RNIC_QPS_RTS);
}
END_TEST

/* Same-host QPs keep the in-memory path (no GID needed between them). */
START_TEST(same_daemon_in_memory)
{
    struct tq a, b;
    struct tw w;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &A, 0, 7, 7);
    tq_connect(&a, &b);
    fill(A.mem, 100, 1);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)A.mem + BIG, A.mr->rkey);
    tw_data(&w, 100, A.mr->lkey, A.mem);
    tq_post(&a, &w);
    tq_ring(&a);
    one(A.scq, RNIC_WC_SUCCESS);
    ck_assert(memcmp(A.mem, A.mem + BIG, 100) == 0);
}
END_TEST

/* ---- the address a QP speaks from (rnic_qp_set_gid) ---------------------- */

static void gid_of(uint8_t gid[16], const char *ip)
{
    memset(gid, 0, 16);
    gid[10] = gid[11] = 0xff;
    ck_assert_int_eq(inet_pton(AF_INET, ip, gid + 12), 1);
}

/* A WRITE of 100 bytes from a to b's device, and one back: both ways work. */
static void write_both_ways(struct tq *a, struct tdev *ad, struct tq *b,
                            struct tdev *bd, unsigned seed)
{
    struct tq *q[2] = {a, b};
    struct tdev *d[2] = {ad, bd};

    for (int i = 0; i < 2; i++) {
        struct tdev *from = d[i], *to = d[1 - i];
        struct tw w;

        fill(from->mem, 100, seed + (unsigned)i);
        tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
        tw_raddr(&w, (uintptr_t)to->mem + BIG, to->mr->rkey);
        tw_data(&w, 100, from->mr->lkey, from->mem);
        tq_post(q[i], &w);
        tq_ring(q[i]);
        one(from->scq, RNIC_WC_SUCCESS);
        ck_assert(memcmp(from->mem, to->mem + BIG, 100) == 0);
    }
}

/* A daemon listening on one address speaks only from it. */
START_TEST(set_gid_one_address)
{
    struct rnic_addr ad;
    uint8_t gid[16];
    struct tq a, b;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 0, 7, 7);
    gid_of(gid, "10.77.0.2"); /* B's, not A's */
    ck_assert_int_eq(rnic_qp_set_gid(a.qp, gid), -EADDRNOTAVAIL);
    memset(gid, 0, sizeof(gid)); /* not IPv4 */
    ck_assert_int_eq(rnic_qp_set_gid(a.qp, gid), -EADDRNOTAVAIL);
    gid_of(gid, "10.77.0.1");
    ck_assert_int_eq(rnic_qp_set_gid(a.qp, gid), 0);
    ck_assert_int_eq(rnic_qp_addr(a.qp, &ad), 0);
    ck_assert(memcmp(ad.gid, gid, 16) == 0 && (ad.flags & RNIC_ADDR_GID));
    tq_connect(&a, &b);
    ck_assert_int_eq(rnic_qp_set_gid(a.qp, gid), -EINVAL); /* not RESET */
    write_both_ways(&a, &A, &b, &B, 3);
}
END_TEST

/*
 * A daemon on every address (W: 0.0.0.0 in A's namespace, which has
 * 10.77.0.1 and 10.77.0.3): a QP speaks from the address it was given,
 * two QPs from two addresses to the same peer both work; a QP given none
 * has no network address, and one of another host's is refused.
 */
START_TEST(set_gid_every_address)
{
    struct tdev W;
    struct rnic_addr ad;
    uint8_t gid[16];
    struct tq w1, w2, w3, b1, b2, b3;

    open_dev(&W, "RDN_TEST_SOCK_W");
    qp_make(&w1, &W, 0, 7, 7);
    qp_make(&w2, &W, 0, 7, 7);
    qp_make(&w3, &W, 0, 7, 7);
    qp_make(&b1, &B, 0, 7, 7);
    qp_make(&b2, &B, 0, 7, 7);
    qp_make(&b3, &B, 0, 7, 7);
    gid_of(gid, "10.77.0.2"); /* B's namespace's */
    ck_assert_int_eq(rnic_qp_set_gid(w1.qp, gid), -EADDRNOTAVAIL);
    ck_assert_int_eq(rnic_qp_addr(w3.qp, &ad), 0);
    ck_assert(!(ad.flags & RNIC_ADDR_GID));
    ck_assert_int_eq(rnic_connect(b3.qp, &ad), -EHOSTUNREACH);
    gid_of(gid, "10.77.0.3");
    ck_assert_int_eq(rnic_qp_set_gid(w1.qp, gid), 0);
    ck_assert_int_eq(rnic_qp_addr(w1.qp, &ad), 0);
    ck_assert(memcmp(ad.gid, gid, 16) == 0);
    gid_of(gid, "10.77.0.1");
    ck_assert_int_eq(rnic_qp_set_gid(w2.qp, gid), 0);
    tq_connect(&w1, &b1);
    tq_connect(&w2, &b2);
    write_both_ways(&w1, &W, &b1, &B, 5);
    write_both_ways(&w2, &W, &b2, &B, 7);
    tdev_close(&W);
}
END_TEST

/* ---- a peer's daemon killed --------------------------------------------- */

START_TEST(peer_daemon_killed)
{
    const char *fifo = getenv("RDN_TEST_KILL_FIFO");
    struct tq a, b, c, d;
    struct tw w;
    int fd;

    ck_assert_msg(fifo, "RDN_TEST_KILL_FIFO not set");
    qp_make(&a, &A, 0, 3, 7);
    qp_make(&b, &B, 0, 7, 7);
    tq_connect(&a, &b);
    bystander_pair(&c, &d, &A);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)B.mem, B.mr->rkey);
    tw_data(&w, 10, A.mr->lkey, A.mem);
    tq_post(&a, &w);
    tq_ring(&a);
    one(A.scq, RNIC_WC_SUCCESS);
    fd = open(fifo, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "kill\n", 5), 5);
    close(fd);
    usleep(300000); /* the script kills daemon B meanwhile */
    tq_post(&a, &w);
    tq_ring(&a);
    one(A.scq, RNIC_WC_RETRY_EXC_ERR);
    ck_assert_int_eq(rnic_qp_state(a.qp), RNIC_QPS_ERR);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)A.mem + BIG, A.mr->rkey);
    tw_data(&w, 10, A.mr->lkey, A.mem);
    tq_post(&c, &w);
    tq_ring(&c);
    one(A.scq, RNIC_WC_SUCCESS);
    ck_assert_int_eq(rnic_qp_state(c.qp), RNIC_QPS_RTS);
}
END_TEST

static void kill_setup(void)
{
    open_dev(&A, "RDN_TEST_SOCK_A");
    open_dev(&B, "RDN_TEST_SOCK_B");
}

static void kill_teardown(void)
{
    tdev_close(&A);
    /* B's daemon is dead: its device is gone with it */
}

static Suite *mk(void)
{
    Suite *s = suite_create("roce_net");
    TCase *tc = tcase_create("ops");
    bool kill = getenv("RDN_TEST_KILL") && atoi(getenv("RDN_TEST_KILL"));

    tcase_set_timeout(tc, 120);
    if (kill) {
        tcase_add_checked_fixture(tc, kill_setup, kill_teardown);
        tcase_add_test(tc, peer_daemon_killed);
        suite_add_tcase(s, tc);
        return s;
    }
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, send_all_sizes);
    tcase_add_test(tc, write_all_sizes);
    tcase_add_test(tc, read_all_sizes);
    tcase_add_test(tc, pipelined_mix);
    tcase_add_test(tc, cas_once);
    if (!getenv("RDN_TEST_ROUNDS")) {
        tcase_add_test(tc, bad_rkey_is_remote_access_error);
        tcase_add_test(tc, send_without_rq_is_invalid_request);
        tcase_add_test(tc, send_too_long_is_invalid_request);
        tcase_add_test(tc, rnr_then_receive);
        tcase_add_test(tc, rnr_retry_exhausted);
        tcase_add_test(tc, peer_qp_destroyed_retry_exceeded);
        tcase_add_test(tc, same_daemon_in_memory);
        tcase_add_test(tc, set_gid_one_address);
        if (getenv("RDN_TEST_SOCK_W"))
            tcase_add_test(tc, set_gid_every_address);
    }
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return trun(mk, "1");
}
