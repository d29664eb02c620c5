/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/programs/list_walk.c - linked-list traversal on the NIC (see
 * list_walk.h for the chain).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "proto/byteorder.h"
#include "rdn/programs/list_walk.h"

#define WORK_RING   256
#define RESP_RING   64
#define MASTER_RING 8
#define MARK_OFF    16 /* work's sink: 2 marker bytes per iteration */

void list_node_set(struct list_node *n, uint64_t key, uint32_t vlen,
                   uint32_t vlkey, uint64_t vaddr, uint64_t next)
{
    n->key_be = cpu_to_be64(key & CHAIN_ID48_MAX);
    n->value.byte_count = cpu_to_be32(vlen);
    n->value.lkey = cpu_to_be32(vlkey);
    n->value.addr = cpu_to_be64(vaddr);
    n->next_be = cpu_to_be64(next);
}

uint32_t list_walk_request(uint64_t key, unsigned nodes, uint8_t *buf)
{
    uint64_t le = htole64(key & CHAIN_ID48_MAX);

    for (unsigned i = 0; i < nodes; i++)
        memcpy(buf + 6 * i, &le, 6);
    return 6 * nodes;
}

static int open_queues(struct list_walk *lw, struct rnic_device *dev)
{
    struct chain_q_attr m = {.sq_wqebb = MASTER_RING,
                             .flags = RNIC_QP_CROSS_CHANNEL};
    struct chain_q_attr w = {.sq_wqebb = WORK_RING,
                             .flags =
                                 RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND,
                             .cq_flags = RNIC_CQ_IGNORE_OVERRUN};
    struct chain_q_attr r = w;
    int rc;

    r.sq_wqebb = RESP_RING;
    r.rq_wqe = 4;
    rc = chain_q_open(dev, &m, &lw->master);
    if (rc == 0)
        rc = chain_q_open(dev, &w, &lw->work);
    if (rc == 0)
        rc = chain_q_open(dev, &r, &lw->resp);
    if (rc == 0)
        rc = chain_q_connect(&lw->master, &lw->master);
    if (rc == 0)
        rc = chain_q_connect(&lw->work, &lw->work);
    if (rc == 0)
        rc = chain_q_connect(&lw->resp, lw->cfg.client);
    return rc;
}

/*
 * Points iteration i's READ at what it feeds: the key's top two bytes
 * (always 0) mark the iteration as run, its 48 bits go into the id bits of
 * the response NOP, the value descriptor into the response's data segment,
 * the next pointer into the next READ's address (or the sink after the
 * last node).
 */
static void aim_read(struct list_walk *lw, unsigned i)
{
    struct rnic_sge sg[5];
    struct chain_loc data, next;

    sg[0] = chain_loc_sge(chain_loc_part(lw->work.sink, MARK_OFF + 2 * i, 2));
    chain_id48_sges(&lw->hit[i].target, sg + 1);
    chain_field(&lw->hit[i].target, CHAIN_F_DATA, 0, &data);
    sg[3] = chain_loc_sge(data);
    if (i + 1 < lw->cfg.nodes)
        chain_field(&lw->rd[i + 1], CHAIN_F_RADDR, 0, &next);
    else
        next = chain_loc_part(lw->work.sink, 32, 8);
    sg[4] = chain_loc_sge(next);
    for (unsigned k = 0; k < 5; k++)
        chain_wqe_set_sge(&lw->rd[i], k, &sg[k]);
}

/* One iteration: READ the node, the if on the response, the trigger. */
static int iteration(struct list_walk *lw, unsigned i)
{
    const struct list_walk_cfg *c = &lw->cfg;
    struct rnic_sge ph[5], val = {0};
    struct chain_wr wr = {.opcode = c->brk ? MLX5_OPCODE_RDMA_WRITE_IMM
                                           : MLX5_OPCODE_RDMA_WRITE,
                          .sg = &val,
                          .nsg = 1,
                          .raddr = chain_loc_addr(c->reply),
                          .rkey = c->reply.rkey,
                          .imm = LIST_IMM_HIT | i};
    struct chain_loc src = {.ptr = (uint8_t *)(uintptr_t)c->head,
                            .rkey = c->nodes_rkey};
    static const uint32_t lens[5] = {2, 3, 3, 16, 8};
    int rc;

    for (unsigned k = 0; k < 5; k++)
        ph[k] = chain_loc_sge(chain_loc_part(lw->work.sink, 0, lens[k]));
    rc = chain_unrolled_iter(&lw->loop);
    if (rc == 0)
        rc = chain_read(&lw->work, ph, 5, src, 0, &lw->rd[i]);
    if (rc == 0)
        rc = chain_if_post(&lw->work, &lw->resp, &wr, 0, 0, CHAIN_IF_ARM,
                           CHAIN_FENCE, &lw->hit[i]);
    if (rc == 0)
        rc = chain_unrolled_end_iter(&lw->loop, c->brk ? &lw->hit[i] : NULL);
    return rc;
}

/* After the last node: work enables resp's final reply. */
static int epilogue(struct list_walk *lw)
{
    const struct list_walk_cfg *c = &lw->cfg;
    int rc;

    rc = chain_write_imm(&lw->resp, NULL, 0, c->reply,
                         c->brk ? LIST_IMM_MISS : LIST_IMM_DONE, 0, NULL);
    if (rc == 0)
        rc = chain_send_en(&lw->work, &lw->resp, lw->resp.pi, 0, NULL);
    return rc < 0 ? rc : chain_unrolled_finish(&lw->loop);
}

/* The request's receive: the key lands in every CAS's compare field. */
static int post_request_recv(struct list_walk *lw)
{
    struct rnic_sge sg[2 * LIST_MAX_NODES];

    for (unsigned i = 0; i < lw->cfg.nodes; i++)
        chain_compare_id48_sges(&lw->hit[i].cas, sg + 2 * i);
    return chain_post_recv(&lw->resp, sg, 2 * lw->cfg.nodes, 0);
}

/*
 * The master releases iteration 0 only once the request has arrived: its
 * RECV rewrites the CAS compare fields, which the NIC may fetch as soon as
 * they are released.
 */
static int post_release(struct list_walk *lw)
{
    int rc = chain_wait(&lw->master, lw->resp.rcq,
                        chain_cq_expect(lw->resp.rcq, 1), 0, NULL);

    return rc < 0 ? rc
                  : chain_send_en(&lw->master, &lw->work, lw->loop.first_end, 0,
                                  NULL);
}

int list_walk_build(struct list_walk *lw, struct rnic_device *dev,
                    const struct list_walk_cfg *cfg)
{
    int rc;

    if (!lw || !dev || !cfg || !cfg->client || cfg->nodes == 0 ||
        cfg->nodes > LIST_MAX_NODES)
        return -EINVAL;
    memset(lw, 0, sizeof(*lw));
    lw->cfg = *cfg;
    rc = open_queues(lw, dev);
    if (rc < 0)
        goto fail;
    memset(lw->work.sink.ptr + MARK_OFF, 0xff, 2 * LIST_MAX_NODES);
    rc = chain_unrolled_begin(&lw->loop, &lw->work, &lw->resp);
    for (unsigned i = 0; rc == 0 && i < cfg->nodes; i++)
        rc = iteration(lw, i);
    for (unsigned i = 0; rc == 0 && i < cfg->nodes; i++)
        aim_read(lw, i);
    if (rc == 0)
        rc = epilogue(lw);
    if (rc == 0)
        rc = post_request_recv(lw);
    if (rc == 0)
        rc = post_release(lw);
    if (rc < 0)
        goto fail;
    return 0;
fail:
    list_walk_destroy(lw);
    return rc;
}

int list_walk_start(struct list_walk *lw)
{
    return chain_q_doorbell(&lw->master);
}

void list_walk_destroy(struct list_walk *lw)
{
    chain_q_close(&lw->resp);
    chain_q_close(&lw->work);
    chain_q_close(&lw->master);
}

bool list_walk_iter_ran(const struct list_walk *lw, unsigned i)
{
    const uint8_t *m = lw->work.sink.ptr + MARK_OFF + 2 * i;

    return m[0] == 0 && m[1] == 0;
}
