"""One registry of experiments: every place that lists them names the same ones.

The kernel registry (`--list` of the built binary, from KERNELS in kernels/src/registry.c) is where an
experiment measured by a kernel comes from. Each other place is compared with what it should hold,
decided per place below; a disagreement names the place and the missing and extra experiments.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from fleetscope.report.sections import SECTIONS
from fleetscope.store.warehouse import open_warehouse

PROJECT = Path(__file__).resolve().parents[2]
ROLES = PROJECT / "roles"
# Experiments no kernel measures: external tools, each run by its own role with its own switch
# (`<name>_enabled` in roles/<name>/).
NOT_KERNELS = {"fio", "mlc"}
# Experiments a kernel measures but another role runs: the workloads role runs the `workload` kernel on the
# commands a user names (switch `workloads_enabled` in roles/workloads/), so the kernels role has no entry.
OTHER_ROLES = {"workloads"}
_ENABLED = re.compile(r"^kernels_(\w+)_enabled$")
_SELECTED = re.compile(r"\+ \['(\w+)'\]")


def differences(place: str, found: set[str], expected: set[str]) -> list[str]:
    """'<place>: missing a, b; extra c' where `found` is not `expected`, else nothing."""
    parts = [f"{label} {', '.join(sorted(names))}"
             for label, names in (("missing", expected - found), ("extra", found - expected)) if names]
    return [f"{place}: {'; '.join(parts)}"] if parts else []


def markdown_table(path: Path, start: str) -> list[list[str]]:
    """The body rows (cells, stripped) of the first table from the line `start` on (a heading, or the
    table's own header line) in a README."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = []
    for line in lines[lines.index(start):]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]  # after the header and the |---| line


def code_names(cell: str) -> list[str]:
    """The `code` spans of a table cell: `a`, `b` -> [a, b]."""
    return re.findall(r"`([^`]+)`", cell)


@pytest.fixture(scope="module")
def kernel_list(tmp_path_factory) -> dict[str, list[str]]:
    """kernel -> the experiments it feeds, from `--list` of a binary built from a copy of kernels/."""
    source = tmp_path_factory.mktemp("kernels") / "kernels"
    shutil.copytree(PROJECT / "kernels", source, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["make", "-s", "-j2", "-C", str(source)], check=True, capture_output=True, timeout=300)
    listing = subprocess.run([str(source / "build" / "fleetscope-kernels"), "--list"], check=True,
                             capture_output=True, text=True, timeout=60).stdout
    return {line.split()[0]: line.split()[1].split(",") for line in listing.splitlines() if line.strip()}


@pytest.fixture(scope="module")
def warehouse_views(tmp_path_factory) -> set[str]:
    with open_warehouse(tmp_path_factory.mktemp("warehouse") / "fleet.duckdb") as connection:
        return {name for (name,) in connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'VIEW'").fetchall()}


def yaml_file(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_every_place_names_the_same_experiments(kernel_list, warehouse_views):
    measured = {experiment for experiments in kernel_list.values() for experiment in experiments}
    every = measured | NOT_KERNELS
    kernels_role = measured - OTHER_ROLES
    problems = []

    # The kernels role: its experiment table is the one Ansible-side list; a task file per entry, and the
    # switch and tags of each entry follow from its name. Defaults and argument specs cannot be generated
    # from the table, so they are held to it here.
    table = yaml_file(ROLES / "kernels" / "vars" / "main.yml")["__kernels_experiments"]
    problems += differences("roles/kernels/vars/main.yml __kernels_experiments", set(table), kernels_role)
    for name, entry in table.items():
        if entry["enabled"].replace(" ", "") != f"{{{{kernels_{name}_enabled}}}}":
            problems.append(f"__kernels_experiments.{name}.enabled is {entry['enabled']!r}, "
                            f"not '{{{{ kernels_{name}_enabled }}}}'")
    task_files = {path.stem for path in (ROLES / "kernels" / "tasks" / "experiments").glob("*.yml")}
    problems += differences("roles/kernels/tasks/experiments/", task_files, kernels_role)
    defaults = {match.group(1) for key in yaml_file(ROLES / "kernels" / "defaults" / "main.yml")
                if (match := _ENABLED.match(key))}
    problems += differences("roles/kernels/defaults/main.yml kernels_<name>_enabled", defaults, kernels_role)
    options = yaml_file(ROLES / "kernels" / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]
    specs = {match.group(1) for key in options if (match := _ENABLED.match(key))}
    problems += differences("roles/kernels/meta/argument_specs.yml kernels_<name>_enabled", specs, kernels_role)
    # The tags: one selection task per experiment (roles/fleet/tasks/select.yml), tagged with its family
    # and its own name; the kernels role's README lists the same tags.
    select_tags = {}
    for task in yaml_file(ROLES / "fleet" / "tasks" / "select.yml"):
        if "always" not in task["tags"]:
            (name,) = _SELECTED.findall(task["ansible.builtin.set_fact"]["fleet_tagged_experiments"])
            select_tags[name] = task["tags"]
            if name not in task["tags"]:
                problems.append(f"roles/fleet/tasks/select.yml: the task of {name} is not tagged {name}")
    problems += differences("roles/fleet/tasks/select.yml", set(select_tags), every)
    readme_table = markdown_table(ROLES / "kernels" / "README.md", "| experiment | tags | what it measures |")
    readme_tags = {code_names(row[0])[0]: code_names(row[1]) for row in readme_table}
    problems += differences("roles/kernels/README.md experiment table", set(readme_tags), kernels_role)
    problems += [f"roles/kernels/README.md: tags of {name} are {readme_tags[name]}, select.yml's {select_tags[name]}"
                 for name in set(readme_tags) & set(select_tags) if sorted(readme_tags[name]) != sorted(select_tags[name])]

    # Experiments of other roles: each role has its switch in defaults and argument specs.
    for name in sorted(NOT_KERNELS | OTHER_ROLES):
        role = ROLES / name
        switch = f"{name}_enabled"
        if switch not in (yaml_file(role / "defaults" / "main.yml") or {}):
            problems.append(f"roles/{name}/defaults/main.yml: no {switch}")
        if switch not in yaml_file(role / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]:
            problems.append(f"roles/{name}/meta/argument_specs.yml: no {switch}")

    # The report: every experiment, kernel or not, has a section on the host page, and the views a section
    # reads exist in a freshly migrated warehouse.
    problems += differences("report sections (fleetscope.report.sections.SECTIONS)",
                            {section.experiment for section in SECTIONS}, every)
    for section in SECTIONS:
        for view in filter(None, (section.view, section.extra_view)):
            if view not in warehouse_views:
                problems.append(f"section {section.id} ({section.experiment}) reads view {view}: not in warehouse/views/")

    # The READMEs: the project's experiment table lists every experiment, and names the kernel that feeds
    # each kernel experiment; kernels/README.md lists every kernel with the experiments it feeds.
    experiments_table = markdown_table(PROJECT / "README.md", "## Experiments")
    # an experiment may be fed by more than one kernel (numa_matrix: chase and bandwidth)
    readme_kernels = {code_names(row[0])[0]: sorted(name for name in code_names(row[1]) if name in kernel_list)
                      for row in experiments_table}
    problems += differences("README.md experiment table", set(readme_kernels), every)
    feeds = {experiment: sorted(kernel for kernel, fed in kernel_list.items() if experiment in fed)
             for experiment in measured}
    problems += [f"README.md: {name} is fed by kernels {feeds[name]}, the table says {readme_kernels[name]}"
                 for name in set(readme_kernels) & measured if readme_kernels[name] != feeds[name]]
    kernels_table = {code_names(row[0])[0]: code_names(row[1])
                     for row in markdown_table(PROJECT / "kernels" / "README.md", "## Kernels")}
    problems += differences("kernels/README.md kernel table", set(kernels_table), set(kernel_list))
    problems += [f"kernels/README.md: kernel {kernel} feeds {kernel_list[kernel]}, the table says {named}"
                 for kernel, named in kernels_table.items() if kernel in kernel_list and named != kernel_list[kernel]]

    assert not problems, "the experiment lists disagree:\n" + "\n".join(problems)


def test_a_disagreement_names_the_place_and_the_names():
    assert differences("somewhere", {"tlb", "tlb_sweep"}, {"tlb", "mlp"}) == ["somewhere: missing mlp; extra tlb_sweep"]
    assert differences("somewhere", {"tlb"}, {"tlb"}) == []
