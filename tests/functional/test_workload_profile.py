"""The reference workload in the shared default run (issue 31): site.yml profiles alloc_walk on this machine
with no fleet_workloads set, under perf stat and perf record, and the host page shows its case and next step,
or, where perf counts no hardware events (this VM), what could not be decided and why; every miss figure then
says "not supported", never a zero."""

from __future__ import annotations

import json

import duckdb
import pytest

from helpers import Outputs

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def run(site_run):
    outputs, proc, _ = site_run
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return outputs


def query(outputs: Outputs, sql: str) -> list[dict]:
    with duckdb.connect(str(outputs.warehouse), read_only=True) as db:
        cursor = db.execute(sql)
        columns = [column[0] for column in cursor.description]
        return [dict(zip(columns, row)) for row in cursor.fetchall()]


def capability(outputs: Outputs) -> str:
    manifest = json.loads(outputs.bundles()[0].joinpath("manifest.json").read_text())
    return manifest["facts"].get("perf", {}).get("capability", "none")


def test_a_default_run_profiles_the_reference_workload(run):
    (row,) = query(run, "select * from workload_profile where workload = 'reference_alloc_walk'")
    assert row["reference"] is True and row["status"] == "ok" and row["runs"] == 1  # quick: one run kept
    assert row["wall_median_s"] > 0 and row["max_rss_bytes"] > 32 << 20  # 32 MiB of live blocks
    tier = capability(run)
    assert row["counter_tier"] == tier
    if tier == "none":
        return
    assert row["time_event"] == ("cycles" if tier == "hardware" else "cpu-clock") and row["time_samples"] > 0
    functions = {item["symbol"]: item for item in query(
        run, "select * from workload_functions where workload = 'reference_alloc_walk'")}
    # its phases are its own functions, each ranked by the sample rule
    assert {"walk_blocks", "churn_blocks"} <= set(functions)
    assert functions["walk_blocks"]["time_rank"] is not None and functions["churn_blocks"]["time_rank"] is not None
    if tier == "software":
        assert row["case_id"] is None and row["classification"] == "undecided: counters unavailable"
        assert "could not decide between A, B and C" in row["undecided"] and "not supported" in row["undecided"]
        assert row["miss_note"].startswith("not supported: counter tier software")
        assert row["ipc"] is None and row["cache_mpki"] is None  # never a zero for a count not made
        assert all(item["miss_share"] is None and item["mark"] is None for item in functions.values())
    else:
        assert row["case_id"] in ("A", "B", "C") or row["undecided"]
        assert row["miss_event"] is not None or row["miss_note"].startswith("not supported")


def test_the_host_page_shows_the_profile_its_case_and_next_step(run):
    page = (run.reports / "localhost.html").read_text()
    for part in ('id="workloads-chart"', 'id="workloads-table"', 'id="workloads-extra-table"',
                 'id="workload-functions"', "Reference workload", "reference_alloc_walk", "walk_blocks"):
        assert part in page, part
    if capability(run) == "software":
        assert "could not decide between A, B and C" in page and "not supported: counter tier software" in page
    (row,) = query(run, "select next_step from workload_profile where workload = 'reference_alloc_walk'")
    assert row["next_step"] and row["next_step"][:60] in page
