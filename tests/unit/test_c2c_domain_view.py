"""c2c latency within vs across LLC domains, from ingest to the host page, on the real topology of a part
with two LLC domains on one NUMA node (the Arm GB10 of tests/fixtures/sysfs: CPUs 0-9 and 10-19), and on
a one-domain host (the Raptor Lake hybrid)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import duckdb
import pytest
from sysfs_facts import read

from fleetscope.ingest.bundle import BundleError, load_bundle

# one-way ns: 30 within 0-9, 40 within 10-19, 120 across; the SMT-sibling figure must not count
WITHIN = {"0-9": 30.0, "10-19": 40.0}
ACROSS = 120.0


def c2c_point(base: dict, cpu_a: int, cpu_b: int, ns: float, smt: bool = False) -> dict:
    point = copy.deepcopy(base)
    point.update(experiment="c2c", kernel="c2c")
    point["params"] = {"cpu_a": cpu_a, "cpu_b": cpu_b, "smt_siblings": smt, "same_core": smt, "same_package": True,
                       "numa_node_a": 0, "numa_node_b": 0}
    point["samples"] = [ns, ns * 1.01, ns * 1.02]
    point["summary"] = {"min": ns, "median": ns * 1.01, "mean": ns * 1.01, "ci95_low": ns, "ci95_high": ns * 1.02,
                        "count": 3}
    return point


def domain(cpu: int) -> str:
    return "0-9" if cpu < 10 else "10-19"


def write(bundles, topology: dict, pairs: list[tuple[int, int, bool]], notes: list[str]) -> Path:
    base = bundles.latency_points(page_policies=("thp",))[0]
    points = [c2c_point(base, a, b, WITHIN[domain(a)] if domain(a) == domain(b) else ACROSS, smt)
              for a, b, smt in pairs]
    manifest = bundles.manifest()
    manifest["facts"]["topology"] = topology
    manifest["experiments"].append({"name": "c2c", "status": "ok", "file": "results/c2c.jsonl", "error": None,
                                    "wall_s": 1.0, "notes": notes})
    return bundles.write(manifest=manifest, results={"results/latency_sweep.jsonl": bundles.latency_points(),
                                                     "results/c2c.jsonl": points})


@pytest.fixture(scope="module")
def gb10():
    topology = read("arm-gb10-biglittle")
    topology.pop("numa")
    return topology


def test_pairs_are_labelled_and_summarised_per_domain_pair(bundles, cli, tmp_path, gb10):
    pairs = [(0, 1, True), (0, 1, False), (1, 2, False), (2, 0, False), (10, 11, False), (11, 12, False),
             (0, 10, False), (1, 11, False), (10, 0, False)]
    write(bundles, gb10, pairs, ["2 LLC domains (0-9; 10-19): every ordered CPU pair is measured"])
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    with duckdb.connect(str(db), read_only=True) as connection:
        rows = connection.execute("SELECT llc_domain_a, llc_domain_b, same_domain, same_node, pairs, median_ns, "
                                  "llc_domains FROM c2c_llc_domains ORDER BY first_cpu_a, first_cpu_b").fetchall()
    # the SMT-sibling pair (0, 1) is left out: 3 pairs within 0-9, not 4
    assert [row[:5] for row in rows] == [("0-9", "0-9", True, True, 3), ("0-9", "10-19", False, True, 2),
                                         ("10-19", "0-9", False, True, 1), ("10-19", "10-19", True, True, 2)]
    assert [row[5] for row in rows] == pytest.approx([30.3, 121.2, 121.2, 40.4])
    assert {row[6] for row in rows} == {2}
    assert cli("report", "--db", db, "--out", out).returncode == 0
    page = (out / "node1.html").read_text()
    spec = json.loads(re.search(r'id="c2c-domains-chart-spec">(.*?)</script>', page, re.DOTALL).group(1))
    drawn = spec["layer"][0]["data"]
    records = drawn["values"] if "values" in drawn else spec["datasets"][drawn["name"]]
    assert sorted((r["domain_a"], r["domain_b"], r["where"]) for r in records) == [
        ("0-9", "0-9", "within"), ("0-9", "10-19", "across"), ("10-19", "0-9", "across"), ("10-19", "10-19", "within")]
    assert spec["layer"][0]["encoding"]["x"]["sort"] == ["0-9", "10-19"]
    assert page.index('id="c2c-chart"') < page.index('id="c2c-domains-chart"')


def test_a_one_domain_host_has_no_domain_section_and_its_notes_say_why(bundles, cli, tmp_path):
    topology = read("intel-raptorlake-hybrid")
    topology.pop("numa")
    why = ("one LLC domain (CPUs 0-19): every CPU pair shares it, so there is no within- vs across-domain latency "
           "to show")
    write(bundles, topology, [(0, 2, False), (2, 0, False)], [why])
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM c2c_llc_domains").fetchone()[0] == 0
        assert connection.execute("SELECT count(*) FROM c2c_matrix").fetchone()[0] == 2
    assert cli("report", "--db", db, "--out", out).returncode == 0
    page = (out / "node1.html").read_text()
    assert 'id="c2c-chart"' in page and 'id="c2c-domains"' not in page
    notes = re.search(r'<div class="warning" id="c2c-notes">(.*?)</div>', page, re.DOTALL).group(1)
    assert notes.startswith("Notes: ") and why in notes


@pytest.mark.parametrize("record", [{"cpu": 0, "llc": 5}, {"cpu": 0, "llc": "0-9<script>"}, {"cpu": "0", "llc": "0-9"},
                                    {"llc": "0-9"}, {"cpu": 0, "node": "../node0"}])
def test_a_cpu_record_the_views_cannot_join_on_is_refused_at_ingest(bundles, gb10, record):
    topology = copy.deepcopy(gb10)
    topology["cpus"][0] = record
    with pytest.raises(BundleError, match="topology"):
        load_bundle(write(bundles, topology, [(0, 10, False)], []))
