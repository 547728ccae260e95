"""Compare memory hierarchies across hosts or CPU models (marimo notebook; logic in fleetscope.compare).

Run: .venv/bin/marimo edit analysis/compare_hierarchies.py      (interactive)
     .venv/bin/marimo export html analysis/compare_hierarchies.py -o compare.html -- --db warehouse/fleet.duckdb
The warehouse is --db, else $FLEETSCOPE_DB, else warehouse/fleet.duckdb.
"""

import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full")


@app.cell
def _():
    import marimo as mo

    from fleetscope import compare

    return compare, mo


@app.cell
def _(compare, mo):
    connection = compare.connect(mo.cli_args().get("db"))
    host_table = compare.hosts(connection)
    mo.md(f"# Memory hierarchies side by side\n\n{host_table.height} hosts in the warehouse, latest run of each.")
    return connection, host_table


@app.cell
def _(host_table, mo):
    group_by = mo.ui.dropdown(options={"host": "host", "CPU model": "cpu_model_name",
                                       "microarchitecture": "microarchitecture"},
                              value="host", label="group by")
    group_by
    return (group_by,)


@app.cell
def _(compare, group_by, host_table, mo):
    grouped = compare.groups(host_table, group_by.value)
    chosen_groups = mo.ui.multiselect(options=sorted(grouped), value=sorted(grouped)[:4], label="show")
    chosen_groups
    return chosen_groups, grouped


@app.cell
def _(chosen_groups, compare, connection, grouped, host_table):
    chosen_hosts = [host for group in chosen_groups.value for host in grouped[group]]
    runs = compare.latest_runs_of(host_table, chosen_hosts)
    levels = compare.level_table(connection, runs)
    curves = compare.latency_curves(connection, runs)
    return curves, levels, runs


@app.cell
def _(compare, curves, levels, mo):
    mo.vstack([mo.md("## Latency curves"), compare.latency_overlay_chart(curves, levels)]) if curves.height else mo.md(
        "## Latency curves\n\nThe chosen hosts have no latency sweep.")
    return


@app.cell
def _(levels, mo):
    mo.vstack([mo.md("## Inferred levels: latency, effective vs sysfs size, bandwidth"
                     f"\n\n{levels['bandwidth_note'][0] if levels.height else ''}"),
               mo.ui.table(levels.drop("bandwidth_note"), selection=None)])
    return


@app.cell
def _(compare, connection, mo, runs):
    loaded = compare.loaded_latency_curves(connection, runs)
    mo.vstack([mo.md("## Loaded latency"), compare.loaded_latency_chart(loaded)]) if loaded.height else mo.md(
        "## Loaded latency\n\nNo loaded-latency curve for the chosen hosts (neither the loaded_latency kernel nor MLC ran).")
    return


@app.cell
def _(compare, connection, mo, runs):
    tlb_curves = compare.tlb_curves(connection, runs)
    tlb_levels = compare.tlb_table(connection, runs)
    mo.vstack([mo.md("## TLB reach"), compare.tlb_chart(tlb_curves), mo.ui.table(tlb_levels, selection=None)]
              ) if tlb_curves.height else mo.md("## TLB reach\n\nNo TLB sweep for the chosen hosts.")
    return


@app.cell
def _(compare, connection, mo, runs):
    flags = compare.flag_table(connection, runs)
    mo.vstack([mo.md("## Plausibility flags\n\n`flagged` rows first; `not_run` says why a check could not run."),
               mo.ui.table(flags, selection=None)])
    return


if __name__ == "__main__":
    app.run()
