/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/inproc.c - the "softnic-inproc" provider: an engine inside
 * the application, shared by every in-process device (so their QPs can
 * connect), started with the first device and stopped with the last.
 * Control requests are direct calls into the engine's handler; there is no
 * persistence (the engine dies with the process).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdn/softnic/client.h"
#include "rdn/softnic/engine_int.h"
#include "rdn/softnic/softnic.h"

#define SN_DEFAULT_SPIN_NS 50000u

static pthread_mutex_t sn_inproc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sn_engine *sn_inproc_engine; /* protected by the lock */
static unsigned sn_inproc_users;

struct sn_inproc {
    struct sn_transport tp;
    struct sn_session *session;
};

static int sn_inproc_call(struct sn_transport *tp, const struct sn_ctl_req *req,
                          int fd_in, struct sn_ctl_resp *resp, int *fd_out)
{
    struct sn_inproc *ip = (struct sn_inproc *)tp;

    sn_ctl_handle(ip->session, req, fd_in, resp, fd_out);
    return 0;
}

static void sn_inproc_close(struct sn_transport *tp)
{
    struct sn_inproc *ip = (struct sn_inproc *)tp;

    sn_session_end(ip->session);
    pthread_mutex_lock(&sn_inproc_lock);
    if (--sn_inproc_users == 0) {
        sn_engine_destroy(sn_inproc_engine);
        sn_inproc_engine = NULL;
    }
    pthread_mutex_unlock(&sn_inproc_lock);
    free(ip);
}

/*
 * Engine options from RDN_SOFTNIC_THREADS, RDN_SOFTNIC_CPUS and
 * RDN_SOFTNIC_SPIN_US (like rdn-nicd's --threads, --cpus and --spin-us).
 */
static void sn_inproc_opts(struct sn_engine_opts *o, int *cpus)
{
    const char *th = getenv("RDN_SOFTNIC_THREADS");
    const char *cl = getenv("RDN_SOFTNIC_CPUS");
    const char *spin = getenv("RDN_SOFTNIC_SPIN_US");

    memset(o, 0, sizeof(*o));
    o->threads = th ? (unsigned)atoi(th) : 1;
    o->spin_ns = SN_DEFAULT_SPIN_NS;
    if (spin) {
        unsigned long us = strtoul(spin, NULL, 10);

        o->spin_ns =
            us < UINT32_MAX / 1000u ? (uint32_t)us * 1000u : UINT32_MAX;
    }
    o->cpus = cpus;
    while (cl && *cl && o->ncpus < SN_MAX_THREADS) {
        char *end;
        long c = strtol(cl, &end, 10);

        if (end == cl)
            break;
        cpus[o->ncpus++] = (int)c;
        cl = *end == ',' ? end + 1 : end;
    }
}

static int sn_inproc_open(const char *name, const struct rnic_open_opts *opts,
                          struct rnic_device **out)
{
    struct sn_inproc *ip;
    int rc = 0;

    if (strcmp(name, "softnic-inproc") != 0)
        return -ENODEV;
    ip = calloc(1, sizeof(*ip));
    if (!ip)
        return rnic_err(-ENOMEM, "rnic_open: out of memory");
    pthread_mutex_lock(&sn_inproc_lock);
    if (!sn_inproc_engine) {
        struct sn_engine_opts eo;
        int cpus[SN_MAX_THREADS];

        sn_inproc_opts(&eo, cpus);
        rc = sn_engine_create(&eo, &sn_inproc_engine);
    }
    if (rc == 0) {
        ip->session = sn_session_new(sn_inproc_engine, getpid());
        if (!ip->session)
            rc = -ENOMEM;
        else
            sn_inproc_users++;
    }
    if (rc && !sn_inproc_users && sn_inproc_engine) {
        sn_engine_destroy(sn_inproc_engine);
        sn_inproc_engine = NULL;
    }
    pthread_mutex_unlock(&sn_inproc_lock);
    if (rc) {
        free(ip);
        return rnic_err(rc,
                        "rnic_open: cannot start the softnic engine "
                        "(RDN_SOFTNIC_THREADS must be 1..%d)",
                        SN_MAX_THREADS);
    }
    ip->tp.call = sn_inproc_call;
    ip->tp.close = sn_inproc_close;
    return sn_client_open(name, &ip->tp, opts, out);
}

const struct rnic_provider sn_provider_inproc = {
    .name = "softnic-inproc",
    .open = sn_inproc_open,
};
