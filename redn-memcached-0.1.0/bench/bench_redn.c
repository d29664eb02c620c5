/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_redn.c - the offloaded GET through librdn (rdn/librdn/client.h):
 *
 *   kv_sys_redn      `rdn-bench redn`: the TCP fallback off, so every
 *                    answer timed is one the server's NIC gave (an answer
 *                    the library could not verify is an error here, not a
 *                    silent TCP GET);
 *   kv_sys_redn_app  librdn as an application uses it: the fallback on,
 *                    the library rebuilding a broken RDMA path by itself;
 *                    each answer says whether the NIC gave it (the crash
 *                    experiment counts GETs the NIC served while the server
 *                    process was dead).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "bench/bench_kv.h"
#include "rdn/librdn/client.h"

static int redn_connect(struct bench_ctx *c, int no_fallback, void **h)
{
    struct rdn_opts o = {.no_fallback = no_fallback,
                         .timeout_ms =
                             c->o.timeout_ms > 0 ? c->o.timeout_ms : 0,
                         .search_seq = c->o.search_seq};
    char host[256];
    int port, rc = bench_kv_server(c, host, sizeof(host), &port);

    if (rc == 0 && c->o.rdn_port <= 0)
        rc = -EINVAL;
    if (rc == 0)
        rc = rdn_connect_opts(host, c->o.rdn_port, port, &o,
                              (struct rdn_conn **)h);
    return rc;
}

static int nic_only_open(struct bench_ctx *c, void **h)
{
    return redn_connect(c, 1, h);
}

static int app_open(struct bench_ctx *c, void **h)
{
    return redn_connect(c, 0, h);
}

static int app_get(void *h, unsigned idx, const char *key, size_t nkey,
                   struct kv_val *v)
{
    char *val = NULL;
    int rc = rdn_get(h, key, nkey, &val, &v->len, NULL, NULL);

    (void)idx;
    v->p = val;
    v->owned = val;
    v->nic = rdn_last_source(h) == RDN_SRC_NIC;
    return rc;
}

static int nic_only_get(void *h, unsigned idx, const char *key, size_t nkey,
                        struct kv_val *v)
{
    int rc = app_get(h, idx, key, nkey, v);

    return rc == 0 && !v->nic ? -EPROTO : rc;
}

static void redn_close(void *h)
{
    rdn_close(h);
}

const struct kv_sys kv_sys_redn = {nic_only_open, NULL, nic_only_get,
                                   redn_close, true};
const struct kv_sys kv_sys_redn_app = {app_open, NULL, app_get, redn_close,
                                       true};

int bench_redn(struct bench_ctx *c)
{
    return bench_kv_run(c, &kv_sys_redn);
}
