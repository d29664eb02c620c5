/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/rdn-bench.c - the benchmark tool: `rdn-bench MODE [options]`.
 * Options common to every mode are parsed here; each mode lives in its
 * own file (bench/bench_<mode>.c) and is listed in `modes` below.
 */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_get.h"

struct mode {
    const char *name;
    int (*run)(struct bench_ctx *c);
    bool kv; /* a key-value mode: no device of its own, --server needed */
    const char *help;
};

static const struct mode modes[] = {
    {"micro", bench_micro, false,
     "verb latency (READ/WRITE/CAS, 8 B..64 KB), WQE throughput, the cost "
     "of one more WR in WQ / completion / doorbell order (RedN Fig. 7), "
     "if / unrolled while / recycled while (RedN Table 3)"},
    {"get", bench_get, false,
     "the offloaded GET's chain vs one READ (ideal), 64 B..64 KB"},
    {"tcp", bench_tcp, true, "GET over TCP with libmemcached"},
    {"redn", bench_redn, true, "offloaded GET (librdn, NIC answers only)"},
    {"onesided", bench_onesided, true,
     "FaRM-style: READ both buckets, then the item"},
    {"ideal", bench_ideal, true, "one READ of the item (a lower bound)"},
    {"rpc-poll", bench_rpc_poll, true,
     "RPC over RDMA, server thread polls its CQ"},
    {"rpc-event", bench_rpc_event, true,
     "RPC over RDMA, server thread sleeps on its CQ"},
    {"load", bench_kv_load, true, "only store the keys (a reload)"},
    {"crash-load", bench_crash_load, true,
     "the crash experiment's GET load on one system (--system,\n"
     "             --secs, --timeout-ms; reads marks on stdin, prints a\n"
     "             line per 100 ms and a summary: bench_crash_load.c)"},
};

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: rdn-bench MODE [--model fast|cx5] [--json] [--iters N]\n"
        "                      [--par N] [--device NAME]\n"
        "  --model   softnic timing preset (default fast)\n"
        "  --json    one JSON object per result line\n"
        "  --iters   samples per latency measurement (default 2000)\n"
        "  --par     concurrent chains in throughput runs (default 4)\n"
        "  --device  rnic device (default softnic-inproc; engine threads\n"
        "            from RDN_SOFTNIC_THREADS, pinning RDN_SOFTNIC_CPUS)\n"
        "key-value modes (GETs of a running memcached; the device is\n"
        "$RDN_DEVICE, else softnic):\n"
        "  --server HOST:PORT   its TCP port (keys are stored there)\n"
        "  --servers CONFIG     or a server list, a libmemcached\n"
        "                       configuration string (\"--SERVER=h:p\n"
        "                       --SERVER=h:p2 --DISTRIBUTION=consistent\"):\n"
        "                       tcp, redn and redn-app, keys placed by\n"
        "                       libmemcached, first placement only\n"
        "  --rdn-port N         its --rdn-port (redn, onesided, ideal)\n"
        "  --bl-port N          its --rdn-baselines port (onesided,\n"
        "                       ideal, rpc-*)\n"
        "  --value-size N       bytes per value (default 64)\n"
        "  --keys N             distinct keys (default 100)\n"
        "  --clients N          measuring threads, one connection each\n"
        "                       (default 1)\n"
        "  --batch N            multi-gets of N keys (tcp, redn,\n"
        "                       redn-app; 1..64, default 1): one sample\n"
        "                       per multi-get, N GETs counted\n"
        "  --writers N          closed-loop SET threads meanwhile\n"
        "  --client-cpu N, --writer-cpu N   pin them to a CPU\n"
        "  --rt                 measuring threads at SCHED_FIFO (if\n"
        "                       permitted; a note says if not)\n"
        "  --no-load            the keys are stored already\n"
        "  --label NAME         system name in the results\n"
        "  --placement P        where measured keys sit: first (their\n"
        "                       first bucket), second (the first is\n"
        "                       full), full (their full first bucket)\n"
        "  --search S           redn: the chain searches both buckets\n"
        "                       at once (parallel, default) or one\n"
        "                       after the other (seq: RedN-Seq)\n"
        "  --system NAME        crash-load: tcp, redn, rpc-poll or\n       "
        "                rpc-event\n"
        "  --secs S             crash-load: seconds of load (default 12)\n"
        "  --timeout-ms N       bound on each wait for an answer\n"
        "                       (crash-load default 200; else the\n"
        "                       libraries' own)\n"
        "modes:\n");
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        fprintf(f, "  %-10s %s\n", modes[i].name, modes[i].help);
    fprintf(f, "  %-10s %s\n", "crash",
            "the crash experiment (RedN Fig. 16): kill -9 the server under\n"
            "             GET load over redn, rpc and tcp-stock; runs\n"
            "             bench/crash-bench with its own options (rdn-bench\n"
            "             crash --help)");
}

static int placement(const char *s, enum kv_placement *out)
{
    static const char *const names[] = {"first", "second", "full"};

    for (unsigned i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) {
            *out = (enum kv_placement)i;
            return 0;
        }
    return -1;
}

static int parse(int argc, char **argv, struct bench_opts *o)
{
    static const struct option lo[] = {
        {"model", required_argument, NULL, 'm'},
        {"json", no_argument, NULL, 'j'},
        {"iters", required_argument, NULL, 'i'},
        {"par", required_argument, NULL, 'p'},
        {"device", required_argument, NULL, 'd'},
        {"server", required_argument, NULL, 's'},
        {"servers", required_argument, NULL, 'L'},
        {"rdn-port", required_argument, NULL, 'R'},
        {"bl-port", required_argument, NULL, 'B'},
        {"value-size", required_argument, NULL, 'v'},
        {"keys", required_argument, NULL, 'k'},
        {"clients", required_argument, NULL, 'c'},
        {"batch", required_argument, NULL, 'b'},
        {"writers", required_argument, NULL, 'w'},
        {"client-cpu", required_argument, NULL, 'C'},
        {"writer-cpu", required_argument, NULL, 'W'},
        {"rt", no_argument, NULL, 'r'},
        {"no-load", no_argument, NULL, 'n'},
        {"label", required_argument, NULL, 'l'},
        {"placement", required_argument, NULL, 'P'},
        {"search", required_argument, NULL, 'Q'},
        {"system", required_argument, NULL, 'S'},
        {"secs", required_argument, NULL, 'T'},
        {"timeout-ms", required_argument, NULL, 'O'},
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
        case 's':
            o->server = optarg;
            break;
        case 'L':
            o->servers = optarg;
            break;
        case 'R':
            o->rdn_port = atoi(optarg);
            break;
        case 'B':
            o->bl_port = atoi(optarg);
            break;
        case 'v':
            o->value_size = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'k':
            o->keys = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'c':
            o->clients = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'b':
            o->batch = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'w':
            o->writers = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'C':
            o->client_cpu = atoi(optarg);
            break;
        case 'W':
            o->writer_cpu = atoi(optarg);
            break;
        case 'r':
            o->rt = true;
            break;
        case 'n':
            o->no_load = true;
            break;
        case 'l':
            o->label = optarg;
            break;
        case 'P':
            if (placement(optarg, &o->placement) < 0)
                return -1;
            break;
        case 'Q':
            if (strcmp(optarg, "seq") && strcmp(optarg, "parallel"))
                return -1;
            o->search_seq = !strcmp(optarg, "seq");
            break;
        case 'S':
            o->system = optarg;
            break;
        case 'T':
            o->secs = strtod(optarg, NULL);
            break;
        case 'O':
            o->timeout_ms = atoi(optarg);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -1;
        }
    }
    if (optind != argc || o->iters == 0 || o->par == 0 || o->par > 64 ||
        o->keys == 0 || o->clients == 0 || o->clients > 64 || o->writers > 64 ||
        o->value_size > 1024 * 1024 || o->secs < 0 || o->timeout_ms < 0 ||
        (o->servers && o->placement != KV_PLACE_FIRST) || o->batch == 0 ||
        o->batch > KV_BATCH_MAX)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_ctx c = {.o = {.device = "softnic-inproc",
                                .model = "fast",
                                .iters = 2000,
                                .par = 4,
                                .value_size = 64,
                                .keys = 100,
                                .clients = 1,
                                .batch = 1,
                                .client_cpu = -1,
                                .writer_cpu = -1}};
    struct rnic_open_opts oo = {0};
    const struct mode *m = NULL;
    const char *th = getenv("RDN_SOFTNIC_THREADS");
    int rc;

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "crash")) /* options of its own */
        return bench_crash(argc - 1, argv + 1) < 0 ? 1 : 0;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        if (!strcmp(argv[1], modes[i].name))
            m = &modes[i];
    if (!m || parse(argc - 1, argv + 1, &c.o) < 0) {
        usage(stderr);
        return 2;
    }
    if (m->kv) {
        /* the client libraries open their devices with the env's model */
        setenv("RDN_SOFTNIC_MODEL", c.o.model, 1);
        c.system = c.o.label ? c.o.label : m->name;
        return m->run(&c) < 0 ? 1 : 0;
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
