"""Run the Spark SQL ports of analysis/README.md's queries over `fleetscope export --parquet` trees.

    .venv/bin/python analysis/spark/run_queries.py LAKE [LAKE ...] [--query NAME ...]
    spark-submit analysis/spark/run_queries.py s3a://lab/fleetscope/ctl-a s3a://lab/fleetscope/ctl-b
    (client deploy mode, the default: the driver reads the .sql files beside this script)

Every relation an export lists in its export.json becomes a temporary view of its name, so the queries
in this folder (and any other) run as written; several exports, one per controller, are unioned by
column name into one fleet. A host found in two exports is refused: its runs would count twice and
each controller's `latest_runs` would disagree about it.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import reduce
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

QUERIES_DIR = Path(__file__).resolve().parent
# The Spark type of each DuckDB type the export writes (export.json's `columns`). Reading with the schema
# declared skips Spark's schema inference (a job per relation) and keeps the partition columns strings:
# left to guess, Spark types them from what their values look like, and an export whose hosts are all
# named like numbers ("0042") would get an integer `host` of 42.
SPARK_TYPES = {"VARCHAR": "STRING", "JSON": "STRING", "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT",
               "SMALLINT": "SMALLINT", "INTEGER": "INT", "BIGINT": "BIGINT", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE",
               "DATE": "DATE", "TIMESTAMP": "TIMESTAMP_NTZ"}


class CollidingExports(ValueError):
    """Two exports hold the same host."""


def queries() -> dict[str, str]:
    """Every query of this folder by name (the file name without .sql)."""
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(QUERIES_DIR.glob("*.sql"))}


def spark_type(duckdb_type: str) -> str:
    if duckdb_type.endswith("[]"):
        return f"ARRAY<{spark_type(duckdb_type[:-2])}>"
    try:
        return SPARK_TYPES[duckdb_type]
    except KeyError:
        raise ValueError(f"no Spark type for DuckDB's {duckdb_type}: add it to SPARK_TYPES") from None


def _read(spark: SparkSession, lake: str, relation: dict) -> DataFrame:
    schema = ", ".join(f"`{name.replace('`', '``')}` {spark_type(data_type)}"
                       for name, data_type in relation["columns"].items())
    return spark.read.schema(schema).parquet(f"{lake}/{relation['path']}")


def register_exports(spark: SparkSession, lakes: list[str]) -> list[str]:
    """Make every relation of the exports in `lakes` a temporary view; return the view names."""
    relations = {}
    for lake in lakes:
        # read through Spark, so a lake on any file system Spark reaches (HDFS, s3a://, gs://) works as a local one
        manifest = json.loads(spark.read.text(f"{lake}/export.json", wholetext=True).first()[0])
        relations[lake] = {relation["name"]: relation for relation in manifest["relations"]}
    owners: dict[str, list[str]] = {}
    for lake in lakes:
        for row in _read(spark, lake, relations[lake]["hosts"]).select("host").collect():
            owners.setdefault(row.host, []).append(lake)
    shared = sorted((host, where) for host, where in owners.items() if len(where) > 1)
    if shared:
        raise CollidingExports("; ".join(f"host {host!r} is in {' and '.join(where)}" for host, where in shared)
                               + ": ingest each host on one controller (host names must be unique across the lab)")
    frames: dict[str, list[DataFrame]] = {}
    for lake in lakes:
        for name, relation in relations[lake].items():
            frames.setdefault(name, []).append(_read(spark, lake, relation))
    for name, parts in frames.items():
        # a column a later fleetscope added reads NULL from an older controller's export
        union = reduce(lambda left, right: left.unionByName(right, allowMissingColumns=True), parts)
        union.createOrReplaceTempView(name)
    return sorted(frames)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lakes", nargs="+", metavar="LAKE", help="a folder written by `fleetscope export --parquet`")
    parser.add_argument("--query", action="append", choices=sorted(queries()), help="run only this query (repeatable)")
    arguments = parser.parse_args(argv)
    spark = SparkSession.builder.appName("fleetscope-analysis").getOrCreate()  # local[*] unless spark-submit says
    try:
        register_exports(spark, arguments.lakes)
        for name, text in queries().items():
            if arguments.query is None or name in arguments.query:
                print(f"-- {name}")
                spark.sql(text).show(n=1000, truncate=False)
    except CollidingExports as error:
        print(f"run_queries: {error}", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
