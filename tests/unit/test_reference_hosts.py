"""Reference hosts through the real CLI and a real DuckDB file: `fleetscope import curve` stores a published curve
as a host of origin 'reference' (its source kept, its CSV checked with infer --csv's FILE:LINE errors, loaded
again unchanged), the ingest infers its levels exactly as `infer --csv` does when told the same reading, the
shipped library lists and loads (once), and compare / outliers mark reference hosts in their JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from fleetscope.ingest.curve_csv import infer_curve, read_curve
from inference_check import published_curves
from fleetscope.ingest.reference import LIBRARY_DIR, library

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CURVES = FIXTURES / "curves"
DEFAULT_RUN = FIXTURES / "default_run" / "results"
N100 = CURVES / "intel_n100_gracemont_ramlat.csv"
N100_SOURCE = "https://github.com/ThomasKaiser/sbc-bench/blob/fdd45f2d51da70c86c4e2da58a8ef5d527371835/results/uHzXI7.txt"


def rows(db: Path, query: str, *parameters) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return connection.execute(query, list(parameters)).fetchall()


def import_n100(cli, tmp_path: Path, *extra: str, csv: Path = N100):
    return cli("import", "curve", "--host", "ref-n100", "--cpu-model", "Intel(R) N100", "--source", N100_SOURCE,
               "--pattern", "line-per-page", "--caches", "32k,2m,6m", "--started-at", "2024-06-01T00:00:00Z",
               "--db", tmp_path / "fleet.duckdb", "--results", tmp_path / "results", *extra, csv)


def test_import_curve_stores_a_reference_host_with_its_source_inferred_and_checked(cli, tmp_path):
    proc = import_n100(cli, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("loaded") and "reference host ref-n100" in proc.stdout
    db = tmp_path / "fleet.duckdb"
    ((origin, source, pattern, page_bytes, relative, profile),) = rows(
        db, "SELECT origin, reference_source, reference_pattern, reference_page_bytes, reference_relative, profile "
            "FROM runs_overview WHERE host = 'ref-n100'")
    assert (origin, source, pattern, page_bytes, relative, profile) == (
        "reference", N100_SOURCE, "line-per-page", 4096, False, "external")
    # the CSV is kept verbatim and parsed again at the boundary; its points are the latency sweep's
    ((path, tool, sha),) = rows(db, "SELECT path, tool, sha256 FROM raw_outputs WHERE host = 'ref-n100'")
    assert (path, tool) == ("raw/curve/intel_n100_gracemont_ramlat.csv", "curve")
    assert rows(db, "SELECT count(*) FROM latency_curve WHERE host = 'ref-n100'") == [(16,)]
    # the ingest reads the curve as `infer --csv --pattern line-per-page --caches 32k,2m,6m` does: one method
    from fleetscope.analyze.inference import CurveReading

    expected = infer_curve(read_curve(N100), CurveReading("line-per-page", 4096), [32 << 10, 2 << 20, 6 << 20])
    stored = rows(db, "SELECT level, capacity_bytes, onset_bytes, completion_bytes, confidence FROM inferred_levels "
                      "WHERE host = 'ref-n100' ORDER BY level_index")
    assert stored == [(level.level, level.capacity_bytes, level.onset_bytes, level.completion_bytes, level.confidence)
                      for level in expected.levels]
    assert [level for level, *_ in stored] == ["L1", "L2", "L3", "DRAM"]
    # ... with the stated pattern: ramlat's one line per page makes the 64-entry DTLB's reach a step inside L2
    (l2_note,) = rows(db, "SELECT note FROM inferred_levels WHERE host = 'ref-n100' AND level = 'L2'")[0]
    assert "TLB step within this level" in l2_note and "one line per page meets a TLB's reach" in l2_note
    # plausibility ran on it: its DRAM plateau (121 ns at 16 MiB) is a plausible chase
    assert rows(db, "SELECT status FROM flags WHERE host = 'ref-n100' AND rule = 'dram_chase_too_fast'") == [("clear",)]


def test_a_bad_curve_stops_the_import_with_file_and_line_and_writes_nothing(cli, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("bytes,ns\n4096,1.0\n8192,fast\n", encoding="utf-8")
    proc = import_n100(cli, tmp_path, csv=bad)
    assert proc.returncode == 1
    assert f"{bad}:3: ns 'fast' is not a number" in proc.stderr
    assert not any((tmp_path / "results").rglob("manifest.json"))
    # the same message as `infer --csv` gives for the same file
    inferred = cli("infer", "--csv", bad)
    assert f"{bad}:3: ns 'fast' is not a number" in inferred.stderr


def test_importing_the_same_curve_again_changes_nothing_and_a_corrected_source_replaces_it(cli, tmp_path):
    first = import_n100(cli, tmp_path)
    assert first.returncode == 0, first.stderr
    again = import_n100(cli, tmp_path)
    assert again.returncode == 0 and again.stdout.startswith("unchanged"), again.stdout + again.stderr
    corrected = cli("import", "curve", "--host", "ref-n100", "--cpu-model", "Intel(R) N100", "--source",
                    "sbc-bench results/uHzXI7.txt", "--pattern", "line-per-page", "--caches", "32k,2m,6m",
                    "--started-at", "2024-06-01T00:00:00Z", "--db", tmp_path / "fleet.duckdb",
                    "--results", tmp_path / "results", N100)
    assert corrected.returncode == 0 and corrected.stdout.startswith("replaced"), corrected.stdout + corrected.stderr
    assert rows(tmp_path / "fleet.duckdb", "SELECT reference ->> '$.source' FROM runs") == [
        ("sbc-bench results/uHzXI7.txt",)]


def test_a_curve_is_not_stored_under_a_lab_hosts_name_and_curve_options_need_import_curve(cli, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(DEFAULT_RUN, results)
    assert cli("ingest", results, "--db", tmp_path / "fleet.duckdb").returncode == 0
    proc = cli("import", "curve", "--host", "localhost", "--cpu-model", "x", "--db", tmp_path / "fleet.duckdb",
               "--results", results, N100)
    assert proc.returncode == 1 and "is a lab host in the warehouse" in proc.stderr
    assert len(list(results.rglob("manifest.json"))) == 1
    mlc = cli("import", "--host", "node7", "--relative", "--db", tmp_path / "fleet.duckdb", "--results", results,
              "mlc", N100)
    assert mlc.returncode == 1 and "--relative: only with `fleetscope import curve`" in mlc.stderr


# ---- the shipped library ---------------------------------------------------------------------------------

def test_the_library_is_the_published_curves_with_their_provenance_and_true_sizes():
    entries = library()
    shipped = {entry.file.name for entry in entries}
    assert shipped == {path.name for path in CURVES.glob("*.csv")}
    for name in [*shipped, "SOURCES.md"]:  # copies of tests/fixtures/curves, byte for byte
        assert (LIBRARY_DIR / name).read_bytes() == (CURVES / name).read_bytes(), name
    true_sizes = {curve.name: curve.true_sizes for curve in published_curves(CURVES)}
    for entry in entries:
        assert entry.reference.source.startswith("https://github.com/"), entry
        if entry.kind == "bytes":
            assert list(entry.reference.caches) == true_sizes[entry.file.name], entry.file.name
    assert len({entry.reference.host for entry in entries}) == len(entries) == 9


def test_reference_list_and_load_once(cli, tmp_path):
    listed = cli("reference", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    hosts = [row["host"] for row in json.loads(listed.stdout)]
    assert len(hosts) == 9 and "ref-tegra-k1-cortex-a15" in hosts
    table = cli("reference", "list")
    assert table.returncode == 0 and "ref-epyc-74f3-zen3" in table.stdout and "line-per-page" in table.stdout

    db, results = tmp_path / "fleet.duckdb", tmp_path / "results"
    loaded = cli("reference", "load", "--db", db, "--results", results)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    assert [line.split()[0] for line in loaded.stdout.splitlines()] == ["loaded"] * 9
    again = cli("reference", "load", "--db", db, "--results", results, "ref-epyc-74f3-zen3", "ref-n100-gracemont")
    assert [line.split()[0] for line in again.stdout.splitlines()] == ["unchanged"] * 2, again.stdout + again.stderr
    unknown = cli("reference", "load", "--db", db, "--results", results, "ref-pentium-4")
    assert unknown.returncode == 1 and "no reference 'ref-pentium-4' in the library" in unknown.stderr

    assert sorted(rows(db, "SELECT host FROM runs WHERE origin = 'reference'")) == sorted((host,) for host in hosts)
    identity = dict(rows(db, "SELECT host, microarchitecture FROM host_identity"))
    assert identity["ref-epyc-74f3-zen3"] == "Zen 3 (Milan)" and identity["ref-rpi4b-cortex-a72"] == "Cortex-A72"
    # the TLB curve: the Cortex-A15's 32-entry L1 DTLB and 512-entry L2 TLB (steps 33 -> 40 and 513 -> 520 pages)
    # as brackets: 33-40 pages is too wide (0.28 octave) for a count, 513-520 gives one
    (tlb,) = rows(db, "SELECT l1_low_pages, l1_high_pages, l1_entries, l2_low_pages, l2_high_pages, l2_entries "
                      "FROM inferred_tlb WHERE host = 'ref-tegra-k1-cortex-a15'")
    assert tlb == (33, 40, None, 513, 520, 516)
    # tinymembench's relative curve keeps its 0 ns L1 plateau as ns over L1, never as a latency, and the DRAM rule
    # says why it cannot judge it; its last plateau (2-32 MiB) is the 32 MiB L3, whose rise outlasts the sweep at
    # 64 MiB, not memory
    assert rows(db, "SELECT level, latency_ns, latency_cycles, round(latency_over_l1_ns, 1) FROM inferred_levels "
                    "WHERE host = 'ref-graviton2-neoverse-n1' ORDER BY level_index") == [
        ("L1", None, None, 0.0), ("L2", None, None, 2.3), ("L3", None, None, 29.3)]
    # a curve whose source states its clock has its levels in cycles: every L1 of the library reads 3 to 5
    l1_cycles = dict(rows(db, "SELECT host, latency_cycles FROM inferred_levels WHERE level = 'L1' "
                              "AND latency_cycles IS NOT NULL"))
    assert len(l1_cycles) == 7 and all(2.9 < cycles < 5.1 for cycles in l1_cycles.values()), l1_cycles
    # ... so the real curves pass the L1-hit check, and the ones whose source states no clock say why it did not run
    checked = dict(rows(db, "SELECT host, status FROM flags WHERE rule = 'first_plateau_above_l1_hit'"))
    assert {host for host, status in checked.items() if status == "clear"} == set(l1_cycles)
    assert checked["ref-graviton2-neoverse-n1"] == checked["ref-tegra-k1-cortex-a15"] == "not_run"
    assert rows(db, "SELECT status, reason LIKE 'a relative curve%' FROM flags WHERE host = 'ref-graviton2-neoverse-n1' "
                    "AND rule = 'dram_chase_too_fast'") == [("not_run", True)]


@pytest.fixture(scope="module")
def lab_and_reference(bundle_tools, tmp_path_factory):
    """The default run (a lab machine, localhost) and two reference hosts (one curve absolute, one relative)."""
    _, run_cli = bundle_tools
    root = tmp_path_factory.mktemp("lab-and-reference")
    shutil.copytree(DEFAULT_RUN, root / "results")
    db = root / "fleet.duckdb"
    assert run_cli("ingest", root / "results", "--db", db).returncode == 0
    loaded = run_cli("reference", "load", "ref-xeon-w3-2435-sapphire-rapids", "ref-graviton2-neoverse-n1", "--db", db,
                     "--results", root / "results")
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    return root, db


def test_compare_json_marks_the_reference_host_and_tests_no_difference_against_it(lab_and_reference, cli):
    _, db = lab_and_reference
    proc = cli("compare", "--db", db, "localhost", "ref-xeon-w3-2435-sapphire-rapids", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    lab, reference = document["operands"]
    assert (lab["reference"], reference["reference"]) == (False, True)
    assert lab["runs"][0]["reference"] is False and lab["runs"][0]["reference_source"] is None
    assert reference["runs"][0]["reference_source"].startswith("https://github.com/wtarreau/ramspeed/")
    dram = next(metric for metric in document["metrics"] if metric["metric"] == "dram_latency")
    (delta,) = dram["deltas"]
    assert delta["relative"] is not None and delta["significant"] is None and delta["p_value"] is None
    assert "reference host's published curve" in delta["note"]
    run = reference["runs"][0]
    assert run["reference_tool"] == "ramlat (wtarreau/ramspeed, 1xPTR)" and run["reference_clock_ghz"] == 4.5
    assert run["reference_method"] == ("a dependent chase with one line per page (TLB steps inside the curve), "
                                       "4 KiB pages, ns per load")
    assert isinstance(lab["runs"][0]["flags"], list) and run["flags"] == []
    # a relative curve (ns over L1) gives no latency to compare; its sizes still compare
    relative = json.loads(cli("compare", "--db", db, "localhost", "ref-graviton2-neoverse-n1", "--format", "json").stdout)
    by_metric = {metric["metric"]: metric for metric in relative["metrics"]}
    assert by_metric["dram_latency"]["values"]["ref-graviton2-neoverse-n1"] is None
    assert by_metric["dram_latency"]["deltas"][0]["note"] == "not measured on both sides"
    assert by_metric["l2_size"]["deltas"][0]["relative"] is not None


def test_compare_says_no_test_ran_against_a_reference_and_still_lists_the_large_differences(lab_and_reference, cli):
    root, db = lab_and_reference
    out = root / "compare.html"
    proc = cli("compare", "--db", db, "localhost", "ref-xeon-w3-2435-sapphire-rapids", "--out", out)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == ("no test ran: a reference host's published curve gives one value per size, not the samples a "
                        "test needs")
    assert "no level's latency differs" not in proc.stdout
    assert lines[1] == ("differences of 5% or more without a test (a reference host's published curve gives one value "
                        "per size, not samples):")
    assert "  ref-xeon-w3-2435-sapphire-rapids: DRAM latency 170 ns -> 100 ns (-41.1%)" in lines
    page = out.read_text(encoding="utf-8")
    assert 'id="no-test"' in page and 'id="moved-none"' not in page and 'class="untested-list"' in page
    # the page says how the reference curve was measured: its source, tool, method and the clock its source states
    assert 'id="reference-sources"' in page and "ramlat (wtarreau/ramspeed, 1xPTR)" in page and "4.5 GHz" in page
    assert "https://github.com/wtarreau/ramspeed/" in page


def test_outliers_set_reference_hosts_aside(lab_and_reference, cli):
    _, db = lab_and_reference
    proc = cli("outliers", "--db", db, "--format", "json", "--min-peers", "0")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["reference_hosts"] == ["ref-graviton2-neoverse-n1", "ref-xeon-w3-2435-sapphire-rapids"]
    assert [group["hosts"] for group in document["groups"]] == [["localhost"]]
    table = cli("outliers", "--db", db)
    assert ("reference hosts, not scored and no host's peer: ref-graviton2-neoverse-n1, "
            "ref-xeon-w3-2435-sapphire-rapids") in table.stdout


# A Raptor Lake lab report's curve (i9-13900K, 5.8 GHz): its first plateau reads 3.5 ns, 20 cycles at that clock -
# timing overhead, not an L1 hit - and its memory plateau 8.9 ns, which no dependent chase in DRAM reads.
RPL_LAB_REPORT = "bytes,ns\n" + "".join(f"{size},{ns}\n" for size, ns in (
    (4096, 3.5), (16384, 3.5), (32768, 3.5), (65536, 4.7), (262144, 4.7), (1048576, 4.8), (2097152, 5.6),
    (4194304, 6.9), (16777216, 7.0), (33554432, 7.4), (67108864, 8.8), (134217728, 8.9), (268435456, 8.9),
    (1073741824, 8.9)))


def test_a_lab_reports_curve_with_timing_overhead_is_flagged_and_compare_shows_it(lab_and_reference, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"  # a copy: the module's warehouse keeps its two reference hosts for the others
    shutil.copyfile(lab_and_reference[1], db)
    root = tmp_path
    csv = tmp_path / "rpl_lab_report.csv"
    csv.write_text(RPL_LAB_REPORT, encoding="utf-8")
    proc = cli("import", "curve", "--host", "ref-rpl-lab-report", "--cpu-model", "13th Gen Intel(R) Core(TM) i9-13900K",
               "--source", "a lab report", "--clock-ghz", "5.8", "--caches", "48k,2m,36m", "--db", db,
               "--results", root / "results", csv)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flagged = {rule: (value, evidence) for rule, value, evidence in rows(
        db, "SELECT rule, value, evidence FROM flags WHERE host = 'ref-rpl-lab-report' AND status = 'flagged'")}
    assert set(flagged) == {"first_plateau_above_l1_hit", "dram_chase_too_fast"}
    assert flagged["first_plateau_above_l1_hit"][0] == pytest.approx(3.5 * 5.8)
    assert "not an L1 hit" in flagged["first_plateau_above_l1_hit"][1]
    assert flagged["dram_chase_too_fast"][0] == 8.9
    document = json.loads(cli("compare", "--db", db, "localhost", "ref-rpl-lab-report", "--format", "json").stdout)
    (run,) = document["operands"][1]["runs"]
    assert {flag["rule"] for flag in run["flags"]} == {"first_plateau_above_l1_hit", "dram_chase_too_fast"}
    page = root / "rpl.html"
    assert cli("compare", "--db", db, "localhost", "ref-rpl-lab-report", "--out", page).returncode == 0
    html = page.read_text(encoding="utf-8")
    assert 'title="flagged: first_plateau_above_l1_hit"' in html and "first_plateau_above_l1_hit" in html


def test_a_curve_without_cache_sizes_has_its_memory_plateau_checked(cli, tmp_path):
    """No --caches: no swept size is known to be DRAM-sized, so the rule judges the curve's own last plateau, as
    `infer --csv` does; here a prefetched 'memory' of 22 ns, and the L1-hit rule says why it could not run."""
    csv = tmp_path / "prefetched.csv"
    plateaus = ((1 << 12, 1.2), (1 << 14, 1.2), (1 << 15, 1.2), (1 << 17, 4.0), (1 << 18, 4.0), (1 << 19, 4.1),
                (1 << 21, 12.0), (1 << 22, 12.1), (1 << 23, 12.0), (1 << 25, 22.0), (1 << 26, 22.0), (1 << 27, 22.1),
                (1 << 28, 22.0))
    csv.write_text("bytes,ns\n" + "".join(f"{size},{ns}\n" for size, ns in plateaus), encoding="utf-8")
    proc = cli("import", "curve", "--host", "ref-prefetched", "--cpu-model", "a CPU", "--db", tmp_path / "fleet.duckdb",
               "--results", tmp_path / "results", csv)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    by_rule = {rule: (status, value, text) for rule, status, value, text in rows(
        tmp_path / "fleet.duckdb", "SELECT rule, status, value, coalesce(evidence, reason) FROM flags "
        "WHERE rule IN ('dram_chase_too_fast', 'first_plateau_above_l1_hit')")}
    status, value, evidence = by_rule["dram_chase_too_fast"]
    assert (status, value) == ("flagged", pytest.approx(22.0, abs=0.1))
    assert "the sweep's last plateau (up to 256 MiB): memory, unless the sweep stopped before it" in evidence
    assert by_rule["first_plateau_above_l1_hit"][0] == "not_run"
    assert "its source states no core clock (`fleetscope import curve --clock-ghz`)" in by_rule["first_plateau_above_l1_hit"][2]


def test_the_manifest_schema_holds_reference_bundles_to_their_contract(cli, tmp_path):
    from fleetscope.ingest.bundle import BundleError, load_bundle

    assert import_n100(cli, tmp_path).returncode == 0
    (bundle,) = [path.parent for path in (tmp_path / "results").rglob("manifest.json")]
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    load_bundle(bundle)
    for index, (change, complaint) in enumerate((({"profile": "quick"}, "profile"),              # a reference is an external run
                              ({"reference": None}, "reference"),            # origin reference says where from
                              ({"origin": "playbook"}, "reference"),         # and only a reference says so
                              ({"reference": {**manifest["reference"], "pattern": "zigzag"}}, "pattern"),
                              ({"reference": {**manifest["reference"], "clock_ghz": 58}}, "clock_ghz"),
                              ({"reference": {**manifest["reference"], "tool": ""}}, "tool"))):
        broken = tmp_path / "broken" / str(index) / bundle.parent.name / bundle.name
        shutil.copytree(bundle, broken)
        changed = {key: value for key, value in {**manifest, **change}.items() if value is not None}
        (broken / "manifest.json").write_text(json.dumps(changed), encoding="utf-8")
        with pytest.raises(BundleError, match=complaint):
            load_bundle(broken)


def test_migration_008_gives_runs_loaded_before_it_their_origin(cli, tmp_path):
    from fleetscope.store.warehouse import MIGRATIONS_DIR

    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as connection:
        connection.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                           "applied_at TIMESTAMP NOT NULL)")
        for migration in sorted(MIGRATIONS_DIR.glob("*.sql")):
            if int(migration.name[:3]) >= 8:  # a warehouse from before 008: `migrate` applies 008 and the later ones
                continue
            connection.execute(migration.read_text())
            connection.execute("INSERT INTO schema_migrations VALUES (?, ?, now()::TIMESTAMP)",
                               [int(migration.name[:3]), migration.name])
        for host, profile in (("node1", "quick"), ("old-node", "external")):
            connection.execute("INSERT INTO runs (run_id, host, profile, started_at, finished_at, fleetscope_version, "
                               "fleetscope_git_sha, bundle_schema, bundle_path, content_sha256, loaded_at) VALUES "
                               "('20240101T000000Z-000000', ?, ?, now(), now(), '0.1.0', 'x', 1, '/b', 'h', now())",
                               [host, profile])
    assert cli("migrate", "--db", db).returncode == 0
    assert rows(db, "SELECT host, origin, reference FROM runs ORDER BY host") == [
        ("node1", "playbook", None), ("old-node", "import", None)]


def test_an_untested_size_difference_is_stated_as_the_brackets_the_table_shows(lab_and_reference, cli):
    """A size is stated as the table shows it, a bracket on each side ('32–64 KiB · published 48 KiB'), never its
    estimate alone to four digits (a set-load estimate printed as '3.584 MiB' beside a 3.4–4 MiB bracket)."""
    root, db = lab_and_reference
    proc = cli("compare", "--db", db, "ref-graviton2-neoverse-n1", "ref-xeon-w3-2435-sapphire-rapids",
               "--out", root / "references.html")
    assert proc.returncode == 0, proc.stderr
    sizes = [line for line in proc.stdout.splitlines() if " size " in line]
    assert sizes, proc.stdout
    for line in sizes:
        before, after = line.split(" -> ")
        assert before.count("–") == 1 and " · published " in before, line
        assert after.count("–") == 1 and " · published " in after, line
