/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/bl_glue.c - the cache's side of the RDMA baselines (see
 * bl_glue.h): the RPC threads look keys up with item_get(), as a GET
 * over TCP does (it counts in get_hits / get_misses and bumps the LRU),
 * and hold the item's reference until its WRITE left the NIC.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/bl_glue.h"
#include "memcached/rdn_glue.h"
#include "memcached/items.h"
#include "rdn/baseline/baseline_srv.h"

static struct {
    int port; /* 0: off */
    struct bl_srv *srv;
} bl;

int bl_glue_option(const char *value)
{
    char *end;
    long v = strtol(value, &end, 10);

    if (end == value || *end || v < 1 || v > 65535)
        return -EINVAL;
    bl.port = (int)v;
    return 0;
}

bool bl_glue_enabled(void)
{
    return bl.port != 0;
}

static const struct rdn_item *cache_get(void *ctx, const char *key, size_t nkey,
                                        void **ref)
{
    struct item *it = item_get(key, nkey, FETCH_BUMP, 0);

    (void)ctx;
    *ref = it;
    return it ? &it->nic : NULL;
}

static void cache_put(void *ctx, void *ref)
{
    (void)ctx;
    item_release(ref);
}

int bl_glue_init(struct rnic_device *dev)
{
    static const struct bl_cache_ops ops = {.get = cache_get, .put = cache_put};

    if (!bl.port)
        return 0;
    return bl_srv_open(dev, rdn_glue_listen_addr(), bl.port, &ops, &bl.srv);
}

void bl_glue_expose(void *addr, size_t len)
{
    int rc;

    if (!bl.srv || !addr)
        return;
    rc = bl_srv_expose(bl.srv, addr, len);
    if (rc < 0)
        fprintf(stderr, "rdn baselines: cannot expose %zu bytes: %s\n", len,
                strerror(-rc));
}

int bl_glue_start(void)
{
    int rc;

    if (!bl.srv)
        return 0;
    rc = bl_srv_start(bl.srv);
    if (rc < 0)
        fprintf(stderr, "rdn baselines: cannot listen on port %d: %s\n",
                bl.port, strerror(-rc));
    return rc;
}

void bl_glue_stop(void)
{
    if (!bl.srv)
        return;
    bl_srv_close(bl.srv);
    bl.srv = NULL;
}
