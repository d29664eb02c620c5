/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/wire_dump.c - helper of t/rdnwire.py: prints the constants and the
 * structure layouts the Python tests need, taken from the C headers
 * (proto/rdn_wire.h and the layouts it builds on, memcached/persist_int.h's
 * superblock), so no test copies a number by hand. One line each:
 *
 *   const NAME VALUE            an integer, in decimal
 *   string NAME VALUE           a string constant (no spaces)
 *   struct NAME SIZE            sizeof(struct NAME)
 *   field STRUCT MEMBER OFFSET SIZE KIND COUNT
 *
 * KIND is u (little-endian unsigned integer), i (little-endian signed),
 * U (big-endian unsigned: copied into WQE fields as it is) or s (bytes:
 * a byte array or a nested structure); COUNT is the number of integers
 * of an integer array, else 1. Fields are listed in offset order; a
 * structure's fields may leave gaps (members no test needs).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "memcached/persist_int.h"
#include "proto/item.h"
#include "proto/keyhash.h"
#include "proto/mlx5.h"
#include "proto/rdn_wire.h"
#include "proto/table.h"

#define CONST(name) printf("const %s %lld\n", #name, (long long)(name))

#define STRUCT(s) printf("struct %s %zu\n", #s, sizeof(struct s))

/* A member's kind from its type: integers by signedness, the rest bytes. */
#define KIND_OF(e)                                                             \
    _Generic((e), uint8_t                                                      \
             : 'u', uint16_t                                                   \
             : 'u', uint32_t                                                   \
             : 'u', uint64_t                                                   \
             : 'u', int8_t                                                     \
             : 'i', int16_t                                                    \
             : 'i', int32_t                                                    \
             : 'i', int64_t                                                    \
             : 'i', default                                                    \
             : 's')

#define MEMBER(s, m) (((struct s *)0)->m)

#define FIELD_AS(s, m, kind, count)                                            \
    printf("field %s %s %zu %zu %c %zu\n", #s, #m, offsetof(struct s, m),      \
           sizeof(MEMBER(s, m)), kind, (size_t)(count))

#define FIELD(s, m) FIELD_AS(s, m, KIND_OF(MEMBER(s, m)), 1)

/* Big-endian fields: the type alone does not say so. */
#define FIELD_BE(s, m) FIELD_AS(s, m, 'U', 1)
#define FIELD_BE_ARRAY(s, m)                                                   \
    FIELD_AS(s, m, 'U', sizeof(MEMBER(s, m)) / sizeof(MEMBER(s, m)[0]))

static void wire(void)
{
    CONST(RDN_WIRE_MAGIC);
    CONST(RDN_WIRE_VERSION);
    CONST(RDN_WIRE_MAX_MSG);
    CONST(RDN_QP_ADDR_LEN);
    CONST(RDN_MSG_HELLO);
    CONST(RDN_MSG_WELCOME);
    CONST(RDN_MSG_REJECT);
    CONST(RDN_MSG_REFRESH);
    CONST(RDN_MSG_GEOMETRY);
    CONST(RDN_MSG_HITS);
    CONST(RDN_MSG_RESUME);
    CONST(RDN_MSG_AUTH);
    CONST(RDN_MSG_AUTH_OK);
    CONST(RDN_AUTH_MAX);
    CONST(RDN_HELLO_SEQ);
    CONST(RDN_GEO_EXPANDING);
    CONST(RDN_HITS_MAX);
    CONST(RDN_REQ_CMP);
    CONST(RDN_LAP_WORDS);
    CONST(RDN_RESP_GEN_OFF);
    CONST(RDN_RESP_ITEM_OFF);
    printf("string RDN_HASH_NAME %s\n", RDN_HASH_NAME);

    STRUCT(rdn_msg_hdr);
    FIELD(rdn_msg_hdr, magic);
    FIELD(rdn_msg_hdr, version);
    FIELD(rdn_msg_hdr, type);
    FIELD(rdn_msg_hdr, len);
    FIELD(rdn_msg_hdr, rsvd);

    STRUCT(rdn_hello);
    FIELD(rdn_hello, qp_addr);
    FIELD(rdn_hello, buf_addr);
    FIELD(rdn_hello, buf_rkey);
    FIELD(rdn_hello, slot_size);
    FIELD(rdn_hello, depth);
    FIELD(rdn_hello, flags);

    STRUCT(rdn_geometry);
    FIELD(rdn_geometry, hash);
    FIELD(rdn_geometry, table_addr);
    FIELD(rdn_geometry, gen_word);
    FIELD(rdn_geometry, hashpower);
    FIELD(rdn_geometry, fp_bits);
    FIELD(rdn_geometry, bucket_slots);
    FIELD(rdn_geometry, bucket_bytes);
    FIELD(rdn_geometry, item_size_max);
    FIELD(rdn_geometry, server_time);
    FIELD(rdn_geometry, flags);
    FIELD(rdn_geometry, rsvd);

    STRUCT(rdn_welcome);
    FIELD(rdn_welcome, qp_addr);
    FIELD(rdn_welcome, geo);
    FIELD(rdn_welcome, client_id);
    FIELD(rdn_welcome, depth);
    FIELD(rdn_welcome, slot_min);
    FIELD(rdn_welcome, rsvd);
    FIELD(rdn_welcome, token);
    FIELD(rdn_welcome, plan);

    STRUCT(rdn_lap_plan);
    FIELD(rdn_lap_plan, first);
    FIELD(rdn_lap_plan, step);

    STRUCT(rdn_reject);
    FIELD(rdn_reject, status);
    FIELD(rdn_reject, msg);

    STRUCT(rdn_resume);
    FIELD(rdn_resume, token);
    FIELD(rdn_resume, client_id);
    FIELD(rdn_resume, rsvd);
    STRUCT(rdn_auth);
    FIELD(rdn_auth, user_len);
    FIELD(rdn_auth, pass_len);
    FIELD(rdn_auth, rsvd);

    STRUCT(rdn_get_req);
    FIELD_BE_ARRAY(rdn_get_req, bucket_addr);
    FIELD_BE_ARRAY(rdn_get_req, compare);
    FIELD_BE(rdn_get_req, req_id);
    FIELD_BE_ARRAY(rdn_get_req, lap);
}

/* What the NIC reads and sends: the table and the item. */
static void layouts(void)
{
    CONST(RDN_KEY_MAX);
    CONST(RDN_BUCKET_SLOTS);
    CONST(RDN_FP_BITS);

    STRUCT(mlx5_data_seg);
    FIELD_BE(mlx5_data_seg, byte_count);
    FIELD_BE(mlx5_data_seg, lkey);
    FIELD_BE(mlx5_data_seg, addr);

    STRUCT(rdn_slot);
    FIELD(rdn_slot, match);
    FIELD(rdn_slot, desc);

    STRUCT(rdn_bucket);

    STRUCT(rdn_item);
    FIELD(rdn_item, stamp);
    FIELD(rdn_item, nbytes);
    FIELD(rdn_item, flags);
    FIELD(rdn_item, exptime);
    FIELD(rdn_item, nkey);
    FIELD(rdn_item, rsvd);
}

/* The cache's superblock, which t/offload_restart.py finds and corrupts. */
static void superblock(void)
{
    CONST(PERSIST_MAGIC);
    CONST(PERSIST_VERSION);

    STRUCT(persist_table);
    FIELD(persist_table, buckets);
    FIELD(persist_table, hashpower);
    FIELD(persist_table, old_buckets);
    FIELD(persist_table, old_hashpower);
    FIELD(persist_table, generation);
    FIELD(persist_table, sum);

    STRUCT(persist_sb);
    FIELD(persist_sb, magic);
    FIELD(persist_sb, version);
    FIELD(persist_sb, geo);
    FIELD(persist_sb, table_seq);
    FIELD(persist_sb, table); /* two struct persist_table */
}

int main(void)
{
    wire();
    layouts();
    superblock();
    return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
