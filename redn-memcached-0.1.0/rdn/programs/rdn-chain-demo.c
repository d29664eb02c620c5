/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/programs/rdn-chain-demo.c - runs the NIC-only programs on softnic and
 * prints what they did, after the chain checker looked at them:
 *
 *   rdn-chain-demo list [KEY] [--break]   walk an 8-node list for KEY
 *   rdn-chain-demo counter [LAPS]         count laps, then a client stops it
 *   rdn-chain-demo turing [bb2|bb3|bb4]   run a busy beaver
 *
 * Environment: RDN_DEVICE (default softnic-inproc), RDN_SOFTNIC_MODEL.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdn/programs/counter_loop.h"
#include "rdn/programs/list_walk.h"
#include "rdn/programs/turing.h"

static struct rnic_device *dev;

static int fail(const char *what)
{
    fprintf(stderr, "rdn-chain-demo: %s: %s\n", what, chain_errmsg());
    return 1;
}

/* Runs the checker over queues (and memory) and prints its verdict. */
static int check(struct chain_q **qs, unsigned nq, void *mem, size_t len,
                 struct chain_q *inject_q, const void *msg, uint32_t mlen)
{
    struct chain_check_opts o = {.max_steps = 5000};
    struct chain_report rep;
    struct chain_check *c;
    int rc = chain_check_new(&o, &c);

    for (unsigned i = 0; rc == 0 && i < nq; i++)
        rc = chain_check_add_q(c, qs[i]);
    if (rc == 0 && mem)
        rc = chain_check_add_mem(c, mem, len);
    if (rc == 0 && inject_q)
        rc = chain_check_inject(c, inject_q, msg, mlen);
    if (rc == 0)
        rc = chain_check_run(c, &rep);
    chain_check_free(c);
    if (rc < 0)
        return fail("check");
    chain_report_print(&rep, stdout);
    return rep.nhazards ? 1 : 0;
}

static int demo_list(uint64_t key, bool brk)
{
    struct chain_buf srv, cli;
    struct chain_q client;
    struct list_walk lw;
    struct list_walk_cfg cfg = {.nodes = 8, .brk = brk};
    struct list_node *nodes;
    uint8_t req[6 * LIST_MAX_NODES];
    struct rnic_sge rs, sg;
    struct rnic_wc wc;
    uint32_t len;

    if (chain_buf_open(dev, 4096,
                       RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_READ,
                       &srv) < 0 ||
        chain_buf_open(dev, 4096,
                       RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE,
                       &cli) < 0)
        return fail("memory");
    nodes = (struct list_node *)srv.ptr;
    for (unsigned i = 0; i < 8; i++) {
        char *v = (char *)srv.ptr + 1024 + 32 * i;

        snprintf(v, 32, "value of key %u", 10 * (i + 1));
        list_node_set(&nodes[i], 10 * (i + 1), 32, srv.mr->lkey,
                      (uint64_t)(uintptr_t)v,
                      i < 7 ? (uint64_t)(uintptr_t)&nodes[i + 1] : 0);
    }
    if (chain_q_open(dev, &(struct chain_q_attr){.sq_wqebb = 16, .rq_wqe = 4},
                     &client) < 0)
        return fail("client queue");
    cfg.head = (uint64_t)(uintptr_t)nodes;
    cfg.nodes_rkey = srv.mr->rkey;
    cfg.client = &client;
    cfg.reply = chain_buf_loc(&cli, 0, 64);
    if (list_walk_build(&lw, dev, &cfg) < 0)
        return fail("list walk");
    len = list_walk_request(key, 8, req);
    printf("list of 8 nodes with keys 10..80, looking for %llu (%s)\n",
           (unsigned long long)key, brk ? "with break" : "without break");
    if (check((struct chain_q *[]){&lw.master, &lw.work, &lw.resp}, 3, srv.ptr,
              srv.len, &lw.resp, req, len))
        return 1;
    memcpy(cli.ptr + 128, req, len);
    rs = chain_loc_sge(chain_buf_loc(&cli, 64, 8));
    sg = chain_loc_sge(chain_buf_loc(&cli, 128, len));
    if (chain_post_recv(&client, &rs, 1, 0) < 0 || list_walk_start(&lw) < 0 ||
        chain_send(&client, &sg, 1, 0, NULL) < 0 ||
        chain_q_doorbell(&client) < 0 ||
        chain_cq_poll_wait(client.rcq, &wc, 5000) != 1)
        return fail("request");
    usleep(10000);
    printf("reply: imm 0x%08x (%s), buffer \"%.32s\"\n", wc.imm,
           wc.imm == LIST_IMM_MISS   ? "miss"
           : wc.imm == LIST_IMM_DONE ? "done"
                                     : "hit",
           (const char *)cli.ptr);
    printf("iterations run:");
    for (unsigned i = 0; i < 8; i++)
        printf(" %c", list_walk_iter_ran(&lw, i) ? '1' + (char)i : '-');
    printf("\n");
    list_walk_destroy(&lw);
    chain_q_close(&client);
    chain_buf_close(&cli);
    chain_buf_close(&srv);
    return 0;
}

static double seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int demo_counter(uint64_t laps)
{
    struct counter_loop c;
    struct chain_q client;
    struct chain_buf buf;
    struct rnic_sge stop;
    double t0;

    if (counter_loop_build(&c, dev, 0) < 0)
        return fail("counter");
    if (check((struct chain_q *[]){&c.master, &c.loop}, 2, c.mem.ptr, c.mem.len,
              NULL, NULL, 0))
        return 1;
    if (chain_buf_open(dev, 4096, RNIC_ACCESS_LOCAL_WRITE, &buf) < 0 ||
        chain_q_open(dev, &(struct chain_q_attr){.sq_wqebb = 16}, &client) <
            0 ||
        chain_q_connect(&client, &c.door) < 0)
        return fail("client");
    *(uint64_t *)buf.ptr = COUNTER_STOP;
    stop = chain_loc_sge(chain_buf_loc(&buf, 0, 8));
    t0 = seconds();
    if (counter_loop_start(&c) < 0)
        return fail("start");
    while (counter_loop_laps(&c) < laps && seconds() - t0 < 60)
        usleep(1000);
    printf("%llu laps in %.3f s with no CPU after the doorbell; a client "
           "writes the stop word\n",
           (unsigned long long)counter_loop_laps(&c), seconds() - t0);
    if (chain_write(&client, &stop, 1, counter_loop_stop_word(&c), 0, NULL) <
            0 ||
        chain_q_doorbell(&client) < 0)
        return fail("stop");
    usleep(100000);
    printf("stopped at %llu laps (tail counter %llu)\n",
           (unsigned long long)counter_loop_laps(&c),
           (unsigned long long)counter_loop_tail(&c));
    chain_q_close(&client);
    chain_buf_close(&buf);
    counter_loop_destroy(&c);
    return 0;
}

static int demo_turing(const struct tm_machine *m)
{
    struct tm_result ref, nic;
    struct turing t;
    double t0;

    if (turing_build(&t, dev, m, 64, 32) < 0)
        return fail("turing");
    if (check((struct chain_q *[]){&t.master, &t.loop}, 2, t.mem.ptr, t.mem.len,
              NULL, NULL, 0))
        return 1;
    tm_reference(m, 64, 32, 1000000, &ref);
    t0 = seconds();
    if (turing_start(&t) < 0)
        return fail("start");
    while (*(volatile const uint64_t *)turing_steps_word(&t) < ref.steps &&
           seconds() - t0 < 10)
        usleep(100);
    usleep(10000);
    turing_result(&t, &nic);
    printf("%s on the NIC: %llu steps, %u ones, head at cell %u\n", m->name,
           (unsigned long long)nic.steps, nic.ones, nic.head);
    printf("%s on the CPU: %llu steps, %u ones, head at cell %u\n", m->name,
           (unsigned long long)ref.steps, ref.ones, ref.head);
    printf("tape: ");
    for (unsigned i = 16; i < 48; i++)
        putchar('0' + nic.tape[i]);
    printf("\n");
    turing_destroy(&t);
    return nic.steps == ref.steps && !memcmp(nic.tape, ref.tape, 64) ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    const char *name = getenv("RDN_DEVICE");
    int rc;

    if (rnic_open(name && *name ? name : "softnic-inproc", NULL, &dev) < 0) {
        fprintf(stderr, "rdn-chain-demo: %s\n", rnic_errmsg());
        return 1;
    }
    if (!strcmp(what, "list"))
        rc = demo_list(argc > 2 && argv[2][0] != '-' ? strtoull(argv[2], 0, 0)
                                                     : 50,
                       argc > 2 && !strcmp(argv[argc - 1], "--break"));
    else if (!strcmp(what, "counter"))
        rc = demo_counter(argc > 2 ? strtoull(argv[2], NULL, 0) : 100000);
    else if (!strcmp(what, "turing"))
        rc = demo_turing(argc > 2 && !strcmp(argv[2], "bb2")   ? &tm_bb2
                         : argc > 2 && !strcmp(argv[2], "bb3") ? &tm_bb3
                                                               : &tm_bb4);
    else {
        fprintf(stderr, "usage: rdn-chain-demo list [KEY] [--break] | "
                        "counter [LAPS] | turing [bb2|bb3|bb4]\n");
        rc = 2;
    }
    rnic_close(dev);
    return rc;
}
