"""The controller's checks of one host's inputs, in one task (the module of the same name holds its documentation).

Each check was a task of its own (an assert, or validate_argument_spec looped over seven roles): about 1.2 s of
the controller's CPU a host, for forks and templating, in a lab run. Here they run in the order they had (whether
the fleet_* settings were loaded, then `settings_role`'s argument spec for them, as the play's first tasks checked
them), on the same values (the task's variables, templated as validate_argument_spec templates them; the host's
variables as hostvars gives them to the negative and unknown-variable checks), and the first check that finds a
problem fails the host with its messages joined by '; ', as its assert did.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import yaml
from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.plugins.test.core import version_compare

RUN_ID = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}\Z")
DRAM_PEAK_MAX_GBPS = 1_000_000
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _filters(name: str):
    """A module of the collection's filter plugins, loaded by path (this plugin may run from the repository or an
    installed collection)."""
    path = Path(__file__).resolve().parents[1] / "filter" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"fleetscope_preflight_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def role_options(roles_dir: str, roles: list[str]) -> dict[str, dict]:
    """Each role's options from its meta/argument_specs.yml (entry point main), by role name."""
    options = {}
    for role in roles:
        with open(Path(roles_dir) / role / "meta" / "argument_specs.yml", encoding="utf-8") as handle:
            options[role] = yaml.load(handle, Loader=LOADER)["argument_specs"]["main"]["options"]
    return options


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def _var(self, task_vars: dict, name: str, default=None):
        return self._templar.template(task_vars[name]) if name in task_vars else default

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = self._task.args
        for required in ("roles_dir", "roles", "min_ansible"):
            if required not in args:
                raise AnsibleActionFail(f"fleetscope_preflight needs {required}")
        settings = args.get("settings_role")
        options = role_options(args["roles_dir"], [*args["roles"], *([settings] if settings else [])])
        settings_options = {settings: options.pop(settings)} if settings else {}
        inputs, workloads = _filters("inputs"), _filters("workloads_input")
        host = task_vars["hostvars"][task_vars["inventory_hostname"]]
        checks = (
            ("settings_loaded", lambda: self._settings_loaded(task_vars)),
            ("fleet_settings", lambda: self._fleet_settings(task_vars, settings_options)),
            ("ansible_version", lambda: self._ansible_version(task_vars["ansible_version"]["full"],
                                                              str(args["min_ansible"]))),
            ("role_inputs", lambda: self._role_inputs(task_vars, options)),
            ("workloads", lambda: workloads.preflight_workload_problems(self._var(task_vars, "fleet_workloads") or [])),
            ("dram_peak", lambda: self._dram_peak(self._var(task_vars, "fleet_dram_peak_gbps"))),
            ("fio_device", lambda: self._fio_device(self._var(task_vars, "fio_device"),
                                                    self._var(task_vars, "fio_destructive_ok", False))),
            ("negative", lambda: inputs.preflight_negative_inputs(host, options)),
            ("unknown", lambda: inputs.preflight_unknown_role_variables(host.keys(), options)),
            ("run_id", lambda: (self._run_id(self._var(task_vars, "fleet_run_id"))
                                if "fleet_run_id" in task_vars else [])),
        )
        for name, check in checks:
            problems = check()
            if problems:
                result.update(failed=True, msg="; ".join(problems), check=name)
                return result
        result.update(changed=False, msg=f"inputs of {', '.join(options)} checked", roles=list(options))
        return result

    @staticmethod
    def _settings_loaded(task_vars: dict) -> list[str]:
        if "fleet_profile" in task_vars and "fleet_state_file" in task_vars:
            return []
        return ["The fleet_* settings are missing: run the playbooks of site.yml, whose plays load them from the fleet "
                "role's defaults (roles/fleet/defaults/main.yml)."]

    def _fleet_settings(self, task_vars: dict, options: dict) -> list[str]:
        """The fleet_* settings (the argument spec of `settings_role`, the preflight role's own) first, one line per
        mistake where the role's automatic validation printed the whole argument spec."""
        errors = self._role_inputs(task_vars, options)
        return errors and errors[:-1] + [f"{errors[-1]} (the fleet_* settings are described in roles/fleet/README.md; "
                                         "set them in the inventory or with -e)"]

    @staticmethod
    def _ansible_version(running: str, minimum: str) -> list[str]:
        if version_compare(running, minimum, ">="):
            return []
        return [f"fleetscope needs ansible-core >= {minimum}, this is {running}. Run through `make run` (it builds "
                ".venv with the locked versions) or install requirements.lock."]

    def _role_inputs(self, task_vars: dict, options: dict) -> list[str]:
        errors = []
        for spec in options.values():  # as validate_argument_spec reads a role's inputs from the task's variables
            given = self._templar.template({name: task_vars[name] for name in spec if name in task_vars})
            errors += ArgumentSpecValidator(spec).validate(given, validate_role_argument_spec=True).error_messages
        return errors

    @staticmethod
    def _dram_peak(peak) -> list[str]:
        try:
            fine = peak is None or 0 < float(peak) <= DRAM_PEAK_MAX_GBPS
        except (TypeError, ValueError):
            fine = False
        return [] if fine else [
            f"fleet_dram_peak_gbps={peak} is no DRAM peak: give the host's theoretical bandwidth in GB/s (channels x "
            "MT/s x 8 B, e.g. 307.2 for 8 channels of DDR5-4800), or leave it unset to read it from SMBIOS."]

    @staticmethod
    def _fio_device(device, destructive_ok) -> list[str]:
        if not device or boolean(destructive_ok, strict=False):
            return []
        return [f"fio_device={device} names a raw device but fio_destructive_ok is not true: fio would overwrite its "
                "first fio_size bytes. Set fio_destructive_ok: true for this host to allow it, or remove fio_device "
                "to measure a scratch file."]

    @staticmethod
    def _run_id(run_id) -> list[str]:
        if isinstance(run_id, str) and RUN_ID.match(run_id):
            return []
        return [f"fleet_run_id={run_id} is not a fleetscope run id (like 20261122T034500Z-a1b2c3)"]
