"""`ansible-test sanity` passes on the built collection (tests/ansible_sanity.py builds it, unpacks it where
ansible-test wants it and runs every sanity test on Python 3.11), and the collection ships no test but
ansible-test's ignore file. The first run on a machine creates ansible-test's virtual environments from PyPI
(about a minute more); the ignore file's only entries are the GPLv3 header validate-modules looks for in
modules, which an Apache-2.0 collection does not have."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ansible_sanity  # noqa: E402 - beside this file, not a package

pytestmark = pytest.mark.sanity


def test_ansible_test_sanity_passes_on_the_built_collection(tmp_path):
    collection = ansible_sanity.build(tmp_path)
    shipped_tests = sorted(str(path.relative_to(collection)) for path in (collection / "tests").rglob("*")
                           if path.is_file())
    assert shipped_tests == ["tests/sanity/ignore-2.19.txt"], shipped_tests
    proc = ansible_sanity.sanity(collection)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "Running sanity test \"validate-modules\"" in output and "Running sanity test \"pylint\"" in output
    assert "Running sanity test \"changelog\"" in output and "Running sanity test \"ansible-doc\"" in output
    ignores = (collection / "tests" / "sanity" / "ignore-2.19.txt").read_text().splitlines()
    assert {line.split()[1] for line in ignores} == {"validate-modules:missing-gplv3-license"}
