/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/support/test_softnic_util.c - see t/test_softnic_util.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "proto/barrier.h"
#include "proto/byteorder.h"
#include "t/support/test_softnic_util.h"

static uint8_t *tw_seg(struct tw *w)
{
    ck_assert_uint_lt(w->ds, MLX5_WQE_MAX_DS);
    return w->b + MLX5_SEND_WQE_DS * w->ds++;
}

void tw_ctrl(struct tw *w, uint8_t opcode, uint8_t flags)
{
    struct mlx5_ctrl_seg *c;

    memset(w, 0, sizeof(*w));
    c = (struct mlx5_ctrl_seg *)tw_seg(w);
    c->opmod_idx_opcode = cpu_to_be32(mlx5_ctrl_word0(0, 0, opcode));
    c->fm_ce_se = flags;
}

void tw_imm(struct tw *w, uint32_t imm)
{
    ((struct mlx5_ctrl_seg *)w->b)->imm = cpu_to_be32(imm);
}

void tw_raddr(struct tw *w, uint64_t raddr, uint32_t rkey)
{
    struct mlx5_raddr_seg *r = (struct mlx5_raddr_seg *)tw_seg(w);

    r->raddr = cpu_to_be64(raddr);
    r->rkey = cpu_to_be32(rkey);
}

void tw_atomic(struct tw *w, uint64_t swap_add, uint64_t compare)
{
    struct mlx5_atomic_seg *a = (struct mlx5_atomic_seg *)tw_seg(w);

    a->swap_add = cpu_to_be64(swap_add);
    a->compare = cpu_to_be64(compare);
}

void tw_data(struct tw *w, uint32_t len, uint32_t lkey, const void *addr)
{
    struct mlx5_data_seg *d = (struct mlx5_data_seg *)tw_seg(w);

    d->byte_count = cpu_to_be32(len);
    d->lkey = cpu_to_be32(lkey);
    d->addr = cpu_to_be64((uintptr_t)addr);
}

void tw_waiten(struct tw *w, uint32_t index, uint32_t obj)
{
    struct mlx5_wait_en_seg *s = (struct mlx5_wait_en_seg *)tw_seg(w);

    s->index = cpu_to_be32(index);
    s->obj_num = cpu_to_be32(obj);
}

uint8_t *tq_wqe(struct tq *q, uint32_t idx)
{
    return q->sq.buf + (size_t)(idx & (q->sq.wqebb_cnt - 1)) * 64;
}

uint32_t tq_post(struct tq *q, struct tw *w)
{
    struct mlx5_ctrl_seg *c = (struct mlx5_ctrl_seg *)w->b;
    uint32_t idx = q->pi, len = w->ds * MLX5_SEND_WQE_DS;
    uint8_t op = mlx5_ctrl_opcode(c);

    c->opmod_idx_opcode = cpu_to_be32(mlx5_ctrl_word0(0, (uint16_t)idx, op));
    c->qpn_ds =
        cpu_to_be32(mlx5_ctrl_word1(rnic_qp_num(q->qp), (uint8_t)w->ds));
    for (uint32_t off = 0; off < len; off += 64)
        memcpy(tq_wqe(q, idx + off / 64), w->b + off,
               len - off < 64 ? len - off : 64);
    q->pi += (len + 63) / 64;
    return idx;
}

void tq_ring(struct tq *q)
{
    fence_release();
    ck_assert_int_eq(rnic_ring_doorbell(q->qp, q->pi), 0);
}

void tdev_open(struct tdev *d, const struct rnic_open_opts *opts, size_t len,
               unsigned access)
{
    const char *name = getenv("RDN_TEST_DEVICE");
    void *mem;

    memset(d, 0, sizeof(*d));
    ck_assert_msg(rnic_open(name ? name : "softnic-inproc", opts, &d->dev) == 0,
                  "rnic_open: %s", rnic_errmsg());
    ck_assert_int_eq(rnic_mem_alloc(d->dev, len, &mem), 0);
    d->mem = mem;
    d->len = len;
    ck_assert_msg(rnic_reg_mr(d->dev, mem, len, access, &d->mr) == 0,
                  "reg_mr: %s", rnic_errmsg());
    ck_assert_int_eq(rnic_create_cq(d->dev, 256, &d->scq), 0);
    ck_assert_int_eq(rnic_create_cq(d->dev, 256, &d->rcq), 0);
}

void tdev_close(struct tdev *d)
{
    rnic_close(d->dev);
    memset(d, 0, sizeof(*d));
}

void tq_create(struct tq *q, struct tdev *d, unsigned flags, uint32_t sq,
               uint32_t rq)
{
    struct rnic_qp_init_attr a = {
        .send_cq = d->scq,
        .recv_cq = rq ? d->rcq : NULL,
        .sq_wqebb = sq,
        .rq_wqe = rq,
        .max_recv_sge = rq ? 16 : 0,
        .flags = flags,
    };

    memset(q, 0, sizeof(*q));
    ck_assert_msg(rnic_create_qp(d->dev, &a, &q->qp) == 0, "create_qp: %s",
                  rnic_errmsg());
    ck_assert_int_eq(rnic_qp_sq(q->qp, &q->sq), 0);
}

void tq_connect(struct tq *a, struct tq *b)
{
    struct rnic_addr aa, ba;

    ck_assert_int_eq(rnic_qp_addr(a->qp, &aa), 0);
    ck_assert_int_eq(rnic_qp_addr(b->qp, &ba), 0);
    ck_assert_msg(rnic_connect(a->qp, &ba) == 0, "connect: %s", rnic_errmsg());
    if (a != b)
        ck_assert_msg(rnic_connect(b->qp, &aa) == 0, "connect: %s",
                      rnic_errmsg());
}

static uint64_t tnow_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int tpoll(struct rnic_cq *cq, struct rnic_wc *wc, int n, int timeout_ms)
{
    uint64_t end = tnow_ms() + (uint64_t)timeout_ms;
    int got = 0;

    while (got < n) {
        int r = rnic_poll_cq(cq, n - got, wc + got);

        ck_assert_msg(r >= 0, "poll_cq: %s", rnic_errmsg());
        got += r;
        if (got < n && tnow_ms() >= end)
            break;
        if (r == 0)
            rnic_cq_wait(cq, 10);
    }
    return got;
}

int twait_u64(volatile uint64_t *p, uint64_t v, int timeout_ms)
{
    uint64_t end = tnow_ms() + (uint64_t)timeout_ms;

    while (*p != v) {
        struct timespec ts = {0, 100000};

        if (tnow_ms() >= end)
            return 0;
        nanosleep(&ts, NULL);
    }
    return 1;
}

int tquiet(struct rnic_cq *cq, int ms)
{
    struct rnic_wc wc[16];
    uint64_t end = tnow_ms() + (uint64_t)ms;
    int n = 0;

    while (tnow_ms() < end) {
        int r = rnic_poll_cq(cq, 16, wc);

        if (r > 0)
            n += r;
        rnic_cq_wait(cq, 5);
    }
    return n;
}

int trun(Suite *(*mk)(void), const char *threads)
{
    const char *override = getenv("RDN_TEST_THREADS");
    char buf[64], *save = NULL, *tok;
    int failed = 0;

    snprintf(buf, sizeof(buf), "%s", override ? override : threads);
    for (tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        SRunner *sr;

        setenv("RDN_SOFTNIC_THREADS", tok, 1);
        printf("engine threads: %s\n", tok);
        sr = srunner_create(mk());
        srunner_run_all(sr, CK_NORMAL);
        failed += srunner_ntests_failed(sr);
        srunner_free(sr);
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
