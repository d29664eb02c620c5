/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_get.c - `rdn-bench get`: the offloaded GET's chain against
 * one RDMA READ of the same size ("ideal"), on the same softnic, for values
 * of 64 B .. 64 KB.
 *
 * redn: a client GETs a key from a table built in NIC memory
 *       (t/support/offload_table.h), answered by the recycled server
 *       pipeline of rdn/offload/pipeline.h: SEND, one worker queue READs
 *       both buckets and CASes every slot, the response queue WRITEs the
 *       item, the WRITE_IMM ends it. The client judges every answer as
 *       librdn does; a value that is not the stored one counts as an
 *       error. The server's CPU does nothing at all once the pipeline
 *       is started.
 * ideal: the client READs the same number of bytes from server memory.
 *
 * Latency: one operation at a time, --iters samples. Throughput: --par
 * operations in flight (at most the client's 8 response slots for redn).
 * Rows: system "redn" (op get) and "ideal" (op read); size = value bytes.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_get.h"
#include "proto/keyhash.h"
#include "t/support/offload_table.h"

#define GET_MAX_VALUE (64 * 1024)
#define GET_ITERS     128 /* units of the recycled chain's lap */
#define GET_DEPTH     8   /* client response slots */
#define GET_OPS       20000
#define GET_WAIT_MS   10000

static const unsigned get_sizes[] = {64, 1024, 4096, 16384, 65536};

struct get_world {
    struct bench_ctx *c;
    struct rnic_device *cdev; /* the client's NIC; the server's is c->dev */
    struct ofl_table t;
    struct chain_cq done;
    struct chain_q master;
    struct ofl_local l;
    struct rdn_geometry geo;
    char *value; /* the pattern values are cut from */
    uint64_t errors;
};

static int world_open(struct bench_ctx *c, struct get_world *w)
{
    struct rnic_open_opts oo = {.model = c->o.model};
    struct chain_q_attr ma = {.sq_wqebb = 64, .flags = RNIC_QP_CROSS_CHANNEL};
    size_t arena = 0;
    int rc;

    memset(w, 0, sizeof(*w));
    w->c = c;
    w->value = malloc(GET_MAX_VALUE);
    if (!w->value)
        return -ENOMEM;
    for (size_t i = 0; i < GET_MAX_VALUE; i++)
        w->value[i] = (char)('a' + (i * 7) % 26);
    for (size_t i = 0; i < sizeof(get_sizes) / sizeof(get_sizes[0]); i++)
        arena += rdn_item_total_len(RDN_KEY_MAX, get_sizes[i]) + 64;
    rc = rnic_open(c->o.device, &oo, &w->cdev);
    if (rc == 0)
        rc = ofl_table_open(c->dev, 10, arena, GET_MAX_VALUE, &w->t);
    if (rc == 0)
        rc = chain_cq_open(c->dev, GET_ITERS * 16, RNIC_CQ_IGNORE_OVERRUN,
                           &w->done);
    if (rc == 0)
        rc = chain_q_open(c->dev, &ma, &w->master);
    if (rc == 0)
        rc = chain_q_connect(&w->master, &w->master);
    if (rc == 0)
        rc = ofl_local_open(&w->t, w->cdev, GET_ITERS, GET_DEPTH, false,
                            &w->done, &w->master, &w->l);
    if (rc == 0)
        rc = ofl_pipe_start(&w->l.pipe);
    if (rc < 0)
        fprintf(stderr, "rdn-bench get: setup: %s / %s\n", rnic_errmsg(),
                chain_errmsg());
    ofl_table_geometry(&w->t, &w->geo);
    return rc;
}

static void world_close(struct get_world *w)
{
    ofl_local_close(&w->l);
    chain_q_close(&w->master);
    chain_cq_close(&w->done);
    ofl_table_close(&w->t);
    if (w->cdev)
        rnic_close(w->cdev);
    free(w->value);
}

/* ---- redn ------------------------------------------------------------- */

/* Waits for the next answer and checks it: the stored value, or an error. */
static int take(struct get_world *w, const char *key, size_t size)
{
    const struct rdn_item *it;
    uint64_t n;
    int rc = ofl_client_wait(&w->l.cli, GET_WAIT_MS, &n);

    if (rc <= 0)
        return rc < 0 ? rc : -ETIMEDOUT;
    if (ofl_client_judge(&w->l.cli, n, &w->geo, key, strlen(key), 0, &it) !=
            OFL_HIT ||
        it->nbytes != size ||
        memcmp(rdn_item_value((struct rdn_item *)it), w->value, size) != 0)
        w->errors++;
    return 0;
}

static int send_get(struct get_world *w, const struct rdn_keyhash *kh)
{
    int64_t n = ofl_client_send(&w->l.cli, &w->geo, kh);

    return n < 0 ? (int)n : 0;
}

static int redn_size(struct get_world *w, unsigned size)
{
    struct bench_ctx *c = w->c;
    struct bench_samples s = {0};
    struct bench_row r = bench_row("get", size);
    struct rdn_keyhash kh;
    char key[32];
    unsigned par = c->o.par < GET_DEPTH ? c->o.par : GET_DEPTH, inflight = 0;
    uint64_t t0, ops = 0;
    int rc = 0;

    snprintf(key, sizeof(key), "bench-get-%u", size);
    if (!ofl_table_put(&w->t, key, strlen(key), w->value, size, 1, 0))
        return -ENOMEM;
    rdn_keyhash(key, strlen(key), w->t.hashpower, &kh);
    w->errors = 0;
    for (unsigned i = 0; i < c->o.iters && rc == 0; i++) {
        uint64_t start = bench_now_ns();

        rc = send_get(w, &kh);
        if (rc == 0)
            rc = take(w, key, size);
        bench_samples_add(&s, bench_now_ns() - start);
    }
    t0 = bench_now_ns();
    while (rc == 0 && (ops < GET_OPS || inflight)) {
        while (rc == 0 && inflight < par && ops + inflight < GET_OPS) {
            rc = send_get(w, &kh);
            inflight += rc == 0;
        }
        if (rc == 0 && inflight)
            rc = take(w, key, size);
        if (rc == 0)
            inflight--, ops++;
    }
    if (rc == 0) {
        bench_row_latency(&r, &s);
        r.ops_per_s = (double)ops * 1e9 / (double)(bench_now_ns() - t0);
        r.errors = w->errors;
        c->system = "redn";
        bench_emit(c, &r);
    }
    bench_samples_free(&s);
    return rc;
}

/* ---- ideal: one READ -------------------------------------------------- */

struct reader {
    struct chain_q srv, cli;
    struct chain_buf src, dst;
};

static int reader_open(struct get_world *w, struct reader *rd)
{
    struct chain_q_attr a = {.sq_wqebb = 64, .rq_wqe = 0};
    int rc;

    memset(rd, 0, sizeof(*rd));
    rc = chain_q_open(w->c->dev, &a, &rd->srv);
    if (rc == 0)
        rc = chain_q_open(w->cdev, &a, &rd->cli);
    if (rc == 0)
        rc = chain_q_connect(&rd->cli, &rd->srv);
    if (rc == 0)
        rc = chain_buf_open(w->c->dev, GET_MAX_VALUE, RNIC_ACCESS_REMOTE_READ,
                            &rd->src);
    if (rc == 0)
        rc = chain_buf_open(w->cdev, GET_MAX_VALUE, RNIC_ACCESS_LOCAL_WRITE,
                            &rd->dst);
    if (rc == 0)
        memcpy(rd->src.ptr, w->value, GET_MAX_VALUE);
    return rc;
}

static void reader_close(struct reader *rd)
{
    chain_buf_close(&rd->dst);
    chain_buf_close(&rd->src);
    chain_q_close(&rd->cli);
    chain_q_close(&rd->srv);
}

static int read_post(struct reader *rd, unsigned size)
{
    struct rnic_sge s = chain_loc_sge(chain_buf_loc(&rd->dst, 0, size));
    int rc = chain_read(&rd->cli, &s, 1, chain_buf_loc(&rd->src, 0, size),
                        CHAIN_SIGNALED, NULL);

    return rc < 0 ? rc : chain_q_doorbell(&rd->cli);
}

/* Busy-polls the READ's completion, as a latency-bound client would. */
static int read_done(struct reader *rd)
{
    uint64_t end = bench_now_ns() + (uint64_t)GET_WAIT_MS * 1000000;
    struct rnic_wc wc;
    int rc;

    while ((rc = rnic_poll_cq(rd->cli.scq->cq, 1, &wc)) == 0)
        if (bench_now_ns() > end)
            return -ETIMEDOUT;
    if (rc < 0 || wc.status != RNIC_WC_SUCCESS)
        return rc < 0 ? rc : -EIO;
    chain_q_retire(&rd->cli, rd->cli.retired + 1); /* one block per READ */
    return 0;
}

static int ideal_size(struct get_world *w, struct reader *rd, unsigned size)
{
    struct bench_ctx *c = w->c;
    struct bench_samples s = {0};
    struct bench_row r = bench_row("read", size);
    unsigned par = c->o.par, inflight = 0;
    uint64_t t0, ops = 0;
    int rc = 0;

    for (unsigned i = 0; i < c->o.iters && rc == 0; i++) {
        uint64_t start = bench_now_ns();

        rc = read_post(rd, size);
        if (rc == 0)
            rc = read_done(rd);
        bench_samples_add(&s, bench_now_ns() - start);
    }
    t0 = bench_now_ns();
    while (rc == 0 && (ops < GET_OPS || inflight)) {
        while (rc == 0 && inflight < par && ops + inflight < GET_OPS) {
            rc = read_post(rd, size);
            inflight += rc == 0;
        }
        if (rc == 0 && inflight) {
            rc = read_done(rd);
            inflight--, ops++;
        }
    }
    if (rc == 0) {
        bench_row_latency(&r, &s);
        r.ops_per_s = (double)ops * 1e9 / (double)(bench_now_ns() - t0);
        r.errors = memcmp(rd->dst.ptr, w->value, size) != 0;
        c->system = "ideal";
        bench_emit(c, &r);
    }
    bench_samples_free(&s);
    return rc;
}

int bench_get(struct bench_ctx *c)
{
    struct get_world w;
    struct reader rd;
    int rc = world_open(c, &w);

    if (rc == 0)
        rc = reader_open(&w, &rd);
    bench_note(c,
               "offloaded GET (redn) vs one READ (ideal), model %s, "
               "%u samples, %u in flight for throughput",
               c->o.model, c->o.iters, c->o.par);
    for (size_t i = 0; rc == 0 && i < sizeof(get_sizes) / sizeof(get_sizes[0]);
         i++) {
        rc = redn_size(&w, get_sizes[i]);
        if (rc == 0)
            rc = ideal_size(&w, &rd, get_sizes[i]);
    }
    if (rc < 0)
        fprintf(stderr, "rdn-bench get: %s\n", strerror(-rc));
    reader_close(&rd);
    world_close(&w);
    return rc;
}
