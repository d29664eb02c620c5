/*
 * rdn/chain_check.c - the chain checker.
 *
 * It walks a built chain the way the NIC would run it, on a private copy
 * (shadow) of the rings and of the memory the chain touches: queues run in
 * one legal order, each WQE read from the shadow ring when it executes
 * (just-in-time, as softnic does), its effects applied to the shadow.
 * Alongside it computes happens-before with vector clocks over three
 * threads per queue (WQE issue order, completion order, receive order),
 * joined by the NIC's ordering rules:
 *   - a WQE issues after the previous one of its queue (WQ order);
 *   - a FENCE'd WQE issues after the queue's earlier READ/atomics completed;
 *   - a WAIT passes after the completion that made its CQ count;
 *   - completions of a queue are in order; a SEND completes after the
 *     receive it consumed;
 *   - the NIC may fetch a WQE of a managed queue as soon as a SEND_EN
 *     covers it, and a WQE of an unmanaged queue as soon as it is posted
 *     (or, with a window, once the WQE `window` places earlier issued).
 * Every byte range read or written is recorded with the interval in which
 * it may happen ([issue, completion] for RDMA, [earliest fetch, issue] for
 * a WQE fetch). Two overlapping accesses, one a write, that are ordered
 * neither way are a hazard: a stale fetch when one is a fetch, a data race
 * otherwise. A queue still blocked on a WAIT when nothing can move is a
 * dead WAIT. Releasing more WQEs than the ring holds ahead of what is
 * guaranteed executed is an overflow.
 *
 * The walk is one execution: data-dependent paths not taken (say, the
 * other branch of an if) are not examined, so tests check both branches.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/chain_int.h"

#define NT          (3 * CHAIN_CHECK_MAX_Q) /* vector clock width */
#define TH_ISSUE(i) (3 * (i))
#define TH_COMPL(i) (3 * (i) + 1)
#define TH_RECV(i)  (3 * (i) + 2)
#define EV_START    0u /* the moment the chain is released: before all */
#define EV_UNKNOWN  1u /* an outside event: ordered with nothing */
#define MAX_PEND    (CHAIN_MAX_SGE + CHAIN_RECV_MAX_SGE + 4)
#define MAX_WQE     (MLX5_WQE_MAX_DS * MLX5_SEND_WQE_DS)

enum { ACC_R, ACC_W, ACC_FETCH };

struct ck_ev {
    uint32_t th, seq;
};

struct ck_region {
    uint8_t *real;
    size_t len;
    uint8_t *shadow;
    bool sink; /* writes here are discarded results: never races */
};

struct ck_cq {
    uint32_t num, count;
    uint32_t *ev; /* ev[n]: the event of completion n+1 */
    uint32_t cap;
    unsigned feeders;
};

struct ck_en {
    uint32_t limit, ev;
};

struct ck_issue {
    uint32_t index, end, ev; /* WQE's index, index after it, issue event */
};

struct ck_msg {
    struct ck_msg *next;
    uint32_t len;
    uint8_t data[];
};

struct ck_q {
    struct chain_q *q;
    bool managed, failed;
    uint32_t base, next, limit, posted;
    struct ck_en *en;
    unsigned nen, capen, en_cur;
    struct ck_issue *iss;
    unsigned niss, capiss;
    uint32_t last_issue, last_compl, last_rdat, last_recv;
    struct ck_cq *scq, *rcq;
    uint32_t rq_next, rq_limit, rq_posted;
    bool rq_managed;
    struct ck_msg *inject, *inject_tail;
};

struct ck_acc {
    uint64_t lo, hi;
    uint32_t start, end;
    uint32_t index;
    uint8_t kind, qi;
    bool sink;
    bool recv; /* a receive's scatter (index counts receives) */
};

struct chain_check {
    struct chain_check_opts o;
    struct ck_q qs[CHAIN_CHECK_MAX_Q];
    unsigned nq;
    struct ck_cq cqs[2 * CHAIN_CHECK_MAX_Q];
    unsigned ncq;
    struct ck_region mem[CHAIN_CHECK_MAX_MEM + 2 * CHAIN_CHECK_MAX_Q];
    unsigned nmem;
    struct ck_ev *ev;
    uint32_t *vc;
    uint32_t nev, capev;
    uint32_t thseq[NT];
    struct ck_acc *acc;
    size_t nacc, capacc;
    uint64_t *seen;
    size_t nseen, capseen;
    struct chain_report *rep;
    bool oom;
    uint8_t *buf; /* one WQE's payload */
};

#define CK_BUF (1u << 20)

/* A pending access of the WQE being executed. */
struct ck_pend {
    uint64_t lo, hi;
    uint8_t kind;
};

struct ck_exec {
    struct ck_q *cq;
    unsigned qi;
    uint32_t index;
    struct ck_pend p[MAX_PEND];
    unsigned np;
    uint32_t recv_ev; /* receive consumed at the peer, 0 if none */
};

/* ---- growing arrays --------------------------------------------------- */

static bool grow(struct chain_check *c, void **arr, size_t elem, size_t n,
                 size_t *cap)
{
    void *p;
    size_t nc;

    if (n < *cap)
        return true;
    nc = *cap ? *cap * 2 : 64;
    p = realloc(*arr, nc * elem);
    if (!p) {
        c->oom = true;
        return false;
    }
    *arr = p;
    *cap = nc;
    return true;
}

#define GROW(c, arr, n, cap)                                                   \
    ({                                                                         \
        size_t cap_ = (cap);                                                   \
        bool ok_ = grow((c), (void **)&(arr), sizeof(*(arr)), (n), &cap_);     \
        (cap) = cap_;                                                          \
        ok_;                                                                   \
    })

/* ---- events and happens-before ---------------------------------------- */

static uint32_t *vc_of(struct chain_check *c, uint32_t e)
{
    return c->vc + (size_t)e * NT;
}

static bool ensure_events(struct chain_check *c)
{
    size_t cap = c->capev, cap2 = c->capev;

    if (!grow(c, (void **)&c->ev, sizeof(*c->ev), c->nev, &cap))
        return false;
    if (!grow(c, (void **)&c->vc, sizeof(uint32_t) * NT, c->nev, &cap2))
        return false;
    c->capev = (uint32_t)cap;
    return true;
}

/* A new event on thread th that happens after every event in deps. */
static uint32_t new_event(struct chain_check *c, unsigned th,
                          const uint32_t *deps, unsigned ndeps)
{
    uint32_t e = c->nev, *v;

    if (!ensure_events(c))
        return EV_UNKNOWN;
    c->nev++;
    v = vc_of(c, e);
    memset(v, 0, sizeof(uint32_t) * NT);
    for (unsigned i = 0; i < ndeps; i++) {
        const uint32_t *d = vc_of(c, deps[i]);

        for (unsigned t = 0; t < NT; t++)
            if (d[t] > v[t])
                v[t] = d[t];
    }
    v[th] = ++c->thseq[th];
    c->ev[e].th = th;
    c->ev[e].seq = v[th];
    return e;
}

/* Whether event a happens before (or is) event b. */
static bool hb(struct chain_check *c, uint32_t a, uint32_t b)
{
    if (a == EV_START)
        return true;
    if (a == EV_UNKNOWN || b == EV_UNKNOWN || b == EV_START)
        return false;
    return vc_of(c, b)[c->ev[a].th] >= c->ev[a].seq;
}

/* ---- hazards ---------------------------------------------------------- */

static uint32_t slot_of(struct chain_check *c, unsigned qi, uint32_t index)
{
    return qi < c->nq ? index % c->qs[qi].q->sq.wqebb_cnt : index;
}

/* Records a hazard once per (kind, WQE slot, other WQE slot). */
static void hazard(struct chain_check *c, enum chain_hazard_kind k, unsigned qi,
                   uint32_t index, unsigned by_qi, uint32_t by_index,
                   const char *fmt, ...)
{
    struct chain_report *r = c->rep;
    uint64_t key = (uint64_t)k << 56 | (uint64_t)qi << 52 |
                   (uint64_t)slot_of(c, qi, index) << 30 |
                   (uint64_t)(by_qi & 0xf) << 26 |
                   (slot_of(c, by_qi, by_index) & 0x3ffffff);
    struct chain_hazard *h;
    va_list ap;

    for (size_t i = 0; i < c->nseen; i++)
        if (c->seen[i] == key)
            return;
    if (GROW(c, c->seen, c->nseen, c->capseen))
        c->seen[c->nseen++] = key;
    r->nhazards++;
    r->nkind[k]++;
    if (r->nhazards > CHAIN_CHECK_MAX_REPORT)
        return;
    h = &r->hz[r->nhazards - 1];
    h->kind = k;
    h->qpn = qi < c->nq ? c->qs[qi].q->qpn : 0;
    h->index = index;
    h->by_qpn = by_qi < c->nq ? c->qs[by_qi].q->qpn : 0;
    h->by_index = by_index;
    va_start(ap, fmt);
    vsnprintf(h->msg, sizeof(h->msg), fmt, ap);
    va_end(ap);
}

/* ---- memory ----------------------------------------------------------- */

static int add_region(struct chain_check *c, void *ptr, size_t len, bool sink)
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

/* ---- setup ------------------------------------------------------------ */

int chain_check_new(const struct chain_check_opts *opts,
                    struct chain_check **out)
{
    struct chain_check *c;

    if (!out)
        return chain_err(-EINVAL, "chain_check_new: bad argument");
    c = calloc(1, sizeof(*c));
    if (!c)
        return chain_err(-ENOMEM, "chain_check_new: out of memory");
    if (opts)
        c->o = *opts;
    if (c->o.window == 0)
        c->o.window = CHAIN_CHECK_WINDOW_ALL;
    if (c->o.max_steps == 0)
        c->o.max_steps = 20000;
    c->buf = malloc(CK_BUF);
    if (!c->buf) {
        free(c);
        return chain_err(-ENOMEM, "chain_check_new: out of memory");
    }
    *out = c;
    return 0;
}

void chain_check_free(struct chain_check *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->nq; i++) {
        struct ck_msg *m = c->qs[i].inject, *n;

        for (; m; m = n) {
            n = m->next;
            free(m);
        }
        free(c->qs[i].en);
        free(c->qs[i].iss);
    }
    for (unsigned i = 0; i < c->ncq; i++)
        free(c->cqs[i].ev);
    for (unsigned i = 0; i < c->nmem; i++)
        free(c->mem[i].shadow);
    free(c->ev);
    free(c->vc);
    free(c->acc);
    free(c->seen);
    free(c->buf);
    free(c);
}

static struct ck_cq *cq_of(struct chain_check *c, const struct chain_cq *cq)
{
    for (unsigned i = 0; i < c->ncq; i++)
        if (c->cqs[i].num == cq->num)
            return &c->cqs[i];
    c->cqs[c->ncq].num = cq->num;
    return &c->cqs[c->ncq++];
}

int chain_check_add_q(struct chain_check *c, struct chain_q *q)
{
    struct ck_q *k;
    int rc;

    if (!c || !q || !q->qp)
        return chain_err(-EINVAL, "chain_check_add_q: bad argument");
    if (c->nq == CHAIN_CHECK_MAX_Q)
        return chain_err(-ENOSPC, "chain_check_add_q: at most %d queues",
                         CHAIN_CHECK_MAX_Q);
    rc = add_region(c, q->sq.buf, (size_t)q->sq.wqebb_cnt * MLX5_SEND_WQE_BB,
                    false);
    if (rc == 0)
        rc = add_region(c, q->sink.ptr, q->sink.len, true);
    if (rc < 0)
        return rc;
    k = &c->qs[c->nq++];
    memset(k, 0, sizeof(*k));
    k->q = q;
    k->managed = q->flags & RNIC_QP_MANAGED_SEND;
    k->base = k->next = q->retired;
    k->posted = q->pi;
    k->limit = k->managed ? q->retired : q->pi;
    k->scq = cq_of(c, q->scq);
    k->scq->feeders++;
    if (q->rq_size) {
        k->rcq = cq_of(c, q->rcq);
        k->rcq->feeders++;
        k->rq_posted = q->rq_pi;
        k->rq_next = q->rq_pi > q->rq_size ? q->rq_pi - q->rq_size : 0;
        k->rq_managed = q->flags & RNIC_QP_MANAGED_RECV;
        k->rq_limit = k->rq_managed ? k->rq_next : q->rq_pi;
    }
    return 0;
}

int chain_check_add_mem(struct chain_check *c, void *ptr, size_t len)
{
    if (!c || !ptr || !len)
        return chain_err(-EINVAL, "chain_check_add_mem: bad argument");
    return add_region(c, ptr, len, false);
}

static struct ck_q *ckq_of(struct chain_check *c, const struct chain_q *q)
{
    for (unsigned i = 0; i < c->nq; i++)
        if (c->qs[i].q == q)
            return &c->qs[i];
    return NULL;
}

int chain_check_inject(struct chain_check *c, struct chain_q *q,
                       const void *data, uint32_t len)
{
    struct ck_q *k = c ? ckq_of(c, q) : NULL;
    struct ck_msg *m;

    if (!k || !q->rq_size)
        return chain_err(-EINVAL, "chain_check_inject: queue not added or "
                                  "without receive queue");
    m = malloc(sizeof(*m) + len);
    if (!m)
        return chain_err(-ENOMEM, "chain_check_inject: out of memory");
    m->next = NULL;
    m->len = len;
    memcpy(m->data, data, len);
    if (k->inject_tail)
        k->inject_tail->next = m;
    else
        k->inject = m;
    k->inject_tail = m;
    return 0;
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

static struct ck_cq *ckcq_by_num(struct chain_check *c, uint32_t num)
{
    for (unsigned i = 0; i < c->ncq; i++)
        if (c->cqs[i].num == num)
            return &c->cqs[i];
    return NULL;
}

/* The peer queue of k if it is part of the check, else NULL. */
static struct ck_q *peer_of(struct chain_check *c, struct ck_q *k)
{
    return k->q->peer ? ckq_of(c, k->q->peer) : NULL;
}

static void cq_push(struct chain_check *c, struct ck_cq *cq, uint32_t ev)
{
    size_t cap = cq->cap;

    if (!grow(c, (void **)&cq->ev, sizeof(*cq->ev), cq->count, &cap))
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
    uint32_t n = e <= EV_UNKNOWN ? 0 : vc_of(c, e)[TH_ISSUE(qi_of(c, k))];

    if (n > k->niss)
        return k->next;
    return n ? k->iss[n - 1].end : k->base;
}

/* Consumes the next receive of k for a message; returns its event. */
static uint32_t consume_recv(struct chain_check *c, struct ck_q *k,
                             uint32_t cause, const uint8_t *data, uint32_t len,
                             bool outside)
{
    struct chain_recv *r = &k->q->recvs[k->rq_next % k->q->rq_size];
    unsigned qi = qi_of(c, k);
    uint32_t deps[2] = {k->last_recv, cause}, ev, off = 0;

    ev = new_event(c, TH_RECV(qi), deps, cause ? 2 : 1);
    for (unsigned i = 0; i < r->n && off < len; i++) {
        uint32_t n =
            r->sge[i].length < len - off ? r->sge[i].length : len - off;
        bool sink = false;
        uint8_t *s = shadow(c, r->sge[i].addr, n, &sink);

        if (!s) {
            hazard(c, CHAIN_HZ_BAD_WQE, qi, k->rq_next, qi, k->rq_next,
                   "receive %u of QP %u scatters outside the memory given "
                   "to the checker",
                   k->rq_next, k->q->qpn);
            break;
        }
        memcpy(s, data + off, n);
        if (GROW(c, c->acc, c->nacc, c->capacc))
            c->acc[c->nacc++] =
                (struct ck_acc){.lo = r->sge[i].addr,
                                .hi = r->sge[i].addr + n,
                                .start = outside ? EV_UNKNOWN : cause,
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

/* Delivers messages injected from outside while receives are ready. */
static bool deliver_injected(struct chain_check *c)
{
    bool moved = false;

    for (unsigned i = 0; i < c->nq; i++) {
        struct ck_q *k = &c->qs[i];

        while (k->inject && recv_ready(k)) {
            struct ck_msg *m = k->inject;

            consume_recv(c, k, 0, m->data, m->len, true);
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
        hazard(c, CHAIN_HZ_BAD_WQE, x->qi, x->index, x->qi, x->index,          \
               __VA_ARGS__);                                                   \
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
        x->recv_ev = consume_recv(c, peer, issue_ev, NULL, 0, false);
    return true;
}

static bool exec_send(struct chain_check *c, struct ck_exec *x,
                      const struct ck_wqe *w, uint32_t issue_ev)
{
    struct ck_q *peer = peer_of(c, x->cq);
    uint32_t len;

    if (!gather(c, x, w, 1, c->buf, &len))
        return false;
    if (peer)
        x->recv_ev = consume_recv(c, peer, issue_ev, c->buf, len, false);
    return true;
}

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

static bool exec_enable(struct chain_check *c, struct ck_exec *x,
                        const struct ck_wqe *w, uint32_t issue_ev)
{
    uint32_t index = chain_get_be32(w->buf + 24);
    struct ck_q *t = ckq_by_qpn(c, chain_get_be32(w->buf + 28));
    uint32_t ring, done;

    if (!t)
        BAD("enable %u names a QP the checker was not given", x->index);
    if (w->opcode == MLX5_OPCODE_RECV_EN) {
        raise_limit(&t->rq_limit, index);
        return true;
    }
    raise_limit(&t->limit, index);
    if (GROW(c, t->en, t->nen, t->capen))
        t->en[t->nen++] = (struct ck_en){t->limit, issue_ev};
    ring = t->q->sq.wqebb_cnt;
    done = executed_at(c, t, issue_ev);
    if (t->limit - done > ring)
        hazard(c, CHAIN_HZ_OVERFLOW, qi_of(c, t), t->limit, x->qi, x->index,
               "SEND_EN %u releases QP %u up to %u, but only %u is surely "
               "executed (ring of %u)",
               x->index, t->q->qpn, t->limit, done, ring);
    if ((int32_t)(t->limit - t->posted) > 0 && t->posted - t->base < ring)
        hazard(c, CHAIN_HZ_UNPOSTED, qi_of(c, t), t->limit, x->qi, x->index,
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
    struct ck_cq *cq = ckcq_by_num(c, chain_get_be32(w->buf + 28));

    if (!cq) {
        hazard(c, CHAIN_HZ_BAD_WQE, x->qi, x->index, x->qi, x->index,
               "WAIT %u names a CQ the checker was not given", x->index);
        x->cq->failed = true;
        return false;
    }
    if ((int32_t)(cq->count - count) < 0)
        return false;
    if (cq->feeders > 1)
        hazard(c, CHAIN_HZ_AMBIGUOUS, x->qi, x->index, x->qi, x->index,
               "WAIT %u counts CQ %u, which several queues feed: which "
               "completion it waits for is not defined",
               x->index, cq->num);
    if (count)
        deps[(*nd)++] = cq->ev[count - 1];
    return true;
}

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
static bool step(struct chain_check *c, unsigned qi)
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
    issue = new_event(c, TH_ISSUE(qi), deps, nd);
    if (!effects(c, &x, &w, issue)) {
        k->failed = true; /* as the QP would enter the error state */
        return false;
    }
    deps[0] = issue;
    deps[1] = k->last_compl;
    nd = 2;
    if (x.recv_ev)
        deps[nd++] = x.recv_ev;
    compl = new_event(c, TH_COMPL(qi), deps, nd);
    record(c, &x, fetch == EV_UNKNOWN ? EV_START : fetch, issue, compl );
    if (GROW(c, k->iss, k->niss, k->capiss))
        k->iss[k->niss++] = (struct ck_issue){k->next, k->next + w.nbb, issue};
    k->last_issue = issue;
    k->last_compl = compl ;
    if (w.opcode == MLX5_OPCODE_RDMA_READ ||
        w.opcode == MLX5_OPCODE_ATOMIC_CS || w.opcode == MLX5_OPCODE_ATOMIC_FA)
        k->last_rdat = compl ;
    if (w.flags & CHAIN_SIGNALED)
        cq_push(c, k->scq, compl );
    k->next += w.nbb;
    c->rep->steps++;
    return true;
}

/* ---- race detection --------------------------------------------------- */

static int acc_cmp(const void *a, const void *b)
{
    const struct ck_acc *x = a, *y = b;

    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void check_pair(struct chain_check *c, const struct ck_acc *a,
                       const struct ck_acc *b)
{
    bool fetch = a->kind == ACC_FETCH || b->kind == ACC_FETCH;
    const struct ck_acc *hit = a->kind == ACC_FETCH ? a : b;
    const struct ck_acc *by = hit == a ? b : a;

    if (a->kind != ACC_W && b->kind != ACC_W)
        return;
    if ((a->sink && a->kind == ACC_W) || (b->sink && b->kind == ACC_W))
        return;
    if (a->qi == b->qi && a->index == b->index && a->start == b->start)
        return; /* one WQE's own accesses */
    if (hb(c, a->end, b->start) || hb(c, b->end, a->start))
        return;
    if (fetch)
        hazard(c, CHAIN_HZ_STALE_FETCH, hit->qi, hit->index, by->qi, by->index,
               "WQE %u of QP %u may be fetched before, during or after %s %u "
               "of QP %u rewrites it",
               hit->index, c->qs[hit->qi].q->qpn, by->recv ? "receive" : "WQE",
               by->index, c->qs[by->qi].q->qpn);
    else
        hazard(c, CHAIN_HZ_DATA_RACE, a->qi, a->index, b->qi, b->index,
               "%s %u of QP %u and %s %u of QP %u access bytes at %#llx in "
               "no defined order",
               a->recv ? "receive" : "WQE", a->index, c->qs[a->qi].q->qpn,
               b->recv ? "receive" : "WQE", b->index, c->qs[b->qi].q->qpn,
               (unsigned long long)(a->lo > b->lo ? a->lo : b->lo));
}

static void find_races(struct chain_check *c)
{
    size_t *active = NULL, nact = 0, capact = 0;

    qsort(c->acc, c->nacc, sizeof(*c->acc), acc_cmp);
    for (size_t i = 0; i < c->nacc; i++) {
        const struct ck_acc *a = &c->acc[i];
        size_t keep = 0;

        for (size_t j = 0; j < nact; j++) {
            const struct ck_acc *b = &c->acc[active[j]];

            if (b->hi <= a->lo)
                continue;
            active[keep++] = active[j];
            check_pair(c, a, b);
        }
        nact = keep;
        if (!GROW(c, active, nact, capact))
            break;
        active[nact++] = i;
    }
    free(active);
}

/* ---- driver ----------------------------------------------------------- */

/* Queues blocked on a WAIT (or an unanswerable message) when all stopped. */
static void find_dead_waits(struct chain_check *c)
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
            hazard(c, CHAIN_HZ_DEAD_WAIT, i, k->next, i, k->next,
                   "WAIT %u of QP %u waits for CQ %u to reach %u: it never "
                   "does",
                   k->next, k->q->qpn, chain_get_be32(w.buf + 28),
                   chain_get_be32(w.buf + 24));
        else if (needs_recv(w.opcode))
            hazard(c, CHAIN_HZ_DEAD_WAIT, i, k->next, i, k->next,
                   "WQE %u of QP %u waits for a receive that is never "
                   "posted",
                   k->next, k->q->qpn);
    }
}

static int make_shadows(struct chain_check *c)
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

int chain_check_run(struct chain_check *c, struct chain_report *rep)
{
    bool moved = true;
    int rc;

    if (!c || !rep || c->nq == 0)
        return chain_err(-EINVAL, "chain_check_run: nothing to check");
    memset(rep, 0, sizeof(*rep));
    c->rep = rep;
    rc = make_shadows(c);
    if (rc < 0)
        return rc;
    /* Events 0 and 1 are START and UNKNOWN: their clocks are all zero. */
    c->nev = 0;
    memset(c->thseq, 0, sizeof(c->thseq));
    if (!ensure_events(c))
        return chain_err(-ENOMEM, "chain_check: out of memory");
    memset(c->vc, 0, sizeof(uint32_t) * NT * 2);
    c->ev[0] = (struct ck_ev){0, 0};
    c->ev[1] = (struct ck_ev){0, 0};
    c->nev = 2;
    while (moved && rep->steps < c->o.max_steps && !c->oom) {
        moved = deliver_injected(c);
        for (unsigned i = 0; i < c->nq; i++)
            while (step(c, i))
                if (rep->steps >= c->o.max_steps)
                    break;
                else
                    moved = true;
    }
    rep->finished = !moved;
    if (rep->finished)
        find_dead_waits(c);
    find_races(c);
    if (c->oom)
        return chain_err(-ENOMEM, "chain_check: out of memory");
    return 0;
}

const char *chain_hazard_name(enum chain_hazard_kind k)
{
    static const char *const names[] = {
        [CHAIN_HZ_STALE_FETCH] = "stale-fetch",
        [CHAIN_HZ_DATA_RACE] = "data-race",
        [CHAIN_HZ_DEAD_WAIT] = "dead-wait",
        [CHAIN_HZ_OVERFLOW] = "ring-overflow",
        [CHAIN_HZ_UNPOSTED] = "unposted",
        [CHAIN_HZ_BAD_WQE] = "bad-wqe",
        [CHAIN_HZ_AMBIGUOUS] = "ambiguous-wait",
    };

    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

void chain_report_print(const struct chain_report *rep, FILE *f)
{
    unsigned shown = rep->nhazards < CHAIN_CHECK_MAX_REPORT
                         ? rep->nhazards
                         : CHAIN_CHECK_MAX_REPORT;

    fprintf(f, "chain check: %llu WQEs executed, %s, %u hazard(s)\n",
            (unsigned long long)rep->steps,
            rep->finished ? "ran to the end" : "stopped at the step limit",
            rep->nhazards);
    for (unsigned i = 0; i < shown; i++)
        fprintf(f, "  %-14s %s\n", chain_hazard_name(rep->hz[i].kind),
                rep->hz[i].msg);
}
