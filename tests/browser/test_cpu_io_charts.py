"""The CPU/OS/IO sections of a host page in headless Chromium: the affinity, smt, aio and workloads charts
are drawn, with their marks, without console messages (records shaped as the kernels write them)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

PROBE = """(() => {
  const count = (id, selector) => {
    const svg = document.querySelector('#' + id + ' svg');
    return svg ? svg.querySelectorAll(selector).length : null;
  };
  return {
    affinity: count('affinity-chart', '.mark-symbol.role-mark path'),
    smt: count('smt-chart', '.mark-rect.role-mark path'),
    aio: count('aio-chart', '.mark-line.role-mark path'),
    workloads: count('workloads-chart', '.mark-rect.role-mark path'),
  };
})()"""


def point(experiment, kernel, metric, unit, params, median, context=None):
    samples = [median * 0.98, median, median * 1.02]
    return {"schema_version": 1, "experiment": experiment, "kernel": kernel, "metric": metric, "unit": unit,
            "params": params, "samples": samples,
            "summary": {"min": samples[0], "median": median, "mean": median, "ci95_low": samples[0],
                        "ci95_high": samples[2], "count": 3}, "context": context or {}}


def results() -> dict:
    thread_context = {"migrations_observed": 0, "cpu_checks": 100, "cpus_seen": [0], "voluntary_context_switches": 0,
                      "involuntary_context_switches": 3}
    affinity = [point("affinity", "affinity", "throughput", "Gop/s" if workload == "compute" else "GB/s",
                      {"placement": placement, "workload": workload, "threads": 2, "thread": thread,
                       "cpu": thread if placement == "pinned" else None, "repeat": 0},
                      (3.0 if workload == "compute" else 14.0) * (1 + 0.05 * thread), thread_context)
                for placement in ("unpinned", "pinned") for workload in ("compute", "memory") for thread in (0, 1)]
    smt = [point("smt", "smt", "throughput", "Gop/s", {"placement": placement, "workload": "compute",
                                                       "threads": threads, "thread": thread, "cpus": [0, 1][:threads],
                                                       "repeat": 0}, 2.0)
           for placement, threads in (("alone", 1), ("siblings", 2), ("cores", 2)) for thread in range(threads)]
    aio = [point("aio", "aio", "throughput", "MB/s",
                 {"engine": engine, "queue_depth": depth, "threads": depth if engine == "blocking" else 1,
                  "block_size_bytes": 4096, "direct": True, "cache_dropped": True},
                 100.0 * depth ** 0.5,
                 {"iops": 25000.0 * depth ** 0.5, "ios": 1000, "latency_mean_us": 40.0 * depth ** 0.5,
                  "latency_p50_us": 38.0, "latency_p99_us": 90.0, "latency_p99_9_us": 120.0})
           for engine in ("blocking", "io_uring") for depth in (1, 4, 16)]
    workloads = [point("workloads", "workload", "wall_time", "s", {"workload": name, "argv": [name], "runs": 3}, 0.5,
                       {"user_s": [0.4] * 3, "sys_s": [0.05] * 3, "max_rss_bytes": [1 << 20] * 3})
                 for name in ("gzip", "sort")]
    return {"results/affinity.jsonl": affinity, "results/smt.jsonl": smt, "results/aio.jsonl": aio,
            "results/workloads.jsonl": workloads}


def test_cpu_io_charts_render_without_console_messages(bundles, cli, browser, tmp_path):
    manifest = bundles.manifest()
    manifest["experiments"] = [{"name": name, "status": "ok", "file": f"results/{name}.jsonl", "error": None,
                                "wall_s": 1.0} for name in ("affinity", "smt", "aio", "workloads")]
    bundles.write(manifest, results=results())
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0

    loaded = browser.open(out / "node1.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"
    assert browser.evaluate(PROBE) == {"affinity": 8, "smt": 3, "aio": 2, "workloads": 2}
