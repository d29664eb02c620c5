/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain_check_exec.c - the checker's execution model (see
 * chain_check.c for the whole picture): a private shadow of the memory a
 * chain touches, and the walk that runs the chain's queues on it one WQE
 * at a time, reading each WQE from the shadow ring when it executes and
 * applying its effects, under the NIC's rules (enable limits, WAIT
 * counts, FENCE, receives, RNR waits). Each step creates the issue and
 * completion events of the WQE (chain_check_hb.c) and records its
 * accesses for the race detection.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/chain/chain_check_int.h"

/* ---- memory ----------------------------------------------------------- */

int ck_add_region(struct chain_check *c, void *ptr, size_t len, bool sink)
{
    if (c->nmem == sizeof(c->mem) / sizeof(c->mem[0]))
        return chain_err(-ENOSPC, "chain_check: too many memory regions");
    c->mem[c->nmem].real = ptr;
    c->mem[c->nmem].len = len;
    c->mem[c->nmem].sink = sink;
    c->nmem++;
    return 0;
}

/* The shadow of [addr, addr+len), or NULL if no region holds all of it. */
static uint8_t *shadow(struct chain_check *c, uint64_t addr, uint64_t len,
                       bool *sink)
{
    for (unsigned i = 0; i < c->nmem; i++) {
        struct ck_region *m = &c->mem[i];
        uint64_t lo = (uint64_t)(uintptr_t)m->real;

        if (addr >= lo && len <= m->len && addr - lo <= m->len - len) {
            if (sink)
                *sink = m->sink;
            return m->shadow + (addr - lo);
        }
    }
    return NULL;
}

static void pend(struct ck_exec *x, uint64_t addr, uint64_t len, uint8_t kind)
{
    if (len == 0 || x->np == MAX_PEND)
        return;
    x->p[x->np].lo = addr;
    x->p[x->np].hi = addr + len;
    x->p[x->np].kind = kind;
    x->np++;
}

/* Copies len bytes at addr out of the shadow (an access of x). */
static bool mem_read(struct chain_check *c, struct ck_exec *x, uint64_t addr,
                     uint32_t len, uint8_t *dst)
{
    uint8_t *s = shadow(c, addr, len, NULL);

    if (!s)
        return false;
    memcpy(dst, s, len);
    pend(x, addr, len, ACC_R);
    return true;
}

/* Copies len bytes from src into the shadow at addr (an access of x). */
static bool mem_write(struct chain_check *c, struct ck_exec *x, uint64_t addr,
                      uint32_t len, const uint8_t *src)
{
    uint8_t *s = shadow(c, addr, len, NULL);

    if (!s)
        return false;
    memcpy(s, src, len);
    pend(x, addr, len, ACC_W);
    return true;
}

struct ck_q *ck_q_of(struct chain_check *c, const struct chain_q *q)
{
    for (unsigned i = 0; i < c->nq; i++)
        if (c->qs[i].q == q)
            return &c->qs[i];
    return NULL;
}

/* ---- the walk --------------------------------------------------------- */

static unsigned qi_of(struct chain_check *c, const struct ck_q *k)
{
    return (unsigned)(k - c->qs);
}

static struct ck_q *ckq_by_qpn(struct chain_check *c, uint32_t qpn)
{
    for (unsigned i = 0; i < c->nq; i++)
        if (c->qs[i].q->qpn == qpn)
            return &c->qs[i];
    return NULL;
}

struct ck_cq *ck_cq_by_num(struct chain_check *c, uint32_t num)
{
    for (unsigned i = 0; i < c->ncq; i++)
        if (c->cqs[i].num == num)
            return &c->cqs[i];
    return NULL;
}

/* The peer queue of k if it is part of the check, else NULL. */
static struct ck_q *peer_of(struct chain_check *c, struct ck_q *k)
{
    return k->q->peer ? ck_q_of(c, k->q->peer) : NULL;
}

static void cq_push(struct chain_check *c, struct ck_cq *cq, uint32_t ev)
{
    size_t cap = cq->cap;

    if (!ck_grow(c, (void **)&cq->ev, sizeof(*cq->ev), cq->count, &cap))
        return;
    cq->cap = (uint32_t)cap;
    cq->ev[cq->count++] = ev;
}

/* The earliest moment the NIC may fetch the WQE at index of queue k. */
static uint32_t fetch_earliest(struct chain_check *c, struct ck_q *k,
                               uint32_t index)
{
    if (k->managed) {
        /* Indexes only grow, so the covering enable never moves back. */
        for (; k->en_cur < k->nen; k->en_cur++)
            if ((int32_t)(k->en[k->en_cur].limit - index) > 0)
                return k->en[k->en_cur].ev;
        return EV_UNKNOWN;
    }
    if (c->o.window == CHAIN_CHECK_WINDOW_ALL || k->niss < c->o.window)
        return EV_START;
    return k->iss[k->niss - c->o.window].ev;
}

/*
 * The index up to which queue k is guaranteed to have issued at event e.
 * When e is k's own WQE being executed (not yet in k->iss), everything
 * before it was issued.
 */
static uint32_t executed_at(struct chain_check *c, struct ck_q *k, uint32_t e)
{
    uint32_t n = e <= EV_UNKNOWN ? 0 : ck_vc_of(c, e)[TH_ISSUE(qi_of(c, k))];

    if (n > k->niss)
        return k->next;
    return n ? k->iss[n - 1].end : k->base;
}

/*
 * Consumes the next receive of k for a message; returns its event. cause:
 * the sender's issue, or for a message from outside (outside) the
 * completion its sender saw first (EV_START: none); placed: the sender
 * QP's previous WRITE or SEND, which the responder placed first (RC
 * executes a QP's requests in order; EV_START: none).
 */
static uint32_t consume_recv(struct chain_check *c, struct ck_q *k,
                             uint32_t cause, uint32_t placed,
                             const uint8_t *data, uint32_t len, bool outside)
{
    struct chain_recv *r = &k->q->recvs[k->rq_next % k->q->rq_size];
    unsigned qi = qi_of(c, k), nd = 1;
    uint32_t deps[3] = {k->last_recv}, ev, off = 0, start = cause;

    if (cause)
        deps[nd++] = cause;
    if (placed)
        deps[nd++] = placed;
    ev = ck_new_event(c, TH_RECV(qi), deps, nd);
    /* A message from outside arrives at no known time, but after the QP's
     * previous one (RC delivers in order) and after its gate: its writes
     * start after exactly what the receive's event is after. */
    if (outside)
        start = ev;
    for (unsigned i = 0; i < r->n && off < len; i++) {
        uint32_t n =
            r->sge[i].length < len - off ? r->sge[i].length : len - off;
        bool sink = false;
        uint8_t *s = shadow(c, r->sge[i].addr, n, &sink);

        if (!s) {
            ck_hazard(c, CHAIN_HZ_BAD_WQE, qi, k->rq_next, qi, k->rq_next,
                      "receive %u of QP %u scatters outside the memory given "
                      "to the checker",
                      k->rq_next, k->q->qpn);
            break;
        }
        memcpy(s, data + off, n);
        if (GROW(c, c->acc, c->nacc, c->capacc))
            c->acc[c->nacc++] = (struct ck_acc){.lo = r->sge[i].addr,
                                                .hi = r->sge[i].addr + n,
                                                .start = start,
                                                .end = ev,
                                                .index = k->rq_next,
                                                .kind = ACC_W,
                                                .qi = (uint8_t)qi,
                                                .sink = sink,
                                                .recv = true};
        off += n;
    }
    k->last_recv = ev;
    k->rq_next++;
    if (k->rcq)
        cq_push(c, k->rcq, ev);
    return ev;
}

static bool recv_ready(const struct ck_q *k)
{
    return k->q->rq_size && (int32_t)(k->rq_limit - k->rq_next) > 0 &&
           (int32_t)(k->rq_posted - k->rq_next) > 0;
}

/* Whether m's gate CQ has had its count of completions in the walk. */
static bool gate_open(const struct ck_msg *m)
{
    return !m->gate || m->gate->count >= m->count;
}

/* The completion m's sender waited for (EV_START: none). */
static uint32_t gate_event(const struct ck_msg *m)
{
    return m->gate && m->count ? m->gate->ev[m->count - 1] : EV_START;
}

/*
 * Delivers messages injected from outside while receives are ready, in
 * order per QP: a message whose gate is still closed holds back the later
 * ones (RC order).
 */
bool ck_deliver_injected(struct chain_check *c)
{
    bool moved = false;

    for (unsigned i = 0; i < c->nq; i++) {
        struct ck_q *k = &c->qs[i];

        while (k->inject && recv_ready(k) && gate_open(k->inject)) {
            struct ck_msg *m = k->inject;

            consume_recv(c, k, gate_event(m), EV_START, m->data, m->len, true);
            k->inject = m->next;
            if (!k->inject)
                k->inject_tail = NULL;
            free(m);
            moved = true;
        }
    }
    return moved;
}

/* A decoded WQE (fields in host order). */
struct ck_wqe {
    uint8_t buf[MAX_WQE];
    uint8_t opcode, ds, flags;
    unsigned nbb;
};

/* Copies the first nseg segments of the WQE at index from the shadow ring. */
static void fetch_bytes(struct chain_check *c, struct ck_q *k, uint32_t index,
                        struct ck_wqe *w, unsigned nseg)
{
    for (unsigned s = 0; s < nseg; s++) {
        uint8_t *real = chain_seg_ptr(k->q, index, s);

        memcpy(w->buf + s * 16, shadow(c, (uint64_t)(uintptr_t)real, 16, NULL),
               16);
    }
}

/* Records the fetch of the WQE's segments (split where the ring wraps). */
static void pend_fetch(struct ck_exec *x, struct ck_q *k, uint32_t index,
                       unsigned ds)
{
    uint64_t lo = (uint64_t)(uintptr_t)chain_seg_ptr(k->q, index, 0);
    uint64_t ring_end = (uint64_t)(uintptr_t)k->q->sq.buf +
                        (uint64_t)k->q->sq.wqebb_cnt * MLX5_SEND_WQE_BB;
    uint64_t len = (uint64_t)ds * 16;

    if (lo + len <= ring_end) {
        pend(x, lo, len, ACC_FETCH);
    } else {
        pend(x, lo, ring_end - lo, ACC_FETCH);
        pend(x, (uint64_t)(uintptr_t)k->q->sq.buf, len - (ring_end - lo),
             ACC_FETCH);
    }
}

struct ck_sge {
    uint32_t len, lkey;
    uint64_t addr;
};

static struct ck_sge data_seg(const struct ck_wqe *w, unsigned seg)
{
    const uint8_t *p = w->buf + seg * 16;
    struct ck_sge s = {chain_get_be32(p), chain_get_be32(p + 4),
                       chain_get_be64(p + 8)};

    return s;
}

#define BAD(...)                                                               \
    do {                                                                       \
        ck_hazard(c, CHAIN_HZ_BAD_WQE, x->qi, x->index, x->qi, x->index,       \
                  __VA_ARGS__);                                                \
        return false;                                                          \
    } while (0)

/* Gathers a WQE's local data segments into buf (reads). */
static bool gather(struct chain_check *c, struct ck_exec *x,
                   const struct ck_wqe *w, unsigned first, uint8_t *buf,
                   uint32_t *len)
{
    *len = 0;
    for (unsigned s = first; s < w->ds; s++) {
        struct ck_sge g = data_seg(w, s);

        if (g.len == 0 || *len + g.len > CK_BUF)
            BAD("WQE %u gathers %u bytes (0 means 2 GiB)", x->index, g.len);
        if (!mem_read(c, x, g.addr, g.len, buf + *len))
            BAD("WQE %u gathers from memory not given to the checker",
                x->index);
        *len += g.len;
    }
    return true;
}

/* Scatters buf over a WQE's local data segments (writes). */
static bool scatter(struct chain_check *c, struct ck_exec *x,
                    const struct ck_wqe *w, unsigned first, const uint8_t *buf,
                    uint32_t len)
{
    uint32_t off = 0;

    for (unsigned s = first; s < w->ds && off < len; s++) {
        struct ck_sge g = data_seg(w, s);
        uint32_t n = g.len < len - off ? g.len : len - off;

        if (g.len == 0)
            BAD("WQE %u scatters to a 0 (2 GiB) entry", x->index);
        if (!mem_write(c, x, g.addr, n, buf + off))
            BAD("WQE %u scatters to memory not given to the checker", x->index);
        off += n;
    }
    return true;
}

static uint32_t scatter_len(const struct ck_wqe *w, unsigned first)
{
    uint32_t n = 0;

    for (unsigned s = first; s < w->ds; s++)
        n += data_seg(w, s).len;
    return n;
}

/* Remote memory: the shadow when the peer is part of the check. */
static bool remote_known(struct chain_check *c, struct ck_exec *x)
{
    return peer_of(c, x->cq) != NULL;
}

/*
 * RDMA WRITE(_IMM): gathers the local data and, when the peer is part of
 * the check, writes it at raddr; WRITE_IMM also consumes a receive.
 */
static bool exec_write(struct chain_check *c, struct ck_exec *x,
                       const struct ck_wqe *w, uint32_t issue_ev)
{
    uint64_t raddr = chain_get_be64(w->buf + 16);
    struct ck_q *peer = peer_of(c, x->cq);
    uint32_t len;

    if (!gather(c, x, w, 2, c->buf, &len))
        return false;
    if (peer && !mem_write(c, x, raddr, len, c->buf))
        BAD("WRITE %u targets memory not given to the checker", x->index);
    if (peer && w->opcode == MLX5_OPCODE_RDMA_WRITE_IMM)
        x->recv_ev =
            consume_recv(c, peer, issue_ev, x->cq->last_place, NULL, 0, false);
    return true;
}

/* SEND(_IMM): gathers the data into the peer's next receive. */
static bool exec_send(struct chain_check *c, struct ck_exec *x,
                      const struct ck_wqe *w, uint32_t issue_ev)
{
    struct ck_q *peer = peer_of(c, x->cq);
    uint32_t len;

    if (!gather(c, x, w, 1, c->buf, &len))
        return false;
    if (peer)
        x->recv_ev = consume_recv(c, peer, issue_ev, x->cq->last_place, c->buf,
                                  len, false);
    return true;
}

/*
 * RDMA READ: reads raddr (zeros when the responder is outside the check)
 * and scatters it over the local data segments.
 */
static bool exec_read(struct chain_check *c, struct ck_exec *x,
                      const struct ck_wqe *w)
{
    uint64_t raddr = chain_get_be64(w->buf + 16);
    uint32_t len = scatter_len(w, 2);

    if (len > CK_BUF)
        BAD("READ %u of %u bytes", x->index, len);
    memset(c->buf, 0, len);
    if (remote_known(c, x) && !mem_read(c, x, raddr, len, c->buf))
        BAD("READ %u from memory not given to the checker", x->index);
    return scatter(c, x, w, 2, c->buf, len);
}

/*
 * CAS / FADD on the 8 host-endian bytes at raddr (operands big-endian in
 * the WQE); the old value goes to the local result buffer.
 */
static bool exec_atomic(struct chain_check *c, struct ck_exec *x,
                        const struct ck_wqe *w)
{
    uint64_t raddr = chain_get_be64(w->buf + 16);
    uint64_t swap_add = chain_get_be64(w->buf + 32);
    uint64_t compare = chain_get_be64(w->buf + 40);
    uint64_t old = 0, now;
    uint8_t *t;

    if (raddr & 7)
        BAD("atomic %u on an unaligned address", x->index);
    if (remote_known(c, x)) {
        t = shadow(c, raddr, 8, NULL);
        if (!t)
            BAD("atomic %u on memory not given to the checker", x->index);
        memcpy(&old, t, 8);
        now = w->opcode == MLX5_OPCODE_ATOMIC_FA ? old + swap_add
              : old == compare                   ? swap_add
                                                 : old;
        memcpy(t, &now, 8);
        pend(x, raddr, 8, ACC_W);
    }
    return scatter(c, x, w, 3, (const uint8_t *)&old, 8);
}

/* SEND_EN / RECV_EN: raises a limit the way the engine does (16 bits). */
static void raise_limit(uint32_t *limit, uint32_t index)
{
    uint16_t delta = (uint16_t)(index - *limit);

    if (delta && delta < 0x8000)
        *limit += delta;
}

/*
 * SEND_EN / RECV_EN: raises the target's limit and, for SEND_EN, records
 * the enable (for fetch times) and checks it against the ring size and
 * what was posted.
 */
static bool exec_enable(struct chain_check *c, struct ck_exec *x,
                        const struct ck_wqe *w, uint32_t issue_ev)
{
    uint32_t index = chain_get_be32(w->buf + 24);
    struct ck_q *t = ckq_by_qpn(c, chain_get_be32(w->buf + 28));
    uint32_t ring, done, req;

    if (!t)
        BAD("enable %u names a QP the checker was not given", x->index);
    if (w->opcode == MLX5_OPCODE_RECV_EN) {
        raise_limit(&t->rq_limit, index);
        return true;
    }
    req = t->limit + (uint32_t)(int32_t)(int16_t)(uint16_t)(index - t->limit);
    raise_limit(&t->limit, index);
    if (GROW(c, t->en, t->nen, t->capen))
        t->en[t->nen++] = (struct ck_en){t->limit, req, issue_ev};
    ring = t->q->sq.wqebb_cnt;
    done = executed_at(c, t, issue_ev);
    if (t->limit - done > ring)
        ck_hazard(c, CHAIN_HZ_OVERFLOW, qi_of(c, t), t->limit, x->qi, x->index,
                  "SEND_EN %u releases QP %u up to %u, but only %u is surely "
                  "executed (ring of %u)",
                  x->index, t->q->qpn, t->limit, done, ring);
    if ((int32_t)(t->limit - t->posted) > 0 && t->posted - t->base < ring)
        ck_hazard(c, CHAIN_HZ_UNPOSTED, qi_of(c, t), t->limit, x->qi, x->index,
                  "SEND_EN %u releases QP %u up to %u, past the %u posted",
                  x->index, t->q->qpn, t->limit, t->posted);
    return true;
}

/* Decodes the WQE at k->next; false when it is malformed. */
static bool decode(struct chain_check *c, struct ck_exec *x, struct ck_wqe *w)
{
    struct ck_q *k = x->cq;
    const uint8_t *ctrl;

    fetch_bytes(c, k, x->index, w, 1);
    ctrl = w->buf;
    w->opcode = ctrl[3];
    w->ds = ctrl[7] & 0x3f;
    w->flags = ctrl[MLX5_CTRL_FLAGS_OFF];
    if (w->ds == 0)
        BAD("WQE %u has ds 0", x->index);
    if (!(w->opcode == MLX5_OPCODE_NOP || chain_layout_data_seg(w->opcode) ||
          chain_layout_is_wait_en(w->opcode)))
        BAD("WQE %u has unknown opcode 0x%02x", x->index, w->opcode);
    w->nbb = (w->ds * 16u + 63) / 64;
    fetch_bytes(c, k, x->index, w, w->ds);
    return true;
}

/* Runs the effects of w; false when it failed (a hazard is recorded). */
static bool effects(struct chain_check *c, struct ck_exec *x,
                    const struct ck_wqe *w, uint32_t issue_ev)
{
    switch (w->opcode) {
    case MLX5_OPCODE_RDMA_WRITE:
    case MLX5_OPCODE_RDMA_WRITE_IMM:
        return exec_write(c, x, w, issue_ev);
    case MLX5_OPCODE_SEND:
    case MLX5_OPCODE_SEND_IMM:
        return exec_send(c, x, w, issue_ev);
    case MLX5_OPCODE_RDMA_READ:
        return exec_read(c, x, w);
    case MLX5_OPCODE_ATOMIC_CS:
    case MLX5_OPCODE_ATOMIC_FA:
        return exec_atomic(c, x, w);
    case MLX5_OPCODE_SEND_EN:
    case MLX5_OPCODE_RECV_EN:
        return exec_enable(c, x, w, issue_ev);
    default:
        return true;
    }
}

/* Whether a WAIT can pass; adds the satisfying completion to deps. */
static bool wait_ready(struct chain_check *c, struct ck_exec *x,
                       const struct ck_wqe *w, uint32_t *deps, unsigned *nd)
{
    uint32_t count = chain_get_be32(w->buf + 24);
    struct ck_cq *cq = ck_cq_by_num(c, chain_get_be32(w->buf + 28));

    if (!cq) {
        ck_hazard(c, CHAIN_HZ_BAD_WQE, x->qi, x->index, x->qi, x->index,
                  "WAIT %u names a CQ the checker was not given", x->index);
        x->cq->failed = true;
        return false;
    }
    if ((int32_t)(cq->count - count) < 0)
        return false;
    if (cq->feeders > 1)
        ck_hazard(c, CHAIN_HZ_AMBIGUOUS, x->qi, x->index, x->qi, x->index,
                  "WAIT %u counts CQ %u, which several queues feed: which "
                  "completion it waits for is not defined",
                  x->index, cq->num);
    if (count)
        deps[(*nd)++] = cq->ev[count - 1];
    return true;
}

/*
 * Records x's pending accesses for the race detection: fetches over
 * [fetch, issue], RDMA accesses over [issue, compl].
 */
static void record(struct chain_check *c, struct ck_exec *x, uint32_t fetch,
                   uint32_t issue, uint32_t compl )
{
    for (unsigned i = 0; i < x->np; i++) {
        struct ck_pend *p = &x->p[i];
        bool sink = false;

        if (!GROW(c, c->acc, c->nacc, c->capacc))
            return;
        shadow(c, p->lo, p->hi - p->lo, &sink);
        c->acc[c->nacc++] =
            (struct ck_acc){.lo = p->lo,
                            .hi = p->hi,
                            .start = p->kind == ACC_FETCH ? fetch : issue,
                            .end = p->kind == ACC_FETCH ? issue : compl,
                            .index = x->index,
                            .kind = p->kind,
                            .qi = (uint8_t)x->qi,
                            .sink = sink};
    }
}

static bool needs_recv(uint8_t op)
{
    return op == MLX5_OPCODE_SEND || op == MLX5_OPCODE_SEND_IMM ||
           op == MLX5_OPCODE_RDMA_WRITE_IMM;
}

/* Executes the next WQE of queue qi if it can run; true if it did. */
bool ck_step(struct chain_check *c, unsigned qi)
{
    struct ck_q *k = &c->qs[qi];
    struct ck_exec x = {.cq = k, .qi = qi, .index = k->next};
    struct ck_wqe w;
    uint32_t deps[4], nd = 0, issue, compl, fetch;

    if (k->failed || (int32_t)(k->limit - k->next) <= 0)
        return false;
    if (!decode(c, &x, &w)) {
        k->failed = true;
        return false;
    }
    if ((int32_t)(k->limit - (k->next + w.nbb)) < 0)
        return false; /* only partly released */
    deps[nd++] = k->last_issue;
    if (w.opcode == MLX5_OPCODE_WAIT && !wait_ready(c, &x, &w, deps, &nd))
        return false;
    if (needs_recv(w.opcode) && peer_of(c, k) && !recv_ready(peer_of(c, k)))
        return false; /* waits for a receive (RNR retry) */
    if (w.flags & CHAIN_FENCE)
        deps[nd++] = k->last_rdat;
    fetch = fetch_earliest(c, k, k->next);
    if (k->managed && fetch != EV_UNKNOWN)
        deps[nd++] = fetch;
    pend_fetch(&x, k, k->next, w.ds);
    issue = ck_new_event(c, TH_ISSUE(qi), deps, nd);
    if (!effects(c, &x, &w, issue)) {
        k->failed = true; /* as the QP would enter the error state */
        return false;
    }
    deps[0] = issue;
    deps[1] = k->last_compl;
    nd = 2;
    if (x.recv_ev)
        deps[nd++] = x.recv_ev;
    compl = ck_new_event(c, TH_COMPL(qi), deps, nd);
    record(c, &x, fetch == EV_UNKNOWN ? EV_START : fetch, issue, compl );
    if (GROW(c, k->iss, k->niss, k->capiss))
        k->iss[k->niss++] = (struct ck_issue){k->next, k->next + w.nbb, issue};
    k->last_issue = issue;
    k->last_compl = compl ;
    if (w.opcode == MLX5_OPCODE_RDMA_READ ||
        w.opcode == MLX5_OPCODE_ATOMIC_CS || w.opcode == MLX5_OPCODE_ATOMIC_FA)
        k->last_rdat = compl ;
    if (w.opcode == MLX5_OPCODE_RDMA_WRITE || needs_recv(w.opcode))
        k->last_place = compl ;
    if (w.flags & CHAIN_SIGNALED)
        cq_push(c, k->scq, compl );
    k->next += w.nbb;
    c->rep->steps++;
    return true;
}

/* ---- dead WAITs and shadows ------------------------------------------ */

/* Queues blocked on a WAIT (or an unanswerable message) when all stopped. */
void ck_find_dead_waits(struct chain_check *c)
{
    struct ck_wqe w;

    for (unsigned i = 0; i < c->nq; i++) {
        struct ck_q *k = &c->qs[i];
        struct ck_exec x = {.cq = k, .qi = i, .index = k->next};

        if (k->failed || (int32_t)(k->limit - k->next) <= 0)
            continue;
        if (!decode(c, &x, &w))
            continue;
        if (w.opcode == MLX5_OPCODE_WAIT)
            ck_hazard(c, CHAIN_HZ_DEAD_WAIT, i, k->next, i, k->next,
                      "WAIT %u of QP %u waits for CQ %u to reach %u: it never "
                      "does",
                      k->next, k->q->qpn, chain_get_be32(w.buf + 28),
                      chain_get_be32(w.buf + 24));
        else if (needs_recv(w.opcode))
            ck_hazard(c, CHAIN_HZ_DEAD_WAIT, i, k->next, i, k->next,
                      "WQE %u of QP %u waits for a receive that is never "
                      "posted",
                      k->next, k->q->qpn);
    }
}

int ck_make_shadows(struct chain_check *c)
{
    for (unsigned i = 0; i < c->nmem; i++) {
        struct ck_region *m = &c->mem[i];

        free(m->shadow);
        m->shadow = malloc(m->len);
        if (!m->shadow)
            return chain_err(-ENOMEM, "chain_check: out of memory");
        memcpy(m->shadow, m->real, m->len);
    }
    return 0;
}
