"""A host with two core kinds, from a real run (tests/fixtures/default_run): its pinned single-thread
experiments' points on the Raptor Lake fixture's P-core (CPU 4) and E-core (CPU 12), the E-core's 1.3 times
slower, affinity and smt threads on CPUs of both kinds, and a thread sweep whose second step adds an E-core: known answers for the per-kind views and the
page's per-kind sections (tests/unit/test_core_kind_sections.py, tests/browser/test_core_kind_charts.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from sysfs_facts import read

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RUN = next((ROOT / "tests" / "fixtures" / "default_run" / "results").glob("*/*/results"))
PER_KIND = ("latency_sweep", "tlb", "write_cost", "bandwidth", "saxpy")
P_CPU, E_CPU, E_SLOWER = 4, 12, 1.3


def fixture_points(experiment: str) -> list[dict]:
    return [json.loads(line) for line in (DEFAULT_RUN / f"{experiment}.jsonl").read_text().splitlines()]


def on_cpu(points: list[dict], cpu: int, slower: float = 1.0) -> list[dict]:
    """The points pinned to `cpu`, their times `slower` times longer (rates `slower` times lower)."""
    out = []
    for point in copy.deepcopy(points):
        point["params"]["cpu"] = cpu
        factor = 1 / slower if point["unit"] in ("GB/s", "Gop/s") else slower
        point["samples"] = [value * factor for value in point["samples"]]
        point["summary"] = {key: value * factor if key != "count" else value for key, value in point["summary"].items()}
        out.append(point)
    return out


def affinity_points() -> list[dict]:
    """Pinned: thread 0 on a P-core, thread 1 on an E-core (slower); unpinned: thread 0 moved from a P-core
    to an E-core, thread 1 stayed on an E-core in repeat 0 and on a P-core in repeat 1."""
    points = []
    for point in fixture_points("affinity"):
        thread, pinned = point["params"]["thread"], point["params"]["placement"] == "pinned"
        cpus = (([P_CPU], [E_CPU])[thread] if pinned
                else ([P_CPU, E_CPU], ([E_CPU + 1], [P_CPU + 2])[point["params"]["repeat"]])[thread])
        (point,) = on_cpu([point], cpus[0] if pinned else None, E_SLOWER if E_CPU in cpus else 1.0)
        point["context"]["cpus_seen"] = cpus
        points.append(point)
    return points


def thread_sweep_points() -> list[dict]:
    """The sweep's steps as the role orders CPUs on a hybrid host, fastest kind first: 1 thread on P-core 4,
    2 threads on 4 and E-core 12 (so the second step added an E-core)."""
    points = fixture_points("thread_sweep")
    for point in points:
        point["params"]["cpus"] = [P_CPU, E_CPU][:point["params"]["threads"]]
    return points


def smt_points() -> list[dict]:
    """alone on P-core 0, siblings 0 and 1 (one P-core), cores 0 and 12 (a P-core beside an E-core)."""
    cpus = {"alone": [0], "siblings": [0, 1], "cores": [0, E_CPU]}
    points = []
    for placement, medians in (("alone", [4.0]), ("siblings", [2.2, 2.2]), ("cores", [4.0, 3.0])):
        for thread, median in enumerate(medians):
            points.append({"schema_version": 1, "experiment": "smt", "kernel": "smt", "metric": "throughput",
                           "unit": "Gop/s", "params": {"placement": placement, "workload": "compute",
                                                       "threads": len(medians), "thread": thread,
                                                       "cpu": cpus[placement][thread], "cpus": cpus[placement],
                                                       "repeat": 0},
                           "samples": [median], "summary": {"min": median, "median": median, "mean": median,
                                                            "ci95_low": median, "ci95_high": median, "count": 1},
                           "context": {"cpus_seen": [cpus[placement][thread]]}})
    return points


def topology(machine: str) -> dict:
    found = read(machine)
    found.pop("numa")
    return found



def experiments(*names: str) -> list[dict]:
    """Manifest entries of experiments that ran."""
    return [{"name": name, "status": "ok", "file": f"results/{name}.jsonl", "error": None, "wall_s": 1.0}
            for name in names]


def write_hybrid(builder, host: str = "hybrid"):
    """Write the two-kind host's bundle with `builder` (tests/conftest.py's BundleBuilder)."""
    manifest = builder.manifest(host=host)
    manifest["facts"]["topology"] = topology("intel-raptorlake-hybrid")
    manifest["experiments"] += experiments(*PER_KIND[1:], "affinity", "smt", "thread_sweep")
    results = {f"results/{name}.jsonl": on_cpu(fixture_points(name), P_CPU)
               + on_cpu(fixture_points(name), E_CPU, E_SLOWER) for name in PER_KIND}
    return builder.write(manifest, results={**results, "results/affinity.jsonl": affinity_points(),
                                            "results/smt.jsonl": smt_points(),
                                            "results/thread_sweep.jsonl": thread_sweep_points()})
