"""The controller's side of fleetscope_points: with `record`, the manifest's records of a batch in the same task.

Given `experiments` and `record` (`plan`, the host's plan; `settings`, as the filter batch_experiments takes them;
`cpu`, kernels_cpu), the module runs the batch on the host and this plugin appends each experiment's record (the
filter batch_records: measured, or failed with what failed) to the host's fact `fleet_batch_experiments`, and warns
of each experiment that failed, naming the host. Not to fleet_experiments, where every other experiment's record
goes: that list is set_fact's, and a fact an action plugin returns ranks below set_fact's, so the next read of
fleet_experiments would not see it (the manifest takes both lists, roles/collect). A module call that failed whole
(the module's own error, or a timeout) records every experiment of the batch as failed with that summary, and the
task does not fail: the other experiments and the restore go on, as the role's rescue did. Measuring, recording
and reporting were three tasks a host a batch (the report a skipped one where nothing failed).
"""

from __future__ import annotations

import importlib

from ansible.plugins.action import ActionBase


def _experiments_filter():
    """plugins/filter/experiments.py by its collection name: the module Ansible's plugin loader already loaded in
    this worker to template the task's arguments (the filter batch_experiments), not a second copy (loading it
    loads the planner, plan.py, too)."""
    return importlib.import_module("ansible_collections.fleetscope.fleet.plugins.filter.experiments")


class ActionModule(ActionBase):

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        record = args.pop("record", None)
        measured = self._execute_module(module_name="fleetscope_points", module_args=args, task_vars=task_vars)
        if record is None:
            return {**result, **measured}
        experiments = _experiments_filter()
        failure = experiments.failure_summary(measured) if measured.get("failed") else None
        records = experiments.batch_records(args["experiments"], measured.get("experiments"), record["plan"],
                                            record["settings"], record["cpu"], failure)
        host = task_vars["inventory_hostname"]
        return {**result, "changed": bool(measured.get("changed")), "experiments": measured.get("experiments"),
                **({"failure": failure} if failure is not None else {}),
                "ansible_facts": {"fleet_batch_experiments": list(task_vars.get("fleet_batch_experiments") or [])
                                  + records},
                "warnings": list(measured.get("warnings") or [])
                + [f"{host}: {entry['name']} failed: {entry['error']}" for entry in records if entry["status"] == "failed"]}
