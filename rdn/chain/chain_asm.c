/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain_asm.c - the assembler proper: encodes work requests as mlx5
 * WQE bytes on a ring (wrapping at its end), tracks absolute indexes and
 * completion counts, locates WQE fields and carries the byte-order rules.
 * It never calls the NIC (chain.c does), so it is testable without one.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/byteorder.h"
#include "rdn/chain/chain_int.h"

/* ---- errors and bookkeeping ------------------------------------------- */

static __thread char chain_msg[256];

int chain_err(int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(chain_msg, sizeof(chain_msg), fmt, ap);
    va_end(ap);
    return err;
}

const char *chain_errmsg(void)
{
    return chain_msg[0] ? chain_msg : "no error";
}

uint32_t chain_cq_expect(struct chain_cq *cq, uint32_t n)
{
    cq->count += n;
    return cq->count;
}

void chain_q_retire(struct chain_q *q, uint32_t upto)
{
    /* Never past what was posted, never backwards (modulo 2^32). */
    if ((int32_t)(upto - q->retired) > 0 && (int32_t)(q->pi - upto) >= 0)
        q->retired = upto;
}

uint32_t chain_q_room(const struct chain_q *q)
{
    return q->sq.wqebb_cnt - (q->pi - q->retired);
}

/* ---- layouts ---------------------------------------------------------- */

bool chain_layout_has_raddr(uint8_t layout)
{
    switch (layout) {
    case MLX5_OPCODE_RDMA_WRITE:
    case MLX5_OPCODE_RDMA_WRITE_IMM:
    case MLX5_OPCODE_RDMA_READ:
    case MLX5_OPCODE_ATOMIC_CS:
    case MLX5_OPCODE_ATOMIC_FA:
        return true;
    default:
        return false;
    }
}

bool chain_layout_is_atomic(uint8_t layout)
{
    return layout == MLX5_OPCODE_ATOMIC_CS || layout == MLX5_OPCODE_ATOMIC_FA;
}

bool chain_layout_is_wait_en(uint8_t layout)
{
    return layout == MLX5_OPCODE_WAIT || layout == MLX5_OPCODE_SEND_EN ||
           layout == MLX5_OPCODE_RECV_EN;
}

unsigned chain_layout_data_seg(uint8_t layout)
{
    switch (layout) {
    case MLX5_OPCODE_SEND:
    case MLX5_OPCODE_SEND_IMM:
        return 1;
    case MLX5_OPCODE_RDMA_WRITE:
    case MLX5_OPCODE_RDMA_WRITE_IMM:
    case MLX5_OPCODE_RDMA_READ:
        return 2;
    case MLX5_OPCODE_ATOMIC_CS:
    case MLX5_OPCODE_ATOMIC_FA:
        return 3;
    default:
        return 0;
    }
}

static bool layout_known(uint8_t op)
{
    return op == MLX5_OPCODE_NOP || chain_layout_data_seg(op) ||
           chain_layout_is_wait_en(op);
}

uint8_t *chain_seg_ptr(const struct chain_q *q, uint32_t index, unsigned seg)
{
    uint32_t mask = q->sq.wqebb_cnt * MLX5_SEND_WQE_BB - 1;
    uint32_t off = (index * MLX5_SEND_WQE_BB + seg * MLX5_SEND_WQE_DS) & mask;

    return q->sq.buf + off;
}

/* ---- byte order ------------------------------------------------------- */

void chain_put_be32(void *p, uint32_t v)
{
    mlx5_put_be32(p, v);
}

void chain_put_be64(void *p, uint64_t v)
{
    mlx5_put_be64(p, v);
}

uint64_t chain_ctrl_word(uint8_t opcode, uint8_t ds, uint64_t id48)
{
    return mlx5_ctrl_id48_word(id48 & CHAIN_ID48_MAX, opcode, ds);
}

uint64_t chain_wqe_id48(const struct chain_wqe *w)
{
    return (uint64_t)(w->index & 0xffff) << 24 | (w->q->qpn & 0xffffff);
}

void chain_id48_to_be(uint64_t id48, uint8_t out[6])
{
    for (int i = 0; i < 6; i++)
        out[i] = (uint8_t)(id48 >> (8 * (5 - i)));
}

/* ---- encoding --------------------------------------------------------- */

#define CHAIN_WR_FLAGS                                                         \
    ((unsigned)(CHAIN_SIGNALED | CHAIN_FENCE | CHAIN_SOLICITED | CHAIN_ID48))

/* Checks that wr is a well-formed request of its kind. */
static int check_wr(const struct chain_wr *wr)
{
    unsigned dseg = chain_layout_data_seg(wr->opcode);

    if (!layout_known(wr->opcode))
        return chain_err(-EINVAL, "chain_post: unknown opcode 0x%02x",
                         wr->opcode);
    if (wr->nsg && !wr->sg)
        return chain_err(-EINVAL, "chain_post: nsg without sg");
    if (!dseg && wr->nsg)
        return chain_err(-EINVAL,
                         "chain_post: opcode 0x%02x takes no data "
                         "segments",
                         wr->opcode);
    if (wr->nsg > CHAIN_MAX_SGE)
        return chain_err(-EINVAL, "chain_post: %u data segments (max %d)",
                         wr->nsg, CHAIN_MAX_SGE);
    if (chain_layout_is_atomic(wr->opcode) &&
        (wr->nsg != 1 || wr->sg[0].length != 8))
        return chain_err(-EINVAL, "chain_post: an atomic needs one 8-byte "
                                  "result buffer");
    if (wr->flags & ~CHAIN_WR_FLAGS)
        return chain_err(-EINVAL, "chain_post: unknown flags %#x",
                         wr->flags & ~CHAIN_WR_FLAGS);
    if ((wr->flags & CHAIN_ID48) && wr->id48 > CHAIN_ID48_MAX)
        return chain_err(-EINVAL, "chain_post: id48 has more than 48 bits");
    return 0;
}

static unsigned wr_ds(const struct chain_wr *wr)
{
    unsigned dseg = chain_layout_data_seg(wr->opcode);

    if (chain_layout_is_wait_en(wr->opcode))
        return 2;
    return dseg ? dseg + wr->nsg : 1;
}

/* Writes every segment after the ctrl segment. */
static void put_segments(struct chain_q *q, uint32_t index,
                         const struct chain_wr *wr)
{
    unsigned dseg = chain_layout_data_seg(wr->opcode);

    if (chain_layout_has_raddr(wr->opcode))
        mlx5_put_raddr_seg(chain_seg_ptr(q, index, 1), wr->raddr, wr->rkey);
    if (chain_layout_is_atomic(wr->opcode))
        mlx5_put_atomic_seg(chain_seg_ptr(q, index, 2), wr->opcode,
                            wr->swap_add, wr->compare);
    if (chain_layout_is_wait_en(wr->opcode))
        mlx5_put_wait_en_seg(chain_seg_ptr(q, index, 1), wr->index, wr->obj);
    for (unsigned i = 0; i < wr->nsg; i++)
        mlx5_put_data_seg(chain_seg_ptr(q, index, dseg + i), wr->sg[i].length,
                          wr->sg[i].lkey, wr->sg[i].addr);
}

/*
 * A queue without a raw ring (a verbs device) takes whole requests through
 * rnic_post_send(); wr_id is the WQE's index, so completions carry the
 * wqe_counter a ring would give. Only WQEs executed as written can be
 * posted so: a chain that rewrites WQEs needs a ring.
 */
static int post_no_ring(struct chain_q *q, const struct chain_wr *wr,
                        uint8_t written, uint32_t index)
{
    struct rnic_send_wr sw = {.wr_id = index,
                              .opcode = written,
                              .flags = (uint8_t)(wr->flags & 0xff),
                              .sg = wr->sg,
                              .nsg = wr->nsg,
                              .raddr = wr->raddr,
                              .rkey = wr->rkey,
                              .compare = wr->compare,
                              .swap_add = wr->swap_add,
                              .imm = wr->imm,
                              .index = wr->index,
                              .obj = wr->obj};
    int rc;

    if (written != wr->opcode || (wr->flags & CHAIN_ID48))
        return chain_err(-EOPNOTSUPP,
                         "chain_post: QP %u has no raw send ring (device "
                         "%s): WQEs written as another opcode or with id "
                         "bits need softnic or mlx5",
                         q->qpn, rnic_device_name(q->dev));
    rc = rnic_post_send(q->qp, &sw);
    return rc < 0 ? chain_err(rc, "chain_post: %s", rnic_errmsg()) : 0;
}

int chain_post_as(struct chain_q *q, const struct chain_wr *wr, uint8_t written,
                  struct chain_wqe *out)
{
    struct chain_wqe w;
    unsigned ds, nbb;
    uint64_t id48;
    uint8_t *ctrl;
    int rc;

    if (!q || !q->qp || !wr)
        return chain_err(-EINVAL, "chain_post: bad argument");
    rc = check_wr(wr);
    if (rc < 0)
        return rc;
    ds = wr_ds(wr);
    nbb = (ds * MLX5_SEND_WQE_DS + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;
    if (nbb > chain_q_room(q))
        return chain_err(-ENOSPC,
                         "chain_post: ring of QP %u is full "
                         "(%u WQEBBs, %u free, need %u)",
                         q->qpn, q->sq.wqebb_cnt, chain_q_room(q), nbb);
    memset(&w, 0, sizeof(w));
    w.q = q;
    w.index = q->pi;
    w.opcode = written;
    w.layout = wr->opcode;
    w.ds = (uint8_t)ds;
    w.nbb = (uint8_t)nbb;
    w.nsg = (uint8_t)wr->nsg;
    w.flags = wr->flags;
    if (!q->sq.buf) {
        rc = post_no_ring(q, wr, written, w.index);
        if (rc < 0)
            return rc;
        goto posted;
    }
    id48 = (wr->flags & CHAIN_ID48) ? wr->id48 : chain_wqe_id48(&w);

    /* Zero the blocks first: padding bytes are deterministic. */
    for (unsigned b = 0; b < nbb; b++)
        memset(chain_seg_ptr(q, w.index + b, 0), 0, MLX5_SEND_WQE_BB);
    put_segments(q, w.index, wr);
    ctrl = chain_seg_ptr(q, w.index, 0);
    {
        uint64_t word = chain_ctrl_word(written, (uint8_t)ds, id48);

        memcpy(ctrl, &word, 8);
    }
    ctrl[8] = 0; /* signature */
    ctrl[MLX5_CTRL_FLAGS_OFF] = (uint8_t)(wr->flags & 0xff);
    chain_put_be32(ctrl + MLX5_CTRL_IMM_OFF, wr->imm);
posted:
    q->pi += nbb;
    if (wr->flags & CHAIN_SIGNALED)
        w.cq_count = chain_cq_expect(q->scq, 1);
    if (out)
        *out = w;
    return 0;
}

int chain_post(struct chain_q *q, const struct chain_wr *wr,
               struct chain_wqe *out)
{
    if (!wr)
        return chain_err(-EINVAL, "chain_post: bad argument");
    return chain_post_as(q, wr, wr->opcode, out);
}

/* ---- convenience forms ------------------------------------------------ */

int chain_nop(struct chain_q *q, unsigned flags, struct chain_wqe *out)
{
    struct chain_wr wr = {.opcode = MLX5_OPCODE_NOP, .flags = flags};

    return chain_post(q, &wr, out);
}

/* An RDMA WRITE(_IMM) or READ of the gather/scatter sg against rem. */
static int rdma(struct chain_q *q, uint8_t op, const struct rnic_sge *sg,
                unsigned nsg, struct chain_loc rem, uint32_t imm,
                unsigned flags, struct chain_wqe *out)
{
    struct chain_wr wr = {.opcode = op,
                          .flags = flags,
                          .sg = sg,
                          .nsg = nsg,
                          .raddr = chain_loc_addr(rem),
                          .rkey = rem.rkey,
                          .imm = imm};

    return chain_post(q, &wr, out);
}

int chain_write(struct chain_q *q, const struct rnic_sge *sg, unsigned nsg,
                struct chain_loc dst, unsigned flags, struct chain_wqe *out)
{
    return rdma(q, MLX5_OPCODE_RDMA_WRITE, sg, nsg, dst, 0, flags, out);
}

int chain_write_imm(struct chain_q *q, const struct rnic_sge *sg, unsigned nsg,
                    struct chain_loc dst, uint32_t imm, unsigned flags,
                    struct chain_wqe *out)
{
    return rdma(q, MLX5_OPCODE_RDMA_WRITE_IMM, sg, nsg, dst, imm, flags, out);
}

int chain_read(struct chain_q *q, const struct rnic_sge *sg, unsigned nsg,
               struct chain_loc src, unsigned flags, struct chain_wqe *out)
{
    return rdma(q, MLX5_OPCODE_RDMA_READ, sg, nsg, src, 0, flags, out);
}

int chain_send(struct chain_q *q, const struct rnic_sge *sg, unsigned nsg,
               unsigned flags, struct chain_wqe *out)
{
    struct chain_wr wr = {
        .opcode = MLX5_OPCODE_SEND, .flags = flags, .sg = sg, .nsg = nsg};

    return chain_post(q, &wr, out);
}

int chain_send_imm(struct chain_q *q, const struct rnic_sge *sg, unsigned nsg,
                   uint32_t imm, unsigned flags, struct chain_wqe *out)
{
    struct chain_wr wr = {.opcode = MLX5_OPCODE_SEND_IMM,
                          .flags = flags,
                          .sg = sg,
                          .nsg = nsg,
                          .imm = imm};

    return chain_post(q, &wr, out);
}

/*
 * An 8-byte atomic on target (8-aligned: the NIC fails unaligned ones);
 * the old value goes to result, or to q's sink when result is NULL.
 */
static int atomic(struct chain_q *q, uint8_t op, struct chain_loc target,
                  uint64_t compare, uint64_t swap_add,
                  const struct rnic_sge *result, unsigned flags,
                  struct chain_wqe *out)
{
    struct rnic_sge sink;
    struct chain_wr wr = {.opcode = op,
                          .flags = flags,
                          .sg = result,
                          .nsg = 1,
                          .raddr = chain_loc_addr(target),
                          .rkey = target.rkey,
                          .compare = compare,
                          .swap_add = swap_add};

    if (!q)
        return chain_err(-EINVAL, "chain_post: bad argument");
    if (chain_loc_addr(target) & 7)
        return chain_err(-EINVAL, "chain: atomic target %p is not 8-aligned",
                         (void *)target.ptr);
    if (!result) {
        sink = chain_loc_sge(chain_loc_part(q->sink, 0, 8));
        wr.sg = &sink;
    }
    return chain_post(q, &wr, out);
}

int chain_cas(struct chain_q *q, struct chain_loc target, uint64_t compare,
              uint64_t swap, const struct rnic_sge *result, unsigned flags,
              struct chain_wqe *out)
{
    return atomic(q, MLX5_OPCODE_ATOMIC_CS, target, compare, swap, result,
                  flags, out);
}

int chain_fadd(struct chain_q *q, struct chain_loc target, uint64_t add,
               const struct rnic_sge *result, unsigned flags,
               struct chain_wqe *out)
{
    return atomic(q, MLX5_OPCODE_ATOMIC_FA, target, 0, add, result, flags, out);
}

/* WAIT, SEND_EN and RECV_EN are cross-channel operations. */
static int need_cross_channel(const struct chain_q *q)
{
    if (q && !(q->flags & RNIC_QP_CROSS_CHANNEL))
        return chain_err(-EINVAL,
                         "chain: QP %u is not cross-channel and "
                         "cannot post WAIT/SEND_EN/RECV_EN",
                         q->qpn);
    return 0;
}

int chain_wait(struct chain_q *q, const struct chain_cq *cq, uint32_t count,
               unsigned flags, struct chain_wqe *out)
{
    struct chain_wr wr = {.opcode = MLX5_OPCODE_WAIT,
                          .flags = flags,
                          .index = count,
                          .obj = cq ? cq->num : 0};

    if (!cq)
        return chain_err(-EINVAL, "chain_wait: no CQ");
    if (need_cross_channel(q) < 0)
        return -EINVAL;
    return chain_post(q, &wr, out);
}

int chain_wait_wqe(struct chain_q *q, const struct chain_wqe *w, unsigned flags,
                   struct chain_wqe *out)
{
    if (!w || !(w->flags & CHAIN_SIGNALED))
        return chain_err(-EINVAL, "chain_wait_wqe: the WQE is not signaled, "
                                  "no completion to wait for");
    return chain_wait(q, w->q->scq, w->cq_count, flags, out);
}

/*
 * A SEND_EN or RECV_EN of tgt up to index, posted on cross-channel q; the
 * enable limit the assembler tracks for tgt only ever grows.
 */
static int enable(struct chain_q *q, uint8_t op, struct chain_q *tgt,
                  uint32_t index, unsigned flags, struct chain_wqe *out)
{
    struct chain_wr wr = {
        .opcode = op, .flags = flags, .index = index, .obj = tgt->qpn};
    int rc;

    rc = need_cross_channel(q);
    if (rc == 0)
        rc = chain_post(q, &wr, out);
    if (rc < 0)
        return rc;
    if (op == MLX5_OPCODE_SEND_EN && (int32_t)(index - tgt->enabled) > 0)
        tgt->enabled = index;
    if (op == MLX5_OPCODE_RECV_EN && (int32_t)(index - tgt->rq_enabled) > 0)
        tgt->rq_enabled = index;
    return 0;
}

int chain_send_en(struct chain_q *q, struct chain_q *tgt, uint32_t index,
                  unsigned flags, struct chain_wqe *out)
{
    if (!tgt)
        return chain_err(-EINVAL, "chain_send_en: no target queue");
    return enable(q, MLX5_OPCODE_SEND_EN, tgt, index, flags, out);
}

int chain_recv_en(struct chain_q *q, struct chain_q *tgt, uint32_t index,
                  unsigned flags, struct chain_wqe *out)
{
    if (!tgt)
        return chain_err(-EINVAL, "chain_recv_en: no target queue");
    return enable(q, MLX5_OPCODE_RECV_EN, tgt, index, flags, out);
}

/* ---- fields ----------------------------------------------------------- */

struct chain_loc chain_loc_mr(const struct rnic_mr *mr, void *ptr, uint32_t len)
{
    struct chain_loc l = {
        .ptr = ptr, .len = len, .lkey = mr->lkey, .rkey = mr->rkey};

    return l;
}

struct chain_loc chain_loc_part(struct chain_loc l, uint32_t off, uint32_t len)
{
    l.ptr += off;
    l.len = len;
    return l;
}

struct rnic_sge chain_loc_sge(struct chain_loc l)
{
    struct rnic_sge s = {
        .addr = chain_loc_addr(l), .length = l.len, .lkey = l.lkey};

    return s;
}

/* Segment, offset and length of field f in layout; false if absent. */
static bool field_place(const struct chain_wqe *w, enum chain_field f,
                        unsigned i, unsigned *seg, unsigned *off, unsigned *len)
{
    unsigned dseg = chain_layout_data_seg(w->layout);
    bool data = i < w->nsg && dseg;

    *seg = 0;
    switch (f) {
    case CHAIN_F_CTRL:
        *off = 0, *len = 8;
        return true;
    case CHAIN_F_FLAGS:
        *off = MLX5_CTRL_FLAGS_OFF, *len = 1;
        return true;
    case CHAIN_F_IMM:
        *off = MLX5_CTRL_IMM_OFF, *len = 4;
        return true;
    case CHAIN_F_OPCODE:
        *off = 3, *len = 1;
        return true;
    case CHAIN_F_RADDR:
    case CHAIN_F_RKEY:
        *seg = 1;
        *off = f == CHAIN_F_RADDR ? 0 : 8;
        *len = f == CHAIN_F_RADDR ? 8 : 4;
        return chain_layout_has_raddr(w->layout);
    case CHAIN_F_SWAP:
    case CHAIN_F_COMPARE:
        *seg = 2;
        *off = f == CHAIN_F_SWAP ? 0 : 8;
        *len = 8;
        return chain_layout_is_atomic(w->layout);
    case CHAIN_F_DATA:
    case CHAIN_F_BYTE_COUNT:
    case CHAIN_F_LKEY:
    case CHAIN_F_ADDR:
        *seg = dseg + i;
        *off = f == CHAIN_F_DATA || f == CHAIN_F_BYTE_COUNT ? 0
               : f == CHAIN_F_LKEY                          ? 4
                                                            : 8;
        *len = f == CHAIN_F_DATA ? 16 : f == CHAIN_F_ADDR ? 8 : 4;
        return data;
    case CHAIN_F_INDEX:
    case CHAIN_F_OBJ:
        *seg = 1;
        *off = f == CHAIN_F_INDEX ? 8 : 12;
        *len = 4;
        return chain_layout_is_wait_en(w->layout);
    }
    return false;
}

int chain_field(const struct chain_wqe *w, enum chain_field f, unsigned i,
                struct chain_loc *out)
{
    unsigned seg, off, len;

    if (!w || !w->q || !out)
        return chain_err(-EINVAL, "chain_field: bad argument");
    if (!field_place(w, f, i, &seg, &off, &len))
        return chain_err(-EINVAL,
                         "chain_field: WQE %u (opcode 0x%02x) has "
                         "no field %d[%u]",
                         w->index, w->layout, (int)f, i);
    if (!w->q->sq.buf)
        return chain_err(-EOPNOTSUPP,
                         "chain_field: QP %u has no raw send ring (device "
                         "%s): WQE fields need softnic or mlx5",
                         w->q->qpn, rnic_device_name(w->q->dev));
    *out = chain_loc_mr(w->q->ring_mr, chain_seg_ptr(w->q, w->index, seg) + off,
                        len);
    return 0;
}

int chain_wqe_set_index(const struct chain_wqe *w, uint32_t index)
{
    struct chain_loc l;
    int rc = chain_field(w, CHAIN_F_INDEX, 0, &l);

    if (rc == 0)
        chain_put_be32(l.ptr, index);
    return rc;
}

int chain_wqe_set_sge(const struct chain_wqe *w, unsigned i,
                      const struct rnic_sge *sge)
{
    struct chain_loc l;
    int rc = chain_field(w, CHAIN_F_DATA, i, &l);

    if (rc == 0)
        mlx5_put_data_seg(l.ptr, sge->length, sge->lkey, sge->addr);
    return rc;
}

int chain_wqe_set_raddr(const struct chain_wqe *w, uint64_t raddr,
                        uint32_t rkey)
{
    struct chain_loc l;
    int rc = chain_field(w, CHAIN_F_RADDR, 0, &l);

    if (rc == 0) {
        chain_put_be64(l.ptr, raddr);
        chain_put_be32(l.ptr + 8, rkey);
    }
    return rc;
}

uint8_t chain_wqe_opcode_now(const struct chain_wqe *w)
{
    /* Without a ring, a WQE is what it was posted as. */
    if (!w->q->sq.buf)
        return w->opcode;
    return chain_seg_ptr(w->q, w->index, 0)[3];
}

/* ---- scatter entries with byte-order conversion ----------------------- */

static struct rnic_sge byte_sge(struct chain_loc l, uint32_t off, uint32_t len)
{
    return chain_loc_sge(chain_loc_part(l, off, len));
}

int chain_id48_sges(const struct chain_wqe *w, struct rnic_sge out[2])
{
    struct chain_loc c;
    int rc = chain_field(w, CHAIN_F_CTRL, 0, &c);

    if (rc < 0)
        return rc;
    /* opmod + wqe_index are id bits 47..24, qpn bits 23..0 (bytes 4-6). */
    out[0] = byte_sge(c, 0, 3);
    out[1] = byte_sge(c, 4, 3);
    return 2;
}

int chain_id48_byte(const struct chain_wqe *w, unsigned k,
                    struct chain_loc *out)
{
    /* ctrl bytes 0-2: opmod, wqe_index (id 47..24); 4-6: qpn (id 23..0) */
    static const uint8_t pos[6] = {6, 5, 4, 2, 1, 0}; /* of id byte 0..5 */
    struct chain_loc c;
    int rc;

    if (k >= 6 || !out)
        return chain_err(-EINVAL, "chain_id48_byte: byte %u of 6", k);
    rc = chain_field(w, CHAIN_F_CTRL, 0, &c);
    if (rc == 0)
        *out = chain_loc_part(c, pos[k], 1);
    return rc;
}

struct chain_loc chain_be_byte(struct chain_loc f, unsigned k)
{
    return chain_loc_part(f, f.len - 1 - k, 1);
}

int chain_id48_le_sges(const struct chain_wqe *w, struct rnic_sge out[6])
{
    struct chain_loc b = {0};

    for (unsigned k = 0; k < 6; k++) {
        int rc = chain_id48_byte(w, k, &b);

        if (rc < 0)
            return rc;
        out[k] = chain_loc_sge(b);
    }
    return 6;
}

int chain_compare_id48_sges(const struct chain_wqe *cas, struct rnic_sge out[2])
{
    struct chain_loc c;
    int rc;

    if (!cas || cas->layout != MLX5_OPCODE_ATOMIC_CS)
        return chain_err(-EINVAL, "chain_compare_id48_sges: not a CAS");
    rc = chain_field(cas, CHAIN_F_COMPARE, 0, &c);
    if (rc < 0)
        return rc;
    /*
     * The compare field is the big-endian image of the ctrl word read as a
     * little-endian integer: [ds, id0, id1, id2, opcode, id3, id4, id5].
     */
    out[0] = byte_sge(c, 1, 3);
    out[1] = byte_sge(c, 5, 3);
    return 2;
}

int chain_be32_le_sges(struct chain_loc field, struct rnic_sge out[4])
{
    if (field.len < 4)
        return chain_err(-EINVAL, "chain_be32_le_sges: field of %u bytes",
                         field.len);
    for (unsigned k = 0; k < 4; k++)
        out[k] = chain_loc_sge(chain_be_byte(chain_loc_part(field, 0, 4), k));
    return 4;
}
