/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_tcp.c - `rdn-bench tcp`: GETs over TCP with libmemcached,
 * against this server or any memcached (Debian's stock one included).
 */
#include "config.h"

#include <errno.h>
#include <libmemcached/memcached.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_kv.h"

/* Bounds every wait (connect, send, receive) by ms milliseconds. */
static void tcp_timeouts(memcached_st *mc, int ms)
{
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
                           (uint64_t)ms);
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, (uint64_t)ms);
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_RCV_TIMEOUT,
                           (uint64_t)ms * 1000);
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_SND_TIMEOUT,
                           (uint64_t)ms * 1000);
}

static int tcp_open(struct bench_ctx *c, void **h)
{
    memcached_st *mc = bench_kv_memc(c);

    if (!mc)
        return -EINVAL;
    if (c->o.timeout_ms > 0)
        tcp_timeouts(mc, c->o.timeout_ms);
    *h = mc;
    return 0;
}

static int tcp_get(void *h, unsigned idx, const char *key, size_t nkey,
                   struct kv_val *v)
{
    memcached_return_t rc;
    uint32_t flags;
    char *val = memcached_get(h, key, nkey, &v->len, &flags, &rc);

    (void)idx;
    if (!val)
        return rc == MEMCACHED_NOTFOUND ? -ENOENT : -EIO;
    v->p = val;
    v->owned = val;
    return 0;
}

/* libmemcached's multi-get: every server asked at once, the answers
 * matched to the keys by name. */
static int tcp_mget(void *h, unsigned n, const char *const *keys,
                    const size_t *lens, struct kv_val *v, int *rcs)
{
    memcached_result_st *res;
    memcached_return_t rc = memcached_mget(h, keys, lens, n);

    if (rc != MEMCACHED_SUCCESS)
        return -EIO;
    for (unsigned i = 0; i < n; i++) {
        v[i] = (struct kv_val){0};
        rcs[i] = -ENOENT;
    }
    while ((res = memcached_fetch_result(h, NULL, &rc))) {
        const char *k = memcached_result_key_value(res);
        size_t kl = memcached_result_key_length(res);

        for (unsigned i = 0; i < n; i++)
            if (rcs[i] == -ENOENT && lens[i] == kl &&
                memcmp(keys[i], k, kl) == 0) {
                v[i].len = memcached_result_length(res);
                v[i].owned = malloc(v[i].len + 1);
                v[i].p = v[i].owned;
                rcs[i] = v[i].owned ? 0 : -ENOMEM;
                if (v[i].owned)
                    memcpy(v[i].owned, memcached_result_value(res), v[i].len);
                break;
            }
        memcached_result_free(res);
    }
    return 0;
}

static void tcp_close(void *h)
{
    memcached_free(h);
}

const struct kv_sys kv_sys_tcp = {tcp_open,  NULL,  tcp_get,
                                  tcp_close, false, tcp_mget};

int bench_tcp(struct bench_ctx *c)
{
    return bench_kv_run(c, &kv_sys_tcp);
}
