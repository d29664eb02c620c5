/*
 * bench/bench_redn.c - `rdn-bench redn`: the offloaded GET through librdn
 * (rdn/client.h) with the TCP fallback off, so every answer timed is one
 * the server's NIC gave (an answer the library could not verify is an
 * error here, not a silent TCP GET).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "bench/bench_kv.h"
#include "rdn/client.h"

static int redn_open(struct bench_ctx *c, void **h)
{
    struct rdn_opts o = {.no_fallback = 1};
    char host[256];
    int port, rc = bench_kv_server(c, host, sizeof(host), &port);

    if (rc == 0 && c->o.rdn_port <= 0)
        rc = -EINVAL;
    if (rc == 0)
        rc = rdn_connect_opts(host, c->o.rdn_port, port, &o,
                              (struct rdn_conn **)h);
    return rc;
}

static int redn_get(void *h, unsigned idx, const char *key, size_t nkey,
                    struct kv_val *v)
{
    char *val = NULL;
    int rc = rdn_get(h, key, nkey, &val, &v->len, NULL, NULL);

    (void)idx;
    v->p = val;
    v->owned = val;
    if (rc == 0 && rdn_last_source(h) != RDN_SRC_NIC)
        rc = -EPROTO;
    return rc;
}

static void redn_close(void *h)
{
    rdn_close(h);
}

int bench_redn(struct bench_ctx *c)
{
    static const struct kv_sys sys = {redn_open, NULL, redn_get, redn_close};

    return bench_kv_run(c, &sys);
}
