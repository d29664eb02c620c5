# SPDX-License-Identifier: BSD-3-Clause
"""t/test_design_doc.py - docs/design.md's WQE-by-WQE tables of the
offloaded GET ("Worker unit i", "Response unit i") say what
rdn/offload/pipeline.c builds.

t/pipeline_dump builds a pipeline on softnic-inproc and prints unit 0 of
both rings. Each table row "| a-b | OPCODE ... | ..." must cover exactly
the WQEs that start in blocks a..b, all of that opcode; a row that says
"signaled" must have every WQE signaled and one that does not, none; a
row that says FENCE must have its first WQE fenced and one that does not,
none. The rows together must cover the whole unit.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402

TOP = mctest.TOP_BUILDDIR
SRC = os.environ.get("top_srcdir",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  ".."))
DUMP = os.path.join(TOP, "t", "pipeline_dump")
DOC = os.path.join(SRC, "docs", "design.md")
TABLES = {"w": "**Worker unit i**", "r": "**Response unit i**"}
UNIT = {"w": 16, "r": 8}  # WQEBBs: OFL_W_UNIT, OFL_RESP_UNIT


def doc_rows(lines, title):
    """[(first, last, opcode, fence, signaled)] of the table after title."""
    at = next(i for i, ln in enumerate(lines) if ln.startswith(title))
    while not lines[at].startswith("|"):
        at += 1
    rows = []
    for ln in lines[at + 2:]:
        if not ln.startswith("|"):
            break
        bb, wqe = [c.strip() for c in ln.strip().strip("|").split("|")][:2]
        lo, _, hi = bb.partition("-")
        op = re.match(r"[A-Z_]+", wqe)
        rows.append((int(lo), int(hi or lo), op.group(0) if op else wqe,
                     "FENCE" in wqe, "signaled" in wqe))
    return rows


def main():
    t = mctest.Tally("test_design_doc")
    out = subprocess.run([DUMP], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True, timeout=60).stdout
    built = {"w": [], "r": []}
    for line in out.splitlines():
        ring, bb, n, op, flags = line.split()
        built[ring].append((int(bb), int(n), op, "F" in flags, "S" in flags))
    with open(DOC, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for ring, title in TABLES.items():
        rows = doc_rows(lines, title)
        wqes = built[ring]
        t.check("%s: the dump has WQEs" % ring, wqes)
        t.eq("%s: rows cover the unit" % ring,
             (rows[0][0], rows[-1][1]) if rows else None, (0, UNIT[ring] - 1))
        for prev, row in zip(rows, rows[1:]):
            t.eq("%s: row %d follows row %d" % (ring, row[0], prev[0]),
                 row[0], prev[1] + 1)
        for lo, hi, op, fence, signaled in rows:
            what = "%s %d-%d %s" % (ring, lo, hi, op)
            mine = [x for x in wqes if lo <= x[0] <= hi]
            if not t.check(what + ": WQEs there", mine):
                continue
            t.eq(what + ": last block", mine[-1][0] + mine[-1][1] - 1, hi)
            t.eq(what + ": opcodes", sorted({x[2] for x in mine}), [op])
            t.eq(what + ": FENCE", [x[3] for x in mine],
                 [fence] + [False] * (len(mine) - 1))
            t.eq(what + ": signaled", {x[4] for x in mine}, {signaled})
    t.finish()


if __name__ == "__main__":
    main()
