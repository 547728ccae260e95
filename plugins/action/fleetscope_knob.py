"""The controller's side of fleetscope_knob: who holds a host, and whether that run is still alive.

A run is an ansible-playbook process on a controller. The module's lock names it (`owner`): the
controller's machine id and boot id, the process id and the process's start time, so a recycled pid
is not mistaken for the run. Every call of the module carries this run's owner; when the host is held
by another run (`held_by`), `apply` and `recover` ask whether that run is alive:

  dead     same controller, and its process is gone (or the controller rebooted since): the lock is
           taken over (apply keeps the dead run's originals and restores them at the end);
  alive    same controller, and its process is still running: refused, naming it;
  unknown  another controller (or a state file from an older fleetscope, with no owner): this one
           cannot see its processes, so it is treated as alive; `break_lock: <its run id>` (the
           variable tuning_break_lock of playbooks/restore.yml) says the operator knows it is over.

`restore` and `release` only ever act on this run's own lock: a run refused in tune restores nothing.
"""

from __future__ import annotations

import datetime
import multiprocessing
import os
import socket

from ansible.plugins.action import ActionBase

STAT = "/proc/{pid}/stat"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read().strip() or None
    except OSError:
        return None


def process_start(pid) -> int | None:
    """When process `pid` started (clock ticks after boot), None when there is no such process."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    stat = _read(STAT.format(pid=pid))
    # the command name (field 2) may hold spaces and parentheses: fields after the last ')'
    return int(stat.rsplit(")", 1)[1].split()[19]) if stat else None


def run_owner() -> dict:
    """This run: the ansible-playbook process (the parent of the worker running this plugin)."""
    parent = multiprocessing.parent_process()
    pid = parent.pid if parent is not None else os.getpid()
    return {"controller": socket.gethostname(),
            "controller_id": _read("/etc/machine-id") or socket.gethostname(),
            "boot_id": _read("/proc/sys/kernel/random/boot_id"), "pid": pid, "pid_start": process_start(pid)}


def holder_state(owner, me: dict) -> str:
    """'alive', 'dead' or 'unknown' (see the module's docstring)."""
    if not isinstance(owner, dict) or owner.get("controller_id") != me["controller_id"] or me["pid_start"] is None:
        return "unknown"
    if owner.get("boot_id") != me["boot_id"]:
        return "dead"
    return "alive" if process_start(owner.get("pid")) == owner.get("pid_start") else "dead"


def describe(held_by: dict) -> str:
    owner = held_by.get("owner")
    if not owner:
        return f"run {held_by['run_id']} (no owner recorded: a state file of an older fleetscope)"
    return (f"run {held_by['run_id']} (ansible-playbook pid {owner['pid']} on controller {owner['controller']}, "
            f"since {held_by.get('locked_at')})")


def refusal(host: str, held_by: dict, verdict: str, state_file: str, action: str) -> str:
    text = (f"{host} is in use by {describe(held_by)}: {state_file} is its lock and holds the original knob "
            f"values. Nothing on {host} was changed.")
    if verdict == "alive":
        text += " That run is still running: wait for it to finish, or stop it (it puts the host back itself)."
        if action == "recover":
            text += " playbooks/restore.yml leaves the knobs and the scratch directory of a running run alone."
        return text
    controller = (held_by.get("owner") or {}).get("controller")
    return (text + " This controller cannot tell whether that run still runs"
            + (f" (it was started from {controller})" if controller else "")
            + f". If it is over, put the host back with: ansible-playbook playbooks/restore.yml --limit {host} "
            f"-e tuning_break_lock={held_by['run_id']}")


def _utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class ActionModule(ActionBase):
    """`fact: <name>` (the controller's, not the module's) keeps the knobs' record as the host's fact <name> where
    the call returns one, and apply's take-over of a dead run's lock is a warning: the tuning role's apply and
    restore are one task a host each, where keeping the record and saying so were tasks of their own.

    apply's `started_fact: <name>` sets the host's fact <name> to the time (UTC) this call began, when measuring
    started; its `create_scratch: {root, folders}` then creates the run's scratch directory under the lock just taken
    (the module fleetscope_scratch, whose facts fleet_scratch_dir and fleet_hugepages_free it passes on; not in check
    mode). A scratch directory that cannot be made fails the task with `locked` kept true, so the knobs just applied
    are restored. Each was a task a host of its own.

    release's `stage_error` (the stage that failed and why) fails the task once the host is released, naming the
    host: the measure play's last word on a host whose stage failed, where it was a task a host of its own, skipped
    on every host that measured. release acts only on this run's own lock, so it runs on a host refused in tune
    too, and fails it with its error."""

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        break_lock = args.pop("break_lock", None)
        fact = args.pop("fact", None)
        started_fact = args.pop("started_fact", None)
        create_scratch = args.pop("create_scratch", None)
        stage_error = args.pop("stage_error", None)
        started = _utc_now()
        me = run_owner()
        args["owner"] = me
        outcome = self._execute_module(module_name="fleetscope_knob", module_args=args, task_vars=task_vars)
        held_by = outcome.get("held_by")
        if not outcome.get("failed") and held_by and args["action"] in ("apply", "recover"):
            verdict = holder_state(held_by.get("owner"), me)
            if not (verdict == "dead" or (break_lock is not None and break_lock == held_by["run_id"])):
                return {**result, "failed": True, "changed": False, "knobs": [], "held_by": held_by,
                        "holder_state": verdict, "msg": refusal(task_vars["inventory_hostname"], held_by, verdict,
                                                                args["state_file"], args["action"])}
            outcome = self._execute_module(module_name="fleetscope_knob", module_args={**args, "takeover": held_by},
                                           task_vars=task_vars)
        if not outcome.get("failed"):
            facts = {}
            if fact and outcome.get("knobs"):
                facts[fact] = outcome["knobs"]
            if args["action"] == "apply":
                if started_fact:
                    facts[started_fact] = started
                if outcome.get("took_over"):
                    outcome.setdefault("warnings", []).append(
                        f"{args['state_file']} was left by run {outcome['took_over']['run_id']}, which is no longer "
                        "running: this run took its lock over, and its original values are kept and will be restored "
                        "at the end of this run.")
                if create_scratch is not None and outcome.get("locked") and not self._task.check_mode:
                    made = self._scratch(create_scratch, args["run_id"], outcome, task_vars)
                    if made.get("failed"):
                        return {**result, **outcome, "failed": True, "changed": True, "msg": made.get("msg")}
                    facts.update(made.pop("ansible_facts", {}))
                    outcome.setdefault("warnings", []).extend(made.pop("warnings", None) or [])
                    outcome["scratch"] = {key: made.get(key) for key in ("path", "removed")}
            if facts:
                outcome["ansible_facts"] = facts
        if stage_error:
            host = task_vars["inventory_hostname"]
            return {**result, **outcome, "failed": True,
                    "msg": f"{host}: {stage_error}" + (f"; {outcome['msg']}" if outcome.get("failed") else "")}
        return {**result, **outcome}

    def _scratch(self, scratch: dict, run_id: str, applied: dict, task_vars) -> dict:
        module_args = {"root": scratch["root"], "run_id": run_id, "folders": scratch.get("folders") or []}
        if applied.get("took_over"):
            module_args["taken_over_run_id"] = applied["took_over"]["run_id"]
        return self._execute_module(module_name="fleetscope_scratch", module_args=module_args,
                                    task_vars=task_vars)
