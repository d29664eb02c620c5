/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_tcp.c - `rdn-bench tcp`: GETs over TCP with libmemcached,
 * against this server or any memcached (Debian's stock one included).
 */
#include "config.h"

#include <errno.h>
#include <libmemcached/memcached.h>
#include <stdlib.h>

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
    char host[256];
    int port, rc = bench_kv_server(c, host, sizeof(host), &port);
    memcached_st *mc;

    if (rc < 0)
        return rc;
    mc = memcached_create(NULL);
    if (!mc)
        return -ENOMEM;
    memcached_server_add(mc, host, (in_port_t)port);
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
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

static void tcp_close(void *h)
{
    memcached_free(h);
}

const struct kv_sys kv_sys_tcp = {tcp_open, NULL, tcp_get, tcp_close, false};

int bench_tcp(struct bench_ctx *c)
{
    return bench_kv_run(c, &kv_sys_tcp);
}
