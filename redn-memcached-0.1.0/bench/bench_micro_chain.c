/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_micro_chain.c - chains in `rdn-bench micro`.
 *
 * Figure 7 of RedN: latency of a chain of n NOPs, doorbell to the last
 * completion, in three orders, and the cost of one more WR (the slope):
 *   wq          n NOPs on one queue, one doorbell;
 *   completion  NOP, then (WAIT for the previous NOP, NOP) x (n-1);
 *   doorbell    n NOPs on a managed queue, released one at a time by a
 *               master queue: SEND_EN, then (WAIT, SEND_EN) x (n-1).
 * Table 3 of RedN: if, unrolled while, recycled while: latency of one
 * (for loops: per iteration / lap) and throughput with --par chains at
 * once.
 */
#include "config.h"

#include <string.h>

#include "bench/bench_micro.h"
#include "rdn/programs/count_while.h"
#include "rdn/programs/counter_loop.h"

/* ---- Figure 7 --------------------------------------------------------- */

enum order { ORD_WQ, ORD_COMPLETION, ORD_DOORBELL };

struct fig7 {
    struct chain_q q, master, managed;
};

/*
 * Posts one chain of n NOPs without ringing: *ring_q is the queue whose
 * doorbell starts it, *done_q the queue whose CQ sees its completions.
 * The chain is pre-posted, as RedN's are: Figure 7 times its execution,
 * not the CPU writing the WQEs.
 */
static int post_chain(struct fig7 *f, enum order o, unsigned n,
                      struct chain_q **ring_q, struct chain_q **done_q)
{
    int rc = 0;

    if (o == ORD_WQ) {
        for (unsigned i = 0; rc == 0 && i < n; i++)
            rc = chain_nop(&f->q, i + 1 == n ? CHAIN_SIGNALED : 0, NULL);
        *ring_q = *done_q = &f->q;
        return rc;
    }
    if (o == ORD_COMPLETION) {
        for (unsigned i = 0; rc == 0 && i < n; i++) {
            if (i)
                rc = chain_wait(&f->q, f->q.scq, f->q.scq->count, 0, NULL);
            if (rc == 0)
                rc = chain_nop(&f->q, CHAIN_SIGNALED, NULL);
        }
        *ring_q = *done_q = &f->q;
        return rc;
    }
    {
        uint32_t base = f->managed.pi;

        for (unsigned i = 0; rc == 0 && i < n; i++)
            rc = chain_nop(&f->managed, CHAIN_SIGNALED, NULL);
        for (unsigned i = 0; rc == 0 && i < n; i++) {
            if (i)
                rc = chain_wait(&f->master, f->managed.scq,
                                f->managed.scq->count - (n - i), 0, NULL);
            if (rc == 0)
                rc = chain_send_en(&f->master, &f->managed, base + i + 1, 0,
                                   NULL);
        }
        *ring_q = &f->master;
        *done_q = &f->managed;
        return rc;
    }
}

static int chain_latency(struct bench_ctx *c, struct fig7 *f, enum order o,
                         unsigned n, unsigned reps, struct bench_samples *s)
{
    for (unsigned r = 0; r < reps + reps / 10 + 5; r++) {
        struct chain_q *rq, *dq;
        uint64_t t0;

        if (post_chain(f, o, n, &rq, &dq) < 0)
            return -1;
        t0 = bench_now_ns();
        if (chain_q_doorbell(rq) < 0 ||
            bm_poll(dq->scq, o == ORD_WQ ? 1 : n, NULL) < 0)
            return -1;
        if (r >= reps / 10 + 5)
            bench_samples_add(s, bench_now_ns() - t0);
        chain_q_retire(&f->q, f->q.pi);
        chain_q_retire(&f->master, f->master.pi);
        chain_q_retire(&f->managed, f->managed.pi);
    }
    return 0;
}

/* Least-squares slope of y over x. */
static double slope(const double *x, const double *y, unsigned n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;

    for (unsigned i = 0; i < n; i++) {
        sx += x[i], sy += y[i];
        sxx += x[i] * x[i], sxy += x[i] * y[i];
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

int bm_fig7(struct bench_ctx *c)
{
    static const unsigned lens[] = {1, 2, 4, 8, 16, 32};
    static const char *const names[] = {"chain_wq", "chain_completion",
                                        "chain_doorbell"};
    static const char *const extra[] = {"extra_wr_wq", "extra_wr_completion",
                                        "extra_wr_doorbell"};
    const unsigned nl = sizeof(lens) / sizeof(lens[0]);
    unsigned reps = c->o.iters / 4 + 20;
    struct bench_samples s = {0};
    struct fig7 f;
    int rc;

    memset(&f, 0, sizeof(f));
    rc = bm_queue(c, RNIC_QP_CROSS_CHANNEL, 128, 0, NULL, &f.q);
    if (rc == 0)
        rc = bm_queue(c, RNIC_QP_CROSS_CHANNEL, 128, 0, NULL, &f.master);
    if (rc == 0)
        rc = bm_queue(c, RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND, 64, 0,
                      NULL, &f.managed);
    bench_note(c, "Figure 7: n NOPs (size = n), doorbell to last completion; "
                  "extra_wr_* = slope per NOP (p50)");
    for (int o = ORD_WQ; rc == 0 && o <= ORD_DOORBELL; o++) {
        double x[sizeof(lens) / sizeof(lens[0])], y[sizeof(x) / sizeof(x[0])];
        struct bench_row r;

        for (unsigned i = 0; rc == 0 && i < nl; i++) {
            r = bench_row(names[o], lens[i]);
            bench_samples_reset(&s);
            rc = chain_latency(c, &f, (enum order)o, lens[i], reps, &s);
            bench_row_latency(&r, &s);
            if (rc == 0)
                bench_emit(c, &r);
            x[i] = lens[i];
            y[i] = r.p50_us;
        }
        if (rc == 0) {
            r = bench_row(extra[o], 1);
            r.p50_us = slope(x, y, nl);
            r.n = nl;
            bench_emit(c, &r);
        }
    }
    bench_samples_free(&s);
    chain_q_close(&f.managed);
    chain_q_close(&f.master);
    chain_q_close(&f.q);
    return rc;
}

/* ---- Table 3: if and unrolled while --------------------------------- */

/*
 * A Table 3 construct to measure: run() executes `ops` operations (ifs,
 * loop iterations) on each of its first `n` chains at once and returns the
 * elapsed ns, or -1.
 */
struct t3_construct {
    const char *name, *tput_name;
    unsigned lat_ops;  /* operations per latency run (one chain) */
    unsigned warmup;   /* latency runs discarded first */
    unsigned lat_reps; /* latency runs kept */
    unsigned tput_ops; /* operations per chain per throughput run */
    unsigned tput_reps;
    int64_t (*run)(void *ctx, unsigned n, unsigned ops);
    void *ctx;
};

/*
 * Emits the construct's two rows: the latency of one operation (runs on
 * one chain, divided by lat_ops) and the throughput of c->o.par chains
 * running at once. Returns 0 or -1.
 */
static int t3_measure(struct bench_ctx *c, const struct t3_construct *k)
{
    struct bench_samples s = {0};
    struct bench_row r = bench_row(k->name, k->lat_ops);
    unsigned np = c->o.par;
    uint64_t total = 0;
    int rc = 0;

    for (unsigned i = 0; rc == 0 && i < k->warmup + k->lat_reps; i++) {
        int64_t ns = k->run(k->ctx, 1, k->lat_ops);

        rc = ns < 0 ? -1 : 0;
        if (rc == 0 && i >= k->warmup)
            bench_samples_add(&s, (uint64_t)ns / k->lat_ops);
    }
    bench_row_latency(&r, &s);
    if (rc == 0)
        bench_emit(c, &r);
    for (unsigned i = 0; rc == 0 && i < k->tput_reps; i++) {
        int64_t ns = k->run(k->ctx, np, k->tput_ops);

        rc = ns < 0 ? -1 : 0;
        total += (uint64_t)ns;
    }
    if (rc == 0) {
        uint64_t ops = (uint64_t)k->tput_reps * np * k->tput_ops;

        r = bench_row(k->tput_name, np);
        r.ops_per_s = (double)ops * 1e9 / (double)total;
        r.n = ops;
        bench_emit(c, &r);
    }
    bench_samples_free(&s);
    return rc;
}

#define IF_BATCH 32

struct if_pair {
    struct chain_q ctl, tgt;
};

struct if_bench {
    struct if_pair p[64];
    struct chain_buf *buf;
};

/* Posts `batch` ifs (all true: each arms an 8-byte WRITE). */
static int post_ifs(struct if_pair *p, struct chain_buf *buf, unsigned batch)
{
    struct rnic_sge sg = chain_loc_sge(chain_buf_loc(buf, 0, 8));
    struct chain_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE,
                          .flags = CHAIN_SIGNALED,
                          .sg = &sg,
                          .nsg = 1,
                          .raddr = chain_loc_addr(chain_buf_loc(buf, 64, 8)),
                          .rkey = buf->mr->rkey};
    struct chain_if iff;
    int rc = 0;

    for (unsigned i = 0; rc == 0 && i < batch; i++)
        rc = chain_if_eq(&p->ctl, &p->tgt, &wr, 1, 1, CHAIN_IF_ARM, 0, &iff);
    return rc < 0 ? rc : chain_q_doorbell(&p->ctl);
}

/* t3_construct.run: `batch` ifs on each of np pairs at once. */
static int64_t run_ifs(void *ctx, unsigned np, unsigned batch)
{
    struct if_bench *b = ctx;
    uint64_t t0 = bench_now_ns();

    for (unsigned i = 0; i < np; i++)
        if (post_ifs(&b->p[i], b->buf, batch) < 0)
            return -1;
    for (unsigned i = 0; i < np; i++) {
        if (bm_poll(b->p[i].tgt.scq, batch, NULL) < 0)
            return -1;
        chain_q_retire(&b->p[i].ctl, b->p[i].ctl.pi);
        chain_q_retire(&b->p[i].tgt, b->p[i].tgt.pi);
    }
    return (int64_t)(bench_now_ns() - t0);
}

static int table3_if(struct bench_ctx *c, struct chain_buf *buf)
{
    static struct if_bench b;
    struct t3_construct k = {.name = "if",
                             .tput_name = "if_tput",
                             .lat_ops = 1,
                             .warmup = 20,
                             .lat_reps = c->o.iters,
                             .tput_ops = IF_BATCH,
                             .tput_reps = c->o.iters / IF_BATCH + 10,
                             .run = run_ifs,
                             .ctx = &b};
    unsigned opened = 0;
    int rc = 0;

    memset(&b, 0, sizeof(b));
    b.buf = buf;
    for (; rc == 0 && opened < c->o.par; opened++) {
        rc = bm_queue(c, RNIC_QP_CROSS_CHANNEL, 128, 0, NULL, &b.p[opened].ctl);
        if (rc == 0)
            rc = bm_queue(c, RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND, 64,
                          0, NULL, &b.p[opened].tgt);
    }
    if (rc == 0)
        rc = t3_measure(c, &k);
    for (unsigned i = 0; i < opened; i++) {
        chain_q_close(&b.p[i].tgt);
        chain_q_close(&b.p[i].ctl);
    }
    return rc;
}

#define UNROLL 16

/* t3_construct.run: one loop of `iters` iterations on each of n loops. */
static int64_t run_unrolled(void *ctx, unsigned n, unsigned iters)
{
    struct count_while *w = ctx;
    uint64_t t0, t1 = 0, done[64];

    for (unsigned i = 0; i < n; i++) {
        memcpy(&done[i], w[i].mem.ptr + CW_DONE_OFF, 8);
        if (count_while_post(&w[i], iters, CHAIN_ID48_MAX, true) < 0)
            return -1;
    }
    t0 = bench_now_ns();
    for (unsigned i = 0; i < n; i++)
        if (count_while_start(&w[i]) < 0)
            return -1;
    for (unsigned i = 0; i < n; i++) {
        t1 = bm_wait_u64(w[i].mem.ptr + CW_DONE_OFF, done[i] + 1);
        if (!t1)
            return -1;
        count_while_retire(&w[i]);
    }
    return (int64_t)(t1 - t0);
}

static int table3_unrolled(struct bench_ctx *c)
{
    static struct count_while w[64];
    unsigned reps = c->o.iters / UNROLL + 10;
    struct t3_construct k = {.name = "unrolled_while",
                             .tput_name = "unrolled_while_tput",
                             .lat_ops = UNROLL,
                             .warmup = 5,
                             .lat_reps = reps,
                             .tput_ops = UNROLL,
                             .tput_reps = reps,
                             .run = run_unrolled,
                             .ctx = w};
    unsigned opened = 0;
    int rc = 0;

    for (; rc == 0 && opened < c->o.par; opened++)
        rc = count_while_open(&w[opened], c->dev, true);
    if (rc == 0)
        rc = t3_measure(c, &k);
    for (unsigned i = 0; i < opened; i++)
        count_while_close(&w[i]);
    return rc;
}

/* ---- Table 3: recycled while ------------------------------------------ */

/* Runs `laps` laps on each of n counter loops at once; elapsed ns. */
static int64_t run_recycled(struct bench_ctx *c, unsigned n, uint64_t laps)
{
    static struct counter_loop cl[64];
    uint64_t t0, t1 = 0;
    unsigned built = 0;
    int64_t rc = 0;

    for (; rc == 0 && built < n; built++)
        rc = counter_loop_build(&cl[built], c->dev, laps);
    t0 = bench_now_ns();
    for (unsigned i = 0; rc == 0 && i < n; i++)
        rc = counter_loop_start(&cl[i]);
    for (unsigned i = 0; rc == 0 && i < n; i++) {
        t1 = bm_wait_u64(cl[i].mem.ptr + COUNTER_TAIL_OFF, laps);
        rc = t1 ? 0 : -1;
    }
    for (unsigned i = 0; i < built; i++)
        counter_loop_destroy(&cl[i]);
    return rc < 0 ? rc : (int64_t)(t1 - t0);
}

static int table3_recycled(struct bench_ctx *c)
{
    uint64_t laps = strcmp(c->o.model, "fast") ? 2000 : 20000;
    struct bench_samples s = {0};
    struct bench_row r = bench_row("recycled_while", laps);
    unsigned reps = c->o.iters / 200 + 5;
    int64_t ns = 0;

    for (unsigned i = 0; i < reps && ns >= 0; i++) {
        ns = run_recycled(c, 1, laps);
        if (ns >= 0)
            bench_samples_add(&s, (uint64_t)ns / laps);
    }
    if (ns < 0)
        return -1;
    bench_row_latency(&r, &s);
    bench_emit(c, &r);
    ns = run_recycled(c, c->o.par, laps);
    if (ns < 0)
        return -1;
    r = bench_row("recycled_while_tput", c->o.par);
    r.ops_per_s = (double)laps * c->o.par * 1e9 / (double)ns;
    r.n = laps * c->o.par;
    bench_emit(c, &r);
    bench_samples_free(&s);
    return 0;
}

int bm_table3(struct bench_ctx *c)
{
    struct chain_buf buf;
    int rc = bm_buf(c, 4096, &buf);

    if (rc < 0)
        return rc;
    bench_note(c,
               "Table 3: latency of one if / loop iteration / lap; "
               "*_tput: %u chains at once (size = chains)",
               c->o.par);
    rc = table3_if(c, &buf);
    if (rc == 0)
        rc = table3_unrolled(c);
    if (rc == 0)
        rc = table3_recycled(c);
    chain_buf_close(&buf);
    return rc;
}
