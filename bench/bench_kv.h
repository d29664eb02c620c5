/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_kv.h - the key-value modes of rdn-bench: GETs of a running
 * memcached through one "system" (TCP, the offloaded GET, a baseline).
 *
 * The driver (bench_kv.c) stores --keys keys of --value-size bytes over
 * TCP, then runs --clients measuring threads, each with a connection of
 * its own, that GET the keys round robin, one at a time, and time every
 * GET (with --batch N, multi-gets of N keys: each timed as one sample, N
 * GETs counted); meanwhile --writers threads SET other keys in closed
 * loops. Every
 * answer is checked against the value stored (its first 8 bytes name the
 * key, the rest is a fixed pattern): a miss, a wrong value or a failure
 * counts as an error. One result row per run.
 *
 * The same systems and checks serve `rdn-bench crash-load` (the GET load
 * of the crash experiment, bench_crash_load.c) and `rdn-bench load`.
 */
#ifndef BENCH_BENCH_KV_H
#define BENCH_BENCH_KV_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/bench.h"

#define KV_KEY_MAX 48

/* The keys of a run: all of them in the order they are stored, and the
 * measured ones (indexes into name). A key's value depends on its index. */
struct kv_keys {
    char (*name)[KV_KEY_MAX];
    unsigned n;
    unsigned *measured;
    unsigned nmeasured;
};

/* Builds the keys --keys and --placement ask for (bench_keys.c). */
int kv_keys_make(const struct bench_ctx *c, const char *host,
                 struct kv_keys *k);
void kv_keys_free(struct kv_keys *k);

/* One answer: the value, and what to free() once it was checked. */
struct kv_val {
    const char *p;
    size_t len;
    void *owned;
    bool copied; /* p is in a buffer of the application's already */
    bool nic;    /* the server's NIC gave it (systems that can tell) */
};

/* A buffer a measuring thread reuses for the copies of its values. */
struct kv_buf {
    char *p;
    size_t cap;
};

/* A system under test; a handle is one connection, used by one thread. */
struct kv_sys {
    int (*open)(struct bench_ctx *c, void **h);
    /*
     * Prepares a key before the timed GETs (NULL: nothing to do), e.g.
     * finds where its item is.
     */
    int (*prepare)(void *h, unsigned idx, const char *key, size_t nkey);
    /* One GET: 0 with *v set, -ENOENT, or another negative errno. */
    int (*get)(void *h, unsigned idx, const char *key, size_t nkey,
               struct kv_val *v);
    void (*close)(void *h);
    /*
     * The library rebuilds a failed connection by itself: a GET that
     * failed does not make the handle useless (else the caller closes it
     * and opens another).
     */
    bool self_healing;
    /*
     * A multi-get of n keys (NULL: the system has none): 0 with v[i] and
     * rcs[i] (as get()'s) set for each key, or a negative errno.
     */
    int (*mget)(void *h, unsigned n, const char *const *keys,
                const size_t *lens, struct kv_val *v, int *rcs);
};

/* The systems (bench/bench_<system>.c). */
extern const struct kv_sys kv_sys_tcp;      /* libmemcached over TCP */
extern const struct kv_sys kv_sys_redn;     /* librdn, NIC answers only */
extern const struct kv_sys kv_sys_redn_app; /* librdn, TCP fallback on */
extern const struct kv_sys kv_sys_rpc_poll;
extern const struct kv_sys kv_sys_rpc_event;

/*
 * What a run reads: --keys keys of --value-size bytes on --server. Key i's
 * value is its number in 8 hex digits, then a fixed pattern, so every
 * answer can be checked.
 */
struct kv_data {
    const struct bench_ctx *c;
    char host[256];
    int port; /* the TCP port of --server */
    struct kv_keys keys;
    char *pattern; /* a value without its key prefix */
};

/* Parses --server and builds the keys. 0 or -errno (said on stderr). */
int kv_data_open(const struct bench_ctx *c, struct kv_data *d);
void kv_data_close(struct kv_data *d);
/* Stores every key over TCP. 0 or -errno. */
int kv_data_store(const struct kv_data *d);
/*
 * One GET of measured key m through sys on handle h, checked: 0 when the
 * right value came back, -ENOENT a miss, -EBADMSG a wrong value, another
 * negative errno a failure. *nic (if not NULL): the NIC answered.
 */
int kv_data_get(const struct kv_data *d, const struct kv_sys *sys, void *h,
                unsigned m, bool *nic, struct kv_buf *buf);
/*
 * kv_data_get() in two halves, so that a measurement times the same work
 * for every system: kv_data_fetch() is the GET up to the application
 * owning a copy of the value (systems that answer with a pointer into
 * their own buffers get that copy made here, into buf, which grows as
 * needed and is kept, as librdn's rdn_get_value() keeps its buffer; a
 * NULL buf: a malloc'ed copy); kv_data_check() checks it and frees what
 * v owns. fetch returns 0, -ENOENT or another negative errno; check
 * returns fetch's rc, or -EBADMSG for a wrong value.
 */
int kv_data_fetch(const struct kv_data *d, const struct kv_sys *sys, void *h,
                  unsigned m, struct kv_val *v, struct kv_buf *buf);
int kv_data_check(const struct kv_data *d, unsigned m, int rc,
                  struct kv_val *v);

/* Runs the experiment the options describe on sys; emits one row. */
int bench_kv_run(struct bench_ctx *c, const struct kv_sys *sys);

/* HOST and PORT of --server; 0 or -EINVAL. */
int bench_kv_server(const struct bench_ctx *c, char *host, size_t hostlen,
                    int *port);
/*
 * A libmemcached handle on --servers (the configuration string) or else
 * --server, TCP_NODELAY set. NULL on a bad option (said on stderr).
 * The caller frees it (memcached_free()).
 */
struct memcached_st *bench_kv_memc(const struct bench_ctx *c);

#endif /* BENCH_BENCH_KV_H */
