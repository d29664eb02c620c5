/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/support/test_softnic_util.h - helpers of the softnic tests: a tiny WQE
 * writer that follows proto/mlx5.h field by field (independent of rdn/chain),
 * and fixtures for devices, queues and completions.
 */
#ifndef T_SUPPORT_TEST_SOFTNIC_UTIL_H
#define T_SUPPORT_TEST_SOFTNIC_UTIL_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "proto/mlx5.h"
#include "rdn/rnic/rnic.h"

/* A WQE under construction (up to 63 segments). */
struct tw {
    uint8_t b[MLX5_WQE_MAX_DS * MLX5_SEND_WQE_DS];
    unsigned ds; /* segments written so far */
};

/* Starts a WQE: control segment with opcode and fm_ce_se flags. */
void tw_ctrl(struct tw *w, uint8_t opcode, uint8_t flags);
void tw_imm(struct tw *w, uint32_t imm);
void tw_raddr(struct tw *w, uint64_t raddr, uint32_t rkey);
void tw_atomic(struct tw *w, uint64_t swap_add, uint64_t compare);
void tw_data(struct tw *w, uint32_t len, uint32_t lkey, const void *addr);
void tw_waiten(struct tw *w, uint32_t index, uint32_t obj);

/* A send queue being filled. */
struct tq {
    struct rnic_qp *qp;
    struct rnic_sq sq;
    uint32_t pi; /* producer index in WQEBBs */
};

/*
 * Copies w into the ring at pi (filling ds, wqe_index and qpn), advances
 * pi and returns the WQE's index.
 */
uint32_t tq_post(struct tq *q, struct tw *w);
/* Address of WQEBB idx in the ring. */
uint8_t *tq_wqe(struct tq *q, uint32_t idx);
void tq_ring(struct tq *q);

/* A device with memory, one MR over it, CQs. */
struct tdev {
    struct rnic_device *dev;
    uint8_t *mem;
    size_t len;
    struct rnic_mr *mr;
    struct rnic_cq *scq, *rcq;
};

/* Opens name ("softnic-inproc" unless RDN_TEST_DEVICE) with opts. */
void tdev_open(struct tdev *d, const struct rnic_open_opts *opts, size_t len,
               unsigned access);
void tdev_close(struct tdev *d);

/* Creates a QP on d with flags, rings sized sq/rq (rq 0 = none). */
void tq_create(struct tq *q, struct tdev *d, unsigned flags, uint32_t sq,
               uint32_t rq);
/* Connects a and b to each other (a == b: loopback to itself). */
void tq_connect(struct tq *a, struct tq *b);

/*
 * Polls cq until n completions arrived or timeout_ms passed; returns how
 * many were stored in wc.
 */
int tpoll(struct rnic_cq *cq, struct rnic_wc *wc, int n, int timeout_ms);
/* Waits until *p == v (a memory word the NIC writes) or timeout. */
int twait_u64(volatile uint64_t *p, uint64_t v, int timeout_ms);
/* Polls cq for ms and returns how many completions came (expect none). */
int tquiet(struct rnic_cq *cq, int ms);

#define TMS 5000 /* generous timeout for anything that should happen */

/*
 * Runs the suite mk() builds once per engine thread count in
 * RDN_SOFTNIC_THREADS-style list threads (e.g. "1,3"), or in
 * $RDN_TEST_THREADS if set (to run every suite with other counts);
 * returns the exit status for main().
 */
int trun(Suite *(*mk)(void), const char *threads);

#endif /* T_SUPPORT_TEST_SOFTNIC_UTIL_H */
