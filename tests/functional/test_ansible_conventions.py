"""fleetscope as an Ansible user expects it: the experiments are real tags (--list-tags, --list-tasks),
and the collection built by ansible-galaxy, installed elsewhere, runs against this machine with an
inventory outside the repository whose groups override the fleet_* defaults. The run is light (the smt
experiment, a recorded skip on a host without SMT siblings, and one tiny workload)."""

from __future__ import annotations

import json
import os
import re
import subprocess

import duckdb
import pytest

from helpers import BIN, PROJECT, knob_values, scratch_leftovers

pytestmark = pytest.mark.functional

FAMILIES = {"latency", "bandwidth", "compute", "cpu_os_io", "storage", "mlc", "workloads"}
EXPERIMENTS = {"latency_sweep", "zero_queue", "pattern_stride", "tlb", "mlp", "write_cost", "c2c", "affinity", "smt",
               "aio", "bandwidth_sweep", "stride_bandwidth", "rw_mix", "thread_sweep", "loaded_latency", "saxpy",
               "prefetch", "fio", "numa_matrix", "core_clock", "peak_flops"}


def ansible(tool: str, *argv: str, cwd=PROJECT, env: dict | None = None, timeout: int = 120):
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", ANSIBLE_NOCOLOR="1", **(env or {}))
    return subprocess.run([str(BIN / tool), *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def selected(listing: str) -> set[str]:
    """The experiments whose selection task a --list-tasks listing shows."""
    return set(re.findall(r"fleet : Select (\w+) ", listing))


def test_list_tags_shows_every_experiment_and_family():
    proc = ansible("ansible-playbook", "site.yml", "--list-tags")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tags = {tag for line in re.findall(r"TASK TAGS: \[([^\]]*)\]", proc.stdout) for tag in line.split(", ")}
    assert FAMILIES | EXPERIMENTS <= tags, sorted(FAMILIES | EXPERIMENTS - tags)


@pytest.mark.parametrize("argv, expected", [
    (["--tags", "latency"], {"latency_sweep", "zero_queue", "pattern_stride", "tlb", "mlp", "write_cost", "c2c",
                            "numa_matrix"}),
    (["--tags", "tlb,mlp"], {"tlb", "mlp"}),
    (["--tags", "bandwidth", "--skip-tags", "prefetch,mlc"],
     {"bandwidth", "stride_bandwidth", "rw_mix", "thread_sweep", "loaded_latency", "saxpy"}),
    (["--skip-tags", "latency,bandwidth,cpu_os_io"], {"fio", "workloads", "core_clock", "peak_flops"}),
    (["--tags", "compute"], {"core_clock", "peak_flops"}),
])
def test_list_tasks_shows_what_a_tag_selection_runs(argv, expected):
    proc = ansible("ansible-playbook", "site.yml", "--list-tasks", *argv)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert selected(proc.stdout) == expected
    # Tuning, the build, the warehouse and the report run whatever the selection (restore and collect
    # too: they are the block's `always:`, which Ansible's listing does not show).
    for always in ("tuning : Take the host's lock", "kernels : Unpack and compile the kernel suite", "Ingest results/",
                   "Render reports/"):
        assert always in proc.stdout, always


INVENTORY = """\
# A lab inventory outside the repository: groups nested two deep, each setting variables.
all:
  children:
    lab:
      vars:
        fleet_profile: full               # overridden by the child group below
        fleet_workloads:                  # only the parent group sets it
          - {name: noop, command: [/bin/true]}
      children:
        rack_a:
          vars:
            fleet_profile: standard       # the child group wins over its parent and the role default
          hosts:
            localhost:
              ansible_connection: local
              ansible_python_interpreter: "{{ ansible_playbook_python }}"
"""


def test_installed_collection_runs_with_an_out_of_tree_inventory(tmp_path, knobs_unchanged):
    dist, collections, work = tmp_path / "dist", tmp_path / "collections", tmp_path / "work"
    work.mkdir()
    build = ansible("ansible-galaxy", "collection", "build", "--output-path", str(dist))
    assert build.returncode == 0, build.stdout + build.stderr
    (archive,) = dist.glob("fleetscope-fleet-*.tar.gz")
    # Installed from elsewhere: in the repository, ansible.cfg already names it (collections/ links to it).
    install = ansible("ansible-galaxy", "collection", "install", "-p", str(collections), str(archive), cwd=work)
    assert install.returncode == 0, install.stdout + install.stderr
    installed = collections / "ansible_collections" / "fleetscope" / "fleet"
    assert (installed / "playbooks" / "site.yml").is_file() and (installed / "roles" / "fleet" / "meta" / "main.yml").is_file()
    # Of tests/ only ansible-test's sanity ignore file ships (ansible-test reads it from the installed tree).
    shipped_tests = {path.relative_to(installed).as_posix() for path in (installed / "tests").rglob("*") if path.is_file()}
    assert shipped_tests <= {f"tests/sanity/{name.name}" for name in (PROJECT / "tests" / "sanity").glob("ignore-*.txt")}, shipped_tests
    assert not (installed / ".venv").exists()

    inventory = tmp_path / "lab.yml"
    inventory.write_text(INVENTORY)
    # Run from a directory with no ansible.cfg: the collection must not lean on the repository's. The
    # outputs go under the working directory (fleet_project_dir's default).
    env = {"ANSIBLE_COLLECTIONS_PATH": str(collections), "PWD": str(work)}  # PWD: as a shell started in work/
    listing = ansible("ansible-playbook", "-i", str(inventory), "fleetscope.fleet.site", "--list-tags", cwd=work, env=env)
    assert listing.returncode == 0, listing.stdout + listing.stderr
    assert "smt" in listing.stdout and "latency" in listing.stdout
    proc = ansible("ansible-playbook", "-i", str(inventory), "fleetscope.fleet.site", "--tags", "smt,workloads",
                   cwd=work, env=env, timeout=900)
    (tmp_path / "run.log").write_text(proc.stdout + proc.stderr)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]

    (manifest_path,) = (work / "results").glob("*/localhost/manifest.json")
    manifest = json.loads(manifest_path.read_text())
    assert manifest["profile"] == "standard"
    assert {"lab", "rack_a"} <= set(manifest["inventory_groups"])
    experiments = {entry["name"]: entry["status"] for entry in manifest["experiments"]}
    assert set(experiments) == {"smt", "workloads"}, experiments
    assert experiments["workloads"] == "ok", manifest["experiments"]
    with duckdb.connect(str(work / "warehouse" / "fleet.duckdb"), read_only=True) as db:
        assert db.execute("select count(*) from workload_profile where workload = 'noop'").fetchone()[0] >= 1
    assert (work / "reports" / "localhost.html").is_file() and (work / "reports" / "index.html").is_file()
    assert knob_values() == knobs_unchanged and not scratch_leftovers()
