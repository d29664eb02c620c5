/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_softnic_trace.c - the WQE trace and rdn-trace, and the cx5 timing
 * model's arithmetic as the trace shows it (model times are computed, not
 * measured, so these checks do not depend on the machine's speed).
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rdn/softnic/timing.h"
#include "rdn/softnic/trace.h"
#include "t/support/test_softnic_util.h"

#define ALL_ACCESS                                                             \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

static char path[64];

static void setup(void)
{
    int fd;

    snprintf(path, sizeof(path), "/tmp/softnic-trace-XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void teardown(void)
{
    unlink(path);
}

/* Reads the trace's records (in file order) into r; returns the count. */
static int read_trace(struct sn_trace_rec *r, int max)
{
    FILE *f = fopen(path, "r");
    char line[256], op[32];
    int n = 0;

    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    ck_assert_str_eq(line, SN_TRACE_HEADER "\n");
    while (n < max && fgets(line, sizeof(line), f)) {
        unsigned dev, qpn, idx, st;

        ck_assert_int_eq(
            sscanf(line, "%u %x %x %31s %u %" SCNu64 " %" SCNu64 " %" SCNu64,
                   &dev, &qpn, &idx, op, &st, &r[n].fetch_ns, &r[n].start_ns,
                   &r[n].end_ns),
            8);
        r[n].qpn = qpn;
        r[n].index = (uint16_t)idx;
        r[n].opcode = (uint8_t)sn_opcode_parse(op);
        r[n].status = (uint8_t)st;
        n++;
    }
    fclose(f);
    return n;
}

/* Runs NOP, WRITE, NOP (last signaled) on a self-connected QP. */
static void run_chain(const char *model)
{
    struct rnic_open_opts o = {.model = model, .trace = path};
    struct tdev d;
    struct tq q;
    struct tw w;
    struct rnic_wc wc;

    tdev_open(&d, &o, 1 << 16, ALL_ACCESS);
    tq_create(&q, &d, 0, 16, 0);
    tq_connect(&q, &q);
    tw_ctrl(&w, MLX5_OPCODE_NOP, 0);
    tq_post(&q, &w);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, 0);
    tw_raddr(&w, (uintptr_t)d.mem + 4096, d.mr->rkey);
    tw_data(&w, 64, d.mr->lkey, d.mem);
    tq_post(&q, &w);
    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_post(&q, &w);
    tq_ring(&q);
    ck_assert_int_eq(tpoll(d.scq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    tdev_close(&d);
}

START_TEST(trace_has_every_wqe_in_order)
{
    struct sn_trace_rec r[8];

    run_chain("fast");
    ck_assert_int_eq(read_trace(r, 8), 3);
    ck_assert_uint_eq(r[0].opcode, MLX5_OPCODE_NOP);
    ck_assert_uint_eq(r[1].opcode, MLX5_OPCODE_RDMA_WRITE);
    ck_assert_uint_eq(r[2].opcode, MLX5_OPCODE_NOP);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(r[i].index, i);
        ck_assert_uint_eq(r[i].status, 0);
        ck_assert_uint_le(r[i].fetch_ns, r[i].start_ns);
        ck_assert_uint_le(r[i].start_ns, r[i].end_ns);
        if (i)
            ck_assert_uint_le(r[i - 1].start_ns, r[i].start_ns);
    }
}
END_TEST

START_TEST(cx5_model_times_follow_the_table)
{
    struct sn_trace_rec r[8];
    struct sn_timing tm;
    const char *why;
    uint64_t rtt;

    ck_assert_int_eq(sn_timing_get("cx5", NULL, &tm, &why), 0);
    run_chain("cx5");
    ck_assert_int_eq(read_trace(r, 8), 3);
    /* WQ order: each WQE starts when the previous one's processing ends */
    ck_assert_uint_eq(r[0].end_ns - r[0].start_ns, tm.wqe_ns);
    ck_assert_uint_eq(r[1].start_ns, r[0].start_ns + tm.wqe_ns);
    ck_assert_uint_eq(r[2].start_ns, r[1].start_ns + tm.wqe_ns);
    /* The WRITE completes after the round trip: out, ACK back. */
    rtt = r[1].end_ns - r[1].start_ns;
    ck_assert_uint_eq(rtt, tm.wqe_ns + 2ull * tm.wire_ns +
                               sn_timing_ser_ns(&tm, 64) +
                               sn_timing_ser_ns(&tm, 0));
}
END_TEST

/*
 * A WAIT for the first of four CAS completions resumes when that one
 * completed in model time, not when the last completion pushed before the
 * engine got back to the WAIT did (worker queues of the GET chain wait on
 * CQs that keep filling).
 */
START_TEST(cx5_wait_resumes_when_its_count_was_reached)
{
    struct rnic_open_opts o = {.model = "cx5", .trace = path};
    struct sn_trace_rec r[16], *wait = NULL, *cas[4];
    struct sn_timing tm;
    const char *why;
    struct tdev d;
    struct tq a, b;
    struct tw w;
    struct rnic_wc wc[5];
    int n, ncas = 0;

    ck_assert_int_eq(sn_timing_get("cx5", NULL, &tm, &why), 0);
    tdev_open(&d, &o, 1 << 16, ALL_ACCESS);
    tq_create(&a, &d, 0, 16, 0);
    tq_connect(&a, &a);
    tq_create(&b, &d, RNIC_QP_CROSS_CHANNEL, 16, 0);
    tq_connect(&b, &b);
    for (int i = 0; i < 4; i++) {
        tw_ctrl(&w, MLX5_OPCODE_ATOMIC_CS, MLX5_WQE_CTRL_CQ_UPDATE);
        tw_raddr(&w, (uintptr_t)d.mem + 4096 + 8 * i, d.mr->rkey);
        tw_atomic(&w, 1, 0);
        tw_data(&w, 8, d.mr->lkey, d.mem + 8192 + 8 * i);
        tq_post(&a, &w);
    }
    tw_ctrl(&w, MLX5_OPCODE_WAIT, 0);
    tw_waiten(&w, 1, rnic_cq_num(d.scq));
    tq_post(&b, &w);
    tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
    tq_post(&b, &w);
    tq_ring(&b); /* the WAIT blocks first */
    ck_assert_int_eq(tquiet(d.scq, 5), 0);
    tq_ring(&a);
    ck_assert_int_eq(tpoll(d.scq, wc, 5, TMS), 5);
    tdev_close(&d);

    n = read_trace(r, 16);
    for (int i = 0; i < n; i++) {
        if (r[i].opcode == MLX5_OPCODE_WAIT)
            wait = &r[i];
        else if (r[i].opcode == MLX5_OPCODE_ATOMIC_CS && ncas < 4)
            cas[ncas++] = &r[i];
    }
    ck_assert_ptr_nonnull(wait);
    ck_assert_int_eq(ncas, 4);
    ck_assert_uint_eq(wait->end_ns, cas[0]->end_ns + tm.wait_ns);
    ck_assert_uint_lt(wait->end_ns, cas[3]->end_ns);
}
END_TEST

/* Opens d on the cx5 model with timing overrides (NULL: none), traced
 * into path when traced. */
static void open_cx5(struct tdev *d, const char *overrides, bool traced)
{
    struct rnic_open_opts o = {.model = "cx5", .trace = traced ? path : NULL};

    if (overrides)
        ck_assert_int_eq(setenv("RDN_SOFTNIC_TIMING", overrides, 1), 0);
    tdev_open(d, &o, 1 << 16, ALL_ACCESS);
    unsetenv("RDN_SOFTNIC_TIMING");
}

static int by_start_ns(const void *a, const void *b)
{
    const struct sn_trace_rec *x = a, *y = b;

    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/*
 * Three queues, each with one signaled NOP, rung together: with wqe_ns
 * (20 ms) far longer than the doorbells are apart, even on a loaded host,
 * all three are ready before any ends, so with pu_n units the third starts
 * when the first unit frees.
 */
static void run_three_nops(const char *overrides, struct sn_trace_rec r[3])
{
    struct tdev d;
    struct tq q[3];
    struct tw w;
    struct rnic_wc wc[3];

    open_cx5(&d, overrides, true);
    for (int i = 0; i < 3; i++) {
        tq_create(&q[i], &d, 0, 16, 0);
        tq_connect(&q[i], &q[i]);
        tw_ctrl(&w, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE);
        tq_post(&q[i], &w);
    }
    for (int i = 0; i < 3; i++)
        tq_ring(&q[i]);
    ck_assert_int_eq(tpoll(d.scq, wc, 3, TMS), 3);
    tdev_close(&d);
    ck_assert_int_eq(read_trace(r, 3), 3);
    qsort(r, 3, sizeof(r[0]), by_start_ns);
}

START_TEST(cx5_processing_units_are_bounded)
{
    struct sn_trace_rec r[3];

    run_three_nops("wqe_ns=20000000,pu_n=2", r);
    ck_assert_uint_lt(r[1].start_ns, r[0].end_ns); /* two units at once */
    ck_assert_uint_eq(r[2].start_ns,
                      r[0].end_ns < r[1].end_ns ? r[0].end_ns : r[1].end_ns);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(r[i].end_ns - r[i].start_ns, 20000000);
    run_three_nops("wqe_ns=20000000,pu_n=0", r); /* unbounded: all at once */
    ck_assert_uint_lt(r[2].start_ns, r[0].end_ns);
}
END_TEST

/*
 * count signaled WQEs of opcode op (READ or CAS of 8 bytes) on QP q of
 * device a against memory of device b (a itself: loopback), and waits for
 * their completions.
 */
static void run_rd(struct tdev *a, struct tdev *b, uint8_t op, int count)
{
    struct tq qa, qb;
    struct tw w;
    struct rnic_wc wc[4];

    tq_create(&qa, a, 0, 16, 0);
    if (a == b) {
        tq_connect(&qa, &qa);
    } else {
        tq_create(&qb, b, 0, 16, 0);
        tq_connect(&qa, &qb);
    }
    for (int i = 0; i < count; i++) {
        tw_ctrl(&w, op, MLX5_WQE_CTRL_CQ_UPDATE);
        tw_raddr(&w, (uintptr_t)b->mem + 4096 + 8 * i, b->mr->rkey);
        if (op == MLX5_OPCODE_ATOMIC_CS)
            tw_atomic(&w, 1, 0);
        tw_data(&w, 8, a->mr->lkey, a->mem + 8192 + 8 * i);
        tq_post(&qa, &w);
    }
    tq_ring(&qa);
    ck_assert_int_eq(tpoll(a->scq, wc, count, TMS), count);
}

/* The trace of run_rd()'s count WQEs, once their devices are closed. */
static void read_rd(struct sn_trace_rec *r, int count)
{
    ck_assert_int_eq(read_trace(r, count), count);
    for (int i = 0; i < count; i++)
        ck_assert_uint_eq(r[i].status, 0);
}

/*
 * The atomic unit: CASes of one queue reach it a WQE time (0.17 us)
 * apart; at the cx5 rate (one per 0.119 us) none waits, so a Figure 7
 * chain is unchanged; a unit slower than that serves one per atomic_ns.
 */
START_TEST(cx5_atomic_unit_rate)
{
    struct sn_timing tm;
    struct sn_trace_rec r[3];
    const char *why;
    struct tdev d;

    ck_assert_int_eq(sn_timing_get("cx5", NULL, &tm, &why), 0);
    ck_assert_uint_lt(tm.atomic_ns, tm.wqe_ns);
    open_cx5(&d, NULL, true);
    run_rd(&d, &d, MLX5_OPCODE_ATOMIC_CS, 3);
    tdev_close(&d);
    read_rd(r, 3);
    for (int i = 1; i < 3; i++)
        ck_assert_uint_eq(r[i].end_ns - r[i - 1].end_ns, tm.wqe_ns);
    open_cx5(&d, "atomic_ns=300000", true);
    run_rd(&d, &d, MLX5_OPCODE_ATOMIC_CS, 3);
    tdev_close(&d);
    read_rd(r, 3);
    for (int i = 1; i < 3; i++)
        ck_assert_uint_eq(r[i].end_ns - r[i - 1].end_ns, 300000);
}
END_TEST

/*
 * The port's message rate: READ requests leave one per rd_msg_ns at
 * most, so their answers (from another NIC, whose port is idle) come
 * back that far apart.
 */
START_TEST(cx5_port_message_rate)
{
    struct sn_trace_rec r[3];
    struct tdev a, b;

    open_cx5(&a, "rd_msg_ns=300000", true);
    open_cx5(&b, "rd_msg_ns=300000", false);
    run_rd(&a, &b, MLX5_OPCODE_RDMA_READ, 3);
    tdev_close(&a);
    tdev_close(&b);
    read_rd(r, 3);
    for (int i = 1; i < 3; i++)
        ck_assert_uint_eq(r[i].end_ns - r[i - 1].end_ns, 300000);
}
END_TEST

/*
 * net_ns: a READ between two NICs is the Figure 7 READ plus the network
 * both ways; a READ that loops back into its own NIC never pays it.
 */
START_TEST(cx5_network_latency_between_nics)
{
    struct sn_timing tm;
    struct sn_trace_rec r[1];
    const char *why;
    struct tdev a, b;
    uint64_t base;

    ck_assert_int_eq(sn_timing_get("cx5", "net_ns=5000", &tm, &why), 0);
    base = tm.wqe_ns + 2ull * tm.wire_ns + sn_timing_ser_ns(&tm, 0) +
           tm.dma_ns + sn_timing_ser_ns(&tm, 8);
    open_cx5(&a, "net_ns=5000", true);
    open_cx5(&b, "net_ns=5000", false);
    run_rd(&a, &b, MLX5_OPCODE_RDMA_READ, 1);
    tdev_close(&a);
    tdev_close(&b);
    read_rd(r, 1);
    ck_assert_uint_eq(r[0].end_ns - r[0].start_ns, base + 2 * 5000);
    open_cx5(&a, "net_ns=5000", true);
    run_rd(&a, &a, MLX5_OPCODE_RDMA_READ, 1);
    tdev_close(&a);
    read_rd(r, 1);
    ck_assert_uint_eq(r[0].end_ns - r[0].start_ns, base);
}
END_TEST

/*
 * The resources' arithmetic: uses queue in the order they are wanted; a
 * use claimed after one wanted later (the engine fell behind) goes at its
 * own time; a pool serves as many uses at once as it has units.
 */
START_TEST(timing_claims)
{
    struct sn_timing_res r = {0};
    uint64_t pool[2] = {0, 0};

    ck_assert_uint_eq(sn_timing_claim(&r, 100, 10), 100);
    ck_assert_uint_eq(sn_timing_claim(&r, 105, 10), 110); /* queued */
    ck_assert_uint_eq(sn_timing_claim(&r, 105, 10), 120);
    ck_assert_uint_eq(sn_timing_claim(&r, 50, 10), 50); /* claimed late */
    ck_assert_uint_eq(sn_timing_claim(&r, 200, 10), 200);
    ck_assert_uint_eq(r.free_ns, 210);
    ck_assert_uint_eq(sn_timing_claim_pool(pool, 2, 0, 100), 0);
    ck_assert_uint_eq(sn_timing_claim_pool(pool, 2, 10, 100), 10);
    ck_assert_uint_eq(sn_timing_claim_pool(pool, 2, 20, 100), 100);
    ck_assert_uint_eq(sn_timing_claim_pool(pool, 2, 300, 100), 300);
    ck_assert_uint_eq(sn_timing_claim_pool(pool, 0, 5, 100), 5); /* none */
}
END_TEST

START_TEST(timing_overrides_and_errors)
{
    struct sn_timing tm;
    const char *why;

    ck_assert_int_eq(sn_timing_get("cx5", "wire_ns=500,dma_ns=1", &tm, &why),
                     0);
    ck_assert_uint_eq(tm.wire_ns, 500);
    ck_assert_uint_eq(tm.dma_ns, 1);
    ck_assert_uint_eq(tm.wqe_ns, 170);
    ck_assert_int_eq(sn_timing_get("fast", "wqe_ns=100", &tm, &why), 0);
    ck_assert_int_eq(tm.timed, 1);
    ck_assert_int_lt(sn_timing_get("cx9", NULL, &tm, &why), 0);
    ck_assert_int_lt(sn_timing_get("cx5", "bogus=1", &tm, &why), 0);
    ck_assert_int_lt(sn_timing_get("cx5", "wire_ns=x", &tm, &why), 0);
    ck_assert_int_lt(sn_timing_get("cx5", "pu_n=65", &tm, &why), 0);
    ck_assert_int_eq(sn_timing_get("cx5", "pu_n=64,net_ns=2000", &tm, &why), 0);
    ck_assert_uint_eq(tm.pu_n, 64);
    ck_assert_uint_eq(tm.net_ns, 2000);
}
END_TEST

START_TEST(rdn_trace_prints_the_timeline)
{
    const char *b = getenv("top_builddir");
    char cmd[512], line[512];
    int rows = 0, summary = 0;
    FILE *p;

    run_chain("fast");
    snprintf(cmd, sizeof(cmd), "%s/rdn/softnic/rdn-trace %s", b ? b : ".",
             path);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    while (fgets(line, sizeof(line), p)) {
        rows += strstr(line, " NOP ") || strstr(line, " WRITE ");
        summary += strstr(line, "3 WQEs over") != NULL;
    }
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_int_eq(rows, 3);
    ck_assert_int_eq(summary, 1);
}
END_TEST

static Suite *trace_suite(void)
{
    Suite *s = suite_create("softnic-trace");
    TCase *tc = tcase_create("trace");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, trace_has_every_wqe_in_order);
    tcase_add_test(tc, cx5_model_times_follow_the_table);
    tcase_add_test(tc, cx5_wait_resumes_when_its_count_was_reached);
    tcase_add_test(tc, cx5_processing_units_are_bounded);
    tcase_add_test(tc, cx5_atomic_unit_rate);
    tcase_add_test(tc, cx5_port_message_rate);
    tcase_add_test(tc, cx5_network_latency_between_nics);
    tcase_add_test(tc, timing_claims);
    tcase_add_test(tc, timing_overrides_and_errors);
    tcase_add_test(tc, rdn_trace_prints_the_timeline);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return trun(trace_suite, "1");
}
