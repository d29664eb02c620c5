/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/pipeline_dump.c - helper of t/test_design_doc.py: builds one client's
 * offloaded-GET pipeline (rdn/offload/pipeline.h) on softnic-inproc, over
 * the hand-built table of t/support/offload_table.h, and prints unit 0 of
 * both rings as the NIC will read them, one WQE a line:
 *
 *   RING FIRST_WQEBB NWQEBB OPCODE FLAGS
 *
 * RING is w (the worker) or r (the response queue), OPCODE its name as
 * rdn-trace prints it, FLAGS "-" or the letters F (FENCE) and S
 * (signaled). Nothing runs: the chain is built, not started.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "rdn/softnic/trace.h"
#include "t/support/offload_table.h"

#define DUMP_ITERS 8
#define DUMP_DEPTH 4

static void dump(const char *ring, const struct chain_q *q, uint32_t nbb)
{
    uint32_t bb = 0;

    while (bb < nbb) {
        const struct mlx5_ctrl_seg *c =
            (const void *)(q->sq.buf + (size_t)bb * MLX5_SEND_WQE_BB);
        uint32_t n =
            (mlx5_ctrl_ds(c) * MLX5_SEND_WQE_DS + MLX5_SEND_WQE_BB - 1) /
            MLX5_SEND_WQE_BB;
        char name[8], flags[3] = "-";
        unsigned k = 0;

        if (c->fm_ce_se & MLX5_WQE_CTRL_FENCE)
            flags[k++] = 'F';
        if (c->fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE)
            flags[k++] = 'S';
        printf("%s %u %u %s %s\n", ring, bb, n,
               sn_opcode_name(mlx5_ctrl_opcode(c), name), flags);
        bb += n ? n : 1;
    }
}

int main(void)
{
    struct chain_q_attr ma = {.sq_wqebb = 64, .flags = RNIC_QP_CROSS_CHANNEL};
    struct rnic_device *sdev = NULL, *cdev = NULL;
    struct ofl_table t;
    struct chain_q master = {0};
    struct chain_cq done = {0};
    struct ofl_local l;
    int rc = EXIT_FAILURE;

    if (rnic_open("softnic-inproc", NULL, &sdev) < 0 ||
        rnic_open("softnic-inproc", NULL, &cdev) < 0) {
        fprintf(stderr, "pipeline_dump: rnic_open: %s\n", rnic_errmsg());
        goto close_devices;
    }
    if (ofl_table_open(sdev, 4, 1 << 20, 1024, &t) < 0) {
        fprintf(stderr, "pipeline_dump: table: %s\n", chain_errmsg());
        goto close_devices;
    }
    if (chain_q_open(sdev, &ma, &master) < 0 ||
        chain_q_connect(&master, &master) < 0 ||
        chain_cq_open(sdev, 1024, RNIC_CQ_IGNORE_OVERRUN, &done) < 0) {
        fprintf(stderr, "pipeline_dump: queues: %s\n", chain_errmsg());
        goto close_queues;
    }
    if (ofl_local_open(&t, cdev, DUMP_ITERS, DUMP_DEPTH, false, &done, &master,
                       &l) < 0) {
        fprintf(stderr, "pipeline_dump: pipeline: %s\n", chain_errmsg());
        goto close_queues;
    }
    dump("w", &l.pipe.w, OFL_W_UNIT);
    dump("r", &l.pipe.resp, OFL_RESP_UNIT);
    rc = fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    ofl_local_close(&l);
close_queues:
    chain_cq_close(&done);
    chain_q_close(&master);
    ofl_table_close(&t);
close_devices:
    rnic_close(cdev);
    rnic_close(sdev);
    return rc;
}
