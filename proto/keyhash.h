/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/keyhash.h - how a key maps to its fingerprint and its two candidate
 * buckets. The server and every RDMA client must compute exactly this, so it
 * is part of the wire contract (the handshake names it "murmur3-x64-128").
 *
 *   h = MurmurHash3_x64_128(key, seed 0) -> two 64-bit halves h1, h2
 *   fp      = (h2 >> 16) & RDN_FP_MASK, or 1 if that is 0
 *   bucket1 = h1 & mask                        (mask = 2^hashpower - 1)
 *   bucket2 = bucket1 ^ rdn_keyhash_alt(fp, mask)
 *
 * rdn_keyhash_alt() depends on the fingerprint only (MemC3's partial-key
 * cuckoo hashing), so a slot can be moved to its other bucket without
 * reading the key, and it always flips bit 0, so bucket1 != bucket2.
 * lock32 is a 32-bit hash for striped locks and statistics.
 */
#ifndef PROTO_KEYHASH_H
#define PROTO_KEYHASH_H

#include <stddef.h>
#include <stdint.h>

#include "proto/table.h"

#define RDN_HASH_NAME "murmur3-x64-128"

struct rdn_keyhash {
    uint64_t fp;      /* 48-bit fingerprint, never 0 */
    uint64_t bucket1; /* first candidate bucket */
    uint64_t bucket2; /* second candidate bucket */
    uint32_t lock32;  /* for lock striping */
};

/* Computes MurmurHash3 x64 128-bit (Austin Appleby's public-domain
 * algorithm) of len bytes at key into out[0] (h1) and out[1] (h2). Pure:
 * any thread. */
void murmur3_x64_128(const void *key, size_t len, uint32_t seed,
                     uint64_t out[2]);

/* The other bucket of a fingerprint: bucket ^ rdn_keyhash_alt(fp, mask). */
static inline uint64_t rdn_keyhash_alt(uint64_t fp, uint64_t mask)
{
    return ((fp * UINT64_C(0xc6a4a7935bd1e995)) >> 17 | 1) & mask;
}

/* Fills *out for a key under a table of 2^hashpower buckets
 * (1 <= hashpower <= 64). Pure: any thread. */
void rdn_keyhash(const void *key, size_t nkey, unsigned hashpower,
                 struct rdn_keyhash *out);

#endif /* PROTO_KEYHASH_H */
