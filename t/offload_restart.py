# SPDX-License-Identifier: BSD-3-Clause
"""t/offload_restart.py - a server killed or stopped comes back with its
items (memcached/persist.h), end to end: memcached --rdn-port on a private
rdn-nicd, restarted on the same ports (same rdn-nicd domain).

- kill -9 after a few thousand SETs of 0 bytes..1 MB: every key comes back
  with its value and flags, curr_items is right, SET and DELETE work;
- kill -9 in the middle of a SET storm (writers overwriting keys with
  values that name their key and version and carry a checksum): every key
  reads a complete value it was set to, or nothing;
- a table corrupted in memory (two slots) and a superblock corrupted in
  rdn-nicd while no server runs are refused with the log line, and no old
  value is served;
- SIGTERM releases the NIC resources (the next server starts empty), with
  --rdn-keep-on-exit it keeps them.

Corruption is done through /proc/<pid>/mem of processes this test started
(the server, rdn-nicd): the superblock is found by its magic in their shared
mappings; its layout is memcached/persist_int.h's. Python 3 standard
library only; every process started is killed at exit.
"""
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402
import rdnwire as w  # noqa: E402
from offload_env import (Driver, Nicd, _procs,  # noqa: E402
                         RestartableServer as Server)

MB = 1024 * 1024
OFL_MAGIC = b"RDNOFL09"  # rdn/offload/persist.c's state (no header has it)
# The superblock (memcached/persist_int.h) and what the NIC reads
# (proto/table.h, proto/item.h), as t/wire_dump prints them.
SB, TABLE_REC = w.LAYOUTS["persist_sb"], w.LAYOUTS["persist_table"]
BUCKET, SLOT = w.LAYOUTS["rdn_bucket"], w.LAYOUTS["rdn_slot"]
DESC, ITEM = w.LAYOUTS["mlx5_data_seg"], w.LAYOUTS["rdn_item"]
MAGIC = struct.pack("<Q", w.PERSIST_MAGIC)
VERSION = struct.pack("<I", w.PERSIST_VERSION)
REFUSED = "rdn: persistent table refused:"
ADOPTED = "rdn: re-attached"


# ---- keys and values -------------------------------------------------------

def value_of(i):
    if i % 500 == 0:
        n = MB if i % 1000 == 0 else 300000
    elif i % 61 == 0:
        n = 20000
    else:
        n = (i * 37) % 1500
    pattern = bytes((i * 131 + j * 7) & 0xff for j in range(256))
    return (pattern * (n // 256 + 1))[:n]


def set_many(c, items):
    """Pipelined SETs of {key: (flags, value)}; True if all STORED."""
    ok = True
    batch = list(items.items())
    for s in range(0, len(batch), 100):
        part = batch[s:s + 100]
        c.send(b"".join(b"set %s %d 0 %d\r\n%s\r\n" % (k, f, len(v), v)
                        for k, (f, v) in part))
        for _ in part:
            ok &= c.line() == b"STORED\r\n"
    return ok


def get_many(c, keys):
    """{key: (flags, value)} of the keys present (multi-get by 100)."""
    out = {}
    keys = list(keys)
    for s in range(0, len(keys), 100):
        c.send(b"get " + b" ".join(keys[s:s + 100]) + b"\r\n")
        while True:
            ln = c.line()
            if ln == b"END\r\n":
                break
            _, k, f, n = ln.split()
            out[k] = (int(f), c.read(int(n) + 2)[:-2])
    return out


def curr_items(srv):
    c = srv.client()
    n = int(c.stats()["curr_items"])
    c.close()
    return n


# ---- scenarios -------------------------------------------------------------

def test_kill9_keeps_items(t):
    srv = Server(["-m", "128", "-I", "2m"])
    try:
        t.check("server started", srv.start())
        c = srv.client()
        items = {b"k%d" % i: (i * 3 % 65536, value_of(i)) for i in range(3000)}
        t.check("3000 SETs stored", set_many(c, items))
        c.close()
        srv.end(signal.SIGKILL)
        t.check("restarted on the same ports", srv.start())
        log = srv.log()
        t.check("re-attach logged", ADOPTED in log, log.strip())
        c = srv.client()
        got = get_many(c, items)
        t.eq("every key came back", len(got), len(items))
        wrong = [k for k, fv in items.items() if got.get(k, fv) != fv]
        t.check("with its value and flags", not wrong, repr(wrong[:5]))
        t.eq("curr_items", curr_items(srv), len(items))
        t.eq("SET works", c.set(b"k1", b"new"), b"STORED\r\n")
        t.eq("and is read back", c.get(b"k1"), (0, b"new"))
        t.eq("a new key", c.set(b"fresh", b"x" * 5000, flags=9),
             b"STORED\r\n")
        c.send(b"delete k2\r\n")
        t.eq("DELETE works", c.line(), b"DELETED\r\n")
        t.eq("deleted key gone", c.get(b"k2"), None)
        t.eq("curr_items after", curr_items(srv), len(items))
        c.close()
        # A second crash keeps what the adopted server changed.
        srv.end(signal.SIGKILL)
        t.check("restarted again", srv.start())
        c = srv.client()
        t.eq("second restart: the SET", c.get(b"k1"), (0, b"new"))
        t.eq("second restart: the DELETE", c.get(b"k2"), None)
        t.check("second restart: the new key",
                c.get(b"fresh") == (9, b"x" * 5000))
        t.check("second restart: an old key",
                c.get(b"k2999") == items[b"k2999"])
        c.close()
    finally:
        srv.close()


def storm_value(k, ver):
    n = 8 + (k * 131 + ver * 17) % (40000 if ver % 50 == 0 else 3000)
    pattern = bytes((k + ver + j) & 0xff for j in range(256))
    body = b"%d|%d|" % (k, ver) + (pattern * (n // 256 + 1))[:n]
    return body + b"|%08x" % zlib.crc32(body)


def storm_value_ok(k, v):
    try:
        body, crc = v.rsplit(b"|", 1)
        kk, ver = body.split(b"|")[:2]
        return int(kk) == k and v == storm_value(k, int(ver)) and \
            int(crc, 16) == zlib.crc32(body)
    except ValueError:
        return False


def test_kill9_in_set_storm(t):
    srv = Server(["-m", "64"])
    nkeys = 300
    try:
        t.check("server started", srv.start())
        stop = threading.Event()

        def writer(seed):
            rnd = random.Random(seed)
            try:
                c = srv.client()
                ver = seed * 1000000
                while not stop.is_set():
                    k = rnd.randrange(nkeys)
                    ver += 1
                    if c.set(b"s%d" % k, storm_value(k, ver)) != \
                            b"STORED\r\n":
                        return
                    if rnd.randrange(20) == 0:
                        c.send(b"delete s%d\r\n" % k)
                        c.line()
            except (OSError, EOFError):
                pass
        threads = [threading.Thread(target=writer, args=(i + 1,))
                   for i in range(4)]
        for th in threads:
            th.start()
        time.sleep(1.5)
        srv.end(signal.SIGKILL)
        stop.set()
        for th in threads:
            th.join(10)
        t.check("restarted after the storm", srv.start())
        log = srv.log()
        t.check("storm: re-attached, not refused",
                ADOPTED in log and REFUSED not in log, log.strip())
        c = srv.client()
        got = get_many(c, [b"s%d" % k for k in range(nkeys)])
        bad = [k for k, (_, v) in got.items()
               if not storm_value_ok(int(k[1:]), v)]
        t.check("no torn or foreign value", not bad, repr(bad[:3]))
        t.check("most keys survived", len(got) > nkeys // 2,
                "%d present" % len(got))
        t.eq("curr_items matches", curr_items(srv), len(got))
        c.close()
    finally:
        srv.close()


def writable_maps(pid):
    """(start, end) of the process's writable mappings."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for ln in f:
            addr, perms = ln.split()[:2]
            if perms.startswith("rw"):
                lo, hi = (int(x, 16) for x in addr.split("-"))
                out.append((lo, hi))
    return out


def find_all(pid, pattern):
    """Every 8-aligned address of pattern in pid's writable memory."""
    found = []
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
        for lo, hi in writable_maps(pid):
            for off in range(lo, hi, MB):
                try:
                    mem.seek(off)
                    data = mem.read(min(MB, hi - off))
                except OSError:
                    break
                i = data.find(pattern)
                while i >= 0:
                    if i % 8 == 0:
                        found.append(off + i)
                    i = data.find(pattern, i + 1)
    return found


def find_superblock(pid):
    """The address of our superblock in pid's memory, or None."""
    for at in find_all(pid, MAGIC):
        if peek(pid, at + SB.offset("version"), 4) == VERSION:
            return at
    return None


def peek(pid, addr, n):
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
        mem.seek(addr)
        return mem.read(n)


def poke(pid, addr, data):
    with open("/proc/%d/mem" % pid, "r+b", buffering=0) as mem:
        mem.seek(addr)
        mem.write(data)


def corrupt_slots(pid, sb, n):
    """Moves the descriptors of n occupied slots off their items; returns
    the keys of the items they named."""
    seq = struct.unpack("<Q", peek(pid, sb + SB.offset("table_seq"), 8))[0]
    rec = TABLE_REC.unpack(peek(pid, sb + SB.offset("table") +
                                TABLE_REC.size * (seq & 1), TABLE_REC.size))
    buckets = rec["buckets"]
    table = peek(pid, buckets, BUCKET.size << rec["hashpower"])
    match = SLOT.offset("match")
    words = [table[i + match:i + match + 8]
             for i in range(0, len(table), SLOT.size)]
    empty = max(set(words), key=words.count)
    keys = []
    for s, w in enumerate(words):
        if w != empty and len(keys) < n:
            at = (buckets + s * SLOT.size + SLOT.offset("desc") +
                  DESC.offset("addr"))
            addr = struct.unpack(">Q", peek(pid, at, 8))[0]
            nkey = struct.unpack(
                "<H", peek(pid, addr + ITEM.offset("nkey"), 2))[0]
            keys.append(peek(pid, addr + ITEM.size, nkey))
            poke(pid, at, struct.pack(">Q", addr + 8))
    return keys


def test_corrupt_table_refused(t):
    srv = Server()
    try:
        t.check("server started", srv.start())
        c = srv.client()
        items = {b"c%d" % i: (1, b"old-%d" % i) for i in range(500)}
        t.check("SETs stored", set_many(c, items))
        c.close()
        sb = find_superblock(srv.proc.pid)
        if t.check("superblock found in the server", sb is not None):
            keys = corrupt_slots(srv.proc.pid, sb, 2)
            t.check("two slots of our keys corrupted",
                    len(keys) == 2 and all(k in items for k in keys),
                    repr(keys))
            # The live server no longer finds them: the slots are hit.
            c = srv.client()
            t.eq("the live server misses them", get_many(c, keys), {})
            c.close()
        srv.end(signal.SIGKILL)
        t.check("restarted over the corrupt table", srv.start())
        log = srv.log()
        t.check("refusal logged", REFUSED in log and
                "more than one inconsistent slot" in log, log.strip())
        check_empty_and_working(t, srv, items)
    finally:
        srv.close()


def test_corrupt_superblock_refused(t, nicd):
    srv = Server()
    try:
        t.check("server started", srv.start())
        c = srv.client()
        items = {b"d%d" % i: (2, b"old-%d" % i) for i in range(300)}
        t.check("SETs stored", set_many(c, items))
        c.close()
        srv.end(signal.SIGKILL)
        # No server runs now: the memory lives in rdn-nicd alone.
        sb = find_superblock(nicd.proc.pid)
        if t.check("superblock found in rdn-nicd", sb is not None):
            geo = sb + SB.offset("geo")
            b = peek(nicd.proc.pid, geo, 1)
            poke(nicd.proc.pid, geo, bytes([b[0] ^ 0x40]))
        t.check("restarted over the corrupt superblock", srv.start())
        log = srv.log()
        t.check("refusal logged", REFUSED in log and "superblock" in log,
                log.strip())
        check_empty_and_working(t, srv, items)
    finally:
        srv.close()


def test_unreadable_offload_state(t, nicd):
    """The offload's own state in the domain is unreadable (its magic
    corrupted while no server runs): the server releases the previous
    objects by name, starts, and keeps its state in the domain again."""
    srv = Server(["--rdn-clients", "4"])
    d = None
    try:
        t.check("state: server started", srv.start())
        c = srv.client()
        c.set(b"k", b"v")
        c.close()
        d = Driver(srv, srv.rdn_port)  # a client: a pipeline in the domain
        t.eq("state: a NIC hit", d.get1(b"k")[:2], (0, "nic"))
        srv.end(signal.SIGKILL)
        magics = find_all(nicd.proc.pid, OFL_MAGIC)
        t.check("state: found in rdn-nicd", magics, repr(magics))
        for at in magics:
            poke(nicd.proc.pid, at, b"X")
        t.check("state: restarted over it", srv.start())
        log = srv.log()
        t.check("state: discarded, logged",
                "discarded: unknown state format" in log, log.strip())
        t.check("state: still persistent", "cannot keep" not in log,
                log.strip())
        c = srv.client()
        t.eq("state: SET works", c.set(b"k2", b"v2"), b"STORED\r\n")
        c.close()
        srv.end(signal.SIGKILL)
        t.check("state: restarted again", srv.start())
        t.check("state: re-attached this time", ADOPTED in srv.log(),
                srv.log().strip())
        t.eq("state: the key is back", srv.client().get(b"k2"), (0, b"v2"))
    finally:
        if d:
            d.close()
        srv.close()


def check_empty_and_working(t, srv, items):
    c = srv.client()
    t.eq("old values served", len(get_many(c, items)), 0)
    t.eq("starts empty", curr_items(srv), 0)
    t.eq("SET works after a refusal", c.set(b"after", b"ok"), b"STORED\r\n")
    t.eq("and reads back", c.get(b"after"), (0, b"ok"))
    c.close()


def test_sigterm(t):
    for keep in (False, True):
        what = "keep" if keep else "release"
        srv = Server(["--rdn-keep-on-exit"] if keep else [])
        try:
            t.check("%s: started" % what, srv.start())
            c = srv.client()
            items = {b"t%d" % i: (0, b"v%d" % i) for i in range(200)}
            t.check("%s: SETs stored" % what, set_many(c, items))
            c.close()
            srv.end(signal.SIGTERM)
            t.eq("%s: clean exit" % what, srv.proc.returncode, 0)
            t.check("%s: restarted" % what, srv.start())
            got = get_many(srv.client(), items)
            if keep:
                t.eq("keep: keys back", len(got), len(items))
                t.check("keep: with their values", all(
                    got[k] == v for k, v in items.items() if k in got))
                t.check("keep: re-attach logged", ADOPTED in srv.log())
            else:
                t.eq("release: keys back", len(got), 0)
                t.check("release: nothing refused or re-attached",
                        REFUSED not in srv.log() and
                        ADOPTED not in srv.log(), srv.log())
        finally:
            srv.close()


def test_sigterm_with_rpc_clients(t):
    """SIGTERM while RPC-over-RDMA baseline clients are served: the
    baselines' threads stop before the NIC and the storage go."""
    bench = os.path.join(mctest.TOP_BUILDDIR, "bench", "rdn-bench")
    for round_ in range(3):
        bl_port = mctest.free_port()
        srv = Server(["--rdn-baselines", str(bl_port)])
        load = None
        try:
            if not t.check("rpc %d: started" % round_, srv.start()):
                continue
            load = subprocess.Popen(
                [bench, "rpc-poll", "--server", "127.0.0.1:%d" % srv.port,
                 "--rdn-port", str(srv.rdn_port), "--bl-port", str(bl_port),
                 "--keys", "20", "--iters", "10000000"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _procs.append(load)
            time.sleep(1.0)
            t.check("rpc %d: the client runs" % round_, load.poll() is None)
            srv.end(signal.SIGTERM)
            t.eq("rpc %d: clean exit under RPC load" % round_,
                 srv.proc.returncode, 0)
        finally:
            if load and load.poll() is None:
                load.kill()
                load.wait()
            srv.close()


def main():
    t = mctest.Tally("offload_restart")
    nicd = Nicd(threads=2)
    for fn in (test_kill9_keeps_items, test_kill9_in_set_storm,
               test_corrupt_table_refused, test_sigterm,
               test_sigterm_with_rpc_clients):
        t.run(fn)
    t.run(test_corrupt_superblock_refused, nicd)
    t.run(test_unreadable_offload_state, nicd)  # last: corrupts every state
    t.finish()


if __name__ == "__main__":
    main()
