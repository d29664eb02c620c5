/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/programs/counter_loop.h - a counter that runs on the NIC forever: a
 * recycled loop (see chain.h) whose lap adds one to `laps` in its first
 * segment and one to `tail` in its second, with no CPU work after the
 * first doorbell. It stops itself, at the end of the lap that sees it,
 * when a remote client writes COUNTER_STOP into the stop word (through the
 * `door` queue), or, if a limit is set, when `laps` reaches it: then
 * exactly `limit` laps run.
 */
#ifndef RDN_PROGRAMS_COUNTER_LOOP_H
#define RDN_PROGRAMS_COUNTER_LOOP_H

#include <stdint.h>

#include "rdn/chain/chain.h"

#define COUNTER_STOP 1u

/* Offsets in the counter's memory. */
#define COUNTER_LAPS_OFF  0
#define COUNTER_TAIL_OFF  8
#define COUNTER_STOP_OFF  16
#define COUNTER_STATE_OFF 64

struct counter_loop {
    struct chain_q master, loop, door;
    struct chain_buf mem; /* laps, tail, stop word, loop state */
    struct chain_recycled rl;
};

/*
 * Builds the loop and posts its release on the master queue, without
 * ringing the doorbell. limit 0: run until stopped; else also stop after
 * exactly limit laps (limit < 2^48). Returns 0, -EINVAL, or the chain_*
 * error; the caller destroys *c with counter_loop_destroy().
 */
int counter_loop_build(struct counter_loop *c, struct rnic_device *dev,
                       uint64_t limit);
/* Rings the one doorbell: the master queue releases the first segment.
 * Returns 0 or chain_q_doorbell()'s error. */
int counter_loop_start(struct counter_loop *c);
/* Destroys the queues and memory (a running loop stops with them). */
void counter_loop_destroy(struct counter_loop *c);

/* Return the laps counted so far and the tail word the last lap wrote
 * (read from NIC memory, so they move while the loop runs). */
uint64_t counter_loop_laps(const struct counter_loop *c);
uint64_t counter_loop_tail(const struct counter_loop *c);
/* Where a client writes COUNTER_STOP (8 bytes, little-endian). */
struct chain_loc counter_loop_stop_word(const struct counter_loop *c);

#endif /* RDN_PROGRAMS_COUNTER_LOOP_H */
