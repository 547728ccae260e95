"""The end of a nightly run, playbooks/check.yml, with the real ansible-playbook on the controller (it changes no
knob and reaches no host) over the warehouse of tests/nightly_bundles.py: it writes the OpenMetrics file when
asked, fails the run because rpl-03 changed, leaves the JUnit XML in the reports folder, and passes once the
lab's own thresholds allow rpl-03's change."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ElementTree

import pytest
from helpers import run_playbook

pytestmark = pytest.mark.functional


def test_the_nightly_check_play_fails_on_a_changed_host_and_passes_with_the_lab_s_thresholds(
        outputs, two_nights, knobs_unchanged):
    shutil.copy(two_nights[1], outputs.warehouse)
    prom = outputs.root / "textfile" / "fleetscope.prom"
    proc = run_playbook("playbooks/check.yml", outputs, "-e", json.dumps({"fleet_openmetrics_file": str(prom)}))
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert "CHANGED      rpl-03" in proc.stdout and "1 host(s) changed since their previous run" in proc.stdout
    suites = {suite.get("hostname"): suite for suite in ElementTree.parse(outputs.reports / "check.xml").iter("testsuite")}
    assert suites["rpl-03"].get("failures") == "3" and suites["zen3-01"].get("failures") == "0"
    assert 'fleetscope_changed_since_previous_run{host="rpl-03"} 1' in prom.read_text()

    allowed = {"fleet_check_arguments": ["--threshold", "dram_latency=70%", "--threshold", "read_*=off"]}
    proc = run_playbook("playbooks/check.yml", outputs, "-e", json.dumps(allowed))
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "3 hosts, 0 changed" in proc.stdout
