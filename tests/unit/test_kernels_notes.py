"""The notes an experiment's tasks write into the manifest, rendered by Ansible's own templating as the play does:
what the host page shows under the section reads as words, with no Jinja escape left in it (issue 28: SAXPY's note
read `stride\\'s`, a single-quoted Jinja string's escape that Ansible keeps)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

SAXPY_TASKS = Path(__file__).resolve().parents[2] / "roles" / "kernels" / "tasks" / "experiments" / "saxpy.yml"


@pytest.mark.parametrize("capability", ["hardware", "software", "none"])
def test_saxpys_notes_render_as_plain_words(capability):
    run = next(task for task in yaml.safe_load(SAXPY_TASKS.read_text()) if task["name"] == "Run SAXPY")
    templar = Templar(loader=DataLoader(), variables={
        "fleet_facts": {"perf": {"capability": capability, "reason": "perf is not installed"}},
        "kernels_perf_stat": True, "kernels_saxpy_perf_events": ["task-clock", "cache-misses"]})
    (note,) = templar.template(trust_as_template(run["vars"]["__kernels_notes"]))
    assert "\\" not in note
    if capability == "none":
        assert note == "no counters: perf is not installed"
    else:
        assert note == "perf counts every stride's process whole (array set-up included): task-clock, cache-misses"
