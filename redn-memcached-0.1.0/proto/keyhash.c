/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/keyhash.c - a key's fingerprint and candidate buckets, exactly as
 * proto/keyhash.h defines them (the wire contract with RDMA clients).
 */
#include "proto/keyhash.h"

/* 2^hashpower - 1; hashpower 64 gives every bit. */
static inline uint64_t bucket_mask(unsigned hashpower)
{
    return hashpower >= 64 ? UINT64_MAX : (UINT64_C(1) << hashpower) - 1;
}

void rdn_keyhash(const void *key, size_t nkey, unsigned hashpower,
                 struct rdn_keyhash *out)
{
    uint64_t h[2];
    uint64_t mask = bucket_mask(hashpower);

    murmur3_x64_128(key, nkey, 0, h);
    out->fp = (h[1] >> 16) & RDN_FP_MASK;
    if (out->fp == 0)
        out->fp = 1;
    out->bucket1 = h[0] & mask;
    out->bucket2 = out->bucket1 ^ rdn_keyhash_alt(out->fp, mask);
    out->lock32 = (uint32_t)(h[0] >> 32);
}
