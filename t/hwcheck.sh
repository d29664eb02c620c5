#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# t/hwcheck.sh - rdn-hwcheck's probes on softnic, which does everything
# RedN needs: every feature must pass (a probe that cannot pass where all
# is supported would mislead a ConnectX owner), and --help must say the
# mlx5 provider never ran on hardware.
set -u
bin=${top_builddir:-.}/rdn/hwcheck/rdn-hwcheck
passed=0 failed=0
check() {
    if [ "$1" = 0 ]; then passed=$((passed + 1)); else
        failed=$((failed + 1)); echo "FAIL: $2"; fi
}
out=$("$bin" -d softnic-inproc -v)
rc=$?
echo "$out"
check $rc "exit status $rc"
n=$(echo "$out" | grep -c ' pass$')
[ "$n" -eq 8 ]; check $? "$n of 8 probes passed"
"$bin" -h | grep -q 'NEVER RUN ON'; check $? "--help says it never ran on hardware"
"$bin" -d nosuch >/dev/null 2>&1; [ $? -eq 2 ]; check $? "a missing device exits 2"
echo "tally: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
