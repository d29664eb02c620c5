#!/usr/bin/env python3
"""t/bench_smoke.py - smoke test of the bench suite (scripts/bench --tiny).

Runs every experiment with tiny counts under both timing presets into a
temporary folder (README.md is left alone) and checks that every system
answered every request correctly (rdn-bench counts a miss, a wrong value
or a failure as an error), that the CSV files parse with the promised
columns and rows, and that the plots are PNG files. No timing is asserted.
scripts/bench kills every process it starts. Python 3 standard library
only; prints "tally: N passed, M failed".
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


def main():
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
        for name in ["latency_%s.png" % m for m in MODELS] + \
                ["contention_%s.png" % m for m in MODELS]:
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
