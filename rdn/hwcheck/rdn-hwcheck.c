/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/hwcheck/rdn-hwcheck.c - what a NIC can do of what RedN's chains need,
 * feature by feature: the first thing to run on a ConnectX.
 *
 *   rdn-hwcheck [-d DEVICE] [-v]
 *
 * Each probe builds its own queues on loopback (a QP connected to itself
 * or to a second QP of the device) with the chain library and prints one
 * line: pass, fail or unsupported, with the errno and what was seen. The
 * last two run the offloaded GET chain itself (rdn/offload's pipeline,
 * answering librdn's NIC client on the same device): one hit, one miss. Exit
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
#include "proto/byteorder.h"
#include "proto/item.h"
#include "proto/keyhash.h"
#include "proto/table.h"
#include "rdn/chain/chain.h"
#include "rdn/librdn/nic_client.h"
#include "rdn/offload/pipeline.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)
#define MANAGED  (RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND)
#define PROBE_MS 2000 /* how long a probe waits for the NIC */
#define QUIET_MS 100  /* how long "nothing happened" is watched */

struct get_rig;

struct probe_ctx {
    struct rnic_device *dev;
    struct chain_buf mem; /* 4 KB of scratch, all access */
    char detail[200];
    struct get_rig *rig; /* the GET chain, once its first probe built it */
    int rig_rc;          /* 1 until built; then 0 or why it failed */
    char rig_why[200];
};

static void usage(FILE *f)
{
    fprintf(
        f, "usage: rdn-hwcheck [-d DEVICE] [-v]\n"
           "Probes an RDMA device for what RedN's chains need: cross-channel\n"
           "QPs, WAIT on a CQ count, SEND_EN of a managed queue, a CAS that\n"
           "turns a NOP into a WRITE, a RECV scattering into a WQE, atomic\n"
           "byte order, and whether the NIC checks a WQE's ctrl-segment\n"
           "index/QPN; then runs the offloaded GET chain once on loopback\n"
           "(a one-item table: one hit GET, one miss GET). One line per\n"
           "feature: pass, fail or unsupported (with the errno).\n"
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
 * (opmod 0), as chains' if-targets do: pass if the NIC executes it. A NOP
 * goes first so that two WQEs are rung: the NIC then fetches the WRITE
 * from the ring, bits and all, where a lone WQE could reach it as a
 * BlueFlame copy, whose head the provider writes true (docs/mlx5.md).
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
        rc = chain_nop(&q, 0, NULL);
    if (rc == 0)
        rc = chain_post(&q, &w, NULL); /* -EOPNOTSUPP without a raw ring */
    if (rc == 0)
        rc = chain_q_doorbell(&q);
    if (rc < 0) {
        rc = fail(c, rc, "NOP + WRITE");
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

/*
 * ---- the GET chain, once ----------------------------------------------
 *
 * The offload's own pipeline (rdn/offload/pipeline.h, as memcached builds
 * it for each client) serving a two-bucket table that holds one item, and
 * librdn's NIC client (rdn/librdn/nic_client.h) asking it: both QPs on the
 * probed device, connected by loopback. One GET of the stored key must
 * come back a verified hit with its value, one of another key a miss.
 */
#define GET_HASHPOWER 1 /* two buckets: both candidates of every key */
#define GET_ITERS     4 /* the pipeline's smallest lap */
#define GET_DEPTH     2 /* client response slots */
#define GET_ITEM_MAX  64
#define GET_GEN_OFF   512 /* the generation word, after the item */

static const char get_key[] = "rdn-hwcheck:hit";
static const char get_val[] = "served by the NIC, no CPU";
_Static_assert(sizeof(get_val) - 1 <= GET_ITEM_MAX, "the value fits");
/* Header, key and value, up to 7 bytes of padding, tail stamp. */
#define GET_ITEM_BYTES                                                         \
    (sizeof(struct rdn_item) + sizeof(get_key) + sizeof(get_val) + 7 + 8)
_Static_assert(GET_ITEM_BYTES <= GET_GEN_OFF, "the item, then the gen word");

struct get_rig {
    struct chain_buf buckets; /* remote read: the worker's loopback READs */
    struct chain_buf items;   /* the item, then the generation word */
    struct chain_cq done;     /* the pipeline's send completions */
    struct chain_q master;    /* releases the worker's first unit */
    struct ofl_client cli;
    struct ofl_pipe pipe;
    struct rdn_geometry geo;
    char miss_key[32];
};

/* The one item, in items, and every slot of the table pointing at it: an
 * empty slot (fingerprint 0) still carries a gather entry the NIC could
 * execute, as memcached's table never holds an unexecutable one. */
static void rig_fill(struct get_rig *r)
{
    size_t nkey = strlen(get_key), nval = strlen(get_val);
    struct rdn_item *it = (struct rdn_item *)(void *)r->items.ptr;
    struct rdn_bucket *b = (struct rdn_bucket *)(void *)r->buckets.ptr;
    struct rdn_keyhash kh;
    struct mlx5_data_seg desc = {
        .byte_count = cpu_to_be32((uint32_t)rdn_item_total_len(nkey, nval)),
        .lkey = cpu_to_be32(r->items.mr->lkey),
        .addr = cpu_to_be64((uint64_t)(uintptr_t)it),
    };

    it->stamp = 0x5eed;
    it->nbytes = (uint32_t)nval;
    it->nkey = (uint16_t)nkey;
    memcpy(rdn_item_key(it), get_key, nkey);
    memcpy(rdn_item_value(it), get_val, nval);
    *rdn_item_tail(it) = it->stamp;
    rdn_keyhash(get_key, nkey, GET_HASHPOWER, &kh);
    for (unsigned i = 0; i < (1u << GET_HASHPOWER) * RDN_BUCKET_SLOTS; i++) {
        struct rdn_slot *s =
            &b[i / RDN_BUCKET_SLOTS].slot[i % RDN_BUCKET_SLOTS];

        s->desc = desc;
        s->match = rdn_slot_match(0);
    }
    b[kh.bucket1 & ((1u << GET_HASHPOWER) - 1)].slot[0].match =
        rdn_slot_match(kh.fp);
    /* A key of another fingerprint: it must miss. */
    for (unsigned n = 0;; n++) {
        struct rdn_keyhash mh;

        snprintf(r->miss_key, sizeof(r->miss_key), "rdn-hwcheck:miss%u", n);
        rdn_keyhash(r->miss_key, strlen(r->miss_key), GET_HASHPOWER, &mh);
        if (mh.fp != kh.fp)
            break;
    }
    store_release((uint64_t *)(void *)(r->items.ptr + GET_GEN_OFF),
                  rdn_gen_word(0, 0));
    memset(&r->geo, 0, sizeof(r->geo));
    strncpy(r->geo.hash, RDN_HASH_NAME, sizeof(r->geo.hash));
    r->geo.table_addr = (uint64_t)(uintptr_t)r->buckets.ptr;
    r->geo.gen_word = rdn_gen_word(0, 0);
    r->geo.hashpower = GET_HASHPOWER;
    r->geo.fp_bits = RDN_FP_BITS;
    r->geo.bucket_slots = RDN_BUCKET_SLOTS;
    r->geo.bucket_bytes = sizeof(struct rdn_bucket);
    r->geo.item_size_max = GET_ITEM_MAX;
}

/* The handshake memcached and librdn would do over TCP, in memory. */
static int rig_pipe(struct probe_ctx *c, struct get_rig *r)
{
    struct ofl_pipe_cfg cfg = {
        .iters = GET_ITERS,
        .table_mr = r->buckets.mr,
        .gen = chain_buf_loc(&r->items, GET_GEN_OFF, 8),
        .done_cq = &r->done,
        .master = &r->master,
    };
    struct rnic_addr ca, sa;
    struct rdn_hello h;
    int rc = ofl_client_hello(&r->cli, &h);

    if (rc < 0)
        return fail(c, rc, "client address");
    cfg.depth = h.depth;
    cfg.slot_addr = h.buf_addr;
    cfg.slot_size = h.slot_size;
    cfg.slot_rkey = h.buf_rkey;
    memcpy(ca.bytes, h.qp_addr, sizeof(ca.bytes));
    rc = ofl_pipe_open(c->dev, &cfg, &r->pipe);
    if (rc < 0) {
        snprintf(c->detail, sizeof(c->detail), "pipeline: %s", ofl_errmsg());
        return rc;
    }
    rc = ofl_pipe_addr(&r->pipe, &sa);
    if (rc < 0) {
        snprintf(c->detail, sizeof(c->detail), "pipeline: %s", ofl_errmsg());
        return rc;
    }
    ofl_pipe_plan(&cfg, &r->cli.plan);
    rc = ofl_client_connect(&r->cli, sa.bytes);
    if (rc < 0)
        return fail(c, rc, "client connect");
    rc = ofl_pipe_connect(&r->pipe, &ca);
    if (rc == 0)
        rc = ofl_pipe_start(&r->pipe);
    if (rc < 0)
        snprintf(c->detail, sizeof(c->detail), "pipeline: %s", ofl_errmsg());
    return rc;
}

static void rig_close(struct get_rig *r)
{
    if (!r)
        return;
    ofl_client_close(&r->cli);
    ofl_pipe_close(&r->pipe);
    chain_q_close(&r->master);
    chain_cq_close(&r->done);
    chain_buf_close(&r->items);
    chain_buf_close(&r->buckets);
    free(r);
}

static int rig_open(struct probe_ctx *c, struct get_rig **out)
{
    struct chain_q_attr ma = {.sq_wqebb = 64, .flags = RNIC_QP_CROSS_CHANNEL};
    struct get_rig *r = calloc(1, sizeof(*r));
    int rc;

    if (!r)
        return -ENOMEM;
    rc = chain_buf_open(c->dev, sizeof(struct rdn_bucket) << GET_HASHPOWER,
                        RNIC_ACCESS_REMOTE_READ, &r->buckets);
    if (rc == 0)
        rc = chain_buf_open(c->dev, GET_GEN_OFF + 64, 0, &r->items);
    if (rc < 0) {
        rc = fail(c, rc, "memory");
        goto close_rig;
    }
    rc = chain_cq_open(c->dev, 64, RNIC_CQ_IGNORE_OVERRUN, &r->done);
    if (rc < 0) {
        rc = fail(c, rc, "done CQ");
        goto close_rig;
    }
    rc = chain_q_open(c->dev, &ma, &r->master);
    if (rc == 0)
        rc = chain_q_connect(&r->master, &r->master);
    if (rc < 0) {
        rc = fail(c, rc, "master queue");
        goto close_rig;
    }
    rig_fill(r);
    rc = ofl_client_open(c->dev, GET_DEPTH,
                         (uint32_t)rdn_resp_slot_size(GET_ITEM_MAX), &r->cli);
    if (rc < 0) {
        rc = fail(c, rc, "client");
        goto close_rig;
    }
    rc = rig_pipe(c, r);
    if (rc < 0)
        goto close_rig;
    *out = r;
    return 0;
close_rig:
    rig_close(r);
    return rc;
}

/* The rig, built by the first GET probe; later ones repeat its verdict. */
static int rig_get(struct probe_ctx *c, struct get_rig **out)
{
    if (c->rig_rc == 1) {
        c->rig_rc = rig_open(c, &c->rig);
        snprintf(c->rig_why, sizeof(c->rig_why), "%s", c->detail);
    }
    if (c->rig_rc < 0)
        snprintf(c->detail, sizeof(c->detail), "%s", c->rig_why);
    *out = c->rig;
    return c->rig_rc;
}

/*
 * What the server's watch thread would do: counts the pipeline's
 * completions, until it has seen `done` answered GETs or ms passed.
 */
static void rig_serve(struct get_rig *r, uint64_t done, int ms)
{
    uint64_t end = now_ms() + (uint64_t)ms;
    struct timespec nap = {0, 20000};

    do {
        struct rnic_wc wc[8];
        int n;

        if (ofl_pipe_poll_recv(&r->pipe) < 0)
            return;
        while ((n = rnic_poll_cq(r->done.cq, 8, wc)) > 0)
            for (int i = 0; i < n; i++)
                if (wc[i].qpn == r->pipe.resp.qpn)
                    ofl_pipe_complete(&r->pipe, &wc[i]);
        if (r->pipe.done >= done || ofl_pipe_failed(&r->pipe))
            return;
        nanosleep(&nap, NULL);
    } while (now_ms() < end);
}

/* One GET of key through the chain; the answer must be judged `want`. */
static int run_get(struct probe_ctx *c, const char *key, enum ofl_verdict want)
{
    struct get_rig *r;
    const struct rdn_item *it = NULL;
    struct rdn_keyhash kh;
    enum ofl_verdict v;
    uint64_t req, hits;
    int64_t n;
    int rc = rig_get(c, &r);

    if (rc < 0)
        return rc;
    hits = r->pipe.hits;
    rdn_keyhash(key, strlen(key), GET_HASHPOWER, &kh);
    n = ofl_client_send(&r->cli, &r->geo, &kh);
    if (n < 0)
        return fail(c, (int)n, "request");
    rc = ofl_client_wait(&r->cli, PROBE_MS, &req);
    rig_serve(r, (uint64_t)n + 1, rc == 1 ? PROBE_MS : 0);
    if (rc <= 0) {
        snprintf(c->detail, sizeof(c->detail),
                 "%s (the server's NIC received %llu of %lld requests)",
                 rc == 0 ? "no answer" : "the client's QP failed",
                 (unsigned long long)r->pipe.received, (long long)n + 1);
        return rc == 0 ? -ETIMEDOUT : rc;
    }
    if (req != (uint64_t)n) {
        snprintf(c->detail, sizeof(c->detail), "answer %llu to request %lld",
                 (unsigned long long)req, (long long)n);
        return -EPROTO;
    }
    v = ofl_client_judge(&r->cli, req, &r->geo, key, strlen(key),
                         (uint32_t)time(NULL), &it);
    if (v != want) {
        snprintf(c->detail, sizeof(c->detail), "judged %s, want %s",
                 ofl_verdict_name(v), ofl_verdict_name(want));
        return -EPROTO;
    }
    if (v == OFL_HIT &&
        (it->nbytes != strlen(get_val) ||
         memcmp(rdn_item_value((struct rdn_item *)(uintptr_t)it), get_val,
                it->nbytes) != 0)) {
        snprintf(c->detail, sizeof(c->detail), "a hit with the wrong value");
        return -EPROTO;
    }
    if (r->pipe.done != (uint64_t)n + 1 ||
        (r->pipe.hits != hits) != (want == OFL_HIT)) {
        snprintf(c->detail, sizeof(c->detail),
                 "the server counted %llu answers, %llu hits",
                 (unsigned long long)r->pipe.done,
                 (unsigned long long)r->pipe.hits);
        return -EPROTO;
    }
    snprintf(c->detail, sizeof(c->detail), "%s: %s", key,
             want == OFL_HIT ? "the item, verified" : "no slot matched");
    return 0;
}

static int probe_get_hit(struct probe_ctx *c)
{
    return run_get(c, get_key, OFL_HIT);
}

static int probe_get_miss(struct probe_ctx *c)
{
    struct get_rig *r;
    int rc = rig_get(c, &r);

    return rc < 0 ? rc : run_get(c, r->miss_key, OFL_MISS);
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
    {"GET chain: hit", probe_get_hit},
    {"GET chain: miss", probe_get_miss},
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
    c.rig_rc = 1;
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
    {
        char caps[256];

        if (rnic_device_caps(c.dev, caps, sizeof(caps)) == 0)
            printf("capabilities: %s\n", caps);
    }
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
    rig_close(c.rig);
    chain_buf_close(&c.mem);
    rnic_close(c.dev);
    return failed ? 1 : 0;
}
