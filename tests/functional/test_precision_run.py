"""Adaptive repetition through site.yml: the standard profile passes the kernels a precision target, every
record says what it reached, and a one-point process whose point drifted until its cap is measured again
by the kernels role after the experiment's other points, its perf counts kept beside the first attempt's.

The drift is forced (the kernels' test-only --test-drift, through kernels_extra_args) and the cap is tiny,
so the re-queue happens whatever the machine's noise; the sweep is cut to three small sizes."""

from __future__ import annotations

import json

import duckdb
import pytest

from helpers import Outputs, knob_values, run_playbook, scratch_leftovers

pytestmark = pytest.mark.functional

SIZES = 3  # 16 KiB, 32 KiB, 64 KiB at one point per octave


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    outputs = Outputs(tmp_path_factory.mktemp("precision"))
    before = knob_values()
    extra = {"fleet_profile": "standard", "kernels_latency_sweep_min_bytes": 16384,
             "kernels_latency_sweep_max_bytes": 65536, "kernels_latency_sweep_points_per_octave": 1,
             "kernels_latency_sweep_page_policies": ["thp"],
             "kernels_latency_sweep_refine_max_points": 0,  # the three sizes alone: no adaptive refinement
             "kernels_precision": {"latency_sweep": {"target_ci": 0.000001, "max_point_s": 0.05}},
             # a one-point process's plan prices no second attempt (a tenth of its points, rounded down:
             # --max-requeues 0); the later --max-requeues lifts that, so the role's re-queue path runs
             "kernels_min_sample_ms": 2, "kernels_extra_args": ["--test-drift", "--max-requeues", "1000"]}
    proc = run_playbook("site.yml", outputs, "--tags", "latency_sweep", "-e", json.dumps(extra))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert knob_values() == before and not scratch_leftovers()
    return outputs


def query(outputs, sql):
    with duckdb.connect(str(outputs.warehouse), read_only=True) as db:
        return db.execute(sql).fetchall()


def test_each_drifting_point_is_measured_twice_the_second_after_all_first(run):
    found = query(run, "select point_index, attempt, requeued, stop, target_rel, cap_s "
                       "from precision_points order by point_index")
    assert len(found) == 2 * SIZES
    assert [attempt for _, attempt, *_ in found] == [1] * SIZES + [2] * SIZES
    assert all(requeued == (attempt == 1) for _, attempt, requeued, *_ in found)
    assert {(stop, target, cap) for *_, stop, target, cap in found} == {("cap", 0.000001, 0.05)}
    sizes = query(run, "select params->>'$.working_set_bytes' as size, count(*) from points group by size")
    assert sorted(count for _, count in sizes) == [2] * SIZES


def test_the_summary_counts_the_second_attempts(run):
    ((points, requeued, stopped_at_cap),) = query(
        run, "select points, requeued, stopped_at_cap from precision_summary where experiment = 'latency_sweep'")
    assert (points, requeued, stopped_at_cap) == (SIZES, SIZES, SIZES)


def test_second_attempts_keep_their_own_perf_counts(run):
    (bundle,) = run.bundles()
    (experiment,) = [e for e in json.loads((bundle / "manifest.json").read_text())["experiments"]
                     if e["name"] == "latency_sweep"]
    if not experiment["raw"]:
        pytest.skip("perf cannot count on this host: no kernel process is wrapped")
    paths = sorted(entry["path"] for entry in experiment["raw"])
    assert len(paths) == 2 * SIZES
    again = [entry for entry in experiment["raw"] if entry["path"].endswith(".attempt2.csv")]
    assert len(again) == SIZES and all(entry["params"]["attempt"] == 2 for entry in again)
    assert all((bundle / path).is_file() for path in paths)
    stderr = (bundle / "raw" / "latency_sweep.stderr.log").read_text()
    assert stderr.count("re-queue:") == SIZES
