"""Raw tool outputs in a bundle (MLC text, fio JSON, perf CSV, diskspd XML): validated, parsed with
fleetscope.ingest.parsers on ingest and loaded into raw_outputs and tool_samples, all or nothing."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from fleetscope.ingest.bundle import BundleError, load_bundle
from fleetscope.ingest.parsers import parse_file, parser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIO = FIXTURES / "fio_samples" / "fio-3.36_io_uring_randread_4k_qd32_pctlist.json"
MLC = FIXTURES / "mlc_samples" / "csit_skx_loaded_latency.txt"
MLC_TRUNCATED = FIXTURES / "mlc_samples" / "rpl_i9-13900KF_v3.11b_loaded_latency_t10_X_TRUNCATED.txt"
PERF = FIXTURES / "perf_samples" / "tgl_i5-1135G7_wsl2_affinity_user_events_not_supported.csv"


def tool_experiments(status: str = "ok") -> list[dict]:
    return [
        {"name": "fio", "status": status, "file": None, "error": None if status == "ok" else "fio: killed",
         "wall_s": 12.5, "notes": ["ioengine io_uring"],
         "raw": [{"path": "raw/fio/randread-qd32.json", "tool": "fio", "params": {"job": "randread-qd32"}}]},
        {"name": "mlc", "status": "ok", "file": None, "error": None, "wall_s": 30.0,
         "raw": [{"path": "raw/mlc/loaded_latency.txt", "tool": "mlc", "params": {"mode": "loaded_latency"}},
                 {"path": "raw/mlc/truncated.txt", "tool": "mlc"}]},
        {"name": "perf", "status": "ok", "file": None, "raw": [{"path": "raw/perf/affinity.csv", "tool": "perf"}]},
    ]


def write_tool_bundle(bundles, status: str = "ok", fio_text: str | None = None, host: str = "node1") -> Path:
    manifest = bundles.manifest(host=host)
    manifest["experiments"] = manifest["experiments"] + tool_experiments(status)
    results = {
        "results/latency_sweep.jsonl": bundles.latency_points(),
        "raw/fio/randread-qd32.json": FIO.read_text() if fio_text is None else fio_text,
        "raw/mlc/loaded_latency.txt": MLC.read_text(),
        "raw/mlc/truncated.txt": MLC_TRUNCATED.read_text(),
        "raw/perf/affinity.csv": PERF.read_text(),
    }
    return bundles.write(manifest, results=results)


def expected_rows(tool: str, path: Path) -> list[dict]:
    return parser(tool).rows(parse_file(tool, path))


def test_raw_outputs_are_parsed_with_the_roles_params_under_the_parsers(bundles):
    bundle = load_bundle(write_tool_bundle(bundles))
    by_path = {raw.path: raw for raw in bundle.raw_outputs()}
    assert set(by_path) == {"raw/fio/randread-qd32.json", "raw/mlc/loaded_latency.txt",
                            "raw/mlc/truncated.txt", "raw/perf/affinity.csv"}
    fio = by_path["raw/fio/randread-qd32.json"]
    rows = expected_rows("fio", FIO)
    assert len(fio.rows) == len(rows) > 0
    assert [row["value"] for row in fio.rows] == [row["value"] for row in rows]
    assert all(row["params"]["job"] == row_expected["params"].get("job", "randread-qd32")
               for row, row_expected in zip(fio.rows, rows))  # the parser's own job name wins
    assert not fio.truncated and fio.note is None
    truncated = by_path["raw/mlc/truncated.txt"]
    assert truncated.truncated and "incomplete" in truncated.note
    assert truncated.rows, "a truncated run keeps the rows it printed"


def test_ingest_loads_raw_outputs_and_tool_samples_idempotently(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    write_tool_bundle(bundles)
    first = cli("ingest", bundles.results_dir, "--db", db)
    assert first.returncode == 0, first.stderr
    assert "4 raw outputs" in first.stdout
    with duckdb.connect(str(db), read_only=True) as connection:
        counts = dict(connection.execute(
            "SELECT tool, count(*) FROM tool_samples GROUP BY tool").fetchall())
        p99 = connection.execute(
            "SELECT value FROM tool_samples WHERE tool = 'fio' AND metric = 'clat_percentile' "
            "AND (params->>'percentile')::DOUBLE = 99 AND (params->>'direction') = 'read'").fetchall()
        truncated = connection.execute(
            "SELECT path FROM raw_outputs WHERE truncated").fetchall()
        experiments = dict(connection.execute("SELECT experiment, status FROM experiments").fetchall())
    assert counts["fio"] == len(expected_rows("fio", FIO))
    assert counts["mlc"] == len(expected_rows("mlc", MLC)) + len(expected_rows("mlc", MLC_TRUNCATED))
    assert counts["perf"] == len(expected_rows("perf", PERF))
    fio_p99 = [row for row in expected_rows("fio", FIO) if row["metric"] == "clat_percentile"
               and row["params"]["percentile"] == 99.0 and row["params"]["direction"] == "read"]
    assert [value for (value,) in p99] == [row["value"] for row in fio_p99]
    assert truncated == [("raw/mlc/truncated.txt",)]
    assert experiments["fio"] == experiments["mlc"] == "ok"

    second = cli("ingest", bundles.results_dir, "--db", db)
    assert "already loaded, unchanged" in second.stdout


def test_an_unreadable_output_of_an_ok_experiment_refuses_the_bundle_whole(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    bundle = write_tool_bundle(bundles, fio_text='{"fio version": "fio-3.33", "jobs": [{"jobname": ')
    with pytest.raises(BundleError) as refused:
        load_bundle(bundle)
    message = str(refused.value)
    assert "raw/fio/randread-qd32.json" in message and "$.experiments[1].raw[0]" in message
    result = cli("ingest", bundle, "--db", db)
    assert result.returncode == 3 and "REFUSED" in result.stdout
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
        assert connection.execute("SELECT count(*) FROM tool_samples").fetchone()[0] == 0


def test_a_failed_experiments_cut_output_is_kept_unparsed_and_the_rest_loads(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    write_tool_bundle(bundles, status="failed", fio_text='{"fio version": "fio-3.33", "jobs": [')
    result = cli("ingest", bundles.results_dir, "--db", db)
    assert result.returncode == 0, result.stdout + result.stderr
    with duckdb.connect(str(db), read_only=True) as connection:
        note, parsed = connection.execute(
            "SELECT note, parsed FROM raw_outputs WHERE tool = 'fio'").fetchone()
        mlc_rows = connection.execute("SELECT count(*) FROM tool_samples WHERE tool = 'mlc'").fetchone()[0]
    assert note.startswith("not loaded: ") and "randread-qd32.json" in note
    assert parsed is None
    assert mlc_rows > 0


def test_raw_outputs_are_part_of_the_content_hash_and_stay_inside_the_bundle(bundles):
    bundle_path = write_tool_bundle(bundles)
    before = load_bundle(bundle_path).content_sha256
    (bundle_path / "raw/perf/affinity.csv").write_text(PERF.read_text() + "\n")
    assert load_bundle(bundle_path).content_sha256 != before

    import json
    manifest = json.loads((bundle_path / "manifest.json").read_text())
    manifest["experiments"][-1]["raw"][0]["path"] = "../../../../etc/passwd"
    (bundle_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="outside the bundle"):
        load_bundle(bundle_path)


def test_an_unknown_tool_is_refused_by_the_schema(bundles):
    manifest = bundles.manifest()
    manifest["experiments"].append({"name": "vtune", "status": "ok", "file": None,
                                    "raw": [{"path": "raw/vtune.txt", "tool": "vtune"}]})
    bundle = bundles.write(manifest, results={"results/latency_sweep.jsonl": bundles.latency_points(),
                                              "raw/vtune.txt": "x"})
    with pytest.raises(BundleError, match=r"\$.experiments\[1\].raw\[0\].tool"):
        load_bundle(bundle)
