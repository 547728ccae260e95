"""Input checks that argument specs cannot express: negative numbers, variables a role does not
have, tags no experiment carries, hosts without an address. Each returns one message per problem,
naming the variable (or host) and what to do; an empty list means the inputs are fine."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

NUMERIC = {"int", "float"}
# Tags every playbook understands besides the experiments' own.
ANSIBLE_TAGS = {"all", "always", "never", "tagged", "untagged"}


def _numeric_options(options_by_role: Mapping) -> list[str]:
    """Options holding a number or a list of numbers, with no fixed choices: sizes, counts,
    durations, CPU numbers. None of them may be negative (perf_event_paranoid's -1 is a choice)."""
    names = []
    for options in options_by_role.values():
        for name, spec in options.items():
            kind = spec.get("elements") if spec.get("type") == "list" else spec.get("type")
            if kind in NUMERIC and not spec.get("choices"):
                names.append(name)
    return names


def _as_number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None  # not a number: the argument spec check reports it


def preflight_negative_inputs(variables: Mapping, options_by_role: Mapping) -> list[str]:
    problems = []
    for name in _numeric_options(options_by_role):
        if name not in variables:
            continue
        value = variables[name]
        values = value if isinstance(value, (list, tuple)) else [value]
        negative = [v for v in values if (_as_number(v) or 0) < 0]
        if negative:
            problems.append(f"{name}={value} is negative: sizes, counts, durations and CPU numbers are 0 or more")
    return problems


def preflight_unknown_role_variables(names, options_by_role: Mapping) -> list[str]:
    """A variable named like a role's input (kernels_*, fio_*, ...) that the role does not have is
    a typo that would silently be ignored, e.g. kernels_zero_queu_enabled: false."""
    problems = []
    for name in sorted(names):
        for role, options in options_by_role.items():
            if name.startswith(role + "_") and name not in options:
                close = difflib.get_close_matches(name, list(options), n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                problems.append(f"{name} is not a variable of role {role}{hint}; its variables are listed in "
                                f"roles/{role}/defaults/main.yml")
    return problems


def preflight_experiment_tags(select_tasks) -> list[str]:
    """Every experiment tag, Ansible's own tags included: the tags of the selection tasks
    (roles/fleet/tasks/select.yml, one task per experiment tagged with its family and its name; read
    as plain data, nothing templated)."""
    known = set(ANSIBLE_TAGS)
    for task in select_tasks or []:
        tags = task.get("tags", []) if isinstance(task, Mapping) else []
        known.update([tags] if isinstance(tags, str) else tags)
    return sorted(known)


def preflight_unknown_tags(run_tags, skip_tags, known) -> list[str]:
    problems = []
    for option, tags in (("--tags", run_tags), ("--skip-tags", skip_tags)):
        unknown = sorted(set(tags) - set(known))
        for tag in unknown:
            close = difflib.get_close_matches(tag, list(known), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            problems.append(f"{option} {tag}: no experiment or tag of that name{hint}")
    return problems


def preflight_hosts_to_resolve(hosts, hostvars: Mapping) -> list[str]:
    """Hosts reached over the network that have no ansible_host: their inventory name must resolve."""
    return [host for host in hosts
            if hostvars[host].get("ansible_connection", "ssh") != "local" and "ansible_host" not in hostvars[host]]


def preflight_unaddressed_hosts(hosts, hostvars: Mapping, lookups) -> list[str]:
    """Hosts with an empty ansible_host, or none and a name that does not resolve (the getent
    results of preflight_hosts_to_resolve)."""
    unresolved = {result["item"] for result in lookups if result.get("rc") != 0}
    problems = []
    for host in hosts:
        if hostvars[host].get("ansible_connection", "ssh") == "local":
            continue
        if "ansible_host" in hostvars[host] and not str(hostvars[host]["ansible_host"] or "").strip():
            problems.append(f"inventory host {host} has an empty ansible_host: give it the host's address")
        elif host in unresolved:
            problems.append(f"inventory host {host} has no address: set ansible_host for it (the name "
                            f"{host} does not resolve either)")
    return problems


class FilterModule:
    def filters(self):
        return {
            "preflight_negative_inputs": preflight_negative_inputs,
            "preflight_unknown_role_variables": preflight_unknown_role_variables,
            "preflight_experiment_tags": preflight_experiment_tags,
            "preflight_unknown_tags": preflight_unknown_tags,
            "preflight_hosts_to_resolve": preflight_hosts_to_resolve,
            "preflight_unaddressed_hosts": preflight_unaddressed_hosts,
        }
