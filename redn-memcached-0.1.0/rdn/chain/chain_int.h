/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain_int.h - what the chain modules (chain.c, chain_if.c,
 * chain_loop.c, chain_check.c) share and callers do not need.
 */
#ifndef RDN_CHAIN_CHAIN_INT_H
#define RDN_CHAIN_CHAIN_INT_H

#include "rdn/chain/chain.h"

/* Records the thread's message (printf format) and returns err. */
int chain_err(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * chain_post() with the ctrl segment's opcode byte set to written instead
 * of wr->opcode, whose segment layout the WQE keeps: how the if-construct
 * posts a disarmed target (a NOP shaped like the WQE it may become).
 */
int chain_post_as(struct chain_q *q, const struct chain_wr *wr, uint8_t written,
                  struct chain_wqe *out);

/* The address of segment seg of the WQE at absolute index, ring-wrapped. */
uint8_t *chain_seg_ptr(const struct chain_q *q, uint32_t index, unsigned seg);

/* Segment number of the first data segment in a layout (0: none). */
unsigned chain_layout_data_seg(uint8_t layout);
/* Whether a layout has a remote address / atomic / wait-enable segment. */
bool chain_layout_has_raddr(uint8_t layout);
bool chain_layout_is_atomic(uint8_t layout);
bool chain_layout_is_wait_en(uint8_t layout);

/* The opcode in a ctrl word as chain_ctrl_word() builds it (byte 3). */
static inline uint8_t chain_ctrl_word_opcode(uint64_t word)
{
    return (uint8_t)(word >> 24);
}

static inline uint32_t chain_get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

static inline uint64_t chain_get_be64(const uint8_t *p)
{
    return (uint64_t)chain_get_be32(p) << 32 | chain_get_be32(p + 4);
}

#endif /* RDN_CHAIN_CHAIN_INT_H */
