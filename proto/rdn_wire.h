/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/rdn_wire.h - what an RDMA client and the server's offload module
 * say to each other: the control messages of the TCP handshake connection
 * (versioned), the SEND that asks for one offloaded GET, and the layout of
 * the client's response buffers that the server's NIC writes into.
 *
 * Control connection (TCP, the server's --rdn-port). Every message is a
 * struct rdn_msg_hdr followed by hdr.len payload bytes. All integers of
 * control messages are little-endian (the project supports little-endian
 * hosts only, see proto/item.h), and structures have no implicit padding.
 *
 *   client                                   server
 *   (REFRESH {}                          ->  optional, to learn the
 *                                       <-   GEOMETRY {geometry}   item size)
 *   HELLO {QP address, response buffers} ->
 *                                       <-   WELCOME {QP address, geometry}
 *                                            or REJECT {errno, text}
 *   (the client connects its QP; GETs go over RDMA from now on)
 *   REFRESH {}                           ->
 *                                       <-   GEOMETRY {geometry}
 *   HITS {keys the NIC served}           ->  (no answer: LRU bookkeeping)
 *
 * A server that authenticates its clients (memcached -S or -Y) wants
 * AUTH {user, password} first and answers AUTH_OK; it refuses every other
 * first message with REJECT -EACCES, so no RDMA address, key or geometry
 * goes to a client that has not logged in.
 *
 * Closing the connection tears the client's server-side resources down.
 * A version the server does not speak gets REJECT with -EPROTONOSUPPORT.
 *
 * One GET: the client SENDs a struct rdn_get_req on its QP. The server's
 * pre-posted receive scatters its fields straight into the WQEs of the
 * chain (bucket addresses into two READs, the compare operands into the
 * CASes, one per slot, the request id into the closing WRITE_IMM, the lap
 * words into the receive queue's doorbell record and the chain's indexes). The
 * chain reads both candidate buckets; a slot whose match word equals the
 * compare operand becomes an RDMA WRITE of the whole item into the response
 * slot the request uses; then one WRITE_IMM writes the server's generation word
 * into the slot header and carries the request id. So every request ends
 * with exactly one receive completion at the client, hit or miss.
 *
 * Request n (counting from 0 on a connection) always uses response slot
 * n % depth: the chain iteration that serves it was armed with that slot's
 * address, so no address travels in the request.
 */
#ifndef PROTO_RDN_WIRE_H
#define PROTO_RDN_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/byteorder.h"
#include "proto/item.h"
#include "proto/keyhash.h"
#include "proto/table.h"

#define RDN_WIRE_MAGIC   0x314e4452u /* "RDN1" as little-endian bytes */
#define RDN_WIRE_VERSION 5
#define RDN_WIRE_MAX_MSG (64 * 1024) /* largest payload accepted */
#define RDN_QP_ADDR_LEN  32          /* struct rnic_addr */

enum rdn_msg_type {
    RDN_MSG_HELLO = 1,    /* client -> server: struct rdn_hello */
    RDN_MSG_WELCOME = 2,  /* server -> client: struct rdn_welcome */
    RDN_MSG_REJECT = 3,   /* server -> client: struct rdn_reject */
    RDN_MSG_REFRESH = 4,  /* client -> server: no payload */
    RDN_MSG_GEOMETRY = 5, /* server -> client: struct rdn_geometry */
    RDN_MSG_HITS = 6,     /* client -> server: rdn_hits_*() encoding */
    RDN_MSG_RESUME = 7,   /* client -> server: struct rdn_resume */
    RDN_MSG_AUTH = 8,     /* client -> server: struct rdn_auth + names */
    RDN_MSG_AUTH_OK = 9,  /* server -> client: no payload */
};

struct rdn_msg_hdr {
    uint32_t magic;   /* RDN_WIRE_MAGIC */
    uint16_t version; /* RDN_WIRE_VERSION */
    uint16_t type;    /* enum rdn_msg_type */
    uint32_t len;     /* payload bytes that follow, <= RDN_WIRE_MAX_MSG */
    uint32_t rsvd;    /* 0 */
};

/* The client's half of the handshake. */
struct rdn_hello {
    uint8_t qp_addr[RDN_QP_ADDR_LEN]; /* the client QP's rnic_addr */
    uint64_t buf_addr;  /* response slots: depth * slot_size bytes */
    uint32_t buf_rkey;  /* remote-write key of that buffer */
    uint32_t slot_size; /* bytes per slot, >= rdn_resp_slot_size() */
    uint32_t depth;     /* slots = requests in flight, a power of two */
    uint32_t flags;     /* RDN_HELLO_* */
};

/* Search the two buckets one after the other instead of both at once
 * (the paper's RedN-Seq, for experiments: slower, never needed). */
#define RDN_HELLO_SEQ 0x1

#define RDN_GEO_EXPANDING 0x1 /* a table growth runs: misses are not final */

/*
 * What a client needs to find a key's buckets and to judge an answer. The
 * generation word is the value the chain writes into every response slot:
 * a different value there means this geometry is stale (table growth,
 * flush_all): the client refreshes and asks over TCP meanwhile.
 */
struct rdn_geometry {
    char hash[16];          /* RDN_HASH_NAME, NUL-padded */
    uint64_t table_addr;    /* address of bucket 0 in the server's NIC space */
    uint64_t gen_word;      /* see above; never 0 */
    uint32_t hashpower;     /* the table has 2^hashpower buckets */
    uint32_t fp_bits;       /* RDN_FP_BITS */
    uint32_t bucket_slots;  /* RDN_BUCKET_SLOTS */
    uint32_t bucket_bytes;  /* sizeof(struct rdn_bucket) */
    uint32_t item_size_max; /* largest value the server stores */
    uint32_t server_time;   /* the server's clock (unix s) when sent */
    uint32_t flags;         /* RDN_GEO_* */
    uint32_t rsvd;
};

/*
 * How a client fills the lap words of its requests (struct rdn_get_req):
 * word f of request n (counting from 0 on the connection) is
 * first[f] + step[f] * n, modulo 2^32. The words are the server's: they
 * move its chain on by one lap (docs/wire.md says how the server uses
 * them); the client computes them and needs to know nothing else.
 */
#define RDN_LAP_WORDS 5

struct rdn_lap_plan {
    uint32_t first[RDN_LAP_WORDS];
    uint32_t step[RDN_LAP_WORDS];
};

struct rdn_welcome {
    uint8_t qp_addr[RDN_QP_ADDR_LEN]; /* the server's client-facing QP */
    struct rdn_geometry geo;
    uint32_t client_id; /* the server's name for this client (stats rdn) */
    uint32_t depth;     /* slots granted, <= requested; a power of two */
    uint32_t slot_min;  /* smallest slot size the server accepts */
    uint32_t rsvd;      /* 0 */
    uint64_t token;     /* random: proves who sends a RESUME */
    struct rdn_lap_plan plan; /* the requests' lap words */
};

struct rdn_reject {
    int32_t status; /* negative errno */
    char msg[124];  /* NUL-terminated reason */
};

/*
 * The first message of a new handshake connection from a client whose old
 * one died with the server while its NIC path lived on (the restarted
 * server re-attached its chain): the connection becomes that client's
 * again (LRU reports, refreshes). Answered with GEOMETRY, or REJECT when
 * the server has no such client. The welcome's random token, which only
 * the client and the server know, proves who asks.
 */
struct rdn_resume {
    uint64_t token;     /* as in the server's welcome */
    uint32_t client_id; /* likewise */
    uint32_t rsvd;
};

/*
 * RDN_MSG_AUTH: the same login memcached's -Y or -S checks. The payload is
 * this header, then user_len bytes of user name, then pass_len bytes of
 * password (no NULs needed, none added), and nothing else.
 */
#define RDN_AUTH_MAX 255 /* longest user name or password */

struct rdn_auth {
    uint16_t user_len; /* 1..RDN_AUTH_MAX */
    uint16_t pass_len; /* 0..RDN_AUTH_MAX */
    uint32_t rsvd;     /* 0 (not checked) */
};

_Static_assert(sizeof(struct rdn_auth) == 8, "rdn_auth is 8 B");
_Static_assert(sizeof(struct rdn_msg_hdr) == 16, "rdn_msg_hdr is 16 B");
_Static_assert(sizeof(struct rdn_hello) == 56, "rdn_hello is 56 B");
_Static_assert(sizeof(struct rdn_geometry) == 64, "rdn_geometry is 64 B");
_Static_assert(sizeof(struct rdn_lap_plan) == 40, "rdn_lap_plan is 40 B");
_Static_assert(sizeof(struct rdn_welcome) == 160, "rdn_welcome is 160 B");
_Static_assert(sizeof(struct rdn_reject) == 128, "rdn_reject is 128 B");
_Static_assert(sizeof(struct rdn_resume) == 16, "rdn_resume is 16 B");

/*
 * RDN_MSG_HITS payload: a 16-bit key count, then per key one length byte
 * (1..RDN_KEY_MAX) and the key bytes. At most RDN_HITS_MAX keys.
 */
#define RDN_HITS_MAX 256

/* ---- one GET ---------------------------------------------------------- */

#define RDN_REQ_CMP (2 * RDN_BUCKET_SLOTS) /* one per slot of both buckets */

/*
 * The SEND of one GET. Big-endian fields are copied by the server NIC into
 * big-endian WQE fields as they are. compare[i] is the big-endian image of
 * rdn_slot_match(fp): the CAS compares it with the 8 bytes of the match
 * word the READ put on a response WQE. lap[] follows the welcome's plan
 * (rdn_get_req_set_lap()); the server's NIC stores the words in its chain
 * (the receive queue's doorbell record, and the WAIT count and enable
 * indexes of the chain unit that served request n - depth, for its next
 * lap), so the chain needs no WQE of its own to recycle itself. Other
 * values cost only the client that sends them: its later requests wait
 * for a receive (RNR) or go unanswered, or its own answers are garbled.
 */
struct rdn_get_req {
    be64 bucket_addr[2];       /* candidate buckets 1 and 2 */
    be64 compare[RDN_REQ_CMP]; /* see above */
    be32 req_id;               /* the WRITE_IMM's immediate */
    be32 lap[RDN_LAP_WORDS];   /* see above */
} __attribute__((packed));

_Static_assert(sizeof(struct rdn_get_req) == 72, "rdn_get_req is 72 B");

/* Fills request n's lap words from the welcome's plan. */
static inline void rdn_get_req_set_lap(struct rdn_get_req *r,
                                       const struct rdn_lap_plan *plan,
                                       uint64_t n)
{
    for (unsigned f = 0; f < RDN_LAP_WORDS; f++)
        r->lap[f] = cpu_to_be32(plan->first[f] + plan->step[f] * (uint32_t)n);
}

/*
 * Response slot: the generation word, then (on a hit) the item. Before
 * sending, the client sets the item's stamp to RDN_RESP_UNTOUCHED: still
 * there afterwards means no WRITE came (a miss); a stamp of 0 means the
 * NIC sent an item that was being freed (a torn read, not a miss).
 */
#define RDN_RESP_GEN_OFF   0
#define RDN_RESP_ITEM_OFF  64
#define RDN_RESP_UNTOUCHED UINT64_MAX

/* Smallest response slot that holds any item of up to item_size_max. */
static inline size_t rdn_resp_slot_size(size_t item_size_max)
{
    size_t n =
        RDN_RESP_ITEM_OFF + rdn_item_total_len(RDN_KEY_MAX, item_size_max);

    return (n + 63) & ~(size_t)63;
}

/* Address of a key's bucket under a geometry (bucket from rdn_keyhash). */
static inline uint64_t rdn_bucket_addr(const struct rdn_geometry *g,
                                       uint64_t bucket)
{
    uint64_t mask = (UINT64_C(1) << g->hashpower) - 1;

    return g->table_addr + (bucket & mask) * sizeof(struct rdn_bucket);
}

/* The generation word: table generation (high half), invalidations. */
static inline uint64_t rdn_gen_word(uint32_t table_gen, uint32_t inval)
{
    return (uint64_t)(table_gen + 1) << 32 | inval;
}

#endif /* PROTO_RDN_WIRE_H */
