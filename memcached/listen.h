/*
 * memcached/listen.h - listening sockets and the accept loop (the main
 * thread's event loop), which hands connections to the workers.
 */
#ifndef MEMCACHED_LISTEN_H
#define MEMCACHED_LISTEN_H

#include <event2/event.h>

/*
 * Binds TCP listeners for every address of inter (comma- or space-separated
 * "host", "host:port" or "[v6]:port"; NULL = 127.0.0.1) on port. Returns
 * 0, or -1 after printing why.
 */
int listen_tcp_bind(const char *inter, int port, int backlog);

/* Binds the UDP socket on the first address of inter; its fd or -1. */
int listen_udp_bind(const char *inter, int port);

/* Binds the unix socket at path with permission mask access; 0 or -1. */
int listen_unix_bind(const char *path, int access, int backlog);

/* Starts accepting on every bound listener, in base's loop. */
int listen_start(struct event_base *base);

#endif /* MEMCACHED_LISTEN_H */
