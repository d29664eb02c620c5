/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_micro.c - `rdn-bench micro`: the NIC's own numbers.
 *   - READ, WRITE and CAS round trips from one QP to another (8 B..64 KB);
 *   - WQE throughput of one engine thread (NOPs and 64-byte WRITEs);
 *   - chains: bench/bench_micro_chain.c (Figure 7 and Table 3 of RedN).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_micro.h"
#include "proto/barrier.h"

#define BUF_BYTES (64 * 1024 + 4096)

int bm_queue(struct bench_ctx *c, unsigned flags, uint32_t sq, uint32_t rq,
             struct chain_q *peer, struct chain_q *out)
{
    struct chain_q_attr a = {.sq_wqebb = sq,
                             .rq_wqe = rq,
                             .flags = flags,
                             .cq_depth = 8192,
                             .cq_flags = RNIC_CQ_IGNORE_OVERRUN};
    int rc = chain_q_open(c->dev, &a, out);

    if (rc == 0 && peer != BM_NO_PEER)
        rc = chain_q_connect(out, peer ? peer : out);
    if (rc < 0)
        fprintf(stderr, "rdn-bench: %s\n", chain_errmsg());
    return rc;
}

int bm_buf(struct bench_ctx *c, size_t len, struct chain_buf *out)
{
    int rc =
        chain_buf_open(c->dev, len,
                       RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |
                           RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC,
                       out);

    if (rc < 0)
        fprintf(stderr, "rdn-bench: %s\n", chain_errmsg());
    return rc;
}

int bm_poll(struct chain_cq *cq, unsigned n, struct rnic_wc *last)
{
    uint64_t deadline = bench_now_ns() + 30ull * 1000000000ull;
    struct rnic_wc wc[16];

    while (n) {
        int got = rnic_poll_cq(cq->cq, n < 16 ? (int)n : 16, wc);

        if (got < 0) {
            fprintf(stderr, "rdn-bench: poll: %s\n", rnic_errmsg());
            return got;
        }
        for (int i = 0; i < got; i++) {
            if (wc[i].status != RNIC_WC_SUCCESS) {
                fprintf(stderr, "rdn-bench: completion error %s\n",
                        rnic_wc_status_str(wc[i].status));
                return -1;
            }
            if (last)
                *last = wc[i];
        }
        n -= (unsigned)got;
        if (got == 0 && bench_now_ns() > deadline) {
            fprintf(stderr, "rdn-bench: a completion never came\n");
            return -1;
        }
    }
    return 0;
}

uint64_t bm_wait_u64(const void *p, uint64_t v)
{
    uint64_t deadline = bench_now_ns() + 30ull * 1000000000ull;

    while (load_acquire((const uint64_t *)p) < v)
        if (bench_now_ns() > deadline)
            return 0;
    return bench_now_ns();
}

/* ---- verb round trips ------------------------------------------------- */

struct verbs {
    struct chain_q a, b;
    struct chain_buf la, lb;
};

/* Posts one signaled op of size bytes from a to b. */
static int post_op(struct verbs *v, uint8_t op, uint32_t size)
{
    struct rnic_sge l = chain_loc_sge(chain_buf_loc(&v->la, 0, size));
    struct chain_loc r = chain_buf_loc(&v->lb, 0, size);

    switch (op) {
    case MLX5_OPCODE_RDMA_READ:
        return chain_read(&v->a, &l, 1, r, CHAIN_SIGNALED, NULL);
    case MLX5_OPCODE_RDMA_WRITE:
        return chain_write(&v->a, &l, 1, r, CHAIN_SIGNALED, NULL);
    default:
        return chain_cas(&v->a, r, 0, 0, &l, CHAIN_SIGNALED, NULL);
    }
}

static int verb_latency(struct bench_ctx *c, struct verbs *v, uint8_t op,
                        uint32_t size, struct bench_samples *s)
{
    unsigned warm = c->o.iters / 10 + 10;

    for (unsigned i = 0; i < warm + c->o.iters; i++) {
        uint64_t t0;

        if (post_op(v, op, size) < 0) /* posted before the clock starts */
            return -1;
        t0 = bench_now_ns();
        if (chain_q_doorbell(&v->a) < 0 || bm_poll(v->a.scq, 1, NULL) < 0)
            return -1;
        if (i >= warm)
            bench_samples_add(s, bench_now_ns() - t0);
        chain_q_retire(&v->a, v->a.pi);
    }
    return 0;
}

static int verbs(struct bench_ctx *c)
{
    static const uint32_t sizes[] = {8, 64, 1024, 4096, 65536};
    static const struct {
        const char *name;
        uint8_t op;
    } ops[] = {{"read", MLX5_OPCODE_RDMA_READ},
               {"write", MLX5_OPCODE_RDMA_WRITE},
               {"cas", MLX5_OPCODE_ATOMIC_CS}};
    struct bench_samples s = {0};
    struct verbs v;
    int rc;

    memset(&v, 0, sizeof(v));
    rc = bm_queue(c, 0, 64, 0, BM_NO_PEER, &v.a);
    if (rc == 0)
        rc = bm_queue(c, 0, 64, 0, &v.a, &v.b);
    if (rc == 0)
        rc = bm_buf(c, BUF_BYTES, &v.la);
    if (rc == 0)
        rc = bm_buf(c, BUF_BYTES, &v.lb);
    bench_note(c, "round trip of one signaled verb, QP to QP, doorbell to "
                  "polled completion");
    for (size_t o = 0; rc == 0 && o < sizeof(ops) / sizeof(ops[0]); o++) {
        for (size_t z = 0; rc == 0 && z < sizeof(sizes) / sizeof(sizes[0]);
             z++) {
            struct bench_row r = bench_row(ops[o].name, sizes[z]);

            if (ops[o].op == MLX5_OPCODE_ATOMIC_CS && sizes[z] != 8)
                continue;
            bench_samples_reset(&s);
            rc = verb_latency(c, &v, ops[o].op, sizes[z], &s);
            bench_row_latency(&r, &s);
            if (rc == 0)
                bench_emit(c, &r);
        }
    }
    bench_samples_free(&s);
    chain_q_close(&v.b);
    chain_q_close(&v.a);
    chain_buf_close(&v.la);
    chain_buf_close(&v.lb);
    return rc;
}

/* ---- WQE throughput --------------------------------------------------- */

/* Posts one WQE of kind op (a NOP, or a verb on buf through a's peer). */
static int stream_post(struct chain_q *a, uint8_t op, struct chain_buf *buf,
                       const struct rnic_sge *sg, unsigned f)
{
    struct rnic_sge res = chain_loc_sge(chain_buf_loc(buf, 0, 8));

    switch (op) {
    case MLX5_OPCODE_RDMA_WRITE:
        return chain_write(a, sg, 1, chain_buf_loc(buf, 64, 64), f, NULL);
    case MLX5_OPCODE_RDMA_READ:
        return chain_read(a, &res, 1, chain_buf_loc(buf, 64, 8), f, NULL);
    case MLX5_OPCODE_ATOMIC_CS:
        return chain_cas(a, chain_buf_loc(buf, 64, 8), 1, 2, &res, f, NULL);
    default:
        return chain_nop(a, f, NULL);
    }
}

/*
 * Streams total WQEs of kind op (NOPs on a loopback QP; 64-byte WRITEs,
 * 8-byte READs or CASes to a peer) through one send queue, one in 64
 * signaled, keeping the ring full. READs and CASes each cost the engine a
 * request, the responder's work and a response, as each of those in a
 * chain does. Returns WQEs per second, or a negative value on error.
 */
static double stream(struct bench_ctx *c, uint8_t op, uint64_t total)
{
    struct chain_q a, b;
    struct chain_buf buf;
    struct rnic_sge sg;
    uint64_t posted = 0, t0;
    double rate = -1;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(&buf, 0, sizeof(buf));
    if (bm_queue(c, 0, 1024, 0, BM_NO_PEER, &a) < 0 ||
        bm_queue(c, 0, 64, 0, &a, &b) < 0 || bm_buf(c, 4096, &buf) < 0)
        goto out;
    sg = chain_loc_sge(chain_buf_loc(&buf, 0, 64));
    t0 = bench_now_ns();
    while (a.retired != (uint32_t)total) {
        struct rnic_wc wc;
        unsigned batch = 0;

        while (posted < total && chain_q_room(&a) > 0 && batch < 256) {
            unsigned f = (posted + 1) % 64 == 0 || posted + 1 == total
                             ? CHAIN_SIGNALED
                             : 0;
            int rc = stream_post(&a, op, &buf, &sg, f);

            if (rc < 0)
                goto out;
            posted++, batch++;
        }
        if (batch && chain_q_doorbell(&a) < 0)
            goto out;
        if (bm_poll(a.scq, 1, &wc) < 0)
            goto out;
        /* the completed WQE's 16-bit index: retire up to just past it */
        chain_q_retire(&a,
                       a.retired + (uint16_t)(wc.wqe_counter + 1 - a.retired));
    }
    rate = (double)total * 1e9 / (double)(bench_now_ns() - t0);
out:
    chain_q_close(&b);
    chain_q_close(&a);
    chain_buf_close(&buf);
    return rate;
}

static int throughput(struct bench_ctx *c)
{
    static const struct {
        const char *name;
        uint8_t op;
        unsigned size;
    } kinds[] = {
        {"nop_tput", MLX5_OPCODE_NOP, 1},
        {"write_tput", MLX5_OPCODE_RDMA_WRITE, 64},
        {"read_tput", MLX5_OPCODE_RDMA_READ, 8},
        {"cas_tput", MLX5_OPCODE_ATOMIC_CS, 8},
    };
    uint64_t total =
        (uint64_t)c->o.iters * (strcmp(c->o.model, "fast") ? 50 : 1000);

    bench_note(c,
               "WQEs per second through one send queue (%u engine "
               "thread(s)), 1 in 64 signaled",
               c->threads);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        struct bench_row r = bench_row(kinds[k].name, kinds[k].size);
        double rate = stream(c, kinds[k].op, total);

        if (rate < 0)
            return -1;
        r.ops_per_s = rate;
        r.n = total;
        bench_emit(c, &r);
    }
    return 0;
}

int bench_micro(struct bench_ctx *c)
{
    if (!c->o.json)
        printf("rdn-bench micro: device %s, model %s, %u engine thread(s), "
               "%u samples per latency\n",
               rnic_device_name(c->dev), c->o.model, c->threads, c->o.iters);
    if (verbs(c) < 0 || throughput(c) < 0 || bm_fig7(c) < 0 || bm_table3(c) < 0)
        return -1;
    return 0;
}
