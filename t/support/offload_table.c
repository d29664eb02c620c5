/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/support/offload_table.c - a hand-built table and a local client/pipeline
 * pair (see offload_table.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "proto/barrier.h"
#include "proto/byteorder.h"
#include "proto/keyhash.h"
#include "t/support/offload_table.h"

int ofl_table_open(struct rnic_device *dev, unsigned hashpower,
                   size_t arena_bytes, uint32_t item_size_max,
                   struct ofl_table *t)
{
    int rc;

    if (!dev || !t || hashpower < 1 || hashpower > 24 || !arena_bytes)
        return -EINVAL;
    memset(t, 0, sizeof(*t));
    t->dev = dev;
    t->hashpower = hashpower;
    t->item_size_max = item_size_max;
    rc = chain_buf_open(dev, sizeof(struct rdn_bucket) << hashpower,
                        RNIC_ACCESS_REMOTE_READ, &t->buckets);
    if (rc == 0)
        rc = chain_buf_open(dev, arena_bytes, 0, &t->arena);
    if (rc == 0)
        rc = chain_buf_open(dev, 64, 0, &t->gen);
    if (rc < 0) {
        ofl_table_close(t);
        return rc;
    }
    ofl_table_clear(t);
    ofl_table_set_gen(t, 0);
    return 0;
}

void ofl_table_close(struct ofl_table *t)
{
    chain_buf_close(&t->gen);
    chain_buf_close(&t->arena);
    chain_buf_close(&t->buckets);
}

static struct rdn_bucket *bucket(const struct ofl_table *t, uint64_t b)
{
    return (struct rdn_bucket *)t->buckets.ptr +
           (b & ((UINT64_C(1) << t->hashpower) - 1));
}

void ofl_table_clear(struct ofl_table *t)
{
    for (uint64_t b = 0; b < (UINT64_C(1) << t->hashpower); b++)
        for (unsigned i = 0; i < RDN_BUCKET_SLOTS; i++) {
            memset(&bucket(t, b)->slot[i], 0, sizeof(struct rdn_slot));
            bucket(t, b)->slot[i].match = rdn_slot_match(0);
        }
}

struct rdn_item *ofl_table_item(struct ofl_table *t, const char *key,
                                size_t nkey, const void *val, size_t nbytes,
                                uint32_t flags, uint32_t exptime)
{
    size_t len = rdn_item_total_len(nkey, nbytes);
    struct rdn_item *it = (void *)(t->arena.ptr + t->used);

    if (nkey == 0 || nkey > RDN_KEY_MAX || t->used + len > t->arena.len)
        return NULL;
    t->used += (len + 63) & ~(size_t)63;
    memset(it, 0, len);
    it->stamp = ++t->stamp;
    it->nbytes = (uint32_t)nbytes;
    it->flags = flags;
    it->exptime = exptime;
    it->nkey = (uint16_t)nkey;
    memcpy(rdn_item_key(it), key, nkey);
    if (nbytes)
        memcpy(rdn_item_value(it), val, nbytes);
    *rdn_item_tail(it) = it->stamp;
    return it;
}

void ofl_table_set_slot(struct ofl_table *t, uint64_t b, unsigned i,
                        uint64_t fp, const struct rdn_item *it)
{
    struct rdn_slot *s = &bucket(t, b)->slot[i % RDN_BUCKET_SLOTS];

    s->desc.byte_count =
        cpu_to_be32((uint32_t)rdn_item_total_len(it->nkey, it->nbytes));
    s->desc.lkey = cpu_to_be32(t->arena.mr->lkey);
    s->desc.addr = cpu_to_be64((uint64_t)(uintptr_t)it);
    store_release(&s->match, rdn_slot_match(fp));
}

struct rdn_item *ofl_table_put(struct ofl_table *t, const char *key,
                               size_t nkey, const void *val, size_t nbytes,
                               int which, unsigned i)
{
    struct rdn_item *it = ofl_table_item(t, key, nkey, val, nbytes, 0, 0);
    struct rdn_keyhash kh;

    if (!it)
        return NULL;
    rdn_keyhash(key, nkey, t->hashpower, &kh);
    ofl_table_set_slot(t, which == 1 ? kh.bucket1 : kh.bucket2, i, kh.fp, it);
    return it;
}

uint64_t ofl_table_set_gen(struct ofl_table *t, uint32_t table_gen)
{
    uint64_t w = rdn_gen_word(table_gen, 0);

    store_release((uint64_t *)t->gen.ptr, w);
    return w;
}

void ofl_table_geometry(const struct ofl_table *t, struct rdn_geometry *g)
{
    memset(g, 0, sizeof(*g));
    strncpy(g->hash, RDN_HASH_NAME, sizeof(g->hash));
    g->table_addr = (uint64_t)(uintptr_t)t->buckets.ptr;
    g->gen_word = load_acquire((uint64_t *)t->gen.ptr);
    g->hashpower = t->hashpower;
    g->fp_bits = RDN_FP_BITS;
    g->bucket_slots = RDN_BUCKET_SLOTS;
    g->bucket_bytes = sizeof(struct rdn_bucket);
    g->item_size_max = t->item_size_max;
}

/* ---- a local client and its pipeline ---------------------------------- */

int ofl_local_open(struct ofl_table *t, struct rnic_device *cdev,
                   uint32_t iters, uint32_t depth, bool seq,
                   struct chain_cq *done, struct chain_q *master,
                   struct ofl_local *l)
{
    struct ofl_pipe_cfg cfg;
    struct rnic_addr sa, ca;
    struct rdn_hello h;
    int rc;

    memset(l, 0, sizeof(*l));
    l->done = done;
    rc = ofl_client_open(
        cdev, depth, (uint32_t)rdn_resp_slot_size(t->item_size_max), &l->cli);
    if (rc == 0)
        rc = ofl_client_hello(&l->cli, &h);
    if (rc < 0)
        return rc;
    memset(&cfg, 0, sizeof(cfg));
    cfg.iters = iters;
    cfg.depth = h.depth;
    cfg.slot_addr = h.buf_addr;
    cfg.slot_size = h.slot_size;
    cfg.slot_rkey = h.buf_rkey;
    cfg.table_mr = t->buckets.mr;
    cfg.gen = chain_buf_loc(&t->gen, 0, 8);
    cfg.done_cq = done;
    cfg.master = master;
    cfg.seq = seq;
    memcpy(ca.bytes, h.qp_addr, sizeof(ca.bytes));
    rc = ofl_pipe_open(t->dev, &cfg, &l->pipe);
    if (rc == 0)
        rc = ofl_pipe_addr(&l->pipe, &sa);
    ofl_pipe_plan(&cfg, &l->cli.plan);
    if (rc == 0)
        rc = ofl_client_connect(&l->cli, sa.bytes);
    if (rc == 0)
        rc = ofl_pipe_connect(&l->pipe, &ca);
    if (rc < 0) {
        ofl_local_close(l);
        return rc;
    }
    /* Connected by address, as across processes; the chain checker finds
     * a queue's peer through these. */
    l->pipe.resp.peer = &l->cli.q;
    l->cli.q.peer = &l->pipe.resp;
    return 0;
}

int ofl_local_serve(struct ofl_local *l)
{
    struct rnic_wc wc[16];
    int n, rc = ofl_pipe_poll_recv(&l->pipe);

    while (rc >= 0 && (n = rnic_poll_cq(l->done->cq, 16, wc)) > 0)
        for (int i = 0; i < n; i++)
            if (wc[i].qpn == l->pipe.resp.qpn)
                ofl_pipe_complete(&l->pipe, &wc[i]);
    return rc;
}

void ofl_local_close(struct ofl_local *l)
{
    ofl_client_close(&l->cli);
    ofl_pipe_close(&l->pipe);
}
