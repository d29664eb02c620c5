#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/perftest_peer.py - rdn-perftest without a VM: its client and server
against each other on one rdn-nicd (RoCE on 127.0.0.1, so the QPs have
GIDs) for every test, and its server against a Python client that speaks
perftest's exchange wrongly: an old version, a key message that is not
one, a peer that hangs up. Each must end in exit status 1 with a message,
never a crash or a hang; a client whose server does not listen exits 3.
The stock tools themselves run against it in the rxe VM (t/verbs-rxe.sh,
t/vm/perftest-check). Needs root (rdn-nicd --listen wants CAP_NET_RAW);
Python 3 standard library only.
"""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402

TOP = os.environ.get("top_builddir", ".")
NICD = os.path.join(TOP, "rdn/softnic/rdn-nicd")
PERFTEST = os.path.join(TOP, "rdn/softnic/rdn-perftest")
ITERS = 50


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def perftest(args):
    return subprocess.Popen([PERFTEST] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def finish(p, timeout=30):
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return None, out
    return p.returncode, out


def wait_listen(port, proc, timeout=10):
    """Waits until proc listens on port, without taking its one accept."""
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with open(table) as f:
                rows = [line.split() for line in f.readlines()[1:]]
            if any(r[1].endswith(":%04X" % port) and r[3] == "0A"
                   for r in rows):
                return True
        time.sleep(0.02)
    return False


def test_pairs(t):
    """Both sides ours, each test: exit 0, a latency row, the checks."""
    for test, extra in (("send", ["-s", "4096"]), ("write", ["-s", "2"]),
                        ("read", ["-s", "4096"]), ("atomic", []),
                        ("atomic", ["-A", "CMP_AND_SWAP"])):
        port = mctest.free_port()
        opts = ["-t", test, "-n", str(ITERS), "-p", str(port), "-T", "20"]
        opts += extra
        srv = perftest(opts)
        t.check("%s %s server listens" % (test, extra),
                wait_listen(port, srv))
        rc_c, out_c = finish(perftest(opts + ["127.0.0.1"]))
        rc_s, out_s = finish(srv)
        what = "%s %s" % (test, " ".join(extra))
        t.eq(what + ": client status", rc_c, 0)
        t.eq(what + ": server status", rc_s, 0)
        t.check(what + ": the client prints its latencies",
                "%d " % ITERS in out_c and "t_typical" in out_c, out_c)
        if test == "atomic" and not extra:
            t.check(what + ": the server's word counts the additions",
                    "counts %d additions" % ITERS in out_s, out_s)
        if rc_c or rc_s:
            print(out_c, out_s)


def fake_client(port, version, steps):
    """Speaks perftest's exchange as a client up to where steps say."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(version.ljust(16, "\0").encode())
        if not s.recv(16) or steps == "version":
            return
        for v in (4096, 64):
            s.sendall(struct.pack(">i", v))
            s.recv(4)
        s.sendall(b"3\0")
        s.recv(2)
        if steps == "hangup":
            return
        if steps == "keys":
            key = b"this is not a key message"
        else:  # a LID of five digits, then a well-formed rest
            key = (b"00000:0001:000011:000022:00000033:" + b"0" * 16 + b":" +
                   b"00:" * 10 + b"ff:ff:0a:00:00:01:" + b"00000000:")
        s.sendall(key.ljust(108, b"\0")[:108])
        s.recv(108)


def test_bad_peers(t):
    """A peer that gets the exchange wrong: status 1 and a message."""
    for version, steps, says in (("5.60", "version", "versions before 5.70"),
                                 ("6.06", "keys", "exchange failed"),
                                 ("6.06", "widekey", "exchange failed"),
                                 ("6.06", "hangup", "exchange failed")):
        port = mctest.free_port()
        srv = perftest(["-t", "read", "-p", str(port), "-T", "5"])
        if not t.check("server listens", wait_listen(port, srv)):
            srv.kill()
            continue
        try:
            fake_client(port, version, steps)
        except OSError:
            pass
        rc, out = finish(srv)
        t.eq("peer %s/%s: status" % (version, steps), rc, 1)
        t.check("peer %s/%s: says so" % (version, steps), says in out, out)


def test_no_server(t):
    rc, out = finish(perftest(["-t", "send", "-p", str(mctest.free_port()),
                               "127.0.0.1"]))
    t.eq("no server: exit status 3", rc, 3)


def test_usage(t):
    for args in (["-s", "2"], ["-t", "bogus"], ["-t", "atomic", "-s", "4"],
                 ["-t", "send", "-m", "1000"], ["-t", "read", "-n", "0"]):
        rc, _ = finish(perftest(args))
        t.eq("usage error %s" % " ".join(args), rc, 2)


def main():
    if os.geteuid() != 0:
        print("SKIP: rdn-nicd --listen needs root (CAP_NET_RAW)")
        sys.exit(77)
    t = mctest.Tally("perftest_peer")
    d = tempfile.mkdtemp(prefix="rdn-perftest-")
    sock = os.path.join(d, "nicd.sock")
    nicd = subprocess.Popen([NICD, "-s", sock, "--listen",
                             "127.0.0.1:%d" % free_udp_port(),
                             "-l", os.path.join(d, "nicd.log")])
    try:
        deadline = time.time() + 10
        while not os.path.exists(sock) and time.time() < deadline:
            time.sleep(0.02)
        os.environ["RDN_NICD_SOCKET"] = sock
        os.environ["RDN_NICD_AUTOSTART"] = "0"
        for fn in (test_usage, test_no_server, test_pairs, test_bad_peers):
            t.run(fn)
    finally:
        nicd.terminate()
        nicd.wait()
        shutil.rmtree(d, True)
    t.finish()


if __name__ == "__main__":
    main()
