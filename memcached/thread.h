/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/thread.h - the worker threads.
 *
 * One listener (the main thread's event loop, see listen.c) accepts
 * connections and hands each to a worker, round robin, through the
 * worker's queue and an eventfd wake-up. A worker runs its own libevent
 * loop and owns its connections exclusively: nothing of a connection is
 * touched by another thread, except the read-only fields "stats conns"
 * samples.
 */
#ifndef MEMCACHED_THREAD_H
#define MEMCACHED_THREAD_H

#include <event2/event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memcached/conn.h"

#define WORKER_BUF_SIZE  16384 /* read buffers and output blocks */
#define WORKER_BUF_CACHE 64    /* free buffers a worker keeps */

struct pending_conn {
    int fd;
    enum transport transport;
    bool tls; /* accepted on a -Z listener */
    struct pending_conn *next;
};

struct worker {
    int id;
    pthread_t tid;
    struct event_base *base;
    int wake_fd; /* eventfd the listener writes to */
    struct event *wake_ev;
    pthread_mutex_t qlock; /* protects qhead/qtail */
    struct pending_conn *qhead, *qtail;
    void *bufs[WORKER_BUF_CACHE]; /* free WORKER_BUF_SIZE buffers */
    int nbufs;
    /* Buffers malloc'ed and not freed, and of them the free ones: written
     * by the worker, read by "stats" (relaxed). */
    uint64_t bufs_total, bufs_free;
};

/* The worker running on this thread (NULL on other threads). */
extern __thread struct worker *self_worker;

/*
 * Creates nthreads workers and starts them; returns once all run.
 * udp_fd >= 0 gives every worker a UDP connection on that socket.
 * Returns 0 or a negative errno.
 */
int threads_start(int nthreads, int udp_fd);

/* Makes every worker return from its loop once its current request is
 * done, and joins them (shutdown; the listener no longer dispatches). */
void threads_stop(void);

/* Hands a new connection (fd reserved by conns_reserve()) to the next
 * worker (listener thread); tls: it speaks TLS (conn_new()). */
void thread_dispatch(int fd, enum transport transport, bool tls);

/* A WORKER_BUF_SIZE buffer from the worker's cache (or malloc), and its
 * return. NULL only when memory is exhausted. */
void *worker_buf_get(struct worker *w);
void worker_buf_put(struct worker *w, void *buf);

/* Every worker's buffers summed: how many exist and how many are free
 * (memcached's read_buf_count, read_buf_bytes_free). Any thread. */
void threads_buf_stats(uint64_t *count, uint64_t *free);

#endif /* MEMCACHED_THREAD_H */
