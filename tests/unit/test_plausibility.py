"""Plausibility flags: each docs/methods.md rule fires on a crafted bundle that breaks it, stays clear on a clean
one, and a rule that cannot run says why (never silently skipped). Flags land on the host page beside
the section holding the number."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import duckdb
import pytest

from fleetscope.analyze.plausibility import BIMODAL_MAX_SAMPLES, Run, point_noise, size_off_stated

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "mlc_samples"
RULES = {"dram_chase_too_fast", "first_plateau_above_l1_hit", "bandwidth_above_dram_peak", "firmware_claims_disagree",
         "huge_pages_not_granted", "loaded_idle_far_above_idle", "loaded_below_idle", "stride_bytes_counted",
         "nt_write_far_above_read", "experiments_disagree", "storage_littles_law", "threads_shared_one_cpu",
         "noisy_point", "bimodal_point", "canary_drift", "measured_while_throttling",
         "plan_overshoot", "size_off_stated", "load_never_ran", "tlb_below_control", "c2c_asymmetric"}


def point(experiment: str, kernel: str, params: dict, ns: float, context: dict | None = None) -> dict:
    samples = [ns, ns * 1.01, ns * 1.02]
    return {"schema_version": 1, "experiment": experiment, "kernel": kernel, "metric": "latency", "unit": "ns",
            "params": params, "samples": samples,
            "summary": {"min": samples[0], "median": samples[1], "mean": samples[1], "ci95_low": samples[0],
                        "ci95_high": samples[2], "count": 3},
            "context": context or {}}


def zero_queue_dram(ns: float) -> dict:
    return point("zero_queue", "zero_queue", {"level": "DRAM", "working_set_bytes": 268435456, "page_policy": "thp",
                                              "huge_bytes_granted": 268435456, "sysfs_size_bytes": None}, ns)


def pattern_stride(stride: int, footprint_per_line: int) -> list[dict]:
    lines = 1 << 20
    return [point("pattern_stride", "pattern_stride",
                  {"pattern": pattern, "stride_bytes": stride, "line_bytes": 64, "lines_touched": lines,
                   "footprint_bytes": lines * footprint_per_line, "working_set_bytes": lines * stride,
                   "footprint_capped": False, "page_policy": "thp"}, 150.0)
            for pattern in ("random_cycle", "sequential")]


def load(bundles, cli, tmp_path, *, manifest=None, results=None, mlc: tuple[str, ...] = (),
         mlc_params: dict[str, dict] | None = None) -> duckdb.DuckDBPyConnection:
    manifest = manifest or bundles.manifest()
    results = results or {"results/latency_sweep.jsonl": bundles.latency_points()}
    for path in results:
        name = Path(path).stem
        if name != "latency_sweep":
            manifest["experiments"].append({"name": name, "status": "ok", "file": path, "error": None, "wall_s": 1.0})
    if mlc:
        manifest["experiments"].append({"name": "mlc", "status": "ok", "file": None, "error": None, "wall_s": 1.0,
                                        "notes": [], "raw": [{"path": f"raw/mlc/{name}", "tool": "mlc",
                                                                 **({"params": mlc_params[name]}
                                                                    if name in (mlc_params or {}) else {})}
                                                                for name in mlc]})
        results = {**results, **{f"raw/mlc/{name}": (SAMPLES / name).read_text() for name in mlc}}
    bundles.write(manifest, results=results)
    db = tmp_path / "fleet.duckdb"
    proc = cli("ingest", bundles.results_dir, "--db", db)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return duckdb.connect(str(db), read_only=True)


def by_rule(rows: list[dict]) -> dict[str, dict]:
    return {row["rule"]: row for row in rows}


def flags(connection, rule: str | None = None) -> list[dict]:
    cursor = connection.execute("SELECT * FROM flags" + (" WHERE rule = ?" if rule else ""), [rule] if rule else [])
    columns = [description[0] for description in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def test_a_clean_run_has_every_rule_and_no_flag(bundles, cli, tmp_path):
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/zero_queue.jsonl": [zero_queue_dram(150.0)],
               "results/pattern_stride.jsonl": pattern_stride(1024, 64)}
    manifest = bundles.manifest()
    # the synthetic curve is a guest's: its L3 share ends at 3 MiB, so its sysfs says so too (beside the host's
    # 32 MiB, size_off_stated flags it, as the next tests show)
    manifest["facts"]["caches"][-1]["size_bytes"] = 3 * 1024 * 1024
    rows = flags(load(bundles, cli, tmp_path, manifest=manifest, results=results))
    assert {row["rule"] for row in rows} == RULES
    assert [row for row in rows if row["status"] == "flagged"] == []
    assert by_rule(rows)["size_off_stated"]["value"] == 1.0
    by = {(row["rule"], row["subject"]): row for row in rows}
    assert by[("dram_chase_too_fast", "latency_curve")]["status"] == "clear"
    assert by[("dram_chase_too_fast", "zero_queue_levels")]["value"] == 150.0
    assert by[("huge_pages_not_granted", "latency_curve")]["status"] == "clear"
    assert by[("stride_bytes_counted", "pattern_stride_latency")]["status"] == "clear"
    # rules that could not run say why: no DIMMs (a VM), no bandwidth measured, no loaded-latency curve
    assert "no DIMMs in the facts (dmidecode: no SMBIOS memory devices)" in by[("bandwidth_above_dram_peak", "run")]["reason"]
    assert "no DRAM-sized bandwidth measured" in by[("bandwidth_above_dram_peak", "run")]["reason"]
    assert "no loaded-latency curve" in by[("loaded_idle_far_above_idle", "run")]["reason"]
    assert "no HMAT figures in the facts" in by[("firmware_claims_disagree", "firmware_claims")]["reason"]
    assert by[("stride_bytes_counted", "bandwidth_points")]["status"] == "not_run"
    assert by[("nt_write_far_above_read", "bandwidth_points")]["status"] == "not_run"
    assert all(row["reason"] for row in rows if row["status"] == "not_run")
    assert "no tlb point" in by[("tlb_below_control", "tlb_reach")]["reason"]
    assert "no c2c pair measured both ways" in by[("c2c_asymmetric", "c2c_matrix")]["reason"]


def test_a_dram_sized_chase_under_25_ns_is_flagged(bundles, cli, tmp_path):
    points = bundles.latency_points()
    for item in points:
        if item["params"]["working_set_bytes"] >= 64 << 20:
            scale = 12.0 / item["summary"]["min"]
            item["samples"] = [value * scale for value in item["samples"]]
            item["summary"] = {key: (value * scale if key != "count" else value) for key, value in item["summary"].items()}
    (flag,) = [row for row in flags(load(bundles, cli, tmp_path, results={"results/latency_sweep.jsonl": points}),
                                    "dram_chase_too_fast") if row["subject"] == "latency_curve"]
    assert flag["status"] == "flagged" and flag["value"] == pytest.approx(12.0) and flag["threshold"] == 25.0
    assert "DRAM-sized" in flag["comparison"] and "6 of 6 checked break it" in flag["evidence"]


def test_bandwidth_above_the_dimms_peak_is_flagged_and_within_it_is_clear(bundles, cli, tmp_path):
    manifest = bundles.manifest()
    dimm = {"size": "16 GB", "speed": "2666 MT/s", "configured_memory_speed": "2400 MT/s", "data_width": "64 bits",
            "locator": "DIMM_A1"}
    manifest["facts"]["memory"]["dimms"] = [dimm]
    connection = load(bundles, cli, tmp_path, manifest=manifest, mlc=("csit_skx_peak_injection_bandwidth.txt",))
    (flag,) = flags(connection, "bandwidth_above_dram_peak")
    assert flag["status"] == "flagged" and flag["subject"] == "mlc_bandwidth"
    assert flag["threshold"] == pytest.approx(19.2) and flag["value"] > 100
    assert "1 DIMMs (2400 MT/s x 64 bit)" in flag["comparison"]
    connection.close()

    many = bundles.manifest(run_id="20261123T034500Z-a1b2c3")
    many["facts"]["memory"]["dimms"] = [dimm] * 12
    (flag,) = [row for row in flags(load(bundles, cli, tmp_path, manifest=many,
                                         mlc=("csit_skx_peak_injection_bandwidth.txt",)), "bandwidth_above_dram_peak")
               if row["run_id"] == many["run_id"]]
    assert flag["status"] == "clear" and flag["threshold"] == pytest.approx(12 * 19.2)


def test_huge_pages_asked_for_but_not_granted_are_flagged(bundles, cli, tmp_path):
    points = bundles.latency_points()
    for item in points:
        if item["params"]["page_policy"] == "thp":
            item["params"]["huge_bytes_granted"] = 0
    rows = flags(load(bundles, cli, tmp_path, results={"results/latency_sweep.jsonl": points}), "huge_pages_not_granted")
    (flag,) = rows
    assert flag["status"] == "flagged" and flag["value"] == 0.0 and flag["unit"] == "fraction"
    assert "8 of 8 checked break it" in flag["evidence"] and "in a guest" in flag["evidence"]


def test_a_loaded_latency_idle_point_far_above_the_idle_latency_is_flagged(bundles, cli, tmp_path):
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/zero_queue.jsonl": [zero_queue_dram(40.0)]}
    connection = load(bundles, cli, tmp_path, results=results, mlc=("csit_skx_loaded_latency.txt",))
    (flag,) = flags(connection, "loaded_idle_far_above_idle")
    assert flag["status"] == "flagged" and flag["value"] == 81.40 and flag["threshold"] == pytest.approx(60.6, rel=0.01)
    assert "zero_queue DRAM median" in flag["comparison"]
    (inferred,) = connection.execute("SELECT idle_latency_ns, knee_latency_ns, points FROM inferred_loaded_latency").fetchall()
    assert inferred == (81.40, 121.92, 19)


def loaded_curve(idle: tuple[float, float], loaded: list[tuple[float, float, float]]) -> list[dict]:
    """loaded_latency kernel records: the idle point (median, CI95 half-width) and read-traffic points
    (GB/s, median, CI95 half-width), heaviest load last."""
    records = []
    delays = [20000, 5000, 1000, 200, 50, 0][-len(loaded):]
    for traffic, delay, gb_s, median, half in [("idle", None, 0.0, *idle)] + [
            ("read", delay, *point) for delay, point in zip(delays, loaded)]:
        samples = [median - half, median, median + half]
        records.append({"schema_version": 1, "experiment": "loaded_latency", "kernel": "loaded_latency",
                        "metric": "loaded_latency", "unit": "ns",
                        "params": {"traffic": traffic, "read_lines": 1, "write_lines": 0, "store": "regular",
                                   "delay": delay, "load_threads": 0 if traffic == "idle" else 1,
                                   "working_set_bytes": 1 << 28},
                        "samples": samples, "context": {"bandwidth_gb_s": gb_s},
                        "summary": {"min": samples[0], "median": median, "mean": median, "ci95_low": samples[0],
                                    "ci95_high": samples[2], "count": 3}})
    return records


# The issue's host: a loaded curve that never rises, its lightest loads below the idle latency
FLAT_BELOW_IDLE = [(0.9, 171.0, 1.0), (2.0, 165.0, 1.0), (4.1, 168.0, 1.0), (8.3, 170.0, 1.0), (16.0, 172.0, 1.0),
                   (27.4, 176.0, 1.0)]


def test_a_loaded_point_below_the_idle_latency_is_flagged_with_its_evidence(bundles, cli, tmp_path):
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/loaded_latency.jsonl": loaded_curve((173.0, 1.0), FLAT_BELOW_IDLE)}
    connection = load(bundles, cli, tmp_path, results=results)
    (flag,) = flags(connection, "loaded_below_idle")
    assert flag["status"] == "flagged" and flag["subject"] == "loaded_latency_curve"
    assert flag["item"] == "read delay 5000: 165 ns [CI95 164, 166]"
    assert flag["value"] == pytest.approx(8 / 173) and flag["threshold"] == 0.02
    # 171 ns [170, 172] is not apart from idle's [172, 174]: only 165 and 168 count
    assert flag["evidence"].startswith("2 of 6 loaded points below idle (the chase without load threads: 173 ns "
                                       "[CI95 172, 174]); worst")
    # and the curve has no knee: its latency never rises 1.3 x idle
    (inferred,) = connection.execute("SELECT knee_bandwidth_gb_s, idle_latency_ns, idle_source, saturated_latency_ns, note "
                                     "FROM inferred_loaded_latency").fetchall()
    assert inferred[:4] == (None, 173.0, "no-load point", 176.0) and "no knee" in inferred[4]


@pytest.mark.parametrize("starved_gb_s, status", [(0.0, "flagged"), (0.05, "clear")])
def test_a_loaded_point_whose_load_threads_moved_nothing_is_flagged(bundles, cli, tmp_path, starved_gb_s, status):
    # CI's guest once ran a read point at delay 0 whose one load thread got no CPU for all its chase samples: an idle
    # chase labelled as the heaviest load
    points = [(0.9, 171.0, 1.0), (2.0, 175.0, 1.0), (4.1, 178.0, 1.0), (8.3, 185.0, 1.0), (16.0, 200.0, 1.0),
              (starved_gb_s, 172.0, 1.0)]
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/loaded_latency.jsonl": loaded_curve((170.0, 1.0), points)}
    (flag,) = flags(load(bundles, cli, tmp_path, results=results), "load_never_ran")
    assert (flag["status"], flag["item"], flag["value"]) == (status, "read (delay 0, 1 load thread)", starved_gb_s)
    assert flag["subject"] == "loaded_latency_curve" and "6 checked" in flag["evidence"]


TLB = next((Path(__file__).resolve().parents[1] / "fixtures/default_run/results").glob("*/*/results/tlb.jsonl"))


@pytest.mark.parametrize("tlb_min, status", [(1.77, "flagged"), (1.79, "clear")])
def test_a_tlb_chain_faster_than_its_control_is_flagged(bundles, cli, tmp_path, tlb_min, status):
    # a real run's TLB sweep, its 4 KiB 64-page chain lowered to what CI's Emerald Rapids guest read beside a control
    # of 1.98 ns (minima): translation cannot save time, so the two chains met different conditions
    points = [json.loads(line) for line in TLB.read_text().splitlines()]
    for point in points:
        if (point["params"]["page_size"], point["params"]["pages"]) == ("4k", 64):
            point["summary"]["min"] = tlb_min if point["params"]["chain"] == "tlb" else 1.98
    results = {"results/latency_sweep.jsonl": bundles.latency_points(), "results/tlb.jsonl": points}
    (flag,) = flags(load(bundles, cli, tmp_path, results=results), "tlb_below_control")
    assert (flag["status"], flag["subject"]) == (status, "tlb_reach")
    assert flag["item"] == f"4k 64 pages: tlb {tlb_min:.4g} ns, control 1.98 ns (minima)"
    assert flag["value"] == pytest.approx(tlb_min / 1.98) and flag["threshold"] == 0.9
    assert flag["evidence"].startswith(f"{int(status == 'flagged')} of 23 checked break it")


C2C = TLB.with_name("c2c.jsonl")


@pytest.mark.parametrize("there, status", [(158.4, "flagged"), (80.0, "clear")])
def test_a_c2c_pair_much_slower_one_way_is_flagged(bundles, cli, tmp_path, there, status):
    # a real run's c2c pair, its CPU 0 to 1 minimum raised to what a Zen 4 guest read against 41.5 ns back (its vCPU
    # on another CCX for one direction): one line between the same two CPUs takes the same path both ways
    points = [json.loads(line) for line in C2C.read_text().splitlines()]
    for point in points:
        point["summary"]["min"] = there if (point["params"]["cpu_a"], point["params"]["cpu_b"]) == (0, 1) else 41.5
    results = {"results/latency_sweep.jsonl": bundles.latency_points(), "results/c2c.jsonl": points}
    (flag,) = flags(load(bundles, cli, tmp_path, results=results), "c2c_asymmetric")
    assert (flag["status"], flag["subject"]) == (status, "c2c_matrix")
    assert flag["item"] == f"CPU 0 to 1: {there:.4g} ns, back: 41.5 ns (minima)"
    assert flag["value"] == pytest.approx(there / 41.5) and flag["threshold"] == 2.0
    assert flag["evidence"].startswith(f"{int(status == 'flagged')} of 1 checked break it")


def test_loaded_points_within_the_idle_points_noise_are_clear(bundles, cli, tmp_path):
    wide = [(gb_s, median, 6.0) for gb_s, median, _ in FLAT_BELOW_IDLE]
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/loaded_latency.jsonl": loaded_curve((173.0, 6.0), wide)}
    (flag,) = flags(load(bundles, cli, tmp_path, results=results), "loaded_below_idle")
    assert flag["status"] == "clear" and flag["evidence"].startswith("0 of 6 loaded points below idle")


def test_an_mlc_ladder_is_checked_against_mlcs_idle_latency(bundles, cli, tmp_path):
    # a real Skylake-SP's outputs: idle 80.8 ns, the ladder's lightest load 81.4 ns (MLC gives no CI: 5% margin)
    connection = load(bundles, cli, tmp_path, mlc=("csit_skx_loaded_latency.txt", "csit_skx_idle_latency.txt"),
                      mlc_params={"csit_skx_idle_latency.txt": {"level": "DRAM"}})
    (flag,) = flags(connection, "loaded_below_idle")
    assert flag["subject"] == "mlc_loaded_latency" and flag["threshold"] == 0.05 and flag["status"] == "clear"
    assert flag["evidence"].startswith("0 of 19 loaded points below idle (MLC idle latency (DRAM): 80.8 ns); lowest")
    assert flag["value"] == pytest.approx(1 - 81.40 / 80.8)


def test_stride_bytes_counted_instead_of_lines_is_flagged(bundles, cli, tmp_path):
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/pattern_stride.jsonl": pattern_stride(1024, 1024)}
    rows = {row["subject"]: row for row in flags(load(bundles, cli, tmp_path, results=results), "stride_bytes_counted")}
    assert rows["pattern_stride_latency"]["status"] == "flagged" and rows["pattern_stride_latency"]["value"] == 16.0
    assert rows["bandwidth_points"]["status"] == "not_run"


def bandwidth(experiment: str, op: str, store: str, gb_s: float, *, stride: int = 64, size: int = 256 << 20,
              lines: int | None = None, bytes_per_pass: int | None = None, threads: int = 1) -> dict:
    """A bandwidth kernel record as kernel_bandwidth.c writes it (the fields the views read)."""
    ratio = {"read": (1, 0), "write": (0, 1), "copy": (1, 1), "triad": (2, 1)}[op]
    lines = lines if lines is not None else (size // 64 if op in ("copy", "triad") else size // stride)
    record = point(experiment, "bandwidth", {
        "op": op, "store": store, "pattern": "sequential", "stride_bytes": stride, "read_lines": ratio[0],
        "write_lines": ratio[1], "read_percent": 100.0 * ratio[0] / sum(ratio), "isa": "avx2", "vector_bytes": 32,
        "prefetch": "none", "prefetch_distance_blocks": None, "hw_prefetchers": "default", "threads": threads,
        "cpus": list(range(threads)), "smt_siblings_used": False, "working_set_bytes": size,
        "lines_per_pass": lines, "bytes_per_pass": bytes_per_pass if bytes_per_pass is not None else 64 * lines,
        "page_policy": "thp", "huge_bytes_granted": size * threads, "cpu": None, "accesses_per_sample": lines,
        "seed": 1}, gb_s, {"passes_per_sample": 1, "write_allocate_bytes_per_pass": 0})
    record.update(metric="bandwidth", unit="GB/s")
    return record


def test_the_bandwidth_kernels_feed_the_bandwidth_rules(bundles, cli, tmp_path):
    manifest = bundles.manifest()
    manifest["facts"]["memory"]["dimms"] = [{"size": "16 GB", "speed": "2666 MT/s", "configured_memory_speed":
                                             "2400 MT/s", "data_width": "64 bits", "locator": "DIMM_A1"}]
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/bandwidth.jsonl": [bandwidth("bandwidth", "read", "none", 12.0),
                                           bandwidth("bandwidth", "write", "nt", 40.0)],
               # a strided pass that counted stride bytes: 1024 B per block instead of one 64 B line
               "results/stride_bandwidth.jsonl": [bandwidth("stride_bandwidth", "read", "none", 2.0, stride=1024,
                                                            bytes_per_pass=(256 << 20))]}
    by = {row["rule"]: row for row in flags(load(bundles, cli, tmp_path, manifest=manifest, results=results))
          if row["subject"] == "bandwidth_points"}
    assert by["bandwidth_above_dram_peak"]["status"] == "flagged"
    assert by["bandwidth_above_dram_peak"]["item"].startswith("bandwidth: write nt")
    assert by["bandwidth_above_dram_peak"]["threshold"] == pytest.approx(19.2)
    assert by["stride_bytes_counted"]["status"] == "flagged" and by["stride_bytes_counted"]["value"] == 16.0
    assert by["stride_bytes_counted"]["item"].startswith("stride_bandwidth: read sequential 1024 B")
    assert by["nt_write_far_above_read"]["status"] == "flagged"
    assert by["nt_write_far_above_read"]["threshold"] == pytest.approx(1.5 * 12.0 * 1.01)  # 1.5 x the read median
    assert by["huge_pages_not_granted"]["status"] == "clear"


def test_a_stride_wider_than_its_span_counts_one_block(bundles, cli, tmp_path):
    """A host's record of a 4 KiB span read at a 64 KiB stride (the kernel refuses it; a bundle may still say
    it) divided by zero blocks and failed the run's flags. Such a span holds one block: two lines are too many."""
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/stride_bandwidth.jsonl": [
                   bandwidth("stride_bandwidth", "read", "none", 3.0, stride=65536, size=4096, lines=lines)
                   for lines in (1, 2)]}
    (flag,) = [row for row in flags(load(bundles, cli, tmp_path, results=results), "stride_bytes_counted")
               if row["subject"] == "bandwidth_points"]
    assert flag["status"] == "flagged" and flag["value"] == 2.0 and "1 of 2 checked" in flag["evidence"], flag


@pytest.mark.parametrize("larger_gb_s, status", [(39.0, "clear"), (20.0, "flagged")])
def test_a_fast_nt_write_is_checked_by_size_scaling(bundles, cli, tmp_path, larger_gb_s, status):
    """Streaming stores at 40 GB/s over a 12 GB/s read: real when a second DRAM size agrees (Intel server
    cores write far above what one core reads), suspect when the figure falls away with size."""
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/bandwidth.jsonl": [bandwidth("bandwidth", "read", "none", 12.0),
                                           bandwidth("bandwidth", "write", "nt", 40.0),
                                           bandwidth("bandwidth", "write", "nt", larger_gb_s, size=512 << 20)]}
    (flag,) = [row for row in flags(load(bundles, cli, tmp_path, results=results), "nt_write_far_above_read")]
    assert flag["status"] == status and flag["value"] == pytest.approx(40.4)  # the point median: 1.01 x
    assert ("confirmed by size scaling: bandwidth: write nt 40.4 GB/s at 256 MiB" in flag["evidence"]) == (status == "clear")


def test_honest_bandwidth_records_pass_the_rules(bundles, cli, tmp_path):
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/bandwidth.jsonl": [bandwidth("bandwidth", op, store, 15.0)
                                           for op, store in (("read", "none"), ("write", "nt"), ("copy", "regular"),
                                                             ("triad", "nt"))],
               "results/stride_bandwidth.jsonl": [bandwidth("stride_bandwidth", "read", "none", 3.0, stride=stride)
                                                  for stride in (64, 256, 1024)]}
    by = {row["rule"]: row for row in flags(load(bundles, cli, tmp_path, results=results))
          if row["subject"] == "bandwidth_points"}
    assert by["stride_bytes_counted"]["status"] == "clear" and "0 of 7 checked" in by["stride_bytes_counted"]["evidence"]
    assert by["nt_write_far_above_read"]["status"] == "clear"


def test_a_flag_is_shown_beside_its_section_on_the_host_page(bundles, cli, tmp_path):
    points = bundles.latency_points()
    for item in points:
        if item["params"]["page_policy"] == "thp":
            item["params"]["huge_bytes_granted"] = 0
    load(bundles, cli, tmp_path, results={"results/latency_sweep.jsonl": points}).close()
    proc = cli("report", "--db", tmp_path / "fleet.duckdb", "--out", tmp_path / "reports")
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "reports" / "node1.html").read_text()
    latency = page[page.index('id="latency"'):page.index('id="inferred"')]
    assert 'id="latency-flag-1"' in latency and "huge_pages_not_granted" in latency
    assert 'id="flags"' in page and "FLAGGED" in page and "not run" in page
    assert 'id="inferred-levels"' in page and "effective size" in page


# ---- consistency across experiments and noise the canary cannot see (issue 17) ----

def chase(experiment: str, size: int, ns: float, *, policy: str = "thp", level: str | None = None,
          samples: list[float] | None = None, canary: tuple[float, float] = (1.2, 1.2), **params) -> dict:
    """A single-chain read chase of `experiment` whose samples sit within +-1% of ns unless given."""
    samples = samples or [ns * factor for factor in (0.99, 0.995, 1.0, 1.005, 1.01)]
    ordered = sorted(samples)
    return {"schema_version": 1, "experiment": experiment, "kernel": experiment, "metric": "latency", "unit": "ns",
            "params": {"working_set_bytes": size, "stride_bytes": 64, "line_bytes": 64, "lines_touched": size // 64,
                       "pattern": "random_cycle", "page_policy": policy, "huge_bytes_granted": size, "walk": "read",
                       "chains": 1, **({"level": level} if level else {}), **params},
            "samples": samples,
            "summary": {"min": ordered[0], "median": ordered[len(ordered) // 2], "mean": sum(samples) / len(samples),
                        "ci95_low": ordered[0], "ci95_high": ordered[-1], "count": len(samples)},
            "context": {"canary_before_ns": canary[0], "canary_after_ns": canary[1], "core_clock_ghz": 3.0}}


MIB = 1 << 20
L3_WORKING_SET = 5935185  # the issue's 5.66 MiB: between the sweep's 4 and 8 MiB


def issue_run(zero_queue_l3_ns: float) -> dict:
    """The issue's run: the sweep reads 13.7-14.6 ns at 4-8 MiB, write_cost's read chase 13.3 ns at 5.66 MiB, and
    zero_queue's L3 point at the same 5.66 MiB whatever it is given."""
    sweep = [chase("latency_sweep", size, ns) for size, ns in
             ((32 * 1024, 1.2), (MIB, 4.3), (2 * MIB, 9.0), (4 * MIB, 13.7), (8 * MIB, 14.6), (256 * MIB, 150.0))]
    return {"results/latency_sweep.jsonl": sweep,
            "results/zero_queue.jsonl": [chase("zero_queue", L3_WORKING_SET, zero_queue_l3_ns, level="L3"),
                                         chase("zero_queue", 256 * MIB, 151.0, level="DRAM")],
            "results/write_cost.jsonl": [chase("write_cost", L3_WORKING_SET, 13.3, level="L3"),
                                         chase("write_cost", L3_WORKING_SET, 19.0, level="L3",
                                               walk="read_modify_write")]}


def test_the_issues_idle_latency_l3_that_no_other_experiment_saw_is_flagged_with_both_sides(bundles, cli, tmp_path):
    rows = {row["subject"]: row for row in flags(load(bundles, cli, tmp_path, results=issue_run(141.6)),
                                                 "experiments_disagree")}
    zero_queue = rows["zero_queue_levels"]
    assert zero_queue["status"] == "flagged" and zero_queue["unit"] == "fraction" and zero_queue["value"] > 8
    # both comparisons break it: write_cost at the same size, and the sweep's 4-8 MiB bracket
    assert zero_queue["evidence"].startswith("2 of 3 checked break it")
    assert "zero_queue L3 5.66 MiB thp: 141.6 ns [CI95 140.2, 143] (L1 canary 1.2 -> 1.2 ns)" in zero_queue["evidence"]
    assert "write_cost L3 5.66 MiB thp: 13.3 ns" in zero_queue["evidence"]
    assert rows["write_cost_levels"]["status"] == "flagged"
    # the sweep and write_cost agree with each other (write_cost's read-modify-write walk is not a read chase)
    assert "latency_sweep between 4 MiB and 8 MiB" in rows["latency_curve"]["evidence"]
    assert "read_modify_write" not in " ".join(row["evidence"] for row in rows.values())


def test_experiments_that_agree_raise_no_disagreement(bundles, cli, tmp_path):
    rows = flags(load(bundles, cli, tmp_path, results=issue_run(14.1)), "experiments_disagree")
    assert rows and all(row["status"] == "clear" for row in rows), rows
    # a run with only the sweep has nothing to compare it with
    (alone,) = flags(load(bundles, cli, tmp_path / "alone"), "experiments_disagree")
    assert alone["status"] == "not_run" and "two experiments" in alone["reason"]


def aio_point(queue_depth: int, iops: float, latency_mean_us: float) -> dict:
    samples = [iops * 4096 / 1e6 * factor for factor in (0.99, 1.0, 1.0, 1.0, 1.01)]
    return {"schema_version": 1, "experiment": "aio", "kernel": "aio", "metric": "throughput", "unit": "MB/s",
            "params": {"engine": "io_uring", "queue_depth": queue_depth, "threads": 1, "block_size_bytes": 4096,
                       "pattern": "random", "direct": True},
            "samples": samples,
            "summary": {"min": samples[0], "median": samples[2], "mean": samples[2], "ci95_low": samples[0],
                        "ci95_high": samples[-1], "count": 5},
            "context": {"iops": iops, "latency_mean_us": latency_mean_us}}


@pytest.mark.parametrize(("iops", "status"), [(160_000.0, "clear"), (16_000.0, "flagged"), (640_000.0, "flagged")])
def test_storage_ios_in_flight_far_from_the_queue_depth_break_littles_law(bundles, cli, tmp_path, iops, status):
    # 100 us per read at queue depth 16 is 160 k IOPS; a tenth of it (a queue never kept full) or four times it
    # (a latency that leaves out part of the I/O's time) is far from 16 in flight
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/aio.jsonl": [aio_point(1, 10_000.0, 100.0), aio_point(16, iops, 100.0)]}
    (row,) = flags(load(bundles, cli, tmp_path, results=results), "storage_littles_law")
    assert row["status"] == status and row["subject"] == "aio_curve"
    if status == "flagged":
        assert row["value"] == pytest.approx(iops * 100e-6 / 16)
        assert f"io_uring qd16 direct (io_uring): {iops * 100e-6:.3g} in flight at queue depth 16" in row["evidence"]


def affinity_thread(placement: str, thread: int, cpus_seen: list[int], cpu_share: float | None) -> dict:
    samples = [4.0, 4.01, 4.02, 4.0, 3.99]
    context = {"cpus_seen": cpus_seen, "migrations_observed": 0, "cpu_checks": 100}
    if cpu_share is not None:
        context.update(thread_cpu_s=0.25 * cpu_share, windows_s=0.25)
    return {"schema_version": 1, "experiment": "affinity", "kernel": "affinity", "metric": "throughput",
            "unit": "Gop/s",
            "params": {"placement": placement, "workload": "compute", "threads": 2, "thread": thread,
                       "cpu": thread if placement == "pinned" else None, "repeat": 0},
            "samples": samples,
            "summary": {"min": 3.99, "median": 4.0, "mean": 4.004, "ci95_low": 3.99, "ci95_high": 4.02, "count": 5},
            "context": context}


@pytest.mark.parametrize(("seen", "shares", "status", "worst"), [
    (([0], [1]), (0.98, 0.97), "clear", 1.95),
    (([0], [0]), (None, None), "flagged", 1.0),        # both threads saw themselves on CPU 0 alone
    (([0], [1]), (0.5, 0.52), "flagged", 1.02),        # apart by sched_getcpu, but one CPU's time between them
])
def test_threads_placed_apart_that_ran_on_one_cpu_are_flagged(bundles, cli, tmp_path, seen, shares, status, worst):
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/affinity.jsonl": [affinity_thread("pinned", thread, seen[thread], shares[thread])
                                          for thread in (0, 1)]}
    (row,) = flags(load(bundles, cli, tmp_path, results=results), "threads_shared_one_cpu")
    assert row["status"] == status and row["subject"] == "affinity_threads"
    assert row["value"] == pytest.approx(worst) and row["unit"] == "CPUs"
    assert row["item"].startswith("pinned compute repeat 0")


def test_noisy_bimodal_and_canary_drifting_points_are_flagged_with_what_they_saw(bundles, cli, tmp_path):
    noisy = [100.0, 75.0, 138.0, 88.0, 125.0, 62.0, 112.0]      # spread evenly: MAD 25% of the median
    two_states = [100.0, 100.5, 99.8, 100.2, 99.9, 100.1, 130.0, 130.4, 129.8, 130.1, 130.2]
    sweep = [chase("latency_sweep", size, ns) for size, ns in ((32 * 1024, 1.2), (MIB, 4.3), (256 * MIB, 150.0))]
    # the kernel measured the noisy point three times (--tries) and kept the last
    noisy_point = chase("latency_sweep", 512 * MIB, 100.0, samples=noisy)
    noisy_point["context"]["tries"] = [{"samples": 7, "median": 100.0, "mad_rel": 0.25, "bimodal": False,
                                        "unsettled": "noisy"}] * 3
    results = {"results/latency_sweep.jsonl": [
        *sweep, noisy_point,
        chase("latency_sweep", 1024 * MIB, 100.0, samples=two_states),
        chase("latency_sweep", 2048 * MIB, 160.0, canary=(1.2, 2.4))]}
    connection = load(bundles, cli, tmp_path, results=results)
    (noise,), (bimodal,), (canary,) = (flags(connection, rule) for rule in ("noisy_point", "bimodal_point",
                                                                            "canary_drift"))
    assert noise["status"] == "flagged" and noise["item"].startswith("latency_sweep: 512 MiB thp")
    assert noise["value"] == pytest.approx(25 / 100) and "MAD 25.0% of it over 7 samples, after 3 tries" in noise["evidence"]
    assert bimodal["status"] == "flagged" and bimodal["item"].startswith("latency_sweep: 1 GiB thp")
    assert "groups around 100 and 130.1 ns over 11 samples" in bimodal["evidence"]
    assert bimodal["evidence"].startswith("1 of 6 checked break it")  # the noisy point is spread, not split
    assert canary["status"] == "flagged" and canary["value"] == pytest.approx(2.0)
    assert "canary 1.2 ns before, 2.4 ns after; the run's median canary 1.2 ns" in canary["evidence"]


def test_quiet_points_raise_no_noise_flag(bundles, cli, tmp_path):
    connection = load(bundles, cli, tmp_path, results=issue_run(14.1))
    rows = [row for rule in ("noisy_point", "bimodal_point", "canary_drift") for row in flags(connection, rule)]
    assert rows and all(row["status"] == "clear" for row in rows), rows


KNOWN_SETS = [  # samples, (gap, lower group's median, upper group's median) or None for one group
    ([10.0] * 5, None),
    ([10.0, 10.1, 9.9, 10.0, 30.0], None),                        # one outlier is no group
    ([10.0, 10.1, 9.9, 13.0, 13.1], (2.9, 10.0, 13.05)),           # 3 and 2: the kernel's quick-profile point
    ([10.0, 10.4, 10.8, 11.2, 11.6, 12.0, 12.4], None),            # spread evenly: noise, not two states
    ([5.0, 5.1, *[20.0 + i / 100 for i in range(8)]], (14.9, 5.05, 20.035)),  # the smallest group allowed: 20%
    ([5.0, *[20.0 + i / 100 for i in range(9)]], None),           # below 20%: one outlier
]


def test_point_noise_reads_known_sets(bundles, cli, tmp_path):
    points = [chase("latency_sweep", (index + 1) * MIB, 1.0, samples=samples)
              for index, (samples, _) in enumerate(KNOWN_SETS)]
    connection = load(bundles, cli, tmp_path, results={"results/latency_sweep.jsonl": points})
    by_size = {json.loads(point.params)["working_set_bytes"]: point
               for point in point_noise(connection, bundles.manifest()["run_id"], "node1")}
    for index, (samples, split) in enumerate(KNOWN_SETS):
        point = by_size[(index + 1) * MIB]
        assert point.count == len(samples) and point.median == pytest.approx(statistics.median(samples))
        assert point.mad_rel == pytest.approx(
            statistics.median([abs(value - point.median) for value in samples]) / point.median)
        assert point.bimodal == (split is not None), samples
        if split:
            assert (point.gap, point.lower_median, point.upper_median) == pytest.approx(split)


def _level(name: str, low: int | None, high: int | None, stated: int | None, policy: str = "thp") -> dict:
    return {"level": name, "page_policy": policy, "size_low_bytes": low, "size_high_bytes": high,
            "sysfs_size_bytes": stated, "core_kind": None}


def _off_stated(*levels: dict):
    (flag,) = size_off_stated(Run(None, "run", "host", {}, None, levels=levels))
    return flag


KIB = 1024


@pytest.mark.parametrize("low, high, value, status", [
    (32 * KIB, 38 * KIB, 1.0, "clear"),               # the stated size inside the bracket
    (38 * KIB, 45 * KIB, 38 / 32, "clear"),           # 0.248 octave above: within a quarter octave
    (40 * KIB, 48 * KIB, 40 / 32, "flagged"),         # 0.32 octave above
    (13760, 16 * KIB, 0.5, "flagged"),                # CI's guest: the L1 read at half (a core shared with a sibling)
    (27 * KIB, 30 * KIB, 30 / 32, "clear")])
def test_a_size_bracket_off_the_stated_size_by_more_than_a_quarter_octave_is_flagged(low, high, value, status):
    flag = _off_stated(_level("L1", low, high, 32 * KIB), _level("DRAM", None, None, None))
    assert (flag.status, flag.item.split(" vs ")[0]) == (status, f"thp L1 {_kib(low)}-{_kib(high)}")
    assert flag.value == pytest.approx(value) and flag.threshold == pytest.approx(2 ** 0.25)
    assert ("a core or cache shared with other work" in flag.evidence) == (status == "flagged" and value < 1)


def _kib(size: int) -> str:
    from fleetscope.units import format_bytes
    return format_bytes(size)


def test_every_level_off_its_stated_size_is_named_and_the_worst_is_the_item():
    flag = _off_stated(_level("L1", 16 * KIB, 19 * KIB, 32 * KIB), _level("L2", 512 * KIB, 1024 * KIB, 1024 * KIB),
                       _level("L3", 1216 * KIB, 1448 * KIB, 32 * 1024 * KIB), _level("L1", 32 * KIB, 64 * KIB, 32 * KIB, "4k"))
    assert flag.status == "flagged" and flag.item.startswith("thp L3 ") and flag.value == pytest.approx(1448 / 32768)
    assert "2 of 4 checked break it" in flag.evidence and "thp L1 16 KiB-19 KiB vs stated 32 KiB" in flag.evidence
    assert _off_stated(_level("L1", None, None, 32 * KIB), _level("L2", 256 * KIB, 512 * KIB, None)).status == "not_run"


def test_the_recorded_default_run_flags_only_what_its_own_evidence_shows(cli, tmp_path):
    """The shared default run (tests/fixtures/default_run): experiments that measured one working set quietly
    agree; the disagreements it does show involve write_cost's points measured while the L1 canary read 3-5 ns
    (the run's usual is 1.26 ns) and a zero_queue L3 point at the LLC's edge that read 2.5x write_cost's."""
    bundle = Path(__file__).resolve().parents[1] / "fixtures" / "default_run" / "results"
    db = tmp_path / "fleet.duckdb"
    proc = cli("ingest", bundle, "--db", db)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    connection = duckdb.connect(str(db), read_only=True)
    rows = flags(connection)
    by = {(row["rule"], row["subject"]): row for row in rows}
    assert by[("experiments_disagree", "mlp_curve")]["status"] == "clear"               # DRAM: mlp k=1, write_cost
    assert by[("experiments_disagree", "pattern_stride_latency")]["status"] == "clear"  # 64 MiB: 3.6% apart
    write_cost = by[("experiments_disagree", "write_cost_levels")]
    assert write_cost["status"] == "flagged" and "L1 canary 5.13 -> 3.5 ns" in write_cost["evidence"]
    assert by[("canary_drift", "write_cost_levels")]["status"] == "flagged"
    assert by[("storage_littles_law", "fio_jobs")]["status"] == "clear"
    assert by[("storage_littles_law", "aio_curve")]["status"] == "clear"
    assert by[("threads_shared_one_cpu", "affinity_threads")]["status"] == "clear"
    for row in rows:
        if row["status"] == "flagged" and row["rule"] in ("noisy_point", "bimodal_point", "canary_drift",
                                                          "experiments_disagree"):
            assert row["item"] in row["evidence"] and row["value"] > row["threshold"], row


@pytest.mark.parametrize("tries", [[], "three", [{"samples": 0, "median": 1.0, "unsettled": None}],
                                   [{"samples": 5, "median": 1.0, "unsettled": "x" * 201}], [{"samples": 5}]])
def test_a_point_whose_tries_are_malformed_is_refused_whole(bundles, cli, tmp_path, tries):
    point = chase("latency_sweep", MIB, 4.3)
    point["context"]["tries"] = tries
    bundles.write(results={"results/latency_sweep.jsonl": [point]})
    proc = cli("ingest", bundles.results_dir, "--db", tmp_path / "fleet.duckdb")
    assert proc.returncode == 3 and "REFUSED" in proc.stdout and "tries" in proc.stdout, proc.stdout


def test_a_point_larger_than_any_sampler_takes_is_judged_for_spread_not_split(bundles, cli, tmp_path):
    """Sorting a point of millions of samples for the gap search would cost ingest its memory target; a point of
    more than BIMODAL_MAX_SAMPLES (more than the kernels' sampler ever takes) is checked for spread only."""
    two_states = [100.0, 130.0] * (BIMODAL_MAX_SAMPLES // 2 + 1)
    points = [chase("latency_sweep", MIB, 100.0, samples=two_states), chase("latency_sweep", 2 * MIB, 9.0)]
    connection = load(bundles, cli, tmp_path, results={"results/latency_sweep.jsonl": points})
    big, small = point_noise(connection, bundles.manifest()["run_id"], "node1")[:2]
    assert big.count == len(two_states) and not big.split_checked and big.gap is None
    assert big.mad_rel == pytest.approx(0.15 / 1.15, rel=1e-6)  # median 115, every sample 15 away
    assert small.split_checked and small.count == 5
    (noisy,) = flags(connection, "noisy_point")
    assert noisy["status"] == "clear" and noisy["evidence"].startswith("0 of 2 checked")
    (bimodal,) = flags(connection, "bimodal_point")
    assert bimodal["evidence"].startswith("0 of 1 checked")


# ---- what the firmware claims --------------------------------------------------------------------------

XEON_SMBIOS = {"source": "/sys/firmware/dmi/entries", "reason": None, "slots": 24, "populated": 8,
               "dimms": [{"locator": f"DIMM_{socket}{slot}", "bank": None, "size_bytes": 4 << 30, "type": "DDR3",
                          "speed_mts": 1600, "configured_speed_mts": 1600, "data_width_bits": 64}
                         for socket in "AB" for slot in range(1, 5)],
               "channels": 8, "channels_from": "one per populated DIMM, an upper bound: the locators name no channel",
               "peak_gbps": 102.4, "peak_note": None}


@pytest.mark.parametrize("memory, status, threshold, how", [
    ({"smbios": XEON_SMBIOS}, "flagged", 102.4, "SMBIOS: 8 DIMMs on 8 channels"),
    # the inventory's word wins over the firmware's (a VM's SMBIOS describes whatever its hypervisor says)
    ({"smbios": XEON_SMBIOS, "dram_peak_stated_gbps": 400.0}, "clear", 400.0, "stated for the host in the inventory"),
    ({"smbios": {"source": None, "reason": "no SMBIOS table"}}, "not_run", None, "set"),
])
def test_the_dram_peak_comes_from_smbios_or_the_inventory_without_dmidecode(bundles, cli, tmp_path, memory, status,
                                                                            threshold, how):
    """csit_skx_peak_injection_bandwidth.txt: MLC drew well over 102.4 GB/s at DRAM size, beyond the Xeon E5's
    eight DDR3-1600 DIMMs (no dmidecode on the host: facts.memory.dimms is empty)."""
    manifest = bundles.manifest()
    manifest["facts"]["memory"].update(dimms=[], dimms_note="dmidecode: not installed", **memory)
    (flag,) = flags(load(bundles, cli, tmp_path, manifest=manifest, mlc=("csit_skx_peak_injection_bandwidth.txt",)),
                    "bandwidth_above_dram_peak")
    assert flag["status"] == status and flag["threshold"] == (pytest.approx(threshold) if threshold else None)
    if status == "not_run":
        assert "no DRAM peak from SMBIOS (no SMBIOS table) and none stated for the host (fleet_dram_peak_gbps)" \
            in flag["reason"]
    else:
        assert how in flag["comparison"]


def numa_matrix(local_ns: float, remote_ns: float, local_gb_s: float) -> list[dict]:
    base = {"working_set_bytes": 1 << 28}
    cells = [point("numa_matrix", "chase", {**base, "cpu": 10 * cpu, "cpu_node": cpu, "mem_node": mem},
                   local_ns if cpu == mem else remote_ns) for cpu in (0, 1) for mem in (0, 1)]
    for cpu in (0, 1):
        cell = point("numa_matrix", "bandwidth", {**base, "cpu": None, "cpus": [10 * cpu], "threads": 1,
                                                  "cpu_node": cpu, "mem_node": cpu}, local_gb_s)
        cells.append({**cell, "metric": "bandwidth", "unit": "GB/s"})
    return cells


@pytest.mark.parametrize("hmat_ns, hmat_mb_s, slit, status, worst", [
    (80, 60000, 21, "clear", None),                     # 95 vs 80 ns, 38 vs 60 GB/s, 1.58 vs 2.1 x local
    (30, 60000, 21, "flagged", "read latency, node 0 from node 0"),   # 95 ns measured, 30 claimed: over 2x
    (80, 20000, 21, "flagged", "read bandwidth, node 0 from node 0"),  # 38 GB/s measured beats a 20 GB/s claim
    (80, 60000, 40, "flagged", "latency node 0 to node 1, x local"),  # SLIT says 4x local, the run reads 1.58x
])
def test_what_the_firmware_claims_is_set_beside_the_measured_and_a_large_disagreement_flagged(
        bundles, cli, tmp_path, hmat_ns, hmat_mb_s, slit, status, worst):
    manifest = bundles.manifest()
    manifest["facts"]["numa"] = {"nodes": 2, "distances": {"node0": [10, slit], "node1": [slit, 10]},
                                 "hmat": {"nodes": [{"node": 0, "initiators": [0], "read_latency_ns": hmat_ns,
                                                     "read_bandwidth_mb_s": hmat_mb_s}], "reason": None}}
    connection = load(bundles, cli, tmp_path, manifest=manifest,
                      results={"results/latency_sweep.jsonl": bundles.latency_points(),
                               "results/numa_matrix.jsonl": numa_matrix(95.0, 150.0, 38.0)})
    claims = {row[0]: row[1:] for row in connection.execute(
        "SELECT figure, source, claimed, measured, verdict FROM firmware_claims").fetchall()}
    assert claims["read latency, node 0 from node 0"][:3] == ("ACPI HMAT", hmat_ns, pytest.approx(95.0, rel=0.02))
    assert claims["read bandwidth, node 0 from node 0"][1] == hmat_mb_s / 1000
    assert claims["latency node 0 to node 1, x local"][1:3] == (slit / 10, pytest.approx(150 / 95, rel=0.02))
    (flag,) = flags(connection, "firmware_claims_disagree")
    assert flag["status"] == status
    if worst:
        disagreeing = 2 if worst.startswith("latency node") else 1  # the SLIT's both directions, or one HMAT figure
        assert flag["item"].endswith(worst) and flag["evidence"].startswith(f"{disagreeing} of 4 claims disagree")
