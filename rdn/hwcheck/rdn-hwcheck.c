/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/hwcheck/rdn-hwcheck.c - what a NIC can do of what RedN's chains need,
 * feature by feature: the first thing to run on a ConnectX.
 *
 *   rdn-hwcheck [-d DEVICE] [-v]
 *
 * Each probe builds its own queues on loopback (a QP connected to itself
 * or to a second QP of the device) with the chain library and prints one
 * line: pass, fail or unsupported, with the errno and what was seen. Exit
 * status: 0 when nothing failed (unsupported features are not failures),
 * 1 otherwise, 2 when the device does not open.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/barrier.h"
#include "rdn/chain/chain.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)
#define MANAGED  (RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND)
#define PROBE_MS 2000 /* how long a probe waits for the NIC */
#define QUIET_MS 100  /* how long "nothing happened" is watched */

struct probe_ctx {
    struct rnic_device *dev;
    struct chain_buf mem; /* 4 KB of scratch, all access */
    char detail[200];
};

static void usage(FILE *f)
{
    fprintf(
        f, "usage: rdn-hwcheck [-d DEVICE] [-v]\n"
           "Probes an RDMA device for what RedN's chains need: cross-channel\n"
           "QPs, WAIT on a CQ count, SEND_EN of a managed queue, a CAS that\n"
           "turns a NOP into a WRITE, a RECV scattering into a WQE, atomic\n"
           "byte order, and whether the NIC checks a WQE's ctrl-segment\n"
           "index/QPN. One line per feature: pass, fail or unsupported\n"
           "(with the errno).\n"
           "  -d DEVICE  e.g. mlx5:mlx5_0 (default $RDN_DEVICE, else softnic)\n"
           "  -v         say what each probe saw\n"
           "NOTE: the mlx5 provider this is meant for has NEVER RUN ON\n"
           "HARDWARE: it was written from the PRM and public drivers and is\n"
           "only compiled and unit tested here. Its results on a real\n"
           "ConnectX are the first evidence either way; the probes\n"
           "themselves are tested on softnic.\n");
}

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits until the 8 bytes at p equal v: 1 if they did within ms. */
static int wait_u64(const uint8_t *p, uint64_t v, int ms)
{
    uint64_t end = now_ms() + (uint64_t)ms;
    struct timespec nap = {0, 20000};

    do {
        if (load_acquire((const uint64_t *)(const void *)p) == v)
            return 1;
        nanosleep(&nap, NULL);
    } while (now_ms() < end);
    return 0;
}

static int fail(struct probe_ctx *c, int rc, const char *what)
{
    snprintf(c->detail, sizeof(c->detail), "%s: %s", what, chain_errmsg());
    return rc < 0 ? rc : -EIO;
}

static int open_q(struct probe_ctx *c, unsigned flags, uint32_t rq,
                  struct chain_q *q)
{
    struct chain_q_attr a = {
        .sq_wqebb = 64, .rq_wqe = rq, .max_recv_sge = 4, .flags = flags};
    int rc = chain_q_open(c->dev, &a, q);

    return rc < 0 ? fail(c, rc, "queue") : 0;
}

static struct chain_loc word(struct probe_ctx *c, unsigned i)
{
    return chain_buf_loc(&c->mem, 8 * i, 8);
}

static uint8_t *word_ptr(struct probe_ctx *c, unsigned i)
{
    return c->mem.ptr + 8 * i;
}

/* A WRITE of word src to word dst, as a chain_wr. */
static struct chain_wr write_wr(struct probe_ctx *c, const struct rnic_sge *sg,
                                unsigned dst)
{
    struct chain_loc d = word(c, dst);

    return (struct chain_wr){.opcode = MLX5_OPCODE_RDMA_WRITE,
                             .flags = CHAIN_SIGNALED,
                             .sg = sg,
                             .nsg = 1,
                             .raddr = chain_loc_addr(d),
                             .rkey = d.rkey};
}

/* Sets word i to v. */
static void put(struct probe_ctx *c, unsigned i, uint64_t v)
{
    memcpy(word_ptr(c, i), &v, 8);
}

static int probe_cross_channel_qp(struct probe_ctx *c)
{
    struct chain_q m, s;
    int rc = open_q(c, RNIC_QP_CROSS_CHANNEL, 0, &m);

    if (rc == 0) {
        rc = open_q(c, MANAGED | RNIC_QP_MANAGED_RECV, 8, &s);
        if (rc == 0)
            chain_q_close(&s);
        chain_q_close(&m);
    }
    if (rc == 0)
        snprintf(c->detail, sizeof(c->detail),
                 "cd_master and cd_slave_send/receive QPs created");
    return rc;
}

static int probe_ignore_overrun(struct probe_ctx *c)
{
    struct chain_cq cq;
    int rc = chain_cq_open(c->dev, 16, RNIC_CQ_IGNORE_OVERRUN, &cq);

    if (rc < 0)
        return fail(c, rc, "CQ");
    chain_cq_close(&cq);
    return 0;
}

/*
 * WAIT: a cross-channel queue WAITs for one completion of another queue's
 * CQ before a WRITE; the WRITE must not run before that completion.
 */
static int probe_wait(struct probe_ctx *c)
{
    struct chain_q m, o;
    struct rnic_sge one = chain_loc_sge(word(c, 0));
    struct chain_wr w = write_wr(c, &one, 1);
    int rc = open_q(c, RNIC_QP_CROSS_CHANNEL, 0, &m);

    if (rc < 0)
        return rc;
    rc = open_q(c, 0, 0, &o);
    if (rc < 0)
        goto close_m;
    put(c, 0, 1);
    put(c, 1, 0);
    if (chain_q_connect(&m, &m) < 0 || chain_q_connect(&o, &o) < 0 ||
        chain_wait(&m, o.scq, o.scq->count + 1, 0, NULL) < 0 ||
        chain_post(&m, &w, NULL) < 0 || chain_q_doorbell(&m) < 0) {
        rc = fail(c, -EIO, "WAIT chain");
        goto close_o;
    }
    if (wait_u64(word_ptr(c, 1), 1, QUIET_MS)) {
        snprintf(c->detail, sizeof(c->detail),
                 "the WRITE after the WAIT ran before the CQ count was met");
        rc = -EPROTO;
        goto close_o;
    }
    if (chain_nop(&o, CHAIN_SIGNALED, NULL) < 0 || chain_q_doorbell(&o) < 0) {
        rc = fail(c, -EIO, "completion");
        goto close_o;
    }
    if (!wait_u64(word_ptr(c, 1), 1, PROBE_MS)) {
        snprintf(c->detail, sizeof(c->detail),
                 "the WAIT never released the WRITE");
        rc = -ETIMEDOUT;
    }
close_o:
    chain_q_close(&o);
close_m:
    chain_q_close(&m);
    return rc;
}

/* SEND_EN: a WRITE on a managed queue runs only once enabled. */
static int probe_send_en(struct probe_ctx *c)
{
    struct chain_q m, t;
    struct rnic_sge one = chain_loc_sge(word(c, 0));
    struct chain_wr w = write_wr(c, &one, 2);
    int rc = open_q(c, RNIC_QP_CROSS_CHANNEL, 0, &m);

    if (rc < 0)
        return rc;
    rc = open_q(c, MANAGED, 0, &t);
    if (rc < 0)
        goto close_m;
    put(c, 0, 1);
    put(c, 2, 0);
    if (chain_q_connect(&m, &m) < 0 || chain_q_connect(&t, &t) < 0 ||
        chain_post(&t, &w, NULL) < 0) {
        rc = fail(c, -EIO, "managed queue");
        goto close_t;
    }
    if (wait_u64(word_ptr(c, 2), 1, QUIET_MS)) {
        snprintf(c->detail, sizeof(c->detail),
                 "the managed queue ran without SEND_EN");
        rc = -EPROTO;
        goto close_t;
    }
    if (chain_kick(&m, &t) < 0) {
        rc = fail(c, -EIO, "SEND_EN");
        goto close_t;
    }
    if (!wait_u64(word_ptr(c, 2), 1, PROBE_MS)) {
        snprintf(c->detail, sizeof(c->detail),
                 "SEND_EN did not release the WRITE");
        rc = -ETIMEDOUT;
    }
close_t:
    chain_q_close(&t);
close_m:
    chain_q_close(&m);
    return rc;
}

/*
 * RedN's if: a CAS on the ctrl segment of a NOP on a managed queue turns it
 * into a WRITE when its operand matches, then WAIT + SEND_EN release it.
 * Run twice: x == y must write, x != y must not.
 */
static int run_if(struct probe_ctx *c, uint64_t x, uint64_t y, unsigned dst,
                  uint64_t *seen)
{
    struct chain_q ctl, t;
    struct rnic_sge one = chain_loc_sge(word(c, 0));
    struct chain_wr w = write_wr(c, &one, dst);
    struct chain_if iff;
    int rc = open_q(c, RNIC_QP_CROSS_CHANNEL, 0, &ctl);

    if (rc < 0)
        return rc;
    rc = open_q(c, MANAGED, 0, &t);
    if (rc < 0)
        goto close_ctl;
    put(c, dst, 0);
    if (chain_q_connect(&ctl, &ctl) < 0 || chain_q_connect(&t, &t) < 0 ||
        chain_if_eq(&ctl, &t, &w, x, y, CHAIN_IF_ARM, 0, &iff) < 0 ||
        chain_nop(&t, CHAIN_SIGNALED, NULL) < 0 || chain_guard(&ctl, &t) < 0 ||
        chain_q_doorbell(&ctl) < 0) {
        rc = fail(c, -EIO, "if chain");
        goto close_t;
    }
    {
        struct rnic_wc wc;

        /* The NOP after the target completes last either way. */
        for (int n = 0; n < 2; n++) {
            rc = chain_cq_poll_wait(t.scq, &wc, PROBE_MS);
            if (rc != 1 || wc.status != RNIC_WC_SUCCESS) {
                snprintf(c->detail, sizeof(c->detail),
                         "the managed queue did not complete (%s)",
                         rc == 1 ? rnic_wc_status_str(wc.status) : "timeout");
                rc = -ETIMEDOUT;
                goto close_t;
            }
        }
        rc = 0;
    }
    memcpy(seen, word_ptr(c, dst), 8);
close_t:
    chain_q_close(&t);
close_ctl:
    chain_q_close(&ctl);
    return rc;
}

static int probe_cas_nop_to_write(struct probe_ctx *c)
{
    uint64_t hit, miss;
    int rc;

    put(c, 0, 1);
    rc = run_if(c, 7, 7, 3, &hit);
    if (rc == 0)
        rc = run_if(c, 7, 8, 4, &miss);
    if (rc < 0)
        return rc;
    if (hit != 1 || miss != 0) {
        snprintf(c->detail, sizeof(c->detail),
                 "x == y wrote %llu (want 1), x != y wrote %llu (want 0)",
                 (unsigned long long)hit, (unsigned long long)miss);
        return -EPROTO;
    }
    return 0;
}

/*
 * A SEND whose receive scatters a remote address into a managed WRITE's
 * raddr field: the WRITE then lands where the message said.
 */
static int probe_recv_into_wqe(struct probe_ctx *c)
{
    struct chain_q m, t, s;
    struct rnic_sge one = chain_loc_sge(word(c, 0));
    struct chain_wr w = write_wr(c, &one, 5); /* rewritten to word 6 */
    struct chain_wqe tw;
    struct chain_loc raddr;
    struct rnic_sge rs, ss;
    uint64_t be;
    int rc = open_q(c, RNIC_QP_CROSS_CHANNEL, 0, &m);

    if (rc < 0)
        return rc;
    rc = open_q(c, MANAGED, 8, &t);
    if (rc < 0)
        goto close_m;
    rc = open_q(c, 0, 0, &s);
    if (rc < 0)
        goto close_t;
    put(c, 0, 1);
    put(c, 5, 0);
    put(c, 6, 0);
    chain_put_be64(&be, chain_loc_addr(word(c, 6)));
    put(c, 7, be);
    ss = chain_loc_sge(word(c, 7));
    if (chain_q_connect(&m, &m) < 0 || chain_q_connect(&t, &s) < 0 ||
        chain_post(&t, &w, &tw) < 0 ||
        chain_field(&tw, CHAIN_F_RADDR, 0, &raddr) < 0) {
        rc = fail(c, -EIO, "queues");
        goto close_s;
    }
    rs = chain_loc_sge(chain_loc_part(raddr, 0, 8));
    if (chain_post_recv(&t, &rs, 1, 0) < 0 ||
        chain_send(&s, &ss, 1, 0, NULL) < 0 || chain_q_doorbell(&s) < 0 ||
        chain_wait(&m, t.rcq, chain_cq_expect(t.rcq, 1), 0, NULL) < 0 ||
        chain_kick(&m, &t) < 0) {
        rc = fail(c, -EIO, "chain");
        goto close_s;
    }
    if (!wait_u64(word_ptr(c, 6), 1, PROBE_MS)) {
        uint64_t w5;

        memcpy(&w5, word_ptr(c, 5), 8);
        snprintf(c->detail, sizeof(c->detail),
                 "the WRITE did not land where the RECV said (%s)",
                 w5 ? "it used the old address" : "nothing written");
        rc = -EPROTO;
    }
close_s:
    chain_q_close(&s);
close_t:
    chain_q_close(&t);
close_m:
    chain_q_close(&m);
    return rc;
}

/* FADD on a host-endian word; the old value comes back host-endian too. */
static int probe_atomic_order(struct probe_ctx *c)
{
    struct chain_q q;
    struct rnic_sge res = chain_loc_sge(word(c, 9));
    struct rnic_wc wc;
    uint64_t now, old;
    int rc = open_q(c, 0, 0, &q);

    if (rc < 0)
        return rc;
    put(c, 8, 0x00000000ffffffffull);
    put(c, 9, 0);
    if (chain_q_connect(&q, &q) < 0 ||
        chain_fadd(&q, word(c, 8), 1, &res, CHAIN_SIGNALED, NULL) < 0 ||
        chain_q_doorbell(&q) < 0 ||
        chain_cq_poll_wait(q.scq, &wc, PROBE_MS) != 1 ||
        wc.status != RNIC_WC_SUCCESS) {
        rc = fail(c, -EIO, "FADD");
        goto close_q;
    }
    memcpy(&now, word_ptr(c, 8), 8);
    memcpy(&old, word_ptr(c, 9), 8);
    if (now != 0x100000000ull || old != 0xffffffffull) {
        snprintf(c->detail, sizeof(c->detail),
                 "target %#llx (want 0x100000000), result %#llx (want "
                 "0xffffffff): %s",
                 (unsigned long long)now, (unsigned long long)old,
                 now == 0x00000001ffffffffull ? "big-endian atomics"
                                              : "unexpected");
        rc = -EPROTO;
    }
close_q:
    chain_q_close(&q);
    return rc;
}

/*
 * A WRITE whose ctrl segment carries operand bits in wqe_index and qpn
 * (opmod 0), as chains' if-targets do: pass if the NIC executes it.
 */
static int probe_ctrl_checks(struct probe_ctx *c)
{
    struct chain_q q;
    struct rnic_sge one = chain_loc_sge(word(c, 0));
    struct chain_wr w = write_wr(c, &one, 10);
    struct rnic_wc wc;
    int rc = open_q(c, 0, 0, &q);

    if (rc < 0)
        return rc;
    put(c, 0, 1);
    put(c, 10, 0);
    w.flags |= CHAIN_ID48;
    w.id48 = 0x00a5a55a5a5aull;
    rc = chain_q_connect(&q, &q);
    if (rc == 0)
        rc = chain_post(&q, &w, NULL); /* -EOPNOTSUPP without a raw ring */
    if (rc == 0)
        rc = chain_q_doorbell(&q);
    if (rc < 0) {
        rc = fail(c, rc, "WRITE");
        goto close_q;
    }
    rc = chain_cq_poll_wait(q.scq, &wc, PROBE_MS);
    if (rc == 1 && wc.status == RNIC_WC_SUCCESS &&
        wait_u64(word_ptr(c, 10), 1, PROBE_MS)) {
        rc = 0;
        snprintf(c->detail, sizeof(c->detail),
                 "a WQE with foreign index/QPN bits ran: chains may keep "
                 "operands there");
    } else {
        snprintf(c->detail, sizeof(c->detail),
                 "a WQE with foreign index/QPN bits %s: the NIC checks "
                 "them (see docs/mlx5.md)",
                 rc == 1 ? rnic_wc_status_str(wc.status) : "never completed");
        rc = -EPROTO;
    }
close_q:
    chain_q_close(&q);
    return rc;
}

struct probe {
    const char *name;
    int (*run)(struct probe_ctx *c);
};

static const struct probe probes[] = {
    {"cross-channel QP creation", probe_cross_channel_qp},
    {"CQ ignoring overrun", probe_ignore_overrun},
    {"WAIT on a CQ count", probe_wait},
    {"SEND_EN of a managed queue", probe_send_en},
    {"CAS turns a NOP into a WRITE", probe_cas_nop_to_write},
    {"RECV scatters into a WQE", probe_recv_into_wqe},
    {"atomic byte order (host)", probe_atomic_order},
    {"ctrl index/QPN unchecked", probe_ctrl_checks},
};

int main(int argc, char **argv)
{
    const char *device = NULL;
    struct probe_ctx c;
    int opt, verbose = 0, failed = 0;

    while ((opt = getopt(argc, argv, "d:vh")) != -1) {
        switch (opt) {
        case 'd':
            device = optarg;
            break;
        case 'v':
            verbose = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    memset(&c, 0, sizeof(c));
    if (rnic_open(device, NULL, &c.dev) < 0) {
        fprintf(stderr, "rdn-hwcheck: %s\n", rnic_errmsg());
        return 2;
    }
    if (chain_buf_open(c.dev, 4096, ALL_ACCESS, &c.mem) < 0) {
        fprintf(stderr, "rdn-hwcheck: %s\n", chain_errmsg());
        rnic_close(c.dev);
        return 2;
    }
    printf("device %s\n", rnic_device_name(c.dev));
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
        int rc;

        c.detail[0] = 0;
        rc = probes[i].run(&c);
        if (rc == 0)
            printf("%-30s pass\n", probes[i].name);
        else if (rc == -EOPNOTSUPP)
            printf("%-30s unsupported (errno %d: %s)\n", probes[i].name, -rc,
                   strerror(-rc));
        else
            printf("%-30s fail (errno %d: %s)\n", probes[i].name, -rc,
                   strerror(-rc));
        if ((verbose || rc != 0) && c.detail[0])
            printf("    %s\n", c.detail);
        failed += rc != 0 && rc != -EOPNOTSUPP;
    }
    chain_buf_close(&c.mem);
    rnic_close(c.dev);
    return failed ? 1 : 0;
}
