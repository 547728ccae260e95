"""Fixtures for lab tests: one lab of three SSH hosts for the whole session, stopped whatever
happens, and a check that lab runs never touch this machine's own knobs, state file or scratch."""

from __future__ import annotations

import glob
import os

import pytest

from lab import Lab, LabRun, localhost_run_lock, real_knobs, stop

ROOT_STATE_FILE = "/var/lib/fleetscope/tuning-state.json"


def root_namespace_state() -> dict:
    with localhost_run_lock():
        return {"knobs": real_knobs(), "state_file": os.path.exists(ROOT_STATE_FILE),
                "scratch": sorted(glob.glob("/var/tmp/fleetscope-*"))}


@pytest.fixture(scope="session")
def lab():
    """Three lab hosts; fslab3 reports HTML/JS and SQL metacharacters in its hostname and cmdline."""
    before = root_namespace_state()
    try:
        yield Lab(hosts=3, hostile=3).start()
    finally:
        stop()
    after = root_namespace_state()
    assert after == before, f"a lab run changed this machine: before {before}, after {after}"


@pytest.fixture
def lab_run(lab, tmp_path) -> LabRun:
    return LabRun(tmp_path, lab.inventory)


@pytest.fixture
def hosts_as_found(lab):
    """The test must leave every lab host with its original knobs, no state file and no scratch."""
    yield lab
    problems = []
    for host in lab.hosts:
        if host.knobs() != host.originals:
            problems.append(f"{host.name}: knobs {host.knobs()}, originally {host.originals}")
        if host.state_file().exists():
            problems.append(f"{host.name}: state file left behind")
        if host.scratch_leftovers():
            problems.append(f"{host.name}: scratch left behind: {host.scratch_leftovers()}")
        host.reset()  # the next test starts from a clean lab whatever this one left
    assert not problems, "; ".join(problems)
