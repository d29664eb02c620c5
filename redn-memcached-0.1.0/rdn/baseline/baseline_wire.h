/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/baseline/baseline_wire.h - what the benchmark's RDMA baselines say to the
 * server (memcached --rdn-baselines PORT, rdn/baseline/baseline_srv.h): a
 * handshake on its own TCP port, framed like the offload's control messages
 * (proto/rdn_framing.h), and the RPC request and reply formats.
 *
 *   client                                 server
 *   BL_HELLO {kind, QP address, slots} ->
 *                                      <-  BL_WELCOME {QP address, regions}
 *                                          or RDN_MSG_REJECT
 *
 * The baselines exist to be compared with the offloaded GET; they are off
 * by default because the one-sided one gives every client read access to
 * the table and the item arena (FaRM's model: clients read server memory).
 *
 * one-sided  The client READs both candidate buckets (geometry from the
 *            offload handshake's REFRESH), then the item a matching slot
 *            points to, through the rkeys of the exposed regions.
 * RPC        The client SENDs struct bl_rpc_req (request id, key); a server
 *            thread (polling its CQ, or sleeping on it) looks the key up
 *            through the cache and answers with one WRITE_IMM into the
 *            client's slot (request id % depth): the whole NIC-visible item
 *            (proto/item.h) on a hit, 8 zero bytes on a miss; the immediate
 *            is the request id, with BL_IMM_MISS set on a miss.
 *
 * All integers are little-endian; structures have no implicit padding.
 */
#ifndef RDN_BASELINE_BASELINE_WIRE_H
#define RDN_BASELINE_BASELINE_WIRE_H

#include <stdint.h>

#include "proto/item.h"
#include "proto/rdn_wire.h"

enum bl_msg_type {
    BL_MSG_HELLO = 0x41,   /* client -> server: struct bl_hello */
    BL_MSG_WELCOME = 0x42, /* server -> client: struct bl_welcome */
};

enum bl_kind {
    BL_ONESIDED = 1,  /* READs of table and items */
    BL_RPC_POLL = 2,  /* RPC, server thread polls its CQ */
    BL_RPC_EVENT = 3, /* RPC, server thread sleeps on its CQ */
};

struct bl_hello {
    uint8_t qp_addr[RDN_QP_ADDR_LEN];
    uint32_t kind;      /* enum bl_kind */
    uint32_t depth;     /* RPC: requests in flight, a power of two */
    uint64_t buf_addr;  /* RPC: depth reply slots of slot_size bytes */
    uint32_t buf_rkey;  /* RPC: remote-write key of the slots */
    uint32_t slot_size; /* RPC: bytes per slot (largest item answered) */
};

#define BL_MAX_REGIONS 16

/* Memory the one-sided client may READ. */
struct bl_region {
    uint64_t addr;
    uint64_t len;
    uint32_t rkey;
    uint32_t rsvd;
};

struct bl_welcome {
    uint8_t qp_addr[RDN_QP_ADDR_LEN];
    uint32_t nregions; /* one-sided: table and arena regions */
    uint32_t rsvd;
    struct bl_region region[BL_MAX_REGIONS];
};

#define BL_IMM_MISS 0x80000000u /* reply immediate: not found */
#define BL_REQ_MASK 0x7fffffffu

struct bl_rpc_req {
    uint32_t req_id; /* < 2^31 */
    uint16_t nkey;   /* 1..RDN_KEY_MAX */
    uint16_t rsvd;
    char key[RDN_KEY_MAX];
    uint8_t pad[6];
};

_Static_assert(sizeof(struct bl_hello) == 56, "bl_hello is 56 B");
_Static_assert(sizeof(struct bl_region) == 24, "bl_region is 24 B");
_Static_assert(sizeof(struct bl_welcome) == 40 + 16 * 24, "bl_welcome");
_Static_assert(sizeof(struct bl_rpc_req) == 264, "bl_rpc_req is 264 B");

#endif /* RDN_BASELINE_BASELINE_WIRE_H */
