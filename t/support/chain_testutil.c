/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/support/chain_testutil.c - fixtures of the chain tests.
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "proto/barrier.h"
#include "t/support/chain_testutil.h"

struct rnic_device *tc_open(int strict)
{
    struct rnic_open_opts o = {.model = "fast", .strict = strict};
    const char *name = getenv("RDN_TEST_DEVICE");
    struct rnic_device *dev = NULL;
    int rc = rnic_open(name && *name ? name : "softnic-inproc", &o, &dev);

    ck_assert_msg(rc == 0, "rnic_open: %s", rnic_errmsg());
    return dev;
}

void tc_q_open(struct rnic_device *dev, unsigned flags, uint32_t sq,
               uint32_t rq, struct chain_q *out)
{
    struct chain_q_attr a = {.sq_wqebb = sq,
                             .rq_wqe = rq,
                             .flags = flags,
                             .cq_flags = RNIC_CQ_IGNORE_OVERRUN};

    ck_assert_msg(chain_q_open(dev, &a, out) == 0, "chain_q_open: %s",
                  chain_errmsg());
}

void tc_q(struct rnic_device *dev, unsigned flags, uint32_t sq, uint32_t rq,
          struct chain_q *peer, struct chain_q *out)
{
    tc_q_open(dev, flags, sq, rq, out);
    ck_assert_msg(chain_q_connect(out, peer ? peer : out) == 0,
                  "chain_q_connect: %s", chain_errmsg());
}

void tc_buf(struct rnic_device *dev, size_t len, struct chain_buf *out)
{
    ck_assert_msg(chain_buf_open(dev, len, TC_ALL_ACCESS, out) == 0,
                  "chain_buf_open: %s", chain_errmsg());
}

uint64_t tc_load_u64(const void *p)
{
    return load_acquire((const uint64_t *)p);
}

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int tc_wait_u64(const void *p, uint64_t v, int ms)
{
    uint64_t end = now_ms() + (uint64_t)ms;

    while (tc_load_u64(p) != v) {
        if (now_ms() > end)
            return 0;
        usleep(200);
    }
    return 1;
}

uint64_t tc_settle_u64(const void *p, int quiet_ms, int ms)
{
    uint64_t end = now_ms() + (uint64_t)ms, v = tc_load_u64(p), since;

    for (since = now_ms(); now_ms() < end;) {
        uint64_t w;

        usleep(1000);
        w = tc_load_u64(p);
        if (w != v) {
            v = w;
            since = now_ms();
        } else if (now_ms() - since >= (uint64_t)quiet_ms) {
            return v;
        }
    }
    ck_abort_msg("value at %p never settled", p);
    return v;
}

void tc_poll(struct chain_cq *cq, struct rnic_wc *wc)
{
    int rc = chain_cq_poll_wait(cq, wc, TC_MS);

    ck_assert_msg(rc == 1, "no completion on CQ %u (%d: %s)", cq->num, rc,
                  rc < 0 ? chain_errmsg() : "timeout");
}
