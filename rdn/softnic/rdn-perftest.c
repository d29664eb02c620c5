/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/rdn-perftest.c - the peer of perftest's latency tests
 * (ib_send_lat, ib_write_lat, ib_read_lat, ib_atomic_lat, RC, one QP)
 * on an rnic QP, so the stock tools on a real RDMA stack (e.g. Linux rxe)
 * can measure against softnic, as client or server.
 *
 * perftest 5.70 and later (Debian 12's perftest 4.5-0.17 is 6.06) talk
 * over TCP (port 18515) before any RDMA, every message of a fixed size,
 * the client writing first and the server answering:
 *   version   16 bytes, a NUL-padded string ("6.06"), refused below 5.70
 *   sys data  two 4-byte big-endian ints: cycle buffer, cache line size
 *   MTU       2 bytes: the enum ibv_mtu digit and a NUL; both use the
 *             smaller
 *   keys      108 bytes, "LID:OUT_READS:QPN:PSN:RKEY:VADDR:G0:..:G15:SRQN:"
 *             in hex, padded with a NUL; four times before the traffic
 * then the traffic, then (send, read, atomic) one more key exchange and a
 * "done" from each side; ib_write_lat has no closing exchange. The read
 * and atomic servers are passive: their NIC answers the client's
 * requests, they wait for that last exchange.
 *
 * Traffic, iteration k = 1..n:
 *   send    the client SENDs -s bytes, the server answers with a SEND
 *   write   each side WRITEs -s bytes into the other's buffer with its
 *           last byte set to (char)k and spins until its own buffer's last
 *           byte shows k; the server writes first
 *   read    the client READs -s bytes of the server's buffer
 *   atomic  the client's FETCH_AND_ADD of 1 (or CMP_AND_SWAP) on the
 *           server's first 8 bytes
 * and this peer checks what it can: receive lengths, the zero bytes
 * ib_write_lat writes before its counter, READs that all return the same
 * bytes, fetched values that count up one by one, and as a server the
 * target word left at exactly n additions.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/barrier.h"
#include "proto/mlx5.h"
#include "rdn/rnic/rnic.h"
#include "rdn/softnic/oob.h"

#define PT_VERSION      "6.06" /* the exchange spoken: perftest 6.x */
#define PT_VERSION_LEN  16     /* perftest's MAX_VERSION */
#define PT_MIN_VERSION  5.70   /* older perftest exchanges differ */
#define PT_KEY_LEN      108    /* perftest's KEY_MSG_SIZE_GID */
#define PT_KEY_BUF      160    /* room for fields wider than their width */
#define PT_MTU_LEN      2      /* one digit and its NUL */
#define PT_CYCLE_BUFFER 4096   /* what we tell of our page size */
#define PT_CACHE_LINE   64
#define PT_OUT_READS    1 /* one READ or atomic in flight: latency tests */
#define PT_RX_DEPTH     64
#define PT_EXIT_NOCONN  3 /* the server did not accept (not listening yet) */

enum pt_test { PT_SEND, PT_WRITE, PT_READ, PT_ATOMIC };

static const char *const pt_names[] = {"send", "write", "read", "atomic"};

struct pt_opts {
    const char *host; /* NULL: server */
    int port;
    enum pt_test test;
    uint32_t size;
    unsigned iters;
    uint8_t mtu; /* offered; the exchange settles on the smaller */
    int cas;     /* atomic: CMP_AND_SWAP instead of FETCH_AND_ADD */
    unsigned timeout_s;
    const char *device;
};

/* One key message: what perftest calls a pingpong_dest. */
struct pt_dest {
    unsigned lid, out_reads, qpn, psn, rkey, srqn;
    unsigned long long vaddr;
    uint8_t gid[16];
};

struct pt {
    const struct pt_opts *o;
    struct rnic_device *dev;
    struct rnic_cq *cq;
    struct rnic_qp *qp;
    struct rnic_mr *mr;
    uint8_t *buf;  /* what we send, or where READs and atomics land */
    uint8_t *rbuf; /* what the peer writes, reads and adds to */
    uint8_t *ref;  /* the first READ's bytes */
    size_t half;
    int fd;
    uint8_t mtu;   /* negotiated */
    be16 udp_port; /* our RoCE endpoint's */
    struct pt_dest me, peer;
    unsigned sends, recvs; /* completions seen */
    double *lat;           /* per iteration, us */
    struct timespec deadline;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rdn-perftest -t TEST [options]        server: wait for "
            "the stock client\n"
            "       rdn-perftest -t TEST [options] HOST   client of the stock "
            "server at HOST\n"
            "perftest's latency tests on an rnic QP: TEST is send, write, "
            "read or atomic\n"
            "(the peer of ib_send_lat, ib_write_lat, ib_read_lat, "
            "ib_atomic_lat). Give both\n"
            "sides the same -s and -n. softnic needs an rdn-nicd started "
            "with --listen\n"
            "for RoCE; RDN_NICD_SOCKET chooses it.\n"
            "  -t, --test TEST       send, write, read or atomic\n"
            "  -p, --port N          TCP port of the exchange (default "
            "18515)\n"
            "  -s, --size N          message size (default 2; atomic: 8)\n"
            "  -n, --iters N         iterations (default 1000)\n"
            "  -m, --mtu N           path MTU offered, 256..4096 (default "
            "1024)\n"
            "  -A, --atomic_type T   FETCH_AND_ADD (default) or "
            "CMP_AND_SWAP\n"
            "  -T, --timeout S       bound on each read of the exchange and "
            "on the traffic\n"
            "                        (seconds, default 60)\n"
            "  -x, --gid-index N     accepted and ignored: the GID is the "
            "device's\n"
            "  -d, --ib-dev NAME     rnic device (default softnic)\n"
            "Exit status: 0 done and checked, 1 failed, 2 usage, 3 the server "
            "at HOST\n"
            "refused the connection (not listening yet).\n");
}

static int parse_test(const char *s, enum pt_test *t)
{
    for (unsigned i = 0; i < sizeof(pt_names) / sizeof(pt_names[0]); i++)
        if (strcmp(s, pt_names[i]) == 0) {
            *t = (enum pt_test)i;
            return 0;
        }
    return -1;
}

static int parse(int argc, char **argv, struct pt_opts *o)
{
    static const struct option lo[] = {
        {"test", required_argument, NULL, 't'},
        {"port", required_argument, NULL, 'p'},
        {"size", required_argument, NULL, 's'},
        {"iters", required_argument, NULL, 'n'},
        {"mtu", required_argument, NULL, 'm'},
        {"atomic_type", required_argument, NULL, 'A'},
        {"timeout", required_argument, NULL, 'T'},
        {"gid-index", required_argument, NULL, 'x'},
        {"ib-dev", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned mtu = 1024;
    int c, have_test = 0, have_size = 0;

    *o = (struct pt_opts){.port = 18515,
                          .size = 2,
                          .iters = 1000,
                          .timeout_s = 60,
                          .device = "softnic"};
    while ((c = getopt_long(argc, argv, "t:p:s:n:m:A:T:x:d:h", lo, NULL)) !=
           -1) {
        switch (c) {
        case 't':
            if (parse_test(optarg, &o->test) < 0)
                return -1;
            have_test = 1;
            break;
        case 'p':
            o->port = atoi(optarg);
            break;
        case 's':
            o->size = (uint32_t)strtoul(optarg, NULL, 0);
            have_size = 1;
            break;
        case 'n':
            o->iters = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'm':
            mtu = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'A':
            if (strcmp(optarg, "CMP_AND_SWAP") == 0)
                o->cas = 1;
            else if (strcmp(optarg, "FETCH_AND_ADD") != 0)
                return -1;
            break;
        case 'T':
            o->timeout_s = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'x':
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
    o->mtu = rnic_mtu_code(mtu);
    if (o->test == PT_ATOMIC) {
        if (have_size && o->size != 8)
            return -1;
        o->size = 8;
    }
    if (!have_test || !o->mtu || o->size == 0 || o->size > (1u << 30) ||
        o->iters == 0 || o->iters > 10000000 || o->timeout_s == 0 ||
        o->port <= 0 || o->port > 65535 || optind + 1 < argc)
        return -1;
    o->host = optind < argc ? argv[optind] : NULL;
    return 0;
}

/* ---- the exchange ------------------------------------------------------- */

/* One message each way: the client writes first, the server answers. */
static int pt_xchg(struct pt *pt, const void *mine, void *theirs, size_t n)
{
    int rc;

    if (pt->o->host) {
        rc = oob_write_full(pt->fd, mine, n);
        return rc ? rc : oob_read_full(pt->fd, theirs, n);
    }
    rc = oob_read_full(pt->fd, theirs, n);
    return rc ? rc : oob_write_full(pt->fd, mine, n);
}

static void pt_format(const struct pt_dest *d, char *msg)
{
    int n =
        snprintf(msg, PT_KEY_BUF, "%04x:%04x:%06x:%06x:%08x:%016llx:", d->lid,
                 d->out_reads, d->qpn, d->psn, d->rkey, d->vaddr);

    for (int i = 0; i < 16; i++)
        n += snprintf(msg + n, PT_KEY_BUF - (size_t)n, "%02x:", d->gid[i]);
    snprintf(msg + n, PT_KEY_BUF - (size_t)n, "%08x:", d->srqn);
}

/*
 * Reads one field of 1..width hex digits ending in ':' at *p (a string)
 * and moves *p past the colon.
 */
static int pt_field(const char **p, unsigned width, unsigned long long *v)
{
    size_t n = strspn(*p, "0123456789abcdefABCDEF");

    if (n == 0 || n > width || (*p)[n] != ':')
        return -1;
    *v = strtoull(*p, NULL, 16);
    *p += n + 1;
    return 0;
}

/* The peer's key message; -EPROTO when it is not one. */
static int pt_parse(const char *msg, struct pt_dest *d)
{
    static const unsigned widths[] = {4, 4, 6, 6, 8, 16};
    unsigned long long v[6], b;
    const char *p = msg;

    if (!memchr(msg, '\0', PT_KEY_LEN))
        return -EPROTO;
    for (unsigned i = 0; i < 6; i++)
        if (pt_field(&p, widths[i], &v[i]) < 0)
            return -EPROTO;
    for (unsigned i = 0; i < 16; i++) {
        if (pt_field(&p, 2, &b) < 0)
            return -EPROTO;
        d->gid[i] = (uint8_t)b;
    }
    if (pt_field(&p, 8, &b) < 0)
        return -EPROTO;
    d->lid = (unsigned)v[0];
    d->out_reads = (unsigned)v[1];
    d->qpn = (unsigned)v[2] & 0xffffff;
    d->psn = (unsigned)v[3] & 0xffffff;
    d->rkey = (unsigned)v[4];
    d->vaddr = v[5];
    d->srqn = (unsigned)b;
    return 0;
}

static int pt_keys(struct pt *pt)
{
    char mine[PT_KEY_BUF] = {0}, theirs[PT_KEY_LEN];
    int rc;

    pt_format(&pt->me, mine);
    rc = pt_xchg(pt, mine, theirs, PT_KEY_LEN);
    return rc ? rc : pt_parse(theirs, &pt->peer);
}

/* Version, system data and MTU: what perftest exchanges before the keys. */
static int pt_preamble(struct pt *pt)
{
    char mine[PT_VERSION_LEN] = PT_VERSION, theirs[PT_VERSION_LEN + 1] = {0};
    char mtu_mine[PT_MTU_LEN + 1], mtu_theirs[PT_MTU_LEN + 1] = {0};
    be32 sys_mine[2] = {cpu_to_be32(PT_CYCLE_BUFFER),
                        cpu_to_be32(PT_CACHE_LINE)};
    be32 sys_theirs[2];
    long peer_mtu;
    int rc;

    rc = pt_xchg(pt, mine, theirs, PT_VERSION_LEN);
    if (rc)
        return rc;
    if (!(strtod(theirs, NULL) >= PT_MIN_VERSION)) {
        fprintf(stderr,
                "rdn-perftest: the peer is perftest \"%s\": versions before "
                "5.70 exchange differently\n",
                theirs);
        return -EPROTO;
    }
    for (int i = 0; i < 2; i++) {
        rc = pt_xchg(pt, &sys_mine[i], &sys_theirs[i], sizeof(be32));
        if (rc)
            return rc;
    }
    mtu_mine[0] = (char)('0' + pt->o->mtu); /* 1..5 */
    mtu_mine[1] = '\0';
    rc = pt_xchg(pt, mtu_mine, mtu_theirs, PT_MTU_LEN);
    if (rc)
        return rc;
    peer_mtu = strtol(mtu_theirs, NULL, 10);
    pt->mtu = peer_mtu >= RNIC_MTU_256 && peer_mtu < pt->o->mtu
                  ? (uint8_t)peer_mtu
                  : pt->o->mtu;
    printf(" peer: perftest %s, path MTU %u\n", theirs,
           rnic_mtu_bytes(pt->mtu));
    return 0;
}

/*
 * perftest's exchange has no UDP port: a peer is at RoCEv2's 4791, except
 * one with our own GID, which is on our own endpoint (whatever its port).
 */
static int pt_connect(struct pt *pt)
{
    struct rnic_addr a = {.qpn = cpu_to_be32(pt->peer.qpn),
                          .psn = cpu_to_be32(pt->peer.psn),
                          .mtu = pt->mtu,
                          .flags = RNIC_ADDR_GID};

    memcpy(a.gid, pt->peer.gid, sizeof(a.gid));
    if (memcmp(pt->peer.gid, pt->me.gid, sizeof(a.gid)) == 0)
        a.udp_port = pt->udp_port;
    return rnic_connect(pt->qp, &a);
}

static void pt_print_dest(const char *who, const struct pt_dest *d)
{
    printf(" %s address: QPN %#08x PSN %#08x RKey %#010x VAddr %#018llx GID",
           who, d->qpn, d->psn, d->rkey, d->vaddr);
    for (int i = 0; i < 16; i++)
        printf("%c%02x", i ? ':' : ' ', d->gid[i]);
    printf("\n");
}

/* From the TCP connection to an RTS QP, with the peer's buffer known. */
static int pt_setup(struct pt *pt)
{
    struct timeval tv = {.tv_sec = (time_t)pt->o->timeout_s};
    int rc;

    setsockopt(pt->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    rc = pt_preamble(pt);
    if (rc)
        return rc;
    /* Four key exchanges: before and after the QPs connect and move to
     * RTR, as every latency test of perftest has them. */
    rc = pt_keys(pt);
    if (rc)
        return rc;
    rc = pt_connect(pt);
    if (rc) {
        fprintf(stderr, "rdn-perftest: connect: %s\n", rnic_errmsg());
        return rc;
    }
    for (int i = 0; i < 3; i++) {
        rc = pt_keys(pt);
        if (rc)
            return rc;
    }
    pt_print_dest("local ", &pt->me);
    pt_print_dest("remote", &pt->peer);
    return 0;
}

/* The closing exchange of send, read and atomic: keys, then "done". */
static int pt_close(struct pt *pt)
{
    char done[sizeof("done")];
    int rc = pt_keys(pt);

    if (rc)
        return rc;
    /* The peer writes its "done" and closes: either may come first. */
    rc = oob_write_full(pt->fd, "done", sizeof("done"));
    if (rc == 0 || rc == -EPIPE || rc == -ECONNRESET)
        rc = oob_read_full(pt->fd, done, sizeof(done));
    return rc == -EPIPE || rc == -ECONNRESET ? 0 : rc;
}

/* ---- traffic ------------------------------------------------------------ */

static int pt_expired(const struct pt *pt)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > pt->deadline.tv_sec ||
           (now.tv_sec == pt->deadline.tv_sec &&
            now.tv_nsec > pt->deadline.tv_nsec);
}

static void pt_arm(struct pt *pt)
{
    clock_gettime(CLOCK_MONOTONIC, &pt->deadline);
    pt->deadline.tv_sec += (time_t)pt->o->timeout_s;
}

static int pt_post_recv(struct pt *pt)
{
    struct rnic_sge sge = {(uintptr_t)pt->rbuf, pt->o->size, pt->mr->lkey};

    return rnic_post_recv(pt->qp, &sge, 1, 0);
}

/* Takes the completions there are: counts them, reposts receives. */
static int pt_poll(struct pt *pt)
{
    struct rnic_wc wc[16];
    int n = rnic_poll_cq(pt->cq, 16, wc);

    if (n < 0)
        return n;
    for (int i = 0; i < n; i++) {
        if (wc[i].status != RNIC_WC_SUCCESS) {
            fprintf(stderr, "rdn-perftest: completion %s\n",
                    rnic_wc_status_str(wc[i].status));
            return -EIO;
        }
        if (wc[i].opcode != RNIC_WC_RECV) {
            pt->sends++;
            continue;
        }
        if (wc[i].byte_len != pt->o->size) {
            fprintf(stderr, "rdn-perftest: received %u bytes, not %u\n",
                    wc[i].byte_len, pt->o->size);
            return -EPROTO;
        }
        pt->recvs++;
        if (pt_post_recv(pt) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* Polls until *count reaches want, within the deadline. */
static int pt_wait(struct pt *pt, const unsigned *count, unsigned want)
{
    while (*count < want) {
        int rc = pt_poll(pt);

        if (rc)
            return rc;
        if (pt_expired(pt)) {
            fprintf(stderr, "rdn-perftest: no completion in %u s\n",
                    pt->o->timeout_s);
            return -ETIMEDOUT;
        }
    }
    return 0;
}

static int pt_post(struct pt *pt, uint8_t opcode, uint64_t compare,
                   uint64_t swap_add)
{
    struct rnic_sge sge = {(uintptr_t)pt->buf, pt->o->size, pt->mr->lkey};
    struct rnic_send_wr wr = {.opcode = opcode,
                              .flags = MLX5_WQE_CTRL_CQ_UPDATE,
                              .sg = &sge,
                              .nsg = 1,
                              .raddr = pt->peer.vaddr,
                              .rkey = pt->peer.rkey,
                              .compare = compare,
                              .swap_add = swap_add};
    int rc = rnic_post_send(pt->qp, &wr);

    if (rc)
        fprintf(stderr, "rdn-perftest: post: %s\n", rnic_errmsg());
    return rc;
}

/* ib_write_lat's wait: our buffer's last byte shows k, zeros before it. */
static int pt_wait_write(struct pt *pt, unsigned k)
{
    uint8_t *last = pt->rbuf + pt->o->size - 1;

    while (load_acquire(last) != (uint8_t)k) {
        int rc = pt_poll(pt);

        if (rc)
            return rc;
        if (pt_expired(pt)) {
            fprintf(stderr, "rdn-perftest: WRITE %u did not arrive in %u s\n",
                    k, pt->o->timeout_s);
            return -ETIMEDOUT;
        }
    }
    for (uint32_t i = 0; i + 1 < pt->o->size; i++)
        if (pt->rbuf[i] != 0) {
            fprintf(stderr, "rdn-perftest: WRITE %u: byte %u is %#x\n", k, i,
                    pt->rbuf[i]);
            return -EPROTO;
        }
    return 0;
}

/*
 * What the client's READ k or atomic k (which compared with compare)
 * brought back is right. *expect is what the target word must hold before
 * atomic k + 1: unknown before the first, one more after each addition or
 * successful swap.
 */
static int pt_check_fetch(struct pt *pt, unsigned k, uint64_t compare,
                          uint64_t *expect)
{
    uint64_t old;

    if (pt->o->test == PT_READ) {
        if (k == 1)
            memcpy(pt->ref, pt->buf, pt->o->size);
        else if (memcmp(pt->ref, pt->buf, pt->o->size) != 0) {
            fprintf(stderr, "rdn-perftest: READ %u differs from READ 1\n", k);
            return -EPROTO;
        }
        return 0;
    }
    memcpy(&old, pt->buf, sizeof(old));
    if (k > 1 && old != *expect) {
        fprintf(stderr, "rdn-perftest: atomic %u fetched %#llx, not %#llx\n", k,
                (unsigned long long)old, (unsigned long long)*expect);
        return -EPROTO;
    }
    /* Only the first CAS may miss: it guesses 0. */
    *expect = pt->o->cas && old != compare ? old : old + 1;
    return 0;
}

static double pt_us(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e6 +
           (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

/* The client's requests: READs or atomics, one at a time. */
static int pt_run_fetch(struct pt *pt)
{
    uint64_t expect = 0;
    uint8_t op = pt->o->test == PT_READ ? MLX5_OPCODE_RDMA_READ
                 : pt->o->cas           ? MLX5_OPCODE_ATOMIC_CS
                                        : MLX5_OPCODE_ATOMIC_FA;

    for (unsigned k = 1; k <= pt->o->iters; k++) {
        struct timespec t0, t1;
        int rc;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        uint64_t compare = expect;

        rc = pt_post(pt, op, compare, pt->o->cas ? compare + 1 : 1);
        if (!rc)
            rc = pt_wait(pt, &pt->sends, k);
        if (!rc)
            rc = pt_check_fetch(pt, k, compare, &expect);
        if (rc)
            return rc;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        pt->lat[k - 1] = pt_us(&t0, &t1);
    }
    return 0;
}

/* ib_send_lat and ib_write_lat: one message each way per iteration. */
static int pt_run_pingpong(struct pt *pt)
{
    int client = pt->o->host != NULL;
    struct timespec t0, t1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned k = 1; k <= pt->o->iters; k++) {
        int rc = 0;

        if (pt->o->test == PT_SEND) {
            if (!client)
                rc = pt_wait(pt, &pt->recvs, k);
            if (!rc)
                rc = pt_post(pt, MLX5_OPCODE_SEND, 0, 0);
            if (!rc && client)
                rc = pt_wait(pt, &pt->recvs, k);
        } else {
            if (client)
                rc = pt_wait_write(pt, k);
            if (!rc) {
                store_release(&pt->buf[pt->o->size - 1], (uint8_t)k);
                rc = pt_post(pt, MLX5_OPCODE_RDMA_WRITE, 0, 0);
            }
            if (!rc)
                rc = pt_wait(pt, &pt->sends, k);
            if (!rc && !client)
                rc = pt_wait_write(pt, k);
        }
        if (!rc && pt->o->test == PT_SEND)
            rc = pt_wait(pt, &pt->sends, k);
        if (rc)
            return rc;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        pt->lat[k - 1] = pt_us(&t0, &t1) / 2; /* perftest: RTT / 2 */
        t0 = t1;
    }
    return 0;
}

static int pt_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void pt_report(const struct pt *pt)
{
    unsigned n = pt->o->iters;
    double sum = 0;

    qsort(pt->lat, n, sizeof(double), pt_cmp_double);
    for (unsigned i = 0; i < n; i++)
        sum += pt->lat[i];
    printf(" #bytes #iterations t_min[usec] t_max[usec] t_typical[usec] "
           "t_avg[usec] t_99%%[usec]\n");
    printf(" %-6u %-11u %-11.2f %-11.2f %-15.2f %-11.2f %.2f\n", pt->o->size, n,
           pt->lat[0], pt->lat[n - 1], pt->lat[n / 2], sum / n,
           pt->lat[(size_t)n * 99 / 100]);
}

/* The whole test on a connected channel: setup, traffic, checks, close. */
static int pt_session(struct pt *pt)
{
    const struct pt_opts *o = pt->o;
    int passive = !o->host && (o->test == PT_READ || o->test == PT_ATOMIC);
    uint64_t word;
    int rc = pt_setup(pt);

    if (rc)
        return rc;
    printf(" %s %s: %u iterations of %u bytes\n", pt_names[o->test],
           o->host ? "client" : "server", o->iters, o->size);
    pt_arm(pt);
    if (passive)
        rc = 0; /* the NIC answers; the client's closing exchange ends it */
    else if (o->test == PT_READ || o->test == PT_ATOMIC)
        rc = pt_run_fetch(pt);
    else
        rc = pt_run_pingpong(pt);
    if (!rc && o->test != PT_WRITE)
        rc = pt_close(pt);
    if (rc)
        return rc;
    if (passive && o->test == PT_ATOMIC && !o->cas) {
        memcpy(&word, pt->rbuf, sizeof(word));
        if (word != o->iters) {
            fprintf(stderr, "rdn-perftest: %u FETCH_AND_ADDs of 1 left %llu\n",
                    o->iters, (unsigned long long)word);
            return -EPROTO;
        }
        printf(" the target word counts %llu additions\n",
               (unsigned long long)word);
    }
    if (!passive)
        pt_report(pt);
    return 0;
}

/* ---- resources ---------------------------------------------------------- */

static int pt_open(struct pt *pt)
{
    unsigned access = pt->o->test == PT_SEND    ? 0
                      : pt->o->test == PT_WRITE ? RNIC_ACCESS_REMOTE_WRITE
                      : pt->o->test == PT_READ  ? RNIC_ACCESS_REMOTE_READ
                                                : RNIC_ACCESS_REMOTE_ATOMIC;
    struct rnic_qp_init_attr a = {
        .sq_wqebb = 64,
        .rq_wqe = pt->o->test == PT_SEND ? PT_RX_DEPTH : 0,
        .max_recv_sge = pt->o->test == PT_SEND ? 1 : 0,
        .flags = RNIC_QP_RESTRICT_ACCESS,
        .access = access,
        /* A peer in an emulated VM on a busy host stalls for hundreds of
         * ms: an ACK timeout of 268 ms (4.096 us * 2^16), 7 retries, not
         * 67 ms (lost packets still cost little time to recover). */
        .rc = {.timeout = 16,
               .retry_cnt = 7,
               .rnr_retry = 7,
               .min_rnr_timer = 12,
               .set = 1},
    };
    struct rnic_addr me;
    void *mem;
    int rc;

    pt->half =
        (pt->o->size + PT_CYCLE_BUFFER - 1) / PT_CYCLE_BUFFER * PT_CYCLE_BUFFER;
    pt->lat = calloc(pt->o->iters, sizeof(double));
    pt->ref = malloc(pt->o->size);
    if (!pt->lat || !pt->ref)
        return -ENOMEM;
    rc = rnic_open(pt->o->device, NULL, &pt->dev);
    if (rc)
        return rc;
    rc = rnic_mem_alloc(pt->dev, 2 * pt->half, &mem);
    if (rc)
        return rc;
    pt->buf = mem;
    pt->rbuf = pt->buf + pt->half;
    memset(pt->buf, 0, 2 * pt->half);
    /* What a READ of ours brings back, recognisable in a capture. */
    if (pt->o->test == PT_READ)
        for (size_t i = 0; i < pt->half; i++)
            pt->rbuf[i] = (uint8_t)(0x30 + i % 64);
    rc = rnic_reg_mr(pt->dev, mem, 2 * pt->half,
                     RNIC_ACCESS_LOCAL_WRITE | access, &pt->mr);
    if (rc)
        return rc;
    rc = rnic_create_cq(pt->dev, 2 * PT_RX_DEPTH + 64, &pt->cq);
    if (rc)
        return rc;
    a.send_cq = a.recv_cq = pt->cq;
    rc = rnic_create_qp(pt->dev, &a, &pt->qp);
    if (rc)
        return rc;
    for (unsigned i = 0; pt->o->test == PT_SEND && i < PT_RX_DEPTH; i++) {
        rc = pt_post_recv(pt);
        if (rc)
            return rc;
    }
    rc = rnic_qp_addr(pt->qp, &me);
    if (rc)
        return rc;
    pt->me = (struct pt_dest){.out_reads = PT_OUT_READS,
                              .qpn = be32_to_cpu(me.qpn) & 0xffffff,
                              .psn = be32_to_cpu(me.psn) & 0xffffff,
                              .rkey = pt->mr->rkey,
                              .vaddr = (uintptr_t)pt->rbuf};
    memcpy(pt->me.gid, me.gid, sizeof(me.gid));
    pt->udp_port = me.udp_port;
    return 0;
}

int main(int argc, char **argv)
{
    struct pt_opts o;
    struct pt pt = {.o = &o, .fd = -1};
    int rc;

    if (parse(argc, argv, &o) < 0) {
        usage(stderr);
        return 2;
    }
    /* A peer that closes first must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    rc = pt_open(&pt);
    if (rc) {
        fprintf(stderr, "rdn-perftest: %s\n",
                rc == -ENOMEM ? "out of memory" : rnic_errmsg());
        rc = 1;
        goto close_dev;
    }
    if (!o.host)
        printf(" waiting for the client on port %d\n", o.port);
    fflush(stdout);
    pt.fd = oob_open(o.host, o.port);
    if (pt.fd < 0) {
        fprintf(stderr, "rdn-perftest: no connection on port %d: %s\n", o.port,
                strerror(-pt.fd));
        rc = pt.fd == -ECONNREFUSED ? PT_EXIT_NOCONN : 1;
        goto close_dev;
    }
    rc = pt_session(&pt);
    if (rc && rc != -EIO && rc != -ETIMEDOUT)
        fprintf(stderr, "rdn-perftest: the exchange failed: %s\n",
                strerror(-rc));
    rc = rc ? 1 : 0;
    close(pt.fd);
close_dev:
    if (pt.dev)
        rnic_close(pt.dev);
    free(pt.lat);
    free(pt.ref);
    return rc;
}
