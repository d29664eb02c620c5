/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/programs/count_while.h - a counting loop unrolled on the NIC:
 *
 *     for (i = 0; i < n; i++) { ctr++; if (ctr == k) { mark[i] = 1; break; } }
 *     done++;   (after the loop, reached only without a break)
 *
 * Iteration i (queue `body`): FADD ctr; READ ctr into the id bits of the
 * marking WRITE (fenced); the if's CAS (fenced) arms it when ctr == k;
 * with break, a READ + CAS disarm the trigger of iteration i+1. The
 * triggers sit on queue `trig` (with the marking WRITEs) or, with
 * own_trig false, on `body` itself. Without break every iteration runs
 * and the mark is still set.
 */
#ifndef RDN_PROGRAMS_COUNT_WHILE_H
#define RDN_PROGRAMS_COUNT_WHILE_H

#include <stdbool.h>
#include <stdint.h>

#include "rdn/chain/chain.h"

#define COUNT_WHILE_MAX 16

/* Offsets of the loop's words in its memory. */
#define CW_CTR_OFF  0
#define CW_ONE_OFF  16
#define CW_DONE_OFF 32
#define CW_MARK_OFF 64 /* 8 bytes per iteration */

struct count_while {
    struct chain_q master, body, trig;
    struct chain_buf mem;
    struct chain_unrolled l;
    bool own_trig;
};

/* Creates the queues and memory on dev in *w (own_trig: triggers on their
 * own queue). Returns 0 or the chain_* error; close with
 * count_while_close(). */
int count_while_open(struct count_while *w, struct rnic_device *dev,
                     bool own_trig);
/*
 * Posts one run of n iterations (1..COUNT_WHILE_MAX) and its release on
 * the master; resets ctr and the marks. The previous run must be over.
 * Returns 0, -EINVAL (n or k out of range), or the chain_* error.
 */
int count_while_post(struct count_while *w, unsigned n, uint64_t k, bool brk);
/* Rings the master's doorbell. Returns 0 or chain_q_doorbell()'s error. */
int count_while_start(struct count_while *w);
/* After a run that reached its end: lets the rings be reused. */
void count_while_retire(struct count_while *w);
/* Destroys the queues and memory; no-op if zeroed. */
void count_while_close(struct count_while *w);

#endif /* RDN_PROGRAMS_COUNT_WHILE_H */
