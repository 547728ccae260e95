#!/usr/bin/env python3
"""Our chase kernel next to google/multichase at the same working sets, in one run.

Usage: benchmarks/chase_vs_peer.py MULTICHASE [--lmbench LMBENCH] [--sizes 16k,256k,...] [--repeats 3] [--cpu 0]

MULTICHASE is a multichase checkout or bare git directory (fetch it yourself; nothing of it is
committed here). It is built in a temporary directory. Points are interleaved (ours, peer) in a
shuffled size order and repeated; each figure is the median over repeats of each tool's own
reported value (ours: median ns per load; multichase: its printed ns per load).

multichase is run twice per size: with -T equal to the working set (one random cycle over the
whole buffer, the same method as ours) and with its default -T (random within 256 KiB windows,
which keeps DRAM pages open and reads lower in DRAM). The ratio that compares like with like is
ours / multichase(-T size).

With --lmbench (an lmbench checkout or bare git dir, e.g. intel/lmbench), lmbench's lat_mem_rd is
built too (it needs the Sun RPC headers: Debian's libtirpc-dev) and run once per repeat as
`lat_mem_rd -N 1 -t MAX_MB 64` (its randomized "thrash" order, 64-byte stride, on 4 KiB pages); it
sweeps every size up to MAX by itself (slowly: ~4.5 min to 64 MiB on the dev VM, hence
--lmbench-max, default 8 MiB), and each of our sizes takes the row of its sweep closest in log size.
Where it does not build, or a size is beyond --lmbench-max, the column says so.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
SUFFIX = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str) -> int:
    text = text.strip().lower()
    return int(text[:-1]) * SUFFIX[text[-1]] if text[-1] in SUFFIX else int(text)


def unpack(source: Path, tree: Path) -> Path:
    """A working copy of a checkout or of a bare git directory's HEAD."""
    if (source / "HEAD").exists() and (source / "objects").is_dir():  # bare git dir
        tree.mkdir()
        archive = subprocess.run(["git", "--git-dir", str(source), "archive", "HEAD"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    else:
        shutil.copytree(source, tree)
    return tree


def build_multichase(source: Path, workdir: Path) -> Path:
    tree = unpack(source, workdir / "multichase")
    subprocess.run(["make", "-C", str(tree), "multichase"], check=True, capture_output=True)
    return tree / "multichase"


def build_lat_mem_rd(source: Path, workdir: Path) -> Path | None:
    src = unpack(source, workdir / "lmbench") / "src"
    files = ["lat_mem_rd.c", "lib_mem.c", "lib_timing.c", "lib_stats.c", "lib_debug.c", "getopt.c",
             "lib_sched.c", "lib_tcp.c", "lib_udp.c", "lib_unix.c"]
    binary = workdir / "lat_mem_rd"
    built = subprocess.run(["gcc", "-O2", "-DHAVE_uint", "-I/usr/include/tirpc", "-o", str(binary), *files,
                            "-ltirpc", "-lm"], cwd=src, capture_output=True, text=True)
    if built.returncode != 0:
        print(f"lat_mem_rd does not build here: {built.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return binary


def lat_mem_rd(binary: Path, sizes: list[int], cpu: int) -> dict[int, float]:
    """One lat_mem_rd sweep up to the largest size; the row closest to each size (sizes in MB)."""
    out = subprocess.run(["taskset", "-c", str(cpu), str(binary), "-N", "1", "-t", str(max(1, max(sizes) >> 20)), "64"],
                         check=True, capture_output=True, text=True)
    rows = [(float(mb) * (1 << 20), float(ns)) for mb, ns in
            (line.split() for line in out.stderr.splitlines() if line[:1].isdigit())]
    return {size: min(rows, key=lambda row: abs(math.log2(row[0] / size)))[1] for size in sizes}


def build_ours(workdir: Path) -> Path:
    tree = workdir / "kernels"
    shutil.copytree(PROJECT / "kernels", tree, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["make", "-C", str(tree)], check=True, capture_output=True)
    return tree / "build" / "fleetscope-kernels"


def ours(binary: Path, size: int, cpu: int) -> float:
    out = subprocess.run([str(binary), "chase", "--sizes", str(size), "--samples", "11",
                          "--cpu", str(cpu)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["summary"]["median"]


def multichase(binary: Path, size: int, cpu: int, locality: int | None) -> float:
    argv = ["taskset", "-c", str(cpu), str(binary), "-m", str(size), "-s", "64", "-H", "-n", "6"]
    if locality:
        argv += ["-T", str(locality)]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("multichase", type=Path, help="multichase checkout or bare git dir")
    parser.add_argument("--lmbench", type=Path, help="lmbench checkout or bare git dir (for lat_mem_rd)")
    parser.add_argument("--lmbench-max", default="8m", help="largest size lat_mem_rd sweeps to (default 8m)")
    parser.add_argument("--sizes", default="16k,256k,1m,8m,64m,512m")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]

    with tempfile.TemporaryDirectory(prefix="fleetscope-bench-") as tmp:
        peer, mine = build_multichase(args.multichase, Path(tmp)), build_ours(Path(tmp))
        lmbench = build_lat_mem_rd(args.lmbench, Path(tmp)) if args.lmbench else None
        figures = {size: {"ours": [], "peer_same_method": [], "peer_default": [], "lat_mem_rd": []}
                   for size in sizes}
        for repeat in range(args.repeats):
            order = sizes[:]
            random.Random(repeat).shuffle(order)
            for size in order:
                figures[size]["ours"].append(ours(mine, size, args.cpu))
                figures[size]["peer_same_method"].append(multichase(peer, size, args.cpu, size))
                figures[size]["peer_default"].append(multichase(peer, size, args.cpu, None))
                print(f"repeat {repeat + 1}/{args.repeats}: {size >> 10} KiB done", file=sys.stderr)
            if lmbench:
                reach = [size for size in sizes if size <= parse_size(args.lmbench_max)]
                for size, ns in lat_mem_rd(lmbench, reach, args.cpu).items():
                    figures[size]["lat_mem_rd"].append(ns)

    print("| working set | ours ns | multichase -T=size ns | ours/peer | multichase default ns | ours/peer default "
          "| lat_mem_rd -t ns | ours/lat_mem_rd |")
    print("|---|---|---|---|---|---|---|---|")
    for size in sizes:
        med = {k: statistics.median(v) if v else None for k, v in figures[size].items()}
        lm = (f"{med['lat_mem_rd']:.2f} | {med['ours'] / med['lat_mem_rd']:.3f}" if med["lat_mem_rd"]
              else "not run | -")
        print(f"| {size >> 10} KiB | {med['ours']:.2f} | {med['peer_same_method']:.2f} | "
              f"{med['ours'] / med['peer_same_method']:.3f} | {med['peer_default']:.2f} | "
              f"{med['ours'] / med['peer_default']:.3f} | {lm} |")
    if args.json:
        args.json.write_text(json.dumps({str(k): v for k, v in figures.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
