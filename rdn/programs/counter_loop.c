/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/programs/counter_loop.c - a counter on a recycled ring (see
 * counter_loop.h). Lap layout (ring of LOOP_RING WQEBBs):
 *   segment 0: [FADD + READ: next segment's indexes]  FADD laps += 1
 *              [READ laps, CAS: disarm the last SEND_EN if laps == limit]
 *              [READ stop, CAS: disarm it if stop == COUNTER_STOP]
 *              WAIT, SEND_EN(self)
 *   segment 1: [FADD + READ: next lap's segment-0 indexes]  FADD tail += 1
 *              (NOP padding) WAIT, SEND_EN(self) -- the one a break disarms
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "proto/barrier.h"
#include "rdn/programs/counter_loop.h"

#define LOOP_RING 32
#define MEM_BYTES 4096

static const unsigned all_access =
    RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |
    RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC;

static int open_queues(struct counter_loop *c, struct rnic_device *dev)
{
    struct chain_q_attr m = {.sq_wqebb = 8, .flags = RNIC_QP_CROSS_CHANNEL};
    struct chain_q_attr l = {.sq_wqebb = LOOP_RING,
                             .flags =
                                 RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND,
                             .cq_flags = RNIC_CQ_IGNORE_OVERRUN};
    struct chain_q_attr d = {.sq_wqebb = 8};
    int rc;

    rc = chain_q_open(dev, &m, &c->master);
    if (rc == 0)
        rc = chain_q_open(dev, &l, &c->loop);
    if (rc == 0)
        rc = chain_q_open(dev, &d, &c->door);
    if (rc == 0)
        rc = chain_q_connect(&c->master, &c->master);
    if (rc == 0)
        rc = chain_q_connect(&c->loop, &c->loop);
    if (rc == 0)
        rc = chain_buf_open(dev, MEM_BYTES, all_access, &c->mem);
    return rc;
}

/* Builds the two-segment lap of the file comment and posts its release. */
static int build_lap(struct counter_loop *c, uint64_t limit)
{
    struct chain_loc laps = chain_buf_loc(&c->mem, COUNTER_LAPS_OFF, 8);
    struct chain_loc tail = chain_buf_loc(&c->mem, COUNTER_TAIL_OFF, 8);
    struct chain_loc stop = chain_buf_loc(&c->mem, COUNTER_STOP_OFF, 8);
    struct chain_loc state =
        chain_buf_loc(&c->mem, COUNTER_STATE_OFF, CHAIN_RECYCLED_STATE(2));
    int rc;

    rc = chain_recycled_begin(&c->rl, &c->loop, state);
    if (rc == 0)
        rc = chain_fadd(&c->loop, laps, 1, NULL, 0, NULL);
    if (rc == 0 && limit)
        rc = chain_recycled_break_if(&c->rl, laps, limit, CHAIN_FENCE);
    if (rc == 0)
        rc = chain_recycled_break_if(&c->rl, stop, COUNTER_STOP, 0);
    if (rc == 0)
        rc = chain_recycled_next(&c->rl);
    if (rc == 0)
        rc = chain_fadd(&c->loop, tail, 1, NULL, 0, NULL);
    if (rc == 0)
        rc = chain_recycled_end(&c->rl);
    return rc < 0 ? rc : chain_recycled_release(&c->rl, &c->master);
}

int counter_loop_build(struct counter_loop *c, struct rnic_device *dev,
                       uint64_t limit)
{
    int rc;

    if (!c || !dev || limit > CHAIN_ID48_MAX)
        return -EINVAL;
    memset(c, 0, sizeof(*c));
    rc = open_queues(c, dev);
    if (rc == 0)
        rc = build_lap(c, limit);
    if (rc < 0)
        counter_loop_destroy(c);
    return rc;
}

int counter_loop_start(struct counter_loop *c)
{
    return chain_q_doorbell(&c->master);
}

void counter_loop_destroy(struct counter_loop *c)
{
    chain_q_close(&c->loop);
    chain_q_close(&c->master);
    chain_q_close(&c->door);
    chain_buf_close(&c->mem);
}

static uint64_t load(const struct counter_loop *c, size_t off)
{
    return load_acquire((const uint64_t *)(c->mem.ptr + off));
}

uint64_t counter_loop_laps(const struct counter_loop *c)
{
    return load(c, COUNTER_LAPS_OFF);
}

uint64_t counter_loop_tail(const struct counter_loop *c)
{
    return load(c, COUNTER_TAIL_OFF);
}

struct chain_loc counter_loop_stop_word(const struct counter_loop *c)
{
    return chain_buf_loc(&c->mem, COUNTER_STOP_OFF, 8);
}
