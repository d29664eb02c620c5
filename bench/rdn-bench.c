/*
 * bench/rdn-bench.c - the benchmark tool: `rdn-bench MODE [options]`.
 * Options common to every mode are parsed here; each mode lives in its
 * own file (bench/bench_<mode>.c) and is listed in `modes` below.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_get.h"

struct mode {
    const char *name;
    int (*run)(struct bench_ctx *c);
    const char *help;
};

static const struct mode modes[] = {
    {"micro", bench_micro,
     "verb latency (READ/WRITE/CAS, 8 B..64 KB), WQE throughput, the cost "
     "of one more WR in WQ / completion / doorbell order (RedN Fig. 7), "
     "if / unrolled while / recycled while (RedN Table 3)"},
    {"get", bench_get,
     "the offloaded GET's chain vs one READ (ideal), 64 B..64 KB"},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rdn-bench MODE [--model fast|cx5] [--json] [--iters N]\n"
            "                      [--par N] [--device NAME]\n"
            "  --model   softnic timing preset (default fast)\n"
            "  --json    one JSON object per result line\n"
            "  --iters   samples per latency measurement (default 2000)\n"
            "  --par     concurrent chains in throughput runs (default 4)\n"
            "  --device  rnic device (default softnic-inproc; engine threads\n"
            "            from RDN_SOFTNIC_THREADS, pinning RDN_SOFTNIC_CPUS)\n"
            "modes:\n");
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        fprintf(f, "  %-8s %s\n", modes[i].name, modes[i].help);
}

static int parse(int argc, char **argv, struct bench_opts *o)
{
    static const struct option lo[] = {
        {"model", required_argument, NULL, 'm'},
        {"json", no_argument, NULL, 'j'},
        {"iters", required_argument, NULL, 'i'},
        {"par", required_argument, NULL, 'p'},
        {"device", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;

    while ((ch = getopt_long(argc, argv, "m:ji:p:d:h", lo, NULL)) != -1) {
        switch (ch) {
        case 'm':
            o->model = optarg;
            break;
        case 'j':
            o->json = true;
            break;
        case 'i':
            o->iters = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'p':
            o->par = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'd':
            o->device = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -1;
        }
    }
    if (optind != argc || o->iters == 0 || o->par == 0 || o->par > 64)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_ctx c = {.o = {.device = "softnic-inproc",
                                .model = "fast",
                                .iters = 2000,
                                .par = 4}};
    struct rnic_open_opts oo = {0};
    const struct mode *m = NULL;
    const char *th = getenv("RDN_SOFTNIC_THREADS");
    int rc;

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        if (!strcmp(argv[1], modes[i].name))
            m = &modes[i];
    if (!m || parse(argc - 1, argv + 1, &c.o) < 0) {
        usage(stderr);
        return 2;
    }
    oo.model = c.o.model;
    rc = rnic_open(c.o.device, &oo, &c.dev);
    if (rc < 0) {
        fprintf(stderr, "rdn-bench: %s\n", rnic_errmsg());
        return 1;
    }
    c.threads = th && *th ? (unsigned)atoi(th) : 1;
    rc = m->run(&c);
    rnic_close(c.dev);
    return rc < 0 ? 1 : 0;
}
