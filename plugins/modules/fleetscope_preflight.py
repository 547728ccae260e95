#!/usr/bin/python
"""Documentation of the fleetscope_preflight action (plugins/action/fleetscope_preflight.py): it runs on the
controller and has no module part."""

from __future__ import annotations

DOCUMENTATION = r"""
module: fleetscope_preflight
short_description: Check the Ansible version and one host's inputs before any host is changed
author:
  - fleetscope maintainers (@fleetscope)
description:
  - Runs on the controller, in one task per host, the checks of the preflight role in this order; the first
    that finds a problem fails the host with its messages joined by C(; ).
  - The C(fleet_*) settings loaded at all (C(fleet_profile) and C(fleet_state_file) defined, as the plays of
    site.yml load them from the fleet role's defaults).
  - The C(fleet_*) settings against O(settings_role)'s C(meta/argument_specs.yml), one line per mistake.
  - The Ansible version against O(min_ansible).
  - Each role's inputs against its C(meta/argument_specs.yml), as M(ansible.builtin.validate_argument_spec)
    reads them from the task's variables (one line per mistake, not the whole argument spec).
  - C(fleet_workloads) beyond what its argument spec can say (names, argv lists, numbers).
  - C(fleet_dram_peak_gbps), where set, a bandwidth in GB/s (above 0, at most 1,000,000).
  - C(fio_device) only with C(fio_destructive_ok) true.
  - No size, count, duration or CPU number negative, and no variable named like a role's input that the role
    does not have (a misspelt one would be ignored), from the host's variables.
  - C(fleet_run_id), where given, a fleetscope run id.
options:
  roles_dir:
    description: The folder holding the roles (the repository's or the installed collection's C(roles/)).
    type: path
    required: true
  roles:
    description: The roles whose inputs are checked, each read from O(roles_dir)/ROLE/meta/argument_specs.yml.
    type: list
    elements: str
    required: true
  min_ansible:
    description: The oldest ansible-core the playbooks support.
    type: str
    required: true
  settings_role:
    description: The role in O(roles_dir) whose argument spec declares the C(fleet_*) settings, checked first (the
      preflight role, whose own automatic validation would print the whole argument spec on a mistake).
    type: str
"""

EXAMPLES = r"""
- name: Check the Ansible version and this host's inputs
  fleetscope.fleet.fleetscope_preflight:
    roles_dir: "{{ role_path | dirname }}"
    roles: [provision, tuning, kernels, fio, mlc, workloads, collect]
    min_ansible: "2.19"
    settings_role: preflight
"""

RETURN = r"""
msg:
  description: What was checked, or the problems the first failing check found, joined by C(; ).
  returned: always
  type: str
check:
  description: The check that failed (settings_loaded, fleet_settings, ansible_version, role_inputs, workloads,
    dram_peak, fio_device, negative, unknown, run_id).
  returned: failed
  type: str
roles:
  description: The roles whose inputs were checked.
  returned: success
  type: list
  elements: str
"""
