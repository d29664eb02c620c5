/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_kv.c - the driver of rdn-bench's key-value modes (see
 * bench_kv.h): storing the keys, writer threads, measuring threads,
 * checking every answer, and the result row.
 */
#include "config.h"

#include <errno.h>
#include <libmemcached/memcached.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_kv.h"
#include "proto/barrier.h"

#define WRITER_KEYS    64 /* keys each writer cycles through */
#define WRITER_VALUE   64 /* bytes per writer SET (the paper's SETs) */
#define WRITER_RAMP_MS 100

struct kv_run {
    struct bench_ctx *c;
    const struct kv_sys *sys;
    struct kv_data d;
    pthread_barrier_t ready;  /* measuring clients connected */
    pthread_barrier_t warmed; /* measuring clients warmed up */
    bool stop_writers;
    unsigned rt_denied;
};

struct kv_client {
    struct kv_run *run;
    unsigned id;
    pthread_t thread;
    struct bench_samples s;
    struct kv_buf buf; /* its copies of the values */
    uint64_t t0, t1, errors;
    int rc;
};

int bench_kv_server(const struct bench_ctx *c, char *host, size_t hostlen,
                    int *port)
{
    const char *colon = c->o.server ? strrchr(c->o.server, ':') : NULL;

    if (!colon || (size_t)(colon - c->o.server) >= hostlen)
        return -EINVAL;
    memcpy(host, c->o.server, (size_t)(colon - c->o.server));
    host[colon - c->o.server] = '\0';
    *port = atoi(colon + 1);
    return *port > 0 && *port < 65536 ? 0 : -EINVAL;
}

int kv_data_open(const struct bench_ctx *c, struct kv_data *d)
{
    int rc;

    memset(d, 0, sizeof(*d));
    d->c = c;
    rc = c->o.servers ? 0
                      : bench_kv_server(c, d->host, sizeof(d->host), &d->port);
    if (rc < 0) {
        fprintf(stderr, "rdn-bench: --server HOST:PORT is needed\n");
        return rc;
    }
    d->pattern = malloc(c->o.value_size + 1);
    if (!d->pattern)
        return -ENOMEM;
    for (unsigned j = 0; j < c->o.value_size; j++)
        d->pattern[j] = (char)('A' + j % 23);
    return kv_keys_make(c, d->host, &d->keys);
}

void kv_data_close(struct kv_data *d)
{
    kv_keys_free(&d->keys);
    free(d->pattern);
    d->pattern = NULL;
}

/* Key i's value: its number in 8 hex digits, then the pattern. */
static void value_of(const struct kv_data *d, unsigned i, char *buf)
{
    size_t n = d->c->o.value_size;
    char pre[9];

    memcpy(buf, d->pattern, n);
    snprintf(pre, sizeof(pre), "%08x", i);
    memcpy(buf, pre, n < 8 ? n : 8);
}

static bool value_ok(const struct kv_data *d, unsigned i,
                     const struct kv_val *v)
{
    size_t n = d->c->o.value_size;
    char pre[9];

    if (v->len != n || (n && !v->p))
        return false;
    snprintf(pre, sizeof(pre), "%08x", i);
    return memcmp(v->p, pre, n < 8 ? n : 8) == 0 &&
           (n <= 8 || memcmp(v->p + 8, d->pattern + 8, n - 8) == 0);
}

memcached_st *bench_kv_memc(const struct bench_ctx *c)
{
    char host[256], err[256];
    memcached_st *mc;
    int port;

    if (c->o.servers) {
        if (libmemcached_check_configuration(c->o.servers, strlen(c->o.servers),
                                             err, sizeof(err)) !=
            MEMCACHED_SUCCESS) {
            fprintf(stderr, "rdn-bench: --servers: %s\n", err);
            return NULL;
        }
        mc = memcached(c->o.servers, strlen(c->o.servers));
    } else {
        if (bench_kv_server(c, host, sizeof(host), &port) < 0)
            return NULL;
        mc = memcached_create(NULL);
        if (mc)
            memcached_server_add(mc, host, (in_port_t)port);
    }
    if (mc)
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    return mc;
}

static memcached_st *mc_open(const struct kv_data *d)
{
    return bench_kv_memc(d->c);
}

int kv_data_store(const struct kv_data *d)
{
    memcached_st *mc = mc_open(d);
    char *val = malloc(d->c->o.value_size + 1);
    int rc = mc && val ? 0 : -ENOMEM;

    for (unsigned i = 0; rc == 0 && i < d->keys.n; i++) {
        const char *key = d->keys.name[i];
        size_t nkey = strlen(key);

        value_of(d, i, val);
        if (memcached_set(mc, key, nkey, val, d->c->o.value_size, 0, 0) !=
            MEMCACHED_SUCCESS) {
            fprintf(stderr, "rdn-bench: cannot store %s: %s\n", key,
                    memcached_last_error_message(mc));
            rc = -EIO;
        }
    }
    free(val);
    if (mc)
        memcached_free(mc);
    return rc;
}

/* Copies v's value into buf (grown if needed) or a malloc'ed block. */
static int copy_value(struct kv_val *v, struct kv_buf *buf)
{
    char *copy;

    if (buf && buf->cap <= v->len) {
        copy = realloc(buf->p, v->len + 1);
        if (!copy)
            return -ENOMEM;
        buf->p = copy;
        buf->cap = v->len + 1;
    }
    copy = buf ? buf->p : malloc(v->len + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, v->p, v->len);
    v->p = copy;
    v->owned = buf ? NULL : copy;
    v->copied = true;
    return 0;
}

int kv_data_fetch(const struct kv_data *d, const struct kv_sys *sys, void *h,
                  unsigned m, struct kv_val *v, struct kv_buf *buf)
{
    const char *key = d->keys.name[d->keys.measured[m]];
    int rc;

    memset(v, 0, sizeof(*v));
    rc = sys->get(h, m, key, strlen(key), v);
    if (rc == 0 && !v->owned && !v->copied)
        rc = copy_value(v, buf);
    return rc;
}

int kv_data_check(const struct kv_data *d, unsigned m, int rc, struct kv_val *v)
{
    if (rc == 0 && !value_ok(d, d->keys.measured[m], v))
        rc = -EBADMSG;
    free(v->owned);
    v->owned = NULL;
    return rc;
}

int kv_data_get(const struct kv_data *d, const struct kv_sys *sys, void *h,
                unsigned m, bool *nic, struct kv_buf *buf)
{
    struct kv_val v;
    int rc = kv_data_fetch(d, sys, h, m, &v, buf);

    if (nic)
        *nic = v.nic;
    return kv_data_check(d, m, rc, &v);
}

static void pin(int cpu)
{
    cpu_set_t set;

    if (cpu < 0)
        return;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* A closed-loop SET client on other keys than the measured ones. */
static void *writer_main(void *arg)
{
    struct kv_client *w = arg;
    struct kv_run *r = w->run;
    memcached_st *mc = mc_open(&r->d);
    char key[KV_KEY_MAX], val[WRITER_VALUE];

    pin(r->c->o.writer_cpu);
    memset(val, 'w', sizeof(val));
    for (uint64_t n = 0; mc && !load_seq_cst(&r->stop_writers); n++) {
        size_t nkey = (size_t)snprintf(key, sizeof(key), "wr:%u:%u", w->id,
                                       (unsigned)(n % WRITER_KEYS));

        if (memcached_set(mc, key, nkey, val, sizeof(val), 0, 0) !=
            MEMCACHED_SUCCESS)
            w->errors++;
    }
    if (mc)
        memcached_free(mc);
    return NULL;
}

static void go_realtime(struct kv_run *r)
{
    struct sched_param sp = {.sched_priority = 1};

    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
        fetch_add_seq_cst(&r->rt_denied, 1);
}

/* One GET of measured key m, checked; true when it is right. */
static bool one_get(struct kv_client *k, void *h, unsigned m)
{
    return kv_data_get(&k->run->d, k->run->sys, h, m, NULL, &k->buf) == 0;
}

/* A multi-get of --batch measured keys from m on: how many were wrong. */
static unsigned one_mget(struct kv_client *k, void *h, unsigned m)
{
    const struct kv_data *d = &k->run->d;
    unsigned n = k->run->c->o.batch, nk = d->keys.nmeasured, bad = 0;
    const char *keys[KV_BATCH_MAX] = {0};
    size_t lens[KV_BATCH_MAX] = {0};
    struct kv_val v[KV_BATCH_MAX] = {{0}};
    int rcs[KV_BATCH_MAX];

    for (unsigned j = 0; j < n; j++) {
        keys[j] = d->keys.name[d->keys.measured[(m + j) % nk]];
        lens[j] = strlen(keys[j]);
    }
    if (k->run->sys->mget(h, n, keys, lens, v, rcs) < 0)
        return n;
    for (unsigned j = 0; j < n; j++) {
        bad +=
            rcs[j] != 0 || !value_ok(d, d->keys.measured[(m + j) % nk], &v[j]);
        free(v[j].owned);
    }
    return bad;
}

/* One timed step: a GET, or a multi-get with --batch. Errors counted. */
static void one_step(struct kv_client *k, void *h, unsigned n)
{
    unsigned nk = k->run->d.keys.nmeasured, b = k->run->c->o.batch;

    if (b > 1)
        k->errors += one_mget(k, h, (n * b + k->id) % nk);
    else if (!one_get(k, h, (n + k->id) % nk))
        k->errors++;
}

static void *client_main(void *arg)
{
    struct kv_client *k = arg;
    struct kv_run *r = k->run;
    const struct bench_opts *o = &r->c->o;
    unsigned warm = o->iters / 10 + 10, nk = r->d.keys.nmeasured;
    void *h = NULL;

    pin(o->client_cpu);
    if (o->rt)
        go_realtime(r);
    k->rc = r->sys->open(r->c, &h);
    for (unsigned m = 0; k->rc == 0 && r->sys->prepare && m < nk; m++) {
        const char *key = r->d.keys.name[r->d.keys.measured[m]];

        k->rc = r->sys->prepare(h, m, key, strlen(key));
    }
    /* everyone measures at once, whatever their handshakes took */
    pthread_barrier_wait(&r->ready);
    if (k->rc < 0) {
        fprintf(stderr, "rdn-bench: %s: cannot connect: %s\n", r->c->system,
                strerror(-k->rc));
        if (h)
            r->sys->close(h);
        pthread_barrier_wait(&r->warmed);
        return NULL;
    }
    for (unsigned n = 0; n < warm; n++)
        one_step(k, h, n);
    /* and from the same moment: clients that take turns on one CPU would
     * otherwise time the others' warm-up GETs with their own */
    pthread_barrier_wait(&r->warmed);
    k->t0 = bench_now_ns();
    for (unsigned n = 0; n < o->iters; n++) {
        unsigned m = (n + k->id) % nk;
        struct kv_val v;
        uint64_t t = bench_now_ns();
        int rc;

        if (o->batch > 1) {
            one_step(k, h, n);
            bench_samples_add(&k->s, bench_now_ns() - t);
            continue;
        }
        rc = kv_data_fetch(&r->d, r->sys, h, m, &v, &k->buf);
        /* the check and the free are outside the time */
        bench_samples_add(&k->s, bench_now_ns() - t);
        if (kv_data_check(&r->d, m, rc, &v) != 0)
            k->errors++;
    }
    k->t1 = bench_now_ns();
    r->sys->close(h);
    free(k->buf.p);
    return NULL;
}

/* Starts n threads of fn on ks; returns how many started. */
static unsigned spawn(struct kv_run *r, struct kv_client *ks, unsigned n,
                      void *(*fn)(void *))
{
    for (unsigned i = 0; i < n; i++) {
        ks[i].run = r;
        ks[i].id = i;
        if (pthread_create(&ks[i].thread, NULL, fn, &ks[i]) != 0)
            return i;
    }
    return n;
}

/* Merges the clients' samples into a row. */
static int report(struct kv_run *r, struct kv_client *cl, unsigned n)
{
    struct bench_row row = bench_row("get", r->c->o.value_size);
    struct bench_samples all = {0};
    uint64_t t0 = UINT64_MAX, t1 = 0, errors = 0;
    int rc = 0;

    for (unsigned i = 0; i < n; i++) {
        if (cl[i].rc < 0)
            rc = cl[i].rc;
        for (size_t j = 0; j < cl[i].s.n; j++)
            bench_samples_add(&all, cl[i].s.ns[j]);
        t0 = cl[i].t0 && cl[i].t0 < t0 ? cl[i].t0 : t0;
        t1 = cl[i].t1 > t1 ? cl[i].t1 : t1;
        errors += cl[i].errors;
        bench_samples_free(&cl[i].s);
    }
    bench_row_latency(&row, &all);
    if (all.n && t1 > t0)
        row.ops_per_s = (double)all.n * r->c->o.batch * 1e9 / (double)(t1 - t0);
    row.clients = n;
    row.writers = r->c->o.writers;
    row.errors = errors + (rc < 0 ? 1 : 0);
    bench_emit(r->c, &row);
    bench_samples_free(&all);
    return rc;
}

int bench_kv_run(struct bench_ctx *c, const struct kv_sys *sys)
{
    struct kv_run r = {.c = c, .sys = sys};
    struct kv_client *cl = calloc(c->o.clients, sizeof(*cl));
    struct kv_client *wr = calloc(c->o.writers + 1, sizeof(*wr));
    unsigned ncl = 0, nwr = 0;
    int rc = kv_data_open(c, &r.d);

    if (rc == 0 && (!cl || !wr))
        rc = -ENOMEM;
    if (rc == 0 && c->o.batch > 1 && !sys->mget) {
        fprintf(stderr, "rdn-bench: %s: no multi-get (--batch)\n", c->system);
        rc = -EINVAL;
    }
    if (rc == 0 && !c->o.no_load)
        rc = kv_data_store(&r.d);
    if (rc == 0) {
        struct timespec ramp = {0, WRITER_RAMP_MS * 1000000L};

        nwr = spawn(&r, wr, c->o.writers, writer_main);
        if (nwr)
            nanosleep(&ramp, NULL);
        pthread_barrier_init(&r.ready, NULL, c->o.clients);
        pthread_barrier_init(&r.warmed, NULL, c->o.clients);
        ncl = spawn(&r, cl, c->o.clients, client_main);
        if (ncl < c->o.clients) {
            fprintf(stderr, "rdn-bench: cannot start the clients\n");
            exit(1); /* the started ones wait at the barrier forever */
        }
        for (unsigned i = 0; i < ncl; i++)
            pthread_join(cl[i].thread, NULL);
        store_seq_cst(&r.stop_writers, true);
        for (unsigned i = 0; i < nwr; i++)
            pthread_join(wr[i].thread, NULL);
        if (load_seq_cst(&r.rt_denied))
            fprintf(stderr, "rdn-bench: SCHED_FIFO not permitted; measuring "
                            "threads run at normal priority\n");
        pthread_barrier_destroy(&r.ready);
        pthread_barrier_destroy(&r.warmed);
        rc = report(&r, cl, ncl);
        if (nwr < c->o.writers)
            rc = -EAGAIN;
    }
    kv_data_close(&r.d);
    free(cl);
    free(wr);
    return rc;
}

/* `rdn-bench load`: stores the keys (a cache reloaded after a restart). */
int bench_kv_load(struct bench_ctx *c)
{
    struct kv_data d;
    int rc = kv_data_open(c, &d);

    if (rc == 0)
        rc = kv_data_store(&d);
    kv_data_close(&d);
    return rc;
}
