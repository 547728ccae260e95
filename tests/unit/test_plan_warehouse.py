"""The plan from the manifest to the page: ingest checks it at the boundary and stores it (migration 016),
view plan_vs_actual sets each experiment's price beside what it did, the flag plan_overshoot catches an
experiment that ran more than 25% past its price, and the host page shows both (or says a run has no plan)."""

from __future__ import annotations

import copy

import duckdb
import pytest

from fleetscope.ingest.bundle import BundleError, load_bundle


def planned(bundles, wall_s: float, bound_s: float, notes=(), cuts=()) -> dict:
    """The example manifest with a plan pricing its latency sweep at bound_s, which then took wall_s."""
    manifest = bundles.manifest()
    manifest["experiments"][0]["wall_s"] = wall_s
    manifest["plan"] = {
        "profile": "quick", "budget_s": 120, "bound_s": bound_s + 30.0, "points": 34 + 8, "within_budget": True,
        "experiments": [
            {"name": "latency_sweep", "points": 34, "processes": 2, "bound_s": bound_s, "allowance_s": 10.0,
             "target_rel": None, "cap_s": None, "kinds": 1, "skip": None, "notes": list(notes), "cuts": list(cuts)},
            {"name": "fio", "points": 8, "processes": 8, "bound_s": 30.0, "allowance_s": None, "target_rel": None,
             "cap_s": None, "skip": None, "notes": ["8 jobs x (1 s ramp + 1 s measured)"], "cuts": []},
        ]}
    return manifest


def test_plan_beside_actual_and_an_overshoot_flagged(bundles, cli, tmp_path):
    bundles.write(manifest=planned(bundles, wall_s=13.0, bound_s=10.0,
                                   cuts=["largest working set cut from 128 MiB to 64 MiB (budget)"]))
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    with duckdb.connect(str(db), read_only=True) as connection:
        rows = connection.execute("SELECT experiment, status, planned_points, points, planned_s, actual_s, "
                                  "actual_share, overshoot, plan_cuts FROM plan_vs_actual ORDER BY experiment"
                                  ).fetchall()
        totals = connection.execute("SELECT plan_budget_s, plan_bound_s, plan_points FROM runs").fetchone()
        flag = connection.execute("SELECT status, item, value FROM flags WHERE rule = 'plan_overshoot'").fetchone()
    # fio was priced but the bundle recorded no fio: planned, not recorded
    assert rows[0][:6] == ("fio", None, 8, None, 30.0, None)
    assert rows[1][:6] == ("latency_sweep", "ok", 34, 34, 10.0, 13.0)
    assert rows[1][6] == pytest.approx(1.3) and rows[1][7] is True
    assert rows[1][8] == "largest working set cut from 128 MiB to 64 MiB (budget)"
    assert totals == (120.0, 40.0, 42)
    assert flag[0] == "flagged" and flag[1].startswith("latency_sweep: 13.0 s of a planned 10.0 s")
    assert flag[2] == pytest.approx(1.3)


def test_within_a_quarter_of_its_price_is_clear(bundles, cli, tmp_path):
    bundles.write(manifest=planned(bundles, wall_s=12.4, bound_s=10.0))
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT status FROM flags WHERE rule = 'plan_overshoot'").fetchone() == ("clear",)
        assert connection.execute("SELECT overshoot FROM plan_vs_actual WHERE experiment = 'latency_sweep'"
                                  ).fetchone() == (False,)


def test_a_run_without_a_plan_has_no_rows_and_the_check_says_why(bundles, cli, tmp_path):
    bundles.write()
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM plan_vs_actual").fetchone() == (0,)
        status, reason = connection.execute("SELECT status, reason FROM flags WHERE rule = 'plan_overshoot'").fetchone()
    assert status == "not_run" and "carries no plan" in reason


@pytest.mark.parametrize("change, where", [
    (lambda plan: plan["experiments"][0].update(bound_s=-1), "$.plan.experiments[0].bound_s"),
    (lambda plan: plan["experiments"][0].update(points=1.5), "$.plan.experiments[0].points"),
    (lambda plan: plan["experiments"][0].update(name="Latency sweep"), "$.plan.experiments[0].name"),
    (lambda plan: plan["experiments"][0].update(argv=["rm", "-rf", "/"]), "$.plan.experiments[0]"),
    (lambda plan: plan["experiments"][0].update(notes=["x" * 2001]), "$.plan.experiments[0].notes[0]"),
    (lambda plan: plan["experiments"][0].update(cuts=["cut"] * 65), "$.plan.experiments[0].cuts"),
    (lambda plan: plan["experiments"][0].update(target_rel=2), "$.plan.experiments[0].target_rel"),
    (lambda plan: plan["experiments"].append(copy.deepcopy(plan["experiments"][0])), "$.plan.experiments[2].name"),
    (lambda plan: plan.update(profile="fastest"), "$.plan.profile"),
    (lambda plan: plan.update(bound_s="1 m 54 s"), "$.plan.bound_s"),
    (lambda plan: plan.pop("experiments"), "$.plan"),
])
def test_a_hostile_plan_is_refused_whole_naming_the_field(bundles, change, where):
    manifest = planned(bundles, wall_s=9.0, bound_s=10.0)
    change(manifest["plan"])
    with pytest.raises(BundleError) as refused:
        load_bundle(bundles.write(manifest=manifest))
    assert where in str(refused.value)


def test_the_host_page_shows_the_plan_or_says_there_is_none(bundles, cli, tmp_path):
    bundles.write(manifest=planned(bundles, wall_s=13.0, bound_s=10.0,
                                   cuts=["largest working set cut from 128 MiB to 64 MiB (budget)"]))
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0
    page = (out / "node1.html").read_text()
    assert '<h2 id="plan">Plan and price</h2>' in page and 'href="#plan"' in page
    assert "Planned before measuring: 2 experiments, 42 points, at most 40 s (budget 120 s)" in page
    assert "1 ran more than 25% past their price (latency_sweep)" in page
    assert "130% OVER" in page and "largest working set cut from 128 MiB to 64 MiB (budget)" in page
    assert "not recorded" in page  # fio: priced, never recorded
    plain = tmp_path / "plain"
    plain_bundles = type(bundles)(plain)
    plain_bundles.write()
    assert cli("ingest", plain, "--db", tmp_path / "plain.duckdb").returncode == 0
    assert cli("report", "--db", tmp_path / "plain.duckdb", "--out", tmp_path / "plain-reports").returncode == 0
    assert "This run carries no plan" in (tmp_path / "plain-reports" / "node1.html").read_text()


def test_the_workloads_and_mlc_sit_in_the_plan_beside_what_they_did(bundles, cli, tmp_path):
    """The roles beside the kernels are priced too (plan.py workloads_price, mlc_price): the workloads' price
    beside their wall time, MLC's planned skip beside its recorded skip, and the page says they are priced on top
    of the budget."""
    manifest = planned(bundles, wall_s=9.0, bound_s=10.0)
    template = manifest["experiments"][0]
    manifest["experiments"] += [
        {**copy.deepcopy(template), "name": "workloads", "status": "failed", "file": None, "wall_s": 40.0, "raw": [],
         "error": "reference_alloc_walk: timed out after 20 s"},
        {**copy.deepcopy(template), "name": "mlc", "status": "skipped", "file": None, "wall_s": 0.0, "raw": []}]
    manifest["plan"]["experiments"] += [
        {"name": "mlc", "points": 0, "processes": 0, "bound_s": 0.0, "allowance_s": None, "target_rel": None,
         "cap_s": None, "skip": "Intel MLC was not supplied (mlc_path)", "notes": [], "cuts": []},
        {"name": "workloads", "points": 1, "processes": 2, "bound_s": 25.8, "allowance_s": None, "target_rel": None,
         "cap_s": None, "skip": None, "notes": ["reference_alloc_walk: 1 run under perf stat"], "cuts": []}]
    manifest["plan"]["bound_s"] += 25.8
    manifest["plan"]["points"] += 1
    bundles.write(manifest=manifest)
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    ingested = cli("ingest", bundles.results_dir, "--db", db)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    with duckdb.connect(str(db), read_only=True) as connection:
        rows = {row[0]: row[1:] for row in connection.execute(
            "SELECT experiment, status, planned_s, actual_s, overshoot, planned_skip FROM plan_vs_actual").fetchall()}
        flag = connection.execute("SELECT status, item FROM flags WHERE rule = 'plan_overshoot'").fetchone()
    assert rows["workloads"][:4] == ("failed", 25.8, 40.0, True)
    assert rows["mlc"] == ("skipped", 0.0, 0.0, False, "Intel MLC was not supplied (mlc_path)")
    assert flag[0] == "flagged" and flag[1].startswith("workloads: 40.0 s of a planned 25.8 s")
    assert cli("report", "--db", db, "--out", out).returncode == 0
    page = (out / "node1.html").read_text()
    assert "at most 65.8 s: 40 s within the 120 s budget, workloads 25.8 s on top of it" in page


def test_the_page_counts_one_experiment_as_one(bundles, cli, tmp_path):
    """A --tags run of one experiment: 'Planned before measuring: 1 experiment, ...', not '1 experiments'."""
    manifest = planned(bundles, wall_s=9.0, bound_s=10.0)
    manifest["plan"]["experiments"] = manifest["plan"]["experiments"][:1]
    manifest["plan"].update(bound_s=10.0, points=34)
    bundles.write(manifest=manifest)
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0
    assert "Planned before measuring: 1 experiment, 34 points, at most 10 s (budget 120 s)" in (out / "node1.html").read_text()
