# SPDX-License-Identifier: BSD-3-Clause
"""t/offload_race.py - offloaded GETs racing with writers.

A writer SETs a small key set continuously (every value carries its key,
a sequence number and a checksum of itself; sizes vary from 40 bytes to
3 KB so items move between slab classes and freed memory is reused),
while two RDMA readers GET the same keys over the NIC, 8 in flight each,
and check every value they are given. Zero wrong values may reach the
application; the torn reads the library caught and retried are reported.

It runs until the readers did 1,000,000 GETs together, or for at most
RACE_SECS seconds on a slow machine (then it says how many it did);
RDN_TEST_RACE_GETS and RDN_TEST_RACE_SECS change both (t/offload_hosts.sh,
across a lossy link).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402
from offload_env import (Nicd, driver_cmd, driver_counts,  # noqa: E402
                         race_collect, race_start, start_server)

NKEYS = 16
TARGET = int(os.environ.get("RDN_TEST_RACE_GETS", 1000000))
RACE_SECS = float(os.environ.get("RDN_TEST_RACE_SECS", 40))
FLOOR = min(50000, TARGET // 2)  # fewer: the readers did not run


def main():
    t = mctest.Tally("offload_race")
    Nicd(threads=1)  # one engine thread: the most GETs on 2 cores
    srv, port = start_server(["-m", "16"])
    base = driver_cmd(srv.port, port)
    t0 = time.time()
    c = mctest.Client(srv)
    writer, readers = race_start(t, c, base, NKEYS, RACE_SECS, TARGET)
    c.close()
    total = race_collect(t, readers, RACE_SECS + 60)
    secs = time.time() - t0
    writer.terminate()
    sets = driver_counts(writer.communicate(timeout=30)[0]).get("sets", 0)
    print("race: %d GETs (%d answered by the NIC, %d over TCP) in %.1f s "
          "against %d SETs; %d torn reads caught and retried, %d wrong"
          % (total["gets"], total["nic"], total["tcp"], secs, sets,
             total["torn"], total["wrong"]))
    if total["gets"] < TARGET:
        print("race: NOTE: %d GETs, fewer than %d, in the %d s bound"
              % (total["gets"], TARGET, RACE_SECS))
    t.eq("wrong or torn values returned", total["wrong"], 0)
    c = mctest.Client(srv)

    def nic_counted():
        st = c.stats()
        return st if int(st["rdn_get_hits"]) + int(st["rdn_get_misses"]) >= \
            total["nic"] else None
    # The server counts a NIC answer once its completion comes back, which
    # can be after the reader got it and exited: wait (bounded) for them.
    st = mctest.wait_for(nic_counted, 15) or c.stats()
    c.close()
    t.eq("server: no QP errors", st["rdn_qp_errors"], "0")
    # Every key exists all along, unless the server evicted it: freed items
    # wait for the reclaim horizon, which a loaded machine delays, and a
    # full cache then evicts live items as memcached does (seen: misses
    # equal to "evictions", both 0 when the machine is idle).
    t.check("misses only when the server evicted (%d misses, %s evictions)"
            % (total["misses"], st["evictions"]),
            total["misses"] == 0 or int(st["evictions"]) > 0)
    t.check("the readers ran (%d GETs)" % total["gets"],
            total["gets"] >= FLOOR)
    t.check("most answers came from the NIC",
            total["nic"] > total["gets"] // 2)
    t.check("the writer ran", sets > 1000)
    # Every answer is counted; the hit/miss split is read off the recycled
    # response WQEs afterwards, so a watch thread a lap late may misfile one.
    t.check("server: NIC answers counted",
            int(st["rdn_get_hits"]) + int(st["rdn_get_misses"]) >=
            total["nic"])
    t.finish()


if __name__ == "__main__":
    main()
