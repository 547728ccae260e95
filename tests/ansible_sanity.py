"""Run `ansible-test sanity` on the built collection, as Galaxy's inclusion checks do: `python tests/ansible_sanity.py`
(or `make sanity`); tests/test_ansible_sanity.py runs it in the suite.

ansible-galaxy builds the collection from galaxy.yml (its build_ignore decides what ships) and the archive is
unpacked into a temporary ansible_collections/fleetscope/fleet/, where ansible-test requires a collection to be.
Only Python 3.11 is tested (--python 3.11: the controller's, and the one the hosts of the dev machines run):
ansible-test would otherwise repeat the compile and import tests for every Python it knows and find none of
them installed. ansible-test keeps each test's virtual environment in ~/.ansible/test/venv (created on first
use from PyPI, reused after); their pip comes from tests/pip_bootstrap.py, put where ansible-test looks for its
cached bootstrap script, so nothing is fetched from outside the package registries.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

PROJECT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
BOOTSTRAP = PROJECT / "tests" / "pip_bootstrap.py"
PYTHON = "3.11"


def pip_version() -> str:
    """The pip version ansible-test bootstraps into its virtual environments."""
    from ansible_test._internal.python_requirements import get_venv_packages  # ansible-test's own table

    return get_venv_packages(SimpleNamespace(version=PYTHON))["pip"]


def install_bootstrap() -> Path:
    """Put tests/pip_bootstrap.py where ansible-test looks for its cached bootstrap script (never over a real one)."""
    version = pip_version()
    cached = Path.home() / ".ansible" / "test" / "cache" / f"get_pip_{version.replace('.', '_')}.py"
    ours = BOOTSTRAP.read_text(encoding="utf-8")
    if cached.is_file() and "fleetscope pip bootstrap stand-in" not in cached.read_text(encoding="utf-8", errors="replace"):
        return cached  # a genuine get-pip someone saved there: ansible-test uses it
    cached.parent.mkdir(parents=True, exist_ok=True)
    if not cached.is_file() or cached.read_text(encoding="utf-8") != ours:
        cached.write_text(ours, encoding="utf-8")
    return cached


def build(workdir: Path) -> Path:
    """The collection as ansible-galaxy builds it, unpacked at WORKDIR/ansible_collections/fleetscope/fleet."""
    dist = workdir / "dist"
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(dist), str(PROJECT)],
                   check=True, capture_output=True, text=True, cwd=PROJECT)
    (archive,) = dist.glob("fleetscope-fleet-*.tar.gz")
    collection = workdir / "ansible_collections" / "fleetscope" / "fleet"
    collection.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(collection, filter="data")
    return collection


def sanity(collection: Path, *arguments: str) -> subprocess.CompletedProcess:
    """ansible-test sanity in the unpacked collection (build), its output captured."""
    install_bootstrap()
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", ANSIBLE_NOCOLOR="1")
    return subprocess.run([str(BIN / "ansible-test"), "sanity", "--python", PYTHON, "--color", "no", *arguments],
                          cwd=collection, env=env, capture_output=True, text=True, check=False)


def main() -> int:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ansible-sanity-") as workdir:
        proc = sanity(build(Path(workdir)), *sys.argv[1:])
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    print(f"ansible-test sanity: exit status {proc.returncode} in {time.monotonic() - started:.0f} s")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
