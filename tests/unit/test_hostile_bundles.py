"""Hostile bundles through the real CLI (issue 14): what a compromised, misconfigured or broken host
can send. Each is refused whole with its file and field (or line and cap) named, recorded in
refused_bundles, and costs no row of any other bundle of the same ingest: the warehouse ends up
exactly as if only the good bundles had been given. `query` and `report` then still work."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from fleetscope.ingest.bundle import (MAX_BUNDLE_BYTES, MAX_LINE_BYTES, MAX_MANIFEST_ITEMS, MAX_PARSED_FACTOR,
                                      MAX_SAMPLES_PER_POINT, MAX_TEXT_CHARS)
from fleetscope.ingest.parsers.json_limits import MAX_JSON_DEPTH, MAX_JSON_KEYS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIO = FIXTURES / "fio_samples" / "fio-3.36_io_uring_randread_4k_qd32_pctlist.json"
RESULTS_FILE = "results/latency_sweep.jsonl"
DEEP = "[" * 1000 + "]" * 1000  # Python's json recurses once per level and gives up near 1000
TABLES = ("hosts", "runs", "facts", "cache_levels", "knob_values", "experiments", "points", "samples",
          "raw_outputs", "tool_samples", "inferred_levels", "flags", "inference_runs")


def loaded_latency_points() -> list[dict]:
    points = []
    for traffic, delay, bandwidth, latency in (("idle", 0, 0.0, 95.0), ("read", 2000, 4.0, 100.0),
                                               ("read", 200, 9.0, 120.0), ("read", 0, 12.0, 180.0)):
        points.append({
            "schema_version": 1, "experiment": "loaded_latency", "kernel": "loaded_latency",
            "metric": "loaded_latency", "unit": "ns",
            "params": {"traffic": traffic, "read_lines": 1, "write_lines": 0, "store": "regular", "delay": delay,
                       "load_threads": 0 if traffic == "idle" else 1, "working_set_bytes": 1 << 28},
            "samples": [latency, latency * 1.01], "context": {"bandwidth_gb_s": bandwidth},
            "summary": {"min": latency, "median": latency, "mean": latency, "ci95_low": latency,
                        "ci95_high": latency * 1.01, "count": 2}})
    return points


def lines(points: list[dict]) -> str:
    return "".join(json.dumps(point) + "\n" for point in points)


class Hostile:
    """Writes one hostile bundle per case beside good ones; `expected` maps host -> fragments of its refusal."""

    def __init__(self, bundles):
        self.bundles = bundles
        self.expected: dict[str, list[str]] = {}

    def write(self, host: str, fragments: list[str], *, edit_manifest=None, results: dict | None = None,
              experiments: list[dict] | None = None, after=None) -> Path:
        manifest = self.bundles.manifest(host=host)
        if experiments is not None:
            manifest["experiments"] = experiments
        if edit_manifest:
            edit_manifest(manifest)
        bundle = self.bundles.write(manifest, results=results)
        if after:
            after(bundle)
        self.expected[bundle.name] = fragments
        return bundle


def _manifest_text(bundle: Path, text: str) -> None:
    (bundle / "manifest.json").write_text(text)


def _nested_facts(bundle: Path) -> None:
    manifest = json.loads((bundle / "manifest.json").read_text())
    text = json.dumps(manifest)
    _manifest_text(bundle, text.replace('"virtualization": "kvm"', f'"virtualization": {DEEP}'))


def _sparse(path: Path, size: int) -> None:
    with path.open("r+b" if path.exists() else "wb") as file:
        file.truncate(size)


def _fio_experiment(status: str = "ok") -> list[dict]:
    return [{"name": "fio", "status": status, "file": None, "raw": [
        {"path": "raw/fio/randread.json", "tool": "fio", "params": {"job": "randread"}}]}]


def _fifo_results(bundle: Path) -> None:
    (bundle / RESULTS_FILE).unlink()
    os.mkfifo(bundle / RESULTS_FILE)


def write_hostile_bundles(bundles) -> Hostile:
    hostile = Hostile(bundles)
    points = bundles.latency_points()
    fio = FIO.read_text()
    # finding 3: schema-valid once, but a shape the code did not expect
    hostile.write("dimms-as-strings", ["manifest.json", "at $.facts.memory.dimms[0]", "is not of type 'object'"],
                  edit_manifest=lambda m: m["facts"]["memory"].update(dimms=["DIMM 0: 16 GB"]))
    hostile.write("manifest-nested", ["manifest.json", f"deeper than MAX_JSON_DEPTH ({MAX_JSON_DEPTH})"],
                  after=_nested_facts)
    deep_point = copy.deepcopy(points[3])
    deep_point["params"]["note"] = "@"
    hostile.write("point-nested", [f"{RESULTS_FILE}: line 4", f"deeper than MAX_JSON_DEPTH ({MAX_JSON_DEPTH})"],
                  results={RESULTS_FILE: lines(points[:3]) + json.dumps(deep_point).replace('"@"', DEEP) + "\n"})
    hostile.write("fio-nested", ["raw/fio/randread.json", f"deeper than MAX_JSON_DEPTH ({MAX_JSON_DEPTH})"],
                  experiments=bundles.manifest()["experiments"] + _fio_experiment(),
                  results={RESULTS_FILE: points,
                           "raw/fio/randread.json": fio.replace('"jobs"', f'"deep": {DEEP}, "jobs"', 1)})
    no_traffic = loaded_latency_points()
    del no_traffic[2]["params"]["traffic"]
    hostile.write("loaded-latency-without-traffic",
                  ["results/loaded_latency.jsonl: line 3", "at $.params", "'traffic' is a required property"],
                  experiments=[{"name": "loaded_latency", "status": "ok", "file": "results/loaded_latency.jsonl"}],
                  results={"results/loaded_latency.jsonl": no_traffic})
    hostile.write("time-beyond-utc", ["manifest.json", "at $.started_at", "is not a 'date-time'"],
                  edit_manifest=lambda m: m.update(started_at="9999-12-31T23:59:59-14:00"))
    # finding 3: numbers that are not finite, wherever they hide
    hostile.write("fio-nan-percentile", ["raw/fio/randread.json", "NaN is not a finite number"],
                  experiments=bundles.manifest()["experiments"] + _fio_experiment(),
                  results={RESULTS_FILE: points, "raw/fio/randread.json": fio.replace('"99.000000"', '"nan"', 1)})
    hostile.write("fio-inf-percentile", ["raw/fio/randread.json", "Infinity is not a finite number"],
                  experiments=bundles.manifest()["experiments"] + _fio_experiment(),
                  results={RESULTS_FILE: points, "raw/fio/randread.json": fio.replace('"99.000000"', '"inf"', 1)})
    hostile.write("fio-overflow", ["raw/fio/randread.json", "is not a number fio writes"],
                  experiments=bundles.manifest()["experiments"] + _fio_experiment(),
                  results={RESULTS_FILE: points,
                           "raw/fio/randread.json": fio.replace('"99.000000" : 724992', '"99.000000" : 1e999', 1)})
    hostile.write("sample-overflow", [f"{RESULTS_FILE}: line 2", "at $.samples[1]: Infinity is not a finite number"],
                  results={RESULTS_FILE: lines(points).replace('"samples": [', '"samples": [1.0, 1e999, ', 2)
                           .replace('"samples": [1.0, 1e999, ', '"samples": [', 1)})
    hostile.write("summary-nan", [f"{RESULTS_FILE}: line 1", "at $.summary.median: NaN is not a finite number"],
                  results={RESULTS_FILE: lines(points).replace('"median": ', '"median": NaN, "m": ', 1)})
    hostile.write("facts-overflow", ["manifest.json", "at $.facts.numa.nodes: -Infinity is not a finite number"],
                  after=lambda b: _manifest_text(b, (b / "manifest.json").read_text().replace(
                      '"nodes": 1', '"nodes": -1e999', 1)))
    big_sample = copy.deepcopy(points[0])
    big_sample["samples"][2] = 10**30
    hostile.write("sample-beyond-64-bits", [f"{RESULTS_FILE}: line 1", "at $.samples[2]", "does not fit in 64 bits"],
                  results={RESULTS_FILE: [big_sample] + points[1:]})
    hostile.write("cache-beyond-64-bits",
                  ["manifest.json", "at $.facts.caches[0].size_bytes", "does not fit in 64 bits"],
                  edit_manifest=lambda m: m["facts"]["caches"][0].update(size_bytes=2**70))
    # finding 2: the caps, each refused before the work it bounds
    hostile.write("line-over-cap", [f"{RESULTS_FILE}: line 2", f"MAX_LINE_BYTES ({MAX_LINE_BYTES} bytes)"],
                  results={RESULTS_FILE: lines(points[:1]) + '{"pad": "' + "x" * MAX_LINE_BYTES + '"}\n'})
    # a firmware claim of main's (facts.numa.distances, 4096 rows of 4096 the schema allows) cost jsonschema
    # 4 s of CPU a MiB: the manifest's array items are counted before the schema is checked
    hostile.write("manifest-items-over-cap", ["manifest.json", f"MAX_MANIFEST_ITEMS ({MAX_MANIFEST_ITEMS})"],
                  edit_manifest=lambda m: m["facts"].setdefault("numa", {}).update(
                      distances={f"node{index}": [10] * 4096 for index in range(MAX_MANIFEST_ITEMS // 4096 + 1)}))
    many = copy.deepcopy(points[0])
    many["samples"] = [0] * (MAX_SAMPLES_PER_POINT + 1)
    hostile.write("samples-over-cap", [f"{RESULTS_FILE}: line 1", f"MAX_SAMPLES_PER_POINT ({MAX_SAMPLES_PER_POINT})"],
                  results={RESULTS_FILE: [many]})
    hostile.write("bundle-over-cap", [f"MAX_BUNDLE_BYTES ({MAX_BUNDLE_BYTES})", "largest: results/latency_sweep.jsonl"],
                  after=lambda b: _sparse(b / RESULTS_FILE, MAX_BUNDLE_BYTES))
    hostile.write("manifest-over-cap", ["manifest.json", f"MAX_LINE_BYTES ({MAX_LINE_BYTES} bytes)"],
                  after=lambda b: _sparse(b / "manifest.json", MAX_LINE_BYTES + 1))
    # finding 10 and the rest: names, files and text that are not what they claim
    hostile.write("fifo-results", [RESULTS_FILE, "is not a regular file"], after=_fifo_results)
    hostile.write("results-is-a-folder", ["at $.experiments[0].file", "is not a regular file"],
                  after=lambda b: ((b / RESULTS_FILE).unlink(), (b / RESULTS_FILE).mkdir()))
    hostile.write("results-linked-out", ["at $.experiments[0].file", "outside the bundle"],
                  after=lambda b: ((b / RESULTS_FILE).unlink(), (b / RESULTS_FILE).symlink_to("/etc/passwd")))
    hostile.write("lone-surrogate", ["manifest.json", "at $.facts.compiler", "lone surrogate"],
                  after=lambda b: _manifest_text(b, (b / "manifest.json").read_text().replace(
                      '"compiler": "gcc', '"compiler": "\\ud800gcc', 1)))
    hostile.write("escape-sequences", ["manifest.json", "at $.experiments[0].name", "\\x1b[2J"],
                  edit_manifest=lambda m: m["experiments"][0].update(name="latency_sweep\x1b[2J"))
    # issue 27: paths, sizes and shapes round 2
    hostile.write("nul-in-results-path", ["at $.experiments[0].file", "not a path inside the bundle in normal form"],
                  edit_manifest=lambda m: m["experiments"][0].update(file="results/latency_sweep.jsonl\u0000.x"))
    hostile.write("nul-in-raw-path", ["at $.experiments[1].raw[0].path", "not a path inside the bundle in normal form"],
                  experiments=bundles.manifest()["experiments"] + [
                      {"name": "fio", "status": "failed", "file": None,
                       "raw": [{"path": "raw/fio/\u0000randread.json", "tool": "fio"}]}],
                  results={RESULTS_FILE: points})
    hostile.write("raw-named-twice-through-dot-dot",
                  ["at $.experiments[1].raw[1].path", "'raw/../raw/fio/randread.json' climbs out with '..'"],
                  experiments=bundles.manifest()["experiments"] + [
                      {"name": "fio", "status": "ok", "file": None,
                       "raw": [{"path": "raw/fio/randread.json", "tool": "fio"},
                               {"path": "raw/../raw/fio/randread.json", "tool": "fio"}]}],
                  results={RESULTS_FILE: points, "raw/fio/randread.json": fio})
    hostile.write("skipped-with-points", ["at $.experiments[0]", "'skipped' yet its results file", RESULTS_FILE],
                  edit_manifest=lambda m: m["experiments"][0].update(status="skipped"))
    hostile.write("skipped-with-raw", ["at $.experiments[1]", "'skipped' yet its raw outputs"],
                  experiments=bundles.manifest()["experiments"] + _fio_experiment("skipped"),
                  results={RESULTS_FILE: points, "raw/fio/randread.json": fio})
    many_keys = copy.deepcopy(points[1])
    many_keys["params"]["note"] = "@"
    hostile.write("keys-over-cap", [f"{RESULTS_FILE}: line 2", f"MAX_JSON_KEYS ({MAX_JSON_KEYS})"],
                  results={RESULTS_FILE: lines(points[:1]) + json.dumps(many_keys).replace(
                      '"@"', "{" + ",".join(f'"k{index}": 0' for index in range(MAX_JSON_KEYS + 1)) + "}") + "\n"})
    hostile.write("error-text-over-cap", ["manifest.json", "at $.experiments[0].error", f"MAX_TEXT_CHARS ({MAX_TEXT_CHARS})"],
                  edit_manifest=lambda m: m["experiments"][0].update(error="x" * (MAX_TEXT_CHARS + 1)))
    many_notes = "Intel(R) Memory Latency Checker - v3.11b\n" + "Using small pages\n" * 33 + \
        "Each iteration took 233.8 base frequency clocks (\t80.6\tns)\n"
    hostile.write("mlc-notes-over-cap", ["raw/mlc/idle.txt", "more than 32 setting and warning lines"],
                  experiments=bundles.manifest()["experiments"] + [
                      {"name": "mlc", "status": "ok", "file": None,
                       "raw": [{"path": "raw/mlc/idle.txt", "tool": "mlc"}]}],
                  results={RESULTS_FILE: points, "raw/mlc/idle.txt": many_notes})
    # every idle-latency line a run of its own, each copying the invocation's 64 KiB command line
    amplified = ("Intel(R) Memory Latency Checker - v3.11b\nCommand line parameters: --idle_latency "
                 + "-x" * 32000 + "\n" + "Each iteration took 233.8 base frequency clocks (\t80.6\tns)\n" * 2000)
    hostile.write("mlc-output-amplified", ["raw/mlc/idle.txt", f"more than {MAX_PARSED_FACTOR} times the output's"],
                  experiments=bundles.manifest()["experiments"] + [
                      {"name": "mlc", "status": "ok", "file": None,
                       "raw": [{"path": "raw/mlc/idle.txt", "tool": "mlc"}]}],
                  results={RESULTS_FILE: points, "raw/mlc/idle.txt": amplified})
    newline_run = bundles.manifest(run_id=bundles.run_id + "\n", host="run-id-with-newline")
    bundle = bundles.write(newline_run)
    hostile.expected[bundle.name] = ["at $.run_id", "(the whole text must match)", "\\n"]
    newline_host = bundles.manifest(host="host-with-newline\n")
    bundle = bundles.write(newline_host)
    hostile.expected[bundle.name] = ["at $.host", "(the whole text must match)", "\\n"]
    return hostile


def write_good_bundles(bundles) -> list[str]:
    good = ["aa-good", "zz-good", "zz-good-with-fio"]
    bundles.write(bundles.manifest(host=good[0]))
    bundles.write(bundles.manifest(host=good[1]),
                  results={RESULTS_FILE: bundles.latency_points(seed=3)})
    manifest = bundles.manifest(host=good[2])
    manifest["experiments"] += _fio_experiment() + [
        {"name": "loaded_latency", "status": "ok", "file": "results/loaded_latency.jsonl"}]
    bundles.write(manifest, results={RESULTS_FILE: bundles.latency_points(seed=5),
                                     "raw/fio/randread.json": FIO.read_text(),
                                     "results/loaded_latency.jsonl": loaded_latency_points()})
    return good


def snapshot(db: Path) -> dict[str, list[tuple]]:
    """Every row of every run table, without the columns that differ between two loads (times, paths)."""
    with duckdb.connect(str(db), read_only=True) as connection:
        return {table: sorted(map(str, connection.execute(
            f"SELECT * EXCLUDE ({exclude}) FROM {table}" if exclude else f"SELECT * FROM {table}").fetchall()))
                for table, exclude in ((table, {"hosts": "first_loaded_at", "runs": "loaded_at, bundle_path",
                                                "inference_runs": "computed_at"}.get(table)) for table in TABLES)}


def test_hostile_bundles_are_refused_whole_and_cost_no_other_bundle_a_row(tmp_path, bundles, cli):
    good = write_good_bundles(bundles)
    reference_db = tmp_path / "reference.duckdb"
    reference = cli("ingest", bundles.results_dir, "--db", reference_db)
    assert reference.returncode == 0, reference.stdout + reference.stderr

    hostile = write_hostile_bundles(bundles)
    db = tmp_path / "fleet.duckdb"
    result = cli("ingest", bundles.results_dir, "--db", db)
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert result.returncode == 3, result.stdout + result.stderr
    outcome_lines = result.stdout.splitlines()[:-1]
    assert len(outcome_lines) == len(good) + len(hostile.expected), "one line per bundle, whatever the names hold"
    # REFUSED    <bundle path, escaped>: <reason>
    refusals = {line[11:].split(": ", 1)[0].rsplit("/", 1)[1]: line for line in outcome_lines
                if line.startswith("REFUSED")}
    problems = []
    for host, fragments in hostile.expected.items():
        shown = host.encode("unicode_escape").decode("ascii")
        line = refusals.get(shown)
        if line is None:
            problems.append(f"{shown}: not refused")
            continue
        problems += [f"{shown}: {fragment!r} not in {line[:400]!r}" for fragment in fragments if fragment not in line]
    assert problems == []
    assert sum(line.startswith("loaded ") for line in outcome_lines) == len(good)
    assert f"{len(good)} of {len(good) + len(hostile.expected)} bundles accepted" in result.stdout

    assert snapshot(db) == snapshot(reference_db)
    with duckdb.connect(str(db), read_only=True) as connection:
        refused = connection.execute("SELECT bundle_path, run_id, host, reason FROM refused_bundles").fetchall()
    assert len(refused) == len(hostile.expected)
    assert all(len(reason) <= 2000 and "\n" not in reason and "\x1b" not in reason for *_, reason in refused)
    by_host = {host: (path, run_id) for path, run_id, host, _ in refused}
    assert by_host["dimms-as-strings"][1] == bundles.run_id
    assert None in by_host, "a folder name with a newline is no host name: the refusal's host is NULL"

    # the readers still work on what was loaded
    query = cli("query", "SELECT host, count(*) AS points FROM points GROUP BY host ORDER BY host", "--format", "csv",
                "--db", db)
    assert query.returncode == 0, query.stderr
    assert query.stdout.split()[1:] == [f"{host},34" for host in good[:2]] + [f"{good[2]},38"]
    report = cli("report", "--db", db, "--out", tmp_path / "reports")
    assert report.returncode == 0, report.stdout + report.stderr
    assert {f"{host}.html" for host in good} <= {path.name for path in (tmp_path / "reports").iterdir()}


def test_a_refusal_is_forgotten_once_its_folder_loads_or_is_gone(tmp_path, bundles, cli):
    db = tmp_path / "fleet.duckdb"
    fixed_later = bundles.write(bundles.manifest(host="node1", started_at="yesterday"))
    removed_later = bundles.write(bundles.manifest(host="node2", started_at="yesterday"))
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 3
    listed = cli("query", "SELECT host FROM refused_bundles ORDER BY host", "--format", "csv", "--db", db)
    assert listed.stdout.split() == ["host", "node1", "node2"]

    bundles.write(bundles.manifest(host="node1"))
    shutil.rmtree(removed_later)
    again = cli("ingest", bundles.results_dir, "--db", db)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.startswith(f"loaded     {fixed_later}")
    listed = cli("query", "SELECT count(*) AS refused FROM refused_bundles", "--format", "csv", "--db", db)
    assert listed.stdout.split() == ["refused", "0"]


@pytest.mark.parametrize("reason", ["x" * 10_000, "line\nREFUSED    forged\x1b[2J"])
def test_a_refusal_reason_is_stored_as_a_bound_capped_printable_parameter(tmp_path, reason):
    from fleetscope.ingest.load import MAX_REASON_CHARS, record_refusal
    from fleetscope.store.warehouse import open_warehouse

    with open_warehouse(tmp_path / "fleet.duckdb") as connection:
        record_refusal(connection, tmp_path / "results" / "run'); DROP TABLE runs; --" / "node1", reason)
        (stored,) = connection.execute("SELECT reason FROM refused_bundles").fetchone()
        assert connection.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    assert len(stored) <= MAX_REASON_CHARS
    assert "\n" not in stored and "\x1b" not in stored


def test_query_shows_a_hosts_control_characters_escaped(tmp_path, bundles, cli):
    manifest = bundles.manifest()
    manifest["facts"]["compiler"] = "gcc\x1b[2J\nloaded     forged"
    bundles.write(manifest)
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    result = cli("query", "SELECT facts ->> '$.compiler' AS compiler FROM facts", "--db", db)
    assert result.returncode == 0, result.stderr
    assert "gcc\\x1b[2J\\nloaded     forged" in result.stdout and "\x1b" not in result.stdout
    assert result.stdout.count("\n") == 4  # header, rule, one row, row count


def test_a_point_repeated_by_a_host_adds_its_rows_and_no_more(tmp_path, cli):
    """The views that divide by a baseline point (core_clock_curve by the one-core and scalar clocks,
    saxpy_stride by stride 1, tlb_reach by the control chain, the NUMA matrices by the local cell) joined
    every copy of it: 100 copies of one core_clock point took 79 s and 3.4 GB to report (cubic), 1,000 of a
    saxpy point 299 MB of page. The baseline is one row per key, so each copy adds one row."""
    import compute_bundles

    bundle = compute_bundles.write_bundle(tmp_path / "results")
    copies = 60

    def repeat(experiment: str, chosen) -> int:
        path = bundle / "results" / f"{experiment}.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()]
        extra = [record for record in records if chosen(record["params"])][:1] * copies
        path.write_text("".join(json.dumps(record) + "\n" for record in records + extra))
        return len(records) + len(extra)

    clocks = repeat("core_clock", lambda params: params.get("class") == "scalar_int" and params.get("active_cores") == 1)
    saxpy = repeat("saxpy", lambda params: params.get("stride_elements") == 1)
    repeat("tlb", lambda params: params.get("chain") == "control")
    tlb_chains = repeat("tlb", lambda params: params.get("chain") == "tlb")
    db = tmp_path / "fleet.duckdb"
    ingest = cli("ingest", tmp_path / "results", "--db", db)
    assert ingest.returncode == 0, ingest.stdout
    with duckdb.connect(str(db), read_only=True) as connection:
        counted = {view: connection.execute(f"SELECT count(*) FROM {view}").fetchone()[0]
                   for view in ("core_clock_curve", "saxpy_stride", "tlb_reach")}
        clock_points = connection.execute("SELECT count(*) FROM points WHERE experiment = 'core_clock' "
                                          "AND metric = 'core_clock'").fetchone()[0]
    assert counted["core_clock_curve"] == clock_points <= clocks
    assert counted["saxpy_stride"] <= saxpy and counted["tlb_reach"] <= tlb_chains, counted
