/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/roce_resp.c - the RC responder over RoCEv2: PSN checks,
 * reassembly, duplicates, and the coalesced ACKs (see roce_rc_int.h).
 *
 * Packets must come in PSN order (ePSN). Multi-packet SENDs and WRITEs are
 * reassembled and handed to the engine's responder as one message, so
 * memory is touched only once the message is whole and valid; a message
 * that finds no receive gets an RNR NAK and is sent again by the
 * requester. A packet ahead of ePSN is answered with one sequence-error
 * NAK (until ePSN arrives); a duplicate SEND/WRITE is acknowledged again,
 * a duplicate READ executed again, a duplicate atomic answered from the
 * saved result (never applied twice). ACKs are coalesced: one per QP for
 * all messages completed in one pass of the engine thread's loop, and one
 * at least every SN_RC_ACKREQ packets when the requester asks (AckReq). A
 * malformed request (opcode out of sequence, bad lengths) is fatal: the QP
 * goes to the error state and the requester gets an invalid-request NAK,
 * as the engine does for remote access and operational errors.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/softnic/roce_pkt.h"
#include "rdn/softnic/roce_rc_int.h"

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
            if (h->dma_len > SN_MAX_MSG) {
                sn_rc_fatal(t, qp, h->psn, ROCE_NAK_INV_REQ);
                return;
            }
            /* Only a valid rkey and range may make us hold a buffer. */
            if (!sn_remote_xlate(t, qp, h->rkey, h->va, h->dma_len,
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
void sn_rc_request(struct sn_thread *t, struct sn_qp *qp,
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

void sn_rc_resp_output(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p)
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
    default: /* ERR: RoCE has no such packet; the peer finds out by itself */
        break;
    }
    sn_pkt_free(t, p);
}

void sn_rc_resp_reset(struct sn_thread *t, struct sn_qp *qp)
{
    struct sn_rc *rc = qp->rc;

    if (rc->ack_pending) {
        rc->ack_pending = false;
        sn_list_del(&rc->ack_link);
    }
    if (rc->asm_msg) {
        sn_pkt_free(t, rc->asm_msg);
        rc->asm_msg = NULL;
    }
}
