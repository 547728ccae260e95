"""The CPU/OS/IO views over bundles loaded by the real ingest: workload_profile's counter tier and
classification from perf stat CSVs of every tier (hardware counts a development VM cannot make are
written here as a PMU host prints them), smt_interference's speedup (this VM has no SMT siblings), and
the report sections those views feed."""

from __future__ import annotations

import duckdb
import pytest

HARDWARE = ("cycles", "instructions", "branches", "branch-misses", "cache-references", "cache-misses",
            "L1-dcache-loads", "L1-dcache-load-misses", "dTLB-loads", "dTLB-load-misses", "iTLB-loads",
            "iTLB-load-misses")


def perf_csv(counts: dict) -> str:
    """`perf stat -x,` text: software events counted, hardware events as given (None: <not supported>)."""
    lines = ["# started on Sun Nov 22 07:34:14 2026", "",
             "812.40,msec,task-clock,812400000,100.00,0.998,CPUs utilized",
             "41,,context-switches,812400000,100.00,50.470,/sec",
             "3,,cpu-migrations,812400000,100.00,3.693,/sec",
             "2210,,page-faults,812400000,100.00,2.720,K/sec"]
    for event in HARDWARE:
        value = counts.get(event)
        lines.append(f"<not supported>,,{event},0,100.00,," if value is None
                     else f"{value},,{event},812400000,80.00,,")
    return "\n".join(lines) + "\n"


def counts(ipc=0.5, cache_mpki=0.5, l1d_rate=0.02, dtlb_mpki=0.1, itlb_mpki=0.05, branch_rate=0.01, skip=()):
    instructions = 1_000_000_000
    values = {"instructions": instructions, "cycles": int(instructions / ipc),
              "cache-misses": int(cache_mpki * instructions / 1000), "cache-references": 200_000_000,
              "L1-dcache-loads": 300_000_000, "L1-dcache-load-misses": int(l1d_rate * 300_000_000),
              "dTLB-loads": 300_000_000, "dTLB-load-misses": int(dtlb_mpki * instructions / 1000),
              "iTLB-loads": 50_000_000, "iTLB-load-misses": int(itlb_mpki * instructions / 1000),
              "branches": 150_000_000, "branch-misses": int(branch_rate * 150_000_000)}
    return {event: value for event, value in values.items() if event not in skip}


WORKLOADS = {
    "memhog": counts(ipc=0.3, cache_mpki=20),
    "bigcode": counts(ipc=0.6, itlb_mpki=2.0),
    "chain": counts(ipc=0.4),
    "busy": counts(ipc=2.6),
    "partial": counts(ipc=0.4, skip=("cache-misses", "L1-dcache-load-misses", "dTLB-load-misses")),
    "vm": {},
}


def point(experiment, kernel, metric, unit, params, samples, context=None):
    ordered = sorted(samples)
    return {"schema_version": 1, "experiment": experiment, "kernel": kernel, "metric": metric, "unit": unit,
            "params": params, "samples": samples,
            "summary": {"min": ordered[0], "median": ordered[len(ordered) // 2], "mean": sum(samples) / len(samples),
                        "ci95_low": ordered[0], "ci95_high": ordered[-1], "count": len(samples)},
            "context": context or {}}


def workload_point(name):
    return point("workloads", "workload", "wall_time", "s", {"workload": name, "argv": [name], "runs": 2},
                 [0.8, 0.9], {"user_s": [0.7, 0.8], "sys_s": [0.05, 0.07], "max_rss_bytes": [1 << 20, 2 << 20]})


def smt_points():
    """compute: siblings share a core's multipliers (1.1 x), two cores double; memory: both 1.6 x."""
    per_thread = {("compute", "alone"): [4.0], ("compute", "siblings"): [2.2, 2.2], ("compute", "cores"): [4.0, 4.0],
                  ("memory", "alone"): [20.0], ("memory", "siblings"): [16.0, 16.0], ("memory", "cores"): [16.0, 16.0]}
    cpus = {"alone": [0], "siblings": [0, 32], "cores": [0, 1]}
    points = []
    for (workload, placement), medians in per_thread.items():
        for thread, median in enumerate(medians):
            points.append(point("smt", "smt", "throughput", "Gop/s" if workload == "compute" else "GB/s",
                                {"placement": placement, "workload": workload, "threads": len(medians),
                                 "thread": thread, "cpu": cpus[placement][thread], "cpus": cpus[placement],
                                 "repeat": 0}, [median * 0.99, median, median * 1.01]))
    return points


@pytest.fixture
def db(bundles, cli, tmp_path):
    manifest = bundles.manifest()
    raw = [{"path": f"raw/perf/workloads/{index:03d}.csv", "tool": "perf",
            "params": {"point": name, "point_index": index, "workload": name, "status": "ok", "failure": None}}
           for index, name in enumerate(WORKLOADS)]
    raw.append({"path": "raw/perf/workloads/006.csv", "tool": "perf",
                "params": {"point": "broken", "point_index": 6, "workload": "broken", "status": "failed",
                           "failure": "workload 'broken' failed: 'sh' exited with status 3 (run 1 of 1)"}})
    manifest["experiments"] = manifest["experiments"] + [
        {"name": "workloads", "status": "failed", "file": "results/workloads.jsonl", "wall_s": 9.0,
         "error": "broken: exit 5: bad input | fleetscope-kernels workload: workload 'broken' failed",
         "notes": ["counter tier: hardware (cycles and instructions count)"], "raw": raw},
        {"name": "smt", "status": "ok", "file": "results/smt.jsonl", "error": None, "wall_s": 3.0, "notes": []}]
    results = {"results/latency_sweep.jsonl": bundles.latency_points(),
               "results/workloads.jsonl": [workload_point(name) for name in WORKLOADS],
               "results/smt.jsonl": smt_points()}
    for index, name in enumerate(WORKLOADS):
        results[f"raw/perf/workloads/{index:03d}.csv"] = perf_csv(WORKLOADS[name])
    results["raw/perf/workloads/006.csv"] = perf_csv(counts())
    bundles.write(manifest, results=results)
    path = tmp_path / "fleet.duckdb"
    proc = cli("ingest", bundles.results_dir, "--db", path)
    assert proc.returncode == 0, proc.stderr
    connection = duckdb.connect(str(path), read_only=True)
    yield connection
    connection.close()


def profile(db) -> dict:
    columns = [row[0] for row in db.execute("DESCRIBE workload_profile").fetchall()]
    return {row["workload"]: row for row in (dict(zip(columns, values))
                                             for values in db.execute("SELECT * FROM workload_profile").fetchall())}


@pytest.mark.parametrize("workload, classification", [
    ("memhog", "B: miss-bound"),
    ("bigcode", "C: instruction-cache-bound"),
    ("chain", "A: store/dependency-bound"),
    ("busy", "A: store/dependency-bound"),  # IPC 2.6 is evidence, not a gate: no miss and no front-end sign
    ("partial", "undecided: counters unavailable"),
    ("vm", "undecided: counters unavailable"),
    ("broken", "undecided: the workload failed"),
])
def test_workloads_are_classified_with_the_tier_and_the_evidence(db, workload, classification):
    row = profile(db)[workload]
    assert row["classification"] == classification
    assert row["evidence"].startswith(f"counter tier {row['counter_tier']}")


def test_rates_come_from_the_counts_and_missing_counts_stay_null(db):
    rows = profile(db)
    memhog = rows["memhog"]
    assert memhog["counter_tier"] == "hardware" and memhog["multiplexed"] is True
    assert memhog["ipc"] == pytest.approx(0.3, rel=1e-3)
    assert memhog["cache_mpki"] == pytest.approx(20)
    assert memhog["branch_miss_rate"] == pytest.approx(0.01)
    assert "20.0 cache misses per 1k instructions (a sign from 5)" in memhog["evidence"]
    assert memhog["case_id"] == "B" and "data layout" in memhog["next_step"]
    partial = rows["partial"]
    assert partial["cache_mpki"] is None and partial["l1d_miss_rate"] is None and partial["dtlb_mpki"] is None
    assert partial["not_supported"] == "L1-dcache-load-misses, cache-misses, dTLB-load-misses"
    assert "no miss rate" in partial["undecided"] and "cache-misses not supported" in partial["undecided"]
    vm = rows["vm"]
    assert vm["counter_tier"] == "software" and vm["ipc"] is None and vm["case_id"] is None
    assert vm["context_switches"] == 41 and vm["cpu_migrations"] == 3 and vm["page_faults"] == 2210
    assert "no instruction count" in vm["undecided"] and "L1-dcache-load-misses not supported" in vm["undecided"]
    assert vm["wall_median_s"] == 0.9 and vm["runs"] == 2 and vm["max_rss_bytes"] == 2 << 20


def test_a_failed_workload_keeps_its_reason_and_no_time(db):
    broken = profile(db)["broken"]
    assert broken["status"] == "failed" and broken["wall_median_s"] is None
    assert "exited with status 3" in broken["failure"] and "exited with status 3" in broken["evidence"]


def test_smt_speedup_is_against_the_cpu_alone(db):
    rows = {(w, p): (total, speedup) for w, p, total, speedup in db.execute(
        "SELECT workload, placement, total_throughput, speedup FROM smt_interference").fetchall()}
    assert rows[("compute", "alone")] == (pytest.approx(4.0), pytest.approx(1.0))
    assert rows[("compute", "siblings")] == (pytest.approx(4.4), pytest.approx(1.1))
    assert rows[("compute", "cores")] == (pytest.approx(8.0), pytest.approx(2.0))
    assert rows[("memory", "siblings")][1] == pytest.approx(1.6)


def test_the_report_has_the_workload_and_smt_sections(db, cli, tmp_path):
    db.close()
    out = tmp_path / "reports"
    proc = cli("report", "--db", tmp_path / "fleet.duckdb", "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = (out / "node1.html").read_text()
    for section in ("workloads", "smt"):
        assert f'id="{section}-chart"' in page and f'id="{section}-table"' in page, section
    assert "B: miss-bound" in page and "C: instruction-cache-bound" in page and "A: store/dependency-bound" in page
    assert "counter tier hardware" in page
