/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain_check_hb.c - the checker's happens-before model and hazard
 * analysis (see chain_check.c for the whole picture).
 *
 * Events live on threads (three per queue: WQE issue, completion, receive)
 * and carry vector clocks; a new event happens after the events it
 * depends on. The walk records each memory access and WQE fetch with the
 * interval in which it may happen; after the walk, two overlapping
 * accesses, one a write, neither of which surely ends before the other
 * starts, are a hazard: a stale fetch when one is a WQE fetch, a data
 * race otherwise.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/chain/chain_check_int.h"

/* ---- growing arrays --------------------------------------------------- */

bool ck_grow(struct chain_check *c, void **arr, size_t elem, size_t n,
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

/* ---- events and happens-before ---------------------------------------- */

uint32_t *ck_vc_of(struct chain_check *c, uint32_t e)
{
    return c->vc + (size_t)e * NT;
}

bool ck_ensure_events(struct chain_check *c)
{
    size_t cap = c->capev, cap2 = c->capev;

    if (!ck_grow(c, (void **)&c->ev, sizeof(*c->ev), c->nev, &cap))
        return false;
    if (!ck_grow(c, (void **)&c->vc, sizeof(uint32_t) * NT, c->nev, &cap2))
        return false;
    c->capev = (uint32_t)cap;
    return true;
}

/* A new event on thread th that happens after every event in deps. */
uint32_t ck_new_event(struct chain_check *c, unsigned th, const uint32_t *deps,
                      unsigned ndeps)
{
    uint32_t e = c->nev, *v;

    if (!ck_ensure_events(c))
        return EV_UNKNOWN;
    c->nev++;
    v = ck_vc_of(c, e);
    memset(v, 0, sizeof(uint32_t) * NT);
    for (unsigned i = 0; i < ndeps; i++) {
        const uint32_t *d = ck_vc_of(c, deps[i]);

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
bool ck_hb(struct chain_check *c, uint32_t a, uint32_t b)
{
    if (a == EV_START)
        return true;
    if (a == EV_UNKNOWN || b == EV_UNKNOWN || b == EV_START)
        return false;
    return ck_vc_of(c, b)[c->ev[a].th] >= c->ev[a].seq;
}

/* ---- hazards ---------------------------------------------------------- */

static uint32_t slot_of(struct chain_check *c, unsigned qi, uint32_t index)
{
    return qi < c->nq ? index % c->qs[qi].q->sq.wqebb_cnt : index;
}

/* Records a hazard once per (kind, WQE slot, other WQE slot). */
void ck_hazard(struct chain_check *c, enum chain_hazard_kind k, unsigned qi,
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

/* ---- race detection --------------------------------------------------- */

static int acc_cmp(const void *a, const void *b)
{
    const struct ck_acc *x = a, *y = b;

    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The issue event of the WQE an access belongs to (receives: none). */
static uint32_t acc_issue(const struct ck_acc *a)
{
    return a->kind == ACC_FETCH ? a->end : a->start;
}

/* Whether two accesses are one execution of one WQE (never a race). */
static bool same_execution(const struct ck_acc *a, const struct ck_acc *b)
{
    return !a->recv && !b->recv && a->qi == b->qi && a->index == b->index &&
           acc_issue(a) == acc_issue(b);
}

/*
 * Reports a and b (overlapping byte ranges) when one writes, the write is
 * not a discarded result, they are not one WQE's own accesses, and
 * neither surely ends before the other starts.
 */
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
    if (same_execution(a, b))
        return;
    if (ck_hb(c, a->end, b->start) || ck_hb(c, b->end, a->start))
        return;
    if (fetch)
        ck_hazard(
            c, CHAIN_HZ_STALE_FETCH, hit->qi, hit->index, by->qi, by->index,
            "WQE %u of QP %u may be fetched before, during or after %s %u "
            "of QP %u rewrites it",
            hit->index, c->qs[hit->qi].q->qpn, by->recv ? "receive" : "WQE",
            by->index, c->qs[by->qi].q->qpn);
    else
        ck_hazard(c, CHAIN_HZ_DATA_RACE, a->qi, a->index, b->qi, b->index,
                  "%s %u of QP %u and %s %u of QP %u access bytes at %#llx in "
                  "no defined order",
                  a->recv ? "receive" : "WQE", a->index, c->qs[a->qi].q->qpn,
                  b->recv ? "receive" : "WQE", b->index, c->qs[b->qi].q->qpn,
                  (unsigned long long)(a->lo > b->lo ? a->lo : b->lo));
}

/* The first enable of k whose limit lies past index (limits only grow). */
static unsigned first_enable_past(const struct ck_q *k, uint32_t index)
{
    unsigned lo = 0, hi = k->nen;

    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;

        if ((int32_t)(k->en[mid].limit - index) > 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/*
 * The earliest moment a WQE of a managed queue may be fetched is after
 * whichever SEND_EN covering it runs first, and in another legal order
 * that need not be the one the walk ran first: any covering SEND_EN not
 * ordered after the WQE's issue may release it. An event is before the
 * fetch only if it is before all of them: the fetch starts at their meet,
 * a synthetic event whose clock is their component-wise minimum (it is
 * never the first argument of ck_hb()). On one thread the first covering
 * SEND_EN has the smallest clock, so only that one counts per thread;
 * last[t] (the position of thread t's last enable of the queue, or
 * UINT32_MAX) ends the scan early. Returns EV_UNKNOWN when out of memory.
 */
static uint32_t fetch_meet(struct chain_check *c, const struct ck_acc *a,
                           const uint32_t last[NT])
{
    const struct ck_q *k = &c->qs[a->qi];
    unsigned start = first_enable_past(k, a->index), pending = 0;
    bool done[NT] = {false}, any = false;
    uint32_t m, *v;

    if (!ck_ensure_events(c))
        return EV_UNKNOWN;
    m = c->nev++;
    v = ck_vc_of(c, m);
    memset(v, 0xff, sizeof(uint32_t) * NT);
    for (unsigned t = 0; t < NT; t++)
        pending += last[t] != UINT32_MAX && last[t] >= start;
    for (unsigned i = start; i < k->nen && pending; i++) {
        const struct ck_en *e = &k->en[i];
        unsigned t = c->ev[e->ev].th;
        const uint32_t *ve = ck_vc_of(c, e->ev);

        if (done[t])
            continue;
        if ((int32_t)(e->req - a->index) <= 0) {
            if (i == last[t])
                pending--;
            continue;
        }
        done[t] = true;
        pending--;
        if (ck_hb(c, a->end, e->ev))
            continue;
        for (unsigned u = 0; u < NT; u++)
            if (ve[u] < v[u])
                v[u] = ve[u];
        any = true;
    }
    if (!any)
        memset(v, 0, sizeof(uint32_t) * NT);
    c->ev[m] = (struct ck_ev){0, UINT32_MAX};
    return m;
}

/* Moves the start of every fetch of a managed queue to fetch_meet(). */
static void widen_managed_fetches(struct chain_check *c)
{
    uint32_t last[CHAIN_CHECK_MAX_Q][NT];

    memset(last, 0xff, sizeof(last));
    for (unsigned q = 0; q < c->nq; q++)
        for (unsigned i = 0; i < c->qs[q].nen; i++)
            last[q][c->ev[c->qs[q].en[i].ev].th] = i;
    for (size_t i = 0; i < c->nacc && !c->oom; i++) {
        struct ck_acc *a = &c->acc[i];

        if (a->kind == ACC_FETCH && c->qs[a->qi].managed)
            a->start = fetch_meet(c, a, last[a->qi]);
    }
}

void ck_find_races(struct chain_check *c)
{
    size_t *active = NULL, nact = 0, capact = 0;

    widen_managed_fetches(c);
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
