"""A synthetic fleet with known differences, for the tests of the fleet page, `compare` and `outliers`.

Every host's bundle is the real default run (tests/fixtures/default_run: one `make run` on a dev VM) with
its CPU identity replaced and its measured values scaled, so each curve keeps the shape a real machine
drew and the inference reads the same levels from it:

  * three CPU groups (inventory groups raptor_lake, zen3, neoverse: Intel, AMD and Arm identities), each
    with its own latency and bandwidth factor;
  * inside a group every host differs from the others by a factor within +-2% (a real fleet's spread);
  * optionally one host with slow DRAM: latency x1.6 and bandwidth x0.6 at DRAM sizes (working sets from
    64 MiB, where the default run's DRAM plateau starts; the thread sweep, loaded-latency and MLP points
    are all DRAM-sized).

Bundles are written with tests/conftest.py's BundleBuilder (reached through the `bundle_tools` fixture);
only the experiments the fleet compares are kept, with their raw outputs where ingest reads them (fio).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

DEFAULT_RUN = next((Path(__file__).resolve().parent / "fixtures" / "default_run" / "results").glob("*/*"))
EXPERIMENTS = ("latency_sweep", "bandwidth", "thread_sweep", "loaded_latency", "tlb", "mlp", "c2c", "aio", "fio")
DRAM_FROM_BYTES = 64 << 20
SLOW_DRAM_LATENCY, SLOW_DRAM_BANDWIDTH = 1.6, 0.6


@dataclass(frozen=True)
class CpuGroup:
    group: str
    cpu: dict             # replaces facts.cpu's identity fields
    latency: float        # factor on every latency
    bandwidth: float      # factor on every bandwidth
    microarchitecture: str  # what host_identity must name it


GROUPS = (
    CpuGroup("raptor_lake", {"vendor": "GenuineIntel", "family": 6, "model": 0xB7, "stepping": 1,
                             "model_name": "13th Gen Intel(R) Core(TM) i9-13900K"}, 0.8, 1.5, "Raptor Lake"),
    CpuGroup("zen3", {"vendor": "AuthenticAMD", "family": 0x19, "model": 0x21, "stepping": 0,
                      "model_name": "AMD Ryzen 9 5950X 16-Core Processor"}, 1.0, 1.0, "Zen 3 (Vermeer)"),
    CpuGroup("neoverse", {"vendor": "unavailable", "family": None, "model": None, "stepping": None,
                          "model_name": "unavailable", "implementer": "0x41", "parts": ["0xd0c"]}, 1.3, 0.8,
             "Neoverse N1"),
)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _scale_summary(point: dict, factor: float) -> None:
    point["samples"] = [value * factor for value in point["samples"]]
    point["summary"] = {key: value * factor if key != "count" and value is not None else value
                        for key, value in point["summary"].items()}


def _dram_sized(point: dict) -> bool:
    return point["experiment"] in ("thread_sweep", "loaded_latency", "mlp") or \
        (point["params"].get("working_set_bytes") or 0) >= DRAM_FROM_BYTES


def scaled_points(experiment: str, latency: float, bandwidth: float, slow_dram: bool) -> list[dict]:
    """The default run's points of one experiment with latencies and bandwidths scaled (and, for a slow-DRAM
    host, the DRAM-sized ones scaled again)."""
    points = _jsonl(DEFAULT_RUN / "results" / f"{experiment}.jsonl")
    for point in points:
        dram = slow_dram and _dram_sized(point)
        lat = latency * (SLOW_DRAM_LATENCY if dram else 1.0)
        bw = bandwidth * (SLOW_DRAM_BANDWIDTH if dram else 1.0)
        context = point.get("context") or {}
        if point["unit"] == "ns":
            _scale_summary(point, lat)
            for key in ("median_cycles", "paired_difference_median_ns", "paired_difference_min_ns"):
                if isinstance(context.get(key), (int, float)):
                    context[key] *= lat
            if isinstance(context.get("bandwidth_gb_s"), (int, float)):  # a loaded-latency point's load
                context["bandwidth_gb_s"] *= bw
                context["bandwidth_samples"] = [value * bw for value in context.get("bandwidth_samples", [])]
        elif point["unit"] == "GB/s":
            _scale_summary(point, bw)
    return points


def write_host(builder, host: str, group: CpuGroup, *, run_id: str, started_at: str, spread: float = 1.0,
               slow_dram: bool = False, inventory_groups: list[str] | None = None) -> Path:
    """One host's bundle: the default run as a host of `group`, every value times `spread` too."""
    manifest = json.loads((DEFAULT_RUN / "manifest.json").read_text())
    manifest = {**manifest, "host": host, "run_id": run_id, "started_at": started_at, "finished_at": started_at,
                "inventory_groups": inventory_groups if inventory_groups is not None else ["lab", group.group]}
    manifest["facts"] = copy.deepcopy(manifest["facts"])
    cpu = manifest["facts"]["cpu"]
    for key in ("implementer", "parts"):
        cpu.pop(key, None)
    cpu.update({key: value for key, value in group.cpu.items()})
    manifest["facts"]["hostname"] = host
    kept = [experiment for experiment in manifest["experiments"] if experiment["name"] in EXPERIMENTS]
    manifest["experiments"] = [{**experiment, "raw": experiment["raw"] if experiment["name"] == "fio" else []}
                               for experiment in kept]
    results = {f"results/{name}.jsonl": scaled_points(name, group.latency * spread, group.bandwidth * spread,
                                                      slow_dram)
               for name in EXPERIMENTS if (DEFAULT_RUN / "results" / f"{name}.jsonl").is_file()}
    for raw in next(experiment for experiment in kept if experiment["name"] == "fio")["raw"]:
        results[raw["path"]] = (DEFAULT_RUN / raw["path"]).read_text()
    return builder.write(manifest, results=results)


def inventory_groups(hosts: dict[str, CpuGroup]) -> dict[str, list[str]]:
    """Each host's inventory groups as the controller's inventory has them (`ingest --inventory-groups`): the
    groups write_host also writes into its manifest as the host's own claim, which ingest does not read."""
    return {host: ["lab", group.group] for host, group in hosts.items()}


# Per-host spread inside a group: within +-2%, different for every host of a group.
SPREADS = (1.0, 0.985, 1.012, 0.993, 1.019, 0.981, 1.007)


EARLIER_RUN_ID = "20261130T120000Z-0e0e0e"


def write_fleet(builder, hosts_per_group: int = 6, slow_dram_host: str | None = "rpl-03") -> dict[str, CpuGroup]:
    """hosts_per_group hosts of each CPU group (rpl-01.., zen3-01.., n1-01..), one run each; the host named
    `slow_dram_host` gets slow DRAM in its latest run and has an earlier run (EARLIER_RUN_ID) from before
    its DRAM slowed down. Returns host -> its group."""
    prefixes = {"raptor_lake": "rpl", "zen3": "zen3", "neoverse": "n1"}
    hosts = {}
    for group_index, group in enumerate(GROUPS):
        for index in range(hosts_per_group):
            host = f"{prefixes[group.group]}-{index + 1:02d}"
            number = group_index * hosts_per_group + index
            write_host(builder, host, group, run_id=f"20261201T{number // 60:02d}{number % 60:02d}00Z-{number:06x}",
                       started_at=f"2026-12-01T{number // 60:02d}:{number % 60:02d}:00Z",
                       spread=SPREADS[index % len(SPREADS)], slow_dram=host == slow_dram_host)
            if host == slow_dram_host:
                write_host(builder, host, group, run_id=EARLIER_RUN_ID, started_at="2026-11-30T12:00:00Z",
                           spread=SPREADS[index % len(SPREADS)])
            hosts[host] = group
    return hosts

