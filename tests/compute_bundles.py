"""Bundles with the compute family for the tests: the default run (tests/fixtures/default_run, a real `make run`)
with the core_clock and peak_flops results of another real run (tests/fixtures/compute_run) merged in, so one
host has the compute family beside the bandwidth and SAXPY points its roofline reads.

Variants for the fleet's tests change the copy, never the fixtures: another host name and run, clocks scaled
as a host held back by its power limit would show them (`all_cores_clock`: the clock with more than one core
active, and the FLOP/s measured under it, times a factor), and energy and temperature readings written into
each point's counters as kernels/src/sensors.c writes them on a host with RAPL (`watts`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DEFAULT_RUN = FIXTURES / "default_run" / "results"
COMPUTE_RUN = FIXTURES / "compute_run"
EXPERIMENTS = ("core_clock", "peak_flops")


def records(experiment: str) -> list[dict]:
    return [json.loads(line) for line in (COMPUTE_RUN / f"{experiment}.jsonl").read_text().splitlines()]


def _scaled(record: dict, factor: float) -> dict:
    record = json.loads(json.dumps(record))
    record["samples"] = [value * factor for value in record["samples"]]
    record["summary"] = {key: value * factor if key != "count" else value for key, value in record["summary"].items()}
    context = record["context"]
    for key in ("clock_ghz", "slowest_thread_ghz", "fastest_thread_ghz", "core_clock_ghz"):
        if key in context:
            context[key] *= factor
    return record


def _with_energy(record: dict, watts: float) -> dict:
    """The counters of a point on a host with RAPL and coretemp: a package at `watts`, its core zone at 80%."""
    record = json.loads(json.dumps(record))
    seconds = record["context"]["precision"]["sampling_s"] if "precision" in record["context"] else 0.1
    zones = [{"zone": "intel-rapl:0", "name": "package-0", "share": 1.0},
             {"zone": "intel-rapl:0:0", "name": "core", "share": 0.8}]
    record["context"]["counters"]["energy"] = {
        "available": True, "reason": None, "seconds": seconds,
        "zones": [{"zone": zone["zone"], "name": zone["name"], "joules": watts * zone["share"] * seconds,
                   "watts": watts * zone["share"], "wrapped": False, "before_uj": 1000,
                   "after_uj": 1000 + round(watts * zone["share"] * seconds * 1e6),
                   "max_energy_range_uj": 262143328850, "reason": None} for zone in zones]}
    record["context"]["counters"]["temperature"] = {
        "available": True, "reason": None,
        "sensors": [{"chip": "coretemp", "label": "Package id 0", "before_c": 48.0, "after_c": 61.0}]}
    return record


def write_bundle(results_dir: Path, host: str = "localhost", run_id: str | None = None,
                 all_cores_clock: float = 1.0, watts: float | None = None) -> Path:
    """A copy of the default run with the compute experiments in results_dir/<run_id>/<host>/; returns it."""
    (source,) = [path for path in DEFAULT_RUN.glob("*/*") if path.is_dir()]
    manifest = json.loads((source / "manifest.json").read_text())
    run_id = run_id or manifest["run_id"]
    bundle = results_dir / run_id / host
    shutil.copytree(source, bundle)
    manifest.update(run_id=run_id, host=host)
    manifest["experiments"] += json.loads((COMPUTE_RUN / "experiments.json").read_text())
    shutil.copytree(COMPUTE_RUN / "raw", bundle / "raw", dirs_exist_ok=True)
    for experiment in EXPERIMENTS:
        written = []
        for record in records(experiment):
            params = record["params"]
            if max(params.get("active_cores", 1), params.get("threads", 1)) > 1:
                record = _scaled(record, all_cores_clock)
            if watts is not None:
                record = _with_energy(record, watts)
            written.append(record)
        (bundle / "results" / f"{experiment}.jsonl").write_text("".join(json.dumps(record) + "\n" for record in written))
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return bundle
