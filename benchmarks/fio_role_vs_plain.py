#!/usr/bin/env python3
"""The fio role's jobs against a plain fio command line with the same parameters, interleaved.

Usage: benchmarks/fio_role_vs_plain.py [--profile quick] [--repeats 3] [--bundle DIR] [--jobs a,b]

1. The role's job file: a real `ansible-playbook site.yml --tags fio` run (holding
   /tmp/fleetscope-playbook.lock, whose file it removes afterwards, and writing into a temporary
   directory) leaves `raw/fio/jobs.fio` in its bundle, with the engine and O_DIRECT mode the role's
   probes chose; `--bundle` reuses a bundle of an earlier run instead.
2. A scratch file of the job file's size is written once in /var/tmp (removed at the end), and the
   job file's `filename=` is pointed at it: every other line stays as the role rendered it.
3. For each repeat and each job, in alternating order: ours = `fio --section=<job> jobs.fio`; plain =
   `fio --name=<job> --filename --size --ioengine --direct --rw --bs --iodepth [--rwmixread]
   --time_based --runtime --ramp_time --lat_percentiles=1 --percentile_list`, i.e. without the job
   file's randrepeat=0, norandommap=1, group_reporting, numjobs=1.

Printed: per job and direction the medians over repeats of p50 / p99 / p99.9 total latency (fio's
`lat`: submission to completion) and IOPS for both, and the ratios ours/plain (median of the
per-repeat ratios), then the geometric mean of each ratio over all jobs.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "tests" / "lab"))

from fleetscope.ingest.parsers import fio as fio_parser  # noqa: E402
from lab import LOCALHOST_RUN_LOCK, localhost_run_lock  # noqa: E402  (tests/lab is not a package)

PLAYBOOK = PROJECT / ".venv" / "bin" / "ansible-playbook"
METRICS = (("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9))


def role_bundle(profile: str, workdir: Path) -> Path:
    extra = {"fleet_profile": profile, "fleet_results_dir": str(workdir / "results"),
             "fleet_warehouse": str(workdir / "fleet.duckdb"), "fleet_reports_dir": str(workdir / "reports")}
    argv = [str(PLAYBOOK), "site.yml", "--tags", "fio", "-e", json.dumps(extra)]
    print(f"running the role under {LOCALHOST_RUN_LOCK}: {' '.join(argv[:5])} ... ({profile})", file=sys.stderr)
    with localhost_run_lock():  # removes the lock file when done
        proc = subprocess.run(argv, cwd=PROJECT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"site.yml --tags fio failed:\n{proc.stdout[-3000:]}")
    (manifest,) = (workdir / "results").glob("*/*/manifest.json")
    return manifest.parent


def read_job_file(bundle: Path) -> tuple[dict, dict[str, dict], str]:
    """([global] options, {job: options}, the file's text) of raw/fio/jobs.fio."""
    text = (bundle / "raw" / "fio" / "jobs.fio").read_text()
    sections: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith("["):
            current = sections.setdefault(line[1:-1], {})
        else:
            key, _, value = line.partition("=")
            current[key] = value
    return sections.pop("global"), sections, text


def run_fio(argv: list[str], output: Path) -> dict:
    proc = subprocess.run([*argv, "--output-format=json", f"--output={output}", "--eta=never"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"fio failed ({' '.join(argv)}):\n{proc.stderr[-2000:]}")
    (job,) = fio_parser.parse(output.read_text(), str(output))["jobs"]
    numbers = {}
    for direction in job["directions"]:
        percentiles = {p["percentile"]: p["value_ns"] for p in direction["percentiles"] if p["kind"] == "lat"}
        numbers[direction["direction"]] = {"iops": direction["iops"],
                                           **{name: percentiles[point] for name, point in METRICS}}
    return numbers


def plain_argv(fio: str, name: str, common: dict, job: dict, target: Path) -> list[str]:
    argv = [fio, f"--name={name}", f"--filename={str(target).replace(':', chr(92) + ':')}", f"--size={common['size']}",
            f"--ioengine={common['ioengine']}", f"--direct={common['direct']}", f"--rw={job['rw']}", f"--bs={job['bs']}",
            f"--iodepth={job['iodepth']}", "--time_based", f"--runtime={common['runtime']}",
            f"--ramp_time={common['ramp_time']}", "--lat_percentiles=1", f"--percentile_list={common['percentile_list']}"]
    if "rwmixread" in job:
        argv.append(f"--rwmixread={job['rwmixread']}")
    return argv


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="quick", choices=["quick", "standard", "full"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bundle", type=Path, help="a bundle of an earlier fio run (skips the playbook)")
    parser.add_argument("--jobs", help="comma-separated job names (default: every job of the job file)")
    args = parser.parse_args()
    fio = shutil.which("fio") or raise_missing()

    with tempfile.TemporaryDirectory(prefix="fio-role-vs-plain-", dir="/var/tmp") as tmp:
        workdir = Path(tmp)
        bundle = args.bundle or role_bundle(args.profile, workdir / "role")
        common, jobs, text = read_job_file(bundle)
        names = args.jobs.split(",") if args.jobs else list(jobs)
        target = workdir / "scratch.dat"
        subprocess.run([fio, "--name=layout", f"--filename={target}", f"--size={common['size']}", "--rw=write",
                        "--bs=1048576", "--ioengine=psync", "--fallocate=none", "--end_fsync=1",
                        "--output-format=json"], check=True, capture_output=True)
        job_file = workdir / "jobs.fio"
        job_file.write_text(re.sub(r"(?m)^filename=.*$", lambda _: "filename=" + str(target).replace(":", "\\:"), text))
        print(f"role job file from {bundle}: ioengine={common['ioengine']} direct={common['direct']} "
              f"runtime={common['runtime']} s ramp={common['ramp_time']} s size={common['size']}; "
              f"{len(names)} jobs x {args.repeats} repeats, interleaved", file=sys.stderr)

        samples: dict[tuple[str, str], dict[str, list]] = {}
        for repeat in range(args.repeats):
            for index, name in enumerate(names):
                variants = [("ours", [fio, f"--section={name}", str(job_file)]),
                            ("plain", plain_argv(fio, name, common, jobs[name], target))]
                if (repeat + index) % 2:
                    variants.reverse()
                for variant, argv in variants:
                    numbers = run_fio(argv, workdir / f"{variant}-{name}-{repeat}.json")
                    for direction, values in numbers.items():
                        slot = samples.setdefault((name, direction), {"ours": [], "plain": []})
                        slot[variant].append(values)
                print(f"  repeat {repeat + 1}: {name} done", file=sys.stderr)

    keys = [name for name, _ in METRICS] + ["iops"]
    print(f"| job | direction | {' | '.join(f'ours {k}' for k in keys)} | "
          f"{' | '.join(f'plain {k}' for k in keys)} | {' | '.join(f'{k} ours/plain' for k in keys)} |")
    print("|---|---|" + "---|" * (3 * len(keys)))
    all_ratios: dict[str, list[float]] = {key: [] for key in keys}
    for (name, direction), slot in samples.items():
        ours = {key: statistics.median(v[key] for v in slot["ours"]) for key in keys}
        plain = {key: statistics.median(v[key] for v in slot["plain"]) for key in keys}
        ratios = {key: statistics.median(o[key] / p[key] for o, p in zip(slot["ours"], slot["plain"])) for key in keys}
        for key in keys:
            all_ratios[key].append(ratios[key])
        cells = [f"{ours[k] / 1000:.1f} µs" if k != "iops" else f"{ours[k]:.0f}" for k in keys]
        cells += [f"{plain[k] / 1000:.1f} µs" if k != "iops" else f"{plain[k]:.0f}" for k in keys]
        cells += [f"{ratios[k]:.3f}" for k in keys]
        print(f"| {name} | {direction} | " + " | ".join(cells) + " |")
    print()
    print(f"ours/plain over {len(all_ratios['iops'])} job directions x {args.repeats} repeats: geometric mean "
          "(lowest .. highest job):")
    for key, values in all_ratios.items():
        mean = math.exp(statistics.fmean(math.log(r) for r in values))
        print(f"  {key:>6}: {mean:.3f} ({min(values):.3f} .. {max(values):.3f})")
    return 0


def raise_missing() -> str:
    raise SystemExit("fio is not installed")


if __name__ == "__main__":
    sys.exit(main())
