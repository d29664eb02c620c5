/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/daemon_client.c - the "softnic" provider: devices served by
 * the rdn-nicd daemon over its Unix socket, the daemon started (detached,
 * announced on stderr) when none answers, unless RDN_NICD_AUTOSTART=0 or
 * rnic_open_opts.no_autostart.
 *
 * Which rdn-nicd: $RDN_NICD, else the build tree's for a program running
 * from the build tree, else the installed one, else "rdn-nicd" on $PATH.
 * (An installed program never starts a build tree's daemon, which may be of
 * another version.) It gets --pidfile SOCKET.pid, and --idle-exit
 * $RDN_NICD_IDLE_EXIT when that is set.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rdn/softnic/client.h"
#include "rdn/softnic/sock.h"
#include "rdn/softnic/softnic.h"

#define SN_AUTOSTART_WAIT_MS 5000

struct sn_dtp {
    struct sn_transport tp;
    int sock;
    pthread_mutex_t lock; /* one request in flight per connection */
};

static int sn_dtp_call(struct sn_transport *tp, const struct sn_ctl_req *req,
                       int fd_in, struct sn_ctl_resp *resp, int *fd_out)
{
    struct sn_dtp *d = (struct sn_dtp *)tp;
    int rc;

    pthread_mutex_lock(&d->lock);
    rc = sn_sock_send(d->sock, req, sizeof(*req), fd_in);
    if (rc == 0) {
        rc = sn_sock_recv(d->sock, resp, sizeof(*resp), fd_out);
        rc = rc == (int)sizeof(*resp) ? 0 : rc == 0 ? -EPIPE : rc;
    }
    pthread_mutex_unlock(&d->lock);
    if (rc < 0) {
        memset(resp, 0, sizeof(*resp));
        resp->err = rc;
        snprintf(resp->msg, sizeof(resp->msg),
                 "lost the connection to rdn-nicd: %s", strerror(-rc));
    }
    return 0;
}

static void sn_dtp_close(struct sn_transport *tp)
{
    struct sn_dtp *d = (struct sn_dtp *)tp;

    close(d->sock);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

#ifdef RDN_BUILD_TOP
/* True when this program's executable lies under the build tree. */
static bool sn_in_build_tree(void)
{
    char exe[PATH_MAX];
    size_t n = strlen(RDN_BUILD_TOP);
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (len < 0)
        return false;
    exe[len] = '\0';
    return strncmp(exe, RDN_BUILD_TOP, n) == 0 && exe[n] == '/';
}
#endif

static const char *sn_nicd_binary(void)
{
    const char *env = getenv("RDN_NICD");

    if (env && *env)
        return env;
#ifdef RDN_BUILD_TOP
    if (sn_in_build_tree() && access(RDN_NICD_BUILD_PATH, X_OK) == 0)
        return RDN_NICD_BUILD_PATH;
#endif
#ifdef RDN_NICD_INSTALL_PATH
    if (access(RDN_NICD_INSTALL_PATH, X_OK) == 0)
        return RDN_NICD_INSTALL_PATH;
#endif
    return "rdn-nicd";
}

/* Starts rdn-nicd on path, detached (its own session, stdio closed). */
static pid_t sn_nicd_spawn(const char *bin, const char *path)
{
    char pidfile[512];
    int pfd[2];
    pid_t pid, daemon_pid = -1;

    snprintf(pidfile, sizeof(pidfile), "%s.pid", path);
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);

        setsid();
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        pid = fork();
        if (pid == 0) {
            const char *idle = getenv("RDN_NICD_IDLE_EXIT");

            if (idle && *idle)
                execlp(bin, "rdn-nicd", "--socket", path, "--pidfile", pidfile,
                       "--idle-exit", idle, (char *)NULL);
            else
                execlp(bin, "rdn-nicd", "--socket", path, "--pidfile", pidfile,
                       (char *)NULL);
            _exit(127);
        }
        if (write(pfd[1], &pid, sizeof(pid)) < 0)
            _exit(1);
        _exit(0);
    }
    close(pfd[1]);
    if (pid > 0) {
        if (read(pfd[0], &daemon_pid, sizeof(daemon_pid)) != sizeof(daemon_pid))
            daemon_pid = -1;
        waitpid(pid, NULL, 0);
    }
    close(pfd[0]);
    return daemon_pid;
}

/* Connects to rdn-nicd at path, starting it if allowed. */
static int sn_nicd_connect(const char *path, int autostart)
{
    int s = sn_sock_connect(path);
    const char *bin;
    pid_t pid;

    if (s >= 0 || !autostart || (s != -ENOENT && s != -ECONNREFUSED))
        return s;
    bin = sn_nicd_binary();
    pid = sn_nicd_spawn(bin, path);
    if (pid < 0)
        return -ECHILD;
    fprintf(stderr, "rdn: started %s (pid %d) on %s\n", bin, (int)pid, path);
    for (int ms = 0; ms < SN_AUTOSTART_WAIT_MS; ms += 10) {
        struct timespec ts = {0, 10000000};

        s = sn_sock_connect(path);
        if (s >= 0)
            return s;
        if (waitpid(pid, NULL, WNOHANG) == pid)
            break; /* not our child normally; harmless if it is */
        nanosleep(&ts, NULL);
    }
    return s;
}

static int sn_daemon_open(const char *name, const struct rnic_open_opts *opts,
                          struct rnic_device **out)
{
    const char *env = getenv("RDN_NICD_AUTOSTART");
    int autostart =
        !(opts && opts->no_autostart) && !(env && !strcmp(env, "0"));
    char path[SN_PATH_MAX];
    struct sn_dtp *d;
    int s;

    if (strcmp(name, "softnic") != 0)
        return -ENODEV;
    sn_sock_path(opts ? opts->socket : NULL, path, sizeof(path));
    s = sn_nicd_connect(path, autostart);
    if (s < 0)
        return rnic_err(s, "rnic_open: cannot reach rdn-nicd at %s (%s)%s",
                        path, strerror(-s),
                        autostart ? "" : "; autostart is off");
    d = calloc(1, sizeof(*d));
    if (!d) {
        close(s);
        return rnic_err(-ENOMEM, "rnic_open: out of memory");
    }
    d->sock = s;
    pthread_mutex_init(&d->lock, NULL);
    d->tp.call = sn_dtp_call;
    d->tp.close = sn_dtp_close;
    d->tp.persistence = 1;
    return sn_client_open(name, &d->tp, opts, out);
}

const struct rnic_provider sn_provider_daemon = {
    .name = "softnic",
    .open = sn_daemon_open,
};
