"""The analysis notebooks and the package logic behind them (fleetscope.report.notebook) on the synthetic fleet of
tests/fleet_bundles.py: groups side by side over every family with formatted numbers and charts with legends,
one host's drift across runs reported only when large AND significant, and both notebooks running headless
and exporting to HTML."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fleet_bundles import EARLIER_RUN_ID

from fleetscope.report import notebook as compare

ANALYSIS = Path(__file__).resolve().parents[2] / "analysis"
MARIMO = Path(sys.executable).parent / "marimo"
RAW_FLOAT = re.compile(r"^-?\d+\.\d{5,}$|e[+-]\d+$")


@pytest.fixture(scope="module")
def warehouse(synthetic_fleet):
    return synthetic_fleet[1]


def test_groups_side_by_side_over_every_family(warehouse):
    with compare.connect(warehouse) as connection:
        groups_side_by_side(connection)


def groups_side_by_side(connection):
    hosts = compare.hosts(connection)
    assert hosts.height == 18
    choices = compare.operands(hosts, "microarchitecture")
    assert choices == {"Neoverse N1": "uarch:Neoverse N1", "Raptor Lake": "uarch:Raptor Lake",
                       "Zen 3 (Vermeer)": "uarch:Zen 3 (Vermeer)"}
    assert compare.operands(hosts, "inventory group") == {name: f"group:{name}"
                                                         for name in ("lab", "neoverse", "raptor_lake", "zen3")}
    result = compare.comparison(connection, [choices["Raptor Lake"], choices["Zen 3 (Vermeer)"]])
    figures = compare.figures(result)
    dram = figures.filter(figures["figure"] == "DRAM latency").row(0, named=True)
    assert dram["uarch:Raptor Lake"].endswith(" ns") and dram["uarch:Zen 3 (Vermeer) vs uarch:Raptor Lake"] == "+25.0%"
    assert dram["test uarch:Zen 3 (Vermeer)"].endswith(": significant")
    for column in figures.columns:  # numbers for people: no raw floats, no scientific notation
        assert not any(RAW_FLOAT.search(cell) for cell in figures[column].drop_nulls().to_list()), column
    families = dict(compare.charts(result))
    assert set(families) == {"Latency", "Bandwidth", "CPU, OS and I/O", "Storage"}
    for chart in (chart for charts in families.values() for chart in charts):
        spec = chart.to_dict()
        colour = next(layer["encoding"]["color"] for layer in spec["layer"] if "color" in layer["encoding"])
        assert colour["title"] == "operand" and colour["legend"]  # one line per operand, with a legend
    c2c = compare.c2c(connection, result)
    assert c2c.height >= 2 and all(text.endswith(" ns") for text in c2c["median one-way"].to_list())
    assert compare.smt(connection, result).height == 0  # the default run's VM has no SMT siblings
    flags = compare.flags(connection, result)
    results = flags["result"].to_list()
    assert flags.height > 0 and set(results) <= {"flagged", "clear", "not_run"}
    assert results == sorted(results, key=lambda result: result != "flagged")  # flagged first
    assert all(flags["evidence or reason"].to_list())  # every row says what it saw or why it could not run


def test_drift_reports_the_level_that_moved_by_threshold_and_test(warehouse):
    with compare.connect(warehouse) as connection:
        drift_of_one_host(connection)


def drift_of_one_host(connection):
    assert compare.host_runs(connection, "rpl-03") == [EARLIER_RUN_ID, "20261201T000200Z-000002"]
    result = compare.comparison(connection, [f"rpl-03@{EARLIER_RUN_ID}", "rpl-03"])
    drift = {row["level"]: row for row in compare.drift(result).iter_rows(named=True)}
    assert drift["DRAM"]["moved"] == "yes" and drift["DRAM"]["change"].startswith("+6")
    assert drift["L1"]["moved"] == "no" and drift["L2"]["moved"] == "no"
    assert compare.moved(result)[0].startswith("rpl-03: DRAM latency 13")
    # the same change judged against a higher threshold is not reported
    assert compare.moved(compare.comparison(connection, [f"rpl-03@{EARLIER_RUN_ID}", "rpl-03"], threshold=0.7)) == []


@pytest.mark.parametrize("notebook, arguments, expected", [
    ("compare_hierarchies.py", [], ["Hosts side by side", "Figures side by side", "Zen 3 (Vermeer)",
                                    "Core-to-core latency"]),
    ("run_drift.py", ["--host", "rpl-03"], ["Drift of rpl-03", "DRAM latency"]),
])
def test_notebooks_run_headless_and_export_html(warehouse, tmp_path, notebook, arguments, expected):
    out = tmp_path / "notebook.html"
    proc = subprocess.run([str(MARIMO), "export", "html", str(ANALYSIS / notebook), "-o", str(out), "--",
                           "--db", str(warehouse), *arguments],
                          capture_output=True, text=True, timeout=240, env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    html = out.read_text()
    assert '"type": "error"' not in html
    for text in expected:
        assert text in html, text
