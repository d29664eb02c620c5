/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/table.h - the cuckoo table's memory layout, shared by the server's
 * CPU path, the NIC chains and RDMA clients.
 *
 * The table is an array of 2^hashpower buckets; a key has two candidate
 * buckets (proto/keyhash.h). A bucket is RDN_BUCKET_SLOTS slots. A slot is
 * laid out so that one RDMA READ of a bucket, scattered slot by slot, lands
 * each slot straight on a response WQE of the GET chain:
 *
 *   match (8 B)  -> the first 8 bytes of the response WQE's control segment.
 *                   It is a NOP control word (opcode NOP, ds RDN_SLOT_DS)
 *                   whose 48 id bits hold the key's fingerprint. The chain
 *                   CASes it against the fingerprint the client sent: on a
 *                   match the NOP becomes an RDMA WRITE.
 *   desc (16 B)  -> the response WQE's data segment: be32 byte count (the
 *                   item's rdn_item_total_len), be32 lkey of the item arena,
 *                   be64 address of the struct rdn_item.
 *
 * An empty slot holds the match word of fingerprint 0, which no key has
 * (proto/keyhash.h never yields 0), and a descriptor that is still a valid
 * gather entry (the item last there, or an all-zero tombstone item): the
 * NOP carries it harmlessly.
 *
 * Concurrency: the CPU writes a slot as 8-byte stores of the match word and
 * the descriptor's two words, and a READ may combine words of different
 * instants. The writer (memcached/assoc.h) therefore never stores an
 * unexecutable descriptor (no zero lkey or address, ever): a READ that
 * pairs a match word with a descriptor of another instant makes the NIC
 * send an item that is registered memory, and the item's stamp and key
 * checks (proto/item.h) reject such a read. It never faults the QP.
 */
#ifndef PROTO_TABLE_H
#define PROTO_TABLE_H

#include <stdint.h>

#include "proto/mlx5.h"

#define RDN_BUCKET_SLOTS 2
#define RDN_SLOT_DS      3 /* response WQE: ctrl + raddr + data segments */
#define RDN_FP_BITS      48
#define RDN_FP_MASK      ((UINT64_C(1) << RDN_FP_BITS) - 1)

struct rdn_slot {
    uint64_t match;            /* NOP ctrl word carrying the fingerprint */
    struct mlx5_data_seg desc; /* the item, as a gather entry */
};

struct rdn_bucket {
    struct rdn_slot slot[RDN_BUCKET_SLOTS];
};

_Static_assert(sizeof(struct rdn_slot) == 24, "slot is 24 B");
_Static_assert(sizeof(struct rdn_bucket) == 48, "bucket is 48 B");

/* The match word a slot holds for fingerprint fp (0 = empty slot). */
static inline uint64_t rdn_slot_match(uint64_t fp)
{
    return mlx5_ctrl_id48_word(fp & RDN_FP_MASK, MLX5_OPCODE_NOP, RDN_SLOT_DS);
}

#endif /* PROTO_TABLE_H */
