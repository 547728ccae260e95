"""`fleetscope export --parquet`: every table and view as Parquet partitioned by host and run, read back
by DuckDB with the same row counts; an earlier export is replaced only when asked."""

from __future__ import annotations

import json

import duckdb


def test_export_writes_partitioned_parquet_that_reads_back_whole(bundles, cli, tmp_path):
    bundles.write()
    bundles.write(bundles.manifest(host="node2"))
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    lake = tmp_path / "lake"
    proc = cli("export", "--parquet", lake, "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert "partitioned by host and run" in proc.stdout

    manifest = json.loads((lake / "export.json").read_text())
    relations = {item["name"]: item for item in manifest["relations"]}
    assert {"points", "samples", "inferred_levels", "flags", "latency_curve", "hosts"} <= set(relations)
    assert (lake / "tables" / "points" / "host=node2" / f"run_id={bundles.run_id}").is_dir()
    assert relations["hosts"]["path"] == "tables/hosts.parquet" and not relations["hosts"]["partitioned"]
    with duckdb.connect(str(db), read_only=True) as warehouse, duckdb.connect() as reader:
        for name, item in relations.items():
            expected = warehouse.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
            assert item["rows"] == expected, name
            if not expected:
                continue
            source = (f"read_parquet('{lake / item['path']}/**/*.parquet', hive_partitioning = true)"
                      if item["partitioned"] else f"read_parquet('{lake / item['path']}')")
            assert reader.execute(f"SELECT count(*) FROM {source}").fetchone()[0] == expected, name
        per_host = reader.execute(
            f"SELECT host, count(*) FROM read_parquet('{lake}/views/samples/**/*.parquet', hive_partitioning = true) "
            "GROUP BY host ORDER BY host").fetchall()
        assert per_host == warehouse.execute("SELECT host, count(*) FROM samples GROUP BY host ORDER BY host").fetchall()

    again = cli("export", "--parquet", lake, "--db", db)
    assert again.returncode == 1 and "already holds an export" in again.stderr and "--overwrite" in again.stderr
    assert cli("export", "--parquet", lake, "--db", db, "--overwrite").returncode == 0
