"""fleetscope.analyze.derive.DERIVATIONS, the one list of derived tables, against the warehouse the migrations build:
every table in it exists with a column for every key its function writes (insert_rows keeps only the
table's columns, so a key without one would be lost without a word), and no inferred table is left out.

The rows come from one run with every input a deriver reads: real kernel records (tlb, mlp, bandwidth,
loaded_latency, saxpy, core_clock; small sizes, short samples), the shared synthetic latency sweep, a real MLC
loaded-latency output and a workload's real perf stat and perf record profiles."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from fleetscope.analyze.derive import DERIVATIONS, DERIVED_TABLES
from fleetscope.ingest.load import ingest_bundle
from fleetscope.store.warehouse import open_warehouse

PROJECT = Path(__file__).resolve().parents[2]
MLC_OUTPUT = PROJECT / "tests" / "fixtures" / "mlc_samples" / "csit_clx_loaded_latency.txt"
PERF_SAMPLES = PROJECT / "tests" / "fixtures" / "perf_samples"
QUICK = ["--samples", "3", "--min-sample-ms", "1", "--seed", "5", "--cpu", "0"]
SIZE = str(16 << 20)
KERNEL_RUNS = {
    "tlb": ["tlb", "--min-pages", "8", "--max-pages", "4096", "--per-octave", "1"],
    "mlp": ["mlp", "--size", SIZE, "--chains", "1,2,4"],
    "bandwidth": ["bandwidth", "--ops", "read", "--sizes", f"16k,256k,{SIZE}"],
    "loaded_latency": ["loaded_latency", "--traffic", "read", "--delays", "0,1000", "--size", SIZE,
                       "--load-size", SIZE],
    "saxpy": ["saxpy", "--strides", "1,8", "--size", SIZE],
    # its threads take --cpus (it refuses --cpu): one class on one core, and one short ramp
    "core_clock": ["core_clock", "--classes", "scalar_int", "--cpus", "0", "--active", "1", "--idle-ms", "1",
                   "--ramp-ms", "10"],
}


def columns(connection: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for table, column in connection.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_name IN (SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE')"
    ).fetchall():
        found.setdefault(table, set()).add(column)
    return found


@pytest.fixture(scope="module")
def run_inputs(tmp_path_factory, bundle_tools) -> tuple[Path, str, str]:
    """A warehouse holding one run with every deriver's input: (database, run_id, host)."""
    builder_class, _ = bundle_tools
    work = tmp_path_factory.mktemp("derived")
    source = work / "kernels"
    shutil.copytree(PROJECT / "kernels", source, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["make", "-s", "-j2", "-C", str(source)], check=True, capture_output=True, timeout=300)
    binary = source / "build" / "fleetscope-kernels"
    builder = builder_class(work / "results")
    manifest = builder.manifest()
    results: dict[str, object] = {"results/latency_sweep.jsonl": builder.latency_points()}
    for experiment, argv in KERNEL_RUNS.items():
        options = [option for index, option in enumerate(QUICK) if "--cpus" not in argv or
                   (option != "--cpu" and (index == 0 or QUICK[index - 1] != "--cpu"))]
        out = subprocess.run([str(binary), *argv, *options], check=True, capture_output=True, text=True, timeout=300)
        results[f"results/{experiment}.jsonl"] = [json.loads(line) for line in out.stdout.splitlines()]
        manifest["experiments"].append({"name": experiment, "status": "ok", "file": f"results/{experiment}.jsonl",
                                        "error": None, "wall_s": 1.0, "notes": [], "raw": []})
    # a workload's perf stat and its cycles and cache-miss profiles: the allocator study's recorded output
    workload_raw = []
    for tool, name in (("perf", "hakmem_phase44_perf_stat.txt"), ("perf_report", "hakmem_phase44_perf_record_top20_cycles.txt"),
                       ("perf_report", "hakmem_phase44_perf_record_top12_cache_misses.txt")):
        results[f"raw/{tool}/{name}"] = (PERF_SAMPLES / name).read_text(encoding="utf-8")
        workload_raw.append({"path": f"raw/{tool}/{name}", "tool": tool, "params": {"workload": "hakmem"}})
    manifest["experiments"].append({"name": "workloads", "status": "ok", "file": None, "error": None, "wall_s": 1.0,
                                    "notes": [], "raw": workload_raw})
    results["raw/mlc/loaded_latency.txt"] = MLC_OUTPUT.read_text(encoding="utf-8")
    manifest["experiments"].append({"name": "mlc", "status": "ok", "file": None, "error": None, "wall_s": 1.0,
                                    "notes": [], "raw": [{"path": "raw/mlc/loaded_latency.txt", "tool": "mlc"}]})
    bundle = builder.write(manifest, results=results)
    database = work / "fleet.duckdb"
    with open_warehouse(database) as connection:
        outcome = ingest_bundle(connection, bundle)
    assert outcome.action == "loaded", outcome.detail
    return database, manifest["run_id"], manifest["host"]


def test_every_derived_table_exists_with_the_columns_its_function_writes(run_inputs):
    database, run_id, host = run_inputs
    with duckdb.connect(str(database)) as connection:
        tables = columns(connection)
        computed: dict[str, list[dict]] = {}
        for derived in DERIVATIONS:
            assert derived.table in tables, f"{derived.table}: no such table in a freshly migrated warehouse"
            computed[derived.table] = derived.rows(connection, [run_id, host], computed)
            written = {key for row in computed[derived.table] for key in row} | {"run_id", "host"}
            assert computed[derived.table], f"{derived.table}: no rows from a run with every input"
            assert written <= tables[derived.table], (
                f"{derived.table} has no column for {sorted(written - tables[derived.table])}")
    # the inputs reached past the notes: each inference found something to fit
    assert any(row.get("level") == "L1" for row in computed["inferred_levels"])
    assert {row["source"] for row in computed["inferred_loaded_latency"]} == {"mlc", "loaded_latency"}
    assert any(row.get("bandwidth_gb_s") for row in computed["inferred_level_bandwidth"])
    assert [row["case_id"] for row in computed["workload_cases"]] == ["A"]
    assert any(row["mark"] == "misses far above time" for row in computed["workload_functions"])


def test_no_derived_table_is_left_out_of_the_list(tmp_path):
    with open_warehouse(tmp_path / "fleet.duckdb") as connection:
        inferred = {table for table in columns(connection)
                    if table.startswith(("inferred_", "inference_", "workload_"))}
    assert inferred | {"firmware_claims", "flags"} == set(DERIVED_TABLES)
