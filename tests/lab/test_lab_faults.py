"""Runs that lose a host or are interrupted:
  * one host's sshd is killed while its kernels run: the others finish and are ingested, the
    dropped host is recorded as failed with the reason, and a rerun with --limit completes it
    without duplicating anything;
  * SIGINT to ansible-playbook during the kernel stage: playbooks/restore.yml puts every host's
    knobs back from its state file and removes the scratch directories."""

from __future__ import annotations

import signal

import duckdb
import pytest

from lab import QUICK_APPLIED, wait_for

pytestmark = pytest.mark.lab

TUNED_THP = QUICK_APPLIED["thp_enabled"]


def test_a_host_that_drops_out_is_recorded_and_a_limited_rerun_completes_it(lab, lab_run, hosts_as_found):
    dropped = lab["fslab2"]
    proc = lab_run.start("site.yml", "--tags", "zero_queue")
    wait_for(dropped.kernels_running, proc, what="a kernel running on fslab2")
    assert dropped.kill_sshd(), "no sshd process to kill on fslab2"
    output, _ = proc.communicate(timeout=300)
    lab_run.keep_log("site-dropped", output)
    dropped.start_sshd()  # the host comes back after the run

    assert proc.returncode != 0, output[-3000:]
    assert "fslab2" in output and "UNREACHABLE" in output
    run_id = next(iter(lab_run.manifests().values()))["run_id"]
    with duckdb.connect(str(lab_run.warehouse), read_only=True) as db:
        runs = dict(db.execute("select host, status from runs").fetchall())
        dropped_error = db.execute("select error from runs where host = 'fslab2'").fetchone()
    assert runs["fslab1"] == runs["fslab3"] == "complete"
    assert runs.get("fslab2") in ("failed", "partial"), "the dropped host's run is not in the warehouse"
    assert "unreachable" in dropped_error[0].lower()
    # it dropped out before restoring: its state file still holds the originals
    assert dropped.state_file().exists() and dropped.knobs()["thp_enabled"] == TUNED_THP

    rerun = lab_run.run("site.yml", "--tags", "zero_queue", "--limit", "fslab2,localhost",
                        "-e", f"fleet_run_id={run_id}")
    assert rerun.returncode == 0, rerun.stdout[-4000:]
    with duckdb.connect(str(lab_run.warehouse), read_only=True) as db:
        assert db.execute("select host, status from runs where run_id = ? order by host", [run_id]).fetchall() == [
            ("fslab1", "complete"), ("fslab2", "complete"), ("fslab3", "complete")]
        assert db.execute("select count(*) from runs").fetchone()[0] == 3
        assert db.execute("select count(*) from hosts").fetchone()[0] == 3
        points = dict(db.execute("select host, count(*) from points group by host").fetchall())
        duplicated = db.execute("select host, experiment, params::varchar, count(*) from points "
                                "group by all having count(*) > 1").fetchall()
    assert points["fslab2"] == points["fslab1"] == points["fslab3"], points
    assert duplicated == []


def test_an_interrupted_run_is_put_back_by_the_restore_playbook(lab, lab_run, hosts_as_found):
    proc = lab_run.start("site.yml", "--tags", "zero_queue")
    wait_for(lambda: any(host.kernels_running() for host in lab.hosts), proc, what="the kernel stage")
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=120)
    lab_run.keep_log("site-interrupted", output)
    assert proc.returncode != 0, output[-3000:]

    for host in lab.hosts:
        assert host.state_file().exists(), f"{host.name}: the interruption came after restore"
        assert host.knobs()["thp_enabled"] == TUNED_THP, host.name
        assert host.scratch_leftovers(), host.name
    restored = lab_run.run("playbooks/restore.yml")
    assert restored.returncode == 0, restored.stdout[-4000:]
    # hosts_as_found checks every host's knobs against its own originals, state files and scratch
