/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/roce.c - RC over RoCEv2 for QPs whose peer is on another
 * host (see roce_int.h for where it sits in the engine).
 *
 * Requester: each request message gets the next PSNs (one per packet;
 * a READ takes as many as its response has packets) and stays in the QP's
 * queue until acknowledged. una is the oldest PSN not yet acknowledged,
 * tx_psn the next one to transmit; at most SN_RC_WINDOW packets are
 * unacknowledged. An ACK for PSN p acknowledges everything up to p; a
 * READ or atomic whose response has not come although a later PSN was
 * acknowledged or answered lost its response (implied NAK) and is asked
 * again, a READ for its remaining bytes only. Sequence-error NAKs and ACK
 * timeouts go back to una (go-back-N); timeouts and sequence errors use
 * up retry_cnt, RNR NAKs rnr_retry (7: for ever); any forward progress
 * restores both. Completed messages go to the engine in order as
 * message-level responses (sn_qp_response), which completes the WQEs.
 *
 * End-to-end credits (IBA 9.7.7.2): every ACK's AETH says how many
 * receive WQEs the responder has beyond the message its MSN names; a
 * message that consumes one (SEND, WRITE with immediate) is first sent
 * only within that limit, or, with no credit, when no other such message
 * is unacknowledged (one at a time, to learn of new receives from its
 * ACK or RNR NAK), so a responder short of receives costs one message per
 * RNR round, not the whole window. Credit code 31 means no limit. Until
 * the first ACK the requester has no credit.
 *
 * Responder: packets must come in PSN order (ePSN). Multi-packet SENDs
 * and WRITEs are reassembled and handed to the engine's responder as one
 * message, so memory is touched only once the message is whole and valid;
 * a message that finds no receive gets an RNR NAK and is sent again by the
 * requester. A packet ahead of ePSN is answered with one sequence-error
 * NAK (until ePSN arrives); a duplicate SEND/WRITE is acknowledged again,
 * a duplicate READ executed again, a duplicate atomic answered from the
 * saved result (never applied twice). ACKs are coalesced: one per QP for
 * all messages completed in one pass of the engine thread's loop, and one
 * at least every SN_RC_ACKREQ packets when the requester asks (AckReq).
 * A malformed request (opcode out of sequence, bad lengths) is fatal: the
 * QP goes to the error state and the requester gets an invalid-request
 * NAK, as the engine does for remote access and operational errors.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rdn/softnic/roce_int.h"
#include "rdn/softnic/roce_pkt.h"

#define SN_RC_WINDOW  128 /* unacknowledged request packets */
#define SN_RC_ACKREQ  16  /* AckReq on every this many packets of a message */
#define SN_RC_ATOMICS 16  /* saved atomic results for duplicates */

/* A request message in the requester's queue. */
struct sn_rc_msg {
    struct sn_pkt *req;  /* the engine's message (owned) */
    struct sn_pkt *resp; /* READ: the response being assembled */
    uint32_t psn, npkt;
    uint32_t got;  /* READ: bytes received up to the first missing packet */
    uint8_t *have; /* READ: bitmap of the response packets received */
    bool gap;      /* READ: asked again after a gap (once until a timeout) */
    uint64_t orig;
    bool done;      /* READ / atomic: answered */
    bool recv;      /* consumes a receive WQE (SEND, WRITE_IMM) */
    uint32_t ssn;   /* message sequence number, as the responder's MSN */
    uint32_t nrecv; /* receive-consuming messages queued up to this one */
};

struct sn_rc {
    struct sn_qp *qp;
    union sn_sockaddr peer;
    uint8_t peer_gid[16];
    uint8_t src_gid[16]; /* the address it speaks from */
    uint32_t mtu;
    uint64_t rto_ns;

    /* requester */
    struct sn_rc_msg *q;
    uint32_t q_mask, q_head, q_tail;
    uint32_t npsn;   /* next PSN to assign */
    uint32_t una;    /* oldest unacknowledged PSN */
    uint32_t tx_psn; /* next PSN to transmit */
    uint32_t tx_i;   /* queue index of the message holding tx_psn */
    uint32_t retry_left, rnr_left;
    bool rnr_wait;
    struct sn_timer tm;
    /* end-to-end credits; nrecv counts as in struct sn_rc_msg */
    uint32_t ssn, nrecv;             /* of the newest message queued */
    uint32_t acked_ssn, acked_nrecv; /* of the newest message retired */
    uint32_t sent_ssn;   /* newest message whose first packet went */
    uint32_t held_ssn;   /* newest message held for credits */
    uint32_t cred_msn;   /* MSN of the newest credit count */
    uint32_t cred_nrecv; /* the limit: nrecv the responder can take */
    bool cred_unlimited; /* credit code 31 */

    /* responder */
    uint32_t epsn, msn;
    bool nak_sent;
    struct sn_pkt *asm_msg; /* SEND / WRITE being reassembled */
    uint32_t asm_psn;       /* its first PSN */
    uint32_t asm_off;
    uint64_t asm_room; /* SEND: its receive's room; WRITE: the DMA length */
    uint32_t ack_psn;
    bool ack_pending;
    struct sn_link ack_link;
    struct {
        uint32_t psn;
        bool valid;
        uint64_t orig;
    } atom[SN_RC_ATOMICS];
    uint32_t atom_next;
};

static inline uint32_t sn_psn(uint32_t v)
{
    return v & ROCE_PSN_MASK;
}

/* ---- addresses -------------------------------------------------------- */

static uint32_t sn_engine_tag(const struct sn_engine *e)
{
    return (uint32_t)(e->id ^ (e->id >> 32));
}

void sn_roce_addr(const struct sn_qp *qp, struct rnic_addr *out)
{
    const struct sn_roce_port *port = qp->dev->eng->roce;
    be32 tag = cpu_to_be32(sn_engine_tag(qp->dev->eng));

    memset(out, 0, sizeof(*out));
    out->qpn = cpu_to_be32(qp->qpn);
    out->psn = cpu_to_be32(qp->rc_ipsn);
    memcpy(out->priv, &tag, sizeof(tag));
    if (port && (qp->rc_src || !port->any)) {
        memcpy(out->gid, port->gid, sizeof(out->gid));
        if (qp->rc_src)
            memcpy(out->gid + 12, &qp->rc_src, 4);
        out->udp_port = cpu_to_be16(port->port);
        out->mtu = port->mtu;
        out->flags = RNIC_ADDR_GID;
    }
}

bool sn_roce_addr_local(const struct sn_engine *e,
                        const struct rnic_addr *remote)
{
    be32 tag;

    memcpy(&tag, remote->priv, sizeof(tag));
    return be32_to_cpu(tag) == sn_engine_tag(e);
}

int sn_rc_connect(struct sn_qp *qp, const struct rnic_addr *remote)
{
    struct sn_roce_port *port = qp->dev->eng->roce;
    const struct rnic_qp_rc_attr *a = &qp->rc_attr;
    uint32_t nq = qp->out_mask + 1, mtu = rnic_mtu_bytes(remote->mtu);
    uint16_t udp = be16_to_cpu(remote->udp_port);
    struct sn_rc *rc;

    if (!port || !(remote->flags & RNIC_ADDR_GID) ||
        sn_gid_v4(remote->gid) != (port->local.sa.sa_family == AF_INET) ||
        (port->any && !qp->rc_src))
        return -EHOSTUNREACH;
    rc = calloc(1, sizeof(*rc));
    if (!rc)
        return -ENOMEM;
    rc->q = calloc(nq, sizeof(*rc->q));
    if (!rc->q) {
        free(rc);
        return -ENOMEM;
    }
    rc->q_mask = nq - 1;
    rc->qp = qp;
    if (port->local.sa.sa_family == AF_INET) {
        rc->peer.v4.sin_family = AF_INET;
        rc->peer.v4.sin_port = htons(udp ? udp : RNIC_ROCE_PORT);
        memcpy(&rc->peer.v4.sin_addr, remote->gid + 12, 4);
    } else {
        rc->peer.v6.sin6_family = AF_INET6;
        rc->peer.v6.sin6_port = htons(udp ? udp : RNIC_ROCE_PORT);
        memcpy(&rc->peer.v6.sin6_addr, remote->gid, 16);
    }
    memcpy(rc->peer_gid, remote->gid, 16);
    memcpy(rc->src_gid, port->gid, 16);
    if (qp->rc_src)
        memcpy(rc->src_gid + 12, &qp->rc_src, 4);
    if (!mtu || mtu > rnic_mtu_bytes(port->mtu))
        mtu = rnic_mtu_bytes(port->mtu);
    rc->mtu = mtu;
    rc->rto_ns = 4096ull << (a->set ? a->timeout : port->rc_timeout);
    rc->retry_left = a->set ? a->retry_cnt : 7;
    rc->rnr_left = a->set ? a->rnr_retry : 7;
    rc->npsn = rc->una = rc->tx_psn = sn_psn(qp->rc_ipsn);
    rc->epsn = sn_psn(be32_to_cpu(remote->psn));
    rc->tm.pos = SN_TIMER_IDLE;
    rc->tm.kind = SN_TM_RC;
    sn_list_init(&rc->ack_link);
    qp->peer_qpn = be32_to_cpu(remote->qpn) & ROCE_QPN_MASK;
    store_release(&qp->rc, rc);
    return 0;
}

void sn_rc_free(struct sn_qp *qp)
{
    struct sn_rc *rc = qp->rc;

    if (!rc)
        return;
    for (uint32_t i = rc->q_head; i != rc->q_tail; i++) {
        free(rc->q[i & rc->q_mask].req);
        free(rc->q[i & rc->q_mask].resp);
        free(rc->q[i & rc->q_mask].have);
    }
    free(rc->asm_msg);
    free(rc->q);
    free(rc);
    qp->rc = NULL;
}

/* ---- sending ---------------------------------------------------------- */

static socklen_t sn_sa_len(const union sn_sockaddr *a)
{
    return a->sa.sa_family == AF_INET ? sizeof(a->v4) : sizeof(a->v6);
}

/*
 * The IP and UDP headers the kernel will put in front of n bytes of
 * BTH..ICRC sent from our UDP socket from src_gid to dst, for the ICRC (IPv4:
 * ID 0, an unconnected socket's, and DF set). Fields the ICRC masks stay 0;
 * roce_icrc() sets them to ones. Returns the IP header's length.
 */
static size_t sn_rc_pseudo(const struct sn_roce_port *port,
                           const uint8_t *src_gid, const union sn_sockaddr *dst,
                           size_t n, uint8_t *ip, uint8_t *udp)
{
    uint16_t ulen = htons((uint16_t)(ROCE_UDP_LEN + n));
    uint16_t tot = htons((uint16_t)(20 + ROCE_UDP_LEN + n));
    uint16_t sport = htons(port->port), df = htons(IP_DF);

    memcpy(udp, &sport, 2);
    memcpy(udp + 4, &ulen, 2);
    udp[6] = udp[7] = 0;
    if (dst->sa.sa_family == AF_INET6) {
        memset(ip, 0, 40);
        ip[0] = 0x60;
        memcpy(ip + 4, &ulen, 2); /* payload length: UDP and on */
        ip[6] = IPPROTO_UDP;
        memcpy(ip + 8, src_gid, 16);
        memcpy(ip + 24, &dst->v6.sin6_addr, 16);
        memcpy(udp + 2, &dst->v6.sin6_port, 2);
        return 40;
    }
    memset(ip, 0, 20);
    ip[0] = 0x45;
    memcpy(ip + 2, &tot, 2);
    memcpy(ip + 6, &df, 2);
    ip[9] = IPPROTO_UDP;
    memcpy(ip + 12, src_gid + 12, 4);
    memcpy(ip + 16, &dst->v4.sin_addr, 4);
    memcpy(udp + 2, &dst->v4.sin_port, 2);
    return 20;
}

/* Sends n bytes to rc's peer, from rc's address when the port has many. */
static ssize_t sn_rc_sendto(const struct sn_roce_port *port,
                            const struct sn_rc *rc, const void *buf, size_t n)
{
    union {
        struct cmsghdr h;
        uint8_t b[CMSG_SPACE(sizeof(struct in_pktinfo))];
    } ctl;
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = n};
    struct msghdr m = {.msg_name = (void *)&rc->peer.sa,
                       .msg_namelen = sn_sa_len(&rc->peer),
                       .msg_iov = &iov,
                       .msg_iovlen = 1};
    struct in_pktinfo pi = {0};

    if (port->any) { /* IPv4 only */
        memcpy(&pi.ipi_spec_dst, rc->src_gid + 12, 4);
        memset(&ctl, 0, sizeof(ctl));
        m.msg_control = ctl.b;
        m.msg_controllen = sizeof(ctl.b);
        ctl.h.cmsg_level = IPPROTO_IP;
        ctl.h.cmsg_type = IP_PKTINFO;
        ctl.h.cmsg_len = CMSG_LEN(sizeof(pi));
        memcpy(CMSG_DATA(&ctl.h), &pi, sizeof(pi));
    }
    return sendmsg(port->udp_fd, &m, 0);
}

/* Encodes h (+ payload), adds the ICRC and sends it to the peer. */
static void sn_rc_xmit(struct sn_qp *qp, struct roce_hdr *h,
                       const void *payload, uint32_t len)
{
    struct sn_roce_port *port = qp->dev->eng->roce;
    struct sn_rc *rc = qp->rc;
    uint8_t buf[SN_RC_MAX_PKT], ip[40], udp[ROCE_UDP_LEN];
    size_t n, il;

    h->pkey = ROCE_DEFAULT_PKEY;
    h->dqpn = qp->peer_qpn;
    h->psn = sn_psn(h->psn);
    n = roce_encode(buf, sizeof(buf), h, payload, len);
    if (!n)
        return;
    il = sn_rc_pseudo(port, rc->src_gid, &rc->peer, n, ip, udp);
    roce_icrc_put(buf + n - ROCE_ICRC_LEN,
                  roce_icrc(ip, il, udp, buf, n - ROCE_ICRC_LEN));
    if (sn_rc_sendto(port, rc, buf, n) == (ssize_t)n)
        sn_stat(&port->st.tx_pkts);
}

static uint32_t sn_rc_npkt(const struct sn_rc *rc, uint32_t len)
{
    return len ? (len + rc->mtu - 1) / rc->mtu : 1;
}

/* The AETH syndrome of an ACK: the receive credits qp can offer. */
static uint8_t sn_rc_credits(struct sn_qp *qp)
{
    if (!qp->rq_cnt)
        return ROCE_CREDITS_INVALID;
    return roce_credit_code(sn_rq_avail(qp));
}

static void sn_rc_send_aeth(struct sn_qp *qp, uint8_t opcode, uint32_t psn,
                            uint8_t syndrome, uint64_t orig)
{
    struct roce_hdr h = {
        .opcode = opcode,
        .psn = psn,
        .syndrome = syndrome,
        .msn = qp->rc->msn,
        .orig = orig,
    };

    sn_rc_xmit(qp, &h, NULL, 0);
}

/* Sends the pending coalesced ACK of qp now. */
static void sn_rc_ack_now(struct sn_qp *qp)
{
    struct sn_rc *rc = qp->rc;

    if (!rc->ack_pending)
        return;
    rc->ack_pending = false;
    sn_list_del(&rc->ack_link);
    sn_rc_send_aeth(qp, ROCE_ACK, rc->ack_psn,
                    ROCE_AETH_ACK | sn_rc_credits(qp), 0);
}

static void sn_rc_ack_later(struct sn_thread *t, struct sn_qp *qp, uint32_t psn)
{
    struct sn_rc *rc = qp->rc;

    rc->ack_psn = psn;
    if (!rc->ack_pending) {
        rc->ack_pending = true;
        sn_list_add_tail(&t->rc_acks, &rc->ack_link);
    }
}

int sn_rc_flush_acks(struct sn_thread *t)
{
    int n = 0;

    while (!sn_list_empty(&t->rc_acks)) {
        struct sn_rc *rc =
            sn_container_of(t->rc_acks.next, struct sn_rc, ack_link);

        sn_rc_ack_now(rc->qp);
        n++;
    }
    return n;
}

/* ---- requester -------------------------------------------------------- */

static bool sn_rc_is_rd(uint8_t type)
{
    return type == SN_PKT_READ || type == SN_PKT_CAS || type == SN_PKT_FADD;
}

/* Sends packet tx_psn of message m and advances tx_psn past it. */
static void sn_rc_send_req(struct sn_qp *qp, struct sn_rc_msg *m)
{
    struct sn_rc *rc = qp->rc;
    const struct sn_pkt *r = m->req;
    uint32_t k = sn_psn(rc->tx_psn - m->psn), off = k * rc->mtu;
    struct roce_hdr h = {.psn = rc->tx_psn};
    uint32_t len = 0;
    bool first = k == 0, last = k + 1 == m->npkt;
    bool imm = r->h.type == SN_PKT_SEND_IMM || r->h.type == SN_PKT_WRITE_IMM;

    switch (r->h.type) {
    case SN_PKT_READ:
        h.opcode = ROCE_READ_REQ;
        h.va = r->h.raddr + off;
        h.rkey = r->h.rkey;
        h.dma_len = r->h.len - off;
        h.ackreq = true;
        rc->tx_psn = sn_psn(m->psn + m->npkt);
        sn_rc_xmit(qp, &h, NULL, 0);
        return;
    case SN_PKT_CAS:
    case SN_PKT_FADD:
        h.opcode = r->h.type == SN_PKT_CAS ? ROCE_CMP_SWAP : ROCE_FETCH_ADD;
        h.va = r->h.raddr;
        h.rkey = r->h.rkey;
        h.swap_add = r->h.swap_add;
        h.compare = r->h.compare;
        h.ackreq = true;
        rc->tx_psn = sn_psn(rc->tx_psn + 1);
        sn_rc_xmit(qp, &h, NULL, 0);
        return;
    case SN_PKT_SEND:
    case SN_PKT_SEND_IMM:
        h.opcode = first && last ? ROCE_SEND_ONLY
                   : first       ? ROCE_SEND_FIRST
                   : last        ? ROCE_SEND_LAST
                                 : ROCE_SEND_MIDDLE;
        if (imm && last)
            h.opcode++; /* the _IMM variant follows each LAST / ONLY */
        break;
    default: /* WRITE, WRITE_IMM */
        h.opcode = first && last ? ROCE_WRITE_ONLY
                   : first       ? ROCE_WRITE_FIRST
                   : last        ? ROCE_WRITE_LAST
                                 : ROCE_WRITE_MIDDLE;
        if (imm && last)
            h.opcode++;
        h.va = r->h.raddr;
        h.rkey = r->h.rkey;
        h.dma_len = r->h.len;
        break;
    }
    len = r->h.len - off < rc->mtu ? r->h.len - off : rc->mtu;
    h.imm = r->h.imm;
    h.se = last && (r->h.flags & SN_PKT_F_SOLICITED);
    h.ackreq = last || (k + 1) % SN_RC_ACKREQ == 0;
    rc->tx_psn = sn_psn(rc->tx_psn + 1);
    sn_rc_xmit(qp, &h, r->data + off, len);
}

static void sn_rc_arm(struct sn_thread *t, struct sn_rc *rc, uint64_t at)
{
    sn_timer_cancel(t, &rc->tm);
    rc->tm.at = at;
    sn_timer_add(t, &rc->tm);
}

/* Is anything sent and not yet acknowledged or answered? */
static bool sn_rc_outstanding(const struct sn_rc *rc)
{
    return roce_psn_diff(rc->tx_psn, rc->una) > 0;
}

/*
 * May message m go out now? Only its first transmission asks the credits:
 * a message sent before was allowed then.
 */
static bool sn_rc_may_start(struct sn_qp *qp, const struct sn_rc_msg *m)
{
    struct sn_rc *rc = qp->rc;

    if (roce_psn_diff(m->ssn, rc->sent_ssn) <= 0 || !m->recv ||
        rc->cred_unlimited || (int32_t)(m->nrecv - rc->cred_nrecv) <= 0 ||
        rc->acked_nrecv + 1 == m->nrecv)
        return true;
    if (rc->held_ssn != m->ssn) {
        rc->held_ssn = m->ssn;
        sn_stat(&qp->dev->eng->roce->st.credit_waits);
    }
    return false;
}

/*
 * The credit count of an ACK, atomic ACK or READ response (AETH with an
 * ACK syndrome): receives for cred_nrecv messages, counting from the
 * message its MSN names. Older counts, and MSNs of messages not sent, are
 * ignored.
 */
static void sn_rc_credit(struct sn_rc *rc, const struct roce_hdr *h)
{
    uint8_t code = h->syndrome & 0x1f;
    uint32_t base;

    if (roce_psn_diff(h->msn, rc->cred_msn) < 0 ||
        roce_psn_diff(h->msn, rc->sent_ssn) > 0)
        return;
    if (h->msn == rc->acked_ssn) {
        base = rc->acked_nrecv;
    } else {
        uint32_t i =
            rc->q_head +
            (uint32_t)roce_psn_diff(h->msn, rc->q[rc->q_head & rc->q_mask].ssn);

        if (rc->q_head == rc->q_tail ||
            roce_psn_diff(h->msn, rc->acked_ssn) < 0 ||
            (int32_t)(i - rc->q_head) < 0 || (int32_t)(rc->q_tail - i) <= 0)
            return;
        base = rc->q[i & rc->q_mask].nrecv;
    }
    rc->cred_msn = h->msn;
    rc->cred_unlimited = code == ROCE_CREDITS_INVALID;
    rc->cred_nrecv = base + roce_credit_count(code);
}

/* Transmits what the window and the credits allow; arms the ACK timer. */
static void sn_rc_push(struct sn_thread *t, struct sn_qp *qp)
{
    struct sn_rc *rc = qp->rc;

    while (!rc->rnr_wait && rc->tx_i != rc->q_tail &&
           roce_psn_diff(rc->tx_psn, rc->una) < SN_RC_WINDOW) {
        struct sn_rc_msg *m = &rc->q[rc->tx_i & rc->q_mask];

        if (m->done) { /* answered already: going back skips it */
            rc->tx_psn = sn_psn(m->psn + m->npkt);
            rc->tx_i++;
            continue;
        }
        if (!sn_rc_may_start(qp, m))
            break; /* in order: everything behind it waits too */
        if (roce_psn_diff(m->ssn, rc->sent_ssn) > 0)
            rc->sent_ssn = m->ssn;
        sn_rc_send_req(qp, m);
        if (roce_psn_diff(rc->tx_psn, m->psn + m->npkt) >= 0)
            rc->tx_i++;
    }
    if (!rc->rnr_wait && sn_rc_outstanding(rc) && rc->tm.pos == SN_TIMER_IDLE)
        sn_rc_arm(t, rc, sn_now_ns() + rc->rto_ns);
}

/* Points the transmitter back at psn (inside the queue). */
static void sn_rc_goback(struct sn_qp *qp, uint32_t psn)
{
    struct sn_rc *rc = qp->rc;
    struct sn_roce_port *port = qp->dev->eng->roce;
    uint32_t i;

    for (i = rc->q_head; i != rc->q_tail; i++) {
        const struct sn_rc_msg *m = &rc->q[i & rc->q_mask];

        if (roce_psn_diff(psn, m->psn + m->npkt) < 0)
            break;
    }
    if (i == rc->q_tail)
        return;
    if (roce_psn_diff(rc->tx_psn, psn) > 0)
        fetch_add_relaxed(&port->st.retrans,
                          (uint64_t)roce_psn_diff(rc->tx_psn, psn));
    rc->tx_i = i;
    rc->tx_psn = psn;
    if (roce_psn_diff(psn, rc->q[i & rc->q_mask].psn) < 0)
        rc->tx_psn = rc->q[i & rc->q_mask].psn;
}

/* Hands message m's result to the engine (which completes the WQE). */
static void sn_rc_finish(struct sn_thread *t, struct sn_qp *qp,
                         struct sn_rc_msg *m, uint8_t status)
{
    struct sn_pkt *req = m->req, *p = m->resp ? m->resp : req;
    uint8_t type = req->h.type;
    uint32_t psn = req->h.psn, len = req->h.len;

    m->req = m->resp = NULL;
    free(m->have);
    m->have = NULL;
    memset(&p->h, 0, sizeof(p->h));
    p->h.psn = psn;
    p->h.dst_qpn = qp->qpn;
    p->h.src_qpn = qp->peer_qpn;
    if (status) {
        p->h.type = SN_PKT_NAK;
        p->h.status = status;
    } else if (type == SN_PKT_READ) {
        p->h.type = SN_PKT_READ_RESP;
        p->h.len = len;
    } else if (sn_rc_is_rd(type)) {
        p->h.type = SN_PKT_ATOMIC_RESP;
        p->h.len = 8;
        memcpy(p->data, &m->orig, 8); /* as it was in the peer's memory */
    } else {
        p->h.type = SN_PKT_ACK;
    }
    p->tm.at = 0;
    sn_qp_response(t, qp, p);
    sn_pkt_free(t, p);
    if (p != req)
        sn_pkt_free(t, req);
}

/* Completes, in order, the messages that are acknowledged or answered. */
static void sn_rc_retire(struct sn_thread *t, struct sn_qp *qp)
{
    struct sn_rc *rc = qp->rc;

    while (rc->q_head != rc->q_tail) {
        struct sn_rc_msg *m = &rc->q[rc->q_head & rc->q_mask];
        bool rd = sn_rc_is_rd(m->req->h.type);

        if (rd ? !m->done : roce_psn_diff(rc->una, m->psn + m->npkt) < 0)
            break;
        rc->q_head++;
        rc->acked_ssn = m->ssn;
        rc->acked_nrecv = m->nrecv;
        if ((int32_t)(rc->tx_i - rc->q_head) < 0) {
            /* went back before an answered READ: nothing to resend */
            rc->tx_i = rc->q_head;
            rc->tx_psn = sn_psn(m->psn + m->npkt);
        }
        sn_rc_finish(t, qp, m, 0);
        if (!qp->rc || load_acquire(&qp->state) != RNIC_QPS_RTS)
            return;
    }
}

/* Forward progress: restore the retry counts, restart the timer. */
static void sn_rc_progress(struct sn_thread *t, struct sn_qp *qp)
{
    struct sn_rc *rc = qp->rc;
    const struct rnic_qp_rc_attr *a = &qp->rc_attr;

    rc->retry_left = a->set ? a->retry_cnt : 7;
    rc->rnr_left = a->set ? a->rnr_retry : 7;
    sn_timer_cancel(t, &rc->tm);
}

/* Fails the oldest unfinished message with status (retries exhausted). */
static void sn_rc_fail_head(struct sn_thread *t, struct sn_qp *qp,
                            uint8_t status)
{
    struct sn_rc *rc = qp->rc;
    struct sn_rc_msg *m;

    sn_rc_retire(t, qp);
    if (!qp->rc || rc->q_head == rc->q_tail)
        return;
    sn_stat(&qp->dev->eng->roce->st.errors);
    m = &rc->q[rc->q_head++ & rc->q_mask];
    sn_rc_finish(t, qp, m, status); /* the engine fails the QP */
}

/*
 * The acknowledgement of everything before psn (an ACK for psn - 1, or a
 * response or NAK for psn). A READ or atomic before psn that is still
 * unanswered lost its response: returns false after pointing the
 * transmitter back at it (implied NAK), and una stops there.
 */
static bool sn_rc_acked_upto(struct sn_thread *t, struct sn_qp *qp,
                             uint32_t psn)
{
    struct sn_rc *rc = qp->rc;

    for (uint32_t i = rc->q_head; i != rc->tx_i; i++) {
        struct sn_rc_msg *m = &rc->q[i & rc->q_mask];
        uint32_t resume;

        if (roce_psn_diff(m->psn, psn) >= 0)
            break;
        if (!sn_rc_is_rd(m->req->h.type) || m->done)
            continue;
        if (roce_psn_diff(psn, m->psn + m->npkt) < 0)
            break; /* psn is inside this READ's response */
        resume = sn_psn(m->psn + m->got / rc->mtu);
        if (roce_psn_diff(resume, rc->una) > 0)
            rc->una = resume;
        sn_rc_goback(qp, resume);
        sn_rc_progress(t, qp);
        return false;
    }
    if (roce_psn_diff(psn, rc->una) > 0) {
        rc->una = psn;
        sn_rc_progress(t, qp);
    }
    return true;
}

/* The queued message holding psn among those sent, or NULL. */
static struct sn_rc_msg *sn_rc_find(struct sn_rc *rc, uint32_t psn)
{
    for (uint32_t i = rc->q_head; i != rc->tx_i + (rc->tx_i != rc->q_tail);
         i++) {
        struct sn_rc_msg *m = &rc->q[i & rc->q_mask];

        if (roce_psn_diff(psn, m->psn) >= 0 &&
            roce_psn_diff(psn, m->psn + m->npkt) < 0)
            return m;
    }
    return NULL;
}

static uint8_t sn_rc_nak_status(uint8_t code)
{
    switch (code) {
    case ROCE_NAK_REM_ACC:
        return RNIC_WC_REM_ACCESS_ERR;
    case ROCE_NAK_REM_OP:
        return RNIC_WC_REM_OP_ERR;
    default:
        return RNIC_WC_REM_INV_REQ_ERR;
    }
}

/*
 * A READ response packet. Each one lands where its PSN says, in any order
 * (m->have marks them), so reordering costs nothing; a packet beyond the
 * first missing one also asks for the rest again at once (once per ACK
 * timeout: older copies of the response are still arriving and look like
 * gaps), with a READ request for the bytes from the first missing packet.
 */
static bool sn_rc_read_resp(struct sn_thread *t, struct sn_qp *qp,
                            const struct roce_hdr *h)
{
    struct sn_rc *rc = qp->rc;
    struct sn_rc_msg *m = sn_rc_find(rc, h->psn);
    unsigned f = roce_op_flags(h->opcode);
    uint32_t k, len, want, first;

    if (!m || m->req->h.type != SN_PKT_READ || m->done)
        return false;
    k = sn_psn(h->psn - m->psn);
    len = m->req->h.len;
    want = k + 1 == m->npkt ? len - k * rc->mtu : rc->mtu;
    if (!(f & ROCE_F_LAST) != (k + 1 != m->npkt) || h->len != want ||
        ((f & ROCE_F_AETH) && (h->syndrome & 0xe0) != ROCE_AETH_ACK))
        return false;
    if (!m->resp && !(m->resp = sn_pkt_alloc(t, len)))
        return false; /* asked again after the timeout */
    if (!m->have && !(m->have = calloc((m->npkt + 7) / 8, 1)))
        return false;
    if (m->have[k / 8] & (1u << (k % 8)))
        return false; /* a copy from a request asked again */
    if (f & ROCE_F_AETH)
        sn_rc_credit(rc, h);
    /* The responder is alive: asking again now would only queue another
     * copy of the response behind the one still arriving. */
    sn_rc_arm(t, rc, sn_now_ns() + rc->rto_ns);
    if (!sn_rc_acked_upto(t, qp, m->psn))
        return true; /* an earlier READ lost its response */
    memcpy(m->resp->data + (size_t)k * rc->mtu, h->payload, h->len);
    m->have[k / 8] |= (uint8_t)(1u << (k % 8));
    first = m->got / rc->mtu;
    if (k > first && !m->gap) {
        m->gap = true;
        sn_rc_goback(qp, sn_psn(m->psn + first));
        sn_rc_push(t, qp);
    }
    if (k != first)
        return true;
    while (first < m->npkt && (m->have[first / 8] & (1u << (first % 8))))
        first++;
    m->got = first == m->npkt ? len : first * rc->mtu;
    rc->una = sn_psn(m->psn + first);
    m->done = first == m->npkt;
    sn_rc_progress(t, qp);
    return true;
}

/* ACK, NAK, READ response or atomic ACK for the requester. */
static bool sn_rc_response(struct sn_thread *t, struct sn_qp *qp,
                           const struct roce_hdr *h)
{
    struct sn_rc *rc = qp->rc;
    struct sn_roce_port *port = qp->dev->eng->roce;
    uint8_t syn = h->syndrome;
    struct sn_rc_msg *m;

    if (h->opcode >= ROCE_READ_RESP_FIRST && h->opcode <= ROCE_READ_RESP_ONLY)
        return sn_rc_read_resp(t, qp, h);
    if (h->opcode == ROCE_ATOMIC_ACK) {
        m = sn_rc_find(rc, h->psn);
        if (!m || !sn_rc_is_rd(m->req->h.type) ||
            m->req->h.type == SN_PKT_READ || m->done)
            return false;
        sn_rc_credit(rc, h);
        if (sn_rc_acked_upto(t, qp, h->psn)) {
            m->orig = h->orig;
            m->done = true;
            rc->una = sn_psn(h->psn + 1);
            sn_rc_progress(t, qp);
        }
        return true;
    }
    /* ACK opcode: positive ACK, RNR NAK or NAK (AETH syndrome). */
    if (roce_psn_diff(h->psn, rc->tx_psn) >= 0 ||
        roce_psn_diff(h->psn, rc->una) < -1)
        return false;
    switch (syn & 0xe0) {
    case ROCE_AETH_ACK:
        sn_rc_credit(rc, h);
        sn_rc_acked_upto(t, qp, sn_psn(h->psn + 1));
        return true;
    case ROCE_AETH_RNR:
        sn_stat(&port->st.rnr_naks_rx);
        if (!sn_rc_acked_upto(t, qp, h->psn))
            return true;
        if (qp->rc_attr.set && qp->rc_attr.rnr_retry != 7 &&
            rc->rnr_left-- == 0) {
            sn_rc_fail_head(t, qp, RNIC_WC_RNR_RETRY_EXC_ERR);
            return true;
        }
        sn_rc_goback(qp, h->psn);
        rc->rnr_wait = true;
        sn_rc_arm(t, rc, sn_now_ns() + roce_rnr_ns(syn & 0x1f));
        return true;
    case ROCE_AETH_NAK:
        if ((syn & 0x1f) == ROCE_NAK_PSN_SEQ) {
            sn_stat(&port->st.seq_naks_rx);
            if (sn_rc_acked_upto(t, qp, h->psn))
                sn_rc_goback(qp, h->psn);
            return true;
        }
        if (!sn_rc_acked_upto(t, qp, h->psn))
            return true;
        sn_rc_retire(t, qp);
        if (!qp->rc || rc->q_head == rc->q_tail)
            return true;
        m = &rc->q[rc->q_head & rc->q_mask];
        if (roce_psn_diff(h->psn, m->psn) < 0 ||
            roce_psn_diff(h->psn, m->psn + m->npkt) >= 0)
            return false;
        rc->q_head++;
        sn_rc_finish(t, qp, m, sn_rc_nak_status(syn & 0x1f));
        return true;
    default:
        return false;
    }
}

void sn_rc_timer(struct sn_thread *t, struct sn_timer *tm)
{
    struct sn_rc *rc = sn_container_of(tm, struct sn_rc, tm);
    struct sn_qp *qp = rc->qp;

    if (load_acquire(&qp->state) != RNIC_QPS_RTS)
        return;
    if (rc->rnr_wait) {
        rc->rnr_wait = false;
    } else if (sn_rc_outstanding(rc)) {
        sn_stat(&qp->dev->eng->roce->st.timeouts);
        if (rc->retry_left-- == 0) {
            sn_rc_fail_head(t, qp, RNIC_WC_RETRY_EXC_ERR);
            return;
        }
        for (uint32_t i = rc->q_head; i != rc->q_tail; i++)
            rc->q[i & rc->q_mask].gap = false;
        sn_rc_goback(qp, rc->una);
    }
    sn_rc_push(t, qp);
}

/* ---- responder -------------------------------------------------------- */

/* A fatal protocol error: the QP goes to ERR, the requester gets a NAK. */
static void sn_rc_fatal(struct sn_thread *t, struct sn_qp *qp, uint32_t psn,
                        uint8_t code)
{
    sn_stat(&qp->dev->eng->roce->st.errors);
    sn_qp_peer_failed(t, qp);
    sn_rc_send_aeth(qp, ROCE_ACK, psn, ROCE_AETH_NAK | code, 0);
}

/* A message-level request for the engine's responder. */
static struct sn_pkt *sn_rc_msg_new(struct sn_thread *t, struct sn_qp *qp,
                                    uint8_t type, uint32_t cap)
{
    struct sn_pkt *p = sn_pkt_alloc(t, cap);

    if (!p)
        return NULL;
    p->h.type = type;
    p->h.dst_qpn = qp->qpn;
    p->h.src_qpn = qp->peer_qpn;
    return p;
}

/* Saves an atomic's result for a duplicate of its request. */
static void sn_rc_atom_save(struct sn_rc *rc, uint32_t psn, uint64_t orig)
{
    uint32_t i = rc->atom_next++ % SN_RC_ATOMICS;

    rc->atom[i].psn = psn;
    rc->atom[i].orig = orig;
    rc->atom[i].valid = true;
}

/* A request that repeats one already executed (PSN before ePSN). */
static void sn_rc_duplicate(struct sn_thread *t, struct sn_qp *qp,
                            const struct roce_hdr *h)
{
    struct sn_rc *rc = qp->rc;
    struct sn_pkt *p;

    sn_stat(&qp->dev->eng->roce->st.dups_rx);
    switch (h->opcode) {
    case ROCE_READ_REQ: /* reads have no side effect: execute it again */
        p = sn_rc_msg_new(t, qp, SN_PKT_READ, 0);
        if (!p)
            return;
        p->h.psn = h->psn;
        p->h.raddr = h->va;
        p->h.rkey = h->rkey;
        p->h.len = h->dma_len;
        sn_rc_ack_now(qp);
        if (h->dma_len <= SN_MAX_MSG)
            sn_resp_request(t, qp, p);
        sn_pkt_free(t, p);
        return;
    case ROCE_CMP_SWAP:
    case ROCE_FETCH_ADD:
        for (unsigned i = 0; i < SN_RC_ATOMICS; i++)
            if (rc->atom[i].valid && rc->atom[i].psn == h->psn) {
                sn_rc_ack_now(qp);
                sn_rc_send_aeth(qp, ROCE_ATOMIC_ACK, h->psn,
                                ROCE_AETH_ACK | sn_rc_credits(qp),
                                rc->atom[i].orig);
            }
        return;
    default: /* SEND / WRITE: acknowledge again, once per batch */
        sn_rc_ack_later(t, qp, sn_psn(rc->epsn - 1));
        return;
    }
}

/* Hands a whole request message to the engine; false: RNR. */
static bool sn_rc_execute(struct sn_thread *t, struct sn_qp *qp,
                          struct sn_pkt *p)
{
    struct sn_rc *rc = qp->rc;
    bool ok;

    rc->msn = sn_psn(rc->msn + 1); /* the responses carry this MSN */
    ok = sn_resp_request(t, qp, p);
    if (!ok)
        rc->msn = sn_psn(rc->msn - 1);
    sn_pkt_free(t, p);
    return ok;
}

/*
 * Adds a packet's payload to the SEND / WRITE being reassembled. The
 * buffer grows up to asm_room (a SEND: plus the one packet that shows it
 * overflows its receive), so a forged peer inside the PSN window makes us
 * hold no more than the receive the application posted, or the range its
 * rkey opened to a WRITE.
 */
static int sn_rc_append(struct sn_thread *t, struct sn_rc *rc,
                        const struct roce_hdr *h)
{
    struct sn_pkt *m = rc->asm_msg;
    uint64_t need = (uint64_t)rc->asm_off + h->len, max = rc->asm_room;

    if (m->h.type == SN_PKT_SEND)
        max += rc->mtu;
    if (max > SN_MAX_MSG)
        max = SN_MAX_MSG;
    if (need > max)
        return -EINVAL;
    if (need > m->cap) {
        uint64_t cap = (uint64_t)m->cap * 2;
        struct sn_pkt *n;

        if (cap < need)
            cap = need;
        if (cap > max)
            cap = max;
        n = sn_pkt_alloc(t, (uint32_t)cap);
        if (!n)
            return -ENOMEM;
        n->h = m->h;
        memcpy(n->data, m->data, rc->asm_off);
        sn_pkt_free(t, m);
        rc->asm_msg = m = n;
    }
    memcpy(m->data + rc->asm_off, h->payload, h->len);
    rc->asm_off += h->len;
    return 0;
}

/*
 * No receive for the SEND at psn: an RNR NAK; the requester sends it again
 * after the timer. The packets of it still in flight are dropped quietly
 * (a sequence-error NAK for them would only make the requester go back
 * again).
 */
static void sn_rc_rnr(struct sn_qp *qp, uint32_t psn)
{
    struct sn_rc *rc = qp->rc;

    sn_stat(&qp->dev->eng->roce->st.rnr_naks_tx);
    rc->epsn = psn;
    rc->nak_sent = true;
    sn_rc_ack_now(qp);
    sn_rc_send_aeth(qp, ROCE_ACK, psn,
                    ROCE_AETH_RNR |
                        ((qp->rc_attr.set && qp->rc_attr.min_rnr_timer)
                             ? qp->rc_attr.min_rnr_timer
                             : 12),
                    0);
}

/*
 * A SEND or WRITE packet at ePSN. A SEND is bounded by the receive it
 * will consume (posted when its first packet comes: none is an RNR right
 * away); the packet that overflows it ends the message there, and the
 * engine's responder finds it too long (a local length error for the
 * receive, an invalid-request NAK).
 */
static void sn_rc_data(struct sn_thread *t, struct sn_qp *qp,
                       const struct roce_hdr *h, unsigned f)
{
    struct sn_rc *rc = qp->rc;
    bool send = h->opcode <= ROCE_SEND_ONLY_IMM;
    struct sn_pkt *m;
    bool over;

    if (f & ROCE_F_FIRST) {
        uint32_t cap = rc->mtu;

        if (send && !sn_rq_head_room(qp, &rc->asm_room)) {
            sn_rc_rnr(qp, h->psn);
            return;
        }
        if (!send) {
            struct sn_pkt probe = {.h = {.raddr = h->va, .rkey = h->rkey}};

            if (h->dma_len > SN_MAX_MSG) {
                sn_rc_fatal(t, qp, h->psn, ROCE_NAK_INV_REQ);
                return;
            }
            /* Only a valid rkey and range may make us hold a buffer. */
            if (!sn_remote_xlate(t, qp, &probe, h->dma_len,
                                 RNIC_ACCESS_REMOTE_WRITE)) {
                sn_rc_fatal(t, qp, h->psn, ROCE_NAK_REM_ACC);
                return;
            }
            cap = h->dma_len;
            rc->asm_room = h->dma_len;
        }
        rc->asm_msg =
            sn_rc_msg_new(t, qp, send ? SN_PKT_SEND : SN_PKT_WRITE, cap);
        if (!rc->asm_msg)
            return; /* not accepted: the requester sends it again */
        rc->asm_msg->h.raddr = h->va;
        rc->asm_msg->h.rkey = h->rkey;
        rc->asm_msg->h.len = h->dma_len; /* WRITE: what must arrive */
        rc->asm_psn = h->psn;
        rc->asm_off = 0;
    }
    if (sn_rc_append(t, rc, h) < 0) {
        sn_rc_fatal(t, qp, h->psn, ROCE_NAK_INV_REQ);
        return;
    }
    rc->epsn = sn_psn(rc->epsn + 1);
    rc->nak_sent = false;
    over = send && rc->asm_off > rc->asm_room;
    if (!(f & ROCE_F_LAST) && !over) {
        if (h->ackreq)
            sn_rc_ack_later(t, qp, h->psn);
        return;
    }
    m = rc->asm_msg;
    rc->asm_msg = NULL;
    if (!send && rc->asm_off != m->h.len) {
        sn_pkt_free(t, m);
        sn_rc_fatal(t, qp, h->psn, ROCE_NAK_INV_REQ);
        return;
    }
    m->h.len = rc->asm_off;
    m->h.psn = h->psn;
    m->h.imm = h->imm;
    if (f & ROCE_F_IMM)
        m->h.type = send ? SN_PKT_SEND_IMM : SN_PKT_WRITE_IMM;
    if (h->se)
        m->h.flags |= SN_PKT_F_SOLICITED;
    if (!sn_rc_execute(t, qp, m)) /* no receive enabled yet */
        sn_rc_rnr(qp, rc->asm_psn);
}

/* A request packet (responder side). */
static void sn_rc_request(struct sn_thread *t, struct sn_qp *qp,
                          const struct roce_hdr *h)
{
    struct sn_rc *rc = qp->rc;
    unsigned f = roce_op_flags(h->opcode);
    int32_t d = roce_psn_diff(h->psn, rc->epsn);
    struct sn_pkt *p;

    if (d < 0) {
        sn_rc_duplicate(t, qp, h);
        return;
    }
    if (d > 0) { /* a gap: one NAK until ePSN arrives */
        if (!rc->nak_sent) {
            rc->nak_sent = true;
            sn_stat(&qp->dev->eng->roce->st.seq_naks_tx);
            sn_rc_ack_now(qp);
            sn_rc_send_aeth(qp, ROCE_ACK, rc->epsn,
                            ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, 0);
        }
        return;
    }
    /* In sequence: the opcode must fit the message in progress. */
    if (rc->asm_msg) {
        bool send = rc->asm_msg->h.type == SN_PKT_SEND;
        uint8_t mid = send ? ROCE_SEND_MIDDLE : ROCE_WRITE_MIDDLE;

        if (h->opcode < mid || h->opcode > mid + 2) {
            sn_rc_fatal(t, qp, h->psn, ROCE_NAK_INV_REQ);
            return;
        }
    } else if (!(f & ROCE_F_FIRST)) {
        sn_rc_fatal(t, qp, h->psn, ROCE_NAK_INV_REQ);
        return;
    }
    if ((f & ROCE_F_PAYLOAD) &&
        ((f & ROCE_F_LAST) ? h->len > rc->mtu : h->len != rc->mtu)) {
        sn_rc_fatal(t, qp, h->psn, ROCE_NAK_INV_REQ);
        return;
    }
    if (f & ROCE_F_PAYLOAD) {
        sn_rc_data(t, qp, h, f);
        return;
    }
    if (h->opcode == ROCE_READ_REQ && h->dma_len > SN_MAX_MSG) {
        sn_rc_fatal(t, qp, h->psn, ROCE_NAK_INV_REQ);
        return;
    }
    p = sn_rc_msg_new(t, qp,
                      h->opcode == ROCE_READ_REQ   ? SN_PKT_READ
                      : h->opcode == ROCE_CMP_SWAP ? SN_PKT_CAS
                                                   : SN_PKT_FADD,
                      0);
    if (!p)
        return;
    p->h.psn = h->psn;
    p->h.raddr = h->va;
    p->h.rkey = h->rkey;
    p->h.len = h->opcode == ROCE_READ_REQ ? h->dma_len : 8;
    p->h.swap_add = h->swap_add;
    p->h.compare = h->compare;
    rc->epsn =
        sn_psn(rc->epsn +
               (h->opcode == ROCE_READ_REQ ? sn_rc_npkt(rc, h->dma_len) : 1));
    rc->nak_sent = false;
    sn_rc_execute(t, qp, p);
}

/* ---- the engine's side ------------------------------------------------ */

/* Segments a READ response (PSNs from psn on). */
static void sn_rc_send_read_resp(struct sn_qp *qp, uint32_t psn,
                                 const uint8_t *data, uint32_t len)
{
    struct sn_rc *rc = qp->rc;
    uint32_t n = sn_rc_npkt(rc, len);

    for (uint32_t k = 0; k < n; k++) {
        uint32_t off = k * rc->mtu;
        struct roce_hdr h = {
            .psn = psn + k,
            .syndrome = ROCE_AETH_ACK | sn_rc_credits(qp),
            .msn = rc->msn,
        };

        h.opcode = n == 1       ? ROCE_READ_RESP_ONLY
                   : k == 0     ? ROCE_READ_RESP_FIRST
                   : k + 1 == n ? ROCE_READ_RESP_LAST
                                : ROCE_READ_RESP_MIDDLE;
        sn_rc_xmit(qp, &h, data + off,
                   len - off < rc->mtu ? len - off : rc->mtu);
    }
}

static uint8_t sn_rc_nak_code(uint8_t status)
{
    switch (status) {
    case RNIC_WC_REM_ACCESS_ERR:
        return ROCE_NAK_REM_ACC;
    case RNIC_WC_REM_OP_ERR:
        return ROCE_NAK_REM_OP;
    default:
        return ROCE_NAK_INV_REQ;
    }
}

void sn_rc_output(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p)
{
    struct sn_rc *rc = qp->rc;
    uint64_t orig;

    switch (p->h.type) {
    case SN_PKT_ACK:
        sn_rc_ack_later(t, qp, p->h.psn);
        break;
    case SN_PKT_READ_RESP:
        sn_rc_ack_now(qp);
        sn_rc_send_read_resp(qp, p->h.psn, p->data, p->h.len);
        break;
    case SN_PKT_ATOMIC_RESP:
        memcpy(&orig, p->data, 8);
        sn_rc_atom_save(rc, p->h.psn, orig);
        sn_rc_ack_now(qp);
        sn_rc_send_aeth(qp, ROCE_ATOMIC_ACK, p->h.psn,
                        ROCE_AETH_ACK | sn_rc_credits(qp), orig);
        break;
    case SN_PKT_NAK:
        /* Not connected / not RTS: silence, the requester times out. */
        if (p->h.status != RNIC_WC_RETRY_EXC_ERR) {
            sn_rc_ack_now(qp);
            sn_rc_send_aeth(qp, ROCE_ACK, p->h.psn,
                            ROCE_AETH_NAK | sn_rc_nak_code(p->h.status), 0);
        }
        break;
    case SN_PKT_WRITE:
    case SN_PKT_WRITE_IMM:
    case SN_PKT_SEND:
    case SN_PKT_SEND_IMM:
    case SN_PKT_READ:
    case SN_PKT_CAS:
    case SN_PKT_FADD:
        if (load_acquire(&qp->state) != RNIC_QPS_RTS ||
            rc->q_tail - rc->q_head > rc->q_mask)
            break; /* flushed by the engine */
        struct sn_rc_msg *m = &rc->q[rc->q_tail++ & rc->q_mask];

        memset(m, 0, sizeof(*m));
        m->req = p;
        m->psn = rc->npsn;
        m->npkt = p->h.type == SN_PKT_CAS || p->h.type == SN_PKT_FADD
                      ? 1
                      : sn_rc_npkt(rc, p->h.len);
        rc->npsn = sn_psn(rc->npsn + m->npkt);
        m->recv = p->h.type == SN_PKT_SEND || p->h.type == SN_PKT_SEND_IMM ||
                  p->h.type == SN_PKT_WRITE_IMM;
        rc->ssn = m->ssn = sn_psn(rc->ssn + 1);
        rc->nrecv = m->nrecv = rc->nrecv + m->recv;
        sn_rc_push(t, qp);
        return;
    default: /* ERR: RoCE has no such packet; the peer finds out by itself */
        break;
    }
    sn_pkt_free(t, p);
}

void sn_rc_input(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p)
{
    struct sn_rc *rc = qp->rc;
    struct roce_hdr h;

    if (load_acquire(&qp->state) != RNIC_QPS_RTS ||
        memcmp(p->data, rc->peer_gid, SN_RC_GID_LEN) != 0 ||
        memcmp(p->data + SN_RC_GID_LEN, rc->src_gid, SN_RC_GID_LEN) != 0) {
        sn_rc_drop(t, p, SN_RC_DROP_PEER);
        return;
    }
    if (roce_decode(p->data + SN_RC_ADDR_LEN, p->h.len, &h) < 0) {
        sn_rc_drop(t, p, SN_RC_DROP_BAD);
        return;
    }
    if (roce_op_flags(h.opcode) & ROCE_F_REQ) {
        sn_rc_request(t, qp, &h);
    } else if (!sn_rc_response(t, qp, &h)) {
        sn_rc_drop(t, p, SN_RC_DROP_STALE);
        return;
    } else if (qp->rc && load_acquire(&qp->state) == RNIC_QPS_RTS) {
        sn_rc_retire(t, qp);
        if (qp->rc && load_acquire(&qp->state) == RNIC_QPS_RTS)
            sn_rc_push(t, qp);
    }
    sn_pkt_free(t, p);
}

void sn_rc_drop(struct sn_thread *t, struct sn_pkt *p, enum sn_rc_drop why)
{
    struct sn_roce_port *port = t->eng->roce;

    if (port)
        sn_stat(&port->st.drops[why]);
    sn_pkt_free(t, p);
}

void sn_rc_reset(struct sn_thread *t, struct sn_qp *qp)
{
    struct sn_rc *rc = qp->rc;

    if (!rc)
        return;
    sn_timer_cancel(t, &rc->tm);
    if (rc->ack_pending) {
        rc->ack_pending = false;
        sn_list_del(&rc->ack_link);
    }
    for (; rc->q_head != rc->q_tail; rc->q_head++) {
        struct sn_rc_msg *m = &rc->q[rc->q_head & rc->q_mask];

        if (m->req)
            sn_pkt_free(t, m->req);
        if (m->resp)
            sn_pkt_free(t, m->resp);
        free(m->have);
        m->req = m->resp = NULL;
        m->have = NULL;
    }
    rc->tx_i = rc->q_head;
    if (rc->asm_msg) {
        sn_pkt_free(t, rc->asm_msg);
        rc->asm_msg = NULL;
    }
}
