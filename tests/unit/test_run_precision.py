"""How sure a run is: the views precision_points and precision_summary and fleetscope.analyze.precision over bundles
loaded by the real ingest, with points whose precision is constructed so every figure has a known answer;
and the kernels role's requeue_point filter, which plans a drifting point's second attempt."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import duckdb
import pytest

from fleetscope.analyze.precision import describe, percent, run_precision

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "plugins" / "filter"))
from experiments import requeue_point  # noqa: E402  (the role's filter, imported from its folder)


def point(experiment, kernel, params, median, achieved, stop, target=0.01, samples=11, attempt=1, requeued=False,
          drift=False, sampling_s=0.5, wall_s=0.8):
    """A point whose CI95 is median ± achieved × median, its precision as the kernels' sampler writes it."""
    low, high = median * (1 - achieved), median * (1 + achieved)
    return {"schema_version": 1, "experiment": experiment, "kernel": kernel, "metric": "latency", "unit": "ns",
            "params": params, "samples": [low, median, high],
            "summary": {"min": low, "median": median, "mean": median, "ci95_low": low, "ci95_high": high,
                        "count": samples},
            "context": {"wall_s": wall_s, "order_index": 0,
                        "precision": {"target_rel": target, "achieved_rel": achieved, "samples": samples,
                                      "stop": stop, "cap_s": None if target is None else 2.0,
                                      "sampling_s": sampling_s, "trend_z": 2.5 if drift else 0.1,
                                      "shift_rel": 0.03 if drift else 0.001, "drift": drift,
                                      "attempt": attempt, "requeued": requeued}}}


def sweep_points():
    """latency_sweep: 10 points stand, 7 met the 1% target (6 at the target, 1 met only at its cap), 3 did not;
    one point drifted until its cap and was measured again (its second attempt met the target)."""
    points = []
    for size, achieved in zip(range(12, 19), (0.004, 0.006, 0.008, 0.009, 0.005, 0.007, 0.010)):
        points.append(point("latency_sweep", "chase", {"working_set_bytes": 2**size}, 10.0, achieved,
                            "cap" if achieved == 0.010 else "target"))
    for size, achieved in zip(range(19, 22), (0.02, 0.03, 0.05)):
        points.append(point("latency_sweep", "chase", {"working_set_bytes": 2**size}, 100.0, achieved, "cap",
                            samples=180, sampling_s=2.0))
    points.append(point("latency_sweep", "chase", {"working_set_bytes": 2**22}, 150.0, 0.04, "cap", samples=170,
                        requeued=True, drift=True, sampling_s=2.0))
    points.append(point("latency_sweep", "chase", {"working_set_bytes": 2**22}, 140.0, 0.008, "target", samples=40,
                        attempt=2))
    return points


def aio_points():
    """aio: two points, both at their cap and far from the target."""
    return [point("aio", "aio", {"engine": "blocking", "queue_depth": depth}, 500.0, achieved, "cap", samples=40,
                  sampling_s=2.0) for depth, achieved in ((1, 0.06), (8, 0.08))]


def write_bundle(bundles, run_id, profile, results, walls):
    manifest = bundles.manifest(run_id=run_id, profile=profile)
    manifest["experiments"] = [{"name": name, "status": "ok", "file": f"results/{name}.jsonl", "error": None,
                                "wall_s": walls[name]} for name in results]
    bundles.write(manifest, results={f"results/{name}.jsonl": points for name, points in results.items()})


STANDARD = "20261123T100000Z-aaaaaa"
QUICK = "20261123T110000Z-bbbbbb"
OLD = "20261123T120000Z-cccccc"


@pytest.fixture
def db(bundles, cli, tmp_path):
    write_bundle(bundles, STANDARD, "standard", {"latency_sweep": sweep_points(), "aio": aio_points()},
                 {"latency_sweep": 40.0, "aio": 20.0})
    quick = [point("latency_sweep", "chase", {"working_set_bytes": 2**size}, 10.0, achieved, "fixed", target=None,
                   samples=5) for size, achieved in zip(range(12, 16), (0.01, 0.02, 0.03, 0.04))]
    write_bundle(bundles, QUICK, "quick", {"latency_sweep": quick}, {"latency_sweep": 5.0})
    write_bundle(bundles, OLD, "quick", {"latency_sweep": bundles.latency_points()}, {"latency_sweep": 5.0})
    path = tmp_path / "fleet.duckdb"
    proc = cli("ingest", bundles.results_dir, "--db", path)
    assert proc.returncode == 0, proc.stderr
    connection = duckdb.connect(str(path), read_only=True)
    yield connection
    connection.close()


def rows(db, query, *parameters):
    cursor = db.execute(query, list(parameters))
    columns = [column[0] for column in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def test_precision_points_reads_each_points_precision(db):
    found = rows(db, "SELECT * FROM precision_points WHERE run_id = ? AND experiment = 'latency_sweep'", STANDARD)
    assert len(found) == 12  # 11 points, one of them twice
    by_key = {(r["median"], r["attempt"]): r for r in found}
    first, second = by_key[(150.0, 1)], by_key[(140.0, 2)]
    assert first["requeued"] and not first["final"] and first["drift"] and first["stop"] == "cap"
    assert second["final"] and second["met_target"] and second["stop"] == "target"
    assert by_key[(10.0, 1)]["target_rel"] == 0.01 and by_key[(10.0, 1)]["cap_s"] == 2.0
    # met_target is the half-width against the target, whatever stopped the point: a cap reached at 1.0% meets 1%.
    at_cap = [r for r in found if r["stop"] == "cap" and r["met_target"]]
    assert len(at_cap) == 1 and at_cap[0]["achieved_rel"] == 0.010
    # A fixed count has nothing to meet.
    quick = rows(db, "SELECT met_target, target_rel, stop FROM precision_points WHERE run_id = ?", QUICK)
    assert {(r["met_target"], r["target_rel"], r["stop"]) for r in quick} == {(None, None, "fixed")}
    # Points measured before the precision record existed are not in the view.
    assert rows(db, "SELECT * FROM precision_points WHERE run_id = ?", OLD) == []


def test_precision_summary_per_experiment(db):
    summary = {r["experiment"]: r for r in rows(db, "SELECT * FROM precision_summary WHERE run_id = ?", STANDARD)}
    sweep, aio = summary["latency_sweep"], summary["aio"]
    assert sweep["points"] == 11 and sweep["points_met"] == 8 and sweep["share_met"] == pytest.approx(8 / 11)
    assert (sweep["stopped_at_target"], sweep["stopped_at_cap"], sweep["fixed_count"]) == (7, 4, 0)
    assert sweep["requeued"] == 1 and sweep["drifting_at_cap"] == 0
    # The median of the 11 half-widths that stand: 0.004 .. 0.05 -> 0.008.
    assert sweep["median_achieved_rel"] == pytest.approx(0.008)
    assert sweep["sampling_s"] == pytest.approx(7 * 0.5 + 3 * 2.0 + 2.0 + 0.5)
    assert sweep["experiment_wall_s"] == 40.0
    assert aio["points"] == 2 and aio["share_met"] == 0.0 and aio["median_achieved_rel"] == pytest.approx(0.07)
    quick = rows(db, "SELECT * FROM precision_summary WHERE run_id = ?", QUICK)[0]
    assert quick["share_met"] is None and quick["fixed_count"] == 4 and quick["target_rel"] is None


def test_run_precision_totals_and_sentence(db):
    run = run_precision(db, STANDARD, "node1")
    assert [e.experiment for e in run.experiments] == ["aio", "latency_sweep"]
    assert (run.points, run.points_with_target, run.points_met, run.requeued) == (13, 13, 8, 1)
    assert run.share_met == pytest.approx(8 / 13) and run.targets == (0.01,)
    assert run.wall_s == 60.0
    # Half-widths that stand: 0.004 .. 0.08 (13): median 0.009, 90th percentile 0.05 + 0.8 x 0.01.
    assert run.median_achieved_rel == pytest.approx(0.009) and run.p90_achieved_rel == pytest.approx(0.058)
    assert run.sentence == ("8 of 13 points (62%) reached the ±1% target; median CI95 half-width ±0.9% of the "
                            "median, 90% of points within ±5.8%; least sure: aio (median ±7%), latency_sweep (±0.8%); "
                            "1 point drifted until the time cap and was measured again.")


def test_a_fixed_count_run_and_an_old_run_say_what_they_are(db):
    quick = run_precision(db, QUICK, "node1")
    assert quick.share_met is None and quick.points == 4
    assert quick.sentence.startswith("Fixed sample counts, no precision target (the quick profile): 4 points, "
                                     "median CI95 half-width ±2.5% of the median")
    old = run_precision(db, OLD, "node1")
    assert old.points == 0 and old.experiments == () and old.median_achieved_rel is None
    assert "do not say how precise they are" in old.sentence


def test_percentages_read_as_people_write_them():
    assert [percent(x) for x in (0.0123, 0.01, 0.005, 0.5, 0.999, None)] == ["1.2%", "1%", "0.5%", "50%", "100%",
                                                                              "unknown"]
    assert describe.__doc__


def test_hostile_precision_values_are_left_out_or_null(bundles, cli, tmp_path):
    bad = point("latency_sweep", "chase", {"working_set_bytes": 4096}, 10.0, 0.01, "target")
    bad["context"]["precision"].update(stop="<script>", achieved_rel="lots")
    odd = point("latency_sweep", "chase", {"working_set_bytes": 8192}, 10.0, 0.01, "target")
    odd["context"]["precision"].update(achieved_rel="lots", samples=[1, 2])
    write_bundle(bundles, STANDARD, "standard", {"latency_sweep": [bad, odd]}, {"latency_sweep": 1.0})
    path = tmp_path / "hostile.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", path).returncode == 0
    with duckdb.connect(str(path), read_only=True) as db:
        (row,) = rows(db, "SELECT * FROM precision_points")
        assert row["achieved_rel"] is None and row["samples"] is None and row["met_target"] is False


def test_requeue_point_plans_the_second_attempt_beside_the_first():
    perf = {"label": "64 KiB thp", "argv": ["perf", "stat", "-x,", "-o", "raw/perf/latency_sweep/003.csv", "-e",
                                            "task-clock", "--", "/k", "chase", "--sizes", "65536"],
            "raw": {"path": "raw/perf/latency_sweep/003.csv", "tool": "perf",
                    "params": {"point": "64 KiB thp", "point_index": 3}}}
    again = requeue_point(perf)
    assert again["argv"] == ["perf", "stat", "-x,", "-o", "raw/perf/latency_sweep/003.attempt2.csv", "-e",
                             "task-clock", "--", "/k", "chase", "--sizes", "65536", "--attempt", "2"]
    assert again["raw"] == {"path": "raw/perf/latency_sweep/003.attempt2.csv", "tool": "perf",
                            "params": {"point": "64 KiB thp", "point_index": 3, "attempt": 2}}
    assert again["label"] == "64 KiB thp (second attempt)"
    assert perf["raw"]["path"].endswith("003.csv")  # the first attempt's entry is left as it was
    plain = requeue_point({"label": "x", "argv": ["/k", "saxpy", "--strides", "8"], "raw": None})
    assert plain["argv"] == ["/k", "saxpy", "--strides", "8", "--attempt", "2"] and plain["raw"] is None


def test_the_host_page_says_how_sure_each_run_is(db, cli, tmp_path):
    """The Run card carries the short figure (the sentence on hover) and links to the sentence above the
    experiments table, whose rows carry each experiment's share at target and median half-width."""
    database = db.execute("SELECT file FROM pragma_database_list WHERE name = current_database()").fetchone()[0]
    db.close()
    out = tmp_path / "reports"
    proc = cli("report", "--db", database, "--out", out, "--all")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pages = {run_id: (out / "node1" / f"{run_id}.html") for run_id in (STANDARD, QUICK, OLD)}
    latest = max(pages, key=lambda run_id: run_id)
    pages[latest] = out / "node1.html"
    standard = pages[STANDARD].read_text()
    card = standard[standard.index('id="summary-precision"'):]
    card = card[:card.index("</dd>")]
    assert '<a href="#precision">62% of points at their target; median CI95 ±0.9%</a>' in card
    assert 'id="precision">8 of 13 points (62%) reached the ±1% target' in standard
    row = standard[standard.index("<td>aio</td>"):]
    assert re.search(r'<td class="num">2</td><td class="num">0%</td><td class="num">±7%</td>', row[:400])
    quick = pages[QUICK].read_text()
    assert "fixed sample counts; median CI95 ±2.5%" in quick and "fixed count</td>" in quick
    old = pages[OLD].read_text()
    assert '<span class="why">not recorded in this bundle</span>' in old[old.index('id="summary-precision"'):]
