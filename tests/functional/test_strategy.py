"""The paced strategy (plugins/strategy/paced.py, ANSIBLE_STRATEGY=fleetscope.fleet.paced) runs a play as linear does
when its hosts outnumber the forks: every host runs every task, each task on every host before the next starts,
and never more hosts at once than forks. (What it saves, the controller's CPU while hosts wait for a worker, is
benchmarks/strategy_pace.py's figure, not a test's.) It is not ansible.cfg's default: ansible-core 2.19 prints a
deprecation warning at every run with a strategy from outside ansible.builtin, and a run of fleetscope prints none."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
HOSTS, FORKS, TASKS = 5, 2, 2


def test_the_paced_strategy_runs_each_task_on_every_host_before_the_next_within_the_forks(tmp_path):
    hosts = "".join(f"    pace{index}: {{}}\n" for index in range(HOSTS))
    (tmp_path / "inventory.yml").write_text("all:\n  vars:\n    ansible_connection: local\n"
                                            "    ansible_python_interpreter: /usr/bin/python3\n  hosts:\n" + hosts)
    tasks = "".join(
        f"    - name: Task {task}\n      ansible.builtin.shell: >-\n"
        f"        date +%s.%N > {tmp_path}/{{{{ inventory_hostname }}}}-{task}; sleep 0.4;\n"
        f"        date +%s.%N >> {tmp_path}/{{{{ inventory_hostname }}}}-{task}\n" for task in range(TASKS))
    (tmp_path / "play.yml").write_text(f"- name: Paced\n  hosts: all\n  gather_facts: false\n  tasks:\n{tasks}")
    config = subprocess.run([str(PROJECT / ".venv" / "bin" / "ansible-config"), "dump", "--only-changed"],
                            cwd=PROJECT, capture_output=True, text=True, timeout=120, check=True).stdout
    assert "DEFAULT_STRATEGY(" not in config

    done = subprocess.run([str(PROJECT / ".venv" / "bin" / "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
                           str(tmp_path / "play.yml")], cwd=PROJECT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "ANSIBLE_FORKS": str(FORKS), "ANSIBLE_STRATEGY": "fleetscope.fleet.paced"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "strategy plugins not included in ansible.builtin" in done.stdout + done.stderr  # it is the one in use

    spans = {(host, task): tuple(float(line) for line in (tmp_path / f"pace{host}-{task}").read_text().split())
             for host in range(HOSTS) for task in range(TASKS)}
    for task in range(1, TASKS):
        assert min(spans[host, task][0] for host in range(HOSTS)) >= max(spans[host, task - 1][1]
                                                                        for host in range(HOSTS))
    for host, task in spans:
        start = spans[host, task][0]
        running = sum(1 for (start_other, end_other) in spans.values() if start_other <= start < end_other)
        assert running <= FORKS, f"{running} hosts ran at once with forks {FORKS}"


def test_a_run_with_the_project_s_settings_prints_no_deprecation_warning(tmp_path):
    """What every run prints first: ansible.cfg chooses nothing ansible-core 2.19 deprecates."""
    (tmp_path / "play.yml").write_text("- name: Quiet\n  hosts: localhost\n  gather_facts: false\n  tasks:\n"
                                       "    - name: Nothing\n      ansible.builtin.debug:\n        msg: ok\n")
    done = subprocess.run([str(PROJECT / ".venv" / "bin" / "ansible-playbook"), str(tmp_path / "play.yml")],
                          cwd=PROJECT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "DEPRECATION" not in done.stdout + done.stderr, done.stdout + done.stderr
