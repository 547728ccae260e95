"""`fleetscope plan`: the plan and price of a host that is not at hand, from its facts (a manifest's, or a
JSON file of the facts module's output) or from a copy of its sysfs tree, with the roles' defaults.

The plan itself is the collection's filter plugins/filter/plan.py, the very code the kernels role runs
before measuring (tasks/plan.yml): this module only gathers what the role would pass it (the profile's
row of roles/kernels/vars/main.yml, every kernels_* default of roles/kernels/defaults/main.yml rendered for
that profile, the fio role's jobs and times) and loads the filter by path, so plan and run cannot drift.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import os
from functools import cache
from pathlib import Path

import yaml
from jinja2 import ChainableUndefined
from jinja2.nativetypes import NativeEnvironment

from fleetscope import catalog
from fleetscope.errors import UserError
from fleetscope.resources import COLLECTION_DIR

PLAN_FILTER = COLLECTION_DIR / "plugins" / "filter" / "plan.py"
STORAGE_FILTER = COLLECTION_DIR / "plugins" / "filter" / "storage.py"
MLC_FILTER = COLLECTION_DIR / "plugins" / "filter" / "mlc.py"
FACTS_MODULE = COLLECTION_DIR / "plugins" / "modules" / "fleetscope_facts.py"
ROLES_DIR = COLLECTION_DIR / "roles"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def plan_module():
    return _load("fleetscope_plan_filter", PLAN_FILTER)


def _yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def _render(value, context: dict):
    """A role default as Ansible would template it (native types), for the defaults the roles ship: they
    name only the profile table and each other."""
    if isinstance(value, str) and "{{" in value:
        return NativeEnvironment(undefined=ChainableUndefined).from_string(value).render(**context)
    return value


def role_variables(role: str, prefix: str, profile: str, overrides: dict | None = None,
                   facts: dict | None = None) -> tuple[dict, dict]:
    """(the role's `prefix`* defaults rendered for `profile` with `overrides` on top, the role's vars); a default
    that reads the host's facts (mlc_hugepages) reads `facts`."""
    defaults = _yaml(ROLES_DIR / role / "defaults" / "main.yml")
    internal = _yaml(ROLES_DIR / role / "vars" / "main.yml")
    tables = {key: value for key, value in internal.items() if key.endswith("_profiles")}
    context = {"fleet_profile": profile, "fleet_facts": facts or {}, **tables}
    for key, value in internal.items():
        if key.endswith("_profile") and key[:-len("_profile")] + "_profiles" in tables:
            context[key] = tables[key[:-len("_profile")] + "_profiles"][profile]
    variables = {}
    for name, value in defaults.items():
        if name.startswith(prefix):
            variables[name] = _render(value, context)
    variables.update(overrides or {})
    return variables, context


def settings(profile: str, facts: dict, overrides: dict | None = None, selected: list[str] | None = None) -> dict:
    """What tasks/plan.yml passes host_plan, from the roles' defaults (overrides: -e style variables)."""
    overrides = overrides or {}
    kernels, context = role_variables("kernels", "kernels_", profile, overrides)
    table = context["__kernels_profile"]
    enabled = [entry.name for entry in catalog.EXPERIMENTS
               if entry.role == "kernels" and kernels.get(f"kernels_{entry.name}_enabled", True)]
    names = enabled if selected is None else [name for name in enabled if name in selected]
    fio, _context = role_variables("fio", "fio_", profile, overrides)
    storage = None
    if fio.get("fio_enabled", True) and (selected is None or "fio" in selected):
        jobs = _load("fleetscope_storage_filter", STORAGE_FILTER).fio_plan(
            fio["fio_patterns"], fio["fio_queue_depths"], fio["fio_random_block_size"], fio["fio_seq_block_size"],
            fio["fio_seq_iodepth"], fio["fio_rwmixread"])
        storage = plan_module().fio_price(jobs, fio["fio_runtime_s"], fio["fio_ramp_s"], fio["fio_size"])
    priced = [_mlc_price(profile, facts, overrides, selected), _workloads_price(profile, facts, overrides, selected)]
    tuning = _yaml(ROLES_DIR / "tuning" / "vars" / "main.yml").get("__tuning_profiles", {}).get(profile, {})
    hugetlb = overrides.get("tuning_nr_hugepages", tuning.get("nr_hugepages"))
    return {"profile": profile, "table": table, "variables": kernels, "selected": names, "enabled": enabled,
            "paths": {"bin": "fleetscope-kernels", "bundle": "<bundle>", "aio_directory": "<scratch>/aio"},
            "hugetlb_pages": None if hugetlb is None else int(hugetlb), "storage": storage, "priced": priced}


def _mlc_price(profile: str, facts: dict, overrides: dict, selected: list[str] | None) -> dict:
    """Intel MLC's record as the mlc role's __mlc_price prices it: a skip saying why unless -e mlc_path names it."""
    mlc, context = role_variables("mlc", "mlc_", profile, overrides, facts)
    if not mlc.get("mlc_enabled", True) or (selected is not None and "mlc" not in selected):
        return {}
    supplied = bool(str(mlc.get("mlc_path") or "").strip())
    modes = context["__mlc_profiles"][profile]["modes"]
    plan = _load("fleetscope_mlc_filter", MLC_FILTER).mlc_plan(
        mlc.get("mlc_modes") or modes, facts.get("caches"), mlc["mlc_duration_s"], mlc.get("mlc_cpu", 0),
        mlc.get("mlc_dram_buffer_bytes"), profile, modes) if supplied else {}
    return plan_module().mlc_price(plan, mlc["mlc_duration_s"], (facts.get("numa") or {}).get("nodes") or 1, supplied,
                                   (facts.get("cpu") or {}).get("architecture") or "x86_64")


def _workloads_price(profile: str, facts: dict, overrides: dict, selected: list[str] | None) -> dict:
    """The workloads' record as the workloads role's __workloads_price prices it: the reference workload at the
    profile's size, then -e fleet_workloads (the fleet role's default: none)."""
    variables, context = role_variables("workloads", "workloads_", profile, overrides)
    if not variables.get("workloads_enabled", True) or (selected is not None and "workloads" not in selected):
        return {}
    table = context["__workloads_profile"]
    live = variables.get("workloads_reference_live_bytes") or table["reference_live_bytes"]
    reference = {"name": "reference_alloc_walk", "command": ["alloc_walk", "--live-bytes", str(live)],
                 "timeout_s": table["reference_timeout_s"], "reference": True}
    workloads = ([reference] if variables.get("workloads_reference", True) else []) \
        + list(overrides.get("fleet_workloads") or [])
    return plan_module().workloads_price(workloads, variables["workloads_repeats"], variables["workloads_timeout_s"],
                                         facts.get("perf") or {}, variables.get("workloads_perf_record", True))


def select(tags: list[str]) -> list[str]:
    """The catalogue's experiments that `--tags` selects, as `ansible-playbook --tags` would: a family's tag
    selects every experiment of it, an experiment's own tag (or its name) that experiment alone. An unknown
    tag is refused with the catalogue's tags beside it."""
    known = {tag for entry in catalog.EXPERIMENTS for tag in (*entry.tags, entry.name)}
    unknown = [tag for tag in tags if tag not in known]
    if unknown:
        hints = [f"{tag!r} (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(tag, known, 1))
                 else repr(tag) for tag in unknown]
        raise UserError(f"--tags: no experiment or family is tagged {', '.join(hints)}; the tags are "
                        f"{', '.join(sorted(known))} (fleetscope/catalog.py)")
    wanted = set(tags)
    return [entry.name for entry in catalog.EXPERIMENTS if wanted & {*entry.tags, entry.name}]


def facts_from_file(path: Path) -> dict:
    """The facts in a JSON file: a bundle's manifest.json (its `facts`) or the facts module's output."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserError(f"{path}: cannot read facts: {err}") from None
    if isinstance(data, dict) and isinstance(data.get("facts"), dict):
        data = data["facts"]
    if isinstance(data, dict) and isinstance(data.get("ansible_facts"), dict):  # the module's output
        data = data["ansible_facts"].get("fleet_facts")
    if isinstance(data, dict) and isinstance(data.get("fleetscope_facts"), dict):  # as the module gave it before
        data = data["fleetscope_facts"]
    if not isinstance(data, dict) or not isinstance(data.get("cpu"), dict):
        raise UserError(f"{path}: no facts in it (a manifest.json, or the fleetscope_facts module's output)")
    return data


def facts_from_sysfs(root: Path) -> dict:
    """The facts module's snapshot of a copied sysfs tree (its /sys and /proc), as FLEETSCOPE_SYSFS_ROOT
    gives it; tools it would run are this machine's, so only the tree's topology and memory count."""
    if not (root / "sys" / "devices" / "system" / "cpu").is_dir():
        raise UserError(f"{root}: no sys/devices/system/cpu in it (a copy of a host's /sys and /proc)")
    module = _load("fleetscope_facts_for_plan", FACTS_MODULE)
    previous = os.environ.get("FLEETSCOPE_SYSFS_ROOT")
    os.environ["FLEETSCOPE_SYSFS_ROOT"] = str(root)
    try:
        topology = module.topology_facts()
        numa = topology.pop("numa")
        memory = module.meminfo()
        return {"hostname": root.name, "cpu": module.cpu_facts(topology),
                "caches": topology["core_kinds"][0]["caches"] if topology["core_kinds"] else [],
                "topology": topology, "numa": numa,
                "memory": {"mem_total_bytes": memory.get("MemTotal", 0),
                           "mem_available_bytes": memory.get("MemAvailable", 0)}}
    finally:
        if previous is None:
            os.environ.pop("FLEETSCOPE_SYSFS_ROOT", None)
        else:
            os.environ["FLEETSCOPE_SYSFS_ROOT"] = previous


def plan(facts: dict, profile: str, overrides: dict | None = None, selected: list[str] | None = None,
         mem_available_bytes: int | None = None) -> dict:
    """The host's plan. A host whose facts give no available memory (a sysfs tree without /proc/meminfo)
    needs mem_available_bytes: the DRAM working sets and the memory cap follow from it."""
    facts = json.loads(json.dumps(facts))
    memory = facts.setdefault("memory", {})
    if mem_available_bytes is not None:
        memory["mem_available_bytes"] = int(mem_available_bytes)
    if not int(memory.get("mem_available_bytes") or 0):
        raise UserError("the facts say nothing of the host's available memory: give it with --mem-available "
                        "(e.g. 64g); the DRAM working sets and the memory cap follow from it")
    module = plan_module()
    try:
        return module.host_plan(facts, settings(profile, facts, overrides, selected))
    except module.PlanInputError as error:
        raise UserError(str(error)) from None
