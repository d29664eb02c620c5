/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_murmur3.c - MurmurHash3 x64-128 against reference vectors and the
 * key hash rules of proto/keyhash.h.
 *
 * The vectors were computed with an independent Python implementation
 * written from the algorithm's definition; its output for the "quick brown
 * fox" string matches the value published for the reference
 * implementation. t/test_keyhash_ref.py repeats the comparison live on
 * random keys.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/keyhash.h"
#include "t/support/testutil.h"

struct vector {
    const char *key;
    size_t len;
    uint32_t seed;
    uint64_t h[2];
};

static const struct vector vectors[] = {
    {"",
     0,
     0x00000000u,
     {UINT64_C(0x0000000000000000), UINT64_C(0x0000000000000000)}},
    {"",
     0,
     0x00000001u,
     {UINT64_C(0x4610abe56eff5cb5), UINT64_C(0x51622daa78f83583)}},
    {"a",
     1,
     0x00000000u,
     {UINT64_C(0x85555565f6597889), UINT64_C(0xe6b53a48510e895a)}},
    {"hello",
     5,
     0x00000000u,
     {UINT64_C(0xcbd8a7b341bd9b02), UINT64_C(0x5b1e906a48ae1d19)}},
    {"hello",
     5,
     0x0000002au,
     {UINT64_C(0xc4b8b3c960af6f08), UINT64_C(0x2334b875b0efbc7a)}},
    {"The quick brown fox jumps over the lazy dog",
     43,
     0x00000000u,
     {UINT64_C(0xe34bbc7bbc071b6c), UINT64_C(0x7a433ca9c49a9347)}},
    {"\x0b\x30\x55\x7a\x9f\xc4\xe9",
     7,
     0x9747b28cu,
     {UINT64_C(0xaf122a691307450f), UINT64_C(0x419517b84a66f1fd)}},
    {"\x0b\x30\x55\x7a\x9f\xc4\xe9\x0e",
     8,
     0x9747b28cu,
     {UINT64_C(0xd8c61819ff0e5aa4), UINT64_C(0x42fb2f4854e50b63)}},
    {"\x0b\x30\x55\x7a\x9f\xc4\xe9\x0e\x33",
     9,
     0x9747b28cu,
     {UINT64_C(0x6a9d1bd1ef809a06), UINT64_C(0x270737178fda89ed)}},
    {"\x0b\x30\x55\x7a\x9f\xc4\xe9\x0e\x33\x58\x7d\xa2\xc7\xec\x11",
     15,
     0x9747b28cu,
     {UINT64_C(0x335f5087d2c8cc58), UINT64_C(0x3041cdcbb287c4c5)}},
    {"\x0b\x30\x55\x7a\x9f\xc4\xe9\x0e\x33\x58\x7d\xa2\xc7\xec\x11\x36",
     16,
     0x9747b28cu,
     {UINT64_C(0xf000e3ed91b0ee1c), UINT64_C(0xa98aa8ff5d8a4c22)}},
    {"\x0b\x30\x55\x7a\x9f\xc4\xe9\x0e\x33\x58\x7d\xa2\xc7\xec\x11\x36\x5b",
     17,
     0x9747b28cu,
     {UINT64_C(0xed5790939ce6c481), UINT64_C(0x16d479de0bb57a3b)}},
    {"\x0b\x30\x55\x7a\x9f\xc4\xe9\x0e\x33\x58\x7d\xa2\xc7\xec\x11\x36\x5b\x80"
     "\xa5\xca\xef\x14\x39\x5e\x83\xa8\xcd\xf2\x17\x3c\x61",
     31,
     0x9747b28cu,
     {UINT64_C(0xfd937d733e2b266e), UINT64_C(0x868f6285d1a68169)}},
    {"\x0b\x30\x55\x7a\x9f\xc4\xe9\x0e\x33\x58\x7d\xa2\xc7\xec\x11\x36\x5b\x80"
     "\xa5\xca\xef\x14\x39\x5e\x83\xa8\xcd\xf2\x17\x3c\x61\x86",
     32,
     0x9747b28cu,
     {UINT64_C(0xef55560a038dd28f), UINT64_C(0xf656da744b64242c)}},
    {"\x0b\x30\x55\x7a\x9f\xc4\xe9\x0e\x33\x58\x7d\xa2\xc7\xec\x11\x36\x5b\x80"
     "\xa5\xca\xef\x14\x39\x5e\x83\xa8\xcd\xf2\x17\x3c\x61\x86\xab",
     33,
     0x9747b28cu,
     {UINT64_C(0xdf8ff14bc2ca0d4c), UINT64_C(0x3568941c7a9c1896)}},
    {"\x0b\x30\x55\x7a\x9f\xc4\xe9\x0e\x33\x58\x7d\xa2\xc7\xec\x11\x36\x5b\x80"
     "\xa5\xca\xef\x14\x39\x5e\x83\xa8\xcd\xf2\x17\x3c\x61\x86\xab\xd0\xf5\x1a"
     "\x3f\x64\x89\xae",
     40,
     0x9747b28cu,
     {UINT64_C(0x9b8dc4a170c1c1cf), UINT64_C(0x5663dc06c715bc4a)}},
};

START_TEST(test_vectors)
{
    const struct vector *v = &vectors[_i];
    uint64_t h[2];

    murmur3_x64_128(v->key, v->len, v->seed, h);
    ck_assert_uint_eq(h[0], v->h[0]);
    ck_assert_uint_eq(h[1], v->h[1]);
}
END_TEST

/* Unaligned input must hash like aligned input (blocks are memcpy'd). */
START_TEST(test_unaligned)
{
    const struct vector *v = &vectors[5]; /* the fox: 2 blocks + tail */
    char buf[64];
    uint64_t h[2];

    memcpy(buf + 3, v->key, v->len);
    murmur3_x64_128(buf + 3, v->len, v->seed, h);
    ck_assert_uint_eq(h[0], v->h[0]);
    ck_assert_uint_eq(h[1], v->h[1]);
}
END_TEST

static void key_of(unsigned i, char *buf, size_t *len)
{
    *len = (size_t)snprintf(buf, 64, "key:%u:%x", i, i * 2654435761u);
}

/* fp, buckets and lock32 follow the formulas of proto/keyhash.h. */
START_TEST(test_keyhash_formulas)
{
    for (unsigned i = 0; i < 20000; i++) {
        char key[64];
        size_t len;
        uint64_t h[2];
        struct rdn_keyhash kh;
        unsigned hp = 1 + i % 64;
        uint64_t mask = hp == 64 ? UINT64_MAX : (UINT64_C(1) << hp) - 1;
        uint64_t fp;

        key_of(i, key, &len);
        murmur3_x64_128(key, len, 0, h);
        rdn_keyhash(key, len, hp, &kh);
        fp = (h[1] >> 16) & RDN_FP_MASK;
        REQUIRE(kh.fp == (fp != 0 ? fp : 1));
        REQUIRE(kh.fp != 0);
        REQUIRE(kh.fp <= RDN_FP_MASK);
        REQUIRE(kh.bucket1 == (h[0] & mask));
        REQUIRE(kh.bucket2 <= mask);
        REQUIRE(kh.bucket1 != kh.bucket2);
        REQUIRE(((kh.bucket1 ^ kh.bucket2) & 1) == 1);
        /* alt is symmetric: from either bucket it leads to the other. */
        REQUIRE((kh.bucket2 ^ rdn_keyhash_alt(kh.fp, mask)) == kh.bucket1);
        REQUIRE(kh.lock32 == (uint32_t)(h[0] >> 32));
    }
}
END_TEST

/*
 * Hashing at a large hashpower and masking gives the buckets of a small
 * hashpower: the server hashes once at 64 bits and reduces per table.
 */
START_TEST(test_keyhash_reduces)
{
    for (unsigned i = 0; i < 5000; i++) {
        char key[64];
        size_t len;
        struct rdn_keyhash big, small;
        unsigned hp = 1 + i % 40;
        uint64_t mask = (UINT64_C(1) << hp) - 1;

        key_of(i, key, &len);
        rdn_keyhash(key, len, 64, &big);
        rdn_keyhash(key, len, hp, &small);
        REQUIRE(big.fp == small.fp);
        REQUIRE((big.bucket1 & mask) == small.bucket1);
        REQUIRE((big.bucket2 & mask) == small.bucket2);
        REQUIRE(big.lock32 == small.lock32);
    }
}
END_TEST

/* The alternate bucket always flips bit 0, for every fingerprint. */
START_TEST(test_alt_flips_bit0)
{
    for (uint64_t fp = 1; fp < 100000; fp += 7)
        for (unsigned hp = 1; hp <= 64; hp += 9) {
            uint64_t mask = hp == 64 ? UINT64_MAX : (UINT64_C(1) << hp) - 1;

            REQUIRE((rdn_keyhash_alt(fp, mask) & 1) == 1);
            REQUIRE(rdn_keyhash_alt(fp, mask) <= mask);
        }
}
END_TEST

/* Fingerprints and buckets spread: no pathological clustering. */
START_TEST(test_keyhash_spread)
{
    enum { N = 1 << 16, HP = 8 };
    unsigned counts[1 << HP] = {0};

    for (unsigned i = 0; i < N; i++) {
        char key[64];
        size_t len;
        struct rdn_keyhash kh;

        key_of(i, key, &len);
        rdn_keyhash(key, len, HP, &kh);
        counts[kh.bucket1]++;
    }
    for (unsigned b = 0; b < (1u << HP); b++) { /* mean 256, sd 16 */
        REQUIRE(counts[b] > (256 - 96));
        REQUIRE(counts[b] < (256 + 96));
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("murmur3");
    TCase *tc = tcase_create("core");

    tcase_add_loop_test(tc, test_vectors, 0,
                        sizeof(vectors) / sizeof(vectors[0]));
    tcase_add_test(tc, test_unaligned);
    tcase_add_test(tc, test_keyhash_formulas);
    tcase_add_test(tc, test_keyhash_reduces);
    tcase_add_test(tc, test_alt_flips_bit0);
    tcase_add_test(tc, test_keyhash_spread);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
