/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/roce_pkt.h - the RoCEv2 packet codec: InfiniBand transport
 * headers (BTH, RETH, AETH, AtomicETH, AtomicAckETH, ImmDt) as the IBA
 * specification lays them out (Vol. 1 ch. 9, Annex A17 for RoCEv2), the
 * RC opcodes, and the invariant CRC. Pure functions on byte buffers: no
 * sockets, no engine state, so golden-byte tests can pin every field.
 *
 * A RoCEv2 packet is IPv4/IPv6 + UDP (destination port 4791) + BTH +
 * extension headers + payload + pad (to 4 bytes, BTH PadCnt) + ICRC (4
 * bytes). All header fields are big-endian on the wire.
 *
 * ICRC (A17.8): CRC-32 (the Ethernet polynomial, reflected, initial value
 * and final xor all ones, as zlib's crc32) over 8 bytes of 0xFF, the IP
 * header with its variant fields set to ones (IPv4: TOS, TTL, header
 * checksum; IPv6: traffic class, flow label, hop limit), the UDP header
 * with its checksum set to ones, the BTH with byte 4 (FECN, BECN,
 * reserved) set to ones, and everything after it up to the ICRC. The 4
 * ICRC bytes on the wire are that CRC in little-endian byte order.
 */
#ifndef RDN_SOFTNIC_ROCE_PKT_H
#define RDN_SOFTNIC_ROCE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROCE_BTH_LEN      12
#define ROCE_RETH_LEN     16
#define ROCE_AETH_LEN     4
#define ROCE_ATOMIC_LEN   28
#define ROCE_ATKACK_LEN   8
#define ROCE_IMM_LEN      4
#define ROCE_ICRC_LEN     4
#define ROCE_UDP_LEN      8
#define ROCE_PSN_MASK     0xffffffu
#define ROCE_QPN_MASK     0xffffffu
#define ROCE_DEFAULT_PKEY 0xffff
/* BTH..ICRC headroom of the largest header set (BTH + AtomicETH). */
#define ROCE_MAX_HDR (ROCE_BTH_LEN + ROCE_ATOMIC_LEN)

/* RC opcodes (transport prefix 000, BTH OpCode). */
enum roce_opcode {
    ROCE_SEND_FIRST = 0x00,
    ROCE_SEND_MIDDLE = 0x01,
    ROCE_SEND_LAST = 0x02,
    ROCE_SEND_LAST_IMM = 0x03,
    ROCE_SEND_ONLY = 0x04,
    ROCE_SEND_ONLY_IMM = 0x05,
    ROCE_WRITE_FIRST = 0x06,
    ROCE_WRITE_MIDDLE = 0x07,
    ROCE_WRITE_LAST = 0x08,
    ROCE_WRITE_LAST_IMM = 0x09,
    ROCE_WRITE_ONLY = 0x0a,
    ROCE_WRITE_ONLY_IMM = 0x0b,
    ROCE_READ_REQ = 0x0c,
    ROCE_READ_RESP_FIRST = 0x0d,
    ROCE_READ_RESP_MIDDLE = 0x0e,
    ROCE_READ_RESP_LAST = 0x0f,
    ROCE_READ_RESP_ONLY = 0x10,
    ROCE_ACK = 0x11,
    ROCE_ATOMIC_ACK = 0x12,
    ROCE_CMP_SWAP = 0x13,
    ROCE_FETCH_ADD = 0x14,
};

/* Which headers follow the BTH, and what the packet is (per opcode). */
enum roce_op_flags {
    ROCE_F_RETH = 1 << 0,
    ROCE_F_AETH = 1 << 1,
    ROCE_F_ATOMIC = 1 << 2,
    ROCE_F_ATKACK = 1 << 3,
    ROCE_F_IMM = 1 << 4,
    ROCE_F_PAYLOAD = 1 << 5,
    ROCE_F_FIRST = 1 << 6, /* first or only packet of a message */
    ROCE_F_LAST = 1 << 7,  /* last or only packet of a message */
    ROCE_F_REQ = 1 << 8,   /* requester to responder */
};

/*
 * The flags of an RC opcode, 0 for opcodes this codec does not know
 * (other transports, reserved values).
 */
unsigned roce_op_flags(uint8_t opcode);
/* The opcode's name as Wireshark prints it ("RC Send First"...). */
const char *roce_op_name(uint8_t opcode);

/* AETH syndrome (bits 7..5 type, 4..0 value). */
enum roce_syndrome {
    ROCE_AETH_ACK = 0x00,      /* | credit count code */
    ROCE_AETH_RNR = 0x20,      /* | RNR timer code */
    ROCE_AETH_NAK = 0x60,      /* | NAK code below */
    ROCE_NAK_PSN_SEQ = 0x00,   /* PSN sequence error */
    ROCE_NAK_INV_REQ = 0x01,   /* invalid request */
    ROCE_NAK_REM_ACC = 0x02,   /* remote access error */
    ROCE_NAK_REM_OP = 0x03,    /* remote operational error */
    ROCE_NAK_INV_RDREQ = 0x04, /* invalid RD request */
    ROCE_CREDITS_INVALID = 0x1f,
};

/* A decoded (or to-be-encoded) packet, from the BTH on. */
struct roce_hdr {
    uint8_t opcode;
    bool se;      /* solicited event */
    bool mig;     /* MigReq */
    uint8_t pad;  /* PadCnt, 0..3 */
    uint8_t tver; /* transport header version, 0 */
    uint16_t pkey;
    bool fecn, becn;
    uint32_t dqpn;
    bool ackreq;
    uint32_t psn;
    /* RETH */
    uint64_t va;
    uint32_t rkey;
    uint32_t dma_len;
    /* AETH */
    uint8_t syndrome;
    uint32_t msn;
    /* AtomicETH (va, rkey above) */
    uint64_t swap_add, compare;
    /* AtomicAckETH */
    uint64_t orig;
    /* ImmDt, as the 4 bytes on the wire read big-endian */
    uint32_t imm;
    /* payload (decode: points into the buffer; length without pad) */
    const uint8_t *payload;
    uint32_t len;
};

/*
 * Bytes of BTH and extension headers the opcode needs (0 if unknown).
 */
size_t roce_hdr_len(uint8_t opcode);

/*
 * Writes h's BTH and extension headers (for h->opcode) at buf, then
 * payload (len bytes, may be NULL when len is 0), then the pad, and 4
 * zero bytes for the ICRC. h->pad is computed from len. Returns the bytes
 * written (BTH..ICRC), or 0 if the opcode is unknown or cap too small.
 */
size_t roce_encode(uint8_t *buf, size_t cap, struct roce_hdr *h,
                   const void *payload, uint32_t len);

/*
 * Decodes buf (n bytes from the BTH up to and including the ICRC). Checks
 * what the headers themselves say: a known RC opcode, TVer 0, room for
 * the headers, pad and ICRC, payload only where the opcode has one, and
 * an ATOMIC/READ request with no payload. Returns 0 or -EINVAL (nothing
 * in h is then meaningful). The ICRC is not checked here.
 */
int roce_decode(const uint8_t *buf, size_t n, struct roce_hdr *h);

/*
 * The ICRC of a RoCEv2 packet: ip is the IP header (20..60 bytes of IPv4
 * or 40 of IPv6 without extension headers, version from its first
 * nibble), udp the 8-byte UDP header, bth the bytes from the BTH up to
 * (not including) the ICRC. Returns the CRC value; the wire carries it
 * little-endian (roce_icrc_put / roce_icrc_get).
 */
uint32_t roce_icrc(const uint8_t *ip, size_t ip_len, const uint8_t *udp,
                   const uint8_t *bth, size_t bth_len);

static inline void roce_icrc_put(uint8_t *p, uint32_t crc)
{
    p[0] = (uint8_t)crc;
    p[1] = (uint8_t)(crc >> 8);
    p[2] = (uint8_t)(crc >> 16);
    p[3] = (uint8_t)(crc >> 24);
}

static inline uint32_t roce_icrc_get(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* CRC-32 (zlib's) of n bytes continuing from crc (start with 0). */
uint32_t roce_crc32(uint32_t crc, const void *buf, size_t n);

/*
 * RC PSN arithmetic (24 bits): the signed distance a - b, in
 * -2^23..2^23-1.
 */
static inline int32_t roce_psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

/*
 * AETH credit count code (5 bits, IBA table 45) for n receive WQEs
 * available: the largest code whose count is at most n.
 */
uint8_t roce_credit_code(uint32_t n);
/* The receive WQE count a credit code stands for (31: UINT32_MAX). */
uint32_t roce_credit_count(uint8_t code);
/* Nanoseconds of an RNR timer code (5 bits, IBA table 46). */
uint64_t roce_rnr_ns(uint8_t code);

#endif /* RDN_SOFTNIC_ROCE_PKT_H */
