/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/offload/pipeline.c - building, starting, watching and persisting one
 * client's recycled GET pipeline (see pipeline.h for the chain and
 * why it can run forever).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/barrier.h"
#include "rdn/offload/offload_int.h"
#include "rdn/offload/pipeline.h"

static __thread char ofl_msg[256];

int ofl_err(int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ofl_msg, sizeof(ofl_msg), fmt, ap);
    va_end(ap);
    return err;
}

const char *ofl_errmsg(void)
{
    return ofl_msg[0] ? ofl_msg : "no error";
}

#define OFL_READ_DS (2 + 2 * RDN_BUCKET_SLOTS) /* ctrl, raddr, scatter */
/* Scatter entries of a receive: see post_recv(). */
#define OFL_RECV_SGE  (2 + OFL_RESP_WQES + 1 + RDN_LAP_WORDS)
#define OFL_WORKER_CQ 64 /* only errors complete there; nobody polls */
#define OFL_HEAD      2  /* WQEBBs of a worker unit's head */
#define OFL_IMM_OFF   OFL_RESP_WQES /* WQEBB of the WRITE_IMM in a unit */
#define OFL_W_FLAGS   (RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND)
/* The client's peer: it may SEND requests and nothing else, so no key of
 * the server's NIC is reachable through it. */
#define OFL_RESP_FLAGS (RNIC_QP_MANAGED_SEND | RNIC_QP_RESTRICT_ACCESS)
/* Iterations a 16-bit WQE counter of the response ring tells apart. */
#define OFL_ITER_MOD (65536 / OFL_RESP_UNIT)

_Static_assert(OFL_RECV_SGE <= MLX5_RECV_MAX_SGE, "receive scatter list");
_Static_assert(2 * RDN_BUCKET_SLOTS <= CHAIN_MAX_SGE, "READ scatter list");

/*
 * The lap words of a request (struct rdn_get_req): the receive doorbell
 * record, then the indexes of a worker unit: its head's WAIT count and
 * SEND_EN index, and the releases of its response WQEs (FENCEd SEND_ENs of
 * resp: the NIC runs them once every CAS before them completed, so they
 * need no WAIT and no signaled CAS). With cfg.seq there are two releases
 * (bucket 1's WQEs, then the rest), else only the tail one.
 */
enum { OFL_LAP_RQ_DB, OFL_LAP_WAIT, OFL_LAP_HEAD, OFL_LAP_TAIL, OFL_LAP_MID };
_Static_assert(OFL_LAP_MID + 1 == RDN_LAP_WORDS, "lap words");

/* What building unit i leaves for the receives (unit i's, and the one
 * that moves unit i a lap on). */
struct ofl_unit {
    struct chain_wqe wait, en;  /* the head */
    struct chain_wqe tail, mid; /* the releases (mid: cfg.seq only) */
    struct chain_wqe read[2], cas[OFL_RESP_WQES], imm;
};

/* Returns the value of index word f in iteration k's unit (the rings start
 * at index 0, and hold one lap). */
static uint32_t unit_word(unsigned f, uint32_t k)
{
    switch (f) {
    case OFL_LAP_WAIT:
        return k + 1; /* request k's receive completion */
    case OFL_LAP_HEAD:
        return (k + 1) * OFL_W_UNIT + OFL_HEAD; /* next head */
    case OFL_LAP_TAIL:
        return (k + 1) * OFL_RESP_UNIT; /* the whole response unit */
    default:
        return k * OFL_RESP_UNIT + RDN_BUCKET_SLOTS; /* bucket 1's WQEs */
    }
}

/*
 * Request n re-posts the receive of request n + iters through the
 * doorbell record, and moves on the unit that served request n - depth,
 * which ran to its end before the client could send request n (its answer
 * was needed to reuse the slot), to iteration n - depth + iters. That
 * unit's head is released by the previous unit only once request
 * n - depth + iters - 1 arrived: after request n, since depth <= iters / 2.
 */
void ofl_pipe_plan(const struct ofl_pipe_cfg *c, struct rdn_lap_plan *out)
{
    const uint32_t lead = c->iters - c->depth;

    memset(out, 0, sizeof(*out));
    out->first[OFL_LAP_RQ_DB] = c->iters + 1;
    out->step[OFL_LAP_RQ_DB] = 1;
    for (unsigned f = OFL_LAP_WAIT; f <= (c->seq ? OFL_LAP_MID : OFL_LAP_TAIL);
         f++) {
        out->first[f] = unit_word(f, lead);
        out->step[f] = unit_word(f, lead + 1) - out->first[f];
    }
}

/* Returns the compare a CAS holds until a request overwrites it: ds 0,
 * which no match word has (they all carry RDN_SLOT_DS), so it matches
 * nothing. */
static uint64_t cmp_never(void)
{
    return chain_ctrl_word(MLX5_OPCODE_NOP, 0, 0);
}

static uint64_t slot_addr(const struct ofl_pipe *p, uint32_t i)
{
    return p->cfg.slot_addr +
           (i & (p->cfg.depth - 1)) * (uint64_t)p->cfg.slot_size;
}

static struct chain_loc client_loc(const struct ofl_pipe *p, uint64_t addr,
                                   uint32_t len)
{
    struct chain_loc l = {.ptr = (uint8_t *)(uintptr_t)addr,
                          .len = len,
                          .rkey = p->cfg.slot_rkey};

    return l;
}

/* ---- building blocks -------------------------------------------------- */

/* Posts a READ of bucket 0 whose scatter list set_scatter() fills in. */
static int post_read(struct ofl_pipe *p, struct chain_wqe *out)
{
    struct rnic_sge ph[2 * RDN_BUCKET_SLOTS];
    struct chain_loc table = chain_loc_mr(
        p->cfg.table_mr, p->cfg.table_mr->addr, sizeof(struct rdn_bucket));

    for (unsigned i = 0; i < 2 * RDN_BUCKET_SLOTS; i++)
        ph[i] = chain_loc_sge(chain_loc_part(p->w.sink, 0, 8));
    return chain_read(&p->w, ph, 2 * RDN_BUCKET_SLOTS, table, 0, out);
}

/*
 * Posts response WQE j of unit i (on resp, a NOP shaped like a WRITE into
 * the client's slot) and the CAS on the worker that may turn it into that
 * WRITE. The CAS compares with nothing until a request arrives.
 */
static int post_resp(struct ofl_pipe *p, uint32_t i, unsigned cas_flags,
                     struct chain_wqe *resp, struct chain_wqe *cas)
{
    struct rnic_sge ph = chain_loc_sge(chain_loc_part(p->resp.sink, 0, 8));
    struct chain_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE,
                          .sg = &ph,
                          .nsg = 1,
                          .raddr = slot_addr(p, i) + RDN_RESP_ITEM_OFF,
                          .rkey = p->cfg.slot_rkey};
    struct chain_loc cmp;
    struct chain_if cif;
    int rc;

    rc = chain_if_post(&p->w, &p->resp, &wr, 0, 0, CHAIN_IF_ARM,
                       cas_flags | CHAIN_QUIET, &cif);
    if (rc == 0)
        rc = chain_field(&cif.cas, CHAIN_F_COMPARE, 0, &cmp);
    if (rc < 0)
        return rc;
    if (cif.target.ds != RDN_SLOT_DS)
        return -EPROTO; /* the slot's match word must fit this WQE */
    chain_put_be64(cmp.ptr, cmp_never());
    *resp = cif.target;
    *cas = cif.cas;
    return 0;
}

/* Points the READ's scatter list at a bucket's response WQEs: each slot's match
 * word onto a ctrl word, its descriptor onto the data segment. */
static int set_scatter(const struct chain_wqe *read,
                       const struct chain_wqe *resp)
{
    for (unsigned i = 0; i < RDN_BUCKET_SLOTS; i++) {
        struct chain_loc ctrl, data;
        struct rnic_sge s;
        int rc = chain_field(&resp[i], CHAIN_F_CTRL, 0, &ctrl);

        if (rc == 0)
            rc = chain_field(&resp[i], CHAIN_F_DATA, 0, &data);
        if (rc < 0)
            return rc;
        s = chain_loc_sge(ctrl);
        chain_wqe_set_sge(read, 2 * i, &s);
        s = chain_loc_sge(data);
        chain_wqe_set_sge(read, 2 * i + 1, &s);
    }
    return 0;
}

/*
 * Posts the CASes of bucket b's response WQEs (with fence, the first
 * one waits until the READs posted before it landed) and points that
 * bucket's READ at the response WQEs it fills.
 */
static int post_bucket(struct ofl_pipe *p, uint32_t i, unsigned b, bool fence,
                       struct chain_wqe *resp, struct ofl_unit *u)
{
    int rc = 0;

    for (unsigned k = 0; k < RDN_BUCKET_SLOTS && rc == 0; k++) {
        unsigned j = b * RDN_BUCKET_SLOTS + k;

        rc = post_resp(p, i, fence && k == 0 ? CHAIN_FENCE : 0, &resp[j],
                       &u->cas[j]);
    }
    if (rc == 0)
        rc = set_scatter(&u->read[b], &resp[b * RDN_BUCKET_SLOTS]);
    return rc;
}

/* Posts the closing WRITE_IMM of response unit i, then pads the unit. */
static int post_close(struct ofl_pipe *p, uint32_t i, uint32_t r0,
                      struct ofl_unit *u)
{
    struct rnic_sge gen = chain_loc_sge(p->cfg.gen);
    int rc = chain_write_imm(
        &p->resp, &gen, 1, client_loc(p, slot_addr(p, i) + RDN_RESP_GEN_OFF, 8),
        0, CHAIN_SIGNALED, &u->imm);

    if (rc == 0 && u->imm.index - r0 != OFL_IMM_OFF)
        rc = -EPROTO;
    if (rc == 0)
        rc = chain_pad(&p->resp, OFL_RESP_UNIT - (p->resp.pi - r0));
    return rc;
}

/* Posts a FENCEd SEND_EN of resp up to unit i's index word f: it runs once
 * the CASes posted before it completed. */
static int post_release(struct ofl_pipe *p, uint32_t i, unsigned f,
                        struct chain_wqe *out)
{
    return chain_send_en(&p->w, &p->resp, unit_word(f, i), CHAIN_FENCE, out);
}

/*
 * Searches both buckets at once: both READs in flight, all four CASes
 * issued (the first waits for both READs); the tail release follows them.
 * A release of bucket 1's WQEs alone, once its CASes completed, would
 * need a WAIT on a signaled CAS and a lap word of its own: more NIC work
 * per GET than the answer's earlier start gains.
 */
static int lookup_parallel(struct ofl_pipe *p, uint32_t i,
                           struct chain_wqe *resp, struct ofl_unit *u)
{
    int rc = post_read(p, &u->read[0]);

    if (rc == 0)
        rc = post_read(p, &u->read[1]);
    if (rc == 0)
        rc = post_bucket(p, i, 0, true, resp, u);
    if (rc == 0)
        rc = post_bucket(p, i, 1, false, resp, u);
    return rc;
}

/*
 * Searches the buckets one after the other (RedN-Seq): bucket 1 (READ,
 * CASes, release of its WQEs), and only then bucket 2's READ, which the
 * release's FENCE holds back.
 */
static int lookup_seq(struct ofl_pipe *p, uint32_t i, struct chain_wqe *resp,
                      struct ofl_unit *u)
{
    int rc = post_read(p, &u->read[0]);

    if (rc == 0)
        rc = post_bucket(p, i, 0, true, resp, u);
    if (rc == 0)
        rc = post_release(p, i, OFL_LAP_MID, &u->mid);
    if (rc == 0)
        rc = post_read(p, &u->read[1]);
    if (rc == 0)
        rc = post_bucket(p, i, 1, true, resp, u);
    return rc;
}

/*
 * Posts worker unit i and response unit i with lap 0's indexes. The
 * response WQEs are released once all CASes completed (with cfg.seq,
 * bucket 1's as soon as its own did). Nothing in the unit moves it to the
 * next lap: a later request's receive does (post_recv()).
 */
static int post_unit(struct ofl_pipe *p, uint32_t i, struct ofl_unit *u)
{
    const uint32_t w_unit = OFL_W_UNIT, w0 = p->w.pi;
    const uint32_t r0 = p->resp.pi;
    struct chain_wqe resp[OFL_RESP_WQES];
    int rc =
        chain_wait(&p->w, p->resp.rcq, unit_word(OFL_LAP_WAIT, i), 0, &u->wait);

    if (rc == 0)
        rc = chain_send_en(&p->w, &p->w, unit_word(OFL_LAP_HEAD, i), 0, &u->en);
    if (rc == 0)
        rc = p->cfg.seq ? lookup_seq(p, i, resp, u)
                        : lookup_parallel(p, i, resp, u);
    if (rc == 0)
        rc = post_close(p, i, r0, u);
    if (rc == 0)
        rc = post_release(p, i, OFL_LAP_TAIL, &u->tail);
    if (rc < 0)
        return ofl_err(rc, "unit %u: %s", i, chain_errmsg());
    if (p->w.pi - w0 > w_unit)
        return ofl_err(-EPROTO, "unit %u takes %u worker WQEBBs, more than %u",
                       i, p->w.pi - w0, w_unit);
    rc = chain_pad(&p->w, w_unit - (p->w.pi - w0));
    return rc < 0 ? ofl_err(rc, "unit %u: %s", i, chain_errmsg()) : 0;
}

/* Appends the scatter entry of WQE w's field f. */
static int add_field(struct rnic_sge *sge, unsigned *n,
                     const struct chain_wqe *w, enum chain_field f)
{
    struct chain_loc l;
    int rc = chain_field(w, f, 0, &l);

    if (rc == 0)
        sge[(*n)++] = chain_loc_sge(l);
    return rc;
}

/*
 * Posts the receive of unit i: its scatter list follows struct
 * rdn_get_req, bucket addresses into the READs, compares into the CASes,
 * the request id into the WRITE_IMM, then the lap words: the doorbell
 * record (re-posting the receive of request k + iters) and the indexes of
 * unit `back` (ofl_pipe_plan() says which one). Posted once.
 */
static int post_recv(struct ofl_pipe *p, uint32_t i, const struct ofl_unit *u,
                     const struct ofl_unit *back)
{
    struct rnic_sge sge[OFL_RECV_SGE];
    unsigned n = 0;
    int rc = 0;

    for (unsigned b = 0; b < 2 && rc == 0; b++)
        rc = add_field(sge, &n, &u->read[b], CHAIN_F_RADDR);
    for (unsigned j = 0; j < OFL_RESP_WQES && rc == 0; j++)
        rc = add_field(sge, &n, &u->cas[j], CHAIN_F_COMPARE);
    if (rc == 0)
        rc = add_field(sge, &n, &u->imm, CHAIN_F_IMM);
    sge[n++] = chain_loc_sge(p->resp.rq_db);
    if (rc == 0)
        rc = add_field(sge, &n, &back->wait, CHAIN_F_INDEX);
    if (rc == 0)
        rc = add_field(sge, &n, &back->en, CHAIN_F_INDEX);
    if (rc == 0)
        rc = add_field(sge, &n, &back->tail, CHAIN_F_INDEX);
    if (rc == 0 && p->cfg.seq)
        rc = add_field(sge, &n, &back->mid, CHAIN_F_INDEX);
    else if (rc == 0)
        sge[n++] = chain_loc_sge(chain_loc_part(p->resp.sink, 0, 4));
    if (rc == 0)
        rc = chain_post_recv(&p->resp, sge, n, i);
    return rc < 0 ? ofl_err(rc, "receive %u: %s", i, chain_errmsg()) : 0;
}

/* Builds the whole lap on fresh rings, then posts one receive per unit. */
static int build_lap(struct ofl_pipe *p)
{
    const uint32_t iters = p->cfg.iters, back = iters - p->cfg.depth;
    uint32_t cq0 = p->w.scq->count;
    struct ofl_unit *u = calloc(iters, sizeof(*u));
    int rc = 0;

    if (!u)
        return ofl_err(-ENOMEM, "building the lap: out of memory");
    if (p->w.pi != 0 || p->resp.pi != 0)
        rc = ofl_err(-EPROTO, "the rings are not fresh");
    for (uint32_t i = 0; i < iters && rc == 0; i++)
        rc = post_unit(p, i, &u[i]);
    for (uint32_t i = 0; i < iters && rc == 0; i++)
        rc = post_recv(p, i, &u[i], &u[(i + back) & (iters - 1)]);
    /* The indexes above assume exactly one lap per ring, and nothing
     * on the worker produces a completion. */
    if (rc == 0 &&
        (p->w.pi != p->w.sq.wqebb_cnt || p->resp.pi != p->resp.sq.wqebb_cnt ||
         p->w.scq->count != cq0))
        rc = ofl_err(-EPROTO, "the lap does not fill the rings exactly");
    free(u);
    return rc;
}

/* ---- the pipeline ----------------------------------------------------- */

static bool cfg_ok(const struct ofl_pipe_cfg *c)
{
    return c && c->iters >= 4 && c->iters <= OFL_MAX_ITERS &&
           !(c->iters & (c->iters - 1)) && c->depth >= 1 &&
           c->depth <= c->iters / 2 && !(c->depth & (c->depth - 1)) &&
           c->table_mr && c->gen.ptr && c->gen.len == 8 && c->done_cq &&
           c->master && c->slot_size >= rdn_resp_slot_size(0);
}

static void resp_attr(const struct ofl_pipe_cfg *cfg, struct chain_q_attr *ra)
{
    memset(ra, 0, sizeof(*ra));
    ra->sq_wqebb = cfg->iters * OFL_RESP_UNIT;
    ra->rq_wqe = cfg->iters;
    ra->max_recv_sge = OFL_RECV_SGE;
    ra->flags = OFL_RESP_FLAGS;
    /* Its ring: scattered into locally, CASed by the worker (loopback). */
    ra->ring_access = RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_ATOMIC;
    ra->scq = cfg->done_cq;
    /* Its receive CQ: polled by the server while it lives, and WAITed on:
     * it must outlast a dead server, so it never overflows. */
    ra->cq_depth = 4 * cfg->iters;
    ra->cq_flags = RNIC_CQ_IGNORE_OVERRUN;
}

int ofl_pipe_open(struct rnic_device *dev, const struct ofl_pipe_cfg *cfg,
                  struct ofl_pipe *p)
{
    struct chain_q_attr wa = {
        .flags = OFL_W_FLAGS,
        .cq_depth = OFL_WORKER_CQ,
        .cq_flags = RNIC_CQ_IGNORE_OVERRUN,
        /* Its ring: READ scatters (patches) and nothing remote. */
        .ring_access = RNIC_ACCESS_LOCAL_WRITE,
    };
    struct chain_q_attr ra;
    int rc;

    if (!dev || !p || !cfg_ok(cfg))
        return ofl_err(-EINVAL, "ofl_pipe_open: bad argument");
    memset(p, 0, sizeof(*p));
    p->cfg = *cfg;
    wa.sq_wqebb = cfg->iters * OFL_W_UNIT;
    resp_attr(cfg, &ra);
    rc = chain_q_open(dev, &wa, &p->w);
    if (rc < 0)
        return ofl_err(rc, "worker queue: %s", chain_errmsg());
    rc = chain_q_connect(&p->w, &p->w);
    if (rc < 0) {
        ofl_err(rc, "worker queue: %s", chain_errmsg());
        goto err_close_w;
    }
    rc = chain_q_open(dev, &ra, &p->resp);
    if (rc < 0) {
        ofl_err(rc, "response queue: %s", chain_errmsg());
        goto err_close_w;
    }
    rc = build_lap(p);
    if (rc < 0)
        goto err_close_resp;
    return 0;

err_close_resp:
    chain_q_close(&p->resp);
err_close_w:
    chain_q_close(&p->w);
    memset(p, 0, sizeof(*p));
    return rc;
}

int ofl_pipe_source(struct ofl_pipe *p, int fd)
{
    int rc;

    if (!p || !p->resp.qp)
        return ofl_err(-EINVAL, "ofl_pipe_source: bad argument");
    rc = rnic_qp_set_gid_sock(p->resp.qp, fd);
    return rc < 0 ? ofl_err(rc, "response queue: %s", rnic_errmsg()) : rc;
}

int ofl_pipe_addr(struct ofl_pipe *p, struct rnic_addr *out)
{
    int rc;

    if (!p || !p->resp.qp || !out)
        return ofl_err(-EINVAL, "ofl_pipe_addr: bad argument");
    rc = rnic_qp_addr(p->resp.qp, out);
    return rc < 0 ? ofl_err(rc, "response queue: %s", rnic_errmsg()) : 0;
}

int ofl_pipe_connect(struct ofl_pipe *p, const struct rnic_addr *client)
{
    int rc;

    if (!p || !p->resp.qp || !client)
        return ofl_err(-EINVAL, "ofl_pipe_connect: bad argument");
    rc = rnic_connect(p->resp.qp, client);
    return rc < 0 ? ofl_err(rc, "connect: %s", rnic_errmsg()) : 0;
}

/* Releases the worker's first head (index 0 of its fresh ring). */
int ofl_pipe_start(struct ofl_pipe *p)
{
    struct chain_q *m;
    struct rnic_wc wc;
    int rc;

    if (!p || p->started || !p->w.qp)
        return ofl_err(-EINVAL, "ofl_pipe_start: bad argument");
    m = p->cfg.master;
    rc = chain_send_en(m, &p->w, OFL_HEAD, CHAIN_SIGNALED, NULL);
    if (rc == 0)
        rc = chain_q_doorbell(m);
    if (rc == 0)
        rc = chain_cq_poll_wait(m->scq, &wc, 5000);
    if (rc < 0)
        rc = ofl_err(rc, "start: %s", chain_errmsg());
    else if (rc == 0)
        rc =
            ofl_err(-ETIMEDOUT, "start: the master's SEND_EN did not complete");
    else if (wc.status != RNIC_WC_SUCCESS)
        rc = ofl_err(-EIO, "start: SEND_EN: %s", rnic_wc_status_str(wc.status));
    if (rc < 0) {
        p->failed = true;
        return rc;
    }
    chain_q_retire(m, m->pi);
    p->started = true;
    return 0;
}

/* Returns the 64-bit count nearest at or above v whose low bits (mod m)
 * are `low`. */
static uint64_t lift(uint64_t v, uint32_t low, uint32_t m)
{
    return v + ((low - (uint32_t)v) & (m - 1));
}

/*
 * Receive completions carry the receive queue's 16-bit counter: counting
 * from it (not from the number of completions) stays right after the
 * poller fell behind a full CQ, e.g. across a server restart.
 */
int ofl_pipe_poll_recv(struct ofl_pipe *p)
{
    struct rnic_wc wc[32];
    int total = 0, n;

    do {
        n = rnic_poll_cq(p->resp.rcq->cq, 32, wc);
        if (n < 0) {
            p->failed = true;
            return ofl_err(n, "receive CQ: %s", rnic_errmsg());
        }
        for (int i = 0; i < n; i++) {
            if (wc[i].status != RNIC_WC_SUCCESS)
                p->failed = true;
            else
                p->received =
                    lift(p->received, (uint32_t)wc[i].wqe_counter + 1, 65536);
        }
        total += n;
    } while (n == 32);
    return total;
}

/* Returns the opcode now in response WQE j of unit i. */
static uint8_t resp_opcode(const struct ofl_pipe *p, uint32_t i, unsigned j)
{
    uint32_t bb = (i * OFL_RESP_UNIT + j) & (p->resp.sq.wqebb_cnt - 1);
    const struct mlx5_ctrl_seg *c =
        (const void *)(p->resp.sq.buf + (size_t)bb * MLX5_SEND_WQE_BB);

    fence_acquire(); /* the NIC rewrites it */
    return mlx5_ctrl_opcode(c);
}

/*
 * A WRITE_IMM completed: its WQE counter names the unit (the rings start
 * at index 0), which is the GET's number modulo OFL_ITER_MOD; the rest
 * comes from the receive count, which is at most iters GETs ahead of any
 * answer and may be behind it (its completion not polled yet: the receive
 * then happened). A completion older than every receive seen (the
 * previous server counted it, before a restart) says nothing new. The hit
 * is read off the response WQEs, which keep their opcode until the unit's
 * next lap.
 */
void ofl_pipe_complete(struct ofl_pipe *p, const struct rnic_wc *wc)
{
    uint32_t unit = ((uint32_t)wc->wqe_counter - OFL_IMM_OFF) / OFL_RESP_UNIT;
    uint32_t diff = (unit + 1 - (uint32_t)p->received) & (OFL_ITER_MOD - 1);
    int64_t ahead =
        diff < OFL_ITER_MOD / 2 ? (int64_t)diff : (int64_t)diff - OFL_ITER_MOD;
    uint64_t done;
    bool hit = false;

    if (wc->status != RNIC_WC_SUCCESS ||
        wc->wqe_counter % OFL_RESP_UNIT != OFL_IMM_OFF) {
        p->failed = true;
        return;
    }
    if (ahead < 0 && (uint64_t)-ahead >= p->received)
        return;
    done = p->received + (uint64_t)ahead;
    if (done > p->received)
        p->received = done;
    if (done <= p->done)
        return; /* older than what was counted */
    p->done = done;
    for (unsigned j = 0; j < OFL_RESP_WQES; j++)
        hit |= resp_opcode(p, unit & (p->cfg.iters - 1), j) ==
               MLX5_OPCODE_RDMA_WRITE;
    if (hit)
        p->hits++;
    else
        p->misses++;
}

bool ofl_pipe_failed(struct ofl_pipe *p)
{
    if (!p->failed && (rnic_qp_state(p->w.qp) == RNIC_QPS_ERR ||
                       rnic_qp_state(p->resp.qp) == RNIC_QPS_ERR))
        p->failed = true;
    return p->failed;
}

/* ---- persistence ------------------------------------------------------ */

/* A pipeline's two parts' names under prefix (1..40 chars). */
struct ofl_names {
    char w[64], r[64];
};

static int pipe_names(const char *prefix, struct ofl_names *n)
{
    if (!prefix || !*prefix || strlen(prefix) > 40)
        return ofl_err(-EINVAL, "pipeline name: not 1..40 characters");
    snprintf(n->w, sizeof(n->w), "%s.w", prefix);
    snprintf(n->r, sizeof(n->r), "%s.r", prefix);
    return 0;
}

int ofl_pipe_persist(struct ofl_pipe *p, const char *prefix)
{
    struct ofl_names n;
    int rc = pipe_names(prefix, &n);

    if (rc < 0)
        return rc;
    if (!p || !p->w.qp)
        return ofl_err(-EINVAL, "ofl_pipe_persist: bad argument");
    rc = chain_q_persist(&p->w, n.w);
    if (rc == 0)
        rc = chain_q_persist(&p->resp, n.r);
    return rc < 0 ? ofl_err(rc, "persist %s: %s", prefix, chain_errmsg()) : 0;
}

int ofl_pipe_attach(struct rnic_device *dev, const struct ofl_pipe_cfg *cfg,
                    const char *prefix, struct ofl_pipe *p)
{
    struct ofl_names n;
    int rc = pipe_names(prefix, &n);

    if (rc < 0)
        return rc;
    if (!dev || !p || !cfg_ok(cfg))
        return ofl_err(-EINVAL, "ofl_pipe_attach: bad argument");
    memset(p, 0, sizeof(*p));
    p->cfg = *cfg;
    rc = chain_q_attach(dev, n.w, OFL_W_FLAGS, 0, NULL, NULL, &p->w);
    if (rc < 0) {
        ofl_err(rc, "attach %s: %s", n.w, chain_errmsg());
        memset(p, 0, sizeof(*p));
        return rc;
    }
    rc = chain_q_attach(dev, n.r, OFL_RESP_FLAGS, cfg->iters, cfg->done_cq,
                        NULL, &p->resp);
    if (rc < 0) {
        ofl_err(rc, "attach %s: %s", n.r, chain_errmsg());
        goto err_close_w;
    }
    p->started = true;
    return 0;

err_close_w:
    chain_q_close(&p->w);
    memset(p, 0, sizeof(*p));
    return rc;
}

int ofl_pipe_release(struct rnic_device *dev, const char *prefix,
                     uint32_t iters, struct chain_cq *done_cq)
{
    struct ofl_names n;
    struct ofl_pipe p;
    int found = 0;

    if (!dev || pipe_names(prefix, &n) < 0)
        return 0;
    memset(&p, 0, sizeof(p));
    found += chain_q_attach(dev, n.w, OFL_W_FLAGS, 0, NULL, NULL, &p.w) == 0;
    if (done_cq && done_cq->cq)
        found += chain_q_attach(dev, n.r, OFL_RESP_FLAGS, iters, done_cq, NULL,
                                &p.resp) == 0;
    ofl_pipe_close(&p);
    return found;
}

void ofl_pipe_close(struct ofl_pipe *p)
{
    if (!p)
        return;
    chain_q_close(&p->resp);
    chain_q_close(&p->w);
    memset(p, 0, sizeof(*p));
}
