"""One query for a batch of runs where derive asks it once per run.

Deriving a run asks some fifty parameterised queries (warehouse/queries/derive, plausibility, firmware), each
with the run's (run_id, host) as its first two parameters. A DuckDB statement costs about a millisecond
however little it reads, so asked run by run they cost a batch of N runs 50 x N statements. `BatchRows`
stands in for the connection while a batch is derived: the first run to ask a query makes it ask once for
every run of the batch (the query as written, inside a LATERAL join over the batch's keys: DuckDB unnests
the correlation and runs it set-based), and each run's rows are handed out from that answer in the order
the query gives them. The query's other parameters must be the same for the runs that share the answer;
a run that asks with others (a threshold computed from its own caches) gets the query run for it alone.
Whatever else goes through it (inserts, deletes, queries not keyed by a run of the batch) goes straight to
the connection.
"""

from __future__ import annotations

import json
import re

import duckdb

from fleetscope.resources import sql

# A text's parts that hold no parameter: comments, string literals, quoted identifiers.
_SKIPPED = re.compile(r"--[^\n]*|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")
_PARAMETER = re.compile(r"\?|\$(\d+)")


def _top_order(code: str) -> tuple[int, str | None] | None:
    """Where the top-level ORDER BY of `code` (comments and literals blanked) starts and its terms, with table
    qualifiers dropped (they name the query's own tables, gone outside it): (len(code), None) without one;
    None where the order cannot be carried outside the query (a LIMIT, OFFSET or FETCH, or a term by position)."""
    depth, found = 0, None
    for match in re.finditer(r"[()]|\bORDER\s+BY\b|\b(?:LIMIT|OFFSET|FETCH)\b", code, re.IGNORECASE):
        word = match.group(0)
        if word == "(":
            depth += 1
        elif word == ")":
            depth -= 1
        elif depth == 0:
            if not word.upper().startswith("ORDER"):
                return None
            found = match
    if found is None:
        return len(code), None
    terms = code[found.end():].strip().rstrip(";")
    if any(re.fullmatch(r"\d+(\s+(ASC|DESC))?(\s+NULLS\s+(FIRST|LAST))?", term.strip(), re.IGNORECASE)
           for term in terms.split(",")):
        return None
    return found.start(), re.sub(r"\b[A-Za-z_]\w*\.(?=[A-Za-z_\"])", "", terms)


def _correlated(text: str) -> tuple[str, bool] | None:
    """`text` asked for every run of a batch: its first two parameters (run_id, host) replaced by the batch
    key's columns inside a LATERAL join, its others renumbered from $1 and the keys the last parameter; its
    rows come per run in the order its ORDER BY gives them. With it, whether the text has an ORDER BY (without
    one DuckDB promises no order, and the batch's rows are sorted). None where the text cannot be asked so:
    fewer than two parameters, `?` mixed with `$n`, an order that cannot be carried (_top_order)."""
    code = _SKIPPED.sub(lambda match: " " * len(match.group(0)), text)  # same offsets, nothing to match inside
    order = _top_order(code)
    if order is None:
        return None
    cut, terms = order
    pieces, position, count, numbered, plain = [], 0, 0, False, False
    for match in _PARAMETER.finditer(code[:cut]):
        pieces.append(text[position:match.start()])
        position = match.end()
        if match.group(1) is None:
            plain = True
            count += 1
            index = count
        else:
            numbered = True
            index = int(match.group(1))
            count = max(count, index)
        pieces.append({1: "__batch.run_id", 2: "__batch.host"}.get(index, f"${index - 2}"))
    pieces.append(text[position:cut])
    if count < 2 or (plain and numbered) or _PARAMETER.search(code[cut:]):
        return None
    body = "".join(pieces).strip().rstrip(";")
    within = f"row_number() OVER (ORDER BY {terms})" if terms else "0"
    statement = (sql("derive/for_batch").replace("/*keys*/", str(count - 1)).replace("/*within*/", within)
                 .replace("/*body*/", body))
    return statement, terms is not None


def _sort_key(row: tuple) -> tuple:
    """A total order over rows of mixed values and NULLs (for a query whose order DuckDB does not promise)."""
    return tuple((value is None, repr(value) if isinstance(value, (dict, list)) else value) for value in row)


class _Answer:
    """What execute() returns: the rows, as a cursor would give them."""

    def __init__(self, rows: list[tuple]):
        self.rows = rows

    def fetchall(self) -> list[tuple]:
        return list(self.rows)

    def fetchone(self) -> tuple | None:
        return self.rows[0] if self.rows else None


class BatchRows:
    """The connection, for deriving the runs of `keys` ((run_id, host) pairs, all in its current database)."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, keys: list[tuple[str, str]]):
        self.connection = connection
        self.keys = set(keys)
        self.keys_json = json.dumps([{"run_id": run_id, "host": host} for run_id, host in sorted(self.keys)])
        # (query text, its other parameters) -> {(run_id, host): rows}; the text's correlated form per text
        self.answers: dict[tuple[str, tuple], dict[tuple[str, str], list[tuple]]] = {}
        self.correlated: dict[str, tuple[str, bool] | None] = {}
        self.ordered: dict[str, bool] = {}  # whether a text asked run by run has an ORDER BY of its own
        self.statements = 0  # statements sent to DuckDB for queries of the batch (what batching saves)

    def execute(self, text: str, parameters: list | tuple = ()):
        parameters = list(parameters)
        key = tuple(parameters[:2])
        if len(parameters) < 2 or key not in self.keys:
            return self.connection.execute(text, parameters)
        if text not in self.correlated:
            self.correlated[text] = _correlated(text)
        batched = self.correlated[text]
        others = tuple(parameters[2:])
        try:
            hash(others)
        except TypeError:
            batched = None
        answer = self.answers.get((text, others))
        if answer is None and batched is not None and not any(asked == text for asked, _unused in self.answers):
            answer = self._ask(text, batched, others)
        if answer is None:  # asked before with other parameters, or not to be asked for a batch: this run's alone
            self.statements += 1
            rows = self.connection.execute(text, parameters).fetchall()
            if text not in self.ordered:
                code = _SKIPPED.sub(lambda match: " " * len(match.group(0)), text)
                self.ordered[text] = (_top_order(code) or (0, ""))[1] is not None
            return _Answer(rows if self.ordered[text] else sorted(rows, key=_sort_key))
        return _Answer(answer[key])

    def _ask(self, text: str, batched: tuple[str, bool], others: tuple) -> dict[tuple[str, str], list[tuple]] | None:
        statement, ordered = batched
        self.statements += 1
        try:
            rows = self.connection.execute(statement, [*others, self.keys_json]).fetchall()
        except duckdb.BinderException:  # an ORDER BY term that means nothing outside the query: run by run
            self.correlated[text] = None
            return None
        answer: dict[tuple[str, str], list[tuple]] = {run: [] for run in self.keys}
        for row in rows:
            answer[row[0], row[1]].append(row[2:-1])
        if not ordered:
            for run_rows in answer.values():
                run_rows.sort(key=_sort_key)
        self.answers[text, others] = answer
        return answer
