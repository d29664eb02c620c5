#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/offload_move.py - slab pages moving while the NIC reads items.

The cache is filled so that every class the raced keys use has pages to
spare; then, while a writer SETs the raced keys (t/offload_race.py's: each
value carries its key, a sequence number and a checksum, sizes from 40
bytes to 3 KB) and two RDMA readers GET them over the NIC, a mover keeps
sending "slabs reassign -1 0" (a page of the next class with one to spare
goes to the pool, whose pages the classes take again) and "slabs reassign
0 <class>". Items in a moving page are copied to other chunks or evicted
while the NIC may be reading them. Zero wrong values may reach the
application, pages must have moved, and the server must end with no QP
error.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402
from offload_env import (DRIVER, Nicd, race_collect, race_start,  # noqa: E402
                         start_server)

NKEYS = 16
RACE_SECS = 20
GETS = 300000
FILL_BYTES = 24 * 1024 * 1024


def fill(c):
    """Filler items of the raced keys' sizes, so their classes have pages
    to spare."""
    done, i = 0, 0
    while done < FILL_BYTES:
        batch = []
        for _ in range(200):
            n = 40 + (i * 97) % 3000
            batch.append(b"set fill-%d 0 0 %d noreply\r\n%s\r\n"
                         % (i, n, b"f" * n))
            done += n + 60
            i += 1
        c.send(b"".join(batch))
    c.send(b"version\r\n")
    c.line()
    return i


def main():
    t = mctest.Tally("offload_move")
    Nicd(threads=1)
    srv, port = start_server(["-m", "64", "-o", "slab_automove=0"])
    c = mctest.Client(srv)
    nfill = fill(c)
    base = [DRIVER, "-p", str(port), "-t", str(srv.port)]
    writer, readers = race_start(t, c, base, NKEYS, RACE_SECS, GETS)
    replies = {}
    dst = 1
    while any(r.poll() is None for r in readers):
        for cmd in (b"slabs reassign -1 0\r\n",
                    b"slabs reassign 0 %d\r\n" % dst):
            c.send(cmd)
            ln = c.line().split(b" ")[0].strip()
            replies[ln] = replies.get(ln, 0) + 1
        dst = dst % 12 + 1
        time.sleep(0.02)
    total = race_collect(t, readers, 60)
    writer.terminate()
    writer.communicate(timeout=30)
    st = c.stats()
    print("move: %d filler items; %d GETs (%d by the NIC), %d torn caught, "
          "%d wrong; reassign replies %s; slabs_moved %s, rescues %s, "
          "evictions_nomem %s"
          % (nfill, total["gets"], total["nic"], total["torn"],
             total["wrong"], replies, st["slabs_moved"],
             st["slab_reassign_rescues"], st["slab_reassign_evictions_nomem"]))
    t.eq("wrong values returned while pages moved", total["wrong"], 0)
    t.check("pages moved (%s)" % st["slabs_moved"],
            int(st["slabs_moved"]) >= 10)
    t.check("items were moved out of pages (%s rescued, %s evicted)"
            % (st["slab_reassign_rescues"],
               st["slab_reassign_evictions_nomem"]),
            int(st["slab_reassign_rescues"]) +
            int(st["slab_reassign_evictions_nomem"]) > 0)
    t.check("the readers ran (%d GETs)" % total["gets"],
            total["gets"] >= 20000)
    t.check("the NIC answered", total["nic"] > 0)
    t.eq("server: no QP errors", st["rdn_qp_errors"], "0")
    t.eq("every raced key is still there", [
        i for i in range(NKEYS) if c.get(b"race-%d" % i) is None], [])
    t.finish()


if __name__ == "__main__":
    main()
