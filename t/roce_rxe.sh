#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# t/roce_rxe.sh - softnic against a RoCE stack nobody here wrote: Linux's
# rxe (Soft-RoCE) in the QEMU VM of t/vm/rxe-vm (Debian's kernel, rxe0 on
# eth0 = 10.77.0.2), rdma-core's stock ibv_rc_pingpong inside it,
# rdn-pingpong on softnic in the VM's host namespace (10.77.0.1, the tap).
# The stock tool runs as client and as server at 1, 4096 and 10000 bytes
# (one to ten packets); rxe drops every packet whose ICRC is wrong, so
# exchanges that complete prove softnic's packets right, and softnic's
# counters show it dropped none of rxe's. Every packet both ways is
# captured and decoded by tshark: none may be malformed. Needs root,
# qemu-system-x86, linux-image-amd64 and ibverbs-utils (scripts/setup
# installs them); skipped otherwise, or with RDN_TEST_NO_VM=1.
#
# The guest runs the stock tool as rxe-vm checks (this script writes the
# checklist); the host side (this script again, as RXE_VM_HOST_CMD, with
# --host) runs the daemon, the capture and rdn-pingpong against them.
set -u

B=${top_builddir:-.}
B=$(cd "$B" && pwd)
S=${top_srcdir:-.}
S=$(cd "$S" && pwd)
SIZES="1 4096 10000"

# ---- the host side, in rxe-vm's namespace ----------------------------------
# --host DIR: rdn-pingpong as server for each size (the guest's stock
# clients), then as client of each stock server; verdicts in DIR/host.sum.
if [ "${1:-}" = --host ]; then
    dir=$2
    nd="" tpid=""
    stop() {
        "$B/rdn/softnic/rdn-nicd" -s "$dir/n.sock" --status >"$dir/status"
        [ -z "$tpid" ] || kill "$tpid" 2>/dev/null
        [ -z "$nd" ] || kill "$nd" 2>/dev/null
        wait 2>/dev/null
        exit 0
    }
    trap stop TERM INT
    if command -v tshark >/dev/null; then
        tshark -i "$(ls /sys/class/net | grep -v '^lo$' | head -1)" \
            -w "$dir/cap.pcap" -f "udp port 4791" >"$dir/tshark.log" 2>&1 &
        tpid=$!
        for _ in $(seq 200); do # it starts slowly
            grep -q "^Capturing" "$dir/tshark.log" && break
            sleep 0.05
        done
    fi
    "$B/rdn/softnic/rdn-nicd" -s "$dir/n.sock" --listen 10.77.0.1 \
        -l "$dir/n.log" &
    nd=$!
    for _ in $(seq 600); do [ -S "$dir/n.sock" ] && break; sleep 0.05; done
    pp() {
        RDN_NICD_SOCKET="$dir/n.sock" RDN_NICD_AUTOSTART=0 \
            timeout 120 "$B/rdn/softnic/rdn-pingpong" "$@"
    }
    verdict() { # NAME STATUS
        if [ "$2" = 0 ]; then v=PASS; else v=FAIL; fi
        echo "$v $1" >>"$dir/host.sum"
    }
    for s in $SIZES; do
        pp -p 18515 -s "$s" -n 20 >"$dir/srv$s.txt" 2>&1
        verdict "rdn-pingpong server, stock ibv_rc_pingpong client, -s $s" $?
    done
    for s in $SIZES; do
        st=1
        for _ in $(seq 60); do # until the stock server listens
            pp -p 18516 -s "$s" -n 20 10.77.0.2 >"$dir/cli$s.txt" 2>&1 && {
                st=0
                break
            }
            # Only a refused connection is worth another try: after an
            # exchange, the stock server is gone (it serves one client).
            grep -q "no connection" "$dir/cli$s.txt" || break
            sleep 1
        done
        verdict "rdn-pingpong client, stock ibv_rc_pingpong server, -s $s" $st
    done
    touch "$dir/host.done"
    while :; do sleep 1; done # until rxe-vm stops us
fi

# ---- the test ----------------------------------------------------------------
if [ "$(id -u)" != 0 ] || [ -n "${RDN_TEST_NO_VM:-}" ] ||
    ! command -v ibv_rc_pingpong >/dev/null; then
    echo "SKIP: needs root and ibverbs-utils (and what t/vm/rxe-vm needs)"
    exit 77
fi
dir=$(mktemp -d /tmp/roce_rxe.XXXXXX)
chmod 755 "$dir"
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM
pass=0
fail=0
result() { # NAME STATUS
    if [ "$2" = 0 ]; then
        pass=$((pass + 1))
        echo "ok: $1"
    else
        fail=$((fail + 1))
        echo "FAIL: $1"
    fi
}

# The guest's checks: the stock client (again while the host's server is
# not up yet: a refused connection), then the stock server.
for s in $SIZES; do
    echo "stock-client-$s for i in \$(seq 60); do" \
        "o=\$(ibv_rc_pingpong -d rxe0 -g 1 -p 18515 -s $s -n 20 10.77.0.1 2>&1);" \
        "rc=\$?; echo \"\$o\"; echo \"\$o\" | grep -q \"Couldn't connect\" ||" \
        "exit \$rc; sleep 1; done; exit 1"
done >"$dir/checklist"
for s in $SIZES; do
    echo "stock-server-$s ibv_rc_pingpong -d rxe0 -g 1 -p 18516 -s $s -n 20"
done >>"$dir/checklist"

RXE_VM_HOST_CMD="$S/t/roce_rxe.sh --host $dir" \
    "$S/t/vm/rxe-vm" "$dir/results" "$dir/checklist" >"$dir/vm.out" 2>&1
rc=$?
if [ $rc = 77 ]; then
    cat "$dir/vm.out"
    exit 77
fi
[ $rc = 2 ] && tail -40 "$dir/vm.out"
while read -r v name; do
    [ "$v" = PASS ]
    result "$name" $?
done <"$dir/host.sum"
for s in $SIZES; do
    grep -q "^PASS stock-client-$s\$" "$dir/results/summary" &&
        grep -q "^PASS stock-server-$s\$" "$dir/results/summary"
    result "the stock tool finished -s $s both ways" $?
done
# Only packets softnic could not read count: a retransmission that comes
# after its QP is gone, or a duplicate response, is dropped too.
grep -q " bad_drops 0 " "$dir/status"
result "softnic dropped none of rxe's packets (ICRC, headers)" $?
if [ -f "$dir/cap.pcap" ]; then
    n=$(tshark -r "$dir/cap.pcap" --disable-protocol rpcordma 2>/dev/null |
        wc -l)
    bad=$(tshark -r "$dir/cap.pcap" --disable-protocol rpcordma \
        -Y "_ws.malformed || _ws.expert.severity >= error" 2>/dev/null | wc -l)
    echo "captured $n RoCE packets, $bad malformed"
    [ "$n" -gt 100 ] && [ "$bad" = 0 ]
    result "tshark decodes every packet both ways" $?
else
    result "a capture for tshark (scripts/setup installs tshark)" 1
fi
[ "$fail" = 0 ] || { cat "$dir/vm.out"; cat "$dir/status"; }
echo "tally: $pass passed, $fail failed"
[ "$fail" = 0 ]
