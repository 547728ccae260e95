"""The mlc_* warehouse views over real MLC outputs (tests/fixtures/mlc_samples): they read the parser's
params, so MLC text that did not come from the mlc role (no role params) lands in them too."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "mlc_samples"
# file -> the params the mlc role would have recorded (None: a past output, as `fleetscope import` loads it)
OUTPUTS = {
    "csit_clx_idle_latency.txt": None,
    "csit_clx_loaded_latency.txt": None,
    "csit_clx_peak_injection_bandwidth.txt": None,
    "csit_clx_max_bandwidth.txt": None,
    "csit_clx_latency_matrix.txt": None,
    "csit_clx_bandwidth_matrix.txt": None,
    "csit_clx_c2c_latency.txt": None,
    "v3.11b_idle_latency_b40_x20_concat.txt": None,
    "cml_i7-10850H_v3.11a_default_full.txt": None,
    "rpl_i9-13900KF_v3.11b_loaded_latency_t10_X_TRUNCATED.txt": None,
    "cml_i7-10750H_v3.11b_idle_latency_b16_l16_c0.txt": {
        "mode": "idle_latency", "level": "L1d", "buffer_bytes": 16384, "sysfs_size_bytes": 32768,
        "buffer_rule": "half of L1d (sysfs 32.00 KB)", "duration_s": 1, "exit_status": 0,
        "command_line": "/var/tmp/x/mlc/Linux/mlc --idle_latency -b16 -t1 -c0"},
}


@pytest.fixture
def db(bundles, cli, tmp_path):
    manifest = bundles.manifest()
    raw = []
    for name, params in OUTPUTS.items():
        entry = {"path": f"raw/mlc/{name}", "tool": "mlc"}
        if params is not None:
            entry["params"] = params
        raw.append(entry)
    manifest["experiments"] = manifest["experiments"] + [
        {"name": "mlc", "status": "ok", "file": None, "error": None, "wall_s": 60.0, "notes": [], "raw": raw}]
    results = {"results/latency_sweep.jsonl": bundles.latency_points()}
    results.update({f"raw/mlc/{name}": (SAMPLES / name).read_text() for name in OUTPUTS})
    bundles.write(manifest, results=results)
    path = tmp_path / "fleet.duckdb"
    proc = cli("ingest", bundles.results_dir, "--db", path)
    assert proc.returncode == 0, proc.stderr
    connection = duckdb.connect(str(path), read_only=True)
    yield connection
    connection.close()


def rows(connection, sql: str) -> list[tuple]:
    return connection.execute(sql).fetchall()


def test_idle_latency_one_row_per_run_with_the_roles_level_where_known(db):
    concat = rows(db, "SELECT run_index, level, buffer_bytes, latency_ns FROM mlc_idle_latency "
                      "WHERE path LIKE '%b40_x20_concat.txt' ORDER BY run_index")
    assert [r[0] for r in concat] == list(range(10))  # ten runs appended to one file
    assert all(level is None and buffer == 40 * 1024 and 1.0 <= ns <= 1.3 for _, level, buffer, ns in concat)
    (clx,) = rows(db, "SELECT latency_ns, clocks, clock, buffer_bytes, mlc_version, mlc_parameters "
                      "FROM mlc_idle_latency WHERE path LIKE '%csit_clx_idle_latency.txt'")
    assert clx == (80.9, 186.1, "core", 2000 * 1024 * 1024, "3.7", "--idle_latency")
    (role,) = rows(db, "SELECT level, buffer_bytes, requested_buffer_bytes, sysfs_size_bytes, buffer_rule, access, "
                       "latency_ns FROM mlc_idle_latency WHERE level IS NOT NULL")
    assert role == ("L1d", 16384, 16384, 32768, "half of L1d (sysfs 32.00 KB)", "random", 0.9)


def test_loaded_latency_curve_pairs_bandwidth_and_latency_per_delay(db):
    ladder = rows(db, "SELECT delay_cycles, bandwidth_mb_s, latency_ns, outstanding_lines, run_truncated "
                      "FROM mlc_loaded_latency WHERE path LIKE '%csit_clx_loaded_latency.txt'")
    assert [r[0] for r in ladder] == sorted((r[0] for r in ladder), reverse=True)
    assert len(ladder) == 19 and ladder[0][0] == 20000 and ladder[-1][0] == 0
    delay0 = ladder[-1]
    assert delay0[1:3] == (243421.9, 233.86)
    assert delay0[3] == pytest.approx(243421.9 * 233.86 / 64000)
    assert not any(r[4] for r in ladder)
    cut = rows(db, "SELECT delay_cycles, run_truncated FROM mlc_loaded_latency WHERE path LIKE '%TRUNCATED.txt'")
    assert cut and all(truncated for _, truncated in cut)
    # the loaded-latency section of a default run (several modes in one file) lands too
    assert rows(db, "SELECT count(*) FROM mlc_loaded_latency WHERE path LIKE '%default_full.txt'")[0][0] > 0


def test_bandwidth_per_read_write_mix(db):
    peak = rows(db, "SELECT traffic, traffic_label, bandwidth_mb_s FROM mlc_bandwidth "
                    "WHERE mode = 'peak_injection_bandwidth' AND path LIKE '%csit_clx%'")
    assert [r[0] for r in peak] == ["all_reads", "3:1_reads_writes", "2:1_reads_writes", "1:1_reads_writes",
                                    "stream_triad_like"]
    assert peak[0][1:] == ("ALL Reads", 243159.4)
    maximum = rows(db, "SELECT count(*), max(bandwidth_mb_s) FROM mlc_bandwidth WHERE mode = 'max_bandwidth'")
    assert maximum == [(5, 244114.27)]


def test_matrices_and_c2c(db):
    latency = rows(db, "SELECT cpu_node, memory_node, latency_ns FROM mlc_matrix WHERE mode = 'latency_matrix' "
                       "AND path LIKE '%csit_clx%' ORDER BY cpu_node, memory_node")
    assert latency == [(0, 0, 81.2), (0, 1, 130.2), (1, 0, 130.2), (1, 1, 81.1)]
    bandwidth = rows(db, "SELECT cpu_node, memory_node, bandwidth_mb_s, latency_ns FROM mlc_matrix "
                         "WHERE mode = 'bandwidth_matrix' AND path LIKE '%csit_clx%' AND cpu_node = 0 "
                         "ORDER BY memory_node")
    assert bandwidth == [(0, 0, 122097.7, None), (0, 1, 51327.9, None)]
    c2c = rows(db, "SELECT scope, transfer_path, transfer, homed_in, writer_node, reader_node, latency_ns "
                   "FROM mlc_matrix WHERE mode = 'c2c_latency' AND path LIKE '%csit_clx%' ORDER BY row_index")
    assert c2c[0] == ("local_socket", "L2->L2", "HIT", None, None, None, 55.5)
    assert ("remote_socket", "L2->L2", "HITM", "reader", 1, 0, 178.4) in c2c
    assert len(c2c) == 6  # the '-' diagonal cells are not measurements


def test_past_mlc_text_loaded_with_fleetscope_import_lands_in_the_views(cli, tmp_path):
    path = tmp_path / "fleet.duckdb"
    files = [SAMPLES / name for name in ("csit_skx_idle_latency.txt", "csit_skx_loaded_latency.txt",
                                         "csit_skx_bandwidth_matrix.txt", "csit_skx_c2c_latency.txt")]
    proc = cli("import", "--db", path, "--results", tmp_path / "results", "--host", "lab-skx", "mlc", *files)
    assert proc.returncode == 0, proc.stderr
    with duckdb.connect(str(path), read_only=True) as connection:
        assert rows(connection, "SELECT level, latency_ns FROM mlc_idle_latency") == [(None, 80.8)]
        assert rows(connection, "SELECT count(*) FROM mlc_loaded_latency WHERE host = 'lab-skx'") == [(19,)]
        assert rows(connection, "SELECT count(*) FROM mlc_matrix WHERE mode = 'bandwidth_matrix'") == [(4,)]
        assert rows(connection, "SELECT count(*) > 0 FROM mlc_matrix WHERE mode = 'c2c_latency'") == [(True,)]
