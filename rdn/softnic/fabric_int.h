/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/fabric_int.h - the packets NICs exchange, and their delivery.
 *
 * RC semantics: each request a requester QP sends carries a packet sequence
 * number (psn, one per executed WQE, so gaps are local WQEs); the responder
 * answers every request exactly once, in order, with ACK, READ_RESP,
 * ATOMIC_RESP or NAK (status = the rnic_wc_status the requester reports).
 * ERR tells the peer that this QP went to the error state or away; the
 * peer then goes to the error state too. Delivery is reliable and in order
 * per (source thread, destination thread) pair, which covers every QP pair.
 *
 * Wire format (for a TCP link between two rdn-nicd daemons; today packets
 * move through in-memory queues inside one engine and the format is only
 * the struct below): a frame is a little-endian u32 frame length (header +
 * payload), then struct sn_wire (64 bytes, all fields little-endian), then
 * len payload bytes for WRITE, WRITE_IMM, SEND, SEND_IMM and READ_RESP, or
 * 8 bytes (the target's old value, as it was in memory) for ATOMIC_RESP.
 * A link starts with each side sending its engine_id in a HELLO frame
 * (type SN_PKT_HELLO, raddr = engine_id); rnic_addr carries the engine_id
 * of the QP's daemon, so a connect to another engine would pick the link
 * to that daemon. A broken link turns into ERR for every QP using it.
 */
#ifndef RDN_SOFTNIC_FABRIC_INT_H
#define RDN_SOFTNIC_FABRIC_INT_H

#include <stdint.h>

enum sn_pkt_type {
    SN_PKT_WRITE = 1,
    SN_PKT_WRITE_IMM = 2,
    SN_PKT_SEND = 3,
    SN_PKT_SEND_IMM = 4,
    SN_PKT_READ = 5,
    SN_PKT_CAS = 6,
    SN_PKT_FADD = 7,
    SN_PKT_ACK = 16,
    SN_PKT_READ_RESP = 17,
    SN_PKT_ATOMIC_RESP = 18,
    SN_PKT_NAK = 19,
    SN_PKT_ERR = 32,
    SN_PKT_HELLO = 33,
    SN_PKT_WIRE = 34, /* a RoCEv2 packet from the network (roce.c) */
};

#define SN_PKT_F_SOLICITED 0x1

struct sn_wire {
    uint8_t type;   /* enum sn_pkt_type */
    uint8_t status; /* NAK: enum rnic_wc_status for the requester */
    uint8_t flags;  /* SN_PKT_F_* */
    uint8_t rsvd0;
    uint32_t dst_qpn;
    uint32_t src_qpn;
    uint32_t psn;
    uint64_t raddr;    /* requests: remote address */
    uint32_t rkey;     /* requests: remote key */
    uint32_t len;      /* payload bytes; READ request: bytes to read */
    uint64_t swap_add; /* CAS swap / FADD addend, host order */
    uint64_t compare;  /* CAS compare, host order */
    uint32_t imm;      /* WRITE_IMM / SEND_IMM, host order */
    uint32_t rsvd1;
    uint64_t rsvd2;
};

_Static_assert(sizeof(struct sn_wire) == 64, "wire header is 64 B");

#endif /* RDN_SOFTNIC_FABRIC_INT_H */
