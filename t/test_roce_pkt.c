/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_roce_pkt.c - the RoCEv2 codec against golden bytes. The header
 * layouts follow IBA Vol. 1 ch. 9 (BTH 9.2, RETH 9.3.3, AtomicETH 9.3.4,
 * AETH 9.3.5, AtomicAckETH 9.3.6, ImmDt 9.3.7); the same bytes, wrapped in
 * IPv4/UDP 4791 by text2pcap, decode in Wireshark (tshark -V) to the field
 * values written next to each array. The ICRC golden value was computed
 * independently (Python's zlib.crc32 over the masked fields, as Annex
 * A17.8 describes them).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "rdn/softnic/roce_pkt.h"
#include "t/support/testutil.h"

/* Encodes h with payload and compares with want (n bytes, ICRC zeros). */
static void golden(struct roce_hdr *h, const void *payload, uint32_t len,
                   const uint8_t *want, size_t n)
{
    uint8_t buf[256];
    struct roce_hdr d;
    size_t got = roce_encode(buf, sizeof(buf), h, payload, len);

    ck_assert_uint_eq(got, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(buf[i] == want[i], "byte %zu: %02x, want %02x", i, buf[i],
                      want[i]);
    ck_assert_int_eq(roce_decode(buf, n, &d), 0);
    ck_assert_uint_eq(d.opcode, h->opcode);
    ck_assert_uint_eq(d.psn, h->psn);
    ck_assert_uint_eq(d.dqpn, h->dqpn);
    ck_assert_uint_eq(d.len, len);
    if (len)
        ck_assert(memcmp(d.payload, payload, len) == 0);
}

/* Wireshark: RC Send Only, SE 1, Pad 1, P_Key 65535, DestQP 0x000123,
 * AckReq 1, PSN 1110. */
START_TEST(send_only_bth)
{
    static const uint8_t want[] = {0x04, 0x90, 0xff, 0xff, 0x00, 0x00, 0x01,
                                   0x23, 0x80, 0x00, 0x04, 0x56, 'a',  'b',
                                   'c',  0x00, 0,    0,    0,    0};
    struct roce_hdr h = {.opcode = ROCE_SEND_ONLY,
                         .se = true,
                         .pkey = 0xffff,
                         .dqpn = 0x123,
                         .ackreq = true,
                         .psn = 0x456};

    golden(&h, "abc", 3, want, sizeof(want));
}
END_TEST

/* Wireshark: RC RDMA Write First, DestQP 0xabcdef, PSN 16777214; RETH
 * Virtual Address 0x1122334455667788, Remote Key 0xdeadbeef, DMA Length
 * 65536. */
START_TEST(write_first_reth)
{
    static const uint8_t want[] = {
        0x06, 0x00, 0xff, 0xff, 0x00, 0xab, 0xcd, 0xef, 0x00, 0xff, 0xff, 0xfe,
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0xde, 0xad, 0xbe, 0xef,
        0x00, 0x01, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0,    0,    0,    0};
    static const uint8_t pl[] = {1, 2, 3, 4};
    struct roce_hdr h = {.opcode = ROCE_WRITE_FIRST,
                         .pkey = 0xffff,
                         .dqpn = 0xabcdef,
                         .psn = 0xfffffe,
                         .va = 0x1122334455667788ull,
                         .rkey = 0xdeadbeef,
                         .dma_len = 65536};

    golden(&h, pl, 4, want, sizeof(want));
}
END_TEST

/* Wireshark: RC Acknowledge, PSN 5; AETH Syndrome 0x60 (NAK, PSN Sequence
 * Error), Message Sequence Number 2748. */
START_TEST(nak_aeth)
{
    static const uint8_t want[] = {0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00,
                                   0x07, 0x00, 0x00, 0x00, 0x05, 0x60, 0x00,
                                   0x0a, 0xbc, 0,    0,    0,    0};
    struct roce_hdr h = {.opcode = ROCE_ACK,
                         .pkey = 0xffff,
                         .dqpn = 7,
                         .psn = 5,
                         .syndrome = ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ,
                         .msn = 0xabc};

    golden(&h, NULL, 0, want, sizeof(want));
}
END_TEST

/* Wireshark: RC CmpSwap; AtomicETH Virtual Address 0x1000, Remote Key
 * 0x102, Swap (or Add) Data 0x0000000500000006, Compare Data 7. */
START_TEST(cmp_swap_atomiceth)
{
    static const uint8_t want[] = {
        0x13, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x07, 0x80, 0x00, 0x00,
        0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
        0x01, 0x02, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x06, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0,    0,    0,    0};
    struct roce_hdr h = {.opcode = ROCE_CMP_SWAP,
                         .pkey = 0xffff,
                         .dqpn = 7,
                         .ackreq = true,
                         .psn = 9,
                         .va = 0x1000,
                         .rkey = 0x102,
                         .swap_add = 0x0000000500000006ull,
                         .compare = 7};

    golden(&h, NULL, 0, want, sizeof(want));
}
END_TEST

/* Wireshark: RC Atomic Acknowledge; AETH Syndrome 0x1f (ACK, credits
 * invalid), MSN 1; AtomicAckETH Original Remote Data 0xfedcba9876543210. */
START_TEST(atomic_ack)
{
    static const uint8_t want[] = {0x12, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00,
                                   0x07, 0x00, 0x00, 0x00, 0x09, 0x1f, 0x00,
                                   0x00, 0x01, 0xfe, 0xdc, 0xba, 0x98, 0x76,
                                   0x54, 0x32, 0x10, 0,    0,    0,    0};
    struct roce_hdr h = {.opcode = ROCE_ATOMIC_ACK,
                         .pkey = 0xffff,
                         .dqpn = 7,
                         .psn = 9,
                         .syndrome = ROCE_AETH_ACK | ROCE_CREDITS_INVALID,
                         .msn = 1,
                         .orig = 0xfedcba9876543210ull};

    golden(&h, NULL, 0, want, sizeof(want));
}
END_TEST

/* Wireshark: RC Send Last Immediate, Pad 2; Immediate Data 0x01020304. */
START_TEST(send_last_imm)
{
    static const uint8_t want[] = {
        0x03, 0x20, 0xff, 0xff, 0x00, 0x00, 0x00, 0x07, 0x80, 0x00, 0x00, 0x0a,
        0x01, 0x02, 0x03, 0x04, 'h',  'i',  0x00, 0x00, 0,    0,    0,    0};
    struct roce_hdr h = {.opcode = ROCE_SEND_LAST_IMM,
                         .pkey = 0xffff,
                         .dqpn = 7,
                         .ackreq = true,
                         .psn = 10,
                         .imm = 0x01020304};
    struct roce_hdr d;
    uint8_t buf[64];

    golden(&h, "hi", 2, want, sizeof(want));
    ck_assert_int_eq(roce_decode(want, sizeof(want), &d), 0);
    ck_assert_uint_eq(d.imm, 0x01020304);
    ck_assert_uint_eq(d.pad, 2);
    /* Every header size: opcode table against the spec's layouts. */
    ck_assert_uint_eq(roce_hdr_len(ROCE_READ_REQ), 12 + 16);
    ck_assert_uint_eq(roce_hdr_len(ROCE_READ_RESP_FIRST), 12 + 4);
    ck_assert_uint_eq(roce_hdr_len(ROCE_READ_RESP_MIDDLE), 12);
    ck_assert_uint_eq(roce_hdr_len(ROCE_WRITE_ONLY_IMM), 12 + 16 + 4);
    ck_assert_uint_eq(roce_hdr_len(ROCE_FETCH_ADD), 12 + 28);
    ck_assert_uint_eq(roce_hdr_len(ROCE_ATOMIC_ACK), 12 + 4 + 8);
    ck_assert_uint_eq(roce_hdr_len(0x15), 0);
    ck_assert_uint_eq(roce_encode(buf, 10, &h, "hi", 2), 0);
}
END_TEST

/* The ICRC over a whole IPv4 packet with a non-zero IP ID. */
START_TEST(icrc_ipv4)
{
    static const uint8_t ip[] = {0x45, 0x00, 0x00, 0x30, 0x12, 0x34, 0x40,
                                 0x00, 0x40, 0x11, 0xab, 0xcd, 0x0a, 0x00,
                                 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02};
    static const uint8_t udp[] = {0xc0, 0x00, 0x12, 0xb7,
                                  0x00, 0x1c, 0x98, 0x76};
    uint8_t bth[] = {0x04, 0x90, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23, 0x80, 0x00,
                     0x04, 0x56, 'a',  'b',  'c',  0x00, 0,    0,    0,    0};
    uint8_t ip2[sizeof(ip)];
    uint32_t c = roce_icrc(ip, sizeof(ip), udp, bth, sizeof(bth) - 4);

    ck_assert_uint_eq(roce_crc32(0, "123456789", 9), 0xcbf43926u);
    ck_assert_uint_eq(c, 0x0bccc6dbu);
    roce_icrc_put(bth + 16, c);
    ck_assert(memcmp(bth + 16, "\xdb\xc6\xcc\x0b", 4) == 0);
    ck_assert_uint_eq(roce_icrc_get(bth + 16), c);
    /* Masked fields do not count, the ID does, so does FECN's byte not. */
    memcpy(ip2, ip, sizeof(ip));
    ip2[8] = 1;    /* TTL */
    ip2[1] = 0xb8; /* DSCP */
    bth[4] = 0x80; /* FECN */
    ck_assert_uint_eq(roce_icrc(ip2, sizeof(ip2), udp, bth, 16), c);
    ip2[4] = ip2[5] = 0; /* ID */
    ck_assert_uint_eq(roce_icrc(ip2, sizeof(ip2), udp, bth, 16), 0xcf5d3e35u);
}
END_TEST

/*
 * The ICRC over an IPv6 packet (A17.8.3): traffic class, flow label and
 * hop limit count as ones, payload length, next header and the addresses
 * as they are. The golden value: zlib.crc32 over 8 x 0xff, 6f ff ff ff
 * 00 1c 11 ff, fd77::1, fd77::2, the UDP header with checksum ff ff, the
 * BTH with byte 4 ff, and the payload.
 */
START_TEST(icrc_ipv6)
{
    static const uint8_t ip[40] = {
        0x61, 0x2a, 0xbc,        0xde,
        0x00, 0x1c, 0x11,        0x40, /* TC 0x12, flow */
        0xfd, 0x77, [23] = 0x01,       /* fd77::1 */
        0xfd, 0x77, [39] = 0x02,       /* fd77::2 */
    };
    static const uint8_t udp[] = {0xc0, 0x00, 0x12, 0xb7,
                                  0x00, 0x1c, 0x98, 0x76};
    uint8_t bth[] = {0x04, 0x90, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23, 0x80, 0x00,
                     0x04, 0x56, 'a',  'b',  'c',  0x00, 0,    0,    0,    0};
    uint8_t ip2[sizeof(ip)];

    ck_assert_uint_eq(roce_icrc(ip, sizeof(ip), udp, bth, 16), 0x15da3e06u);
    memcpy(ip2, ip, sizeof(ip));
    ip2[1] = 0x00; /* traffic class and flow label */
    ip2[2] = ip2[3] = 0;
    ip2[7] = 1; /* hop limit */
    ck_assert_uint_eq(roce_icrc(ip2, sizeof(ip2), udp, bth, 16), 0x15da3e06u);
    ip2[39] = 3; /* another destination */
    ck_assert_uint_ne(roce_icrc(ip2, sizeof(ip2), udp, bth, 16), 0x15da3e06u);
    ip2[39] = 2;
    ip2[5] = 0x1d; /* payload length */
    ck_assert_uint_ne(roce_icrc(ip2, sizeof(ip2), udp, bth, 16), 0x15da3e06u);
}
END_TEST

START_TEST(decode_rejects)
{
    static const uint8_t ack[] = {0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00,
                                  0x07, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00,
                                  0x00, 0x01, 0,    0,    0,    0};
    uint8_t b[sizeof(ack) + 4];
    struct roce_hdr h;

    ck_assert_int_eq(roce_decode(ack, sizeof(ack), &h), 0);
    for (size_t n = 0; n < sizeof(ack); n++) /* truncated */
        ck_assert_int_eq(roce_decode(ack, n, &h), -EINVAL);
    memcpy(b, ack, sizeof(ack));
    memset(b + sizeof(ack), 0, 4); /* an ACK carries no payload */
    ck_assert_int_eq(roce_decode(b, sizeof(b), &h), -EINVAL);
    b[0] = 0x64; /* UD Send Only: not RC */
    ck_assert_int_eq(roce_decode(b, sizeof(ack), &h), -EINVAL);
    memcpy(b, ack, sizeof(ack));
    b[1] = 0x01; /* TVer 1 */
    ck_assert_int_eq(roce_decode(b, sizeof(ack), &h), -EINVAL);
    b[1] = 0x30; /* pad 3 without room */
    ck_assert_int_eq(roce_decode(b, sizeof(ack), &h), -EINVAL);
}
END_TEST

START_TEST(credits_and_rnr_timer)
{
    ck_assert_uint_eq(roce_credit_code(0), 0);
    ck_assert_uint_eq(roce_credit_code(5), 4); /* 4 */
    ck_assert_uint_eq(roce_credit_code(6), 5); /* 6 */
    ck_assert_uint_eq(roce_credit_code(64), 12);
    ck_assert_uint_eq(roce_credit_code(1u << 20), 30); /* 32768 */
    ck_assert_uint_eq(roce_credit_count(30), 32768);
    ck_assert_uint_eq(roce_credit_count(31), UINT32_MAX);
    ck_assert_uint_eq(roce_rnr_ns(0), 655360000ull);
    ck_assert_uint_eq(roce_rnr_ns(1), 10000ull);
    ck_assert_uint_eq(roce_rnr_ns(12), 640000ull);
    ck_assert_uint_eq(roce_rnr_ns(31), 491520000ull);
    ck_assert_int_eq(roce_psn_diff(0, 0xffffff), 1);
    ck_assert_int_eq(roce_psn_diff(0xffffff, 0), -1);
}
END_TEST

static Suite *mk(void)
{
    Suite *s = suite_create("roce_pkt");
    TCase *tc = tcase_create("codec");

    tcase_add_test(tc, send_only_bth);
    tcase_add_test(tc, write_first_reth);
    tcase_add_test(tc, nak_aeth);
    tcase_add_test(tc, cmp_swap_atomiceth);
    tcase_add_test(tc, atomic_ack);
    tcase_add_test(tc, send_last_imm);
    tcase_add_test(tc, icrc_ipv4);
    tcase_add_test(tc, icrc_ipv6);
    tcase_add_test(tc, decode_rejects);
    tcase_add_test(tc, credits_and_rnr_timer);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(mk());
}
