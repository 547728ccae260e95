"""The rows of the report's named queries (warehouse/queries/report/) for a batch of runs, each query run
once for all of them: what the host pages, the fleet page, `compare`, `outliers` and the notebooks read
through one `fetch(query)` per run."""

from __future__ import annotations

import json
from collections import defaultdict

import duckdb

from fleetscope.resources import sql


def records(connection: duckdb.DuckDBPyConnection, query: str, parameters: list) -> list[dict]:
    """The rows of `query` (its SQL text) as dicts keyed by column name."""
    cursor = connection.execute(query, parameters)
    columns = [description[0] for description in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


class Batch:
    """The rows of the report's queries (warehouse/queries/report/) for a batch of runs: each query runs
    once for the whole batch and its rows are handed out per run, in the query's order. A query that
    fails, fails for every run of the batch that asks for it.

    The queries read the batch's runs from the temporary table chosen_runs, which each query of the batch
    fills first (a few milliseconds), so batches used in turn on one connection never read each other's."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, keys: list[tuple[str, str]]):
        self.connection = connection
        self.chosen = json.dumps([{"run_id": run_id, "host": host} for run_id, host in sorted(set(keys))])
        self.results: dict[str, dict[tuple[str, str], list[dict]] | Exception] = {}

    def rows(self, query: str, key: tuple[str, str]) -> list[dict]:
        if query not in self.results:
            try:
                self.connection.execute(sql("report/choose_runs"), [self.chosen])
                grouped: dict[tuple[str, str], list[dict]] = defaultdict(list)
                for row in records(self.connection, sql(f"report/{query}"), []):
                    grouped[(row["run_id"], row["host"])].append(row)
                self.results[query] = grouped
            except duckdb.Error as error:
                self.results[query] = error
        result = self.results[query]
        if isinstance(result, Exception):
            raise result
        return result.get(key, [])
