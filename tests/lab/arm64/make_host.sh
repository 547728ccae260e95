#!/bin/bash
# An arm64 lab host on this x86-64 machine: a Debian bookworm arm64 root filesystem (debootstrap),
# run by qemu-user through binfmt_misc, with its own sshd in a lab network namespace.
#
#   tests/lab/arm64/make_host.sh build    # the root filesystem, cached in $FSLAB_ARM64_ROOTFS
#   tests/lab/arm64/make_host.sh start    # build if needed, then the namespace, mounts and sshd;
#                                         # prints the inventory path
#   tests/lab/arm64/make_host.sh status
#   tests/lab/arm64/make_host.sh stop     # kills its processes, removes namespace, mounts, links
#
# The host is fsarm64, 10.214.1.2 (controller side 10.214.1.1), key login as root; the
# inventory is /run/fsarm64/inventory.yml. It shares this machine's kernel: THP, nr_hugepages
# and perf_event_paranoid inside it ARE this machine's knobs (no private knob files: the arm64 host
# tests the real tuning path), so run site.yml against it under /work/locks/machine.lock.
# See tests/lab/arm64/README.md.
set -euo pipefail

# Not fslabN: tests/lab/lab.py's stop removes every namespace named fslab*, and its hosts use 10.213.N.
NAME=fsarm64
ADDRESS=10.214.1.2
GATEWAY=10.214.1.1
RUN=/run/$NAME
HERE=$(cd "$(dirname "$0")" && pwd)  # tests/lab/arm64
ROOTFS=${FSLAB_ARM64_ROOTFS:-/var/cache/fsarm64/rootfs}
MIRROR=${FSLAB_ARM64_MIRROR:-http://deb.debian.org/debian}
BINFMT=/proc/sys/fs/binfmt_misc
# qemu-user-static's own binfmt entry (flags O, P and F: F opens the interpreter at registration, so
# it works inside the chroot, where /usr/bin/qemu-aarch64-static is not).
BINFMT_CONF=/usr/lib/binfmt.d/qemu-aarch64.conf
# What the playbook installs on a Debian host (roles/provision/vars/Debian.yml) plus what
# Ansible itself and an SSH host need: installed here so the run never downloads inside the namespace.
PACKAGES=python3,python3-apt,openssh-server,gcc,make,libc6-dev,linux-perf,dmidecode,util-linux,numactl,tar,kmod,fio,procps,iproute2

log() { printf '%s: %s\n' "$NAME" "$*" >&2; }

need() {
    local missing=()
    for tool in debootstrap qemu-aarch64-static ip unshare nsenter ssh-keygen chroot setsid; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    if ((${#missing[@]})); then
        log "needs ${missing[*]} (apt-get install debootstrap qemu-user-static iproute2 openssh-client)"
        exit 1
    fi
    [[ $EUID -eq 0 ]] || { log "needs root (debootstrap, namespaces, mounts, binfmt_misc)"; exit 1; }
}

binfmt_register() {
    [[ -e $BINFMT/register ]] || mount -t binfmt_misc binfmt_misc "$BINFMT" ||
        { log "binfmt_misc cannot be mounted here: arm64 binaries cannot run"; exit 1; }
    if [[ ! -e $BINFMT/qemu-aarch64 ]]; then
        grep -v '^#' "$BINFMT_CONF" > "$BINFMT/register"
        mkdir -p "$RUN" && touch "$RUN/binfmt-registered-by-us"
        log "registered qemu-aarch64-static with binfmt_misc (flags $(sed -n 's/^flags: //p' $BINFMT/qemu-aarch64))"
    fi
    grep -q '^flags: .*F' "$BINFMT/qemu-aarch64" ||
        { log "binfmt_misc's qemu-aarch64 entry lacks the F flag: it would not work in a chroot; remove it first"; exit 1; }
}

build() {
    need
    binfmt_register
    if [[ -e $ROOTFS/.fslab-complete ]]; then
        log "root filesystem cached in $ROOTFS ($(du -sh "$ROOTFS" | cut -f1))"
        return
    fi
    rm -rf "$ROOTFS"
    mkdir -p "$(dirname "$ROOTFS")"
    local start=$SECONDS
    log "debootstrap bookworm arm64 into $ROOTFS (several minutes: second stage runs emulated)"
    debootstrap --arch=arm64 --variant=minbase --include="$PACKAGES" bookworm "$ROOTFS" "$MIRROR" \
        > "$(dirname "$ROOTFS")/debootstrap.log" 2>&1 ||
        { tail -20 "$(dirname "$ROOTFS")/debootstrap.log" >&2; exit 1; }
    chroot "$ROOTFS" apt-get clean
    touch "$ROOTFS/.fslab-complete"
    log "built in $((SECONDS - start)) s: $(du -sh "$ROOTFS" | cut -f1)"
}


holder_pid() { cat "$RUN/holder.pid" 2>/dev/null; }

reachable() { timeout 2 bash -c "exec 3<>/dev/tcp/$ADDRESS/22 && head -c 4 <&3" 2>/dev/null | grep -q SSH-; }

start() {
    need
    stop_host quiet
    build
    mkdir -p "$RUN"
    chmod 755 "$RUN"
    # Keys: the controller's, and the host's (made here, pinned in known_hosts).
    ssh-keygen -q -t ed25519 -N '' -C fsarm64-controller -f "$RUN/id_ed25519"
    rm -f "$ROOTFS"/etc/ssh/ssh_host_*
    ssh-keygen -q -t ed25519 -N '' -C "$NAME" -f "$ROOTFS/etc/ssh/ssh_host_ed25519_key"
    install -d -m 700 "$ROOTFS/root/.ssh"
    install -m 600 "$RUN/id_ed25519.pub" "$ROOTFS/root/.ssh/authorized_keys"
    echo "$ADDRESS $(cat "$ROOTFS/etc/ssh/ssh_host_ed25519_key.pub")" > "$RUN/known_hosts"
    echo "$NAME" > "$ROOTFS/etc/hostname"
    { cat <<CONF
# sshd of the arm64 lab host $NAME (tests/lab/arm64/make_host.sh): an aarch64 sshd under qemu-user
ListenAddress $ADDRESS:22
HostKey /etc/ssh/ssh_host_ed25519_key
CONF
      cat "$HERE/../sshd_common.conf"; } > "$ROOTFS/etc/ssh/sshd_config.fsarm64"
    cat > "$RUN/init.sh" <<INIT
#!/bin/sh
# Runs inside $NAME's network namespace, in new mount and UTS namespaces: the chroot's mounts.
set -eu
mount -t proc proc $ROOTFS/proc
mount --rbind /sys $ROOTFS/sys
mount --rbind /dev $ROOTFS/dev
mount -t tmpfs -o size=256m,mode=1777 $NAME-tmp $ROOTFS/tmp
mount -t tmpfs -o size=1g,mode=1777 $NAME-vartmp $ROOTFS/var/tmp
mount -t tmpfs -o size=64m,mode=0755 $NAME-run $ROOTFS/run
mkdir -p -m 0755 $ROOTFS/run/sshd
hostname $NAME
echo \$\$ > $RUN/holder.pid
touch $RUN/ready
exec sleep infinity
INIT
    ip netns add "$NAME"
    ip link add "$NAME-c" type veth peer name eth0 netns "$NAME"
    ip addr add "$GATEWAY/24" dev "$NAME-c"
    ip link set "$NAME-c" up
    ip netns exec "$NAME" ip link set lo up
    ip netns exec "$NAME" ip addr add "$ADDRESS/24" dev eth0
    ip netns exec "$NAME" ip link set eth0 up
    setsid --fork ip netns exec "$NAME" unshare --mount --uts --propagation private sh "$RUN/init.sh" \
        </dev/null >"$RUN/holder.log" 2>&1
    for _ in $(seq 150); do [[ -e $RUN/ready ]] && break; sleep 0.1; done
    [[ -e $RUN/ready ]] || { cat "$RUN/holder.log" >&2; log "namespace setup failed"; stop_host quiet; exit 1; }
    setsid --fork nsenter --target "$(holder_pid)" --mount --uts --net \
        chroot "$ROOTFS" /usr/sbin/sshd -D -e -f /etc/ssh/sshd_config.fsarm64 </dev/null >"$RUN/sshd.log" 2>&1
    for _ in $(seq 300); do reachable && break; sleep 0.1; done
    reachable || { cat "$RUN/sshd.log" >&2; log "sshd did not start"; stop_host quiet; exit 1; }
    cat > "$RUN/inventory.yml" <<INV
# Generated by tests/lab/arm64/make_host.sh: an arm64 Debian host run by qemu-user, in a namespace.
all:
  vars:
    ansible_user: root
    ansible_ssh_private_key_file: $RUN/id_ed25519
    ansible_ssh_common_args: -o UserKnownHostsFile=$RUN/known_hosts -o StrictHostKeyChecking=yes
    ansible_python_interpreter: /usr/bin/python3
    # No route out of the namespace: the packages were installed by debootstrap; never refresh the index.
    provision_apt_cache_valid_time: 315360000
  children:
    lab:
      hosts:
        $NAME: {ansible_host: $ADDRESS}
INV
    status
    echo "inventory: $RUN/inventory.yml"
}

status() {
    if ! ip netns list | grep -qw "^$NAME"; then echo "$NAME: absent"; return; fi
    local state="sshd DOWN"
    reachable && state="sshd up"
    echo "$NAME $ADDRESS: $state, $(ip netns pids "$NAME" | wc -l) processes," \
        "uname -m in the chroot: $(nsenter --target "$(holder_pid)" --mount chroot "$ROOTFS" uname -m 2>&1)"
}

stop_host() {
    if ip netns list | grep -qw "^$NAME"; then
        for pid in $(ip netns pids "$NAME"); do kill -KILL "$pid" 2>/dev/null || true; done
        for _ in $(seq 100); do [[ -z $(ip netns pids "$NAME") ]] && break; sleep 0.1; done
        ip netns del "$NAME"
    fi
    # Deleting the namespace deletes the veth pair, but not at once: the link may be gone by the time we get to it.
    ip link del "$NAME-c" 2>/dev/null || true
    # The mounts lived in the holder's mount namespace and went with it; check none leaked here.
    if findmnt -rn -o TARGET | grep -q "^$ROOTFS/"; then
        log "mounts left under $ROOTFS:"; findmnt -rn -o TARGET | grep "^$ROOTFS/" >&2; exit 1
    fi
    if [[ -e $RUN/binfmt-registered-by-us && -e $BINFMT/qemu-aarch64 && ${1:-} != quiet ]]; then
        echo -1 > "$BINFMT/qemu-aarch64"
        log "unregistered qemu-aarch64 from binfmt_misc (this script had registered it)"
    fi
    if [[ ${1:-} == quiet ]]; then
        # A restart keeps the binfmt registration and the note that this script made it.
        find "$RUN" -mindepth 1 ! -name binfmt-registered-by-us -delete 2>/dev/null || true
    else
        rm -rf "$RUN"
        [[ -d $ROOTFS ]] && log "stopped; the root filesystem stays cached in $ROOTFS ($(du -sh "$ROOTFS" | cut -f1))"
    fi
}

case "${1:-}" in
    build) build ;;
    start) start ;;
    status) status ;;
    stop) stop_host ;;
    *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
