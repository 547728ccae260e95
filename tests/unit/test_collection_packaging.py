"""How fleetscope ships to Ansible users: the runtime and development locks kept apart, every role with
its meta/main.yml, and the execution environment that ansible-builder turns into a build context."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DEV_TOOLS = {"pytest", "ansible-lint", "black", "yamllint", "ansible-builder", "pyspark"}


def pins(lock: Path) -> dict[str, str]:
    """name -> version of a uv/pip-compile lock, after checking that every pin carries its hashes."""
    text = lock.read_text()
    entries = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+) \\\n((?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", text, re.M)
    names = re.findall(r"^([A-Za-z0-9_.-]+)==", text, re.M)
    assert len(entries) == len(names), f"{lock.name}: a pin without hashes"
    return {name.lower(): version for name, version, _ in entries}


def test_runtime_lock_has_no_development_tools_and_the_dev_lock_agrees_with_it():
    runtime, dev = pins(PROJECT / "requirements.lock"), pins(PROJECT / "requirements-dev.lock")
    assert {"ansible-core", "duckdb", "jsonschema", "jinja2"} <= set(runtime)
    assert not DEV_TOOLS & set(runtime), sorted(DEV_TOOLS & set(runtime))
    assert DEV_TOOLS <= set(dev), sorted(DEV_TOOLS - set(dev))
    assert {name: version for name, version in dev.items() if name in runtime} == runtime


def test_the_notebooks_are_an_extra_locked_at_the_runtime_lock_s_versions(tmp_path):
    runtime, notebooks = pins(PROJECT / "requirements.lock"), pins(PROJECT / "requirements-notebooks.lock")
    dev = pins(PROJECT / "requirements-dev.lock")
    extra = {"marimo", "polars", "altair"}
    assert not extra & set(runtime), sorted(extra & set(runtime))  # the controller installs without them
    assert extra <= set(notebooks) and extra <= set(dev)
    assert {name: version for name, version in notebooks.items() if name in runtime} == runtime
    assert {name: version for name, version in dev.items() if name in notebooks} == notebooks
    assert "-r requirements-notebooks.lock" in make_dry_run("notebooks", tmp_path)


def make_dry_run(target: str, tmp_path: Path) -> str:
    venv = tmp_path / f"venv-{target}"
    proc = subprocess.run(["make", "-n", target, f"VENV={venv}", "PYTHON=python3"], cwd=PROJECT,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_make_run_installs_the_runtime_lock_only_and_make_test_adds_the_dev_lock(tmp_path):
    run = make_dry_run("run", tmp_path)
    assert "-r requirements.lock" in run and "requirements-dev.lock" not in run
    test = make_dry_run("test", tmp_path)
    assert "-r requirements.lock" in test and "--require-hashes -r requirements-dev.lock" in test
    assert (PROJECT / ".ci" / "run").read_text().rstrip().endswith("exec make test")


def test_every_role_has_galaxy_metadata():
    roles = sorted(path for path in (PROJECT / "roles").iterdir() if path.is_dir())
    assert roles
    for role in roles:
        meta = yaml.safe_load((role / "meta" / "main.yml").read_text())
        assert meta["galaxy_info"]["role_name"] == role.name and meta["galaxy_info"]["description"], role.name
        assert meta["dependencies"] == [], role.name
    galaxy = yaml.safe_load((PROJECT / "galaxy.yml").read_text())
    assert (galaxy["namespace"], galaxy["name"]) == ("fleetscope", "fleet")
    assert galaxy["version"] == re.search(r'^version = "([^"]+)"', (PROJECT / "pyproject.toml").read_text(), re.M)[1]
    requirements = yaml.safe_load((PROJECT / "requirements.yml").read_text())
    windows_tasks = (PROJECT / "roles" / "fio" / "tasks" / "windows.yml").read_text()
    assert "ansible.windows." in windows_tasks
    assert "ansible.windows" in {entry["name"] for entry in requirements["collections"]}


@pytest.mark.skipif(shutil.which("ansible-builder", path=str(BIN)) is None,
                    reason="ansible-builder is in the development lock (make test installs it)")
def test_execution_environment_makes_a_build_context(tmp_path):
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    for name in ("execution-environment.yml", "requirements.lock", "requirements.yml"):
        shutil.copy(PROJECT / name, tmp_path / name)
    build = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path / "dist")],
                           cwd=PROJECT, env=env, capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stdout + build.stderr
    create = subprocess.run([str(BIN / "ansible-builder"), "create", "--context", "context"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, check=False)
    assert create.returncode == 0, create.stdout + create.stderr
    context = tmp_path / "context"
    containerfile = next(context.glob("[CD]*file")).read_text()
    assert re.search(r"ansible-galaxy collection install .*/build/collection/fleetscope-fleet-\*\.tar\.gz", containerfile)
    assert "--require-hashes -r /tmp/requirements.lock" in containerfile
    assert "-m compileall -q /usr/share/ansible/collections/ansible_collections/fleetscope/fleet/plugins" in containerfile
    assert (context / "_build" / "python" / "requirements.lock").read_bytes() == (PROJECT / "requirements.lock").read_bytes()
    assert list((context / "_build" / "collection").glob("fleetscope-fleet-*.tar.gz"))
    assert "ansible.windows" in (context / "_build" / "requirements.yml").read_text()
