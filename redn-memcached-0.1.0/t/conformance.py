#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/conformance.py - conformance against clients no one here wrote.

1. memccapable -a (libmemcached-tools): every ASCII test must print
   "[pass]" and the run must end with "All tests passed" and exit 0.
2. t/test_libmemcached: libmemcached's C API round trips (get, set,
   mget, cas, incr/decr, ...), one "ok"/"FAIL" line per check.
Both run against memcached/memcached on a free port. A missing client
counts as a failure, not a skip.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import TOP_BUILDDIR, Server, Tally  # noqa: E402

TIMEOUT = 50


def test_memccapable(t):
    tool = shutil.which("memccapable") or shutil.which("memcapable")
    if not t.check("memccapable installed (libmemcached-tools)", tool):
        return
    srv = Server(["-t", "2"])
    r = subprocess.run([tool, "-a", "-h", "127.0.0.1", "-p", str(srv.port),
                        "-t", "5"], capture_output=True, timeout=TIMEOUT)
    out = r.stdout.decode("latin1", "replace")
    results = [ln for ln in out.splitlines() if ln.rstrip().endswith("]")]
    t.check("memccapable ran its ascii tests", len(results) >= 20, out)
    for ln in results:
        name = ln.rsplit("[", 1)[0].strip()
        t.check("memccapable: " + name, ln.rstrip().endswith("[pass]"), ln)
    t.check("memccapable: All tests passed", "All tests passed" in out, out)
    t.eq("memccapable exit code", r.returncode, 0)
    srv.stop()


def test_c_api(t):
    prog = os.path.join(TOP_BUILDDIR, "t", "test_libmemcached")
    if not t.check("t/test_libmemcached built", os.path.exists(prog)):
        return
    srv = Server(["-t", "2"])
    r = subprocess.run([prog, str(srv.port)], capture_output=True,
                       timeout=TIMEOUT)
    lines = r.stdout.decode("latin1", "replace").splitlines()
    t.check("C API checks ran", len(lines) >= 20, lines)
    for ln in lines:
        t.check("libmemcached: " + ln.split(" ", 1)[-1],
                ln.startswith("ok "), ln)
    t.eq("test_libmemcached exit code", r.returncode, 0)
    srv.stop()


def main():
    t = Tally("conformance")
    t.run(test_memccapable)
    t.run(test_c_api)
    t.finish()


if __name__ == "__main__":
    main()
