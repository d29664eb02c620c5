/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/murmur3.c - MurmurHash3, x64 128-bit variant, written from the
 * algorithm's public description (Austin Appleby, public domain). Blocks
 * are read little-endian, which is the host order (proto/item.h refuses
 * big-endian hosts).
 */
#include <string.h>

#include "proto/keyhash.h"

#define MURMUR_C1 UINT64_C(0x87c37b91114253d5)
#define MURMUR_C2 UINT64_C(0x4cf5ad432745937f)

static inline uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

/* The finalisation mix: forces every input bit to affect every output bit. */
static inline uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    k ^= k >> 33;
    return k;
}

static inline uint64_t mix_k1(uint64_t k1)
{
    k1 *= MURMUR_C1;
    k1 = rotl64(k1, 31);
    return k1 * MURMUR_C2;
}

static inline uint64_t mix_k2(uint64_t k2)
{
    k2 *= MURMUR_C2;
    k2 = rotl64(k2, 33);
    return k2 * MURMUR_C1;
}

/* The 0..15 trailing bytes as a little-endian number (bytes lo..hi-1). */
static inline uint64_t tail_word(const uint8_t *tail, size_t lo, size_t hi)
{
    uint64_t k = 0;

    for (size_t i = hi; i > lo; i--)
        k = k << 8 | tail[i - 1];
    return k;
}

void murmur3_x64_128(const void *key, size_t len, uint32_t seed,
                     uint64_t out[2])
{
    const uint8_t *data = key;
    size_t nblocks = len / 16;
    uint64_t h1 = seed, h2 = seed;

    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1, k2;

        memcpy(&k1, data + i * 16, 8);
        memcpy(&k2, data + i * 16 + 8, 8);
        h1 ^= mix_k1(k1);
        h1 = rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        h2 ^= mix_k2(k2);
        h2 = rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }

    const uint8_t *tail = data + nblocks * 16;
    size_t rest = len & 15;

    if (rest > 8)
        h2 ^= mix_k2(tail_word(tail, 8, rest));
    if (rest > 0)
        h1 ^= mix_k1(tail_word(tail, 0, rest < 8 ? rest : 8));

    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    h2 += h1;
    out[0] = h1;
    out[1] = h2;
}
