/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_onesided.c - `rdn-bench onesided` (FaRM-style: READ both
 * candidate buckets, then the item) and `rdn-bench ideal` (one READ of an
 * item whose place the client learnt beforehand: the least a remote GET
 * can cost). Both need memcached --rdn-baselines (rdn/baseline/baseline_cli.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "bench/bench_kv.h"
#include "rdn/baseline/baseline_cli.h"

/* A one-sided connection and, for ideal, where each key's item is. */
struct os_h {
    struct bl_conn *bl;
    struct bl_loc *loc;
};

static int os_open(struct bench_ctx *c, void **h)
{
    struct os_h *o = calloc(1, sizeof(*o));
    char host[256];
    int port, rc = o ? bench_kv_server(c, host, sizeof(host), &port) : -ENOMEM;

    if (rc == 0)
        o->loc = calloc(c->o.keys, sizeof(*o->loc));
    if (rc == 0 && !o->loc)
        rc = -ENOMEM;
    if (rc == 0)
        rc = bl_connect(host, c->o.bl_port, c->o.rdn_port, BL_ONESIDED, NULL,
                        &o->bl);
    if (rc < 0) {
        if (o)
            free(o->loc);
        free(o);
        return rc;
    }
    *h = o;
    return 0;
}

static void os_value(const struct rdn_item *it, struct kv_val *v)
{
    v->p = rdn_item_value((struct rdn_item *)it);
    v->len = it->nbytes;
}

static int os_get(void *h, unsigned idx, const char *key, size_t nkey,
                  struct kv_val *v)
{
    struct os_h *o = h;
    const struct rdn_item *it;
    int rc = bl_get(o->bl, key, nkey, &it);

    (void)idx;
    if (rc == 0)
        os_value(it, v);
    return rc;
}

/* ideal: finds the item once, then each GET is one READ of it. */
static int ideal_prepare(void *h, unsigned idx, const char *key, size_t nkey)
{
    struct os_h *o = h;
    const struct rdn_item *it;
    int rc = bl_get(o->bl, key, nkey, &it);

    return rc < 0 ? rc : bl_last_loc(o->bl, &o->loc[idx]);
}

static int ideal_get(void *h, unsigned idx, const char *key, size_t nkey,
                     struct kv_val *v)
{
    struct os_h *o = h;
    const struct rdn_item *it;
    int rc = bl_read(o->bl, &o->loc[idx], &it);

    (void)key;
    (void)nkey;
    if (rc == 0)
        os_value(it, v);
    return rc;
}

static void os_close(void *h)
{
    struct os_h *o = h;

    bl_close(o->bl);
    free(o->loc);
    free(o);
}

int bench_onesided(struct bench_ctx *c)
{
    static const struct kv_sys sys = {os_open,  NULL,  os_get,
                                      os_close, false, NULL};

    return bench_kv_run(c, &sys);
}

int bench_ideal(struct bench_ctx *c)
{
    static const struct kv_sys sys = {os_open,  ideal_prepare, ideal_get,
                                      os_close, false,         NULL};

    return bench_kv_run(c, &sys);
}
