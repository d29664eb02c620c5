#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# t/verbs-rxe.sh - the verbs provider on a real RDMA stack: boots the rxe VM
# once (t/vm/rxe-vm), with t/vm/softnic-server in its host namespace, and
# runs t/vm/verbs.checks in it. Checks that report their own "Checks:" or
# "tally:" lines count themselves; the others are tallied here. Every
# check has what it needs here (scripts/setup installs it): one that
# skipped is counted failed.
set -u
src=${top_srcdir:-.}
grep -q '^#define HAVE_VERBS 1' "${top_builddir:-.}/config.h" ||
    { echo "built without libibverbs: no verbs provider to test"; exit 77; }
out=t/verbs-rxe.results
RXE_VM_HOST_CMD="$src/t/vm/softnic-server \$RXE_VM_RESULTS" \
    "$src/t/vm/rxe-vm" "$out" "$src/t/vm/verbs.checks"
rc=$?
[ $rc -eq 77 ] && exit 77
[ -f "$out/summary" ] || { echo "tally: 0 passed, 1 failed"; exit 1; }
passed=0 failed=0
while read -r verdict name _; do
    if [ "$verdict" = SKIP ]; then
        echo "FAIL: $name skipped"
        failed=$((failed + 1))
        continue
    fi
    grep -q -e '^[0-9]*%: Checks: ' -e '^tally: ' "$out/$name.log" && continue
    if [ "$verdict" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done <"$out/summary"
echo "tally: $passed passed, $failed failed"
[ "$failed" = 0 ] || [ $rc != 0 ] || rc=1
exit $rc
