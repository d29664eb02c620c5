/*
 * rdn/offload_chain.c - building, arming and retiring one client's GET
 * pipeline (see offload_chain.h for the chain and its ordering argument).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/offload_chain.h"

#define OFL_READ_DS   (2 + 2 * RDN_BUCKET_SLOTS) /* ctrl, raddr, scatter */
#define OFL_RECV_SGE  (2 + OFL_RESP_WQES + 1)    /* see post_recv() */
#define OFL_WORKER_CQ 64 /* WAITs read the workers' CQs; nobody polls */

_Static_assert(OFL_RECV_SGE <= MLX5_RECV_MAX_SGE, "receive scatter list");
_Static_assert(2 * RDN_BUCKET_SLOTS <= CHAIN_MAX_SGE, "READ scatter list");

static uint32_t wqebb_of(unsigned ds)
{
    return (ds * MLX5_SEND_WQE_DS + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;
}

/* WQEBBs of a worker's head, READ and CASes. */
static uint32_t worker_base(void)
{
    return OFL_HEAD_WQEBB + wqebb_of(OFL_READ_DS) + RDN_BUCKET_SLOTS;
}

/* Worker a also waits for worker b's previous enable, then enables each
 * of its response WQEs once its CAS completed (see enable_resp()). */
static uint32_t wa_unit(void)
{
    return worker_base() + 1 + 2 * RDN_BUCKET_SLOTS;
}

/* Worker b also waits for its CASes and worker a's enables, and enables
 * the rest of resp. */
static uint32_t wb_unit(void)
{
    return worker_base() + 3;
}

static uint32_t resp_unit(void)
{
    return OFL_RESP_WQES + 1;
}

static uint32_t ring_for(uint32_t unit, uint32_t iters)
{
    uint32_t need = (iters + 1) * unit, n = 1;

    while (n < need)
        n <<= 1;
    return n;
}

/* The compare a CAS holds until a request overwrites it: ds 0, which no
 * match word has (they all carry RDN_SLOT_DS), so it matches nothing. */
static uint64_t cmp_never(void)
{
    return chain_ctrl_word(MLX5_OPCODE_NOP, 0, 0);
}

static uint64_t slot_addr(const struct ofl_pipe *p, uint64_t k)
{
    return p->cfg.slot_addr +
           (k & (p->cfg.depth - 1)) * (uint64_t)p->cfg.slot_size;
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

/*
 * Head of iteration k on worker q: wait for request k's receive, then
 * release the body of k and the head of k + 1 (`unit` blocks further on).
 */
static int post_head(struct ofl_pipe *p, struct chain_q *q, uint64_t k,
                     uint32_t unit)
{
    uint32_t start = q->pi;
    int rc = chain_wait(q, p->resp.rcq, (uint32_t)(k + 1), 0, NULL);

    if (rc == 0)
        rc = chain_send_en(q, q, start + unit + OFL_HEAD_WQEBB, 0, NULL);
    return rc;
}

/* A READ of bucket 0 whose scatter list is filled in by set_scatter(). */
static int post_read(struct ofl_pipe *p, struct chain_q *q,
                     struct chain_wqe *out)
{
    struct rnic_sge ph[2 * RDN_BUCKET_SLOTS];
    struct chain_loc table = chain_loc_mr(
        p->cfg.table_mr, p->cfg.table_mr->addr, sizeof(struct rdn_bucket));

    for (unsigned i = 0; i < 2 * RDN_BUCKET_SLOTS; i++)
        ph[i] = chain_loc_sge(chain_loc_part(q->sink, 0, 8));
    return chain_read(q, ph, 2 * RDN_BUCKET_SLOTS, table, 0, out);
}

/*
 * Response WQE i of iteration k (on resp, a NOP shaped like a WRITE into
 * the client's slot) and the CAS on worker ctl that may turn it into that
 * WRITE. The CAS compares with nothing until a request arrives.
 */
static int post_resp(struct ofl_pipe *p, struct chain_q *ctl, uint64_t k,
                     unsigned cas_flags, struct chain_wqe *resp,
                     struct chain_wqe *cas)
{
    struct rnic_sge ph = chain_loc_sge(chain_loc_part(p->resp.sink, 0, 8));
    struct chain_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE,
                          .sg = &ph,
                          .nsg = 1,
                          .raddr = slot_addr(p, k) + RDN_RESP_ITEM_OFF,
                          .rkey = p->cfg.slot_rkey};
    struct chain_loc cmp;
    struct chain_if cif;
    int rc;

    rc = chain_if_post(ctl, &p->resp, &wr, 0, 0, CHAIN_IF_ARM, cas_flags, &cif);
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

/* Points the READ's scatter list at four response WQEs: each slot's match
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
 * The receive of request k: its scatter list follows struct rdn_get_req,
 * bucket addresses into the READs, compares into the CASes, the request id
 * into the WRITE_IMM.
 */
static int post_recv(struct ofl_pipe *p, uint64_t k,
                     const struct chain_wqe *read, const struct chain_wqe *cas,
                     const struct chain_wqe *imm)
{
    struct rnic_sge sge[OFL_RECV_SGE];
    struct chain_loc l;
    unsigned n = 0;
    int rc = 0;

    for (unsigned i = 0; i < 2 && rc == 0; i++) {
        rc = chain_field(&read[i], CHAIN_F_RADDR, 0, &l);
        sge[n++] = chain_loc_sge(l);
    }
    for (unsigned i = 0; i < OFL_RESP_WQES && rc == 0; i++) {
        rc = chain_field(&cas[i], CHAIN_F_COMPARE, 0, &l);
        sge[n++] = chain_loc_sge(l);
    }
    if (rc == 0)
        rc = chain_field(imm, CHAIN_F_IMM, 0, &l);
    if (rc < 0)
        return rc;
    sge[n++] = chain_loc_sge(l);
    return chain_post_recv(&p->resp, sge, n, k);
}

/* ---- one iteration ---------------------------------------------------- */

/* The response half: eight guarded WRITEs, the READs, the closing
 * WRITE_IMM. read[2], cas[8] and *imm receive what was posted. */
static int post_body(struct ofl_pipe *p, uint64_t k, struct ofl_iter *it,
                     struct chain_wqe *read, struct chain_wqe *cas,
                     struct chain_wqe *imm)
{
    struct chain_q *w[2] = {&p->wa, &p->wb};
    struct rnic_sge gen = chain_loc_sge(p->cfg.gen);
    int rc = 0;

    for (unsigned b = 0; b < 2 && rc == 0; b++) {
        rc = post_read(p, w[b], &read[b]);
        for (unsigned i = 0; i < RDN_BUCKET_SLOTS && rc == 0; i++) {
            unsigned j = b * RDN_BUCKET_SLOTS + i;

            /* FENCE: the first CAS runs once the READ has landed. */
            rc = post_resp(p, w[b], k, i == 0 ? CHAIN_FENCE : 0, &it->resp[j],
                           &cas[j]);
        }
        if (rc == 0)
            rc = set_scatter(&read[b], &it->resp[b * RDN_BUCKET_SLOTS]);
    }
    if (rc == 0)
        rc = chain_write_imm(
            &p->resp, &gen, 1,
            client_loc(p, slot_addr(p, k) + RDN_RESP_GEN_OFF, 8), 0,
            CHAIN_SIGNALED, imm);
    return rc;
}

/*
 * Releases iteration k's response WQEs as early as their CASes allow, so
 * the response queue's WQEs of bucket 1 run while worker a's later CASes
 * and worker b's are still in flight:
 *   wa: WAIT(wb's enable of k - 1)  then per slot i: WAIT(CAS i)
 *       SEND_EN(resp up to resp[i])  (the last one signaled)
 *   wb: WAIT(its last CAS)  WAIT(wa's last enable)  SEND_EN(resp: all of k)
 * Every enable thus follows the completion of the CASes of every WQE it
 * releases, and the enables of resp come in ring order (wa's of k after
 * wb's of k - 1, wb's of k after wa's of k), so a limit never overtakes
 * an unresolved WQE whatever order the workers run in.
 */
static int enable_resp(struct ofl_pipe *p, const struct ofl_iter *it,
                       const struct chain_wqe *cas)
{
    struct chain_wqe wa_last, wb_en;
    int rc = chain_wait(&p->wa, p->wb.scq, p->wb_en_count, 0, NULL);

    for (unsigned i = 0; i < RDN_BUCKET_SLOTS && rc == 0; i++) {
        rc = chain_wait_wqe(&p->wa, &cas[i], 0, NULL);
        if (rc == 0)
            rc = chain_send_en(&p->wa, &p->resp, it->resp[i].index + 1,
                               i + 1 == RDN_BUCKET_SLOTS ? CHAIN_SIGNALED : 0,
                               &wa_last);
    }
    if (rc == 0)
        rc = chain_wait_wqe(&p->wb, &cas[OFL_RESP_WQES - 1], 0, NULL);
    if (rc == 0)
        rc = chain_wait_wqe(&p->wb, &wa_last, 0, NULL);
    if (rc == 0)
        rc =
            chain_send_en(&p->wb, &p->resp, p->resp.pi, CHAIN_SIGNALED, &wb_en);
    if (rc == 0)
        p->wb_en_count = wb_en.cq_count;
    return rc;
}

/* Room for one more iteration on every ring. */
static bool have_room(const struct ofl_pipe *p)
{
    return chain_q_room(&p->wa) >= wa_unit() &&
           chain_q_room(&p->wb) >= wb_unit() &&
           chain_q_room(&p->resp) >= resp_unit();
}

/*
 * Arms iteration k = p->armed: its body on both workers and resp, the
 * workers' enables of resp, the heads of k + 1, then its receive. The layout
 * must be exactly one unit per ring, which the heads' enable indexes assume.
 */
static int arm_one(struct ofl_pipe *p)
{
    uint64_t k = p->armed;
    struct ofl_iter *it = &p->iter[k & (p->cfg.iters - 1)];
    struct chain_wqe read[2], cas[OFL_RESP_WQES], imm;
    uint32_t wa0 = p->wa.pi, wb0 = p->wb.pi, r0 = p->resp.pi;
    int rc;

    if (!have_room(p))
        return -ENOSPC;
    rc = post_body(p, k, it, read, cas, &imm);
    if (rc == 0)
        rc = enable_resp(p, it, cas);
    it->wa_end = p->wa.pi;
    it->wb_end = p->wb.pi;
    it->resp_end = p->resp.pi;
    if (rc == 0)
        rc = post_head(p, &p->wa, k + 1, wa_unit());
    if (rc == 0)
        rc = post_head(p, &p->wb, k + 1, wb_unit());
    if (rc == 0 &&
        (p->wa.pi - wa0 != wa_unit() || p->wb.pi - wb0 != wb_unit() ||
         p->resp.pi - r0 != resp_unit()))
        rc = -EPROTO;
    if (rc == 0)
        rc = post_recv(p, k, read, cas, &imm);
    if (rc < 0) {
        p->failed = true; /* a half-built iteration cannot be taken back */
        return rc;
    }
    p->armed++;
    return 0;
}

/* ---- the pipeline ----------------------------------------------------- */

static int open_worker(struct rnic_device *dev, uint32_t unit, uint32_t iters,
                       struct chain_q *q)
{
    struct chain_q_attr a = {
        .sq_wqebb = ring_for(unit, iters),
        .flags = RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND,
        .cq_depth = OFL_WORKER_CQ,
        .cq_flags = RNIC_CQ_IGNORE_OVERRUN,
        .ring_access = RNIC_ACCESS_LOCAL_WRITE, /* receive scatters only */
    };
    int rc = chain_q_open(dev, &a, q);

    return rc < 0 ? rc : chain_q_connect(q, q);
}

static bool cfg_ok(const struct ofl_pipe_cfg *c)
{
    return c && c->iters >= 2 && !(c->iters & (c->iters - 1)) &&
           c->depth >= 1 && !(c->depth & (c->depth - 1)) && c->table_mr &&
           c->gen.ptr && c->gen.len == 8 && c->done_cq && c->master &&
           c->slot_size >= rdn_resp_slot_size(0);
}

int ofl_pipe_open(struct rnic_device *dev, const struct ofl_pipe_cfg *cfg,
                  struct ofl_pipe *p)
{
    struct chain_q_attr ra;
    int rc;

    if (!dev || !p || !cfg_ok(cfg))
        return -EINVAL;
    memset(p, 0, sizeof(*p));
    p->cfg = *cfg;
    p->iter = calloc(cfg->iters, sizeof(*p->iter));
    if (!p->iter)
        return -ENOMEM;
    memset(&ra, 0, sizeof(ra));
    ra.sq_wqebb = ring_for(resp_unit(), cfg->iters);
    ra.rq_wqe = cfg->iters;
    ra.max_recv_sge = OFL_RECV_SGE;
    /* The client's peer: it may SEND requests and nothing else, so no key
     * of the server's NIC is reachable through it. */
    ra.flags = RNIC_QP_MANAGED_SEND | RNIC_QP_RESTRICT_ACCESS;
    /* Its ring: scattered into locally, CASed by the workers (loopback). */
    ra.ring_access = RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_ATOMIC;
    ra.scq = cfg->done_cq;
    ra.cq_depth = 4 * cfg->iters; /* its own receive CQ, polled */
    /* Worker a first, then b: engine threads take QPs round robin, so the
     * two workers land on different threads when there are several. */
    rc = open_worker(dev, wa_unit(), cfg->iters, &p->wa);
    if (rc == 0)
        rc = open_worker(dev, wb_unit(), cfg->iters, &p->wb);
    if (rc == 0)
        rc = chain_q_open(dev, &ra, &p->resp);
    if (rc == 0)
        rc = post_head(p, &p->wa, 0, wa_unit());
    if (rc == 0)
        rc = post_head(p, &p->wb, 0, wb_unit());
    if (rc < 0)
        ofl_pipe_close(p);
    return rc;
}

int ofl_pipe_addr(struct ofl_pipe *p, struct rnic_addr *out)
{
    if (!p || !p->resp.qp || !out)
        return -EINVAL;
    return rnic_qp_addr(p->resp.qp, out);
}

/* Releases both workers' first heads through the master queue. */
static int kick(struct ofl_pipe *p)
{
    struct chain_q *m = p->cfg.master;
    struct rnic_wc wc;
    int rc;

    /* The first heads sit at index 0 of the workers' fresh rings. */
    rc = chain_send_en(m, &p->wa, OFL_HEAD_WQEBB, 0, NULL);
    if (rc == 0)
        rc = chain_send_en(m, &p->wb, OFL_HEAD_WQEBB, CHAIN_SIGNALED, NULL);
    if (rc == 0)
        rc = chain_q_doorbell(m);
    if (rc < 0)
        return rc;
    rc = chain_cq_poll_wait(m->scq, &wc, 5000);
    if (rc == 1 && wc.status != RNIC_WC_SUCCESS)
        rc = -EIO;
    else if (rc == 0)
        rc = -ETIMEDOUT;
    if (rc < 0)
        return rc;
    chain_q_retire(m, m->pi);
    return 0;
}

int ofl_pipe_connect(struct ofl_pipe *p, const struct rnic_addr *client)
{
    if (!p || !p->resp.qp || !client)
        return -EINVAL;
    return rnic_connect(p->resp.qp, client);
}

int ofl_pipe_start(struct ofl_pipe *p)
{
    int rc;

    if (!p || p->started)
        return -EINVAL;
    rc = ofl_pipe_rearm(p);
    if (rc >= 0)
        rc = kick(p);
    if (rc < 0) {
        p->failed = true;
        return rc;
    }
    p->started = true;
    return 0;
}

int ofl_pipe_poll_recv(struct ofl_pipe *p)
{
    struct rnic_wc wc[32];
    int total = 0, n;

    do {
        n = rnic_poll_cq(p->resp.rcq->cq, 32, wc);
        if (n < 0) {
            p->failed = true;
            return n;
        }
        for (int i = 0; i < n; i++) {
            if (wc[i].status != RNIC_WC_SUCCESS)
                p->failed = true;
            else
                p->received++;
        }
        total += n;
    } while (n == 32);
    return total;
}

/* True if any response WQE of the iteration became a WRITE. */
static bool iter_hit(const struct ofl_iter *it)
{
    for (unsigned i = 0; i < OFL_RESP_WQES; i++)
        if (chain_wqe_opcode_now(&it->resp[i]) == MLX5_OPCODE_RDMA_WRITE)
            return true;
    return false;
}

void ofl_pipe_complete(struct ofl_pipe *p, const struct rnic_wc *wc)
{
    struct ofl_iter *it;

    if (wc->status != RNIC_WC_SUCCESS || p->done == p->armed) {
        p->failed = true;
        return;
    }
    it = &p->iter[p->done & (p->cfg.iters - 1)];
    if (wc->wqe_counter != (uint16_t)(it->resp_end - 1)) {
        p->failed = true; /* completions come in order: this is not ours */
        return;
    }
    if (iter_hit(it))
        p->hits++;
    else
        p->misses++;
    /* Everything of iteration k ran before its WRITE_IMM completed. */
    chain_q_retire(&p->wa, it->wa_end);
    chain_q_retire(&p->wb, it->wb_end);
    chain_q_retire(&p->resp, it->resp_end);
    p->done++;
}

int ofl_pipe_rearm(struct ofl_pipe *p)
{
    int n = 0, rc;

    if (p->failed)
        return -EIO;
    while (p->armed - p->done < p->cfg.iters) {
        rc = arm_one(p);
        if (rc < 0)
            return rc;
        n++;
    }
    return n;
}

bool ofl_pipe_failed(struct ofl_pipe *p)
{
    if (!p->failed && (rnic_qp_state(p->wa.qp) == RNIC_QPS_ERR ||
                       rnic_qp_state(p->wb.qp) == RNIC_QPS_ERR ||
                       rnic_qp_state(p->resp.qp) == RNIC_QPS_ERR))
        p->failed = true;
    return p->failed;
}

void ofl_pipe_close(struct ofl_pipe *p)
{
    if (!p)
        return;
    chain_q_close(&p->resp);
    chain_q_close(&p->wb);
    chain_q_close(&p->wa);
    free(p->iter);
    memset(p, 0, sizeof(*p));
}
