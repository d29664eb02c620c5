#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/proto_meta.py - the meta protocol (mg ms md ma mn me) over TCP.

The exchange table holds the replies memcached 1.6.18 gives to the same
bytes (CAS values and sizes normalized); then the stale / win recache flow,
binary (base64) keys, quiet-mode pipelines and opaque tokens are checked
step by step.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import Client, Server, Tally  # noqa: E402


def norm(out):
    out = re.sub(rb" c\d+", rb" c<CAS>", out)
    out = re.sub(rb"cas=\d+", rb"cas=<CAS>", out)
    out = re.sub(rb"size=\d+", rb"size=<N>", out)
    out = re.sub(rb"la=\d+", rb"la=<N>", out)
    out = re.sub(rb" cls=\d+", rb" cls=<N>", out)
    return out


def exchange(c, send):
    """Everything the server answers to send (then an mn), but that MN."""
    c.send(send + b"mn\r\n")
    want_mn = send.count(b"mn\r\n") + 1
    got = b""
    while want_mn:
        ln = c.line()
        got += ln
        want_mn -= ln == b"MN\r\n"
    return got[:-4]


# (request bytes, memcached 1.6.18's reply, normalized); each case starts
# from an empty cache.
CASES = [
    # C0 is a CAS to compare (no item has CAS 0): memcached says EX.
    (b'set mk 7 0 3\r\nabc\r\nmd mk C0\r\nmd mk C0 q\r\nmg mk v\r\n',
     b'STORED\r\nEX\r\nEX\r\nVA 3\r\nabc\r\n'),
    (b'set mk 7 0 3\r\nabc\r\nmg mk v f c s k t h l\r\nmg mk\r\nmg missing v\r\nmg missing v q\r\nmn\r\n',
     b'STORED\r\nVA 3 f7 c<CAS> s3 kmk t-1 h0 l0\r\nabc\r\nHD\r\nEN\r\nMN\r\n'),
    (b'set mk 7 0 3\r\nabc\r\nmg mk v O123 k b\r\n',
     b'STORED\r\nCLIENT_ERROR error decoding key\r\n'),
    (b'set mk 7 0 3\r\nabc\r\nmg bWs= b v k\r\n',
     b'STORED\r\nVA 3 kmk\r\nabc\r\n'),
    (b'ms mk2 2 T10 F5 c k O9\r\nhi\r\nmg mk2 v t f\r\n',
     b'HD c<CAS> kmk2 O9\r\nVA 2 t10 f5\r\nhi\r\n'),
    (b'ms mk2 S2\r\nhi\r\n',
     b'CLIENT_ERROR bad command line format\r\nERROR\r\n'),
    (b'ms mk2\r\n',
     b'CLIENT_ERROR bad command line format\r\n'),
    (b'ms mk2 2 MZ\r\nhi\r\n',
     b'CLIENT_ERROR invalid mode for ms M token\r\n'),
    (b'ms mk2 2\r\nhi\r\nms mk2 2 ME\r\nhi\r\n',
     b'HD\r\nNS\r\n'),
    (b'ms mk2 2\r\nhi\r\nms mk2 2 C1\r\nhi\r\n',
     b'HD\r\nEX\r\n'),
    (b'ms nope 2 MR\r\nhi\r\n',
     b'NS\r\n'),
    (b'ms nope 2 C1\r\nhi\r\n',
     b'NF\r\n'),
    (b'ms nope 2 q\r\nhi\r\nmn\r\n',
     b'MN\r\n'),
    (b'ms nope 2 q MR\r\nhi\r\nmn\r\n',
     b'NS\r\nMN\r\n'),
    (b'ms nope 2 MA\r\nhi\r\nms nope 2 MP\r\nhi\r\n',
     b'NS\r\nNS\r\n'),
    (b'ms x 2\r\nhi\r\nms x 2 MA\r\nyo\r\nms x 2 MP\r\nab\r\nmg x v\r\n',
     b'HD\r\nHD\r\nHD\r\nVA 6\r\nabhiyo\r\n'),
    (b'ms x 2 b\r\nhi\r\n',
     b'CLIENT_ERROR error decoding key\r\n'),
    (b'ms eHl6 2 b k c\r\nhi\r\nmg eHl6 b k v\r\nmg xyz k v\r\nme eHl6 b\r\n',
     b'HD keHl6 b c<CAS>\r\nVA 2 keHl6 b\r\nhi\r\nVA 2 keHl6 b\r\nhi\r\nME eHl6 exp=-1 la=<N> cas=<CAS> fetch=yes cls=<N> size=<N>\r\n'),
    (b'ms x 2 O1234567890123456789012345678901234\r\nhi\r\n',
     b'CLIENT_ERROR opaque token too long\r\n'),
    (b'ms x 2 O12345678901234567890123456789012\r\nhi\r\n',
     b'CLIENT_ERROR opaque token too long\r\n'),
    (b'ms x 2 I\r\nhi\r\n',
     b'HD\r\n'),
    (b'ms x -1\r\nhi\r\n',
     b'CLIENT_ERROR bad command line format\r\nERROR\r\n'),
    (b'ms x 2 T\r\nhi\r\n',
     b'CLIENT_ERROR bad token in command line format\r\n'),
    (b'ms x 2 Tx\r\nhi\r\n',
     b'CLIENT_ERROR bad token in command line format\r\n'),
    (b'ms x 2 F-1\r\nhi\r\n',
     b'CLIENT_ERROR bad command line format\r\n'),
    (b'ms x 2 Fx\r\nhi\r\n',
     b'CLIENT_ERROR bad command line format\r\n'),
    (b'ms x 2 z\r\nhi\r\n',
     b'CLIENT_ERROR invalid flag\r\n'),
    (b'ms x 2 c c\r\nhi\r\n',
     b'CLIENT_ERROR duplicate flag\r\n'),
    (b'ms x 2 k O1 c\r\nhi\r\n',
     b'HD kx O1 c<CAS>\r\n'),
    (b'ms x 2 k O1 c q\r\nhi\r\nmn\r\n',
     b'MN\r\n'),
    (b'ms x 3\r\nhi\r\n\r\n',
     b'CLIENT_ERROR bad data chunk\r\nERROR\r\n'),
    (b'ms x 1\r\nhi\r\n',
     b'CLIENT_ERROR bad data chunk\r\nERROR\r\n'),
    (b'md x q\r\nmd x\r\nmn\r\n',
     b'NF\r\nNF\r\nMN\r\n'),
    (b'md nope q\r\nmn\r\n',
     b'NF\r\nMN\r\n'),
    (b'md nope O5 k\r\n',
     b'NF O5 knope\r\n'),
    (b'ms x 1\r\na\r\nmd x O5 k\r\n',
     b'HD\r\nHD O5 kx\r\n'),
    (b'ms x 1\r\na\r\nmd x C1\r\n',
     b'HD\r\nEX\r\n'),
    (b'ms x 1\r\na\r\nmd x C1 q\r\nmn\r\n',
     b'HD\r\nEX\r\nMN\r\n'),
    (b'ms x 1\r\na\r\nmd x I\r\nmg x v c\r\nmg x v c\r\n',
     b'HD\r\nHD\r\nVA 1 c<CAS> X W\r\na\r\nVA 1 c<CAS> Z X\r\na\r\n'),
    (b'ms x 1\r\na\r\nmd x I T30\r\nmg x t v\r\n',
     b'HD\r\nHD\r\nVA 1 t30 X W\r\na\r\n'),
    (b'ms x 1\r\na\r\nmd x I q\r\nmn\r\n',
     b'HD\r\nMN\r\n'),
    (b'md\r\n',
     b'ERROR\r\n'),
    (b'md x zz\r\n',
     b'CLIENT_ERROR invalid or duplicate flag\r\n'),
    (b'md x Cx\r\n',
     b'CLIENT_ERROR invalid or duplicate flag\r\n'),
    (b'mg foo N30 v c t\r\nmg foo v c t\r\n',
     b'VA 0 c<CAS> t30 W\r\n\r\nVA 0 c<CAS> t30 Z\r\n\r\n'),
    (b'mg foo N30 t\r\nmg foo t\r\nmg foo\r\n',
     b'HD t30 W\r\nHD t30 Z\r\nHD Z\r\n'),
    (b'mg foo q\r\nmn\r\n',
     b'MN\r\n'),
    (b'ms foo 2\r\nhi\r\nmg foo q\r\nmn\r\n',
     b'HD\r\nHD\r\nMN\r\n'),
    (b'ms foo 2\r\nhi\r\nmg foo q v\r\nmn\r\n',
     b'HD\r\nVA 2\r\nhi\r\nMN\r\n'),
    (b'ms foo 2\r\nhi\r\nmg foo k q O7\r\nmn\r\n',
     b'HD\r\nHD kfoo O7\r\nMN\r\n'),
    (b'mg foo k O7\r\n',
     b'EN kfoo O7\r\n'),
    (b'mg foo q k O7\r\nmn\r\n',
     b'MN\r\n'),
    (b'ms foo 2 T100\r\nhi\r\nmg foo R200 v\r\nmg foo R200 v\r\nmg foo R50 v\r\n',
     b'HD\r\nVA 2 W\r\nhi\r\nVA 2 Z\r\nhi\r\nVA 2 Z\r\nhi\r\n'),
    (b'ms foo 2 T100\r\nhi\r\nmg foo R50 v\r\n',
     b'HD\r\nVA 2\r\nhi\r\n'),
    (b'ms foo 2\r\nhi\r\nmg foo R200 v\r\n',
     b'HD\r\nVA 2\r\nhi\r\n'),
    (b'ms foo 2 T100\r\nhi\r\nmg foo T300 t\r\nmg foo t\r\n',
     b'HD\r\nHD t300\r\nHD t300\r\n'),
    (b'ms foo 2 T100\r\nhi\r\nmg foo t T300\r\n',
     b'HD\r\nHD t100\r\n'),
    (b'ms foo 2\r\nhi\r\nmg foo h l\r\nmg foo h l\r\n',
     b'HD\r\nHD h0 l0\r\nHD h1 l0\r\n'),
    (b'ms foo 2\r\nhi\r\nmg foo u h\r\nmg foo h\r\nmg foo h\r\n',
     b'HD\r\nHD h0\r\nHD h0\r\nHD h1\r\n'),
    (b'ms foo 2\r\nhi\r\nmg foo s v f\r\n',
     b'HD\r\nVA 2 s2 f0\r\nhi\r\n'),
    (b'mg foo Nx\r\n',
     b'CLIENT_ERROR bad token in command line format\r\n'),
    (b'mg foo Rx\r\n',
     b'CLIENT_ERROR bad token in command line format\r\n'),
    (b'mg foo v v\r\n',
     b'CLIENT_ERROR duplicate flag\r\n'),
    (b'mg foo zz\r\n',
     b'CLIENT_ERROR invalid flag\r\n'),
    (b'mg foo P L\r\n',
     b'EN\r\n'),
    (b'mg foo Pxyz Lpath v\r\n',
     b'EN\r\n'),
    (b'ms foo 2\r\nhi\r\nmg foo O123456789012345678901234567890123\r\n',
     b'HD\r\nCLIENT_ERROR opaque token too long\r\n'),
    (b'ms foo 2\r\nhi\r\nmg foo 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\r\n',
     b'HD\r\nCLIENT_ERROR options flags are too long\r\n'),
    (b'ms foo 2\r\nhi\r\nmg foo a b c\r\n',
     b'HD\r\nCLIENT_ERROR invalid flag\r\n'),
    (b'ma cnt\r\nma cnt N0 J10 v\r\nma cnt v D5 MD\r\nma cnt MI D18446744073709551615 v\r\n',
     b'NF\r\nVA 2\r\n10\r\nVA 1\r\n5\r\nVA 1\r\n4\r\n'),
    (b'ma cnt q\r\nmn\r\n',
     b'NF\r\nMN\r\n'),
    (b'ma cnt N0 J10 q\r\nma cnt q\r\nmg cnt v\r\nmn\r\n',
     b'HD\r\nVA 2\r\n11\r\nMN\r\n'),
    (b'ma cnt N0 J10 t c v\r\n',
     b'VA 2 t-1 c<CAS>\r\n10\r\n'),
    (b'ma cnt N90 J10 t v\r\n',
     b'VA 2 t90\r\n10\r\n'),
    (b'ms cnt 1\r\n5\r\nma cnt T30 t v\r\n',
     b'HD\r\nVA 1 t30\r\n6\r\n'),
    (b'ms cnt 1\r\n5\r\nma cnt C1 v\r\n',
     b'HD\r\nEX\r\n'),
    (b'ms cnt 1\r\n5\r\nma cnt Mx\r\n',
     b'HD\r\nCLIENT_ERROR invalid mode for ma M token\r\n'),
    (b'ms cnt 1\r\n5\r\nma cnt MDD\r\n',
     b'HD\r\nCLIENT_ERROR invalid or duplicate flag\r\n'),
    (b'ms cnt 1\r\n5\r\nma cnt M- v\r\nma cnt M+ v\r\nma cnt Md v\r\nma cnt Mi v\r\n',
     b'HD\r\nVA 1\r\n4\r\nVA 1\r\n5\r\nCLIENT_ERROR invalid mode for ma M token\r\nCLIENT_ERROR invalid mode for ma M token\r\n'),
    (b'ms cnt 1\r\nx\r\nma cnt v\r\n',
     b'HD\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n'),
    (b'ms cnt 1\r\n5\r\nma cnt Dx\r\n',
     b'HD\r\nCLIENT_ERROR invalid or duplicate flag\r\n'),
    (b'ms cnt 1\r\n5\r\nma cnt J5\r\n',
     b'HD\r\nHD\r\n'),
    (b'ma cnt Jx N0\r\n',
     b'CLIENT_ERROR invalid or duplicate flag\r\n'),
    (b'ms cnt 1\r\n5\r\nma cnt O9 k v\r\nma nope O9 k\r\n',
     b'HD\r\nVA 1 O9 kcnt\r\n6\r\nNF O9 knope\r\n'),
    (b'ma\r\n',
     b'ERROR\r\n'),
    (b'me\r\n',
     b'CLIENT_ERROR bad command line format\r\n'),
    (b'me x\r\n',
     b'EN\r\n'),
    (b'ms x 1\r\na\r\nme x\r\nmg x v\r\nme x\r\n',
     b'HD\r\nME x exp=-1 la=<N> cas=<CAS> fetch=no cls=<N> size=<N>\r\nVA 1\r\na\r\nME x exp=-1 la=<N> cas=<CAS> fetch=yes cls=<N> size=<N>\r\n'),
    (b'me !!!! b\r\n',
     b'CLIENT_ERROR bad command line format\r\n'),
    (b'me x y\r\n',
     b'EN\r\n'),
]


def test_table(t, srv):
    for send, want in CASES:
        c = Client(srv)
        exchange(c, b"flush_all\r\n")
        t.eq(repr(send[:60]), norm(exchange(c, send)), want)
        c.close()


def field(line, flag):
    for tok in line.split()[1:]:
        if tok[:1] == flag:
            return tok[1:]
    return None


def test_stale_win_flow(t, srv):
    c = Client(srv)
    exchange(c, b"flush_all\r\n")
    out = exchange(c, b"ms key 3 c T60\r\nold\r\n")
    cas1 = int(field(out, b"c"))
    out = exchange(c, b"md key I T30\r\n")
    t.eq("md I", out, b"HD\r\n")
    out = exchange(c, b"mg key v c t\r\n")
    first = out.split(b"\r\n")[0]
    t.check("stale item: X and W", first.endswith(b" X W"), first)
    cas2 = int(field(first, b"c"))
    t.check("md I bumped the cas", cas2 > cas1, (cas1, cas2))
    t.check("md I set the ttl", 0 < int(field(first, b"t")) <= 30, first)
    t.check("stale value kept", out.endswith(b"\r\nold\r\n"), out)
    out = exchange(c, b"mg key v c\r\n")
    t.check("second reader: Z X, no W",
            out.split(b"\r\n")[0].endswith(b" Z X"), out)
    # A writer with an older CAS and I stores, but the item stays stale
    # (with a new CAS, as memcached 1.6.18 does) and the win stays taken.
    out = exchange(c, b"ms key 3 I C%d\r\nmid\r\n" % cas1)
    t.eq("older cas with I stores", out, b"HD\r\n")
    out = exchange(c, b"mg key v c\r\n")
    first = out.split(b"\r\n")[0]
    cas3 = int(field(first, b"c"))
    t.check("stale store: new cas", cas3 > cas2, first)
    t.check("stale store stays stale", first.endswith(b" Z X"), first)
    t.eq("stale store value", out.split(b"\r\n")[1], b"mid")
    out = exchange(c, b"ms key 3 C%d\r\nnew\r\n" % cas2)
    t.eq("recache with an old cas", out, b"EX\r\n")
    out = exchange(c, b"ms key 3 C%d\r\nnew\r\n" % cas3)
    t.eq("recache with current cas", out, b"HD\r\n")
    out = exchange(c, b"mg key v\r\n")
    t.eq("fresh after recache", out, b"VA 3\r\nnew\r\n")
    c.close()


def test_binary_keys(t, srv):
    c = Client(srv)
    exchange(c, b"flush_all\r\n")
    # base64 of b"\x00\x01 \r\n\xff" (a key the text protocol cannot say)
    key = b"AAEgDQr/"
    t.eq("ms binary key", exchange(c, b"ms %s 2 b\r\nhi\r\n" % key),
         b"HD\r\n")
    t.eq("mg binary key", exchange(c, b"mg %s b v k\r\n" % key),
         b"VA 2 k%s b\r\nhi\r\n" % key)
    t.eq("me binary key", norm(exchange(c, b"me %s b\r\n" % key)),
         b"ME %s exp=-1 la=<N> cas=<CAS> fetch=yes cls=<N> size=<N>\r\n"
         % key)
    t.eq("ma binary key", exchange(c, b"ma %s b N0 J5 v\r\n" % b"AAI="),
         b"VA 1\r\n5\r\n")
    t.eq("md binary key", exchange(c, b"md %s b q\r\n" % key), b"")
    t.eq("binary key gone", exchange(c, b"mg %s b v\r\n" % key),
         b"EN\r\n")
    t.eq("bad base64", exchange(c, b"mg A*== b v\r\n"),
         b"CLIENT_ERROR error decoding key\r\n")
    c.close()


def test_quiet_pipeline(t, srv):
    c = Client(srv)
    exchange(c, b"flush_all\r\n")
    req = b"".join(b"ms q%d 1 q O%d\r\n%d\r\n" % (i, i, i % 10)
                   for i in range(100))
    req += b"".join(b"mg q%d v q O%d\r\n" % (i, i) for i in range(0, 200, 2))
    out = exchange(c, req)
    want = b"".join(b"VA 1 O%d\r\n%d\r\n" % (i, i % 10)
                    for i in range(0, 100, 2))
    t.eq("quiet sets and gets: hits only, with opaques", out, want)
    t.eq("opaque too long",
         exchange(c, b"mg q1 v O" + b"x" * 32 + b"\r\n"),
         b"CLIENT_ERROR opaque token too long\r\n")
    c.close()


def main():
    t = Tally("proto_meta")
    srv = Server(["-t", "2"])
    for fn in (test_table, test_stale_win_flow, test_binary_keys,
               test_quiet_pipeline):
        t.run(fn, srv)
    t.check("server survived", srv.alive())
    t.finish()


if __name__ == "__main__":
    main()
