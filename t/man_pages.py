#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/man_pages.py - every man page renders without a warning (groff -man
-ww), documents every option its program's help lists, and librdn(3)
documents every function of rdn/librdn/client.h. Python 3 standard library
only.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import Tally  # noqa: E402

TOP = os.environ.get("top_builddir", ".")
SRC = os.environ.get("top_srcdir", ".")
MAN = os.path.join(SRC, "man")

# page -> (program in the build tree, its help option, how many options
# its help lists at least: fewer means the help was not parsed)
PROGRAMS = {
    "redn-memcached.1": ("memcached/memcached", "-h", 4),
    "rdn-nicd.8": ("rdn/softnic/rdn-nicd", "--help", 4),
    "rdn-cli.1": ("rdn/librdn/rdn-cli", "-h", 4),
    "rdn-bench.1": ("bench/rdn-bench", "--help", 4),
    "rdn-trace.1": ("rdn/softnic/rdn-trace", "--help", 4),
    "rdn-hwcheck.1": ("rdn/hwcheck/rdn-hwcheck", "-h", 2),
    "rdn-pingpong.1": ("rdn/softnic/rdn-pingpong", "-h", 4),
    "rdn-perftest.1": ("rdn/softnic/rdn-perftest", "-h", 4),
}
OPTION = re.compile(r"(?<![\w$-])(--?[A-Za-z][\w-]*)")
FUNCTION = re.compile(r"^[a-z].*?\b(rdn_\w+)\(", re.M)


def plain(roff):
    """The page's source without roff's escapes: \\- is -, fonts vanish."""
    return re.sub(r"\\f[BIRP]|\\&|\\c", "", roff.replace("\\-", "-"))


def test_render(t, page):
    r = subprocess.run(["groff", "-man", "-ww", "-z", os.path.join(MAN, page)],
                       stderr=subprocess.PIPE)
    t.eq("%s renders without a warning" % page,
         (r.returncode, r.stderr.decode()), (0, ""))


def test_options(t, page):
    prog, helpopt, least = PROGRAMS[page]
    r = subprocess.run([os.path.join(TOP, prog), helpopt],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t.eq("%s %s exit code" % (prog, helpopt), r.returncode, 0)
    with open(os.path.join(MAN, page), encoding="utf-8") as f:
        text = plain(f.read())
    documented = set(OPTION.findall(text))
    listed = set(OPTION.findall(r.stdout.decode()))
    t.check("%s lists options" % prog, len(listed) >= least, listed)
    for opt in sorted(listed):
        t.check("%s documents %s" % (page, opt), opt in documented)


def test_librdn(t):
    with open(os.path.join(SRC, "rdn", "librdn", "client.h")) as f:
        funcs = FUNCTION.findall(f.read())
    with open(os.path.join(MAN, "librdn.3"), encoding="utf-8") as f:
        text = plain(f.read())
    name = text.split(".SH NAME", 1)[1].split(".SH", 1)[0]
    synopsis = text.split(".SH SYNOPSIS", 1)[1].split(".SH", 1)[0]
    t.check("client.h declares functions", len(funcs) >= 9, funcs)
    for fn in funcs:
        t.check("librdn.3 NAME has %s" % fn, re.search(r"\b%s\b" % fn, name))
        t.check("librdn.3 SYNOPSIS has %s" % fn, fn + "(" in synopsis)
        t.check("librdn.3 describes %s" % fn,
                re.search(r"\.BR %s \(\)" % fn, text))


def main():
    t = Tally("man_pages")
    pages = sorted(p for p in os.listdir(MAN) if re.search(r"\.[1-8]$", p))
    t.check("man pages found", len(pages) >= 5, pages)
    for page in pages:
        t.run(test_render, page)
    for page in PROGRAMS:
        t.run(test_options, page)
    t.run(test_librdn)
    t.finish()


if __name__ == "__main__":
    main()
