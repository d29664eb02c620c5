/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/shm_int.h - what softnic shares with applications through memory.
 *
 * Everything the NIC touches lives in memfd-backed memory that both the
 * application and the engine map (at different addresses): the engine's
 * control page (wake words and doorbell bitmaps), each CQ (header + ring of
 * CQEs), each QP (doorbell record, send ring, receive ring, wr_id array)
 * and every rnic_mem_alloc() region. The data path (doorbells, enables,
 * polling, posting receives) is loads and stores on these pages; the
 * control socket is used only to create and destroy things.
 *
 * The engine trusts nothing an application writes here: every index read
 * from shared memory is masked into its ring, every address goes through
 * the MR table.
 */
#ifndef RDN_SOFTNIC_SHM_INT_H
#define RDN_SOFTNIC_SHM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/byteorder.h"

#define SN_MAX_THREADS 8
#define SN_OBJ_BITS    14 /* QP and CQ table index bits */
#define SN_MAX_OBJS    (1u << SN_OBJ_BITS)
#define SN_PAGE        4096u

/* ---- engine control page ---------------------------------------------- */

/*
 * One engine thread's mailbox. Pokers set the QP's bit in dirty[] and the
 * word's bit in summary[], then wake the thread if it sleeps. The bits
 * mean "look at this QP": a doorbell, an enable, a posted receive.
 */
struct sn_shm_thread {
    _Alignas(64) uint32_t wake; /* futex word, bumped by every wake */
    uint32_t sleeping;          /* 1 while the thread may be asleep */
    uint64_t sleeps;            /* futex sleeps so far (diagnostics) */
    uint64_t yields;            /* CPU given to a peer with work (diag.) */
    _Alignas(64) uint64_t summary[SN_MAX_OBJS / 64 / 64];
    _Alignas(64) uint64_t dirty[SN_MAX_OBJS / 64];
};

#define SN_CTL_MAGIC 0x534e4331u /* "SNC1" */

struct sn_shm_ctl {
    uint32_t magic;
    uint32_t nthreads;
    uint64_t engine_id;
    struct sn_shm_thread thr[SN_MAX_THREADS];
};

/* ---- completion queues ------------------------------------------------ */

/* One completion as the engine writes it (64 B, like an mlx5 CQE). */
struct sn_cqe {
    uint64_t wr_id;
    uint32_t qpn;
    uint32_t byte_len;
    uint32_t imm;
    uint16_t wqe_counter;
    uint8_t opcode; /* enum rnic_wc_opcode */
    uint8_t status; /* enum rnic_wc_status */
    uint8_t flags;  /* RNIC_WC_WITH_IMM */
    uint8_t rsvd[3];
    uint32_t seq;      /* low 32 bits of this entry's absolute index */
    uint64_t ready_ns; /* timed models: not visible to the host before */
    uint64_t nic_ns;   /* timed models: completion time inside the NIC */
    uint64_t upto_ns;  /* timed models: NIC time by which this entry and
                          every earlier one existed (running max of nic_ns) */
    uint8_t pad[8];
};

_Static_assert(sizeof(struct sn_cqe) == 64, "sn_cqe is 64 B");

/*
 * CQ header. prod is the absolute number of completions written (engine),
 * cons what the application consumed (application, for overflow checks).
 * armed/evseq implement rnic_cq_wait(): the waiter sets armed, the engine
 * clears it, bumps evseq and wakes the futex.
 */
struct sn_cq_shm {
    _Alignas(64) uint64_t prod;
    uint32_t overflow; /* the CQ overflowed (not IGNORE_OVERRUN) */
    _Alignas(64) uint64_t cons;
    _Alignas(64) uint32_t armed;
    uint32_t evseq;
    uint32_t depth;
    uint32_t flags;
};

#define SN_CQ_RING_OFF SN_PAGE

static inline size_t sn_cq_shm_size(uint32_t depth)
{
    size_t n = SN_CQ_RING_OFF + (size_t)depth * sizeof(struct sn_cqe);

    return (n + SN_PAGE - 1) & ~(size_t)(SN_PAGE - 1);
}

static inline struct sn_cqe *sn_cq_ring(void *base)
{
    return (struct sn_cqe *)((uint8_t *)base + SN_CQ_RING_OFF);
}

/* ---- queue pairs ------------------------------------------------------ */

/*
 * QP header. sq_db is the doorbell record (application), db_ns the time the
 * doorbell was rung (application, timed models only). rq_db is the receive
 * doorbell record: the count of posted receives, big-endian, of which the
 * engine uses the low 16 bits as mlx5 does; rnic_post_recv() writes it, and
 * so may RDMA once it is registered (rnic_qp_rq_doorbell()). rq_ci counts
 * consumed receives (engine). rnr_wait tells rnic_post_recv() that a
 * message waits for a receive, so it must poke.
 */
struct sn_qp_shm {
    _Alignas(64) uint32_t sq_db;
    uint32_t rsvd0;
    uint64_t db_ns;
    _Alignas(64) be32 rq_db;
    _Alignas(64) uint32_t rq_ci;
    uint32_t rnr_wait;
    uint32_t state; /* enum rnic_qp_state, written by the engine */
};

/* Receive WQE stride: max_recv_sge data segments, rounded to a power of 2 */
static inline uint32_t sn_rq_stride(uint32_t max_sge)
{
    uint32_t s = 16;

    while (s < max_sge * 16)
        s <<= 1;
    return s;
}

/* Byte offsets inside a QP's memory: header page, SQ, RQ, wr_id array. */
struct sn_qp_layout {
    size_t sq_off, rq_off, wrid_off, size;
};

static inline struct sn_qp_layout
sn_qp_layout(uint32_t sq_wqebb, uint32_t rq_wqe, uint32_t max_sge)
{
    struct sn_qp_layout l;

    l.sq_off = SN_PAGE;
    l.rq_off = l.sq_off + (size_t)sq_wqebb * 64;
    l.wrid_off = l.rq_off + (size_t)rq_wqe * sn_rq_stride(max_sge);
    l.size = l.wrid_off + (size_t)rq_wqe * 8;
    l.size = (l.size + SN_PAGE - 1) & ~(size_t)(SN_PAGE - 1);
    return l;
}

/* ---- memfd helpers ---------------------------------------------------- */

/*
 * Creates a sealed memfd of len bytes (a multiple of the page size): it can
 * no longer shrink or grow, so a mapping of it never faults.
 */
int sn_memfd_create(const char *name, size_t len);
/* Checks that fd is a memfd sealed against shrinking, of at least len B. */
int sn_memfd_check(int fd, size_t len);
/* mmap()s len bytes of fd shared read-write; at addr exactly if not NULL. */
int sn_map(int fd, size_t len, void *addr, void **out);

/* Wakes up to n waiters of a futex word in shared memory. */
void sn_futex_wake(uint32_t *word, int n);
/* Sleeps while *word == val, at most timeout_ns (<0: forever). */
void sn_futex_wait(uint32_t *word, uint32_t val, int64_t timeout_ns);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t sn_now_ns(void);

#endif /* RDN_SOFTNIC_SHM_INT_H */
