"""Fixtures for lab tests: one lab of three SSH hosts for the whole session, stopped whatever
happens, and a check that lab runs never touch this machine's own knobs, state file or scratch."""

from __future__ import annotations

import fcntl
import glob
import os
from contextlib import contextmanager

import pytest

from lab import Lab, LabRun, real_knobs, stop

# Developers run playbooks against this machine under this lock; reading the real knobs while
# holding it means no such run is half way through changing them.
LOCALHOST_RUN_LOCK = "/tmp/fleetscope-playbook.lock"
ROOT_STATE_FILE = "/var/lib/fleetscope/tuning-state.json"


@contextmanager
def no_localhost_run():
    """Hold LOCALHOST_RUN_LOCK, and remove the file on release so no run leaves it behind: a holder that
    finds the path gone or replaced after its flock (another holder unlinked it) locks the new file."""
    while True:
        lock = os.open(LOCALHOST_RUN_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if os.stat(LOCALHOST_RUN_LOCK).st_ino == os.fstat(lock).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(lock)
    try:
        yield
    finally:
        os.unlink(LOCALHOST_RUN_LOCK)
        os.close(lock)


def root_namespace_state() -> dict:
    with no_localhost_run():
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
