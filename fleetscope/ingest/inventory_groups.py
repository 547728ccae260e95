"""Each host's inventory groups, from the controller: the warehouse records them beside a run so the fleet
page, `compare group:NAME` and the notebooks can group hosts. A host's own manifest also names groups
(`inventory_groups`, Ansible's group_names when it was packed), but a host can write anything there and so
place itself in any group: that claim is not read. The controller's inventory is what ingest is given:

    {"node1": ["lab", "rack_a"], "node2": ["lab"]}      host -> its groups (what playbooks/warehouse.yml writes)

or the output of `ansible-inventory -i INVENTORY --list` (groups with their hosts and children; a host's
groups are those it is in directly or through a child group, 'all' aside, as Ansible's group_names)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from fleetscope.errors import UserError

# The manifest schema's rule for a name: any text without control characters, at most 255 of them.
_NAME = re.compile(r"[^\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]{1,255}")
MAX_GROUPS_PER_HOST = 1000


def read_groups(text: str, source: str) -> dict[str, tuple[str, ...]]:
    """host -> its groups (sorted) from the JSON `text` read from `source`; UserError saying what is wrong."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise UserError(f"{source}: not JSON ({error})") from None
    if not isinstance(document, dict):
        raise UserError(f"{source}: expected a JSON object of host -> groups, or `ansible-inventory --list` output")
    groups = _from_inventory_list(document, source) if "_meta" in document else document
    checked = {}
    for host, names in groups.items():
        if not _NAME.fullmatch(host):
            raise UserError(f"{source}: {host[:80]!r} is not a host name (1 to 255 characters, no control characters)")
        if not isinstance(names, list) or len(names) > MAX_GROUPS_PER_HOST or \
                not all(isinstance(name, str) and _NAME.fullmatch(name) for name in names):
            raise UserError(f"{source}: host {host!r}: expected a list of at most {MAX_GROUPS_PER_HOST} group names "
                            "(1 to 255 characters, no control characters)")
        checked[host] = tuple(sorted(set(names)))
    return checked


def _from_inventory_list(document: Mapping, source: str) -> dict[str, list[str]]:
    """group_names of every host of `ansible-inventory --list` output."""
    entries = {name: entry for name, entry in document.items() if name != "_meta"}
    if not all(isinstance(entry, dict) for entry in entries.values()):
        raise UserError(f"{source}: an `ansible-inventory --list` group must be an object with hosts and children")
    members: dict[str, set[str]] = {}

    def hosts_of(group: str, seen: frozenset) -> set[str]:
        if group in members:
            return members[group]
        entry = entries.get(group, {})
        found = set(entry.get("hosts") or [])
        for child in entry.get("children") or []:
            if child not in seen:
                found |= hosts_of(child, seen | {child})
        members[group] = found
        return found

    by_host: dict[str, list[str]] = {}
    for group in entries:
        for host in hosts_of(group, frozenset({group})):
            if not isinstance(host, str):
                raise UserError(f"{source}: group {group!r} names a host that is not text")
            by_host.setdefault(host, [])
            if group != "all":
                by_host[host].append(group)
    return by_host
