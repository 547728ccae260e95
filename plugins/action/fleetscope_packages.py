"""Install the packages the experiments need that a host lacks, in one task (the module of the same name holds its
documentation).

Learning the OS family (setup), refusing a family fleetscope has no package names for, asking dpkg whether every
package is installed, and installing through apt or through the host's own package manager were five tasks a host,
three of them skipped on every run of a provisioned host: each a fork and templating on the controller. Here the
controller decides; the host sees setup's minimal facts (kept as the host's facts, as the setup task kept them: the
fio role reads the OS family), then one command (dpkg-query) when nothing is missing, or the package manager's
module when something is.
"""

from __future__ import annotations

import re
import shlex

from ansible.plugins.action import ActionBase

# A name dpkg can answer for: a package name, with an architecture at most. A version (tar=1.34) or a pattern
# only apt can judge.
PLAIN = re.compile(r"[a-z0-9][a-z0-9.+-]*(:[a-z0-9]+)?\Z")


def to_install(family: str, table: dict, packages, extra) -> list[str] | None:
    """`packages` (provision_packages) where set, else the family's names from `table`, plus `extra`; None for a
    family `table` lacks when `packages` is not set."""
    if packages is None and family not in table:
        return None
    return [str(name) for name in (packages if packages is not None else table[family])] + [str(name) for name in extra]


def refusal(table: dict, facts: dict, family: str) -> str:
    return (f"fleetscope knows the package names of the {' and '.join(sorted(table))} families "
            f"(roles/provision/vars/main.yml); this host is {facts.get('ansible_distribution', '?')} "
            f"{facts.get('ansible_distribution_version', '')}, family {family}. Set provision_packages for this host "
            "or its group to this OS's names for: a C compiler (gcc), make, the C library headers, perf, dmidecode, "
            "util-linux, numactl, tar, kmod and fio (provision_packages: [] if they are installed already).")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        """With `snapshot` (fleetscope_facts' arguments), the environment snapshot is taken in the same task once the
        packages are in (perf among them, which the snapshot probes): the facts play's two tasks a host in one."""
        result = super().run(tmp, task_vars)
        outcome = self._provision(task_vars)
        snapshot = self._task.args.get("snapshot")
        if snapshot is None or outcome.get("failed") or outcome.get("unreachable"):
            return {**result, **outcome}
        taken = self._execute_module(module_name="fleetscope_facts", module_args=snapshot, task_vars=task_vars)
        if taken.get("failed") or taken.get("unreachable"):
            return {**result, **outcome, **{key: taken[key] for key in ("failed", "unreachable") if key in taken},
                    "msg": f"the packages are in, but the environment snapshot failed: {taken.get('msg', '')}"}
        return {**result, **outcome, "ansible_facts": {**outcome.get("ansible_facts", {}), **taken.get("ansible_facts", {})},
                "warnings": list(outcome.get("warnings") or []) + list(taken.get("warnings") or [])}

    def _provision(self, task_vars) -> dict:
        result = {}
        args = self._task.args
        setup = self._execute_module(module_name="ansible.legacy.setup", module_args={"gather_subset": ["min"]},
                                     task_vars=task_vars)
        if setup.get("failed") or setup.get("unreachable"):
            return {**result, **setup}
        facts = setup.get("ansible_facts") or {}
        result["ansible_facts"] = facts
        family = args.get("family") or facts.get("ansible_os_family") or "unknown"
        table = args.get("table") or {}
        names = to_install(family, table, args.get("packages"), args.get("extra") or [])
        if names is None:
            return {**result, "failed": True, "changed": False, "msg": refusal(table, facts, family)}
        if not names:
            return {**result, "changed": False, "msg": "no package to install (provision_packages is [])"}
        if family == "Debian":
            if all(PLAIN.match(name) for name in names) and self._installed(names):
                return {**result, "changed": False, "installed_already": True,
                        "msg": f"dpkg has every package installed: {', '.join(names)}"}
            module, module_args = "ansible.legacy.apt", {
                "name": names, "state": "present", "update_cache": True,
                "cache_valid_time": int(args.get("apt_cache_valid_time", 86400))}
        else:
            manager = str(facts.get("ansible_pkg_mgr") or "unknown")
            if not re.fullmatch(r"[a-z0-9_]+", manager) or manager == "unknown":
                return {**result, "failed": True, "changed": False,
                        "msg": f"no package manager found on this host (ansible_pkg_mgr is {manager!r}) to install "
                               f"{', '.join(names)}: install them by hand and set provision_packages: []"}
            module, module_args = f"ansible.legacy.{manager}", {"name": names, "state": "present"}
        return {**result, "installed_already": False,
                **self._execute_module(module_name=module, module_args=module_args, task_vars=task_vars)}

    def _installed(self, names: list[str]) -> bool:
        """dpkg's database says every package is installed: milliseconds, where apt's own check opens its whole
        package cache (about 4 s of the host's CPU on every run). Read-only, so in check mode too."""
        command = shlex.join(["dpkg-query", "--show", "--showformat=${db:Status-Status}\n", *names])
        outcome = self._low_level_execute_command(command)
        lines = outcome.get("stdout", "").splitlines()
        return outcome.get("rc") == 0 and len(lines) == len(names) and all(line == "installed" for line in lines)
