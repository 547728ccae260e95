"""The inferred hierarchy per core kind (issue 20): a hybrid host whose P-core and E-core curves have known
answers (tests/hybrid_bundles.py) gets one hierarchy per kind, each read against its own kind's sysfs
caches, with bandwidth per level and the SAXPY fit per kind; a one-kind host gets the rows it always got
(core_kind and cpu NULL). The host page's summary shows one line per kind, the compare JSON one entry per
kind, and the fleet columns stay the fastest kind's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import hybrid_bundles as hybrid
import pytest
from hybrid_bundles import KINDS, P_CORE
from sysfs_facts import read

from fleetscope.store.batch import Batch
from fleetscope.report.charts import one_policy
from fleetscope.analyze.inference import CurveReading, Placement, infer_cache_levels

ROOT = Path(__file__).resolve().parents[2]
TLB = next((ROOT / "tests/fixtures/default_run/results").glob("*/*/results/tlb.jsonl"))
SYSFS = {"P-core": [49152, 1310720, 25165824], "E-core": [32768, 2097152, 25165824]}


def tlb_points(cpu: int, slower: float) -> list[dict]:
    points = [json.loads(line) for line in TLB.read_text().splitlines()]
    for point in points:
        point["params"]["cpu"] = cpu
        point["samples"] = [value * slower for value in point["samples"]]
        point["summary"] = {key: value * slower if key != "count" else value for key, value in point["summary"].items()}
        for key in ("paired_difference_median_ns", "paired_difference_min_ns", "control_min_ns", "control_median_ns"):
            if isinstance(point["context"].get(key), (int, float)):
                point["context"][key] *= slower
    return points


def write(builder, host: str, kinds: tuple, topology: dict | None) -> None:
    """One host's bundle: latency, bandwidth, SAXPY (with perf counters) and TLB per kind measured."""
    manifest = builder.manifest(host=host)
    manifest["facts"]["hostname"] = host
    if topology is not None:
        manifest["facts"]["topology"] = topology
    labelled = topology is not None and len(topology["core_kinds"]) > 1
    perf = {path: entry for kind in kinds for path, entry in hybrid.saxpy_perf(kind if labelled else None).items()}
    manifest["experiments"] += [
        {"name": "bandwidth", "status": "ok", "file": "results/bandwidth.jsonl", "error": None, "wall_s": 1.0},
        {"name": "saxpy", "status": "ok", "file": "results/saxpy.jsonl", "error": None, "wall_s": 1.0,
         "notes": [], "raw": [raw for raw, _ in perf.values()]},
        {"name": "tlb", "status": "ok", "file": "results/tlb.jsonl", "error": None, "wall_s": 1.0}]
    builder.write(manifest, results={
        "results/latency_sweep.jsonl": [point for kind in kinds for point in hybrid.sweep(kind)],
        "results/bandwidth.jsonl": [point for kind in kinds for point in hybrid.bandwidth(kind)],
        "results/saxpy.jsonl": [point for kind in kinds for point in hybrid.saxpy(kind)],
        "results/tlb.jsonl": [point for kind in kinds for point in tlb_points(kind.cpu, kind.levels[0][0])],
        **{path: csv for path, (_, csv) in perf.items()}})


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, bundle_tools):
    """hybrid: the Raptor Lake topology, P-core and E-core measured; single: a one-kind Xeon (its real
    topology, one core kind) measured with the P-core's curves."""
    builder_class, cli = bundle_tools
    root = tmp_path_factory.mktemp("kinds")
    builder = builder_class(root / "results")
    (root / "results").mkdir()
    write(builder, "hybrid", KINDS, hybrid.topology())
    xeon = read("intel-xeon-e5-2node")
    xeon.pop("numa")
    write(builder, "single", (P_CORE,), xeon)
    db, out = root / "fleet.duckdb", root / "reports"
    for verb in (("ingest", builder.results_dir), ("report", "--out", out)):
        proc = cli(*verb, "--db", db)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    connection = duckdb.connect(str(db), read_only=True)
    yield connection, out, db, cli
    connection.close()


def rows(connection, query: str, *parameters) -> list[dict]:
    cursor = connection.execute(query, list(parameters))
    return [dict(zip([d[0] for d in cursor.description], row)) for row in cursor.fetchall()]


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.kind)
def test_each_kind_is_inferred_against_its_own_caches(fleet, kind):
    connection = fleet[0]
    levels = rows(connection, "SELECT * FROM inferred_levels WHERE host = 'hybrid' AND core_kind = ? "
                              "ORDER BY level_index", kind.kind)
    assert [level["level"] for level in levels] == ["L1", "L2", "L3", "DRAM"]
    assert {level["cpu"] for level in levels} == {kind.cpu}
    assert [level["sysfs_size_bytes"] for level in levels] == [*SYSFS[kind.kind], None]
    other = next(each for each in KINDS if each is not kind)
    for level, (ns, capacity), (_, other_capacity) in zip(levels, kind.levels, other.levels):
        assert level["latency_ns"] == pytest.approx(ns, rel=0.03), level["level"]
        assert level["latency_cycles"] == pytest.approx(level["latency_ns"] * kind.clock_ghz, rel=1e-6)
        if capacity is not None and level["level"] != "L3":
            # within 25% of the kind's own size, and nearer it than the other kind's
            assert capacity / 1.25 <= level["capacity_bytes"] <= capacity * 1.25, level["level"]
            assert abs(level["capacity_bytes"] - capacity) < abs(level["capacity_bytes"] - other_capacity)


def test_bandwidth_is_assigned_to_the_same_kinds_levels(fleet):
    found = {(row["core_kind"], row["level"]): row for row in rows(
        fleet[0], "SELECT * FROM inferred_level_bandwidth WHERE host = 'hybrid' AND op = 'read'")}
    for kind in KINDS:
        for level, gb_s in zip(("L1", "L2", "L3", "DRAM"), kind.read_gb_s):
            assert found[kind.kind, level]["bandwidth_gb_s"] == pytest.approx(gb_s), (kind.kind, level)
            assert found[kind.kind, level]["cpu"] == kind.cpu


def test_saxpy_counters_read_per_kind_labels_and_each_kind_gets_its_fit(fleet):
    connection = fleet[0]
    counters = rows(connection, "SELECT * FROM saxpy_counters WHERE host = 'hybrid' AND event = 'cache-misses'")
    assert sorted((row["cpu"], row["stride_elements"]) for row in counters) == sorted(
        (kind.cpu, stride) for kind in KINDS for stride in hybrid.SAXPY_STRIDES)
    assert all(row["per_update"] == pytest.approx(hybrid.miss_rate(row["stride_elements"])) for row in counters)
    fits = {row["core_kind"]: row for row in rows(connection, "SELECT * FROM inferred_saxpy WHERE host = 'hybrid'")}
    assert set(fits) == {"P-core", "E-core"}
    for kind in KINDS:
        assert fits[kind.kind]["miss_event"] == "cache-misses" and fits[kind.kind]["cpu"] == kind.cpu
        assert (fits[kind.kind]["hit_ns"], fits[kind.kind]["miss_penalty_ns"]) == pytest.approx(kind.saxpy, rel=1e-3)


def test_each_kind_has_its_own_tlb_rows(fleet):
    tlb = rows(fleet[0], "SELECT core_kind, cpu, page_size FROM inferred_tlb WHERE host = 'hybrid'")
    sizes = {row["page_size"] for row in tlb}
    assert sizes and sorted((row["core_kind"], row["cpu"], row["page_size"]) for row in tlb) == sorted(
        (kind.kind, kind.cpu, size) for kind in KINDS for size in sizes)


def test_a_one_kind_host_gets_the_rows_it_always_got(fleet):
    connection = fleet[0]
    for table in ("inferred_levels", "inferred_tlb", "inferred_level_bandwidth", "inferred_saxpy"):
        assert connection.execute(f"SELECT count(*), count(core_kind), count(cpu) FROM {table} "
                                  "WHERE host = 'single'").fetchone()[1:] == (0, 0), table
    # the same levels as the inference of the curve alone, against the run's own sysfs caches (facts.caches)
    curve = hybrid.sweep(P_CORE)
    # huge pages granted on a host that is no guest: every level's sets fill evenly (way spans from facts.caches)
    placement = Placement(2 << 20, (32768 // 8, 1048576 // 8, 33554432 // 16))
    expected = infer_cache_levels([point["params"]["working_set_bytes"] for point in curve],
                                  [point["summary"]["min"] for point in curve],
                                  core_clock_ghz=[P_CORE.clock_ghz] * len(curve), sysfs_sizes=[32768, 1048576, 33554432],
                                  reading=CurveReading("random-lines", 2 << 20), placement=placement)
    stored = rows(connection, "SELECT * FROM inferred_levels WHERE host = 'single' ORDER BY level_index")
    assert [(row["level"], row["capacity_bytes"], row["size_low_bytes"], row["size_high_bytes"], row["size_method"],
             row["sysfs_size_bytes"], row["latency_ns"]) for row in stored] == [
        (level.level, level.capacity_bytes, level.size_low_bytes, level.size_high_bytes, level.size_method,
         level.sysfs_size_bytes, level.latency_ns) for level in expected.levels]
    (fit,) = rows(connection, "SELECT * FROM inferred_saxpy WHERE host = 'single'")
    assert (fit["hit_ns"], fit["miss_penalty_ns"]) == pytest.approx(P_CORE.saxpy, rel=1e-3)


def summary_card(page: str) -> str:
    start = page.index("<h2>Hierarchy</h2>")
    return page[start:page.index("</div>", start)]


def test_the_summary_shows_one_hierarchy_line_per_kind(fleet):
    page = (fleet[1] / "hybrid.html").read_text()
    lines = [re.sub(r"<.*?>|\s+", lambda match: " " if match.group(0).isspace() else "", line).strip()
             for line in re.findall(r'<li id="summary-levels-\d">(.*?)</li>', summary_card(page), re.S)]
    assert [line.split(":")[0] for line in lines] == ["P-core (CPU 4)", "E-core (CPU 12)"]
    assert lines[0].startswith("P-core (CPU 4): L1 ") and " · 1 ns · 5 cycles; L2 " in lines[0]
    assert lines[1].startswith("E-core (CPU 12): L1 ") and "; DRAM 110 ns · " in lines[1]
    assert 'id="summary-levels"' not in page
    table = page[page.index('id="inferred-levels"'):]
    assert ">core kind<" in table[:table.index("</table>")]


def test_a_one_kind_host_page_keeps_its_hierarchy_table(fleet):
    page = (fleet[1] / "single.html").read_text()
    assert 'id="summary-levels"' in summary_card(page) and "summary-kind-levels" not in page
    table = page[page.index('id="inferred-levels"'):]
    assert ">core kind<" not in table[:table.index("</table>")]


def test_compare_json_has_each_kinds_hierarchy_and_compares_the_fastest(fleet):
    connection, _, db, cli = fleet
    proc = cli("compare", "--db", db, "hybrid", "single", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    kinds = document["core_kinds"]
    assert [(kind["host"], kind["core_kind"], kind["cpu"], kind["fastest"]) for kind in kinds] == [
        ("hybrid", "P-core", 4, True), ("hybrid", "E-core", 12, False)]
    stored = {kind: one_policy(rows(connection, "SELECT * FROM inferred_levels WHERE host = 'hybrid' AND core_kind = ? "
                                                "ORDER BY level_index", kind)) for kind in ("P-core", "E-core")}
    for kind in kinds:
        assert [(level["level"], level["latency_ns"]) for level in kind["levels"]] == [
            (row["level"], row["latency_ns"]) for row in stored[kind["core_kind"]]]
        assert kind["levels"][-1]["size_bytes"] is None  # memory
    metrics = {metric["metric"]: metric["values"] for metric in document["metrics"]}
    assert metrics["l1_latency"]["hybrid"] == pytest.approx(stored["P-core"][0]["latency_ns"])
    assert metrics["l2_size"]["hybrid"] == stored["P-core"][1]["capacity_bytes"]
    (p_tlb,) = rows(connection, "SELECT l1_entries, l1_low_pages, l1_high_pages FROM inferred_tlb WHERE host = 'hybrid' "
                                "AND core_kind = 'P-core' ORDER BY page_bytes LIMIT 1")
    assert metrics["tlb_l1_entries"]["hybrid"] == p_tlb["l1_entries"]
    brackets = {metric["metric"]: metric["brackets"] for metric in document["metrics"]}
    assert (brackets["tlb_l1_entries"]["hybrid"]["low"], brackets["tlb_l1_entries"]["hybrid"]["high"]) == (
        p_tlb["l1_low_pages"], p_tlb["l1_high_pages"]) != (None, None)


def test_the_fleet_page_compares_the_fastest_kind_and_says_so(fleet):
    page = (fleet[1] / "index.html").read_text()
    note = page[page.index('id="fleet-core-kinds"'):]
    note = re.sub(r"\s+", " ", note[:note.index("</p>")])
    assert "hybrid</a> by its P-core (its E-core on its page)" in note and "single" not in note


def test_the_fleet_and_compare_curves_take_the_fastest_kinds_points_only(fleet):
    connection = fleet[0]
    batch = Batch(connection, [(run_id, "hybrid") for (run_id,) in connection.execute(
        "SELECT run_id FROM runs WHERE host = 'hybrid'").fetchall()])
    key = next(iter(json.loads(batch.chosen)))
    for query, expected in (("curve_latency", hybrid.sweep(P_CORE)), ("curve_bandwidth", hybrid.bandwidth(P_CORE))):
        drawn = batch.rows(query, (key["run_id"], "hybrid"))
        assert [row["x"] for row in drawn] == [point["params"]["working_set_bytes"] for point in expected], query
        assert [row["y"] for row in drawn] == pytest.approx([point["summary"]["median"] for point in expected]), query
