"""What the roles write into the manifest, rendered by Ansible's own templating as the play does: an experiment's
notes read as words, with no Jinja escape left in them (issue 28: SAXPY's note read `stride\\'s`, a single-quoted
Jinja string's escape that Ansible keeps), and the facts carry the DRAM peak the inventory states for a host."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder

from fleetscope import planning

ROLES = Path(__file__).resolve().parents[2] / "roles"
SAXPY_TASKS = ROLES / "kernels" / "tasks" / "experiments" / "saxpy.yml"
# The roles call the collection's filters by full name; ansible.cfg finds them through collections/ (a link naming
# this repository fleetscope.fleet), as ansible-playbook does.
COLLECTIONS = ROLES.parent / "collections"


@pytest.fixture(scope="module", autouse=True)
def collection_filters():
    _AnsibleCollectionFinder(paths=[str(COLLECTIONS)])._install()


@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("capability", ["hardware", "software", "none"])
def test_saxpys_notes_render_as_plain_words(capability, threads):
    run = next(task for task in yaml.safe_load(SAXPY_TASKS.read_text()) if task["name"].startswith("Run SAXPY"))
    # the team's note comes from the host's plan (plugins/filter/plan.py), as tasks/plan.yml makes it; full cuts nothing
    fleet_plan = planning.plan({"cpu": {"logical_cpus": 2}, "memory": {"mem_available_bytes": 8 << 30}}, "full",
                               {"kernels_saxpy_threads": threads}, selected=["saxpy"])
    templar = Templar(loader=DataLoader(), variables={
        "fleet_facts": {"perf": {"capability": capability, "reason": "perf is not installed"}, "cpu": {"logical_cpus": 2}},
        "kernels_perf_stat": True, "kernels_saxpy_perf_events": ["task-clock", "cache-misses"],
        "fleet_plan": fleet_plan, "experiment": "saxpy"})
    *team, note = templar.template(trust_as_template(run["vars"]["__kernels_notes"]))
    assert "\\" not in note
    if capability == "none":
        assert note == "no counters: perf is not installed"
    else:
        assert note == "perf counts every stride's process whole (array set-up included): task-clock, cache-misses"
    # the team's note is kept whether or not perf counts: 4 threads asked of a 2-CPU host run 2
    assert team == ([] if threads == 1 else
                    ["kernels_saxpy_threads asked for 4 threads; this host has 2 CPUs, so 2 ran (one per CPU)"])


@pytest.mark.parametrize("stated", [None, "307.2", 460.8])
def test_the_facts_carry_the_dram_peak_the_inventory_states(stated):
    take = next(task for task in yaml.safe_load((ROLES / "facts" / "tasks" / "main.yml").read_text())
                if task["name"].startswith("Take the environment snapshot"))
    templar = Templar(loader=DataLoader(), variables={"fleet_dram_peak_gbps": stated})
    params = {name: templar.template(trust_as_template(value)) for name, value in take["fleetscope_facts"].items()}
    snapshot = {"memory": {"mem_total_bytes": 1 << 30, "smbios": {"source": None, "reason": "no table"}}}
    facts = _facts_module().with_stated(json.loads(json.dumps(snapshot)), params)
    assert facts["memory"]["smbios"] == snapshot["memory"]["smbios"]  # what the host read is kept whole
    if stated is None:
        assert "dram_peak_stated_gbps" not in facts["memory"]
    else:
        assert facts["memory"]["dram_peak_stated_gbps"] == float(stated)


def _facts_module():
    spec = importlib.util.spec_from_file_location("fleetscope_facts_templates",
                                                  ROLES.parent / "plugins" / "modules" / "fleetscope_facts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
