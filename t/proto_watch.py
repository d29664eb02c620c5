#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/proto_watch.py - "watch" log streams, side by side with Debian's
memcached 1.6.18 (/usr/bin/memcached).

The same session runs against memcached/memcached and the reference while
a watcher listens; the lines it receives must be the same, with the fields
that must differ masked: ts=, gid=, cfd= and rport=. Also compared: the
replies to watch itself (kinds, bad kinds, -W, pipelining, the limit of 20
watchers), the eviction line's format, the log_watchers stat. Ours only: a
watcher that does not read loses lines, counted in "skipped=" and in
log_watcher_skipped, and the server keeps serving.
"""
import os
import re
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import Client, Server, Tally  # noqa: E402

REFERENCE = "/usr/bin/memcached"
REF_ARGS = ["-l", "127.0.0.1", "-U", "0"]
VARYING = re.compile(rb"(ts|gid|cfd|rport)=[0-9.]+")
LINE = re.compile(rb"^ts=\d+\.\d+ gid=\d+ type=\w+( \w+=\S*)+\n$")

SESSION = [
    b"set a 0 0 1\r\nx\r\n", b"get a\r\n", b"get zz\r\n", b"gets a b\r\n",
    b"add a 0 0 1\r\ny\r\n", b"replace a 5 100 2\r\nyy\r\n",
    b"append a 0 0 1\r\nz\r\n", b"prepend a 0 0 1\r\nw\r\n",
    b"cas a 0 0 1 999\r\nq\r\n", b"incr a 1\r\n", b"set n 0 0 1\r\n5\r\n",
    b"incr n 3\r\n", b"decr n 1\r\n", b"touch a 10\r\n", b"gat 10 a\r\n",
    b"delete a\r\n", b"delete a\r\n", b"set b%20c 0 0 1\r\nx\r\n",
    b"get b%20c\r\n", b"mg nope v\r\n", b"ms m 2\r\nhi\r\n", b"mg m v\r\n",
    b"ma n\r\n", b"md m\r\n",
]


def masked_lines(data):
    return [VARYING.sub(rb"\1=X", ln) + b"\n"
            for ln in data.split(b"\n") if ln]


def read_while(sock, more, wait):
    """Bytes from sock while more(chunk), called with each chunk received,
    is true, until the peer closes or wait runs out."""
    chunks = []
    deadline = time.time() + wait
    while time.time() < deadline:
        sock.settimeout(max(0.05, deadline - time.time()))
        try:
            d = sock.recv(1 << 20)
        except socket.timeout:
            break
        if not d:
            break
        chunks.append(d)
        if not more(d):
            break
    return b"".join(chunks)


def read_until(sock, marker, wait=10.0):
    """Bytes from sock until marker appears (or read_while's other ends)."""
    tail = [b""]

    def more(d):
        tail[0] = tail[0][-len(marker):] + d
        return marker not in tail[0]
    return read_while(sock, more, wait)


def read_lines(sock, n, wait=30.0):
    """Bytes from sock until they hold n watch lines, each starting with
    "ts=" (or read_while's other ends)."""
    seen = {"lines": 0, "tail": b""}

    def more(d):
        # the tail, too short to hold "ts=", finds one cut between chunks
        seen["lines"] += (seen["tail"] + d).count(b"ts=")
        seen["tail"] = d[-2:]
        return seen["lines"] < n
    return read_while(sock, more, wait)


def watched(program, args, kinds, session):
    srv = Server(args, program=program)
    w = Client(srv)
    w.send(b"watch " + kinds + b"\r\n")
    ok = w.line()
    c = Client(srv)
    for cmd in session:
        c.send(cmd + b"mn\r\n")
        while not c.line().endswith(b"MN\r\n"):
            pass
    # A last command the watcher sees, so that the read ends at its line
    # (a pause of the server's sending, on a loaded machine, is no end).
    if b"fetchers" in kinds or kinds == b"":
        c.send(b"get __end__\r\n")
    else:
        c.send(b"set __end__ 0 0 1\r\nx\r\n")
    c.line()
    data = w.buf + read_until(w.sock, b"key=__end__ ")
    if not data.endswith(b"\n"):
        data += read_until(w.sock, b"\n", 2.0)
    srv.stop()
    return ok, data


def test_streams(t):
    kinds = b"fetchers mutations evictions"
    ours_ok, ours = watched(None, [], kinds, SESSION)
    ref_ok, ref = watched(REFERENCE, REF_ARGS, kinds, SESSION)
    t.eq("watch reply as memcached", ours_ok, ref_ok)
    t.eq("watch reply", ours_ok, b"OK\r\n")
    for ln in ours.split(b"\n")[:-1]:
        t.check("line format %r" % ln, LINE.match(ln + b"\n"), ln)
    a, b = masked_lines(ours), masked_lines(ref)
    t.eq("as many lines as memcached", len(a), len(b))
    for i, (x, y) in enumerate(zip(a, b)):
        t.eq("line %d as memcached" % i, x, y)


def conn_events(program, args):
    """A client that quits and one that just closes: their conn_new and
    conn_close lines (others', like the start-up probe's, filtered out)."""
    srv = Server(args, program=program)
    w = Client(srv)
    w.send(b"watch connevents\r\n")
    w.line()
    ports = []
    for how in (b"quit\r\n", None):
        c = Client(srv)
        ports.append(c.sock.getsockname()[1])
        c.send(b"version\r\n")
        c.line()
        if how:
            c.send(how)
            c.closed_by_server()
        else:
            c.close()
    data = w.buf

    def mine():
        return [ln for ln in data.split(b"\n")
                if any(b"rport=%d " % p in ln for p in ports)]
    deadline = time.time() + 10
    while len(mine()) < 4 and time.time() < deadline:
        data += read_until(w.sock, b"\n", 0.5)
    srv.stop()
    return masked_lines(b"\n".join(mine()))


def test_conn_events(t):
    ours = conn_events(None, [])
    t.eq("conn events: 2 clients, 4 lines", len(ours), 4)
    t.check("closed normally", all(b"reason=normal" in ln
                                   for ln in ours if b"conn_close" in ln),
            ours)
    # Sorted: memcached's logger thread gathers its workers' lines in an
    # order of its own.
    t.eq("conn events as memcached", sorted(ours),
         sorted(conn_events(REFERENCE, REF_ARGS)))


def test_kinds(t):
    """Only the kinds asked for: fetchers alone (the default) has no
    item_store or conn_new line."""
    for kinds in (b"", b"fetchers", b"mutations"):
        ours = masked_lines(watched(None, [], kinds, SESSION[:3])[1])
        ref = masked_lines(watched(REFERENCE, REF_ARGS, kinds,
                                   SESSION[:3])[1])
        t.eq("watch %r lines as memcached" % kinds, ours, ref)


def replies(program, args, steps):
    srv = Server(args, program=program)
    out = []
    for data in steps:
        c = Client(srv)
        c.send(data)
        # One "\r\n"-ended reply per command; stream lines end in "\n".
        want = data.count(b"\r\n")
        got = b""
        deadline = time.time() + 10
        while got.count(b"\r\n") < want and time.time() < deadline:
            got += read_until(c.sock, b"\r\n", deadline - time.time())
        out.append(b"".join(ln + b"\r\n" for ln in
                            got.split(b"\r\n")[:want]))
    srv.stop()
    return out


def test_replies(t):
    steps = [b"watch foo\r\n", b"watch fetchers bogus\r\n",
             b"watch rawcmds proxyreqs proxyevents proxyuser\r\n",
             b"watch sysevents\r\n",
             b"get a\r\nwatch\r\n", b"watch noreply\r\n"]
    for args in ([], ["-W"]):
        ours = replies(None, args, steps)
        ref = replies(REFERENCE, REF_ARGS + args, steps)
        for s, a, b in zip(steps, ours, ref):
            t.eq("%s %r as memcached" % (args, s), a, b)


def watcher_count(srv, want):
    """stats' log_watchers once it says want, or after 5 s what it says."""
    n = None
    for _ in range(100):
        n = Client(srv).stats().get("log_watchers")
        if n == want:
            break
        time.sleep(0.05)
    return n


def limit(program, args):
    srv = Server(args, program=program)
    watchers = []
    out = []
    for _ in range(21):
        c = Client(srv)
        c.send(b"watch\r\n")
        out.append(c.line())
        watchers.append(c)
    # memcached's logger thread takes watchers in and out on its own time:
    # under load, stats may lag the replies for a while
    out.append(watcher_count(srv, "20"))
    for c in watchers:
        c.close()
    out.append(watcher_count(srv, "0"))
    srv.stop()
    return out


def test_limit(t):
    t.eq("21 watchers, then log_watchers as memcached", limit(None, []),
         limit(REFERENCE, REF_ARGS))


def evictions(program, args):
    srv = Server(args + ["-m", "2"], program=program)
    w = Client(srv)
    w.send(b"watch evictions\r\n")
    w.line()
    c = Client(srv)
    val = b"v" * 1000
    for i in range(6000):
        c.send(b"set k%d 0 0 %d noreply\r\n%s\r\n" % (i, len(val), val))
    c.send(b"version\r\n")
    c.line()
    data = read_until(w.sock, b"type=eviction", 5.0)
    data += read_until(w.sock, b"\n", 0.5)
    srv.stop()
    first = data.split(b"\n")[0] + b"\n"
    return re.sub(rb"key=k\d+", b"key=K",
                  re.sub(rb"la=\d+", b"la=L", VARYING.sub(rb"\1=X", first)))


def test_evictions(t):
    ours, ref = evictions(None, []), evictions(REFERENCE, REF_ARGS)
    t.check("an eviction line", b"type=eviction" in ours, ours)
    t.eq("eviction line as memcached (key, la masked)", ours, ref)


def test_skipped(t):
    """More lines than the socket and the 256 KB buffer hold: the rest are
    skipped; the first line after the watcher caught up says how many."""
    srv = Server(["-t", "2"])
    w = Client(srv)
    w.send(b"watch fetchers\r\n")
    c = Client(srv)
    key = b"k" * 200
    batch = b"".join(b"get %s%d\r\n" % (key, i) for i in range(500))
    for _ in range(200):
        c.send(batch)
        for _ in range(500):
            c.line()
    st = c.stats()
    t.check("log_watcher_skipped counted", int(st["log_watcher_skipped"]) > 0,
            st.get("log_watcher_skipped"))
    t.check("log_watcher_sent counted", int(st["log_watcher_sent"]) > 1000,
            st.get("log_watcher_sent"))
    # Every line the server buffered for the watcher, before the next one:
    # a pause in its sending (a loaded machine) must not end the read early,
    # or the next line would find the buffer still full and be skipped too.
    data = w.buf + read_lines(w.sock, int(st["log_watcher_sent"]))
    c.send(b"get after\r\n")
    t.eq("still serving", c.line(), b"END\r\n")
    data += read_until(w.sock, b"key=after ", 10.0)
    skips = re.findall(rb"\nskipped=(\d+)\n", data)
    t.eq("the skipped= lines add up to log_watcher_skipped",
         sum(int(n) for n in skips), int(st["log_watcher_skipped"]))
    t.check("the last one comes right before the next line", re.search(
        rb"\nskipped=\d+\nts=\d+\.\d+ gid=\d+ type=item_get key=after ",
        data), data[-300:])
    srv.stop()


def main():
    t = Tally("proto_watch")
    if not t.check("reference memcached installed",
                   os.access(REFERENCE, os.X_OK)):
        t.finish()
    t.run(test_streams)
    t.run(test_conn_events)
    t.run(test_kinds)
    t.run(test_replies)
    t.run(test_limit)
    t.run(test_evictions)
    t.run(test_skipped)
    t.finish()


if __name__ == "__main__":
    main()
