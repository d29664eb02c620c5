/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/rdn_glue.h - connects the cache to the offloaded GET
 * (rdn/offload/offload.h), when --rdn-port is given: the item arena and the
 * cuckoo table live in NIC memory, table switches and flush_all reach the NIC's
 * clients, freed items wait for the NIC's readers (slabs' horizon), expired
 * items leave the table within a second, and the stats show the offload.
 * Without --rdn-port every function here is a no-op.
 *
 * main.c's order: rdn_glue_option() while parsing flags; rdn_glue_init()
 * before the storage is built (it needs rdn_glue_storage_env());
 * rdn_glue_start() once storage is up and before clients are served; at
 * shutdown rdn_glue_stop() once the workers stopped (its threads use the
 * storage), then rdn_glue_close() once the storage's threads stopped too
 * (the item and table memory may go).
 *
 * Persistence: the offload's NIC resources belong to the rdn-nicd domain
 * "memcached-<tcp port>-<rdn port>", so a server started again on the same
 * ports after a kill -9 (or a shutdown with --rdn-keep-on-exit)
 * re-attaches them and adopts the items (memcached/persist.h).
 */
#ifndef MEMCACHED_RDN_GLUE_H
#define MEMCACHED_RDN_GLUE_H

#include <stdbool.h>
#include <stdint.h>

#include "memcached/persist.h"
#include "memcached/stat_sink.h"

/* Long options main.c hands to rdn_glue_option() (getopt values). */
enum {
    RDN_OPT_PORT = 0x200, /* --rdn-port N: the handshake port */
    RDN_OPT_DEVICE,       /* --rdn-device NAME: the NIC (softnic, ...) */
    RDN_OPT_CLIENTS,      /* --rdn-clients MAX: RDMA clients at once */
    RDN_OPT_BASELINES,    /* --rdn-baselines PORT: bench baselines */
    RDN_OPT_KEEP,         /* --rdn-keep-on-exit: keep NIC resources */
};

/* Usage lines for the flags above. */
#define RDN_GLUE_USAGE                                                         \
    "--rdn-port=<num>          port of the offloaded-GET handshake (RDMA "     \
    "clients;\n"                                                               \
    "                          default: off)\n"                                \
    "--rdn-device=<name>       NIC for offloaded GETs (default: "              \
    "$RDN_DEVICE, else\n"                                                      \
    "                          softnic)\n"                                     \
    "--rdn-clients=<num>       max RDMA clients at once (default: 64)\n"       \
    "--rdn-baselines=<num>     port of the benchmark's one-sided and RPC\n"    \
    "                          baselines (needs --rdn-port; lets clients\n"    \
    "                          read the table and items; default: off)\n"      \
    "--rdn-keep-on-exit        on SIGTERM/SIGINT leave the table, items and\n" \
    "                          NIC resources to rdn-nicd for the next "        \
    "server\n"                                                                 \
    "                          on the same ports (default: release them; a\n"  \
    "                          killed server always leaves them; domain\n"     \
    "                          memcached-<tcp port>-<rdn port>)\n"

/* Takes one of the options above (value NULL for RDN_OPT_KEEP). 0, or
 * -EINVAL for a bad value. */
int rdn_glue_option(int opt, const char *value);

/* True when --rdn-port was given. */
bool rdn_glue_enabled(void);

/* Opens the NIC for the cache's memory. 0 or a negative errno. */
int rdn_glue_init(void);
/*
 * The address the handshake ports (--rdn-port, --rdn-baselines) listen on:
 * -l when it is one IPv4 address (0.0.0.0 for all), else 127.0.0.1.
 * RDMA clients on other hosts also need rdn-nicd --listen on this host.
 */
const char *rdn_glue_listen_addr(void);

/*
 * Fills the offload's part of the storage's environment (NIC memory hooks,
 * the metadata, whether it was re-attached, lkey, discard, table switches);
 * leaves env alone when the offload is off.
 */
void rdn_glue_storage_env(struct persist_env *env);

/* Wires the built storage to the offload and starts serving. 0 or -errno. */
int rdn_glue_start(void);

/* Stops the threads that use the storage: the baselines', the expiry
 * thread, the offload's (the NIC goes on serving GETs). */
void rdn_glue_stop(void);
/* Closes the offload: keeps or releases the NIC resources as
 * --rdn-keep-on-exit says. */
void rdn_glue_close(void);

/* flush_all was done with this items_realtime() time (0 = now). */
void rdn_glue_flush(uint32_t when);

/* The rdn_* lines of "stats", and "stats rdn". */
void rdn_glue_stats(stat_sink_fn sink, void *ctx);
void rdn_glue_stats_rdn(stat_sink_fn sink, void *ctx);

#endif /* MEMCACHED_RDN_GLUE_H */
