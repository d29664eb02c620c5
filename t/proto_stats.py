#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/proto_stats.py - the "stats" family: memcached 1.6.18's field names,
counters that move as commands run, reset, detail, sizes, cachedump, conns.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import Client, Server, Tally, wait_for  # noqa: E402

GENERAL = """pid uptime time version libevent pointer_size rusage_user
rusage_system max_connections curr_connections total_connections
rejected_connections connection_structures cmd_get cmd_set cmd_flush
cmd_touch cmd_meta get_hits get_misses get_expired get_flushed delete_misses
delete_hits incr_misses incr_hits decr_misses decr_hits cas_misses cas_hits
cas_badval touch_hits touch_misses store_too_large store_no_memory auth_cmds
auth_errors bytes_read bytes_written limit_maxbytes accepting_conns
listen_disabled_num time_in_listen_disabled_us threads conn_yields
hash_power_level hash_bytes hash_is_expanding slab_reassign_running
slabs_moved lru_crawler_running lru_crawler_starts malloc_fails bytes
curr_items total_items expired_unfetched evicted_unfetched evicted_active
evictions reclaimed crawler_reclaimed crawler_items_checked
lrutail_reflocked moves_to_cold moves_to_warm moves_within_lru
direct_reclaims""".split()

SETTINGS = """maxbytes maxconns tcpport udpport inter verbosity oldest evictions
domain_socket umask shutdown_command growth_factor chunk_size num_threads
stat_key_prefix detail_enabled reqs_per_event cas_enabled tcp_backlog
auth_enabled_sasl item_size_max maxconns_fast hashpower_init slab_reassign
slab_automove lru_crawler lru_crawler_sleep lru_crawler_tocrawl
flush_enabled dump_enabled hash_algorithm lru_maintainer_thread temp_lru
idle_timeout track_sizes""".split()

ITEMS = """number number_hot number_warm number_cold age_hot age_warm age
mem_requested evicted evicted_nonzero evicted_time outofmemory tailrepairs
reclaimed expired_unfetched evicted_unfetched evicted_active
crawler_reclaimed crawler_items_checked lrutail_reflocked moves_to_cold
moves_to_warm moves_within_lru direct_reclaims hits_to_hot hits_to_warm
hits_to_cold hits_to_temp""".split()

SLABS = """chunk_size chunks_per_page total_pages total_chunks used_chunks
free_chunks free_chunks_end get_hits cmd_set delete_hits incr_hits
decr_hits cas_hits cas_badval touch_hits""".split()


def test_names(t, srv):
    c = Client(srv)
    c.set(b"a", b"1")
    s = c.stats()
    missing = [n for n in GENERAL if n not in s]
    t.eq("general stats names", missing, [])
    t.eq("version", s.get("version"), "1.6.18")
    t.eq("pointer_size", s.get("pointer_size"), "64")
    t.eq("threads", s.get("threads"), "3")
    t.eq("limit_maxbytes", s.get("limit_maxbytes"), str(16 * 1024 * 1024))
    t.check("rusage format", re.fullmatch(r"\d+\.\d{6}",
                                          s.get("rusage_user", "")), s)
    t.eq("hash_power_level", s.get("hash_power_level"), "16")
    st = c.stats(b"settings")
    t.eq("settings names", [n for n in SETTINGS if n not in st], [])
    t.eq("settings maxbytes", st.get("maxbytes"), str(16 * 1024 * 1024))
    t.eq("settings tcpport", st.get("tcpport"), str(srv.port))
    t.eq("settings growth_factor", st.get("growth_factor"), "1.25")
    t.eq("settings chunk_size", st.get("chunk_size"), "48")
    t.eq("settings item_size_max", st.get("item_size_max"), "1048576")
    t.eq("settings evictions", st.get("evictions"), "on")
    si = c.stats(b"items")
    t.eq("items names", [n for n in ITEMS if "items:1:" + n not in si], [])
    t.eq("items number", si.get("items:1:number"), "1")
    sl = c.stats(b"slabs")
    t.eq("slabs names", [n for n in SLABS if "1:" + n not in sl], [])
    t.eq("slab 1 chunk size as memcached", sl.get("1:chunk_size"), "96")
    t.check("slabs totals", "active_slabs" in sl and
            "total_malloced" in sl, sl)
    c.close()


def test_counters(t, srv):
    c = Client(srv)
    c.send(b"stats reset\r\n")
    t.eq("stats reset", c.line(), b"RESET\r\n")
    base = c.stats()
    t.eq("reset zeroes cmd_get", base["cmd_get"], "0")
    c.set(b"x", b"10")
    c.get(b"x")
    c.get(b"nope")
    c.send(b"get x nope x\r\n")
    c.lines_until()
    for cmd in (b"incr x 1", b"incr nope 1", b"decr x 1", b"decr nope 1",
                b"delete x", b"delete x", b"touch nope 1"):
        c.send(cmd + b"\r\n")
        c.line()
    c.set(b"y", b"1")
    c.send(b"gets y\r\n")
    cas = int(c.lines_until()[0].split()[4])
    for cmd in (b"cas y 0 0 1 %d" % cas, b"cas y 0 0 1 %d" % cas,
                b"cas nope 0 0 1 1"):
        c.send(cmd + b"\r\nz\r\n")
        c.line()
    c.send(b"flush_all\r\n")
    c.line()
    s = c.stats()
    want = {"cmd_get": "6", "get_hits": "4", "get_misses": "2",
            "incr_hits": "1", "incr_misses": "1", "decr_hits": "1",
            "decr_misses": "1", "delete_hits": "1", "delete_misses": "1",
            "touch_misses": "1", "cmd_touch": "1", "cas_hits": "1",
            "cas_badval": "1", "cas_misses": "1", "cmd_flush": "1",
            "cmd_set": "5"}
    t.eq("counters", {k: s[k] for k in want}, want)
    t.check("bytes_read counted", int(s["bytes_read"]) > 100, s)
    t.check("bytes_written counted", int(s["bytes_written"]) > 50, s)
    c.close()


def test_reset_slabs(t, srv):
    """stats reset zeroes the per-class counters of stats slabs too."""
    c = Client(srv)
    c.set(b"rs", b"1")
    c.get(b"rs")
    c.send(b"incr rs 1\r\n")
    c.line()
    ops = ("get_hits", "cmd_set", "incr_hits")
    before = c.stats(b"slabs")
    t.check("slab counters move", all(int(before.get("1:" + n, 0)) > 0
                                      for n in ops), before)
    c.send(b"stats reset\r\n")
    c.line()
    after = c.stats(b"slabs")
    t.eq("stats reset zeroes slab counters",
         {n: after.get("1:" + n) for n in ops}, {n: "0" for n in ops})
    t.eq("stats reset keeps slab geometry", after.get("1:total_pages"),
         before.get("1:total_pages"))
    c.close()


def test_detail(t, srv):
    c = Client(srv)
    for cmd, want in ((b"stats detail on", b"OK\r\n"),
                      (b"stats detail off", b"OK\r\n")):
        c.send(cmd + b"\r\n")
        t.eq(cmd.decode(), c.line(), want)
    c.send(b"stats detail on\r\n")
    c.line()
    c.set(b"user:1", b"a")
    c.set(b"user:2", b"b")
    c.get(b"user:1")
    c.get(b"user:9")
    c.send(b"delete user:2\r\n")
    c.line()
    c.set(b"noprefix", b"a")
    c.send(b"stats detail dump\r\n")
    lines = c.lines_until()
    t.eq("detail dump", lines,
         [b"PREFIX user get 2 hit 1 set 2 del 1\r\n", b"END\r\n"])
    c.send(b"stats detail off\r\n")
    c.line()
    c.close()


def test_sizes_cachedump(t, srv):
    c = Client(srv)
    t.eq("sizes disabled", c.stats(b"sizes"), {"sizes_status": "disabled"})
    c.send(b"stats sizes_enable\r\nversion\r\n")  # no END, as memcached
    t.eq("sizes enable", [c.line(), c.line()],
         [b"STAT sizes_status enabled\r\n", b"VERSION 1.6.18\r\n"])
    c.set(b"s1", b"x" * 10)
    c.set(b"s2", b"x" * 10)
    sizes = c.stats(b"sizes")
    t.check("sizes histogram", list(sizes.values()) == ["2"] and
            int(list(sizes.keys())[0]) % 32 == 0, sizes)
    c.send(b"stats sizes_disable\r\nversion\r\n")
    t.eq("sizes disable", [c.line(), c.line()],
         [b"STAT sizes_status disabled\r\n", b"VERSION 1.6.18\r\n"])
    c.send(b"flush_all\r\n")
    c.line()
    c.set(b"dumpme", b"abc", exptime=0)
    c.set(b"expired", b"abc", exptime=-1)
    c.send(b"stats cachedump 1 0\r\n")
    t.eq("cachedump", c.lines_until(),
         [b"ITEM dumpme [3 b; 0 s]\r\n", b"END\r\n"])
    c.send(b"stats cachedump 2 0\r\n")
    t.eq("cachedump empty class", c.lines_until(), [b"END\r\n"])
    c.close()


def test_conns(t, srv):
    c = Client(srv)
    c2 = Client(srv)
    c2.send(b"version\r\n")
    c2.line()
    s = c.stats(b"conns")
    states = {k: v for k, v in s.items() if k.endswith(":state")}
    t.check("a listener", "conn_listening" in states.values(), states)
    t.check("two clients", sum(1 for k in s if k.endswith(":listen_addr"))
            >= 2, s)
    addrs = [v for k, v in s.items() if k.endswith(":addr")]
    t.check("addr format", all(re.fullmatch(r"tcp:127\.0\.0\.1:\d+", a)
                               for a in addrs), addrs)
    # The earlier tests' clients closed, but the server may not have seen
    # their ends yet: wait (bounded) for them to go, then these two count.
    wait_for(lambda: c.stats()["curr_connections"] == "2")
    t.eq("curr_connections", c.stats()["curr_connections"], "2")
    c2.close()
    c.close()


def main():
    t = Tally("proto_stats")
    srv = Server(["-t", "3", "-m", "16"])
    for fn in (test_names, test_counters, test_reset_slabs, test_detail,
               test_sizes_cachedump, test_conns):
        t.run(fn, srv)
    t.finish()


if __name__ == "__main__":
    main()
