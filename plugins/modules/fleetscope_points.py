#!/usr/bin/python
"""Run an experiment's kernel processes on the host in one module call: each point's argv (perf stat around
it where the host's perf can count), one after another, judged by the kernel's own exit note; then, once, the
points whose kernel asked for a re-queue. One task per experiment instead of a loop item per process, and one
task for a run of experiments that need nothing but their points (O(experiments)): each loop item and each
task was a round trip to the host and controller CPU, per host (issue 33)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: fleetscope_points
short_description: Run an experiment's kernel processes on the host, each judged by the kernel's exit note
description:
  - "Runs each point's C(argv) (O(points)) followed by O(extra_args), one after another in the order given, in
    O(chdir), with E(FLEETSCOPE_KERNELS_EXIT_NOTE=1) so fleetscope-kernels ends its stderr with
    C(fleetscope-kernels: exit <status>)."
  - A point succeeded only when what ran it exited 0 and the kernel's exit note says 0 (a kernel killed by a
    signal writes none, and perf stat reports a workload that ended before perf waited for it as exit 0).
    A failed point does not stop the others.
  - "When every point succeeded and O(requeue) is true, each point whose kernel wrote C(<kernel>: re-queue: ...)
    on stderr runs once more, after all the others, with C(--attempt 2) (its perf CSV beside the first
    attempt's, C(<NNN>.attempt2.csv))."
  - "Passes the experiment's time bank from process to process: each process that samples to a target
    (C(--target-ci)) gets C(--bank-s S), S the seconds of sampling the earlier processes were priced for and did
    not use (O(bank_s) to begin with), and its report C(fleetscope-kernels: bank left <S> s) becomes the next
    one's; what is left at the end is returned (RV(bank_s)) for the experiment's next call (a refinement round).
    A process that failed or did not report passes nothing on."
  - Makes the folder of each point's perf CSV (each point's C(raw.path), relative to O(chdir)), mode 0700.
  - Fails when any process failed, with every process's record in RV(results) and RV(requeued), so the
    experiment's failure record keeps what was measured.
  - "Given O(experiments) instead of O(points), runs each experiment in turn as above (its own stderr log, its
    own second attempts, a time bank of its own starting at 0) and returns each one's outcome in
    RV(experiments): a failed experiment is recorded there, with the message it would have failed with, and the
    next one still runs; the module fails only on input it cannot run."
author:
  - fleetscope maintainers (@fleetscope)
options:
  points:
    description:
      - The experiment's points, each a dict with C(label), C(argv) (a list of strings) and C(raw) (the perf
        CSV's manifest entry with its bundle-relative C(path), or null), as the filter perf_points makes them.
        Other keys are kept and returned in each record's C(item).
    type: list
    elements: dict
  experiments:
    description:
      - Several experiments, each a dict with C(name), C(points) (as O(points)) and C(stderr_log) (as
        O(stderr_log), required here), run one after another in the order given. Exactly one of O(points) and
        O(experiments) is given; O(bank_s) and O(stderr_log_append) apply to O(points) only.
    type: list
    elements: dict
  extra_args:
    description: Arguments appended to every point's argv (kernels_extra_args).
    type: list
    elements: str
    default: []
  chdir:
    description: The folder the processes run in (the bundle, to which their output and perf paths are relative).
    type: path
    required: true
  requeue:
    description: Run once more the points whose kernel asked for a re-queue.
    type: bool
    default: true
  bank_s:
    description:
      - Seconds of sampling the experiment's earlier processes (an earlier call) were priced for and did not use
        (that call's RV(bank_s)); the first adaptive process starts with them.
    type: float
    default: 0
  stderr_log:
    description:
      - A file (relative to O(chdir)) that gets every process's stderr, one after another, each ending with a
        newline, mode 0600; written also when a process failed, before the module fails. Unset, none is written.
    type: path
  stderr_log_append:
    description: Append to O(stderr_log) (an adaptive sweep's refinement rounds) instead of replacing it.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Measure zero_queue
  fleetscope.fleet.fleetscope_points:
    points: "{{ __kernels_perf_points }}"
    extra_args: "{{ kernels_extra_args }}"
    chdir: "{{ __kernels_bundle }}"
  register: __kernels_measured
"""

RETURN = r"""
results:
  description:
    - One record per point, in the order given, as an Ansible loop over ansible.builtin.command registers them
      C(item) (the point), C(cmd), C(rc), C(stdout), C(stderr), C(start), C(end), C(delta) and C(failed).
  type: list
  elements: dict
  returned: always
requeued:
  description: The records of the second attempts, in the same form (empty when none ran).
  type: list
  elements: dict
  returned: always
bank_s:
  description: Seconds of sampling the processes were priced for and left unused, for the experiment's next call.
  type: float
  returned: with O(points)
experiments:
  description:
    - One outcome per experiment of O(experiments), in their order, C(name), C(results), C(requeued) and
      C(bank_s) as above, C(start) and C(end) (the host's clock, seconds since the epoch), C(failed), and
      C(msg) where it failed (what the module would have failed with for that experiment alone).
  type: list
  elements: dict
  returned: with O(experiments)
"""

import datetime
import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.fleetscope.fleet.plugins.module_utils.kernel_points import BANK_MAX_S, kernel_status, run_points


def runner(module, chdir):
    """run(argv) -> the record ansible.builtin.command returns for that argv."""

    def run(argv):
        started = datetime.datetime.now()
        record = {"cmd": argv, "changed": True}
        try:
            rc, stdout, stderr = module.run_command(argv, cwd=chdir, handle_exceptions=False,
                                                    environ_update={"FLEETSCOPE_KERNELS_EXIT_NOTE": "1"})
        except OSError as error:  # what ansible.builtin.command reports for an argv that cannot start
            rc, stdout, stderr = error.errno or 2, "", ""
            record["msg"] = f"[Errno {error.errno}] {error.strerror}"
        ended = datetime.datetime.now()
        record.update(rc=rc, stdout=stdout.rstrip("\r\n"), stderr=stderr.rstrip("\r\n"),
                      start=str(started), end=str(ended), delta=str(ended - started))
        return record

    return run


def write_stderr_log(path, records, append):
    """Each process's stderr, in the order they ran, as the kernels role kept them: joined by newlines, one at the
    end (a call with no process writes that newline alone, and appends nothing)."""
    if append and not records:
        return
    text = "\n".join(record.get("stderr") or "" for record in records) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as log:
        log.write(text)
    os.chmod(path, 0o600)


def make_perf_folders(chdir, points):
    """Each point's perf CSV folder, mode 0700; what could not be made, in words, or None."""
    for point in points:
        if not isinstance(point.get("label"), str) or not isinstance(point.get("argv"), list) or not point["argv"]:
            return f"each point needs a label and a non-empty argv: {point!r}"
        raw = point.get("raw")
        if raw:
            folder = os.path.join(chdir, os.path.dirname(raw["path"]))
            try:
                os.makedirs(folder, mode=0o700, exist_ok=True)
                os.chmod(folder, 0o700)
            except OSError as error:
                return f"cannot make the perf folder {folder}: {error}"
    return None


def measure(module, points, bank_s, stderr_log, append):
    """One experiment's processes (run_points), its stderr log written: (outcome, why it failed or None)."""
    chdir = module.params["chdir"]
    problem = make_perf_folders(chdir, points)
    if problem:
        return {"changed": False, "results": [], "requeued": [], "bank_s": 0.0}, problem
    results, requeued, bank_s = run_points(runner(module, chdir), points,
                                           [str(arg) for arg in module.params["extra_args"]],
                                           module.params["requeue"], bank_s)
    outcome = {"changed": bool(results), "results": results, "requeued": requeued, "bank_s": bank_s}
    if stderr_log:
        log = os.path.join(chdir, stderr_log)
        try:
            write_stderr_log(log, results + requeued, append)
        except OSError as error:
            return outcome, f"cannot write the kernels' stderr to {log}: {error}"
    failed = [record for record in results + requeued if record["failed"]]
    if failed:
        return outcome, (f"{len(failed)} of {len(results) + len(requeued)} processes failed: "
                         + "; ".join(f"{record['item']['label']}: {kernel_status(record)}" for record in failed))
    return outcome, None


def main() -> None:
    module = AnsibleModule(argument_spec={"points": {"type": "list", "elements": "dict"},
                                          "experiments": {"type": "list", "elements": "dict"},
                                          "extra_args": {"type": "list", "elements": "str", "default": []},
                                          "chdir": {"type": "path", "required": True},
                                          "requeue": {"type": "bool", "default": True},
                                          "bank_s": {"type": "float", "default": 0.0},
                                          "stderr_log": {"type": "path"},
                                          "stderr_log_append": {"type": "bool", "default": False}},
                           required_one_of=[("points", "experiments")],
                           mutually_exclusive=[("points", "experiments")])
    experiments = module.params["experiments"]
    if experiments is not None:
        for entry in experiments:
            if (not isinstance(entry.get("name"), str) or not isinstance(entry.get("points"), list)
                    or not isinstance(entry.get("stderr_log"), str)):
                module.fail_json(msg=f"each experiment needs a name, a list of points and a stderr_log: {entry!r}",
                                 experiments=[])
        outcomes = []
        for entry in experiments:
            started = time.time()
            outcome, problem = measure(module, entry["points"], 0.0, entry["stderr_log"], False)
            outcomes.append({**outcome, "name": entry["name"], "start": started, "end": time.time(),
                             "failed": problem is not None, **({"msg": problem} if problem else {})})
        module.exit_json(changed=any(outcome["changed"] for outcome in outcomes), experiments=outcomes)
    if not 0.0 <= module.params["bank_s"] <= BANK_MAX_S:
        module.fail_json(msg=f"bank_s {module.params['bank_s']!r} is not a number of seconds from 0 to {BANK_MAX_S:g}",
                         results=[], requeued=[], bank_s=0.0)
    outcome, problem = measure(module, module.params["points"], module.params["bank_s"], module.params["stderr_log"],
                               module.params["stderr_log_append"])
    if problem:
        module.fail_json(msg=problem, **outcome)
    module.exit_json(**outcome)


if __name__ == "__main__":
    main()
