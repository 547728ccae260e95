"""What the firmware claims about a host's memory, beside what the run measured: the DIMMs' theoretical peak from
SMBIOS (speed x width x channels; or the peak the inventory states), the ACPI HMAT's latency and bandwidth per
memory node for its nearest initiators, and the SLIT's relative distances between nodes. No peer makes this
comparison: a firmware table that is wrong (zeros, a copied template, a peak of channels the board does not
populate) misleads every tool that trusts it, and a measurement that beats a claim is wrong itself.

`claim_rows` gives the rows of the derived table firmware_claims (one per figure, with the claim, the measurement
and a verdict, or why there is nothing to compare); the plausibility rule firmware_claims_disagree flags the
large disagreements. Claims are read from the run's facts (roles/facts: memory.smbios, memory.dram_peak_stated_gbps,
numa.hmat, numa.distances).
"""

from __future__ import annotations

import math
import re

import duckdb

from fleetscope.resources import sql

# A latency the firmware claims and the one measured further apart than this factor (either way) disagree: a
# dependent chase adds the TLB's share to the memory's own latency, so agreement is loose, but a factor of two
# is a table that describes another machine or a placeholder.
LATENCY_FACTOR = 2.0
# A bandwidth measured above the claim by more than this share disagrees (no measurement beats the hardware);
# one below it does not: a run may not drive every channel.
BANDWIDTH_EXCESS = 0.05
DRAM_SIZED_FACTOR = 2   # a working set at least this many times the largest cache is DRAM-sized (as plausibility's)

AGREES, DISAGREES, NOT_COMPARED = "agrees", "disagrees", "not compared"


def _row(figure: str, source: str, unit: str, claimed: float | None, measured: float | None, measured_by: str | None,
         verdict: str, note: str | None = None) -> dict:
    ratio = measured / claimed if claimed and measured is not None else None
    return {"figure": figure, "source": source, "unit": unit, "claimed": claimed, "measured": measured,
            "measured_by": measured_by, "ratio": ratio, "verdict": verdict, "note": note}


def _latency_verdict(claimed: float, measured: float) -> str:
    return DISAGREES if abs(math.log(measured / claimed)) > math.log(LATENCY_FACTOR) else AGREES


def _bandwidth_verdict(claimed: float, measured: float) -> str:
    return DISAGREES if measured > claimed * (1 + BANDWIDTH_EXCESS) else AGREES


def _query(connection: duckdb.DuckDBPyConnection, name: str, key: list, *more) -> list[tuple]:
    return connection.execute(sql(f"firmware/{name}"), [*key, *more]).fetchall()


def _dram_peak_rows(connection, key: list, facts: dict, largest_cache: int | None) -> list[dict]:
    """The DIMMs' peak (SMBIOS) and the inventory's stated peak against the largest DRAM-sized bandwidth measured."""
    memory = facts.get("memory") or {}
    smbios = memory.get("smbios") or {}
    measured = (_query(connection, "dram_bandwidth", key, DRAM_SIZED_FACTOR * largest_cache)
                if largest_cache else [])
    value, by = measured[0] if measured else (None, None)
    rows = []
    claims = []
    if memory.get("dram_peak_stated_gbps"):
        claims.append(("DRAM peak, stated for the host", "inventory: fleet_dram_peak_gbps",
                       memory["dram_peak_stated_gbps"], None))
    if smbios.get("peak_gbps"):
        speeds = sorted({dimm.get("configured_speed_mts") or dimm.get("speed_mts") for dimm in smbios.get("dimms", [])
                         if dimm.get("configured_speed_mts") or dimm.get("speed_mts")})
        claims.append((f"DRAM peak: {smbios.get('populated')} DIMMs at {'/'.join(map(str, speeds))} MT/s on "
                       f"{smbios.get('channels')} channels", f"SMBIOS ({smbios.get('source')})", smbios["peak_gbps"],
                       f"channels: {smbios.get('channels_from')}"))
    elif not memory.get("dram_peak_stated_gbps"):
        why = smbios.get("reason") or smbios.get("peak_note") or "no SMBIOS memory devices in the facts (an older bundle)"
        rows.append(_row("DRAM peak (DIMM speed x channels)", "SMBIOS", "GB/s", None, value, by, NOT_COMPARED,
                         f"not stated: {why}; set fleet_dram_peak_gbps for the host to compare"))
    for figure, source, claimed, note in claims:
        if value is None:
            rows.append(_row(figure, source, "GB/s", claimed, None, None, NOT_COMPARED,
                             "no DRAM-sized bandwidth measured in this run"
                             + ("" if largest_cache else " (sysfs reported no cache sizes)")))
        else:
            rows.append(_row(figure, source, "GB/s", claimed, value, by, _bandwidth_verdict(claimed, value), note))
    return rows


def _hmat_rows(connection, key: list, facts: dict, one_node: bool) -> list[dict]:
    """HMAT's read latency and bandwidth per memory node, for its nearest initiator, against the NUMA matrix's
    cell from that initiator (or, on a one-node host, the idle DRAM latency and the largest DRAM bandwidth)."""
    hmat = (facts.get("numa") or {}).get("hmat") or {}
    nodes = [node for node in hmat.get("nodes", []) if node.get("read_latency_ns") or node.get("read_bandwidth_mb_s")]
    if not nodes:
        return [_row("memory latency and bandwidth per node", "ACPI HMAT", "ns", None, None, None, NOT_COMPARED,
                     f"not stated: {hmat.get('reason') or 'no HMAT figures in the facts (an older bundle)'}")]
    latency = {(cpu, mem): ns for cpu, mem, ns, _ratio in _query(connection, "numa_latency", key)}
    bandwidth = {(cpu, mem): gb_s for cpu, mem, gb_s, _ratio in _query(connection, "numa_bandwidth", key)}
    idle = _query(connection, "idle_dram_latency", key)[0][0]
    rows = []
    for node in nodes:
        initiator = (node.get("initiators") or [node["node"]])[0]
        where = f"node {node['node']} from node {initiator}"
        if node.get("read_latency_ns"):
            measured, by = latency.get((initiator, node["node"])), "numa_matrix chase"
            if measured is None and one_node:
                measured, by = idle, "zero_queue DRAM chase"
            rows.append(_row(f"read latency, {where}", "ACPI HMAT", "ns", node["read_latency_ns"], measured,
                             by if measured is not None else None,
                             _latency_verdict(node["read_latency_ns"], measured) if measured else NOT_COMPARED,
                             None if measured else "the run measured no DRAM latency from that node"))
        if node.get("read_bandwidth_mb_s"):
            claimed = node["read_bandwidth_mb_s"] / 1000
            measured, by = bandwidth.get((initiator, node["node"])), "numa_matrix read bandwidth"
            rows.append(_row(f"read bandwidth, {where}", "ACPI HMAT", "GB/s", claimed, measured,
                             by if measured is not None else None,
                             _bandwidth_verdict(claimed, measured) if measured else NOT_COMPARED,
                             None if measured else "the run measured no bandwidth from that node to it "
                             "(numa_matrix)"))
    return rows


def _slit_rows(connection, key: list, facts: dict) -> list[dict]:
    """The SLIT's relative distance of each remote (CPU node, memory node) pair (distance / local distance)
    against the NUMA matrix's latency ratio to local."""
    distances = (facts.get("numa") or {}).get("distances") or {}
    table = {int(name[4:]): row for name, row in distances.items() if re.fullmatch(r"node\d+", name)}
    if len(table) < 2:
        one = len(table) == 1 or (facts.get("numa") or {}).get("nodes") == 1
        return [_row("relative distance between nodes", "ACPI SLIT", "x local", None, None, None, NOT_COMPARED,
                     "one NUMA node: no distance to compare" if one else "no NUMA distances in the facts")]
    measured = {(cpu, mem): ratio for cpu, mem, _ns, ratio in _query(connection, "numa_latency", key)}
    rows = []
    for cpu, row in sorted(table.items()):
        for mem, distance in enumerate(row):
            if mem == cpu or cpu >= len(row) or not row[cpu] or not distance:
                continue
            claimed = distance / row[cpu]
            ratio = measured.get((cpu, mem))
            rows.append(_row(f"latency node {cpu} to node {mem}, x local", "ACPI SLIT", "x local", claimed, ratio,
                             "numa_matrix chase ratio to local" if ratio is not None else None,
                             _latency_verdict(claimed, ratio) if ratio else NOT_COMPARED,
                             None if ratio else "the run measured no NUMA latency matrix"))
    return rows


def claim_rows(connection: duckdb.DuckDBPyConnection, run_id: str, host: str, facts: dict,
               largest_cache: int | None) -> list[dict]:
    """Every firmware claim of one run beside what it measured: the rows of the derived table firmware_claims."""
    key = [run_id, host]
    distances = (facts.get("numa") or {}).get("distances") or {}
    return [*_dram_peak_rows(connection, key, facts, largest_cache),
            *_hmat_rows(connection, key, facts, one_node=len(distances) <= 1),
            *_slit_rows(connection, key, facts)]
