#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/proto_stress.py - a bounded concurrent stress of the server (-t 4,
several clients, about 8 s): set/get/gets/delete/incr/touch/append/mg/ma,
flush_all and connection churn mixed over a small shared key space, with
binary-protocol clients (SET, GETKQ pipelines, INCR with an initial value,
...) on the same keys. Every
reply must be one memcached gives; a value read back must be one that was
stored under that key (values name their key), counters only grow between
flushes; at the end the server is alive and counts the right connections.
"""
import os
import random
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import Client, Server, Tally  # noqa
import proto_bin as pb  # noqa

CLIENTS = 6
BIN_CLIENTS = 2
SECONDS = 8.0
KEYS = 200


def value_for(key, rnd):
    """A value that names its key, so a value of another key is caught."""
    head = b"%s|" % key
    return head + b"v" * rnd.choice([0, 10, 100, 3000, 20000])


def check_value(key, data):
    if not data.startswith(key + b"|") or data.strip(b"v") != key + b"|":
        raise AssertionError("wrong value for %r: %r" % (key, data[:60]))


def read_values(c):
    """The VALUE blocks of a get reply as {key: data}."""
    out = {}
    while True:
        ln = c.line()
        if ln == b"END\r\n":
            return out
        parts = ln.split()
        if parts[0] != b"VALUE":
            raise AssertionError("bad get reply %r" % ln)
        data = c.read(int(parts[3]) + 2)[:-2]
        out[parts[1]] = data


def expect(ln, *ok):
    if ln not in ok:
        raise AssertionError("unexpected reply %r" % ln)


class Worker:
    def __init__(self, srv, wid, deadline):
        self.srv, self.wid, self.deadline = srv, wid, deadline
        self.rnd = random.Random(wid)
        self.ops = 0
        self.error = None
        self.counter = b"ctr%d" % wid
        self.last = -1

    def key(self):
        return b"k%d" % self.rnd.randrange(KEYS)

    def step(self, c):
        r, k = self.rnd.random(), self.key()
        if r < 0.30:
            v = value_for(k, self.rnd)
            c.send(b"set %s 0 %d %d\r\n%s\r\n" %
                   (k, self.rnd.choice([0, 0, 100]), len(v), v))
            expect(c.line(), b"STORED\r\n")
        elif r < 0.55:
            k2 = self.key()
            c.send(b"get %s %s\r\n" % (k, k2))
            for key, data in read_values(c).items():
                check_value(key, data)
        elif r < 0.62:
            c.send(b"delete %s\r\n" % k)
            expect(c.line(), b"DELETED\r\n", b"NOT_FOUND\r\n")
        elif r < 0.72:
            c.send(b"incr %s 1\r\n" % self.counter)
            ln = c.line()
            if ln == b"NOT_FOUND\r\n":
                c.send(b"add %s 0 0 1\r\n0\r\n" % self.counter)
                c.line()
                self.last = -1
            else:
                n = int(ln)
                if n <= self.last:
                    raise AssertionError("counter went back %d" % n)
                self.last = n
        elif r < 0.77:
            c.send(b"touch %s %d\r\n" % (k, self.rnd.choice([0, 100])))
            expect(c.line(), b"TOUCHED\r\n", b"NOT_FOUND\r\n")
        elif r < 0.82:
            c.send(b"append %s 0 0 2\r\nvv\r\n" % k)
            expect(c.line(), b"STORED\r\n", b"NOT_STORED\r\n")
        elif r < 0.90:
            c.send(b"mg %s v k t\r\n" % k)
            ln = c.line()
            if ln.startswith(b"VA "):
                check_value(k, c.read(int(ln.split()[1]) + 2)[:-2])
            else:
                expect(ln, b"EN k%s\r\n" % k)
        elif r < 0.95:
            c.send(b"ma %s\r\n" % self.counter)
            expect(c.line(), b"HD\r\n", b"NF\r\n")
            self.last = -1  # ma counts too; only monotony is checked
        elif r < 0.955:
            c.send(b"flush_all\r\n")
            expect(c.line(), b"OK\r\n")
        elif r < 0.97:
            c.send(b"stats\r\n")
            if c.lines_until()[-1] != b"END\r\n":
                raise AssertionError("stats did not end with END")
        else:
            c.close()
            return self.connect()
        return c

    def connect(self):
        return Client(self.srv)

    def run(self):
        c = self.connect()
        try:
            while time.time() < self.deadline:
                c = self.step(c)
                self.ops += 1
        except Exception as e:  # noqa: any failure is reported
            self.error = "client %d: %r" % (self.wid, e)
        c.close()


def status(packet):
    return struct.unpack(">H", packet[6:8])[0]


class BinWorker(Worker):
    """The same mix over the binary protocol."""

    def connect(self):
        return pb.connect(("tcp", self.srv.port))

    def step(self, c):
        r, k = self.rnd.random(), self.key()
        if r < 0.30:
            v = value_for(k, self.rnd)
            c.send(pb.req(pb.SET, k, pb.sx(0, self.rnd.choice([0, 0, 100])),
                          v))
            expect(status(c.packet()), pb.OK)
        elif r < 0.55:
            keys = [self.key() for _ in range(self.rnd.randrange(1, 6))]
            c.send(b"".join(pb.req(pb.GETKQ, x) for x in keys) +
                   pb.req(pb.NOOP, opaque=pb.MARK))
            while True:
                p = c.packet()
                if p == pb.res(pb.NOOP, opaque=pb.MARK):
                    break
                kl, el = struct.unpack(">HB", p[2:5])
                key = p[24 + el:24 + el + kl]
                expect(status(p), pb.OK)
                if key not in keys:
                    raise AssertionError("getkq answered %r" % key)
                check_value(key, p[24 + el + kl:])
        elif r < 0.62:
            c.send(pb.req(pb.DELETE, k))
            expect(status(c.packet()), pb.OK, pb.ENOENT)
        elif r < 0.72:
            c.send(pb.req(pb.INCR, self.counter, pb.ax(1, 0)))
            p = c.packet()
            expect(status(p), pb.OK)
            n = struct.unpack(">Q", p[24:32])[0]
            # 0: created again after some client's flush
            if n != 0 and n <= self.last:
                raise AssertionError("counter went back %d" % n)
            self.last = n
        elif r < 0.77:
            c.send(pb.req(pb.TOUCH, k, pb.ex(self.rnd.choice([0, 100]))))
            expect(status(c.packet()), pb.OK, pb.ENOENT)
        elif r < 0.82:
            c.send(pb.req(pb.APPEND, k, value=b"vv"))
            expect(status(c.packet()), pb.OK, pb.NOT_STORED)
        elif r < 0.90:
            c.send(pb.req(pb.GATK, k, pb.ex(0)))
            p = c.packet()
            if status(p) == pb.OK:
                check_value(k, p[24 + 4 + len(k):])
            else:
                expect(p, pb.res(pb.GATK, pb.ENOENT, key=k))
        elif r < 0.905:
            c.send(pb.req(pb.FLUSH))
            expect(c.packet(), pb.res(pb.FLUSH))
            self.last = 0
        elif r < 0.92:
            c.send(pb.req(pb.STAT, opaque=77))
            if pb.packets(c)[-1][0] == "BAD HEADER":
                raise AssertionError("bad STAT packet")
        else:
            c.close()
            return self.connect()
        return c


def run_stress(t, srv, ascii_cls=Worker, bin_cls=BinWorker,
               probe_of=Client, seconds=SECONDS):
    """CLIENTS ascii_cls and BIN_CLIENTS bin_cls workers against srv for
    seconds, then the checks; probe_of(srv) is a connection for stats
    (t/proto_tls.py runs this over TLS)."""
    deadline = time.time() + seconds
    workers = [ascii_cls(srv, i, deadline) for i in range(CLIENTS)]
    workers += [bin_cls(srv, CLIENTS + i, deadline)
                for i in range(BIN_CLIENTS)]
    threads = [threading.Thread(target=w.run) for w in workers]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for w in workers:
        t.check("client %d ran without a bad reply" % w.wid, w.error is None,
                w.error or "")
    t.check("clients made progress", sum(w.ops for w in workers) > 1000,
            str(sum(w.ops for w in workers)))
    t.check("server alive", srv.alive())
    probe = probe_of(srv)
    deadline = time.time() + 5
    st = probe.stats()
    while st["curr_connections"] != "1" and time.time() < deadline:
        time.sleep(0.05)
        st = probe.stats()
    t.eq("closed connections are gone", st["curr_connections"], "1")
    probe.close()


def test_stress(t):
    srv = Server(["-t", "4", "-m", "8", "-o", "hashpower=12"])
    run_stress(t, srv)
    srv.stop()


def main():
    t = Tally("proto_stress")
    t.run(test_stress)
    t.finish()


if __name__ == "__main__":
    main()
