/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_keys.c - the keys of rdn-bench's key-value modes, and where
 * they land in the server's cuckoo table (the collision experiment).
 *
 * The server puts a new key in the first free slot of its first candidate
 * bucket, else of its second (memcached/assoc.c). So, on a table with room
 * elsewhere, the keys stored before a measured key decide its place:
 *   first   plain keys: each lands in its first bucket;
 *   second  four keys sharing the measured key's first bucket are stored
 *           before it: the bucket is full, the key goes to its second;
 *   full    the key is stored first, then three keys sharing its first
 *           bucket: it is found in a full bucket.
 * Keys sharing a bucket are found by hashing candidates as the server does
 * (proto/keyhash.h) under the table's hashpower (asked on --rdn-port).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_kv.h"
#include "proto/keyhash.h"
#include "rdn/baseline/baseline_cli.h"

#define MAX_HASHPOWER 22 /* candidates: two per bucket */

struct cand {
    uint64_t bucket;
    unsigned n;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->n < y->n ? -1 : x->n > y->n;
}

static void cand_name(const struct bench_ctx *c, unsigned n, char *out)
{
    snprintf(out, KV_KEY_MAX, "rc:%u:%u", c->o.value_size, n);
}

static int keys_alloc(struct kv_keys *k, unsigned n, unsigned nmeasured)
{
    k->name = calloc(n, sizeof(*k->name));
    k->measured = calloc(nmeasured, sizeof(*k->measured));
    k->n = 0;
    k->nmeasured = 0;
    return k->name && k->measured ? 0 : -ENOMEM;
}

static void add(struct kv_keys *k, const char *name, bool measured)
{
    if (measured)
        k->measured[k->nmeasured++] = k->n;
    snprintf(k->name[k->n++], KV_KEY_MAX, "%s", name);
}

/* Groups of `group` candidates sharing a first bucket, in store order. */
static int grouped(const struct bench_ctx *c, unsigned hp, struct kv_keys *k)
{
    unsigned group = c->o.placement == KV_PLACE_SECOND ? 5 : 4;
    size_t ncand = (size_t)2 << hp;
    struct cand *cs = calloc(ncand, sizeof(*cs));
    char name[KV_KEY_MAX];
    int rc = cs ? keys_alloc(k, c->o.keys * group, c->o.keys) : -ENOMEM;

    for (size_t i = 0; rc == 0 && i < ncand; i++) {
        struct rdn_keyhash kh;

        cand_name(c, (unsigned)i, name);
        rdn_keyhash(name, strlen(name), hp, &kh);
        cs[i] =
            (struct cand){kh.bucket1 & (((uint64_t)1 << hp) - 1), (unsigned)i};
    }
    if (rc == 0)
        qsort(cs, ncand, sizeof(*cs), cand_cmp);
    for (size_t i = 0;
         rc == 0 && i + group <= ncand && k->nmeasured < c->o.keys;) {
        size_t j = i;

        while (j < ncand && cs[j].bucket == cs[i].bucket)
            j++;
        if (j - i >= group) {
            for (unsigned g = 0; g < group; g++) {
                /* second: the last one is measured; full: the first */
                bool m =
                    c->o.placement == KV_PLACE_SECOND ? g == group - 1 : g == 0;

                cand_name(c, cs[i + g].n, name);
                add(k, name, m);
            }
        }
        i = j;
    }
    free(cs);
    if (rc == 0 && k->nmeasured < c->o.keys)
        rc = -ENOSPC;
    return rc;
}

int kv_keys_make(const struct bench_ctx *c, const char *host, struct kv_keys *k)
{
    struct rdn_geometry g;
    char name[KV_KEY_MAX];
    int rc;

    memset(k, 0, sizeof(*k));
    if (c->o.placement == KV_PLACE_FIRST) {
        rc = keys_alloc(k, c->o.keys, c->o.keys);
        for (unsigned i = 0; rc == 0 && i < c->o.keys; i++) {
            snprintf(name, sizeof(name), "rb:%u:%u", c->o.value_size, i);
            add(k, name, true);
        }
        return rc;
    }
    rc = c->o.rdn_port > 0 ? bl_geometry(host, c->o.rdn_port, &g) : -EINVAL;
    if (rc == 0 && g.hashpower > MAX_HASHPOWER)
        rc = -ERANGE;
    if (rc == 0)
        rc = grouped(c, g.hashpower, k);
    if (rc < 0)
        fprintf(stderr, "rdn-bench: cannot place keys: %s\n", strerror(-rc));
    return rc;
}

void kv_keys_free(struct kv_keys *k)
{
    free(k->name);
    free(k->measured);
    memset(k, 0, sizeof(*k));
}
