/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain_if.c - the if-construct (RedN section 3): a CAS on the first
 * 8 bytes of a later WQE's ctrl segment compares its opcode, ds and 48 id bits
 * at once, so "x == y" turns a NOP into the guarded WQE (or back); the target
 * sits on a managed queue that is enabled only after the CAS completed (WAIT +
 * SEND_EN), so the NIC cannot have fetched it earlier. Cost: 1 atomic + WAIT +
 * SEND_EN, plus whatever copies x and y in.
 */
#include "config.h"

#include <errno.h>

#include "rdn/chain/chain_int.h"

int chain_if_post(struct chain_q *ctl, struct chain_q *tgt,
                  const struct chain_wr *wr, uint64_t x, uint64_t y,
                  enum chain_if_mode mode, unsigned cas_flags,
                  struct chain_if *out)
{
    struct chain_wr t;
    struct chain_loc ctrl;
    uint64_t armed_id;
    int rc;

    if (!ctl || !tgt || !wr || !out || ctl == tgt)
        return chain_err(-EINVAL, "chain_if: bad argument (the CAS and its "
                                  "target need two queues)");
    if (!(tgt->flags & RNIC_QP_MANAGED_SEND))
        return chain_err(-EINVAL,
                         "chain_if: target QP %u is not managed: the "
                         "NIC could prefetch it before the CAS",
                         tgt->qpn);
    if (x > CHAIN_ID48_MAX || y > CHAIN_ID48_MAX)
        return chain_err(-EINVAL, "chain_if: operands are 48-bit");
    if (wr->opcode == MLX5_OPCODE_NOP)
        return chain_err(-EINVAL, "chain_if: the guarded WQE is a NOP");

    t = *wr;
    t.flags |= CHAIN_ID48;
    t.id48 = x;
    rc = chain_post_as(tgt, &t,
                       mode == CHAIN_IF_ARM ? MLX5_OPCODE_NOP : wr->opcode,
                       &out->target);
    if (rc < 0)
        return rc;
    armed_id =
        (wr->flags & CHAIN_ID48) ? wr->id48 : chain_wqe_id48(&out->target);
    if (mode == CHAIN_IF_ARM) {
        out->disarmed = chain_ctrl_word(MLX5_OPCODE_NOP, out->target.ds, y);
        out->armed = chain_ctrl_word(wr->opcode, out->target.ds, armed_id);
    } else {
        out->armed = chain_ctrl_word(wr->opcode, out->target.ds, y);
        out->disarmed = chain_ctrl_word(MLX5_OPCODE_NOP, out->target.ds, y);
    }
    chain_field(&out->target, CHAIN_F_CTRL, 0, &ctrl);
    cas_flags = (cas_flags & CHAIN_QUIET) ? cas_flags & ~CHAIN_QUIET
                                          : cas_flags | CHAIN_SIGNALED;
    return chain_cas(ctl, ctrl,
                     mode == CHAIN_IF_ARM ? out->disarmed : out->armed,
                     mode == CHAIN_IF_ARM ? out->armed : out->disarmed, NULL,
                     cas_flags, &out->cas);
}

int chain_guard(struct chain_q *ctl, struct chain_q *tgt)
{
    int rc;

    if (!ctl || !tgt)
        return chain_err(-EINVAL, "chain_guard: bad argument");
    rc = chain_wait(ctl, ctl->scq, ctl->scq->count, 0, NULL);
    return rc < 0 ? rc : chain_send_en(ctl, tgt, tgt->pi, 0, NULL);
}

int chain_if_eq(struct chain_q *ctl, struct chain_q *tgt,
                const struct chain_wr *wr, uint64_t x, uint64_t y,
                enum chain_if_mode mode, unsigned cas_flags,
                struct chain_if *out)
{
    int rc = chain_if_post(ctl, tgt, wr, x, y, mode, cas_flags, out);

    return rc < 0 ? rc : chain_guard(ctl, tgt);
}
