"""The stage a failed or lost host was in (plugins/filter/manifest.py, measure_stage), which its manifest's error
names ("stage build failed in ..."), told from how far the host got in playbooks/measure.yml: the facts it set and
the results it registered, as hostvars gives them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "plugins" / "filter"))
from manifest import measure_stage, restored_knobs  # noqa: E402  (the collection's filter, from its folder)

TUNED = {"fleet_started_at": "2026-11-29T16:00:00Z", "__tuning_applied": {"changed": True, "knobs": [], "locked": True}}
SCRATCH = {**TUNED, "fleet_scratch_dir": "/var/tmp/fleetscope-x"}
BUILT = {**SCRATCH, "__kernels_build": {"changed": True, "rc": 0}}


@pytest.mark.parametrize("host, stage", [
    ({}, "facts"),  # dropped out before the measure play began
    ({"fleet_facts": {}}, "facts"),  # the same: facts of its own are not a try to tune
    ({"__tuning_applied": {"failed": True, "msg": "in use by run ..."}}, "tune"),  # refused: no fleet_started_at
    ({"__tuning_applied": {"unreachable": True}}, "tune"),  # lost while taking the lock
    ({"__tuning_applied": {"failed": True, "locked": True, "msg": "cannot create"}}, "tune"),  # no scratch directory
    (TUNED, "tune"),  # the scratch directory was not made
    (SCRATCH, "build"),  # lost before or while building
    ({**SCRATCH, "__kernels_build": {"failed": True, "rc": 2}}, "build"),
    (BUILT, "characterize"),
])
def test_the_stage_is_read_from_how_far_the_host_got(host, stage):
    assert measure_stage(host) == stage


def test_in_check_mode_neither_the_scratch_directory_nor_the_build_is_waited_for():
    assert measure_stage(TUNED, check_mode=True) == "characterize"
    assert measure_stage({"__tuning_applied": {"failed": True}}, check_mode=True) == "tune"


def test_what_each_host_s_knobs_were_restored_to_is_one_line_a_host_said_once():
    """The measure play's last word on the knobs (filter restored_knobs): each available knob's value read back
    after restore; a host restore never ran on (refused in tune: only apply's record, nothing read back) or one with
    no record says nothing."""
    restored = [{"name": "thp_enabled", "available": True, "after": "madvise"},
                {"name": "cpufreq_governor", "available": False, "after": None},
                {"name": "nr_hugepages", "available": True, "after": "0"}]
    hostvars = {"a": {"fleet_knobs": restored},
                "b": {"fleet_knobs": [{"name": "thp_enabled", "available": True, "after": None}]},
                "c": {}}
    assert restored_knobs(["a", "b", "c"], hostvars) == ["a: thp_enabled=madvise, nr_hugepages=0"]
