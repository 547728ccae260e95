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
  - Runs M(ansible.builtin.setup) with the minimal subset and keeps its facts as the host's (the OS family, the
    package manager, the distribution).
  - Installs O(packages) where set, else O(table)'s names for the host's OS family, plus O(extra); fails, saying what
    to set, for a family O(table) lacks when O(packages) is not set.
  - On the Debian family, asks dpkg's database whether every package is installed (one command on the host,
    read-only, also in check mode); only when one is missing, or a name is more than a package name (a version, a
    pattern, which only apt can judge), does M(ansible.builtin.apt) run, refreshing an index older than
    O(apt_cache_valid_time).
  - On another family, installs them with the module of the host's package manager (C(ansible_pkg_mgr)).
options:
  table:
    description: Package names per OS family (the provision role's C(__provision_family_packages)).
    type: dict
    required: true
  packages:
    description: The packages to install in place of O(table)'s (C(provision_packages)); an empty list installs
      nothing.
    type: list
    elements: str
  extra:
    description: More packages for every host (C(provision_extra_packages)).
    type: list
    elements: str
    default: []
  family:
    description: The OS family to take, in place of setup's.
    type: str
  apt_cache_valid_time:
    description: Refresh apt's index first when it is older than this (seconds).
    type: int
    default: 86400
  snapshot:
    description: The arguments of M(fleetscope.fleet.fleetscope_facts); when given, the environment snapshot is taken
      in the same task once the packages are in (its facts, C(fleet_facts), kept as the host's).
    type: dict
"""

EXAMPLES = r"""
- name: Install the packages the experiments need that are missing
  fleetscope.fleet.fleetscope_packages:
    table:
      Debian: [gcc, make, fio]
      RedHat: [gcc, make, fio]
"""

RETURN = r"""
ansible_facts:
  description: setup's minimal facts, kept as the host's.
  returned: when setup ran
  type: dict
installed_already:
  description: dpkg said every package is installed, so no package manager ran.
  returned: when there is a package to install
  type: bool
msg:
  description: What was found, or why the host was refused.
  returned: always
  type: str
"""
