"""Helpers for functional tests: real ansible-playbook runs against this machine."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
STATE_FILE = "/var/lib/fleetscope/tuning-state.json"
KNOB_FILES = {
    "thp_enabled": "/sys/kernel/mm/transparent_hugepage/enabled",
    "thp_defrag": "/sys/kernel/mm/transparent_hugepage/defrag",
    "nr_hugepages": "/proc/sys/vm/nr_hugepages",
    "perf_event_paranoid": "/proc/sys/kernel/perf_event_paranoid",
}


def knob_values() -> dict:
    """The host's knobs as the tuning role sees them (THP files list choices, one in brackets)."""
    values = {}
    for name, path in KNOB_FILES.items():
        text = Path(path).read_text().strip()
        values[name] = text.split("[", 1)[1].split("]", 1)[0] if "[" in text else text
    return values


def scratch_leftovers() -> list[str]:
    return glob.glob("/var/tmp/fleetscope-*")


class Outputs:
    """Where one test's run writes: results/, the warehouse and the reports, all under tmp."""

    def __init__(self, root: Path):
        self.root = root
        self.results = root / "results"
        self.warehouse = root / "fleet.duckdb"
        self.reports = root / "reports"

    def extra_vars(self) -> list[str]:
        return ["-e", json.dumps({"fleet_results_dir": str(self.results),
                                  "fleet_warehouse": str(self.warehouse),
                                  "fleet_reports_dir": str(self.reports)})]

    def bundles(self) -> list[Path]:
        return sorted(p.parent for p in self.results.glob("*/*/manifest.json"))

    def manifest(self) -> dict:
        (bundle,) = self.bundles()
        return json.loads((bundle / "manifest.json").read_text())


def playbook_argv(playbook: str, outputs: Outputs, *args: str) -> list[str]:
    return [str(BIN / "ansible-playbook"), playbook, *outputs.extra_vars(), *args]


def run_playbook(playbook: str, outputs: Outputs, *args: str, timeout: int = 900):
    """Run a playbook; one that outlives `timeout` is killed with its kernels, and the restore playbook puts
    the knobs back and removes its scratch, so one slow run fails alone instead of every test after it."""
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", ANSIBLE_NOCOLOR="1")
    with subprocess.Popen(playbook_argv(playbook, outputs, *args), cwd=PROJECT, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True) as child:
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            stdout, stderr = child.communicate()
            restore = subprocess.run(playbook_argv("playbooks/restore.yml", outputs), cwd=PROJECT, env=env,
                                     capture_output=True, text=True, timeout=300, check=False)
            (outputs.root / f"{Path(playbook).stem}.log").write_text(stdout + stderr + restore.stdout + restore.stderr)
            raise AssertionError(f"{playbook} {' '.join(args)} ran past {timeout} s and was killed; "
                                 f"restore.yml exit {restore.returncode}\n{stdout[-3000:]}") from None
    proc = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
    (outputs.root / f"{Path(playbook).stem}.log").write_text(stdout + stderr)
    return proc
