"""A run's derived rows depend on that run alone: ingest loads and derives each bundle in a stage that
holds only its rows (fleetscope.store.warehouse.attach_stage), so a bundle loaded into an empty warehouse and
into one already holding other hosts, and other runs of its own host with other values, gives the same
rows, and its own rows reach the warehouse unchanged. The fleet is tests/fleet_bundles.py's: real
default-run curves, scaled per CPU group, so a leak of another run's points would move a level."""

from __future__ import annotations

from pathlib import Path

import duckdb
from fleet_bundles import GROUPS, write_fleet, write_host

from fleetscope.analyze.derive import DERIVED_TABLES
from fleetscope.ingest.load import RUN_TABLES, ingest_bundle, ingest_bundles
from fleetscope.store.warehouse import open_warehouse

HOST, RUN_ID = "probe-01", "20261202T000000Z-0a0a0a"
# Columns that record when or from where a row was loaded, not what it says.
WHEN = {"computed_at", "loaded_at", "bundle_path"}


def run_rows(database: Path) -> dict[str, list[tuple]]:
    """Every row of the probe run in every run and derived table, without the columns saying when."""
    rows = {}
    with duckdb.connect(str(database), read_only=True) as connection:
        for table in (*RUN_TABLES, *DERIVED_TABLES):
            names = [name for (name,) in connection.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
                [table]).fetchall() if name not in WHEN]
            listed = ", ".join(f'"{name}"' for name in names)
            rows[table] = sorted(connection.execute(
                f"SELECT {listed} FROM {table} WHERE run_id = ? AND host = ?", [RUN_ID, HOST]).fetchall(), key=repr)
    return rows


def test_a_run_derives_the_same_rows_alone_and_among_many(tmp_path, bundle_tools):
    builder_class, _ = bundle_tools
    probe_builder = builder_class(tmp_path / "probe")
    probe = write_host(probe_builder, HOST, GROUPS[1], run_id=RUN_ID, started_at="2026-12-02T00:00:00Z")

    alone = tmp_path / "alone.duckdb"
    with open_warehouse(alone) as connection:
        assert ingest_bundle(connection, probe).action == "loaded"

    among = tmp_path / "among.duckdb"
    fleet_builder = builder_class(tmp_path / "fleet")
    write_fleet(fleet_builder, hosts_per_group=2)
    # earlier and later runs of the probe's own host, slower everywhere, on both sides of it
    for run_id, started in (("20261201T000000Z-0b0b0b", "2026-12-01T00:00:00Z"),
                            ("20261203T000000Z-0c0c0c", "2026-12-03T00:00:00Z")):
        write_host(fleet_builder, HOST, GROUPS[0], run_id=run_id, started_at=started, slow_dram=True)
    others = sorted(path.parent for path in (tmp_path / "fleet").glob("*/*/manifest.json"))
    with open_warehouse(among) as connection:
        for path in others[:4]:
            assert ingest_bundle(connection, path).action == "loaded"
        assert ingest_bundle(connection, probe).action == "loaded"
        for path in others[4:]:
            assert ingest_bundle(connection, path).action == "loaded"
        held = connection.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert held == len(others) + 1 >= 9

    # the same fleet through two worker processes (--jobs 2), with a broken bundle among them
    parallel = tmp_path / "parallel.duckdb"
    broken = write_host(builder_class(tmp_path / "broken"), "broken-01", GROUPS[2], run_id=RUN_ID,
                        started_at="2026-12-02T00:00:00Z")
    (broken / "results" / "latency_sweep.jsonl").write_text("{not json\n")
    with open_warehouse(parallel) as connection:
        outcomes = list(ingest_bundles(connection, [*others[:4], probe, broken, *others[4:]], jobs=2))
    assert [outcome.path for outcome in outcomes] == [*others[:4], probe, broken, *others[4:]]
    assert [outcome.action for outcome in outcomes] == ["loaded"] * 5 + ["REFUSED"] + ["loaded"] * len(others[4:])
    assert "latency_sweep.jsonl: line 1: not valid JSON" in outcomes[5].detail

    # batches of two: the workers open each batch while the writer derives the one before, but not a batch that
    # names a run of the one before (the probe given twice), which must be in the warehouse first to be unchanged
    pipelined = tmp_path / "pipelined.duckdb"
    given = [*others[:3], probe, probe, broken, *others[3:]]
    with open_warehouse(pipelined) as connection:
        outcomes = list(ingest_bundles(connection, given, jobs=2, batch=2))
    assert [outcome.path for outcome in outcomes] == given
    assert [outcome.action for outcome in outcomes] == (["loaded"] * 4 + ["unchanged", "REFUSED"]
                                                        + ["loaded"] * len(others[3:]))

    expected = run_rows(alone)
    assert expected["inferred_levels"] and expected["flags"] and expected["points"], "the probe derived nothing"
    for database in (among, parallel, pipelined):
        found = run_rows(database)
        for table in (*RUN_TABLES, *DERIVED_TABLES):
            assert found[table] == expected[table], f"{database.name}: {table}: the probe's rows differ among others"
