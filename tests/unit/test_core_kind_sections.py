"""The host page's sections on a host with more than one core kind, from bundles loaded by the real ingest:
the pinned single-thread experiments (latency curve, tlb, write cost, single-thread bandwidth, SAXPY) show
each kind's series and a core-kind column; affinity and smt name the kind(s) of the CPUs each thread and
placement used (views point_core_kinds, affinity_threads, affinity_summary, smt_interference). A host with
one kind (a real two-socket Xeon's topology) gets exactly the page of a host whose facts hold no topology.
The two-kind host is tests/core_kind_bundles.py's: a real run's points on a P-core and an E-core."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
from core_kind_bundles import (E_SLOWER, PER_KIND, affinity_points, experiments, fixture_points,
                               smt_points, thread_sweep_points, topology, write_hybrid)

from fleetscope.report import charts

ROOT = Path(__file__).resolve().parents[2]
# section id: (its report query, the series field its chart draws)
SECTIONS = {"latency": ("latency_curve", "page_policy"), "tlb": ("tlb_reach", "page_size"),
            "write-cost": ("write_cost_levels", "walk"), "bandwidth": ("bandwidth_points_bandwidth", "core kind"),
            "saxpy": ("saxpy_stride", "core kind")}


@pytest.fixture(scope="module")
def fleet(bundle_tools, tmp_path_factory):
    """Three hosts: 'hybrid' (Raptor Lake, each pinned experiment on both kinds), 'one-kind' (a Xeon's
    topology) and 'no-topology' (facts from before topology), the last two with the same points."""
    builder_class, run_cli = bundle_tools
    root = tmp_path_factory.mktemp("core-kind-sections")
    builder = builder_class(root / "results")
    write_hybrid(builder)
    single = {f"results/{name}.jsonl": fixture_points(name) for name in (*PER_KIND, "affinity", "thread_sweep")}
    single["results/smt.jsonl"] = smt_points()
    for host, facts in (("one-kind", topology("intel-xeon-e5-2node")), ("no-topology", None)):
        manifest = builder.manifest(host=host)
        manifest["experiments"] += experiments(*PER_KIND[1:], "affinity", "smt", "thread_sweep")
        if facts:
            manifest["facts"]["topology"] = facts
        builder.write(manifest, results=single)
    db, out = root / "fleet.duckdb", root / "reports"
    for command in (("ingest", builder.results_dir, "--db", db), ("report", "--db", db, "--out", out)):
        result = run_cli(*command)
        assert result.returncode == 0, result.stdout + result.stderr
    return db, out


def rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def chart_spec(page: str, section: str) -> dict:
    return json.loads(re.search(rf'id="{section}-chart-spec">(.*?)</script>', page, re.DOTALL).group(1))


def drawn_series(spec: dict, field: str) -> set:
    """Every value of `field` in the chart's data (inline or named datasets)."""
    layers = [spec, *spec.get("layer", []), *spec.get("spec", {}).get("layer", [spec.get("spec", {})])]
    data = [record for layer in layers if "values" in layer.get("data", {}) for record in layer["data"]["values"]]
    data += [record for values in spec.get("datasets", {}).values() for record in values]
    return {record[field] for record in data if field in record}


def table_html(page: str, table_id: str) -> str:
    table = page[page.index(f'id="{table_id}"'):]
    return table[:table.index("</table>")]


def sections_of(page: str) -> dict[str, tuple[dict, str]]:
    return {section: (chart_spec(page, section), table_html(page, f"{section}-table")) for section in SECTIONS}


def test_each_pinned_section_keeps_the_kinds_apart(fleet):
    db, _ = fleet
    with duckdb.connect(str(db), read_only=True) as connection:
        connection.execute("CREATE TEMP TABLE chosen_runs AS SELECT run_id, host FROM runs WHERE host = 'hybrid'")
        for section, (query, _) in SECTIONS.items():
            text = (ROOT / "warehouse" / "queries" / "report" / f"{query}.sql").read_text()
            kinds = [kind for (kind,) in connection.execute(f"SELECT core_kind FROM ({text})").fetchall()]
            assert kinds and set(kinds) == {"P-core", "E-core"}, section
            # the fastest kind first, as the charts' legends and the tables list them
            assert kinds.index("E-core") == kinds.count("P-core"), section
    # tlb and SAXPY pair within a kind: the E-core's translation cost and slowdown are its own
    (p_ratio, e_ratio), = rows(db, "SELECT max(slowdown_vs_stride1) FILTER (WHERE cpu = 4), "
                                   "max(slowdown_vs_stride1) FILTER (WHERE cpu = 12) FROM saxpy_stride "
                                   "WHERE host = 'hybrid'")
    assert e_ratio == pytest.approx(p_ratio)
    (p_rmw, e_rmw), = rows(db, "SELECT sum(rmw_ns) FILTER (WHERE cpu = 4), sum(rmw_ns) FILTER (WHERE cpu = 12) "
                               "FROM write_cost_levels WHERE host = 'hybrid'")
    assert e_rmw == pytest.approx(p_rmw * E_SLOWER)


def test_the_hybrid_page_draws_each_kinds_series_and_names_the_kind_in_its_tables(fleet):
    _, out = fleet
    page = (out / "hybrid.html").read_text()
    for section, (spec, table) in sections_of(page).items():
        field = SECTIONS[section][1]
        series = drawn_series(spec, field)
        assert {value.split(" · ")[0] for value in series} == {"P-core", "E-core"}, (section, series)
        lines = spec["title"]["subtitle"]  # the kinds on a line of their own
        assert lines[1].startswith("solid: P-core, dashed: E-core" if section == "bandwidth"
                                   else "one series per core kind"), section
        assert "each measured on its own CPU (P-core, E-core)" in lines[1], section
        assert ">core kind<" in table and ">E-core<" in table and ">P-core<" in table, section
    assert "grey rules: the P-core's caches" in chart_spec(page, "latency")["title"]["subtitle"][1]
    flush = table_html(page, "write-cost-extra-table")
    assert flush.count(">P-core<") == flush.count(">E-core<") == 1


def test_affinity_and_smt_name_the_kinds_their_threads_ran_on(fleet):
    db, out = fleet
    threads = rows(db, "SELECT placement, thread, core_kind FROM affinity_threads WHERE host = 'hybrid' "
                       "GROUP BY ALL ORDER BY ALL")
    assert threads == [("pinned", 0, "P-core"), ("pinned", 1, "E-core"),
                       ("unpinned", 0, "P-core + E-core"), ("unpinned", 1, "E-core"), ("unpinned", 1, "P-core")]
    summary = dict(rows(db, "SELECT placement, threads_by_core_kind FROM affinity_summary "
                            "WHERE host = 'hybrid' AND workload = 'compute'"))
    # unpinned thread 1 ran on an E-core in one repeat and on a P-core in the other: half a thread each
    assert summary == {"pinned": "1 on P-core, 1 on E-core",
                       "unpinned": "0.5 on P-core, 1 on P-core + E-core, 0.5 on E-core"}
    smt = dict(rows(db, "SELECT placement, core_kind FROM smt_interference WHERE host = 'hybrid'"))
    assert smt == {"alone": "P-core", "siblings": "P-core", "cores": "P-core + E-core"}

    page = (out / "hybrid.html").read_text()
    affinity = chart_spec(page, "affinity")
    assert affinity["spec"]["encoding"]["color"]["field"] == "core kind"
    assert drawn_series(affinity, "core kind") == {"P-core", "E-core", "P-core + E-core"}
    assert "1 on P-core, 1 on E-core" in table_html(page, "affinity-extra-table")
    assert drawn_series(chart_spec(page, "smt"), "placement") == {"alone · P-core", "siblings · P-core",
                                                                   "cores · P-core + E-core"}
    assert ">P-core + E-core<" in table_html(page, "smt-table")


def test_a_one_kind_host_page_is_the_page_of_a_host_without_topology(fleet):
    db, out = fleet
    # the views still say which kind a one-kind host's CPUs are ('core'); only the page leaves it out
    assert rows(db, "SELECT DISTINCT core_kind FROM affinity_threads WHERE host = 'one-kind'") == [("core",)]
    one_kind, no_topology = ((out / f"{host}.html").read_text() for host in ("one-kind", "no-topology"))
    for section in (*SECTIONS, "affinity", "smt"):
        assert chart_spec(one_kind, section) == chart_spec(no_topology, section), section
    for table in [*(f"{section}-table" for section in SECTIONS), "write-cost-extra-table", "affinity-extra-table",
                  "smt-table"]:
        assert table_html(one_kind, table) == table_html(no_topology, table), table
        assert "core kind" not in table_html(one_kind, table)
    assert "core kind" not in json.dumps(chart_spec(one_kind, "affinity"))


@pytest.mark.parametrize("experiment, edit, where", [
    ("smt", lambda point: point["params"].update(cpus=[0, "12"]), "at $.params.cpus[1]"),
    ("smt", lambda point: point["params"].update(cpus=[0, 1, 2]), "at $.params.cpus"),
    ("affinity", lambda point: point["context"].update(cpus_seen=[-1]), "at $.context.cpus_seen[0]"),
    ("affinity", lambda point: point["context"].update(cpus_seen="0-3"), "at $.context.cpus_seen"),
    ("thread_sweep", lambda point: point["params"].update(cpus="abc"), "at $.params.cpus"),
])
def test_the_cpu_lists_the_kinds_are_read_from_are_checked_at_the_boundary(bundles, cli, tmp_path, experiment,
                                                                          edit, where):
    points = {"smt": smt_points, "affinity": affinity_points, "thread_sweep": thread_sweep_points}[experiment]()
    edit(points[1])
    manifest = bundles.manifest()
    manifest["experiments"].append({"name": experiment, "status": "ok", "file": f"results/{experiment}.jsonl",
                                    "error": None, "wall_s": 1.0})
    bundles.write(manifest, results={"results/latency_sweep.jsonl": bundles.latency_points(),
                                     f"results/{experiment}.jsonl": points})
    result = cli("ingest", bundles.results_dir, "--db", tmp_path / "fleet.duckdb")
    assert result.returncode != 0
    assert f"results/{experiment}.jsonl: line 2" in result.stdout + result.stderr
    assert where in result.stdout + result.stderr


@pytest.mark.parametrize("kinds, series, note", [
    ([], "thp", ""),
    (["P-core"], "thp", "; measured on P-core CPUs only (this host has more than one core kind)"),
    (["P-core", "E-core"], "E-core · thp",
     "\none series per core kind, each measured on its own CPU (P-core, E-core); grey rules: the P-core's caches"),
])
def test_chart_helpers_group_by_kind_only_where_there_are_several(kinds, series, note):
    row = {"core_kind": kinds[-1] if kinds else None}
    assert charts.kind_series(kinds, row, "thp") == series
    assert charts.kinds_note(kinds, sysfs_rules=True) == note
    assert bool(charts.kind_field(kinds, row)) == bool(charts.kind_color(kinds)) == (len(kinds) > 1)
    assert charts.core_kinds([{"core_kind": kind} for kind in kinds * 2] + [{"core_kind": None}]) == kinds


def test_the_thread_sweep_names_the_kind_each_step_added(fleet):
    """Each step's kind is its newest CPU's (the last of params.cpus), on the chart and in the table; a
    one-kind host's sweep is drawn as before, by placement only."""
    db, out = fleet
    with duckdb.connect(str(db), read_only=True) as connection:
        connection.execute("CREATE TEMP TABLE chosen_runs AS SELECT run_id, host FROM runs")
        text = (ROOT / "warehouse" / "queries" / "report" / "bandwidth_points_thread_sweep.sql").read_text()
        steps = connection.execute(f"SELECT DISTINCT host, threads, core_kind FROM ({text}) ORDER BY ALL").fetchall()
    assert [step for step in steps if step[0] == "hybrid"] == [("hybrid", 1, "P-core"), ("hybrid", 2, "E-core")]
    assert {step[2] for step in steps if step[0] != "hybrid"} == {None}
    page = (out / "hybrid.html").read_text()
    spec = chart_spec(page, "thread-sweep")
    assert drawn_series(spec, "placement") == {"P-core, one per core", "E-core, one per core"}
    assert "fastest core kind first" in spec["title"]["subtitle"]
    table = table_html(page, "thread-sweep-table")
    assert ">newest thread on<" in table and ">E-core<" in table
    one_kind = (out / "one-kind.html").read_text()
    assert drawn_series(chart_spec(one_kind, "thread-sweep"), "placement") <= {"one per core", "SMT siblings in use"}
    assert ">newest thread on<" not in table_html(one_kind, "thread-sweep-table")
