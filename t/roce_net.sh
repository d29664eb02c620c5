#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# t/roce_net.sh - softnic RC over RoCEv2 between two hosts: two network
# namespaces joined by veth, one rdn-nicd listening in each, and
# t/test_roce_net driving QPs on both (through their Unix sockets). Then
# the same operations with faults on the link (loss, duplication,
# reordering, delay), hostile packets at a daemon's port, and a peer daemon
# killed. Needs root (namespaces, raw sockets); skipped otherwise.
#
# This machine's kernel has no sch_netem, so faults are injected by the
# receiving daemon's port (RDN_NICD_ROCE_FAULTS, test-only): a packet is
# dropped, duplicated, held back behind the next one, or delayed, after
# the kernel delivered it and before the transport sees it.
set -u

B=${top_builddir:-.}
S=${top_srcdir:-.}
NICD=$B/rdn/softnic/rdn-nicd
T=$B/t/test_roce_net
. "$S/t/netns.sh"
netns_init roce_net
tag=rr$$
NA=${tag}a
NB=${tag}b
NETNS="$NA $NB"

ip netns add "$NA" && ip netns add "$NB" &&
ip link add "${tag}x" netns "$NA" type veth peer name "${tag}y" netns "$NB" &&
"$NETNS_EXEC" "$NA" ip addr add 10.77.0.1/24 dev "${tag}x" &&
"$NETNS_EXEC" "$NA" ip addr add 10.77.0.3/24 dev "${tag}x" &&
"$NETNS_EXEC" "$NB" ip addr add 10.77.0.2/24 dev "${tag}y" &&
"$NETNS_EXEC" "$NA" ip addr add fd77::1/64 dev "${tag}x" nodad &&
"$NETNS_EXEC" "$NB" ip addr add fd77::2/64 dev "${tag}y" nodad &&
"$NETNS_EXEC" "$NA" ip link set "${tag}x" mtu 9000 up &&
"$NETNS_EXEC" "$NB" ip link set "${tag}y" mtu 9000 up &&
"$NETNS_EXEC" "$NA" ip link set lo up && "$NETNS_EXEC" "$NB" ip link set lo up || {
    echo "FAIL: cannot build the namespaces"
    exit 1
}

stop_nicd() { # (the daemon removes its pidfile as it exits)
    pid=$(cat "$dir/$1.pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    rm -f "$dir/$1.pid"
}

run_ops() {
    RDN_TEST_SOCK_A=$dir/a.sock RDN_TEST_SOCK_B=$dir/b.sock \
        RDN_TEST_NICD=$NICD "$@" "$T"
}

# The case of a run under faults: counters must have moved.
moved() {
    before=$1 what=$2
    now=$(counter a "$what")
    [ "$(( now + $(counter b "$what") ))" -gt "$before" ]
}

# 1. Every opcode, 0 B..1 MiB, NAK and error paths; MTU 1024 then 4096.
# A third daemon on every address of A (10.77.0.1 and 10.77.0.3) on
# another port: its QPs speak from the address each is given.
start_nicd a "$NA" 10.77.0.1 && start_nicd b "$NB" 10.77.0.2 &&
    start_nicd w "$NA" 0.0.0.0:4793 || exit 1
check "ops and errors, MTU 1024" run_ops env RDN_TEST_SOCK_W="$dir/w.sock"
stop_nicd a; stop_nicd b; stop_nicd w
MTU=4096 start_nicd a "$NA" 10.77.0.1 && MTU=4096 start_nicd b "$NB" 10.77.0.2 || exit 1
check "ops and errors, MTU 4096" run_ops env
stop_nicd a; stop_nicd b
# A offers 256, B 4096: both ends must segment at 256 (ibverbs' path MTU
# is the smaller one). The data tests move 1 MiB each way at least twice
# (SEND, WRITE from A; READ responses from B): 4096 packets a MiB at 256.
mtu_256() {
    run_ops env RDN_TEST_ROUNDS=1 || return 1
    ta=$(counter a tx) tb=$(counter b tx)
    echo "MTU 256 against 4096: A sent $ta packets, B $tb"
    [ "$ta" -ge 8192 ] && [ "$tb" -ge 4096 ]
}
MTU=256 start_nicd a "$NA" 10.77.0.1 && MTU=4096 start_nicd b "$NB" 10.77.0.2 || exit 1
CHECK_SHOW='^MTU 256' check "ops at the smaller path MTU, 256 against 4096" mtu_256
stop_nicd a; stop_nicd b

# 2. Hostile packets: alone at every QPN, then at QPNs the running test
# does not use while it runs; the daemon stays up and drops or NAKs them.
start_nicd a "$NA" 10.77.0.1 && start_nicd b "$NB" 10.77.0.2 || exit 1
hostile() { # FROM COUNT QPN_LO QPN_HI
    from=$1
    shift
    "$NETNS_EXEC" "$NA" python3 "$S/t/roce_hostile.py" "$from" 10.77.0.2 "$@"
}
alive_and_dropped() {
    kill -0 "$(cat "$dir/b.pid")" && [ "$(counter b drops)" -gt 0 ] &&
        "$NICD" -s "$dir/b.sock" --status
}
check "hostile packets alone" hostile 10.77.0.1 50000 1 0x1000000
check "daemon alive after hostile packets" alive_and_dropped
# From the peer's address to QPNs the test does not use, and from another
# address to every QPN the test uses: its operations must not notice.
hostile 10.77.0.1 20000 0x400000 0x1000000 >"$dir/hostile1.out" 2>&1 &
h1=$!
hostile 10.77.0.3 20000 0x4000 0x40000 >"$dir/hostile2.out" 2>&1 &
h2=$!
check "ops while hostile packets arrive" run_ops env
wait $h1 $h2
check "daemon alive after hostile packets during ops" alive_and_dropped
# A forged SEND that never ends, from A's address and inside the PSN
# window, into a QP with a 4 KiB receive and into one with none posted:
# B's memory must not grow by what was sent (it would hold it all if
# reassembly were unbounded), and only the flooded QPs notice.
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$(cat "$dir/$1.pid")/status"; }
flood_bounded() {
    mkfifo "$dir/fl.out" "$dir/fl.in"
    run_ops env RDN_TEST_FLOOD=1 RDN_TEST_FLOOD_OUT="$dir/fl.out" \
        RDN_TEST_FLOOD_IN="$dir/fl.in" &
    t=$!
    timeout 60 cat "$dir/fl.out" >"$dir/fl.txt" || { kill $t; return 1; }
    read -r q1 p1 q2 p2 <"$dir/fl.txt"
    before=$(rss b)
    for qp in "$q1 $p1" "$q2 $p2"; do
        # shellcheck disable=SC2086 # QPN and PSN
        "$NETNS_EXEC" "$NA" python3 "$S/t/roce_hostile.py" --flood \
            10.77.0.1 10.77.0.2 $qp "${MTU:-1024}" $((32 << 20)) || return 1
    done
    sleep 0.5
    after=$(rss b)
    echo "rdn-nicd B VmRSS: $before KiB before, $after KiB after 64 MiB" |
        tee "$dir/rss.txt"
    timeout 10 sh -c 'echo done >"$1"' _ "$dir/fl.in"
    wait $t && [ $((after - before)) -lt 8192 ]
}
check "forged endless SEND: memory bounded, only its QP affected" flood_bounded
cat "$dir/rss.txt" 2>/dev/null

# Datagrams to other UDP ports, or to the RoCE port of another address of
# B's, never reach the daemon: its raw socket's filter keeps them out.
"$NETNS_EXEC" "$NB" ip addr add 10.77.0.4/24 dev "${tag}y"
other_udp() {
    before=$(counter b raw_in)
    "$NETNS_EXEC" "$NA" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for dst in (("10.77.0.2", 9999), ("10.77.0.2", 4792), ("10.77.0.4", 4791)):
    for _ in range(1000):
        s.sendto(b"x" * 64, dst)
' || return 1
    sleep 0.3
    after=$(counter b raw_in)
    echo "raw_in $before before, $after after 3000 datagrams to other ports"
    [ "$after" = "$before" ]
}
check "UDP to other ports is filtered out before the daemon" other_udp
stop_nicd a; stop_nicd b

# 3. Faults on the link, both directions.
for f in loss=1 loss=5 dup=5 reorder=5 "loss=2,dup=2,reorder=2" "loss=1,delay=5"; do
    start_nicd a "$NA" 10.77.0.1 RDN_NICD_ROCE_FAULTS=$f &&
    start_nicd b "$NB" 10.77.0.2 RDN_NICD_ROCE_FAULTS=$f || exit 1
    # Under a delay each way, a round trip takes at least twice as long.
    case $f in
    *delay=*)
        d=${f##*delay=}
        rtt=RDN_TEST_MIN_RTT_MS=$((2 * ${d%%,*}))
        ;;
    *) rtt= ;;
    esac
    case $f in
    *loss=*) lossy=RDN_TEST_LOSSY=1 ;;
    *) lossy= ;;
    esac
    check "ops under $f" run_ops env RDN_TEST_ROUNDS=1 $rtt $lossy
    case $f in
    loss*)
        check "retransmissions counted under $f" moved 0 retrans
        # a packet lost inside a message: its next one is out of sequence
        check "PSN sequence error NAKs under $f" moved 0 seq_naks_tx
        ;;
    dup*) check "duplicates counted under $f" moved 0 dups_rx ;;
    esac
    stop_nicd a; stop_nicd b
done

# 3b. Faults from the kernel, between the namespaces: nftables in each
# drops 2% of the RoCE packets arriving (before the daemon's raw socket
# sees them) and sends a copy of 2% of those leaving, so the transport
# meets a lossy network that is not our injector. (This kernel has
# nf_tables' numgen and dup but no sch_netem: no reordering or delay here.)
kernel_moved() {
    d=$(kernel_fault_count drop "$NA" "$NB") c=$(kernel_fault_count dup "$NA" "$NB")
    echo "kernel: $d RoCE packets dropped, $c duplicated;" \
        "$(($(counter a retrans) + $(counter b retrans))) retransmissions," \
        "$(($(counter a dups_rx) + $(counter b dups_rx))) duplicates received"
    [ "$d" -gt 0 ] && [ "$c" -gt 0 ] && moved 0 retrans && moved 0 dups_rx
}
if kernel_faults "$NA" 2 2 10.77.0.2 && kernel_faults "$NB" 2 2 10.77.0.1; then
    start_nicd a "$NA" 10.77.0.1 && start_nicd b "$NB" 10.77.0.2 || exit 1
    check "ops under kernel loss=2%, dup=2% (nftables)" \
        run_ops env RDN_TEST_ROUNDS=1 RDN_TEST_LOSSY=1
    CHECK_SHOW='^kernel:' check "the kernel's losses retransmitted, its copies seen" \
        kernel_moved
    stop_nicd a
    stop_nicd b
    for ns in "$NA" "$NB"; do "$NETNS_EXEC" "$ns" nft delete table ip rdnfault; done
else
    check "nftables in the namespaces" false
fi

# 4. A peer's daemon killed: only the QP connected to it errors.
start_nicd a "$NA" 10.77.0.1 && start_nicd b "$NB" 10.77.0.2 || exit 1
mkfifo "$dir/kill"
( read -r _ <"$dir/kill" && kill -9 "$(cat "$dir/b.pid")" ) &
check "peer daemon killed" run_ops env RDN_TEST_KILL=1 \
    RDN_TEST_KILL_FIFO="$dir/kill"
rm -f "$dir/b.pid"
stop_nicd a

# 5. rdn-pingpong (ibv_rc_pingpong's exchange and traffic) between the
# hosts, server on A and on B, at sizes up to several packets.
PP=$B/rdn/softnic/rdn-pingpong
pingpong() { # SERVER_NS SERVER_SOCK CLIENT_NS CLIENT_SOCK SERVER_ADDR SIZE
    # shellcheck disable=SC2086 # $PP_SERVER_ENV: assignments for env
    "$NETNS_EXEC" "$1" env RDN_NICD_SOCKET="$2" RDN_NICD_AUTOSTART=0 \
        ${PP_SERVER_ENV:-} "$PP" -p 18515 -g 1 -s "$6" -n 50 >"$dir/pps.out" 2>&1 &
    spid=$!
    for _ in $(seq 600); do
        "$NETNS_EXEC" "$1" ss -ltn | grep -q ":18515" && break
        sleep 0.05
    done
    "$NETNS_EXEC" "$3" env RDN_NICD_SOCKET="$4" RDN_NICD_AUTOSTART=0 \
        "$PP" -p 18515 -g 1 -s "$6" -n 50 "$5" || { kill $spid; return 1; }
    wait $spid && grep -q "50 iters" "$dir/pps.out"
}
start_nicd a "$NA" 10.77.0.1 && start_nicd b "$NB" 10.77.0.2 || exit 1
for sz in 1 4096 10000; do
    check "rdn-pingpong -s $sz, server on A" \
        pingpong "$NA" "$dir/a.sock" "$NB" "$dir/b.sock" 10.77.0.1 $sz
    check "rdn-pingpong -s $sz, server on B" \
        pingpong "$NB" "$dir/b.sock" "$NA" "$dir/a.sock" 10.77.0.2 $sz
done
# The daemon an application starts on demand listens where RDN_NICD_LISTEN
# says (rdn-pingpong's server needs RoCE: it fails on a daemon without).
PP_SERVER_ENV="RDN_NICD_AUTOSTART=1 RDN_NICD_LISTEN=10.77.0.3"
check "rdn-pingpong on the daemon it started, RDN_NICD_LISTEN=10.77.0.3" \
    pingpong "$NA" "$dir/auto.sock" "$NB" "$dir/b.sock" 10.77.0.3 1000
PP_SERVER_ENV=
stop_nicd auto.sock # its pidfile: SOCKET.pid
stop_nicd a; stop_nicd b

# 6. memcached --rdn-port on host A, rdn-cli on host B, 1% loss: GETs
# answered by A's NIC over the network, equal to what was SET.
MC=$B/memcached/memcached
CLI=$B/rdn/librdn/rdn-cli
mc_across() {
    "$NETNS_EXEC" "$NA" env RDN_NICD_SOCKET="$dir/a.sock" RDN_NICD_AUTOSTART=0 \
        "$MC" -u root -p 11211 --rdn-port=11212 -l 10.77.0.1 \
        >"$dir/mc.log" 2>&1 &
    echo $! >"$dir/mc.pid"
    for _ in $(seq 300); do
        "$NETNS_EXEC" "$NA" ss -ltn | grep -q "10.77.0.1:11212" && break
        sleep 0.1
    done
    cli() {
        "$NETNS_EXEC" "$NB" env RDN_NICD_SOCKET="$dir/b.sock" \
            RDN_NICD_AUTOSTART=0 "$CLI" -s 10.77.0.1 "$@"
    }
    ok=0
    for n in 1 2 3 50 250 1000 4000 20000; do
        v=$(head -c "$n" /dev/zero | tr '\0' "v")
        cli set "key$n" "$v" >/dev/null || return 1
        got=$(cli -v get "key$n" 2>"$dir/who") || return 1
        [ "$got" = "$v" ] && grep -q "key$n: nic" "$dir/who" || {
            echo "key$n: wrong answer or not from the NIC"; return 1; }
        ok=$((ok + 1))
    done
    cli -v get nosuchkey 2>"$dir/who" && return 1
    grep -q "nosuchkey: nic" "$dir/who" || return 1
    echo "$ok values and a miss answered by the NIC across hosts"
}
start_nicd a "$NA" 10.77.0.1 RDN_NICD_ROCE_FAULTS=loss=1 &&
start_nicd b "$NB" 10.77.0.2 RDN_NICD_ROCE_FAULTS=loss=1 || exit 1
check "memcached offload across hosts, 1% loss" mc_across
[ -f "$dir/mc.pid" ] && kill "$(cat "$dir/mc.pid")" 2>/dev/null
sleep 0.3
stop_nicd a; stop_nicd b

# --listen takes only addresses that name one interface of the host.
bad_listen() {
    for a in "[fd77::2" "fd77::2]:4791" "[fd77::2]:" "[fd77::2]:0" \
        "[fd77::2]:65536" :: "::ffff:10.77.0.2" fe80::1 10.77.0.2: \
        300.1.2.3; do
        if "$NETNS_EXEC" "$NB" "$NICD" -s "$dir/bad.sock" --listen "$a" \
            -l "$dir/bad.log"; then
            echo "--listen $a was taken"
            return 1
        fi
    done
    [ "$(grep -c "cannot listen for RoCE" "$dir/bad.log")" = 10 ]
}
check "--listen refuses malformed and ambiguous addresses" bad_listen

# 7. IPv6: GIDs that are the hosts' IPv6 addresses, UDP/IPv6, the ICRC
# over the IPv6 pseudo-header. Every opcode and error path (both forms of
# --listen; tshark decodes what was captured on B's link), rdn-pingpong
# both ways, hostile packets, then 1% loss (2% came near the 15 s a single
# 1 MiB operation may take, on a loaded machine).
start_nicd a "$NA" fd77::1 && start_nicd b "$NB" "[fd77::2]:4791" || exit 1
if command -v tshark >/dev/null; then
    "$NETNS_EXEC" "$NB" tshark -i "${tag}y" -c 3000 -w "$dir/v6.pcap" \
        -f "ip6 and udp port 4791" >"$dir/tshark.log" 2>&1 &
    echo $! >"$dir/tshark.pid"
    for _ in $(seq 200); do # it starts slowly
        grep -q "^Capturing" "$dir/tshark.log" && break
        sleep 0.05
    done
fi
check "ops and errors over IPv6" run_ops env
tshark_v6() { # (RPC-over-RDMA's heuristic throws on empty SENDs: off)
    pid=$(cat "$dir/tshark.pid")
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill "$pid" 2>/dev/null
    rm -f "$dir/tshark.pid"
    ts() { tshark -r "$dir/v6.pcap" --disable-protocol rpcordma "$@" 2>/dev/null; }
    all=$(ts | wc -l)
    bad=$(ts -Y "!(ipv6 && infiniband) || _ws.malformed ||
        _ws.expert.severity >= error" | wc -l)
    echo "captured $all packets; $bad not RoCEv2 over IPv6 or malformed" |
        tee "$dir/v6.txt"
    [ "$all" -gt 100 ] && [ "$bad" = 0 ]
}
if [ -f "$dir/tshark.pid" ]; then
    check "tshark decodes IPv6 RoCE packets" tshark_v6
else
    check "tshark (scripts/setup installs it)" false
fi
cat "$dir/v6.txt" 2>/dev/null
check "rdn-pingpong -s 10000 over IPv6, server on A" \
    pingpong "$NA" "$dir/a.sock" "$NB" "$dir/b.sock" fd77::1 10000
check "rdn-pingpong -s 10000 over IPv6, server on B" \
    pingpong "$NB" "$dir/b.sock" "$NA" "$dir/a.sock" fd77::2 10000
check "hostile packets over IPv6" "$NETNS_EXEC" "$NA" python3 \
    "$S/t/roce_hostile.py" fd77::1 fd77::2 10000 1 0x1000000
check "daemon alive after hostile packets over IPv6" alive_and_dropped
check "ops over IPv6 after hostile packets" run_ops env RDN_TEST_ROUNDS=1
stop_nicd a; stop_nicd b
start_nicd a "$NA" fd77::1 RDN_NICD_ROCE_FAULTS=loss=1 &&
start_nicd b "$NB" fd77::2 RDN_NICD_ROCE_FAULTS=loss=1 || exit 1
check "ops over IPv6 under loss=1" \
    run_ops env RDN_TEST_ROUNDS=1 RDN_TEST_LOSSY=1
check "retransmissions counted over IPv6" moved 0 retrans
stop_nicd a; stop_nicd b

netns_tally
