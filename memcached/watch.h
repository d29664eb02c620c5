/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/watch.h - "watch": connections that become live log streams
 * (memcached 1.6.18's logger watchers), with memcached's line formats.
 *
 * A client sends "watch [fetchers|mutations|evictions|connevents|
 * sysevents|rawcmds|proxyreqs|proxyevents|proxyuser ...]" (no argument:
 * fetchers), gets "OK", and from then on receives one line per event of
 * the kinds it asked for, e.g.
 *   ts=<sec>.<usec> gid=<n> type=item_get key=<uriencoded> status=found
 *   clsid=1 cfd=<fd> size=<value bytes>
 * Nothing it sends is read any more; it ends by closing. Lines that do not
 * fit its buffer (watcher_logbuf_size, 256 KB) are dropped and counted,
 * and the next line that fits is preceded by "skipped=<n>", as memcached
 * does. At most WATCH_LIMIT watchers at a time.
 *
 * Producers (any thread) call watch_log_*(); each first checks, without a
 * lock, whether anybody watches that kind of event, so unwatched events
 * cost one relaxed load. A watcher's buffer is filled under the watch lock
 * and sent by its connection's worker (woken with an event), never by the
 * producer. The watch lock is a leaf: producers may hold item and LRU
 * locks when they call in.
 */
#ifndef MEMCACHED_WATCH_H
#define MEMCACHED_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "memcached/proto_parse.h"

struct conn;
struct item;

#define WATCH_LIMIT 20 /* memcached's WATCHER_LIMIT */

/* Event kinds, memcached's LOG_* bits. */
enum watch_kind {
    WATCH_SYSEVENTS = 1 << 1,
    WATCH_FETCHERS = 1 << 2,
    WATCH_MUTATIONS = 1 << 3,
    WATCH_CONNEVENTS = 1 << 5,
    WATCH_EVICTIONS = 1 << 6,
    WATCH_RAWCMDS = 1 << 9,
    WATCH_PROXYREQS = 1 << 10,
    WATCH_PROXYEVENTS = 1 << 11,
    WATCH_PROXYUSER = 1 << 12,
};

/* The "watch" command (proto_text.c's dispatcher calls it). */
void proto_watch(struct conn *c, struct token *t, size_t nt);

/* Whether some watcher wants kind (relaxed; a cheap early out). */
bool watch_wants(enum watch_kind kind);

/* The descriptor the calling thread serves a command for, reported as
 * cfd= (conn.c sets it before running a connection's commands). */
void watch_set_cfd(int fd);

/* Fetches: memcached's item_get lines (do_item_get). status: one of
 * "not_found", "found", "flushed", "expired"; it NULL unless found. */
void watch_log_get(const char *key, size_t nkey, const char *status,
                   const struct item *it);

/* Mutations: item_store lines. cmd: "set", "add", "replace", "append",
 * "prepend", "cas"; status: "stored", "not_stored", "exists",
 * "not_found", "too_large", "no_memory"; it NULL when no item was made. */
void watch_log_store(const char *key, size_t nkey, const char *status,
                     const char *cmd, const struct item *it);

/* Evictions: a live item evicted from an LRU tail. */
void watch_log_eviction(const struct item *it);

/* Connection events: conn_new (close_reason NULL) or conn_close with
 * close_reason "error", "normal", "idle_timeout" or "shutdown". transport:
 * "tcp", "local" or "udp"; len 0: no peer address (unix sockets). */
void watch_log_conn(const struct sockaddr_storage *peer, socklen_t len,
                    const char *transport, const char *close_reason, int fd);

/* System events: a page moved by slabs reassign / automove. */
void watch_log_slab_move(unsigned src, unsigned dst);

/* memcached's log_* counters for "stats". */
struct watch_stats {
    uint64_t worker_dropped, worker_written;
    uint64_t watcher_skipped, watcher_sent;
    uint64_t watchers;
};
void watch_stats(struct watch_stats *s);

#endif /* MEMCACHED_WATCH_H */
