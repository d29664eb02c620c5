/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_stats.c - samples, percentiles and result rows (a readable
 * table, or one JSON object per line) for every rdn-bench mode.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"

uint64_t bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void bench_samples_add(struct bench_samples *s, uint64_t ns)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        uint64_t *p = realloc(s->ns, cap * sizeof(*p));

        if (!p) {
            fprintf(stderr, "rdn-bench: out of memory\n");
            exit(1);
        }
        s->ns = p;
        s->cap = cap;
    }
    s->ns[s->n++] = ns;
}

void bench_samples_reset(struct bench_samples *s)
{
    s->n = 0;
}

void bench_samples_free(struct bench_samples *s)
{
    free(s->ns);
    memset(s, 0, sizeof(*s));
}

struct bench_row bench_row(const char *op, uint64_t size)
{
    struct bench_row r = {.op = op,
                          .size = size,
                          .p50_us = NAN,
                          .p99_us = NAN,
                          .p999_us = NAN,
                          .mean_us = NAN,
                          .ops_per_s = NAN};

    return r;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* The q-quantile (nearest rank) of sorted samples, in microseconds. */
static double quantile_us(const struct bench_samples *s, double q)
{
    size_t rank = (size_t)ceil(q * (double)s->n);

    if (rank == 0)
        rank = 1;
    return (double)s->ns[rank - 1] / 1000.0;
}

void bench_row_latency(struct bench_row *r, struct bench_samples *s)
{
    double sum = 0;

    if (s->n == 0)
        return;
    qsort(s->ns, s->n, sizeof(*s->ns), cmp_u64);
    for (size_t i = 0; i < s->n; i++)
        sum += (double)s->ns[i];
    r->p50_us = quantile_us(s, 0.50);
    r->p99_us = quantile_us(s, 0.99);
    r->p999_us = quantile_us(s, 0.999);
    r->mean_us = sum / (double)s->n / 1000.0;
    r->ops_per_s = 1e6 / r->mean_us;
    r->n = s->n;
}

static void header(struct bench_ctx *c)
{
    if (c->header_done || c->o.json)
        return;
    c->header_done = true;
    printf("%-22s %8s %10s %10s %10s %10s %14s %8s\n", "op", "size", "p50_us",
           "p99_us", "p99.9_us", "mean_us", "ops_per_s", "n");
}

static void cell(double v)
{
    if (isnan(v))
        printf(" %10s", "-");
    else
        printf(" %10.3f", v);
}

static void json_num(const char *key, double v, bool last)
{
    if (isnan(v))
        printf("\"%s\":null%s", key, last ? "" : ",");
    else
        printf("\"%s\":%.4f%s", key, v, last ? "" : ",");
}

void bench_emit(struct bench_ctx *c, const struct bench_row *r)
{
    if (c->o.json) {
        printf("{\"system\":\"%s\",\"model\":\"%s\",\"threads\":%u,"
               "\"op\":\"%s\",\"size\":%llu,",
               c->system ? c->system : rnic_device_name(c->dev), c->o.model,
               c->threads, r->op, (unsigned long long)r->size);
        if (r->clients)
            printf("\"clients\":%u,\"writers\":%u,\"errors\":%llu,", r->clients,
                   r->writers, (unsigned long long)r->errors);
        json_num("p50_us", r->p50_us, false);
        json_num("p99_us", r->p99_us, false);
        json_num("p999_us", r->p999_us, false);
        json_num("mean_us", r->mean_us, false);
        json_num("ops_per_s", r->ops_per_s, false);
        printf("\"n\":%llu}\n", (unsigned long long)r->n);
    } else {
        header(c);
        printf("%-22s %8llu", r->op, (unsigned long long)r->size);
        cell(r->p50_us);
        cell(r->p99_us);
        cell(r->p999_us);
        cell(r->mean_us);
        if (isnan(r->ops_per_s))
            printf(" %14s", "-");
        else
            printf(" %14.0f", r->ops_per_s);
        printf(" %8llu", (unsigned long long)r->n);
        if (r->clients)
            printf("  clients %u writers %u errors %llu", r->clients,
                   r->writers, (unsigned long long)r->errors);
        printf("\n");
    }
    fflush(stdout);
}

void bench_note(struct bench_ctx *c, const char *fmt, ...)
{
    va_list ap;

    if (c->o.json)
        return;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}
