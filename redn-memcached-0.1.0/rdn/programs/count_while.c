/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/programs/count_while.c - a counting loop unrolled on the NIC (see
 * count_while.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rdn/programs/count_while.h"

static const unsigned all_access =
    RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |
    RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC;

int count_while_open(struct count_while *w, struct rnic_device *dev,
                     bool own_trig)
{
    struct chain_q_attr m = {.sq_wqebb = 16, .flags = RNIC_QP_CROSS_CHANNEL};
    struct chain_q_attr q = {.sq_wqebb = 256,
                             .flags =
                                 RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND,
                             .cq_flags = RNIC_CQ_IGNORE_OVERRUN};
    int rc;

    if (!w || !dev)
        return -EINVAL;
    memset(w, 0, sizeof(*w));
    w->own_trig = own_trig;
    rc = chain_q_open(dev, &m, &w->master);
    if (rc == 0)
        rc = chain_q_open(dev, &q, &w->body);
    if (rc == 0)
        rc = chain_q_open(dev, &q, &w->trig);
    if (rc == 0)
        rc = chain_q_connect(&w->master, &w->master);
    if (rc == 0)
        rc = chain_q_connect(&w->body, &w->body);
    if (rc == 0)
        rc = chain_q_connect(&w->trig, &w->trig);
    if (rc == 0)
        rc = chain_buf_open(dev, 4096, all_access, &w->mem);
    if (rc < 0)
        count_while_close(w);
    return rc;
}

static struct chain_loc word(struct count_while *w, size_t off)
{
    return chain_buf_loc(&w->mem, off, 8);
}

/* One iteration; see count_while.h. */
static int iteration(struct count_while *w, unsigned i, uint64_t k, bool brk)
{
    struct rnic_sge one = chain_loc_sge(word(w, CW_ONE_OFF)), ph[6], id[6];
    struct chain_wr wr = {.opcode = MLX5_OPCODE_RDMA_WRITE,
                          .sg = &one,
                          .nsg = 1,
                          .raddr = chain_loc_addr(word(w, CW_MARK_OFF + 8 * i)),
                          .rkey = w->mem.mr->rkey};
    struct chain_wqe rd;
    struct chain_if iff;
    int rc;

    for (int j = 0; j < 6; j++)
        ph[j] = chain_loc_sge(chain_loc_part(w->body.sink, j, 1));
    rc = chain_unrolled_iter(&w->l);
    if (rc == 0)
        rc = chain_fadd(&w->body, word(w, CW_CTR_OFF), 1, NULL, 0, NULL);
    if (rc == 0)
        rc = chain_read(&w->body, ph, 6, word(w, CW_CTR_OFF), CHAIN_FENCE, &rd);
    if (rc == 0)
        rc = chain_if_post(&w->body, &w->trig, &wr, 0, k, CHAIN_IF_ARM,
                           CHAIN_FENCE, &iff);
    /* Triggers on the body: the if's target needs a guard of its own. */
    if (rc == 0 && !w->own_trig)
        rc = chain_guard(&w->body, &w->trig);
    if (rc < 0)
        return rc;
    chain_id48_le_sges(&iff.target, id);
    for (unsigned j = 0; j < 6; j++)
        chain_wqe_set_sge(&rd, j, &id[j]);
    return chain_unrolled_end_iter(&w->l, brk ? &iff : NULL);
}

int count_while_post(struct count_while *w, unsigned n, uint64_t k, bool brk)
{
    int rc;

    if (!w || n == 0 || n > COUNT_WHILE_MAX || k > CHAIN_ID48_MAX)
        return -EINVAL;
    memset(w->mem.ptr + CW_CTR_OFF, 0, 8);
    memset(w->mem.ptr + CW_MARK_OFF, 0, 8 * COUNT_WHILE_MAX);
    *(uint64_t *)(w->mem.ptr + CW_ONE_OFF) = 1;
    rc = chain_unrolled_begin(&w->l, &w->body,
                              w->own_trig ? &w->trig : &w->body);
    for (unsigned i = 0; rc == 0 && i < n; i++)
        rc = iteration(w, i, k, brk);
    if (rc == 0)
        rc = chain_fadd(&w->body, word(w, CW_DONE_OFF), 1, NULL, 0, NULL);
    if (rc == 0)
        rc = chain_unrolled_finish(&w->l);
    return rc < 0
               ? rc
               : chain_send_en(&w->master, &w->body, w->l.first_end, 0, NULL);
}

int count_while_start(struct count_while *w)
{
    return chain_q_doorbell(&w->master);
}

void count_while_retire(struct count_while *w)
{
    chain_q_retire(&w->master, w->master.pi);
    chain_q_retire(&w->body, w->body.pi);
    chain_q_retire(&w->trig, w->trig.pi);
}

void count_while_close(struct count_while *w)
{
    chain_q_close(&w->trig);
    chain_q_close(&w->body);
    chain_q_close(&w->master);
    chain_buf_close(&w->mem);
}
