#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/proto_admin.py - memcached 1.6.18's administrative commands, side by
side with Debian's memcached (/usr/bin/memcached).

The same scripted sessions run against memcached/memcached and the
reference; every reply must be byte for byte the same, with only the time
fields of metadump lines (exp=, la=) masked. Covered: lru_crawler crawl,
metadump (all, ids, hash, bad ids, disabled, -X), enable, disable, sleep,
tocrawl; slabs reassign (every refusal, and a real move: rescued and evicted
counts, pages, surviving items as memcached's) and automove; lru tune, mode,
temp_ttl; cache_memlimit; the bytes stat and stats settings after changes;
memcached's TLS (without -Z; t/proto_tls.py has -Z), extstore and NAPI
options: refused with memcached's first message line where memcached
refuses them, accepted where it accepts them;
every option of its -h is in ours.
"""
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import (SERVER, Client, Server, Tally, root_args,  # noqa: E402
                    wait_for)

REFERENCE = "/usr/bin/memcached"
REF_ARGS = ["-l", "127.0.0.1", "-U", "0"]
TIME_FIELDS = re.compile(rb"(exp|la)=\d+")


def mask(b):
    """Time fields masked; a metadump's lines sorted (memcached walks its
    hot, warm and cold sub-LRUs in an order its LRU maintainer decides)."""
    b = TIME_FIELDS.sub(rb"\1=T", b)
    if b.startswith(b"key="):
        lines = b.split(b"\n")
        b = b"\n".join(sorted(lines[:-1]) + lines[-1:])
    return b


def ask(c, cmd):
    """One command's whole reply. metadump's is its first "\r\n" (its
    item lines end in a bare "\n", then END or an error line); others are
    followed by an mn so that noreply ones and multi-line ones end at its
    MN (memcached runs nothing pipelined after a metadump)."""
    if b" metadump " in cmd:
        c.send(cmd)
        return c.line()
    return c.before_mn(cmd)


def crawler_idle(srv):
    """Waits (bounded) until memcached's LRU crawler runs nothing: its
    start-up crawl, or the crawl a crawl or metadump leaves running after
    its reply. Busy, it says BUSY where, idle, it answers: its replies are
    compared, not its timing. (Without a crawler thread memcached has no
    lru_crawler_running.)"""
    probe = Client(srv)
    wait_for(lambda: probe.stats().get("lru_crawler_running", "0") == "0")
    probe.close()


def crawler_stopped(srv):
    """Waits (bounded) until "lru_crawler disable" took: memcached's
    crawler thread stops after the OK, and a crawl asked meanwhile gets
    "an unknown error" instead of "lru crawler disabled"."""
    probe = Client(srv)
    wait_for(lambda: probe.stats(b"settings")["lru_crawler"] == "no")
    probe.close()


def session(program, args, cmds):
    srv = Server(args, program=program)
    c = Client(srv)
    out = []
    for cmd in cmds:
        if cmd.startswith(b"lru_crawler "):
            crawler_idle(srv)
        out.append(mask(ask(c, cmd)))
        if cmd == b"lru_crawler disable\r\n":
            crawler_stopped(srv)
    srv.stop()
    return out


def compare(t, what, cmds, args=()):
    ours = session(None, list(args), cmds)
    ref = session(REFERENCE, REF_ARGS + list(args), cmds)
    for cmd, a, b in zip(cmds, ours, ref):
        t.eq("%s: %r as memcached" % (what, cmd), a, b)


CRAWLER = [
    b"lru_crawler metadump all\r\n",
    b"set a 5 0 1\r\nx\r\n",
    b"set b%20c 0 100 2\r\nxy\r\n",
    b"set \xc3\xa9t\xc3\xa9 0 0 3\r\nabc\r\n",
    b"get a\r\n",
    b"lru_crawler metadump all\r\n",
    b"lru_crawler metadump 1\r\n",
    b"lru_crawler metadump 2\r\n",
    b"lru_crawler metadump 63\r\n",
    b"lru_crawler metadump 1,2\r\n",
    b"lru_crawler metadump 0\r\n",
    b"lru_crawler metadump 64\r\n",
    b"lru_crawler metadump 1,x\r\n",
    b"lru_crawler metadump -1\r\n",
    b"lru_crawler metadump 1 noreply\r\n",
    b"lru_crawler crawl 0\r\n",
    b"lru_crawler crawl 64\r\n",
    b"lru_crawler crawl -1\r\n",
    b"lru_crawler crawl hash\r\n",
    b"lru_crawler crawl\r\n",
    b"lru_crawler sleep 1000001\r\n",
    b"lru_crawler sleep x\r\n",
    b"lru_crawler sleep 1000000\r\n",
    b"lru_crawler sleep 10\r\n",
    b"lru_crawler tocrawl -5\r\n",
    b"lru_crawler tocrawl 5\r\n",
    b"lru_crawler\r\n",
    b"lru_crawler foo\r\n",
    b"lru_crawler foo bar baz\r\n",
    b"lru_crawler enable\r\n",
    b"lru_crawler disable\r\n",
    b"lru_crawler disable\r\n",
    b"lru_crawler crawl all\r\n",
    b"lru_crawler metadump all\r\n",
    b"lru_crawler enable\r\n",
    b"lru_crawler metadump 1\r\n",
]

SLABS_LRU = [
    b"slabs\r\n",
    b"slabs reassign\r\n",
    b"slabs reassign 1\r\n",
    b"slabs reassign 1 2\r\n",
    b"slabs reassign 1 1\r\n",
    b"slabs reassign x 2\r\n",
    b"slabs reassign 1 2x\r\n",
    b"slabs reassign 1 99\r\n",
    b"slabs reassign -1 2\r\n",
    b"slabs reassign -2 2\r\n",
    b"slabs reassign 0 2\r\n",
    b"slabs reassign 1 0\r\n",
    b"slabs reassign 1 2 noreply\r\n",
    b"slabs automove\r\n",
    b"slabs automove 0\r\n",
    b"slabs automove 2\r\n",
    b"slabs automove 3\r\n",
    b"slabs automove x\r\n",
    b"slabs automove -1\r\n",
    b"slabs automove 1 noreply\r\n",
    b"slabs automove ratio\r\n",
    b"slabs automove ratio 0.5\r\n",
    b"slabs automove ratio x\r\n",
    b"slabs foo bar\r\n",
    b"lru\r\n",
    b"lru tune\r\n",
    b"lru tune 10 20 0.5 2.0\r\n",
    b"lru tune 50 40 0.5 2.0\r\n",
    b"lru tune 10 20 0 2.0\r\n",
    b"lru tune 10 20 0.5 -1\r\n",
    b"lru tune 10 20 x 2.0\r\n",
    b"lru tune -1 20 0.5 2.0\r\n",
    b"lru tune 10 20 0.5 2.0 noreply\r\n",
    b"lru mode\r\n",
    b"lru mode flat\r\n",
    b"lru mode segmented\r\n",
    b"lru mode foo\r\n",
    b"lru temp_ttl 30\r\n",
    b"lru temp_ttl -1\r\n",
    b"lru temp_ttl x\r\n",
    b"lru foo bar\r\n",
    b"cache_memlimit\r\n",
    b"cache_memlimit 7\r\n",
    b"cache_memlimit 8\r\n",
    b"cache_memlimit 32\r\n",
    b"cache_memlimit 1000000001\r\n",
    b"cache_memlimit x\r\n",
    b"cache_memlimit -5\r\n",
    b"cache_memlimit 32 noreply\r\n",
    b"cache_memlimit 32 33 34\r\n",
]

# Not lru_crawler: memcached's "disable" stops its thread asynchronously,
# so what its stats settings say right after depends on timing.
SETTINGS_SHOWN = [b"maxbytes", b"slab_reassign", b"slab_automove",
                  b"slab_automove_ratio", b"slab_automove_window",
                  b"lru_crawler_sleep", b"lru_crawler_tocrawl",
                  b"lru_segmented", b"hot_lru_pct", b"warm_lru_pct",
                  b"hot_max_factor", b"warm_max_factor", b"temp_lru",
                  b"temporary_ttl"]


def settings_after(program, args, cmds):
    srv = Server(args, program=program)
    c = Client(srv)
    for cmd in cmds:
        ask(c, cmd)
    st = c.stats(b"settings")
    general = c.stats()
    srv.stop()
    keep = {k.decode(): st.get(k.decode()) for k in SETTINGS_SHOWN}
    keep["limit_maxbytes"] = general.get("limit_maxbytes")
    keep["lru_crawler"] = st.get("lru_crawler")
    return keep


# Lines of stats settings that must differ: the port, and TLS (-Z), which
# memcached/compat_opts.c leaves to the TLS work.
SETTINGS_MASKED = re.compile(rb"STAT (tcpport|ssl_\w+) ")
SETTINGS_OPTS = [
    [], ["-o", "ext_item_age=5,slab_automove_freeratio=0.5,"
               "watcher_logbuf_size=10,read_buf_mem_limit=3,ext_wbuf_size=8,"
               "ext_max_frag=0.3,ext_drop_unread,ext_recache_rate=9,"
               "ext_max_sleep=11,ext_low_ttl=12,ext_item_size=13,"
               "ext_compact_under=14,ext_drop_under=15"],
    ["-o", "slab_automove_ratio=0.33,slab_automove_window=7,slab_automove=2,"
           "worker_logbuf_size=7,slab_sizes=100"],
]


def settings_lines(program, args):
    srv = Server(args, program=program)
    out = ask(Client(srv), b"stats settings\r\n")
    srv.stop()
    return [ln for ln in out.split(b"\r\n") if not SETTINGS_MASKED.match(ln)]


def test_stats_settings_as_memcached(t):
    """Every line of stats settings (but the port and TLS's) as memcached
    1.6.18's, in its order, with the defaults and with options given."""
    for args in SETTINGS_OPTS:
        t.eq("stats settings with %s as memcached" % args,
             settings_lines(None, ["-l", "127.0.0.1"] + args),
             settings_lines(REFERENCE, REF_ARGS + args))


# Our own general stats (the cuckoo index, the offload); the rest must be
# memcached's names in memcached's order.
OWN_STATS = re.compile(rb"^(assoc_|rdn_)")


def stat_names_and_counts(program, args):
    srv = Server(args, program=program)
    c = Client(srv)
    for cmd in (b"mg a v\r\n", b"ms a 1\r\nx\r\n", b"mg a v\r\n",
                b"ma n\r\n", b"md a\r\n", b"me a\r\n",
                b"ms a 1\r\nx\r\n", b"me a\r\n", b"me zz\r\n",
                b"me\r\n", b"mn\r\n"):
        ask(c, cmd)
    st = c.stats()
    srv.stop()
    names = [k.encode() for k in st if not OWN_STATS.match(k.encode())]
    return names, st.get("cmd_meta")


def test_stats_as_memcached(t):
    """stats: memcached's names in its order (ours added), cmd_meta counting
    the me commands only (as memcached)."""
    for args in ([], ["-t", "2"]):
        ours = stat_names_and_counts(None, args)
        ref = stat_names_and_counts(REFERENCE, REF_ARGS + args)
        t.eq("stats names %s as memcached's" % args, ours[0], ref[0])
        t.eq("cmd_meta %s as memcached's" % args, ours[1], ref[1])


def test_truncation_refused(t):
    """memcached stores 99999999999 truncated to 32 bits; here, as for
    every number (proto_text.c), it is a bad number."""
    srv = Server([])
    t.eq("tocrawl beyond 32 bits", ask(Client(srv),
                                       b"lru_crawler tocrawl 99999999999\r\n"),
         b"CLIENT_ERROR bad command line format\r\n")
    srv.stop()


def test_settings_follow(t):
    cmds = [b"lru_crawler sleep 77\r\n", b"lru_crawler tocrawl 9\r\n",
            b"lru_crawler disable\r\n", b"slabs automove 2\r\n",
            b"slabs automove ratio 0.456\r\n",
            b"lru tune 11 22 0.33 3.5\r\n", b"lru mode flat\r\n",
            b"lru temp_ttl 45\r\n", b"cache_memlimit 40\r\n"]
    ours = settings_after(None, [], cmds)
    ref = settings_after(REFERENCE, REF_ARGS, cmds)
    for k in ref:
        if k != "lru_crawler":
            t.eq("stats settings %s after the commands as memcached" % k,
                 ours.get(k), ref[k])
    t.eq("stats settings lru_crawler after disable", ours["lru_crawler"],
         "no")


def test_flags_change_replies(t):
    compare(t, "-o no_slab_reassign", [b"slabs reassign 1 2\r\n"],
            ["-o", "no_slab_reassign"])
    compare(t, "-X", [b"lru_crawler metadump all\r\n",
                      b"lru_crawler crawl all\r\n"], ["-X"])
    compare(t, "-o no_lru_crawler", [b"lru_crawler metadump all\r\n",
                                     b"lru_crawler crawl 1\r\n",
                                     b"lru_crawler enable\r\n",
                                     b"lru_crawler enable\r\n"],
            ["-o", "no_lru_crawler"])
    compare(t, "-o no_lru_maintainer", [b"lru mode flat\r\n",
                                        b"lru temp_ttl 5\r\n",
                                        b"lru tune 10 20 0.5 2.0\r\n"],
            ["-o", "no_lru_maintainer"])


def bytes_session(program, args):
    srv = Server(args, program=program)
    c = Client(srv)
    out = []
    for cmd in (b"set a 0 0 1\r\nx\r\n", b"set bb 7 0 10\r\n0123456789\r\n",
                b"append a 0 0 2\r\nyz\r\n", b"incr n 1\r\n",
                b"set n 0 0 2\r\n10\r\n", b"incr n 95\r\n",
                b"delete bb\r\n"):
        ask(c, cmd)
        out.append(c.stats().get("bytes"))
    srv.stop()
    return out


def test_bytes(t):
    for args in ([], ["-C"]):
        t.eq("bytes after each step %s as memcached" % args,
             bytes_session(None, args),
             bytes_session(REFERENCE, REF_ARGS + args))


def page_move(program, args):
    """Fills class 1 over three pages, moves one to class 5, then one of
    5's to the pool: what memcached reports at each step."""
    srv = Server(args + ["-m", "16"], program=program)
    c = Client(srv)
    val = b"x" * 10
    for i in range(30000):
        c.send(b"set k%d 0 0 %d noreply\r\n%s\r\n" % (i, len(val), val))
    out = [ask(c, b"version\r\n"), ask(c, b"slabs reassign 1 5\r\n")]
    st = {}
    deadline = time.time() + 20
    while time.time() < deadline:
        st = c.stats()
        if st.get("slab_reassign_running") == "0" and \
                st.get("slabs_moved") == "1":
            # One "stats" is no snapshot: curr_items may have been summed
            # before the mover's last sweep. Nothing moves any more now.
            st = c.stats()
            break
        time.sleep(0.05)
    keys = ("slab_reassign_rescues", "slab_reassign_evictions_nomem",
            "slab_reassign_inline_reclaim", "slabs_moved", "curr_items",
            "slab_global_page_pool", "evictions")
    out.append({k: st.get(k) for k in keys})
    sl = c.stats(b"slabs")
    out.append({k: v for k, v in sl.items()
                if k.split(":")[-1] in ("total_pages", "used_chunks",
                                        "free_chunks")})
    missing = 0
    for i in range(30000):
        c.send(b"mg k%d v\r\n" % i)
        ln = c.line()
        if ln.startswith(b"VA"):
            c.line()
        else:
            missing += 1
    out.append(missing)
    out.append(ask(c, b"slabs reassign 5 0\r\n"))
    out.append(ask(c, b"slabs reassign 1 5\r\n"))
    srv.stop()
    return out


def test_page_move(t):
    ours = page_move(None, [])
    ref = page_move(REFERENCE, REF_ARGS)
    for i, (a, b) in enumerate(zip(ours, ref)):
        t.eq("page move step %d as memcached" % i, a, b)


def pages_of(c, cls):
    return int(c.stats(b"slabs").get("%d:total_pages" % cls, "0"))


def fill_and_empty(c, n):
    """n small items into class 1, then all deleted."""
    for i in range(n):
        c.send(b"set k%d 0 0 10 noreply\r\n0123456789\r\n" % i)
    ask(c, b"version\r\n")
    pages = pages_of(c, 1)
    for i in range(n):
        c.send(b"delete k%d noreply\r\n" % i)
    ask(c, b"version\r\n")
    return pages


def automove_reclaim(program, args):
    """automove 1 with a 3 s window: class 1 filled over 7 pages, then
    emptied, gives pages to the global pool until 2.5 pages' worth of free
    chunks or fewer are left."""
    srv = Server(args + ["-m", "64", "-o", "slab_automove_window=3"],
                 program=program)
    c = Client(srv)
    out = [fill_and_empty(c, 70000)]
    deadline = time.time() + 40
    while time.time() < deadline and pages_of(c, 1) > 2:
        time.sleep(0.1)
    time.sleep(2)  # no further move: more would leave too few free chunks
    st = c.stats()
    out += [pages_of(c, 1), st.get("slabs_moved"),
            st.get("slab_global_page_pool")]
    srv.stop()
    return out


def automove_evict(program, args):
    """automove 2: class 1 holds all memory, emptied; a class that then
    has to evict takes class 1's pages, one per move, until it has one
    left (memcached's "source keeps a page")."""
    srv = Server(args + ["-m", "8", "-o", "slab_automove=2"],
                 program=program)
    c = Client(srv)
    before = fill_and_empty(c, 80000)
    val = b"v" * 900
    deadline = time.time() + 40
    i = 0
    while time.time() < deadline and pages_of(c, 1) > 1:
        for _ in range(2000):
            c.send(b"set big%d 0 0 %d noreply\r\n%s\r\n" % (i, len(val),
                                                               val))
            i += 1
        ask(c, b"version\r\n")
    st = c.stats()
    out = [before > 4, pages_of(c, 1), int(st.get("slabs_moved")) >= before - 1,
           int(st.get("evictions")) > 0]
    if out[1] != 1:  # what the mover was doing, for the log
        print("automove 2: class 1 kept %d of %d pages after %d sets: %s"
              % (out[1], before, i, {k: v for k, v in st.items()
                                     if k.startswith("slab") or
                                     k in ("evictions", "curr_items")}))
    srv.stop()
    return out


def test_automove(t):
    for what, fn in (("reclaim to the pool", automove_reclaim),
                     ("automove 2 on evictions", automove_evict)):
        ours = fn(None, [])
        ref = fn(REFERENCE, REF_ARGS)
        t.eq("automove %s as memcached" % what, ours, ref)


def vm_hwm_kb(srv):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for ln in f:
            if ln.startswith("VmHWM:"):
                return int(ln.split()[1])
    return 0


BIG_DUMP = 200000


def fill_big(c):
    val = b"v" * 100
    for i in range(BIG_DUMP):
        c.send(b"set key:%07d 0 0 %d noreply\r\n%s\r\n" % (i, len(val), val))
    ask(c, b"version\r\n")


def read_dump(c):
    """The rest of a metadump: its line count, and its last line."""
    n = 0
    while True:
        while b"\n" not in c.buf:
            c._fill()
        lines = c.buf.split(b"\n")
        c.buf = lines.pop()
        for ln in lines:
            if not ln.startswith(b"key="):
                return n, ln
            n += 1


def test_metadump_streams(t):
    """A metadump of 200,000 items (about 18 MB of lines) to a client that
    stops reading: the server's peak RSS grows by much less than the dump
    (it is produced as the socket drains), another client on the same
    worker thread (-t 1) is served meanwhile, and then the whole dump
    arrives, every item once. (memcached's own dump of these 200,000
    items may miss a few its LRU maintainer moves meanwhile: no count is
    compared with it here.)"""
    srv = Server(["-m", "256", "-t", "1"])
    c = Client(srv)
    fill_big(c)
    hwm = vm_hwm_kb(srv)
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    c.send(b"lru_crawler metadump all\r\n")
    first = c.read(4096)
    t.check("dump begins", first.startswith(b"key=key%3A"), first[:80])
    other = Client(srv)
    other.sock.settimeout(5)
    t.eq("another client served while the dump waits",
         ask(other, b"set other 0 0 2\r\nhi\r\n") + ask(other,
                                                        b"get other\r\n"),
         b"STORED\r\nVALUE other 0 2\r\nhi\r\nEND\r\n")
    time.sleep(0.5)
    paused_hwm = vm_hwm_kb(srv)
    c.buf = first + c.buf
    # "other" went to class 1, which the dump had passed (it was empty).
    t.eq("the whole dump arrives", read_dump(c), (BIG_DUMP, b"END\r"))
    grown = vm_hwm_kb(srv) - hwm
    print("metadump: peak RSS grew %d kB (%d kB while paused)" % (grown, paused_hwm - hwm))
    t.check("peak RSS grew by less than 4 MB during an 18 MB dump (%d kB; "
            "%d kB while paused)" % (grown, paused_hwm - hwm), grown < 4096,
            grown)
    c.send(b"lru_crawler metadump hash\r\n")
    t.eq("metadump hash: every item", read_dump(c),
         (BIG_DUMP + 1, b"END\r"))
    # A client that leaves mid-dump: its cursor leaves the LRU with it.
    c.send(b"lru_crawler metadump all\r\n")
    c.read(1000)
    c.close()
    c = Client(srv)
    t.eq("server serves on after a dump was abandoned",
         ask(c, b"get other\r\n"), b"VALUE other 0 2\r\nhi\r\nEND\r\n")
    c.send(b"lru_crawler metadump 1,2,3\r\n")
    ours_classes = read_dump(c)
    srv.stop()
    ref = Server(REF_ARGS + ["-m", "256"], program=REFERENCE)
    rc = Client(ref)
    fill_big(rc)
    ask(rc, b"set other 0 0 2\r\nhi\r\n")
    crawler_idle(ref)
    rc.send(b"lru_crawler metadump 1,2,3\r\n")
    t.eq("metadump of a class list as memcached", ours_classes, read_dump(rc))
    ref.stop()


def pipelined_dump(program, args):
    """A metadump after a command in the same read, then one alone: the
    bytes that come back (memcached refuses the first)."""
    srv = Server(args, program=program)
    c = Client(srv)
    ask(c, b"set a 0 0 1\r\nx\r\n")
    c.send(b"version\r\nlru_crawler metadump all\r\nversion\r\n")
    out = c.line() + c.line() + c.line()
    crawler_idle(srv)  # a loaded machine may still run the start-up crawl
    c.send(b"lru_crawler metadump all\r\n")
    dump = c.line()  # the item line and END
    srv.stop()
    # memcached's crawler may meet an item twice (its LRU maintainer
    # moves it between sub-LRUs mid-crawl): compared as a set of lines,
    # with how often "a" came counted apart.
    lines = dump.split(b"\n")
    return out + mask(b"\n".join(sorted(set(lines[:-1])) + lines[-1:])), \
        dump.count(b"key=a ")


def test_metadump_pipelined(t):
    ours, n = pipelined_dump(None, [])
    ref, _ = pipelined_dump(REFERENCE, ["-l", "127.0.0.1"])
    t.eq("metadump pipelined as memcached", ours, ref)
    t.eq("metadump lists the item once", n, 1)


def udp_dump(program, args):
    """A metadump over UDP: memcached's crawler cannot write to a UDP
    socket, so nothing comes back; the server goes on serving."""
    srv = Server(args, udp=True, program=program)
    crawler_idle(srv)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(0.5)
    got = []
    for i, cmd in enumerate((b"set a 0 0 1\r\nx\r\n",
                             b"lru_crawler metadump all\r\n",
                             b"version\r\n")):
        s.sendto(b"\0%c\0\0\0\1\0\0" % i + cmd, ("127.0.0.1", srv.udp_port))
        try:
            got.append(s.recvfrom(65536)[0])
        except socket.timeout:
            got.append(None)
    s.close()
    srv.stop()
    return got


def test_metadump_udp(t):
    t.eq("metadump over UDP as memcached", udp_dump(None, []),
         udp_dump(REFERENCE, ["-l", "127.0.0.1"]))


def test_metadump_many(t):
    """Hundreds of items over several classes: the same lines (order
    within a class aside, memcached crawls classes side by side)."""
    dumps = []
    for program, args in ((None, []), (REFERENCE, REF_ARGS)):
        srv = Server(args, program=program)
        c = Client(srv)
        for i in range(600):
            v = b"v" * (i % 300)
            c.send(b"set key:%d %d %d %d noreply\r\n%s\r\n"
                   % (i, i % 3, 0 if i % 2 else 1000, len(v), v))
        ask(c, b"version\r\n")
        crawler_idle(srv)
        # memcached's dump may repeat or miss an item its LRU maintainer
        # moves mid-crawl: its dump is asked again (at most three times)
        # until it names each of the 600 once. Ours is asked once.
        for _ in range(3 if program else 1):
            dump = ask(c, b"lru_crawler metadump all\r\n")
            keys = re.findall(rb"^key=(\S+) ", dump, re.M)
            if len(keys) == 600 and len(set(keys)) == 600:
                break
        dumps.append(sorted(mask(re.sub(rb" cls=\d+", b"", dump)).split(
            b"\n")))
        srv.stop()
    t.eq("metadump of 600 items: as many lines", len(dumps[0]),
         len(dumps[1]))
    t.eq("metadump of 600 items as memcached (cls masked)", dumps[0],
         dumps[1])


REFUSED = [
    ["-o", "ssl_verify_mode=5"], ["-o", "ssl_verify_mode=x"],
    ["-o", "ssl_verify_mode"], ["-o", "ssl_min_version=9"],
    ["-o", "ssl_min_version=-1"], ["-o", "ssl_min_version=3x"],
    ["-o", "ssl_verify_mode=1x"], ["-o", "ssl_wbuf_size"],
    ["-o", "ssl_keyformat=x"], ["-o", "ssl_wbuf_size=-1"],
    ["-o", "ssl_ciphers"], ["-o", "ssl_chain_cert"], ["-o", "ssl_key"],
    ["-o", "ssl_ca_cert"], ["-o", "ext_page_size=x"], ["-o", "ext_page_size"],
    ["-o", "ext_threads=x"], ["-o", "ext_io_depth=x"],
    ["-o", "ext_item_size=x"], ["-o", "ext_item_age=x"],
    ["-o", "ext_low_ttl=x"], ["-o", "ext_recache_rate=x"],
    ["-o", "ext_wbuf_size=x"], ["-o", "ext_compact_under=x"],
    ["-o", "ext_drop_under=x"], ["-o", "ext_max_sleep=x"],
    ["-o", "ext_max_frag=x"], ["-o", "ext_max_frag"], ["-o", "ext_path"],
    ["-o", "ext_path=/nonexistent/f"], ["-o", "ext_path=/nonexistent/f:64m:x"],
    ["-o", "ext_path=/nonexistent/f:64m:compact"],
    ["-o", "ext_path=/nonexistent/f:64m,ext_page_size=8"],
    ["-o", "ext_path=/nonexistent/f:64m", "-U", "5555"],
    ["-o", "ext_path=/nonexistent/f:64m", "-I", "8m", "-m", "64"],
    ["-o", "slab_automove_freeratio=x"], ["-o", "slab_automove_freeratio"],
    ["-o", "ext_foo=1"], ["-N", "0"], ["-N", "x"], ["-N", "8", "-t", "4"],
]
ACCEPTED = [
    ["-o", "ssl_min_version=3"], ["-o", "ssl_session_cache"],
    ["-o", "ssl_kernel_tls"], ["-o", "ssl_keyformat=1,ssl_verify_mode=2"],
    ["-o", "ext_drop_unread,ext_item_size=100,ext_max_frag=0.5"],
    ["-o", "no_hashexpand"], ["-o", "sock_cookie_id=5"],
    ["-o", "slab_automove_freeratio=0.1"], ["-N", "2"], ["-r"], ["-k"],
    ["-W"], ["-o", "slab_reassign,slab_automove=2"],
]


def run_flags(program, args):
    r = subprocess.run([program] + root_args() + ["-p", "0", "-U", "0",
                                                  "-l", "127.0.0.1"] + args,
                       capture_output=True, timeout=10)
    return r.returncode, r.stderr.split(b"\n")[0]


def test_flags(t):
    for args in REFUSED:
        rc, msg = run_flags(SERVER, args)
        ref_rc, ref_msg = run_flags(REFERENCE, args)
        t.eq("%s refused with memcached's message" % args, msg, ref_msg)
        t.eq("%s exits 64" % args, rc, 64)
        t.check("memcached refuses %s too" % args, ref_rc in (1, 64), ref_rc)
    for args in ACCEPTED:
        srv = Server(args + ["-t", "4"])
        t.eq("%s accepted" % args, ask(Client(srv), b"version\r\n"),
             b"VERSION 1.6.18\r\n")
        srv.stop()
    for args, why in ((["-e", "/tmp/x"], b"-e (a memory file"),):
        rc, msg = run_flags(SERVER, args)
        t.eq("%s refused" % args, rc, 64)
        t.check("%s says why" % args, msg.startswith(why), msg)


def test_help_lists_memcached_options(t):
    """Every option of memcached 1.6.18's -h is in ours (-S and -Y are the
    authentication work's)."""
    ref = subprocess.run([REFERENCE, "-h"], capture_output=True).stdout
    ours = subprocess.run([SERVER, "-h"], capture_output=True).stdout
    shorts = set(re.findall(rb"^-(\w)[, ]", ref, re.M)) - {b"S", b"Y"}
    subs = set(re.findall(rb"^   - (\w+):", ref, re.M))
    for o in sorted(shorts):
        t.check("-h lists -%s" % o.decode(),
                re.search(rb"^-%s[, ]" % o, ours, re.M), o)
    for o in sorted(subs):
        t.check("-h lists -o %s" % o.decode(), re.search(rb"\b%s\b" % o, ours),
                o)


def main():
    t = Tally("proto_admin")
    if not t.check("reference memcached installed",
                   os.access(REFERENCE, os.X_OK)):
        t.finish()
    t.run(compare, "lru_crawler", CRAWLER)
    t.run(compare, "slabs, lru, cache_memlimit", SLABS_LRU)
    t.run(compare, "-L", [b"cache_memlimit 32\r\n"], ["-L"])
    t.run(test_truncation_refused)
    t.run(test_stats_settings_as_memcached)
    t.run(test_stats_as_memcached)
    t.run(test_settings_follow)
    t.run(test_flags_change_replies)
    t.run(test_bytes)
    t.run(test_page_move)
    t.run(test_automove)
    t.run(test_metadump_many)
    t.run(test_metadump_streams)
    t.run(test_metadump_pipelined)
    t.run(test_metadump_udp)
    t.run(test_flags)
    t.run(test_help_lists_memcached_options)
    t.finish()


if __name__ == "__main__":
    main()
