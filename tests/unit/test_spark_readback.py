"""`fleetscope export --parquet` handed to a real distributed engine: Apache Spark in local mode reads the
exported tree, every relation comes back as the warehouse holds it, and the Spark SQL ports of
analysis/README.md's queries (analysis/spark/) give DuckDB's results, over one controller's export and
over the union of two controllers' exports.

The fleet: host `localhost` twice (the README's drift query names it), `node2` with another CPU model and
`0042`, a host named like a number; every latency sweep has both page policies. Controller A ingests
localhost and node2, controller B only 0042, so B's export is one where Spark would type `host` as an
integer if left to guess. One Spark session serves the module (its start is most of the time).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "analysis" / "README.md"
LATER_RUN = "20261129T034500Z-d4e5f6"
SPARK_JAVA = 17  # the oldest Java Spark 4 runs on


def _java_problem() -> str | None:
    """Why Spark cannot start here, or None: PySpark runs $JAVA_HOME/bin/java, else `java` on PATH."""
    if os.environ.get("JAVA_HOME"):
        java = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
        if not java.is_file():
            return f"JAVA_HOME is {os.environ['JAVA_HOME']}, which has no bin/java: Spark needs Java {SPARK_JAVA}+"
    else:
        java = shutil.which("java")
        if java is None:
            return f"no `java` on PATH and no JAVA_HOME: Spark needs Java {SPARK_JAVA} or later"
    banner = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=60).stderr
    found = re.search(r'version "(\d+)(?:\.(\d+))?', banner)
    if found is None:
        return f"{java} -version printed no version: {banner.strip()[:200]}"
    major = int(found.group(2)) if found.group(1) == "1" else int(found.group(1))  # "1.8.0" is Java 8
    if major < SPARK_JAVA:
        return f"{java} is Java {major}: Spark needs Java {SPARK_JAVA} or later"
    return None


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, bundle_tools):
    """Bundles of two controllers, their warehouses and exports, and one warehouse holding every bundle."""
    BundleBuilder, run_cli = bundle_tools  # noqa: N806 (a class)
    root = tmp_path_factory.mktemp("spark")
    controller_a, controller_b = BundleBuilder(root / "results-a"), BundleBuilder(root / "results-b")
    controller_a.write(controller_a.manifest(host="localhost"))
    controller_a.write(controller_a.manifest(host="localhost", run_id=LATER_RUN, started_at="2026-11-29T03:45:00Z",
                                             finished_at="2026-11-29T03:47:00Z"),
                       results={"results/latency_sweep.jsonl": controller_a.latency_points(seed=8)})
    intel = controller_a.manifest(host="node2")
    intel["facts"]["cpu"]["model_name"] = "Intel Xeon Gold 6248"
    controller_a.write(intel, results={"results/latency_sweep.jsonl": controller_a.latency_points(seed=9)})
    controller_b.write(controller_b.manifest(host="0042"),
                       results={"results/latency_sweep.jsonl": controller_b.latency_points(seed=10)})

    paths = {}
    for name, results in (("all", [controller_a.results_dir, controller_b.results_dir]),
                          ("a", [controller_a.results_dir]), ("b", [controller_b.results_dir])):
        db, lake = root / f"{name}.duckdb", root / f"lake-{name}"
        for arguments in (("ingest", *results, "--db", db), ("export", "--parquet", lake, "--db", db)):
            proc = run_cli(*arguments)
            assert proc.returncode == 0, proc.stdout + proc.stderr
        paths[f"db_{name}"], paths[f"lake_{name}"] = db, lake
    return SimpleNamespace(**paths)


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    problem = _java_problem()
    if problem:
        pytest.skip(problem)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    scratch = tmp_path_factory.mktemp("spark-local")
    started = time.monotonic()
    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # only the loopback: no address of the machine's network
        session = (SparkSession.builder.master("local[2]").appName("fleetscope-readback")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.sql.shuffle.partitions", "2")  # 200 by default: a task each, for a few rows
                   # a JVM living a minute spends its 2 CPUs better without the optimizing compiler (0.57x the time)
                   .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
                   .config("spark.sql.session.timeZone", "UTC")
                   .config("spark.sql.warehouse.dir", str(scratch / "warehouse"))
                   .config("spark.local.dir", str(scratch / "local"))
                   .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    print(f"Spark {session.version} local session started in {time.monotonic() - started:.1f} s")
    yield session
    gateway = SparkContext._gateway
    session.stop()
    # stop() leaves the JVM running until Python exits; it ends when its stdin closes, and the suite goes on
    gateway.shutdown()
    gateway.proc.stdin.close()
    gateway.proc.wait(timeout=60)
    SparkContext._gateway = SparkContext._jvm = None


@pytest.fixture(scope="module")
def run_queries():
    """analysis/spark/run_queries.py, the module a user runs (it is not part of the package)."""
    spec = importlib.util.spec_from_file_location("run_queries", ROOT / "analysis" / "spark" / "run_queries.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def one_controller(spark, run_queries, fleet):
    """A Spark session (views of its own) over the export of the warehouse holding every bundle."""
    session = spark.newSession()
    run_queries.register_exports(session, [str(fleet.lake_all)])
    return session


@pytest.fixture(scope="module")
def two_controllers(spark, run_queries, fleet):
    """A Spark session over the union of controller A's export and controller B's."""
    session = spark.newSession()
    run_queries.register_exports(session, [str(fleet.lake_a), str(fleet.lake_b)])
    return session


def readme_queries() -> list[tuple[str, str]]:
    """(Spark port name, DuckDB original) for every SQL block of analysis/README.md."""
    text = README.read_text(encoding="utf-8")
    pairs = re.findall(r"```sql\n(.*?)```\nSpark SQL: \[spark/(\w+)\.sql\]", text, re.S)
    assert len(pairs) == text.count("```sql"), "every SQL block of analysis/README.md names its Spark SQL port"
    return [(name, original) for original, name in pairs]


def _sortable(value):
    if isinstance(value, float):
        return (1, f"{value:.6g}")  # near-equal floats of the two engines sort alike
    return (0, "") if value is None else (1, repr(value))


def _unordered(value):
    """`value` with every list sorted: what a list(DISTINCT ...) or collect_set holds, not in which order."""
    if isinstance(value, dict):
        return {key: _unordered(item) for key, item in value.items()}
    if isinstance(value, list):
        return sorted((_unordered(item) for item in value), key=_sortable)
    return value


def _table(columns: list[str], rows: list[dict], query_result: bool) -> list[tuple]:
    """Rows as tuples of cells in `columns` order, sorted."""
    table = (tuple(_unordered(row[name]) if query_result else row[name] for name in columns) for row in rows)
    return sorted(table, key=lambda cells: tuple(_sortable(cell) for cell in cells))


def _decimals(value: float) -> int:
    text = repr(value)
    return len(text.partition(".")[2]) if "e" not in text else 99


def _rounding_tie(expected: float, actual: float) -> bool:
    """Two results of round() one unit apart in their last decimal: at a tie the engines part, as DuckDB
    rounds the double as stored (0.285 is 0.28499999999999998: 0.28) and Spark its shortest decimal form (0.29)."""
    places = max(_decimals(expected), _decimals(actual))
    return places <= 4 and math.isclose(abs(expected - actual), 10.0**-places, rel_tol=1e-6)


def _same(expected, actual, rounded: bool = False) -> bool:
    """Equal values of the same Python type, floats within 1e-9 relative (or a tie apart, when `rounded`)."""
    if expected is None or actual is None:
        return expected is actual
    if type(expected) is not type(actual):  # an integer that comes back as a double is a different result
        return False
    if isinstance(expected, float):
        return (math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-12)
                or rounded and _rounding_tie(expected, actual))
    if isinstance(expected, dict):
        return expected.keys() == actual.keys() and all(_same(expected[key], actual[key], rounded) for key in expected)
    if isinstance(expected, (list, tuple)):
        return len(expected) == len(actual) and all(_same(*pair, rounded) for pair in zip(expected, actual))
    return expected == actual


def assert_same_rows(what: str, duck_cursor: duckdb.DuckDBPyConnection, spark_frame, query_result=False) -> int:
    """DuckDB's result and Spark's hold the same rows, sorted both ways (see `_same`). Of a query's result,
    lists compare as sets (list(DISTINCT), collect_set) and round() may part at a tie. Return the row count."""
    duck_columns = [column[0] for column in duck_cursor.description]
    expected = [dict(zip(duck_columns, row)) for row in duck_cursor.fetchall()]
    actual = [row.asDict(recursive=True) for row in spark_frame.collect()]
    columns = spark_frame.columns
    pivoted = [name for name in duck_columns if name not in columns]
    if pivoted:  # DuckDB's PIVOT has a column per host where the Spark port has one map column
        only_spark = [name for name in columns if name not in duck_columns]
        assert len(only_spark) == 1, f"{what}: DuckDB's columns {duck_columns}, Spark's {columns}"
        map_column = only_spark[0]
        for row in expected:
            row[map_column] = {host: row.pop(host) for host in pivoted if row[host] is not None}
    assert sorted(columns) == sorted(expected[0] if expected else duck_columns), f"{what}: columns differ"
    expected, actual = _table(columns, expected, query_result), _table(columns, actual, query_result)
    assert len(actual) == len(expected), f"{what}: {len(expected)} rows in DuckDB, {len(actual)} in Spark"
    for index, (want, got) in enumerate(zip(expected, actual)):
        assert _same(want, got, query_result), f"{what}: row {index} differs\n  DuckDB {want}\n  Spark  {got}"
    return len(expected)


def test_results_compare_exactly_but_for_a_rounding_tie():
    with duckdb.connect() as connection:
        assert connection.execute("SELECT round(0.285::DOUBLE, 2), round(1.005::DOUBLE, 2)").fetchone() == (0.28, 1.0)
    assert _same(0.28, 0.29, rounded=True) and _same(1.0, 1.01, rounded=True) and _same(160.16, 160.16)
    assert not _same(0.28, 0.29) and not _same(0.28, 0.30, rounded=True) and not _same(4.2, 4.21 + 1e-7, rounded=True)
    assert not _same(0.123456789, 0.123456788, rounded=True) and _same(0.1 + 0.2, 0.3)
    assert not _same(34, 34.0) and not _same(None, 0.0) and _same({"a": [1.5]}, {"a": [1.5]})


def test_export_declares_its_columns_keeps_counts_integer_and_empty_relations_readable(fleet):
    """What Spark needs of the layout, checked with DuckDB alone (so it runs where Java is absent too):
    export.json names every relation's columns with the types in its files, a HUGEINT sum of counts is
    and an unsigned one are written as BIGINT, and a relation without rows is a file of its columns."""
    relations = json.loads((fleet.lake_all / "export.json").read_text())["relations"]
    assert any(item["partitioned"] and not item["rows"] for item in relations), "no MLC, fio ... in this fleet"
    with duckdb.connect(str(fleet.db_all), read_only=True) as warehouse, duckdb.connect() as reader:
        for item in relations:
            held = dict(row[:2] for row in warehouse.execute(f'DESCRIBE "{item["name"]}"').fetchall())
            assert list(item["columns"]) == list(held), item["name"]
            assert item["columns"] == {name: "BIGINT" if data_type in ("HUGEINT", "UBIGINT") else data_type
                                       for name, data_type in held.items()}, item["name"]
            files = fleet.lake_all / item["path"]
            source = f"'{files}/**/*.parquet', hive_partitioning = true" if item["partitioned"] else f"'{files}'"
            written = reader.execute(f"DESCRIBE SELECT * FROM read_parquet({source})").fetchall()
            assert dict(row[:2] for row in written) == item["columns"], item["name"]
    latest_runs = next(item for item in relations if item["name"] == "latest_runs")
    assert latest_runs["columns"]["point_count"] == "BIGINT"  # a HUGEINT sum in the warehouse


@pytest.mark.spark
def test_spark_reads_every_relation_as_the_warehouse_holds_it(one_controller, fleet):
    """Every relation is a view (an empty one too: its folder exists); those with rows come back whole."""
    relations = json.loads((fleet.lake_all / "export.json").read_text())["relations"]
    views = sorted(view.name for view in one_controller.catalog.listTables())
    assert views == sorted(item["name"] for item in relations)
    with duckdb.connect(str(fleet.db_all), read_only=True) as warehouse:
        for item in relations:
            if item["rows"]:
                assert_same_rows(item["name"], warehouse.execute(f'SELECT * FROM "{item["name"]}"'),
                                 one_controller.table(item["name"]))


@pytest.mark.spark
def test_spark_ports_of_the_readme_queries_give_duckdbs_results(one_controller, run_queries, fleet):
    ports = run_queries.queries()
    pairs = readme_queries()
    assert sorted(name for name, _ in pairs) == sorted(ports), "analysis/spark/ holds one port per README query"
    with duckdb.connect(str(fleet.db_all), read_only=True) as warehouse:
        for name, original in pairs:
            rows = assert_same_rows(name, warehouse.execute(original), one_controller.sql(ports[name]),
                                    query_result=True)
            assert rows, f"{name}: the fleet gives this query nothing to compare"


@pytest.mark.spark
def test_two_controllers_exports_union_into_the_fleet_one_warehouse_holds(two_controllers, run_queries, fleet):
    """Controller B's export holds only host 0042: with Spark guessing partition types, its `host` would
    be the integer 42 and the union would lose the host's name."""
    hosts = sorted(row.host for row in two_controllers.table("runs").collect())
    assert hosts == ["0042", "localhost", "localhost", "node2"]
    ports = run_queries.queries()
    with duckdb.connect(str(fleet.db_all), read_only=True) as warehouse:
        for name, original in readme_queries():
            assert_same_rows(name, warehouse.execute(original), two_controllers.sql(ports[name]),
                             query_result=True)


@pytest.mark.spark
def test_a_host_in_two_controllers_exports_is_refused(spark, run_queries, fleet):
    session = spark.newSession()
    with pytest.raises(run_queries.CollidingExports, match=r"host '0042' is in .*lake-all and .*lake-b"):
        run_queries.register_exports(session, [str(fleet.lake_all), str(fleet.lake_b)])
    assert not session.catalog.listTables(), "a refused union registers nothing"
