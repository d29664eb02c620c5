/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_micro.h - helpers shared by the parts of `rdn-bench micro`.
 */
#ifndef BENCH_BENCH_MICRO_H
#define BENCH_BENCH_MICRO_H

#include "bench/bench.h"
#include "rdn/chain/chain.h"

#define BM_NO_PEER ((struct chain_q *)1) /* bm_queue: leave unconnected */

/* A queue connected to peer (NULL: itself); prints errors. */
int bm_queue(struct bench_ctx *c, unsigned flags, uint32_t sq, uint32_t rq,
             struct chain_q *peer, struct chain_q *out);
int bm_buf(struct bench_ctx *c, size_t len, struct chain_buf *out);
/* Busy-polls n successful completions (30 s bound); last gets the last. */
int bm_poll(struct chain_cq *cq, unsigned n, struct rnic_wc *last);
/* Spins until the word at p reaches v; returns the time, 0 on timeout. */
uint64_t bm_wait_u64(const void *p, uint64_t v);

/* Figure 7: one more NOP in WQ, completion and doorbell order. */
int bm_fig7(struct bench_ctx *c);
/* Table 3: if, unrolled while, recycled while. */
int bm_table3(struct bench_ctx *c);

#endif /* BENCH_BENCH_MICRO_H */
