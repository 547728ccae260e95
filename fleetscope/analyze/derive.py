"""What the warehouse derives from a loaded run: its inferred hierarchy (fleetscope.analyze.inference) and its
plausibility flags (fleetscope.analyze.plausibility), recomputed whole for one (run_id, host).

Ingest calls `derive_runs` on the runs of a batch in its stage, before the batch's transaction, so a
run's derived rows always match its points; `is_current` tells ingest when a run loaded by an older
method needs recomputing. `DERIVATIONS` is the one list of derived tables, each with the function
computing its rows.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from types import SimpleNamespace

from pathlib import PurePosixPath

import duckdb

from fleetscope.analyze.batch_rows import BatchRows
from fleetscope.analyze.clock import infer_ramp, infer_turbo
from fleetscope.analyze.firmware import claim_rows
from fleetscope.analyze.inference import (INFERENCE_VERSION, SMALL_PAGE_BYTES, CurveReading, InferenceError, Placement,
                                          amat_fit, bandwidth_per_level, infer_cache_levels, infer_loaded_latency,
                                          infer_mlp, infer_tlb)
from fleetscope.analyze.plausibility import HUGE_PAGE_BYTES, check_run
from fleetscope.analyze.profiling import RATE_KEYS, classify, is_miss_event, is_time_event
from fleetscope.resources import sql
from fleetscope.store.warehouse import insert_rows

# Miss counters a SAXPY fit can use, best first: each stride process's count per update is its miss rate.
_SAXPY_MISS_EVENTS = ("cache-misses", "LLC-load-misses", "L1-dcache-load-misses")
# A paired TLB difference below minus half the L1 latency is noise; it is clipped there so its log exists.
_TLB_FLOOR_SHARE = 0.5


def _rows(connection: duckdb.DuckDBPyConnection, query: str, key: list) -> list[tuple]:
    """Rows of warehouse/queries/derive/<query>.sql for one run (key: [run_id, host], and more parameters
    where the query takes them)."""
    return connection.execute(sql(f"derive/{query}"), key).fetchall()


def _by_kind(rows: list[tuple]) -> list[tuple[dict, list[tuple]]]:
    """Rows whose first three columns are (kind_rank, core_kind, cpu), as the derive queries give them, per
    core kind measured, fastest kind first: ({core_kind, cpu}, the rows without those three columns). On a
    host with one kind core_kind and cpu are None and there is one group: one inference, as ever. cpu is
    the kind's pinned CPU (the smallest, were a kind measured on several)."""
    kinds: dict[tuple, list[tuple]] = {}
    for row in rows:
        kinds.setdefault((row[0], row[1]), []).append(row)
    return [({"core_kind": kind, "cpu": min((row[2] for row in group if row[2] is not None), default=None)},
             [row[3:] for row in group])
            for (_unused, kind), group in sorted(kinds.items(), key=lambda item: (item[0][0], str(item[0][1])))]


def _level_rows(connection: duckdb.DuckDBPyConnection, key: list, derived: dict[str, list[dict]]) -> list[dict]:
    """The hierarchy of each core kind measured, each against its own kind's sysfs caches, per page policy."""
    stated = _rows(connection, "curve_reading", key)  # a reference host's curve: read as its source measured it
    stated_reading = CurveReading(*stated[0][:3]) if stated else None
    stated_clock = stated[0][3] if stated else None   # the core clock its source states, if any
    relative = stated_reading is not None and stated_reading.relative
    placed = {policy: (bool(granted), bool(guest)) for policy, granted, guest in _rows(connection, "latency_placement", key)}
    rows = []
    for kind, measured in _by_kind(_rows(connection, "latency_minima", key)):
        caches = _rows(connection, "sysfs_cache_sizes", [*key, kind["core_kind"]])
        sysfs = [size for _level, size, _ways in caches]
        way_spans = tuple(size // ways if ways else None for _level, size, ways in caches)
        points = [(*point[:3], point[3] if point[3] is not None else stated_clock) for point in measured
                  if relative or point[2] > 0]
        rows += [{**kind, **row} for row in _kind_levels(points, sysfs, way_spans, placed, stated_reading)]
    return rows


def _placement(policy: str, way_spans: tuple, placed: dict[str, tuple[bool, bool]],
               stated_reading: CurveReading | None) -> Placement:
    """How a curve's lines fell on the caches' sets: a reference curve's pages as its source stated them; a
    run's buffer is physically contiguous over 2 MiB only on huge pages granted in full on a host that is no
    guest (a guest's host may back its huge pages with 4 KiB pages), else over 4 KiB."""
    if stated_reading is not None:
        return Placement(stated_reading.page_bytes, (), "published")
    granted, guest = placed.get(policy, (False, True))
    huge = policy in ("thp", "hugetlb") and granted and not guest
    return Placement(HUGE_PAGE_BYTES if huge else SMALL_PAGE_BYTES, way_spans, "sysfs")


def _kind_levels(points: list[tuple], sysfs: list[int], way_spans: tuple, placed: dict[str, tuple[bool, bool]],
                 stated_reading: CurveReading | None) -> list[dict]:
    """One core kind's inferred levels per page policy, THP first (points: policy, bytes, min ns, clock)."""
    rows = []
    for policy in sorted({point[0] for point in points}, key=lambda name: (name != "thp", str(name))):
        curve = [point for point in points if point[0] == policy]
        # the chase walks random lines; a step smaller than a level's is read against the policy's page size
        reading = stated_reading or CurveReading("random-lines", HUGE_PAGE_BYTES if policy in ("thp", "hugetlb") else 4096)
        try:
            inferred = infer_cache_levels([point[1] for point in curve], [point[2] for point in curve],
                                          core_clock_ghz=[point[3] for point in curve], sysfs_sizes=sysfs,
                                          reading=reading,
                                          placement=_placement(policy, way_spans, placed, stated_reading))
        except InferenceError as error:
            rows.append({"page_policy": policy, "level_index": 0, "note": str(error)})
            continue
        if not inferred.levels:
            rows.append({"page_policy": policy, "level_index": 0, "note": "; ".join(inferred.notes)})
        for level in inferred.levels:
            notes = [level.note] if level.note else []
            if level.level_index == 1:
                notes += inferred.notes
                if inferred.set_aside_bytes:
                    notes.append(f"set aside as dips: {', '.join(map(str, inferred.set_aside_bytes))} B")
            row = {**asdict(level), "page_policy": policy, "note": "; ".join(notes) or None}
            if reading.relative:  # ns over L1 are no load-to-use latency: kept apart, never as latency_ns
                row.update(latency_over_l1_ns=row["latency_ns"], latency_ns=None, latency_cycles=None)
            rows.append(row)
    return rows


def _tlb_rows(connection: duckdb.DuckDBPyConnection, key: list, derived: dict[str, list[dict]]) -> list[dict]:
    rows = []
    for kind, reach in _by_kind(_rows(connection, "tlb_reach", key)):
        for page_size in sorted({row[0] for row in reach}, key=str):
            curve = [row for row in reach if row[0] == page_size]
            rows.append({**kind, "page_size": page_size, "page_bytes": curve[0][1], **_tlb_levels(curve)})
    return rows


def _tlb_levels(curve: list[tuple]) -> dict:
    """The TLB levels of one page size's curve (page_size, page_bytes, pages, tlb, control, paired)."""
    l1_ns = curve[0][4]  # the control chain at the fewest pages hits L1
    pages, latency = [], []
    for _unused, _unused, count, tlb_min, control_min, paired in curve:
        pages.append(count)
        if control_min is None:  # a reference host's published curve: ns per access as given
            latency.append(tlb_min)
            continue
        difference = paired if paired is not None else tlb_min - control_min
        latency.append(l1_ns + max(difference, -_TLB_FLOOR_SHARE * l1_ns))
    controls = [row[4] for row in curve]
    try:
        # the control chain's own curve says where its lines leave a data cache (a step there is no TLB's reach)
        inferred = infer_tlb(pages, latency, control_ns=None if None in controls else controls)
    except InferenceError as error:
        return {"note": str(error)}
    fields = asdict(inferred)
    # the curve itself, and a last-point rise that reads no level (only refinement looks there), are not stored
    del fields["pages"], fields["fitted_ns"], fields["last_point_rise_pages"]
    return fields


def _mlp_rows(connection: duckdb.DuckDBPyConnection, key: list, derived: dict[str, list[dict]]) -> list[dict]:
    curve = _rows(connection, "mlp_curve", key)
    rows = []
    for working_set in sorted({row[0] for row in curve}, key=lambda size: size or 0):
        chains = [row for row in curve if row[0] == working_set]
        inferred = infer_mlp([row[1] for row in chains], [row[2] for row in chains])
        rows.append({"working_set_bytes": working_set, **asdict(inferred)})
    return rows


def _loaded_latency_rows(connection: duckdb.DuckDBPyConnection, key: list,
                         derived: dict[str, list[dict]]) -> list[dict]:
    ladder = _rows(connection, "mlc_loaded_latency", key)
    rows = []
    for path, run_index, traffic in sorted({row[:3] for row in ladder}, key=str):
        pairs = [row[3:] for row in ladder if row[:3] == (path, run_index, traffic)]
        inferred = infer_loaded_latency([bandwidth / 1000 if bandwidth is not None else None for bandwidth, _unused in pairs],
                                        [latency for _unused, latency in pairs])
        rows.append({"source": "mlc", "path": path, "run_index": run_index, "traffic": traffic, **asdict(inferred)})
    curve = _rows(connection, "loaded_latency_curve", key)
    idle = _rows(connection, "loaded_latency_idle", key)[0][0]  # the chase with no load threads, if measured
    for traffic in sorted({row[0] for row in curve}):
        pairs = [row[1:] for row in curve if row[0] == traffic]
        inferred = infer_loaded_latency([bandwidth for bandwidth, _unused in pairs], [latency for _unused, latency in pairs],
                                        idle_ns=idle)
        rows.append({"source": "loaded_latency", "traffic": traffic, **asdict(inferred)})
    return rows


def _level_bandwidth_rows(connection: duckdb.DuckDBPyConnection, key: list,
                          derived: dict[str, list[dict]]) -> list[dict]:
    """Bandwidth of each inferred level (THP curve) per op and store of the single-thread bandwidth sweep,
    each core kind's sweep against the same kind's levels."""
    rows = []
    for kind, sweep in _by_kind(_rows(connection, "bandwidth_sweep", key)):
        inferred = [SimpleNamespace(**level) for level in derived["inferred_levels"]
                    if level.get("core_kind") == kind["core_kind"] and level.get("page_policy") == "thp"
                    and level.get("plateau_first_bytes") is not None]
        if not inferred:
            rows.append({**kind, "note": "no cache levels inferred from a THP latency sweep in this run"
                         + (f" on {kind['core_kind']}" if kind["core_kind"] else "")
                         + ": bandwidth is not assigned to levels (see the bandwidth section for the raw curve)"})
            continue
        for op, store in sorted({row[:2] for row in sweep}):
            points = [row[2:] for row in sweep if row[:2] == (op, store)]
            for level in bandwidth_per_level(inferred, [size for size, _unused in points], [gb_s for _unused, gb_s in points]):
                rows.append({**kind, "level": level.level, "op": op, "store": store,
                             "bandwidth_gb_s": level.bandwidth_gb_s, "sizes": level.sizes,
                             "note": None if level.sizes else "no sweep point on this level's plateau"})
    return rows


def _saxpy_rows(connection: duckdb.DuckDBPyConnection, key: list, derived: dict[str, list[dict]]) -> list[dict]:
    """Per core kind: slowdown over the strides, and the AMAT fit where a miss counter was counted for three
    strides or more on that kind's CPU."""
    counters = _rows(connection, "saxpy_counters", key)
    return [{**kind, **_saxpy_fit(strides, [row[1:] for row in counters if row[0] == kind["core_kind"]])}
            for kind, strides in _by_kind(_rows(connection, "saxpy_strides", key))]


def _saxpy_fit(strides: list[tuple], counters: list[tuple]) -> dict:
    """One kind's SAXPY row (strides: stride, ns, slowdown; counters: stride, event, state, per update)."""
    worst = max((row for row in strides if row[2] is not None), key=lambda row: row[2], default=None)
    row = {"strides": len(strides), "max_slowdown": worst[2] if worst else None,
           "max_slowdown_stride": worst[0] if worst else None}
    for event in _SAXPY_MISS_EVENTS:
        rates = {stride: rate for stride, name, state, rate in counters
                 if name == event and state == "counted" and rate is not None}
        if len(rates) >= 3:
            fit = amat_fit([rates.get(stride) for stride, _unused, _unused in strides], [ns for _unused, ns, _unused in strides])
            return {**row, "miss_event": event, "hit_ns": fit.hit_ns, "miss_penalty_ns": fit.miss_penalty_ns,
                    "r_squared": fit.r_squared, "note": fit.note}
    states = sorted({f"{name} {state}" for _unused, name, state, _unused in counters if name in _SAXPY_MISS_EVENTS})
    why = ("the PMU here reports " + ", ".join(states)) if states else "no perf counters were taken for saxpy"
    return {**row, "note": f"no AMAT fit: {why}; runtime per stride is still measured"}


def _workload_outputs(connection: duckdb.DuckDBPyConnection, key: list) -> dict[tuple[str, str], dict]:
    """The run's perf outputs per (experiment, workload): its perf stat and its profiles. A workload is named by
    the role or the import (params.workload), else by the output's file name."""
    workloads: dict[tuple[str, str], dict] = {}
    for experiment, path, tool, params, parsed in _rows(connection, "workload_outputs", key):
        params = json.loads(params) if isinstance(params, str) else (params or {})
        parsed = json.loads(parsed) if isinstance(parsed, str) else parsed
        name = params.get("workload") or PurePosixPath(path).stem
        entry = workloads.setdefault((experiment, str(name)), {"stat": None, "stats": 0, "profiles": [],
                                                               "failure": None, "miss_note": None})
        if params.get("status") == "failed":
            entry["failure"] = params.get("failure") or "the command failed"
        entry["miss_note"] = params.get("miss_note") or entry["miss_note"]
        if tool == "perf" and parsed is not None:
            entry["stats"] += 1
            entry["stat"] = entry["stat"] or parsed
        elif tool == "perf_report" and parsed is not None:
            for profile in parsed.get("profiles") or []:
                entry["profiles"].append({**profile, "event": profile.get("event") or params.get("event")})
    return workloads


def _classified_workloads(connection: duckdb.DuckDBPyConnection, key: list) -> list[tuple[str, str, dict, object]]:
    """(experiment, workload, its outputs, its Classification) for each workload of the run."""
    capability = _rows(connection, "perf_capability", key)
    reason = capability[0][1] if capability and capability[0][1] else None
    out = []
    for (experiment, workload), entry in sorted(_workload_outputs(connection, key).items()):
        time_profile = next((p for p in entry["profiles"] if is_time_event(p.get("event"))), None)
        miss_profile = next((p for p in entry["profiles"] if is_miss_event(p.get("event"))), None)
        out.append((experiment, workload, entry,
                    classify((entry["stat"] or {}).get("events"), time_profile, miss_profile, failed=entry["failure"],
                             tier_reason=reason, miss_profile_note=entry["miss_note"])))
    return out


def _workload_case_rows(connection: duckdb.DuckDBPyConnection, key: list,
                        derived: dict[str, list[dict]]) -> list[dict]:
    """Each workload's case (fleetscope.analyze.profiling) from its perf stat and its time and miss profiles."""
    rows = []
    for experiment, workload, entry, case in _classified_workloads(connection, key):
        noticed = list(case.noticed)
        if entry["stats"] > 1:
            noticed.append(f"{entry['stats']} perf stat outputs under this name: classified from the first")
        row = {"experiment": experiment, "workload": workload, "counter_tier": case.counter_tier,
               "case_id": case.case, "classification": case.classification, "evidence": "; ".join(case.evidence),
               "next_step": case.next_step, "undecided": case.undecided, "noticed": "; ".join(noticed) or None,
               "not_supported": ", ".join(case.not_supported) or None, "multiplexed": case.multiplexed,
               "running_percent_min": case.running_percent_min, "miss_note": case.miss_profile_note,
               **{rate: case.rates.get(rate) for rate in RATE_KEYS}}
        for prefix, check in (("time", case.time_profile), ("miss", case.miss_profile)):
            if check is not None:
                row.update({f"{prefix}_event": check.event, f"{prefix}_samples": check.samples,
                            f"{prefix}_ranked": check.ranked, f"{prefix}_verdict": check.verdict,
                            f"{prefix}_rule": check.text})
        rows.append(row)
    return rows


def _workload_function_rows(connection: duckdb.DuckDBPyConnection, key: list,
                            derived: dict[str, list[dict]]) -> list[dict]:
    """Each workload's functions, time share beside miss share (the table its case reads)."""
    return [{"experiment": experiment, "workload": workload, "function_index": index, **asdict(function)}
            for experiment, workload, _rows, case in _classified_workloads(connection, key)
            for index, function in enumerate(case.functions)]


def _clock_rows(connection: duckdb.DuckDBPyConnection, key: list, derived: dict[str, list[dict]]) -> list[dict]:
    """The turbo curve of each instruction class core_clock measured, and its offset from the integer clock
    (scalar_int) with one core and with all active."""
    curve = _rows(connection, "clock_curve", key)
    rows = []
    for name in sorted({row[0] for row in curve}):
        points = [row for row in curve if row[0] == name]
        reading = infer_turbo([row[2] for row in points], [row[3] for row in points])
        rows.append({"class": name, "vector_bits": points[0][1], **asdict(reading)})
    scalar = next((row for row in rows if row["class"] == "scalar_int"), None)
    for row in rows:
        for scope, column in (("one_core_ghz", "vs_scalar_one_core"), ("all_cores_ghz", "vs_scalar_all_cores")):
            same_cores = scalar and scalar["max_active_cores"] == row["max_active_cores"]
            row[column] = (row[scope] / scalar[scope] if scalar and row[scope] and scalar[scope]
                           and (scope == "one_core_ghz" or same_cores) else None)
    return rows


def _clock_ramp_rows(connection: duckdb.DuckDBPyConnection, key: list,
                     derived: dict[str, list[dict]]) -> list[dict]:
    """The ramp from idle to the top clock: each ramp read on its own, then the median over them."""
    readings = [infer_ramp(end_us or [], ghz or [], shares or [None] * len(ghz or []))
                for _ramp, ghz, end_us, shares in _rows(connection, "clock_ramps", key)]
    if not readings:
        return []
    times = [reading.ramp_ms for reading in readings if reading.ramp_ms is not None]
    notes = sorted({reading.note for reading in readings if reading.note})
    return [{"ramps": len(readings), "ramp_ms": statistics.median(times) if times else None,
             "max_ramp_ms": max(times) if times else None,
             "idle_ghz": _median_of(reading.idle_ghz for reading in readings),
             "top_ghz": _median_of(reading.top_ghz for reading in readings),
             "slice_ms": _median_of(reading.slice_ms for reading in readings),
             "slices_left_out": sum(reading.slices_left_out for reading in readings),
             "flat": all(reading.flat for reading in readings) if times else None,
             "note": "; ".join(notes)[:1000] or None}]


def _median_of(values) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


def _firmware_rows(connection: duckdb.DuckDBPyConnection, key: list, derived: dict[str, list[dict]]) -> list[dict]:
    """What the firmware claims (SMBIOS, HMAT, SLIT) beside what the run measured."""
    facts = connection.execute(sql("plausibility/run_facts"), key).fetchone()
    largest = connection.execute(sql("plausibility/largest_cache"), key).fetchone()[0]
    return claim_rows(connection, *key, json.loads(facts[0]) if facts and facts[0] else {}, largest)


def _flag_rows(connection: duckdb.DuckDBPyConnection, key: list, derived: dict[str, list[dict]]) -> list[dict]:
    return check_run(connection, *key, levels=derived["inferred_levels"], claims=derived["firmware_claims"])


def _inference_run_rows(connection: duckdb.DuckDBPyConnection, key: list,
                        derived: dict[str, list[dict]]) -> list[dict]:
    return [{"inference_version": INFERENCE_VERSION,
             "computed_at": datetime.now(UTC).replace(tzinfo=None).isoformat()}]


@dataclass(frozen=True)
class Derivation:
    """A derived table and what computes one run's rows of it: rows(connection, [run_id, host], derived),
    where `derived` holds the rows of the tables computed before it in DERIVATIONS."""
    table: str
    rows: Callable[[duckdb.DuckDBPyConnection, list, dict[str, list[dict]]], list[dict]]


# Every derived table, in the order they are computed: inferred_level_bandwidth reads inferred_levels' rows, flags
# reads inferred_levels' and firmware_claims', and inference_runs comes last, recording the method the others were
# computed with.
DERIVATIONS: tuple[Derivation, ...] = (
    Derivation("inferred_levels", _level_rows),
    Derivation("inferred_level_bandwidth", _level_bandwidth_rows),
    Derivation("inferred_saxpy", _saxpy_rows),
    Derivation("inferred_tlb", _tlb_rows),
    Derivation("inferred_mlp", _mlp_rows),
    Derivation("inferred_loaded_latency", _loaded_latency_rows),
    Derivation("workload_cases", _workload_case_rows),
    Derivation("workload_functions", _workload_function_rows),
    Derivation("inferred_clock", _clock_rows),
    Derivation("inferred_clock_ramp", _clock_ramp_rows),
    Derivation("firmware_claims", _firmware_rows),
    Derivation("flags", _flag_rows),
    Derivation("inference_runs", _inference_run_rows),
)
DERIVED_TABLES = tuple(derived.table for derived in DERIVATIONS)


def derive_runs(connection: duckdb.DuckDBPyConnection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], Exception]:
    """Compute the derived rows of each run of `keys` (run_id, host), none of which has derived rows yet in
    `connection`'s database (ingest's stage), and insert them: one INSERT per derived table for all the runs.
    A run whose numbers make a derivation fail gets no rows; returns each such run's error (a DuckDB error
    too: a value that does not fit), the others' rows are in."""
    computed_runs: dict[tuple[str, str], dict[str, list[dict]]] = {}
    failed: dict[tuple[str, str], Exception] = {}
    batch = BatchRows(connection, keys)  # each query asked once for all the runs (fleetscope.analyze.batch_rows)
    for key in keys:
        try:
            computed_runs[key] = _derived_rows(batch, key)
        except Exception as error:  # noqa: BLE001 - hostile but schema-valid numbers fail one run, not the batch
            failed[key] = error
    if len(keys) > 1:
        # a query asked once for the batch fails every run that asks it when one run's rows break it (DuckDB
        # out of memory on a host's repeated points): each failed run again, alone, so only that one fails
        for key in list(failed):
            try:
                computed_runs[key] = _derived_rows(BatchRows(connection, [key]), key)
            except Exception as error:  # noqa: BLE001 - as above
                failed[key] = error
                continue
            del failed[key]
    try:
        _insert_derived(connection, computed_runs)
    except duckdb.Error:  # a value that does not fit: each run alone, to tell which
        _delete_derived(connection, list(computed_runs))
        for key, computed in computed_runs.items():
            try:
                _insert_derived(connection, {key: computed})
            except duckdb.Error as error:
                _delete_derived(connection, [key])
                failed[key] = error
    return failed


def _derived_rows(batch: BatchRows, key: tuple[str, str]) -> dict[str, list[dict]]:
    computed: dict[str, list[dict]] = {}
    for derived in DERIVATIONS:
        computed[derived.table] = derived.rows(batch, list(key), computed)
    return computed


def _insert_derived(connection: duckdb.DuckDBPyConnection, computed_runs: dict[tuple[str, str], dict]) -> None:
    for derived in DERIVATIONS:
        insert_rows(connection, derived.table, ({"run_id": run_id, "host": host, **row}
                                                for (run_id, host), computed in computed_runs.items()
                                                for row in computed[derived.table]))


def _delete_derived(connection: duckdb.DuckDBPyConnection, keys: list[tuple[str, str]]) -> None:
    listed = json.dumps([{"run_id": run_id, "host": host} for run_id, host in keys])
    for table in DERIVED_TABLES:
        connection.execute(sql("derive/delete_runs").format(table=table), [listed])


def is_current(connection: duckdb.DuckDBPyConnection, run_id: str, host: str) -> bool:
    """The run's derived rows were computed by this fleetscope's method."""
    row = connection.execute(sql("derive/inference_version"), [run_id, host]).fetchone()
    return row is not None and row[0] == INFERENCE_VERSION
