/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/rdn-trace.c - prints a chain's timeline from a softnic WQE
 * trace (RDN_SOFTNIC_TRACE=file, or rdn-nicd --trace): one row per WQE in
 * start order, times relative to the first WQE shown, and a bar showing
 * when each WQE ran within the whole span.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/rnic/rnic.h"
#include "rdn/softnic/trace.h"

#define BAR_WIDTH 40

static void usage(FILE *f)
{
    fprintf(f, "usage: rdn-trace [options] TRACE-FILE\n"
               "Prints the timeline of the WQEs in a softnic trace.\n"
               "  -d, --dev N      only device N\n"
               "  -q, --qp QPN     only QP QPN (hex, as in the trace)\n"
               "  -l, --last N     only the last N WQEs (by start time)\n"
               "  -n, --no-bars    no timeline bars\n"
               "  -h, --help       this text\n"
               "Columns: start and end in microseconds from the first WQE "
               "shown,\nfetch-to-start wait, duration, device, QP, WQE index, "
               "opcode, status.\n");
}

static int by_start(const void *a, const void *b)
{
    const struct sn_trace_rec *x = a, *y = b;

    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->qpn != y->qpn)
        return x->qpn < y->qpn ? -1 : 1;
    return (int)x->index - (int)y->index;
}

/* Reads the records of f that pass the filters; returns the count. */
static size_t read_trace(FILE *f, long dev, long qpn, struct sn_trace_rec **out)
{
    struct sn_trace_rec *v = NULL;
    size_t n = 0, cap = 0;
    char line[512], op[32];

    while (fgets(line, sizeof(line), f)) {
        struct sn_trace_rec r;
        unsigned qp, idx, status, d;
        int opc;

        if (line[0] == '#')
            continue;
        if (sscanf(line, "%u %x %x %31s %u %" SCNu64 " %" SCNu64 " %" SCNu64,
                   &d, &qp, &idx, op, &status, &r.fetch_ns, &r.start_ns,
                   &r.end_ns) != 8)
            continue;
        opc = sn_opcode_parse(op);
        if ((dev >= 0 && d != (unsigned long)dev) ||
            (qpn >= 0 && qp != (unsigned long)qpn) || opc < 0)
            continue;
        r.dev = d;
        r.qpn = qp;
        r.index = (uint16_t)idx;
        r.opcode = (uint8_t)opc;
        r.status = (uint8_t)status;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            v = realloc(v, cap * sizeof(*v));
            if (!v) {
                fprintf(stderr, "rdn-trace: out of memory\n");
                exit(1);
            }
        }
        v[n++] = r;
    }
    *out = v;
    return n;
}

static void print_bar(uint64_t t0, uint64_t span, const struct sn_trace_rec *r)
{
    char bar[BAR_WIDTH + 1];
    size_t a = span ? (size_t)((r->start_ns - t0) * BAR_WIDTH / span) : 0;
    size_t b = span ? (size_t)((r->end_ns - t0) * BAR_WIDTH / span) : 0;

    memset(bar, ' ', BAR_WIDTH);
    bar[BAR_WIDTH] = 0;
    if (a >= BAR_WIDTH)
        a = BAR_WIDTH - 1;
    if (b >= BAR_WIDTH)
        b = BAR_WIDTH - 1;
    for (size_t i = a; i <= b; i++)
        bar[i] = '=';
    printf(" |%s|", bar);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"dev", required_argument, NULL, 'd'},
        {"qp", required_argument, NULL, 'q'},
        {"last", required_argument, NULL, 'l'},
        {"no-bars", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long dev = -1, qpn = -1;
    size_t last = 0, n, first = 0;
    int bars = 1, c;
    struct sn_trace_rec *v;
    uint64_t t0, tend = 0;
    char buf[8];
    FILE *f;

    while ((c = getopt_long(argc, argv, "d:q:l:nh", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            dev = strtol(optarg, NULL, 10);
            break;
        case 'q':
            qpn = strtol(optarg, NULL, 16);
            break;
        case 'l':
            last = strtoul(optarg, NULL, 10);
            break;
        case 'n':
            bars = 0;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    f = fopen(argv[optind], "r");
    if (!f) {
        fprintf(stderr, "rdn-trace: %s: %s\n", argv[optind], strerror(errno));
        return 1;
    }
    n = read_trace(f, dev, qpn, &v);
    fclose(f);
    if (n == 0) {
        printf("no WQEs\n");
        return 0;
    }
    qsort(v, n, sizeof(*v), by_start);
    if (last && last < n)
        first = n - last;
    t0 = v[first].start_ns;
    for (size_t i = first; i < n; i++)
        if (v[i].end_ns > tend)
            tend = v[i].end_ns;
    printf("%10s %10s %8s %8s %4s %6s %5s %-9s %s\n", "start_us", "end_us",
           "wait_us", "dur_us", "dev", "qpn", "idx", "opcode", "status");
    for (size_t i = first; i < n; i++) {
        const struct sn_trace_rec *r = &v[i];

        printf("%10.3f %10.3f %8.3f %8.3f %4u %6x %5u %-9s %s",
               (double)(r->start_ns - t0) / 1e3, (double)(r->end_ns - t0) / 1e3,
               (double)(int64_t)(r->start_ns - r->fetch_ns) / 1e3,
               (double)(r->end_ns - r->start_ns) / 1e3, r->dev, r->qpn,
               r->index, sn_opcode_name(r->opcode, buf),
               r->status ? rnic_wc_status_str(r->status) : "ok");
        if (bars)
            print_bar(t0, tend - t0, r);
        printf("\n");
    }
    printf("%zu WQEs over %.3f us\n", n - first, (double)(tend - t0) / 1e3);
    free(v);
    return 0;
}
