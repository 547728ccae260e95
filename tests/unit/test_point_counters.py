"""Per-point counters (context.counters, written by the kernels' sampler) through ingest into the
point_counters view, and the checks that keep a bundle's made-up counts out."""

from __future__ import annotations

import copy

import duckdb
import pytest

# One real saxpy point's counters from the 2-vCPU dev VM (no PMU: hardware events not supported).
VM_COUNTERS = {
    "scope": "timed region", "user_only": False,
    "events": {
        "cycles": {"state": "not supported", "reason": "No such file or directory", "value": None,
                   "time_enabled_ns": None, "time_running_ns": None, "running_fraction": None},
        "instructions": {"state": "not supported", "reason": "No such file or directory", "value": None,
                         "time_enabled_ns": None, "time_running_ns": None, "running_fraction": None},
        "task-clock": {"state": "counted", "value": 40976030, "time_enabled_ns": 40976030,
                       "time_running_ns": 40976030, "running_fraction": 1},
        "page-faults": {"state": "counted", "value": 0, "time_enabled_ns": 40975296,
                        "time_running_ns": 40975296, "running_fraction": 1},
        "context-switches": {"state": "counted", "value": 11, "time_enabled_ns": 40974724,
                             "time_running_ns": 40974724, "running_fraction": 1},
        "cpu-migrations": {"state": "counted", "value": 0, "time_enabled_ns": 40974331,
                           "time_running_ns": 40974331, "running_fraction": 1},
    },
    "ipc": None, "throttle": None,
}
# A host with a PMU, multiplexed: the group ran 3/4 of the region, and a throttle event was seen.
PMU_COUNTERS = {
    "scope": "timed region", "user_only": True,
    "events": {
        "cycles": {"state": "counted", "value": 3_000_000, "time_enabled_ns": 4_000_000,
                   "time_running_ns": 3_000_000, "running_fraction": 0.75},
        "instructions": {"state": "counted", "value": 6_000_000, "time_enabled_ns": 4_000_000,
                         "time_running_ns": 3_000_000, "running_fraction": 0.75},
    },
    "ipc": 2.0, "throttle": {"core_events": 1, "package_events": 0, "throttled": True},
}


def with_counters(points: list[dict], counters: dict, samples: int = 5, accesses: int = 1000) -> list[dict]:
    out = []
    for point in points:
        point = copy.deepcopy(point)
        point["params"]["accesses_per_sample"] = accesses
        context = point.setdefault("context", {})
        context.setdefault("precision", {})["samples"] = samples
        context["counters"] = copy.deepcopy(counters)
        out.append(point)
    return out


def test_counters_reach_the_view_with_states_kept(bundles, cli, tmp_path):
    points = bundles.latency_points(page_policies=("thp",))
    half = len(points) // 2
    results = with_counters(points[:half], VM_COUNTERS) + with_counters(points[half:], PMU_COUNTERS)
    bundle = bundles.write(results={"results/latency_sweep.jsonl": results})
    db = tmp_path / "fleet.duckdb"
    result = cli("ingest", bundle, "--db", db)
    assert result.returncode == 0, result.stdout + result.stderr
    with duckdb.connect(str(db), read_only=True) as connection:
        rows = connection.execute(
            "SELECT point_index, event, state, value, running_fraction, per_access, ipc, throttled, user_only "
            "FROM point_counters ORDER BY point_index, event").fetchall()
    by = {(row[0], row[1]): row for row in rows}
    assert len(rows) == half * 6 + (len(points) - half) * 2
    assert by[0, "cycles"][2:4] == ("not supported", None)  # a state, never a zero
    assert by[0, "task-clock"][2:6] == ("counted", 40976030, 1.0, pytest.approx(40976030 / 5000))
    assert by[0, "page-faults"][3] == 0  # a counted zero stays a zero
    assert by[0, "cycles"][6] is None and by[0, "cycles"][7] is None
    assert by[half, "instructions"][2:9] == ("counted", 6_000_000, 0.75, pytest.approx(1200.0), 2.0, True, True)
    with duckdb.connect(str(db), read_only=True) as connection:
        flag = connection.execute("SELECT status, evidence FROM flags WHERE rule = 'measured_while_throttling'").fetchall()
    assert flag == [("flagged", f"{len(points) - half} of {len(points) - half} checked break it; worst "
                                f"latency_sweep point {half} (chase): 1 throttled (1 yes, 0 no)")]


def test_a_host_without_throttle_counters_records_why_the_check_did_not_run(bundles, cli, tmp_path):
    points = with_counters(bundles.latency_points(page_policies=("thp",)), VM_COUNTERS)
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.write(results={"results/latency_sweep.jsonl": points}), "--db", db).returncode == 0
    with duckdb.connect(str(db), read_only=True) as connection:
        flag = connection.execute("SELECT status, reason FROM flags WHERE rule = 'measured_while_throttling'").fetchall()
    assert flag == [("not_run", "the host's kernel exposes no thermal_throttle counters (common in VMs and on "
                                "non-Intel CPUs)")]


@pytest.mark.parametrize(("break_it", "problem"), [
    (lambda c: c["events"]["cycles"].update(value=0), "events.cycles.value"),      # not supported, yet a zero
    (lambda c: c["events"]["task-clock"].update(value=-5), "events['task-clock'].value"),         # a negative count
    (lambda c: c["events"]["task-clock"].update(value=None), "events['task-clock'].value"),       # counted without a value
    (lambda c: c["events"]["task-clock"].update(state="estimated"), "events['task-clock']"),  # no such state
    (lambda c: c["events"].update({"x' OR 1=1 --": {"state": "counted", "value": 1}}), "events:"),
    (lambda c: c.update(ipc=float(10**9)), "ipc"),
    (lambda c: c.update(scope="process"), "scope"),
    (lambda c: c["events"]["task-clock"].update(state=["counted"]), "events['task-clock'].state"),
    (lambda c: c["events"]["task-clock"].update(running_fraction=1.5), "events['task-clock'].running_fraction"),
    (lambda c: c["events"]["page-faults"].update(time_enabled_ns="0"), "events['page-faults'].time_enabled_ns"),
    (lambda c: c.update(throttle={"core_events": -1, "package_events": 0, "throttled": True}), "throttle.core_events"),
    (lambda c: c.update(throttle=True), "throttle"),
    (lambda c: c.update(events=[]), "events"),
])
def test_made_up_counters_are_refused_whole(bundles, cli, tmp_path, break_it, problem):
    counters = copy.deepcopy(VM_COUNTERS)
    break_it(counters)
    points = with_counters(bundles.latency_points(page_policies=("thp",)), counters)
    bundle = bundles.write(results={"results/latency_sweep.jsonl": points})
    db = tmp_path / "fleet.duckdb"
    result = cli("ingest", bundle, "--db", db)
    assert result.returncode != 0
    assert "REFUSED" in result.stdout and f"at $.context.counters.{problem}" in result.stdout, result.stdout
    assert "Traceback" not in result.stdout + result.stderr
