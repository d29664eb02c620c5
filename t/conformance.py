#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/conformance.py - conformance against clients no one here wrote.

1. memccapable (libmemcached-tools), all of its tests, ASCII and binary:
   every one must print "[pass]" and the run must end with "All tests
   passed" and exit 0.
2. t/test_libmemcached: libmemcached's C API round trips (get, set,
   mget, cas, incr/decr, ...), one "ok"/"FAIL" line per check, over the
   ASCII protocol and again over the binary protocol.
3. memcslap --binary: a bounded load run of libmemcached's load tool.
4. t/pyclients.py under Debian's python3: pylibmc in binary mode and
   pymemcache (python3-pylibmc, python3-pymemcache).
All run against memcached/memcached on a free port. A missing client
counts as a failure, not a skip.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import TOP_BUILDDIR, Client, Server, Tally  # noqa: E402

TIMEOUT = 50


def test_memccapable(t):
    tool = shutil.which("memccapable") or shutil.which("memcapable")
    if not t.check("memccapable installed (libmemcached-tools)", tool):
        return
    srv = Server(["-t", "2"])
    r = subprocess.run([tool, "-h", "127.0.0.1", "-p", str(srv.port),
                        "-t", "5"], capture_output=True, timeout=TIMEOUT)
    out = r.stdout.decode("latin1", "replace")
    results = [ln for ln in out.splitlines() if ln.rstrip().endswith("]")]
    for proto in ("ascii", "binary"):
        n = sum(1 for ln in results if ln.startswith(proto + " "))
        t.check("memccapable ran its %s tests" % proto, n >= 20, out)
    for ln in results:
        name = ln.rsplit("[", 1)[0].strip()
        t.check("memccapable: " + name, ln.rstrip().endswith("[pass]"), ln)
    t.check("memccapable: All tests passed", "All tests passed" in out, out)
    t.eq("memccapable exit code", r.returncode, 0)
    srv.stop()


def count_checks(t, what, cmd, least):
    """Runs a checker that prints "ok NAME" / "FAIL NAME" lines."""
    r = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)
    lines = r.stdout.decode("latin1", "replace").splitlines()
    t.check("%s checks ran" % what, len(lines) >= least,
            (lines, r.stderr[-2000:]))
    for ln in lines:
        t.check("%s: %s" % (what, ln.split(" ", 1)[-1]),
                ln.startswith("ok "), ln)
    t.eq("%s exit code" % what, r.returncode, 0)


def test_c_api(t):
    prog = os.path.join(TOP_BUILDDIR, "t", "test_libmemcached")
    if not t.check("t/test_libmemcached built", os.path.exists(prog)):
        return
    srv = Server(["-t", "2"])
    count_checks(t, "libmemcached", [prog, str(srv.port)], 20)
    count_checks(t, "libmemcached", [prog, str(srv.port), "binary"], 40)
    srv.stop()


def test_memcslap(t):
    tool = shutil.which("memcslap")
    if not t.check("memcslap installed (libmemcached-tools)", tool):
        return
    srv = Server(["-t", "2"])
    r = subprocess.run([tool, "--servers=127.0.0.1:%d" % srv.port, "--binary",
                        "--concurrency=2", "--execute-number=2000"],
                       capture_output=True, timeout=TIMEOUT)
    out = r.stdout.decode("latin1", "replace")
    t.eq("memcslap --binary exit code", r.returncode, 0)
    t.check("memcslap --binary set every key", "Time to set" in out, out)
    st = Client(srv).stats()
    t.check("memcslap's keys are stored", int(st["curr_items"]) > 0, st)
    t.check("server alive after memcslap", srv.alive())
    srv.stop()


def test_python_clients(t):
    python = "/usr/bin/python3"  # Debian's: python3-pylibmc installs there
    if not t.check("Debian python3 installed", os.path.exists(python)):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    srv = Server(["-t", "2"])
    count_checks(t, "python clients",
                 [python, os.path.join(here, "pyclients.py"), str(srv.port)],
                 40)
    srv.stop()


def main():
    t = Tally("conformance")
    t.run(test_memccapable)
    t.run(test_c_api)
    t.run(test_memcslap)
    t.run(test_python_clients)
    t.finish()


if __name__ == "__main__":
    main()
