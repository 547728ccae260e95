#!/usr/bin/env python3
"""Our c2c one-way core-to-core latency next to google/multichase's `pingpong`, in one run.

Usage: benchmarks/c2c_vs_pingpong.py [MULTICHASE] [--cpus 0,1] [--repeats 3] [--json FILE]

MULTICHASE is a multichase checkout or bare git directory (or the MULTICHASE environment
variable; fetch it yourself, nothing of it is committed here). `make pingpong` runs in a temporary
directory, and so does the build of our kernels.

What each tool reports, and how they are made to mean the same thing:
- ours (`c2c`): every sample is ns per ONE-WAY transfer = round-trip time / 2 (an initiator
  writes a number, the responder spins until it sees it and writes it back, the initiator spins
  until it sees the reply; acquire loads, release stores, no pause in the spins). We run it with
  --samples 5 --min-sample-ms 250 to match pingpong's sampling, and show both our best (min)
  sample, which is pingpong's statistic, and our median.
- pingpong (pingpong.c): two threads pinned to the two CPUs hand a word back and forth; each
  successful exchange of the even thread adds 2 to a shared counter (its own handoff and the odd
  thread's reply), so each sample is elapsed ns / handoffs = ns per ONE-WAY transfer, over
  250 ms, and it prints the best (min) of 5 samples. No conversion is needed: both figures are
  one-way. (The counter moves in steps of 20000 handoffs, ~0.4% of a 250 ms sample at 50 ns, so
  the best-of-5 can read up to that much low.) It measures one unordered pair, lower CPU as the
  even thread; we show both of our directions and compare their mean.
  - `-u -r 0`: plain load, compare, plain store, no pause between attempts: the same protocol as
    ours ("peer same method").
  - `-l`: its locked compare-and-swap with its default 10 `pause` per attempt ("peer -l"): the
    pauses and the locked read-for-ownership change what is timed; shown for reference.

The three measurements are interleaved in a shuffled order per repeat. Both tools spin on both
CPUs, so anything else running (a 2-vCPU development VM shared with other work) slows them by
time slicing, by 2x and more: around each measurement the CPU time that other processes used is
taken from /proc/stat minus our children's CPU time, and a repeat in which it exceeded 5% of the
CPUs for any of its three measurements is marked contended. Each figure is the median over the
quiet repeats (over all, with a warning, if none was quiet). Ratios are ours / peer (1.0 = the
same number).
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
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


FOREIGN_LIMIT = 0.05


def busy_seconds() -> float:
    """CPU time the whole guest spent busy (not idle, iowait or steal), all CPUs."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def children_seconds() -> float:
    times = os.times()
    return times.children_user + times.children_system


def foreign_share(measure):
    """Runs measure(); returns its result and the share of the CPUs other processes used."""
    busy, ours, started = busy_seconds(), children_seconds(), time.monotonic()
    result = measure()
    wall = time.monotonic() - started
    foreign = (busy_seconds() - busy) - (children_seconds() - ours)
    return result, max(0.0, foreign) / (wall * (os.cpu_count() or 1))


def build_pingpong(source: Path, workdir: Path) -> Path:
    tree = workdir / "multichase"
    if (source / "HEAD").exists() and not (source / "pingpong.c").exists():  # bare git dir
        tree.mkdir()
        archive = subprocess.run(["git", "--git-dir", str(source), "archive", "HEAD"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    else:
        shutil.copytree(source, tree)
    subprocess.run(["make", "-C", str(tree), "pingpong"], check=True, capture_output=True)
    return tree / "pingpong"


def build_ours(workdir: Path) -> Path:
    tree = workdir / "kernels"
    shutil.copytree(PROJECT / "kernels", tree, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["make", "-C", str(tree)], check=True, capture_output=True)
    return tree / "build" / "fleetscope-kernels"


def ours(binary: Path, a: int, b: int, seed: int) -> dict:
    out = subprocess.run([str(binary), "c2c", "--cpus", f"{a},{b}", "--samples", "5",
                          "--min-sample-ms", "250", "--seed", str(seed)],
                         check=True, capture_output=True, text=True).stdout
    figures = {}
    for line in out.splitlines():
        record = json.loads(line)
        direction = "ab" if record["params"]["cpu_a"] == a else "ba"
        figures[f"{direction}_best"] = record["summary"]["min"]
        figures[f"{direction}_median"] = record["summary"]["median"]
    return figures


def pingpong(binary: Path, a: int, b: int, mode: list[str]) -> float:
    """The one value of pingpong's matrix for the pair, ns per one-way handoff."""
    out = subprocess.run(["taskset", "-c", f"{a},{b}", str(binary), *mode],
                         check=True, capture_output=True, text=True).stdout
    row = f"{min(a, b)}:"
    for line in out.splitlines():
        if line.strip().startswith(row):
            return float(line.split(":", 1)[1].split()[0])
    raise RuntimeError(f"no row {row!r} in pingpong output:\n{out}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("multichase", type=Path, nargs="?",
                        default=os.environ.get("MULTICHASE"),
                        help="multichase checkout or bare git dir (default: $MULTICHASE)")
    parser.add_argument("--cpus", default="0,1", help="the two CPUs, A,B (default 0,1)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args()
    if args.multichase is None:
        parser.error("give the multichase checkout or bare git dir, or set MULTICHASE")
    a, b = (int(cpu) for cpu in args.cpus.split(","))

    repeats: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="fleetscope-bench-") as tmp:
        peer, mine = build_pingpong(args.multichase, Path(tmp)), build_ours(Path(tmp))
        for repeat in range(args.repeats):
            order = ["ours", "peer_same_method", "peer_locked"]
            random.Random(repeat).shuffle(order)
            figures, foreign = {}, 0.0
            for tool in order:
                if tool == "ours":
                    results, share = foreign_share(lambda: ours(mine, a, b, seed=repeat))
                elif tool == "peer_same_method":
                    value, share = foreign_share(lambda: pingpong(peer, a, b, ["-u", "-r", "0"]))
                    results = {tool: value}
                else:
                    value, share = foreign_share(lambda: pingpong(peer, a, b, ["-l"]))
                    results = {tool: value}
                figures.update(results)
                foreign = max(foreign, share)
            repeats.append({"figures": figures, "foreign_cpu_share": foreign,
                            "contended": foreign > FOREIGN_LIMIT})
            print(f"repeat {repeat + 1}/{args.repeats} done, other processes used "
                  f"{100 * foreign:.1f}% of the CPUs", file=sys.stderr)

    quiet = [r for r in repeats if not r["contended"]]
    used = quiet or repeats
    med = {key: statistics.median(r["figures"][key] for r in used) for key in used[0]["figures"]}
    ours_best = (med["ab_best"] + med["ba_best"]) / 2
    ours_median = (med["ab_median"] + med["ba_median"]) / 2
    if not quiet:
        print(f"WARNING: every repeat was contended (other processes used more than "
              f"{100 * FOREIGN_LIMIT:.0f}% of the CPUs): these figures measure time slicing too\n")
    print(f"CPUs {a} and {b}, ns per one-way transfer, median over {len(used)} "
          f"{'quiet ' if quiet else ''}of {len(repeats)} repeats\n")
    print("| figure | ns |")
    print("|---|---|")
    print(f"| ours {a}->{b} best of 5 x 250 ms | {med['ab_best']:.2f} |")
    print(f"| ours {b}->{a} best of 5 x 250 ms | {med['ba_best']:.2f} |")
    print(f"| ours {a}->{b} median of 5 | {med['ab_median']:.2f} |")
    print(f"| ours {b}->{a} median of 5 | {med['ba_median']:.2f} |")
    print(f"| pingpong -u -r 0 (same method), best of 5 x 250 ms | {med['peer_same_method']:.2f} |")
    print(f"| pingpong -l (locked CAS, 10 pauses), best of 5 x 250 ms | {med['peer_locked']:.2f} |")
    print()
    print("| ratio | value |")
    print("|---|---|")
    print(f"| ours best (mean of directions) / pingpong -u -r 0 | "
          f"{ours_best / med['peer_same_method']:.3f} |")
    print(f"| ours median (mean of directions) / pingpong -u -r 0 | "
          f"{ours_median / med['peer_same_method']:.3f} |")
    print(f"| ours best (mean of directions) / pingpong -l | {ours_best / med['peer_locked']:.3f} |")
    print()
    print("| repeat | other processes' CPU share | ours a->b best | ours b->a best | pingpong -u -r 0 | pingpong -l |")
    print("|---|---|---|---|---|---|")
    for number, r in enumerate(repeats, 1):
        f = r["figures"]
        print(f"| {number}{' (contended)' if r['contended'] else ''} | {100 * r['foreign_cpu_share']:.1f}% | "
              f"{f['ab_best']:.2f} | {f['ba_best']:.2f} | {f['peer_same_method']:.2f} | {f['peer_locked']:.2f} |")
    if args.json:
        args.json.write_text(json.dumps(repeats, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
