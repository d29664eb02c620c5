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

#define OFL_READ_DS   (2 + 2 * RDN_BUCKET_SLOTS) /* ctrl, raddr, scatter */
#define OFL_RECV_SGE  (2 + OFL_RESP_WQES + 2)    /* see post_recv() */
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
 * A worker unit's enables and their lap counters. The head (a WAIT for the
 * request, then a SEND_EN of the worker itself) moves with OFL_HEAD_CTR.
 * The releases of the response WQEs are SEND_ENs of resp with a FENCE:
 * the NIC runs them once every CAS before them completed, so they need no
 * WAIT and no signaled CAS; their indexes move with OFL_REL_CTR. With
 * cfg.seq there are two (bucket 1's WQEs, then the rest), else one.
 */
enum { OFL_HEAD_CTR, OFL_REL_CTR, OFL_CTRS };
enum { OFL_REL_MID, OFL_REL_TAIL, OFL_RELS };

_Static_assert(CHAIN_LAP_SGES + CHAIN_EN_LAP_SGES <= CHAIN_MAX_SGE,
               "counters' READ");

/* What building unit i leaves for the counters and the receive. */
struct ofl_unit {
    struct chain_wqe wait, en; /* the head */
    struct chain_wqe rel[OFL_RELS];
    uint32_t rel_index[OFL_RELS];
    struct chain_wqe read[2], cas[OFL_RESP_WQES], imm;
};

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

/* Returns lap counter k of unit i. */
static struct chain_loc counter(const struct ofl_pipe *p, uint32_t i,
                                unsigned k)
{
    return chain_buf_loc(&p->ctr, ((size_t)i * OFL_CTRS + k) * 8, 8);
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

/* Returns lap 0's value of unit i's release counter (chain.h). */
static uint64_t rel_counter0(const struct ofl_pipe *p, const struct ofl_unit *u)
{
    return p->cfg.seq ? chain_en_lap_counter(u->rel_index[OFL_REL_MID],
                                             u->rel_index[OFL_REL_TAIL])
                      : chain_en_lap_counter(u->rel_index[OFL_REL_TAIL], 0);
}

/*
 * Posts the lap bookkeeping of unit i, after its last SEND_EN ran: an FADD
 * per counter moves it a lap ahead, then one READ (FENCEd: after the
 * FADDs) copies both counters into the head's WAIT and SEND_EN and into
 * the releases at once. The unit's receive is re-posted by the request
 * itself (struct rdn_get_req's rq_db), so no WQE here copies a count into
 * the doorbell record.
 */
static int post_patches(struct ofl_pipe *p, uint32_t i,
                        const struct ofl_unit *u)
{
    const uint32_t iters = p->cfg.iters, resp_lap = iters * OFL_RESP_UNIT;
    const uint64_t inc[OFL_CTRS] = {
        [OFL_HEAD_CTR] =
            chain_lap_counter(iters, iters * OFL_W_UNIT(p->cfg.seq)),
        [OFL_REL_CTR] = chain_en_lap_counter(resp_lap, resp_lap),
    };
    struct rnic_sge sg[CHAIN_LAP_SGES + CHAIN_EN_LAP_SGES];
    unsigned n = CHAIN_LAP_SGES;
    int rc = 0;

    for (unsigned k = 0; k < OFL_CTRS && rc == 0; k++)
        rc = chain_fadd(&p->w, counter(p, i, k), inc[k], NULL, 0, NULL);
    chain_lap_sges(&u->wait, &u->en, p->w.sink, sg);
    n += chain_en_lap_sges(&u->rel[p->cfg.seq ? OFL_REL_MID : OFL_REL_TAIL],
                           p->cfg.seq ? &u->rel[OFL_REL_TAIL] : NULL, p->w.sink,
                           &sg[n]);
    if (rc == 0)
        rc = chain_read(
            &p->w, sg, n,
            chain_buf_loc(&p->ctr, (size_t)i * OFL_CTRS * 8, OFL_CTRS * 8),
            CHAIN_FENCE, NULL);
    return rc;
}

/* Posts a FENCEd SEND_EN of resp up to index: it runs once the CASes
 * posted before it completed. */
static int post_release(struct ofl_pipe *p, uint32_t index, unsigned which,
                        struct ofl_unit *u)
{
    u->rel_index[which] = index;
    return chain_send_en(&p->w, &p->resp, index, CHAIN_FENCE, &u->rel[which]);
}

/*
 * Searches both buckets at once: both READs in flight, all four CASes
 * issued (the first waits for both READs); the tail release follows them.
 * A release of bucket 1's WQEs alone, once its CASes completed, would
 * need a WAIT on a signaled CAS and a counter of its own: more NIC work
 * per GET than the answer's earlier start gains.
 */
static int lookup_parallel(struct ofl_pipe *p, uint32_t i, uint32_t r0,
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
static int lookup_seq(struct ofl_pipe *p, uint32_t i, uint32_t r0,
                      struct chain_wqe *resp, struct ofl_unit *u)
{
    int rc = post_read(p, &u->read[0]);

    if (rc == 0)
        rc = post_bucket(p, i, 0, true, resp, u);
    if (rc == 0)
        rc = post_release(p, r0 + RDN_BUCKET_SLOTS, OFL_REL_MID, u);
    if (rc == 0)
        rc = post_read(p, &u->read[1]);
    if (rc == 0)
        rc = post_bucket(p, i, 1, true, resp, u);
    return rc;
}

/*
 * Posts worker unit i and response unit i, with lap-0 indexes (w_base and
 * r_base are the rings' first indexes) and sets unit i's counters to lap
 * 0's values, so their first bump yields lap 1's. The response WQEs are
 * released once all CASes completed (with cfg.seq, bucket 1's as soon as
 * its own did).
 */
static int post_unit(struct ofl_pipe *p, uint32_t i, uint32_t w_base,
                     uint32_t r_base, struct ofl_unit *u)
{
    const uint32_t w_unit = OFL_W_UNIT(p->cfg.seq), w0 = p->w.pi;
    const uint32_t next = w_base + (i + 1) * w_unit + OFL_HEAD;
    const uint32_t r0 = r_base + i * OFL_RESP_UNIT;
    struct chain_wqe resp[OFL_RESP_WQES];
    uint64_t ctr0[OFL_CTRS];
    int rc = chain_wait(&p->w, p->resp.rcq, i + 1, 0, &u->wait);

    if (rc == 0)
        rc = chain_send_en(&p->w, &p->w, next, 0, &u->en);
    if (rc == 0)
        rc = p->cfg.seq ? lookup_seq(p, i, r0, resp, u)
                        : lookup_parallel(p, i, r0, resp, u);
    if (rc == 0)
        rc = post_close(p, i, r0, u);
    if (rc == 0)
        rc = post_release(p, r0 + OFL_RESP_UNIT, OFL_REL_TAIL, u);
    if (rc == 0)
        rc = post_patches(p, i, u);
    if (rc < 0)
        return ofl_err(rc, "unit %u: %s", i, chain_errmsg());
    if (p->w.pi - w0 > w_unit)
        return ofl_err(-EPROTO, "unit %u takes %u worker WQEBBs, more than %u",
                       i, p->w.pi - w0, w_unit);
    rc = chain_pad(&p->w, w_unit - (p->w.pi - w0));
    if (rc < 0)
        return ofl_err(rc, "unit %u: %s", i, chain_errmsg());
    ctr0[OFL_HEAD_CTR] = chain_lap_counter(i + 1, next);
    ctr0[OFL_REL_CTR] = rel_counter0(p, u);
    memcpy(counter(p, i, 0).ptr, ctr0, sizeof(ctr0));
    return 0;
}

/*
 * Posts the receive of unit i: its scatter list follows struct
 * rdn_get_req, bucket addresses into the READs, compares into the CASes,
 * the request id into the WRITE_IMM, the receive count into the doorbell
 * record (re-posting the receive of GET k + iters). Posted once.
 */
static int post_recv(struct ofl_pipe *p, uint32_t i, const struct ofl_unit *u)
{
    struct rnic_sge sge[OFL_RECV_SGE];
    struct chain_loc l;
    unsigned n = 0;
    int rc = 0;

    for (unsigned b = 0; b < 2 && rc == 0; b++) {
        rc = chain_field(&u->read[b], CHAIN_F_RADDR, 0, &l);
        sge[n++] = chain_loc_sge(l);
    }
    for (unsigned j = 0; j < OFL_RESP_WQES && rc == 0; j++) {
        rc = chain_field(&u->cas[j], CHAIN_F_COMPARE, 0, &l);
        sge[n++] = chain_loc_sge(l);
    }
    if (rc == 0)
        rc = chain_field(&u->imm, CHAIN_F_IMM, 0, &l);
    if (rc == 0) {
        sge[n++] = chain_loc_sge(l);
        sge[n++] = chain_loc_sge(p->resp.rq_db);
        rc = chain_post_recv(&p->resp, sge, n, i);
    }
    return rc < 0 ? ofl_err(rc, "receive %u: %s", i, chain_errmsg()) : 0;
}

/* Builds the whole lap on fresh rings and posts one receive per unit. */
static int build_lap(struct ofl_pipe *p)
{
    uint32_t w_base = p->w.pi, r_base = p->resp.pi;
    uint32_t cq0 = p->w.scq->count;
    struct ofl_unit u;
    int rc = 0;

    for (uint32_t i = 0; i < p->cfg.iters && rc == 0; i++) {
        rc = post_unit(p, i, w_base, r_base, &u);
        if (rc == 0)
            rc = post_recv(p, i, &u);
    }
    /* The indexes above assume exactly one lap per ring, and nothing
     * on the worker produces a completion. */
    if (rc == 0 &&
        (p->w.pi - w_base != p->w.sq.wqebb_cnt ||
         p->resp.pi - r_base != p->resp.sq.wqebb_cnt || p->w.scq->count != cq0))
        rc = ofl_err(-EPROTO, "the lap does not fill the rings exactly");
    return rc;
}

/* ---- the pipeline ----------------------------------------------------- */

static bool cfg_ok(const struct ofl_pipe_cfg *c)
{
    return c && c->iters >= 2 && c->iters <= OFL_MAX_ITERS &&
           !(c->iters & (c->iters - 1)) && c->depth >= 1 &&
           c->depth <= c->iters && !(c->depth & (c->depth - 1)) &&
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
    const unsigned ctr_access = RNIC_ACCESS_LOCAL_WRITE |
                                RNIC_ACCESS_REMOTE_READ |
                                RNIC_ACCESS_REMOTE_ATOMIC;
    int rc;

    if (!dev || !p || !cfg_ok(cfg))
        return ofl_err(-EINVAL, "ofl_pipe_open: bad argument");
    memset(p, 0, sizeof(*p));
    p->cfg = *cfg;
    wa.sq_wqebb = cfg->iters * OFL_W_UNIT(cfg->seq);
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
    rc = chain_buf_open(dev, (size_t)cfg->iters * OFL_CTRS * 8, ctr_access,
                        &p->ctr);
    if (rc < 0) {
        ofl_err(rc, "lap counters: %s", chain_errmsg());
        goto err_close_resp;
    }
    rc = build_lap(p);
    if (rc < 0)
        goto err_close_ctr;
    return 0;

err_close_ctr:
    chain_buf_close(&p->ctr);
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

/* A pipeline's three parts' names under prefix (1..40 chars). */
struct ofl_names {
    char w[64], r[64], ctr[64];
};

static int pipe_names(const char *prefix, struct ofl_names *n)
{
    if (!prefix || !*prefix || strlen(prefix) > 40)
        return ofl_err(-EINVAL, "pipeline name: not 1..40 characters");
    snprintf(n->w, sizeof(n->w), "%s.w", prefix);
    snprintf(n->r, sizeof(n->r), "%s.r", prefix);
    snprintf(n->ctr, sizeof(n->ctr), "%s.ctr", prefix);
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
    rc = chain_buf_persist(&p->ctr, n.ctr);
    if (rc == 0)
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
    rc = chain_buf_attach(dev, n.ctr, &p->ctr);
    if (rc < 0)
        return ofl_err(rc, "attach %s: %s", n.ctr, chain_errmsg());
    rc = chain_q_attach(dev, n.w, OFL_W_FLAGS, 0, NULL, NULL, &p->w);
    if (rc < 0) {
        ofl_err(rc, "attach %s: %s", n.w, chain_errmsg());
        goto err_close_ctr;
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
err_close_ctr:
    chain_buf_close(&p->ctr);
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
    found += chain_buf_attach(dev, n.ctr, &p.ctr) == 0;
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
    chain_buf_close(&p->ctr);
    memset(p, 0, sizeof(*p));
}
