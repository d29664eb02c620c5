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

#include "rdn/rnic.h"

struct bench_opts {
    const char *device; /* rnic device name (default softnic-inproc) */
    const char *model;  /* timing preset: fast or cx5 */
    bool json;
    unsigned iters; /* samples per latency measurement */
    unsigned par;   /* concurrent chains for throughput runs */
};

struct bench_ctx {
    struct bench_opts o;
    struct rnic_device *dev;
    unsigned threads; /* engine threads (RDN_SOFTNIC_THREADS) */
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

#endif /* BENCH_BENCH_H */
