# SPDX-License-Identifier: BSD-3-Clause
# t/netns.sh - shared by the tests that stand hosts up as network
# namespaces (t/roce_net.sh, t/offload_hosts.sh); sourced, not run.
#
#   "$NETNS_EXEC" NS CMD...   CMD in network namespace NS: "ip netns exec"
#                     that also works in a chroot (scripts/netns-exec)
#   netns_init NAME   skips the test (77) without root and iproute2; makes
#                     $dir (every *.pid file in it names a process to kill
#                     at exit), zeroes the tally, and removes the
#                     namespaces listed in $NETNS and $dir at exit, also on
#                     failure or a signal
#   start_nicd D NS ADDR [ENV...]   rdn-nicd ($NICD) in NS listening on
#                     ADDR, socket $dir/D.sock, log $dir/D.log, path MTU
#                     ${MTU:-1024}, options $NICD_ARGS, with ENV in its
#                     environment
#   counter D FIELD   a RoCE counter of the daemon on $dir/D.sock
#   kernel_faults NS LOSS [DUP PEER]   nftables in NS drops LOSS% of the
#                     RoCE packets arriving (UDP to $ROCE_PORTS, default
#                     4791), before any socket sees them, and sends a copy
#                     of DUP% of those leaving to PEER: a lossy network
#                     that is not the daemons' own fault injector
#                     (this kernel has no sch_netem)
#   kernel_fault_count drop|dup NS...   packets those rules dropped or copied
#   check NAME CMD... runs one case: "ok: NAME" (and the lines of its
#                     output matching $CHECK_SHOW, if set) or "FAIL: NAME",
#                     its output's end and the daemons' logs
#   netns_tally       prints the tally; fails if a case failed

NETNS_EXEC=${top_srcdir:-.}/scripts/netns-exec

netns_init() {
    if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
        echo "SKIP: needs root and iproute2"
        exit 77
    fi
    dir=$(mktemp -d "/tmp/$1.XXXXXX")
    pass=0
    fail=0
    NETNS=
    trap netns_cleanup EXIT
    trap 'exit 1' INT TERM
}

netns_cleanup() {
    for f in "$dir"/*.pid; do
        pid=$(cat "$f" 2>/dev/null) && kill "$pid" 2>/dev/null
    done
    sleep 0.2
    for f in "$dir"/*.pid; do # what SIGTERM did not end
        pid=$(cat "$f" 2>/dev/null) && kill -9 "$pid" 2>/dev/null
    done
    for ns in $NETNS; do ip netns del "$ns" 2>/dev/null; done
    rm -rf "$dir"
}

start_nicd() {
    n=$1 ns=$2 addr=$3
    shift 3
    rm -f "$dir/$n.sock"
    "$NETNS_EXEC" "$ns" env "$@" "$NICD" -s "$dir/$n.sock" --listen "$addr" \
        --mtu "${MTU:-1024}" -l "$dir/$n.log" -p "$dir/$n.pid" ${NICD_ARGS:-} &
    for _ in $(seq 600); do
        [ -S "$dir/$n.sock" ] && [ -f "$dir/$n.pid" ] && return 0
        sleep 0.05
    done
    echo "FAIL: rdn-nicd $n did not start"
    cat "$dir/$n.log"
    return 1
}

counter() {
    "$NICD" -s "$dir/$1.sock" --status | tr ' ' '\n' |
        awk -v f="$2" 'p { print; exit } $0 == f { p = 1 }'
}

kernel_faults() {
    command -v nft >/dev/null || {
        echo "no nft (scripts/setup installs nftables)"
        return 1
    }
    ports="{ $(echo "${ROCE_PORTS:-4791}" | sed 's/ /, /g') }"
    dup=
    [ "${3:-0}" = 0 ] || dup="
    chain out {
        type filter hook output priority raw; policy accept;
        udp dport $ports numgen random mod 100 < $3 counter dup to $4
    }"
    "$NETNS_EXEC" "$1" nft -f - <<EOF
table ip rdnfault {
    chain in {
        type filter hook prerouting priority raw; policy accept;
        udp dport $ports numgen random mod 100 < $2 counter drop
    }$dup
}
EOF
}

kernel_fault_count() {
    w=$1
    shift
    for ns in "$@"; do
        "$NETNS_EXEC" "$ns" nft list table ip rdnfault
    done | awk -v w="$w" '$0 ~ " " w "( |$)" {
        for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) }
        END { print n + 0 }'
}

check() {
    name=$1
    shift
    if "$@" >"$dir/out" 2>&1; then
        pass=$((pass + 1))
        echo "ok: $name"
        [ -z "${CHECK_SHOW:-}" ] || grep -E "$CHECK_SHOW" "$dir/out"
    else
        fail=$((fail + 1))
        echo "FAIL: $name"
        tail -40 "$dir/out"
        for l in "$dir"/*.log; do echo "--- $l"; tail -5 "$l"; done
    fi
    return 0
}

netns_tally() {
    echo "tally: $pass passed, $fail failed"
    [ "$fail" = 0 ]
}
