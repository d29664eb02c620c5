#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# t/offload_hosts.sh - the offloaded GET across hosts: memcached --rdn-port
# in network namespace A, its RDMA clients in B and C, joined to A by veth,
# one rdn-nicd per namespace speaking RoCEv2 with 1% of the packets each
# daemon receives dropped (RDN_NICD_ROCE_FAULTS: this kernel has no
# sch_netem). Needs root (namespaces, raw sockets); skipped otherwise.
#
# 1. memcached -l 0.0.0.0 on A's two addresses, A's daemon on every
#    address (--listen 0.0.0.0): a client in B and one in C each get the
#    RDMA address they connected to (the only one of A they can reach),
#    and their GETs are answered by A's NIC. C's daemon listens on every
#    address too: its client's QP speaks from the address its handshake
#    connection came from.
# 2. t/offload_e2e.py's end-to-end checks run in B against the server in
#    A (keys 1..250 B, values 0 B..1 MB, hits, misses, full buckets, every
#    mutation followed by a GET equal to TCP's answer, eight clients, a
#    server killed with -9 under GETs and restarted, rdn-cli).
# 3. t/offload_race.py: GETs from B against SETs, 0 wrong values; a
#    bounded count (RACE_GETS, at most RACE_SECS), since every GET crosses
#    the lossy link.
set -u

B=${top_builddir:-.}
S=${top_srcdir:-.}
NICD=$B/rdn/softnic/rdn-nicd
MC=$B/memcached/memcached
CLI=$B/rdn/librdn/rdn-cli
RACE_GETS=${RACE_GETS:-100000}
RACE_SECS=${RACE_SECS:-60}
FAULTS=${FAULTS:-loss=1}
. "$S/t/netns.sh"
netns_init offload_hosts
tag=oh$$
NA=${tag}a NB=${tag}b NC=${tag}c
NETNS="$NA $NB $NC"
AB=10.79.1.1 BA=10.79.1.2 BX=10.79.1.3 AC=10.79.2.1 CA=10.79.2.2
CHECK_SHOW='^race:|: [0-9.]+ s$|^tally:|^server daemon:|^hostile:'

# A-B and A-C links; B and C cannot reach each other nor A's other address.
link() { # NS1 ADDR1 NS2 ADDR2 NAME
    ip link add "$5x" netns "$1" type veth peer name "$5y" netns "$3" &&
    "$NETNS_EXEC" "$1" ip addr add "$2/24" dev "$5x" &&
    "$NETNS_EXEC" "$3" ip addr add "$4/24" dev "$5y" &&
    "$NETNS_EXEC" "$1" ip link set "$5x" mtu 9000 up &&
    "$NETNS_EXEC" "$3" ip link set "$5y" mtu 9000 up
}
{ ip netns add "$NA" && ip netns add "$NB" && ip netns add "$NC" &&
  link "$NA" $AB "$NB" $BA "${tag}1" && link "$NA" $AC "$NC" $CA "${tag}2" &&
  for ns in "$NA" "$NB" "$NC"; do "$NETNS_EXEC" "$ns" ip link set lo up || exit 1; done
} || {
    echo "FAIL: cannot build the namespaces"
    exit 1
}

# ACK timeouts of 134 ms (verbs' default is 67 ms): a loaded 2-core
# machine starves a daemon for more than 8 x 67 ms now and then (seen: a
# server QP failed with retries exhausted twice in 1 M GETs at load 25;
# the client fell back to TCP, no value was wrong). Each lost packet that
# no later one reveals costs a timeout, so longer ones slow the race down
# (268 ms: a quarter of the GETs per second).
NICD_ARGS="--rc-timeout 15"
f=RDN_NICD_ROCE_FAULTS=$FAULTS
start_nicd a "$NA" 0.0.0.0 "$f" && start_nicd b "$NB" $BA "$f" &&
    start_nicd c "$NC" 0.0.0.0 "$f" || exit 1

# ---- 1. one server on two addresses, a client behind each ----------------
two_addresses() {
    "$NETNS_EXEC" "$NA" env RDN_NICD_SOCKET="$dir/a.sock" \
        RDN_NICD_AUTOSTART=0 "$MC" -u root -l 0.0.0.0 -p 11211 \
        --rdn-port=11212 -vv >"$dir/mc.log" 2>&1 &
    echo $! >"$dir/mc.pid"
    for _ in $(seq 300); do
        "$NETNS_EXEC" "$NA" ss -ltn | grep -q "0.0.0.0:11212" && break
        sleep 0.1
    done
    cli() { # NS SOCK SERVER_ADDR ARGS...
        ns=$1 sock=$2 to=$3
        shift 3
        "$NETNS_EXEC" "$ns" env RDN_NICD_SOCKET="$sock" RDN_NICD_AUTOSTART=0 \
            "$CLI" -s "$to" "$@"
    }
    for side in "$NB $dir/b.sock $AB" "$NC $dir/c.sock $AC"; do
        # shellcheck disable=SC2086 # three words on purpose
        set -- $side
        v="value seen through $3"
        cli "$1" "$2" "$3" set "key-$3" "$v" || return 1
        got=$(cli "$1" "$2" "$3" -v get "key-$3" 2>"$dir/who") || return 1
        [ "$got" = "$v" ] && grep -q "key-$3: nic" "$dir/who" || {
            echo "$3: wrong answer or not from the NIC: $got"
            cat "$dir/who"
            return 1
        }
        cli "$1" "$2" "$3" -v get "miss-$3" 2>"$dir/who" && return 1
        grep -q "miss-$3: nic" "$dir/who" || return 1
        echo "client through $3: hit and miss answered by A's NIC"
    done
    # The server handed each client the address it connected to.
    for a in $AB $AC; do
        grep -q "RDMA address $a\$" "$dir/mc.log" || {
            echo "no client was given $a"
            cat "$dir/mc.log"
            return 1
        }
    done
    kill "$(cat "$dir/mc.pid")"
    rm -f "$dir/mc.pid"
}
check "server -l 0.0.0.0, clients via two addresses" two_addresses
sleep 0.5

# ---- 2. the end-to-end checks from B ------------------------------------
across() { # SCRIPT ARGS...: a Python test in B, its server in A
    script=$1
    shift
    "$NETNS_EXEC" "$NB" env RDN_TEST_HOST=$AB RDN_TEST_NICD_LISTEN=$BA:4792 \
        RDN_TEST_NICD_ARGS="$NICD_ARGS" \
        RDN_NICD_ROCE_FAULTS="$FAULTS" \
        RDN_TEST_SERVER_WRAP="$NETNS_EXEC $NA env RDN_NICD_SOCKET=$dir/a.sock RDN_NICD_AUTOSTART=0" \
        python3 "$S/t/$script" "$@"
}
check "offload end to end across hosts, $FAULTS" across offload_e2e.py \
    test_keys_and_values test_full_buckets test_mutations \
    test_binary_mutations test_eight_clients test_server_restart test_cli

# ---- 3. the race ---------------------------------------------------------
export RDN_TEST_RACE_GETS=$RACE_GETS RDN_TEST_RACE_SECS=$RACE_SECS
check "GETs racing SETs across hosts, $FAULTS" across offload_race.py

# ---- 4. hostile packets at the server's daemon while GETs run -------------
# memcached in A, a writer SETting 16 keys and a reader GETting them (8 in
# flight, every value checked) from B, and meanwhile, until the reader is
# done, batches of hostile packets (t/roce_hostile.py) to A's daemon from
# B: forged with right ICRCs at the reader's server QP (and its
# neighbours) from an address of B's that QP is not connected to, broken
# ones (random, truncated, bad ICRC) at that QP from the reader's own
# address, and forged ones from there at QPNs nobody uses. No value may
# be wrong, the daemon stays up and counts drops, the NIC answers the
# GETs, and the server's QP never errs. (A forged packet with a right ICRC
# from the reader's own address is one RoCE cannot refuse: t/roce_net.sh
# sends those from a peer's address to QPNs no connection uses.)
DRV=$B/t/offload_driver
HOSTILE_SECS=${HOSTILE_SECS:-12}
hostile_gets() {
    "$NETNS_EXEC" "$NB" ip addr add $BX/24 dev "${tag}1y" || return 1
    "$NETNS_EXEC" "$NA" env RDN_NICD_SOCKET="$dir/a.sock" \
        RDN_NICD_AUTOSTART=0 "$MC" -u root -l $AB -p 11221 \
        --rdn-port=11222 -m 16 -v >"$dir/mc4.log" 2>&1 &
    echo $! >"$dir/mc4.pid"
    for _ in $(seq 300); do
        "$NETNS_EXEC" "$NA" ss -ltn | grep -q "$AB:11222" && break
        sleep 0.1
    done
    # In B, on B's daemon; a command, not a function, so that $! of one
    # started with & is the program's pid (netns-exec and ip exec it).
    inb="$NETNS_EXEC $NB env RDN_NICD_SOCKET=$dir/b.sock RDN_NICD_AUTOSTART=0"
    # shellcheck disable=SC2086 # $inb: words
    $inb "$DRV" -s $AB -p 11222 -t 11221 write 16 $((HOSTILE_SECS + 30)) \
        >"$dir/writer.out" 2>&1 &
    writer=$!
    echo $writer >"$dir/writer.pid"
    for _ in $(seq 100); do # until the writer stored every key once
        $inb "$CLI" -s $AB -p 11222 -t 11221 get race-15 >/dev/null 2>&1 && break
        sleep 0.1
    done
    drops0=$(counter a drops) bad0=$(counter a bad_drops)
    $inb "$DRV" -s $AB -p 11222 -t 11221 race 16 "$HOSTILE_SECS" 1000000000 \
        >"$dir/reader.out" 2>&1 &
    reader=$!
    echo $reader >"$dir/reader.pid"
    qpn=
    for _ in $(seq 300); do
        qpn=$(sed -n "s/.*($BA:[0-9]*) connected.* QPN \(0x[0-9a-f]*\),.*/\1/p" \
            "$dir/mc4.log" | tail -1)
        [ -n "$qpn" ] && break
        sleep 0.1
    done
    [ -n "$qpn" ] || { echo "no client QPN in memcached's log"; cat "$dir/mc4.log"; return 1; }
    echo "reader's server QP: $qpn"
    sent=0 batch=0
    while kill -0 $reader 2>/dev/null && [ $batch -lt 300 ]; do
        case $((batch % 3)) in
        0) set -- $BX $AB 3000 $((qpn - 4)) $((qpn + 5)) ;;
        1) set -- --broken $BA $AB 3000 $((qpn)) $((qpn + 1)) ;;
        *) set -- $BA $AB 3000 0x400000 0x1000000 ;;
        esac
        n=$("$NETNS_EXEC" "$NB" python3 "$S/t/roce_hostile.py" "$@" |
            awk '/^sent/ { print $2 }')
        sent=$((sent + ${n:-0}))
        batch=$((batch + 1))
    done
    wait $reader
    rc=$?
    kill $writer # it ends after its SET in flight: before the server
    wait $writer
    sets=$(awk '$1 == "sets" { print $2 }' "$dir/writer.out")
    cat "$dir/reader.out"
    # shellcheck disable=SC2046 # "gets G nic A tcp B ... wrong W torn T"
    set -- $(tail -1 "$dir/reader.out")
    gets=${2:-0} nic=${4:-0} wrong=${12:-?}
    drops=$(($(counter a drops) - drops0)) bad=$(($(counter a bad_drops) - bad0))
    errs=$($inb "$CLI" -s $AB -t 11221 stats 2>/dev/null |
        awk '$1 == "rdn_qp_errors" { print $2; exit }')
    echo "hostile: $sent packets at A's daemon in $batch batches during $gets GETs" \
        "($nic answered by the NIC) against ${sets:-?} SETs, $wrong wrong;" \
        "A's daemon: $drops drops, $bad of bad ICRC or headers;" \
        "server QP errors: ${errs:-?}"
    kill "$(cat "$dir/mc4.pid")"
    rm -f "$dir/mc4.pid" "$dir/writer.pid" "$dir/reader.pid"
    [ $rc = 0 ] && [ "$wrong" = 0 ] && [ "$gets" -gt 1000 ] &&
        [ "${sets:-0}" -gt 1000 ] &&
        [ $((nic * 100)) -ge $((gets * 99)) ] && [ "$sent" -ge 10000 ] &&
        kill -0 "$(cat "$dir/a.pid")" && [ "$drops" -gt 0 ] &&
        [ "$bad" -gt 0 ] && [ "${errs:-x}" = 0 ]
}
check "GETs while hostile packets hit the server's daemon" hostile_gets

retrans_moved() {
    n=$(counter a retrans)
    echo "server daemon: $n retransmissions, $(counter a rx) packets in"
    [ "$n" -gt 0 ]
}
check "retransmissions counted under $FAULTS" retrans_moved

netns_tally
