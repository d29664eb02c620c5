/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_crash_load.c - `rdn-bench crash-load`: the steady GET load of
 * the crash experiment (bench/crash-bench, the paper's Figure 16).
 *
 *   rdn-bench crash-load --system S --server H:P [--rdn-port N]
 *                        [--bl-port N] [--keys N] [--value-size N]
 *                        [--secs S] [--timeout-ms MS] [--no-load]
 *
 * Stores the keys (unless --no-load), prints "ready", then GETs them round
 * robin in a closed loop, one at a time on one connection, for --secs
 * seconds through system S (tcp, redn, rpc-poll, rpc-event; redn is librdn
 * as applications use it, TCP fallback on). Every answer is checked
 * (bench_kv.h): a right value is a success, a miss, a wrong value and a
 * failure (an error, a timeout, a connection refused) are counted apart.
 * --timeout-ms bounds each wait for an answer (default 200), so that an
 * outage shows as failures, not as one long GET. After a failure the
 * client waits CRASH_RETRY_US and, unless the system's library rebuilds
 * its connection by itself (kv_sys.self_healing), opens a new connection.
 *
 * Marks: each line read on stdin, "NAME [WHEN]", names an event ("kill",
 * "restart", "up", or anything else) that happened at WHEN (seconds of
 * CLOCK_MONOTONIC, as Python's time.monotonic(); default: when the line is
 * read); it is echoed as "mark NAME T" (T in seconds since "ready"). The
 * summary uses three: the server was killed (kill), started again (restart),
 * and accepts again (up); a fourth, stop, ends the load before --secs (a
 * driver that knows when it has seen enough: the summary covers the run
 * up to it, the bins likewise).
 *
 * At the end, one line per 100 ms: "bin T OK MISS WRONG FAILED NIC" (NIC:
 * successes the server's NIC answered), then one line
 *   summary ok N miss N wrong N failed N nic N outage_ok N outage_nic N
 *           gap_s G first_ok_s F
 * outage_*: successes from kill to up; gap_s: the seconds of GET
 * unavailability, the longest time after the kill between two successes
 * (or from the kill, or to the end of the run if no success came) with a
 * GET in between that did not succeed (a client that merely did not run,
 * on a busy machine, is no outage); first_ok_s: from restart to the first
 * success ("-" if none).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_kv.h"
#include "proto/barrier.h"

#define CRASH_BIN_NS       100000000ull /* 100 ms per throughput sample */
#define CRASH_RETRY_US     1000         /* pause after a failed request */
#define CRASH_DEFAULT_SECS 12.0
#define CRASH_DEFAULT_TO   200 /* ms */
#define CRASH_ERRNO_MAX    256
#define CRASH_PENDING      64 /* stretches kept while the kill is unknown */

struct crash_bin {
    uint64_t ok, miss, wrong, failed, nic;
};

enum crash_mark { MARK_KILL, MARK_RESTART, MARK_UP, MARK_STOP, MARK_N };

/* GETs that did not succeed, between the success before them (from, 0:
 * none) and the one after (to, or the end of the run); bad: the last of
 * them (monotonic ns). */
struct crash_stretch {
    uint64_t from, bad, to;
};

struct crash_load {
    const struct kv_sys *sys;
    struct kv_data d;
    uint64_t t0; /* "ready", monotonic ns */
    struct crash_bin *bin;
    size_t nbins;
    /* when each event happened (monotonic ns; 0: not yet); the stdin
     * thread writes them, the load reads them */
    uint64_t mark[MARK_N];
    /* the summary, kept by the load thread */
    struct crash_bin all;
    uint64_t outage_ok, outage_nic;
    uint64_t last_ok;  /* monotonic ns of the last success, 0: none */
    uint64_t last_bad; /* of the last GET that did not succeed since the
                          last success, 0: none */
    uint64_t gap;      /* ns */
    /* failed stretches that ended before the kill's mark arrived */
    struct crash_stretch pending[CRASH_PENDING];
    unsigned npending;
    double first_ok;            /* s from restart, NAN: none yet */
    bool said[CRASH_ERRNO_MAX]; /* failure reasons logged already */
};

static const struct {
    const char *name;
    const struct kv_sys *sys;
} systems[] = {
    {"tcp", &kv_sys_tcp},
    {"redn", &kv_sys_redn_app},
    {"rpc-poll", &kv_sys_rpc_poll},
    {"rpc-event", &kv_sys_rpc_event},
};

static const struct kv_sys *system_named(const char *name)
{
    for (size_t i = 0; name && i < sizeof(systems) / sizeof(systems[0]); i++)
        if (!strcmp(name, systems[i].name))
            return systems[i].sys;
    return NULL;
}

/* Reads marks on stdin until EOF; see the top of the file. */
static void *marks_main(void *arg)
{
    static const char *const known[MARK_N] = {"kill", "restart", "up", "stop"};
    struct crash_load *l = arg;
    char line[128], name[64];
    double when;

    while (fgets(line, sizeof(line), stdin)) {
        uint64_t t = bench_now_ns();
        int n = sscanf(line, "%63s %lf", name, &when);

        if (n < 1)
            continue;
        /* the writer's clock is ours (CLOCK_MONOTONIC): trust its time */
        if (n == 2 && when * 1e9 > (double)l->t0 && when * 1e9 < (double)t)
            t = (uint64_t)(when * 1e9);
        for (int i = 0; i < MARK_N; i++)
            if (!strcmp(name, known[i]))
                store_seq_cst(&l->mark[i], t);
        printf("mark %s %.4f\n", name, (double)(t - l->t0) / 1e9);
        fflush(stdout);
    }
    return NULL;
}

/* A stretch with a GET failed after the kill was an outage from the kill
 * on at the earliest; the longest one is the gap. */
static void stretch_fold(struct crash_load *l, uint64_t kill,
                         const struct crash_stretch *st)
{
    uint64_t from = st->from > kill ? st->from : kill;

    if (st->bad > kill && st->to - from > l->gap)
        l->gap = st->to - from;
}

static void pending_fold(struct crash_load *l, uint64_t kill)
{
    for (unsigned i = 0; i < l->npending; i++)
        stretch_fold(l, kill, &l->pending[i]);
    l->npending = 0;
}

/*
 * At time t (a success, or the end of the run): ends the stretch of failed
 * GETs since the last success, if any. The kill's mark comes from another
 * thread, which a busy machine can hold back past the failures the kill
 * caused and the success after them: until the mark is there, the
 * stretches wait (the last CRASH_PENDING of them; the mark is late by
 * much less than that many outages), to be weighed against the kill's
 * time once it is known.
 */
static void outage_end(struct crash_load *l, uint64_t t)
{
    struct crash_stretch st = {l->last_ok, l->last_bad, t};
    uint64_t kill = load_seq_cst(&l->mark[MARK_KILL]);

    if (kill) {
        pending_fold(l, kill);
        if (st.bad)
            stretch_fold(l, kill, &st);
    } else if (st.bad) {
        if (l->npending == CRASH_PENDING) {
            memmove(l->pending, l->pending + 1,
                    (CRASH_PENDING - 1) * sizeof(l->pending[0]));
            l->npending--;
        }
        l->pending[l->npending++] = st;
    }
    l->last_bad = 0;
}

/* Accounts one request that ended at monotonic time t with rc. */
static void crash_count(struct crash_load *l, int rc, bool nic, uint64_t t)
{
    size_t i = (size_t)((t - l->t0) / CRASH_BIN_NS);
    struct crash_bin *b = &l->bin[i < l->nbins ? i : l->nbins - 1];
    uint64_t kill = load_seq_cst(&l->mark[MARK_KILL]);
    uint64_t restart = load_seq_cst(&l->mark[MARK_RESTART]);
    uint64_t up = load_seq_cst(&l->mark[MARK_UP]);

    if (rc != 0) {
        uint64_t *n = rc == -ENOENT    ? &b->miss
                      : rc == -EBADMSG ? &b->wrong
                                       : &b->failed;
        (*n)++;
        l->last_bad = t;
        if (n == &b->failed && -rc < CRASH_ERRNO_MAX && !l->said[-rc]) {
            l->said[-rc] = true; /* each reason once, for the log */
            fprintf(stderr, "crash-load: %.4f s: a request failed: %s\n",
                    (double)(t - l->t0) / 1e9, strerror(-rc));
        }
        return;
    }
    b->ok++;
    b->nic += nic;
    outage_end(l, t);
    if (kill && t > kill && (!up || t < up)) {
        l->outage_ok++;
        l->outage_nic += nic;
    }
    if (restart && t > restart && isnan(l->first_ok))
        l->first_ok = (double)(t - restart) / 1e9;
    l->last_ok = t;
}

/*
 * The closed loop on handle h (NULL: none yet) until end (monotonic ns) or
 * the stop mark; returns when it ended.
 */
static uint64_t crash_run(struct crash_load *l, struct bench_ctx *c, void *h,
                          uint64_t end)
{
    struct timespec pause = {0, CRASH_RETRY_US * 1000L};
    unsigned nk = l->d.keys.nmeasured;

    for (uint64_t n = 0;; n++) {
        bool nic = false;
        int rc = h ? 0 : l->sys->open(c, &h); /* a refused open: failed */
        uint64_t t;

        if (rc == 0)
            rc = kv_data_get(&l->d, l->sys, h, (unsigned)(n % nk), &nic, NULL);
        t = bench_now_ns();
        if (load_seq_cst(&l->mark[MARK_STOP]))
            end = t;
        if (t >= end)
            break;
        crash_count(l, rc, nic, t);
        if (rc < 0 && rc != -ENOENT && rc != -EBADMSG) {
            if (h && !l->sys->self_healing) {
                l->sys->close(h);
                h = NULL;
            }
            nanosleep(&pause, NULL);
        }
    }
    if (h)
        l->sys->close(h);
    return end;
}

static void crash_print(struct crash_load *l, uint64_t end)
{
    size_t nbins = (size_t)((end - l->t0 + CRASH_BIN_NS - 1) / CRASH_BIN_NS);

    for (size_t i = 0; i < nbins && i < l->nbins; i++) {
        const struct crash_bin *b = &l->bin[i];

        printf("bin %.1f %llu %llu %llu %llu %llu\n",
               (double)i * CRASH_BIN_NS / 1e9, (unsigned long long)b->ok,
               (unsigned long long)b->miss, (unsigned long long)b->wrong,
               (unsigned long long)b->failed, (unsigned long long)b->nic);
        l->all.ok += b->ok;
        l->all.miss += b->miss;
        l->all.wrong += b->wrong;
        l->all.failed += b->failed;
        l->all.nic += b->nic;
    }
    outage_end(l, end); /* still failing at the end */
    printf("summary ok %llu miss %llu wrong %llu failed %llu nic %llu "
           "outage_ok %llu outage_nic %llu gap_s %.4f first_ok_s ",
           (unsigned long long)l->all.ok, (unsigned long long)l->all.miss,
           (unsigned long long)l->all.wrong, (unsigned long long)l->all.failed,
           (unsigned long long)l->all.nic, (unsigned long long)l->outage_ok,
           (unsigned long long)l->outage_nic, (double)l->gap / 1e9);
    if (isnan(l->first_ok))
        printf("-\n");
    else
        printf("%.4f\n", l->first_ok);
    fflush(stdout);
}

int bench_crash_load(struct bench_ctx *c)
{
    struct crash_load l = {.sys = system_named(c->o.system), .first_ok = NAN};
    double secs = c->o.secs > 0 ? c->o.secs : CRASH_DEFAULT_SECS;
    void *h = NULL;
    pthread_t marks;
    uint64_t end;
    int rc;

    if (!l.sys) {
        fprintf(stderr, "rdn-bench crash-load: --system tcp, redn, rpc-poll "
                        "or rpc-event\n");
        return -EINVAL;
    }
    if (c->o.timeout_ms <= 0)
        c->o.timeout_ms = CRASH_DEFAULT_TO;
    l.nbins = (size_t)ceil(secs * 1e9 / CRASH_BIN_NS);
    l.bin = calloc(l.nbins, sizeof(*l.bin));
    rc = l.bin ? kv_data_open(c, &l.d) : -ENOMEM;
    if (rc == 0 && !c->o.no_load)
        rc = kv_data_store(&l.d);
    if (rc == 0)
        rc = l.sys->open(c, &h);
    if (rc < 0) {
        fprintf(stderr, "rdn-bench crash-load: %s: %s\n", c->o.system,
                strerror(-rc));
    } else {
        l.t0 = bench_now_ns();
        end = l.t0 + (uint64_t)(secs * 1e9);
        printf("ready\n");
        fflush(stdout);
        /* reads stdin until the process ends: never joined */
        if (pthread_create(&marks, NULL, marks_main, &l) == 0)
            pthread_detach(marks);
        end = crash_run(&l, c, h, end);
        crash_print(&l, end);
    }
    kv_data_close(&l.d);
    free(l.bin);
    return rc;
}
