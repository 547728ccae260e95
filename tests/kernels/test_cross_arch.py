"""The kernel suite on other architectures (issue 29), tested here without their hardware: kernels/ is
built with Debian's cross compilers (gcc-aarch64-linux-gnu, gcc-riscv64-linux-gnu, gcc-powerpc64le-linux-gnu:
the Makefile's TEST_DEBS) with the Makefile's own -Werror flags, and every kernel of the registry runs its
smallest plan under qemu-user against the cross libc (qemu-<arch> -L /usr/<triplet>).

Functional checks only: exit 0 (smt: exit 4 with its reason where the host has no SMT siblings, and 0 on a
sysfs that has them), JSON lines the bundle's point schema accepts, numbers of a sane order of magnitude
for their unit, the flush variant and the instruction sets each architecture has. Emulated timings mean
nothing and no timing is compared. The bandwidth loops of every instruction set (plain C everywhere,
NEON and SVE on AArch64, SVE at vector lengths of 16 to 256 bytes) pass --verify, and their accounting
equals the native build's exactly.

Cost on the 2-vCPU dev VM: ~40 s for the three architectures at a load average of 3 from other work
(a 3-5 s build each, then ~60 emulated runs of 0.1-0.6 s); 150 s at a load average of 6-9, when each
build took 15-24 s. A machine without the cross compilers or
qemu-user skips with what to install (`make test` installs them: the Makefile's CROSS_DEBS)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import KERNELS_DIR
from kernelrun import parse_lines, schema_problems

SEED = ["--seed", "1"]
QUICK = ["--samples", "1", "--min-sample-ms", "1", *SEED]


@dataclass(frozen=True)
class Arch:
    compiler: str
    qemu: str
    sysroot: str
    isas: tuple[str, ...]    # the bandwidth loops the build has (qemu's default CPU runs them all)
    flush: str | None        # write_cost's flush variant; None: skipped, with the reason
    package: str


ARCHES = {
    "aarch64": Arch("aarch64-linux-gnu-gcc", "qemu-aarch64", "/usr/aarch64-linux-gnu", ("scalar", "neon", "sve"),
                    "dc_civac_dsb_round_trip", "gcc-aarch64-linux-gnu"),
    "riscv64": Arch("riscv64-linux-gnu-gcc", "qemu-riscv64", "/usr/riscv64-linux-gnu", ("scalar",), None,
                    "gcc-riscv64-linux-gnu"),
    "ppc64le": Arch("powerpc64le-linux-gnu-gcc", "qemu-ppc64le", "/usr/powerpc64le-linux-gnu", ("scalar",),
                    "dcbf_sync_round_trip", "gcc-powerpc64le-linux-gnu"),
}

# A sane order of magnitude per unit, emulated or not (a wrong unit or a miscount is off by 1e3 or more):
# ns per dependent load, GB/s, MB/s of file reads, Gop/s, seconds of a command's wall time. A clock read through
# qemu's 512-bit SVE multiply-adds at a load average of 3 came to 0.00088 GHz: 1e-4 is the floor.
SANE = {"ns": (0.05, 1e6), "GB/s": (1e-4, 1e4), "MB/s": (1e-3, 1e6), "Gop/s": (1e-5, 1e4), "s": (1e-6, 60),
        "GHz": (1e-4, 10), "GFLOP/s": (1e-5, 1e5)}

# Every op, store, order, stride and mix, at an odd size (65 lines) and a larger one: what the loops must count
ACCOUNTING_RUN = ["bandwidth", "--ops", "read,write,copy,triad", "--mixes", "70/30", "--stores", "regular,nt",
                  "--patterns", "sequential,random", "--strides", "64,192", "--sizes", "4160,64k", "--verify", *QUICK]
ACCOUNTING = ("op", "store", "pattern", "stride_bytes", "read_lines", "write_lines", "working_set_bytes",
              "lines_per_pass", "bytes_per_pass")


def smallest_plans(scratch: Path) -> dict[str, list[list[str]]]:
    """Each kernel's smallest plan: every point kind it has, on working sets of a few pages to a few MiB."""
    return {
        "chase": [["--sizes", "16k,1m"]],
        "tlb": [["--pages", "8,64"]],
        "zero_queue": [["--levels", "L1d,L2,DRAM", "--dram-size", "4m"]],
        "pattern_stride": [["--footprint", "256k", "--strides", "64,4096"]],
        "mlp": [["--size", "1m", "--chains", "1,2,4"]],
        "write_cost": [["--levels", "L1d,DRAM", "--dram-size", "4m"]],
        "c2c": [["--cpus", "0,1"]],
        "affinity": [["--threads", "2", "--repeats", "1", "--buffer-bytes", "1m"]],
        "smt": [["--repeats", "1", "--buffer-bytes", "1m"]],
        "aio": [["--directory", str(scratch), "--size", "1m", "--queue-depths", "1,2"]],
        "workload": [["--name", "true", "--", "true"]],
        "bandwidth": [["--sizes", "64k,1m", "--threads", "1,2"]],
        "saxpy": [["--elements", "65536", "--strides", "1,8"]],
        "loaded_latency": [["--size", "256k", "--load-size", "256k", "--delays", "0,1000"]],
        "alloc_walk": [["--live-bytes", "1m", "--walks", "1"]],
        "core_clock": [["--active", "1", "--ramp-ms", "2", "--idle-ms", "1"]],
        "peak_flops": [["--threads", "1"]],
    }


def tool_missing(arch: Arch) -> str | None:
    for tool, package in ((arch.compiler, arch.package), (arch.qemu, "qemu-user")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian package {package}; `make test-deps` installs it)"
    if not Path(arch.sysroot, "lib").is_dir():
        return f"{arch.sysroot} has no libc (the cross compiler's libc6-dev-*-cross package)"
    return None


@pytest.fixture(scope="module", params=sorted(ARCHES))
def cross(request, tmp_path_factory):
    """kernels/ built for one architecture with its cross compiler, and a runner under qemu-user."""
    arch = ARCHES[request.param]
    missing = tool_missing(arch)
    if missing:
        pytest.skip(missing)
    source = tmp_path_factory.mktemp(f"kernels-{request.param}") / "kernels"
    shutil.copytree(KERNELS_DIR, source, ignore=shutil.ignore_patterns("build"))
    build = subprocess.run(["make", "-C", str(source), "-j2", f"CC={arch.compiler}"], capture_output=True,
                           text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    assert "warning" not in build.stderr.lower(), build.stderr
    binary = source / "build" / "fleetscope-kernels"

    def run(*args, cpu: str | None = None, env: dict | None = None, timeout: int = 120):
        qemu = [arch.qemu, "-L", arch.sysroot] + (["-cpu", cpu] if cpu else [])
        return subprocess.run([*qemu, str(binary), *args], capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **(env or {})})

    return request.param, arch, binary, run


def test_built_for_the_architecture(cross):
    name, arch, binary, run = cross
    machine = {"aarch64": "AArch64", "riscv64": "RISC-V", "ppc64le": "PowerPC64"}[name]
    header = subprocess.run(["readelf", "-h", str(binary)], capture_output=True, text=True).stdout
    assert machine in header, header
    assert run("--list").returncode == 0


def check_records(kernel: str, records: list[dict]):
    assert records, f"{kernel}: no record"
    for record in records:
        assert schema_problems(record) == [], (kernel, schema_problems(record))
        assert record["kernel"] == kernel
        low, high = SANE[record["unit"]]
        for value in record["samples"]:
            assert low <= value <= high, (kernel, record["unit"], value, record["params"])


def test_every_kernel_runs_its_smallest_plan(cross, tmp_path):
    """Every kernel the registry lists, with its smallest plan: exit 0 and valid, sane records."""
    name, arch, _, run = cross
    listed = [line.split()[0] for line in run("--list").stdout.splitlines() if line.strip()]
    plans = smallest_plans(tmp_path)
    assert sorted(listed) == sorted(plans), "a kernel without a smallest plan here, or a plan for none"
    smt_plan = json.loads(run("smt", "--plan").stdout)
    aio_plan = json.loads(run("aio", "--plan").stdout)
    engines = [engine["engine"] for engine in aio_plan["engines"] if engine["available"]]
    assert {"blocking", "posix_aio"} <= set(engines), aio_plan
    for engine in aio_plan["engines"]:  # what qemu-user cannot run (io_uring) is unavailable, with the reason
        assert engine["available"] or engine["reason"], engine
    for kernel in listed:
        for args in plans[kernel]:
            if kernel == "aio":
                args = [*args, "--engines", ",".join(engines)]
            result = run(kernel, *args, *([] if kernel == "workload" else QUICK))
            if kernel == "smt" and not smt_plan["runnable"]:
                assert result.returncode == 4 and result.stdout == "", result.stderr
                assert smt_plan["reason"] in result.stderr
                continue
            assert result.returncode == 0, (name, kernel, args, result.stderr[-2000:])
            check_records(kernel, parse_lines(result.stdout))


def test_smt_runs_where_sysfs_has_siblings(cross, tmp_path):
    """This host has no SMT siblings: a sysfs copy that pairs CPUs 0 and 1 lets smt run all its
    placements under qemu too."""
    _, _, _, run = cross
    if len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0):
        pytest.skip("needs CPUs 0 and 1")
    for cpu in (0, 1):
        topology = tmp_path / "cpu" / f"cpu{cpu}" / "topology"
        topology.mkdir(parents=True)
        for file, value in (("core_id", 0), ("physical_package_id", 0), ("thread_siblings_list", "0,1")):
            (topology / file).write_text(f"{value}\n")
    result = run("smt", "--repeats", "1", "--buffer-bytes", "1m", *QUICK,
                 env={"FLEETSCOPE_SYSFS_ROOT": str(tmp_path / "cpu")})
    assert result.returncode == 0, result.stderr
    records = parse_lines(result.stdout)
    check_records("smt", records)
    assert {r["params"]["placement"] for r in records} == {"alone", "siblings"}


def test_write_cost_flushes_where_the_architecture_can(cross):
    name, arch, _, run = cross
    result = run("write_cost", "--levels", "L1d", *QUICK)
    assert result.returncode == 0, result.stderr
    flush = [r for r in parse_lines(result.stdout) if r["metric"] == "flush_round_trip"]
    if arch.flush:
        (record,) = flush
        assert record["params"]["variant"] == arch.flush and "not store latency" in record["params"]["note"]
    else:
        assert flush == []
        assert f"write_cost: skipped: flush round trip: {name}: " in result.stderr


def accounting(records: list[dict]) -> list[tuple]:
    return sorted(tuple(r["params"][key] for key in ACCOUNTING) + (r["context"]["verified_lines_read"],
                                                                   r["context"]["verified_lines_written"])
                  for r in records)


@pytest.fixture(scope="module")
def native_accounting(records):
    """The native build's plain-C accounting of ACCOUNTING_RUN (conftest's build, same sources)."""
    return accounting(records(*ACCOUNTING_RUN[:1], "--isa", "scalar", *ACCOUNTING_RUN[1:]))


def verified(run, isa: str, cpu: str | None = None) -> list[dict]:
    result = run(*ACCOUNTING_RUN[:1], "--isa", isa, *ACCOUNTING_RUN[1:], cpu=cpu)
    assert result.returncode == 0, result.stderr
    records = parse_lines(result.stdout)
    check_records("bandwidth", records)
    assert {r["params"]["isa"] for r in records} == {isa}
    return records


def test_every_instruction_set_counts_as_the_native_build(cross, native_accounting):
    """--verify on every loop the architecture has: lines read (checksum) and written (lines changed) as
    accounted, and the same accounting as the native plain-C loops, point for point. Streaming stores
    where the loops have them (NEON STNP, SVE STNT1), else left out with the reason."""
    _, arch, _, run = cross
    for isa in arch.isas:
        records = verified(run, isa)
        mine = accounting(records)
        assert [row for row in mine if row[1] != "nt"] == native_accounting, isa
        nt = [row for row in mine if row[1] == "nt"]
        if isa == "scalar":
            assert nt == []
        else:
            assert [row[:1] + row[2:] for row in nt] == [row[:1] + row[2:] for row in mine if row[1] == "regular"]
    result = run("bandwidth", "--isa", "avx2" if "neon" in arch.isas else "neon", "--sizes", "64k")
    assert result.returncode == 2 and f"this CPU runs only {','.join(arch.isas)}" in result.stderr


@pytest.mark.parametrize("cross", ["aarch64"], indirect=True)
@pytest.mark.parametrize("vector_bytes", [16, 32, 64, 256])
def test_sve_is_vector_length_agnostic(cross, native_accounting, vector_bytes):
    """SVE loops on CPUs of 128- to 2048-bit vectors (qemu's sve-default-vector-length): a line is a
    fraction of a vector at 256 bytes, several vectors at 16; the accounting never changes."""
    _, arch, _, run = cross
    records = verified(run, "sve", cpu=f"max,sve-default-vector-length={vector_bytes}")
    assert {r["params"]["vector_bytes"] for r in records} == {vector_bytes}
    assert [row for row in accounting(records) if row[1] != "nt"] == native_accounting


def test_auto_takes_what_the_cpu_has(cross):
    """auto on a CPU without SVE (qemu -cpu cortex-a57) is NEON, and --isa sve is refused there; on the
    architectures without vector loops it is plain C, with nothing to probe."""
    name, arch, _, run = cross
    cpu = "cortex-a57" if name == "aarch64" else None
    result = run("bandwidth", "--ops", "read", "--sizes", "64k", *QUICK, cpu=cpu)
    assert result.returncode == 0, result.stderr
    (record,) = parse_lines(result.stdout)
    choice = record["context"]["isa_auto"]
    assert record["params"]["isa"] == choice["chosen"] == ("neon" if name == "aarch64" else "scalar")
    if name == "aarch64":
        refused = run("bandwidth", "--isa", "sve", "--sizes", "64k", cpu=cpu)
        assert refused.returncode == 2 and "this CPU runs only scalar,neon" in refused.stderr
    else:
        assert choice["comparisons"] == []
