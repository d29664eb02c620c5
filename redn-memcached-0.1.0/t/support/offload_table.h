/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/support/offload_table.h - the offloaded GET without memcached: a table and
 * an item arena built by hand in NIC memory (the layouts of proto/table.h
 * and proto/item.h), and a client with its server pipeline in one process.
 * The chain tests and `rdn-bench get` use it to run real GETs against a
 * table whose every slot they control.
 *
 * Threads: one thread at a time.
 */
#ifndef T_SUPPORT_OFFLOAD_TABLE_H
#define T_SUPPORT_OFFLOAD_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/rdn_wire.h"
#include "rdn/librdn/nic_client.h"
#include "rdn/offload/pipeline.h"

struct ofl_table {
    struct rnic_device *dev;
    struct chain_buf buckets; /* remote read: the chains' loopback READ */
    struct chain_buf arena;   /* local only: response WRITEs gather here */
    struct chain_buf gen;     /* the generation word */
    size_t used;              /* arena bytes handed out */
    unsigned hashpower;
    uint64_t stamp; /* last stamp given */
    uint32_t item_size_max;
};

/* A table of 2^hashpower empty buckets and an arena of arena_bytes. */
int ofl_table_open(struct rnic_device *dev, unsigned hashpower,
                   size_t arena_bytes, uint32_t item_size_max,
                   struct ofl_table *t);
void ofl_table_close(struct ofl_table *t);
/* Empties every slot (the arena is not reused). */
void ofl_table_clear(struct ofl_table *t);

/* A new item with fresh stamps (NULL when the arena is full). */
struct rdn_item *ofl_table_item(struct ofl_table *t, const char *key,
                                size_t nkey, const void *val, size_t nbytes,
                                uint32_t flags, uint32_t exptime);
/* Slot i of bucket b now holds it under fingerprint fp (as assoc does). */
void ofl_table_set_slot(struct ofl_table *t, uint64_t b, unsigned i,
                        uint64_t fp, const struct rdn_item *it);
/* Stores key = val in its first (which 1) or second bucket, slot i. */
struct rdn_item *ofl_table_put(struct ofl_table *t, const char *key,
                               size_t nkey, const void *val, size_t nbytes,
                               int which, unsigned i);
/* The geometry a handshake would give for this table. */
void ofl_table_geometry(const struct ofl_table *t, struct rdn_geometry *g);
/* Sets the generation word the chains write (and returns it). */
uint64_t ofl_table_set_gen(struct ofl_table *t, uint32_t table_gen);

/* A client and the server pipeline that answers it, in one process. */
struct ofl_local {
    struct ofl_pipe pipe;
    struct ofl_client cli;
    struct chain_cq *done;
};

/*
 * Opens a client on cdev (depth slots) and its pipeline on the table's
 * device (iters iterations, done CQ and master queue shared with other
 * locals), connected but not started (ofl_pipe_start()).
 */
int ofl_local_open(struct ofl_table *t, struct rnic_device *cdev,
                   uint32_t iters, uint32_t depth, bool seq,
                   struct chain_cq *done, struct chain_q *master,
                   struct ofl_local *l);
/*
 * What the server's watch thread does: counts receives and answers. It
 * drops completions of other pipelines on the done CQ: locals that are
 * served need a done CQ each.
 */
int ofl_local_serve(struct ofl_local *l);
void ofl_local_close(struct ofl_local *l);

#endif /* T_SUPPORT_OFFLOAD_TABLE_H */
