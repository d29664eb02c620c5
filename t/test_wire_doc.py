# SPDX-License-Identifier: BSD-3-Clause
"""t/test_wire_doc.py - docs/wire.md says what proto/rdn_wire.h says.

Every layout table of docs/wire.md (a table whose header starts with
"| offset | size |", below a text that names `struct rdn_...`) must list
each field of that structure with the offset and size t/wire_dump prints
from the C header, and nothing else; a "(struct NAME, N B)" heading must
give the structure's size; the message table must give each RDN_MSG_*
its number; the title must name RDN_WIRE_VERSION. So the protocol's
documentation cannot drift from the code without a failing test.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402
import rdnwire as w  # noqa: E402

SRC = os.environ.get("top_srcdir",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  ".."))
DOC = os.path.join(SRC, "docs", "wire.md")
STRUCT = re.compile(r"struct (rdn_\w+)")
SIZED = re.compile(r"\(struct (rdn_\w+), (\d+) B\)")


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def field_name(cell):
    """The field a row names: its first word, without array brackets."""
    name = re.split(r"[\s:(]", cell.strip("`"), maxsplit=1)[0]
    return re.sub(r"\[\d+\]$", "", name)


def tables(lines):
    """(struct named before the table, [rows]) for each layout table."""
    last_struct, i = None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            last_struct = None
        names = STRUCT.findall(line)
        if names and not line.startswith("|"):
            last_struct = names[-1]
        if line.startswith("| offset | size |"):
            rows, i = [], i + 2  # skip the header and the |---| line
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            yield last_struct, rows
            continue
        i += 1


def check_table(t, name, rows):
    lay = w.LAYOUTS.get(name)
    if not t.check("%s: wire_dump knows it" % name, lay is not None):
        return
    seen = set()
    for off, size, field, *_ in rows:
        f = field_name(field)
        seen.add(f)
        if t.check("%s.%s: a field of the C structure" % (name, f),
                   f in lay.fields):
            c_off, c_size = lay.fields[f][:2]
            t.eq("%s.%s offset" % (name, f), int(off), c_off)
            t.eq("%s.%s size" % (name, f), int(size), c_size)
    t.eq("%s: every field documented" % name, sorted(set(lay.fields) - seen),
         [])


def main():
    t = mctest.Tally("test_wire_doc")
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    lines = text.splitlines()

    title = re.search(r"\(version (\d+)\)", lines[0])
    t.check("title names the version", title is not None, lines[0])
    if title:
        t.eq("title version", int(title.group(1)), w.RDN_WIRE_VERSION)

    documented = set()
    for name, rows in tables(lines):
        if name is None:
            continue  # a table of something else (the response slot)
        documented.add(name)
        check_table(t, name, rows)
    for name in ("rdn_msg_hdr", "rdn_hello", "rdn_welcome", "rdn_geometry",
                 "rdn_reject", "rdn_resume", "rdn_get_req", "rdn_lap_plan"):
        t.check("%s has a layout table" % name, name in documented)

    for name, size in SIZED.findall(text):
        lay = w.LAYOUTS.get(name)
        t.check("(struct %s, %s B): a known structure" % (name, size),
                lay is not None)
        if lay:
            t.eq("(struct %s, N B)" % name, int(size), lay.size)

    msgs = {}
    for line in lines:
        c = cells(line) if line.startswith("|") else []
        if len(c) >= 2 and c[0].isdigit() and c[1].isupper():
            msgs[c[1]] = int(c[0])
    want = {k[len("RDN_MSG_"):]: v for k, v in vars(w).items()
            if k.startswith("RDN_MSG_") and isinstance(v, int)}
    t.eq("message types", msgs, want)

    t.check("magic given", ("%#x" % w.RDN_WIRE_MAGIC) in text)
    t.check("largest payload given", str(w.RDN_WIRE_MAX_MSG) in text)
    t.finish()


if __name__ == "__main__":
    main()
