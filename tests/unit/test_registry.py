"""One catalogue of experiments (fleetscope/catalog.py): every other place that lists them is held to it.

The Python side reads the catalogue; what cannot (the kernel registry, the Ansible roles, the READMEs) is
compared with it here, place by place: the kernels' `--list` (KERNELS in kernels/src/registry.c), the
kernels role's experiment table, task files, switches and argument specs, the tag selection of the fleet
role, the other roles' switches, the host page's sections, the warehouse's views and derived tables, and the
README tables. A disagreement names the place and the missing and extra experiments.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from fleetscope import catalog
from fleetscope.analyze.derive import DERIVED_TABLES
from fleetscope.report.sections import SECTIONS
from fleetscope.store.warehouse import open_warehouse

PROJECT = Path(__file__).resolve().parents[2]
ROLES = PROJECT / "roles"
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


def test_every_place_names_the_catalogue_s_experiments(kernel_list, warehouse_views):
    every = set(catalog.NAMES)
    kernels_role = {experiment.name for experiment in catalog.EXPERIMENTS if experiment.role == "kernels"}
    problems = []

    # The kernel registry: the experiments each kernel feeds are the catalogue's.
    feeds = {name: sorted(kernel for kernel, fed in kernel_list.items() if name in fed)
             for name in {name for fed in kernel_list.values() for name in fed}}
    problems += differences("fleetscope-kernels --list", set(feeds),
                            {experiment.name for experiment in catalog.EXPERIMENTS if experiment.kernels})
    problems += [f"fleetscope-kernels --list: {name} is fed by {feeds[name]}, the catalogue says "
                 f"{sorted(catalog.experiment(name).kernels)}"
                 for name in set(feeds) & every if feeds[name] != sorted(catalog.experiment(name).kernels)]

    # The kernels role: its experiment table is its one Ansible-side list; a task file per entry, and the
    # switch of each entry follows from its name. Defaults and argument specs cannot be generated from the
    # table, so they are held to the catalogue here.
    table = yaml_file(ROLES / "kernels" / "vars" / "main.yml")["__kernels_experiments"]
    problems += differences("roles/kernels/vars/main.yml __kernels_experiments", set(table), kernels_role)
    # A task file for each entry that says it has tasks of its own (`tasks: true`); the others run in batches
    # (tasks/run_batch.yml), so a file of theirs would never run.
    task_files = {path.stem for path in (ROLES / "kernels" / "tasks" / "experiments").glob("*.yml")}
    problems += differences("roles/kernels/tasks/experiments/", task_files,
                            {name for name, entry in table.items() if entry.get("tasks")})
    problems += [f"__kernels_experiments.{name}: {key} is {entry[key]!r}, not a boolean"
                 for name, entry in table.items() for key in ("tasks", "shuffle")
                 if key in entry and not isinstance(entry[key], bool)]
    defaults = {match.group(1) for key in yaml_file(ROLES / "kernels" / "defaults" / "main.yml")
                if (match := _ENABLED.match(key))}
    problems += differences("roles/kernels/defaults/main.yml kernels_<name>_enabled", defaults, kernels_role)
    options = yaml_file(ROLES / "kernels" / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]
    specs = {match.group(1) for key in options if (match := _ENABLED.match(key))}
    problems += differences("roles/kernels/meta/argument_specs.yml kernels_<name>_enabled", specs, kernels_role)

    # The tags: one selection task per experiment (roles/fleet/tasks/select.yml), tagged as the catalogue
    # says; the kernels role's README lists the same tags.
    select_tags = {}
    for task in yaml_file(ROLES / "fleet" / "tasks" / "select.yml"):
        if "always" not in task["tags"]:
            (name,) = _SELECTED.findall(task["ansible.builtin.set_fact"]["fleet_tagged_experiments"])
            select_tags[name] = task["tags"]
    problems += differences("roles/fleet/tasks/select.yml", set(select_tags), every)
    problems += [f"roles/fleet/tasks/select.yml: {name} is tagged {tags}, the catalogue says "
                 f"{list(catalog.experiment(name).tags)}"
                 for name, tags in select_tags.items() if name in every and tags != list(catalog.experiment(name).tags)]
    readme_table = markdown_table(ROLES / "kernels" / "README.md", "| experiment | tags | what it measures |")
    readme_tags = {code_names(row[0])[0]: code_names(row[1]) for row in readme_table}
    problems += differences("roles/kernels/README.md experiment table", set(readme_tags), kernels_role)
    problems += [f"roles/kernels/README.md: tags of {name} are {tags}, the catalogue's "
                 f"{list(catalog.experiment(name).tags)}"
                 for name, tags in readme_tags.items()
                 if name in every and sorted(tags) != sorted(catalog.experiment(name).tags)]

    # Experiments of other roles: each role has its switch in defaults and argument specs.
    for experiment in catalog.EXPERIMENTS:
        if experiment.role != "kernels":
            role = ROLES / experiment.role
            switch = f"{experiment.role}_enabled"
            if switch not in (yaml_file(role / "defaults" / "main.yml") or {}):
                problems.append(f"roles/{experiment.role}/defaults/main.yml: no {switch}")
            if switch not in yaml_file(role / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]:
                problems.append(f"roles/{experiment.role}/meta/argument_specs.yml: no {switch}")

    # The report: every experiment has a section on the host page; each section reads one of its experiment's
    # views, every view of the catalogue is read by a section, and each exists in a freshly migrated warehouse.
    problems += differences("report sections (fleetscope.report.sections.SECTIONS)",
                            {section.experiment for section in SECTIONS}, every)
    read = set()
    for section in SECTIONS:
        for view in filter(None, (section.view, section.extra_view)):
            read.add((section.experiment, view))
            if section.experiment in every and view not in catalog.experiment(section.experiment).views:
                problems.append(f"section {section.id} reads view {view}, not one of {section.experiment}'s in the "
                                "catalogue")
    for experiment in catalog.EXPERIMENTS:
        for view in experiment.views:
            if (experiment.name, view) not in read:
                problems.append(f"catalogue: {experiment.name}'s view {view} is read by no section")
            if view not in warehouse_views:
                problems.append(f"catalogue: {experiment.name}'s view {view} is not in warehouse/views/")
        problems += [f"catalogue: {experiment.name} feeds {table}, which fleetscope.analyze.derive does not compute"
                     for table in experiment.derived if table not in DERIVED_TABLES]
    if list(catalog.NAMES) != sorted(set(catalog.NAMES), key=list(catalog.NAMES).index):
        problems.append("catalogue: an experiment is named twice")

    # The READMEs: the project's experiment table lists every experiment and the kernels that feed it;
    # kernels/README.md lists every kernel with the experiments it feeds.
    experiments_table = markdown_table(PROJECT / "README.md", "## Experiments")
    readme_kernels = {code_names(row[0])[0]: sorted(name for name in code_names(row[1]) if name in kernel_list)
                      for row in experiments_table}
    problems += differences("README.md experiment table", set(readme_kernels), every)
    problems += [f"README.md: {name} is fed by kernels {kernels}, the catalogue says "
                 f"{sorted(catalog.experiment(name).kernels)}"
                 for name, kernels in readme_kernels.items()
                 if name in every and kernels != sorted(catalog.experiment(name).kernels)]
    kernels_table = {code_names(row[0])[0]: code_names(row[1])
                     for row in markdown_table(PROJECT / "kernels" / "README.md", "## Kernels")}
    problems += differences("kernels/README.md kernel table", set(kernels_table), set(kernel_list))
    problems += [f"kernels/README.md: kernel {kernel} feeds {kernel_list[kernel]}, the table says {named}"
                 for kernel, named in kernels_table.items() if kernel in kernel_list and named != kernel_list[kernel]]

    assert not problems, "the experiment lists disagree with fleetscope/catalog.py:\n" + "\n".join(problems)


def test_a_disagreement_names_the_place_and_the_names():
    assert differences("somewhere", {"tlb", "tlb_sweep"}, {"tlb", "mlp"}) == ["somewhere: missing mlp; extra tlb_sweep"]
    assert differences("somewhere", {"tlb"}, {"tlb"}) == []
