/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain_loop.c - loops on the NIC: unrolled (iterations pre-posted,
 * each released by the previous one's trigger; break disarms a trigger)
 * and recycled (one lap fills the ring and releases itself again, with the
 * indexes of its WAITs and SEND_ENs recomputed every lap by the NIC).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rdn/chain/chain_int.h"

/* ---- unrolled loop ---------------------------------------------------- */

int chain_unrolled_begin(struct chain_unrolled *l, struct chain_q *body,
                         struct chain_q *trig)
{
    const unsigned need = RNIC_QP_MANAGED_SEND | RNIC_QP_CROSS_CHANNEL;

    if (!l || !body || !trig)
        return chain_err(-EINVAL, "chain_unrolled_begin: bad argument");
    if ((body->flags & need) != need || (trig->flags & need) != need)
        return chain_err(-EINVAL, "chain_unrolled_begin: body and trigger "
                                  "queues must be managed and cross-channel");
    memset(l, 0, sizeof(*l));
    l->body = body;
    l->trig = trig;
    return 0;
}

int chain_unrolled_iter(struct chain_unrolled *l)
{
    if (!l || !l->body || l->in_iter)
        return chain_err(-EINVAL, "chain_unrolled_iter: not between "
                                  "iterations");
    l->in_iter = true;
    return 0;
}

/*
 * A trigger carries the opcode byte of its iteration's break target in id
 * byte TRIGGER_ID_BYTE (the high byte of the wqe_index field, which the
 * NIC does not check), not in opmod: the trigger executes as a SEND_EN,
 * and ConnectX reads opmod for some opcodes.
 */
#define TRIGGER_ID_BYTE 4

static uint64_t trigger_id(uint8_t op)
{
    return (uint64_t)op << (8 * TRIGGER_ID_BYTE);
}

/*
 * Posts the break test of brk: a READ copies the opcode byte of brk's
 * target into the trigger's id bits, a CAS disarms the trigger when that
 * byte says the if fired. The READ is fenced (after brk's CAS), the CAS
 * too (after the READ landed). Both aim at placeholders that fix_break()
 * points at the trigger once it is posted.
 */
static int post_break(struct chain_unrolled *l, const struct chain_if *brk,
                      struct chain_wqe *rd, struct chain_wqe *cas)
{
    uint8_t armed = chain_ctrl_word_opcode(brk->armed);
    uint8_t idle = chain_wqe_opcode_now(&brk->target);
    uint8_t fired =
        idle == armed ? chain_ctrl_word_opcode(brk->disarmed) : armed;
    struct chain_loc src, sink = chain_loc_part(l->body->sink, 8, 8);
    struct rnic_sge dst = chain_loc_sge(chain_loc_part(sink, 0, 1));
    int rc;

    if (brk->cas.q != l->body || brk->cas.layout != MLX5_OPCODE_ATOMIC_CS)
        return chain_err(-EINVAL, "chain_unrolled: the break's CAS must be "
                                  "on the loop body");
    chain_field(&brk->target, CHAIN_F_OPCODE, 0, &src);
    rc = chain_read(l->body, &dst, 1, src, CHAIN_FENCE, rd);
    if (rc == 0)
        rc = chain_cas(
            l->body, sink,
            chain_ctrl_word(MLX5_OPCODE_SEND_EN, 2, trigger_id(fired)),
            chain_ctrl_word(MLX5_OPCODE_NOP, 2, trigger_id(fired)), NULL,
            CHAIN_FENCE | CHAIN_SIGNALED, cas);
    return rc;
}

/* Points the break READ and CAS at trigger trg. */
static void fix_break(const struct chain_wqe *rd, const struct chain_wqe *cas,
                      const struct chain_wqe *trg)
{
    struct chain_loc ctrl, id;
    struct rnic_sge dst;

    chain_field(trg, CHAIN_F_CTRL, 0, &ctrl);
    chain_id48_byte(trg, TRIGGER_ID_BYTE, &id);
    dst = chain_loc_sge(id);
    chain_wqe_set_sge(rd, 0, &dst);
    chain_wqe_set_raddr(cas, chain_loc_addr(ctrl), ctrl.rkey);
}

/* The trigger: a SEND_EN of body whose index is set when it is known. */
static int post_trigger(struct chain_unrolled *l, uint8_t idle,
                        struct chain_wqe *out)
{
    struct chain_wr wr = {.opcode = MLX5_OPCODE_SEND_EN,
                          .flags = CHAIN_ID48,
                          .id48 = trigger_id(idle),
                          .obj = l->body->qpn};

    return chain_post(l->trig, &wr, out);
}

int chain_unrolled_end_iter(struct chain_unrolled *l,
                            const struct chain_if *brk)
{
    struct chain_wqe trg, rd, cas, en;
    uint32_t seg_end;
    uint8_t idle = 0;
    int rc;

    if (!l || !l->in_iter)
        return chain_err(-EINVAL, "chain_unrolled_end_iter: no iteration");
    if (brk)
        idle = chain_wqe_opcode_now(&brk->target);
    if (l->trig != l->body) {
        /* body: [break test] WAIT SEND_EN(trig) ; trig: trigger */
        rc = post_trigger(l, idle, &trg);
        if (rc == 0 && brk) {
            rc = post_break(l, brk, &rd, &cas);
            if (rc == 0)
                fix_break(&rd, &cas, &trg);
        }
        if (rc == 0)
            rc = chain_guard(l->body, l->trig);
        seg_end = l->body->pi;
    } else {
        /* body: [break test] WAIT SEND_EN(self, past trigger) trigger */
        rc = brk ? post_break(l, brk, &rd, &cas) : 0;
        if (rc == 0)
            rc =
                chain_wait(l->body, l->body->scq, l->body->scq->count, 0, NULL);
        if (rc == 0)
            rc = chain_send_en(l->body, l->body, 0, 0, &en);
        if (rc == 0)
            rc = post_trigger(l, idle, &trg);
        if (rc == 0) {
            chain_wqe_set_index(&en, trg.index + trg.nbb);
            if (brk)
                fix_break(&rd, &cas, &trg);
        }
        seg_end = trg.index;
    }
    if (rc < 0)
        return rc;
    if (l->iters == 0)
        l->first_end = seg_end;
    else
        chain_wqe_set_index(&l->trigger, seg_end);
    l->trigger = trg;
    l->iters++;
    l->in_iter = false;
    return 0;
}

int chain_unrolled_finish(struct chain_unrolled *l)
{
    if (!l || l->in_iter || l->iters == 0)
        return chain_err(-EINVAL, "chain_unrolled_finish: no finished "
                                  "iteration");
    /* The last trigger releases the epilogue posted after the loop. */
    chain_wqe_set_index(&l->trigger, l->body->pi);
    if ((int32_t)(l->body->pi - l->body->enabled) > 0)
        l->body->enabled = l->body->pi;
    return 0;
}

/* ---- lap counters ----------------------------------------------------- */

/*
 * Bits 0-31 the WAIT count, bits 48-63 the low 16 bits of the enable index
 * (all the NIC compares), bits 32-47 a gap that absorbs the carry out of
 * the WAIT count each time it wraps 2^32. Without the gap the carry would
 * land in the enable index and push every later SEND_EN one WQEBB further
 * for good: after a few wraps the NIC could fetch WQEs before their
 * indexes were patched. The gap fills after 2^16 wraps, i.e. 2^48
 * completions (years at NIC rates).
 */
#define CTR_EN_SHIFT 48

uint64_t chain_lap_counter(uint32_t wait_count, uint32_t en_index)
{
    return (uint64_t)(en_index & 0xffff) << CTR_EN_SHIFT | wait_count;
}

/*
 * The counter's bytes 0-3 go byte-reversed into wait's big-endian count,
 * the gap bytes to the sink, bytes 6-7 into the low half of en's index
 * (its high half keeps its build-time value: the NIC ignores it).
 */
void chain_lap_sges(const struct chain_wqe *wait, const struct chain_wqe *en,
                    struct chain_loc sink, struct rnic_sge out[CHAIN_LAP_SGES])
{
    struct chain_loc wi, ei;

    chain_field(wait, CHAIN_F_INDEX, 0, &wi);
    chain_field(en, CHAIN_F_INDEX, 0, &ei);
    chain_be32_le_sges(wi, out);
    out[4] = chain_loc_sge(chain_loc_part(sink, 0, 2));
    out[5] = chain_loc_sge(chain_be_byte(ei, 0));
    out[6] = chain_loc_sge(chain_be_byte(ei, 1));
}

int chain_pad(struct chain_q *q, uint32_t nbb)
{
    while (nbb) {
        uint32_t n = nbb < 7 ? nbb : 7;
        struct rnic_sge s[4 * 7 - 1];
        struct chain_wr nop = {.opcode = MLX5_OPCODE_SEND, .sg = s};
        int rc;

        /* A NOP shaped like a SEND of 4n-1 segments fills n blocks. */
        memset(s, 0, sizeof(s));
        nop.nsg = 4 * n - 1;
        rc = chain_post_as(q, &nop, MLX5_OPCODE_NOP, NULL);
        if (rc < 0)
            return rc;
        nbb -= n;
    }
    return 0;
}

/* ---- recycled loop ---------------------------------------------------- */

static struct chain_loc counter_loc(const struct chain_recycled *l,
                                    unsigned seg)
{
    return chain_loc_part(l->state, 8 * seg, 8);
}

/*
 * A segment's head: FADD the next segment's counter, then READ it into
 * that segment's WAIT and SEND_EN index fields. Targets are fixed by
 * chain_recycled_end(), when the number of segments is known.
 */
static int segment_head(struct chain_recycled *l)
{
    struct rnic_sge ph[8];
    unsigned s = l->cur;
    int rc;

    for (int i = 0; i < 8; i++) /* placeholders */
        ph[i] = chain_loc_sge(chain_loc_part(l->q->sink, i, 1));
    rc = chain_fadd(l->q, counter_loc(l, 0), 0, NULL, 0, &l->fadd[s]);
    if (rc == 0)
        rc = chain_read(l->q, ph, 8, counter_loc(l, 0),
                        CHAIN_FENCE | CHAIN_SIGNALED, &l->patch[s]);
    return rc;
}

/* A segment's tail: WAIT for all of it, SEND_EN the next segment. */
static int segment_tail(struct chain_recycled *l)
{
    unsigned s = l->cur;
    int rc;

    l->cqc[s] = l->q->scq->count - l->cq_base;
    rc = chain_wait(l->q, l->q->scq, l->q->scq->count, 0, &l->wait[s]);
    if (rc == 0)
        rc = chain_send_en(l->q, l->q, 0, 0, &l->en[s]);
    l->end[s] = l->q->pi - l->base;
    return rc;
}

int chain_recycled_begin(struct chain_recycled *l, struct chain_q *q,
                         struct chain_loc state)
{
    const unsigned need = RNIC_QP_MANAGED_SEND | RNIC_QP_CROSS_CHANNEL;

    if (!l || !q || (q->flags & need) != need)
        return chain_err(-EINVAL, "chain_recycled_begin: the queue must be "
                                  "managed and cross-channel");
    if (q->pi != q->retired)
        return chain_err(-EINVAL,
                         "chain_recycled_begin: the loop needs the "
                         "whole ring of QP %u",
                         q->qpn);
    if (state.len < CHAIN_RECYCLED_STATE(2) || ((uintptr_t)state.ptr & 7))
        return chain_err(-EINVAL,
                         "chain_recycled_begin: state must be "
                         "8-aligned and at least %d bytes",
                         CHAIN_RECYCLED_STATE(2));
    memset(l, 0, sizeof(*l));
    l->q = q;
    l->state = state;
    l->base = q->pi;
    l->cq_base = q->scq->count;
    return segment_head(l);
}

int chain_recycled_next(struct chain_recycled *l)
{
    int rc;

    if (!l || !l->q || l->ended)
        return chain_err(-EINVAL, "chain_recycled_next: loop not open");
    if (l->cur + 1 >= CHAIN_RECYCLED_MAX_SEG ||
        CHAIN_RECYCLED_STATE(l->cur + 2) > l->state.len)
        return chain_err(-ENOSPC, "chain_recycled_next: too many segments "
                                  "for the state memory");
    rc = segment_tail(l);
    if (rc < 0)
        return rc;
    l->cur++;
    return segment_head(l);
}

int chain_recycled_break_if(struct chain_recycled *l, struct chain_loc src,
                            uint64_t value, unsigned read_flags)
{
    struct rnic_sge ph[6];
    unsigned b;
    int rc;

    if (!l || !l->q || l->ended || value > CHAIN_ID48_MAX || src.len < 6)
        return chain_err(-EINVAL, "chain_recycled_break_if: bad argument "
                                  "(src holds at least 6 bytes, value < "
                                  "2^48)");
    if (l->nbrk == sizeof(l->brk_seg) / sizeof(l->brk_seg[0]))
        return chain_err(-ENOSPC, "chain_recycled_break_if: too many breaks");
    b = l->nbrk;
    for (int i = 0; i < 6; i++)
        ph[i] = chain_loc_sge(chain_loc_part(l->q->sink, i, 1));
    rc = chain_read(l->q, ph, 6, src, read_flags, &l->brk_read[b]);
    if (rc == 0)
        rc = chain_cas(l->q, l->q->sink,
                       chain_ctrl_word(MLX5_OPCODE_SEND_EN, 2, value),
                       chain_ctrl_word(MLX5_OPCODE_NOP, 2, value), NULL,
                       CHAIN_FENCE | CHAIN_SIGNALED, &l->brk_cas[b]);
    if (rc < 0)
        return rc;
    l->brk_seg[b] = l->cur;
    l->nbrk++;
    return 0;
}

/* Pads the lap with NOPs so that its last two WQEs end the ring. */
static int pad_lap(struct chain_recycled *l)
{
    uint32_t used = l->q->pi - l->base, ring = l->q->sq.wqebb_cnt;

    if (used + 2 > ring)
        return chain_err(-ENOSPC,
                         "chain_recycled_end: the lap needs %u "
                         "WQEBBs, the ring has %u",
                         used + 2, ring);
    return chain_pad(l->q, ring - used - 2);
}

/*
 * Points segment s's FADD and READ at the counter of segment next: the
 * FADD adds inc, the READ copies the WAIT count (counter bytes 0-3) into
 * next's WAIT and the enable index (bytes 6-7) into the low half of next's
 * SEND_EN, byte-reversed into their big-endian fields; the gap bytes go to
 * the sink. The high half of the SEND_EN's index keeps its lap-0 value.
 */
static void fix_patch(struct chain_recycled *l, unsigned s, unsigned next,
                      uint64_t inc)
{
    struct chain_loc ctr = counter_loc(l, next);
    struct rnic_sge sg[CHAIN_LAP_SGES];
    struct chain_loc add;

    chain_wqe_set_raddr(&l->fadd[s], chain_loc_addr(ctr), ctr.rkey);
    chain_field(&l->fadd[s], CHAIN_F_SWAP, 0, &add);
    chain_put_be64(add.ptr, inc);
    chain_wqe_set_raddr(&l->patch[s], chain_loc_addr(ctr), ctr.rkey);
    chain_lap_sges(&l->wait[next], &l->en[next], l->q->sink, sg);
    for (int i = 0; i < CHAIN_LAP_SGES; i++)
        chain_wqe_set_sge(&l->patch[s], (unsigned)i, &sg[i]);
}

/* Aims every break at the lap's final SEND_EN. */
static int fix_breaks(struct chain_recycled *l)
{
    const struct chain_wqe *fin = &l->en[l->nseg - 1];
    struct rnic_sge sg[6];
    struct chain_loc ctrl;

    chain_field(fin, CHAIN_F_CTRL, 0, &ctrl);
    chain_id48_le_sges(fin, sg);
    for (unsigned b = 0; b < l->nbrk; b++) {
        if (l->brk_seg[b] + 1 >= l->nseg)
            return chain_err(-EINVAL, "chain_recycled: a break must be "
                                      "posted before the last segment");
        for (unsigned i = 0; i < 6; i++)
            chain_wqe_set_sge(&l->brk_read[b], i, &sg[i]);
        chain_wqe_set_raddr(&l->brk_cas[b], chain_loc_addr(ctrl), ctrl.rkey);
    }
    return 0;
}

/*
 * Ends the last segment, then computes every index of lap 0 and the
 * counters from which the NIC derives those of later laps:
 *   segment j's WAIT in lap n waits for cq_base + n*C + cqc[j];
 *   segment j's SEND_EN in lap n enables base + n*R + end[j+1] (the
 *   last segment: base + (n+1)*R + end[0]).
 * Counter j (see chain_lap_counter()) is bumped by (R, C) once per lap before
 * it is copied; it starts one increment below lap 0's values, except
 * counter 0, whose first bump yields lap 1's. WAIT counts are compared
 * modulo 2^32 and enable indexes modulo 2^16 (as the NIC does), so both
 * may wrap; the counter layout keeps the wraps from leaking into each
 * other.
 */
int chain_recycled_end(struct chain_recycled *l)
{
    uint32_t ring;
    uint64_t inc;
    int rc;

    if (!l || !l->q || l->ended)
        return chain_err(-EINVAL, "chain_recycled_end: loop not open");
    if (l->cur == 0)
        return chain_err(-EINVAL, "chain_recycled_end: a recycled loop "
                                  "needs at least two segments");
    rc = pad_lap(l);
    if (rc == 0)
        rc = segment_tail(l);
    if (rc < 0)
        return rc;
    l->nseg = l->cur + 1;
    ring = l->q->sq.wqebb_cnt;
    l->lap_wqebb = ring;
    l->lap_cqes = l->cqc[l->nseg - 1];
    inc = chain_lap_counter(l->lap_cqes, ring);
    for (unsigned j = 0; j < l->nseg; j++) {
        uint32_t w = l->cq_base + l->cqc[j];
        uint32_t e = j + 1 < l->nseg ? l->base + l->end[j + 1]
                                     : l->base + ring + l->end[0];
        uint64_t v = chain_lap_counter(w, e);

        chain_wqe_set_index(&l->wait[j], w);
        chain_wqe_set_index(&l->en[j], e);
        if (j > 0)
            v -= inc;
        memcpy(counter_loc(l, j).ptr, &v, 8);
        fix_patch(l, j, (j + 1) % l->nseg, inc);
    }
    rc = fix_breaks(l);
    if (rc < 0)
        return rc;
    l->q->enabled = l->base + ring + l->end[0];
    l->ended = true;
    return 0;
}

int chain_recycled_release(struct chain_recycled *l, struct chain_q *master)
{
    if (!l || !l->ended || !master)
        return chain_err(-EINVAL, "chain_recycled_release: loop not ended");
    return chain_send_en(master, l->q, l->base + l->end[0], 0, NULL);
}
