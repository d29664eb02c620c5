/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain_check_int.h - what the checker's modules share: the model's
 * state (queues, CQs, shadow memory, events, recorded accesses) and the
 * functions one module calls in another.
 *   chain_check.c       the public API: setup, the driver, the report;
 *   chain_check_exec.c  the execution model: shadow memory and the walk,
 *                       one WQE at a time under the NIC's rules;
 *   chain_check_hb.c    happens-before (vector clocks), hazard records
 *                       and the race detection over recorded accesses.
 * Not thread-safe: one chain_check is used by one thread.
 */
#ifndef RDN_CHAIN_CHAIN_CHECK_INT_H
#define RDN_CHAIN_CHAIN_CHECK_INT_H

#include "rdn/chain/chain_int.h"

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

/*
 * An executed SEND_EN of a managed queue: the queue's limit after it, the
 * index it asked for (made absolute the way the NIC reads it: 16 bits
 * relative to the limit) and its issue event.
 */
struct ck_en {
    uint32_t limit, req, ev;
};

struct ck_issue {
    uint32_t index, end, ev; /* WQE's index, index after it, issue event */
};

/*
 * A message injected from outside; with a gate, sent only once the walk
 * pushed count completions onto gate (count 0 or no gate: at once).
 */
struct ck_msg {
    struct ck_msg *next;
    struct ck_cq *gate;
    uint32_t count;
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
    /* Completion of its last WRITE or SEND: RC's responder placed that
     * message before it takes a later one of the QP. */
    uint32_t last_place;
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

#define CK_BUF (1u << 20) /* bytes one WQE may move */

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

/* ---- chain_check_hb.c ------------------------------------------------- */

/*
 * Makes room for element n of *arr (capacity *cap, elements of elem
 * bytes), doubling it; false (and c->oom set) when out of memory.
 */
bool ck_grow(struct chain_check *c, void **arr, size_t elem, size_t n,
             size_t *cap);

#define GROW(c, arr, n, cap)                                                   \
    ({                                                                         \
        size_t cap_ = (cap);                                                   \
        bool ok_ = ck_grow((c), (void **)&(arr), sizeof(*(arr)), (n), &cap_);  \
        (cap) = cap_;                                                          \
        ok_;                                                                   \
    })

/* The vector clock of event e (NT entries). */
uint32_t *ck_vc_of(struct chain_check *c, uint32_t e);
/* Makes room for one more event; false when out of memory. */
bool ck_ensure_events(struct chain_check *c);
/* A new event on thread th that happens after every event in deps. */
uint32_t ck_new_event(struct chain_check *c, unsigned th, const uint32_t *deps,
                      unsigned ndeps);
/* Whether event a happens before (or is) event b. */
bool ck_hb(struct chain_check *c, uint32_t a, uint32_t b);
/*
 * Records a hazard of kind k hitting WQE index of queue qi, caused by
 * by_index of queue by_qi, once per (kind, ring slot, other ring slot).
 */
void ck_hazard(struct chain_check *c, enum chain_hazard_kind k, unsigned qi,
               uint32_t index, unsigned by_qi, uint32_t by_index,
               const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Reports every pair of recorded accesses that races (after the walk). */
void ck_find_races(struct chain_check *c);

/* ---- chain_check_exec.c ----------------------------------------------- */

/* Adds [ptr, ptr+len) to the memory the walk may touch (sink: results). */
int ck_add_region(struct chain_check *c, void *ptr, size_t len, bool sink);
/* (Re)makes the shadow copies of every region from the real memory. */
int ck_make_shadows(struct chain_check *c);
/* The checker's CQ numbered num, NULL if no added queue has it. */
struct ck_cq *ck_cq_by_num(struct chain_check *c, uint32_t num);
/* The checker's state of chain queue q, NULL if it was not added. */
struct ck_q *ck_q_of(struct chain_check *c, const struct chain_q *q);
/* Delivers injected messages to ready receives; true if any moved. */
bool ck_deliver_injected(struct chain_check *c);
/* Executes the next WQE of queue qi if it can run; true if it did. */
bool ck_step(struct chain_check *c, unsigned qi);
/* Reports queues blocked forever on a WAIT or a missing receive. */
void ck_find_dead_waits(struct chain_check *c);

#endif /* RDN_CHAIN_CHAIN_CHECK_INT_H */
