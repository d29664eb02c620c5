/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/roce_port.c - the engine's RoCEv2 UDP port (see
 * roce_int.h): opening it (--listen), the receive thread that checks
 * each datagram's IP/UDP headers and ICRC before the transport
 * (roce.c) sees it, and the test-only fault injection.
 *
 * IPv4 receives through a raw socket, because the ICRC covers IP header
 * fields a UDP socket does not show; its UDP socket, bound so that the
 * port is ours, only sends (a filter drops what it would receive). IPv6
 * sends and receives on its UDP socket.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <netinet/ip.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdn/softnic/roce_int.h"
#include "rdn/softnic/roce_pkt.h"

/*
 * Checks one datagram (IP header on): ours (destination address and UDP
 * port), whole, and its ICRC right. Returns the BTH offset, or -1.
 */
static int sn_roce_check(struct sn_roce_port *port, const uint8_t *b, size_t n,
                         size_t *bth_len)
{
    size_t ihl, tot;
    uint16_t dport, ulen;
    const uint8_t *bth;
    size_t bl;

    if (port->local.sa.sa_family == AF_INET6) {
        if (n < 40 + ROCE_UDP_LEN || (b[0] >> 4) != 6 || b[6] != IPPROTO_UDP ||
            memcmp(b + 24, &port->local.v6.sin6_addr, 16) != 0)
            return -1;
        ihl = 40;
        tot = ihl + ((size_t)b[4] << 8 | b[5]);
    } else {
        if (n < 20 || (b[0] >> 4) != 4 || b[9] != IPPROTO_UDP)
            return -1;
        ihl = (size_t)(b[0] & 0xf) * 4;
        tot = (size_t)b[2] << 8 | b[3];
        if (ihl < 20 ||
            (!port->any && memcmp(b + 16, &port->local.v4.sin_addr, 4) != 0))
            return -1;
    }
    if (tot > n || tot < ihl + ROCE_UDP_LEN)
        return -1;
    dport = (uint16_t)(b[ihl + 2] << 8 | b[ihl + 3]);
    if (dport != port->port)
        return -1;
    sn_stat(&port->st.rx_pkts);
    ulen = (uint16_t)(b[ihl + 4] << 8 | b[ihl + 5]);
    if (ulen != tot - ihl ||
        ulen < ROCE_UDP_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN) {
        sn_stat(&port->st.drops[SN_RC_DROP_BAD]);
        return -1;
    }
    bth = b + ihl + ROCE_UDP_LEN;
    bl = ulen - ROCE_UDP_LEN;
    if (roce_icrc(b, ihl, b + ihl, bth, bl - ROCE_ICRC_LEN) !=
        roce_icrc_get(bth + bl - ROCE_ICRC_LEN)) {
        sn_stat(&port->st.drops[SN_RC_DROP_ICRC]);
        return -1;
    }
    *bth_len = bl;
    return (int)(ihl + ROCE_UDP_LEN);
}

/* A checked datagram as an SN_PKT_WIRE packet (source GID, destination
 * IPv4 address, BTH..ICRC). */
static struct sn_pkt *sn_roce_wrap(const uint8_t *ip, const uint8_t *bth,
                                   size_t bl, uint32_t dqpn)
{
    struct sn_pkt *p = malloc(sizeof(*p) + SN_RC_ADDR_LEN + bl);

    if (!p)
        return NULL;
    memset(p, 0, sizeof(*p));
    p->tm.pos = SN_TIMER_IDLE;
    p->cls = SN_POOL_NONE;
    p->cap = (uint32_t)(SN_RC_ADDR_LEN + bl);
    p->h.type = SN_PKT_WIRE;
    p->h.dst_qpn = dqpn;
    p->h.len = (uint32_t)bl;
    if ((ip[0] >> 4) == 6) { /* IPv6 addresses are the GIDs */
        memcpy(p->data, ip + 8, 16);
        memcpy(p->data + SN_RC_GID_LEN, ip + 24, 16);
    } else { /* IPv4 ones mapped */
        memset(p->data, 0, SN_RC_ADDR_LEN);
        p->data[10] = p->data[11] = 0xff;
        memcpy(p->data + 12, ip + 12, 4);
        p->data[SN_RC_GID_LEN + 10] = p->data[SN_RC_GID_LEN + 11] = 0xff;
        memcpy(p->data + SN_RC_GID_LEN + 12, ip + 16, 4);
    }
    memcpy(p->data + SN_RC_ADDR_LEN, bth, bl);
    return p;
}

static unsigned sn_roce_rand(struct sn_roce_faults *f)
{
    f->rng ^= f->rng << 13;
    f->rng ^= f->rng >> 7;
    f->rng ^= f->rng << 17;
    return (unsigned)(f->rng % 100);
}

/* Hands p to engine thread 0, after the delay fault if any. */
static void sn_roce_deliver(struct sn_roce_port *port, struct sn_pkt *p)
{
    struct sn_roce_faults *f = &port->faults;
    struct sn_roce_late *l;

    if (!f->delay_ms || !(l = malloc(sizeof(*l)))) {
        sn_thread_push(port->eng->thr[0], p);
        return;
    }
    *l = (struct sn_roce_late){.due = sn_now_ns() + f->delay_ms * 1000000ull,
                               .p = p};
    if (f->late_tail)
        f->late_tail->next = l;
    else
        f->late = l;
    f->late_tail = l;
}

/*
 * Hands on the delayed packets that are due (all of them when flush).
 * Returns the milliseconds until the next one is due, or -1 if none waits.
 */
static int sn_roce_late_due(struct sn_roce_port *port, bool flush)
{
    struct sn_roce_faults *f = &port->faults;
    uint64_t now = sn_now_ns();

    while (f->late && (flush || f->late->due <= now)) {
        struct sn_roce_late *l = f->late;

        f->late = l->next;
        if (!f->late)
            f->late_tail = NULL;
        if (flush)
            free(l->p);
        else
            sn_thread_push(port->eng->thr[0], l->p);
        free(l);
    }
    return f->late ? (int)((f->late->due - now + 999999) / 1000000) : -1;
}

/* Passes p to engine thread 0, through the test faults if any. */
static void sn_roce_pass(struct sn_roce_port *port, struct sn_pkt *p,
                         struct sn_pkt **held)
{
    struct sn_roce_faults *f = &port->faults;

    if (p && f->loss && sn_roce_rand(f) < f->loss) {
        free(p);
        return;
    }
    if (p && f->reorder && !*held && sn_roce_rand(f) < f->reorder) {
        *held = p;
        return;
    }
    if (p && f->dup && sn_roce_rand(f) < f->dup) {
        struct sn_pkt *c = malloc(sizeof(*p) + p->cap);

        if (c) {
            memcpy(c, p, sizeof(*p) + p->cap);
            sn_roce_deliver(port, c);
        }
    }
    if (p)
        sn_roce_deliver(port, p);
    if (*held) { /* a held packet goes after the next one (or a timeout) */
        sn_roce_deliver(port, *held);
        *held = NULL;
    }
}

/*
 * Reads one datagram with its IP and UDP headers into buf: from the raw
 * socket (IPv4), or from the UDP socket with the IPv6 and UDP headers
 * written in front as the ICRC sees them (what it masks left 0). Returns
 * the length or -1 (errno).
 */
static ssize_t sn_roce_recv(struct sn_roce_port *port, uint8_t *buf, size_t cap)
{
    enum { HL = 40 + ROCE_UDP_LEN };
    struct sockaddr_in6 src;
    socklen_t sl = sizeof(src);
    uint16_t plen, dport = htons(port->port);
    ssize_t n;

    if (port->raw_fd >= 0)
        return recv(port->raw_fd, buf, cap, 0);
    n = recvfrom(port->udp_fd, buf + HL, cap - HL, 0, (struct sockaddr *)&src,
                 &sl);
    if (n < 0 || sl < sizeof(src) || n > 0xffff - ROCE_UDP_LEN)
        return n < 0 ? n : 0;
    plen = htons((uint16_t)(n + ROCE_UDP_LEN));
    memset(buf, 0, HL);
    buf[0] = 0x60;
    memcpy(buf + 4, &plen, 2);
    buf[6] = IPPROTO_UDP;
    memcpy(buf + 8, &src.sin6_addr, 16);
    memcpy(buf + 24, &port->local.v6.sin6_addr, 16);
    memcpy(buf + 40, &src.sin6_port, 2);
    memcpy(buf + 42, &dport, 2);
    memcpy(buf + 44, &plen, 2);
    return n + HL;
}

/* The receive thread: datagrams -> SN_PKT_WIRE packets for thread 0. */
static void *sn_roce_rx(void *arg)
{
    struct sn_roce_port *port = arg;
    static __thread uint8_t buf[65536];
    struct sn_pkt *held = NULL;

    while (!load_acquire(&port->stop)) {
        struct pollfd pfd = {
            .fd = port->raw_fd >= 0 ? port->raw_fd : port->udp_fd,
            .events = POLLIN,
        };
        struct roce_hdr h;
        ssize_t n;
        size_t bl;
        int off;

        int wait = sn_roce_late_due(port, false);

        /* A packet held back (test faults) waits 1 ms at most. */
        if (held && (wait < 0 || wait > 1))
            wait = 1;
        if (wait >= 0 && poll(&pfd, 1, wait) == 0) {
            sn_roce_pass(port, NULL, &held);
            continue;
        }
        n = sn_roce_recv(port, buf, sizeof(buf));
        if (n < 0) { /* EINTR, or the timeout: look at stop */
            sn_roce_pass(port, NULL, &held);
            continue;
        }
        sn_stat(&port->st.raw_in);
        off = sn_roce_check(port, buf, (size_t)n, &bl);
        if (off < 0)
            continue;
        if (roce_decode(buf + off, bl, &h) < 0) {
            sn_stat(&port->st.drops[SN_RC_DROP_BAD]);
            continue;
        }
        sn_roce_pass(port, sn_roce_wrap(buf, buf + off, bl, h.dqpn), &held);
    }
    free(held);
    sn_roce_late_due(port, true);
    return NULL;
}

/* Reads RDN_NICD_ROCE_FAULTS (tests only; see roce_int.h). */
static void sn_roce_faults_env(struct sn_roce_faults *f)
{
    const char *s = getenv("RDN_NICD_ROCE_FAULTS");

    f->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
    while (s && *s) {
        unsigned v = 0;
        char k[16];
        int used = 0;

        if (sscanf(s, "%15[a-z]=%u%n", k, &v, &used) != 2)
            break;
        if (!strcmp(k, "loss"))
            f->loss = v;
        else if (!strcmp(k, "dup"))
            f->dup = v;
        else if (!strcmp(k, "reorder"))
            f->reorder = v;
        else if (!strcmp(k, "delay"))
            f->delay_ms = v;
        s += used;
        s += *s == ',';
    }
}

/*
 * Parses "A.B.C.D[:PORT]", "X:..:Y" or "[X:..:Y][:PORT]" (port 4791 by
 * default) into sa; 0.0.0.0 is every IPv4 address, an IPv6 address must
 * name one interface (not ::, IPv4-mapped or link-local). 0 or -EINVAL.
 */
static int sn_roce_parse(const char *addr, union sn_sockaddr *sa)
{
    char host[INET6_ADDRSTRLEN];
    const char *h = addr, *port_s = NULL, *colon = strchr(addr, ':');
    long port = RNIC_ROCE_PORT;
    size_t hl;

    if (addr[0] == '[') {
        const char *end = strchr(addr, ']');

        if (!end || (end[1] && end[1] != ':'))
            return -EINVAL;
        h = addr + 1;
        hl = (size_t)(end - h);
        port_s = end[1] ? end + 2 : NULL;
    } else if (colon && strchr(colon + 1, ':')) { /* bare IPv6: no port */
        hl = strlen(addr);
    } else {
        hl = colon ? (size_t)(colon - addr) : strlen(addr);
        port_s = colon ? colon + 1 : NULL;
    }
    if (hl >= sizeof(host))
        return -EINVAL;
    memcpy(host, h, hl);
    host[hl] = 0;
    if (port_s) {
        char *end;

        port = strtol(port_s, &end, 10);
        if (!*port_s || *end || port < 1 || port > 65535)
            return -EINVAL;
    }
    memset(sa, 0, sizeof(*sa));
    if (inet_pton(AF_INET, host, &sa->v4.sin_addr) == 1) {
        sa->v4.sin_family = AF_INET;
        sa->v4.sin_port = htons((uint16_t)port);
        return 0;
    }
    if (inet_pton(AF_INET6, host, &sa->v6.sin6_addr) != 1 ||
        IN6_IS_ADDR_UNSPECIFIED(&sa->v6.sin6_addr) ||
        IN6_IS_ADDR_V4MAPPED(&sa->v6.sin6_addr) ||
        IN6_IS_ADDR_LINKLOCAL(&sa->v6.sin6_addr))
        return -EINVAL;
    sa->v6.sin6_family = AF_INET6;
    sa->v6.sin6_port = htons((uint16_t)port);
    return 0;
}

/*
 * The raw socket's filter: only UDP datagrams to the endpoint's address
 * (any, with --listen 0.0.0.0) and port reach it, not every UDP datagram of the
 * host (classic BPF; the program sees the packet from the IPv4 header on).
 */
static int sn_roce_raw_filter(const struct sn_roce_port *port)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9), /* protocol */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 6),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16), /* destination address */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                 ntohl(port->local.v4.sin_addr.s_addr), 0, 4),
        BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0), /* X = IPv4 header length */
        BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2),  /* UDP destination port */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, port->port, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0xffff), /* the whole datagram */
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
    uint8_t b[64];

    if (port->any) /* every address: the port alone decides */
        f[3] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0);

    if (setsockopt(port->raw_fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
                   sizeof(prog)) < 0)
        return -errno;
    /* What arrived before the filter did */
    while (recv(port->raw_fd, b, sizeof(b), MSG_DONTWAIT) >= 0)
        ;
    return 0;
}

/*
 * The sockets of an IPv4 endpoint: the UDP socket only keeps the port
 * ours (no ICMP unreachable) and sends; what it would receive, the raw
 * socket reads with the IP header.
 */
static int sn_roce_open4(struct sn_roce_port *port, char *err, size_t errlen)
{
    struct sock_filter drop = BPF_STMT(BPF_RET | BPF_K, 0);
    struct sock_fprog prog = {.len = 1, .filter = &drop};
    int pmtu = IP_PMTUDISC_DO, rc;

    port->udp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (port->udp_fd < 0 ||
        bind(port->udp_fd, &port->local.sa, sizeof(port->local.v4)) < 0 ||
        setsockopt(port->udp_fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu,
                   sizeof(pmtu)) < 0 ||
        setsockopt(port->udp_fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
                   sizeof(prog)) < 0) {
        rc = -errno;
        snprintf(err, errlen, "UDP socket: %s", strerror(-rc));
        return rc;
    }
    port->raw_fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
    if (port->raw_fd < 0) {
        rc = -errno;
        snprintf(err, errlen,
                 "raw socket (needs CAP_NET_RAW: the ICRC covers the IP "
                 "header): %s",
                 strerror(-rc));
        return rc;
    }
    rc = sn_roce_raw_filter(port);
    if (rc < 0) {
        snprintf(err, errlen, "raw socket filter: %s", strerror(-rc));
        return rc;
    }
    return 0;
}

/* The socket of an IPv6 endpoint: UDP, sends and receives. */
static int sn_roce_open6(struct sn_roce_port *port, char *err, size_t errlen)
{
    int on = 1, pmtu = IPV6_PMTUDISC_DO, rc;

    port->udp_fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (port->udp_fd < 0 ||
        setsockopt(port->udp_fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)) <
            0 ||
        bind(port->udp_fd, &port->local.sa, sizeof(port->local.v6)) < 0 ||
        setsockopt(port->udp_fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu,
                   sizeof(pmtu)) < 0) {
        rc = -errno;
        snprintf(err, errlen, "UDP socket: %s", strerror(-rc));
        return rc;
    }
    return 0;
}

int sn_roce_listen(struct sn_engine *e, const char *addr, uint8_t mtu,
                   uint8_t rc_timeout, char *err, size_t errlen)
{
    struct timeval tv = {0, 100000};
    int buf = 16 << 20, rfd;
    struct sn_roce_port *port;
    char why[160];
    int rc;

    if (!rnic_mtu_bytes(mtu)) {
        snprintf(err, errlen, "path MTU code %u is not 1..5", mtu);
        return -EINVAL;
    }
    if (rc_timeout < 1 || rc_timeout > 31) {
        snprintf(err, errlen, "ACK timeout code %u is not 1..31", rc_timeout);
        return -EINVAL;
    }
    port = calloc(1, sizeof(*port));
    if (!port)
        return -ENOMEM;
    port->eng = e;
    port->mtu = mtu;
    port->rc_timeout = rc_timeout;
    sn_roce_faults_env(&port->faults);
    port->udp_fd = port->raw_fd = -1;
    if (sn_roce_parse(addr, &port->local) < 0) {
        snprintf(err, errlen,
                 "--listen %s: want A.B.C.D[:PORT], or an IPv6 address "
                 "X:..:Y or [X:..:Y]:PORT (not ::, IPv4-mapped or "
                 "link-local; 0.0.0.0: every IPv4 address)",
                 addr);
        rc = -EINVAL;
        goto free_port;
    }
    if (port->local.sa.sa_family == AF_INET) {
        port->port = ntohs(port->local.v4.sin_port);
        port->any = port->local.v4.sin_addr.s_addr == htonl(INADDR_ANY);
        port->gid[10] = port->gid[11] = 0xff;
        memcpy(port->gid + 12, &port->local.v4.sin_addr, 4);
        rc = sn_roce_open4(port, why, sizeof(why));
    } else {
        port->port = ntohs(port->local.v6.sin6_port);
        memcpy(port->gid, &port->local.v6.sin6_addr, 16);
        rc = sn_roce_open6(port, why, sizeof(why));
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", addr, why);
        goto close_socks;
    }
    rfd = port->raw_fd >= 0 ? port->raw_fd : port->udp_fd;
    setsockopt(port->udp_fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf));
    if (setsockopt(rfd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) < 0)
        setsockopt(rfd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    if (setsockopt(rfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: receive timeout: %s", addr, strerror(errno));
        goto close_socks;
    }
    e->roce = port;
    rc = -pthread_create(&port->rx, NULL, sn_roce_rx, port);
    if (rc) {
        e->roce = NULL;
        snprintf(err, errlen, "receive thread: %s", strerror(-rc));
        goto close_socks;
    }
    return 0;

close_socks:
    if (port->raw_fd >= 0)
        close(port->raw_fd);
    if (port->udp_fd >= 0)
        close(port->udp_fd);
free_port:
    free(port);
    return rc;
}

int sn_roce_set_src(struct sn_qp *qp, const uint8_t gid[16])
{
    const struct sn_roce_port *port = qp->dev->eng->roce;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int fd, rc = 0;

    if (port && !port->any && memcmp(gid, port->gid, 16) == 0)
        return 0; /* the one address it has (IPv4 or IPv6) */
    if (!port || !port->any || !sn_gid_v4(gid))
        return -EADDRNOTAVAIL;
    memcpy(&sa.sin_addr, gid + 12, 4);
    /* An address of this host (in the daemon's network namespace) is one
     * a socket can bind to. */
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (sa.sin_addr.s_addr == htonl(INADDR_ANY) ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        rc = -EADDRNOTAVAIL;
    close(fd);
    if (rc)
        return rc;
    memcpy(&qp->rc_src, gid + 12, 4);
    return 0;
}

void sn_roce_close(struct sn_engine *e)
{
    struct sn_roce_port *port = e->roce;

    if (!port)
        return;
    store_release(&port->stop, 1);
    pthread_join(port->rx, NULL);
    if (port->raw_fd >= 0)
        close(port->raw_fd);
    close(port->udp_fd);
    e->roce = NULL;
    free(port);
}

void sn_roce_stats(struct sn_engine *e, struct sn_roce_stats *out)
{
    const uint64_t *src;
    uint64_t *dst = (uint64_t *)out;

    memset(out, 0, sizeof(*out));
    if (!e->roce)
        return;
    src = (const uint64_t *)&e->roce->st;
    for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
        dst[i] = load_relaxed(&src[i]);
}
