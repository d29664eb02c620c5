#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/bench_smoke.py - smoke test of the bench suite (scripts/bench --tiny
and bench/rdn-bench crash).

Runs every experiment with tiny counts under both timing presets into a
temporary folder (README.md is left alone) and checks that every system
answered every request correctly (rdn-bench counts a miss, a wrong value
or a failure as an error), that the CSV files parse with the promised
columns and rows, and that the plots are PNG files.

As root, scripts/bench --hosts --tiny too (two network namespaces); and
scripts/bench --tiny --contention-rounds 2.

Then a short crash experiment (3 s of GETs, kill -9 at 1 s, few keys):
its summary, CSV files and plot have the promised format, no system
returned a wrong value, and the systems whose server is dead during the
outage (rpc, tcp-stock) recorded failed requests; tcp-stock, reloaded,
serves again. redn's own availability is asserted by the restart tests.

No timing is asserted. scripts/bench and crash-bench kill every process
they start. Python 3 standard library only; prints "tally: N passed, M
failed".
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.environ.get("top_srcdir",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  ".."))
SYSTEMS = ["ideal", "redn", "onesided", "rpc-poll", "rpc-event", "tcp",
           "tcp-stock"]
MODELS = ["fast", "cx5"]
TINY_SIZES = [64, 4096]
TINY_ITERS = 50
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


CRASH_SYSTEMS = ["redn", "rpc", "tcp-stock"]
CRASH_COLUMNS = ["system", "ok", "miss", "wrong", "failed", "unavail_s",
                 "up_s", "first_ok_s", "reload_s", "nic_outage"]
CRASH_SECS, CRASH_KILL_AT = 3, 1


def number(x):
    return None if x == "-" else float(x)


def crash_smoke():
    """bench/rdn-bench crash with tiny durations."""
    out = tempfile.mkdtemp(prefix="rdn-crash-smoke-")
    build = os.environ.get("top_builddir", TOP)
    try:
        p = subprocess.run([os.path.join(build, "bench", "rdn-bench"),
                            "crash", "--secs", str(CRASH_SECS), "--kill-at",
                            str(CRASH_KILL_AT), "--keys", "20", "--out", out],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, "rdn-bench crash exits 0 (%d): %s" %
              (p.returncode, p.stderr[-2000:]))
        lines = [x.split() for x in p.stdout.splitlines()
                 if x.strip() and not x.startswith("#")]
        for x in p.stdout.splitlines():  # a disturbed run says why
            if x.startswith("#"):
                print(x)
        check(lines and lines[0] == CRASH_COLUMNS,
              "crash summary header: %s" % (lines[:1],))
        summary = {x[0]: dict(zip(CRASH_COLUMNS, x)) for x in lines[1:]
                   if len(x) == len(CRASH_COLUMNS)}
        check(sorted(summary) == sorted(CRASH_SYSTEMS) and
              len(lines) == 1 + len(CRASH_SYSTEMS),
              "a summary row per system: %s" % p.stdout)
        for name, r in summary.items():
            try:
                nums = {k: number(v) for k, v in r.items() if k != "system"}
            except ValueError:
                nums = None
            check(nums is not None, "%s: the summary parses: %s" % (name, r))
            if nums is None:
                continue
            check(nums["ok"] > 0 and nums["wrong"] == 0,
                  "%s: GETs succeeded, no wrong value: %s" % (name, r))
            check(nums["up_s"] is not None,
                  "%s: the restarted server came up: %s" % (name, r))
            check((nums["nic_outage"] is not None) == (name == "redn"),
                  "%s: nic_outage only for redn: %s" % (name, r))
            if name != "redn":  # their server is dead during the outage
                check(nums["failed"] > 0 and nums["unavail_s"] > 0,
                      "%s: failures during the outage: %s" % (name, r))
            if name == "tcp-stock":
                check(nums["reload_s"] is not None and
                      nums["first_ok_s"] is not None,
                      "tcp-stock: reloaded and served again: %s" % r)
        rows = read_csv(os.path.join(out, "crash.csv"))
        check(rows and rows[0] == ["t", "system", "ok", "miss", "wrong",
                                   "failed", "nic"],
              "crash.csv header: %s" % (rows[:1],))
        for name in CRASH_SYSTEMS:
            mine = [r for r in rows[1:] if r[1] == name]
            check(len(mine) == CRASH_SECS * 10 and
                  [float(r[0]) for r in mine] ==
                  [round(0.1 * i, 1) for i in range(CRASH_SECS * 10)] and
                  str(sum(int(r[2]) for r in mine)) ==
                  summary.get(name, {}).get("ok"),
                  "crash.csv: a row per 100 ms for %s, adding up" % name)
        marks = read_csv(os.path.join(out, "crash_marks.csv"))
        check(marks and marks[0] == ["system", "mark", "t"],
              "crash_marks.csv header: %s" % (marks[:1],))
        for name in CRASH_SYSTEMS:
            m = {r[1]: float(r[2]) for r in marks[1:] if r[0] == name}
            want = ["kill", "restart", "up"] + (
                ["reload", "reloaded"] if name == "tcp-stock" else [])
            check(sorted(m) == sorted(want) and
                  [m[k] for k in want] == sorted(m[k] for k in want) and
                  m["kill"] >= CRASH_KILL_AT,
                  "crash_marks.csv: %s marked in order: %s" % (name, m))
        path = os.path.join(out, "crash.png")
        ok = os.path.exists(path)
        if ok:
            with open(path, "rb") as f:
                ok = f.read(8) == b"\x89PNG\r\n\x1a\n"
        check(ok, "crash.png is a PNG")
        for name in ("crash.gp", "crash.txt"):
            check(os.path.exists(os.path.join(out, name)) and
                  os.path.getsize(os.path.join(out, name)) > 0,
                  "%s is written" % name)
    finally:
        shutil.rmtree(out, True)


HOSTS_SYSTEMS = ["ideal", "redn", "onesided", "rpc-poll", "rpc-event", "tcp"]
HOSTS_TPUT = ["redn", "onesided", "rpc-poll", "tcp"]


def hosts_smoke():
    """scripts/bench --hosts --tiny (root: network namespaces): every
    system answered every GET across the veth, and hosts.csv has a latency
    row per system and a throughput row per throughput system, with the
    retransmission counts."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("hosts: skipped (needs root and iproute2)")
        return
    out = tempfile.mkdtemp(prefix="rdn-bench-hosts-smoke-")
    try:
        p = subprocess.run([sys.executable, os.path.join(TOP, "scripts",
                                                         "bench"),
                            "--hosts", "--tiny", "--no-readme", "--out", out],
                           capture_output=True, text=True, timeout=300)
        check(p.returncode == 0, "scripts/bench --hosts --tiny exits 0 "
              "(%d): %s" % (p.returncode, p.stderr[-2000:]))
        rows = read_csv(os.path.join(out, "hosts.csv")) if os.path.exists(
            os.path.join(out, "hosts.csv")) else []
        check(rows and rows[0] == ["experiment", "system", "clients",
                                   "p50_us", "p99_us", "ops_per_s",
                                   "retrans", "timeouts"],
              "hosts.csv header: %s" % (rows[:1],))
        got = sorted((r[0], r[1]) for r in rows[1:])
        want = sorted([("latency", x) for x in HOSTS_SYSTEMS] +
                      [("throughput", x) for x in HOSTS_TPUT])
        check(got == want, "hosts.csv: a row per system: %s" % got)
        check(all(float(r[3]) > 0 and float(r[4]) >= float(r[3]) and
                  int(r[6]) >= 0 and int(r[7]) >= 0 for r in rows[1:]),
              "hosts.csv numbers parse and are ordered")
        with open(os.path.join(out, "hosts.md")) as f:
            check("one-sided / RedN" in f.read(), "hosts.md has the ratios")
    finally:
        shutil.rmtree(out, True)


def rounds_smoke():
    """scripts/bench --tiny --contention-rounds 2: a row per model, round
    and writer count (0 and --tiny's 2), each GET answered right, and the
    summary's line per model."""
    out = tempfile.mkdtemp(prefix="rdn-bench-rounds-smoke-")
    try:
        p = subprocess.run([sys.executable, os.path.join(TOP, "scripts",
                                                         "bench"),
                            "--tiny", "--contention-rounds", "2",
                            "--no-readme", "--out", out,
                            "--models", ",".join(MODELS)],
                           capture_output=True, text=True, timeout=300)
        check(p.returncode == 0, "scripts/bench --contention-rounds exits 0 "
              "(%d): %s" % (p.returncode, p.stderr[-2000:]))
        path = os.path.join(out, "contention_rounds.csv")
        rows = read_csv(path) if os.path.exists(path) else []
        check(rows and rows[0] == ["model", "round", "writers", "p50_us",
                                   "p99_us"],
              "contention_rounds.csv header: %s" % (rows[:1],))
        got = sorted((r[0], int(r[1]), int(r[2])) for r in rows[1:])
        want = sorted((m, i, w) for m in MODELS for i in (0, 1)
                      for w in (0, 2))
        check(got == want, "contention_rounds.csv rows: %s" % got)
        with open(os.path.join(out, "contention_rounds.md")) as f:
            md = f.read()
        check(all("| %s | 2 | 2 |" % m in md for m in MODELS),
              "contention_rounds.md: a line per model")
    finally:
        shutil.rmtree(out, True)


def main():
    crash_smoke()
    hosts_smoke()
    rounds_smoke()
    out = tempfile.mkdtemp(prefix="rdn-bench-smoke-")
    try:
        p = subprocess.run([sys.executable, os.path.join(TOP, "scripts",
                                                         "bench"),
                            "--tiny", "--no-readme", "--out", out,
                            "--models", ",".join(MODELS)],
                           capture_output=True, text=True, timeout=300)
        check(p.returncode == 0, "scripts/bench --tiny exits 0 (%d): %s" %
              (p.returncode, p.stderr[-2000:]))
        raw = []
        if os.path.exists(os.path.join(out, "raw.jsonl")):
            with open(os.path.join(out, "raw.jsonl")) as f:
                raw = [json.loads(line) for line in f]
        check(len(raw) > 0, "raw.jsonl has results")
        for model in MODELS:
            for size in TINY_SIZES:
                for system in SYSTEMS:
                    r = [x for x in raw if x.get("experiment") == "latency"
                         and x.get("model") == model and
                         x.get("system") == system and
                         x.get("value_size") == size]
                    check(len(r) == 1 and r[0].get("errors") == 0 and
                          r[0].get("n") == TINY_ITERS,
                          "%s %s %d B: every GET answered right: %s" %
                          (model, system, size, r))
        for r in raw:
            if r.get("experiment") != "latency":
                check(r.get("errors") == 0, "%s %s %s: no errors: %s" % (
                    r.get("experiment"), r.get("model"), r.get("system"), r))
        rows = read_csv(os.path.join(out, "summary.csv"))
        check(rows and rows[0] == ["model", "system", "value_size", "p50_us",
                                   "p99_us", "p999_us", "ops_per_s"],
              "summary.csv header: %s" % (rows[:1],))
        got = {(r[0], r[1], int(r[2])) for r in rows[1:]}
        want = {(m, s, z) for m in MODELS for s in SYSTEMS
                for z in TINY_SIZES}
        check(got == want, "summary.csv rows: missing %s" % (want - got))
        check(all(float(r[3]) > 0 and float(r[4]) >= float(r[3]) and
                  float(r[6]) > 0 for r in rows[1:]),
              "summary.csv numbers parse and are ordered")
        rows = read_csv(os.path.join(out, "contention.csv"))
        check(rows and rows[0] == ["model", "system", "writers", "p50_us",
                                   "p99_us"],
              "contention.csv header: %s" % (rows[:1],))
        check(len(rows) - 1 == len(MODELS) * 2 * 2 and
              all(float(r[3]) > 0 for r in rows[1:]),
              "contention.csv: a row per model, system and writer count")
        rows = read_csv(os.path.join(out, "distance.csv"))
        check(rows and rows[0] == ["system", "oneway_ns", "p50_us", "p99_us"],
              "distance.csv header: %s" % (rows[:1],))
        got = {(r[0], int(r[1])) for r in rows[1:]}
        want = {(s, ns) for s in ["ideal", "redn", "onesided", "rpc-poll"]
                for ns in (190, 2000)}
        check(got == want, "distance.csv rows: missing %s" % (want - got))
        for name in ["latency_%s.png" % m for m in MODELS] + \
                ["contention_%s.png" % m for m in MODELS] + \
                ["distance_cx5.png"]:
            path = os.path.join(out, name)
            ok = os.path.exists(path)
            if ok:
                with open(path, "rb") as f:
                    ok = f.read(8) == b"\x89PNG\r\n\x1a\n"
            check(ok, "%s is a PNG" % name)
        for name in ("summary.md", "settings.txt", "throughput.csv"):
            check(os.path.getsize(os.path.join(out, name)) > 0,
                  "%s is written" % name)
    finally:
        shutil.rmtree(out, True)
    print("tally: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
