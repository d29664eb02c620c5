#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/test_keyhash_ref.py - the C key hash against an independent Python
implementation of MurmurHash3 x64-128 and of the rules in proto/keyhash.h,
on random keys of every length from 0 to 300 bytes and random hashpowers.
"""
import os
import random
import subprocess
import sys

M64 = (1 << 64) - 1
FP_MASK = (1 << 48) - 1


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def fmix(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    return k ^ (k >> 33)


def murmur3_x64_128(data, seed):
    c1, c2 = 0x87C37B91114253D5, 0x4CF5AD432745937F
    h1 = h2 = seed
    nblocks = len(data) // 16
    for i in range(nblocks):
        k1 = int.from_bytes(data[16 * i:16 * i + 8], "little")
        k2 = int.from_bytes(data[16 * i + 8:16 * i + 16], "little")
        h1 ^= (rotl((k1 * c1) & M64, 31) * c2) & M64
        h1 = (rotl(h1, 27) + h2) & M64
        h1 = (h1 * 5 + 0x52DCE729) & M64
        h2 ^= (rotl((k2 * c2) & M64, 33) * c1) & M64
        h2 = (rotl(h2, 31) + h1) & M64
        h2 = (h2 * 5 + 0x38495AB5) & M64
    tail = data[16 * nblocks:]
    if len(tail) > 8:
        k2 = int.from_bytes(tail[8:], "little")
        h2 ^= (rotl((k2 * c2) & M64, 33) * c1) & M64
    if tail:
        k1 = int.from_bytes(tail[:8], "little")
        h1 ^= (rotl((k1 * c1) & M64, 31) * c2) & M64
    h1 ^= len(data)
    h2 ^= len(data)
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    h1, h2 = fmix(h1), fmix(h2)
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    return h1, h2


def keyhash(data, hashpower, seed):
    h1, h2 = murmur3_x64_128(data, seed)
    k1, k2 = murmur3_x64_128(data, 0)
    mask = (1 << hashpower) - 1
    fp = (k2 >> 16) & FP_MASK or 1
    alt = ((((fp * 0xC6A4A7935BD1E995) & M64) >> 17) | 1) & mask
    b1 = k1 & mask
    return h1, h2, fp, b1, b1 ^ alt, (k1 >> 32) & 0xFFFFFFFF


def main():
    builddir = os.environ.get("top_builddir", ".")
    prog = os.path.join(builddir, "t", "keyhash_dump")
    rng = random.Random(20240611)
    cases = []
    for length in list(range(0, 301)) * 3:
        data = bytes(rng.getrandbits(8) for _ in range(length))
        cases.append((rng.randint(1, 64), rng.choice([0, 1, 0x9747B28C,
                                                      rng.getrandbits(32)]),
                      data))
    cases.append((16, 0, b"The quick brown fox jumps over the lazy dog"))
    lines = "".join("%d %d %s\n" % (hp, seed, data.hex() or "-")
                    for hp, seed, data in cases)
    out = subprocess.run([prog], input=lines, capture_output=True, text=True,
                         timeout=60, check=True).stdout.split("\n")
    passed = failed = 0
    mismatches = 0
    if len(out) - 1 != len(cases):
        mismatches += 1
        print("keyhash_dump printed %d lines for %d keys" %
              (len(out) - 1, len(cases)))
    for (hp, seed, data), line in zip(cases, out):
        got = tuple(int(x, 16) for x in line.split())
        want = keyhash(data, hp, seed)
        if got != want:
            mismatches += 1
            print("MISMATCH len=%d hp=%d seed=%d: got %s want %s" %
                  (len(data), hp, seed, [hex(x) for x in got],
                   [hex(x) for x in want]))
    print("%d random keys compared, %d mismatches" % (len(cases), mismatches))
    if mismatches:
        failed += 1
    else:
        passed += 1
    # The published reference value for the fox string, seed 0.
    fox = murmur3_x64_128(b"The quick brown fox jumps over the lazy dog", 0)
    if fox == (0xE34BBC7BBC071B6C, 0x7A433CA9C49A9347):
        passed += 1
    else:
        failed += 1
        print("python reference disagrees with the published fox vector")
    print("tally: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
