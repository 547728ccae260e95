"""Compare hosts, microarchitectures or inventory groups, every family (marimo notebook; the logic is
fleetscope.report.notebook, the same comparison `fleetscope compare` writes as a page).

Run: .venv/bin/marimo edit analysis/compare_hierarchies.py -- --db warehouse/fleet.duckdb     (interactive)
     .venv/bin/marimo export html analysis/compare_hierarchies.py -o compare.html -- --db warehouse/fleet.duckdb
The warehouse is --db, else $FLEETSCOPE_DB, else warehouse/fleet.duckdb. An exported HTML file needs marimo's
front end from the network to show anything; offline, use `fleetscope compare` (a static page) instead.
"""

import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full")


@app.cell
def _():
    import marimo as mo

    from fleetscope.report import notebook as compare

    return compare, mo


@app.cell
def _(compare, mo):
    connection = compare.connect(mo.cli_args().get("db"))
    host_table = compare.hosts(connection)
    mo.vstack([mo.md(f"# Hosts side by side\n\n{host_table.height} hosts in the warehouse, latest run of each."),
               mo.ui.table(host_table, selection=None)])
    return connection, host_table


@app.cell
def _(compare, mo):
    group_by = mo.ui.dropdown(options=list(compare.GROUPINGS), value="microarchitecture", label="compare by")
    group_by
    return (group_by,)


@app.cell
def _(compare, group_by, host_table, mo):
    choices = compare.operands(host_table, group_by.value)
    chosen = mo.ui.multiselect(options=choices, value=list(choices)[:4], label="compare (the first is the baseline)")
    chosen
    return (chosen,)


@app.cell
def _(chosen, compare, connection, mo):
    result = compare.comparison(connection, chosen.value) if len(chosen.value) >= 2 else None
    moved = compare.moved(result) if result else []
    (mo.vstack([mo.md("## What differs significantly\n\n" + ("\n".join(f"- {line}" for line in moved) if moved else
                                                               "No level's latency differs by both 5% and the test.")),
                mo.md("## Figures side by side"), mo.ui.table(compare.figures(result), selection=None)])
     if result else mo.md("Pick two groups or more to compare."))
    return (result,)


@app.cell
def _(compare, mo, result):
    (mo.vstack([mo.vstack([mo.md(f"## {family}"), mo.hstack(family_charts, wrap=True)])
                for family, family_charts in compare.charts(result)]) if result else None)
    return


@app.cell
def _(compare, connection, mo, result):
    (mo.vstack([mo.md("## Core-to-core latency"), mo.ui.table(compare.c2c(connection, result), selection=None),
                mo.md("## SMT interference (empty where no host has SMT siblings)"),
                mo.ui.table(compare.smt(connection, result), selection=None),
                mo.md("## Plausibility checks\n\nflagged first; `not_run` says why a check could not run"),
                mo.ui.table(compare.flags(connection, result), selection=None)]) if result else None)
    return


if __name__ == "__main__":
    app.run()
