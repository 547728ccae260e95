#!/usr/bin/python
"""Documentation of the fleetscope_packages action (plugins/action/fleetscope_packages.py): the controller decides,
and runs dpkg-query or the host's package manager module on the host; there is no module part of its own."""

from __future__ import annotations

DOCUMENTATION = r"""
module: fleetscope_packages
short_description: Install the packages the experiments need that a host lacks, in one task
author:
  - fleetscope maintainers (@fleetscope)
description:
  - Fails with O(refusal) when O(names) is null (an OS family fleetscope has no package names for, and no
    C(provision_packages) set for the host).
  - On the Debian family, asks dpkg's database whether every package of O(names) is installed (one command on the
    host, read-only, also in check mode); only when one is missing, or a name is more than a package name (a
    version, a pattern, which only apt can judge), does M(ansible.builtin.apt) run, refreshing an index older than
    O(apt_cache_valid_time).
  - On another family, installs O(names) with the module of the host's package manager (O(manager)).
options:
  names:
    description: The packages to install; null refuses the host with O(refusal); an empty list installs nothing.
    type: list
    elements: str
  family:
    description: The host's OS family (C(ansible_facts.os_family)).
    type: str
    required: true
  manager:
    description: The host's package manager (C(ansible_facts.pkg_mgr)), whose module installs on a family other than
      Debian.
    type: str
  apt_cache_valid_time:
    description: Refresh apt's index first when it is older than this (seconds).
    type: int
    default: 86400
  refusal:
    description: The message a host gets when O(names) is null.
    type: str
"""

EXAMPLES = r"""
- name: Install the packages the experiments need that are missing
  fleetscope.fleet.fleetscope_packages:
    names: [gcc, make, fio]
    family: "{{ ansible_facts.os_family }}"
    manager: "{{ ansible_facts.pkg_mgr }}"
"""

RETURN = r"""
installed_already:
  description: dpkg said every package is installed, so no package manager ran.
  returned: when O(names) is not empty
  type: bool
msg:
  description: What was found, or why the host was refused.
  returned: always
  type: str
"""
