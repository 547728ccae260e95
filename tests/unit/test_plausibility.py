"""Plausibility flags: each METHODS.md rule fires on a crafted bundle that breaks it, stays clear on a clean
one, and a rule that cannot run says why (never silently skipped). Flags land on the host page beside
the section holding the number."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "mlc_samples"
RULES = {"dram_chase_too_fast", "bandwidth_above_dram_peak", "huge_pages_not_granted", "loaded_idle_far_above_idle",
         "stride_bytes_counted", "nt_write_far_above_read", "measured_while_throttling"}


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


def load(bundles, cli, tmp_path, *, manifest=None, results=None, mlc: tuple[str, ...] = ()) -> duckdb.DuckDBPyConnection:
    manifest = manifest or bundles.manifest()
    results = results or {"results/latency_sweep.jsonl": bundles.latency_points()}
    for path in results:
        name = Path(path).stem
        if name != "latency_sweep":
            manifest["experiments"].append({"name": name, "status": "ok", "file": path, "error": None, "wall_s": 1.0})
    if mlc:
        manifest["experiments"].append({"name": "mlc", "status": "ok", "file": None, "error": None, "wall_s": 1.0,
                                        "notes": [], "raw": [{"path": f"raw/mlc/{name}", "tool": "mlc"} for name in mlc]})
        results = {**results, **{f"raw/mlc/{name}": (SAMPLES / name).read_text() for name in mlc}}
    bundles.write(manifest, results=results)
    db = tmp_path / "fleet.duckdb"
    proc = cli("ingest", bundles.results_dir, "--db", db)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return duckdb.connect(str(db), read_only=True)


def flags(connection, rule: str | None = None) -> list[dict]:
    cursor = connection.execute("SELECT * FROM flags" + (" WHERE rule = ?" if rule else ""), [rule] if rule else [])
    columns = [description[0] for description in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def test_a_clean_run_has_every_rule_and_no_flag(bundles, cli, tmp_path):
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/zero_queue.jsonl": [zero_queue_dram(150.0)],
               "results/pattern_stride.jsonl": pattern_stride(1024, 64)}
    rows = flags(load(bundles, cli, tmp_path, results=results))
    assert {row["rule"] for row in rows} == RULES
    assert [row for row in rows if row["status"] == "flagged"] == []
    by = {(row["rule"], row["subject"]): row for row in rows}
    assert by[("dram_chase_too_fast", "latency_curve")]["status"] == "clear"
    assert by[("dram_chase_too_fast", "zero_queue_levels")]["value"] == 150.0
    assert by[("huge_pages_not_granted", "latency_curve")]["status"] == "clear"
    assert by[("stride_bytes_counted", "pattern_stride_latency")]["status"] == "clear"
    # rules that could not run say why: no DIMMs (a VM), no bandwidth measured, no loaded-latency curve
    assert "no DIMMs in the facts (dmidecode: no SMBIOS memory devices)" in by[("bandwidth_above_dram_peak", "run")]["reason"]
    assert "no DRAM-sized bandwidth measured" in by[("bandwidth_above_dram_peak", "run")]["reason"]
    assert "no loaded-latency curve" in by[("loaded_idle_far_above_idle", "run")]["reason"]
    assert by[("stride_bytes_counted", "bandwidth_points")]["status"] == "not_run"
    assert by[("nt_write_far_above_read", "bandwidth_points")]["status"] == "not_run"
    assert all(row["reason"] for row in rows if row["status"] == "not_run")


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
