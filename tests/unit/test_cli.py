"""The command line: help for every verb, one-line errors, query output formats."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from fleetscope.cli import build_parser

VERBS = ["plan", "ingest", "report", "compare", "outliers", "check", "query", "parse", "import", "reference", "infer", "export",
         "migrate", "version"]


def test_the_verbs_are_listed_in_workflow_order_with_examples(cli):
    result = cli("--help")
    assert result.returncode == 0
    positions = [result.stdout.index(f"    {verb} ") for verb in VERBS]
    assert positions == sorted(positions)
    assert "examples:" in result.stdout


def test_every_verb_has_help_with_examples(cli):
    subparsers = build_parser()._subparsers._group_actions[0].choices
    assert list(subparsers) == VERBS
    for verb in VERBS:
        result = cli(verb, "--help")
        assert result.returncode == 0, verb
        assert f"usage: fleetscope {verb}" in result.stdout
        assert "example" in result.stdout and f"fleetscope {verb}" in result.stdout.split("example", 1)[1]


def test_version_names_the_formats_it_reads(cli):
    result = cli("version")
    assert result.returncode == 0
    assert result.stdout.startswith("fleetscope 0.1.0 (bundle schema 1")


def test_dash_dash_version_prints_the_version(cli):
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == "fleetscope 0.1.0"


def test_query_without_a_warehouse_is_a_one_line_error(cli, tmp_path):
    result = cli("query", "SELECT 1", "--db", tmp_path / "missing.duckdb")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "no warehouse at" in result.stderr
    assert not (tmp_path / "missing.duckdb").exists()


@pytest.fixture
def loaded_db(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    bundles.write()
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    return db


def test_query_reports_bad_sql_without_a_traceback(cli, loaded_db):
    result = cli("query", "SELEC nonsense", "--db", loaded_db)
    assert result.returncode == 1
    assert "query failed" in result.stderr and "Traceback" not in result.stderr


def test_query_dash_reads_the_sql_from_standard_input(loaded_db):
    def query(sql: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "fleetscope", "query", "-", "--format", "csv", "--db", str(loaded_db)],
                              input=sql, capture_output=True, text=True, timeout=120, check=False)

    result = query("-- hosts and their runs\nSELECT host, count(*) AS runs\nFROM runs\nGROUP BY host\nORDER BY host;\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "host,runs" and len(result.stdout.splitlines()) >= 2
    empty = query("  \n")
    assert empty.returncode == 1 and "no SQL given" in empty.stderr


def test_query_is_read_only(cli, loaded_db):
    result = cli("query", "DROP TABLE runs", "--db", loaded_db)
    assert result.returncode == 1
    assert "read-only" in result.stderr


def test_query_formats(cli, loaded_db):
    sql = "SELECT host, working_set_bytes, median_ns FROM latency_curve WHERE page_policy = 'thp' ORDER BY 2 LIMIT 3"
    table = cli("query", sql, "--db", loaded_db)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split() == ["host", "working_set_bytes", "median_ns"]
    assert table.stdout.rstrip().endswith("(3 rows)")

    as_csv = list(csv.DictReader(io.StringIO(cli("query", sql, "--db", loaded_db, "--format", "csv").stdout)))
    assert [row["working_set_bytes"] for row in as_csv] == ["4096", "8192", "16384"]

    as_json = json.loads(cli("query", sql, "--db", loaded_db, "--format", "json").stdout)
    assert as_json[0]["host"] == "node1" and as_json[0]["working_set_bytes"] == 4096
    assert 1.0 < as_json[0]["median_ns"] < 2.0


def test_the_warehouse_path_comes_from_the_environment(cli, loaded_db):
    environment = {**os.environ, "FLEETSCOPE_DB": str(loaded_db)}
    result = cli("query", "SELECT count(*) AS runs FROM runs", "--format", "csv", env=environment)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["runs", "1"]
