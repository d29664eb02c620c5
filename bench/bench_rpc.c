/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_rpc.c - `rdn-bench rpc-poll` and `rdn-bench rpc-event`: RPC
 * over RDMA (SEND the key, a server thread looks it up through the cache
 * and WRITEs the item back), the server thread polling its CQ or sleeping
 * on it. Needs memcached --rdn-baselines (rdn/baseline/baseline_cli.h).
 */
#include "config.h"

#include <errno.h>

#include "bench/bench_kv.h"
#include "rdn/baseline/baseline_cli.h"

static int rpc_open(struct bench_ctx *c, enum bl_kind kind, void **h)
{
    struct bl_conn *bl = NULL;
    char host[256];
    int port, rc = bench_kv_server(c, host, sizeof(host), &port);

    if (rc == 0)
        rc = bl_connect(host, c->o.bl_port, 0, kind, NULL, &bl);
    if (rc == 0 && c->o.timeout_ms > 0)
        rc = bl_set_timeout(bl, c->o.timeout_ms);
    if (rc < 0) {
        bl_close(bl);
        return rc;
    }
    *h = bl;
    return 0;
}

static int poll_open(struct bench_ctx *c, void **h)
{
    return rpc_open(c, BL_RPC_POLL, h);
}

static int event_open(struct bench_ctx *c, void **h)
{
    return rpc_open(c, BL_RPC_EVENT, h);
}

static int rpc_get(void *h, unsigned idx, const char *key, size_t nkey,
                   struct kv_val *v)
{
    const struct rdn_item *it;
    int rc = bl_get(h, key, nkey, &it);

    (void)idx;
    if (rc == 0) {
        v->p = rdn_item_value((struct rdn_item *)it);
        v->len = it->nbytes;
    }
    return rc;
}

static void rpc_close(void *h)
{
    bl_close(h);
}

/* A failed RPC breaks its connection (rdn/baseline/baseline_cli.h): not
 * healing. */
const struct kv_sys kv_sys_rpc_poll = {poll_open, NULL,  rpc_get,
                                       rpc_close, false, NULL};
const struct kv_sys kv_sys_rpc_event = {event_open, NULL,  rpc_get,
                                        rpc_close,  false, NULL};

int bench_rpc_poll(struct bench_ctx *c)
{
    return bench_kv_run(c, &kv_sys_rpc_poll);
}

int bench_rpc_event(struct bench_ctx *c)
{
    return bench_kv_run(c, &kv_sys_rpc_event);
}
