/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/keyhash_dump.c - helper of t/test_keyhash_ref.py: reads lines
 * "hashpower seed hexkey" on stdin and prints, per line,
 * "h1 h2 fp bucket1 bucket2 lock32" in hex (the key hash of the key at
 * that hashpower; h1/h2 with the given seed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/keyhash.h"

static int unhex(const char *hex, unsigned char *out, size_t max, size_t *n)
{
    size_t len = strlen(hex);

    if (len % 2 != 0 || len / 2 > max)
        return -1;
    for (*n = 0; *n < len / 2; (*n)++) {
        unsigned byte;

        if (sscanf(hex + 2 * *n, "%2x", &byte) != 1)
            return -1;
        out[*n] = (unsigned char)byte;
    }
    return 0;
}

int main(void)
{
    char line[2048], hex[1024];
    unsigned hp, seed;

    while (fgets(line, sizeof(line), stdin) != NULL) {
        unsigned char key[512];
        size_t n;
        uint64_t h[2];
        struct rdn_keyhash kh;

        hex[0] = '\0';
        if (sscanf(line, "%u %u %1023s", &hp, &seed, hex) < 2 || hp < 1 ||
            hp > 64 ||
            unhex(strcmp(hex, "-") == 0 ? "" : hex, key, sizeof(key), &n)) {
            fprintf(stderr, "keyhash_dump: bad line: %s", line);
            return 2;
        }
        murmur3_x64_128(key, n, seed, h);
        rdn_keyhash(key, n, hp, &kh);
        printf("%llx %llx %llx %llx %llx %x\n", (unsigned long long)h[0],
               (unsigned long long)h[1], (unsigned long long)kh.fp,
               (unsigned long long)kh.bucket1, (unsigned long long)kh.bucket2,
               kh.lock32);
    }
    return 0;
}
