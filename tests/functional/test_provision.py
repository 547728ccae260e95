"""The provision role on an OS family it has no package list for: it stops before installing anything and
says what to set; with provision_packages set it goes on. Run against this machine with the family's
name overridden (the role reads it through __provision_os_family), so no package is installed."""

from __future__ import annotations

import os
import subprocess
import textwrap

import pytest

from helpers import BIN, PROJECT

pytestmark = pytest.mark.functional


def provision(tmp_path, *extra: str) -> subprocess.CompletedProcess:
    playbook = tmp_path / "provision.yml"
    playbook.write_text(textwrap.dedent("""\
        - name: Provision this machine
          hosts: localhost
          connection: local
          gather_facts: false
          roles: [provision]
        """))
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", ANSIBLE_NOCOLOR="1",
               ANSIBLE_ROLES_PATH=str(PROJECT / "roles"), ANSIBLE_CONFIG=str(PROJECT / "ansible.cfg"))
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", "inventory/localhost.yml", str(playbook), *extra],
                          cwd=PROJECT,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def test_an_unknown_os_family_stops_with_what_to_set(tmp_path):
    proc = provision(tmp_path, "-e", "__provision_os_family=Gentoo")
    assert proc.returncode != 0
    said = " ".join(proc.stdout.split())
    assert "family Gentoo" in said and "Debian and RedHat families" in said, proc.stdout
    assert "Set provision_packages" in said
    assert "Install the packages" not in proc.stdout  # stopped before any install task


def test_provision_packages_stands_in_for_an_unknown_family(tmp_path):
    proc = provision(tmp_path, "-e", "__provision_os_family=Gentoo", "-e", '{"provision_packages": []}')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Refuse an OS family" in proc.stdout and "skipping" in proc.stdout
