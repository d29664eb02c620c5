/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_softnic_daemon.c - rdn-nicd: applications killed with SIGKILL
 * leave the daemon running with their objects freed; persistent objects
 * survive, keep serving (a chain answers a client while its application is
 * dead) and are re-attached by a new process; the library starts a daemon
 * when none answers (and not when told not to).
 *
 * Every daemon runs on a socket in its own temporary directory and is
 * killed at the end (and dies with the test through PR_SET_PDEATHSIG).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rdn/softnic/client.h"
#include "t/support/nicd_testutil.h"
#include "t/support/test_softnic_util.h"

/* A QP of d on cq (with a receive queue on rcq if rq), self-connected. */
static struct rnic_qp *make_qp(struct rnic_device *d, struct rnic_cq *cq,
                               struct rnic_cq *rcq, uint32_t rq, unsigned flags)
{
    struct rnic_qp_init_attr a = {.send_cq = cq,
                                  .recv_cq = rcq,
                                  .sq_wqebb = 16,
                                  .rq_wqe = rq,
                                  .max_recv_sge = rq ? 1 : 0,
                                  .flags = flags};
    struct rnic_qp *qp;

    ck_assert_msg(rnic_create_qp(d, &a, &qp) == 0, "qp: %s", rnic_errmsg());
    return qp;
}

START_TEST(sigkill_frees_nonpersistent)
{
    int p[2];
    pid_t pid;
    char c;
    struct sn_ctl_resp r;

    ck_assert_int_eq(pipe(p), 0);
    pid = fork();
    if (pid == 0) {
        struct rnic_device *d = nicd_open_dev(NULL);
        struct rnic_cq *cq;
        struct rnic_mr *mr;
        struct rnic_addr a;
        void *mem;
        struct rnic_qp *qp;

        ck_assert_int_eq(rnic_mem_alloc(d, 65536, &mem), 0);
        ck_assert_int_eq(rnic_reg_mr(d, mem, 65536, NICD_ALL_ACCESS, &mr), 0);
        ck_assert_int_eq(rnic_create_cq(d, 64, &cq), 0);
        qp = make_qp(d, cq, NULL, 0, 0);
        rnic_qp_addr(qp, &a);
        ck_assert_int_eq(rnic_connect(qp, &a), 0);
        nicd_pipe_write(p[1], "r", 1);
        pause();
        _exit(0);
    }
    nicd_pipe_read(p[0], &c, 1);
    r = nicd_stats();
    ck_assert_uint_eq(r.u.stats.devices, 1);
    ck_assert_uint_eq(r.u.stats.mems, 1);
    ck_assert_uint_eq(r.u.stats.mrs, 1);
    ck_assert_uint_eq(r.u.stats.cqs, 1);
    ck_assert_uint_eq(r.u.stats.qps, 1);
    nicd_kill_child(pid);
    r = nicd_stats_settle(0);
    ck_assert_uint_eq(r.u.stats.devices, 0);
    ck_assert_uint_eq(
        r.u.stats.mems + r.u.stats.mrs + r.u.stats.cqs + r.u.stats.qps, 0);
    ck_assert_int_eq(kill(nicd_pid, 0), 0); /* the daemon lives on */
    rnic_close(nicd_open_dev(NULL));        /* and serves */
    close(p[0]);
    close(p[1]);
}
END_TEST

/* Whether [p, p+len) lies in the window a domain's memory and rings go in */
static bool in_place_window(const void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p;

    return a >= SN_PLACE_LO && a + len <= SN_PLACE_HI;
}

struct persisted {
    uint64_t mem;
    uint32_t key, qpn, cqn;
};

/* The dying application: persistent mem, MR, CQ, QP and two that aren't. */
static void persist_child(int wfd)
{
    struct rnic_device *d = nicd_open_dev("dom1");
    struct rnic_cq *cq, *cq2;
    struct rnic_mr *mr, *mr2;
    struct rnic_qp *qp;
    struct rnic_addr a;
    struct persisted info;
    struct rnic_sq sq;
    uint8_t *mem;

    ck_assert_int_eq(rnic_mem_alloc(d, 65536, (void **)&mem), 0);
    ck_assert_msg(in_place_window(mem, 65536), "memory at %p", (void *)mem);
    for (int i = 0; i < 4096; i++)
        mem[i] = (uint8_t)(i * 13);
    ck_assert_int_eq(rnic_reg_mr(d, mem, 65536, NICD_ALL_ACCESS, &mr), 0);
    ck_assert_int_eq(rnic_reg_mr(d, mem, 4096, NICD_ALL_ACCESS, &mr2), 0);
    ck_assert_int_eq(rnic_create_cq(d, 64, &cq), 0);
    ck_assert_int_eq(rnic_create_cq(d, 64, &cq2), 0);
    qp = make_qp(d, cq, NULL, 0, 0);
    ck_assert_int_eq(rnic_qp_sq(qp, &sq), 0);
    ck_assert_msg(in_place_window(sq.buf, (size_t)sq.wqebb_cnt * 64),
                  "ring at %p", (void *)sq.buf);
    rnic_qp_addr(qp, &a);
    ck_assert_int_eq(rnic_connect(qp, &a), 0);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_MR, mr, "mr"), -EINVAL);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_QP, qp, "qp"), -EINVAL);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_MEM, mem, "mem"), 0);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_MR, mr, "mr"), 0);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_CQ, cq, "cq"), 0);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_QP, qp, "qp"), 0);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_CQ, cq2, "cq"), -EEXIST);
    info.mem = (uintptr_t)mem;
    info.key = mr->lkey;
    info.qpn = rnic_qp_num(qp);
    info.cqn = rnic_cq_num(cq);
    nicd_pipe_write(wfd, &info, sizeof(info));
    pause();
    _exit(0);
}

/* The restarted application: attach everything and use it. */
static void reattach_child(const struct persisted *info)
{
    struct rnic_open_opts o = {
        .socket = nicd_sock, .no_autostart = 1, .domain = "dom1"};
    struct rnic_device *d = nicd_open_dev("dom1"), *d2;
    struct rnic_mr *mr;
    struct rnic_cq *cq;
    struct rnic_qp *qp;
    struct tq q;
    struct tw w;
    struct rnic_wc wc;
    uint8_t *mem;
    void *big, *taken;

    ck_assert_int_eq(rnic_open("softnic", &o, &d2), -EBUSY);
    /* What a restarted process maps before it re-attaches goes anywhere
     * but the window. */
    big = mmap(NULL, (size_t)1 << 32, PROT_NONE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ck_assert_ptr_ne(big, MAP_FAILED);
    ck_assert(!in_place_window(big, 1));
    /* A fresh object aimed at an address this process has, then at the
     * persistent memory's (the daemon refuses it), goes elsewhere. */
    taken =
        mmap((void *)(uintptr_t)(SN_PLACE_HI - (4u << 20)), 2u << 20, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    ck_assert_ptr_ne(taken, MAP_FAILED);
    for (int i = 0; i < 2; i++) {
        char at[32];
        void *aim = i ? (void *)(uintptr_t)info->mem : taken, *fresh;

        snprintf(at, sizeof(at), "%p", aim);
        setenv("RDN_SOFTNIC_PLACE_AT", at, 1);
        ck_assert_int_eq(rnic_mem_alloc(d, (size_t)1 << 20, &fresh), 0);
        ck_assert_ptr_ne(fresh, aim);
        ck_assert(in_place_window(fresh, (size_t)1 << 20));
    }
    unsetenv("RDN_SOFTNIC_PLACE_AT");
    ck_assert_int_eq(rnic_attach(d, RNIC_OBJ_MEM, "mem", (void **)&mem), 0);
    ck_assert_uint_eq((uintptr_t)mem, info->mem);
    ck_assert_uint_eq(rnic_mem_len(d, mem), 65536);
    for (int i = 0; i < 4096; i++)
        ck_assert_uint_eq(mem[i], (uint8_t)(i * 13));
    ck_assert_int_eq(rnic_attach(d, RNIC_OBJ_MR, "mr", (void **)&mr), 0);
    ck_assert_uint_eq(mr->lkey, info->key);
    ck_assert_int_eq(rnic_attach(d, RNIC_OBJ_CQ, "cq", (void **)&cq), 0);
    ck_assert_uint_eq(rnic_cq_num(cq), info->cqn);
    ck_assert_int_eq(rnic_attach(d, RNIC_OBJ_QP, "qp", (void **)&qp), 0);
    ck_assert_uint_eq(rnic_qp_num(qp), info->qpn);
    ck_assert_int_eq(rnic_qp_state(qp), RNIC_QPS_RTS);
    ck_assert_int_eq(rnic_attach(d, RNIC_OBJ_QP, "nope", (void **)&qp),
                     -ENOENT);
    /* The QP still runs: WRITE 64 bytes within the re-attached memory. */
    memset(&q, 0, sizeof(q));
    q.qp = qp;
    ck_assert_int_eq(rnic_qp_sq(qp, &q.sq), 0);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_raddr(&w, (uintptr_t)mem + 8192, mr->rkey);
    tw_data(&w, 64, mr->lkey, mem);
    tq_post(&q, &w);
    tq_ring(&q);
    ck_assert_int_eq(tpoll(cq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_mem_eq(mem + 8192, mem, 64);
    rnic_close(d);
}

START_TEST(persistent_objects_survive_and_reattach)
{
    int p[2], st;
    pid_t pid;
    struct persisted info;
    struct sn_ctl_resp r;

    ck_assert_int_eq(pipe(p), 0);
    pid = fork();
    if (pid == 0)
        persist_child(p[1]);
    close(p[1]); /* a child that fails ends the read at once */
    nicd_pipe_read(p[0], &info, sizeof(info));
    nicd_kill_child(pid);
    for (int i = 0; i < 500; i++) {
        r = nicd_stats();
        if (r.u.stats.orphans == 1 && r.u.stats.cqs == 1)
            break;
        nicd_sleep_ms(10);
    }
    ck_assert_uint_eq(r.u.stats.devices, 1);
    ck_assert_uint_eq(r.u.stats.orphans, 1);
    ck_assert_uint_eq(r.u.stats.mems, 1);
    ck_assert_uint_eq(r.u.stats.mrs, 1); /* the second MR was freed */
    ck_assert_uint_eq(r.u.stats.cqs, 1);
    ck_assert_uint_eq(r.u.stats.qps, 1);
    /* A restarted process (a fresh child: the address is free there). */
    pid = fork();
    if (pid == 0) {
        reattach_child(&info);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "re-attaching process failed (status %#x)", st);
    /* It closed cleanly: the persistent objects are still kept. */
    r = nicd_stats();
    ck_assert_uint_eq(r.u.stats.orphans, 1);
    ck_assert_uint_eq(r.u.stats.qps, 1);
    close(p[0]);
}
END_TEST

struct srv_info {
    struct rnic_addr s_addr;
};

struct cli_info {
    struct rnic_addr c_addr;
    uint64_t buf;
    uint32_t rkey;
};

/*
 * The server: S (managed send, with a receive queue) holds a pre-posted
 * WRITE_IMM of its reply; K WAITs for S's first receive and enables it.
 * Everything persistent; then the server dies.
 */
static void server_child(int rfd, int wfd)
{
    struct rnic_device *d = nicd_open_dev("srv");
    struct rnic_cq *scq, *rcq;
    struct rnic_mr *mr;
    struct rnic_qp *s, *k;
    struct cli_info ci;
    struct srv_info si;
    struct rnic_sge sge;
    struct tq qs, qk;
    struct tw w;
    uint8_t *mem;

    nicd_pipe_read(rfd, &ci, sizeof(ci));
    ck_assert_int_eq(rnic_mem_alloc(d, 65536, (void **)&mem), 0);
    memcpy(mem, "served while dead", 18);
    ck_assert_int_eq(rnic_reg_mr(d, mem, 65536, NICD_ALL_ACCESS, &mr), 0);
    ck_assert_int_eq(rnic_create_cq(d, 64, &scq), 0);
    ck_assert_int_eq(rnic_create_cq(d, 64, &rcq), 0);
    s = make_qp(d, scq, rcq, 4, RNIC_QP_MANAGED_SEND);
    k = make_qp(d, scq, NULL, 0, RNIC_QP_CROSS_CHANNEL);
    rnic_qp_addr(k, &si.s_addr);
    ck_assert_int_eq(rnic_connect(k, &si.s_addr), 0);
    ck_assert_int_eq(rnic_connect(s, &ci.c_addr), 0);
    sge.addr = (uintptr_t)mem + 4096;
    sge.length = 64;
    sge.lkey = mr->lkey;
    ck_assert_int_eq(rnic_post_recv(s, &sge, 1, 1), 0);
    memset(&qs, 0, sizeof(qs));
    qs.qp = s;
    rnic_qp_sq(s, &qs.sq);
    tw_ctrl(&w, MLX5_OPCODE_RDMA_WRITE_IMM, 0);
    tw_imm(&w, 0x600d);
    tw_raddr(&w, ci.buf, ci.rkey);
    tw_data(&w, 18, mr->lkey, mem);
    tq_post(&qs, &w);
    memset(&qk, 0, sizeof(qk));
    qk.qp = k;
    rnic_qp_sq(k, &qk.sq);
    tw_ctrl(&w, MLX5_OPCODE_WAIT, 0);
    tw_waiten(&w, 1, rnic_cq_num(rcq));
    tq_post(&qk, &w);
    tw_ctrl(&w, MLX5_OPCODE_SEND_EN, 0);
    tw_waiten(&w, 1, rnic_qp_num(s));
    tq_post(&qk, &w);
    tq_ring(&qk);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_MEM, mem, "mem"), 0);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_MR, mr, "mr"), 0);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_CQ, scq, "scq"), 0);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_CQ, rcq, "rcq"), 0);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_QP, s, "s"), 0);
    ck_assert_int_eq(rnic_persist(d, RNIC_OBJ_QP, k, "k"), 0);
    rnic_qp_addr(s, &si.s_addr);
    nicd_pipe_write(wfd, &si, sizeof(si));
    pause();
    _exit(0);
}

START_TEST(chain_serves_while_its_app_is_dead)
{
    int to_srv[2], from_srv[2];
    struct rnic_device *d = nicd_open_dev(NULL);
    struct rnic_cq *cq;
    struct rnic_mr *mr;
    struct rnic_qp *c;
    struct cli_info ci;
    struct srv_info si;
    struct rnic_sge sge;
    struct tq qc;
    struct tw w;
    struct rnic_wc wc;
    uint8_t *mem;
    pid_t pid;

    ck_assert_int_eq(pipe(to_srv), 0);
    ck_assert_int_eq(pipe(from_srv), 0);
    pid = fork();
    if (pid == 0)
        server_child(to_srv[0], from_srv[1]);
    ck_assert_int_eq(rnic_mem_alloc(d, 65536, (void **)&mem), 0);
    ck_assert_int_eq(rnic_reg_mr(d, mem, 65536, NICD_ALL_ACCESS, &mr), 0);
    ck_assert_int_eq(rnic_create_cq(d, 64, &cq), 0);
    c = make_qp(d, cq, cq, 4, 0);
    rnic_qp_addr(c, &ci.c_addr);
    ci.buf = (uintptr_t)mem + 1024;
    ci.rkey = mr->rkey;
    nicd_pipe_write(to_srv[1], &ci, sizeof(ci));
    nicd_pipe_read(from_srv[0], &si, sizeof(si));
    ck_assert_int_eq(rnic_connect(c, &si.s_addr), 0);
    nicd_kill_child(pid); /* the server's application is gone */
    nicd_sleep_ms(50);
    sge.addr = (uintptr_t)mem + 2048;
    sge.length = 64;
    sge.lkey = mr->lkey;
    ck_assert_int_eq(rnic_post_recv(c, &sge, 1, 77), 0);
    memset(&qc, 0, sizeof(qc));
    qc.qp = c;
    rnic_qp_sq(c, &qc.sq);
    memcpy(mem, "get", 4);
    tw_ctrl(&w, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE);
    tw_data(&w, 4, mr->lkey, mem);
    tq_post(&qc, &w);
    tq_ring(&qc);
    /* SEND completion, then the reply's WRITE_IMM into our buffer. */
    ck_assert_int_eq(tpoll(cq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_int_eq(tpoll(cq, &wc, 1, TMS), 1);
    ck_assert_uint_eq(wc.status, RNIC_WC_SUCCESS);
    ck_assert_uint_eq(wc.opcode, RNIC_WC_RECV_RDMA_IMM);
    ck_assert_uint_eq(wc.imm, 0x600d);
    ck_assert_uint_eq(wc.wr_id, 77);
    ck_assert_mem_eq(mem + 1024, "served while dead", 18);
    rnic_close(d);
}
END_TEST

/* ---- autostart (no fixture daemon) ------------------------------------ */

static void auto_up(void)
{
    nicd_make_dir();
}

static void auto_down(void)
{
    char pidfile[320];
    FILE *f;
    int pid = 0;

    snprintf(pidfile, sizeof(pidfile), "%s.pid", nicd_sock);
    f = fopen(pidfile, "r");
    if (f) {
        if (fscanf(f, "%d", &pid) == 1 && pid > 0) {
            kill(pid, SIGTERM);
            for (int i = 0; i < 300 && kill(pid, 0) == 0; i++)
                nicd_sleep_ms(10);
            kill(pid, SIGKILL);
        }
        fclose(f);
    }
    nicd_remove_dir();
}

START_TEST(autostart_starts_daemon_and_says_so)
{
    struct rnic_open_opts o = {.socket = nicd_sock};
    struct rnic_device *d;
    char bin[512], errpath[320], line[512] = "", pidfile[320];
    FILE *f;
    int pid = 0, saved = dup(2), fd;

    nicd_binary(bin, sizeof(bin));
    setenv("RDN_NICD", bin, 1);
    setenv("RDN_NICD_IDLE_EXIT", "30", 1); /* bounded even if we crash */
    unsetenv("RDN_NICD_AUTOSTART");
    snprintf(errpath, sizeof(errpath), "%s/stderr", nicd_dir);
    fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    ck_assert_int_eq(rnic_open("softnic", &o, &d), 0);
    dup2(saved, 2);
    close(saved);
    f = fopen(errpath, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    fclose(f);
    ck_assert_msg(strstr(line, "started") && strstr(line, nicd_sock),
                  "stderr said: %s", line);
    snprintf(pidfile, sizeof(pidfile), "%s.pid", nicd_sock);
    for (int i = 0; i < 300 && pid <= 0; i++) {
        f = fopen(pidfile, "r");
        if (f) {
            if (fscanf(f, "%d", &pid) != 1)
                pid = 0;
            fclose(f);
        }
        if (pid <= 0)
            nicd_sleep_ms(10);
    }
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(kill(pid, 0), 0);
    rnic_close(d);
}
END_TEST

START_TEST(autostart_zero_forbids_it)
{
    struct rnic_open_opts o = {.socket = nicd_sock};
    struct rnic_device *d;
    int rc;

    setenv("RDN_NICD_AUTOSTART", "0", 1);
    rc = rnic_open("softnic", &o, &d);
    ck_assert_int_lt(rc, 0);
    ck_assert_ptr_nonnull(strstr(rnic_errmsg(), "autostart is off"));
    ck_assert_int_ne(access(nicd_sock, F_OK), 0);
    unsetenv("RDN_NICD_AUTOSTART");
}
END_TEST

static Suite *daemon_suite(void)
{
    Suite *s = suite_create("softnic-daemon");
    TCase *tc = tcase_create("daemon");
    TCase *ta = tcase_create("autostart");

    tcase_add_unchecked_fixture(tc, nicd_fixture_up, nicd_fixture_down);
    tcase_set_timeout(tc, 40);
    tcase_add_test(tc, sigkill_frees_nonpersistent);
    tcase_add_test(tc, persistent_objects_survive_and_reattach);
    tcase_add_test(tc, chain_serves_while_its_app_is_dead);
    suite_add_tcase(s, tc);
    tcase_add_checked_fixture(ta, auto_up, auto_down);
    tcase_set_timeout(ta, 40);
    tcase_add_test(ta, autostart_starts_daemon_and_says_so);
    tcase_add_test(ta, autostart_zero_forbids_it);
    suite_add_tcase(s, ta);
    return s;
}

int main(void)
{
    return trun(daemon_suite, "1");
}
