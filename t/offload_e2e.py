# SPDX-License-Identifier: BSD-3-Clause
"""t/offload_e2e.py - offloaded GETs end to end, in separate processes:
memcached --rdn-port, a private rdn-nicd, RDMA clients (t/offload_driver).

Keys of 1..250 bytes and values of 0 bytes..1 MB; full buckets and keys
in their second bucket; every mutation command followed by an offloaded
GET that sees the new state (binary protocol commands too); expiry (gone from the NIC within a second or
so) and flush_all (immediate and delayed); a table growth while GETs run;
eight clients at once; the server's rdn statistics.
"""
import errno
import os
import signal
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402
import proto_bin as pb  # noqa: E402
from rdnwire import RDN_KEY_MAX  # noqa: E402
from offload_env import (ENOENT, EAGAIN, Driver, Nicd, run_driver,  # noqa
                         accepts, forged_resume, start_server)

MB = 1024 * 1024


def key_of(n, i):
    """A key of n printable bytes (no spaces), distinct per i."""
    if n < 4:
        return bytes([65 + i]) * n
    fill = bytes(33 + (j * 7 + i) % 94 for j in range(n))
    return (b"K%d_" % i + fill)[:n]


def test_keys_and_values(t, srv, port):
    c = mctest.Client(srv)
    d = Driver(srv, port)
    keys = {}
    for i, n in enumerate([1, 2, 10, 100, RDN_KEY_MAX - 1, RDN_KEY_MAX]):
        k = key_of(n, i)
        v = bytes((j * 31 + n) % 256 for j in range(n * 3))
        t.eq("set %d-byte key" % n, c.set(k, v, flags=n), b"STORED\r\n")
        keys[k] = (n, v)
    for size in [0, 1, 7, 8, 100, 1000, 4096, 65536, 300000, MB]:
        k = b"size-%d" % size
        v = os.urandom(size)
        t.eq("set %d-byte value" % size, c.set(k, v, flags=7), b"STORED\r\n")
        keys[k] = (7, v)
    for k, (flags, v) in keys.items():
        st, src, fl, cas, val = d.get1(k)
        t.check("hit %r" % k[:20], st == 0 and val == v and fl == flags,
                "status %d len %s" % (st, None if val is None else len(val)))
        t.eq("answered by the NIC %r" % k[:20], src, "nic")
    for n in [1, 50, RDN_KEY_MAX]:
        st, src, _, _, val = d.get1(b"m" * n)
        t.eq("miss of a %d-byte key" % n, (st, src, val), (ENOENT, "nic",
                                                          None))
    # Several keys in one request batch (multi-get, 8 in flight).
    ks = list(keys)[:12] + [b"absent-1", b"absent-2"]
    res = d.get(*ks)
    t.check("multi-get", all(
        (r[0] == 0 and r[4] == keys[k][1]) if k in keys else r[0] == ENOENT
        for k, r in zip(ks, res)))
    s = d.stats()
    t.eq("no TCP fallback was needed", s["tcp_gets"], 0)
    d.close()
    c.close()


def test_value_buffer(t, srv, port):
    """rdn_get_value(): every answer in one reused buffer, grown only for a
    value larger than any before, the same answers as rdn_get()."""
    c = mctest.Client(srv)
    d = Driver(srv, port)
    sizes = [0, 1, 100, 5000, 65536, MB, 10, 3000]
    for size in sizes:
        v = bytes((j * 13 + size) % 256 for j in range(size))
        t.eq("set %d-byte value" % size,
             c.set(b"vbuf-%d" % size, v, flags=size % 7), b"STORED\r\n")
    cap, moves, peak = 0, 0, 0
    for size in sizes:
        k = b"vbuf-%d" % size
        got = d.vget1(k)
        want = d.get1(k)
        t.eq("vget %d bytes: the value, from the NIC" % size,
             (got[0], got[1], got[2], got[4]),
             (0, "nic", size % 7, bytes((j * 13 + size) % 256
                                        for j in range(size))))
        t.eq("vget %d bytes: as rdn_get() (cas too)" % size, got, want)
        cap, moved = d.vstats()
        peak = max(peak, size)
        t.check("buffer holds the largest value yet (%d) and its NUL" % peak,
                cap >= peak + 1, "cap %d" % cap)
        if size < peak:
            t.eq("no new buffer for a smaller value (%d bytes)" % size,
                 moved, moves)
        moves = moved
    t.check("the buffer moved at most once per larger value",
            moves <= len(sizes) - 2, moves)
    st = d.vget1(b"vbuf-absent")
    t.eq("vget miss", (st[0], st[1], st[4]), (ENOENT, "nic", None))
    t.eq("a miss keeps the buffer", d.vstats(), (cap, moves))
    # In its last second an item is asked over TCP ("expires now"): that
    # path copies into the same buffer, grown here for a larger value. A
    # GET of 1 MB can take longer than that second on a loaded machine and
    # step over it: then another item, three at most.
    big = os.urandom(MB + 4096)
    for i in range(3):
        key = b"vbuf-soon-%d" % i
        c.set(key, big, flags=3, exptime=2)
        srcs, wrong, end = set(), 0, time.time() + 6
        while time.time() < end:
            st, src, fl, _, val = d.vget1(key)
            if st != 0:
                break
            srcs.add(src)
            wrong += val != big or fl != 3
        t.eq("vget until it expired: right values", wrong, 0)
        t.eq("vget until it expired: then not found", st, ENOENT)
        if "tcp" in srcs:
            break
    t.check("its last second was asked over TCP", "tcp" in srcs, srcs)
    t.check("grown for it", d.vstats()[0] >= len(big) + 1)
    t.eq("vget of a key too long", d.vget1(b"k" * (RDN_KEY_MAX + 1))[0],
         -errno.EINVAL)
    d.close()
    c.close()


def same_bucket_keys(srv, port, hashpower, want):
    """want keys whose first candidate bucket is the same."""
    cands = [b"fb-%d" % i for i in range(40000)]
    p_in = "\n".join(k.hex() for k in cands) + "\n"
    import subprocess
    from offload_env import DRIVER
    out = subprocess.run([DRIVER, "hash", str(hashpower)], input=p_in.encode(),
                         stdout=subprocess.PIPE, check=True).stdout.split(b"\n")
    by_b1 = {}
    for k, ln in zip(cands, out):
        by_b1.setdefault(int(ln.split()[1]), []).append(k)
    best = max(by_b1.values(), key=len)
    return best[:want]


def test_full_buckets(t, srv, port):
    keys = same_bucket_keys(srv, port, 12, 9)
    t.check("found 9 keys sharing a bucket", len(keys) == 9)
    c = mctest.Client(srv)
    d = Driver(srv, port)
    for k in keys[:7]:  # at most 4 fit their first bucket
        c.set(k, b"val-" + k)
    res = d.get(*keys[:7])
    t.check("all 7 found, by the NIC, some in their second bucket",
            all(r[0] == 0 and r[4] == b"val-" + k and r[1] == "nic"
                for k, r in zip(keys, res)), repr(res))
    res = d.get(*keys[7:])
    t.check("misses behind a full bucket", all(r[0] == ENOENT and
                                               r[1] == "nic" for r in res))
    d.close()
    c.close()


def nic_agrees(t, c, d, k, what):
    """The NIC's answer for k equals what TCP (client c) says now."""
    tcp = c.gets(k)
    st, src, fl, cas, val = d.get1(k)
    if tcp is None:
        t.eq(what + ": miss", (st, src), (ENOENT, "nic"))
    else:
        t.eq(what, (st, src, fl, val, cas), (0, "nic") + tcp)


def test_mutations(t, srv, port):
    c = mctest.Client(srv)
    d = Driver(srv, port)
    k = b"mut"

    def agree(what):
        nic_agrees(t, c, d, k, what)

    def cmd(line, data=None):
        c.send(line + b"\r\n" + (data + b"\r\n" if data is not None else b""))
        return c.line()

    t.eq("set", cmd(b"set mut 1 0 3", b"one"), b"STORED\r\n")
    agree("after set")
    t.eq("add (exists)", cmd(b"add mut 0 0 1", b"x"), b"NOT_STORED\r\n")
    agree("after failed add")
    t.eq("replace", cmd(b"replace mut 2 0 3", b"two"), b"STORED\r\n")
    agree("after replace")
    t.eq("append", cmd(b"append mut 0 0 4", b"-end"), b"STORED\r\n")
    agree("after append")
    t.eq("prepend", cmd(b"prepend mut 0 0 6", b"start-"), b"STORED\r\n")
    agree("after prepend")
    cas = c.gets(k)[2]
    t.eq("cas ok", cmd(b"cas mut 3 0 5 %d" % cas, b"three"), b"STORED\r\n")
    agree("after cas")
    t.eq("cas stale", cmd(b"cas mut 3 0 1 %d" % cas, b"z"), b"EXISTS\r\n")
    agree("after failed cas")
    t.eq("set number", cmd(b"set mut 0 0 2", b"41"), b"STORED\r\n")
    t.eq("incr", cmd(b"incr mut 1"), b"42\r\n")
    agree("after incr")
    t.eq("decr", cmd(b"decr mut 40"), b"2\r\n")
    agree("after decr")
    t.eq("touch", cmd(b"touch mut 1000"), b"TOUCHED\r\n")
    agree("after touch")
    t.eq("meta set", cmd(b"ms mut 4 F9", b"meta"), b"HD\r\n")
    agree("after ms")
    t.eq("meta arithmetic", cmd(b"ms mut 1", b"5"), b"HD\r\n")
    t.eq("ma", cmd(b"ma mut D3"), b"HD\r\n")
    agree("after ma")
    t.eq("meta delete stale", cmd(b"md mut I"), b"HD\r\n")
    agree("after md I (stale item, new cas)")
    t.eq("delete", cmd(b"delete mut"), b"DELETED\r\n")
    agree("after delete")
    t.eq("add (absent)", cmd(b"add mut 5 0 3", b"new"), b"STORED\r\n")
    agree("after add")
    t.eq("meta delete", cmd(b"md mut"), b"HD\r\n")
    agree("after md")
    d.close()
    c.close()


def test_binary_mutations(t, srv, port):
    """Items the binary protocol stores are the NIC's items like any other."""
    c = mctest.Client(srv)
    b = pb.connect(("tcp", srv.port))
    d = Driver(srv, port)
    k = b"binmut"

    def status(packet):
        b.send(packet)
        return struct.unpack(">H", b.packet()[6:8])[0]

    t.eq("binary set", status(pb.req(pb.SET, k, pb.sx(3), b"bin-one")), 0)
    nic_agrees(t, c, d, k, "after binary set")
    t.eq("binary append", status(pb.req(pb.APPEND, k, value=b"+")), 0)
    nic_agrees(t, c, d, k, "after binary append")
    cas = c.gets(k)[2]
    t.eq("binary cas set", status(pb.req(pb.SET, k, pb.sx(4), b"77",
                                         cas=cas)), 0)
    nic_agrees(t, c, d, k, "after binary cas set")
    t.eq("binary incr", status(pb.req(pb.INCR, k, pb.ax(5))), 0)
    nic_agrees(t, c, d, k, "after binary incr")
    t.eq("binary touch", status(pb.req(pb.TOUCH, k, pb.ex(1000))), 0)
    nic_agrees(t, c, d, k, "after binary touch")
    t.eq("binary delete", status(pb.req(pb.DELETE, k)), 0)
    nic_agrees(t, c, d, k, "after binary delete")
    t.eq("binary incr creates", status(pb.req(pb.INCR, k, pb.ax(1, 9))), 0)
    nic_agrees(t, c, d, k, "after binary incr with initial")
    b.send(pb.req(pb.SETQ, k, pb.sx(), b"quiet") + pb.req(pb.NOOP))
    t.eq("binary setq + noop", b.packet(), pb.res(pb.NOOP))
    nic_agrees(t, c, d, k, "after binary setq")
    d.close()
    b.close()
    c.close()


def wait_until(pred, secs):
    end = time.time() + secs
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def test_expiry(t, srv, port):
    c = mctest.Client(srv)
    d = Driver(srv, port)
    nic = Driver(srv, port, no_fallback=True)
    c.set(b"exp", b"soon", exptime=3)
    c.set(b"keep", b"long", exptime=1000)
    t0 = time.time()
    r = nic.get1(b"exp")
    t.eq("hit before expiry (NIC)", (r[0], r[1], r[4]), (0, "nic", b"soon"))
    # The NIC has no clock: the item must leave the table within about a
    # second of its expiry; meanwhile the client asks TCP (-11 without).
    gone = wait_until(lambda: nic.get1(b"exp")[0] == ENOENT, 8)
    t.check("expired item left the NIC's table", gone)
    t.check("not before it expired", time.time() - t0 >= 2.0)
    t.check("within about a second of its expiry",
            time.time() - t0 <= 3 + 2.5, "%.1f s" % (time.time() - t0))
    t.eq("expired: not found", d.get1(b"exp")[0], ENOENT)
    t.eq("other item still served by the NIC", nic.get1(b"keep")[:2],
         (0, "nic"))
    nic.close()
    d.close()
    c.close()


def test_flush_all(t, srv, port):
    c = mctest.Client(srv)
    nic = Driver(srv, port, no_fallback=True)
    for i in range(20):
        c.set(b"fl-%d" % i, b"v%d" % i)
    t.eq("hit before flush", nic.get1(b"fl-3")[:2], (0, "nic"))
    c.send(b"flush_all\r\n")
    t.eq("flush_all", c.line(), b"OK\r\n")
    res = nic.get(*[b"fl-%d" % i for i in range(20)])
    t.check("flushed at once, the NIC says not found",
            all(r[0] == ENOENT and r[1] == "nic" for r in res), repr(res[:3]))
    c.set(b"fl-new", b"after")
    t.eq("stored after the flush: NIC hit", nic.get1(b"fl-new")[::4],
         (0, b"after"))
    c.send(b"flush_all 2\r\n")
    t.eq("delayed flush_all", c.line(), b"OK\r\n")
    t.eq("still there before the delay", nic.get1(b"fl-new")[0], 0)
    # Once the TCP path says one item is gone, the NIC must not serve
    # another the flush killed (a TCP GET unlinks what it finds dead, so
    # the NIC is asked for a key TCP leaves alone).
    c.set(b"fl-nic", b"other")
    served_flushed, end = [], time.time() + 2.5
    while time.time() < end:
        if c.get(b"fl-new") is None:
            if nic.get1(b"fl-nic")[0] == 0:
                served_flushed.append(round(end - time.time(), 2))
        time.sleep(0.02)
    t.check("the NIC stops when the CPU does", not served_flushed,
            repr(served_flushed[:5]))
    gone = wait_until(lambda: nic.get1(b"fl-new")[0] == ENOENT, 3)
    t.check("gone after the delay", gone)
    nic.close()
    c.close()


def test_flush_same_second(t, srv, port):
    """memcached's cut-off is the second before the flush's time, so an
    item stored during that second is dead at birth: flush_all 1 then set
    x then get x misses until the clock ticks. The NIC must agree."""
    c = mctest.Client(srv)
    nic = Driver(srv, port, no_fallback=True)
    d = Driver(srv, port)
    c.set(b"fs-other", b"o")
    verdicts = None
    for attempt in range(6):
        key = b"fs-%d" % attempt
        while time.time() % 1 > 0.2:  # a fresh second: room for the steps
            time.sleep(0.01)
        before = int(c.stats()["time"])
        c.send(b"flush_all 1\r\n")
        t.eq("flush_all 1", c.line(), b"OK\r\n")
        # Another key first: this client learns of the flush and waits out
        # the server's crawl, so what follows is stored after it.
        nic.get1(b"fs-other")
        c.set(key, b"born-dead")
        # The NIC first: a TCP GET unlinks the dead item it finds.
        by_nic = nic.get1(key)[:2]
        verdicts = (by_nic, d.get1(key)[0], c.get(key))
        if int(c.stats()["time"]) == before:
            break
        verdicts = None
    t.check("steps fit in one server second", verdicts is not None)
    if verdicts is not None:
        by_nic, fallback, tcp = verdicts
        t.check("the NIC does not serve it", by_nic[0] != 0, repr(by_nic))
        t.eq("the client falls back and misses", fallback, ENOENT)
        t.eq("TCP: dead at birth", tcp, None)
    time.sleep(1.1)
    c.set(b"fs-later", b"lives")
    t.eq("stored a second later: NIC hit", nic.get1(b"fs-later")[::4],
         (0, b"lives"))
    d.close()
    nic.close()
    c.close()


def test_growth(t, srv, port):
    c = mctest.Client(srv)
    d = Driver(srv, port)
    watched = [b"watch-%d" % i for i in range(64)]
    for k in watched:
        c.set(k, b"w:" + k)
    gen0 = int(c.stats()["assoc_generation"])
    bad = 0
    n = 0
    for chunk in range(12):  # 24000 keys: past 85% of 4096 * 2 slots
        c.send(b"".join(b"set grow-%d 0 0 8 noreply\r\n%08d\r\n" % (i, i)
                        for i in range(chunk * 2000, chunk * 2000 + 2000)))
        res = d.get(*watched)
        n += len(res)
        bad += sum(1 for k, r in zip(watched, res)
                   if r[0] != 0 or r[4] != b"w:" + k)
    t.eq("every GET during the growth was right", bad, 0)
    # The table grows in the server's migration thread: wait for it.
    wait_until(lambda: int(c.stats()["hash_power_level"]) > 12, 20)
    st = c.stats()
    t.check("the table grew", int(st["hash_power_level"]) > 12, repr(st.get(
        "hash_power_level")))
    t.check("generation moved", int(st["assoc_generation"]) > gen0)
    wait_until(lambda: int(c.stats()["assoc_generation"]) % 2 == 0, 20)
    res = d.get(*watched)
    t.check("after the growth: NIC hits again", all(
        r[0] == 0 and r[1] == "nic" for r in res))
    res = d.get(*[b"grow-%d" % i for i in range(0, 24000, 997)])
    t.check("grown keys found", all(r[0] == 0 for r in res))
    t.check("the client refreshed its geometry", d.stats()["refreshes"] > 0)
    d.close()
    c.close()


def test_eight_clients(t, srv, port):
    c = mctest.Client(srv)
    keys = [b"eight-%d" % i for i in range(40)]
    for k in keys:
        c.set(k, b"8:" + k * 3)
    drivers = [Driver(srv, port) for _ in range(8)]
    t.eq("rdn_clients", int(c.stats()["rdn_clients"]), 8)
    t.eq("stats rdn lists them", sum(1 for n in c.stats(b"rdn")
                                     if n.endswith(":peer")), 8)
    ok = True
    for rnd in range(5):
        for d in drivers:
            res = d.get(*(keys + [b"eight-miss-%d" % rnd]))
            ok &= all(r[0] == 0 and r[4] == b"8:" + k * 3 and r[1] == "nic"
                      for k, r in zip(keys, res))
            ok &= res[-1][:2] == (ENOENT, "nic")
    t.check("8 clients, 5 rounds, every answer right", ok)
    for d in drivers:
        d.close()
    t.check("they left", wait_until(
        lambda: int(c.stats()["rdn_clients"]) == 0, 5))
    st = c.stats()
    t.check("rdn_get_hits counted", int(st["rdn_get_hits"]) >= 8 * 5 * 40)
    t.check("rdn_get_misses counted", int(st["rdn_get_misses"]) >= 8 * 5)
    t.eq("no QP errors", st["rdn_qp_errors"], "0")
    c.close()


def test_lru_reports(t, srv, port):
    """NIC hits reach the LRU: the client reports them in batches."""
    c = mctest.Client(srv)
    c.set(b"lru-hot", b"v")
    hits0 = int(c.stats()["get_hits"])
    d = Driver(srv, port)
    cid = d.stats()["id"]
    t.eq("NIC hit", d.get1(b"lru-hot")[:2], (0, "nic"))
    time.sleep(1.1)  # a batch goes out once it is a second old
    t.eq("NIC hit again", d.get1(b"lru-hot")[:2], (0, "nic"))
    name = "client_%d:lru_touches" % cid
    t.check("the server took the report", wait_until(
        lambda: int(c.stats(b"rdn").get(name, "0")) >= 1, 5))
    t.check("and bumped the item as a GET would",
            int(c.stats()["get_hits"]) >= hits0 + 1)
    # A batch names each key once, however often it was hit.
    # (A stall of over a second splits the 10 hits into two batches: 3-4.)
    c.set(b"lru-warm", b"w")
    touched = int(c.stats(b"rdn")[name])
    for _ in range(5):
        for key in (b"lru-hot", b"lru-warm"):
            t.eq("NIC hit of %s" % key.decode(), d.get1(key)[:2], (0, "nic"))
    time.sleep(1.1)
    t.eq("NIC hit that sends the batch", d.get1(b"lru-hot")[:2], (0, "nic"))
    t.check("10 hits of 2 keys are reported", wait_until(
        lambda: int(c.stats(b"rdn")[name]) >= touched + 2, 5))
    got = int(c.stats(b"rdn")[name]) - touched
    t.check("each key once a batch: 2 touches (3-4 if split), got %d" % got,
            2 <= got <= 4)
    d.close()
    c.close()


def test_server_restart(t, srv, port):
    """A client outlives its server. Stopped cleanly (SIGTERM, which
    releases the NIC resources): no stale answer, then the RDMA path is
    rebuilt against the restarted server (same ports) and TCP works again
    by itself. Killed (SIGKILL): the NIC goes on answering every GET while
    no server runs, and the restarted server takes the chains over."""
    server_restart(t, signal.SIGTERM)
    # One client allowed: its re-attached chain must not keep its own
    # RESUME connection out.
    server_crash(t, 64, ["--rdn-clients", "1"])
    # A table that grew (its generation word moved) before the crash; room
    # for a second connection, so a forged RESUME meets the token check
    # even if the client resumed first.
    server_crash(t, 20000, ["-o", "hashpower=12"], forge=True)
    restart_other_settings(t)


def run_server(tcp_port, rdn_port, args=()):
    """memcached on those ports (tracked for cleanup), or None."""
    import subprocess
    from offload_env import _procs
    cmd = mctest.server_cmd(list(args) + [
        "-p", str(tcp_port), "--rdn-port", str(rdn_port)])
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _procs.append(p)
    ok = wait_until(lambda: accepts(rdn_port) and accepts(tcp_port), 10)
    return p if ok else None


def server_crash(t, nkeys, args=(), forge=False):
    """kill -9 under offloaded GET load: not one GET fails or misses while
    the server is dead or restarting, every answer comes from the NIC, and
    the restarted server's SETs reach the same chains."""
    tcp_port, rdn_port = mctest.free_port(), mctest.free_port()

    class Srv:  # what Driver and mctest.Client need of a server
        port = tcp_port

    p = run_server(tcp_port, rdn_port, args)
    if not t.check("crash: server started", p is not None):
        return
    keys = [b"crash-%d" % i for i in range(nkeys)]
    c = mctest.Client(Srv)
    c.send(b"".join(b"set %s 0 0 %d noreply\r\n%s\r\n" % (k, len(k) + 3,
                                                           b"v1-" + k)
                    for k in keys))
    t.eq("crash: %d keys stored" % nkeys, c.get(keys[-1]),
         (0, b"v1-" + keys[-1]))
    c.close()
    d = Driver(Srv, rdn_port)
    bad = []

    def round_ok():
        for k, r in zip(keys[:16], d.get(*keys[:16])):
            if r[:2] != (0, "nic") or r[4] != b"v1-" + k:
                bad.append((k, r))
        return True

    round_ok()
    t.check("crash: NIC hits before", not bad, repr(bad[:3]))
    p.kill()
    p.wait(10)
    end, rounds = time.time() + 1.5, 0
    while time.time() < end:
        round_ok()
        rounds += 1
    t.check("crash: %d rounds of GETs while the server is dead, none "
            "failed, all from the NIC" % rounds, rounds > 0 and not bad,
            repr(bad[:3]))
    p = run_server(tcp_port, rdn_port, args)
    if not t.check("crash: server restarted on the same ports",
                   p is not None):
        d.close()
        return
    # Someone else claims the re-attached client: the id is easy to guess,
    # the welcome's random token is not.
    if forge:
        t.eq("crash: a forged RESUME is rejected",
             forged_resume(rdn_port, d.stats()["id"], 0x1234), ENOENT)
    round_ok()
    t.check("crash: GETs right after the restart", not bad, repr(bad[:3]))
    c = mctest.Client(Srv)
    t.eq("crash: SETs work again", c.set(keys[0], b"v2"), b"STORED\r\n")
    t.eq("crash: old keys are there over TCP", c.get(keys[1]),
         (0, b"v1-" + keys[1]))
    c.close()
    back = wait_until(lambda: d.get1(keys[0])[:2] == (0, "nic") and
                      d.get1(keys[0])[4] == b"v2", 5)
    t.check("crash: the NIC serves the new SET through the old chains", back)
    t.eq("crash: the RDMA path never broke", d.stats()["reconnects"], 0)

    # Its handshake connection died with the server: the client hands a new
    # one to the same re-attached client (RESUME), and its LRU reports
    # reach the restarted server again.
    def touches():
        c = mctest.Client(Srv)
        st = c.stats(b"rdn")
        c.close()
        return sum(int(v) for k, v in st.items() if k.endswith(":lru_touches"))

    resumed = wait_until(lambda: d.get1(keys[2])[0] == 0 and
                         d.stats()["resumes"] >= 1, 5)
    t.check("crash: the client resumed its handshake connection", resumed)
    t.check("crash: its LRU reports reach the new server",
            wait_until(lambda: d.get1(keys[2])[0] == 0 and touches() > 0, 5))
    t.eq("crash: still no RDMA reconnection", d.stats()["reconnects"], 0)
    t.eq("crash: nor a refresh", d.stats()["refreshes"], 0)
    # The restarted server counts the adopted chain's GETs from its CQs,
    # after thousands answered while it was dead: ten more are ten more.
    def counts():
        c = mctest.Client(Srv)
        st = c.stats(b"rdn")
        c.close()
        return [(int(v), int(st[k[:-5] + ":inflight"])) for k, v in
                st.items() if k.endswith(":gets")]

    def settled():
        # Every answered GET counted: across lossy hosts an answer's
        # completion at the server can wait for a retransmitted ACK.
        wait_until(lambda: all(n == 0 for _, n in counts()), 5)
        return counts()

    before = settled()
    for _ in range(10):
        d.get1(keys[3])
    after = settled()
    t.check("crash: the adopted client's counts move by what it asks",
            len(before) == len(after) == 1 and
            after[0][0] - before[0][0] == 10 and after[0][1] == 0,
            repr((before, after)))
    d.close()
    p.terminate()
    p.wait(10)


def restart_other_settings(t):
    """A server killed, then started with other --rdn-clients: the kept
    state does not fit, it is released, and the server starts empty."""
    tcp_port, rdn_port = mctest.free_port(), mctest.free_port()

    class Srv:
        port = tcp_port

    p = run_server(tcp_port, rdn_port, ["--rdn-clients", "8"])
    if not t.check("other settings: server started", p is not None):
        return
    c = mctest.Client(Srv)
    c.set(b"kept", b"v")
    c.close()
    d = Driver(Srv, rdn_port)  # a client, so pipelines are in the domain
    t.eq("other settings: NIC hit", d.get1(b"kept")[:2], (0, "nic"))
    p.kill()
    p.wait(10)
    p = run_server(tcp_port, rdn_port, ["--rdn-clients", "16"])
    if t.check("other settings: the server starts anyway", p is not None):
        c = mctest.Client(Srv)
        t.eq("other settings: it starts empty", c.get(b"kept"), None)
        t.eq("other settings: and works", c.set(b"kept", b"w"),
             b"STORED\r\n")
        c.close()
        p.terminate()
        p.wait(10)
    d.close()


def server_restart(t, sig):
    """One restart of test_server_restart, the server ended with sig."""
    tcp_port, rdn_port = mctest.free_port(), mctest.free_port()

    class Srv:  # what Driver and mctest.Client need of a server
        port = tcp_port

    def start():
        return run_server(tcp_port, rdn_port)

    p = start()
    if not t.check("server started", p is not None):
        return
    c = mctest.Client(Srv)
    c.set(b"phoenix", b"one")
    c.close()
    d = Driver(Srv, rdn_port)
    t.eq("NIC hit before", d.get1(b"phoenix")[::4], (0, b"one"))
    p.send_signal(sig)
    p.wait(10)
    # GETs while the server is down: "one" or an error, never a miss. Go on
    # until three failed (the NIC may answer until the server's QPs are
    # gone), so that the TCP path has seen the server dead several times.
    seen = []
    wait_until(lambda: seen.append(d.get1(b"phoenix")) or
               sum(r[0] < 0 for r in seen) >= 3, 3)
    t.check("%s: no stale or wrong answer while the server is down" % sig.name,
            all(r[0] == 0 and r[4] == b"one" or r[0] < 0 and r[0] != ENOENT
                for r in seen), repr(seen[-3:]))
    # A reconnection attempt while the server is down fails (the RDMA
    # path is torn down to nothing); the one after the restart must then
    # size everything for the depth the server grants again.
    time.sleep(1.2)
    r = d.get1(b"phoenix")
    t.check("%s: a GET with the server still down fails" % sig.name,
            r[0] < 0 and r[0] != ENOENT, repr(r))
    p = start()
    if not t.check("server restarted on the same ports", p is not None):
        d.close()
        return
    c = mctest.Client(Srv)
    c.set(b"phoenix", b"two")
    c.close()
    # The old RDMA path is dead: the client must not say "one", and the
    # TCP path answers at once (libmemcached alone would refuse to try the
    # server again for seconds after the failures above).
    r = d.get1(b"phoenix")
    t.check("%s: right answer right after the restart" % sig.name,
            r[0] == 0 and r[4] == b"two", repr(r))
    time.sleep(1.2)
    # Several keys in the call that reconnects: all in flight at once.
    back = wait_until(lambda: all(r[:2] == (0, "nic") and r[4] == b"two"
                                  for r in d.get(*[b"phoenix"] * 8)), 5)
    t.check("the RDMA path was rebuilt: NIC answers again", back)
    t.eq("with the new value", d.get1(b"phoenix")[4], b"two")
    t.check("reconnects counted", d.stats()["reconnects"] >= 1)
    c = mctest.Client(Srv)
    t.eq("%s: SETs work again after the restart" % sig.name,
         c.set(b"phoenix", b"three"), b"STORED\r\n")
    c.close()
    back = wait_until(lambda: d.get1(b"phoenix")[::4] == (0, b"three"), 5)
    t.check("%s: the client sees the new SET" % sig.name, back)
    d.close()
    p.terminate()
    p.wait(10)



def test_cli(t, srv, port):
    import subprocess
    cli = os.path.join(mctest.TOP_BUILDDIR, "rdn", "librdn", "rdn-cli")
    base = [cli, "-s", mctest.HOST, "-p", str(port), "-t", str(srv.port)]
    r = subprocess.run(base + ["set", "cli-key", "hello"])
    t.eq("rdn-cli set", r.returncode, 0)
    r = subprocess.run(base + ["-v", "get", "cli-key"], capture_output=True)
    t.eq("rdn-cli get prints the value", (r.returncode, r.stdout),
         (0, b"hello\n"))
    t.check("-v says the NIC answered", b"cli-key: nic" in r.stderr)
    r = subprocess.run(base + ["get", "cli-key", "cli-none"],
                       capture_output=True)
    t.eq("a miss: exit 1", (r.returncode, r.stdout), (1, b"hello\n"))
    r = subprocess.run([cli, "-s", mctest.HOST, "-p", str(mctest.free_port()),
                        "get", "x"],
                       capture_output=True)
    t.eq("no server: exit 2", r.returncode, 2)
    r = subprocess.run(base + ["stats"], capture_output=True)
    t.check("rdn-cli stats", b"rdn_get_hits" in r.stdout)


def main():
    """Every test, or those named on the command line (t/offload_hosts.sh
    runs some across hosts)."""
    t = mctest.Tally("offload_e2e")
    tests = (test_keys_and_values, test_value_buffer, test_full_buckets,
             test_mutations, test_binary_mutations, test_expiry, test_flush_all,
             test_flush_same_second, test_eight_clients, test_lru_reports,
             test_server_restart, test_cli)
    only = sys.argv[1:]
    Nicd(threads=2)
    srv, port = start_server(["-I", "2m", "-o", "hashpower=12"])
    for fn in tests:
        if not only or fn.__name__ in only:
            t.run(fn, srv, port)
    srv.stop()
    if not only or "test_growth" in only:
        srv, port = start_server(["-o", "hashpower=12"])
        t.run(test_growth, srv, port)
    t.finish()


if __name__ == "__main__":
    main()
