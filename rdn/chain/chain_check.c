/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain_check.c - the chain checker.
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
 *   - a message from outside is received after the QP's previous receive
 *     and, when gated (chain_check_inject_after), after the completion its
 *     sender waited for;
 *   - the NIC may fetch a WQE of a managed queue as soon as any SEND_EN
 *     covering it ran (whichever of them runs first, in any legal order),
 *     and a WQE of an unmanaged queue as soon as it is posted (or, with a
 *     window, once the WQE `window` WQEs earlier issued).
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
 * Known approximation: a WQE's issue is ordered after the SEND_EN that
 * released it in the walk; where several unordered SEND_ENs cover it, its
 * fetch is checked against all of them, its later effects only against
 * that one.
 *
 * Modules: this file is the API and the driver; chain_check_exec.c the
 * execution model (shadow memory, the walk); chain_check_hb.c the
 * happens-before model and the race detection.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/chain/chain_check_int.h"

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

/* The checker's copy of cq, made on first sight. */
static struct ck_cq *cq_of(struct chain_check *c, const struct chain_cq *cq)
{
    struct ck_cq *k = ck_cq_by_num(c, cq->num);

    if (k)
        return k;
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
    rc = ck_add_region(c, q->sq.buf, (size_t)q->sq.wqebb_cnt * MLX5_SEND_WQE_BB,
                       false);
    if (rc == 0)
        rc = ck_add_region(c, q->sink.ptr, q->sink.len, true);
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
    return ck_add_region(c, ptr, len, false);
}

int chain_check_inject_after(struct chain_check *c, struct chain_q *q,
                             const void *data, uint32_t len,
                             const struct chain_cq *cq, uint32_t count)
{
    struct ck_q *k = c ? ck_q_of(c, q) : NULL;
    struct ck_cq *gate = NULL;
    struct ck_msg *m;

    if (!k || !q->rq_size || (len && !data))
        return chain_err(-EINVAL, "chain_check_inject: queue not added or "
                                  "without receive queue, or no data");
    if (cq && !(gate = ck_cq_by_num(c, cq->num)))
        return chain_err(-EINVAL,
                         "chain_check_inject_after: CQ %u is no CQ of a "
                         "queue added to the checker",
                         cq->num);
    m = malloc(sizeof(*m) + len);
    if (!m)
        return chain_err(-ENOMEM, "chain_check_inject: out of memory");
    m->next = NULL;
    m->gate = gate;
    m->count = count;
    m->len = len;
    memcpy(m->data, data, len);
    if (k->inject_tail)
        k->inject_tail->next = m;
    else
        k->inject = m;
    k->inject_tail = m;
    return 0;
}

int chain_check_inject(struct chain_check *c, struct chain_q *q,
                       const void *data, uint32_t len)
{
    return chain_check_inject_after(c, q, data, len, NULL, 0);
}

/* ---- driver ----------------------------------------------------------- */

int chain_check_run(struct chain_check *c, struct chain_report *rep)
{
    bool moved = true;
    int rc;

    if (!c || !rep || c->nq == 0)
        return chain_err(-EINVAL, "chain_check_run: nothing to check");
    memset(rep, 0, sizeof(*rep));
    c->rep = rep;
    rc = ck_make_shadows(c);
    if (rc < 0)
        return rc;
    /* Events 0 and 1 are START and UNKNOWN: their clocks are all zero. */
    c->nev = 0;
    memset(c->thseq, 0, sizeof(c->thseq));
    if (!ck_ensure_events(c))
        return chain_err(-ENOMEM, "chain_check: out of memory");
    memset(c->vc, 0, sizeof(uint32_t) * NT * 2);
    c->ev[0] = (struct ck_ev){0, 0};
    c->ev[1] = (struct ck_ev){0, 0};
    c->nev = 2;
    while (moved && rep->steps < c->o.max_steps && !c->oom) {
        moved = ck_deliver_injected(c);
        for (unsigned i = 0; i < c->nq; i++)
            while (ck_step(c, i))
                if (rep->steps >= c->o.max_steps)
                    break;
                else
                    moved = true;
    }
    rep->finished = !moved;
    if (rep->finished)
        ck_find_dead_waits(c);
    ck_find_races(c);
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
