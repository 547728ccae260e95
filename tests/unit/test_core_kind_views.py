"""A hybrid host's bundle: the pinned points of each core kind stay apart in the views, the warehouse
says which kind each CPU is, and each kind's hierarchy is inferred on its own, never a blend
(tests/unit/test_core_kind_inference.py checks each kind's levels against known answers)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import duckdb
import pytest
from sysfs_facts import read

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hybrid_topology():
    topology = read("intel-raptorlake-hybrid")
    topology.pop("numa")
    return topology


def pinned(points: list[dict], cpu: int, slower: float = 1.0) -> list[dict]:
    out = []
    for point in copy.deepcopy(points):
        point["params"]["cpu"] = cpu
        point["samples"] = [round(value * slower, 4) for value in point["samples"]]
        point["summary"] = {key: (round(value * slower, 4) if key != "count" else value)
                            for key, value in point["summary"].items()}
        out.append(point)
    return out


def levels(db: Path, kind: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return connection.execute(
            "SELECT page_policy, level_index, latency_ns, capacity_bytes FROM inferred_levels WHERE core_kind = ? "
            "ORDER BY page_policy, level_index", [kind]).fetchall()


def test_each_kind_keeps_its_points_and_is_inferred_on_its_own(bundles, cli, tmp_path, hybrid_topology):
    sweep = bundles.latency_points(page_policies=("thp",))
    manifest = bundles.manifest()
    manifest["facts"]["topology"] = hybrid_topology

    p_only = bundles.write(manifest=copy.deepcopy(manifest), results={"results/latency_sweep.jsonl": pinned(sweep, 4)})
    p_db = tmp_path / "p-only.duckdb"
    assert cli("ingest", p_only, "--db", p_db).returncode == 0

    both = bundles.write(manifest=dict(copy.deepcopy(manifest), host="hybrid"),
                         results={"results/latency_sweep.jsonl": pinned(sweep, 12, slower=0.6) + pinned(sweep, 4)})
    db = tmp_path / "fleet.duckdb"
    result = cli("ingest", both, "--db", db)
    assert result.returncode == 0, result.stdout + result.stderr

    with duckdb.connect(str(db), read_only=True) as connection:
        per_kind = connection.execute(
            "SELECT k.core_kind, c.cpu, count(*), min(c.min_ns) FROM latency_curve c "
            "JOIN cpu_core_kinds k USING (run_id, host, cpu) GROUP BY k.core_kind, c.cpu, k.kind_rank ORDER BY k.kind_rank").fetchall()
        kinds = connection.execute(
            "SELECT core_kind, kind_rank, count(*), list(cpu) FILTER (WHERE representative) "
            "FROM cpu_core_kinds GROUP BY core_kind, kind_rank ORDER BY kind_rank").fetchall()
    assert [(kind, cpu, count) for kind, cpu, count, _ in per_kind] == [("P-core", 4, len(sweep)),
                                                                        ("E-core", 12, len(sweep))]
    assert per_kind[1][3] == pytest.approx(per_kind[0][3] * 0.6, rel=1e-3)
    assert kinds == [("P-core", 0, 12, [4]), ("E-core", 1, 8, [12])]
    # the E-core's curve (made faster here, so a per-size minimum over both kinds would take it) did
    # not leak into the P-core's hierarchy: the same as on a run that measured the P-core alone
    assert levels(db, "P-core") == levels(p_db, "P-core") and levels(db, "P-core")
    assert [row[:2] for row in levels(db, "E-core")] == [row[:2] for row in levels(db, "P-core")]
    for e_core, p_core in zip(levels(db, "E-core"), levels(db, "P-core")):
        assert e_core[2] == pytest.approx(p_core[2] * 0.6, rel=0.05)


def test_a_host_measured_on_its_slower_kind_only_still_infers(bundles, cli, tmp_path, hybrid_topology):
    """kernels_per_core_kind off and kernels_cpu on an E-core: the only kind measured is the one inferred,
    and its rows say it is the E-core's."""
    manifest = bundles.manifest()
    manifest["facts"]["topology"] = hybrid_topology
    bundle = bundles.write(manifest=manifest, results={
        "results/latency_sweep.jsonl": pinned(bundles.latency_points(page_policies=("thp",)), 12)})
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundle, "--db", db).returncode == 0
    assert any(capacity for _, _, _, capacity in levels(db, "E-core"))
    assert levels(db, "P-core") == []
    # the pages say whose numbers they are: the summary's line and the fleet page's note name the E-core
    out = tmp_path / "reports"
    assert cli("report", "--db", db, "--out", out).returncode == 0
    assert '<strong>E-core (CPU 12)</strong>: L1 ' in (out / "node1.html").read_text()
    assert "node1</a> by its E-core (the only kind measured)" in (out / "index.html").read_text()


DEFAULT_RUN = ROOT / "tests" / "fixtures" / "default_run" / "results"


def zero_queue_points() -> list[dict]:
    path = next(DEFAULT_RUN.glob("*/*/results/zero_queue.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


def chart_spec(page: str, section: str) -> dict:
    return json.loads(re.search(rf'id="{section}-chart-spec">(.*?)</script>', page, re.DOTALL).group(1))


def test_the_host_page_shows_each_kinds_idle_latency_side_by_side(bundles, cli, tmp_path, hybrid_topology):
    manifest = bundles.manifest()
    manifest["facts"]["topology"] = hybrid_topology
    manifest["experiments"].append({"name": "zero_queue", "status": "ok", "file": "results/zero_queue.jsonl",
                                    "error": None, "wall_s": 3.0})
    levels_measured = zero_queue_points()
    bundles.write(manifest=manifest, results={
        "results/latency_sweep.jsonl": pinned(bundles.latency_points(page_policies=("thp",)), 4),
        "results/zero_queue.jsonl": pinned(levels_measured, 4) + pinned(levels_measured, 12, slower=1.25)})
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    reported = cli("report", "--db", db, "--out", out)
    assert reported.returncode == 0, reported.stdout + reported.stderr
    page = (out / "node1.html").read_text()
    spec = chart_spec(page, "zero-queue")
    drawn = spec["layer"][0]["data"]
    records = drawn["values"] if "values" in drawn else spec["datasets"][drawn["name"]]
    assert {record["core kind"] for record in records} == {"P-core", "E-core"}
    assert spec["layer"][0]["encoding"]["color"]["field"] == "core kind"
    assert "each core kind's own sysfs sizes (P-core, E-core)" in spec["title"]["subtitle"]
    by_kind = {(record["core kind"], record["level"]): record["value"] for record in records}
    for kind, level in by_kind:
        if kind == "E-core":
            assert by_kind[kind, level] == pytest.approx(by_kind["P-core", level] * 1.25, rel=2e-3)
    table = page[page.index('id="zero-queue-table"'):]
    table = table[:table.index("</table>")]
    assert table.count(">E-core<") == table.count(">P-core<") == len(levels_measured)
    assert "20 CPUs, each with its place and clocks" in page  # not 20 x 20 rows of per-CPU facts


def test_a_one_kind_host_page_draws_no_kind_grouping(bundles, cli, tmp_path):
    manifest = bundles.manifest()
    manifest["experiments"].append({"name": "zero_queue", "status": "ok", "file": "results/zero_queue.jsonl",
                                    "error": None, "wall_s": 3.0})
    bundles.write(manifest=manifest, results={"results/latency_sweep.jsonl": bundles.latency_points(),
                                              "results/zero_queue.jsonl": zero_queue_points()})
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0
    spec = chart_spec((out / "node1.html").read_text(), "zero-queue")
    assert "color" not in spec["layer"][0]["encoding"]
