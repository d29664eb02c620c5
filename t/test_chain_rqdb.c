/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_chain_rqdb.c - receives made available by RDMA: a chain WQE (a
 * loopback WRITE, or a READ whose scatter is the record) stores a new
 * count into a queue's receive doorbell record (chain_q.rq_db), and a
 * message waiting for a receive is then received into the ring's existing
 * WQE without rnic_post_recv(). A count stored in the wrong byte order
 * makes no more than the ring's WQEs available.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "proto/barrier.h"
#include "proto/byteorder.h"
#include "t/support/chain_testutil.h"

#define MSG_LEN   8
#define SLOT_LEN  64
#define GUARD_OFF (2 * SLOT_LEN) /* after the two receive buffers */
#define GUARD_LEN 1024
#define MSG_OFF   2048
#define COUNT_OFF 3072 /* the count the chain stores */
#define LONG_OFF  3200 /* a message longer than a receive buffer */

enum store { STORE_WRITE, STORE_READ, STORE_WRITE_HOST_ORDER };

struct fix {
    struct rnic_device *dev;
    struct chain_q r, s, l; /* receiver, sender, loopback storer */
    struct chain_buf buf;
};

static uint32_t rq_db_count(const struct fix *f)
{
    return be32_to_cpu(load_acquire_be32((const be32 *)f->r.rq_db.ptr));
}

static struct rnic_sge sge_at(const struct fix *f, size_t off, uint32_t len)
{
    return chain_loc_sge(chain_buf_loc(&f->buf, off, len));
}

/* R (2 receives posted) <-> S; L loopback; guard bytes after the slots. */
static void fix_up(struct fix *f)
{
    f->dev = tc_open(0);
    tc_q_open(f->dev, 0, 16, 2, &f->r);
    tc_q_open(f->dev, 0, 16, 0, &f->s);
    ck_assert_int_eq(chain_q_connect(&f->r, &f->s), 0);
    tc_q(f->dev, 0, 16, 0, NULL, &f->l);
    tc_buf(f->dev, 4096, &f->buf);
    ck_assert_ptr_nonnull(f->r.rq_db.ptr);
    ck_assert_uint_eq(f->r.rq_db.len, 4);
    ck_assert_ptr_eq(f->r.rq_db.ptr, rnic_qp_rq_doorbell(f->r.qp));
    ck_assert_ptr_null(f->s.rq_db.ptr); /* no receive queue, no record */
    ck_assert_ptr_null(rnic_qp_rq_doorbell(f->s.qp));
    memset(f->buf.ptr + GUARD_OFF, 0xee, GUARD_LEN);
    for (int i = 0; i < 2; i++) {
        struct rnic_sge g = sge_at(f, (size_t)i * SLOT_LEN, SLOT_LEN);

        ck_assert_int_eq(chain_post_recv(&f->r, &g, 1, 100 + (uint64_t)i), 0);
    }
    ck_assert_uint_eq(rq_db_count(f), 2);
}

static void fix_down(struct fix *f)
{
    chain_q_close(&f->l);
    chain_q_close(&f->s);
    chain_q_close(&f->r);
    chain_buf_close(&f->buf);
    rnic_close(f->dev);
}

/* S sends message i (MSG_LEN bytes "msg<i>") or a long one. */
static void send_msg(struct fix *f, size_t off, uint32_t len)
{
    struct rnic_sge g = sge_at(f, off, len);

    ck_assert_int_eq(chain_send(&f->s, &g, 1, CHAIN_SIGNALED, NULL), 0);
    ck_assert_int_eq(chain_q_doorbell(&f->s), 0);
}

static void expect_recv(struct fix *f, uint64_t wr_id, const char *data)
{
    struct rnic_wc wc;

    tc_poll(f->r.rcq, &wc);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_RECV);
    ck_assert_uint_eq(wc.wr_id, wr_id);
    ck_assert_uint_eq(wc.byte_len, MSG_LEN);
    ck_assert_mem_eq(f->buf.ptr + (wr_id - 100) * SLOT_LEN, data, MSG_LEN);
}

/* L stores count (as stored: big-endian or not) into R's record. */
static void store_count(struct fix *f, enum store how, uint32_t count)
{
    be32 be = cpu_to_be32(count);
    struct rnic_sge src = sge_at(f, COUNT_OFF, 4);
    struct rnic_sge db = chain_loc_sge(f->r.rq_db);
    struct rnic_wc wc;

    if (how == STORE_WRITE_HOST_ORDER)
        memcpy(f->buf.ptr + COUNT_OFF, &count, 4);
    else
        memcpy(f->buf.ptr + COUNT_OFF, &be, 4);
    if (how == STORE_READ)
        ck_assert_int_eq(chain_read(&f->l, &db, 1,
                                    chain_buf_loc(&f->buf, COUNT_OFF, 4),
                                    CHAIN_SIGNALED, NULL),
                         0);
    else
        ck_assert_int_eq(
            chain_write(&f->l, &src, 1, f->r.rq_db, CHAIN_SIGNALED, NULL), 0);
    ck_assert_int_eq(chain_q_doorbell(&f->l), 0);
    tc_poll(f->l.scq, &wc);
    ck_assert_msg(wc.status == RNIC_WC_SUCCESS, "store: %s",
                  rnic_wc_status_str(wc.status));
}

static void expect_guard_intact(const struct fix *f)
{
    for (int i = 0; i < GUARD_LEN; i++)
        ck_assert_uint_eq(f->buf.ptr[GUARD_OFF + i], 0xee);
}

/* Completions on cq until it stays empty for a while (bounded). */
static int drain(struct chain_cq *cq, struct rnic_wc *last)
{
    struct rnic_wc wc;
    int n = 0, rc;

    while ((rc = chain_cq_poll_wait(cq, &wc, 200)) == 1 && n < 100000) {
        *last = wc;
        n++;
    }
    ck_assert_int_eq(rc, 0);
    return n;
}

START_TEST(rdma_stored_count_makes_receive_available)
{
    enum store how = (enum store)_i;
    struct fix f;
    struct rnic_wc wc;

    fix_up(&f);
    for (int i = 0; i < 3; i++) {
        memcpy(f.buf.ptr + MSG_OFF + (size_t)i * MSG_LEN, "msg0msg", 7);
        f.buf.ptr[MSG_OFF + (size_t)i * MSG_LEN + 3] = (uint8_t)('0' + i);
        f.buf.ptr[MSG_OFF + (size_t)i * MSG_LEN + 7] = 0;
        send_msg(&f, MSG_OFF + (size_t)i * MSG_LEN, MSG_LEN);
    }
    expect_recv(&f, 100, "msg0msg");
    expect_recv(&f, 101, "msg1msg");
    /* The third waits: no receive is available. */
    ck_assert_int_eq(chain_cq_poll_wait(f.r.rcq, &wc, 100), 0);
    ck_assert_uint_eq(rq_db_count(&f), 2);
    store_count(&f, how, 3);
    /* Received into slot 0's scatter list, whose WQE nobody rewrote. */
    expect_recv(&f, 100, "msg2msg");
    for (int i = 0; i < 3; i++) {
        tc_poll(f.s.scq, &wc);
        ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    }
    expect_guard_intact(&f);
    if (how != STORE_WRITE_HOST_ORDER) {
        /* The host posts on from the count the chain stored. */
        struct rnic_sge g = sge_at(&f, SLOT_LEN, SLOT_LEN);

        ck_assert_uint_eq(rq_db_count(&f), 3);
        ck_assert_int_eq(rnic_post_recv(f.r.qp, &g, 1, 101), 0);
        ck_assert_uint_eq(rq_db_count(&f), 4);
    }
    ck_assert_int_eq(rnic_qp_state(f.r.qp), RNIC_QPS_RTS);
    fix_down(&f);
}
END_TEST

/*
 * 0x03000000 counts 0 in its low 16 bits, 65533 behind the 3 consumed
 * receives: nonsense, which must make no more than the ring's two WQEs
 * available. The host sees the ring full; a failing receive then flushes
 * at most the ring, not 65533 receives.
 */
START_TEST(wrong_byte_order_stays_in_ring)
{
    struct fix f;
    struct rnic_wc wc, last;
    struct rnic_sge g;
    int n;

    fix_up(&f);
    memcpy(f.buf.ptr + MSG_OFF, "msg0msg", 8);
    for (int i = 0; i < 3; i++)
        send_msg(&f, MSG_OFF, MSG_LEN);
    expect_recv(&f, 100, "msg0msg");
    expect_recv(&f, 101, "msg0msg");
    ck_assert_int_eq(chain_cq_poll_wait(f.r.rcq, &wc, 100), 0);
    store_count(&f, STORE_WRITE_HOST_ORDER, 3);
    expect_recv(&f, 100, "msg0msg"); /* capped: a ring WQE, nothing else */
    g = sge_at(&f, SLOT_LEN, SLOT_LEN);
    ck_assert_int_eq(rnic_post_recv(f.r.qp, &g, 1, 7), -ENOMEM);
    /* A message too long for slot 1 fails the receiver. */
    memset(f.buf.ptr + LONG_OFF, 'x', 2 * SLOT_LEN);
    send_msg(&f, LONG_OFF, 2 * SLOT_LEN);
    tc_poll(f.r.rcq, &wc);
    ck_assert_uint_eq(wc.status, RNIC_WC_LOC_LEN_ERR);
    ck_assert_uint_eq(wc.wr_id, 101);
    n = drain(f.r.rcq, &last);
    ck_assert_int_le(n, 2); /* flushed: at most the ring */
    if (n)
        ck_assert_uint_eq(last.status, RNIC_WC_WR_FLUSH_ERR);
    ck_assert_int_eq(rnic_qp_state(f.r.qp), RNIC_QPS_ERR);
    expect_guard_intact(&f);
    fix_down(&f);
}
END_TEST

START_TEST(queue_without_receives_has_no_record)
{
    struct rnic_device *dev = tc_open(0);
    struct chain_q q;

    tc_q(dev, 0, 16, 0, NULL, &q);
    ck_assert_ptr_null(q.rq_db.ptr);
    ck_assert_ptr_null(q.rq_db_mr);
    ck_assert_ptr_null(rnic_qp_rq_doorbell(NULL));
    chain_q_close(&q);
    rnic_close(dev);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chain_rqdb");
    TCase *tc = tcase_create("rqdb");

    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, rdma_stored_count_makes_receive_available,
                        STORE_WRITE, STORE_WRITE_HOST_ORDER + 1);
    tcase_add_test(tc, wrong_byte_order_stays_in_ring);
    tcase_add_test(tc, queue_without_receives_has_no_record);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
