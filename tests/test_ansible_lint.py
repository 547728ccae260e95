"""The Ansible code passes ansible-lint's production profile and a syntax check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(*argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", NO_COLOR="1")
    return subprocess.run(argv, cwd=PROJECT, env=env, capture_output=True, text=True, check=False)


def test_ansible_lint_production_profile():
    proc = run(str(BIN / "ansible-lint"), "--nocolor", "--offline")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    assert "production" in proc.stderr + proc.stdout


def test_syntax_check():
    proc = run(str(BIN / "ansible-playbook"), "--syntax-check", "site.yml", "playbooks/restore.yml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
