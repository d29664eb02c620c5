/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench.h - what rdn-bench's modes share: the run context (options,
 * the open device), latency samples and their percentiles, and result
 * rows printed as a table or as one JSON object per line.
 *
 * A mode is a function `int mode(struct bench_ctx *)` registered in the
 * table of bench/rdn-bench.c; it emits rows with bench_emit().
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdn/rnic/rnic.h"

/* Where measured keys sit in the server's table (bench/bench_keys.c). */
enum kv_placement {
    KV_PLACE_FIRST,  /* their first candidate bucket */
    KV_PLACE_SECOND, /* their second: the first is full */
    KV_PLACE_FULL,   /* their first, which is full */
};

#define KV_BATCH_MAX 64 /* rdn-bench --batch */

struct bench_opts {
    const char *device; /* rnic device name (default softnic-inproc) */
    const char *model;  /* timing preset: fast or cx5 */
    bool json;
    unsigned iters; /* samples per latency measurement */
    unsigned par;   /* concurrent chains for throughput runs */
    /* key-value modes (bench/bench_kv.h) */
    const char *server;  /* HOST:PORT of the memcached TCP port */
    const char *servers; /* or a list: a libmemcached configuration string */
    int rdn_port;        /* the offload's handshake port */
    int bl_port;         /* the baselines' port (--rdn-baselines) */
    unsigned value_size; /* bytes per value */
    unsigned keys;       /* distinct keys read */
    unsigned clients;    /* measuring client threads */
    unsigned batch;      /* keys per multi-get (1: single GETs) */
    unsigned writers;    /* closed-loop SET threads meanwhile */
    int client_cpu;      /* pin measuring clients there (-1: no) */
    int writer_cpu;      /* pin writers there (-1: no) */
    bool rt;             /* measuring clients at SCHED_FIFO if allowed */
    bool no_load;        /* the keys are stored already */
    const char *label;   /* system name in results (default: the mode) */
    enum kv_placement placement;
    bool search_seq; /* redn: the RedN-Seq chain (--search seq) */
    /* crash-load (bench/bench_crash_load.c) */
    const char *system; /* tcp, redn, rpc-poll or rpc-event */
    double secs;        /* how long the load runs */
    int timeout_ms;     /* bound on each wait for an answer (0: default) */
};

struct bench_ctx {
    struct bench_opts o;
    struct rnic_device *dev; /* NULL in key-value modes */
    unsigned threads;        /* engine threads (RDN_SOFTNIC_THREADS) */
    const char *system;      /* results' "system"; NULL: the device */
    bool header_done;
};

/* Latency samples in nanoseconds. */
struct bench_samples {
    uint64_t *ns;
    size_t n, cap;
};

void bench_samples_add(struct bench_samples *s, uint64_t ns);
void bench_samples_reset(struct bench_samples *s);
void bench_samples_free(struct bench_samples *s);

/*
 * One result line. Latencies in microseconds; a value that was not
 * measured is NaN (printed as "-" or JSON null).
 */
struct bench_row {
    const char *op;
    uint64_t size; /* bytes, or chain length / iterations where noted */
    double p50_us, p99_us, p999_us, mean_us;
    double ops_per_s;
    uint64_t n; /* samples or operations behind the numbers */
    /* key-value modes: printed when clients > 0 */
    unsigned clients, writers;
    uint64_t errors; /* wrong, missing or failed answers */
};

/* A row with every number unset (NaN). */
struct bench_row bench_row(const char *op, uint64_t size);
/* Fills the latency fields (and ops_per_s = 1/mean) from samples. */
void bench_row_latency(struct bench_row *r, struct bench_samples *s);
void bench_emit(struct bench_ctx *c, const struct bench_row *r);
/* A comment line in table mode (nothing in JSON mode). */
void bench_note(struct bench_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

uint64_t bench_now_ns(void);

/* Modes. */
int bench_micro(struct bench_ctx *c);
int bench_tcp(struct bench_ctx *c);
int bench_redn(struct bench_ctx *c);
int bench_onesided(struct bench_ctx *c);
int bench_ideal(struct bench_ctx *c);
int bench_rpc_poll(struct bench_ctx *c);
int bench_rpc_event(struct bench_ctx *c);
int bench_kv_load(struct bench_ctx *c);
int bench_crash_load(struct bench_ctx *c);
/* `rdn-bench crash ARGS`: runs bench/crash-bench ARGS (only returns on
 * failure). argv[0] is "crash". */
int bench_crash(int argc, char **argv);

#endif /* BENCH_BENCH_H */
