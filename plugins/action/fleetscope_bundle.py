"""The controller's side of fleetscope_bundle: the module's own code, run in this process.

The bundle is unpacked (or a failed manifest written) on the controller, so the module needs no
connection: as a module delegated to localhost each call started a Python process and shipped the module
to it, about 0.5 s of the controller's CPU a host in a lab run. Here the module file is loaded by path (this
plugin may run from the repository or an installed collection) and its `run` takes the task's arguments,
checked against the module's own argument spec: one piece of code for the unpacking and its refusals,
whichever way it is called.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

_PATH = Path(__file__).resolve().parents[1] / "modules" / "fleetscope_bundle.py"


def bundle_module():
    spec = importlib.util.spec_from_file_location("fleetscope_bundle_module", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        if self._task.check_mode:  # as Ansible skips a module without check-mode support: it writes nothing
            return {**result, "skipped": True, "changed": False,
                    "msg": "fleetscope_bundle writes the bundle; it does not run in check mode"}
        module = bundle_module()
        checked = ArgumentSpecValidator(module.ARGUMENT_SPEC, **module.ARGUMENT_RULES).validate(self._task.args)
        if checked.error_messages:
            return {**result, "failed": True, "changed": False, "msg": "; ".join(checked.error_messages)}
        return {**result, **module.run(checked.validated_parameters)}
