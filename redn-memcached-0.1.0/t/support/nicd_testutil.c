/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/support/nicd_testutil.c - a private rdn-nicd for tests
 * (t/support/nicd_testutil.h).
 */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rdn/softnic/sock.h"
#include "t/support/nicd_testutil.h"

char nicd_dir[256], nicd_sock[300];
pid_t nicd_pid = -1;

void nicd_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

void nicd_binary(char *out, size_t n)
{
    const char *b = getenv("top_builddir");

    snprintf(out, n, "%s/rdn/softnic/rdn-nicd", b ? b : ".");
}

/* Starts rdn-nicd on nicd_sock (it dies with this process). */
void nicd_start(void)
{
    char bin[512], log[320];

    nicd_binary(bin, sizeof(bin));
    snprintf(log, sizeof(log), "%s/log", nicd_dir);
    nicd_pid = fork();
    ck_assert_int_ge(nicd_pid, 0);
    if (nicd_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execl(bin, "rdn-nicd", "--socket", nicd_sock, "--log", log,
              "--idle-exit", "120", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 500; i++) {
        int s = sn_sock_connect(nicd_sock);

        if (s >= 0) {
            close(s);
            return;
        }
        nicd_sleep_ms(10);
    }
    ck_abort_msg("rdn-nicd did not come up on %s", nicd_sock);
}

void nicd_stop(void)
{
    if (nicd_pid > 0) {
        kill(nicd_pid, SIGTERM);
        for (int i = 0; i < 300 && waitpid(nicd_pid, NULL, WNOHANG) == 0; i++)
            nicd_sleep_ms(10);
        kill(nicd_pid, SIGKILL);
        waitpid(nicd_pid, NULL, 0);
        nicd_pid = -1;
    }
}

void nicd_make_dir(void)
{
    snprintf(nicd_dir, sizeof(nicd_dir), "/tmp/rdn-nicd-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(nicd_dir));
    snprintf(nicd_sock, sizeof(nicd_sock), "%s/sock", nicd_dir);
}

void nicd_remove_dir(void)
{
    char cmd[320];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", nicd_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", nicd_dir);
}

void nicd_fixture_up(void)
{
    nicd_make_dir();
    nicd_start();
}

void nicd_fixture_down(void)
{
    nicd_stop();
    nicd_remove_dir();
}

/* What the daemon holds right now. */
struct sn_ctl_resp nicd_stats(void)
{
    struct sn_ctl_req req = {.op = SN_CTL_STATS};
    struct sn_ctl_resp resp;
    int s = sn_sock_connect(nicd_sock), fd;

    ck_assert_int_ge(s, 0);
    ck_assert_int_eq(sn_sock_send(s, &req, sizeof(req), -1), 0);
    ck_assert_int_eq(sn_sock_recv(s, &resp, sizeof(resp), &fd),
                     (int)sizeof(resp));
    close(s);
    return resp;
}

/* Waits until the daemon holds exactly `devices` devices. */
struct sn_ctl_resp nicd_stats_settle(uint32_t devices)
{
    struct sn_ctl_resp r = nicd_stats();

    for (int i = 0; i < 500 && r.u.stats.devices != devices; i++) {
        nicd_sleep_ms(10);
        r = nicd_stats();
    }
    return r;
}

struct rnic_device *nicd_open_dev(const char *domain)
{
    struct rnic_open_opts o = {
        .socket = nicd_sock, .no_autostart = 1, .domain = domain};
    struct rnic_device *d;

    ck_assert_msg(rnic_open("softnic", &o, &d) == 0, "open: %s", rnic_errmsg());
    return d;
}

void nicd_pipe_write(int fd, const void *p, size_t n)
{
    ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
}

void nicd_pipe_read(int fd, void *p, size_t n)
{
    ck_assert_int_eq(read(fd, p, n), (ssize_t)n);
}

void nicd_kill_child(pid_t pid)
{
    int st;

    kill(pid, SIGKILL);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}
