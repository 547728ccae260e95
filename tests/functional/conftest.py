"""Fixtures for functional tests: an output directory per test, the shared quick site run, and a
guard that the machine's knobs, state file and scratch directories are as the test found them."""

from __future__ import annotations

import os

import pytest

from helpers import STATE_FILE, Outputs, knob_values, run_playbook, scratch_leftovers


@pytest.fixture
def outputs(tmp_path) -> Outputs:
    return Outputs(tmp_path)


@pytest.fixture
def knobs_unchanged():
    """Every test that runs a playbook must leave this machine's knobs as it found them."""
    before = knob_values()
    yield before
    after = knob_values()
    assert after == before, f"knobs not restored: before {before}, after {after}"
    assert not os.path.exists(STATE_FILE), f"{STATE_FILE} left behind"
    assert not scratch_leftovers(), f"scratch left behind: {scratch_leftovers()}"


@pytest.fixture(scope="session")
def site_run(tmp_path_factory):
    """One quick run of site.yml with every default experiment, shared by the test modules."""
    outputs = Outputs(tmp_path_factory.mktemp("site"))
    before = knob_values()
    proc = run_playbook("site.yml", outputs)
    return outputs, proc, before
