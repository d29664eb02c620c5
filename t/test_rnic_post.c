/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_rnic_post.c - the provider-neutral posting path (rnic_post_send)
 * and the chain library on top of it, run on the device $RDN_TEST_DEVICE
 * (default "softnic-inproc"): every opcode with gather/scatter lists, sizes
 * from 1 byte to 1 MB, completions, rnic_cq_wait, remote access errors.
 * On a "verbs:" device (t/vm/verbs-rxe.sh runs it on rxe0 in a VM) it also
 * checks that what plain verbs cannot do fails with -EOPNOTSUPP and a
 * message naming the provider that can.
 *
 * Two RC QPs A and B of one device, connected to each other (on rxe: a
 * loopback over the VM's Soft-RoCE device).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mlx5.h"
#include "proto/byteorder.h"
#include "proto/item.h"
#include "rdn/chain/chain.h"
#include "rdn/librdn/nic_client.h"
#include "rdn/rnic/rnic.h"
#include "t/support/testutil.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

#define MEM_LEN (4u << 20)
#define SRC     0          /* requester's buffers */
#define DST     (2u << 20) /* responder's buffers */
#define BIG     (1u << 20) /* the largest transfer */
#define WAIT_MS 20000      /* rxe under TCG is slow; never a timing test */
#define RING    64

static const char *device(void)
{
    const char *d = getenv("RDN_TEST_DEVICE");

    return d && *d ? d : "softnic-inproc";
}

static bool on_verbs(void)
{
    return strncmp(device(), "verbs:", 6) == 0;
}

static struct rnic_device *dev;
static struct rnic_cq *scq, *rcq;
static struct rnic_qp *qa, *qb;
static uint8_t *mem;
static struct rnic_mr *mr;

static struct rnic_qp *make_qp(void)
{
    struct rnic_qp_init_attr a = {.send_cq = scq,
                                  .recv_cq = rcq,
                                  .sq_wqebb = RING,
                                  .rq_wqe = 16,
                                  .max_recv_sge = 4};
    struct rnic_qp *qp;

    ck_assert_msg(rnic_create_qp(dev, &a, &qp) == 0, "create_qp: %s",
                  rnic_errmsg());
    return qp;
}

static void connect_pair(struct rnic_qp *a, struct rnic_qp *b)
{
    struct rnic_addr aa, ba;

    ck_assert_int_eq(rnic_qp_addr(a, &aa), 0);
    ck_assert_int_eq(rnic_qp_addr(b, &ba), 0);
    ck_assert_msg(rnic_connect(a, &ba) == 0, "connect: %s", rnic_errmsg());
    ck_assert_msg(rnic_connect(b, &aa) == 0, "connect: %s", rnic_errmsg());
}

static void setup(void)
{
    void *p;

    ck_assert_msg(rnic_open(device(), NULL, &dev) == 0, "open %s: %s", device(),
                  rnic_errmsg());
    ck_assert_int_eq(rnic_create_cq(dev, 256, &scq), 0);
    ck_assert_int_eq(rnic_create_cq(dev, 256, &rcq), 0);
    ck_assert_int_eq(rnic_mem_alloc(dev, MEM_LEN, &p), 0);
    mem = p;
    ck_assert_msg(rnic_reg_mr(dev, mem, MEM_LEN, ALL_ACCESS, &mr) == 0,
                  "reg_mr: %s", rnic_errmsg());
    qa = make_qp();
    qb = make_qp();
    connect_pair(qa, qb);
}

static void teardown(void)
{
    rnic_close(dev); /* frees everything still open */
    dev = NULL;
}

static struct rnic_sge sge(uint32_t off, uint32_t len)
{
    return (struct rnic_sge){.addr = (uint64_t)(uintptr_t)(mem + off),
                             .length = len,
                             .lkey = mr->lkey};
}

static uint64_t at(uint32_t off)
{
    return (uint64_t)(uintptr_t)(mem + off);
}

/* One completion of cq within WAIT_MS (fails the test otherwise). */
static struct rnic_wc wait_wc(struct rnic_cq *cq)
{
    struct rnic_wc wc;

    for (int tries = 0; tries < 100; tries++) {
        int n = rnic_poll_cq(cq, 1, &wc);

        ck_assert_msg(n >= 0, "poll_cq: %s", rnic_errmsg());
        if (n == 1)
            return wc;
        ck_assert_int_ge(rnic_cq_wait(cq, WAIT_MS / 100), 0);
    }
    ck_abort_msg("no completion in %d ms", WAIT_MS);
    return wc;
}

/*
 * A send completion names its request by wr_id on a device without a raw
 * ring; a ring provider names it by ring index (wqe_counter) alone.
 */
static void check_id(const struct rnic_wc *wc, uint64_t wr_id)
{
    if (!on_verbs())
        return;
    ck_assert_uint_eq(wc->wr_id, wr_id);
    ck_assert_uint_eq(wc->wqe_counter, (uint16_t)wr_id);
}

static void post(struct rnic_qp *qp, struct rnic_send_wr *wr)
{
    ck_assert_msg(rnic_post_send(qp, wr) == 0, "post_send op 0x%02x: %s",
                  wr->opcode, rnic_errmsg());
}

/* Posts wr signaled and checks its completion. */
static struct rnic_wc run(struct rnic_qp *qp, struct rnic_send_wr *wr,
                          uint8_t want_opcode)
{
    struct rnic_wc wc;

    wr->flags |= MLX5_WQE_CTRL_CQ_UPDATE;
    post(qp, wr);
    wc = wait_wc(scq);
    ck_assert_msg(wc.status == RNIC_WC_SUCCESS, "op 0x%02x: %s", wr->opcode,
                  rnic_wc_status_str(wc.status));
    ck_assert_int_eq(wc.opcode, want_opcode);
    ck_assert_uint_eq(wc.qpn, rnic_qp_num(qp));
    return wc;
}

static void fill(uint32_t off, uint32_t len, uint8_t seed)
{
    for (uint32_t i = 0; i < len; i++)
        mem[off + i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

static void post_recv(struct rnic_qp *qp, const struct rnic_sge *s, unsigned n,
                      uint64_t wr_id)
{
    ck_assert_msg(rnic_post_recv(qp, s, n, wr_id) == 0, "post_recv: %s",
                  rnic_errmsg());
}

START_TEST(send_gather_scatter)
{
    /* 3 gather pieces on A, 2 scatter pieces on B, split differently. */
    struct rnic_sge g[3] = {sge(SRC, 100), sge(SRC + 1000, 1),
                            sge(SRC + 2000, 411)};
    struct rnic_sge s[2] = {sge(DST, 300), sge(DST + 5000, 300)};
    struct rnic_send_wr wr = {
        .wr_id = 0x1234, .opcode = MLX5_OPCODE_SEND, .sg = g, .nsg = 3};
    struct rnic_wc wc;
    uint8_t want[512];

    fill(SRC, 4096, 3);
    memcpy(want, mem + SRC, 100);
    want[100] = mem[SRC + 1000];
    memcpy(want + 101, mem + SRC + 2000, 411);
    post_recv(qb, s, 2, 77);
    wc = run(qa, &wr, RNIC_WC_SEND);
    check_id(&wc, 0x1234);
    wc = wait_wc(rcq);
    ck_assert_int_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(wc.opcode, RNIC_WC_RECV);
    ck_assert_uint_eq(wc.wr_id, 77);
    ck_assert_uint_eq(wc.byte_len, 512);
    ck_assert_uint_eq(wc.qpn, rnic_qp_num(qb));
    ck_assert(!(wc.flags & RNIC_WC_WITH_IMM));
    ck_assert(memcmp(mem + DST, want, 300) == 0);
    ck_assert(memcmp(mem + DST + 5000, want + 300, 212) == 0);
}
END_TEST

START_TEST(send_imm)
{
    struct rnic_sge g = sge(SRC, 8), s = sge(DST, 64);
    struct rnic_send_wr wr = {
        .opcode = MLX5_OPCODE_SEND_IMM, .sg = &g, .nsg = 1, .imm = 0xdeadbeef};
    struct rnic_wc wc;

    memcpy(mem + SRC, "imm-send", 8);
    post_recv(qb, &s, 1, 5);
    run(qa, &wr, RNIC_WC_SEND);
    wc = wait_wc(rcq);
    ck_assert_int_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(wc.opcode, RNIC_WC_RECV);
    ck_assert(wc.flags & RNIC_WC_WITH_IMM);
    ck_assert_uint_eq(wc.imm, 0xdeadbeef);
    ck_assert_uint_eq(wc.byte_len, 8);
    ck_assert(memcmp(mem + DST, "imm-send", 8) == 0);
}
END_TEST

/* WRITE of every size from 1 byte to 1 MB, exactly, nothing beyond. */
START_TEST(write_sizes)
{
    static const uint32_t sizes[] = {1, 7, 64, 4095, 4096, 65537, BIG};

    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        uint32_t n = sizes[k];
        struct rnic_sge g = sge(SRC, n);
        struct rnic_send_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE,
                                  .sg = &g,
                                  .nsg = 1,
                                  .raddr = at(DST),
                                  .rkey = mr->rkey};

        fill(SRC, n, (uint8_t)k);
        memset(mem + DST, 0xee, n + 16);
        run(qa, &wr, RNIC_WC_RDMA_WRITE);
        ck_assert_msg(memcmp(mem + DST, mem + SRC, n) == 0, "size %u", n);
        ck_assert_uint_eq(mem[DST + n], 0xee);
    }
}
END_TEST

START_TEST(write_imm)
{
    struct rnic_sge g[2] = {sge(SRC, 10), sge(SRC + 100, 6)};
    struct rnic_sge s = sge(DST + 9000, 8);
    struct rnic_send_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE_IMM,
                              .sg = g,
                              .nsg = 2,
                              .raddr = at(DST),
                              .rkey = mr->rkey,
                              .imm = 42};
    struct rnic_wc wc;

    fill(SRC, 200, 9);
    post_recv(qb, &s, 1, 99);
    run(qa, &wr, RNIC_WC_RDMA_WRITE);
    wc = wait_wc(rcq);
    ck_assert_int_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(wc.opcode, RNIC_WC_RECV_RDMA_IMM);
    ck_assert_uint_eq(wc.wr_id, 99);
    ck_assert(wc.flags & RNIC_WC_WITH_IMM);
    ck_assert_uint_eq(wc.imm, 42);
    ck_assert_uint_eq(wc.byte_len, 16);
    ck_assert(memcmp(mem + DST, mem + SRC, 10) == 0);
    ck_assert(memcmp(mem + DST + 10, mem + SRC + 100, 6) == 0);
}
END_TEST

START_TEST(read_scatter)
{
    struct rnic_sge s[3] = {sge(SRC, 1), sge(SRC + 64, 4096),
                            sge(SRC + 8192, BIG - 4097)};
    struct rnic_send_wr wr = {.opcode = MLX5_OPCODE_RDMA_READ,
                              .sg = s,
                              .nsg = 3,
                              .raddr = at(DST),
                              .rkey = mr->rkey};

    fill(DST, BIG, 77);
    memset(mem + SRC, 0, BIG + 8192);
    run(qa, &wr, RNIC_WC_RDMA_READ);
    ck_assert_uint_eq(mem[SRC], mem[DST]);
    ck_assert(memcmp(mem + SRC + 64, mem + DST + 1, 4096) == 0);
    ck_assert(memcmp(mem + SRC + 8192, mem + DST + 4097, BIG - 4097) == 0);
}
END_TEST

static uint64_t atomic(uint8_t op, uint64_t compare, uint64_t swap_add)
{
    struct rnic_sge res = sge(SRC + 512, 8);
    struct rnic_send_wr wr = {.opcode = op,
                              .sg = &res,
                              .nsg = 1,
                              .raddr = at(DST + 4096),
                              .rkey = mr->rkey,
                              .compare = compare,
                              .swap_add = swap_add};
    uint64_t old;

    memset(mem + SRC + 512, 0xaa, 8);
    run(qa, &wr,
        op == MLX5_OPCODE_ATOMIC_CS ? RNIC_WC_COMP_SWAP : RNIC_WC_FETCH_ADD);
    memcpy(&old, mem + SRC + 512, 8);
    return old;
}

/* Targets and results are host-endian on every provider. */
START_TEST(cas_fadd)
{
    uint64_t *t = (uint64_t *)(void *)(mem + DST + 4096);

    *t = 0x0102030405060708ull;
    ck_assert_uint_eq(atomic(MLX5_OPCODE_ATOMIC_CS, 0x0102030405060708ull,
                             0x1111222233334444ull),
                      0x0102030405060708ull);
    ck_assert_uint_eq(*t, 0x1111222233334444ull);
    /* A failing compare leaves the target and returns it. */
    ck_assert_uint_eq(atomic(MLX5_OPCODE_ATOMIC_CS, 5, 6),
                      0x1111222233334444ull);
    ck_assert_uint_eq(*t, 0x1111222233334444ull);
    ck_assert_uint_eq(atomic(MLX5_OPCODE_ATOMIC_FA, 0, 0x100000001ull),
                      0x1111222233334444ull);
    ck_assert_uint_eq(*t, 0x1111222333334445ull);
    *t = UINT64_MAX;
    ck_assert_uint_eq(atomic(MLX5_OPCODE_ATOMIC_FA, 0, 2), UINT64_MAX);
    ck_assert_uint_eq(*t, 1);
}
END_TEST

/* Unsignaled requests complete silently; a signaled one covers them. */
START_TEST(unsignaled_and_fence)
{
    struct rnic_sge g = sge(SRC, 8), r = sge(SRC + 64, 8);
    struct rnic_send_wr w = {.opcode = MLX5_OPCODE_RDMA_WRITE,
                             .sg = &g,
                             .nsg = 1,
                             .raddr = at(DST),
                             .rkey = mr->rkey,
                             .wr_id = 1};
    struct rnic_send_wr rd = {.opcode = MLX5_OPCODE_RDMA_READ,
                              .flags = MLX5_WQE_CTRL_FENCE,
                              .sg = &r,
                              .nsg = 1,
                              .raddr = at(DST),
                              .rkey = mr->rkey,
                              .wr_id = 2};
    struct rnic_wc wc;

    memcpy(mem + SRC, "fenced!!", 8);
    post(qa, &w);
    wc = run(qa, &rd, RNIC_WC_RDMA_READ);
    check_id(&wc, 2);
    ck_assert(memcmp(mem + SRC + 64, "fenced!!", 8) == 0);
    ck_assert_int_eq(rnic_poll_cq(scq, 1, &wc), 0);
}
END_TEST

/* A bad rkey: REM_ACCESS_ERR at the requester, both QPs in error. */
START_TEST(bad_rkey)
{
    struct rnic_sge g = sge(SRC, 8);
    struct rnic_send_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE,
                              .flags = MLX5_WQE_CTRL_CQ_UPDATE,
                              .sg = &g,
                              .nsg = 1,
                              .raddr = at(DST),
                              .rkey = mr->rkey ^ 0x5a5a00};
    struct rnic_wc wc;

    post(qa, &wr);
    wc = wait_wc(scq);
    ck_assert_msg(wc.status == RNIC_WC_REM_ACCESS_ERR, "status %s",
                  rnic_wc_status_str(wc.status));
    ck_assert_int_eq(rnic_qp_state(qa), RNIC_QPS_ERR);
    /* Later requests are flushed. */
    wr.wr_id = 9;
    post(qa, &wr);
    wc = wait_wc(scq);
    ck_assert_int_eq(wc.status, RNIC_WC_WR_FLUSH_ERR);
    check_id(&wc, 9);
}
END_TEST

/* A READ of memory registered without REMOTE_READ, and an MR's bounds. */
START_TEST(no_remote_read)
{
    struct rnic_mr *lw;
    struct rnic_sge s = sge(SRC, 8);
    struct rnic_send_wr wr = {.opcode = MLX5_OPCODE_RDMA_READ,
                              .flags = MLX5_WQE_CTRL_CQ_UPDATE,
                              .sg = &s,
                              .nsg = 1,
                              .raddr = at(DST)};
    struct rnic_wc wc;

    ck_assert_int_eq(
        rnic_reg_mr(dev, mem + DST, 4096,
                    RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE, &lw),
        0);
    wr.rkey = lw->rkey;
    post(qa, &wr);
    wc = wait_wc(scq);
    ck_assert_msg(wc.status == RNIC_WC_REM_ACCESS_ERR, "status %s",
                  rnic_wc_status_str(wc.status));
}
END_TEST

START_TEST(write_past_mr)
{
    struct rnic_mr *small;
    struct rnic_sge g = sge(SRC, 64);
    struct rnic_send_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE,
                              .flags = MLX5_WQE_CTRL_CQ_UPDATE,
                              .sg = &g,
                              .nsg = 1,
                              .raddr = at(DST + 4096 - 32)};
    struct rnic_wc wc;

    ck_assert_int_eq(rnic_reg_mr(dev, mem + DST, 4096, ALL_ACCESS, &small), 0);
    wr.rkey = small->rkey;
    post(qa, &wr);
    wc = wait_wc(scq);
    ck_assert_msg(wc.status == RNIC_WC_REM_ACCESS_ERR, "status %s",
                  rnic_wc_status_str(wc.status));
}
END_TEST

/* rnic_cq_wait: 0 on timeout, 1 with a completion that poll then gets. */
START_TEST(cq_wait)
{
    struct rnic_sge g = sge(SRC, 8);
    struct rnic_send_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE,
                              .flags = MLX5_WQE_CTRL_CQ_UPDATE,
                              .sg = &g,
                              .nsg = 1,
                              .raddr = at(DST),
                              .rkey = mr->rkey,
                              .wr_id = 31};
    struct rnic_wc wc[2];
    int rc = 0;

    ck_assert_int_eq(rnic_cq_wait(scq, 20), 0);
    post(qa, &wr);
    for (int i = 0; i < 100 && rc == 0; i++)
        rc = rnic_cq_wait(scq, WAIT_MS / 100);
    ck_assert_int_eq(rc, 1);
    ck_assert_int_eq(rnic_cq_wait(scq, 0), 1); /* still there */
    ck_assert_int_eq(rnic_poll_cq(scq, 2, wc), 1);
    check_id(&wc[0], 31);
    ck_assert_int_eq(rnic_poll_cq(scq, 2, wc), 0);
}
END_TEST

/* librdn's and the baselines' path: a chain_q without a raw ring. */
START_TEST(chain_queue)
{
    struct chain_q a, b;
    struct chain_q_attr at_ = {.sq_wqebb = 16, .rq_wqe = 8, .max_recv_sge = 1};
    struct chain_buf buf;
    struct chain_wqe w;
    struct chain_loc f;
    struct rnic_wc wc;
    struct rnic_sge s;

    ck_assert_msg(chain_q_open(dev, &at_, &a) == 0, "%s", chain_errmsg());
    ck_assert_msg(chain_q_open(dev, &at_, &b) == 0, "%s", chain_errmsg());
    ck_assert_msg(chain_q_connect(&a, &b) == 0, "%s", chain_errmsg());
    ck_assert_int_eq(chain_buf_open(dev, 8192, ALL_ACCESS, &buf), 0);
    memcpy(buf.ptr, "chain-read", 10);
    s = chain_loc_sge(chain_buf_loc(&buf, 4096, 10));
    for (uint32_t i = 0; i < 40; i++) { /* laps of the 16-WQEBB "ring" */
        memset(buf.ptr + 4096, 0, 10);
        ck_assert_msg(chain_read(&a, &s, 1, chain_buf_loc(&buf, 0, 10),
                                 CHAIN_SIGNALED, &w) == 0,
                      "%s", chain_errmsg());
        ck_assert_int_eq(chain_q_doorbell(&a), 0);
        ck_assert_int_eq(chain_cq_poll_wait(a.scq, &wc, WAIT_MS), 1);
        ck_assert_int_eq(wc.status, RNIC_WC_SUCCESS);
        ck_assert_uint_eq(wc.wqe_counter, (uint16_t)w.index);
        ck_assert(memcmp(buf.ptr + 4096, "chain-read", 10) == 0);
        chain_q_retire(&a, w.index + w.nbb);
    }
    /* SEND + receive through the chain queues. */
    s = chain_loc_sge(chain_buf_loc(&buf, 6000, 16));
    ck_assert_int_eq(chain_post_recv(&b, &s, 1, 3), 0);
    s = chain_loc_sge(chain_buf_loc(&buf, 0, 10));
    ck_assert_int_eq(chain_send_imm(&a, &s, 1, 7, CHAIN_SIGNALED, NULL), 0);
    ck_assert_int_eq(chain_q_doorbell(&a), 0);
    ck_assert_int_eq(chain_cq_poll_wait(b.rcq, &wc, WAIT_MS), 1);
    ck_assert_int_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.imm, 7);
    ck_assert(memcmp(buf.ptr + 6000, "chain-read", 10) == 0);
    /* Fields of a WQE exist only in a raw ring. */
    ck_assert_int_eq(chain_field(&w, CHAIN_F_RADDR, 0, &f) == 0, !on_verbs());
    chain_buf_close(&buf);
    chain_q_close(&a);
    chain_q_close(&b);
}
END_TEST

/*
 * librdn's NIC half (ofl_client) against a hand-written responder playing
 * the server's NIC: it receives each GET request and answers it as the
 * offloaded GET does, with one WRITE_IMM of the generation word and, on a
 * hit, the item into the request's slot. Hits of 1 KB and 1 MB, a miss.
 */
#define VAL_MAX BIG

static void answer(struct rnic_qp *srv, const struct rdn_hello *h,
                   const struct rdn_geometry *g, uint32_t req_id,
                   const char *key, uint32_t nbytes)
{
    struct rdn_item *it = (void *)(mem + SRC + RDN_RESP_ITEM_OFF);
    size_t len = RDN_RESP_ITEM_OFF;
    struct rnic_sge s;
    struct rnic_send_wr wr = {
        .opcode = MLX5_OPCODE_RDMA_WRITE_IMM,
        .sg = &s,
        .nsg = 1,
        .imm = req_id,
        .raddr =
            h->buf_addr + (uint64_t)(req_id & (h->depth - 1)) * h->slot_size,
        .rkey = h->buf_rkey};

    memcpy(mem + SRC + RDN_RESP_GEN_OFF, &g->gen_word, 8);
    if (key) {
        memset(it, 0, sizeof(*it));
        it->stamp = 1000 + req_id;
        it->nkey = (uint16_t)strlen(key);
        it->nbytes = nbytes;
        memcpy(rdn_item_key(it), key, it->nkey);
        fill((uint32_t)(rdn_item_value(it) - (char *)mem), nbytes,
             (uint8_t)req_id);
        *rdn_item_tail(it) = it->stamp;
        len += rdn_item_total_len(it->nkey, nbytes);
    }
    s = sge(SRC, (uint32_t)len);
    run(srv, &wr, RNIC_WC_RDMA_WRITE);
}

START_TEST(librdn_client)
{
    const struct rdn_geometry g = {
        .gen_word = 0x600d, .hashpower = 16, .item_size_max = VAL_MAX};
    static const struct {
        const char *key;
        uint32_t nbytes;
    } reqs[] = {{"k1", 1024}, {NULL, 0}, {"big", VAL_MAX}, {"k4", 1}};
    struct ofl_client c;
    struct rdn_hello h;
    struct rnic_addr sa;
    struct rnic_qp *srv = make_qp();
    struct rnic_sge rs = sge(DST, sizeof(struct rdn_get_req));

    ck_assert_msg(
        ofl_client_open(dev, 2, (uint32_t)rdn_resp_slot_size(VAL_MAX), &c) == 0,
        "ofl_client_open: %s", chain_errmsg());
    ck_assert_int_eq(ofl_client_hello(&c, &h), 0);
    ck_assert_int_eq(rnic_qp_addr(srv, &sa), 0);
    ck_assert_int_eq(rnic_connect(srv, (const struct rnic_addr *)h.qp_addr), 0);
    /* Made-up numbers: each lap word is first + step * n. */
    for (unsigned f = 0; f < RDN_LAP_WORDS; f++) {
        c.plan.first[f] = 16 + 1000 * f;
        c.plan.step[f] = 1 + 3 * f;
    }
    c.plan.first[RDN_LAP_WORDS - 1] = UINT32_MAX; /* wraps modulo 2^32 */
    ck_assert_int_eq(ofl_client_connect(&c, sa.bytes), 0);
    for (uint32_t i = 0; i < 4; i++) {
        const char *key = reqs[i].key ? reqs[i].key : "absent";
        struct rdn_keyhash kh;
        const struct rdn_get_req *r = (const void *)(mem + DST);
        const struct rdn_item *it;
        struct rnic_wc wc;
        uint64_t n;

        rdn_keyhash(key, strlen(key), g.hashpower, &kh);
        post_recv(srv, &rs, 1, i);
        ck_assert_int_eq(ofl_client_send(&c, &g, &kh), (int64_t)i);
        wc = wait_wc(rcq);
        ck_assert_int_eq(wc.status, RNIC_WC_SUCCESS);
        ck_assert_uint_eq(wc.byte_len, sizeof(*r));
        ck_assert_uint_eq(be32_to_cpu(r->req_id), i);
        for (unsigned f = 0; f < RDN_LAP_WORDS; f++)
            ck_assert_uint_eq(be32_to_cpu(r->lap[f]),
                              (uint32_t)(c.plan.first[f] + c.plan.step[f] * i));
        answer(srv, &h, &g, i, reqs[i].key, reqs[i].nbytes);
        ck_assert_int_eq(ofl_client_wait(&c, WAIT_MS, &n), 1);
        ck_assert_uint_eq(n, i);
        if (!reqs[i].key) {
            ck_assert_int_eq(
                ofl_client_judge(&c, n, &g, key, strlen(key), 0, &it),
                OFL_MISS);
            continue;
        }
        ck_assert_int_eq(ofl_client_judge(&c, n, &g, key, strlen(key), 0, &it),
                         OFL_HIT);
        ck_assert_uint_eq(it->nbytes, reqs[i].nbytes);
        ck_assert(memcmp(rdn_item_value((struct rdn_item *)it),
                         rdn_item_value(
                             (struct rdn_item *)(void *)(mem + SRC +
                                                         RDN_RESP_ITEM_OFF)),
                         it->nbytes) == 0);
    }
    ofl_client_close(&c);
}
END_TEST

/* What plain verbs cannot do: -EOPNOTSUPP, naming who can. */
START_TEST(verbs_refusals)
{
    struct rnic_qp_init_attr xa = {
        .send_cq = scq, .sq_wqebb = 16, .flags = RNIC_QP_CROSS_CHANNEL};
    struct rnic_cq_init_attr ca = {.depth = 16,
                                   .flags = RNIC_CQ_IGNORE_OVERRUN};
    struct rnic_send_wr wait = {
        .opcode = MLX5_OPCODE_WAIT, .index = 1, .obj = 1};
    struct rnic_send_wr en = {
        .opcode = MLX5_OPCODE_SEND_EN, .index = 1, .obj = 1};
    struct rnic_qp *qp;
    struct rnic_cq *cq;
    struct rnic_sq sq;
    void *o;

    ck_assert_int_eq(rnic_create_qp(dev, &xa, &qp), -EOPNOTSUPP);
    ck_assert_ptr_nonnull(strstr(rnic_errmsg(), "mlx5"));
    xa.flags = RNIC_QP_MANAGED_SEND;
    ck_assert_int_eq(rnic_create_qp(dev, &xa, &qp), -EOPNOTSUPP);
    ck_assert_int_eq(rnic_create_cq_ex(dev, &ca, &cq), -EOPNOTSUPP);
    ck_assert_ptr_nonnull(strstr(rnic_errmsg(), "mlx5"));
    ck_assert_int_eq(rnic_post_send(qa, &wait), -EOPNOTSUPP);
    ck_assert_ptr_nonnull(strstr(rnic_errmsg(), "softnic"));
    ck_assert_int_eq(rnic_post_send(qa, &en), -EOPNOTSUPP);
    ck_assert_int_eq(rnic_qp_sq(qa, &sq), -EOPNOTSUPP);
    ck_assert_ptr_nonnull(strstr(rnic_errmsg(), "softnic"));
    ck_assert_int_eq(rnic_ring_doorbell(qa, 1), -EOPNOTSUPP);
    ck_assert_ptr_null(rnic_qp_rq_doorbell(qa));
    ck_assert_int_eq(rnic_persist(dev, RNIC_OBJ_CQ, scq, "x"), -EOPNOTSUPP);
    ck_assert_int_eq(rnic_attach(dev, RNIC_OBJ_CQ, "x", &o), -EOPNOTSUPP);
    /* The QP still works after the refusals. */
    ck_assert_int_eq(rnic_qp_state(qa), RNIC_QPS_RTS);
}
END_TEST

/* Device names and options the verbs provider refuses. */
START_TEST(verbs_open)
{
    struct rnic_open_opts o = {.domain = "d"};
    struct rnic_device *d2;

    ck_assert_str_eq(rnic_device_name(dev), device());
    ck_assert_int_eq(rnic_open("verbs:nosuch0", NULL, &d2), -ENODEV);
    ck_assert_ptr_nonnull(strstr(rnic_errmsg(), "nosuch0"));
    ck_assert_int_eq(rnic_open("verbs:", NULL, &d2), -EINVAL);
    ck_assert_int_eq(rnic_open(device(), &o, &d2), -EOPNOTSUPP);
    /* A second handle on the same device works beside the first. */
    ck_assert_int_eq(rnic_open(device(), NULL, &d2), 0);
    rnic_close(d2);
}
END_TEST

/* Neither softnic nor verbs reads NIC capabilities: nothing to report. */
START_TEST(device_caps)
{
    char buf[64] = "x";

    ck_assert_int_eq(rnic_device_caps(dev, buf, sizeof(buf)), -EOPNOTSUPP);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(rnic_device_caps(NULL, buf, sizeof(buf)), -EINVAL);
    ck_assert_int_eq(rnic_device_caps(dev, buf, 0), -EINVAL);
}
END_TEST

/* Malformed requests, on every provider. */
START_TEST(bad_requests)
{
    struct rnic_sge g = sge(SRC, 8);
    struct rnic_send_wr wr = {.opcode = 0x42, .sg = &g, .nsg = 1};

    ck_assert_int_eq(rnic_post_send(qa, &wr), -EINVAL);
    wr.opcode = MLX5_OPCODE_ATOMIC_CS;
    wr.raddr = at(DST + 4);
    ck_assert_int_eq(rnic_post_send(qa, &wr), -EINVAL); /* unaligned */
    wr.raddr = at(DST);
    g.length = 4;
    ck_assert_int_eq(rnic_post_send(qa, &wr), -EINVAL); /* 4-byte result */
    wr.opcode = MLX5_OPCODE_SEND;
    wr.nsg = RNIC_SEND_MAX_SGE + 1;
    ck_assert_int_eq(rnic_post_send(qa, &wr), -EINVAL);
    ck_assert_int_eq(rnic_post_send(NULL, &wr), -EINVAL);
    ck_assert_int_eq(rnic_qp_state(qa), RNIC_QPS_RTS);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rnic_post");
    TCase *tc = tcase_create("post");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, send_gather_scatter);
    tcase_add_test(tc, send_imm);
    tcase_add_test(tc, write_sizes);
    tcase_add_test(tc, write_imm);
    tcase_add_test(tc, read_scatter);
    tcase_add_test(tc, cas_fadd);
    tcase_add_test(tc, unsignaled_and_fence);
    tcase_add_test(tc, bad_rkey);
    tcase_add_test(tc, no_remote_read);
    tcase_add_test(tc, write_past_mr);
    tcase_add_test(tc, cq_wait);
    tcase_add_test(tc, chain_queue);
    tcase_add_test(tc, librdn_client);
    tcase_add_test(tc, bad_requests);
    tcase_add_test(tc, device_caps);
    if (on_verbs()) {
        tcase_add_test(tc, verbs_refusals);
        tcase_add_test(tc, verbs_open);
    }
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
