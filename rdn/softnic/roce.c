/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/roce.c - RC over RoCEv2 for QPs whose peer is on another
 * host (see roce_int.h for where it sits in the engine): connecting a
 * QP, putting its packets on the wire, and the engine's entry points,
 * which hand messages and packets to the requester (roce_req.c) or the
 * responder (roce_resp.c).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rdn/softnic/roce_pkt.h"
#include "rdn/softnic/roce_rc_int.h"

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

/* ---- the wire --------------------------------------------------------- */

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
void sn_rc_xmit(struct sn_qp *qp, struct roce_hdr *h, const void *payload,
                uint32_t len)
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

/* ---- the engine's side ------------------------------------------------ */

void sn_rc_output(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p)
{
    switch (p->h.type) {
    case SN_PKT_WRITE:
    case SN_PKT_WRITE_IMM:
    case SN_PKT_SEND:
    case SN_PKT_SEND_IMM:
    case SN_PKT_READ:
    case SN_PKT_CAS:
    case SN_PKT_FADD:
        sn_rc_req_queue(t, qp, p);
        return;
    default:
        sn_rc_resp_output(t, qp, p);
        return;
    }
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
    if (!qp->rc)
        return;
    sn_rc_req_reset(t, qp);
    sn_rc_resp_reset(t, qp);
}
