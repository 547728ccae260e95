"""Runs against hosts whose lock they cannot take. A first run holds fslab1 (its kernel waits, so it
holds the host for as long as the test needs), and fslab2's state file is truncated. Meanwhile a
second run of site.yml over both is refused in tune on each, changing nothing: on fslab1 naming the
first run and its ansible-playbook process, on fslab2 naming the file and the recovery, never a
JSONDecodeError. playbooks/restore.yml says the same and leaves the first run's knobs and scratch
directory alone. The first run then finishes and restores fslab1 itself."""

from __future__ import annotations

import json

import pytest

from lab import QUICK_APPLIED, LabRun, wait_for

pytestmark = pytest.mark.lab

TRUNCATED_STATE = '{"run_id": "20261122T010000Z-0ddba1", "knobs": {"thp_enabled": {"name": "thp_ena'
STATE_FILE = "/var/lib/fleetscope/tuning-state.json"


def flat(text: str) -> str:
    """Ansible's output with its line wrapping undone."""
    return " ".join(text.split())


def test_runs_are_refused_on_a_host_another_run_holds_or_whose_state_file_is_truncated(
        lab, lab_run, hosts_as_found, tmp_path):
    held, broken = lab["fslab1"], lab["fslab2"]
    held.hang_kernel("zero_queue")
    first = lab_run.start("site.yml", "--tags", "zero_queue", "--limit", "fslab1,localhost")
    try:
        wait_for(held.kernels_running, first, what="the first run's kernel on fslab1")
        lock = json.loads(held.state_file().read_text())
        scratch = held.scratch_leftovers()
        assert lock["owner"]["pid"] == first.pid and len(scratch) == 1
        broken.state_file().write_text(TRUNCATED_STATE)

        other = LabRun(tmp_path / "second", lab.inventory)
        # another experiment than the one held waiting, so that a second run let through would end
        second = other.run("site.yml", "--tags", "c2c", "--limit", "fslab1,fslab2,localhost")
        restore = other.run("playbooks/restore.yml", "--limit", "fslab1,fslab2")
        assert json.loads(held.state_file().read_text()) == lock, "the first run's lock is untouched"
        assert held.knobs()["thp_enabled"] == QUICK_APPLIED["thp_enabled"] and held.scratch_leftovers() == scratch
        assert broken.state_file().read_text() == TRUNCATED_STATE and broken.knobs() == broken.originals
    finally:
        held.hang_kernel(None)
        broken.state_file().unlink(missing_ok=True)
    output, _ = first.communicate(timeout=300)
    lab_run.keep_log("site-first", output)

    holder = (f"fslab1 is in use by run {lock['run_id']} (ansible-playbook pid {first.pid} on controller "
              f"{lock['owner']['controller']}, since {lock['locked_at']})")
    truncated = f"{STATE_FILE} is not complete JSON (Unterminated string starting at: line 1 column 73"
    assert second.returncode != 0 and restore.returncode != 0
    refused = other.manifests()
    assert refused["fslab1"]["status"] == refused["fslab2"]["status"] == "failed"
    assert refused["fslab1"]["run_id"] != lock["run_id"]
    assert holder in refused["fslab1"]["error"] and "still running: wait for it to finish" in refused["fslab1"]["error"]
    assert truncated in refused["fslab2"]["error"] and f"then delete {STATE_FILE}" in refused["fslab2"]["error"]
    assert all(refused[host]["error"].startswith("stage tune failed in ") for host in ("fslab1", "fslab2"))
    for proc in (second, restore):
        said = flat(proc.stdout + proc.stderr)
        assert holder in said and truncated in said and "JSONDecodeError" not in said
    assert "leaves the knobs and the scratch directory of a running run alone" in flat(restore.stdout + restore.stderr)

    assert first.returncode == 0, output[-4000:]
    knobs = {k["name"]: k for k in lab_run.manifests()["fslab1"]["knobs"] if k["name"] in held.originals}
    assert {name: k["before"] for name, k in knobs.items()} == held.originals
    assert {name: k["after"] for name, k in knobs.items()} == held.originals
    # hosts_as_found: every host's own knobs, no state file (the lock released), no scratch left
