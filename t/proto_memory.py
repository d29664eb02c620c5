#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/proto_memory.py - memory limits: LRU eviction under -m pressure,
-M errors instead of evictions, -I limits, and that the values left in the
cache are always the ones stored (never a wrong value).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import Client, Server, Tally  # noqa: E402

N = 6000


def value(i):
    return (b"%06d" % i) * 166  # 996 bytes, one slab class


def fill(c, n):
    """Pipelined sets; returns the replies."""
    replies = []
    batch = 200
    for start in range(0, n, batch):
        end = min(n, start + batch)
        c.send(b"".join(b"set key%d 0 0 %d\r\n%s\r\n" % (i, len(value(i)),
                                                         value(i))
                        for i in range(start, end)))
        replies += [c.line() for _ in range(start, end)]
    return replies


def survivors(t, c, n):
    """Checks every key present holds its own value; returns the count."""
    present = 0
    wrong = []
    for start in range(0, n, 100):
        keys = [b"key%d" % i for i in range(start, min(n, start + 100))]
        c.send(b"get " + b" ".join(keys) + b"\r\n")
        while True:
            ln = c.line()
            if ln == b"END\r\n":
                break
            parts = ln.split()
            i = int(parts[1][3:])
            if c.read(int(parts[3]) + 2)[:-2] != value(i):
                wrong.append(i)
            present += 1
    t.eq("every value present is the one stored", wrong, [])
    return present


def test_eviction(t):
    srv = Server(["-m", "2", "-t", "2"])
    c = Client(srv)
    replies = fill(c, N)
    t.eq("every set stored", set(replies), {b"STORED\r\n"})
    s = c.stats()
    evictions = int(s["evictions"])
    t.check("evictions happened", evictions > 0, s)
    t.eq("items + evictions", int(s["curr_items"]) + evictions, N)
    t.check("bytes within limit", int(s["bytes"]) <= 2 * 1024 * 1024, s)
    t.eq("oldest evicted", c.get(b"key0"), None)
    t.eq("newest kept", c.get(b"key%d" % (N - 1)), (0, value(N - 1)))
    present = survivors(t, c, N)
    t.eq("survivors match curr_items", present, int(s["curr_items"]))
    si = c.stats(b"items")
    t.check("per-class evicted", any(k.endswith(":evicted") and v != "0"
                                     for k, v in si.items()), si)
    c.close()
    srv.stop()


def test_no_evictions(t):
    srv = Server(["-m", "2", "-M", "-t", "2"])
    c = Client(srv)
    replies = fill(c, N)
    stored = replies.count(b"STORED\r\n")
    oom = replies.count(b"SERVER_ERROR out of memory storing object\r\n")
    t.eq("only STORED or out of memory", stored + oom, N)
    t.check("some stored, some refused", stored > 0 and oom > 0,
            (stored, oom))
    t.eq("first item kept", c.get(b"key0"), (0, value(0)))
    t.eq("refused item absent", c.get(b"key%d" % (N - 1)), None)
    s = c.stats()
    t.eq("no evictions", s["evictions"], "0")
    t.eq("store_no_memory", s["store_no_memory"], str(oom))
    t.eq("settings evictions off", c.stats(b"settings")["evictions"], "off")
    # noreply suppresses the error; the data block is swallowed.
    c.send(b"set over 0 0 996 noreply\r\n" + value(1) + b"\r\nmn\r\n")
    t.eq("out of memory noreply", c.line(), b"MN\r\n")
    # After a flush the memory is reusable without evicting.
    c.send(b"flush_all\r\n")
    c.line()
    t.eq("store after flush", c.set(b"again", value(2)), b"STORED\r\n")
    t.eq("survivors", survivors(t, c, N), 0)
    c.close()
    srv.stop()


def test_item_size_limit(t):
    # memcached 1.6.18 wants slab_chunk_max (512 KB by default) <= -I.
    srv = Server(["-I", "2k", "-m", "4", "-o", "slab_chunk_max=2048"])
    c = Client(srv)
    t.eq("under -I", c.set(b"small", b"s" * 1500), b"STORED\r\n")
    t.eq("over -I", c.set(b"large", b"l" * 3000),
         b"SERVER_ERROR object too large for cache\r\n")
    t.eq("after over -I", c.set(b"next", b"n"), b"STORED\r\n")
    c.send(b"append small 0 0 1000\r\n" + b"a" * 1000 + b"\r\n")
    t.eq("append past -I", c.line(), b"NOT_STORED\r\n")
    t.eq("append past -I keeps value", c.get(b"small"), (0, b"s" * 1500))
    t.eq("settings item_size_max",
         c.stats(b"settings")["item_size_max"], "2048")
    t.eq("store_too_large", c.stats()["store_too_large"], "1")
    c.close()
    srv.stop()


def main():
    t = Tally("proto_memory")
    for fn in (test_eviction, test_no_evictions, test_item_size_limit):
        t.run(fn)
    t.finish()


if __name__ == "__main__":
    main()
