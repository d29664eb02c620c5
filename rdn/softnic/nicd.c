/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/nicd.c - rdn-nicd, the softnic daemon: owns the engine
 * threads and every NIC object's memory, serves applications on a Unix
 * socket (one session per connection), and frees what an application owned
 * when its connection drops (it exited, crashed or was killed), except the
 * objects it marked persistent.
 *
 * One thread: a poll() loop over the listening socket, the sessions and a
 * signalfd. Control requests are short; the data path never comes here.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rdn/softnic/ctl.h"
#include "rdn/softnic/engine_int.h"
#include "rdn/softnic/roce_int.h"
#include "rdn/softnic/sock.h"

#define NICD_MAX_CLIENTS 1024

struct nicd_opts {
    char socket[SN_PATH_MAX];
    const char *pidfile, *log, *model, *trace;
    const char *listen; /* RoCEv2 endpoint address, NULL: none */
    unsigned mtu;       /* path MTU code offered, 1..5 */
    unsigned threads;
    int cpus[SN_MAX_THREADS];
    unsigned ncpus;
    int strict;
    unsigned spin_us;
    unsigned rc_timeout; /* ACK timeout code of QPs that set none */
    unsigned idle_exit;  /* seconds; 0 = never */
    int status;
};

struct nicd_client {
    int fd;
    pid_t pid;
    struct sn_session *s;
};

static FILE *nicd_logf;

static void nicd_log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void nicd_log(const char *fmt, ...)
{
    char ts[32];
    time_t now = time(NULL);
    va_list ap;

    strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", localtime(&now));
    fprintf(nicd_logf, "%s rdn-nicd[%d]: ", ts, (int)getpid());
    va_start(ap, fmt);
    vfprintf(nicd_logf, fmt, ap);
    va_end(ap);
    fputc('\n', nicd_logf);
    fflush(nicd_logf);
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: rdn-nicd [options]\n"
        "The softnic daemon: a software RDMA NIC that executes mlx5-format "
        "work\n"
        "requests for the applications attached to it "
        "(rnic_open(\"softnic\")).\n"
        "It owns the engine threads and all NIC-shared memory; applications "
        "pass\n"
        "their memfds over the socket, and the data path (doorbells, "
        "completion\n"
        "polling, posting receives) goes through shared memory. When an\n"
        "application dies, its NIC objects are freed except those it marked\n"
        "persistent (rnic_persist), which a restarted process re-attaches to.\n"
        "\n"
        "  -s, --socket PATH   Unix socket to serve (default: "
        "$RDN_NICD_SOCKET,\n"
        "                      else $XDG_RUNTIME_DIR/rdn-nicd.sock, else\n"
        "                      /tmp/rdn-nicd-UID.sock); PATH.lock guards it\n"
        "  -t, --threads N     engine threads, like a NIC's processing units;\n"
        "                      QPs are spread over them round robin (1..%d,\n"
        "                      default 1)\n"
        "  -c, --cpus LIST     pin engine thread i to CPU LIST[i %% n] (e.g. 1 "
        "or\n"
        "                      0,1); default: not pinned\n"
        "  -m, --model NAME    timing model of devices that ask for none: "
        "fast\n"
        "                      (no added delay, default) or cx5 (ConnectX-5 "
        "on\n"
        "                      100 Gb/s IB); RDN_SOFTNIC_TIMING=k=v,... in "
        "the\n"
        "                      application overrides single parameters\n"
        "  -S, --strict N      prefetch window (WQEBBs) of devices that ask "
        "for\n"
        "                      none: send queues snapshot up to N blocks "
        "ahead,\n"
        "                      as hardware prefetches (default 0: just in "
        "time)\n"
        "  -T, --trace FILE    trace every executed WQE of devices that ask "
        "for\n"
        "                      no trace of their own to FILE (see rdn-trace)\n"
        "      --spin-us N     busy-poll this long before an idle engine "
        "thread\n"
        "                      sleeps (default 50); idle threads use no CPU\n"
        "  -p, --pidfile FILE  write the daemon's pid to FILE (removed at "
        "exit)\n"
        "  -l, --log FILE      append log lines to FILE (default: stderr)\n"
        "      --listen ADDR   speak RoCEv2 (RC over UDP) with other hosts on\n"
        "                      ADDR: A.B.C.D[:PORT], X:..:Y or [X:..:Y]:PORT\n"
        "                      (IPv6; port default 4791; default:\n"
        "                      $RDN_NICD_LISTEN, else nowhere: QPs reach\n"
        "                      only QPs of this daemon). 0.0.0.0: every IPv4\n"
        "                      address of the host, each QP speaking from the\n"
        "                      one its application gives it (memcached: the\n"
        "                      one its client connected to). IPv4 needs "
        "CAP_NET_RAW.\n"
        "                      RoCE has no authentication beyond QPN, PSN and\n"
        "                      rkey: anyone who can send to ADDR can forge\n"
        "                      packets, so listen only where told to\n"
        "      --mtu N         path MTU offered to peers: 256, 512, 1024 "
        "(default),\n"
        "                      2048 or 4096; the link must carry it plus 60 "
        "bytes\n"
        "                      (80 over IPv6)\n"
        "      --rc-timeout N  ACK timeout of QPs whose application sets "
        "none:\n"
        "                      4.096 us * 2^N, N 1..31 (default 14: 67 ms, as\n"
        "                      verbs); retries run out after 7 in a row\n"
        "      --idle-exit S   exit after S seconds with no application and "
        "no\n"
        "                      persistent domain (default 0: never)\n"
        "      --status        ask the daemon on the socket what it holds, "
        "print\n"
        "                      it and exit\n"
        "  -h, --help          this text\n"
        "\n"
        "Applications choose the socket with rnic_open_opts.socket or\n"
        "RDN_NICD_SOCKET. rnic_open(\"softnic\") starts rdn-nicd when none "
        "answers\n"
        "(saying so on stderr, passing --idle-exit $RDN_NICD_IDLE_EXIT if "
        "set),\n"
        "unless RDN_NICD_AUTOSTART=0. SIGTERM or SIGINT stops the daemon.\n",
        SN_MAX_THREADS);
}

static int parse_cpus(const char *s, struct nicd_opts *o)
{
    while (*s && o->ncpus < SN_MAX_THREADS) {
        char *end;
        long c = strtol(s, &end, 10);

        if (end == s || c < 0)
            return -1;
        o->cpus[o->ncpus++] = (int)c;
        s = *end == ',' ? end + 1 : end;
    }
    return *s ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct nicd_opts *o)
{
    enum {
        OPT_SPIN = 256,
        OPT_IDLE,
        OPT_STATUS,
        OPT_LISTEN,
        OPT_MTU,
        OPT_RC_TIMEOUT
    };
    static const struct option lo[] = {
        {"socket", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'},
        {"cpus", required_argument, NULL, 'c'},
        {"model", required_argument, NULL, 'm'},
        {"strict", required_argument, NULL, 'S'},
        {"trace", required_argument, NULL, 'T'},
        {"spin-us", required_argument, NULL, OPT_SPIN},
        {"pidfile", required_argument, NULL, 'p'},
        {"log", required_argument, NULL, 'l'},
        {"idle-exit", required_argument, NULL, OPT_IDLE},
        {"status", no_argument, NULL, OPT_STATUS},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"mtu", required_argument, NULL, OPT_MTU},
        {"rc-timeout", required_argument, NULL, OPT_RC_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *sock = NULL;
    int c;

    memset(o, 0, sizeof(*o));
    o->threads = 1;
    o->spin_us = 50;
    o->model = "fast";
    o->mtu = 3;
    o->rc_timeout = 14;
    o->listen = getenv("RDN_NICD_LISTEN");
    if (o->listen && !*o->listen)
        o->listen = NULL;
    while ((c = getopt_long(argc, argv, "s:t:c:m:S:T:p:l:h", lo, NULL)) != -1) {
        switch (c) {
        case 's':
            sock = optarg;
            break;
        case 't':
            o->threads = (unsigned)atoi(optarg);
            break;
        case 'c':
            if (parse_cpus(optarg, o) < 0)
                return -1;
            break;
        case 'm':
            o->model = optarg;
            break;
        case 'S':
            o->strict = atoi(optarg);
            break;
        case 'T':
            o->trace = optarg;
            break;
        case OPT_SPIN:
            o->spin_us = (unsigned)atoi(optarg);
            break;
        case 'p':
            o->pidfile = optarg;
            break;
        case 'l':
            o->log = optarg;
            break;
        case OPT_IDLE:
            o->idle_exit = (unsigned)atoi(optarg);
            break;
        case OPT_STATUS:
            o->status = 1;
            break;
        case OPT_LISTEN:
            o->listen = optarg;
            break;
        case OPT_RC_TIMEOUT:
            o->rc_timeout = (unsigned)atoi(optarg);
            if (o->rc_timeout < 1 || o->rc_timeout > 31)
                return -1;
            break;
        case OPT_MTU:
            o->mtu = rnic_mtu_code((uint32_t)atoi(optarg));
            if (!o->mtu)
                return -1;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -1;
        }
    }
    if (optind != argc || o->threads < 1 || o->threads > SN_MAX_THREADS)
        return -1;
    sn_sock_path(sock, o->socket, sizeof(o->socket));
    return 0;
}

/* --status: one STATS request as a client. */
static int print_status(const char *path)
{
    struct sn_ctl_req req = {.op = SN_CTL_STATS};
    struct sn_ctl_resp resp;
    int s = sn_sock_connect(path), fd;

    if (s < 0) {
        fprintf(stderr, "rdn-nicd: no daemon on %s: %s\n", path, strerror(-s));
        return 1;
    }
    if (sn_sock_send(s, &req, sizeof(req), -1) < 0 ||
        sn_sock_recv(s, &resp, sizeof(resp), &fd) != (int)sizeof(resp)) {
        fprintf(stderr, "rdn-nicd: %s: no answer\n", path);
        close(s);
        return 1;
    }
    if (fd >= 0)
        close(fd);
    close(s);
    printf("devices %u orphans %u mems %u mrs %u cqs %u qps %u\n",
           resp.u.stats.devices, resp.u.stats.orphans, resp.u.stats.mems,
           resp.u.stats.mrs, resp.u.stats.cqs, resp.u.stats.qps);
    printf("roce tx %llu rx %llu retrans %llu timeouts %llu seq_naks_rx %llu "
           "seq_naks_tx %llu rnr_naks_rx %llu rnr_naks_tx %llu dups_rx %llu "
           "errors %llu drops %llu bad_drops %llu credit_waits %llu "
           "raw_in %llu\n",
           (unsigned long long)resp.u.stats.roce_tx,
           (unsigned long long)resp.u.stats.roce_rx,
           (unsigned long long)resp.u.stats.retrans,
           (unsigned long long)resp.u.stats.timeouts,
           (unsigned long long)resp.u.stats.seq_naks_rx,
           (unsigned long long)resp.u.stats.seq_naks_tx,
           (unsigned long long)resp.u.stats.rnr_naks_rx,
           (unsigned long long)resp.u.stats.rnr_naks_tx,
           (unsigned long long)resp.u.stats.dups_rx,
           (unsigned long long)resp.u.stats.roce_errors,
           (unsigned long long)resp.u.stats.drops,
           (unsigned long long)resp.u.stats.bad_drops,
           (unsigned long long)resp.u.stats.credit_waits,
           (unsigned long long)resp.u.stats.raw_in);
    return 0;
}

/*
 * Takes PATH.lock (one daemon per socket), removes a stale socket file and
 * listens. Returns the listening socket or -1.
 */
static int nicd_listen(const char *path, int *lock_fd)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    char lock[SN_PATH_MAX + 8];
    int s;

    snprintf(lock, sizeof(lock), "%s.lock", path);
    *lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (*lock_fd < 0 || flock(*lock_fd, LOCK_EX | LOCK_NB) < 0) {
        nicd_log("another rdn-nicd serves %s (or %s is unusable)", path, lock);
        return -1;
    }
    if (strlen(path) >= sizeof(a.sun_path)) {
        nicd_log("socket path too long: %s", path);
        return -1;
    }
    strcpy(a.sun_path, path);
    unlink(path);
    s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(s, 64) < 0) {
        nicd_log("cannot listen on %s: %s", path, strerror(errno));
        return -1;
    }
    return s;
}

static void write_pidfile(const char *path)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        nicd_log("cannot write pidfile %s: %s", path, strerror(errno));
        return;
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
}

static void client_accept(struct sn_engine *e, int ls, struct nicd_client *c,
                          size_t *n)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);

    if (fd < 0)
        return;
    if (*n == NICD_MAX_CLIENTS) {
        nicd_log("too many applications; refusing one");
        close(fd);
        return;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        cred.pid = 0;
    c[*n].fd = fd;
    c[*n].pid = cred.pid;
    c[*n].s = sn_session_new(e, cred.pid);
    if (!c[*n].s) {
        close(fd);
        return;
    }
    nicd_log("application pid %d attached", (int)cred.pid);
    (*n)++;
}

/* Serves one request; returns -1 when the application went away. */
static int client_serve(struct nicd_client *c)
{
    struct sn_ctl_req req;
    struct sn_ctl_resp resp;
    int fd_in, fd_out, rc;

    rc = sn_sock_recv(c->fd, &req, sizeof(req), &fd_in);
    if (rc <= 0)
        return -1;
    sn_ctl_handle(c->s, &req, fd_in, &resp, &fd_out);
    if (fd_in >= 0)
        close(fd_in);
    rc = sn_sock_send(c->fd, &resp, sizeof(resp), fd_out);
    if (fd_out >= 0)
        close(fd_out);
    return rc < 0 ? -1 : 0;
}

static void client_drop(struct nicd_client *c, size_t i, size_t *n)
{
    sn_session_end(c[i].s);
    close(c[i].fd);
    nicd_log("application pid %d detached; its objects freed (persistent "
             "ones kept)",
             (int)c[i].pid);
    c[i] = c[--*n];
}

static int nicd_signalfd(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &set, SFD_CLOEXEC);
}

/* The poll loop; returns when signalled or idle for idle_exit seconds. */
static void nicd_serve(struct sn_engine *e, int ls, int sfd, unsigned idle_exit)
{
    static struct nicd_client c[NICD_MAX_CLIENTS];
    static struct pollfd p[NICD_MAX_CLIENTS + 2];
    time_t idle_since = time(NULL);
    size_t n = 0;

    for (;;) {
        int r;

        p[0] = (struct pollfd){.fd = ls, .events = POLLIN};
        p[1] = (struct pollfd){.fd = sfd, .events = POLLIN};
        for (size_t i = 0; i < n; i++)
            p[i + 2] = (struct pollfd){.fd = c[i].fd, .events = POLLIN};
        r = poll(p, n + 2, idle_exit ? 1000 : -1);
        if (r < 0 && errno != EINTR)
            break;
        if (p[1].revents)
            break;
        for (size_t i = n; i-- > 0;)
            if (p[i + 2].revents && client_serve(&c[i]) < 0)
                client_drop(c, i, &n);
        if (p[0].revents & POLLIN)
            client_accept(e, ls, c, &n);
        if (n || sn_engine_has_devices(e))
            idle_since = time(NULL);
        else if (idle_exit && time(NULL) - idle_since >= (time_t)idle_exit) {
            nicd_log("idle for %u s: exiting", idle_exit);
            break;
        }
    }
    while (n)
        client_drop(c, n - 1, &n);
    sn_engine_drop_domains(e);
}

int main(int argc, char **argv)
{
    struct nicd_opts o;
    struct sn_engine_opts eo = {0};
    struct sn_engine *e;
    int ls, sfd, lock_fd = -1, rc;

    nicd_logf = stderr;
    if (parse_args(argc, argv, &o) < 0) {
        usage(stderr);
        return 2;
    }
    if (o.status)
        return print_status(o.socket);
    if (o.log && !(nicd_logf = fopen(o.log, "a"))) {
        fprintf(stderr, "rdn-nicd: %s: %s\n", o.log, strerror(errno));
        return 1;
    }
    sfd = nicd_signalfd();
    ls = nicd_listen(o.socket, &lock_fd);
    if (ls < 0 || sfd < 0)
        return 1;
    eo.threads = o.threads;
    eo.cpus = o.cpus;
    eo.ncpus = o.ncpus;
    eo.spin_ns = o.spin_us * 1000u;
    rc = sn_engine_create(&eo, &e);
    if (rc == 0 && (rc = sn_engine_defaults(e, o.model, o.strict, o.trace)))
        sn_engine_destroy(e);
    if (rc) {
        nicd_log("cannot start the engine (model %s, trace %s): %s", o.model,
                 o.trace ? o.trace : "none", strerror(-rc));
        unlink(o.socket);
        return 1;
    }
    if (o.listen) {
        char err[200];

        rc = sn_roce_listen(e, o.listen, (uint8_t)o.mtu, (uint8_t)o.rc_timeout,
                            err, sizeof(err));
        if (rc) {
            nicd_log("cannot listen for RoCE: %s", err);
            sn_engine_destroy(e);
            unlink(o.socket);
            return 1;
        }
        nicd_log("RoCEv2 on %s, path MTU %u; no authentication beyond QPN, "
                 "PSN and rkey",
                 o.listen, rnic_mtu_bytes((uint8_t)o.mtu));
    }
    if (o.pidfile)
        write_pidfile(o.pidfile);
    nicd_log("serving %s: %u engine thread(s), model %s, strict %d", o.socket,
             o.threads, o.model, o.strict);
    nicd_serve(e, ls, sfd, o.idle_exit);
    close(ls);
    unlink(o.socket);
    sn_roce_close(e);
    sn_engine_destroy(e);
    if (o.pidfile)
        unlink(o.pidfile);
    nicd_log("stopped");
    return 0;
}
