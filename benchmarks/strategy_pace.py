#!/usr/bin/env python3
"""The controller's CPU while a task has more hosts than forks: Ansible's linear strategy against fleetscope's paced
one (plugins/strategy/paced.py, opt-in: ANSIBLE_STRATEGY=fleetscope.fleet.paced), alternating.

    .venv/bin/python benchmarks/strategy_pace.py [--hosts 60] [--forks 20] [--task-s 5] [--pairs 2]

The hosts are aliases of this machine (local connection), each running one `sleep` task of --task-s seconds, so
the hosts beyond --forks wait for a worker while the first ones sleep: what the build and the experiments do in a
lab bigger than forks. The CPU is ansible-playbook's and every process it waited for (its forks and the modules
they ran locally, the same for both strategies); the difference between the two is the waiting. It says how busy
the machine was: on a loaded machine the waiting process gets less CPU, and the difference reads smaller.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
STRATEGIES = ("ansible.builtin.linear", "fleetscope.fleet.paced")


def run(strategy: str, inventory: Path, playbook: Path, forks: int) -> tuple[float, float]:
    """(wall s, CPU s of ansible-playbook and its children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "ANSIBLE_STRATEGY": strategy, "ANSIBLE_FORKS": str(forks)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as `make run` runs it
    done = subprocess.run([str(PROJECT / ".venv" / "bin" / "ansible-playbook"), "-i", str(inventory), str(playbook)],
                          cwd=PROJECT, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{strategy}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=60)
    parser.add_argument("--forks", type=int, default=20)
    parser.add_argument("--task-s", type=float, default=5.0)
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fleetscope-pace-") as tmp:
        inventory, playbook = Path(tmp) / "inventory.yml", Path(tmp) / "play.yml"
        hosts = "".join(f"    pace{index:03d}: {{}}\n" for index in range(args.hosts))
        inventory.write_text("all:\n  vars:\n    ansible_connection: local\n"
                             "    ansible_python_interpreter: /usr/bin/python3\n  hosts:\n" + hosts)
        playbook.write_text("- name: Wait\n  hosts: all\n  gather_facts: false\n  tasks:\n"
                            f"    - name: Sleep\n      ansible.builtin.command: sleep {args.task_s}\n")
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in STRATEGIES}
        loads = [os.getloadavg()[0]]
        for _pair in range(args.pairs):
            for strategy in STRATEGIES:
                results[strategy].append(run(strategy, inventory, playbook, args.forks))
                loads.append(os.getloadavg()[0])
    print(f"{args.hosts} hosts, forks {args.forks}, one task of {args.task_s:g} s; load average "
          f"{min(loads):.1f}-{max(loads):.1f} (this machine has {os.cpu_count()} CPUs)\n")
    print("| strategy | wall s | controller CPU s |")
    print("|---|---|---|")
    for strategy, runs in results.items():
        print(f"| {strategy} | {', '.join(f'{wall:.1f}' for wall, _ in runs)} | "
              f"{', '.join(f'{cpu:.2f}' for _, cpu in runs)} |")
    linear, paced = (min(cpu for _, cpu in results[name]) for name in STRATEGIES)
    waiting = args.hosts - args.forks
    print(f"\nbest of each: linear {linear:.2f} s, paced {paced:.2f} s: {linear - paced:+.2f} s of controller CPU, "
          f"{(linear - paced) / max(waiting, 1):.3f} s for each of the {waiting} hosts that waited for a worker")


if __name__ == "__main__":
    main()
