/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/item.h - an item as the NIC sends it and an RDMA client reads it.
 *
 * The offloaded GET sends one contiguous region per hit: this header, the
 * key, the value, padding to 8 bytes, and a copy of the stamp. The server's
 * CPU-side item header (LRU links, refcount, slab class) sits in front of
 * this structure and is never sent. All fields are host-endian; the project
 * supports little-endian hosts only (as every RDMA deployment of it does).
 *
 * Items are immutable once published: a mutation writes a new item. The
 * stamp is the item's CAS unique id (never 0); it is written at the head and
 * at the tail before the item is published, and the head stamp is cleared
 * before the memory is freed. A reader accepts an item only if both stamps
 * are equal and non-zero and the key is the one it asked for, so a read that
 * raced with reuse of the memory is detected, never returned.
 */
#ifndef PROTO_ITEM_H
#define PROTO_ITEM_H

#include <stddef.h>
#include <stdint.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "proto/item.h: little-endian hosts only"
#endif

#define RDN_KEY_MAX 250

struct rdn_item {
    uint64_t stamp;   /* CAS unique id of this version; 0 = not valid */
    uint32_t nbytes;  /* value length in bytes (no trailing CRLF) */
    uint32_t flags;   /* client flags */
    uint32_t exptime; /* absolute unix time; 0 = never expires */
    uint16_t nkey;    /* key length, 1..RDN_KEY_MAX */
    uint16_t rsvd;
    /* then: key[nkey], value[nbytes], pad to 8, uint64_t tail stamp */
};

_Static_assert(sizeof(struct rdn_item) == 24, "rdn_item header is 24 B");

/* Returns the bytes of key and value, padded to 8. */
static inline size_t rdn_item_body_len(size_t nkey, size_t nbytes)
{
    return (nkey + nbytes + 7) & ~(size_t)7;
}

/* Bytes of the whole NIC-visible item: header, key, value, pad, tail. */
static inline size_t rdn_item_total_len(size_t nkey, size_t nbytes)
{
    return sizeof(struct rdn_item) + rdn_item_body_len(nkey, nbytes) +
           sizeof(uint64_t);
}

/* Return the key, the value and the tail stamp of it (not checked: a
 * reader checks nkey and nbytes against what it has read first). */
static inline char *rdn_item_key(struct rdn_item *it)
{
    return (char *)(it + 1);
}

static inline char *rdn_item_value(struct rdn_item *it)
{
    return rdn_item_key(it) + it->nkey;
}

static inline uint64_t *rdn_item_tail(struct rdn_item *it)
{
    return (uint64_t *)((char *)(it + 1) +
                        rdn_item_body_len(it->nkey, it->nbytes));
}

#endif /* PROTO_ITEM_H */
