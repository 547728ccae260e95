"""Shared fixtures for the kernel tests: the binary is built once per session from a temporary copy
of kernels/, so the tests never depend on (or disturb) a build in the working tree."""

import shutil
import subprocess
from pathlib import Path

import pytest

from kernelrun import parse_lines

KERNELS_DIR = Path(__file__).resolve().parents[2] / "kernels"


@pytest.fixture(scope="session")
def build(tmp_path_factory):
    source = tmp_path_factory.mktemp("kernels") / "kernels"
    shutil.copytree(KERNELS_DIR, source, ignore=shutil.ignore_patterns("build"))
    result = subprocess.run(["make", "-C", str(source)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return {"binary": source / "build" / "fleetscope-kernels", "stderr": result.stderr}


@pytest.fixture(scope="session")
def run(build):
    def run_binary(*args):
        return subprocess.run([str(build["binary"]), *args], capture_output=True,
                              text=True, timeout=120)
    return run_binary


@pytest.fixture(scope="session")
def records(run):
    """Runs a kernel that must succeed and returns its JSON records."""
    def run_records(*args):
        result = run(*args)
        assert result.returncode == 0, result.stderr
        return parse_lines(result.stdout)
    return run_records
