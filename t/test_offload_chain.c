/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_offload_chain.c - the offloaded GET's chain and its client half in
 * one process on "softnic-inproc": a hand-built table and item arena in
 * NIC memory, one server pipeline per client, real requests and answers.
 * Covers hits in either bucket and any slot, misses with full buckets,
 * fingerprint collisions, empty and 1 MB values, torn items, expiry
 * doubt, generation changes, several requests in flight, re-arming over
 * many requests, a hostile bucket address that fails only its client, a
 * client with the server's keys that still reaches no server memory, and
 * the chain checker's verdict on the whole pipeline.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/byteorder.h"
#include "proto/keyhash.h"
#include "t/support/offload_table.h"
#include "t/support/testutil.h"

#define HASHPOWER 4
#define ITEM_MAX  (1024 * 1024)
#define ARENA     (4 * 1024 * 1024)
#define ITERS     8
#define DEPTH     4
#define WAIT_MS   10000

/* A client and its pipeline, with a done CQ of their own. */
struct peer {
    struct ofl_local l;
    struct chain_cq done;
    bool seq; /* RedN-Seq pipeline */
};

static struct {
    struct rnic_device *sdev, *cdev;
    struct ofl_table t;
    struct chain_q master;
    struct rdn_geometry geo;
    struct peer a, b;
} w;

/* softnic-inproc, or $RDN_TEST_DEVICE (e.g. "softnic": the daemon). */
static struct rnic_device *open_dev(void)
{
    const char *name = getenv("RDN_TEST_DEVICE");
    struct rnic_device *d = NULL;

    ck_assert_msg(
        rnic_open(name && *name ? name : "softnic-inproc", NULL, &d) == 0,
        "rnic_open: %s", rnic_errmsg());
    return d;
}

/* A client and its pipeline, connected, not started. */
static void peer_build(struct peer *p, struct chain_q *master)
{
    ck_assert_int_eq(
        chain_cq_open(w.sdev, 1024, RNIC_CQ_IGNORE_OVERRUN, &p->done), 0);
    ck_assert_msg(ofl_local_open(&w.t, w.cdev, ITERS, DEPTH, p->seq, &p->done,
                                 master, &p->l) == 0,
                  "ofl_local_open: %s", chain_errmsg());
}

static void peer_open(struct peer *p)
{
    peer_build(p, &w.master);
    ck_assert_msg(ofl_pipe_start(&p->l.pipe) == 0, "ofl_pipe_start: %s",
                  ofl_errmsg());
}

static void peer_close(struct peer *p)
{
    ofl_local_close(&p->l);
    chain_cq_close(&p->done);
}

static void setup(void)
{
    struct chain_q_attr ma = {.sq_wqebb = 64, .flags = RNIC_QP_CROSS_CHANNEL};

    memset(&w, 0, sizeof(w));
    w.sdev = open_dev();
    w.cdev = open_dev();
    ck_assert_int_eq(ofl_table_open(w.sdev, HASHPOWER, ARENA, ITEM_MAX, &w.t),
                     0);
    ck_assert_int_eq(chain_q_open(w.sdev, &ma, &w.master), 0);
    ck_assert_int_eq(chain_q_connect(&w.master, &w.master), 0);
    ofl_table_geometry(&w.t, &w.geo);
    peer_open(&w.a);
}

static void teardown(void)
{
    peer_close(&w.a);
    peer_close(&w.b);
    chain_q_close(&w.master);
    ofl_table_close(&w.t);
    rnic_close(w.cdev);
    rnic_close(w.sdev);
}

/* An item in the arena; its stamps are fresh unless torn. */
static struct rdn_item *make_item(const char *key, const void *val,
                                  size_t nbytes, uint32_t exptime, bool torn)
{
    struct rdn_item *it =
        ofl_table_item(&w.t, key, strlen(key), val, nbytes, 7, exptime);

    ck_assert_ptr_nonnull(it);
    if (torn)
        *rdn_item_tail(it) = it->stamp + 1;
    return it;
}

static void put_slot(uint64_t b, unsigned i, uint64_t fp,
                     const struct rdn_item *it)
{
    ofl_table_set_slot(&w.t, b, i, fp, it);
}

static struct rdn_keyhash hash(const char *key)
{
    struct rdn_keyhash kh;

    rdn_keyhash(key, strlen(key), HASHPOWER, &kh);
    return kh;
}

/* Stores key = value in bucket `which` (1 or 2), slot i. */
static struct rdn_item *put(const char *key, const char *val, int which,
                            unsigned i)
{
    struct rdn_keyhash kh = hash(key);
    struct rdn_item *it = make_item(key, val, strlen(val), 0, false);

    put_slot(which == 1 ? kh.bucket1 : kh.bucket2, i, kh.fp, it);
    return it;
}

/* True: no server CPU at all, the NIC alone answers. */
static bool unattended;

/* What the server's monitor thread does: count receives and answers. */
static void serve(struct peer *p)
{
    if (!unattended)
        ck_assert_int_ge(ofl_local_serve(&p->l), 0);
}

static uint64_t ask(struct peer *p, const char *key)
{
    struct rdn_keyhash kh = hash(key);
    int64_t n = ofl_client_send(&p->l.cli, &w.geo, &kh);

    ck_assert_msg(n >= 0, "send: %d", (int)n);
    return (uint64_t)n;
}

static enum ofl_verdict answer(struct peer *p, uint64_t n, const char *key,
                               const struct rdn_item **it)
{
    uint64_t got;
    int rc = ofl_client_wait(&p->l.cli, WAIT_MS, &got);

    ck_assert_msg(rc == 1, "wait: %d", rc);
    ck_assert_uint_eq(got, n);
    serve(p);
    return ofl_client_judge(&p->l.cli, n, &w.geo, key, strlen(key), 1000, it);
}

/*
 * Serves until the pipeline has counted want answers done (at most
 * WAIT_MS): an answer's send completion comes with the client's ACK, after
 * the client already has the answer, so the last one may lag the client's
 * wait by a moment. Then checks the receives and answers counted.
 */
static void settle(struct peer *p, uint64_t want)
{
    for (int ms = 0; ms < WAIT_MS; ms++) {
        struct timespec ts = {0, 1000 * 1000};

        serve(p);
        if (p->l.pipe.done >= want)
            break;
        nanosleep(&ts, NULL);
    }
    ck_assert_uint_eq(p->l.pipe.received, want);
    ck_assert_uint_eq(p->l.pipe.done, want);
}

static enum ofl_verdict get(struct peer *p, const char *key,
                            const struct rdn_item **it)
{
    return answer(p, ask(p, key), key, it);
}

static void expect_value(const char *key, const void *val, size_t len)
{
    const struct rdn_item *it = NULL;
    enum ofl_verdict v = get(&w.a, key, &it);

    ck_assert_msg(v == OFL_HIT, "%s: %s", key, ofl_verdict_name(v));
    ck_assert_uint_eq(it->nbytes, len);
    ck_assert_uint_eq(it->flags, 7);
    ck_assert(memcmp(rdn_item_value((struct rdn_item *)it), val, len) == 0);
}

static void expect(const char *key, enum ofl_verdict want)
{
    const struct rdn_item *it;
    enum ofl_verdict v = get(&w.a, key, &it);

    ck_assert_msg(v == want, "%s: %s, want %s", key, ofl_verdict_name(v),
                  ofl_verdict_name(want));
}

/* Every slot of both buckets, through peer p. */
static void hit_every_slot(struct peer *p)
{
    char key[32], val[64];

    for (int which = 1; which <= 2; which++)
        for (unsigned i = 0; i < RDN_BUCKET_SLOTS; i++) {
            const struct rdn_item *it = NULL;

            ofl_table_clear(&w.t);
            snprintf(key, sizeof(key), "key-%d-%u", which, i);
            snprintf(val, sizeof(val), "value of %s", key);
            put(key, val, which, i);
            ck_assert_int_eq(get(p, key, &it), OFL_HIT);
            ck_assert_uint_eq(it->nbytes, strlen(val));
            ck_assert(memcmp(rdn_item_value((struct rdn_item *)it), val,
                             strlen(val)) == 0);
            ck_assert_int_eq(get(p, "not-there", &it), OFL_MISS);
        }
}

START_TEST(hit_either_bucket_any_slot)
{
    hit_every_slot(&w.a);
}
END_TEST

/* The opcodes of the first n WQEs of q's ring (unit 0 of a worker). */
static void ring_opcodes(const struct chain_q *q, uint8_t *out, unsigned n)
{
    uint32_t bb = 0;

    for (unsigned i = 0; i < n; i++) {
        const struct mlx5_ctrl_seg *c =
            (const void *)(q->sq.buf + (size_t)bb * MLX5_SEND_WQE_BB);

        out[i] = mlx5_ctrl_opcode(c);
        bb += (mlx5_ctrl_ds(c) * MLX5_SEND_WQE_DS + MLX5_SEND_WQE_BB - 1) /
              MLX5_SEND_WQE_BB;
    }
}

enum {
    W = MLX5_OPCODE_WAIT,
    E = MLX5_OPCODE_SEND_EN,
    R = MLX5_OPCODE_RDMA_READ,
    C = MLX5_OPCODE_ATOMIC_CS,
    N = MLX5_OPCODE_NOP
};

_Static_assert(RDN_BUCKET_SLOTS == 2, "the opcode lists below: 2 x 2 slots");

/*
 * The default chain: both READs, then all four CASes, then the release (a
 * FENCEd SEND_EN), no lap bookkeeping (the requests move the indexes on),
 * one NOP that pads the unit, and the next unit.
 */
START_TEST(parallel_search_order)
{
    static const uint8_t want[] = {W, E, R, R, C, C, C, C,
                                   E, N, W, E, R, R, C, C};
    uint8_t got[sizeof(want)];

    ring_opcodes(&w.a.l.pipe.w, got, sizeof(got));
    ck_assert_mem_eq(got, want, sizeof(want));
}
END_TEST

/* The RedN-Seq chain: bucket 2's READ only after bucket 1's CASes are done
 * (its release is FENCEd); it finds the same keys. Its unit is padded. */
START_TEST(seq_search_hits_either_bucket)
{
    static const uint8_t want[] = {W, E, R, C, C, E, R, C, C,
                                   E, N, W, E, R, C, C, E};
    uint8_t got[sizeof(want)];

    w.b.seq = true;
    peer_open(&w.b);
    ring_opcodes(&w.b.l.pipe.w, got, sizeof(got));
    ck_assert_mem_eq(got, want, sizeof(want));
    hit_every_slot(&w.b);
    ck_assert(!ofl_pipe_failed(&w.b.l.pipe));
}
END_TEST

START_TEST(miss_with_full_buckets)
{
    struct rdn_keyhash kh = hash("absent");
    struct rdn_item *other = make_item("other", "x", 1, 0, false);

    expect("absent", OFL_MISS); /* empty table */
    for (unsigned i = 0; i < RDN_BUCKET_SLOTS; i++) {
        put_slot(kh.bucket1, i, (kh.fp + 1 + i) & RDN_FP_MASK, other);
        put_slot(kh.bucket2, i, (kh.fp + 9 + i) & RDN_FP_MASK, other);
    }
    expect("absent", OFL_MISS);
    /* The key in the last slot of a full second bucket is found. */
    put("absent", "here", 2, RDN_BUCKET_SLOTS - 1);
    expect_value("absent", "here", 4);
}
END_TEST

START_TEST(fingerprint_collision)
{
    struct rdn_keyhash kh = hash("wanted");
    struct rdn_item *impostor = make_item("impostor", "bad", 3, 0, false);

    /* Another key's item under the wanted key's fingerprint. */
    put_slot(kh.bucket1, 2, kh.fp, impostor);
    expect("wanted", OFL_OTHER_KEY);
    /* With the real one in bucket 2, its WRITE comes last and wins. */
    put("wanted", "good", 2, 1);
    expect_value("wanted", "good", 4);
}
END_TEST

START_TEST(empty_and_large_values)
{
    char *big = malloc(ITEM_MAX);
    struct rdn_keyhash kh = hash("big");

    ck_assert_ptr_nonnull(big);
    for (size_t i = 0; i < ITEM_MAX; i++)
        big[i] = (char)(i * 131 + (i >> 9));
    put("empty", "", 1, 0);
    expect_value("empty", "", 0);
    put_slot(kh.bucket2, 0, kh.fp, make_item("big", big, ITEM_MAX, 0, false));
    expect_value("big", big, ITEM_MAX);
    free(big);
}
END_TEST

START_TEST(torn_and_expiring_items)
{
    struct rdn_keyhash kh = hash("torn");
    struct rdn_keyhash ke = hash("expiring");

    struct rdn_item *freed = make_item("torn", "v", 1, 0, false);

    put_slot(kh.bucket1, 0, kh.fp, make_item("torn", "v", 1, 0, true));
    expect("torn", OFL_TORN);
    /* An item being freed has its head stamp cleared: torn, not a miss. */
    freed->stamp = 0;
    put_slot(kh.bucket1, 0, kh.fp, freed);
    expect("torn", OFL_TORN);
    /* The judge's clock says 1000: 1001 is within a second, 5000 is not. */
    put_slot(ke.bucket1, 1, ke.fp, make_item("expiring", "v", 1, 1001, false));
    expect("expiring", OFL_EXPIRY_DOUBT);
    put_slot(ke.bucket1, 1, ke.fp, make_item("expiring", "v", 1, 5000, false));
    expect_value("expiring", "v", 1);
}
END_TEST

START_TEST(generation_change)
{
    put("gen", "v1", 1, 0);
    expect_value("gen", "v1", 2);
    ofl_table_set_gen(&w.t, 1);
    expect("gen", OFL_STALE);
    expect("nothing", OFL_STALE); /* a miss is stale too */
    w.geo.gen_word = rdn_gen_word(1, 0);
    expect_value("gen", "v1", 2);
}
END_TEST

START_TEST(several_in_flight)
{
    const char *keys[DEPTH] = {"k0", "k1", "k2", "k3"};
    uint64_t n[DEPTH];

    put("k0", "v0", 1, 0);
    put("k2", "v2", 2, 3);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < DEPTH; i++)
            n[i] = ask(&w.a, keys[i]);
        {
            struct rdn_keyhash kh = hash("one-too-many");

            ck_assert_int_eq(ofl_client_send(&w.a.l.cli, &w.geo, &kh), -EBUSY);
        }
        for (int i = 0; i < DEPTH; i++) {
            const struct rdn_item *it;
            enum ofl_verdict v = answer(&w.a, n[i], keys[i], &it);

            ck_assert_int_eq(v, i % 2 ? OFL_MISS : OFL_HIT);
        }
    }
}
END_TEST

/*
 * Twenty laps of the recycled chain with no server CPU: every index the
 * chain uses and every receive it needs is moved on by the NIC itself.
 * Then one look at the CQs counts them all, though the done CQ wrapped.
 */
START_TEST(recycled_over_many_laps)
{
    char key[16];
    unsigned hits = 0, total = 20 * ITERS + 3; /* keys alternate hit, miss */

    put("even-0", "v", 1, 0);
    put("even-2", "v", 2, 0);
    unattended = true;
    for (unsigned i = 0; i < total; i++) {
        const struct rdn_item *it;

        snprintf(key, sizeof(key), "even-%u", i % 4);
        if (get(&w.a, key, &it) == OFL_HIT)
            hits++;
    }
    unattended = false;
    ck_assert_uint_eq(hits, (total + 1) / 2);
    settle(&w.a, total);
    ck_assert(!ofl_pipe_failed(&w.a.l.pipe));
    /* Every unit served the same key each lap, so even the late look at
     * the response WQEs tells hits from misses right. */
    ck_assert_uint_eq(w.a.l.pipe.hits, (total + 1) / 2);
    ck_assert_uint_eq(w.a.l.pipe.misses, total / 2);
    expect("even-0", OFL_HIT);
    expect("odd-1", OFL_MISS);
    settle(&w.a, total + 2);
    ck_assert_uint_eq(w.a.l.pipe.hits, (total + 1) / 2 + 1);
}
END_TEST

/*
 * Past the 16-bit wraps: 4096 units of the response ring's WQE counter,
 * 65536 WQEBBs of the worker's enable index, with no server CPU; the done
 * CQ (1024 deep) wrapped too, yet one look counts every GET.
 */
START_TEST(recycled_past_16_bit_wraps)
{
    const unsigned total = 4801;
    const struct rdn_item *it;

    put("wrap", "v", 1, 0);
    unattended = true;
    for (unsigned i = 0; i < total; i++)
        ck_assert_int_eq(get(&w.a, i % 2 ? "wrap" : "nope", &it),
                         i % 2 ? OFL_HIT : OFL_MISS);
    unattended = false;
    settle(&w.a, total);
    expect("wrap", OFL_HIT);
    settle(&w.a, total + 1);
    ck_assert(!ofl_pipe_failed(&w.a.l.pipe));
}
END_TEST

/* Waits (at most WAIT_MS: the NIC's thread may be descheduled) for a
 * pipeline to fail; true if it did. */
static bool pipe_fails(struct peer *p)
{
    for (int ms = 0; ms < WAIT_MS && !ofl_pipe_failed(&p->l.pipe); ms += 5) {
        struct timespec ts = {0, 5 * 1000 * 1000};

        nanosleep(&ts, NULL);
    }
    return ofl_pipe_failed(&p->l.pipe);
}

START_TEST(hostile_bucket_fails_only_its_client)
{
    struct rdn_keyhash kh = hash("shared");
    struct rdn_geometry bad = w.geo;
    uint64_t got;
    int rc;

    peer_open(&w.b);
    put("shared", "v", 1, 0);
    /* Client b asks for a bucket far outside the table. */
    bad.table_addr += UINT64_C(1) << 40;
    ck_assert_int_ge(ofl_client_send(&w.b.l.cli, &bad, &kh), 0);
    /* It may get no answer, an error, or (worker b having run) a miss. */
    rc = ofl_client_wait(&w.b.l.cli, 2000, &got);
    if (rc == 1) {
        const struct rdn_item *it;

        ck_assert_int_ne(
            ofl_client_judge(&w.b.l.cli, got, &bad, "shared", 6, 1000, &it),
            OFL_HIT);
    }
    ck_assert(pipe_fails(&w.b));
    /* Client a is unaffected. */
    expect_value("shared", "v", 1);
    expect("absent", OFL_MISS);
    ck_assert(!ofl_pipe_failed(&w.a.l.pipe));
}
END_TEST

/*
 * A READ that raced with a delete (memcached/assoc.c) takes the old match
 * word from before the clear and the descriptor from after it. The clear
 * leaves the descriptor in place, so that snapshot sends the old item
 * (registered, not yet reused): a hit the client may use or reject, never a
 * fault. A never-used slot names the all-zero tombstone: torn. For contrast,
 * the zeroed descriptor the clear used to leave arms a WRITE with lkey 0,
 * which kills that client's QP.
 */
START_TEST(read_mid_clear_never_faults)
{
    struct rdn_keyhash kh = hash("racing");
    struct rdn_slot *slot =
        &((struct rdn_bucket *)
              w.t.buckets.ptr)[kh.bucket1 & ((1u << HASHPOWER) - 1)]
             .slot[1];
    struct rdn_item *tomb = make_item("t", "", 0, 0, false);
    struct rdn_slot old;

    put("racing", "old value", 1, 1);
    old = *slot;
    slot->match = rdn_slot_match(0); /* the delete's one store */
    expect("racing", OFL_MISS);
    slot->match = old.match; /* the READ's view: the match word from before */
    expect_value("racing", "old value", 9);

    memset(tomb, 0, rdn_item_total_len(1, 0)); /* a fresh slot's tombstone */
    slot->desc.byte_count = cpu_to_be32((uint32_t)rdn_item_total_len(0, 0));
    slot->desc.addr = cpu_to_be64((uint64_t)(uintptr_t)tomb);
    expect("racing", OFL_TORN);
    ck_assert(!ofl_pipe_failed(&w.a.l.pipe));

    peer_open(&w.b);
    memset(&slot->desc, 0, sizeof(slot->desc));
    ck_assert_int_ge(ofl_client_send(&w.b.l.cli, &w.geo, &kh), 0);
    ck_assert(pipe_fails(&w.b));
    slot->match = rdn_slot_match(0);
    expect("racing", OFL_MISS);
    ck_assert(!ofl_pipe_failed(&w.a.l.pipe));
}
END_TEST

/* Posts one RDMA op from b's client QP; returns its completion status. */
static int client_rdma(uint8_t op, struct chain_loc remote)
{
    struct chain_q *q = &w.b.l.cli.q;
    struct rnic_sge s = chain_loc_sge(chain_loc_part(q->sink, 0, 8));
    struct chain_wr wr = {.opcode = op,
                          .flags = CHAIN_SIGNALED,
                          .sg = &s,
                          .nsg = 1,
                          .raddr = chain_loc_addr(remote),
                          .rkey = remote.rkey};
    struct rnic_wc wc;

    ck_assert_int_eq(chain_post(q, &wr, NULL), 0);
    ck_assert_int_eq(chain_q_doorbell(q), 0);
    ck_assert_int_eq(chain_cq_poll_wait(q->scq, &wc, WAIT_MS), 1);
    return wc.status;
}

/*
 * A client that knows the server's keys still reaches nothing: the QP it
 * is connected to serves SENDs only. Each try costs it its connection.
 */
START_TEST(client_reaches_no_server_memory)
{
    struct chain_loc ring;

    put("secret", "v", 1, 0);
    peer_open(&w.b);
    ck_assert_int_eq(
        client_rdma(MLX5_OPCODE_RDMA_READ, chain_buf_loc(&w.t.buckets, 0, 8)),
        RNIC_WC_REM_ACCESS_ERR);
    peer_close(&w.b);
    peer_open(&w.b);
    ring = chain_loc_mr(w.b.l.pipe.resp.ring_mr, w.b.l.pipe.resp.sq.buf, 8);
    ck_assert_int_eq(client_rdma(MLX5_OPCODE_RDMA_WRITE, ring),
                     RNIC_WC_REM_ACCESS_ERR);
    ck_assert(ofl_pipe_failed(&w.b.l.pipe));
    expect_value("secret", "v", 1); /* client a goes on */
}
END_TEST

/* A request as the client builds it (the checker injects it). */
static void build_req(const char *key, uint32_t id, struct rdn_get_req *r)
{
    struct rdn_keyhash kh = hash(key);

    ofl_client_build_req(&w.b.l.cli, &w.geo, &kh, id, r);
}

static uint32_t resp_qpn; /* b's response QP in the last check_lap() */

/*
 * Runs the checker over pipeline b, armed but released only on paper (the
 * kick is posted on a master queue whose doorbell is never rung, so the
 * real NIC leaves it alone), with one lap of requests, ITERS: hit, miss,
 * hit... Request k >= DEPTH carries the lap words of the unit that served
 * request k - DEPTH; gated, it arrives only once the client has that
 * answer (its receive CQ holds k - DEPTH + 1 completions), as a client
 * with DEPTH slots sends it. Fills *rep, and next_head with what the
 * checker says of the worker's head a lap on if it waits there for the
 * WAIT count that request DEPTH's lap words gave it.
 */
static void check_lap(bool seq, bool gated, struct chain_report *rep,
                      char next_head[160])
{
    struct chain_q master;
    struct chain_q_attr ma = {.sq_wqebb = 16, .flags = RNIC_QP_CROSS_CHANNEL};
    struct chain_q *qs[] = {&w.b.l.pipe.w, &w.b.l.pipe.resp, &master,
                            &w.b.l.cli.q};
    struct chain_buf *mem[] = {&w.t.buckets, &w.t.arena, &w.t.gen,
                               &w.b.l.cli.slots};
    struct chain_check_opts o = {.max_steps = 20000};
    struct chain_check *c;

    ck_assert_int_eq(chain_q_open(w.sdev, &ma, &master), 0);
    ck_assert_int_eq(chain_q_connect(&master, &master), 0);
    w.b.seq = seq;
    peer_build(&w.b, &master);
    ck_assert_int_eq(chain_send_en(&master, &w.b.l.pipe.w, 2, 0, NULL), 0);
    put("checked", "v", 2, 3);
    ck_assert_int_eq(chain_check_new(&o, &c), 0);
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
        ck_assert_int_eq(chain_check_add_q(c, qs[i]), 0);
    for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++)
        ck_assert_int_eq(chain_check_add_mem(c, mem[i]->ptr, mem[i]->len), 0);
    /* The receive doorbell record the chain re-posts receives through. */
    ck_assert_int_eq(chain_check_add_mem(c, w.b.l.pipe.resp.rq_db.ptr, 4), 0);
    for (uint32_t k = 0; k < ITERS; k++) {
        struct rdn_get_req req;
        bool gate = gated && k >= DEPTH;

        build_req(k % 2 ? "unknown" : "checked", k, &req);

        ck_assert_int_eq(chain_check_inject_after(c, &w.b.l.pipe.resp, &req,
                                                  sizeof(req),
                                                  gate ? w.b.l.cli.q.rcq : NULL,
                                                  gate ? k + 1 - DEPTH : 0),
                         0);
    }
    ck_assert_msg(chain_check_run(c, rep) == 0, "check: %s", chain_errmsg());
    chain_check_free(c);
    snprintf(next_head, 160,
             "WAIT %u of QP %u waits for CQ %u to reach %u: it never does",
             ITERS * OFL_W_UNIT, w.b.l.pipe.w.qpn, w.b.l.pipe.resp.rcq->num,
             ITERS + 1);
    resp_qpn = w.b.l.pipe.resp.qpn;
    peer_close(&w.b);
    chain_q_close(&master);
}

/*
 * The checker's verdict on both chains (_i 0: the parallel search, 1:
 * RedN-Seq) over a lap, the receives moving finished units on.
 */
START_TEST(checker_finds_no_hazard)
{
    struct chain_report rep;
    char next_head[160];

    check_lap(_i == 1, true, &rep, next_head);
    /* Two things wait, as they should, and nothing else is amiss: the
     * worker's next head (unit 0, a lap on, with the WAIT count request
     * DEPTH's lap words gave it) waits for a request of the next lap, and
     * the answer to request DEPTH waits for a receive of the client, which
     * re-posts its DEPTH receives as it takes answers: a CPU's doing that
     * the walk does not model. */
    if (rep.nhazards != 2 || strcmp(rep.hz[0].msg, next_head) != 0)
        chain_report_print(&rep, stderr);
    ck_assert_uint_eq(rep.nhazards, 2);
    ck_assert_uint_eq(rep.nkind[CHAIN_HZ_DEAD_WAIT], 2);
    ck_assert_str_eq(rep.hz[0].msg, next_head);
    ck_assert_uint_eq(rep.hz[1].qpn, resp_qpn);
    ck_assert_uint_eq(rep.hz[1].index, DEPTH * OFL_RESP_UNIT + OFL_RESP_WQES);
    ck_assert(rep.finished);
    /* the whole lap on the worker, DEPTH answers and one more's slots */
    ck_assert_uint_ge(rep.steps, ITERS * 10 + DEPTH * 6 + OFL_RESP_WQES);
}
END_TEST

/* The same lap with each request sent right after the previous one: the
 * lap words of request k may land before the unit of request k - DEPTH
 * ran, and then it waits for a request a lap on; the checker says so. */
START_TEST(checker_sees_early_lap_words)
{
    struct chain_report rep;
    char next_head[160];

    check_lap(false, false, &rep, next_head);
    ck_assert_uint_ge(rep.nhazards, 1);
    ck_assert_uint_lt(rep.steps, ITERS * 16);
}
END_TEST

/* Each failing ofl_ call leaves a message of its own, not an earlier one. */
START_TEST(failures_say_what_failed)
{
    struct ofl_pipe p;

    peer_build(&w.b, &w.master);
    ck_assert_int_eq(ofl_pipe_persist(&w.b.l.pipe, ""), -EINVAL);
    ck_assert_str_eq(ofl_errmsg(), "pipeline name: not 1..40 characters");
    ck_assert_int_lt(ofl_pipe_attach(w.sdev, &w.b.l.pipe.cfg, "ofl.nobody", &p),
                     0);
    ck_assert_msg(strstr(ofl_errmsg(), "attach ofl.nobody.w: ") != NULL,
                  "got \"%s\"", ofl_errmsg());
    ck_assert_int_eq(ofl_pipe_start(NULL), -EINVAL);
    ck_assert_str_eq(ofl_errmsg(), "ofl_pipe_start: bad argument");
    peer_close(&w.b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("offload_chain");
    TCase *tc = tcase_create("get");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, hit_either_bucket_any_slot);
    tcase_add_test(tc, parallel_search_order);
    tcase_add_test(tc, seq_search_hits_either_bucket);
    tcase_add_test(tc, miss_with_full_buckets);
    tcase_add_test(tc, fingerprint_collision);
    tcase_add_test(tc, empty_and_large_values);
    tcase_add_test(tc, torn_and_expiring_items);
    tcase_add_test(tc, generation_change);
    tcase_add_test(tc, several_in_flight);
    tcase_add_test(tc, recycled_over_many_laps);
    tcase_add_test(tc, recycled_past_16_bit_wraps);
    tcase_add_test(tc, hostile_bucket_fails_only_its_client);
    tcase_add_test(tc, read_mid_clear_never_faults);
    tcase_add_loop_test(tc, checker_finds_no_hazard, 0, 2);
    tcase_add_test(tc, checker_sees_early_lap_words);
    tcase_add_test(tc, client_reaches_no_server_memory);
    tcase_add_test(tc, failures_say_what_failed);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
