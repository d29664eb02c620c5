/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/baseline/baseline_srv.h - the server side of the benchmark's RDMA
 * baselines (rdn/baseline/baseline_wire.h): FaRM-style one-sided GETs, where
 * clients READ the table and the items themselves, and RPC over RDMA, where a
 * server thread per client looks keys up through the cache (polling its CQ, or
 * sleeping on it) and WRITEs the item back.
 *
 * Off unless asked for (memcached --rdn-baselines PORT): exposing memory
 * for one-sided reads lets any client that connects read the whole table
 * and item arena. rdn/ never includes memcached/: the cache is reached
 * through struct bl_cache_ops.
 *
 * Order of use: bl_srv_open(); bl_srv_expose() for each table and arena
 * (at any time, also while running); bl_srv_start(); ...; bl_srv_close().
 *
 * Threads: a listener thread does the handshakes; one poller thread
 * answers every polling RPC client; every client has a thread that
 * watches its control connection (and, event-driven, sleeps on its CQ and
 * answers its RPCs). s->lock guards the client list (the poller holds it
 * during a sweep); s->region_lock the exposed regions.
 */
#ifndef RDN_BASELINE_BASELINE_SRV_H
#define RDN_BASELINE_BASELINE_SRV_H

#include <stddef.h>

#include "proto/item.h"
#include "rdn/rnic/rnic.h"

struct bl_srv;

struct bl_cache_ops {
    void *ctx;
    /*
     * The live item for key with a reference *ref held on it (it is not
     * freed until put), or NULL. Called from the RPC threads.
     */
    const struct rdn_item *(*get)(void *ctx, const char *key, size_t nkey,
                                  void **ref);
    void (*put)(void *ctx, void *ref);
};

/*
 * Prepares a server on dev (the device that holds the cache's NIC memory)
 * that will listen on listen_addr:port (0: any free port). ops is copied;
 * dev stays the caller's and must outlive the server. Returns 0 with *out
 * set, or -EINVAL (bad arguments), -ENOMEM. The caller frees the server
 * with bl_srv_close().
 */
int bl_srv_open(struct rnic_device *dev, const char *listen_addr, int port,
                const struct bl_cache_ops *ops, struct bl_srv **out);
/*
 * Registers [addr, addr+len) (NIC memory of dev) for remote reads and
 * lists it in every later welcome. Any thread, also while running. Returns
 * 0, -EINVAL, -ENOSPC (BL_MAX_REGIONS regions exposed already), or
 * rnic_reg_mr()'s error.
 */
int bl_srv_expose(struct bl_srv *s, void *addr, size_t len);
/*
 * Listens and starts the listener thread; ops is called from the server's
 * threads from then on. Returns 0, -EINVAL (started already, or a bad
 * IPv4 listen address), socket(), bind() or listen()'s -errno
 * (-EADDRINUSE), or pthread_create()'s.
 */
int bl_srv_start(struct bl_srv *s);
/* Returns the port it listens on once started (-1 for NULL). */
int bl_srv_port(const struct bl_srv *s);
/* Stops every thread, tears the clients down, frees everything. */
void bl_srv_close(struct bl_srv *s);

#endif /* RDN_BASELINE_BASELINE_SRV_H */
