"""The preflight role's input checks on the project's real argument specs and registries: which
numbers may not be negative, which variables and tags exist, which hosts have no address."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parents[2]
ROLES = yaml.safe_load((PROJECT / "roles/preflight/defaults/main.yml").read_text())["preflight_validated_roles"]


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_plugin_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


inputs = _load(PROJECT / "plugins/filter/inputs.py")
OPTIONS = {role: yaml.safe_load((PROJECT / f"roles/{role}/meta/argument_specs.yml").read_text())
           ["argument_specs"]["main"]["options"] for role in ROLES}
SELECT_TASKS = yaml.safe_load((PROJECT / "roles/fleet/tasks/select.yml").read_text())


def test_negative_sizes_counts_and_durations_are_named():
    problems = inputs.preflight_negative_inputs(
        {"kernels_latency_sweep_max_bytes": "-4096", "fio_queue_depths": [1, -16], "kernels_samples": 5,
         "kernels_cpu": 0, "fio_size": None}, OPTIONS)
    assert problems == [
        "kernels_latency_sweep_max_bytes=-4096 is negative: sizes, counts, durations and CPU numbers are 0 or more",
        "fio_queue_depths=[1, -16] is negative: sizes, counts, durations and CPU numbers are 0 or more",
    ]


def test_a_number_whose_spec_lists_its_choices_may_be_negative():
    # perf_event_paranoid -1 is a legal choice; its spec's choices are the check
    assert inputs.preflight_negative_inputs({"tuning_perf_event_paranoid": -1}, OPTIONS) == []


def test_a_misspelt_role_variable_is_named_with_the_likely_one():
    problems = inputs.preflight_unknown_role_variables(
        ["kernels_zero_queu_enabled", "kernels_zero_queue_enabled", "fleet_profile", "ansible_host",
         "fio_sise"], OPTIONS)
    assert problems == [
        "fio_sise is not a variable of role fio (did you mean fio_size?); its variables are listed in "
        "roles/fio/defaults/main.yml",
        "kernels_zero_queu_enabled is not a variable of role kernels (did you mean kernels_zero_queue_enabled?); "
        "its variables are listed in roles/kernels/defaults/main.yml",
    ]


def test_every_role_default_is_a_known_variable():
    """A user may set anything a role documents in defaults/main.yml; none of it may be refused."""
    for role in ROLES:
        defaults = yaml.safe_load((PROJECT / f"roles/{role}/defaults/main.yml").read_text()) or {}
        assert inputs.preflight_unknown_role_variables(list(defaults), OPTIONS) == [], role


def test_tags_come_from_the_selection_tasks():
    known = inputs.preflight_experiment_tags(SELECT_TASKS)
    assert {"zero_queue", "latency", "fio", "storage", "mlc", "all", "always"} <= set(known)
    assert "quick" not in known and "__kernels_profiles" not in known
    assert inputs.preflight_unknown_tags(["latency", "zero_queu"], ["storage"], known) == [
        "--tags zero_queu: no experiment or tag of that name (did you mean zero_queue?)"]
    assert inputs.preflight_unknown_tags(["all"], ["mlc"], known) == []


def test_hosts_without_an_address():
    hostvars = {
        "localhost": {"ansible_connection": "local"},
        "named": {},
        "addressed": {"ansible_host": "10.0.0.5"},
        "empty": {"ansible_host": ""},
    }
    hosts = list(hostvars)
    assert inputs.preflight_hosts_to_resolve(hosts, hostvars) == ["named"]
    lookups = [{"item": "named", "rc": 2}]
    assert inputs.preflight_unaddressed_hosts(hosts, hostvars, lookups) == [
        "inventory host named has no address: set ansible_host for it (the name named does not resolve either)",
        "inventory host empty has an empty ansible_host: give it the host's address",
    ]
    assert inputs.preflight_unaddressed_hosts(hosts, hostvars, [{"item": "named", "rc": 0}]) == [
        "inventory host empty has an empty ansible_host: give it the host's address"]


def _tags_in(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "tags":
                yield from ([value] if isinstance(value, str) else value)
            else:
                yield from _tags_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from _tags_in(item)


def test_every_tag_the_playbooks_use_is_one_preflight_accepts():
    """A tag written in a playbook or task file but on no selection task would be refused by
    preflight's --tags check: give the experiment its task in roles/fleet/tasks/select.yml."""
    known = set(inputs.preflight_experiment_tags(SELECT_TASKS))
    files = [PROJECT / "site.yml", *PROJECT.glob("playbooks/*.yml"), *PROJECT.glob("roles/*/tasks/**/*.yml")]
    used = {tag for path in files for tag in _tags_in(yaml.safe_load(path.read_text()))}
    assert used and used <= known, sorted(used - known)
