"""A lab of SSH hosts on this machine, one per network namespace, for multi-host runs of site.yml.

Each host `fslabN` is:
  * a network namespace with a veth pair to the root namespace (host 10.213.N.2, controller side
    10.213.N.1);
  * a mount and UTS namespace, held open by a `sleep` process, with private tmpfs on /tmp, /var/tmp
    and /var/lib/fleetscope, its own hostname and /proc/cmdline, and private regular files
    bind-mounted over the kernel knobs fleetscope tunes (THP enabled/defrag, nr_hugepages,
    perf_event_paranoid), so every host has knobs of its own and a run never touches the real ones;
  * its own sshd (key login as root) started inside those namespaces.

Usable from tests (the `lab` fixture in conftest.py) and by hand:

    python tests/lab/lab.py start [--hosts 3]   # stops a stale lab first; prints the inventory
    python tests/lab/lab.py status
    python tests/lab/lab.py stop                # kills every process in the lab namespaces

Everything the lab creates is named with the prefix `fslab` (namespaces, veth links, /run/fslab),
so `stop` also cleans up after a session that crashed.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

PREFIX = "fslab"
LAB_DIR = Path("/run/fslab")
PROJECT = Path(__file__).resolve().parents[2]
SSHD = "/usr/sbin/sshd"
SSHD_COMMON = Path(__file__).resolve().parent / "sshd_common.conf"  # shared with arm64/make_host.sh

# The knobs fleetscope tunes that the kernel shares between namespaces: each lab host gets a
# private file over each of them (see README.md: why restore checks stay truthful).
KNOB_FILES = {
    "thp_enabled": "/sys/kernel/mm/transparent_hugepage/enabled",
    "thp_defrag": "/sys/kernel/mm/transparent_hugepage/defrag",
    "nr_hugepages": "/proc/sys/vm/nr_hugepages",
    "perf_event_paranoid": "/proc/sys/kernel/perf_event_paranoid",
}
THP_ENABLED = ("always", "madvise", "never")
THP_DEFRAG = ("always", "defer", "defer+madvise", "madvise", "never")

# Each host starts from different original values, none of them what the quick profile applies
# (always, defer+madvise, 128, -1): a restore that wrote one host's originals to another, or left
# a tuned value behind, reads differently from the host's own originals.
ORIGINALS = (
    {"thp_enabled": "madvise", "thp_defrag": "madvise", "nr_hugepages": "0", "perf_event_paranoid": "2"},
    {"thp_enabled": "never", "thp_defrag": "never", "nr_hugepages": "1", "perf_event_paranoid": "3"},
    {"thp_enabled": "madvise", "thp_defrag": "defer", "nr_hugepages": "2", "perf_event_paranoid": "1"},
)

# What the quick profile applies to those knobs.
QUICK_APPLIED = {"thp_enabled": "always", "thp_defrag": "defer+madvise", "nr_hugepages": "128",
                 "perf_event_paranoid": "-1"}

# The trigger files faults.c reads in /run/fslab/<host>/.
FAULT_TRIGGERS = ("crash-kernel", "hang-kernel", "send-bundle")

# Facts a host reports that an attacker who owns it could choose: HTML/JS and SQL metacharacters.
HOSTILE_HOSTNAME = "<script>alert('fslab')</script>"
HOSTILE_CMDLINE = "BOOT_IMAGE=/boot/vmlinuz root=/dev/vda ro fslab.note='; DROP TABLE runs; -- <img src=x onerror=alert(2)>"


# Developers run playbooks against this machine under this lock (the lab fixture reads the real knobs
# holding it, so no such run is half way through changing them; benchmarks hold it around their runs).
LOCALHOST_RUN_LOCK = "/tmp/fleetscope-playbook.lock"


@contextmanager
def localhost_run_lock():
    """Hold LOCALHOST_RUN_LOCK, and remove the file on release so no run leaves it behind: a holder that
    finds the path gone or replaced after its flock (another holder unlinked it) locks the new file."""
    while True:
        lock = os.open(LOCALHOST_RUN_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if os.stat(LOCALHOST_RUN_LOCK).st_ino == os.fstat(lock).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(lock)
    try:
        yield
    finally:
        os.unlink(LOCALHOST_RUN_LOCK)
        os.close(lock)


def sh(*argv: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    if "stdout" not in kwargs:
        kwargs["capture_output"] = True
    return subprocess.run(argv, text=True, check=check, **kwargs)


def daemon(argv: list[str], log: Path) -> None:
    """Start a long-lived lab process detached from the caller (setsid --fork): it outlives the
    test process's bookkeeping, and `stop` finds it again through its network namespace."""
    with open(log, "a") as output:
        sh("setsid", "--fork", *argv, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, cwd="/")


def thp_file(choices: tuple[str, ...], selected: str) -> str:
    """What the kernel shows in a THP file: every choice, the active one in brackets."""
    return " ".join(f"[{c}]" if c == selected else c for c in choices) + "\n"


def parse_knob(text: str) -> str:
    text = text.strip()
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else text


def real_knobs() -> dict[str, str]:
    """This machine's own knob values (the root namespace's view)."""
    return {name: parse_knob(Path(path).read_text()) for name, path in KNOB_FILES.items()}


def netns_pids(namespace: str) -> list[int]:
    proc = sh("ip", "netns", "pids", namespace, check=False)
    return [int(pid) for pid in proc.stdout.split()]


class Host:
    """One lab host, seen from the controller."""

    def __init__(self, index: int, hostile: bool = False, var_tmp_size: str = "1g"):
        self.index = index
        self.name = f"{PREFIX}{index}"
        self.address = f"10.213.{index}.2"
        self.gateway = f"10.213.{index}.1"
        self.dir = LAB_DIR / self.name
        self.hostile = hostile
        self.var_tmp_size = var_tmp_size
        self.originals = dict(ORIGINALS[(index - 1) % len(ORIGINALS)])
        if index > len(ORIGINALS):
            self.originals["nr_hugepages"] = str(index - 1)
        self.hostname = HOSTILE_HOSTNAME if hostile else self.name
        self.cmdline = HOSTILE_CMDLINE if hostile else f"BOOT_IMAGE=/boot/vmlinuz root=/dev/vda ro fslab.host={index}"

    # --- the host's view of its own files --------------------------------------------------------
    @property
    def holder_pid(self) -> int:
        return int((self.dir / "holder.pid").read_text())

    def path(self, path: str) -> Path:
        """`path` as this host sees it: /proc/<pid>/root walks the holder's mount namespace."""
        return Path(f"/proc/{self.holder_pid}/root") / path.lstrip("/")

    def knobs(self) -> dict[str, str]:
        return {name: parse_knob(self.path(path).read_text()) for name, path in KNOB_FILES.items()}

    def state_file(self) -> Path:
        return self.path("/var/lib/fleetscope/tuning-state.json")

    def scratch_leftovers(self) -> list[str]:
        return sorted(p.name for p in self.path("/var/tmp").glob("fleetscope-*"))

    def kernels_running(self) -> list[int]:
        """The fleetscope kernel processes running on this host now."""
        running = []
        for pid in netns_pids(self.name):
            try:
                if os.readlink(f"/proc/{pid}/exe").endswith("/build/fleetscope-kernels"):
                    running.append(pid)
            except OSError:
                continue
        return running

    def fault(self, trigger: str, value: str | None) -> None:
        """Set (or with None, clear) one of faults.c's triggers for this host."""
        path = self.dir / trigger
        if value is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(value + "\n")

    def crash_kernel(self, kernel: str | None) -> None:
        """Make the named kernel crash on this host from now on (None: stop crashing)."""
        self.fault("crash-kernel", kernel)

    def hang_kernel(self, kernel: str | None) -> None:
        """Make the named kernel wait before measuring until this is called with None."""
        self.fault("hang-kernel", kernel)

    def send_bundle(self, archive: Path | None) -> None:
        """Make this host send `archive` (a file under its lab folder) instead of the bundle it packs."""
        self.fault("send-bundle", str(archive) if archive else None)

    def reset(self) -> None:
        """Put the host back as the lab made it (after a test that left it dirty): original knob
        files, no state file, an empty /var/tmp, no fault triggered."""
        self.write_knob_files()
        for trigger in FAULT_TRIGGERS:
            self.fault(trigger, None)
        self.state_file().unlink(missing_ok=True)
        for leftover in self.path("/var/tmp").iterdir():
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover)
            else:
                leftover.unlink()

    # --- life cycle ------------------------------------------------------------------------------
    def write_knob_files(self) -> None:
        """The host's private knob files with its original values, in the kernel's format. They are
        bind-mounted, so rewriting them in place is what the host sees."""
        knobs = self.dir / "knobs"
        (knobs / "thp_enabled").write_text(thp_file(THP_ENABLED, self.originals["thp_enabled"]))
        (knobs / "thp_defrag").write_text(thp_file(THP_DEFRAG, self.originals["thp_defrag"]))
        (knobs / "nr_hugepages").write_text(self.originals["nr_hugepages"] + "\n")
        (knobs / "perf_event_paranoid").write_text(self.originals["perf_event_paranoid"] + "\n")

    def create(self) -> None:
        self.dir.mkdir(parents=True)
        knobs = self.dir / "knobs"
        knobs.mkdir()
        self.write_knob_files()
        (knobs / "cmdline").write_text(self.cmdline + "\n")
        (self.dir / "hostname").write_text(self.hostname)
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", self.name, "-f", str(self.dir / "ssh_host_ed25519_key"))
        (self.dir / "sshd_config").write_text(f"""\
# sshd of lab host {self.name}, inside its namespaces (tests/lab/lab.py)
ListenAddress {self.address}:22
HostKey {self.dir}/ssh_host_ed25519_key
AuthorizedKeysFile {LAB_DIR}/authorized_keys
SetEnv FSLAB_HOST={self.name} LD_PRELOAD={LAB_DIR}/faults.so
""" + SSHD_COMMON.read_text())
        mounts = [f"mount --bind {knobs / name} {path}" for name, path in KNOB_FILES.items()]
        (self.dir / "init.sh").write_text(f"""\
#!/bin/sh
# Runs inside {self.name}'s network namespace, in new mount and UTS namespaces.
set -eu
mount -t tmpfs -o size=256m,mode=1777 {self.name}-tmp /tmp
mount -t tmpfs -o size={self.var_tmp_size},mode=1777 {self.name}-vartmp /var/tmp
mount -t tmpfs -o size=16m,mode=0700 {self.name}-state /var/lib/fleetscope
{chr(10).join(mounts)}
mount --bind {knobs / 'cmdline'} /proc/cmdline
/usr/bin/python3 -c 'import socket, sys; socket.sethostname(open(sys.argv[1]).read())' {self.dir / 'hostname'}
echo $$ > {self.dir / 'holder.pid'}
touch {self.dir / 'ready'}
exec sleep infinity
""")
        sh("ip", "netns", "add", self.name)
        sh("ip", "link", "add", f"{self.name}-c", "type", "veth", "peer", "name", "eth0", "netns", self.name)
        sh("ip", "addr", "add", f"{self.gateway}/24", "dev", f"{self.name}-c")
        sh("ip", "link", "set", f"{self.name}-c", "up")
        for command in (["ip", "link", "set", "lo", "up"], ["ip", "addr", "add", f"{self.address}/24", "dev", "eth0"],
                        ["ip", "link", "set", "eth0", "up"]):
            sh("ip", "netns", "exec", self.name, *command)

        daemon(["ip", "netns", "exec", self.name, "unshare", "--mount", "--uts", "--propagation", "private",
                "sh", str(self.dir / "init.sh")], self.dir / "holder.log")
        deadline = time.monotonic() + 15
        while not (self.dir / "ready").exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: namespace setup failed: {(self.dir / 'holder.log').read_text()}")
            time.sleep(0.02)
        self.start_sshd()

    def start_sshd(self) -> None:
        daemon(["nsenter", "--target", str(self.holder_pid), "--mount", "--uts", "--net",
                SSHD, "-D", "-e", "-f", str(self.dir / "sshd_config")], self.dir / "sshd.log")
        deadline = time.monotonic() + 15
        while not self.reachable():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: sshd did not start: {(self.dir / 'sshd.log').read_text()}")
            time.sleep(0.05)

    def kill_sshd(self) -> list[int]:
        """Kill the host's sshd: the listener and every session it serves (the host drops out)."""
        killed = []
        for pid in netns_pids(self.name):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "sshd":
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            except (OSError, ProcessLookupError):
                continue
        return killed

    def reachable(self) -> bool:
        try:
            with socket.create_connection((self.address, 22), timeout=0.5) as connection:
                return connection.recv(4).startswith(b"SSH-")
        except OSError:
            return False

    def status(self) -> str:
        if not self.dir.exists():
            return f"{self.name}: absent"
        sshd = "sshd up" if self.reachable() else "sshd DOWN"
        knobs = ", ".join(f"{k}={v}" for k, v in self.knobs().items())
        return f"{self.name} {self.address}: {sshd}, {len(netns_pids(self.name))} processes; {knobs}"


# Host N is 10.213.N.2: N runs from 1 to 254.
MAX_HOSTS = 254


class Lab:
    """A set of lab hosts and the inventory that reaches them."""

    def __init__(self, hosts: int = 3, hostile: int | None = None, var_tmp_sizes: dict[int, str] | None = None):
        if not 1 <= hosts <= MAX_HOSTS:
            raise ValueError(f"a lab has 1 to {MAX_HOSTS} hosts (one 10.213.N.0/24 subnet each), not {hosts}")
        sizes = var_tmp_sizes or {}
        self.hosts = [Host(i, hostile=(i == hostile), var_tmp_size=sizes.get(i, "1g")) for i in range(1, hosts + 1)]
        self.key = LAB_DIR / "id_ed25519"
        self.known_hosts = LAB_DIR / "known_hosts"
        self.inventory_dir = LAB_DIR / "inventory"
        self.inventory = self.inventory_dir / "lab.yml"

    def __getitem__(self, name: str) -> Host:
        return next(host for host in self.hosts if host.name == name)

    @staticmethod
    def check_prerequisites() -> None:
        missing = [tool for tool in ("ip", "unshare", "nsenter", "ssh-keygen", "gcc", SSHD) if not shutil.which(tool)]
        if missing:
            raise RuntimeError(f"the lab needs {', '.join(missing)} (apt-get install openssh-server iproute2 gcc)")
        if os.geteuid() != 0:
            raise RuntimeError("the lab needs root (network and mount namespaces, bind mounts over /sys and /proc)")

    def start(self) -> "Lab":
        self.check_prerequisites()
        stop()
        LAB_DIR.mkdir(mode=0o755, parents=True)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
        Path("/var/lib/fleetscope").mkdir(mode=0o700, parents=True, exist_ok=True)  # a mount point
        sh("gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(LAB_DIR / "faults.so"),
           str(Path(__file__).with_name("faults.c")))
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fslab-controller", "-f", str(self.key))
        (LAB_DIR / "authorized_keys").write_text(self.key.with_suffix(".pub").read_text())
        try:
            for host in self.hosts:
                host.create()
            self.known_hosts.write_text("".join(
                f"{host.address} {(host.dir / 'ssh_host_ed25519_key.pub').read_text()}" for host in self.hosts))
            self.write_inventory(self.inventory)
        except BaseException:
            stop()
            raise
        return self

    def write_inventory(self, path: Path, extra_hosts: dict[str, dict] | None = None) -> Path:
        """An inventory of the lab hosts (plus `extra_hosts`, name -> host vars), outside the project: the
        fleet_* settings are role defaults, so they apply to an inventory anywhere."""
        self.inventory_dir.mkdir(exist_ok=True)
        hosts = {host.name: {"ansible_host": host.address} for host in self.hosts}
        hosts.update(extra_hosts or {})
        lines = "".join(
            f"        {name}:{' {' + ', '.join(f'{k}: {v}' for k, v in hostvars.items()) + '}' if hostvars else ''}\n"
            for name, hostvars in hosts.items())
        # Racks inside the lab, so the fleet page has inventory groups to show: odd hosts in rack_a, even in rack_b.
        racks = "".join(f"        rack_{rack}:\n          hosts:\n" + "".join(
            f"            {host.name}:\n" for host in self.hosts if (host.index % 2 == 1) == (rack == "a"))
            for rack in ("a", "b") if any((host.index % 2 == 1) == (rack == "a") for host in self.hosts))
        path.write_text(f"""\
# Generated by tests/lab/lab.py: lab hosts in network namespaces on this machine, each with its own sshd.
all:
  vars:
    ansible_user: root
    ansible_ssh_private_key_file: {self.key}
    ansible_ssh_common_args: -o UserKnownHostsFile={self.known_hosts} -o StrictHostKeyChecking=yes
    ansible_python_interpreter: /usr/bin/python3
    # The lab namespaces have no route out: never refresh the package index there (the packages
    # are the ones this machine already has: make test-deps installs roles/provision's Debian list here).
    provision_apt_cache_valid_time: 315360000
  children:
    lab:
      hosts:
{lines}      children:
{racks}""")
        return path

    def status(self) -> list[str]:
        return [host.status() for host in self.hosts]


def stale_namespaces() -> list[str]:
    names = [line.split()[0] for line in sh("ip", "netns", "list", check=False).stdout.splitlines() if line.strip()]
    return [name for name in names if name.startswith(PREFIX)]


def stop() -> list[str]:
    """Kill every process of every fslab namespace, delete the namespaces, links and /run/fslab.
    Idempotent; also cleans up after a lab whose session crashed. Returns the namespaces removed."""
    namespaces = stale_namespaces()
    for namespace in namespaces:
        pids = netns_pids(namespace)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while netns_pids(namespace) and time.monotonic() < deadline:
            time.sleep(0.05)
        sh("ip", "netns", "del", namespace, check=False)
    links = sh("ip", "-o", "link", "show", check=False).stdout
    for link in re.findall(rf"^\d+: ({PREFIX}\d+-c)@", links, re.M):
        sh("ip", "link", "del", link, check=False)
    shutil.rmtree(LAB_DIR, ignore_errors=True)
    return namespaces


def wait_for(condition, proc: subprocess.Popen, timeout: float = 240, what: str = "") -> None:
    """Poll `condition` while a run started with LabRun.start goes on; fail if it ends first."""
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {what}:\n{proc.stdout.read()[-4000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


LAB_DRAM_BYTES = 256 * 2**20


class LabRun:
    """Where the runs of one test write on the controller (results, warehouse, reports, logs), and
    how they start: ansible-playbook from the project root against the lab inventory."""

    def __init__(self, root: Path, inventory: Path):
        self.root = Path(root)
        self.inventory = inventory
        self.results = self.root / "results"
        self.warehouse = self.root / "fleet.duckdb"
        self.reports = self.root / "reports"
        self.logs = 0

    def argv(self, playbook: str, *args: str, inventory: Path | None = None) -> list[str]:
        # The lab's hosts share this machine's CPUs, memory and sysfs: the DRAM rule's 8 x the last level
        # (3.75 GiB a host where sysfs reports the host's 480 MiB L3) would build three such chains at once.
        outputs = {"fleet_results_dir": str(self.results), "fleet_warehouse": str(self.warehouse),
                   "fleet_reports_dir": str(self.reports), "kernels_dram_bytes": LAB_DRAM_BYTES}
        return [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory or self.inventory),
                playbook, "-e", json.dumps(outputs), *args]

    @staticmethod
    def env() -> dict[str, str]:
        bin_dir = Path(sys.executable).parent
        return dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")

    def run(self, playbook: str, *args: str, inventory: Path | None = None, timeout: int = 600):
        proc = subprocess.run(self.argv(playbook, *args, inventory=inventory), cwd=PROJECT, env=self.env(),
                              capture_output=True, text=True, timeout=timeout, check=False)
        self.keep_log(playbook, proc.stdout + proc.stderr)
        return proc

    def start(self, playbook: str, *args: str, inventory: Path | None = None) -> subprocess.Popen:
        """Start a run in the background (its output in .stdout, merged with stderr)."""
        return subprocess.Popen(self.argv(playbook, *args, inventory=inventory), cwd=PROJECT, env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def keep_log(self, playbook: str, text: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.logs += 1
        (self.root / f"{self.logs:02d}-{Path(playbook).stem}.log").write_text(text)

    def manifests(self) -> dict[str, dict]:
        """host -> manifest of every bundle collected, newest run last."""
        found = {}
        for path in sorted(self.results.glob("*/*/manifest.json")):
            manifest = json.loads(path.read_text())
            found[manifest["host"]] = manifest
        return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    start_parser = verbs.add_parser("start", help="(re)create the lab and print its inventory path")
    start_parser.add_argument("--hosts", type=int, default=3, help=f"number of hosts, 1 to {MAX_HOSTS} (default 3)")
    verbs.add_parser("stop", help="remove the lab, and any stale fslab namespaces")
    verbs.add_parser("status", help="one line per host")
    args = parser.parse_args(argv)
    if args.verb == "start":
        lab = Lab(args.hosts).start()
        print("\n".join(lab.status()))
        print(f"inventory: {lab.inventory}")
        print(f"run: .venv/bin/ansible-playbook -i {lab.inventory} site.yml --tags zero_queue "
              "-e fleet_results_dir=/tmp/fslab-out/results -e fleet_warehouse=/tmp/fslab-out/fleet.duckdb "
              "-e fleet_reports_dir=/tmp/fslab-out/reports")
    elif args.verb == "stop":
        removed = stop()
        print(f"removed {', '.join(removed)}" if removed else "no lab was running")
    else:
        namespaces = stale_namespaces()
        if not namespaces:
            print("no lab is running")
        for namespace in namespaces:
            print(Host(int(namespace[len(PREFIX):])).status())
    return 0


if __name__ == "__main__":
    sys.exit(main())
