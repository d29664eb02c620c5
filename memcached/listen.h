/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/listen.h - listening sockets and the accept loop (the main
 * thread's event loop), which hands connections to the workers.
 */
#ifndef MEMCACHED_LISTEN_H
#define MEMCACHED_LISTEN_H

#include <stdint.h>

#include <event2/event.h>

/*
 * Binds TCP listeners for every address of inter (comma- or space-separated
 * "host", "host:port" or "[v6]:port"; NULL = 127.0.0.1) on port. With -Z
 * they speak TLS, but those of addresses prefixed "notls:" (memcached's
 * -l notls:<ip>:<port>; the prefix without -Z is an error). Returns 0, or
 * -1 after printing why.
 */
int listen_tcp_bind(const char *inter, int port, int backlog);

/* Binds the UDP socket on the first address of inter; its fd or -1. */
int listen_udp_bind(const char *inter, int port);

/* Binds the unix socket at path with permission mask access; 0 or -1. */
int listen_unix_bind(const char *path, int access, int backlog);

/*
 * Starts accepting on every bound listener, in base's loop. Over -c
 * connections a client is turned away with "ERROR Too many open
 * connections" (-o maxconns_fast, the default), or with no_maxconns_fast
 * left waiting in the backlog until a connection closes. 0 or -1.
 */
int listen_start(struct event_base *base);

/* How many times accepting was paused at -c (stats listen_disabled_num). */
uint64_t listen_disabled_count(void);

#endif /* MEMCACHED_LISTEN_H */
