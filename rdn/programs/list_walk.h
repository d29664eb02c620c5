/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/programs/list_walk.h - linked-list traversal on the NIC (the RedN
 * paper's Figure 13): a client SENDs a 48-bit key; a chain pre-posted on
 * the server walks a list of nodes, one unrolled-loop iteration per node,
 * and WRITEs the value of the node whose key matches straight into the
 * client's buffer. No server CPU runs between the client's SEND and the
 * reply.
 *
 * The client's request lands (RECV scatter) in the compare field of every
 * iteration's CAS before the walk's first WQE is released. Per iteration
 * (queue `work`, managed, connected to itself):
 *   READ  node -> key into the id bits of the response NOP on queue
 *         `resp`, value descriptor into its data segment, next pointer into
 *         the next iteration's READ address (all WQEs not yet released);
 *   CAS   (fenced) the response NOP: it becomes a WRITE when the node's key
 *         equals the client's;
 *   [break: READ + CAS disarm the trigger when the CAS fired]
 *   WAIT + SEND_EN(resp): resp runs the response, then the trigger that
 *         releases the next iteration.
 * Replies (WRITE_IMM to the client, immediate data):
 *   without break: the value (plain WRITE) on a hit, then LIST_IMM_DONE
 *   after the last node;
 *   with break: LIST_IMM_HIT | node position carrying the value, and the
 *   walk stops there; LIST_IMM_MISS after the last node otherwise.
 */
#ifndef RDN_PROGRAMS_LIST_WALK_H
#define RDN_PROGRAMS_LIST_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/mlx5.h"
#include "rdn/chain/chain.h"

#define LIST_MAX_NODES 8 /* two scatter entries per node: 16 = RECV max */
#define LIST_IMM_DONE  0x444f4e45u
#define LIST_IMM_MISS  0x4d495353u
#define LIST_IMM_HIT   0x48490000u /* | node position */

/* A node as the NIC reads it (32 bytes, 8-aligned). */
struct list_node {
    be64 key_be;                /* 48-bit key */
    struct mlx5_data_seg value; /* be32 length, be32 lkey, be64 address */
    be64 next_be;               /* address of the next node */
};

_Static_assert(sizeof(struct list_node) == 32, "list node is 32 bytes");

struct list_walk_cfg {
    unsigned nodes;         /* iterations: nodes in the list, 1..8 */
    bool brk;               /* stop at the first match */
    uint64_t head;          /* address of the first node */
    uint32_t nodes_rkey;    /* MR of the nodes (remote read) */
    struct chain_q *client; /* the client's queue, connected to resp */
    struct chain_loc reply; /* the client's buffer (remote write) */
};

struct list_walk {
    struct list_walk_cfg cfg;
    struct chain_q master, work, resp;
    struct chain_unrolled loop;
    struct chain_if hit[LIST_MAX_NODES];
    struct chain_wqe rd[LIST_MAX_NODES];
};

/*
 * Creates the server's queues, builds the chain, posts its receive and, on
 * the master queue, the release of iteration 0 once the request arrived.
 * Returns 0, -EINVAL (a bad cfg), or the chain_* error. The caller owns
 * *lw and destroys it with list_walk_destroy(); cfg's queues and buffers
 * stay the caller's.
 */
int list_walk_build(struct list_walk *lw, struct rnic_device *dev,
                    const struct list_walk_cfg *cfg);
/* Rings the master's doorbell: the walk runs when the request arrives.
 * Returns 0 or chain_q_doorbell()'s error. */
int list_walk_start(struct list_walk *lw);
/* Destroys the server's queues. */
void list_walk_destroy(struct list_walk *lw);

/* Writes the request a client SENDs into buf (the key once per node, 6 B
 * little-endian each) and returns its length. */
uint32_t list_walk_request(uint64_t key, unsigned nodes, uint8_t *buf);

/* Fills a node. value: lkey and address of the value on the server. */
void list_node_set(struct list_node *n, uint64_t key, uint32_t vlen,
                   uint32_t vlkey, uint64_t vaddr, uint64_t next);

/* Whether iteration i's READ ran (its results reached the chain). */
bool list_walk_iter_ran(const struct list_walk *lw, unsigned i);

#endif /* RDN_PROGRAMS_LIST_WALK_H */
