/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain.h - the chain assembler and RedN's constructs.
 *
 * The assembler turns intentions into mlx5 WQE bytes (proto/mlx5.h) on a
 * QP's send ring and hands back, for every WQE, its absolute index and the
 * addresses of its fields, so that later WQEs and RECV scatter lists can
 * rewrite them: that is how a chain modifies itself. On top of it sit the
 * constructs of the RedN paper (NSDI 2022, "RDMA is Turing complete"):
 *
 *   if (x == y)      a CAS on a later WQE's ctrl word turns a NOP into the
 *                    guarded WQE (or the guarded WQE into a NOP), followed
 *                    by WAIT + SEND_EN so that the target is fetched only
 *                    after the CAS completed (doorbell ordering);
 *   unrolled loop    iterations pre-posted on a managed queue, each one
 *                    enabled by the previous iteration's trigger; break =
 *                    that trigger is disarmed;
 *   recycled loop    the ring holds one lap; the lap re-enables itself and
 *                    bumps every WAIT / SEND_EN index it uses, so it runs
 *                    forever with no CPU.
 *
 * and a checker (chain_check_*) that walks a built chain and reports
 * hazards: a WQE rewritten after the NIC may have fetched it, other data
 * races, a WAIT that is never satisfied, ring overflow.
 *
 * Conventions: functions return 0 (or a count) on success and a negative
 * errno on failure; chain_errmsg() then says why (thread-local). Absolute
 * indexes are free-running 32-bit counts: a queue's producer index in
 * WQEBBs (64-byte blocks), a CQ's completion count. Operands called id48
 * are 48-bit values kept in a ctrl segment's opmod, wqe_index and qpn
 * fields (see mlx5_ctrl_id48_word()).
 *
 * Threads: a chain is built by one thread; building and the engine never
 * touch the same WQE at once because WQEs are written before the doorbell
 * or enable that releases them.
 */
#ifndef RDN_CHAIN_CHAIN_H
#define RDN_CHAIN_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/mlx5.h"
#include "rdn/rnic/rnic.h"

#define CHAIN_ID48_MAX ((UINT64_C(1) << 48) - 1)
#define CHAIN_MAX_SGE  30 /* data segments per send WQE (ConnectX-5) */

/*
 * Returns the calling thread's message for its last failed chain_* call
 * (thread-local; it includes the rnic_* message when that layer failed).
 */
const char *chain_errmsg(void);

/* ---- completion queues ------------------------------------------------ */

/*
 * A CQ plus the number of completions the work posted so far will have
 * produced once it all completed: the absolute count a WAIT names. Every
 * signaled WQE posted through the assembler adds one; receives arriving
 * from outside are declared with chain_cq_expect().
 */
struct chain_cq {
    struct rnic_cq *cq;
    uint32_t num;            /* the CQN WAITs name */
    uint32_t count;          /* completions expected so far */
    struct rnic_device *dev; /* the CQ's device */
};

/*
 * Creates a CQ of depth entries with rnic_cq_flags (RNIC_CQ_IGNORE_OVERRUN
 * for CQs that only WAITs watch, such as a recycled loop's), expecting no
 * completion yet. Returns 0, or rnic_create_cq_ex()'s error. The caller
 * owns *out and closes it with chain_cq_close().
 */
int chain_cq_open(struct rnic_device *dev, uint32_t depth, unsigned flags,
                  struct chain_cq *out);
/* Destroys the CQ; a no-op on a zeroed or closed chain_cq. */
void chain_cq_close(struct chain_cq *cq);
/*
 * Declares n more completions that come from outside the assembler (a
 * peer's SENDs into posted receives) and returns the new expected count.
 */
uint32_t chain_cq_expect(struct chain_cq *cq, uint32_t n);

/* ---- queues ----------------------------------------------------------- */

/* A piece of registered memory: a WQE field, a buffer, a counter. */
struct chain_loc {
    uint8_t *ptr; /* host address (== the address WQEs carry) */
    uint32_t len;
    uint32_t lkey, rkey;
};

#define CHAIN_RECV_MAX_SGE MLX5_RECV_MAX_SGE

/* A buffer of NIC-reachable memory, registered as one MR. */
struct chain_buf {
    struct rnic_device *dev;
    uint8_t *ptr;
    size_t len;
    struct rnic_mr *mr;
};

/* A receive the assembler posted (kept for the checker). */
struct chain_recv {
    struct rnic_sge sge[CHAIN_RECV_MAX_SGE];
    unsigned n;
};

/*
 * A QP whose send ring the assembler writes. The ring is registered as an
 * MR (local write, remote read/write/atomic), so WQE fields can be the
 * target of RDMA. All indexes are absolute (free-running).
 *
 * On a device without a raw ring (verbs), sq.buf is NULL and ring_mr and
 * rq_db are zero: chain_post() hands each request to rnic_post_send(),
 * still counting WQEBBs as a ring would (room, retire, completions'
 * wqe_counter), chain_q_doorbell() has nothing left to release, and what
 * needs WQE bytes (chain_field() and the constructs built on it, id bits,
 * cross-channel queues) fails with -EOPNOTSUPP.
 */
struct chain_q {
    struct rnic_device *dev;
    struct rnic_qp *qp;
    uint32_t qpn;
    unsigned flags; /* enum rnic_qp_flags */
    struct rnic_sq sq;
    struct rnic_mr *ring_mr;
    struct chain_cq *scq, *rcq;
    struct chain_cq own_scq, own_rcq; /* used when the caller gave none */
    struct chain_q *peer;             /* connected queue, when known */
    struct chain_buf sink_buf;
    struct chain_loc sink; /* 64 B where unwanted results go */

    uint32_t pi;       /* next WQEBB to write */
    uint32_t retired;  /* WQEBBs before this may be overwritten */
    uint32_t doorbell; /* producer index last rung (unmanaged) */
    uint32_t enabled;  /* enable limit granted by posted SEND_ENs */

    uint32_t rq_size;         /* receive ring entries, 0 = none */
    struct rnic_mr *rq_db_mr; /* covers rq_db */
    /*
     * The receive doorbell record (rnic_qp_rq_doorbell: 4 bytes, the
     * big-endian count of posted receives), registered local + remote
     * write so that a READ's or RECV's scatter, or a loopback WRITE, can
     * store a new count: how a recycled chain re-arms receives whose WQEs
     * it never rewrites. Zero when there is no receive queue.
     */
    struct chain_loc rq_db;
    uint32_t rq_pi;           /* receives posted */
    uint32_t rq_enabled;      /* enable limit granted by posted RECV_ENs */
    struct chain_recv *recvs; /* the last rq_size receives, for the checker */
};

struct chain_q_attr {
    uint32_t sq_wqebb;     /* send ring size in WQEBBs, a power of two */
    uint32_t rq_wqe;       /* receive ring entries (power of two), 0: none */
    uint32_t max_recv_sge; /* 0: 16 */
    unsigned flags;        /* enum rnic_qp_flags */
    struct chain_cq *scq;  /* NULL: a CQ of the queue's own */
    struct chain_cq *rcq;  /* NULL: own CQ when rq_wqe > 0 */
    uint32_t cq_depth;     /* own CQs; 0: 4096 */
    unsigned cq_flags;     /* own CQs: enum rnic_cq_flags */
    /*
     * Access of the ring's MR; 0: local write + remote read/write/atomic.
     * Rewriting WQEs through a loopback QP needs the remote bits the
     * rewrite uses (REMOTE_ATOMIC for a CAS, REMOTE_WRITE for a WRITE);
     * READ and RECV scatters need only LOCAL_WRITE.
     */
    unsigned ring_access;
};

/*
 * Creates a QP with attr's rings and flags, its own CQs where attr names
 * none, the ring's MR, a sink, and (with a receive queue) the registered
 * receive doorbell record. Returns 0, or -EINVAL (ring sizes not powers of
 * two) or the rnic_* error (message in chain_errmsg()); nothing is left
 * open on failure. The caller owns *out (CQs it passed in stay its own)
 * and closes it with chain_q_close().
 */
int chain_q_open(struct rnic_device *dev, const struct chain_q_attr *attr,
                 struct chain_q *out);
/* Destroys the QP and what chain_q_open() made for it; no-op if zeroed. */
void chain_q_close(struct chain_q *q);
/*
 * Connects a and b to each other (a == b: loopback, a QP to itself).
 * Returns 0 or rnic_connect()'s error.
 */
int chain_q_connect(struct chain_q *a, struct chain_q *b);
/*
 * Rings the doorbell up to the queue's producer index. Returns 0, or
 * -EINVAL for a managed queue (only SEND_EN releases its WQEs).
 */
int chain_q_doorbell(struct chain_q *q);
/*
 * Lets the ring reuse the WQEBBs before index upto (their WQEs are done).
 * Never moves backwards or past what was posted.
 */
void chain_q_retire(struct chain_q *q, uint32_t upto);
/* Returns the free WQEBBs in the ring (posted minus retired). */
uint32_t chain_q_room(const struct chain_q *q);

/*
 * Allocates len zeroed bytes (rnic_mem_alloc) and registers them with
 * access. Returns 0 or the rnic_* error; nothing is left allocated on
 * failure. The caller owns *out and frees it with chain_buf_close().
 */
int chain_buf_open(struct rnic_device *dev, size_t len, unsigned access,
                   struct chain_buf *out);
/* Deregisters and frees the buffer; no-op if zeroed or closed. */
void chain_buf_close(struct chain_buf *b);
/* Returns the location of len bytes at offset off of b (not checked). */
struct chain_loc chain_buf_loc(const struct chain_buf *b, size_t off,
                               uint32_t len);

/*
 * How long a waiter polls a CQ before it sleeps in rnic_cq_wait(): longer
 * than any single RDMA round trip softnic models (a 64 KB READ under cx5
 * is about 8 us), so that latency is measured, not a wake-up, yet short,
 * so a waiter sharing a core with a server thread (the benches' RPC
 * baselines on a 2-core machine) soon lets it run. The baselines and
 * benches use this budget; librdn polls longer (OFL_SPIN_NS), which only
 * matters for answers slower than this budget.
 */
#define CHAIN_POLL_SPIN_NS 20000

/*
 * Waits up to timeout_ms for one completion of cq (polling for
 * CHAIN_POLL_SPIN_NS, then sleeping in rnic_cq_wait). Returns 1 with *wc
 * filled, 0 on timeout, or a negative errno.
 */
int chain_cq_poll_wait(struct chain_cq *cq, struct rnic_wc *wc, int timeout_ms);

/* ---- the assembler ---------------------------------------------------- */

enum chain_wr_flags {
    CHAIN_SIGNALED = MLX5_WQE_CTRL_CQ_UPDATE, /* produce a completion */
    CHAIN_FENCE = MLX5_WQE_CTRL_FENCE,        /* after prior READ/atomics */
    CHAIN_SOLICITED = MLX5_WQE_CTRL_SOLICITED,
    CHAIN_ID48 = 0x100,  /* ctrl id bits from wr.id48, not index/qpn */
    CHAIN_QUIET = 0x200, /* chain_if_post(): an unsignaled CAS */
};

/*
 * One work request. Which fields count depends on opcode:
 *   NOP                 -
 *   RDMA_WRITE(_IMM)    sg/nsg (gather), raddr, rkey, (imm)
 *   SEND(_IMM)          sg/nsg (gather), (imm)
 *   RDMA_READ           sg/nsg (scatter), raddr, rkey
 *   ATOMIC_CS           sg (one 8-byte result buffer), raddr, rkey,
 *                       compare, swap_add
 *   ATOMIC_FA           sg, raddr, rkey, swap_add (the addend)
 *   WAIT                index (CQ count), obj (CQN)
 *   SEND_EN / RECV_EN   index (producer index), obj (QPN)
 * Atomic operands are host values of the 8 target bytes (what a host-endian
 * atomic compares); the assembler stores them big-endian as mlx5 wants.
 */
struct chain_wr {
    uint8_t opcode; /* enum mlx5_opcode */
    unsigned flags; /* enum chain_wr_flags */
    const struct rnic_sge *sg;
    unsigned nsg;
    uint64_t raddr;
    uint32_t rkey;
    uint64_t compare, swap_add;
    uint32_t imm; /* host order */
    uint32_t index, obj;
    uint64_t id48; /* with CHAIN_ID48 */
};

/* A posted WQE: where it is, so that its fields can be found. */
struct chain_wqe {
    struct chain_q *q;
    uint32_t index;    /* absolute index of its first WQEBB */
    uint8_t opcode;    /* as written (NOP for a disarmed if-target) */
    uint8_t layout;    /* the opcode whose segment layout it has */
    uint8_t ds;        /* 16-byte segments */
    uint8_t nbb;       /* WQEBBs */
    uint8_t nsg;       /* data segments */
    unsigned flags;    /* enum chain_wr_flags */
    uint32_t cq_count; /* SIGNALED: its CQ's count once it completed */
};

/*
 * Appends wr to q's ring (wrapping at the ring's end as mlx5 does) and
 * describes it in *out (may be NULL). -ENOSPC when the ring is full,
 * -EINVAL for a malformed request.
 */
int chain_post(struct chain_q *q, const struct chain_wr *wr,
               struct chain_wqe *out);

/* Returns the location of len bytes at ptr, with mr's keys (not checked). */
struct chain_loc chain_loc_mr(const struct rnic_mr *mr, void *ptr,
                              uint32_t len);
/* Returns the sub-range off bytes into l, len bytes long (not checked). */
struct chain_loc chain_loc_part(struct chain_loc l, uint32_t off, uint32_t len);
/* Returns l as a local scatter/gather entry (addr, length, lkey). */
struct rnic_sge chain_loc_sge(struct chain_loc l);

static inline uint64_t chain_loc_addr(struct chain_loc l)
{
    return (uint64_t)(uintptr_t)l.ptr;
}

/*
 * Convenience forms of chain_post(), with its return values and errors;
 * dst/src/target are remote memory (the peer's, or this QP's own through
 * a loopback). WAIT, SEND_EN and RECV_EN need a cross-channel q (-EINVAL
 * otherwise).
 */
int chain_nop(struct chain_q *q, unsigned flags, struct chain_wqe *out);
int chain_write(struct chain_q *q, const struct rnic_sge *sg, unsigned nsg,
                struct chain_loc dst, unsigned flags, struct chain_wqe *out);
int chain_write_imm(struct chain_q *q, const struct rnic_sge *sg, unsigned nsg,
                    struct chain_loc dst, uint32_t imm, unsigned flags,
                    struct chain_wqe *out);
int chain_read(struct chain_q *q, const struct rnic_sge *sg, unsigned nsg,
               struct chain_loc src, unsigned flags, struct chain_wqe *out);
int chain_send(struct chain_q *q, const struct rnic_sge *sg, unsigned nsg,
               unsigned flags, struct chain_wqe *out);
int chain_send_imm(struct chain_q *q, const struct rnic_sge *sg, unsigned nsg,
                   uint32_t imm, unsigned flags, struct chain_wqe *out);
int chain_cas(struct chain_q *q, struct chain_loc target, uint64_t compare,
              uint64_t swap, const struct rnic_sge *result, unsigned flags,
              struct chain_wqe *out);
int chain_fadd(struct chain_q *q, struct chain_loc target, uint64_t add,
               const struct rnic_sge *result, unsigned flags,
               struct chain_wqe *out);
int chain_wait(struct chain_q *q, const struct chain_cq *cq, uint32_t count,
               unsigned flags, struct chain_wqe *out);
/* Posts a WAIT until w completed (-EINVAL unless w is signaled). */
int chain_wait_wqe(struct chain_q *q, const struct chain_wqe *w, unsigned flags,
                   struct chain_wqe *out);
/* Post SEND_EN / RECV_EN of managed queue tgt up to index; tgt's enable
 * count is tracked. */
int chain_send_en(struct chain_q *q, struct chain_q *tgt, uint32_t index,
                  unsigned flags, struct chain_wqe *out);
int chain_recv_en(struct chain_q *q, struct chain_q *tgt, uint32_t index,
                  unsigned flags, struct chain_wqe *out);
/*
 * The trigger: the cross-channel queue master enables managed queue tgt up
 * to everything posted on it so far, and master's doorbell is rung.
 * Returns 0 or the error of chain_send_en() / chain_q_doorbell().
 */
int chain_kick(struct chain_q *master, struct chain_q *tgt);

/*
 * Posts a receive on q (tracked for RECV_EN and the checker). Returns 0,
 * -EINVAL (no receive queue, 0 or more than 16 entries), or
 * rnic_post_recv()'s error (-ENOMEM: the ring is full).
 */
int chain_post_recv(struct chain_q *q, const struct rnic_sge *sge, unsigned n,
                    uint64_t wr_id);

/* ---- fields ----------------------------------------------------------- */

enum chain_field {
    CHAIN_F_CTRL,       /* 8 B: opmod, wqe_index, opcode, qpn, ds */
    CHAIN_F_FLAGS,      /* 1 B: fm_ce_se */
    CHAIN_F_IMM,        /* 4 B, big-endian */
    CHAIN_F_RADDR,      /* 8 B, big-endian */
    CHAIN_F_RKEY,       /* 4 B, big-endian */
    CHAIN_F_SWAP,       /* 8 B: CAS swap or FADD addend, big-endian */
    CHAIN_F_COMPARE,    /* 8 B: CAS compare, big-endian */
    CHAIN_F_DATA,       /* 16 B: data segment i (a struct mlx5_data_seg) */
    CHAIN_F_BYTE_COUNT, /* 4 B of data segment i */
    CHAIN_F_LKEY,       /* 4 B of data segment i */
    CHAIN_F_ADDR,       /* 8 B of data segment i */
    CHAIN_F_INDEX,      /* 4 B: WAIT count or enable index, big-endian */
    CHAIN_F_OBJ,        /* 4 B: CQN or QPN, big-endian */
    CHAIN_F_OPCODE,     /* 1 B: the opcode byte of the ctrl segment */
};

/*
 * Finds field f (data segment i for the CHAIN_F_DATA family) of w: its
 * host address and the ring's keys, in *out. A field never straddles the
 * ring's end. Returns 0, or -EINVAL if w's layout has no such field.
 */
int chain_field(const struct chain_wqe *w, enum chain_field f, unsigned i,
                struct chain_loc *out);

/*
 * Finds the byte of w's ctrl segment that holds id bits 8k .. 8k+7 (k <
 * 6): a target for a one-byte READ or RECV scatter. k = 5 is the opmod
 * byte, which ConnectX reads for some opcodes: keep it 0 in WQEs that
 * execute. Returns 0, or -EINVAL for k >= 6.
 */
int chain_id48_byte(const struct chain_wqe *w, unsigned k,
                    struct chain_loc *out);
/* Returns the byte of big-endian field f holding its bits 8k .. 8k+7
 * (k = 0: the lowest). */
struct chain_loc chain_be_byte(struct chain_loc f, unsigned k);

/*
 * Build-time rewrites of w's WAIT/ENABLE index, data segment i, or remote
 * address and key: only before the WQE is released to the NIC (after
 * that, only the chain may rewrite it). Return 0, or -EINVAL if w's
 * layout has no such field.
 */
int chain_wqe_set_index(const struct chain_wqe *w, uint32_t index);
int chain_wqe_set_sge(const struct chain_wqe *w, unsigned i,
                      const struct rnic_sge *sge);
int chain_wqe_set_raddr(const struct chain_wqe *w, uint64_t raddr,
                        uint32_t rkey);
/* Returns the opcode byte now in w's ctrl segment (the NIC may have
 * rewritten it: a fired if-construct). */
uint8_t chain_wqe_opcode_now(const struct chain_wqe *w);

/* ---- byte order ------------------------------------------------------- */

/*
 * Returns the 8 bytes of a ctrl segment's first words holding opcode, ds
 * and id48, read as a host integer: the compare / swap operand of a CAS
 * on them.
 */
uint64_t chain_ctrl_word(uint8_t opcode, uint8_t ds, uint64_t id48);
/* Returns the id48 a driver would write: opmod 0, w's index and QPN. */
uint64_t chain_wqe_id48(const struct chain_wqe *w);

/* Store v big-endian at p (which need not be aligned). */
void chain_put_be32(void *p, uint32_t v);
void chain_put_be64(void *p, uint64_t v);
/* Writes id48 as the 6 big-endian bytes chain_id48_sges() expects. */
void chain_id48_to_be(uint64_t id48, uint8_t out[6]);

/*
 * Scatter entries that carry a value from a buffer into a WQE field with
 * the right byte order, for a READ's or RECV's scatter list:
 *   chain_id48_sges         6 big-endian bytes -> w's id bits (2 entries)
 *   chain_id48_le_sges      6 little-endian bytes -> w's id bits (6)
 *   chain_compare_id48_sges 6 little-endian bytes -> id bits of the CAS
 *                           compare field of cas (2 entries)
 *   chain_be32_le_sges      4 little-endian bytes -> a big-endian 32-bit
 *                           field (4 entries)
 * Each returns the number of entries written to out.
 */
int chain_id48_sges(const struct chain_wqe *w, struct rnic_sge out[2]);
int chain_id48_le_sges(const struct chain_wqe *w, struct rnic_sge out[6]);
int chain_compare_id48_sges(const struct chain_wqe *cas,
                            struct rnic_sge out[2]);
int chain_be32_le_sges(struct chain_loc field, struct rnic_sge out[4]);

/* ---- if (x == y) ------------------------------------------------------ */

enum chain_if_mode {
    CHAIN_IF_ARM,    /* x == y: the NOP becomes the guarded WQE */
    CHAIN_IF_DISARM, /* x == y: the guarded WQE becomes a NOP */
};

struct chain_if {
    struct chain_wqe target; /* on the managed queue */
    struct chain_wqe cas;    /* on the control queue */
    uint64_t armed;          /* target's ctrl word when armed */
    uint64_t disarmed;       /* ... and when disarmed */
};

/*
 * Posts the conditional WQE wr on managed queue tgt, with x in its id bits
 * (armed or disarmed as mode says), and on ctl (a cross-channel queue whose
 * RDMA reaches tgt's ring) a signaled CAS that flips it when its id bits
 * equal y. Nothing is enabled: follow with chain_guard(), or with a
 * FENCEd SEND_EN of tgt on ctl, which runs once the CAS completed and so
 * needs no completion to WAIT for: cas_flags CHAIN_QUIET leaves the CAS
 * unsignaled.
 * Rewriting the operands at run time (the "copy" of the paper's cost):
 *   x (chain_id48_sges() on out->target) at any time before the CAS runs,
 *     e.g. by a READ on ctl just before it, with cas_flags CHAIN_FENCE:
 *     the target is not released yet, so the NIC cannot have fetched it;
 *   y (chain_compare_id48_sges() on out->cas) only before ctl's CAS may be
 *     fetched: e.g. by a RECV that ctl WAITs for before the CAS's segment
 *     is released. A READ on ctl rewriting its own next CAS races with
 *     the NIC's prefetch, and the checker says so.
 * On hardware: the id bits are opmod (bits 47..40), wqe_index and qpn. The
 * NIC must run with its WQE index/QPN checks disabled (see
 * rdn/softnic/engine_int.h), and opmod is read for some opcodes (atomics, for
 * one), so an executed WQE should have id bits 47..40 zero: in ARM mode
 * the armed WQE gets chain_wqe_id48() (opmod 0) whatever x and y are; in
 * DISARM mode the guarded WQE runs (x != y) with x in its id bits, so keep
 * x below 2^40 there unless the opcode ignores opmod.
 * Returns 0, -EINVAL (ctl == tgt, tgt not managed, operands over 48 bits,
 * a NOP as wr), or chain_post()'s error.
 */
int chain_if_post(struct chain_q *ctl, struct chain_q *tgt,
                  const struct chain_wr *wr, uint64_t x, uint64_t y,
                  enum chain_if_mode mode, unsigned cas_flags,
                  struct chain_if *out);
/*
 * Doorbell ordering: ctl WAITs until every signaled WQE posted on it so far
 * completed, then enables tgt up to everything posted on tgt. Returns 0
 * or chain_post()'s error.
 */
int chain_guard(struct chain_q *ctl, struct chain_q *tgt);
/* Posts the whole if-construct: chain_if_post() + chain_guard(). */
int chain_if_eq(struct chain_q *ctl, struct chain_q *tgt,
                const struct chain_wr *wr, uint64_t x, uint64_t y,
                enum chain_if_mode mode, unsigned cas_flags,
                struct chain_if *out);

/* ---- unrolled loop ---------------------------------------------------- */

/*
 * Iterations pre-posted on the managed queue body. Iteration i ends by
 * enabling trig (a managed, cross-channel queue, may be body itself) up to
 * trigger i, a SEND_EN(body) there that enables iteration i+1; the trigger
 * after the last iteration enables whatever the caller posts on body after
 * the loop. break: trigger i is disarmed when an if-construct of iteration
 * i fired, so nothing after it runs.
 * The end of an iteration WAITs for the last signaled WQE posted on body,
 * so an iteration that feeds the next one must signal its last RDMA WQE
 * (completions are in order). If-targets posted on trig are released with
 * the trigger; with trig == body they need a chain_guard() of their own.
 *
 *   chain_unrolled_begin(&l, body, trig);
 *   for each iteration: chain_unrolled_iter(&l); post body WQEs;
 *                       chain_unrolled_end_iter(&l, brk_or_NULL);
 *   post the epilogue on body; chain_unrolled_finish(&l);
 *   release iteration 0 with chain_send_en(master, body, l.first_end, ..)
 */
struct chain_unrolled {
    struct chain_q *body, *trig;
    struct chain_wqe trigger; /* the last trigger posted */
    uint32_t first_end;       /* body index that ends iteration 0 */
    unsigned iters;
    bool in_iter;
};

/*
 * Starts a loop on body and trig (see above) in *l, which the caller owns.
 * Returns 0, or -EINVAL (body and trig must both be managed and
 * cross-channel).
 */
int chain_unrolled_begin(struct chain_unrolled *l, struct chain_q *body,
                         struct chain_q *trig);
/* Starts the next iteration. Returns 0, or -EINVAL inside an iteration. */
int chain_unrolled_iter(struct chain_unrolled *l);
/*
 * Ends the iteration. brk (NULL: no break) is an if-construct of this
 * iteration, posted with ctl == body (either mode): if it fired, the loop
 * stops after this iteration. Costs one READ and one CAS on body: the READ
 * copies the opcode byte of brk's target into the trigger's id bits, the
 * CAS disarms the trigger when that byte is the fired opcode. Returns 0,
 * -EINVAL outside an iteration, or chain_post()'s error.
 */
int chain_unrolled_end_iter(struct chain_unrolled *l,
                            const struct chain_if *brk);
/*
 * Ends the loop: the last trigger enables what was posted on body after
 * it. Returns 0, or -EINVAL inside an iteration or before the first one
 * ended.
 */
int chain_unrolled_finish(struct chain_unrolled *l);

/* ---- lap counters ----------------------------------------------------- */

/*
 * A chain that recycles its ring (a recycled loop, the offloaded GET)
 * must move every WAIT count and enable index it holds one lap further
 * each lap. It keeps, per WAIT + SEND_EN pair, a 64-bit host-endian
 * counter in NIC memory: an FADD adds chain_lap_counter(completions per
 * lap, WQEBBs per lap), then a READ (FENCE: after the FADD) copies it with
 * the chain_lap_sges() scatter list into the pair's big-endian fields.
 * WAIT counts are compared modulo 2^32 and enable indexes modulo 2^16, as
 * the NIC does.
 */
#define CHAIN_LAP_SGES 7
/* Returns the counter value (or increment) for a WAIT count and an enable
 * index: bytes 0-3 the count, bytes 6-7 the index's low 16 bits. */
uint64_t chain_lap_counter(uint32_t wait_count, uint32_t en_index);
/* Fills out with the READ scatter list that copies a counter into wait's
 * count and en's index (the gap bytes go to sink). */
void chain_lap_sges(const struct chain_wqe *wait, const struct chain_wqe *en,
                    struct chain_loc sink, struct rnic_sge out[CHAIN_LAP_SGES]);
/* Posts NOPs filling exactly nbb WQEBBs (up to 7 per WQE). Returns 0 or
 * chain_post()'s error (-ENOSPC: the ring is full). */
int chain_pad(struct chain_q *q, uint32_t nbb);

/* ---- recycled loop ---------------------------------------------------- */

#define CHAIN_RECYCLED_MAX_SEG 8
/* Bytes of NIC memory a recycled loop keeps its counters in. */
#define CHAIN_RECYCLED_STATE(nseg) (8 * (nseg))

/*
 * A loop whose lap fills the whole ring of managed, cross-channel queue q,
 * which is connected to itself. A lap is cut into nseg >= 2 segments; each
 * ends with WAIT (own CQ) + SEND_EN (self) that releases the next segment,
 * and each begins by computing the next segment's WAIT and SEND_EN indexes:
 * an FADD bumps a host-endian counter, a READ copies it byte-reversed into
 * the big-endian fields (the WAIT count, 32 bits, compared modulo 2^32;
 * the low 16 bits of the enable index, all the NIC compares; a gap between
 * them absorbs the WAIT count's carries for 2^48 completions). A segment
 * thus never rewrites a WQE that is enabled, and the loop needs no CPU. Per
 * lap: nseg FADDs, nseg READs, nseg WAITs and nseg SEND_ENs. q's send CQ must
 * be q's alone and should be RNIC_CQ_IGNORE_OVERRUN (nobody polls it). Body
 * WQEs may rewrite WQEs of later segments (never of their own); a segment's
 * WAIT covers its last signaled WQE and, completions being in order, everything
 * before it: signal the last WQE whose result the next segment uses.
 *
 *   chain_recycled_begin(&l, q, state);   segment 0 starts
 *   post body WQEs; chain_recycled_next(&l);   segment 1 starts ...
 *   chain_recycled_end(&l);               pads the lap to the ring size
 *   chain_recycled_release(&l, master);   posts the release of lap 0
 *   chain_q_doorbell(master);             the loop starts
 *
 * state: CHAIN_RECYCLED_STATE(nseg) bytes of 8-aligned memory registered
 * with local write and remote read/write/atomic, reachable by q's RDMA.
 */
struct chain_recycled {
    struct chain_q *q;
    struct chain_loc state;
    uint32_t base;    /* index of lap 0's first WQEBB */
    uint32_t cq_base; /* q's CQ count when the loop began */
    unsigned nseg, cur;
    struct chain_wqe fadd[CHAIN_RECYCLED_MAX_SEG];
    struct chain_wqe patch[CHAIN_RECYCLED_MAX_SEG];
    struct chain_wqe wait[CHAIN_RECYCLED_MAX_SEG];
    struct chain_wqe en[CHAIN_RECYCLED_MAX_SEG];
    uint32_t end[CHAIN_RECYCLED_MAX_SEG]; /* segment ends, lap 0 */
    uint32_t cqc[CHAIN_RECYCLED_MAX_SEG]; /* CQ counts at the WAITs */
    uint32_t lap_wqebb, lap_cqes;
    unsigned nbrk;
    struct chain_wqe brk_read[4], brk_cas[4];
    unsigned brk_seg[4];
    bool ended;
};

/*
 * Begins the loop's first segment on q's fresh ring in *l (the caller
 * owns it). Returns 0, or -EINVAL (q not managed, cross-channel and
 * connected to itself, or state too small or unaligned) or chain_post()'s
 * error.
 */
int chain_recycled_begin(struct chain_recycled *l, struct chain_q *q,
                         struct chain_loc state);
/*
 * Ends the current segment and begins the next one. Returns 0, -ENOSPC
 * (more than CHAIN_RECYCLED_MAX_SEG segments), or chain_post()'s error.
 */
int chain_recycled_next(struct chain_recycled *l);
/*
 * Ends the lap: pads it to the ring's size, closes the last segment and
 * initialises the counters in state. Returns 0, -EINVAL (fewer than two
 * segments, or already ended) or chain_post()'s error (-ENOSPC: the lap
 * is larger than the ring).
 */
int chain_recycled_end(struct chain_recycled *l);
/*
 * Posts on master the SEND_EN that releases segment 0 of lap 0 (ring
 * master's doorbell to start the loop). Returns 0, -EINVAL before
 * chain_recycled_end(), or chain_post()'s error.
 */
int chain_recycled_release(struct chain_recycled *l, struct chain_q *master);
/*
 * break: posted in a segment s, stops the loop at the end of the current
 * lap's last segment when the 48-bit little-endian value at src (remote
 * memory q can READ, 6 bytes used) equals value. A READ copies it into the
 * id bits of the lap's final SEND_EN and a CAS disarms that SEND_EN.
 * read_flags may carry CHAIN_FENCE (src just written by this lap). Must be
 * posted before the last segment begins. The final SEND_EN runs with the
 * copied bytes in its id bits: on hardware keep byte 5 of src (opmod) 0.
 * Returns 0, -EINVAL (bad arguments, or the loop ended), -ENOSPC (more
 * than four breaks), or chain_post()'s error.
 */
int chain_recycled_break_if(struct chain_recycled *l, struct chain_loc src,
                            uint64_t value, unsigned read_flags);

/* ---- the checker ------------------------------------------------------ */

enum chain_hazard_kind {
    CHAIN_HZ_STALE_FETCH, /* a WQE rewritten while the NIC may fetch it */
    CHAIN_HZ_DATA_RACE,   /* unordered write vs read/write of memory */
    CHAIN_HZ_DEAD_WAIT,   /* a WAIT whose count is never reached */
    CHAIN_HZ_OVERFLOW,    /* more WQEs released than the ring holds */
    CHAIN_HZ_UNPOSTED,    /* a queue released past what was ever posted */
    CHAIN_HZ_BAD_WQE,     /* a WQE that would fail on the NIC */
    CHAIN_HZ_AMBIGUOUS,   /* a WAIT on a CQ fed by several queues */
};

struct chain_hazard {
    enum chain_hazard_kind kind;
    uint32_t qpn, index;       /* the WQE hit */
    uint32_t by_qpn, by_index; /* the WQE racing with it, if any */
    char msg[160];
};

#define CHAIN_CHECK_MAX_Q      8
#define CHAIN_CHECK_MAX_MEM    16
#define CHAIN_CHECK_MAX_REPORT 16
#define CHAIN_CHECK_WINDOW_ALL UINT32_MAX

struct chain_check;

struct chain_check_opts {
    uint32_t window;    /* prefetch window of unmanaged queues in WQEs
                           (at least as wide as that many WQEBBs);
                           0 means CHAIN_CHECK_WINDOW_ALL (hardware) */
    uint32_t max_steps; /* WQEs to execute; 0: 20000 */
};

struct chain_report {
    unsigned nhazards; /* all found */
    unsigned nkind[CHAIN_HZ_AMBIGUOUS + 1];
    struct chain_hazard hz[CHAIN_CHECK_MAX_REPORT]; /* the first ones */
    uint64_t steps;                                 /* WQEs executed */
    bool finished;                                  /* ran to quiescence */
};

/*
 * Creates a checker (opts may be NULL: hardware prefetch, 20000 steps).
 * Returns 0 with *out set, or -ENOMEM. The caller frees it with
 * chain_check_free(). One thread at a time per checker.
 */
int chain_check_new(const struct chain_check_opts *opts,
                    struct chain_check **out);
/* Frees the checker and its copies; NULL is a no-op. */
void chain_check_free(struct chain_check *c);
/*
 * Adds a queue of the chain (its rings and posted receives are copied
 * when the walk starts). Returns 0, -EINVAL, or -ENOSPC (more than
 * CHAIN_CHECK_MAX_Q queues).
 */
int chain_check_add_q(struct chain_check *c, struct chain_q *q);
/*
 * Adds memory the chain reads or writes besides the rings (copied when the
 * walk starts). Returns 0, -EINVAL, or -ENOSPC (more than
 * CHAIN_CHECK_MAX_MEM ranges).
 */
int chain_check_add_mem(struct chain_check *c, void *ptr, size_t len);
/*
 * Queues a message that arrives from outside on q's receive queue during
 * the walk (in order of the calls): chain_check_inject_after() without a
 * gate. Returns 0, -EINVAL (q not added, or no receive queue), -ENOMEM.
 */
int chain_check_inject(struct chain_check *c, struct chain_q *q,
                       const void *data, uint32_t len);
/*
 * Queues a message, as chain_check_inject() does, whose sender sends it
 * only after it saw completion number count of cq: a client that sends
 * request n once the answer of request n - depth arrived. cq must be a CQ
 * of a queue added before this call (say the client QP's receive CQ that
 * the server's WRITE_IMM answers complete on); count counts the
 * completions the walk pushes onto cq from its start, whatever cq->count
 * says (0: no gate). The message is delivered only once the walk reached
 * count; its receive and all its scatter writes happen after that
 * completion and after q's previous receive. Until then it holds back the
 * messages queued after it on q (RC order). A gate never reached leaves
 * the message undelivered: the walk ends without it (and reports what
 * then waits forever). cq NULL is chain_check_inject(). Returns 0,
 * -EINVAL (q not added or without receive queue, data NULL with len, or cq
 * not a CQ of a queue added to the checker: nothing is queued), -ENOMEM.
 */
int chain_check_inject_after(struct chain_check *c, struct chain_q *q,
                             const void *data, uint32_t len,
                             const struct chain_cq *cq, uint32_t count);
/*
 * Walks the chain on a private copy of its memory: executes it in one legal
 * order, with just-in-time fetch, and computes for every fetch and memory
 * access what must have happened before it under the NIC's rules (WQ
 * order, FENCE, WAIT counts, enables; unmanaged queues prefetched up to
 * the window; a QP's WRITEs and SENDs placed at its peer before the peer
 * takes its next message, as RC's responder runs them in order). The real memory is not touched. The verdict is in *rep;
 * returns 0 when the walk ran (hazards or not), or -EINVAL (no queue
 * added), -ENOMEM.
 */
int chain_check_run(struct chain_check *c, struct chain_report *rep);
/* Prints rep's summary and first hazards to f, one line each. */
void chain_report_print(const struct chain_report *rep, FILE *f);
/* Returns a static name for a hazard kind. */
const char *chain_hazard_name(enum chain_hazard_kind k);

/* ---- persistence (chain_persist.c) ----------------------------------- */

/*
 * Keeping chain objects alive in the softnic daemon after their process
 * dies, and re-attaching them in another process (rnic_persist and
 * rnic_attach; the device must be opened on a domain). Objects are named
 * after the caller's name or prefix (see chain_persist.c for the suffixes);
 * a full name longer than 63 characters is -ENAMETOOLONG. What only the
 * host counts is not restored: a re-attached CQ's count is 0, and a
 * re-attached queue's producer, retire, doorbell and enable indexes and
 * rq_pi are 0 and its receive copies (recvs) empty. A re-attached queue is
 * for chains that need no more posting (recycled ones), for watching (its
 * CQs, its QP's state, WQE fields in its ring via chain_field-style
 * addresses) and for closing (chain_q_close frees everything it holds).
 * Failing attaches leave what they attached persistent (rnic_close()
 * releases the handles) and *out zeroed.
 *
 * Every call returns 0 or a negative errno: -ENAMETOOLONG, and
 * rnic_persist()'s / rnic_attach()'s errors (-ENOENT: no such object,
 * -EEXIST: the name is taken, -EOPNOTSUPP: no persistence). A re-attached
 * object is the caller's, closed as a fresh one is.
 */
/* Persists the buffer's memory and MR, as <name>.mem and <name>.mr. */
int chain_buf_persist(struct chain_buf *b, const char *name);
/* Re-attaches them; out->len is the length the MR covers. */
int chain_buf_attach(struct rnic_device *dev, const char *name,
                     struct chain_buf *out);
/* Persists the CQ under name; a re-attached one has num, but count 0. */
int chain_cq_persist(struct chain_cq *cq, const char *name);
int chain_cq_attach(struct rnic_device *dev, const char *name,
                    struct chain_cq *out);
/*
 * Persists the queue: the CQs it owns (not those the caller gave: persist
 * them yourself, before), the QP, the ring MR, the sink and, with a
 * receive queue, the doorbell record's MR. The QP's CQs must be
 * persistent first (-EINVAL otherwise).
 */
int chain_q_persist(struct chain_q *q, const char *prefix);
/*
 * Rebuilds q from what chain_q_persist(prefix) kept: qp, qpn, sq, ring_mr,
 * sink, rq_db. flags are the queue's rnic_qp_flags and rq_size its receive
 * ring entries (0: none) as it was opened with: the NIC interface cannot
 * tell them, and a rq_size that disagrees about having a receive queue is
 * -EINVAL. scq/rcq: the CQs the caller gave when opening it, NULL for the
 * queue's own (then attached as <prefix>.scq / .rcq).
 */
int chain_q_attach(struct rnic_device *dev, const char *prefix, unsigned flags,
                   uint32_t rq_size, struct chain_cq *scq, struct chain_cq *rcq,
                   struct chain_q *out);

#endif /* RDN_CHAIN_CHAIN_H */
