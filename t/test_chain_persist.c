/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_chain_persist.c - chain_q_persist / chain_q_attach through a
 * private rdn-nicd: a process builds a queue (own CQs, a receive queue, a
 * WQE in its ring, bytes in its sink), persists it and is killed; another
 * process attaches it and finds the same QP number, ring contents, sink
 * and doorbell record, and closing it frees everything in the daemon. An
 * attach that fails (wrong rq_size) keeps the queue; names too long fail
 * before anything is persisted.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/byteorder.h"
#include "t/support/chain_testutil.h"
#include "t/support/nicd_testutil.h"

#define DOMAIN  "chq"
#define PREFIX  "getq"
#define RQ_SIZE 4

/* What the building process tells the test about its queue. */
struct built {
    uint32_t qpn, scqn, rcqn, rq_count;
    uint64_t rq_db, sink;
    uint8_t wqe[64]; /* the ring's first WQEBB */
};

static void build_child(int wfd)
{
    struct rnic_device *dev = nicd_open_dev(DOMAIN);
    char long_prefix[61];
    struct chain_q q;
    struct chain_buf rbuf;
    struct rnic_sge g;
    struct rnic_wc wc;
    struct built b;

    tc_q(dev, 0, 16, RQ_SIZE, NULL, &q);
    tc_buf(dev, 4096, &rbuf);
    g = chain_loc_sge(chain_buf_loc(&rbuf, 0, 64));
    ck_assert_int_eq(chain_post_recv(&q, &g, 1, 5), 0);
    ck_assert_int_eq(chain_nop(&q, CHAIN_SIGNALED, NULL), 0);
    ck_assert_int_eq(chain_q_doorbell(&q), 0);
    tc_poll(q.scq, &wc);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    memcpy(q.sink.ptr, "sunk bytes", 11);
    /* Too long for ".scq": refused before anything is persisted. */
    memset(long_prefix, 'p', 60);
    long_prefix[60] = 0;
    ck_assert_int_eq(chain_q_persist(&q, long_prefix), -ENAMETOOLONG);
    ck_assert_int_eq(chain_q_persist(NULL, PREFIX), -EINVAL);
    ck_assert_msg(chain_q_persist(&q, PREFIX) == 0, "persist: %s",
                  chain_errmsg());
    b.qpn = q.qpn;
    b.scqn = q.scq->num;
    b.rcqn = q.rcq->num;
    b.rq_db = (uintptr_t)q.rq_db.ptr;
    b.rq_count = be32_to_cpu(*(be32 *)q.rq_db.ptr);
    b.sink = (uintptr_t)q.sink.ptr;
    memcpy(b.wqe, q.sq.buf, sizeof(b.wqe));
    nicd_pipe_write(wfd, &b, sizeof(b));
    pause();
    _exit(0);
}

/* Attaching with the wrong receive ring fails and keeps everything. */
static void wrong_attach_child(const struct built *b)
{
    struct rnic_device *dev = nicd_open_dev(DOMAIN);
    struct chain_q q;

    (void)b;
    ck_assert_int_eq(chain_q_attach(dev, PREFIX, 0, 0, NULL, NULL, &q),
                     -EINVAL);
    ck_assert_ptr_null(q.qp);
    ck_assert_int_eq(chain_q_attach(dev, PREFIX, 0, 3, NULL, NULL, &q),
                     -EINVAL); /* not a power of two */
    rnic_close(dev);
}

static void attach_child(const struct built *b)
{
    struct rnic_device *dev = nicd_open_dev(DOMAIN);
    struct rnic_wc wc;
    struct chain_q q;

    ck_assert_msg(chain_q_attach(dev, PREFIX, 0, RQ_SIZE, NULL, NULL, &q) == 0,
                  "attach: %s", chain_errmsg());
    ck_assert_uint_eq(q.qpn, b->qpn);
    ck_assert_uint_eq(rnic_qp_num(q.qp), b->qpn);
    ck_assert_int_eq(rnic_qp_state(q.qp), RNIC_QPS_RTS);
    ck_assert_uint_eq(q.sq.wqebb_cnt, 16);
    ck_assert_mem_eq(q.sq.buf, b->wqe, sizeof(b->wqe));
    ck_assert_ptr_eq(q.ring_mr->addr, q.sq.buf);
    ck_assert_uint_eq(q.scq->num, b->scqn);
    ck_assert_uint_eq(q.rcq->num, b->rcqn);
    ck_assert_uint_eq(q.rq_size, RQ_SIZE);
    ck_assert_uint_eq((uintptr_t)q.rq_db.ptr, b->rq_db);
    ck_assert_uint_eq(q.rq_db.len, 4);
    ck_assert_uint_eq(be32_to_cpu(*(be32 *)q.rq_db.ptr), b->rq_count);
    ck_assert_uint_eq((uintptr_t)q.sink.ptr, b->sink);
    ck_assert_mem_eq(q.sink.ptr, "sunk bytes", 11);
    ck_assert_uint_eq(q.sink.lkey, q.sink_buf.mr->lkey);
    /* The CQs poll: the NOP's completion was consumed before the death. */
    ck_assert_int_eq(rnic_poll_cq(q.scq->cq, 1, &wc), 0);
    ck_assert_int_eq(rnic_poll_cq(q.rcq->cq, 1, &wc), 0);
    chain_q_close(&q);
    rnic_close(dev);
}

/* Runs fn in a fresh child (its address space has the addresses free). */
static void in_child(void (*fn)(const struct built *), const struct built *b)
{
    int st;
    pid_t pid = fork();

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        fn(b);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "child failed (status %#x)", st);
}

/* The daemon holds the persisted queue: 2 CQs, QP, 3 MRs, sink memory. */
static void expect_kept(void)
{
    struct sn_ctl_resp r = nicd_stats();

    for (int i = 0; i < 500 && !(r.u.stats.orphans == 1 && r.u.stats.mrs == 3 &&
                                 r.u.stats.mems == 1);
         i++) {
        nicd_sleep_ms(10);
        r = nicd_stats();
    }
    ck_assert_uint_eq(r.u.stats.orphans, 1);
    ck_assert_uint_eq(r.u.stats.cqs, 2);
    ck_assert_uint_eq(r.u.stats.qps, 1);
    ck_assert_uint_eq(r.u.stats.mrs, 3); /* ring, doorbell record, sink */
    ck_assert_uint_eq(r.u.stats.mems, 1);
}

START_TEST(queue_survives_its_process_and_reattaches)
{
    int p[2];
    pid_t pid;
    struct built b;
    struct sn_ctl_resp r;

    ck_assert_int_eq(pipe(p), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        build_child(p[1]);
    nicd_pipe_read(p[0], &b, sizeof(b));
    ck_assert_uint_eq(b.rq_count, 1);
    nicd_kill_child(pid);
    expect_kept(); /* the receive buffer's memory and MR were freed */
    in_child(wrong_attach_child, &b);
    expect_kept();
    in_child(attach_child, &b);
    r = nicd_stats();
    ck_assert_uint_eq(
        r.u.stats.qps + r.u.stats.cqs + r.u.stats.mrs + r.u.stats.mems, 0);
    close(p[0]);
    close(p[1]);
}
END_TEST

START_TEST(inproc_device_cannot_persist)
{
    struct rnic_device *dev = tc_open(0);
    struct chain_q q, qa;
    struct chain_buf buf, ba;

    tc_q(dev, 0, 16, 2, NULL, &q);
    tc_buf(dev, 64, &buf);
    ck_assert_int_eq(chain_q_persist(&q, PREFIX), -EOPNOTSUPP);
    ck_assert_int_eq(chain_buf_persist(&buf, "b"), -EOPNOTSUPP);
    ck_assert_int_eq(chain_buf_attach(dev, "b", &ba), -EOPNOTSUPP);
    ck_assert_int_eq(chain_q_attach(dev, PREFIX, 0, 2, NULL, NULL, &qa),
                     -EOPNOTSUPP);
    ck_assert_ptr_null(qa.qp);
    chain_q_close(&q);
    chain_buf_close(&buf);
    rnic_close(dev);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chain_persist");
    TCase *tc = tcase_create("daemon");
    TCase *ti = tcase_create("inproc");

    tcase_add_unchecked_fixture(tc, nicd_fixture_up, nicd_fixture_down);
    tcase_set_timeout(tc, 40);
    tcase_add_test(tc, queue_survives_its_process_and_reattaches);
    suite_add_tcase(s, tc);
    tcase_set_timeout(ti, 20);
    tcase_add_test(ti, inproc_device_cannot_persist);
    suite_add_tcase(s, ti);
    return run_suite(s);
}
