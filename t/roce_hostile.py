#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/roce_hostile.py - hostile packets at an rdn-nicd's RoCEv2 port.

Run by t/roce_net.sh inside the namespace of the daemon's peer:
  roce_hostile.py SRC DST COUNT QPN_LO QPN_HI
sends COUNT packets from SRC to DST:4791 (IPv4 or IPv6 addresses): random bytes, truncated and
oversized headers, unknown opcodes, bad ICRCs, and well-formed packets with
a right ICRC (computed here, independently of softnic) to QPNs in
[QPN_LO, QPN_HI) with PSNs anywhere, bad rkeys, DMA lengths up to 2^32-1,
payloads longer than any path MTU, and middle/last packets with no first.
The daemon must drop or NAK them and keep running (the script checks
nothing itself: t/roce_net.sh asks the daemon afterwards).

  roce_hostile.py --broken SRC DST COUNT QPN_LO QPN_HI
sends only what no receiver may take whatever its QPN and PSN: random
bytes, truncated headers and bad ICRCs. These may go to the QPs of a live
connection from its own peer's address (t/offload_hosts.sh, while GETs
run); a forged packet with a right ICRC from there is one RoCE cannot tell
from the peer's.

  roce_hostile.py --flood SRC DST QPN PSN MTU BYTES
forges, from the QP's own peer address and inside its PSN window, one
SEND that never ends: a SEND First and then SEND Middle packets of MTU
bytes each, BYTES in all, with right ICRCs. The responder must not hold
more than the receive the SEND would consume.
"""
import os
import random
import socket
import struct
import sys
import zlib

IP_MTU_DISCOVER = 10
IPV6_MTU_DISCOVER = 23
IP_PMTUDISC_DO = 2


def icrc(src, dst, sport, dport, bth):
    """ICRC of a packet sent from an unconnected UDP socket with DF set
    (IPv4: ID 0): CRC-32 over 8 ones, the masked IP and UDP headers, the
    BTH with byte 4 masked, and the rest."""
    n = len(bth) + 4
    if ":" in src:  # traffic class, flow label, hop limit masked
        ip = (b"\x6f\xff\xff\xff" + struct.pack("!HBB", 8 + n, 17, 0xFF) +
              socket.inet_pton(socket.AF_INET6, src) +
              socket.inet_pton(socket.AF_INET6, dst))
    else:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0xFF, 20 + 8 + n, 0, 0x4000,
                         0xFF, 17, 0xFFFF, socket.inet_aton(src),
                         socket.inet_aton(dst))
    udp = struct.pack("!HHHH", sport, dport, 8 + n, 0xFFFF)
    b = bytearray(bth)
    if len(b) > 4:
        b[4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + ip + udp + bytes(b)) & 0xFFFFFFFF


def bth(op, qpn, psn, pad=0, ackreq=0):
    return struct.pack("!BBHII", op, (pad & 3) << 4, 0xFFFF, qpn & 0xFFFFFF,
                       (ackreq << 31) | (psn & 0xFFFFFF))


def forged(rng, lo, hi):
    """A well-formed-looking packet (headers by opcode) with odd values."""
    op = rng.choice(list(range(0x00, 0x15)) + [0x15, 0x1F, 0x64, 0xFF])
    h = bth(op, rng.randrange(lo, hi), rng.randrange(1 << 24),
            ackreq=rng.randrange(2))
    if op in (0x06, 0x0A, 0x0B, 0x0C):  # RETH
        h += struct.pack("!QII", rng.randrange(1 << 64), rng.randrange(1 << 32),
                         rng.choice([0, 1, 4096, 1 << 31, 0xFFFFFFFF]))
    if op in (0x13, 0x14):  # AtomicETH
        h += struct.pack("!QIQQ", rng.randrange(1 << 64) & ~7,
                         rng.randrange(1 << 32), 1, 2)
    if op in (0x0D, 0x0F, 0x10, 0x11, 0x12):  # AETH
        h += struct.pack("!I", rng.randrange(1 << 32))
    if op == 0x12:
        h += struct.pack("!Q", rng.randrange(1 << 64))
    if op in (0x03, 0x05, 0x09, 0x0B):
        h += struct.pack("!I", rng.randrange(1 << 32))
    if op <= 0x0B or 0x0D <= op <= 0x10:
        h += os.urandom(rng.choice([0, 1, 256, 1024, 4096, 4100, 8000]))
    return h


def udp_socket(src):
    """A UDP socket bound to src that never fragments; its port."""
    if ":" in src:
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IPV6, IPV6_MTU_DISCOVER, IP_PMTUDISC_DO)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    s.bind((src, 0))
    return s, s.getsockname()[1]


def flood(src, dst, qpn, psn, mtu, total):
    s, sport = udp_socket(src)
    payload = os.urandom(mtu)
    sent = 0
    for k in range(max(1, total // mtu)):
        h = bth(0x00 if k == 0 else 0x01, qpn, psn + k) + payload
        s.sendto(h + struct.pack("<I", icrc(src, dst, sport, 4791, h)),
                 (dst, 4791))
        sent += len(payload)
    print("flooded QPN %#x from PSN %#x with %d bytes of one SEND" %
          (qpn, psn, sent))


def main():
    if sys.argv[1] == "--flood":
        a = sys.argv[2:]
        flood(a[0], a[1], int(a[2], 0), int(a[3], 0), int(a[4]), int(a[5]))
        return
    a = sys.argv[1:]
    kinds = 5  # 3 and 4: forged with a right ICRC
    if a[0] == "--broken":
        a, kinds = a[1:], 3
    src, dst = a[0], a[1]
    count, lo, hi = int(a[2]), int(a[3], 0), int(a[4], 0)
    rng = random.Random(1234)
    s, sport = udp_socket(src)
    sent = 0
    for i in range(count):
        kind = i % kinds
        if kind == 0:  # random bytes
            pkt = os.urandom(rng.randrange(0, 200))
        elif kind == 1:  # truncated header, right ICRC
            h = forged(rng, lo, hi)[: rng.randrange(0, 12)]
            pkt = h + struct.pack("<I", icrc(src, dst, sport, 4791, h))
        elif kind == 2:  # forged, bad ICRC
            h = forged(rng, lo, hi)
            pkt = h + struct.pack("<I", icrc(src, dst, sport, 4791, h) ^ 1)
        else:  # forged, right ICRC
            h = forged(rng, lo, hi)
            pkt = h + struct.pack("<I", icrc(src, dst, sport, 4791, h))
        try:
            s.sendto(pkt, (dst, 4791))
            sent += 1
        except OSError:
            pass  # EMSGSIZE for the longest ones: fine
    print("sent %d of %d hostile packets" % (sent, count))


if __name__ == "__main__":
    main()
