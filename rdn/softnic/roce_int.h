/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/roce_int.h - softnic's RoCEv2 endpoint: the engine's UDP
 * port (one per rdn-nicd, opened by --listen) and the reliable-connection
 * transport of QPs whose peer lives on another host. Private to
 * rdn/softnic/.
 *
 * The seam: the engine's requester (sq.c) and responder (resp.c) speak
 * whole messages (struct sn_pkt: one request, one response each). For a QP
 * connected to another host, sn_send() hands those messages to
 * sn_rc_output(), which turns requests into PSN-numbered packets (segmented
 * by the path MTU, kept until acknowledged, retransmitted go-back-N) and
 * responses into ACK / NAK / READ response / atomic ACK packets. Packets
 * from the network come in through the port's receive thread, which checks
 * the IP/UDP headers and the ICRC and hands them (SN_PKT_WIRE) to engine
 * thread 0; sn_deliver() moves them to the QP's owner thread, where
 * sn_rc_input() runs the responder's PSN checks and reassembly (handing
 * whole messages to sn_resp_request) or the requester's acknowledgement
 * handling (handing responses to sn_qp_response). Everything about one QP
 * runs on its owner thread, like the rest of the engine.
 *
 * Security: RoCE has no authentication beyond the destination QPN, the PSN
 * window and the rkey; packets are accepted only from the peer address a
 * QP connected to, which anybody on the path can forge. The port exists
 * only where the operator asked for it (rdn-nicd --listen).
 */
#ifndef RDN_SOFTNIC_ROCE_INT_H
#define RDN_SOFTNIC_ROCE_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "proto/barrier.h"
#include "rdn/softnic/engine_int.h"
#include "rdn/softnic/roce_pkt.h"

/*
 * A packet from the network as the port hands it to the engine
 * (SN_PKT_WIRE): the source GID, the destination GID, then the BTH on.
 */
#define SN_RC_GID_LEN  16
#define SN_RC_ADDR_LEN (2 * SN_RC_GID_LEN)
/* The largest datagram either side handles: headers, a 4096-byte MTU's
 * payload, an atomic's or immediate's 4 more, the ICRC. */
#define SN_RC_MAX_PKT (ROCE_MAX_HDR + 4096 + 4 + ROCE_ICRC_LEN)

/* Why a packet from the network was dropped (statistics). */
enum sn_rc_drop {
    SN_RC_DROP_BAD,   /* malformed headers, lengths or opcode */
    SN_RC_DROP_ICRC,  /* ICRC mismatch */
    SN_RC_DROP_NOQP,  /* no such QP, or not connected over RoCE */
    SN_RC_DROP_PEER,  /* not from the QP's peer, or the QP is not in RTS */
    SN_RC_DROP_STALE, /* a response to nothing outstanding, out of order */
    SN_RC_DROP_N,
};

/* Engine-wide counters (relaxed atomics), reported by rdn-nicd --status. */
struct sn_roce_stats {
    uint64_t tx_pkts, rx_pkts;
    uint64_t retrans;  /* request packets sent again */
    uint64_t timeouts; /* ACK timeouts */
    uint64_t seq_naks_rx, seq_naks_tx;
    uint64_t rnr_naks_rx, rnr_naks_tx;
    uint64_t dups_rx;      /* duplicate requests answered */
    uint64_t credit_waits; /* SENDs held until the responder had receives */
    uint64_t raw_in;       /* datagrams the raw socket delivered */
    uint64_t errors;       /* QPs failed by the transport */
    uint64_t drops[SN_RC_DROP_N];
};

/*
 * Test-only fault injection at the receiving port (this machine's kernel
 * has no sch_netem): RDN_NICD_ROCE_FAULTS="loss=P,dup=P,reorder=P,delay=MS"
 * in rdn-nicd's environment drops, duplicates, or holds back behind the
 * next packet P percent of the packets that passed the checks, and delays
 * every packet MS milliseconds (in order, as netem's delay without
 * jitter), before the transport sees them.
 */
struct sn_roce_late { /* a packet the delay fault holds until due */
    struct sn_roce_late *next;
    uint64_t due; /* sn_now_ns() */
    struct sn_pkt *p;
};

struct sn_roce_faults {
    unsigned loss, dup, reorder; /* percent */
    unsigned delay_ms;
    struct sn_roce_late *late, *late_tail; /* FIFO, the receive thread's */
    uint64_t rng;
};

/* An IPv4 or IPv6 socket address (sa.sa_family says which). */
union sn_sockaddr {
    struct sockaddr sa;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
};

struct sn_roce_port {
    struct sn_engine *eng;
    struct sn_roce_faults faults;
    /* Bound to the listen address; sends. IPv4: its input is filtered
     * away (the raw socket reads it, with the IP header the ICRC covers);
     * IPv6: it receives too (the ICRC covers no field of the IPv6 header
     * that the socket does not tell: the rest counts as ones). */
    int udp_fd;
    bool any;   /* --listen 0.0.0.0: every IPv4 address of the host; each
                   QP speaks from the one it was given (rnic_qp_set_gid) */
    int raw_fd; /* IPv4 raw socket, IPPROTO_UDP: whole datagrams; or -1 */
    union sn_sockaddr local;
    uint8_t gid[16];    /* the IPv6 address, or IPv4 as ::ffff:a.b.c.d */
    uint16_t port;      /* host order */
    uint8_t mtu;        /* enum ibv_mtu code offered in addresses */
    uint8_t rc_timeout; /* ACK timeout code of QPs that set none */
    pthread_t rx;
    uint32_t stop;
    struct sn_roce_stats st;
};

/*
 * Opens the engine's RoCEv2 endpoint on addr ("A.B.C.D[:PORT]", or an
 * IPv6 address "X:..:Y" or "[X:..:Y]:PORT"; port 4791 by default; not
 * the IPv6 unspecified, IPv4-mapped or link-local addresses; 0.0.0.0 is
 * every IPv4 address of the host) with path MTU mtu (enum ibv_mtu code,
 * 1..5) and starts its receive thread. rc_timeout (1..31, IBA's code:
 * 4.096 us * 2^code) is the ACK timeout of QPs whose application sets no
 * rnic_qp_rc_attr. IPv4 needs CAP_NET_RAW (the raw socket that shows the
 * IP header the ICRC covers). Call once, before applications attach.
 * Returns 0 or -errno; err receives a message.
 */
int sn_roce_listen(struct sn_engine *e, const char *addr, uint8_t mtu,
                   uint8_t rc_timeout, char *err, size_t errlen);
/* Stops the receive thread and closes the endpoint (engine stopped). */
void sn_roce_close(struct sn_engine *e);
/* Copies the engine's counters (zeros without an endpoint). */
void sn_roce_stats(struct sn_engine *e, struct sn_roce_stats *out);

/* Counts one event in a struct sn_roce_stats field (any thread). */
static inline void sn_stat(uint64_t *c)
{
    fetch_add_relaxed(c, 1);
}

/* Is gid an IPv4 address (::ffff:a.b.c.d)? */
static inline bool sn_gid_v4(const uint8_t *gid)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0,    0,
                                       0, 0, 0, 0, 0xff, 0xff};

    return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

/* The rnic_addr of qp (GID and port when the engine listens). */
void sn_roce_addr(const struct sn_qp *qp, struct rnic_addr *out);
/*
 * Makes qp (RESET, control lock held) speak from gid, an address of this
 * host the port listens on (its one address, or with 0.0.0.0 any IPv4
 * address of the host). 0, -EADDRNOTAVAIL (no endpoint, or not an
 * address the port listens on).
 */
int sn_roce_set_src(struct sn_qp *qp, const uint8_t gid[16]);
/* Does remote name a QP of this engine (the in-memory path)? */
bool sn_roce_addr_local(const struct sn_engine *e,
                        const struct rnic_addr *remote);
/*
 * Connects qp (RESET, control lock held) to the QP at remote on another
 * host: allocates its transport state. 0, -EHOSTUNREACH (no endpoint, or
 * a GID of the other address family than the endpoint's), -ENOMEM.
 */
int sn_rc_connect(struct sn_qp *qp, const struct rnic_addr *remote);
/* Frees qp's transport state (the QP is being freed, engine synced). */
void sn_rc_free(struct sn_qp *qp);

/* A message of qp's engine for the wire (owner thread); takes p. */
void sn_rc_output(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p);
/* A packet from the network for qp (owner thread); takes p. */
void sn_rc_input(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p);
/* Drops p, counting why. */
void sn_rc_drop(struct sn_thread *t, struct sn_pkt *p, enum sn_rc_drop why);
/* qp's retransmission / RNR timer expired (owner thread). */
void sn_rc_timer(struct sn_thread *t, struct sn_timer *tm);
/* Sends the coalesced ACKs of t's QPs; returns how many. */
int sn_rc_flush_acks(struct sn_thread *t);
/*
 * qp left RTS or is being let go of (owner thread): drops its queued
 * requests, reassembly and pending ACK, cancels its timer.
 */
void sn_rc_reset(struct sn_thread *t, struct sn_qp *qp);

#endif /* RDN_SOFTNIC_ROCE_INT_H */
