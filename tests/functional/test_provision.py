"""The provision role on an OS family it has no package list for: it stops before installing anything and
says what to set; with provision_packages set it goes on. Run against this machine with the family's
name overridden (the role reads it through __provision_os_family), so no package is installed. On Debian apt
runs only when dpkg lacks a package (checked in --check mode, with names apt refuses)."""

from __future__ import annotations

import json
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


INSTALL = ("Learn the OS family, install the packages the experiments need that are missing, then take the "
           "environment snapshot")


def test_an_unknown_os_family_stops_with_what_to_set(tmp_path):
    proc = provision(tmp_path, "-e", "__provision_os_family=Gentoo")
    assert proc.returncode != 0
    said = " ".join(proc.stdout.split())
    assert "family Gentoo" in said and "Debian and RedHat families" in said, proc.stdout
    assert "Set provision_packages" in said
    assert task_outcome(proc.stdout, INSTALL) == "fatal"  # refused before dpkg or any package manager ran
    assert "installed_already" not in proc.stdout


def test_provision_packages_stands_in_for_an_unknown_family(tmp_path):
    proc = provision(tmp_path, "-v", "-e", "__provision_os_family=Gentoo", "-e", '{"provision_packages": []}')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert task_outcome(proc.stdout, INSTALL) == "ok" and "no package to install" in proc.stdout
    assert "fleet_facts:" in proc.stdout  # the snapshot, taken in the same task


def task_outcome(stdout: str, task: str) -> str:
    """What the default callback printed for a task on localhost: ok, changed, skipping or fatal."""
    after = stdout.split(f"TASK [provision : {task}]", 1)[1].split("\nTASK [", 1)[0]
    return next(line.split(":", 1)[0] for line in after.splitlines()
                if line.startswith(("ok:", "changed:", "skipping:", "fatal:")))


def test_apt_runs_only_for_a_package_dpkg_does_not_have_installed(tmp_path):
    """Every package installed: dpkg's database says so and apt (which opens its whole cache, seconds a run)
    does not run. One missing, or a name only apt can judge (a version): apt runs, and here refuses the name."""
    installed = provision(tmp_path, "--check", "-v")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert task_outcome(installed.stdout, INSTALL) == "ok"
    assert "installed_already: true" in installed.stdout and "dpkg has every package installed" in installed.stdout
    for name in ("fleetscope-no-such-package", "tar=0.0-fleetscope"):
        missing = provision(tmp_path, "--check", "-e", json.dumps({"provision_extra_packages": [name]}))
        assert task_outcome(missing.stdout, INSTALL) == "fatal", missing.stdout
        assert name.split("=")[0] in missing.stdout
