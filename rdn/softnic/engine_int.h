/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/engine_int.h - softnic's engine: the objects a NIC keeps
 * (devices, memory areas, MRs, CQs, QPs), the engine threads that execute WQEs,
 * and the interfaces between the engine's modules. Private to rdn/softnic/.
 *
 * What the engine executes (the contract chains rely on):
 * - Send WQEs in the mlx5 byte format of proto/mlx5.h, read from the ring
 *   just in time (when the WQE is about to execute), unless strict mode
 *   snapshotted it earlier (prefetch window, see below).
 * - The control segment's wqe_index and qpn fields are NOT checked, for any
 *   opcode. ConnectX checks them; the RedN prototype disables that check
 *   (a firmware setting) because chains keep data there: NOPs carry the
 *   48-bit operand of the if-construct in opmod+index+qpn, and recycled
 *   rings re-run WQEs whose index is a lap old. Chains written for softnic
 *   therefore need a NIC configured the same way (mlx5 provider's job).
 * - ds counts 16-B segments (1..63, 0 is LOC_QP_OP). A data segment's
 *   byte_count of 0 means 2^31 bytes, as on mlx5; bit 31 (inline data) is
 *   not supported (LOC_QP_OP). At most SN_MAX_SGE data segments per send
 *   WQE (ConnectX-5's max_send_sge).
 * - Atomics: the target is 8 host-endian bytes at an 8-aligned address;
 *   swap/add and compare are big-endian in the WQE; the local result
 *   buffer (exactly 8 bytes) receives the target's old 8 bytes verbatim.
 * - WAIT: the queue stops until CQ obj_num has produced index completions
 *   (32-bit absolute count, compared modulo 2^32). SEND_EN / RECV_EN raise
 *   the enable limit of managed queue obj_num to index (low 16 bits count,
 *   like the doorbell; a lower index is a no-op). Both need
 *   RNIC_QP_CROSS_CHANNEL and an object of the same device.
 * - Completions in order per send queue; CQ_UPDATE requests one; errors
 *   always complete. A failed WQE moves its QP and the RC peer to the error
 *   state; every later WQE (and every posted receive) completes with
 *   WR_FLUSH_ERR. A responder that fails a request is in the error state
 *   (and its failed receive is in its CQ) before it sends the NAK, so a
 *   requester that sees the error completion sees the responder in ERR.
 *   A QP connected to itself fails the same way as two QPs: the failed
 *   WQE completes with its own status, only later ones are flushed.
 * - A SEND or WRITE_IMM finding no enabled receive waits for one (RNR
 *   retry with rnr_retry = 7, infinite) and blocks later messages of that
 *   connection; a receive queue that does not exist is REM_INV_REQ.
 * - The receive doorbell record (struct sn_qp_shm.rq_db, big-endian, low
 *   16 bits count) is read whenever a message needs a receive; RDMA that
 *   stores into it pokes its QP (sn_mr_stored), the RNR retry of a NIC.
 * - Requests to a QP that is not connected back to the sender (RESET, or
 *   another peer) or that is gone complete with RETRY_EXC_ERR.
 * - Strict mode (window N > 0): a send queue snapshots the WQEBBs from ci
 *   up to N ahead whenever its limit rises (doorbell, enable) and whenever
 *   a WQE executes, and then executes the snapshot, as a NIC that
 *   prefetches would. Managed queues are never read past their enable
 *   limit, so WQEs rewritten before their SEND_EN run as rewritten; a
 *   chain that rewrites a WQE which is already enabled (or posted on an
 *   ordinary queue) less than N blocks ahead runs the stale bytes.
 * - Timed models (rdn/softnic/timing.c): each WQE gets a start time in the
 *   model (the previous WQE's end, a doorbell + db_ns + dma_ns, an enable
 *   + dma_ns, a WAIT's completion) and an end; packets carry their arrival
 *   time, CQEs the time the host may see them. Work whose time has not
 *   come waits in its thread's timer heap; nothing else waits for it.
 *   Times are absolute (derived from model times, not from when the
 *   engine got around to a step), so engine overhead shorter than the
 *   modelled cost does not add to it.
 *
 * Threads: each QP belongs to one engine thread (round robin), which alone
 * runs its send queue, responds to its incoming packets and owns its
 * lists. Other threads reach a QP only through atomics (enable limits,
 * state) and by poking (a dirty bit + wake). Tables of QPs, CQs and MRs are
 * read without locks; entries are freed only after every engine thread
 * passed a quiescent point (sn_engine_sync), so a pointer read from a table
 * stays valid until the reading thread's next loop iteration.
 */
#ifndef RDN_SOFTNIC_ENGINE_INT_H
#define RDN_SOFTNIC_ENGINE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "proto/barrier.h"
#include "proto/mlx5.h"
#include "rdn/rnic/rnic.h"
#include "rdn/softnic/fabric_int.h"
#include "rdn/softnic/shm_int.h"
#include "rdn/softnic/timing.h"

#define SN_MAX_SGE    30 /* data segments per send WQE */
#define SN_MAX_RD     16 /* outstanding READ/atomic per QP */
#define SN_MR_BITS    16
#define SN_MAX_MRS    (1u << SN_MR_BITS)
#define SN_MAX_MSG    (1ull << 31)
#define SN_NAME_MAX   64
#define SN_WQE_MAX    (MLX5_WQE_MAX_DS * MLX5_SEND_WQE_DS)
#define SN_RUN_BUDGET 32 /* WQEs a QP runs before others get a turn */

#define sn_container_of(p, type, member)                                       \
    ((type *)((char *)(p)-offsetof(type, member)))

/* ---- small containers ------------------------------------------------- */

struct sn_link {
    struct sn_link *next, *prev;
};

static inline void sn_list_init(struct sn_link *h)
{
    h->next = h->prev = h;
}

static inline bool sn_list_empty(const struct sn_link *h)
{
    return h->next == h;
}

static inline void sn_list_add_tail(struct sn_link *h, struct sn_link *n)
{
    n->prev = h->prev;
    n->next = h;
    h->prev->next = n;
    h->prev = n;
}

static inline void sn_list_del(struct sn_link *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n->prev = n;
}

/* A timer: an item with a ready time in a thread's min-heap. */
struct sn_timer {
    uint64_t at;
    uint64_t seq; /* FIFO order among equal times */
    uint32_t pos; /* heap index, SN_TIMER_IDLE when not queued */
    uint8_t kind; /* SN_TM_QP or SN_TM_PKT */
};

#define SN_TIMER_IDLE UINT32_MAX
enum { SN_TM_QP = 1, SN_TM_PKT = 2, SN_TM_RC = 3 };

/* A packet in flight; struct sn_wire is what would cross a link. */
struct sn_pkt {
    struct sn_pkt *next;
    /* On the local queue: its destination QP, as sn_send() found it (a
     * table pointer, valid until the thread's next loop iteration; the
     * queue is empty by then). Not set elsewhere. */
    struct sn_qp *to;
    struct sn_timer tm;
    uint32_t cap; /* payload capacity */
    uint8_t cls;  /* pool class, SN_POOL_NONE for malloc'ed */
    struct sn_wire h;
    uint8_t data[];
};

#define SN_POOL_CLASSES 3
#define SN_POOL_NONE    0xff
#define SN_POOL_SMALL   256 /* payload capacity of pool class 0 */

struct sn_pool {
    struct sn_pkt *free;
    uint32_t count;
};

/* Two-level bitmap of object indexes (CQ events between threads). */
struct sn_bitmap {
    _Alignas(64) uint64_t summary[SN_MAX_OBJS / 64 / 64];
    _Alignas(64) uint64_t bits[SN_MAX_OBJS / 64];
};

/* ---- objects ---------------------------------------------------------- */

struct sn_engine;
struct sn_thread;
struct sn_session;
struct sn_trace;
struct sn_rc;
struct sn_roce_port;

/* A piece of shared memory the engine mapped (mem_alloc, CQ, QP). */
struct sn_area {
    struct sn_link node; /* in dev->areas while registrable */
    uint64_t app;        /* the application's address of the first byte */
    size_t len;
    uint8_t *eng; /* the engine's mapping */
    int fd;
    int refs;           /* the owner + each MR on it */
    bool is_mem;        /* from rnic_mem_alloc (freeable, persistable) */
    bool persist;       /* survives its session */
    uint32_t rq_db_qpn; /* a QP's area with a receive queue: the QP */
    char name[SN_NAME_MAX];
};

struct sn_mr {
    struct sn_link node;
    uint32_t key; /* lkey == rkey */
    uint32_t access;
    uint64_t addr, len;
    uint8_t *eng; /* engine address of addr */
    struct sn_dev *dev;
    struct sn_area *area;
    uint32_t rq_db_qpn; /* covers this QP's receive doorbell record, or 0 */
    bool persist;
    char name[SN_NAME_MAX];
};

struct sn_cq {
    struct sn_link node;
    uint32_t cqn, idx;
    struct sn_dev *dev;
    struct sn_area *area;
    struct sn_cq_shm *sh;
    struct sn_cqe *ring;
    uint32_t depth, mask, flags;
    uint32_t lock;    /* spinlock of the producer side */
    uint64_t count;   /* completions produced (atomic; WAIT reads it) */
    uint64_t last_ns; /* timed: NIC time of the latest one (atomic) */
    bool overflowed;
    uint64_t waiters; /* bit per engine thread that has a WAIT on it */
    int qp_refs;      /* QPs using it as send/recv CQ */
    bool persist;
    char name[SN_NAME_MAX];
};

/* One executed send WQE until it completes (in order). */
struct sn_out {
    uint64_t done_ns;  /* timed: completion time inside the NIC */
    uint64_t fetch_ns; /* trace */
    uint64_t start_ns;
    uint32_t psn;
    uint32_t byte_len;
    uint16_t wqe_counter;
    uint8_t opcode; /* mlx5 opcode */
    uint8_t signaled;
    uint8_t done;
    uint8_t status;
    uint8_t rd; /* READ/atomic slot + 1, or 0 */
};

/* One scatter entry of a READ or atomic, decoded from its data segment. */
struct sn_sge {
    uint32_t byte_count; /* as in the segment: 0 means 2^31 */
    uint32_t lkey;
    uint64_t addr;
};

/* Where a READ's or atomic's response lands (local scatter list). */
struct sn_rd {
    uint32_t nsge;
    struct sn_sge sge[SN_MAX_SGE];
};

enum sn_block {
    SN_BLK_NONE,
    SN_BLK_WAIT, /* a WAIT whose count is not met */
};

struct sn_qp {
    struct sn_link node; /* in dev->qps */
    uint32_t qpn, idx;
    struct sn_dev *dev;
    struct sn_thread *thr;
    unsigned flags;  /* enum rnic_qp_flags */
    unsigned access; /* REMOTE_* bits it serves as responder */
    struct sn_cq *scq, *rcq;
    struct sn_area *area;
    struct sn_qp_shm *sh;
    uint8_t *sq;
    uint32_t sq_cnt;
    uint8_t *rq;
    uint32_t rq_cnt, rq_stride, rq_sge;
    uint64_t *wrid;
    uint32_t state;    /* enum rnic_qp_state (atomic) */
    uint32_t peer_qpn; /* RC peer, valid in RTS */
    uint32_t en_req;   /* managed send: enable limit (atomic, extended) */
    uint32_t rq_en;    /* managed recv: enable limit (atomic, extended) */
    uint64_t en_ns;    /* timed: when the last enable lands */
    uint32_t dying;    /* destroy requested (atomic) */
    uint32_t detached; /* owner thread let go of it (atomic) */
    bool persist;
    char name[SN_NAME_MAX];

    /* Owner thread only, from here on. */
    uint32_t ci;      /* next WQEBB to execute (extended index) */
    uint32_t limit;   /* doorbell / enable limit (extended index) */
    uint32_t fetched; /* strict: WQEBBs snapshotted up to here */
    uint8_t *shadow;  /* strict: snapshot of the ring */
    uint32_t psn;     /* next request sequence number */
    uint32_t rq_ci;
    uint64_t next_ns; /* timed: earliest start of the next WQE */
    /* timed: latest arrival of a request / a response sent to this QP
     * (written only by its peer's thread: a connection keeps its order) */
    uint64_t rx_req_ns, rx_resp_ns;
    enum sn_block block;
    uint32_t wait_cqn, wait_idx, wait_nbb;
    uint64_t wait_fetch_ns; /* trace: when the blocked WAIT was read */
    uint8_t wait_sig;
    struct sn_out *out;
    uint32_t out_mask, out_head, out_tail;
    bool retire_wake; /* a step waits for retirement (FENCE, rings) */
    struct sn_rd rd[SN_MAX_RD];
    uint32_t rd_used;                  /* bitmask of busy rd slots */
    struct sn_pkt *stall, *stall_tail; /* inbound waiting for a receive */
    struct sn_link run, wait, dirty;
    bool in_run, in_wait, in_dirty;
    struct sn_timer tm;

    /* RoCE (roce.c): set before RTS when the peer is on another host. */
    struct sn_rc *rc;
    uint32_t rc_ipsn;               /* initial PSN its address announces */
    struct rnic_qp_rc_attr rc_attr; /* timeout, retry counts */
    uint32_t rc_src; /* IPv4 it speaks from (network order), 0: the port's */
};

struct sn_dev {
    struct sn_link node;  /* in eng->devs */
    struct sn_link snode; /* in owner->devs */
    uint32_t id;
    struct sn_engine *eng;
    struct sn_session *owner; /* NULL: orphaned persistent domain */
    char domain[SN_NAME_MAX];
    struct sn_timing tm;
    uint32_t strict;
    struct sn_trace *trace;
    bool own_trace; /* trace opened for this device (else the default) */
    struct sn_timing_res tx; /* timed: the port */
    /* timed: when each processing unit is free; the atomic unit */
    uint64_t pu_free_ns[SN_TIMING_MAX_PU];
    struct sn_timing_res atomic;
    struct sn_link areas, mrs, cqs, qps;
};

struct sn_thread {
    struct sn_engine *eng;
    unsigned idx;
    int cpu; /* -1: not pinned */
    pthread_t tid;
    struct sn_shm_thread *sh;
    uint64_t qs_seq;      /* bumped at every loop iteration (atomic) */
    uint64_t now;         /* timed devices: current time, per iteration */
    struct sn_pkt *inbox; /* packets from other threads (atomic stack) */
    struct sn_pkt *local, *local_tail; /* packets from this thread */
    struct sn_bitmap cq_ev;            /* CQ indexes that advanced */
    struct sn_link runq;
    struct sn_link dirtyq; /* own QPs poked by this thread (sn_poke) */
    struct sn_timer **heap;
    uint32_t heap_len, heap_cap;
    uint64_t timer_seq;
    struct sn_link cqwait[SN_MAX_OBJS]; /* QPs in WAIT, per CQ index */
    struct sn_pool pools[SN_POOL_CLASSES];
    uint32_t spin_ns;
    uint32_t spin_steps;               /* idle spin steps (peer checks) */
    struct sn_link rc_acks;            /* RoCE QPs with an ACK to send */
    uint64_t peer_seq[SN_MAX_THREADS]; /* peers' qs_seq at our last check */
};

struct sn_engine {
    uint64_t id;
    struct sn_shm_ctl *ctl;
    int ctl_fd;
    unsigned nthreads;
    struct sn_thread *thr[SN_MAX_THREADS];
    uint32_t stop; /* atomic */
    unsigned next_thr;
    pthread_mutex_t lock; /* control plane: every object create/destroy */
    struct sn_qp *qps[SN_MAX_OBJS];
    struct sn_cq *cqs[SN_MAX_OBJS];
    struct sn_mr *mrs[SN_MAX_MRS];
    uint16_t qp_gen[SN_MAX_OBJS], cq_gen[SN_MAX_OBJS];
    uint8_t mr_tag[SN_MAX_MRS];
    uint32_t qp_hint, cq_hint, mr_hint;
    struct sn_link devs;
    uint32_t next_dev;
    char def_model[16];         /* for devices that name no model */
    uint32_t def_strict;        /* likewise, strict window */
    struct sn_trace *def_trace; /* likewise, shared trace (may be NULL) */
    struct sn_roce_port *roce;  /* the RoCEv2 endpoint, NULL: none */
};

struct sn_engine_opts {
    unsigned threads; /* 1..SN_MAX_THREADS */
    const int *cpus;  /* ncpus CPUs to pin thread i to cpus[i % ncpus] */
    unsigned ncpus;
    uint32_t spin_ns; /* busy-poll this long before sleeping */
};

/* ---- engine.c: threads, scheduling, timers ---------------------------- */

int sn_engine_create(const struct sn_engine_opts *opts, struct sn_engine **out);
void sn_engine_destroy(struct sn_engine *e);
/* Waits until every engine thread passed a quiescent point. */
void sn_engine_sync(struct sn_engine *e);
/* Sets the QP's dirty bit in its thread's mailbox and wakes the thread. */
void sn_poke_qp(struct sn_shm_ctl *ctl, unsigned thr, uint32_t idx);
/*
 * Pokes qp from engine thread t: a QP of t's own goes on t's private dirty
 * list, handled before its next run-queue round (no atomics, no trip
 * through the mailbox); another thread's QP through its mailbox.
 */
void sn_poke(struct sn_thread *t, struct sn_qp *qp);
/* Wakes a thread if it sleeps (after a dirty bit or queue push). */
void sn_wake(struct sn_shm_thread *sh);
/* CQ idx advanced: kicks this thread's QPs WAITing on it. */
void sn_cq_event(struct sn_thread *t, uint32_t idx);
/*
 * Puts qp on its thread's run queue (owner thread only). Inline: every
 * response kicks its requester, every poke its QP.
 */
static inline void sn_kick(struct sn_thread *t, struct sn_qp *qp)
{
    if (!qp->in_run) {
        qp->in_run = true;
        sn_list_add_tail(&t->runq, &qp->run);
    }
}
/* Arms the QP's timer for time at (owner thread only; earliest wins). */
void sn_timer_qp(struct sn_thread *t, struct sn_qp *qp, uint64_t at);
/* Queues a packet for its ready time on thread t (owner thread only). */
void sn_timer_pkt(struct sn_thread *t, struct sn_pkt *p);
void sn_timer_cancel(struct sn_thread *t, struct sn_timer *tm);
/* Queues timer tm (idle) for tm->at on thread t (owner thread only). */
void sn_timer_add(struct sn_thread *t, struct sn_timer *tm);
/*
 * Looks a QP or CQ up by number; NULL if there is none (or the QP is
 * dying). Inline: every packet takes two QP lookups (sending, delivering).
 */
static inline struct sn_qp *sn_qp_lookup(struct sn_engine *e, uint32_t qpn)
{
    struct sn_qp *qp = load_acquire(&e->qps[qpn & (SN_MAX_OBJS - 1)]);

    if (!qp || qp->qpn != qpn || load_relaxed(&qp->dying))
        return NULL;
    return qp;
}

static inline struct sn_cq *sn_cq_lookup(struct sn_engine *e, uint32_t cqn)
{
    struct sn_cq *cq = load_acquire(&e->cqs[cqn & (SN_MAX_OBJS - 1)]);

    return cq && cq->cqn == cqn ? cq : NULL;
}

/* ---- fabric.c: packets ------------------------------------------------ */

/* A packet from t's pool of its size class, or malloc'ed; NULL: none. */
struct sn_pkt *sn_pkt_alloc_any(struct sn_thread *t, uint32_t payload);

/* Clears what a packet taken for reuse must not carry over. */
static inline struct sn_pkt *sn_pkt_init(struct sn_pkt *p)
{
    p->next = NULL;
    p->tm.at = 0;
    p->tm.pos = SN_TIMER_IDLE;
    memset(&p->h, 0, sizeof(p->h));
    return p;
}

/*
 * sn_pkt_alloc_any() with the common case inline: requests and responses
 * mostly carry at most SN_POOL_SMALL bytes (a READ of a value, an atomic's
 * 8, an ACK's none), and that pool is rarely empty.
 */
static inline struct sn_pkt *sn_pkt_alloc(struct sn_thread *t, uint32_t payload)
{
    struct sn_pool *pool = &t->pools[0];
    struct sn_pkt *p = pool->free;

    if (payload > SN_POOL_SMALL || !p)
        return sn_pkt_alloc_any(t, payload);
    pool->free = p->next;
    pool->count--;
    return sn_pkt_init(p);
}

void sn_pkt_free(struct sn_thread *t, struct sn_pkt *p);
void sn_pool_drain(struct sn_thread *t);
/*
 * Sends p from QP qp (at time `depart` for timed devices) to the thread
 * owning p->h.dst_qpn; a packet to no QP comes back as a NAK (requests) or
 * is dropped. A QP whose peer is on another host hands p to RoCE instead
 * (sn_rc_output), which takes ownership. sn_send() below is this with the
 * common cases inline.
 */
void sn_send_any(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p,
                 uint64_t depart);
/* Pushes p onto thread dt's inbox (any thread) and wakes it. */
void sn_thread_push(struct sn_thread *dt, struct sn_pkt *p);

/* Appends p, ready now, for dst, a QP of thread t, to t's local queue. */
static inline void sn_local_add(struct sn_thread *t, struct sn_qp *dst,
                                struct sn_pkt *p)
{
    if (t->local_tail)
        t->local_tail->next = p;
    else
        t->local = p;
    t->local_tail = p;
    p->to = dst;
}

/* Hands p to the thread of QP dst (ready at p->tm.at, 0 = now). */
static inline void sn_route(struct sn_thread *t, struct sn_qp *dst,
                            struct sn_pkt *p)
{
    if (dst->thr != t)
        sn_thread_push(dst->thr, p);
    else if (p->tm.at)
        sn_timer_pkt(t, p);
    else
        sn_local_add(t, dst, p);
}

/* Takes the first packet off a queue of head and tail pointers. */
static inline struct sn_pkt *sn_pkt_pop(struct sn_pkt **head,
                                        struct sn_pkt **tail)
{
    struct sn_pkt *p = *head;

    *head = p->next;
    if (!*head)
        *tail = NULL;
    p->next = NULL;
    return p;
}

/*
 * sn_send_any() for an untimed device's packet to a QP of this engine
 * that exists: every request and response of a chain is one.
 */
static inline void sn_send(struct sn_thread *t, struct sn_qp *qp,
                           struct sn_pkt *p, uint64_t depart)
{
    struct sn_qp *dst;

    if (qp->rc || qp->dev->tm.timed ||
        !(dst = sn_qp_lookup(t->eng, p->h.dst_qpn))) {
        sn_send_any(t, qp, p, depart);
        return;
    }
    p->tm.at = 0;
    sn_route(t, dst, p);
}
/* Handles a packet that is ready (responder or requester side). */
void sn_deliver(struct sn_thread *t, struct sn_pkt *p);
/*
 * Delivers the packets of t's local queue, those queued meanwhile too,
 * without a table lookup; returns how many.
 */
int sn_run_local(struct sn_thread *t);

/* ---- mr.c: memory translation ----------------------------------------- */

/* The MR that key names on device dev, or NULL (none, or another's). */
static inline const struct sn_mr *
sn_mr_lookup(struct sn_engine *e, const struct sn_dev *dev, uint32_t key)
{
    const struct sn_mr *mr =
        load_acquire(&e->mrs[(key >> 8) & (SN_MAX_MRS - 1)]);

    return mr && mr->key == key && mr->dev == dev ? mr : NULL;
}

/*
 * The engine address of [addr, addr+len) in mr (NULL: none), or NULL when
 * the bounds or the access bits need do not allow it. len 0 is allowed
 * anywhere inside the MR.
 */
static inline uint8_t *sn_mr_addr(const struct sn_mr *mr, uint64_t addr,
                                  uint64_t len, unsigned need)
{
    if (!mr || (mr->access & need) != need)
        return NULL;
    if (addr < mr->addr || len > mr->len || addr - mr->addr > mr->len - len)
        return NULL;
    return mr->eng + (addr - mr->addr);
}

/*
 * Translates [addr, addr+len) under key for device dev, requiring access
 * bits need; returns the engine address or NULL when the key, bounds or
 * access do not allow it.
 */
static inline uint8_t *sn_xlate(struct sn_engine *e, const struct sn_dev *dev,
                                uint32_t key, uint64_t addr, uint64_t len,
                                unsigned need)
{
    return sn_mr_addr(sn_mr_lookup(e, dev, key), addr, len, need);
}

/*
 * A scatter or gather list's entries mostly share one key: the MR of the
 * previous entry serves the next one with the same key, checked as a new
 * lookup would be (one WQE's list sees one registration of each key).
 */
static inline const struct sn_mr *sn_mr_lookup_next(struct sn_engine *e,
                                                    const struct sn_dev *dev,
                                                    uint32_t key,
                                                    const struct sn_mr *prev)
{
    return prev && prev->key == key ? prev : sn_mr_lookup(e, dev, key);
}

/*
 * A QP's receive doorbell record is ordinary registrable memory, so RDMA
 * may store a new count there (rnic_qp_rq_doorbell). Call this after the
 * engine stored [addr, addr+len) through key: a store that covered a
 * record pokes its QP, so that a message waiting for a receive (RNR) sees
 * the new count, as a NIC's RNR retry would.
 */
void sn_rq_db_stored(struct sn_thread *t, const struct sn_mr *mr, uint64_t addr,
                     uint64_t len);

/* The same with the MR the store went through (found by sn_mr_lookup). */
static inline void sn_mr_stored_mr(struct sn_thread *t, const struct sn_mr *mr,
                                   uint64_t addr, uint64_t len)
{
    if (mr->rq_db_qpn)
        sn_rq_db_stored(t, mr, addr, len);
}

static inline void sn_mr_stored(struct sn_thread *t, uint32_t key,
                                uint64_t addr, uint64_t len)
{
    const struct sn_mr *mr =
        load_acquire(&t->eng->mrs[(key >> 8) & (SN_MAX_MRS - 1)]);

    if (mr && mr->key == key)
        sn_mr_stored_mr(t, mr, addr, len);
}

/* ---- cq.c ------------------------------------------------------------- */

/* Appends a completion; wakes WAITs and rnic_cq_wait() sleepers. */
void sn_cq_push(struct sn_thread *t, struct sn_cq *cq, struct sn_cqe *cqe);

static inline uint32_t sn_cq_count(struct sn_cq *cq)
{
    return (uint32_t)load_acquire(&cq->count);
}

/*
 * Timed models: the NIC time at which cq held its first count completions,
 * i.e. when a WAIT for count is satisfied. A WAIT that starts later than
 * that still runs at its own start; one that was waiting resumes then, not
 * at the time of whatever completion came last. Falls back to the latest
 * completion's time when that entry was already overwritten.
 */
static inline uint64_t sn_cq_count_ns(struct sn_cq *cq, uint32_t count)
{
    const struct sn_cqe *e = &cq->ring[(count - 1) & cq->mask];

    if (count == 0)
        return 0;
    if (load_acquire(&e->seq) == count - 1)
        return e->upto_ns;
    return load_relaxed(&cq->last_ns);
}

/* ---- sq.c: requester -------------------------------------------------- */

/* Runs the QP: retires completions, executes WQEs (owner thread). */
void sn_qp_run(struct sn_thread *t, struct sn_qp *qp);
/* Reacts to a poke: doorbell, enable, posted receive, destroy. */
void sn_qp_dirty(struct sn_thread *t, struct sn_qp *qp);
/* A response (ACK, READ_RESP, ATOMIC_RESP, NAK) for this requester. */
void sn_qp_response(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p);
/*
 * Moves qp to the error state: outstanding WQEs from psn `from` on are
 * flushed, the peer is told (unless the peer told us), receives flushed.
 */
void sn_qp_fail(struct sn_thread *t, struct sn_qp *qp, uint32_t from,
                bool tell_peer);
/* The peer reported an error (ERR packet): flush everything. */
void sn_qp_peer_failed(struct sn_thread *t, struct sn_qp *qp);
/* Lets go of a dying QP (owner thread): lists, timers, packets. */
void sn_qp_detach(struct sn_thread *t, struct sn_qp *qp);

/* ---- resp.c: responder ------------------------------------------------ */

/* A request (or ERR) for this QP; returns false if it must wait (RNR). */
bool sn_resp_request(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p);
/*
 * A WRITE, WRITE_IMM, SEND or SEND_IMM (header h, payload data) from this
 * QP's peer on the same thread, served as sn_resp_request() serves its
 * packet when it succeeds, with no ACK to send: true then. False, having
 * changed nothing, where the packet would wait for a receive (RNR) or be
 * refused (NAK), so that the one packet path handles both. Untimed
 * devices only (no arrival time); the caller checks that the QP serves
 * its peer now (sq.c, sn_now_responder()).
 */
bool sn_resp_now(struct sn_thread *t, struct sn_qp *qp, const struct sn_wire *h,
                 const uint8_t *data);
/* Retries requests that waited for a receive. */
void sn_resp_unstall(struct sn_thread *t, struct sn_qp *qp);
/* Flushes every posted receive with WR_FLUSH_ERR (QP in error). */
void sn_rq_flush(struct sn_thread *t, struct sn_qp *qp);
/*
 * The remote range [raddr, raddr+len) under rkey, if this QP serves the
 * operation (its responder access has need) and the rkey allows it; NULL
 * otherwise (the responder answers REM_ACCESS_ERR). Inline: every WRITE,
 * READ and atomic a responder serves asks.
 */
static inline uint8_t *sn_remote_xlate(struct sn_thread *t,
                                       const struct sn_qp *qp, uint32_t rkey,
                                       uint64_t raddr, uint64_t len,
                                       unsigned need)
{
    if ((qp->access & need) != need)
        return NULL;
    return sn_xlate(t->eng, qp->dev, rkey, raddr, len, need);
}
/*
 * A CAS (cas) or FADD on the 8 host-endian bytes at target, which
 * sn_remote_xlate() gave for raddr under rkey; returns the old bytes.
 */
static inline uint64_t sn_atomic_apply(struct sn_thread *t, uint64_t *target,
                                       bool cas, uint64_t compare,
                                       uint64_t swap_add, uint32_t rkey,
                                       uint64_t raddr)
{
    uint64_t old = compare;

    if (cas)
        cas_seq_cst(target, &old, swap_add);
    else
        old = fetch_add_seq_cst(target, swap_add);
    sn_mr_stored(t, rkey, raddr, 8);
    return old;
}
/* Receive WQEs posted and enabled, not yet consumed. */
uint32_t sn_rq_avail(struct sn_qp *qp);
/*
 * The bytes the receive a SEND arriving now will consume can hold (its
 * scatter list, posted whether or not enabled yet), at most SN_MAX_MSG:
 * the bound of a SEND's reassembly. Returns false if no receive is posted
 * (an RNR); true with *room 0 for a QP without a receive queue (the SEND
 * is an invalid request). Owner thread.
 */
bool sn_rq_head_room(const struct sn_qp *qp, uint64_t *room);
/* Sends a response packet for request req (responder side). */
void sn_respond(struct sn_thread *t, struct sn_qp *qp, const struct sn_pkt *req,
                uint8_t type, uint8_t status, const void *data, uint32_t len,
                uint64_t depart);

/* ---- trace.c ---------------------------------------------------------- */

int sn_trace_open(const char *path, struct sn_trace **out);
void sn_trace_close(struct sn_trace *tr);
void sn_trace_wqe(struct sn_trace *tr, uint32_t dev, uint32_t qpn,
                  const struct sn_out *o, uint64_t end_ns);

#endif /* RDN_SOFTNIC_ENGINE_INT_H */
