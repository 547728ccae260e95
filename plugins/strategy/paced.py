"""Ansible's linear strategy, waiting for a free worker instead of spinning for one.

When a task has more hosts than `forks`, linear's `_queue_task` polls its workers in a loop with a 0.1 ms sleep
until one finishes, so the controller's main process burns CPU for as long as the workers it waits for run: during
the build and the experiments, seconds to minutes a task. With 60 hosts, forks 20 and one 10 s task that was a
fifth of the controller's CPU (benchmarks/strategy_pace.py: 19.0 s with linear, 15.2 s with this strategy). This
strategy checks every `internal_poll_interval` instead until a worker is free, then queues the task exactly as
linear does: tasks, their order, their output and everything else are linear's.
"""

from __future__ import annotations

DOCUMENTATION = """
name: paced
short_description: Ansible's linear strategy, without its busy wait for a free worker
description:
  - Runs a play exactly as C(ansible.builtin.linear) does (each task on every host before the next task).
  - When every worker is busy (a task with more hosts than C(forks)), it sleeps C(internal_poll_interval) between
    looks at the workers, where linear polls them every 0.1 ms and keeps a CPU of the controller busy meanwhile.
author:
  - fleetscope maintainers (@fleetscope)
"""

import time

from ansible import constants as C
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategyModule


class StrategyModule(LinearStrategyModule):
    def _queue_task(self, host, task, task_vars, play_context):
        # every worker busy: wait here at the configured pace; linear's own loop then finds the free one at once
        while self._workers and all(worker is not None and worker.is_alive() for worker in self._workers):
            if self._tqm._terminated:
                break
            time.sleep(C.DEFAULT_INTERNAL_POLL_INTERVAL)
        super()._queue_task(host, task, task_vars, play_context)
