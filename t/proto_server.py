#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/proto_server.py - command-line flags and transports: exit code 64 on
bad flags, -h/-V, the root/-u rule, -l default 127.0.0.1, -c limit, -R
yields, -A shutdown, -vv, -d/-P daemon mode, UDP (-U) and unix sockets (-s).
"""
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import SERVER, Client, Server, Tally, free_port, root_args  # noqa

BAD_FLAGS = [
    ["-x"], ["--bogus"], ["-p"], ["-p", "abc"], ["-p", "70000"],
    ["-m", "0"], ["-m", "-5"], ["-t", "0"], ["-c", "0"], ["-f", "1.0"],
    ["-f", "x"], ["-n", "0"], ["-I", "100"], ["-I", "2000m"], ["-I", "1x"],
    ["-m", "1", "-I", "1m"], ["-o", "bogus"], ["-o", "hashpower=99"],
    ["-o", "hash_algorithm=jenkins"], ["-B", "bin"], ["-R", "0"],
    ["-a", "999"], ["-D", "ab"], ["extra-argument"], ["-I", "256k"],
    ["-I", "1000k"], ["-o", "slab_chunk_max=100"], ["-o", "slab_chunk_max"],
    ["-o", "slab_chunk_max=abc"], ["-o", "slab_chunk_max=0"],
    ["-o", "idle_timeout"],
]

# Refused by Debian's memcached 1.6.18 with the same first line of stderr
# (it exits 1 where a -o value is missing; ours exits 64 for every bad flag).
SAME_MESSAGE = [
    ["-B", "bin"], ["-I", "256k"], ["-I", "1000k"], ["-I", "2k", "-m", "4"],
    ["-o", "slab_chunk_max=100"], ["-o", "slab_chunk_max=2097152"],
    ["-o", "idle_timeout"], ["-o", "tail_repair_time=5"],
    ["-o", "hot_lru_pct=80"], ["-o", "slab_automove=3"],
    ["-o", "slab_automove_ratio=0"], ["-o", "slab_automove_ratio=1.5"],
    ["-o", "hot_max_factor=0"], ["-o", "warm_max_factor"],
    ["-o", "watcher_logbuf_size=x"], ["-o", "temporary_ttl"],
    ["-o", "slab_automove_window=2"], ["-o", "read_buf_mem_limit=-1"],
    ["-o", "temporary_ttl=5,no_lru_maintainer"],
    ["-o", "hot_lru_pct=50,warm_lru_pct=40"],
    ["-o", "no_modern,temporary_ttl=3"],
]

# Accepted by memcached 1.6.18 (and here, where they have no effect).
KNOBS = ("slab_reassign,slab_automove=2,tail_repair_time=10,hot_lru_pct=20,"
         "warm_lru_pct=40,hot_max_factor=0.2,warm_max_factor=2.0,"
         "temporary_ttl=61,lru_maintainer,watcher_logbuf_size=256,"
         "worker_logbuf_size=64,slab_automove_ratio=0.5,"
         "slab_automove_window=30,no_chunked_items,inline_ascii_resp,"
         "no_inline_ascii_resp,no_slab_reassign,no_slab_automove,"
         "read_buf_mem_limit=10,slab_automove,idle_timeout=0,"
         "slab_chunk_max=524288")
REFERENCE = "/usr/bin/memcached"


def run(args, timeout=10):
    return subprocess.run([SERVER] + args, capture_output=True,
                          timeout=timeout)


def test_bad_flags(t):
    for args in BAD_FLAGS:
        r = run(root_args() + args)
        t.eq("exit code for %s" % " ".join(args), r.returncode, 64)
        t.check("message for %s" % " ".join(args), len(r.stderr) > 0, r)


def test_messages_as_memcached(t):
    if not t.check("reference memcached installed", os.access(REFERENCE,
                                                              os.X_OK)):
        return
    for args in SAME_MESSAGE:
        ours = run(root_args() + args)
        ref = subprocess.run([REFERENCE] + root_args() + ["-l", "127.0.0.1"] +
                             args, capture_output=True, timeout=10)
        t.eq("message for %s as memcached" % " ".join(args),
             ours.stderr.split(b"\n")[0], ref.stderr.split(b"\n")[0])
        t.check("memcached refuses %s too" % " ".join(args),
                ref.returncode in (1, 64), ref)


def test_idle_timeout(t):
    srv = Server(["-o", "idle_timeout=1"])
    idle, busy, mid = Client(srv), Client(srv), Client(srv)
    mid.send(b"set k 0 0 10\r\nabc")
    t.check("not closed before idle_timeout", idle.quiet(0.3))
    for _ in range(12):
        busy.send(b"version\r\n")
        t.eq("busy connection served", busy.line(), b"VERSION 1.6.18\r\n")
        time.sleep(0.25)
    t.check("an idle connection is closed", idle.closed_by_server(8.0))
    t.check("a connection mid data block is not", mid.quiet(0.1))
    mid.send(b"defghij\r\n")
    t.eq("its set completes", mid.line(), b"STORED\r\n")
    st = busy.stats()
    t.eq("idle_kicks", st.get("idle_kicks"), "1")
    t.eq("idle_timeout setting", busy.stats(b"settings")["idle_timeout"], "1")
    srv.stop()
    srv = Server([])
    t.check("no idle_kicks without idle_timeout (as memcached)",
            "idle_kicks" not in Client(srv).stats())
    srv.stop()


def test_knobs_accepted(t):
    for program, extra in ((None, []), (REFERENCE, ["-l", "127.0.0.1"])):
        who = "memcached 1.6.18" if program else "ours"
        srv = Server(extra + ["-o", KNOBS], program=program)
        c = Client(srv)
        c.send(b"version\r\n")
        t.eq("%s serves with every knob set" % who, c.line(),
             b"VERSION 1.6.18\r\n")
        t.eq("%s: slab_chunk_max after no_chunked_items and its own" % who,
             c.stats(b"settings").get("slab_chunk_max"), "524288")
        srv.stop()


def test_help_version(t):
    r = run(["-h"])
    t.eq("-h exit code", r.returncode, 0)
    out = r.stdout.decode()
    t.check("-h says the 127.0.0.1 default", "127.0.0.1" in out, out[:200])
    for flag in ("-p", "-U", "-s", "-l", "-m", "-M", "-c", "-t", "-I", "-f",
                 "-n", "-v", "-d", "-P", "-u", "-o", "-V", "-h"):
        t.check("-h lists %s" % flag, "\n" + flag + "," in out or
                "\n" + flag + " " in out, flag)
    r = run(["-V"])
    lines = r.stdout.decode().splitlines()
    t.eq("-V exit code", r.returncode, 0)
    t.eq("-V first line as memcached's", lines[:1], ["memcached 1.6.18"])
    t.check("-V names the package and its NIC providers",
            len(lines) == 2 and lines[1].startswith("redn-memcached ") and
            "NIC providers: softnic-inproc softnic" in lines[1], lines)


def test_root_rule(t):
    if os.geteuid() == 0:
        r = run(["-p", str(free_port())])
        t.eq("root without -u", r.returncode, 64)
        t.check("root message", b"-u" in r.stderr, r.stderr)
        r = run(["-u", "no-such-user-here", "-p", str(free_port())])
        t.eq("unknown -u user", r.returncode, 64)
    else:
        # Not root: -u is ignored, as in memcached.
        srv = Server(["-u", "nobody"])
        t.check("non-root ignores -u", srv.alive())
        srv.stop()


def test_listen_default(t):
    srv = Server()
    c = Client(srv)
    t.eq("listens on 127.0.0.1", c.set(b"k", b"v"), b"STORED\r\n")
    c.close()
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.2", srv.port))
        reached = True
    except OSError:
        reached = False
    s.close()
    t.check("not on other loopback addresses", not reached)
    srv.stop()


def test_maxconns(t):
    srv = Server(["-c", "2"])
    a = Client(srv)
    # The start-up probe's connection may still be closing: wait for it.
    deadline = time.time() + 5
    while a.stats()["curr_connections"] != "1" and time.time() < deadline:
        time.sleep(0.05)
    b = Client(srv)
    b.send(b"version\r\n")
    t.eq("second connection served", b.line(), b"VERSION 1.6.18\r\n")
    extra = Client(srv)
    t.eq("over -c rejected", extra.line(),
         b"ERROR Too many open connections\r\n")
    t.check("rejected connection closed", extra.closed_by_server())
    t.eq("rejected_connections", a.stats()["rejected_connections"], "1")
    b.close()
    while a.stats()["curr_connections"] != "1" and time.time() < deadline:
        time.sleep(0.05)
    again = Client(srv)
    again.send(b"version\r\n")
    t.eq("accepting again after a close", again.line(),
         b"VERSION 1.6.18\r\n")
    for x in (a, extra, again):
        x.close()
    srv.stop()


def test_maxconns_burst(t):
    """-c is a hard limit even for a burst of connections the workers have
    not picked up yet: exactly -c are served, every other one gets
    memcached's error line and is closed."""
    burst, limit = 40, 3
    srv = Server(["-c", str(limit), "-t", "4"])
    a = Client(srv)
    deadline = time.time() + 5
    while a.stats()["curr_connections"] != "1" and time.time() < deadline:
        time.sleep(0.05)
    socks = [socket.create_connection(("127.0.0.1", srv.port), timeout=5)
             for _ in range(burst)]
    # Wait until the listener has accepted every one of them.
    st = a.stats()
    while (int(st["curr_connections"]) + int(st["rejected_connections"]) <
           burst + 1 and time.time() < deadline):
        time.sleep(0.05)
        st = a.stats()
    t.eq("connections at -c", st["curr_connections"], str(limit))
    t.eq("rejected_connections", st["rejected_connections"],
         str(burst + 1 - limit))
    readable, _, _ = select.select(socks, [], [], 0.5)
    rejected = 0
    for s in readable:
        rejected += s.recv(100) == b"ERROR Too many open connections\r\n"
    t.eq("rejected with memcached's error", rejected, burst + 1 - limit)
    served = [s for s in socks if s not in readable]
    for s in served:
        s.sendall(b"version\r\n")
        t.eq("admitted connection served", s.recv(100),
             b"VERSION 1.6.18\r\n")
    for s in socks:
        s.close()
    a.close()
    srv.stop()


def test_no_maxconns_fast(t):
    """-o no_maxconns_fast: a client over -c waits, and is served once a
    connection closes (the listener pauses instead of rejecting)."""
    srv = Server(["-c", "2", "-o", "no_maxconns_fast"])
    a = Client(srv)
    deadline = time.time() + 5
    while a.stats()["curr_connections"] != "1" and time.time() < deadline:
        time.sleep(0.05)
    b = Client(srv)
    b.send(b"version\r\n")
    t.eq("second connection served", b.line(), b"VERSION 1.6.18\r\n")
    extra = Client(srv)
    extra.send(b"version\r\n")
    t.check("over -c waits, not rejected", extra.quiet(0.5))
    # Paused as soon as -c are open (after a, and maybe earlier while the
    # start-up probe's connection was still open), so at least once.
    t.check("listener paused", int(a.stats()["listen_disabled_num"]) >= 1)
    b.close()
    t.eq("served after a close", extra.line(), b"VERSION 1.6.18\r\n")
    t.eq("nothing rejected", a.stats()["rejected_connections"], "0")
    for x in (a, extra):
        x.close()
    srv.stop()


def test_reqs_per_event(t):
    srv = Server(["-R", "1", "-t", "1"])
    c = Client(srv)
    n = 300
    c.send(b"".join(b"set r%d 0 0 1\r\n%d\r\n" % (i, i % 10)
                    for i in range(n)))
    t.eq("pipelined with -R 1", [c.line() for _ in range(n)],
         [b"STORED\r\n"] * n)
    t.check("conn_yields counted", int(c.stats()["conn_yields"]) > 0)
    c.close()
    srv.stop()


def test_shutdown(t):
    srv = Server(["-A"])
    c = Client(srv)
    c.send(b"shutdown bogus\r\n")
    t.eq("shutdown bad mode", c.line(),
         b"CLIENT_ERROR invalid shutdown mode\r\n")
    c.send(b"shutdown\r\n")
    t.check("shutdown closes", c.closed_by_server())
    try:
        srv.proc.wait(5)
    except subprocess.TimeoutExpired:
        pass
    t.eq("shutdown exits cleanly", srv.proc.poll(), 0)
    srv.stop()


def test_verbose(t):
    srv = Server(["-vv"])
    c = Client(srv)
    c.send(b"get verbose_key\r\n")
    c.line()
    c.close()
    srv.stop()
    err = srv.proc.stderr.read()
    t.check("-vv logs commands", b"get verbose_key" in err, err[:300])
    t.check("-vv logs replies", b">" in err and b"END" in err, err[:300])


def test_daemon(t):
    tmp = tempfile.mkdtemp()
    pidfile = os.path.join(tmp, "mc.pid")
    port = free_port()
    r = run(root_args() + ["-d", "-P", pidfile, "-p", str(port)])
    t.eq("-d parent exits 0", r.returncode, 0)
    pid = None
    try:
        deadline = time.time() + 5
        while time.time() < deadline and pid is None:
            try:
                with open(pidfile) as f:
                    pid = int(f.read().strip() or 0) or None
            except (OSError, ValueError):
                time.sleep(0.05)
        t.check("pid file written", pid is not None)
        if pid is None:
            return
        os.kill(pid, 0)
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"version\r\n")
        t.eq("daemon serves", s.recv(100), b"VERSION 1.6.18\r\n")
        s.close()
        os.kill(pid, signal.SIGTERM)
        deadline = time.time() + 5
        while time.time() < deadline and os.path.exists(pidfile):
            time.sleep(0.05)
        t.check("pid file removed on exit", not os.path.exists(pidfile))
        pid = None
    finally:
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def udp_request(sock, port, reqid, payload, total=1):
    hdr = struct.pack(">HHHH", reqid, 0, total, 0)
    sock.sendto(hdr + payload, ("127.0.0.1", port))


def udp_reply(sock):
    """Reassembles one reply: {reqid: (total, {seq: payload})}."""
    parts = {}
    total = None
    while total is None or len(parts) < total:
        data, _ = sock.recvfrom(65536)
        reqid, seq, total, _ = struct.unpack(">HHHH", data[:8])
        parts[seq] = data[8:]
    return reqid, total, b"".join(parts[i] for i in sorted(parts))


def test_udp(t):
    srv = Server(["-t", "2"], udp=True)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(5)
    try:
        udp_request(u, srv.udp_port, 7, b"set u 3 0 5\r\nhello\r\n")
        t.eq("udp set", udp_reply(u), (7, 1, b"STORED\r\n"))
        udp_request(u, srv.udp_port, 8, b"get u\r\n")
        t.eq("udp get", udp_reply(u),
             (8, 1, b"VALUE u 3 5\r\nhello\r\nEND\r\n"))
        c = Client(srv)
        big = os.urandom(5000)
        c.set(b"big", big)
        c.close()
        udp_request(u, srv.udp_port, 9, b"get big\r\n")
        reqid, total, body = udp_reply(u)
        want = b"VALUE big 0 5000\r\n" + big + b"\r\nEND\r\n"
        t.eq("udp multi-datagram reply", (reqid, body), (9, want))
        t.check("udp reply split", total > 1, total)
        udp_request(u, srv.udp_port, 10, b"get u\r\n", total=2)
        t.eq("udp multi-packet request", udp_reply(u),
             (10, 1, b"SERVER_ERROR multi-packet request not supported\r\n"))
        udp_request(u, srv.udp_port, 11, b"set n 0 0 1 noreply\r\nx\r\n"
                    b"get n\r\n")
        t.eq("udp pipelined noreply", udp_reply(u),
             (11, 1, b"VALUE n 0 1\r\nx\r\nEND\r\n"))
    finally:
        u.close()
    srv.stop()


def test_unix_socket(t):
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "mc.sock")
    tcp_port = free_port()
    srv = Server(["-a", "600", "-p", str(tcp_port)], unix=path)
    t.eq("unix socket mode", oct(os.stat(path).st_mode & 0o777), "0o600")
    c = Client(srv, unix=path)
    t.eq("unix set", c.set(b"k", b"v"), b"STORED\r\n")
    t.eq("unix get", c.get(b"k"), (0, b"v"))
    st = c.stats(b"settings")
    t.eq("domain_socket", st["domain_socket"], path)
    conns = c.stats(b"conns")
    t.check("unix addr in stats conns",
            any(v == "unix:" + path for v in conns.values()), conns)
    c.close()
    t.check("no TCP with -s", not _tcp_open(tcp_port))
    srv.stop()
    t.check("socket file removed on exit", not os.path.exists(path))


def _tcp_open(port):
    s = socket.socket()
    s.settimeout(1)
    try:
        s.connect(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def main():
    t = Tally("proto_server")
    for fn in (test_bad_flags, test_messages_as_memcached, test_help_version,
               test_idle_timeout, test_knobs_accepted, test_root_rule,
               test_listen_default, test_maxconns, test_maxconns_burst,
               test_no_maxconns_fast,
               test_reqs_per_event, test_shutdown, test_verbose,
               test_daemon, test_udp, test_unix_socket):
        t.run(fn)
    t.finish()


if __name__ == "__main__":
    main()
