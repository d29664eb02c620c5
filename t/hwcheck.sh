#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# t/hwcheck.sh - rdn-hwcheck's probes on softnic, which does everything
# RedN needs: every feature must pass (a probe that cannot pass where all
# is supported would mislead a ConnectX owner), the GET chain must answer
# its hit and its miss, also with hardware's prefetch and timing, the
# device comes from $RDN_DEVICE without -d, and
# --help must say the mlx5 provider never ran on hardware. (On plain verbs,
# where the GET chain is unsupported: t/vm/verbs.checks.)
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
[ "$n" -eq 10 ]; check $? "$n of 10 probes passed"
echo "$out" | grep -q '^GET chain: hit  *pass$'; check $? "the GET chain's hit"
echo "$out" | grep -q 'the item, verified'; check $? "the hit's item verified"
echo "$out" | grep -q '^GET chain: miss  *pass$'; check $? "the GET chain's miss"
! echo "$out" | grep -q '^capabilities:'; check $? "softnic reports no NIC capability bits"
out=$(RDN_DEVICE=softnic-inproc "$bin")
check $? "with RDN_DEVICE: exit status"
echo "$out" | grep -q '^device softnic-inproc$'; check $? "RDN_DEVICE names the device"
[ "$(echo "$out" | grep -c ' pass$')" -eq 10 ]; check $? "with RDN_DEVICE: 10 passed"
# As hardware runs them: ConnectX-5 timing and WQEs of unmanaged queues
# fetched up to 16 ahead at the doorbell (no probe may rely on softnic
# reading a WQE only when it runs it).
n=$(RDN_SOFTNIC_STRICT=16 RDN_SOFTNIC_MODEL=cx5 "$bin" -d softnic-inproc |
    grep -c ' pass$')
[ "$n" -eq 10 ]; check $? "strict prefetch, cx5 model: $n of 10 passed"
"$bin" -h | grep -q 'NEVER RUN ON'; check $? "--help says it never ran on hardware"
"$bin" -h | grep -q 'GET chain once'; check $? "--help names the GET chain"
"$bin" -d nosuch >/dev/null 2>&1; [ $? -eq 2 ]; check $? "a missing device exits 2"
# A build without a hardware provider (make distcheck's is --without-verbs)
# says so when asked for its devices, rather than "no such device".
for p in verbs mlx5; do
    grep -qi "^#define HAVE_$p 1" "${top_builddir:-.}/config.h" && continue
    "$bin" -d "$p:dev0" 2>&1 | grep -q "built without the $p provider"
    check $? "-d $p:dev0 names the $p provider this build lacks"
done
echo "tally: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
