#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/proto_text.py - the classic ASCII protocol over TCP, exact replies.

Covers every classic command and its replies, noreply, pipelining,
binary-safe and 1 MB values, too-large values, expiry, flush_all, incr/decr
edge cases and malformed input of every kind (the expected replies are
memcached 1.6.18's), checking afterwards that no stored item changed.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import Client, Server, Tally  # noqa: E402

VERSION_REPLY = b"VERSION 1.6.18\r\n"
LONGKEY = b"k" * 251


def exchange(t, c, name, send, want):
    """Sends send, then "mn": everything before the MN must be want."""
    return t.eq(name, c.before_mn(send), want)


def test_storage(t, srv):
    c = Client(srv)
    exchange(t, c, "set", b"set a 5 0 3\r\nabc\r\n", b"STORED\r\n")
    exchange(t, c, "get", b"get a\r\n", b"VALUE a 5 3\r\nabc\r\nEND\r\n")
    exchange(t, c, "get miss", b"get nope\r\n", b"END\r\n")
    exchange(t, c, "multiget", b"get a nope a\r\n",
             b"VALUE a 5 3\r\nabc\r\nVALUE a 5 3\r\nabc\r\nEND\r\n")
    exchange(t, c, "add existing", b"add a 0 0 1\r\nx\r\n", b"NOT_STORED\r\n")
    exchange(t, c, "add new", b"add b 1 0 1\r\nx\r\n", b"STORED\r\n")
    exchange(t, c, "replace missing", b"replace zz 0 0 1\r\nx\r\n",
             b"NOT_STORED\r\n")
    exchange(t, c, "replace", b"replace b 2 0 2\r\nyy\r\n", b"STORED\r\n")
    exchange(t, c, "replaced", b"get b\r\n", b"VALUE b 2 2\r\nyy\r\nEND\r\n")
    exchange(t, c, "append missing", b"append zz 0 0 1\r\nx\r\n",
             b"NOT_STORED\r\n")
    exchange(t, c, "prepend missing", b"prepend zz 0 0 1\r\nx\r\n",
             b"NOT_STORED\r\n")
    exchange(t, c, "append", b"append a 9 0 2\r\nde\r\n", b"STORED\r\n")
    exchange(t, c, "prepend", b"prepend a 9 0 1\r\n_\r\n", b"STORED\r\n")
    exchange(t, c, "append keeps flags", b"get a\r\n",
             b"VALUE a 5 6\r\n_abcde\r\nEND\r\n")
    exchange(t, c, "empty value", b"set e 0 0 0\r\n\r\nget e\r\n",
             b"STORED\r\nVALUE e 0 0\r\n\r\nEND\r\n")
    exchange(t, c, "max flags", b"set f 4294967295 0 1\r\nx\r\nget f\r\n",
             b"STORED\r\nVALUE f 4294967295 1\r\nx\r\nEND\r\n")
    exchange(t, c, "trailing spaces", b"set s 0 0 1   \r\nx\r\nget s \r\n",
             b"STORED\r\nVALUE s 0 1\r\nx\r\nEND\r\n")
    exchange(t, c, "leading space", b" get s\r\n",
             b"VALUE s 0 1\r\nx\r\nEND\r\n")
    exchange(t, c, "bare LF line ends", b"set lf 0 0 1\r\nx\r\nget lf\n",
             b"STORED\r\nVALUE lf 0 1\r\nx\r\nEND\r\n")
    key250 = b"K" * 250
    exchange(t, c, "250-byte key", b"set " + key250 + b" 0 0 1\r\nx\r\n",
             b"STORED\r\n")
    exchange(t, c, "250-byte key get", b"get " + key250 + b"\r\n",
             b"VALUE " + key250 + b" 0 1\r\nx\r\nEND\r\n")
    c.close()


def gets_cas(c, key):
    """key's CAS id, or None."""
    r = c.gets(key)
    return r and r[2]


def test_cas(t, srv):
    c = Client(srv)
    c.set(b"c", b"one")
    cas1 = gets_cas(c, b"c")
    t.check("gets gives a cas", cas1 is not None and cas1 > 0)
    exchange(t, c, "cas missing key", b"cas nokey 0 0 1 1\r\nx\r\n",
             b"NOT_FOUND\r\n")
    exchange(t, c, "cas mismatch", b"cas c 0 0 3 %d\r\ntwo\r\n" % (cas1 + 1),
             b"EXISTS\r\n")
    exchange(t, c, "cas match", b"cas c 3 0 3 %d\r\ntwo\r\n" % cas1,
             b"STORED\r\n")
    cas2 = gets_cas(c, b"c")
    t.check("cas changes on store", cas2 is not None and cas2 != cas1)
    exchange(t, c, "cas reuse fails", b"cas c 0 0 1 %d\r\nx\r\n" % cas1,
             b"EXISTS\r\n")
    t.eq("cas stored value", c.get(b"c"), (3, b"two"))
    c.set(b"c", b"three")
    t.check("set changes cas", gets_cas(c, b"c") not in (cas1, cas2))
    c.send(b"incr c 1\r\n")
    c.line()
    before = gets_cas(c, b"c")
    c.send(b"touch c 100\r\n")
    c.line()
    t.eq("touch keeps cas", gets_cas(c, b"c"), before)
    c.close()


def test_noreply(t, srv):
    c = Client(srv)
    exchange(t, c, "set noreply", b"set n 0 0 1 noreply\r\n1\r\n", b"")
    exchange(t, c, "add noreply", b"add n 0 0 1 noreply\r\n2\r\n", b"")
    exchange(t, c, "replace noreply", b"replace n 0 0 1 noreply\r\n3\r\n",
             b"")
    exchange(t, c, "append noreply", b"append n 0 0 1 noreply\r\n4\r\n", b"")
    exchange(t, c, "prepend noreply", b"prepend n 0 0 1 noreply\r\n5\r\n",
             b"")
    t.eq("noreply stores applied", c.get(b"n"), (0, b"534"))
    cas = gets_cas(c, b"n")
    exchange(t, c, "cas noreply", b"cas n 0 0 1 %d noreply\r\n7\r\n" % cas,
             b"")
    exchange(t, c, "incr noreply", b"incr n 3 noreply\r\n", b"")
    exchange(t, c, "decr noreply", b"decr n 1 noreply\r\n", b"")
    # 10 decremented to 9 keeps its length, space padded (memcached).
    t.eq("noreply arithmetic applied", c.get(b"n"), (0, b"9 "))
    exchange(t, c, "touch noreply", b"touch n 100 noreply\r\n", b"")
    exchange(t, c, "delete noreply", b"delete n noreply\r\n", b"")
    exchange(t, c, "delete 0 noreply", b"delete n 0 noreply\r\n", b"")
    t.eq("deleted", c.get(b"n"), None)
    exchange(t, c, "flush_all noreply", b"flush_all noreply\r\n", b"")
    exchange(t, c, "flush_all 0 noreply", b"flush_all 0 noreply\r\n", b"")
    exchange(t, c, "verbosity noreply", b"verbosity 1 noreply\r\n", b"")
    exchange(t, c, "verbosity", b"verbosity 0\r\n", b"OK\r\n")
    exchange(t, c, "bad number noreply", b"incr n x noreply\r\n", b"")
    c.close()


def test_arithmetic(t, srv):
    c = Client(srv)
    cases = [
        ("incr", b"set n 0 0 2\r\n10\r\nincr n 5\r\n", b"STORED\r\n15\r\n"),
        ("decr", b"decr n 3\r\n", b"12\r\n"),
        ("decr floors at 0", b"decr n 100\r\n", b"0\r\n"),
        ("decr keeps length", b"get n\r\n", b"VALUE n 0 2\r\n0 \r\nEND\r\n"),
        ("incr grows", b"set g 0 0 2\r\n99\r\nincr g 1\r\nget g\r\n",
         b"STORED\r\n100\r\nVALUE g 0 3\r\n100\r\nEND\r\n"),
        ("incr wraps at 2^64",
         b"set w 0 0 20\r\n18446744073709551615\r\nincr w 2\r\n",
         b"STORED\r\n1\r\n"),
        ("incr max delta", b"set m 0 0 1\r\n0\r\n"
         b"incr m 18446744073709551615\r\n",
         b"STORED\r\n18446744073709551615\r\n"),
        ("incr missing", b"incr nokey 1\r\n", b"NOT_FOUND\r\n"),
        ("decr missing", b"decr nokey 1\r\n", b"NOT_FOUND\r\n"),
        ("incr non-numeric", b"set s 0 0 3\r\nabc\r\nincr s 1\r\n",
         b"STORED\r\nCLIENT_ERROR cannot increment or decrement "
         b"non-numeric value\r\n"),
        ("incr negative value", b"set s 0 0 2\r\n-5\r\nincr s 1\r\n",
         b"STORED\r\nCLIENT_ERROR cannot increment or decrement "
         b"non-numeric value\r\n"),
        ("incr empty value", b"set s 0 0 0\r\n\r\nincr s 1\r\n",
         b"STORED\r\nCLIENT_ERROR cannot increment or decrement "
         b"non-numeric value\r\n"),
        ("incr padded value", b"set s 0 0 3\r\n12 \r\nincr s 1\r\n",
         b"STORED\r\n13\r\n"),
        ("incr keeps flags", b"set f 77 0 1\r\n1\r\nincr f 1\r\nget f\r\n",
         b"STORED\r\n2\r\nVALUE f 77 1\r\n2\r\nEND\r\n"),
        # memcached reads the number as safe_strtoull does: what follows
        # the first whitespace is ignored, "-0" is 0, and the value may be
        # longer than any number (checked against memcached 1.6.18).
        ("incr number then text", b"set s 0 0 6\r\n12 abc\r\nincr s 1\r\n"
         b"get s\r\n", b"STORED\r\n13\r\nVALUE s 0 6\r\n13    \r\nEND\r\n"),
        ("incr minus zero", b"set s 0 0 2\r\n-0\r\nincr s 1\r\n",
         b"STORED\r\n1\r\n"),
        ("incr long padded value",
         b"set s 0 0 70\r\n1" + b" " * 69 + b"\r\nincr s 1\r\n",
         b"STORED\r\n2\r\n"),
        ("incr value overflows", b"set s 0 0 20\r\n18446744073709551616\r\n"
         b"incr s 1\r\n", b"STORED\r\nCLIENT_ERROR cannot increment or "
         b"decrement non-numeric value\r\n"),
    ]
    for name, send, want in cases:
        exchange(t, c, name, send, want)
    c.close()


def test_delete_touch(t, srv):
    c = Client(srv)
    exchange(t, c, "delete", b"set d 0 0 1\r\nx\r\ndelete d\r\n",
             b"STORED\r\nDELETED\r\n")
    exchange(t, c, "delete missing", b"delete d\r\n", b"NOT_FOUND\r\n")
    exchange(t, c, "delete hold 0", b"set d 0 0 1\r\nx\r\ndelete d 0\r\n",
             b"STORED\r\nDELETED\r\n")
    exchange(t, c, "touch missing", b"touch d 10\r\n", b"NOT_FOUND\r\n")
    exchange(t, c, "touch", b"set d 0 0 1\r\nx\r\ntouch d 10\r\n",
             b"STORED\r\nTOUCHED\r\n")
    exchange(t, c, "gat", b"gat 100 d nope\r\n",
             b"VALUE d 0 1\r\nx\r\nEND\r\n")
    exchange(t, c, "gat no keys", b"gat 10\r\n", b"END\r\n")
    c.send(b"gats 100 d\r\n")
    ln = c.line()
    t.check("gats has cas", ln.startswith(b"VALUE d 0 1 ") and
            len(ln.split()) == 5, ln)
    c.read(3)
    t.eq("gats end", c.line(), b"END\r\n")
    exchange(t, c, "touch negative expires", b"touch d -1\r\nget d\r\n",
             b"TOUCHED\r\nEND\r\n")
    c.close()


def test_admin(t, srv):
    c = Client(srv)
    exchange(t, c, "version", b"version\r\n", VERSION_REPLY)
    exchange(t, c, "version ignores args", b"version x\r\n", VERSION_REPLY)
    exchange(t, c, "verbosity", b"verbosity 1\r\nverbosity 0\r\n",
             b"OK\r\nOK\r\n")
    exchange(t, c, "shutdown disabled", b"shutdown\r\n",
             b"ERROR: shutdown not enabled\r\n")
    c.send(b"set q 0 0 1\r\nx\r\nquit\r\n")
    t.eq("reply before quit", c.line(), b"STORED\r\n")
    t.check("quit closes", c.closed_by_server())
    c.close()


def test_pipelining(t, srv):
    c = Client(srv)
    n = 500
    req = b"".join(b"set p%d %d 0 %d\r\n%d\r\n" % (i, i, len(b"%d" % i), i)
                   for i in range(n))
    req += b"".join(b"get p%d\r\n" % i for i in range(n))
    req += b"delete p0\r\nincr p1 1\r\n"
    want = b"STORED\r\n" * n
    want += b"".join(b"VALUE p%d %d %d\r\n%d\r\nEND\r\n" %
                     (i, i, len(b"%d" % i), i) for i in range(n))
    want += b"DELETED\r\n2\r\n"
    exchange(t, c, "pipelined sets and gets", req, want)
    # A request split at every byte still parses.
    c2 = Client(srv)
    for b in b"set split 0 0 5\r\nhello\r\nget split\r\n":
        c2.send(bytes([b]))
    t.eq("byte-by-byte set", c2.line(), b"STORED\r\n")
    t.eq("byte-by-byte get", c2.line(), b"VALUE split 0 5\r\n")
    t.eq("byte-by-byte value", c2.read(7), b"hello\r\n")
    t.eq("byte-by-byte end", c2.line(), b"END\r\n")
    # A multiget of many keys spans several tokenizer passes.
    keys = [b"p%d" % i for i in range(n)]
    c.send(b"get " + b" ".join(keys) + b"\r\n")
    got = 0
    while True:
        ln = c.line()
        if ln == b"END\r\n":
            break
        c.read(int(ln.split()[3]) + 2)
        got += 1
    t.eq("long multiget", got, n - 1)
    c.close()
    c2.close()


def test_binary_values(t, srv):
    c = Client(srv)
    blob = bytes(range(256)) * 4 + b"\r\nEND\r\n\0\r\n"
    t.eq("binary set", c.set(b"bin", blob), b"STORED\r\n")
    t.eq("binary get", c.get(b"bin"), (0, blob))
    t.eq("crlf value", c.set(b"crlf", b"\r\n"), b"STORED\r\n")
    t.eq("crlf get", c.get(b"crlf"), (0, b"\r\n"))
    c.close()


def test_large_values(t, srv):
    c = Client(srv)
    big = os.urandom(1000 * 1000)
    t.eq("1 MB set", c.set(b"big", big, flags=3), b"STORED\r\n")
    t.eq("1 MB get", c.get(b"big"), (3, big))
    near = os.urandom(1024 * 1024 - 512)
    t.eq("value near -I", c.set(b"near", near), b"STORED\r\n")
    t.eq("value near -I get", c.get(b"near"), (0, near))
    too = b"z" * (1024 * 1024 + 1)
    t.eq("too large set", c.set(b"big", too),
         b"SERVER_ERROR object too large for cache\r\n")
    # The rejected data block is swallowed, the connection goes on, and (as
    # in memcached) a failed set leaves no stale value behind.
    exchange(t, c, "after too large", b"get big\r\n", b"END\r\n")
    t.eq("near kept", c.get(b"near"), (0, near))
    c.send(b"set big 0 0 %d noreply\r\n" % len(too) + too + b"\r\n")
    exchange(t, c, "too large noreply", b"", b"")
    exchange(t, c, "too large add", b"add big2 0 0 %d\r\n" % len(too) + too +
             b"\r\n", b"SERVER_ERROR object too large for cache\r\n")
    # Values streamed in small pieces.
    c.send(b"set slow 0 0 100000\r\n")
    for i in range(0, 100000, 7919):
        c.send(big[i:min(i + 7919, 100000)])
    c.send(b"\r\n")
    t.eq("streamed set", c.line(), b"STORED\r\n")
    t.eq("streamed value", c.get(b"slow"), (0, big[:100000]))
    c.close()


def test_expiry(t, srv):
    c = Client(srv)
    now = int(time.time())
    c.set(b"ttl2", b"x", exptime=2)
    c.set(b"neg", b"x", exptime=-1)
    c.set(b"past_abs", b"x", exptime=now - 100)
    c.set(b"future_abs", b"x", exptime=now + 3600)
    c.set(b"touched", b"x", exptime=2)
    c.set(b"gatted", b"x", exptime=2)
    t.eq("ttl present before expiry", c.get(b"ttl2"), (0, b"x"))
    t.eq("negative ttl expired", c.get(b"neg"), None)
    t.eq("past absolute expired", c.get(b"past_abs"), None)
    t.eq("future absolute present", c.get(b"future_abs"), (0, b"x"))
    exchange(t, c, "touch extends", b"touch touched 3600\r\n",
             b"TOUCHED\r\n")
    exchange(t, c, "gat extends", b"gat 3600 gatted\r\n",
             b"VALUE gatted 0 1\r\nx\r\nEND\r\n")
    time.sleep(2.2)
    t.eq("ttl expired", c.get(b"ttl2"), None)
    t.eq("touched survives", c.get(b"touched"), (0, b"x"))
    t.eq("gatted survives", c.get(b"gatted"), (0, b"x"))
    c.close()


def test_delayed_flush(t, srv):
    c = Client(srv)
    c.set(b"flushlater", b"x")
    exchange(t, c, "delayed flush", b"flush_all 3\r\n", b"OK\r\n")
    t.eq("delayed flush not yet", c.get(b"flushlater"), (0, b"x"))
    time.sleep(3.1)
    t.eq("delayed flush done", c.get(b"flushlater"), None)
    t.eq("stored after flush", c.set(b"after", b"y"), b"STORED\r\n")
    t.eq("stored after flush kept", c.get(b"after"), (0, b"y"))
    c.close()


def test_flush_all(t, srv):
    c = Client(srv)
    for i in range(20):
        c.set(b"f%d" % i, b"v")
    exchange(t, c, "flush_all", b"flush_all\r\n", b"OK\r\n")
    t.check("all flushed", all(c.get(b"f%d" % i) is None for i in range(20)))
    t.eq("set right after flush", c.set(b"f1", b"new"), b"STORED\r\n")
    t.eq("set right after flush kept", c.get(b"f1"), (0, b"new"))
    exchange(t, c, "flush_all 0", b"flush_all 0\r\nget f1\r\n",
             b"OK\r\nEND\r\n")
    exchange(t, c, "flush_all negative", b"set x 0 0 1\r\nx\r\n"
             b"flush_all -1\r\nget x\r\n", b"STORED\r\nOK\r\nEND\r\n")
    # flush_all 1 cuts at the current second: what is stored before the
    # clock ticks is dead at birth (memcached 1.6.18 too).
    got = None
    for _ in range(5):
        while not 0.05 < time.time() % 1 < 0.5:  # clear of the tick
            time.sleep(0.01)
        second = int(time.time())
        got = c.before_mn(b"flush_all 1\r\nset sx 0 0 1\r\nx\r\nget sx\r\n")
        if int(time.time()) == second:
            break
        got = None
    t.eq("flush_all 1 kills what this second stores", got,
         b"OK\r\nSTORED\r\nEND\r\n")
    while int(time.time()) <= second:  # the tests after it store anew
        time.sleep(0.01)
    time.sleep(0.02)  # the server's coarse clock may lag a tick
    t.eq("stored a second later kept", c.before_mn(
        b"set sx 0 0 1\r\ny\r\nget sx\r\n"),
        b"STORED\r\nVALUE sx 0 1\r\ny\r\nEND\r\n")
    c.close()


MALFORMED = [
    ("unknown command", b"bogus\r\n", b"ERROR\r\n"),
    ("empty line", b"\r\n", b"ERROR\r\n"),
    ("uppercase command", b"GET a\r\n", b"ERROR\r\n"),
    ("tab is no separator", b"get\ta\r\n", b"ERROR\r\n"),
    ("set without args", b"set\r\n", b"ERROR\r\n"),
    ("set missing length", b"set a 0 0\r\n", b"ERROR\r\n"),
    ("set too many tokens", b"set a 0 0 1 noreply extra\r\nx\r\n",
     b"ERROR\r\nERROR\r\n"),
    ("set bad length", b"set a 0 0 x\r\n",
     b"CLIENT_ERROR bad command line format\r\n"),
    ("set negative length", b"set a 0 0 -1\r\n",
     b"CLIENT_ERROR bad command line format\r\n"),
    ("set length with junk", b"set a 0 0 1x\r\nx\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    ("set huge length", b"set a 0 0 2147483647\r\n",
     b"CLIENT_ERROR bad command line format\r\n"),
    ("set length over 32 bits", b"set a 0 0 4294967297\r\nx\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    ("set bad flags", b"set a x 0 1\r\nx\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    ("set negative flags", b"set a -1 0 1\r\nx\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    ("set flags over 32 bits", b"set a 4294967296 0 1\r\nx\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    ("set hex flags", b"set a 0x10 0 1\r\nx\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    ("set bad exptime", b"set a 0 x 1\r\nx\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    ("set key too long", b"set " + LONGKEY + b" 0 0 1\r\nx\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    ("data block too long", b"set a 0 0 3\r\nabcde\r\n",
     b"CLIENT_ERROR bad data chunk\r\nERROR\r\n"),
    ("data block bad terminator", b"set a 0 0 1\r\nxyz\r\n",
     b"CLIENT_ERROR bad data chunk\r\nERROR\r\n"),
    ("data block LF only", b"set a 0 0 1\nx\nget a\n",
     b"CLIENT_ERROR bad data chunk\r\nERROR\r\n"),
    ("noreply bad data chunk", b"set a 0 0 3 noreply\r\nabcde\r\n",
     b"ERROR\r\n"),
    ("cas missing unique", b"cas a 0 0 1\r\nx\r\n", b"ERROR\r\nERROR\r\n"),
    ("cas bad unique", b"cas a 0 0 1 x\r\ny\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    ("cas negative unique", b"cas a 0 0 1 -1\r\ny\r\n",
     b"CLIENT_ERROR bad command line format\r\nERROR\r\n"),
    ("get no key", b"get\r\n", b"ERROR\r\n"),
    ("get key too long", b"get a " + LONGKEY + b"\r\n",
     b"CLIENT_ERROR bad command line format\r\n"),
    ("gat no exptime", b"gat\r\n", b"ERROR\r\n"),
    ("gat bad exptime", b"gat x a\r\n",
     b"CLIENT_ERROR invalid exptime argument\r\n"),
    ("incr no args", b"incr\r\n", b"ERROR\r\n"),
    ("incr no delta", b"incr a\r\n", b"ERROR\r\n"),
    ("incr negative delta", b"incr a -1\r\n",
     b"CLIENT_ERROR invalid numeric delta argument\r\n"),
    ("incr bad delta", b"incr a x\r\n",
     b"CLIENT_ERROR invalid numeric delta argument\r\n"),
    ("incr delta overflow", b"incr a 18446744073709551616\r\n",
     b"CLIENT_ERROR invalid numeric delta argument\r\n"),
    ("incr key too long", b"incr " + LONGKEY + b" 1\r\n",
     b"CLIENT_ERROR bad command line format\r\n"),
    ("decr too many tokens", b"decr a 1 noreply x\r\n", b"ERROR\r\n"),
    ("touch bad exptime", b"touch a x\r\n",
     b"CLIENT_ERROR invalid exptime argument\r\n"),
    ("touch no exptime", b"touch a\r\n", b"ERROR\r\n"),
    ("delete bad hold", b"delete a 5\r\n",
     b"CLIENT_ERROR bad command line format.  "
     b"Usage: delete <key> [noreply]\r\n"),
    ("delete bad word", b"delete a x noreply\r\n", b""),
    ("delete too many tokens", b"delete a b c d\r\n", b"ERROR\r\n"),
    ("delete key too long", b"delete " + LONGKEY + b"\r\n",
     b"CLIENT_ERROR bad command line format\r\n"),
    ("flush_all bad delay", b"flush_all x\r\n",
     b"CLIENT_ERROR invalid exptime argument\r\n"),
    ("flush_all too many tokens", b"flush_all 1 2 3\r\n", b"ERROR\r\n"),
    ("verbosity no level", b"verbosity\r\n", b"ERROR\r\n"),
    ("verbosity bad level", b"verbosity x\r\n",
     b"CLIENT_ERROR bad command line format\r\n"),
    ("stats unknown group", b"stats bogus\r\n", b"ERROR\r\n"),
    ("stats detail usage", b"stats detail x\r\n",
     b"CLIENT_ERROR usage: stats detail on|off|dump\r\n"),
    ("stats cachedump usage", b"stats cachedump 1\r\n",
     b"CLIENT_ERROR bad command line\r\n"),
    ("stats cachedump bad class", b"stats cachedump 100 0\r\n",
     b"CLIENT_ERROR Illegal slab id\r\n"),
    ("stats cachedump bad number", b"stats cachedump x y\r\n",
     b"CLIENT_ERROR bad command line format\r\n"),
    ("lru_crawler usage", b"lru_crawler bogus x\r\n", b"ERROR\r\n"),
    ("meta unknown", b"mx foo\r\n", b"ERROR\r\n"),
    ("meta no key", b"mg\r\n", b"ERROR\r\n"),
    # Only a first byte of 0x80 (the request magic) means binary
    # (t/proto_bin.py); the response magic is just an unknown command.
    ("binary response magic", b"\x81\x00\x00\x00\r\n", b"ERROR\r\n"),
]


def test_number_whitespace(t, srv):
    """memcached's number parsers accept a number followed by whitespace
    inside its token (a tab, a lone CR), as 1.6.18 does."""
    c = Client(srv)
    exchange(t, c, "length with tab", b"set ws 0 0 1\t\r\nx\r\nget ws\r\n",
             b"STORED\r\nVALUE ws 0 1\r\nx\r\nEND\r\n")
    exchange(t, c, "flags with tab", b"set ws 7\t 0 1\r\ny\r\nget ws\r\n",
             b"STORED\r\nVALUE ws 7 1\r\ny\r\nEND\r\n")
    exchange(t, c, "delta with CR", b"set wn 0 0 1\r\n5\r\nincr wn 2\rx\r\n",
             b"STORED\r\n7\r\n")
    exchange(t, c, "length then text", b"set ws 0 0 1x\r\nz\r\n",
             b"CLIENT_ERROR bad command line format\r\nERROR\r\n")
    c.close()


def snapshot(c, keys):
    out = {}
    for k in keys:
        c.send(b"gets " + k + b"\r\n")
        ln = c.line()
        if ln == b"END\r\n":
            out[k] = None
            continue
        parts = ln.split()
        out[k] = (parts[2], parts[4], c.read(int(parts[3]) + 2))
        c.line()
    return out


def test_malformed(t, srv):
    c = Client(srv)
    # The keys the malformed commands name hold sentinel values that must
    # come through every case unchanged.
    keys = [b"a", b"n", LONGKEY[:250]]
    for k in keys:
        c.set(k, b"sentinel-" + k[:8], flags=42)
    before = snapshot(c, keys)
    for name, send, want in MALFORMED:
        cc = Client(srv)
        exchange(t, cc, name, send, want)
        cc.close()
    t.eq("no item changed by malformed input", snapshot(c, keys), before)
    t.check("server alive after malformed input", srv.alive())
    c.close()


def test_garbage_disconnect(t, srv):
    # memcached closes a connection whose line grows past 2048 bytes
    # without a newline unless it is a get; an ordinary long line is fine.
    c = Client(srv)
    c.send(b"x" * 4096)
    t.check("long garbage line closes", c.closed_by_server())
    c.close()
    c = Client(srv)
    exchange(t, c, "long complete line", b"bogus " + b"y" * 3000 + b"\r\n",
             b"ERROR\r\n")
    c.send(b"get " + b"k " * 3000)
    t.check("long get line waits", c.quiet(0.3))
    c.send(b"\r\n")
    t.eq("long get line answered", c.line(), b"END\r\n")
    c.close()
    c = Client(srv)
    c.send(b"\x00\xff" * 2000)
    t.check("binary junk closes", c.closed_by_server())
    c.close()


# memcached closes the connection on an unknown command whose last word
# starts with "HTTP/"; not on words it sorts by first letter or knows.
HTTP_LINES = [b"GET / HTTP/1.0", b"PUT /x HTTP/1.1", b"DELETE HTTP/1.1",
              b"HEAD / HTTP/1.1", b"OPTIONS * HTTP/1.1", b"mget HTTP/1.1",
              b"HTTP/1.1", b"POST /a b c HTTP/1.0"]
NOT_HTTP = [
    ("get of an HTTP-looking key", b"get / HTTP/1.0\r\n", b"END\r\n"),
    ("s word", b"sx HTTP/1.1\r\n", b"ERROR\r\n"),
    ("t word", b"tx HTTP/1.1\r\n", b"ERROR\r\n"),
    ("watch", b"watch HTTP/1.1\r\n", b"ERROR\r\n"),
    ("lru", b"lru HTTP/1.1\r\n", b"ERROR\r\n"),
    ("one word", b"GET\r\n", b"ERROR\r\n"),
    ("HTTP/ not last", b"GET HTTP/1.1 x\r\n", b"ERROR\r\n"),
]


def test_http_lines(t, srv):
    for line in HTTP_LINES:
        c = Client(srv)
        c.send(line + b"\r\n")
        t.check("%r closes" % line, c.closed_by_server() and c.buf == b"",
                c.buf)
        c.close()
    c = Client(srv)
    for name, send, want in NOT_HTTP:
        exchange(t, c, name, send, want)
    c.close()


def test_minus_zero(t, srv):
    """memcached's unsigned parsers take "-0" (and no other '-')."""
    c = Client(srv)
    exchange(t, c, "flags -0", b"set z -0 0 1\r\nx\r\nget z\r\n",
             b"STORED\r\nVALUE z 0 1\r\nx\r\nEND\r\n")
    exchange(t, c, "incr -0", b"set zn 0 0 1\r\n7\r\nincr zn -0\r\n",
             b"STORED\r\n7\r\n")
    exchange(t, c, "incr -1", b"incr zn -1\r\n",
             b"CLIENT_ERROR invalid numeric delta argument\r\n")
    exchange(t, c, "flags -1", b"set z -1 0 1\r\nx\r\n",
             b"CLIENT_ERROR bad command line format\r\nERROR\r\n")
    exchange(t, c, "bget", b"bget z\r\n", b"VALUE z 0 1\r\nx\r\nEND\r\n")
    c.close()


def main():
    t = Tally("proto_text")
    srv = Server(["-t", "2"])
    for fn in (test_storage, test_cas, test_noreply, test_arithmetic,
               test_delete_touch, test_admin, test_pipelining,
               test_binary_values, test_large_values, test_flush_all,
               test_malformed, test_garbage_disconnect, test_expiry,
               test_delayed_flush, test_number_whitespace, test_http_lines,
               test_minus_zero):
        t.run(fn, srv)
    t.check("server survived", srv.alive())
    srv.stop()
    t.finish()


if __name__ == "__main__":
    main()
