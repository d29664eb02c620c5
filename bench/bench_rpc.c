/*
 * bench/bench_rpc.c - `rdn-bench rpc-poll` and `rdn-bench rpc-event`: RPC
 * over RDMA (SEND the key, a server thread looks it up through the cache
 * and WRITEs the item back), the server thread polling its CQ or sleeping
 * on it. Needs memcached --rdn-baselines (rdn/baseline_cli.h).
 */
#include "config.h"

#include <errno.h>

#include "bench/bench_kv.h"
#include "rdn/baseline_cli.h"

static int rpc_open(struct bench_ctx *c, enum bl_kind kind, void **h)
{
    char host[256];
    int port, rc = bench_kv_server(c, host, sizeof(host), &port);

    return rc < 0 ? rc
                  : bl_connect(host, c->o.bl_port, 0, kind, NULL,
                               (struct bl_conn **)h);
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

int bench_rpc_poll(struct bench_ctx *c)
{
    static const struct kv_sys sys = {poll_open, NULL, rpc_get, rpc_close};

    return bench_kv_run(c, &sys);
}

int bench_rpc_event(struct bench_ctx *c)
{
    static const struct kv_sys sys = {event_open, NULL, rpc_get, rpc_close};

    return bench_kv_run(c, &sys);
}
