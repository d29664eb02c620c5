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
 * data; RDN_TEST_LOSSY=1 (a link that loses packets) gives them longer to
 * complete; RDN_TEST_MIN_RTT_MS (under the delay fault) adds a WRITE whose
 * round trip must take at least that long. RDN_TEST_KILL=1 runs only the
 * peer-death test (the script kills daemon B when told through
 * RDN_TEST_KILL_FIFO). RDN_TEST_FLOOD=1 runs only the forged-SEND test:
 * it writes the QPNs and expected PSNs of its two target QPs to the fifo
 * RDN_TEST_FLOOD_OUT, the script floods them (t/roce_hostile.py --flood)
 * and writes a line to RDN_TEST_FLOOD_IN.
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
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
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

/*
 * How many times longer than on a clean link the data tests wait for their
 * completions: t/roce_net.sh sets RDN_TEST_LOSSY where the link loses
 * packets. A loss that no later packet reveals (the message's last one, a
 * NAK, the retransmission a NAK asked for) costs an ACK timeout, 1.07 s
 * here, and a MiB of 1024 packets meets about 50 losses at 5%: a run of
 * the data tests took 14 to 29 s and 13 to 27 timeouts, a few of them in
 * one operation.
 */
static int slack(void)
{
    const char *l = getenv("RDN_TEST_LOSSY");

    return l && atoi(l) ? 4 : 1;
}

/* One completion on cq within 3 * TMS (times slack()), with status st;
 * returns it. */
static struct rnic_wc one(struct rnic_cq *cq, int st)
{
    struct rnic_wc wc;

    ck_assert_msg(tpoll(cq, &wc, 1, 3 * TMS * slack()) == 1, "no completion");
    ck_assert_msg(wc.status == st, "status %s, want %s",
                  rnic_wc_status_str(wc.status), rnic_wc_status_str(st));
    return wc;
}

/* A 10-byte WRITE from A to B on c (a bystander pair) succeeds. */
static void bystander_writes(struct tq *c)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)B.mem, B.mr->rkey);
    tw_data(&w, 10, A.mr->lkey, A.mem);
    tq_post(c, &w);
    tq_ring(c);
    one(A.scq, RNIC_WC_SUCCESS);
}

/* Posts and rings a SEND of len bytes from A's memory on q. */
static void send_a(struct tq *q, uint32_t len)
{
    struct tw w;

    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, len, A.mr->lkey, A.mem);
    tq_post(q, &w);
    tq_ring(q);
}

static const uint32_t sizes[] = {0,    1,    255,   256,   1023,   1024,
                                 1025, 4096, 12345, 65536, 262144, BIG};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---- every opcode at every size ---------------------------------------- */

/*
 * One data operation at every size, every other one with immediate data
 * where the opcode has a form with it: the completions, the bytes moved,
 * and the byte after them left alone.
 */
struct xfer {
    uint8_t opcode, opcode_imm; /* opcode_imm 0: no form with immediate */
    bool remote;                /* has a remote address (WRITE, READ) */
    bool to_a;                  /* the data goes from B to A (READ) */
    bool recv_each;             /* every one takes a receive (SEND) */
    enum rnic_wc_opcode wc_op, wc_recv_op;
    uint32_t imm_base, wr_id_base;
    unsigned seed; /* fill pattern step per round */
};

static const struct xfer SEND_X = {
    .opcode = MLX5_OPCODE_SEND,
    .opcode_imm = MLX5_OPCODE_SEND_IMM,
    .recv_each = true,
    .wc_op = RNIC_WC_SEND,
    .wc_recv_op = RNIC_WC_RECV,
    .imm_base = 0x12345600,
    .wr_id_base = 100,
    .seed = 1,
};
static const struct xfer WRITE_X = {
    .opcode = MLX5_OPCODE_RDMA_WRITE,
    .opcode_imm = MLX5_OPCODE_RDMA_WRITE_IMM,
    .remote = true,
    .wc_op = RNIC_WC_RDMA_WRITE,
    .wc_recv_op = RNIC_WC_RECV_RDMA_IMM,
    .imm_base = 0xabc000,
    .wr_id_base = 200,
    .seed = 3,
};
static const struct xfer READ_X = {
    .opcode = MLX5_OPCODE_RDMA_READ,
    .remote = true,
    .to_a = true,
    .wc_op = RNIC_WC_RDMA_READ,
    .seed = 5,
};

static void all_sizes(const struct xfer *x)
{
    struct tdev *from = x->to_a ? &B : &A, *to = x->to_a ? &A : &B;
    uint8_t *dst = to->mem + BIG * 2;
    struct tq a, b;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, x->opcode_imm || x->recv_each ? 64 : 0, 7, 7);
    tq_connect(&a, &b);
    for (int r = 0; r < rounds(); r++)
        for (unsigned i = 0; i < NSIZES; i++) {
            uint32_t n = sizes[i];
            bool imm = x->opcode_imm && (i & 1);
            /* a SEND lands in its receive; a WRITE's takes no data */
            struct rnic_sge sge = {(uintptr_t)dst, x->recv_each ? BIG * 2 : 0,
                                   B.mr->lkey};
            struct tw w;
            struct rnic_wc wc;

            fill(from->mem, n, i + x->seed * r);
            memset(dst, 0xee, n + 16);
            if (x->recv_each || imm)
                ck_assert_int_eq(
                    rnic_post_recv(b.qp, &sge, 1, x->wr_id_base + i), 0);
            tw_ctrl(&w, imm ? x->opcode_imm : x->opcode,
                    MLX5_WQE_CTRL_CQ_UPDATE);
            tw_imm(&w, x->imm_base + i);
            if (x->remote)
                tw_raddr(&w, (uintptr_t)(x->to_a ? from->mem : dst),
                         B.mr->rkey);
            data(&w, n, A.mr->lkey, x->to_a ? dst : A.mem);
            tq_post(&a, &w);
            tq_ring(&a);
            wc = one(A.scq, RNIC_WC_SUCCESS);
            ck_assert_int_eq(wc.opcode, x->wc_op);
            if (x->recv_each || imm) {
                wc = one(B.rcq, RNIC_WC_SUCCESS);
                ck_assert_int_eq(wc.opcode, x->wc_recv_op);
                ck_assert_int_eq(wc.wr_id, x->wr_id_base + i);
                ck_assert_int_eq(wc.byte_len, n);
                ck_assert_int_eq(!!(wc.flags & RNIC_WC_WITH_IMM), imm);
                if (imm)
                    ck_assert_uint_eq(wc.imm, x->imm_base + i);
            }
            ck_assert_msg(memcmp(from->mem, dst, n) == 0,
                          "opcode %#x, %u bytes: data differs", x->opcode, n);
            ck_assert_int_eq(dst[n], 0xee);
        }
    ck_assert_int_eq(tquiet(A.scq, 50) + tquiet(B.rcq, 0), 0);
}

START_TEST(send_all_sizes)
{
    all_sizes(&SEND_X);
}
END_TEST

START_TEST(write_all_sizes)
{
    all_sizes(&WRITE_X);
}
END_TEST

START_TEST(read_all_sizes)
{
    all_sizes(&READ_X);
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
        got = tpoll(A.scq, wc, N, 6 * TMS * slack());
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

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 4, 7, 7);
    tq_connect(&a, &b);
    ck_assert_int_eq(rnic_post_recv(b.qp, &sge, 1, 1), 0);
    send_a(&a, 3000);
    one(A.scq, RNIC_WC_REM_INV_REQ_ERR);
    one(B.rcq, RNIC_WC_LOC_LEN_ERR);
}
END_TEST

/*
 * A receive into memory registered without local write: the responder
 * cannot place the SEND, which is a remote operational error NAK for the
 * requester and a protection error for the receive; other QPs go on.
 */
START_TEST(receive_into_readonly_is_remote_op_error)
{
    struct tq a, b, c, d;
    struct rnic_mr *ro;
    struct rnic_sge sge = {(uintptr_t)B.mem + BIG * 3, 4096, 0};

    ck_assert_int_eq(
        rnic_reg_mr(B.dev, B.mem + BIG * 3, 4096, RNIC_ACCESS_REMOTE_READ, &ro),
        0);
    sge.lkey = ro->lkey;
    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 4, 7, 7);
    tq_connect(&a, &b);
    bystander_pair(&c, &d, &B);
    ck_assert_int_eq(rnic_post_recv(b.qp, &sge, 1, 3), 0);
    send_a(&a, 1000);
    one(A.scq, RNIC_WC_REM_OP_ERR);
    one(B.rcq, RNIC_WC_LOC_PROT_ERR);
    ck_assert_int_eq(rnic_qp_state(a.qp), RNIC_QPS_ERR);
    bystander_writes(&c);
    ck_assert_int_eq(rnic_dereg_mr(ro), 0);
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
    bystander_writes(&c);
}
END_TEST

/* A RoCE counter of the daemon on sock (rdn-nicd --status). */
static uint64_t counter(const char *sock, const char *name)
{
    const char *nicd = getenv("RDN_TEST_NICD");
    char cmd[512], word[64];
    unsigned long long v = 0;
    bool next = false;
    FILE *f;

    ck_assert_msg(nicd, "RDN_TEST_NICD not set (run t/roce_net.sh)");
    snprintf(cmd, sizeof(cmd), "%s -s %s --status", nicd, sock);
    f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    while (fscanf(f, "%63s", word) == 1) {
        if (next) {
            v = strtoull(word, NULL, 10);
            break;
        }
        next = strcmp(word, name) == 0;
    }
    pclose(f);
    ck_assert_msg(next, "no counter %s", name);
    return v;
}

/*
 * Two receives for ten SENDs: the responder's ACKs say it has no more, so
 * the requester holds the rest and sends only one at a time to find out
 * when receives come (each RNR round resends one message, not the eight
 * behind it); once receives are posted, all ten complete in order.
 */
START_TEST(credits_hold_sends)
{
    enum { N = 10, LEN = 9000 };
    const char *sa = getenv("RDN_TEST_SOCK_A");
    struct tq a, b;
    struct rnic_wc wc[N];
    uint64_t rnr0, re0, held0, rnr, re;
    uint32_t npkt;
    struct rnic_addr ab;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 64, 7, 7);
    tq_connect(&a, &b);
    ck_assert_int_eq(rnic_qp_addr(b.qp, &ab), 0);
    npkt = (LEN + rnic_mtu_bytes(ab.mtu) - 1) / rnic_mtu_bytes(ab.mtu);
    for (int i = 0; i < 2; i++) {
        struct rnic_sge sge = {(uintptr_t)B.mem + i * 16384ull, LEN,
                               B.mr->lkey};

        ck_assert_int_eq(rnic_post_recv(b.qp, &sge, 1, i), 0);
    }
    rnr0 = counter(sa, "rnr_naks_rx");
    re0 = counter(sa, "retrans");
    held0 = counter(sa, "credit_waits");
    fill(A.mem, N * 16384, 77);
    for (int i = 0; i < N; i++) {
        struct tw w;

        tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
        tw_data(&w, LEN, A.mr->lkey, A.mem + i * 16384ull);
        tq_post(&a, &w);
    }
    tq_ring(&a);
    ck_assert_int_eq(tpoll(A.scq, wc, 2, 3 * TMS), 2);
    ck_assert_int_eq(tquiet(A.scq, 300), 0);
    re = counter(sa, "retrans") - re0; /* first: rnr then counts them all */
    rnr = counter(sa, "rnr_naks_rx") - rnr0;
    ck_assert_uint_gt(rnr, 0);
    ck_assert_msg(re <= (rnr + 1) * npkt,
                  "%llu packets resent for %llu RNR NAKs (%u per SEND)",
                  (unsigned long long)re, (unsigned long long)rnr, npkt);
    ck_assert_uint_gt(counter(sa, "credit_waits"), held0);
    for (int i = 2; i < N; i++) {
        struct rnic_sge sge = {(uintptr_t)B.mem + i * 16384ull, LEN,
                               B.mr->lkey};

        ck_assert_int_eq(rnic_post_recv(b.qp, &sge, 1, i), 0);
    }
    ck_assert_int_eq(tpoll(A.scq, wc + 2, N - 2, 3 * TMS), N - 2);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(wc[i].status, RNIC_WC_SUCCESS);
        ck_assert_int_eq(wc[i].wqe_counter, (uint16_t)(a.pi - N + i));
    }
    ck_assert_int_eq(tpoll(B.rcq, wc, N, 3 * TMS), N);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(wc[i].status, RNIC_WC_SUCCESS);
        ck_assert_int_eq(wc[i].wr_id, i);
        ck_assert(memcmp(A.mem + i * 16384ull, B.mem + i * 16384ull, LEN) == 0);
    }
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

/*
 * Under RDN_NICD_ROCE_FAULTS=delay=MS both daemons hold every packet they
 * receive MS ms, so a WRITE, which completes on its ACK, takes at least
 * RDN_TEST_MIN_RTT_MS = 2 * MS from the doorbell to its completion (more
 * when a loss makes it resend). A lower bound the test sets itself, to
 * show the delay is applied; no speed is asserted.
 */
START_TEST(round_trip_shows_delay)
{
    long min_ms = atol(getenv("RDN_TEST_MIN_RTT_MS"));
    struct tq a, b;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 0, 7, 7);
    tq_connect(&a, &b);
    for (int i = 0; i < 5; i++) {
        struct timespec t0, t1;
        struct tw w;
        double ms;

        tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
        tw_raddr(&w, (uintptr_t)B.mem, B.mr->rkey);
        tw_data(&w, 8, A.mr->lkey, A.mem);
        tq_post(&a, &w);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        tq_ring(&a);
        one(A.scq, RNIC_WC_SUCCESS);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
             (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        ck_assert_msg(ms >= (double)min_ms,
                      "WRITE %d: round trip %.3f ms, under the %ld ms the "
                      "delay adds",
                      i, ms, min_ms);
    }
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
    struct rnic_addr ad, aa, ab;
    uint8_t gid[16];
    struct tq a, b;

    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 0, 7, 7);
    /* the daemons' addresses (IPv4 or IPv6, whichever they listen on) */
    ck_assert_int_eq(rnic_qp_addr(a.qp, &aa), 0);
    ck_assert_int_eq(rnic_qp_addr(b.qp, &ab), 0);
    ck_assert_int_eq(rnic_qp_set_gid(a.qp, ab.gid), -EADDRNOTAVAIL);
    memset(gid, 0, sizeof(gid)); /* nobody's */
    ck_assert_int_eq(rnic_qp_set_gid(a.qp, gid), -EADDRNOTAVAIL);
    memcpy(gid, aa.gid, sizeof(gid));
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

/* True once nothing accepts on the daemon's Unix socket (it died). */
static bool daemon_gone(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    bool gone;

    ck_assert_int_ge(fd, 0);
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    gone = connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 &&
           (errno == ECONNREFUSED || errno == ENOENT);
    close(fd);
    return gone;
}

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
    /* the script kills daemon B: wait (bounded) until it is gone */
    for (int ms = 0; !daemon_gone(getenv("RDN_TEST_SOCK_B")); ms += 10) {
        ck_assert_msg(ms < 3 * TMS, "daemon B still answers");
        usleep(10000);
    }
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

/* ---- a forged SEND that never ends -------------------------------------- */

static uint32_t addr_u32(be32 v)
{
    return be32_to_cpu(v);
}

/*
 * The script forges one endless SEND into b (a 4 KiB receive posted) and
 * one into b2 (a receive queue, nothing posted), from A's address and at
 * the PSNs B expects. b runs out of receive: a local length error for the
 * receive, the QP in error; b2 answers with an RNR NAK and stays usable;
 * every other QP is untouched. (The script checks B's memory.)
 */
START_TEST(forged_endless_send)
{
    const char *out = getenv("RDN_TEST_FLOOD_OUT");
    const char *in = getenv("RDN_TEST_FLOOD_IN");
    struct rnic_sge sge = {(uintptr_t)B.mem, 4096, B.mr->lkey};
    struct rnic_sge sge2 = {(uintptr_t)B.mem + BIG, 8192, B.mr->lkey};
    struct rnic_addr aa, ab, aa2, ab2;
    struct tq a, b, a2, b2, c, d;
    struct tw w;
    char line[16];
    FILE *f;

    ck_assert_msg(out && in, "RDN_TEST_FLOOD_OUT / _IN not set");
    qp_make(&a, &A, 0, 7, 7);
    qp_make(&b, &B, 4, 7, 7);
    tq_connect(&a, &b);
    qp_make(&a2, &A, 0, 7, 7);
    qp_make(&b2, &B, 4, 7, 7);
    tq_connect(&a2, &b2);
    bystander_pair(&c, &d, &B);
    ck_assert_int_eq(rnic_post_recv(b.qp, &sge, 1, 1), 0);
    ck_assert_int_eq(rnic_qp_addr(a.qp, &aa), 0);
    ck_assert_int_eq(rnic_qp_addr(b.qp, &ab), 0);
    ck_assert_int_eq(rnic_qp_addr(a2.qp, &aa2), 0);
    ck_assert_int_eq(rnic_qp_addr(b2.qp, &ab2), 0);
    f = fopen(out, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%#x %#x %#x %#x\n", addr_u32(ab.qpn), addr_u32(aa.psn),
            addr_u32(ab2.qpn), addr_u32(aa2.psn));
    fclose(f);
    f = fopen(in, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    fclose(f);

    one(B.rcq, RNIC_WC_LOC_LEN_ERR);
    ck_assert_int_eq(rnic_qp_state(b.qp), RNIC_QPS_ERR);
    ck_assert_int_eq(rnic_qp_state(b2.qp), RNIC_QPS_RTS);
    /* The real requester's SEND into b2 goes through. */
    fill(A.mem, 5000, 3);
    ck_assert_int_eq(rnic_post_recv(b2.qp, &sge2, 1, 2), 0);
    send_a(&a2, 5000);
    one(A.scq, RNIC_WC_SUCCESS);
    ck_assert_int_eq(one(B.rcq, RNIC_WC_SUCCESS).byte_len, 5000);
    ck_assert(memcmp(A.mem, B.mem + BIG, 5000) == 0);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)B.mem + 2 * BIG, B.mr->rkey);
    tw_data(&w, 3000, A.mr->lkey, A.mem);
    tq_post(&c, &w);
    tq_ring(&c);
    one(A.scq, RNIC_WC_SUCCESS);
    ck_assert(memcmp(A.mem, B.mem + 2 * BIG, 3000) == 0);
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
    bool flood = getenv("RDN_TEST_FLOOD") && atoi(getenv("RDN_TEST_FLOOD"));

    tcase_set_timeout(tc, 120);
    if (kill) {
        tcase_add_checked_fixture(tc, kill_setup, kill_teardown);
        tcase_add_test(tc, peer_daemon_killed);
        suite_add_tcase(s, tc);
        return s;
    }
    tcase_add_checked_fixture(tc, setup, teardown);
    if (flood) {
        tcase_add_test(tc, forged_endless_send);
        suite_add_tcase(s, tc);
        return s;
    }
    tcase_add_test(tc, send_all_sizes);
    tcase_add_test(tc, write_all_sizes);
    tcase_add_test(tc, read_all_sizes);
    tcase_add_test(tc, pipelined_mix);
    tcase_add_test(tc, cas_once);
    if (getenv("RDN_TEST_MIN_RTT_MS"))
        tcase_add_test(tc, round_trip_shows_delay);
    if (!getenv("RDN_TEST_ROUNDS")) {
        tcase_add_test(tc, bad_rkey_is_remote_access_error);
        tcase_add_test(tc, send_without_rq_is_invalid_request);
        tcase_add_test(tc, send_too_long_is_invalid_request);
        tcase_add_test(tc, receive_into_readonly_is_remote_op_error);
        tcase_add_test(tc, rnr_then_receive);
        tcase_add_test(tc, rnr_retry_exhausted);
        tcase_add_test(tc, credits_hold_sends);
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
