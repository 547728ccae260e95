#!/usr/bin/env python3
"""DRAM bandwidth of our `bandwidth` kernel against STREAM and likwid-bench, in one run.

Usage: benchmarks/bandwidth_vs_stream.py [--stream-src DIR] [--threads 1,2] [--repeats 3]
                                         [--array-elements 40000000] [--isas auto] [--samples 20]

STREAM (github:jeffhammond/STREAM; bring it with the `fetch` tool, never commit it) is built from
its bare mirror (default /work/.mirror/jeffhammond+STREAM/repo) into a temporary directory with the
compiler and optimisation flags of kernels/Makefile (warning flags dropped, -fopenmp added for its
threads), and so is our kernel, from this checkout's kernels/. Each array has --array-elements
doubles, far beyond the last-level cache.

Same bytes on both sides: STREAM counts Copy as 16 B and Triad as 24 B per element (no write-allocate),
and so do we (lines moved by the program: two arrays for copy, three for triad). Our working set per
thread is STREAM's bytes for the operation divided by the thread count. STREAM has no read-only
kernel: our read is compared with STREAM's fastest kernel (Copy), and with likwid-bench's `load`.

What STREAM runs, as this compiler builds it (the script reads STREAM's assembly and prints it): GCC
turns Copy's loop into a call to glibc's memcpy, which streams copies this large with non-temporal
stores, so STREAM's Copy is an nt copy: compare it with our "copy (nt stores)". Triad stays a loop of
scalar 8-byte loads and stores (the OpenMP-split loop has an unknown trip count, which GCC's -O2
cost model does not vectorise), the like of our "triad (regular stores)".

Our kernel runs with `--isa auto` (what the kernels role runs) unless --isas names others, e.g.
`--isas auto,avx512` to show what AVX-512 does here. Both sides take their best of the same number
of timings (--samples, STREAM's NTIMES).

How busy the machine was: each measurement (STREAM, ours, likwid) is wrapped in a reading of
/proc/stat: the CPU time other processes took during it (busy ticks less our children's CPU time)
as a share of all CPUs, and the steal ticks. A repeat in which any measurement saw more than
FOREIGN_LIMIT of the CPUs busy elsewhere is marked contended; the figures are medians over the quiet
repeats (over all of them, with a warning, if none was quiet). The load averages at the start and the
end are printed too. On a busy 2-vCPU guest one thread's triad read 0.67x STREAM: without the load
figures a number like that cannot be read.

Compared: STREAM's best rate (its minimum time) against our best sample ("best/best"), and STREAM's
average against our median sample ("median/avg"); per repeat, then the median over repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
STREAM_MIRROR = Path("/work/.mirror/jeffhammond+STREAM/repo")
STREAM_BYTES = {"Copy": 16, "Scale": 16, "Add": 24, "Triad": 24}
# likwid-bench test per (op, store): the widest vector form this host runs is picked at start.
LIKWID_TESTS = {("read", "none"): "load", ("copy", "regular"): "copy", ("copy", "nt"): "copy_mem",
                ("triad", "regular"): "stream", ("triad", "nt"): "stream_mem"}
FOREIGN_LIMIT = 0.05


def makefile_flags() -> list[str]:
    """The optimisation and language flags of kernels/Makefile's CFLAGS, without warnings."""
    text = (PROJECT / "kernels" / "Makefile").read_text()
    flags = shlex.split(re.search(r"^CFLAGS\s*=\s*(.*)$", text, re.M).group(1))
    return [flag for flag in flags if not flag.startswith("-W") and flag != "-pthread"]


def build_stream(source: Path, workdir: Path, elements: int, ntimes: int) -> tuple[Path, list[str], dict]:
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
    command = ["gcc", *flags, "-fopenmp", f"-DSTREAM_ARRAY_SIZE={elements}", f"-DNTIMES={ntimes}",
               str(workdir / "stream.c"), "-o", str(workdir / "stream")]
    subprocess.run(command, check=True, capture_output=True)
    subprocess.run([*command[:-2], "-S", "-o", str(workdir / "stream.s")], check=True, capture_output=True)
    return workdir / "stream", command, stream_loops((workdir / "stream.s").read_text())


def stream_loops(assembly: str) -> dict:
    """What the compiler made of STREAM's Copy and Triad (x86 assembly): Copy a memcpy call or a loop;
    Triad's store width (movsd = 8 bytes, movupd/movapd = 16, vmovupd ymm = 32 ...)."""
    functions = re.split(r"\n(?=main\._omp_fn\.\d+:)", assembly)
    copy = next((f for f in functions if re.search(r"\b(jmp|call)\s+memcpy", f)), None)
    triad = [f for f in functions if re.search(r"\bv?mul[sp]d\b", f) and re.search(r"\bv?add[sp]d\b", f)]
    store = None
    if triad:
        stores = re.findall(r"\b(v?mov(?:sd|[ua]pd))\s+%([xyz]mm)\d+,\s*\(", triad[-1])
        if stores:
            mnemonic, register = stores[-1]
            store = 8 if mnemonic.endswith("sd") else {"xmm": 16, "ymm": 32, "zmm": 64}[register]
    return {"copy": "memcpy call (glibc: non-temporal stores at this size)" if copy else "loop",
            "triad_store_bytes": store}


def build_ours(workdir: Path) -> Path:
    tree = workdir / "kernels"
    shutil.copytree(PROJECT / "kernels", tree, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["make", "-C", str(tree), "-j2"], check=True, capture_output=True)
    return tree / "build" / "fleetscope-kernels"


def cpu_ticks() -> tuple[float, float]:
    """(busy, steal) CPU seconds of the whole guest, all CPUs, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    hz = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq) / hz, steal / hz


def children_seconds() -> float:
    times = os.times()
    return times.children_user + times.children_system


def measured(measure):
    """Runs measure(); returns its result, the share of the CPUs other processes used meanwhile, and
    the share stolen by the hypervisor."""
    (busy, steal), ours, started = cpu_ticks(), children_seconds(), time.monotonic()
    result = measure()
    wall = time.monotonic() - started
    (busy_after, steal_after), cpus = cpu_ticks(), os.cpu_count() or 1
    foreign = max(0.0, (busy_after - busy) - (children_seconds() - ours))
    return result, foreign / (wall * cpus), (steal_after - steal) / (wall * cpus)


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


def run_ours(binary: Path, op: str, stores: str, per_thread_bytes: int, threads: int, samples: int,
             isa: str) -> dict:
    argv = [str(binary), "bandwidth", "--sizes", str(per_thread_bytes), "--threads", str(threads),
            "--samples", str(samples), "--min-sample-ms", "50", "--page-policy", "thp", "--isa", isa]
    argv += ["--ops", "none", "--mixes", "100/0"] if op == "read" else ["--ops", op, "--stores", stores]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    (record,) = [json.loads(line) for line in out.splitlines() if line.strip()]
    return record


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
    parser.add_argument("--samples", type=int, default=20, help="our samples per point and STREAM's NTIMES")
    parser.add_argument("--isas", default="auto", help="our --isa values to run, comma-separated (default auto)")
    parser.add_argument("--ops", default="read,copy,triad", help="which of read, copy, triad to compare")
    args = parser.parse_args()
    threads_list = [int(t) for t in args.threads.split(",")]
    isas = args.isas.split(",")
    array_bytes = args.array_elements * 8
    # (label, our op, our stores, STREAM kernel, bytes of STREAM's arrays the op touches)
    cases = [case for case in [("read", "read", "none", "Copy", 2 * array_bytes),
                               ("copy (regular stores)", "copy", "regular", "Copy", 2 * array_bytes),
                               ("copy (nt stores)", "copy", "nt", "Copy", 2 * array_bytes),
                               ("triad (regular stores)", "triad", "regular", "Triad", 3 * array_bytes),
                               ("triad (nt stores)", "triad", "nt", "Triad", 3 * array_bytes)]
             if case[1] in args.ops.split(",")]
    likwid = {key: likwid_variant(base) for key, base in LIKWID_TESTS.items()}
    rows: dict[tuple, list[dict]] = {}   # (label, isa, threads) -> one entry per repeat
    contention: list[dict] = []          # per repeat: the busiest measurement's foreign and steal shares
    # A SIGTERM (timeout, flock's end) unwinds like Ctrl-C, so the temporary directory is removed
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="fleetscope-stream-") as tmp:
        stream, command, loops = build_stream(args.stream_src, Path(tmp), args.array_elements, args.samples)
        ours = build_ours(Path(tmp))
        print(f"STREAM built with: {' '.join(command[:-3])} ...")
        print(f"STREAM as compiled: Copy is a {loops['copy']}; Triad stores "
              f"{loops['triad_store_bytes'] or '?'} bytes at a time")
        print(f"likwid-bench tests: {likwid}")
        print(f"load average at the start: {load_start[0]:.2f} (1 min), {load_start[1]:.2f} (5 min) on "
              f"{os.cpu_count()} CPUs", flush=True)
        for repeat in range(args.repeats):
            shares = []
            for threads in threads_list:
                peer, foreign, steal = measured(lambda: run_stream(stream, threads))
                shares.append((foreign, steal, "STREAM"))
                order = [(case, isa) for case in cases for isa in isas]
                random.Random(repeat * 100 + threads).shuffle(order)
                for (label, op, stores, kernel, total), isa in order:
                    record, foreign, steal = measured(
                        lambda: run_ours(ours, op, stores, total // threads, threads, args.samples, isa))
                    shares.append((foreign, steal, f"ours {label} {isa}"))
                    samples = record["samples"]
                    best, median = max(samples), statistics.median(samples)
                    entry = {"repeat": repeat, "ours_median": median, "ours_best": best,
                             "stream_best": peer[kernel]["best_gb_s"], "stream_avg": peer[kernel]["avg_gb_s"],
                             "best_ratio": best / peer[kernel]["best_gb_s"],
                             "median_ratio": median / peer[kernel]["avg_gb_s"],
                             "isa": record["params"]["isa"], "kernel": kernel,
                             "probe": (record["context"].get("isa_auto") or {}).get("comparisons")}
                    test = likwid.get((op, stores))
                    if test:
                        value, foreign, steal = measured(lambda: run_likwid(test, total, threads))
                        shares.append((foreign, steal, f"likwid {test}"))
                        if value:
                            entry.update(likwid=value, likwid_ratio=median / value)
                    rows.setdefault((label, isa, threads), []).append(entry)
            worst = max(shares)
            contention.append({"repeat": repeat, "foreign": worst[0], "steal": max(s[1] for s in shares),
                               "where": worst[2], "quiet": worst[0] <= FOREIGN_LIMIT})
            print(f"repeat {repeat + 1}/{args.repeats}: other processes used up to {100 * worst[0]:.1f}% of the "
                  f"CPUs (during {worst[2]}), steal up to {100 * contention[-1]['steal']:.1f}%: "
                  f"{'quiet' if contention[-1]['quiet'] else 'CONTENDED'}", file=sys.stderr, flush=True)
    load_end = os.getloadavg()
    quiet = {c["repeat"] for c in contention if c["quiet"]}
    used = quiet or {c["repeat"] for c in contention}
    med = statistics.median
    foreign = ", ".join(f"{100 * c['foreign']:.1f}%" for c in contention)
    steal = ", ".join(f"{100 * c['steal']:.1f}%" for c in contention)
    print(f"\nload average at the end: {load_end[0]:.2f} (1 min), {load_end[1]:.2f} (5 min); other processes' "
          f"share of the CPUs per repeat (the busiest measurement): {foreign}; steal: {steal}")
    if quiet:
        print(f"figures: medians over the {len(quiet)} quiet repeat(s) of {args.repeats} "
              f"(quiet: no measurement saw more than {100 * FOREIGN_LIMIT:.0f}% of the CPUs busy elsewhere)")
    else:
        print(f"WARNING: no repeat was quiet (every one saw more than {100 * FOREIGN_LIMIT:.0f}% of the CPUs busy "
              "elsewhere): the figures are medians over all repeats and read low")
    print("\n| ours | isa | threads | ours median GB/s | ours best GB/s | STREAM | STREAM best GB/s | "
          "best/best | median/avg | likwid-bench GB/s | ours/likwid |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    labels = [case[0] for case in cases]
    for (label, isa, threads), entries in sorted(rows.items(), key=lambda item: (
            item[0][2], labels.index(item[0][0]), isas.index(item[0][1]))):
        entries = [e for e in entries if e["repeat"] in used]
        isa_ran = entries[0]["isa"] + (f" ({isa})" if isa != entries[0]["isa"] else "")
        lk = [e for e in entries if "likwid" in e]
        likwid_cells = (f"{med([e['likwid'] for e in lk]):.2f} | {med([e['likwid_ratio'] for e in lk]):.3f}"
                        if lk else "— | —")
        print(f"| {label} | {isa_ran} | {threads} | {med([e['ours_median'] for e in entries]):.2f} | "
              f"{med([e['ours_best'] for e in entries]):.2f} | {entries[0]['kernel']} | "
              f"{med([e['stream_best'] for e in entries]):.2f} | {med([e['best_ratio'] for e in entries]):.3f} | "
              f"{med([e['median_ratio'] for e in entries]):.3f} | {likwid_cells} |")
    ratios: dict[str, list[float]] = {}
    for entries in rows.values():
        for entry in entries:
            for comparison in entry["probe"] or []:
                ratios.setdefault(f"{comparison['wide']}/{comparison['narrow']}", []).append(comparison["ratio"])
    if ratios:
        print("auto's L1-resident read probe, wide/narrow (min-max over its runs; a width is taken at >= 1.5): "
              + ", ".join(f"{pair} {min(values):.2f}-{max(values):.2f}" for pair, values in ratios.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
