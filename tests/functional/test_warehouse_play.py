"""The warehouse and report plays with a refused bundle (issue 14, finding 5): the real
ansible-playbook loads every other bundle, writes every page, and only then fails the run, naming the
refused bundle of this run; a bundle of an older run still refused in results/ is listed without
failing it. Each host's inventory groups are the inventory's, whatever its manifest claims (issue 27)."""

from __future__ import annotations

import os
import subprocess

import duckdb
import pytest

from helpers import BIN, PROJECT, Outputs

pytestmark = pytest.mark.functional
OLDER_RUN = "20261101T000000Z-0ld0ff"


def run_plays(outputs: Outputs, run_id: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", ANSIBLE_NOCOLOR="1")
    return subprocess.run([str(BIN / "ansible-playbook"), "playbooks/warehouse.yml", "playbooks/report.yml",
                           *outputs.extra_vars(), "-e", f"fleet_run_id={run_id}"],
                          cwd=PROJECT, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_a_refused_bundle_is_reported_after_the_pages_and_fails_only_its_run(tmp_path, bundle_tools):
    builder, _ = bundle_tools
    outputs = Outputs(tmp_path)
    outputs.results.mkdir()
    bundles = builder(outputs.results)
    run_id = bundles.run_id
    # each claims a group; the warehouse records the inventory's (localhost: ungrouped; node1: none)
    bundles.write(bundles.manifest(host="node1", inventory_groups=["admins"]))
    bundles.write(bundles.manifest(host="localhost", inventory_groups=["admins"]))
    refused = bundles.write(bundles.manifest(host="node2", started_at="yesterday"))
    older = bundles.write(bundles.manifest(run_id=OLDER_RUN, host="node3", profile="turbo"))

    proc = run_plays(outputs, run_id)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0, log
    assert "Fail the run when bundles of this run were refused" in log
    failure = log[log.index("Fail the run when bundles of this run were refused"):]
    assert f"1 bundle(s) of run {run_id} were refused" in failure and f"{refused}: " in failure
    assert "at $.started_at" in failure and str(older) not in failure
    assert "failed=1" in log
    # everything else happened before the failure: loaded, reported, refusals listed
    assert {"index.html", "node1.html"} <= {path.name for path in outputs.reports.iterdir()}
    with duckdb.connect(str(outputs.warehouse), read_only=True) as connection:
        assert connection.execute("SELECT host, inventory_groups FROM runs ORDER BY host").fetchall() == [
            ("localhost", ["ungrouped"]), ("node1", None)], "groups from the inventory, never the manifest's"
        assert sorted(connection.execute("SELECT host FROM refused_bundles").fetchall()) == [("node2",), ("node3",)]

    (refused / "manifest.json").write_text((refused / "manifest.json").read_text().replace(
        '"started_at": "yesterday"', '"started_at": "2026-11-22T03:45:00Z"'))
    again = run_plays(outputs, run_id)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "REFUSED" in again.stdout and str(older) in again.stdout  # still listed, but of another run
