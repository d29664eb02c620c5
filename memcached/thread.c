/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/thread.c - worker threads and the hand-over of connections.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "memcached/conn.h"
#include "memcached/stats.h"
#include "memcached/thread.h"
#include "proto/barrier.h"

__thread struct worker *self_worker;

static struct worker *workers;
static int nworkers;
static int next_worker; /* listener thread only */

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
static int started;

void *worker_buf_get(struct worker *w)
{
    if (w->nbufs > 0) {
        store_relaxed(&w->bufs_free, w->bufs_free - 1);
        return w->bufs[--w->nbufs];
    }
    void *buf = malloc(WORKER_BUF_SIZE);
    if (buf)
        store_relaxed(&w->bufs_total, w->bufs_total + 1);
    return buf;
}

void worker_buf_put(struct worker *w, void *buf)
{
    if (w->nbufs < WORKER_BUF_CACHE) {
        w->bufs[w->nbufs++] = buf;
        store_relaxed(&w->bufs_free, w->bufs_free + 1);
    } else {
        free(buf);
        store_relaxed(&w->bufs_total, w->bufs_total - 1);
    }
}

void threads_buf_stats(uint64_t *count, uint64_t *free)
{
    *count = *free = 0;
    for (int i = 0; i < load_relaxed(&nworkers); i++) {
        *count += load_relaxed(&workers[i].bufs_total);
        *free += load_relaxed(&workers[i].bufs_free);
    }
}

/* Takes every queued connection and starts serving it. */
static void wake_cb(evutil_socket_t fd, short which, void *arg)
{
    struct worker *w = arg;
    uint64_t n;
    struct pending_conn *p;

    (void)which;
    if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
        perror("worker eventfd read");
    pthread_mutex_lock(&w->qlock);
    p = w->qhead;
    w->qhead = w->qtail = NULL;
    pthread_mutex_unlock(&w->qlock);
    while (p) {
        struct pending_conn *next = p->next;
        if (conn_new(w, p->fd, p->transport, p->tls) == NULL)
            conns_refuse(p->fd);
        free(p);
        p = next;
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;

    self_worker = w;
    stats_thread_register();
    pthread_mutex_lock(&start_lock);
    started++;
    pthread_cond_signal(&start_cond);
    pthread_mutex_unlock(&start_lock);
    event_base_loop(w->base, 0);
    return NULL;
}

static int worker_setup(struct worker *w, int id, int udp_fd)
{
    w->id = id;
    w->base = event_base_new();
    if (w->base == NULL)
        return -ENOMEM;
    w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->wake_fd < 0)
        return -errno;
    w->wake_ev =
        event_new(w->base, w->wake_fd, EV_READ | EV_PERSIST, wake_cb, w);
    if (w->wake_ev == NULL || event_add(w->wake_ev, NULL) != 0)
        return -ENOMEM;
    pthread_mutex_init(&w->qlock, NULL);
    if (udp_fd >= 0 && conn_new(w, udp_fd, TRANSPORT_UDP, false) == NULL)
        return -ENOMEM;
    return 0;
}

int threads_start(int nthreads, int udp_fd)
{
    workers = calloc((size_t)nthreads, sizeof(*workers));
    if (workers == NULL)
        return -ENOMEM;
    nworkers = nthreads;
    for (int i = 0; i < nthreads; i++) {
        int rc = worker_setup(&workers[i], i, udp_fd);
        if (rc != 0)
            return rc;
    }
    for (int i = 0; i < nthreads; i++) {
        int rc =
            pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
        if (rc != 0)
            return -rc;
    }
    pthread_mutex_lock(&start_lock);
    while (started < nthreads)
        pthread_cond_wait(&start_cond, &start_lock);
    pthread_mutex_unlock(&start_lock);
    return 0;
}

void threads_stop(void)
{
    for (int i = 0; i < nworkers; i++)
        event_base_loopbreak(workers[i].base);
    for (int i = 0; i < nworkers; i++)
        pthread_join(workers[i].tid, NULL);
    nworkers = 0;
}

void thread_dispatch(int fd, enum transport transport, bool tls)
{
    struct pending_conn *p = malloc(sizeof(*p));
    struct worker *w = &workers[next_worker];
    uint64_t one = 1;

    if (p == NULL) {
        conns_refuse(fd);
        return;
    }
    next_worker = (next_worker + 1) % nworkers;
    p->fd = fd;
    p->transport = transport;
    p->tls = tls;
    p->next = NULL;
    pthread_mutex_lock(&w->qlock);
    if (w->qtail)
        w->qtail->next = p;
    else
        w->qhead = p;
    w->qtail = p;
    pthread_mutex_unlock(&w->qlock);
    if (write(w->wake_fd, &one, sizeof(one)) < 0)
        perror("worker eventfd write");
}
