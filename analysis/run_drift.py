"""One host across runs: which level moved, by how much, and whether the move is significant (marimo
notebook; the logic is fleetscope.report.notebook, the same comparison as `fleetscope compare HOST@RUN HOST@RUN`).
A level moved when its latency changed by at least the threshold AND a Mann-Whitney U test on the raw samples
of its plateau says the change is not noise, as asv does.

Run: .venv/bin/marimo edit analysis/run_drift.py -- --db warehouse/fleet.duckdb
     .venv/bin/marimo export html analysis/run_drift.py -o drift.html -- --db warehouse/fleet.duckdb --host node1
An exported HTML file needs marimo's front end from the network to show anything; offline, use
`fleetscope compare HOST@RUN HOST@RUN` (a static page) instead.
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
    host_names = compare.hosts(connection)["host"].to_list()
    host = mo.ui.dropdown(options=host_names, value=mo.cli_args().get("host") or (host_names[0] if host_names else None),
                          label="host")
    host
    return connection, host


@app.cell
def _(compare, connection, host, mo):
    run_ids = compare.host_runs(connection, host.value) if host.value else []
    baseline = mo.ui.dropdown(options=run_ids, value=run_ids[0] if run_ids else None, label="baseline run")
    later = mo.ui.dropdown(options=run_ids, value=run_ids[-1] if run_ids else None, label="compared run")
    threshold = mo.ui.slider(1, 50, value=5, label="threshold (%)")
    mo.vstack([mo.md(f"# Drift of {host.value}\n\n{len(run_ids)} runs"), mo.hstack([baseline, later, threshold])])
    return baseline, later, threshold


@app.cell
def _(baseline, compare, connection, host, later, mo, threshold):
    if baseline.value and later.value and baseline.value != later.value:
        result = compare.comparison(connection, [f"{host.value}@{baseline.value}", f"{host.value}@{later.value}"],
                                    threshold=threshold.value / 100)
        moved = compare.moved(result)
        summary = ("**Moved:**\n\n" + "\n".join(f"- {line}" for line in moved)) if moved else (
            "No level moved by both the threshold and the test.")
        output = mo.vstack([mo.md(summary), mo.ui.table(compare.drift(result), selection=None),
                            mo.md("## Every figure"), mo.ui.table(compare.figures(result), selection=None),
                            *[mo.vstack([mo.md(f"## {family}"), mo.hstack(charts, wrap=True)])
                              for family, charts in compare.charts(result)]])
    else:
        output = mo.md("Pick two different runs of the host to compare.")
    output
    return


if __name__ == "__main__":
    app.run()
