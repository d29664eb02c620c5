#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# t/roce_rxe.sh - softnic against a RoCE stack nobody here wrote: Linux's
# rxe (Soft-RoCE) in a QEMU VM booted from Debian's kernel, rdma-core's
# stock ibv_rc_pingpong inside it, rdn-pingpong on softnic in a host
# network namespace joined to the VM by a tap device. The stock tool runs
# as client and as server at 1, 4096 and 10000 bytes (one to ten packets);
# rxe drops every packet whose ICRC is wrong, so exchanges that complete
# prove softnic's packets right, and softnic's counters show it dropped
# none of rxe's. Every packet both ways is captured and decoded by tshark:
# none may be malformed. Needs root, qemu-system-x86 and linux-image-amd64
# (scripts/setup installs them); skipped otherwise, or with
# RDN_TEST_NO_VM=1.
#
# The VM needs no disk: a busybox initramfs mounts the host's / read-only
# over 9p and chroots into it, so the guest runs the host's rdma-core.
# KVM hangs on this kind of machine (no vmx/svm): TCG it is.
set -u

B=${top_builddir:-.}
B=$(cd "$B" && pwd)
KVER=$(ls /lib/modules | sort -V | grep -- -amd64 | tail -1)
if [ "$(id -u)" != 0 ] || [ -n "${RDN_TEST_NO_VM:-}" ] ||
    ! command -v qemu-system-x86_64 >/dev/null ||
    ! command -v ibv_rc_pingpong >/dev/null || [ -z "$KVER" ] ||
    [ ! -f "/boot/vmlinuz-$KVER" ] ||
    [ ! -f "/lib/modules/$KVER/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko" ]
then
    echo "SKIP: needs root, qemu, ibverbs-utils and a kernel with rdma_rxe"
    exit 77
fi
NS=rxe$$
dir=$(mktemp -d /tmp/roce_rxe.XXXXXX)
chmod 755 "$dir"
pass=0
fail=0
SIZES="1 4096 10000"

cleanup() {
    [ -n "${qpid:-}" ] && kill "$qpid" 2>/dev/null
    [ -n "${tpid:-}" ] && kill "$tpid" 2>/dev/null
    pid=$(cat "$dir/n.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
    sleep 0.3
    ip netns del "$NS" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

result() { # NAME STATUS
    if [ "$2" = 0 ]; then
        pass=$((pass + 1))
        echo "ok: $1"
    else
        fail=$((fail + 1))
        echo "FAIL: $1"
    fi
}

# The initramfs: busybox, the virtio and 9p modules, an init that mounts
# the host and runs guest.sh in it.
R=$dir/root
M=/lib/modules/$KVER
mkdir -p "$R/bin" "$R/proc" "$R/sys" "$R/dev" "$R/host" "$R/out" "$dir/out"
cp /bin/busybox "$R/bin/busybox"
for c in sh mount modprobe chroot poweroff; do ln -s busybox "$R/bin/$c"; done
for m in virtio_pci virtio_net 9pnet_virtio 9p; do
    for f in $(grep -E "/$m\.ko:" "$M/modules.dep" | tr -d ':'); do
        mkdir -p "$R$M/$(dirname "$f")"
        cp "$M/$f" "$R$M/$f"
    done
done
cp "$M/modules.dep" "$R$M/"
cat >"$R/init" <<EOI
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in virtio_pci virtio_net 9pnet_virtio 9p; do modprobe \$m; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro host /host
mount -t 9p -o trans=virtio,version=9p2000.L out /out
mount -t proc proc /host/proc; mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev; mount --bind /out /host/mnt
chroot /host /bin/sh $dir/guest.sh >/out/guest.log 2>&1
poweroff -f
EOI
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$dir/initramfs.gz"

# In the guest: rxe on eth0, then the stock tool as client, then as server.
cat >"$dir/guest.sh" <<EOG
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
modprobe crc32_generic && modprobe rdma_rxe
ip link set lo up && ip link set eth0 up && ip addr add 10.80.0.2/24 dev eth0
rdma link add rxe0 type rxe netdev eth0
ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE && echo "rxe0 active"
for s in $SIZES; do
    timeout 90 ibv_rc_pingpong -d rxe0 -g 1 -p 18515 -s \$s -n 20 10.80.0.1
    echo "stock client -s \$s: \$?"
done
for s in $SIZES; do
    timeout 90 ibv_rc_pingpong -d rxe0 -g 1 -p 18516 -s \$s -n 20
    echo "stock server -s \$s: \$?"
done
EOG

ip netns add "$NS" && ip -n "$NS" link set lo up &&
ip netns exec "$NS" ip tuntap add dev tap0 mode tap &&
ip -n "$NS" addr add 10.80.0.1/24 dev tap0 && ip -n "$NS" link set tap0 up || {
    echo "FAIL: cannot build the namespace"
    exit 1
}
ip netns exec "$NS" "$B/rdn/softnic/rdn-nicd" -s "$dir/n.sock" \
    --listen 10.80.0.1 -l "$dir/n.log" -p "$dir/n.pid" &
for _ in $(seq 100); do
    [ -S "$dir/n.sock" ] && [ -f "$dir/n.pid" ] && break
    sleep 0.05
done
if command -v tshark >/dev/null; then
    ip netns exec "$NS" tshark -q -i tap0 -w "$dir/cap.pcap" \
        -f "udp port 4791" >/dev/null 2>&1 &
    tpid=$!
fi
ip netns exec "$NS" qemu-system-x86_64 -accel tcg -cpu max -m 768 \
    -nographic -no-reboot -kernel "/boot/vmlinuz-$KVER" \
    -initrd "$dir/initramfs.gz" -append "console=ttyS0 panic=-1 quiet" \
    -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$dir/out,mount_tag=out,security_model=none" \
    -netdev tap,id=n0,ifname=tap0,script=no,downscript=no \
    -device virtio-net-pci,netdev=n0 >"$dir/qemu.log" 2>&1 &
qpid=$!

pp() {
    ip netns exec "$NS" env RDN_NICD_SOCKET="$dir/n.sock" RDN_NICD_AUTOSTART=0 \
        timeout 120 "$B/rdn/softnic/rdn-pingpong" "$@"
}
for s in $SIZES; do
    pp -p 18515 -s "$s" -n 20 >"$dir/srv$s.txt" 2>&1
    result "rdn-pingpong server, stock ibv_rc_pingpong client, -s $s" $?
done
for s in $SIZES; do
    st=1
    for _ in $(seq 60); do # until the stock server listens
        : >"$dir/cli$s.txt"
        pp -p 18516 -s "$s" -n 20 10.80.0.2 >"$dir/cli$s.txt" 2>&1 && {
            st=0
            break
        }
        # Only a refused connection is worth another try: after an
        # exchange, the stock server is gone (it serves one client).
        grep -q "no connection" "$dir/cli$s.txt" || break
        sleep 1
    done
    [ "$st" = 0 ] || cat "$dir/cli$s.txt"
    result "rdn-pingpong client, stock ibv_rc_pingpong server, -s $s" $st
done
wait "$qpid"
qpid=
for s in $SIZES; do
    grep -q "stock client -s $s: 0" "$dir/out/guest.log" &&
        grep -q "stock server -s $s: 0" "$dir/out/guest.log"
    result "the stock tool finished -s $s both ways" $?
done
"$B/rdn/softnic/rdn-nicd" -s "$dir/n.sock" --status >"$dir/status"
grep -q " drops 0" "$dir/status"
result "softnic dropped none of rxe's packets (ICRC, headers)" $?
if [ -n "${tpid:-}" ]; then
    kill "$tpid"
    wait "$tpid" 2>/dev/null
    tpid=
    n=$(tshark -r "$dir/cap.pcap" --disable-protocol rpcordma 2>/dev/null |
        wc -l)
    bad=$(tshark -r "$dir/cap.pcap" --disable-protocol rpcordma \
        -Y "_ws.malformed || _ws.expert.severity >= error" 2>/dev/null | wc -l)
    echo "captured $n RoCE packets, $bad malformed"
    [ "$n" -gt 100 ] && [ "$bad" = 0 ]
    result "tshark decodes every packet both ways" $?
fi
[ "$fail" = 0 ] || { tail -20 "$dir/out/guest.log"; cat "$dir/status"; }
echo "tally: $pass passed, $fail failed"
[ "$fail" = 0 ]
