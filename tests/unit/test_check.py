"""`fleetscope check` through the real CLI on real bundles (tests/nightly_bundles.py: the default run as three
hosts on two nights): rpl-03's DRAM slowed down and is gated with exit status 4, in text, JSON and JUnit XML;
zen3-01 moved 1.5%, below every default threshold, and passes; n1-01 ran once and has no baseline. The
thresholds, the baseline forms and the significance test are each shown to decide the outcome."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import pytest
from nightly_bundles import FIRST_NIGHT, SECOND_NIGHT

from fleetscope.cli import main
from fleetscope.errors import UserError
from fleetscope.report import check
from fleetscope.report.sections import Column

CHECK_KEYS = {"baseline", "checked_at", "rule", "changed", "exit_status", "hosts"}
HOST_KEYS = {"host", "state", "note", "latest", "baseline", "figures"}
FIGURE_KEYS = {"metric", "label", "unit", "level", "baseline", "latest", "relative", "difference", "p_value",
               "samples", "threshold", "direction", "status", "note"}
MOVED_ON_RPL = {"dram_latency", "read_1_thread_gb_s", "read_all_threads_gb_s"}


@pytest.fixture(scope="module")
def db(two_nights):
    return two_nights[1]


def run_json(capsys, db, *arguments):
    """`fleetscope check --format json` in this process (the CLI's own main: the variants below need no
    interpreter of their own each)."""
    status = main(["check", "--db", str(db), "--format", "json", *map(str, arguments)])
    captured = capsys.readouterr()
    assert status in (0, 4), captured.err
    document = json.loads(captured.out)
    assert document["exit_status"] == status
    return document, {host["host"]: host for host in document["hosts"]}


def moved(host: dict) -> set[str]:
    return {figure["metric"] for figure in host["figures"] if figure["status"] in ("moved", "lost")}


def test_check_gates_the_host_whose_dram_slowed_and_writes_junit(db, cli, tmp_path):
    junit = tmp_path / "ci" / "check.xml"
    proc = cli("check", "--db", db, "--junit", junit)
    assert proc.returncode == check.EXIT_CHANGED, proc.stdout + proc.stderr
    assert "3 hosts, 1 changed" in proc.stdout
    assert "CHANGED      rpl-03" in proc.stdout and "DRAM latency" in proc.stdout and "+60.0%" in proc.stdout
    assert "held         zen3-01" in proc.stdout and "no baseline  n1-01: one run only" in proc.stdout

    root = ElementTree.parse(junit).getroot()
    assert root.tag == "testsuites"
    suites = {suite.get("hostname"): suite for suite in root.iter("testsuite")}
    assert set(suites) == {"rpl-03", "zen3-01", "n1-01"}
    for suite in suites.values():  # the counts a CI server reads agree with the cases
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(case.find("failure") is not None for case in cases)
        assert int(suite.get("skipped")) == sum(case.find("skipped") is not None for case in cases)
    assert int(root.get("failures")) == sum(int(suite.get("failures")) for suite in suites.values()) == 3
    failed = {case.get("name") for case in suites["rpl-03"].iter("testcase") if case.find("failure") is not None}
    assert failed == {"DRAM latency (dram_latency)", "read 1 thread (read_1_thread_gb_s)",
                      "read all threads (read_all_threads_gb_s)"}
    dram = next(case for case in suites["rpl-03"].iter("testcase") if case.get("name") == "DRAM latency (dram_latency)")
    assert "Mann-Whitney p = " in dram.find("failure").get("message")
    assert json.loads(dram.find("failure").text)["status"] == "moved"
    assert suites["zen3-01"].get("failures") == "0" and int(suites["zen3-01"].get("tests")) > 10
    assert suites["n1-01"].find("testcase/skipped").get("message").startswith("no baseline")
    properties = {item.get("name"): item.get("value") for item in suites["rpl-03"].iter("property")}
    assert properties["baseline_run"] == f"rpl-03@{FIRST_NIGHT}" and properties["latest_run"] == SECOND_NIGHT

    on_stdout = cli("check", "--db", db, "--format", "junit", "zen3-01")
    assert on_stdout.returncode == 0
    assert ElementTree.fromstring(on_stdout.stdout).get("failures") == "0"


def test_json_names_each_figure_with_its_change_test_and_threshold(db, capsys):
    document, hosts = run_json(capsys, db)
    assert set(document) == CHECK_KEYS and document["changed"] == ["rpl-03"]
    assert all(set(host) == HOST_KEYS for host in hosts.values())
    assert all(set(figure) == FIGURE_KEYS for host in hosts.values() for figure in host["figures"])
    assert moved(hosts["rpl-03"]) == MOVED_ON_RPL
    figures = {figure["metric"]: figure for figure in hosts["rpl-03"]["figures"]}
    assert figures["dram_latency"]["relative"] == pytest.approx(0.6, abs=0.01)
    assert figures["dram_latency"]["p_value"] < 1e-4 and figures["dram_latency"]["direction"] == "worse"
    assert figures["read_1_thread_gb_s"]["p_value"] is None and "threshold only" in figures["read_1_thread_gb_s"]["note"]
    assert figures["l2_latency"]["status"] == "held" and figures["l2_latency"]["relative"] == pytest.approx(0, abs=1e-9)
    assert hosts["rpl-03"]["baseline"]["run_id"] == FIRST_NIGHT
    zen3 = {figure["metric"]: figure for figure in hosts["zen3-01"]["figures"]}
    assert zen3["l1_latency"]["relative"] == pytest.approx(-0.015, abs=1e-6)
    assert not moved(hosts["zen3-01"]) and hosts["n1-01"]["state"] == "no baseline"


def test_thresholds_per_figure_decide_and_the_test_still_guards_levels(db, capsys):
    # rpl-03 passes once its DRAM may move 70% and the read bandwidths are not gated
    document, hosts = run_json(capsys, db, "--threshold", "dram_latency=70%", "--threshold", "read_*=off")
    assert document["exit_status"] == 0 and not moved(hosts["rpl-03"])
    # zen3-01's 1.5% is beyond a 1% threshold: L1 moves (p < 0.05 on its plateau's samples), L2 and L3 do not
    # (their samples overlap: no significant difference), the bandwidths do (no samples: threshold alone)
    document, hosts = run_json(capsys, db, "--threshold", "*=1%", "zen3-01")
    figures = {figure["metric"]: figure for figure in hosts["zen3-01"]["figures"]}
    assert figures["l1_latency"]["status"] == "moved" and figures["l1_latency"]["p_value"] < 0.05
    for level in ("l2_latency", "l3_latency"):
        assert figures[level]["status"] == "held" and figures[level]["p_value"] >= 0.05, figures[level]
    assert figures["read_1_thread_gb_s"]["status"] == "moved"
    assert document["exit_status"] == 4
    # zen3-01's latencies got lower (better) and its bandwidths too (worse): --worse-only gates only the latter
    document, hosts = run_json(capsys, db, "--threshold", "*=1%", "--worse-only", "zen3-01")
    assert moved(hosts["zen3-01"]) == {"read_1_thread_gb_s", "read_all_threads_gb_s"}
    figures = {figure["metric"]: figure for figure in hosts["zen3-01"]["figures"]}
    assert figures["l1_latency"]["direction"] == "better" and figures["read_1_thread_gb_s"]["direction"] == "worse"
    document, _ = run_json(capsys, db, "--threshold", "l*_latency=1%", "--worse-only", "zen3-01")
    assert document["exit_status"] == 0
    # an absolute threshold in the figure's unit (ns): rpl-03's DRAM moved by about 80 ns
    _, hosts = run_json(capsys, db, "--threshold", "dram_latency=+100", "--threshold", "read_*=off", "rpl-03")
    assert not moved(hosts["rpl-03"])
    _, hosts = run_json(capsys, db, "--threshold", "dram_latency=+50", "--threshold", "read_*=off", "rpl-03")
    assert moved(hosts["rpl-03"]) == {"dram_latency"}


def test_baselines_a_run_a_date_and_another_host(db, capsys):
    for baseline in (FIRST_NIGHT, "2026-11-30", "2026-11-30T23:00:00Z"):
        document, hosts = run_json(capsys, db, "--baseline", baseline)
        assert moved(hosts["rpl-03"]) == MOVED_ON_RPL, baseline
        assert hosts["rpl-03"]["baseline"]["run_id"] == FIRST_NIGHT
        assert hosts["n1-01"]["state"] == "no baseline"
    _, hosts = run_json(capsys, db, "--baseline", "2026-12-01")  # the second night is the latest: nothing newer
    assert {host["state"] for host in hosts.values()} == {"no baseline"}
    assert "no run since 2026-12-01 23:59 UTC" in hosts["rpl-03"]["note"]
    _, hosts = run_json(capsys, db, "--baseline", "host:zen3-01")  # Raptor Lake's levels are 20% faster than Zen 3's
    assert hosts["zen3-01"]["note"] == "it is the baseline host"
    assert {"l1_latency", "l2_latency", "l3_latency"} <= moved(hosts["rpl-03"])
    assert hosts["rpl-03"]["baseline"] == {"host": "zen3-01", "run_id": SECOND_NIGHT,
                                           "started_at": "2026-12-01T02:15:00Z"}


def test_an_unknown_host_or_baseline_is_an_error_with_a_suggestion(db, cli):
    proc = cli("check", "--db", db, "zen3-1")
    assert proc.returncode == 1
    assert "no host 'zen3-1' in the warehouse (did you mean zen3-01?)" in proc.stderr
    proc = cli("check", "--db", db, "--baseline", "host:rpl03")
    assert proc.returncode == 1 and "did you mean rpl-03?" in proc.stderr
    proc = cli("check", "--db", db, "--baseline", "last-tuesday")
    assert proc.returncode == 1 and "expected previous, a run id" in proc.stderr
    proc = cli("check", "--db", db, "--threshold", "dram_latency=fast")
    assert proc.returncode == 1 and "a percentage (8%)" in proc.stderr


LATENCY = Column("dram_latency", "DRAM latency", "ns")


def row(before, after, relative=None, p_value=None, level="DRAM", column=LATENCY):
    if relative is None and isinstance(before, (int, float)) and isinstance(after, (int, float)) and before:
        relative = after / before - 1
    delta = {"operand": "x", "relative": relative, "p_value": p_value, "samples": None, "significant": None,
             "note": None}
    return {"column": column, "values": [before, after], "level": level, "deltas": [delta]}


@pytest.mark.parametrize("before, after, p_value, threshold, status", [
    (100.0, 104.0, 1e-6, "5%", "held"),     # significant but small
    (100.0, 110.0, 0.2, "5%", "held"),      # large but noise by the test
    (100.0, 110.0, 1e-6, "5%", "moved"),    # both
    (100.0, 90.0, 1e-6, "5%", "moved"),     # both, for the better
    (100.0, 110.0, None, "5%", "moved"),    # no samples: the threshold alone
    (100.0, 110.0, 1e-6, "off", "held"),    # not gated
    (100.0, None, None, "5%", "lost"),      # measured before, not now
    (100.0, None, None, "off", "not gated"),
    (None, 100.0, None, "5%", "new"),
    (None, None, None, "5%", "not measured"),
    (0.0, 3.0, None, "+2", "moved"),        # a zero baseline: an absolute threshold still says
    (0.0, 1.0, None, "+2", "held"),
])
def test_judge_applies_threshold_and_test_together(before, after, p_value, threshold, status):
    _, parsed = check.parse_threshold(f"dram_latency={threshold}")
    data = row(before, after, p_value=p_value)
    assert check.judge(data, data["deltas"][0], parsed, worse_only=False)["status"] == status


def test_threshold_patterns_and_defaults():
    given = [check.parse_threshold("l*_latency=2%"), check.parse_threshold("l3_latency=off")]
    assert check.threshold_for("l2_latency", given).relative == 0.02
    assert check.threshold_for("l3_latency", given).off
    assert check.threshold_for("dram_latency", given).relative == 0.05       # the default
    assert check.threshold_for("l2_size", []).relative == 0.5
    assert check.threshold_for("flagged", []).absolute == 1
    assert check.threshold_for("storage_p99_read_ns", []).relative == 0.25
    assert check.threshold_for("core_clock_ghz", []).relative == 0.10        # a figure not named yet
    for bad in ("dram_latency", "=5%", "dram_latency=-5%", "dram_latency=nan%", "x=inf"):
        with pytest.raises(UserError):
            check.parse_threshold(bad)


def test_junit_escapes_what_xml_cannot_hold():
    assert check._xml_text("rack\x1b[31m-1") == "rack\\x1b[31m-1"


def test_more_flags_in_the_latest_run_are_pointed_out():
    latest = check.fleet.Run("h", "r2", None, "complete", 1, "", False, None, None)
    baseline = check.fleet.Run("h", "r1", None, "complete", 2, "", False, None, None)
    figures = [check.judge(row(3.0, 9.0, column=check.fleet.FLAGGED, level=None),
                           row(3.0, 9.0, column=check.fleet.FLAGGED, level=None)["deltas"][0],
                           check.threshold_for("flagged", []), worse_only=False)]
    result = check.CheckResult(check.parse_baseline("previous"), [check.HostCheck("h", latest, baseline, "changed",
                                                                                   figures=figures)],
                               [], False, check.datetime.now(check.UTC))
    text = check.render_text(result)
    assert "flags 3 -> 9 (+200.0%, not tested; threshold ±1, worse)" in text
    assert "read them on its page before blaming the machine" in text
