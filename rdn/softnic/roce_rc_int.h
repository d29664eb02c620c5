/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/roce_rc_int.h - the RC transport's state and the seams
 * between its parts: roce.c (connecting, the wire, the engine's entry
 * points), roce_req.c (the requester), roce_resp.c (the responder and
 * its coalesced ACKs). Private to roce*.c; everything here runs on the
 * QP's owner thread.
 */
#ifndef RDN_SOFTNIC_ROCE_RC_INT_H
#define RDN_SOFTNIC_ROCE_RC_INT_H

#include "rdn/softnic/roce_int.h"

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

/* Packets a message of len bytes takes at rc's path MTU (at least one). */
static inline uint32_t sn_rc_npkt(const struct sn_rc *rc, uint32_t len)
{
    return len ? (len + rc->mtu - 1) / rc->mtu : 1;
}

/* roce.c: encodes h (+ len bytes of payload), adds the ICRC and sends it
 * to qp's peer. A packet the socket refuses is lost like one on the wire. */
void sn_rc_xmit(struct sn_qp *qp, struct roce_hdr *h, const void *payload,
                uint32_t len);

/* roce_req.c: queues request message p of qp's engine and sends what the
 * window and the credits allow; takes p (freed if qp is not in RTS or its
 * queue is full: the engine flushes the WQE). */
void sn_rc_req_queue(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p);
/* roce_req.c: sends what the window and the credits allow now. */
void sn_rc_push(struct sn_thread *t, struct sn_qp *qp);
/* roce_req.c: an ACK, NAK or READ / atomic response packet for qp's
 * requester; false: stale (answers nothing outstanding). */
bool sn_rc_response(struct sn_thread *t, struct sn_qp *qp,
                    const struct roce_hdr *h);
/* roce_req.c: hands the messages answered in order to the engine. */
void sn_rc_retire(struct sn_thread *t, struct sn_qp *qp);
/* roce_req.c: drops the queued requests and cancels the timer. */
void sn_rc_req_reset(struct sn_thread *t, struct sn_qp *qp);

/* roce_resp.c: a request packet for qp's responder. */
void sn_rc_request(struct sn_thread *t, struct sn_qp *qp,
                   const struct roce_hdr *h);
/* roce_resp.c: the engine's responder answers (ACK, READ response,
 * atomic response, NAK) as packets; takes p. */
void sn_rc_resp_output(struct sn_thread *t, struct sn_qp *qp, struct sn_pkt *p);
/* roce_resp.c: drops the message being reassembled and the pending ACK. */
void sn_rc_resp_reset(struct sn_thread *t, struct sn_qp *qp);

#endif /* RDN_SOFTNIC_ROCE_RC_INT_H */
