/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/rdn-pingpong.c - rdma-core's ibv_rc_pingpong, spoken by a
 * softnic QP: the same out-of-band exchange (TCP, port 18515, one
 * "LID:QPN:PSN:GID" line each way, then "done" from the client) and the
 * same traffic (RC SENDs of -s bytes, each side sending one message after
 * it received one, -n times), so the stock ibv_rc_pingpong on a real RDMA
 * stack (e.g. Linux rxe) can run against softnic as client or server.
 *
 * The softnic side's GID is its rdn-nicd's RoCE address (rdn-nicd
 * --listen), so -g is accepted for the stock tool's command line and
 * ignored; RDN_NICD_SOCKET chooses the daemon.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/mlx5.h"
#include "rdn/rnic/rnic.h"

/* "LID:QPN:PSN:GID" and its NUL, as ibv_rc_pingpong sends it. */
#define PP_MSG_LEN                                                             \
    (sizeof "0000:000000:000000:00000000000000000000000000000000")

struct pp_opts {
    const char *host; /* NULL: server */
    int port;
    uint32_t size;
    unsigned iters, rx_depth;
    uint8_t mtu;
    const char *device;
};

struct pp {
    struct rnic_device *dev;
    struct rnic_cq *cq;
    struct rnic_qp *qp;
    struct rnic_mr *mr;
    struct rnic_sq sq;
    uint8_t *buf;
    uint32_t pi;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rdn-pingpong [options]          start a server, wait for "
            "a client\n"
            "       rdn-pingpong [options] HOST     connect to the server at "
            "HOST\n"
            "ibv_rc_pingpong's exchange and traffic on a softnic QP (its "
            "rdn-nicd must\n"
            "--listen for RoCE; RDN_NICD_SOCKET chooses the daemon).\n"
            "  -p, --port N       TCP port of the exchange (default 18515)\n"
            "  -s, --size N       message size (default 4096)\n"
            "  -n, --iters N      exchanges (default 1000)\n"
            "  -r, --rx-depth N   receives posted (default 500)\n"
            "  -m, --mtu N        path MTU 256..4096 (default 1024)\n"
            "  -g, --gid-idx N    accepted and ignored: the GID is the "
            "daemon's\n"
            "  -d, --ib-dev NAME  rnic device (default softnic)\n");
}

static int parse(int argc, char **argv, struct pp_opts *o)
{
    static const struct option lo[] = {
        {"port", required_argument, NULL, 'p'},
        {"size", required_argument, NULL, 's'},
        {"iters", required_argument, NULL, 'n'},
        {"rx-depth", required_argument, NULL, 'r'},
        {"mtu", required_argument, NULL, 'm'},
        {"gid-idx", required_argument, NULL, 'g'},
        {"ib-dev", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned mtu = 1024;
    int c;

    *o = (struct pp_opts){.port = 18515,
                          .size = 4096,
                          .iters = 1000,
                          .rx_depth = 500,
                          .device = "softnic"};
    while ((c = getopt_long(argc, argv, "p:s:n:r:m:g:d:h", lo, NULL)) != -1) {
        switch (c) {
        case 'p':
            o->port = atoi(optarg);
            break;
        case 's':
            o->size = (uint32_t)strtoul(optarg, NULL, 0);
            break;
        case 'n':
            o->iters = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'r':
            o->rx_depth = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'm':
            mtu = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'g':
            break;
        case 'd':
            o->device = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -1;
        }
    }
    for (o->mtu = RNIC_MTU_256;
         o->mtu <= RNIC_MTU_4096 && rnic_mtu_bytes(o->mtu) != mtu; o->mtu++)
        ;
    if (o->mtu > RNIC_MTU_4096 || o->size == 0 || o->rx_depth < 2 ||
        o->rx_depth > 4096 || optind + 1 < argc)
        return -1;
    o->host = optind < argc ? argv[optind] : NULL;
    return 0;
}

/* ---- the exchange ------------------------------------------------------- */

static void pp_format(const struct rnic_addr *a, char *msg)
{
    char gid[33];

    for (int i = 0; i < 16; i++)
        sprintf(gid + 2 * i, "%02x", a->gid[i]);
    snprintf(msg, PP_MSG_LEN, "%04x:%06x:%06x:%s", 0,
             be32_to_cpu(a->qpn) & 0xffffff, be32_to_cpu(a->psn) & 0xffffff,
             gid);
}

/* The peer's line as an rnic_addr; -EINVAL when malformed. */
static int pp_parse(const char *msg, uint8_t mtu, struct rnic_addr *a)
{
    unsigned lid, qpn, psn;
    char gid[33];

    if (sscanf(msg, "%x:%x:%x:%32s", &lid, &qpn, &psn, gid) != 4 ||
        strlen(gid) != 32)
        return -EINVAL;
    memset(a, 0, sizeof(*a));
    for (int i = 0; i < 16; i++) {
        unsigned b;

        if (sscanf(gid + 2 * i, "%2x", &b) != 1)
            return -EINVAL;
        a->gid[i] = (uint8_t)b;
    }
    a->qpn = cpu_to_be32(qpn & 0xffffff);
    a->psn = cpu_to_be32(psn & 0xffffff);
    a->mtu = mtu;
    a->flags = RNIC_ADDR_GID;
    return 0;
}

static int pp_read_full(int fd, char *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);

        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* The exchange's TCP connection over family (a server: its one client). */
static int pp_tcp_family(const struct pp_opts *o, int family)
{
    struct addrinfo hints = {.ai_family = family,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = o->host ? 0 : AI_PASSIVE};
    struct addrinfo *res, *t;
    char service[16];
    int fd = -1, one = 1, zero = 0;

    snprintf(service, sizeof(service), "%d", o->port);
    if (getaddrinfo(o->host, service, &hints, &res) != 0)
        return -1;
    for (t = res; t && fd < 0; t = t->ai_next) {
        fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
        if (fd < 0)
            continue;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (t->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        if (o->host ? connect(fd, t->ai_addr, t->ai_addrlen) == 0
                    : bind(fd, t->ai_addr, t->ai_addrlen) == 0 &&
                          listen(fd, 1) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0 && !o->host) {
        int c = accept(fd, NULL, NULL);

        close(fd);
        fd = c;
    }
    return fd;
}

/*
 * A client connects to whatever its host resolves to; a server listens on
 * :: (IPv4 clients too, mapped), or on 0.0.0.0 where IPv6 is off, so it
 * serves a client over either family.
 */
static int pp_tcp(const struct pp_opts *o)
{
    int fd;

    if (o->host)
        return pp_tcp_family(o, AF_UNSPEC);
    fd = pp_tcp_family(o, AF_INET6);
    return fd >= 0 ? fd : pp_tcp_family(o, AF_INET);
}

/* Exchanges addresses as ibv_rc_pingpong does and connects the QP. */
static int pp_exchange(struct pp *pp, const struct pp_opts *o)
{
    char mine[PP_MSG_LEN], theirs[PP_MSG_LEN];
    struct rnic_addr me, peer;
    int fd = pp_tcp(o), rc = -1;

    if (fd < 0) {
        fprintf(stderr, "rdn-pingpong: no connection on port %d\n", o->port);
        return -1;
    }
    if (rnic_qp_addr(pp->qp, &me) < 0)
        goto close_fd;
    pp_format(&me, mine);
    if (o->host) {
        if (write(fd, mine, sizeof(mine)) != (ssize_t)sizeof(mine) ||
            pp_read_full(fd, theirs, sizeof(theirs)) < 0 ||
            pp_parse(theirs, o->mtu, &peer) < 0 ||
            rnic_connect(pp->qp, &peer) < 0 ||
            write(fd, "done", sizeof("done")) != (ssize_t)sizeof("done"))
            goto close_fd;
    } else {
        char done[PP_MSG_LEN];

        if (pp_read_full(fd, theirs, sizeof(theirs)) < 0 ||
            pp_parse(theirs, o->mtu, &peer) < 0 ||
            rnic_connect(pp->qp, &peer) < 0 ||
            write(fd, mine, sizeof(mine)) != (ssize_t)sizeof(mine) ||
            read(fd, done, sizeof(done)) <= 0)
            goto close_fd;
    }
    printf("  local address:  %s\n  remote address: %s\n", mine, theirs);
    rc = 0;
close_fd:
    if (rc)
        fprintf(stderr, "rdn-pingpong: exchange failed: %s\n", rnic_errmsg());
    close(fd);
    return rc;
}

/* ---- traffic ------------------------------------------------------------ */

static int pp_post_recv(struct pp *pp, uint32_t size)
{
    struct rnic_sge sge = {(uintptr_t)pp->buf, size, pp->mr->lkey};

    return rnic_post_recv(pp->qp, &sge, 1, 1);
}

static void pp_post_send(struct pp *pp, uint32_t size)
{
    uint8_t *w = pp->sq.buf + (size_t)(pp->pi % pp->sq.wqebb_cnt) * 64;
    struct mlx5_ctrl_seg *c = (struct mlx5_ctrl_seg *)w;
    struct mlx5_data_seg *d = (struct mlx5_data_seg *)(w + 16);

    memset(w, 0, 64);
    c->opmod_idx_opcode =
        cpu_to_be32(mlx5_ctrl_word0(0, (uint16_t)pp->pi, MLX5_OPCODE_SEND));
    c->qpn_ds = cpu_to_be32(mlx5_ctrl_word1(rnic_qp_num(pp->qp), 2));
    c->fm_ce_se = MLX5_WQE_CTRL_CQ_UPDATE;
    d->byte_count = cpu_to_be32(size);
    d->lkey = cpu_to_be32(pp->mr->lkey);
    d->addr = cpu_to_be64((uintptr_t)pp->buf);
    rnic_ring_doorbell(pp->qp, ++pp->pi);
}

/* ibv_rc_pingpong's loop: send one after each receive (client first). */
static int pp_run(struct pp *pp, const struct pp_opts *o)
{
    enum { RECV = 1, SEND = 2 };
    unsigned scnt = 0, rcnt = 0, pending = RECV;
    struct timespec t0, t1;
    double secs;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (o->host) {
        pp_post_send(pp, o->size);
        pending |= SEND;
    }
    while (rcnt < o->iters || scnt < o->iters) {
        struct rnic_wc wc[16];
        int n = rnic_poll_cq(pp->cq, 16, wc);

        if (n < 0)
            return -1;
        for (int i = 0; i < n; i++) {
            if (wc[i].status != RNIC_WC_SUCCESS) {
                fprintf(stderr, "rdn-pingpong: completion %s\n",
                        rnic_wc_status_str(wc[i].status));
                return -1;
            }
            if (wc[i].opcode == RNIC_WC_RECV) {
                rcnt++;
                pending &= ~RECV;
                if (pp_post_recv(pp, o->size) < 0)
                    return -1;
            } else {
                scnt++;
                pending &= ~SEND;
            }
            if (scnt < o->iters && !pending) {
                pp_post_send(pp, o->size);
                pending = RECV | SEND;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%llu bytes in %.2f seconds = %.2f Mbit/sec\n",
           (unsigned long long)o->size * o->iters * 2, secs,
           (double)o->size * o->iters * 2 * 8 / secs / 1e6);
    printf("%u iters in %.2f seconds = %.2f usec/iter\n", o->iters, secs,
           secs * 1e6 / o->iters);
    return 0;
}

static uint32_t pp_pow2(uint32_t n)
{
    uint32_t p = 1;

    while (p < n)
        p <<= 1;
    return p;
}

int main(int argc, char **argv)
{
    struct pp_opts o;
    struct pp pp = {0};
    void *mem;
    int rc = 1;

    if (parse(argc, argv, &o) < 0) {
        usage(stderr);
        return 2;
    }
    if (rnic_open(o.device, NULL, &pp.dev) < 0) {
        fprintf(stderr, "rdn-pingpong: %s\n", rnic_errmsg());
        return 1;
    }
    struct rnic_qp_init_attr a = {
        .sq_wqebb = 64,
        .rq_wqe = pp_pow2(o.rx_depth),
        .max_recv_sge = 1,
        .rc = {.timeout = 14,
               .retry_cnt = 7,
               .rnr_retry = 7,
               .min_rnr_timer = 12,
               .set = 1},
    };
    if (rnic_mem_alloc(pp.dev, o.size, &mem) < 0 ||
        rnic_reg_mr(pp.dev, mem, o.size, RNIC_ACCESS_LOCAL_WRITE, &pp.mr) < 0 ||
        rnic_create_cq(pp.dev, 2 * pp_pow2(o.rx_depth), &pp.cq) < 0)
        goto fail;
    pp.buf = mem;
    memset(pp.buf, 0x7b, o.size);
    a.send_cq = a.recv_cq = pp.cq;
    if (rnic_create_qp(pp.dev, &a, &pp.qp) < 0 || rnic_qp_sq(pp.qp, &pp.sq) < 0)
        goto fail;
    for (unsigned i = 0; i < o.rx_depth; i++)
        if (pp_post_recv(&pp, o.size) < 0)
            goto fail;
    if (pp_exchange(&pp, &o) == 0 && pp_run(&pp, &o) == 0)
        rc = 0;
    goto close_dev;
fail:
    fprintf(stderr, "rdn-pingpong: %s\n", rnic_errmsg());
close_dev:
    rnic_close(pp.dev);
    return rc;
}
