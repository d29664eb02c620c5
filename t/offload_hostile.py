# SPDX-License-Identifier: BSD-3-Clause
"""t/offload_hostile.py - hostile RDMA clients cost only themselves.

On the RDMA path (t/offload_driver hostile KIND, a client that does the
handshake by hand and then sends raw requests): random bytes, a bucket
address outside the table, an oversized request, a short one, a client
with a stale generation, a client that never takes its answers, requests
whose receive count (lap word 0, rq_db) is too small or too large, or
whose other lap words stall or scramble its own chain. On the
handshake port: garbage, a wrong protocol version, response slots too
small, messages out of order, more clients than --rdn-clients.

After each, a well-behaved client still gets right answers from the NIC
and the server still serves TCP; broken clients are counted in
rdn_qp_errors.
"""
import errno
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402
import rdnwire as w  # noqa: E402
from offload_env import Driver, Nicd, run_driver, start_server  # noqa

HELLO, REFRESH, GEOMETRY, HITS, RESUME = (w.RDN_MSG_HELLO, w.RDN_MSG_REFRESH,
                                          w.RDN_MSG_GEOMETRY, w.RDN_MSG_HITS,
                                          w.RDN_MSG_RESUME)
KEYS = [b"good-%d" % i for i in range(16)]
msg = w.msg
read_reply = w.read_msg


def hello(slot_size=1 << 21, depth=4, flags=0):
    return w.LAYOUTS["rdn_hello"].pack(buf_addr=0x10000, buf_rkey=1,
                                       slot_size=slot_size, depth=depth,
                                       flags=flags)


def rejected(reply):
    """The errno of a REJECT reply (positive), None for anything else."""
    status = w.reject_status(reply)
    return None if status is None else -status


def ctl(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s


def closed(s):
    """True if the server closes the connection (whatever it says first)."""
    try:
        while s.recv(4096):
            pass
        return True
    except socket.timeout:
        return False
    except OSError:
        return True


def still_fine(t, srv, good, what):
    res = good.get(*KEYS)
    t.check("after %s: NIC answers right" % what,
            all(r[0] == 0 and r[1] == "nic" and r[4] == b"v-" + k
                for k, r in zip(KEYS, res)), repr(res[:2]))
    c = mctest.Client(srv)
    t.eq("after %s: TCP works" % what, c.get(KEYS[0]), (0, b"v-" + KEYS[0]))
    c.close()


def qp_errors(srv):
    c = mctest.Client(srv)
    n = int(c.stats()["rdn_qp_errors"])
    c.close()
    return n


def wait_errors(srv, n, secs=6):
    end = time.time() + secs
    while time.time() < end and qp_errors(srv) < n:
        time.sleep(0.1)
    return qp_errors(srv)


def test_rdma(t, srv, port, good):
    cases = [  # kind, what the hostile client may see, costs its QPs
        ("random", None, True),
        ("range", None, True),
        ("oversize", None, True),
        ("short", {"miss"}, False),
        ("stalegen", {"stale"}, False),
        # rq_db leaves no receive for the next request: it waits (RNR)
        ("lowdb", {"miss none", "miss error"}, False),
        # rq_db claims receives the ring does not have
        ("bigdb", {"miss miss"}, False),
        # lap words that stall its own chain a lap later, or run it out
        # of turn: whatever it sees, nothing else is touched
        ("lapwait", {"none", "error"}, None),
        ("lapindex", {"hit", "miss", "none", "error", "torn", "stale"},
         None),
        ("silent", {"silent"}, True),
    ]
    for kind, seen, fails in cases:
        before = qp_errors(srv)
        rc, out = run_driver(srv, port, "hostile", kind, timeout=60)
        t.eq("hostile %s ran" % kind, rc, 0)
        if seen:
            t.check("hostile %s saw %s" % (kind, seen), out.strip() in seen,
                    repr(out))
        else:  # an error, no answer, or an answer that is no hit
            t.check("hostile %s got nothing useful" % kind,
                    out.strip() in {"error", "none", "miss", "stale",
                                    "torn"}, repr(out))
        if fails:
            t.check("hostile %s: counted in rdn_qp_errors" % kind,
                    wait_errors(srv, before + 1) == before + 1)
        elif fails is not None:
            t.eq("hostile %s: no QP error" % kind, qp_errors(srv), before)
        still_fine(t, srv, good, "hostile " + kind)


def test_handshake(t, srv, port, good):
    s = ctl(port)
    s.sendall(b"GET / HTTP/1.0\r\n\r\n" + os.urandom(64))
    t.check("garbage: connection closed", closed(s))
    s.close()
    s = ctl(port)
    s.sendall(msg(HELLO, hello(), version=w.RDN_WIRE_VERSION + 1))
    t.eq("wrong version: rejected", rejected(read_reply(s)),
         errno.EPROTONOSUPPORT)
    s.close()
    s = ctl(port)
    s.sendall(msg(HELLO, hello(slot_size=4096)))
    t.eq("slots too small: rejected", rejected(read_reply(s)),
         errno.EMSGSIZE)
    s.close()
    s = ctl(port)
    s.sendall(msg(HELLO, hello(flags=0x80)))
    t.eq("unknown hello flags: rejected", rejected(read_reply(s)),
         errno.EINVAL)
    s.close()
    s = ctl(port)
    s.sendall(msg(HELLO, hello()[:20]))
    t.eq("short hello: rejected", rejected(read_reply(s)), errno.EPROTO)
    s.close()
    s = ctl(port)
    s.sendall(msg(HITS, b"\x01\x00\x03abc"))
    t.check("HITS before HELLO: closed", closed(s))
    s.close()
    s = ctl(port)
    s.sendall(msg(REFRESH))
    r = read_reply(s)
    t.check("REFRESH before HELLO: geometry", r and r[0] == GEOMETRY and
            len(r[1]) == w.LAYOUTS["rdn_geometry"].size)
    s.sendall(msg(REFRESH, b"x"))
    t.check("REFRESH with a payload: closed", closed(s))
    s.close()
    s = ctl(port)
    s.sendall(msg(HELLO, length=1 << 30))
    t.check("huge length: closed", closed(s))
    s.close()
    # Taking over a client: the live ones have their connection, and a
    # guessed id with a guessed token names nobody.
    for cid in range(1, 9):
        s = ctl(port)
        s.sendall(msg(RESUME, w.LAYOUTS["rdn_resume"].pack(
            token=0x10000 + cid, client_id=cid)))
        t.eq("RESUME of client %d: rejected" % cid, rejected(read_reply(s)),
             errno.ENOENT)
        s.close()
    s = ctl(port)
    s.sendall(msg(RESUME, b"short"))
    t.eq("short RESUME: rejected", rejected(read_reply(s)), errno.EPROTO)
    s.close()
    still_fine(t, srv, good, "handshake garbage")


def test_too_many(t, srv, port, good):
    # --rdn-clients 3: the good client and two idle connections fill it.
    idle = [ctl(port), ctl(port)]
    time.sleep(0.3)
    s = ctl(port)
    t.eq("one too many: rejected", rejected(read_reply(s)), errno.EUSERS)
    s.close()
    for i in idle:
        i.close()
    time.sleep(0.5)
    d = Driver(srv, port)
    t.eq("room again after they left", d.get1(KEYS[1])[:2], (0, "nic"))
    d.close()
    still_fine(t, srv, good, "too many clients")


def main():
    t = mctest.Tally("offload_hostile")
    Nicd(threads=2)
    srv, port = start_server(["--rdn-clients", "3"])
    c = mctest.Client(srv)
    for k in KEYS:
        c.set(k, b"v-" + k)
    c.close()
    good = Driver(srv, port)
    for fn in (test_rdma, test_handshake, test_too_many):
        t.run(fn, srv, port, good)
    t.check("server alive", srv.alive())
    good.close()
    t.finish()


if __name__ == "__main__":
    main()
