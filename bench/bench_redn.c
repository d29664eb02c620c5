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
 *
 * A GET copies its value into one buffer the connection's thread reuses
 * (rdn_get_value()), as an application that cares about speed does, and as
 * the bench gives the baselines' values (kv_data_fetch()).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_kv.h"
#include "rdn/librdn/client.h"

/* A connection and the buffer its GETs reuse. */
struct redn_h {
    struct rdn_conn *conn;
    struct rdn_value v;
    bool said; /* why the NIC could not answer, said once */
};

static int redn_connect(struct bench_ctx *c, int no_fallback,
                        struct rdn_conn **conn)
{
    struct rdn_opts o =
        RDN_OPTS(.no_fallback = no_fallback,
                 .timeout_ms = c->o.timeout_ms > 0 ? c->o.timeout_ms : 0,
                 .search_seq = c->o.search_seq);
    char host[256];
    int port, rc;

    if (c->o.servers) /* every server's RDMA port from its stats */
        return rdn_connect_config(c->o.servers, &o, conn, NULL, 0);
    rc = bench_kv_server(c, host, sizeof(host), &port);
    if (rc == 0 && c->o.rdn_port <= 0)
        rc = -EINVAL;
    if (rc == 0)
        rc = rdn_connect_opts(host, c->o.rdn_port, port, &o, conn);
    return rc;
}

static int redn_open(struct bench_ctx *c, int no_fallback, void **h)
{
    struct redn_h *r = calloc(1, sizeof(*r));
    int rc = r ? redn_connect(c, no_fallback, &r->conn) : -ENOMEM;

    if (rc < 0) {
        free(r);
        return rc;
    }
    *h = r;
    return 0;
}

static int nic_only_open(struct bench_ctx *c, void **h)
{
    return redn_open(c, 1, h);
}

static int app_open(struct bench_ctx *c, void **h)
{
    return redn_open(c, 0, h);
}

static int app_get(void *h, unsigned idx, const char *key, size_t nkey,
                   struct kv_val *v)
{
    struct redn_h *r = h;
    int rc = rdn_get_value(r->conn, key, nkey, &r->v);

    (void)idx;
    v->p = r->v.buf;
    v->len = r->v.len;
    v->copied = true; /* the application's buffer already */
    v->nic = r->v.src == RDN_SRC_NIC;
    return rc;
}

static int nic_only_get(void *h, unsigned idx, const char *key, size_t nkey,
                        struct kv_val *v)
{
    struct redn_h *r = h;
    int rc = app_get(h, idx, key, nkey, v);

    if (rc == -EAGAIN && !r->said) { /* the run fails: say why, once */
        fprintf(stderr, "rdn-bench: redn: the NIC could not answer: %s\n",
                rdn_last_reason(r->conn));
        r->said = true;
    }

    return rc == 0 && !v->nic ? -EPROTO : rc;
}

/* One rdn_mget(): every key's server's NIC at once. */
static int mget(void *h, unsigned n, const char *const *keys,
                const size_t *lens, struct kv_val *v, int *rcs, bool nic_only)
{
    struct redn_h *r = h;
    struct rdn_result res[KV_BATCH_MAX];
    int rc = n > KV_BATCH_MAX ? -EINVAL : rdn_mget(r->conn, n, keys, lens, res);

    for (unsigned i = 0; rc == 0 && i < n; i++) {
        v[i] = (struct kv_val){.p = res[i].value,
                               .len = res[i].len,
                               .owned = res[i].value,
                               .nic = res[i].src == RDN_SRC_NIC};
        rcs[i] = nic_only && res[i].status == 0 && !v[i].nic ? -EPROTO
                                                             : res[i].status;
    }
    return rc;
}

static int app_mget(void *h, unsigned n, const char *const *keys,
                    const size_t *lens, struct kv_val *v, int *rcs)
{
    return mget(h, n, keys, lens, v, rcs, false);
}

static int nic_only_mget(void *h, unsigned n, const char *const *keys,
                         const size_t *lens, struct kv_val *v, int *rcs)
{
    return mget(h, n, keys, lens, v, rcs, true);
}

static void redn_close(void *h)
{
    struct redn_h *r = h;

    rdn_close(r->conn);
    rdn_value_free(&r->v);
    free(r);
}

const struct kv_sys kv_sys_redn = {nic_only_open, NULL, nic_only_get,
                                   redn_close,    true, nic_only_mget};
const struct kv_sys kv_sys_redn_app = {app_open,   NULL, app_get,
                                       redn_close, true, app_mget};

int bench_redn(struct bench_ctx *c)
{
    return bench_kv_run(c, &kv_sys_redn);
}
