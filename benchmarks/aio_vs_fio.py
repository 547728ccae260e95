#!/usr/bin/env python3
"""Our aio kernel next to fio on the same file, engine and queue depth, interleaved.

Usage: benchmarks/aio_vs_fio.py [--size 256m] [--engines blocking,posix_aio,io_uring]
                                [--queue-depths 1,2,4,8,16,32] [--repeats 2] [--window-ms 100]
                                [--samples 10] [--directory /var/tmp]

One scratch file (random data, written and fsynced here, removed at the end whatever happens) is read
by both tools with 4 KiB random reads and O_DIRECT:

    ours                                     fio
    aio --engines blocking   --queue-depths k    --ioengine=psync    --numjobs=k --group_reporting
    aio --engines posix_aio  --queue-depths k    --ioengine=posixaio --iodepth=k
    aio --engines io_uring   --queue-depths k    --ioengine=io_uring --iodepth=k

Each run measures the same time: ours --samples windows of --window-ms after one warm-up window, fio
--runtime of samples x window after a --ramp_time of one window (norandommap, uniform random offsets
like ours). For every repeat the (engine, depth) pairs run in a shuffled order, the two tools of a pair back to
back in a random order, so drift on a shared machine falls on both alike. Printed per engine and
depth: the median over repeats of each tool's MB/s (ours: the mean of its windows, i.e. bytes over the
measured time, as fio reports), of the paired ours/fio MB/s ratio, and of the mean and p99 latency from
submission to completion (fio's lat).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
FIO_ENGINES = {"blocking": "psync", "posix_aio": "posixaio", "io_uring": "io_uring"}
BLOCK = 4096


def build_kernels(workdir: Path) -> Path:
    source = workdir / "kernels"
    shutil.copytree(PROJECT / "kernels", source, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["make", "-s", "-C", str(source)], check=True)
    return source / "build" / "fleetscope-kernels"


def size_bytes(text: str) -> int:
    factor = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1].lower(), 1)
    return int(text.rstrip("kKmMgG")) * factor


def lay_out(path: Path, size: int) -> None:
    with open(path, "wb") as file:
        for _ in range(size // (1 << 20)):
            file.write(os.urandom(1 << 20))
        file.flush()
        os.fsync(file.fileno())


def run_ours(binary: Path, path: Path, engine: str, depth: int, args) -> dict:
    proc = subprocess.run([str(binary), "aio", "--file", str(path), "--engines", engine, "--queue-depths", str(depth),
                           "--direct", "on", "--samples", str(args.samples), "--min-sample-ms", str(args.window_ms)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"aio kernel failed ({engine} qd {depth}): {proc.stderr.strip()}")
    record = json.loads(proc.stdout)
    return {"mb_s": record["summary"]["mean"], "mean_us": record["context"]["latency_mean_us"],
            "p99_us": record["context"]["latency_p99_us"]}


def run_fio(path: Path, engine: str, depth: int, args) -> dict:
    fio_engine = FIO_ENGINES[engine]
    # blocking: k threads with one read each, as ours (fio's jobs are processes unless --thread)
    parallel = ["--numjobs", str(depth), "--thread", "--group_reporting", "--iodepth", "1"] \
        if engine == "blocking" else ["--iodepth", str(depth)]
    runtime_ms = args.samples * args.window_ms
    proc = subprocess.run(["fio", "--name=aio_vs_fio", f"--filename={path}", "--rw=randread", f"--bs={BLOCK}",
                           "--direct=1", f"--ioengine={fio_engine}", *parallel, "--time_based",
                           f"--runtime={runtime_ms}ms", f"--ramp_time={args.window_ms}ms", "--norandommap",
                           "--randrepeat=0", "--lat_percentiles=1", "--percentile_list=99",
                           "--output-format=json", "--eta=never"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"fio failed ({fio_engine} qd {depth}): {proc.stderr.strip()[-500:]}")
    read = json.loads(proc.stdout[proc.stdout.index("{"):])["jobs"][0]["read"]
    percentiles = read["lat_ns"].get("percentile", {})
    return {"mb_s": read["bw_bytes"] / 1e6, "mean_us": read["lat_ns"]["mean"] / 1e3,
            "p99_us": percentiles.get("99.000000", float("nan")) / 1e3}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="256m")
    parser.add_argument("--engines", default="blocking,posix_aio,io_uring")
    parser.add_argument("--queue-depths", default="1,2,4,8,16,32")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--window-ms", type=int, default=100)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--directory", default="/var/tmp")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    engines = args.engines.split(",")
    depths = [int(depth) for depth in args.queue_depths.split(",")]
    results: dict[tuple, dict[str, list]] = {}
    with tempfile.TemporaryDirectory(prefix="aio-vs-fio-") as tmp:
        binary = build_kernels(Path(tmp))
        handle, name = tempfile.mkstemp(prefix="aio-vs-fio-", suffix=".dat", dir=args.directory)
        os.close(handle)
        path = Path(name)
        try:
            lay_out(path, size_bytes(args.size))
            rng = random.Random(args.seed)
            for _ in range(args.repeats):
                pairs = [(engine, depth) for engine in engines for depth in depths]
                rng.shuffle(pairs)
                for engine, depth in pairs:
                    # the two tools back to back, in a random order: a pair shares the machine's state
                    entry = results.setdefault((engine, depth), {"ours": [], "fio": [], "ratio": []})
                    measured = {}
                    for tool in rng.sample(["ours", "fio"], 2):
                        measured[tool] = run_ours(binary, path, engine, depth, args) if tool == "ours" else \
                            run_fio(path, engine, depth, args)
                        entry[tool].append(measured[tool])
                    entry["ratio"].append(measured["ours"]["mb_s"] / measured["fio"]["mb_s"])
        finally:
            path.unlink(missing_ok=True)
    print(f"## aio vs fio: 4 KiB random reads, O_DIRECT, {args.size} file, {args.samples} x {args.window_ms} ms "
          f"per run, {args.repeats} interleaved repeats (medians)")
    print("| engine (fio engine) | QD | ours MB/s | fio MB/s | ours/fio MB/s (paired) | ours mean µs | fio mean µs "
          "| ours p99 µs | fio p99 µs | ours/fio p99 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for engine in engines:
        for depth in depths:
            entry = results[(engine, depth)]
            median = {tool: {key: statistics.median(m[key] for m in entry[tool]) for key in ("mb_s", "mean_us", "p99_us")}
                      for tool in ("ours", "fio")}
            ratio = statistics.median(entry["ratio"])
            ratios.append(ratio)
            print(f"| {engine} ({FIO_ENGINES[engine]}) | {depth} | {median['ours']['mb_s']:.1f} | "
                  f"{median['fio']['mb_s']:.1f} | {ratio:.3f} | {median['ours']['mean_us']:.1f} | "
                  f"{median['fio']['mean_us']:.1f} | {median['ours']['p99_us']:.1f} | {median['fio']['p99_us']:.1f} | "
                  f"{median['ours']['p99_us'] / median['fio']['p99_us']:.3f} |")
    inside = sum(0.9 <= ratio <= 1.1 for ratio in ratios)
    print(f"\nthroughput ratio ours/fio: median {statistics.median(ratios):.3f}, range "
          f"{min(ratios):.3f}..{max(ratios):.3f}; {inside} of {len(ratios)} within ±10%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
