/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/support/nicd_testutil.h - a private rdn-nicd for tests that exercise the
 * softnic daemon (persistence, processes that die): a temporary directory
 * with the daemon's socket, the daemon started with PR_SET_PDEATHSIG (it
 * dies with the test) and killed by the fixture's tear-down, its object
 * counts, and small helpers for forked children.
 */
#ifndef T_SUPPORT_NICD_TESTUTIL_H
#define T_SUPPORT_NICD_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rdn/rnic/rnic.h"
#include "rdn/softnic/ctl.h"

#define NICD_ALL_ACCESS                                                        \
    (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |                      \
     RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

extern char nicd_dir[256], nicd_sock[300];
extern pid_t nicd_pid; /* -1 when not running */

void nicd_sleep_ms(int ms);
/* The rdn-nicd of the build tree ($top_builddir). */
void nicd_binary(char *out, size_t n);
/* A fresh temporary nicd_dir, nicd_sock inside it; and its removal. */
void nicd_make_dir(void);
void nicd_remove_dir(void);
/* Starts rdn-nicd on nicd_sock and waits until it answers; stops it. */
void nicd_start(void);
void nicd_stop(void);
/* Fixture: make_dir + start; stop + remove_dir. */
void nicd_fixture_up(void);
void nicd_fixture_down(void);
/* What the daemon holds right now. */
struct sn_ctl_resp nicd_stats(void);
/* Waits (bounded) until the daemon holds exactly `devices` devices. */
struct sn_ctl_resp nicd_stats_settle(uint32_t devices);
/* Opens "softnic" on nicd_sock (no autostart) with a domain (or NULL). */
struct rnic_device *nicd_open_dev(const char *domain);
void nicd_pipe_write(int fd, const void *p, size_t n);
void nicd_pipe_read(int fd, void *p, size_t n);
/* SIGKILLs a child and reaps it. */
void nicd_kill_child(pid_t pid);

#endif /* T_SUPPORT_NICD_TESTUTIL_H */
