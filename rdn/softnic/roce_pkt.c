/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/roce_pkt.c - RoCEv2 headers and the ICRC (see roce_pkt.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "rdn/softnic/roce_pkt.h"

/* ---- opcodes ---------------------------------------------------------- */

#define RQ  ROCE_F_REQ
#define PL  ROCE_F_PAYLOAD
#define FST ROCE_F_FIRST
#define LST ROCE_F_LAST

static const struct {
    unsigned flags;
    const char *name;
} roce_ops[] = {
    [ROCE_SEND_FIRST] = {RQ | PL | FST, "RC Send First"},
    [ROCE_SEND_MIDDLE] = {RQ | PL, "RC Send Middle"},
    [ROCE_SEND_LAST] = {RQ | PL | LST, "RC Send Last"},
    [ROCE_SEND_LAST_IMM] = {RQ | PL | LST | ROCE_F_IMM,
                            "RC Send Last Immediate"},
    [ROCE_SEND_ONLY] = {RQ | PL | FST | LST, "RC Send Only"},
    [ROCE_SEND_ONLY_IMM] = {RQ | PL | FST | LST | ROCE_F_IMM,
                            "RC Send Only Immediate"},
    [ROCE_WRITE_FIRST] = {RQ | PL | FST | ROCE_F_RETH, "RC RDMA Write First"},
    [ROCE_WRITE_MIDDLE] = {RQ | PL, "RC RDMA Write Middle"},
    [ROCE_WRITE_LAST] = {RQ | PL | LST, "RC RDMA Write Last"},
    [ROCE_WRITE_LAST_IMM] = {RQ | PL | LST | ROCE_F_IMM,
                             "RC RDMA Write Last with Immediate"},
    [ROCE_WRITE_ONLY] = {RQ | PL | FST | LST | ROCE_F_RETH,
                         "RC RDMA Write Only"},
    [ROCE_WRITE_ONLY_IMM] = {RQ | PL | FST | LST | ROCE_F_RETH | ROCE_F_IMM,
                             "RC RDMA Write Only with Immediate"},
    [ROCE_READ_REQ] = {RQ | FST | LST | ROCE_F_RETH, "RC RDMA Read Request"},
    [ROCE_READ_RESP_FIRST] = {PL | FST | ROCE_F_AETH,
                              "RC RDMA Read Response First"},
    [ROCE_READ_RESP_MIDDLE] = {PL, "RC RDMA Read Response Middle"},
    [ROCE_READ_RESP_LAST] = {PL | LST | ROCE_F_AETH,
                             "RC RDMA Read Response Last"},
    [ROCE_READ_RESP_ONLY] = {PL | FST | LST | ROCE_F_AETH,
                             "RC RDMA Read Response Only"},
    [ROCE_ACK] = {FST | LST | ROCE_F_AETH, "RC Acknowledge"},
    [ROCE_ATOMIC_ACK] = {FST | LST | ROCE_F_AETH | ROCE_F_ATKACK,
                         "RC Atomic Acknowledge"},
    [ROCE_CMP_SWAP] = {RQ | FST | LST | ROCE_F_ATOMIC, "RC CmpSwap"},
    [ROCE_FETCH_ADD] = {RQ | FST | LST | ROCE_F_ATOMIC, "RC FetchAdd"},
};

#undef RQ
#undef PL
#undef FST
#undef LST

#define ROCE_NOPS (sizeof(roce_ops) / sizeof(roce_ops[0]))

unsigned roce_op_flags(uint8_t opcode)
{
    return opcode < ROCE_NOPS ? roce_ops[opcode].flags : 0;
}

const char *roce_op_name(uint8_t opcode)
{
    return opcode < ROCE_NOPS ? roce_ops[opcode].name : "unknown";
}

size_t roce_hdr_len(uint8_t opcode)
{
    unsigned f = roce_op_flags(opcode);
    size_t n = ROCE_BTH_LEN;

    if (!f)
        return 0;
    if (f & ROCE_F_RETH)
        n += ROCE_RETH_LEN;
    if (f & ROCE_F_ATOMIC)
        n += ROCE_ATOMIC_LEN;
    if (f & ROCE_F_AETH)
        n += ROCE_AETH_LEN;
    if (f & ROCE_F_ATKACK)
        n += ROCE_ATKACK_LEN;
    if (f & ROCE_F_IMM)
        n += ROCE_IMM_LEN;
    return n;
}

/* ---- big-endian fields ------------------------------------------------ */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* ---- encode / decode -------------------------------------------------- */

size_t roce_encode(uint8_t *buf, size_t cap, struct roce_hdr *h,
                   const void *payload, uint32_t len)
{
    unsigned f = roce_op_flags(h->opcode);
    size_t hl = roce_hdr_len(h->opcode), total;
    uint8_t *p = buf;

    if (!f || (!(f & ROCE_F_PAYLOAD) && len))
        return 0;
    h->pad = (uint8_t)((4 - (len & 3)) & 3);
    total = hl + len + h->pad + ROCE_ICRC_LEN;
    if (total > cap)
        return 0;
    /* BTH (IBA 9.2) */
    p[0] = h->opcode;
    p[1] = (uint8_t)((h->se ? 0x80 : 0) | (h->mig ? 0x40 : 0) |
                     (h->pad & 3) << 4 | (h->tver & 0xf));
    put16(p + 2, h->pkey);
    p[4] = (uint8_t)((h->fecn ? 0x80 : 0) | (h->becn ? 0x40 : 0));
    p[5] = (uint8_t)(h->dqpn >> 16);
    put16(p + 6, (uint16_t)h->dqpn);
    put32(p + 8, (h->ackreq ? 0x80000000u : 0) | (h->psn & ROCE_PSN_MASK));
    p += ROCE_BTH_LEN;
    if (f & (ROCE_F_RETH | ROCE_F_ATOMIC)) { /* RETH 9.3.3, AtomicETH 9.3.4 */
        put64(p, h->va);
        put32(p + 8, h->rkey);
        if (f & ROCE_F_RETH) {
            put32(p + 12, h->dma_len);
            p += ROCE_RETH_LEN;
        } else {
            put64(p + 12, h->swap_add);
            put64(p + 20, h->compare);
            p += ROCE_ATOMIC_LEN;
        }
    }
    if (f & ROCE_F_AETH) { /* 9.3.5 */
        put32(p, (uint32_t)h->syndrome << 24 | (h->msn & 0xffffffu));
        p += ROCE_AETH_LEN;
    }
    if (f & ROCE_F_ATKACK) { /* 9.3.6 */
        put64(p, h->orig);
        p += ROCE_ATKACK_LEN;
    }
    if (f & ROCE_F_IMM) { /* 9.3.7 */
        put32(p, h->imm);
        p += ROCE_IMM_LEN;
    }
    if (len)
        memcpy(p, payload, len);
    p += len;
    memset(p, 0, h->pad + ROCE_ICRC_LEN);
    h->payload = NULL;
    h->len = len;
    return total;
}

int roce_decode(const uint8_t *buf, size_t n, struct roce_hdr *h)
{
    unsigned f;
    size_t hl, tail;
    const uint8_t *p = buf;

    memset(h, 0, sizeof(*h));
    if (n < ROCE_BTH_LEN + ROCE_ICRC_LEN)
        return -EINVAL;
    h->opcode = p[0];
    f = roce_op_flags(h->opcode);
    hl = roce_hdr_len(h->opcode);
    h->se = p[1] & 0x80;
    h->mig = p[1] & 0x40;
    h->pad = (p[1] >> 4) & 3;
    h->tver = p[1] & 0xf;
    h->pkey = get16(p + 2);
    h->fecn = p[4] & 0x80;
    h->becn = p[4] & 0x40;
    h->dqpn = (uint32_t)p[5] << 16 | get16(p + 6);
    h->ackreq = p[8] & 0x80;
    h->psn = get32(p + 8) & ROCE_PSN_MASK;
    if (!f || h->tver != 0)
        return -EINVAL;
    tail = h->pad + ROCE_ICRC_LEN;
    if (n < hl + tail)
        return -EINVAL;
    p += ROCE_BTH_LEN;
    if (f & (ROCE_F_RETH | ROCE_F_ATOMIC)) {
        h->va = get64(p);
        h->rkey = get32(p + 8);
        if (f & ROCE_F_RETH) {
            h->dma_len = get32(p + 12);
            p += ROCE_RETH_LEN;
        } else {
            h->swap_add = get64(p + 12);
            h->compare = get64(p + 20);
            p += ROCE_ATOMIC_LEN;
        }
    }
    if (f & ROCE_F_AETH) {
        h->syndrome = p[0];
        h->msn = get32(p) & 0xffffffu;
        p += ROCE_AETH_LEN;
    }
    if (f & ROCE_F_ATKACK) {
        h->orig = get64(p);
        p += ROCE_ATKACK_LEN;
    }
    if (f & ROCE_F_IMM) {
        h->imm = get32(p);
        p += ROCE_IMM_LEN;
    }
    h->payload = p;
    h->len = (uint32_t)(n - hl - tail);
    if (!(f & ROCE_F_PAYLOAD) && (h->len || h->pad))
        return -EINVAL;
    return 0;
}

/* ---- CRC -------------------------------------------------------------- */

static uint32_t roce_crc_table[256];

static void roce_crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;

        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        roce_crc_table[i] = c;
    }
}

uint32_t roce_crc32(uint32_t crc, const void *buf, size_t n)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    const uint8_t *p = buf;

    pthread_once(&once, roce_crc_init);
    crc = ~crc;
    while (n--)
        crc = roce_crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t roce_icrc(const uint8_t *ip, size_t ip_len, const uint8_t *udp,
                   const uint8_t *bth, size_t bth_len)
{
    static const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff};
    uint8_t h[60], u[ROCE_UDP_LEN], b[ROCE_BTH_LEN];
    uint32_t crc;

    if (ip_len > sizeof(h) || bth_len < ROCE_BTH_LEN)
        return 0;
    memcpy(h, ip, ip_len);
    if ((h[0] >> 4) == 4) {
        h[1] = 0xff;          /* TOS */
        h[8] = 0xff;          /* TTL */
        h[10] = h[11] = 0xff; /* header checksum */
    } else {
        h[0] |= 0x0f; /* traffic class, flow label */
        h[1] = h[2] = h[3] = 0xff;
        h[7] = 0xff; /* hop limit */
    }
    memcpy(u, udp, sizeof(u));
    u[6] = u[7] = 0xff; /* UDP checksum */
    memcpy(b, bth, sizeof(b));
    b[4] = 0xff; /* FECN, BECN, reserved */
    crc = roce_crc32(0, ones, sizeof(ones));
    crc = roce_crc32(crc, h, ip_len);
    crc = roce_crc32(crc, u, sizeof(u));
    crc = roce_crc32(crc, b, sizeof(b));
    return roce_crc32(crc, bth + ROCE_BTH_LEN, bth_len - ROCE_BTH_LEN);
}

/* ---- AETH credits and RNR timer --------------------------------------- */

/* IBA tables 45 and 46 share a sequence: 0, 1, 2, 3, 4, 6, 8, 12, ... */
static uint32_t roce_seq(uint8_t code)
{
    if (code < 2)
        return code;
    return (2u + (code & 1)) << ((code - 2) / 2);
}

uint8_t roce_credit_code(uint32_t n)
{
    uint8_t c = 0;

    while (c < 30 && roce_seq((uint8_t)(c + 1)) <= n)
        c++;
    return c;
}

uint32_t roce_credit_count(uint8_t code)
{
    code &= 0x1f;
    return code == ROCE_CREDITS_INVALID ? UINT32_MAX : roce_seq(code);
}

uint64_t roce_rnr_ns(uint8_t code)
{
    code &= 0x1f;
    return (code ? roce_seq(code) : 65536u) * 10000ull;
}
