"""Shared test helpers: a builder for schema-valid result bundles and a runner for the CLI."""

from __future__ import annotations

import copy
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

# Tests that use this machine itself (its knobs, its scratch, timed kernels, Ansible runs): under pytest-xdist
# (`make test` runs `pytest -n 2`) they all go to one worker, in order, while the other tests share the other.
# (xdist's own `--dist loadgroup` does not group under pytest 9, hence a scheduler.) The browser tests render
# pages of fixture bundles and warehouses in Chromium and touch nothing of the machine's, so they run beside the
# unit tests: the machine's worker is the suite's critical path (about 25 of its 30 minutes).
MACHINE_TESTS = tuple(f"tests/{folder}/" for folder in ("functional", "kernels", "lab"))


# The machine's tests in this order, whole modules at a time: the unit tests on the other worker finish while the
# first ones run, so the measurements whose numbers are judged (the kernels, the real run's flags) come last.
MACHINE_ORDER = ("tests/lab/", "tests/functional/", "tests/kernels/", "tests/functional/test_inference_real.py")


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        return max((index for index, prefix in enumerate(MACHINE_ORDER) if item.nodeid.startswith(prefix)),
                   default=len(MACHINE_ORDER))

    # stable: the machine's tests first (xdist hands their one work unit out first, so the unit tests run beside
    # them rather than before them), each module's tests in their own order
    items.sort(key=rank)


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class MachineApart(LoadScopeScheduling):
        """Every machine test in one work unit (run in collection order), every other test a unit of its own."""

        def _split_scope(self, nodeid: str) -> str:
            return "machine" if nodeid.startswith(MACHINE_TESTS) else nodeid

    return MachineApart(config, log)


RUN_ID = "20261122T034500Z-a1b2c3"

MANIFEST = {
    "bundle_schema": 1,
    "run_id": RUN_ID,
    "host": "node1",
    "profile": "quick",
    "started_at": "2026-11-22T03:45:00Z",
    "finished_at": "2026-11-22T03:47:10Z",
    "status": "complete",
    "fleetscope": {"version": "0.1.0", "git_sha": "abc1234"},
    "facts": {
        "hostname": "node1",
        "cpu": {"model_name": "AMD EPYC 9B14", "vendor": "AuthenticAMD", "logical_cpus": 2, "physical_cores": 2,
                "sockets": 1, "threads_per_core": 1, "smt_active": False, "microcode": "0xa101148",
                "family": 25, "model": 17},
        "caches": [
            {"level": 1, "type": "Data", "size_bytes": 32768, "ways": 8, "line_bytes": 64, "shared_cpu_list": "0", "instances": 2},
            {"level": 1, "type": "Instruction", "size_bytes": 32768, "ways": 8, "line_bytes": 64, "shared_cpu_list": "0", "instances": 2},
            {"level": 2, "type": "Unified", "size_bytes": 1048576, "ways": 8, "line_bytes": 64, "shared_cpu_list": "0", "instances": 2},
            {"level": 3, "type": "Unified", "size_bytes": 33554432, "ways": 16, "line_bytes": 64, "shared_cpu_list": "0-1", "instances": 1},
        ],
        "memory": {"mem_total_bytes": 25000000000, "mem_available_bytes": 24000000000, "dimms": [],
                   "dimms_note": "dmidecode: no SMBIOS memory devices"},
        "numa": {"nodes": 1},
        "kernel": {"release": "6.1.0-27-cloud-amd64", "cmdline": "BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro"},
        "os": {"pretty_name": "Debian GNU/Linux 12 (bookworm)"},
        "virtualization": "kvm",
        "thp": {"enabled": "madvise", "defrag": "madvise"},
        "hugepages": {"nr_hugepages": 0, "hugepagesize_bytes": 2097152},
        "governor": "unavailable",
        "boost": "unavailable",
        "perf_event_paranoid": 2,
        "compiler": "gcc (Debian 12.2.0-14) 12.2.0",
    },
    "knobs": [
        {"name": "thp_enabled", "path": "/sys/kernel/mm/transparent_hugepage/enabled", "available": True,
         "before": "madvise", "applied": "always", "after": "madvise", "note": None},
        {"name": "cpufreq_governor", "path": None, "available": False, "before": None, "applied": None,
         "after": None, "note": "no cpufreq driver on this host"},
    ],
    "experiments": [
        {"name": "latency_sweep", "status": "ok", "file": "results/latency_sweep.jsonl", "error": None, "wall_s": 31.2},
    ],
}

# Load-to-use latency (ns) of each level of a Zen 4 guest as the dev VM measures it, and where the
# level ends; between levels the curve rises smoothly over about an octave, as real sweeps do.
LEVELS = ((1.2, 32 * 1024), (4.2, 1024 * 1024), (14.0, 3 * 1024 * 1024), (160.0, None))
CORE_CLOCK_GHZ = 3.4


def chase_latency_ns(working_set_bytes: int, page_policy: str) -> float:
    log_size = math.log2(working_set_bytes)
    latency = LEVELS[0][0]
    for (lower, capacity), (upper, _) in zip(LEVELS, LEVELS[1:]):
        # logistic step centred half an octave past the capacity
        weight = 1 / (1 + math.exp(-4 * (log_size - math.log2(capacity) - 0.5)))
        latency += (upper - lower) * weight
    if page_policy == "4k" and working_set_bytes > 256 * 1024:
        latency *= 1.15  # TLB misses on small pages
    return latency


def latency_points(page_policies=("thp", "4k"), seed: int = 7) -> list[dict]:
    """A realistic latency sweep: 4 KiB to 256 MiB, one point per octave, 5 samples each."""
    rng = random.Random(seed)
    points = []
    for page_policy in page_policies:
        for exponent in range(12, 29):
            working_set_bytes = 2**exponent
            true_ns = chase_latency_ns(working_set_bytes, page_policy)
            samples = sorted(round(true_ns * (1 + abs(rng.gauss(0, 0.02))), 4) for _ in range(5))
            median = samples[2]
            points.append({
                "schema_version": 1, "experiment": "latency_sweep", "kernel": "chase", "metric": "latency", "unit": "ns",
                "params": {"working_set_bytes": working_set_bytes, "line_bytes": 64, "pattern": "random_cycle",
                           "page_policy": page_policy,
                           "huge_bytes_granted": working_set_bytes if page_policy == "thp" and exponent >= 21 else 0,
                           "cpu": None, "accesses_per_sample": 1048576, "seed": 12345},
                "samples": samples,
                "summary": {"min": samples[0], "median": median, "mean": round(sum(samples) / 5, 4),
                            "ci95_low": samples[1], "ci95_high": samples[3], "count": 5},
                "context": {"canary_before_ns": 1.0, "canary_after_ns": 1.0, "core_clock_ghz": CORE_CLOCK_GHZ,
                            "median_cycles": round(median * CORE_CLOCK_GHZ, 3), "wall_s": 0.25,
                            "order_index": len(points)},
            })
    rng.shuffle(points)  # experiments run their points in a randomized order
    return points


class BundleBuilder:
    """Writes schema-valid bundles under one results/ folder (tests reach it through the `bundles`
    fixture: test folders of their own conftest.py would shadow a `from conftest import`)."""

    run_id = RUN_ID

    def __init__(self, results_dir: Path):
        self.results_dir = results_dir

    @staticmethod
    def manifest(**changes) -> dict:
        """A copy of the example manifest with top-level keys replaced."""
        return {**copy.deepcopy(MANIFEST), **changes}

    @staticmethod
    def latency_points(page_policies=("thp", "4k"), seed: int = 7) -> list[dict]:
        return latency_points(page_policies, seed)

    def write(self, manifest: dict | None = None, results: dict | None = None, raw: bool = True) -> Path:
        """Write results/<run_id>/<host>/ and return it.

        `results` maps a path inside the bundle to a list of points (written as JSON lines) or to
        str (written as is); by default the latency sweep the example manifest names.
        """
        manifest = self.manifest() if manifest is None else manifest
        bundle = self.results_dir / manifest["run_id"] / manifest["host"]
        (bundle / "results").mkdir(parents=True, exist_ok=True)
        if results is None:
            results = {"results/latency_sweep.jsonl": latency_points()}
        for relative, content in results.items():
            target = bundle / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                target.write_text(content, encoding="utf-8")
            else:
                target.write_text("".join(json.dumps(point) + "\n" for point in content), encoding="utf-8")
        if raw:
            (bundle / "raw").mkdir(exist_ok=True)
            (bundle / "raw" / "chase.stderr.log").write_text("chase: self-check passed\n", encoding="utf-8")
        (bundle / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        return bundle


@pytest.fixture
def bundles(tmp_path: Path) -> BundleBuilder:
    results_dir = tmp_path / "results"
    results_dir.mkdir()
    return BundleBuilder(results_dir)


def run_cli(*arguments, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `fleetscope ARGUMENTS...` as a user would, in a subprocess."""
    return subprocess.run([sys.executable, "-m", "fleetscope", *map(str, arguments)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="session")
def bundle_tools():
    """(BundleBuilder, run_cli) for fixtures wider than one test: a `from conftest import` would find
    whichever conftest.py came first on sys.path (tests/lab has its own)."""
    return BundleBuilder, run_cli


@pytest.fixture(scope="session")
def synthetic_fleet(tmp_path_factory) -> tuple[Path, Path]:
    """The fleet of tests/fleet_bundles.py (three CPU groups, rpl-03's DRAM slow in its latest run) loaded into
    one warehouse, shared by the tests of the fleet page, `compare` and `outliers`: (results dir, warehouse)."""
    import fleet_bundles

    root = tmp_path_factory.mktemp("synthetic-fleet")
    builder = BundleBuilder(root / "results")
    hosts = fleet_bundles.write_fleet(builder)
    groups = root / "inventory-groups.json"  # what playbooks/warehouse.yml hands ingest from the inventory
    groups.write_text(json.dumps(fleet_bundles.inventory_groups(hosts)))
    proc = run_cli("ingest", builder.results_dir, "--db", root / "fleet.duckdb", "--inventory-groups", groups)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return builder.results_dir, root / "fleet.duckdb"


@pytest.fixture(scope="session")
def two_nights(tmp_path_factory) -> tuple[Path, Path]:
    """The fleet of tests/nightly_bundles.py (rpl-03 changed on its second night, zen3-01 moved 1.5%, n1-01 ran
    once) loaded into one warehouse, shared by the tests of `check`, the 'changed' badge and the OpenMetrics
    export: (results dir, warehouse)."""
    import nightly_bundles

    root = tmp_path_factory.mktemp("two-nights")
    builder = BundleBuilder(root / "results")
    nightly_bundles.write_two_nights(builder)
    proc = run_cli("ingest", builder.results_dir, "--db", root / "fleet.duckdb")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return builder.results_dir, root / "fleet.duckdb"


@pytest.fixture(scope="session")
def compute_fleet(tmp_path_factory) -> tuple[Path, Path]:
    """Two hosts with the compute family (tests/compute_bundles.py: the real default run with a real compute run
    merged in), zen-1 as measured and slow-1 with its clock under more than one active core, and the FLOP/s
    under it, at 0.88 x, loaded into one warehouse for the tests of host_headlines and the OpenMetrics export:
    (results dir, warehouse)."""
    import compute_bundles

    root = tmp_path_factory.mktemp("compute-fleet")
    compute_bundles.write_bundle(root / "results", host="zen-1", run_id="20261127T010000Z-a00001")
    compute_bundles.write_bundle(root / "results", host="slow-1", run_id="20261127T020000Z-b00001", all_cores_clock=0.88)
    proc = run_cli("ingest", root / "results", "--db", root / "fleet.duckdb")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return root / "results", root / "fleet.duckdb"
