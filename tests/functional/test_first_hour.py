"""The traps of a newcomer's first hour, with the real ansible-playbook (none of these runs changes a knob or
reaches a host: they stop in preflight, or only load bundles on the controller):

  * a wrong -i (a path that does not exist) stops in preflight, naming the path and the fix, and nothing after
    it runs (before, the warehouse and report plays ran on Ansible's implicit localhost and the run ended "ok");
  * --limit without localhost warns, with the fix, that the warehouse and report plays will not run;
  * a profile typo fails in one line, without the argument spec dump;
  * the warehouse play reports "changed" only when it loaded a bundle.
"""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import PROJECT, run_playbook

pytestmark = pytest.mark.functional


def recap(proc) -> dict[str, dict[str, int]]:
    return {host: {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", counts)}
            for host, counts in re.findall(r"^(\S+)\s+: (ok=.*)$", proc.stdout, re.M)}


def test_an_inventory_that_does_not_exist_stops_the_run_in_preflight(outputs, knobs_unchanged):
    missing = outputs.root / "inventory" / "lab.yml"
    proc = run_playbook("site.yml", outputs, "-i", str(missing))
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert f"The inventory names no host to measure (-i {missing})" in proc.stdout
    assert "use inventory/localhost.yml" in proc.stdout
    assert "Warehouse" not in proc.stdout and "Report" not in proc.stdout  # nothing ran after preflight
    assert recap(proc) == {"localhost": {"ok": 1, "changed": 0, "unreachable": 0, "failed": 1, "skipped": 0,
                                         "rescued": 0, "ignored": 0}}
    assert not outputs.warehouse.exists() and not outputs.reports.exists()


def test_a_limit_that_leaves_out_the_controller_warns_with_the_fix(outputs, knobs_unchanged):
    # The example lab inventory's hosts do not exist: preflight warns first, then its price play takes a first
    # snapshot of each host and ends on them as unreachable (exit 4), never as a failure of its own checks.
    def checked(proc):
        assert proc.returncode == 0 or (proc.returncode == 4 and "UNREACHABLE!" in proc.stdout
                                        and "failed=0" in proc.stdout), proc.stdout[-3000:]
        return " ".join(proc.stdout.split())

    text = checked(run_playbook("playbooks/preflight.yml", outputs, "-i", "inventory/lab.example.yml",
                                "--limit", "zen3-01"))
    assert "WARNING: --limit zen3-01 leaves out localhost, so the warehouse and report plays will not run" in text
    assert '(--limit "zen3-01,localhost")' in text and "fleetscope ingest" in text
    kept = checked(run_playbook("playbooks/preflight.yml", outputs, "-i", "inventory/lab.example.yml",
                                "--limit", "zen3-01,localhost"))
    assert "leaves out localhost" not in kept
    grouped = checked(run_playbook("playbooks/preflight.yml", outputs, "-i", "inventory/lab.example.yml",
                                   "--limit", "zen3*:&zen3"))  # a pattern, as Ansible reads it
    assert "WARNING: --limit zen3*:&zen3 leaves out localhost" in grouped


def test_a_profile_typo_fails_in_one_line(outputs, knobs_unchanged):
    proc = run_playbook("playbooks/preflight.yml", outputs, "-e", "fleet_profile=quik")
    assert proc.returncode != 0
    assert "value of fleet_profile must be one of: quick, standard, full, got: quik" in proc.stdout
    assert "argument_spec_data" not in proc.stdout and "description:" not in proc.stdout
    assert len(proc.stdout.splitlines()) < 50, proc.stdout
    proc = run_playbook("playbooks/preflight.yml", outputs, "-e", "fio_size=lots")  # a role's input: the same
    assert proc.returncode != 0 and "argument_spec_data" not in proc.stdout
    assert "fio_size" in proc.stdout


def test_the_warehouse_play_is_changed_only_when_it_loaded_a_bundle(outputs, knobs_unchanged):
    bundle = next((PROJECT / "tests" / "fixtures" / "default_run" / "results").glob("*/*"))
    shutil.copytree(bundle, outputs.results / bundle.parent.name / bundle.name)
    first = run_playbook("playbooks/warehouse.yml", outputs)
    assert first.returncode == 0, first.stdout[-3000:]
    assert recap(first)["localhost"]["changed"] == 1 and "loaded     " in first.stdout
    again = run_playbook("playbooks/warehouse.yml", outputs)
    assert again.returncode == 0 and "unchanged  " in again.stdout
    assert recap(again)["localhost"]["changed"] == 0
