"""A non-editable install works: the wheel built from this checkout carries the warehouse schema, the named
queries and the report templates, and `fleetscope ingest`, `report` and `query` from that install, run in
another directory, load a bundle and write its pages.

Offline, as CI on a clean clone: the wheel is built with the setuptools of the test environment
(--no-build-isolation) and installed with --no-index --no-deps into a fresh venv that reaches the test
environment's packages (the dependencies) through a .pth file, never this checkout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
# What the wheel must carry from outside fleetscope/, and where (pyproject.toml's package-dir).
SHIPPED = {"warehouse": ("README.md", "migrations/*.sql", "views/*.sql", "queries/**/*.sql"), "templates": ("report/**/*",)}


def run(*argv: object, cwd: Path | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(arg) for arg in argv], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_a_wheel_installed_elsewhere_ingests_reports_and_queries(tmp_path, bundle_tools):
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(PROJECT / "pyproject.toml", source)
    for folder in ("fleetscope", "warehouse", "templates", "plugins", "roles"):
        shutil.copytree(PROJECT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.duckdb*"))
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
        "--wheel-dir", tmp_path / "dist", source)
    (wheel,) = (tmp_path / "dist").glob("fleetscope-*.whl")

    carried = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"fleetscope/data/{folder}/{path.relative_to(PROJECT / folder).as_posix()}"
                for folder, patterns in SHIPPED.items() for pattern in patterns
                for path in (PROJECT / folder).glob(pattern) if path.is_file() and "__pycache__" not in path.parts}
    expected |= {path.relative_to(PROJECT).as_posix() for path in (PROJECT / "fleetscope").rglob("*.py")}
    # the reference library: its list, its curves and their provenance
    expected |= {path.relative_to(PROJECT).as_posix() for path in (PROJECT / "fleetscope" / "references").iterdir()}
    assert expected - carried == set(), ("not in the wheel (a new subpackage goes into pyproject.toml's "
                                         f"[tool.setuptools] packages): {sorted(expected - carried)}")
    assert not any(name.endswith(".duckdb") for name in carried)

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--quiet", "--no-deps",
        "--no-index", wheel)
    site_packages = Path(run(venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
                         .stdout.strip())
    (site_packages / "test_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    located = run(venv / "bin" / "python", "-c", "import fleetscope.resources as r; print(r.__file__); "
                  "print(r.WAREHOUSE_DIR); print(r.TEMPLATES_DIR)", cwd=tmp_path).stdout.split()
    assert all(Path(path).is_relative_to(site_packages) for path in located), located

    elsewhere = tmp_path / "elsewhere"
    builder_class, _ = bundle_tools
    builder = builder_class(elsewhere / "results")
    builder.write()
    fleetscope = venv / "bin" / "fleetscope"
    assert run(fleetscope, "ingest", "results", "--db", "fleet.duckdb", cwd=elsewhere).stdout.startswith("loaded")
    run(fleetscope, "report", "--db", "fleet.duckdb", "--out", "pages", cwd=elsewhere)
    page = (elsewhere / "pages" / "node1.html").read_text(encoding="utf-8")
    assert builder.run_id in page and "node1" in page
    levels = run(fleetscope, "query", "--db", "fleet.duckdb", "--format", "csv",
                 "SELECT level FROM inferred_levels WHERE page_policy = 'thp' ORDER BY level_index", cwd=elsewhere)
    # conftest's synthetic sweep holds L1, L2, L3 and memory (LEVELS)
    assert levels.stdout.split() == ["level", "L1", "L2", "L3", "DRAM"]
    listed = run(fleetscope, "reference", "list", "--format", "json", cwd=elsewhere)
    assert len(json.loads(listed.stdout)) == 9
    # the plan of a host not at hand, from the collection files the wheel carries
    priced = run(fleetscope, "plan", "--facts", builder.results_dir / builder.run_id / "node1" / "manifest.json",
                 "--format", "json", cwd=elsewhere)
    assert json.loads(priced.stdout)["budget_s"] == 120


def test_make_test_installs_the_packages_the_provision_role_installs_on_a_debian_host():
    """The lab hosts share this machine's filesystem and have no route out, so `make test` installs what
    roles/provision would install on a Debian host (Makefile PROVISION_DEBS, read from the role's one table). The
    Makefile once read a file the table had left, and installed none of them without a word."""
    import yaml

    table = yaml.safe_load((PROJECT / "roles" / "provision" / "vars" / "main.yml").read_text())
    database = run("make", "--no-print-directory", "-pn", "help", cwd=PROJECT).stdout
    (line,) = [line for line in database.splitlines() if line.startswith("PROVISION_DEBS := ")]
    assert line.split(":= ", 1)[1].split() == table["__provision_family_packages"]["Debian"]
