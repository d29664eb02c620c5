/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/roce_req.c - the RC requester over RoCEv2: PSNs,
 * retransmission and end-to-end credits (see roce_rc_int.h).
 *
 * Each request message gets the next PSNs (one per packet; a READ takes as
 * many as its response has packets) and stays in the QP's queue until
 * acknowledged. una is the oldest PSN not yet acknowledged, tx_psn the
 * next one to transmit; at most SN_RC_WINDOW packets are unacknowledged.
 * An ACK for PSN p acknowledges everything up to p; a READ or atomic whose
 * response has not come although a later PSN was acknowledged or answered
 * lost its response (implied NAK) and is asked again, a READ for its
 * remaining bytes only. Sequence-error NAKs and ACK timeouts go back to
 * una (go-back-N); timeouts and sequence errors use up retry_cnt, RNR NAKs
 * rnr_retry (7: for ever); any forward progress restores both. Completed
 * messages go to the engine in order as message-level responses
 * (sn_qp_response), which completes the WQEs.
 *
 * End-to-end credits (IBA 9.7.7.2): every ACK's AETH says how many
 * receive WQEs the responder has beyond the message its MSN names; a
 * message that consumes one (SEND, WRITE with immediate) is first sent
 * only within that limit, or, with no credit, when no other such message
 * is unacknowledged (one at a time, to learn of new receives from its
 * ACK or RNR NAK), so a responder short of receives costs one message per
 * RNR round, not the whole window. Credit code 31 means no limit. Until
 * the first ACK the requester has no credit.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "rdn/softnic/roce_pkt.h"
#include "rdn/softnic/roce_rc_int.h"

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
void sn_rc_push(struct sn_thread *t, struct sn_qp *qp)
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
void sn_rc_retire(struct sn_thread *t, struct sn_qp *qp)
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
bool sn_rc_response(struct sn_thread *t, struct sn_qp *qp,
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

void sn_rc_req_queue(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p)
{
    struct sn_rc *rc = qp->rc;
    struct sn_rc_msg *m;

    if (load_acquire(&qp->state) != RNIC_QPS_RTS ||
        rc->q_tail - rc->q_head > rc->q_mask) {
        sn_pkt_free(t, p); /* flushed by the engine */
        return;
    }
    m = &rc->q[rc->q_tail++ & rc->q_mask];
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
}

void sn_rc_req_reset(struct sn_thread *t, struct sn_qp *qp)
{
    struct sn_rc *rc = qp->rc;

    sn_timer_cancel(t, &rc->tm);
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
}
