/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/support/chain_testutil.h - fixtures of the chain tests: a softnic device,
 * queues and buffers that fail the test when they cannot be made, and
 * bounded waits on memory the NIC writes.
 */
#ifndef T_SUPPORT_CHAIN_TESTUTIL_H
#define T_SUPPORT_CHAIN_TESTUTIL_H

#include <check.h>
#include <stdint.h>

#include "rdn/chain/chain.h"
#include "t/support/testutil.h" /* run_suite() */

#define TC_MS 10000 /* generous bound for anything that should happen */

#define TC_ALL_ACCESS                                                          \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

#define TC_MANAGED (RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND)

/* Opens "softnic-inproc" (or $RDN_TEST_DEVICE), strict window `strict`. */
struct rnic_device *tc_open(int strict);
/* A queue with flags and ring sizes, not connected. */
void tc_q_open(struct rnic_device *dev, unsigned flags, uint32_t sq,
               uint32_t rq, struct chain_q *out);
/* A queue with flags and ring sizes, connected to peer (NULL: itself). */
void tc_q(struct rnic_device *dev, unsigned flags, uint32_t sq, uint32_t rq,
          struct chain_q *peer, struct chain_q *out);
void tc_buf(struct rnic_device *dev, size_t len, struct chain_buf *out);
/* Waits until the 8-byte word at p equals v; returns whether it did. */
int tc_wait_u64(const void *p, uint64_t v, int ms);
/* Waits until the word at p stops changing for quiet_ms; returns it. */
uint64_t tc_settle_u64(const void *p, int quiet_ms, int ms);
uint64_t tc_load_u64(const void *p);
/* Polls cq for one completion (fails the test on timeout). */
void tc_poll(struct chain_cq *cq, struct rnic_wc *wc);

#endif /* T_SUPPORT_CHAIN_TESTUTIL_H */
