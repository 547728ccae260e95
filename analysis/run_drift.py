"""One host across runs: which level moved, by how much, and whether the move is significant (marimo
notebook; logic in fleetscope.compare). A level moved when its latency changed by at least the threshold
AND a Mann-Whitney U test on the raw samples of its plateau says the change is not noise, as asv does.

Run: .venv/bin/marimo edit analysis/run_drift.py
     .venv/bin/marimo export html analysis/run_drift.py -o drift.html -- --db warehouse/fleet.duckdb --host node1
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
    host_names = compare.hosts(connection)["host"].to_list()
    host = mo.ui.dropdown(options=host_names, value=mo.cli_args().get("host") or (host_names[0] if host_names else None),
                          label="host")
    host
    return connection, host


@app.cell
def _(compare, connection, host, mo):
    runs = compare.host_runs(connection, host.value) if host.value else None
    run_ids = runs["run_id"].to_list() if runs is not None else []
    baseline = mo.ui.dropdown(options=run_ids, value=run_ids[0] if run_ids else None, label="baseline run")
    later = mo.ui.dropdown(options=run_ids, value=run_ids[-1] if run_ids else None, label="compared run")
    threshold = mo.ui.slider(1, 50, value=round(compare.DRIFT_THRESHOLD * 100), label="threshold (%)")
    mo.vstack([mo.md(f"# Drift of {host.value}\n\n{len(run_ids)} runs"), mo.hstack([baseline, later, threshold])])
    return baseline, later, threshold


@app.cell
def _(baseline, compare, connection, host, later, mo, threshold):
    if baseline.value and later.value and baseline.value != later.value:
        drift = compare.level_drift(connection, host.value, baseline.value, later.value,
                                    threshold=threshold.value / 100)
        moved = compare.describe_drift(drift)
        summary = ("**Moved:**\n\n" + "\n".join(f"- {line}" for line in moved)) if moved else (
            "No level moved by both the threshold and the test.")
        output = mo.vstack([mo.md(summary), mo.ui.table(drift, selection=None)])
    else:
        output = mo.md("Pick two different runs of the host to compare.")
    output
    return


@app.cell
def _(baseline, compare, connection, host, later, mo):
    pair = [(host.value, run) for run in dict.fromkeys([baseline.value, later.value]) if run]
    curves = compare.latency_curves(connection, pair)
    (mo.vstack([mo.md("## Latency curves of the two runs"),
                compare.latency_overlay_chart(curves.with_columns(host=curves["run_id"]))])
     if curves.height else mo.md("No latency sweep in these runs."))
    return


if __name__ == "__main__":
    app.run()
