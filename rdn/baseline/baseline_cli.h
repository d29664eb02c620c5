/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/baseline/baseline_cli.h - clients of the benchmark's RDMA baselines
 * (rdn/baseline/baseline_wire.h), to be compared with the offloaded GET:
 *
 *   one-sided (FaRM-style)  READ both candidate buckets (two READs in
 *                           flight, one round trip), then the item a
 *                           matching slot points to (a second round trip);
 *                           the client checks the key and both stamps and
 *                           retries a torn read;
 *   RPC (poll / event)      SEND the key; a server thread looks it up and
 *                           WRITEs the item back;
 *   ideal                   one READ of an item whose place is known: the
 *                           least any remote GET can cost.
 *
 * Answers point into the connection's buffer and stay valid until the
 * next call on it. Return values: 0 found, -ENOENT not found, -EAGAIN an
 * answer that could not be verified (torn reads that retries did not
 * resolve), another negative errno on failure, after which the connection
 * answers -EIO to everything (requests and answers may be out of step).
 *
 * Threads: a connection is used by one thread at a time.
 */
#ifndef RDN_BASELINE_BASELINE_CLI_H
#define RDN_BASELINE_BASELINE_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "proto/item.h"
#include "rdn/baseline/baseline_wire.h"

struct bl_conn;

/*
 * Connects a client of kind to the baseline port. One-sided clients also
 * ask the offload's handshake port (rdn_port) for the table geometry.
 * device: NULL means $RDN_DEVICE, else "softnic". Returns 0 with *out
 * set, or -EINVAL, -ENOMEM, a TCP connection error, -EPROTO (a bad
 * answer), the server's REJECT status, or the NIC's error. The caller
 * closes the connection with bl_close().
 */
int bl_connect(const char *host, int bl_port, int rdn_port, enum bl_kind kind,
               const char *device, struct bl_conn **out);
/* Tears the connection down (the server frees its side); NULL: no-op. */
void bl_close(struct bl_conn *c);

/*
 * Bounds each later wait for an answer on c to timeout_ms (default 5000);
 * a request that times out fails with -ETIMEDOUT (and breaks c, as any
 * failure does). 0 or -EINVAL.
 */
int bl_set_timeout(struct bl_conn *c, int timeout_ms);

/*
 * Gets key (1..250 bytes) the way c's kind does; on 0, *it points into the
 * connection's buffer until the next call. Returns the values listed at
 * the top (0, -ENOENT, -EAGAIN, or an error that breaks c).
 */
int bl_get(struct bl_conn *c, const char *key, size_t nkey,
           const struct rdn_item **it);

/* Where an item is, for one-READ ("ideal") reads. */
struct bl_loc {
    uint64_t addr;
    uint32_t len;
    uint32_t rkey;
};

/*
 * One-sided: copies the place of the item the last successful bl_get()
 * read into *out. Returns 0, or -EINVAL (not one-sided, or no item read
 * yet).
 */
int bl_last_loc(const struct bl_conn *c, struct bl_loc *out);
/*
 * One READ of loc ("ideal"), stamps checked; *it as bl_get()'s. Returns 0,
 * -EAGAIN (torn), -EINVAL (not one-sided), or an error that breaks c.
 */
int bl_read(struct bl_conn *c, const struct bl_loc *loc,
            const struct rdn_item **it);

/*
 * Asks the offload's handshake port for the table geometry (one REFRESH
 * on a connection of its own). Returns 0, a TCP error, or -EPROTO.
 */
int bl_geometry(const char *host, int rdn_port, struct rdn_geometry *g);

#endif /* RDN_BASELINE_BASELINE_CLI_H */
