"""`fleetscope import`: a lab's past MLC/fio/perf/DiskSpd outputs as an external run of a named host,
through a real bundle and the real ingest into a real DuckDB file."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MLC = sorted((FIXTURES / "mlc_samples").glob("csit_skx_*.txt"))
FIO = FIXTURES / "fio_samples" / "fio-3.36_io_uring_randread_4k_qd32_pctlist.json"
DISKSPD = FIXTURES / "diskspd" / "diskspd-2.0.21a_xml_L_randrw70_4k_qd1.xml"


def query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def test_import_loads_an_external_run_and_again_changes_nothing(cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    arguments = ["import", "--db", db, "--results", tmp_path / "results", "--host", "lab-node7",
                 "--cpu-model", "Intel Xeon Gold 6140", "--started-at", "2024-05-02T09:30:00Z", "mlc", *MLC]
    first = cli(*arguments)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("loaded ") and f"{len(MLC)} raw outputs" in first.stdout
    (run_id, profile, started), = query(db, "select run_id, profile, started_at::VARCHAR from runs")
    assert run_id.startswith("20240502T093000Z-") and profile == "external" and started == "2024-05-02 09:30:00"
    assert query(db, "select cpu_model_name from fleet_overview") == [("Intel Xeon Gold 6140",)]
    assert query(db, "select count(distinct path) from tool_samples where host = 'lab-node7'") == [(len(MLC),)]

    second = cli(*arguments)
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("unchanged ") and "(0 new of" in second.stdout


def test_other_tools_join_the_same_run_with_run_id(cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    common = ["--db", db, "--results", tmp_path / "results", "--host", "lab-node7"]
    run_id = "20240502T093000Z-00c0de"
    assert cli("import", *common, "--run-id", run_id, "mlc", MLC[0]).returncode == 0
    added = cli("import", *common, "--run-id", run_id, "fio", FIO)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("replaced ")
    assert query(db, "select experiment, count(*) from raw_outputs group by all order by 1") == [("fio", 1), ("mlc", 1)]
    assert query(db, "select count(*) from runs") == [(1,)]
    manifest = json.loads((tmp_path / "results" / run_id / "lab-node7" / "manifest.json").read_text())
    assert manifest["origin"] == "import" and [e["name"] for e in manifest["experiments"]] == ["mlc", "fio"]


def test_a_file_the_parser_cannot_read_stops_the_import_before_anything_is_written(cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    results = tmp_path / "results"
    refused = cli("import", "--db", db, "--results", results, "--host", "lab-node7", "mlc", MLC[0], FIO)
    assert refused.returncode == 1
    assert f"{FIO}:1: unrecognised MLC output" in refused.stderr
    assert not db.exists()
    assert not any(path.is_file() for path in results.rglob("*")) if results.exists() else True


def test_the_same_name_with_other_content_is_kept_beside_the_first(cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    common = ["--db", db, "--results", tmp_path / "results", "--host", "win-7", "--run-id", "20240101T000000Z-abcdef"]
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    first_dir.mkdir(), second_dir.mkdir()
    (first_dir / "result.xml").write_bytes(DISKSPD.read_bytes())
    other = FIXTURES / "diskspd" / "diskspd-2.0.21a_xml_seqread_64k_qd2_4threads.xml"
    (second_dir / "result.xml").write_bytes(other.read_bytes())
    assert cli("import", *common, "diskspd", first_dir / "result.xml").returncode == 0
    assert cli("import", *common, "diskspd", second_dir / "result.xml").returncode == 0
    paths = [path for (path,) in query(db, "select path from raw_outputs order by path")]
    assert query(db, "select distinct experiment, tool from raw_outputs") == [("fio", "diskspd")]
    (percentiles,), = query(db, "select count(*) from storage_percentiles where tool = 'diskspd'")
    assert percentiles > 0  # the -L run's latency percentiles reach the storage view
    assert len(paths) == 2 and paths[0].startswith("raw/diskspd/result") and paths[1] == "raw/diskspd/result.xml"


def test_bad_arguments_say_what_to_fix(cli, tmp_path):
    common = ["--db", tmp_path / "fleet.duckdb", "--results", tmp_path / "results"]
    bad_host = cli("import", *common, "--host", "../etc", "mlc", MLC[0])
    assert bad_host.returncode == 1 and "--host '../etc'" in bad_host.stderr
    bad_run = cli("import", *common, "--host", "n1", "--run-id", "yesterday", "mlc", MLC[0])
    assert bad_run.returncode == 1 and "--run-id 'yesterday'" in bad_run.stderr
    bad_date = cli("import", *common, "--host", "n1", "--started-at", "last week", "mlc", MLC[0])
    assert bad_date.returncode == 1 and "--started-at 'last week'" in bad_date.stderr
    missing = cli("import", *common, "--host", "n1", "mlc", tmp_path / "nope.txt")
    assert missing.returncode == 1 and "nope.txt: no such file" in missing.stderr


STUDY = [FIXTURES / "perf_samples" / name for name in (
    "hakmem_phase44_perf_stat.txt", "hakmem_phase44_perf_record_top20_cycles.txt",
    "hakmem_phase44_perf_record_top12_cache_misses.txt")]


def test_import_perf_classifies_a_profile_from_elsewhere_as_the_study_did(cli, tmp_path):
    """The allocator study's perf stat and its two perf record lists, imported as one workload: ingest reads the case
    and import prints it, with the next step, what it noticed and the time-vs-miss table."""
    db = tmp_path / "fleet.duckdb"
    done = cli("import", "--db", db, "--results", tmp_path / "results", "--host", "alloc-lab", "--workload", "hakmem",
               "--started-at", "2025-12-16", "perf", *STUDY)
    assert done.returncode == 0, done.stderr
    assert "workload hakmem: A: store/dependency-bound (counter tier hardware)" in done.stdout
    assert "next step: Look at store-to-load forwarding and dependency chains" in done.stdout
    assert "93.5% of the cache-misses samples are in the kernel" in done.stdout
    assert "thin: ranks the top 7, not each of the 19 functions listed" in done.stdout
    (clear,) = [line for line in done.stdout.splitlines() if line.lstrip().startswith("clear_page_erms [kernel]")]
    assert clear.split()[2:] == ["<0.21%", "-", "63.4%", "1", ">=302", "misses", "far", "above", "time"]
    assert query(db, "select distinct experiment, tool from raw_outputs order by 2") == [
        ("workloads", "perf"), ("workloads", "perf_report")]
    assert query(db, "select workload, case_id, reference from workload_profile") == [("hakmem", "A", False)]


def test_import_perf_names_the_workload_after_the_first_file_and_refuses_a_bad_name(cli, tmp_path):
    common = ["--db", tmp_path / "fleet.duckdb", "--results", tmp_path / "results", "--host", "lab-node7"]
    done = cli("import", *common, "perf", FIXTURES / "perf_samples" / "tgl_i5-1135G7_wsl2_saxpy_local.perf.csv")
    assert done.returncode == 0, done.stderr
    assert "workload tgl_i5-1135G7_wsl2_saxpy_local.perf: B: miss-bound" in done.stdout
    refused = cli("import", *common, "--workload", "no spaces", "perf", STUDY[0])
    assert refused.returncode != 0 and "--workload 'no spaces'" in refused.stderr
    wrong_tool = cli("import", *common, "--workload", "x", "mlc", *MLC[:1])
    assert wrong_tool.returncode != 0 and "--workload: only with `fleetscope import perf`" in wrong_tool.stderr
