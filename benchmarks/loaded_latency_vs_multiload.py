#!/usr/bin/env python3
"""Our loaded-latency curve against google/multichase's multiload, in one run.

Usage: benchmarks/loaded_latency_vs_multiload.py [--multichase-src DIR] [--size 512m]
                                                 [--delays 0,50,200,500,1000,2500,5000,20000]

multiload (github:google/multichase; bring it with the `fetch` tool, never commit it) is built from
its bare mirror (default /work/.mirror/google+multichase/repo) with its own Makefile. Its only
delay-injecting load is `stream-triad-nontemporal-injection-delay` (2:1 read:write, non-temporal
stores, `-d N` nops every two lines); ours is `loaded_latency --traffic 2:1` with the stores named by
--stores (nt by default, to match) and `--delays` spin iterations after each group. The delay units
differ, so the curves are compared as (bandwidth, latency) pairs:

- idle latency: multiload `-c simple` vs our idle point (both random chases over --size, 4 KiB pages
  randomised over the whole buffer: multiload gets `-T <size>`);
- peak bandwidth: the largest load bandwidth either reaches;
- latency at matched bandwidth: every multiload point whose bandwidth lies inside our curve's range,
  against our latency interpolated at that bandwidth.

Ratios are ours/multiload. multiload prints MiB/s; they are converted to GB/s (1e9 B/s).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from chase_vs_peer import unpack  # the multichase checkout or bare mirror, as a working tree

PROJECT = Path(__file__).resolve().parents[1]
KERNELS = PROJECT / "kernels" / "build" / "fleetscope-kernels"
MIRROR = Path("/work/.mirror/google+multichase/repo")
MIB = 1024 * 1024


def build_multiload(source: Path, workdir: Path) -> Path:
    if not source.exists():
        raise SystemExit(f"multichase not found at {source}: fetch github:google/multichase or pass "
                         "--multichase-src")
    tree = unpack(source, workdir / "multichase")
    subprocess.run(["make", "-s", "-C", str(tree), "multiload"], check=True, capture_output=True)
    return tree / "multiload"


def multiload(binary: Path, size: str, samples: int, delay: int | None) -> tuple[float, float]:
    """(latency ns, load GB/s) of one multiload run; delay None is the idle chase."""
    argv = [str(binary), "-s", "64", "-T", size, "-m", size, "-n", str(samples)]
    if delay is not None:
        argv += ["-t", "2", "-c", "chaseload", "-l", "stream-triad-nontemporal-injection-delay",
                 "-d", str(delay)]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    row = [cell.strip() for cell in out.strip().splitlines()[-1].split(",")]
    return float(row[3]), float(row[8]) * MIB / 1e9  # ChaseNS, LdAvgMibs


def ours(size: str, delays: str, stores: str, samples: int) -> list[dict]:
    argv = [str(KERNELS), "loaded_latency", "--traffic", "2:1", "--delays", delays, "--size", size,
            "--samples", str(samples), "--min-sample-ms", "100", "--page-policy", "4k"]
    if stores:
        argv += ["--stores", stores]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def interpolate(curve: list[tuple[float, float]], bandwidth: float) -> float | None:
    """Latency of a (bandwidth, latency) curve sorted by bandwidth at `bandwidth`, inside its range."""
    for (b0, l0), (b1, l1) in zip(curve, curve[1:]):
        if b0 <= bandwidth <= b1:
            return l0 if b1 == b0 else l0 + (bandwidth - b0) / (b1 - b0) * (l1 - l0)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--multichase-src", type=Path, default=MIRROR)
    parser.add_argument("--size", default="512m")
    parser.add_argument("--delays", default="0,50,200,500,1000,2500,5000,20000")
    parser.add_argument("--stores", default="nt", help="our load threads' stores (regular or nt)")
    parser.add_argument("--samples", type=int, default=3)
    args = parser.parse_args()
    if not KERNELS.exists():
        subprocess.run(["make", "-s", "-C", str(PROJECT / "kernels")], check=True)
    delays = [int(d) for d in args.delays.split(",")]
    with tempfile.TemporaryDirectory(prefix="fleetscope-multiload-") as tmp:
        binary = build_multiload(args.multichase_src, Path(tmp))
        records = ours(args.size, args.delays, args.stores, max(args.samples, 5))
        peer_idle, _ = multiload(binary, args.size, args.samples, None)
        peer = [(delay, *multiload(binary, args.size, args.samples, delay)) for delay in delays]
    idle = [r for r in records if r["params"]["traffic"] == "idle"]
    loaded = [r for r in records if r["params"]["traffic"] != "idle"]
    our_idle = statistics.median(r["summary"]["median"] for r in idle)
    curve = sorted((r["context"]["bandwidth_gb_s"], r["summary"]["median"]) for r in loaded)
    print(f"ours: loaded_latency --traffic 2:1 --stores {args.stores}, size {args.size}; "
          f"multiload: chaseload + stream-triad-nontemporal-injection-delay, -T {args.size}\n")
    print("| delay (ours) | ours GB/s | ours latency ns | | delay (multiload) | multiload GB/s | multiload ns |")
    print("|---|---|---|---|---|---|---|")
    ours_rows = sorted(loaded, key=lambda r: r["params"]["delay"])
    for i in range(max(len(ours_rows), len(peer))):
        left = ours_rows[i] if i < len(ours_rows) else None
        right = peer[i] if i < len(peer) else None
        lcells = (f"{left['params']['delay']} | {left['context']['bandwidth_gb_s']:.2f} | "
                  f"{left['summary']['median']:.1f}") if left else " | | "
        rcells = f"{right[0]} | {right[2]:.2f} | {right[1]:.1f}" if right else " | | "
        print(f"| {lcells} | | {rcells} |")
    print(f"\nidle latency: ours {our_idle:.1f} ns, multiload {peer_idle:.1f} ns, ratio {our_idle / peer_idle:.3f}")
    ours_peak, peer_peak = max(b for b, _ in curve), max(b for _, _, b in peer)
    print(f"peak load bandwidth: ours {ours_peak:.2f} GB/s, multiload {peer_peak:.2f} GB/s, "
          f"ratio {ours_peak / peer_peak:.3f}")
    matched = [(b, lat, interpolate(curve, b)) for _, lat, b in peer]
    matched = [(b, lat, mine) for b, lat, mine in matched if mine is not None]
    for bandwidth, theirs, mine in matched:
        print(f"at {bandwidth:.2f} GB/s: ours {mine:.1f} ns, multiload {theirs:.1f} ns, ratio {mine / theirs:.3f}")
    if matched:
        print(f"latency at matched bandwidth, median ratio ours/multiload: "
              f"{statistics.median(m / t for _, t, m in matched):.3f} over {len(matched)} points")
    else:
        print("no multiload point lies inside our curve's bandwidth range")
    return 0


if __name__ == "__main__":
    sys.exit(main())
