#!/usr/bin/env python3
"""DRAM bandwidth of our `bandwidth` kernel against STREAM and likwid-bench, in one run.

Usage: benchmarks/bandwidth_vs_stream.py [--stream-src DIR] [--threads 1,2] [--repeats 3]
                                         [--array-elements 40000000]

STREAM (github:jeffhammond/STREAM; bring it with the `fetch` tool, never commit it) is built from
its bare mirror (default /work/.mirror/jeffhammond+STREAM/repo) into a temporary directory with the
compiler and optimisation flags of kernels/Makefile (warning flags dropped, -fopenmp added for its
threads). Each array has --array-elements doubles, far beyond the last-level cache.

Same bytes on both sides: STREAM counts Copy as 16 B and Triad as 24 B per element (no write-allocate),
and so do we (lines moved by the program: two arrays for copy, three for triad). Our working set per
thread is STREAM's bytes for the operation divided by the thread count. STREAM has no read-only
kernel: our read is compared with STREAM's fastest kernel (Copy), and with likwid-bench's `load`.

Each repeat runs STREAM, ours and likwid-bench (where `likwid-bench` is installed and runs in this
VM) back to back, for every thread count, so they share the machine's state; the ratios are taken
per repeat and the median ratio is printed. Compared: STREAM's best rate (its minimum time) against
our best sample, and STREAM's average against our median sample.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
KERNELS = PROJECT / "kernels" / "build" / "fleetscope-kernels"
STREAM_MIRROR = Path("/work/.mirror/jeffhammond+STREAM/repo")
STREAM_BYTES = {"Copy": 16, "Scale": 16, "Add": 24, "Triad": 24}
# likwid-bench test per (op, store): the widest vector form this host runs is picked at start.
LIKWID_TESTS = {("read", "none"): "load", ("copy", "regular"): "copy", ("copy", "nt"): "copy_mem",
                ("triad", "regular"): "stream", ("triad", "nt"): "stream_mem"}


def makefile_flags() -> list[str]:
    """The optimisation and language flags of kernels/Makefile's CFLAGS, without warnings."""
    text = (PROJECT / "kernels" / "Makefile").read_text()
    flags = shlex.split(re.search(r"^CFLAGS\s*=\s*(.*)$", text, re.M).group(1))
    return [flag for flag in flags if not flag.startswith("-W") and flag != "-pthread"]


def build_stream(source: Path, workdir: Path, elements: int) -> tuple[Path, list[str]]:
    if not source.exists():
        raise SystemExit(f"STREAM not found at {source}: bring it with the fetch tool "
                         "(github:jeffhammond/STREAM) or pass --stream-src")
    if (source / "stream.c").exists():
        shutil.copy(source / "stream.c", workdir / "stream.c")
    else:  # a bare git mirror
        blob = subprocess.run(["git", "--git-dir", str(source), "show", "HEAD:stream.c"], check=True,
                              capture_output=True).stdout
        (workdir / "stream.c").write_bytes(blob)
    # STREAM is C89 with gettimeofday: gnu11 keeps the same optimisation without feature-macro noise.
    flags = [("-std=gnu11" if flag.startswith("-std=") else flag) for flag in makefile_flags()]
    command = ["gcc", *flags, "-fopenmp", f"-DSTREAM_ARRAY_SIZE={elements}", "-DNTIMES=20",
               str(workdir / "stream.c"), "-o", str(workdir / "stream")]
    subprocess.run(command, check=True, capture_output=True)
    return workdir / "stream", command


def run_stream(binary: Path, threads: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="spread", OMP_PLACES="cores")
    out = subprocess.run([str(binary)], check=True, capture_output=True, text=True, env=env).stdout
    result = {}
    for name, best, avg in re.findall(r"^(Copy|Scale|Add|Triad):\s+([\d.]+)\s+([\d.]+)", out, re.M):
        elements = int(re.search(r"Array size = (\d+)", out).group(1))
        result[name] = {"best_gb_s": float(best) / 1000,
                        "avg_gb_s": STREAM_BYTES[name] * elements / float(avg) / 1e9}
    if "Solution Validates" not in out:
        raise SystemExit(f"STREAM did not validate:\n{out[-1500:]}")
    return result


def run_ours(op: str, stores: str, per_thread_bytes: int, threads: int, samples: int) -> list[dict]:
    argv = [str(KERNELS), "bandwidth", "--sizes", str(per_thread_bytes), "--threads", str(threads),
            "--samples", str(samples), "--min-sample-ms", "50", "--page-policy", "thp"]
    argv += ["--ops", "none", "--mixes", "100/0"] if op == "read" else ["--ops", op, "--stores", stores]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def likwid_variant(base: str) -> str | None:
    """The widest vector form of a likwid-bench test that runs here (avx512, avx, sse, scalar)."""
    if not shutil.which("likwid-bench"):
        return None
    listing = subprocess.run(["likwid-bench", "-a"], capture_output=True, text=True).stdout
    flags = Path("/proc/cpuinfo").read_text()
    for suffix, flag in (("_avx512", "avx512f"), ("_avx", "avx2"), ("_sse", "sse2"), ("", "")):
        name = base + suffix
        if re.search(rf"^{name} - ", listing, re.M) and (not flag or flag in flags):
            return name
    return None


def run_likwid(test: str, total_bytes: int, threads: int) -> float | None:
    proc = subprocess.run(["likwid-bench", "-t", test, "-w", f"S0:{total_bytes // 1000}kB:{threads}"],
                          capture_output=True, text=True)
    match = re.search(r"^MByte/s:\s+([\d.]+)", proc.stdout, re.M)
    return float(match.group(1)) / 1000 if proc.returncode == 0 and match else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stream-src", type=Path, default=STREAM_MIRROR)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--array-elements", type=int, default=40_000_000)
    parser.add_argument("--samples", type=int, default=10)
    args = parser.parse_args()
    if not KERNELS.exists():
        subprocess.run(["make", "-s", "-C", str(PROJECT / "kernels")], check=True)
    threads_list = [int(t) for t in args.threads.split(",")]
    array_bytes = args.array_elements * 8
    # (label, our op, our stores, STREAM kernel, bytes of STREAM's arrays the op touches)
    cases = [("read", "read", "none", "Copy", 2 * array_bytes),
             ("copy (regular stores)", "copy", "regular", "Copy", 2 * array_bytes),
             ("copy (nt stores)", "copy", "nt", "Copy", 2 * array_bytes),
             ("triad (regular stores)", "triad", "regular", "Triad", 3 * array_bytes),
             ("triad (nt stores)", "triad", "nt", "Triad", 3 * array_bytes)]
    likwid = {key: likwid_variant(base) for key, base in LIKWID_TESTS.items()}
    ratios: dict[tuple, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="fleetscope-stream-") as tmp:
        stream, command = build_stream(args.stream_src, Path(tmp), args.array_elements)
        print(f"STREAM built with: {' '.join(command[:-3])} ...")
        print(f"likwid-bench tests: {likwid}")
        for repeat in range(args.repeats):
            for threads in threads_list:
                peer = run_stream(stream, threads)
                for label, op, stores, kernel, total in cases:
                    records = run_ours(op, stores, total // threads, threads, args.samples)
                    samples = records[0]["samples"]
                    best, median = max(samples), statistics.median(samples)
                    entry = ratios.setdefault((label, threads), {})
                    entry.setdefault("ours_median", []).append(median)
                    entry.setdefault("ours_best", []).append(best)
                    entry.setdefault("stream_best", []).append(peer[kernel]["best_gb_s"])
                    entry.setdefault("best_ratio", []).append(best / peer[kernel]["best_gb_s"])
                    entry.setdefault("median_ratio", []).append(median / peer[kernel]["avg_gb_s"])
                    test = likwid.get((op, stores))
                    value = run_likwid(test, total, threads) if test else None
                    if value:
                        entry.setdefault("likwid", []).append(value)
                        entry.setdefault("likwid_ratio", []).append(median / value)
                    entry["isa"] = records[0]["params"]["isa"]
                    entry["kernel"] = kernel
                print(f"repeat {repeat + 1}/{args.repeats}, {threads} thread(s) done", file=sys.stderr)
    med = statistics.median
    print("\n| ours | threads | isa | ours median GB/s | ours best GB/s | STREAM | STREAM best GB/s | "
          "best/best | median/avg | likwid-bench GB/s | ours/likwid |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (label, threads), entry in ratios.items():
        lk = f"{med(entry['likwid']):.2f} | {med(entry['likwid_ratio']):.3f}" if entry.get("likwid") else "— | —"
        print(f"| {label} | {threads} | {entry['isa']} | {med(entry['ours_median']):.2f} | "
              f"{med(entry['ours_best']):.2f} | {entry['kernel']} | {med(entry['stream_best']):.2f} | "
              f"{med(entry['best_ratio']):.3f} | {med(entry['median_ratio']):.3f} | {lk} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
