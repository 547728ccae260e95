"""`fleetscope import`: a lab's past MLC, fio, perf or DiskSpd outputs joined to the fleet as an
external run of a named host.

perf outputs are a workload's: `perf stat` (CSV or perf's human-readable table) and `perf report`
profiles (kept as tool perf_report) land in the experiment `workloads` under one workload name, so ingest
classifies them as it does the workloads a playbook run profiles (fleetscope.analyze.profiling).

The files become a real bundle, results/<run_id>/<host>/, exactly like one a playbook run brings
home (manifest `origin: import`, profile `external`, raw/<tool>/<file>), which then goes through the
same validation and ingest: every file is parsed first, and one that cannot be read stops the
import with its FILE:LINE before anything is written. Importing the same files again changes
nothing; importing more files into the same --run-id adds them to that run.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fleetscope import __version__
from fleetscope.ingest.bundle import BundleError, load_bundle, name_pattern
from fleetscope.errors import UserError
from fleetscope.ingest.parsers import parser, perf_report, read_text

# DiskSpd is the storage experiment of Windows hosts; perf outputs are a workload's profile.
EXPERIMENT_OF_TOOL = {"diskspd": "fio", "perf": "workloads", "perf_report": "workloads"}
_WORKLOAD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_RUN_ID = re.compile(name_pattern("run_id"))
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True)
class ImportedBundle:
    path: Path
    run_id: str
    added: int  # files new to the bundle
    workload: str | None = None  # the workload perf outputs were imported as


def _started_at(files: list[Path], started_at: str | None) -> datetime:
    if started_at is None:
        return datetime.fromtimestamp(max(path.stat().st_mtime for path in files), UTC).replace(microsecond=0)
    try:
        moment = datetime.fromisoformat(started_at)
    except ValueError:
        raise UserError(f"--started-at {started_at!r}: expected an ISO date or time, e.g. 2025-03-14T09:30:00Z") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC).replace(microsecond=0)


def _run_id(host: str, tool: str, contents: list[bytes], started: datetime) -> str:
    digest = hashlib.sha256(f"{host}\0{tool}\0".encode())
    for content in contents:
        digest.update(hashlib.sha256(content).digest())
    return f"{started:%Y%m%dT%H%M%SZ}-{digest.hexdigest()[:6]}"


def file_tool(tool: str, text: str) -> str:
    """The parser a file given as `tool` needs: perf report output given to `import perf` is a profile."""
    return "perf_report" if tool == "perf" and perf_report.looks_like(text) else tool


def _check_files(tool: str, files: list[Path]) -> tuple[list[bytes], list[str]]:
    """Parse every file before anything is written: the first unreadable one stops the import. Returns each
    file's bytes and the tool that reads it."""
    contents, tools = [], []
    for path in files:
        if not path.is_file():
            raise UserError(f"{path}: no such file")
        text = read_text(path)
        tools.append(file_tool(tool, text))
        parser(tools[-1]).parse(text, source=str(path))  # raises ParseError (FILE:LINE: ...)
        contents.append(path.read_bytes())
    return contents, tools


def workload_name(files: list[Path], workload: str | None) -> str:
    """The workload imported perf outputs belong to: --workload, else the first file's name."""
    if workload is not None:
        if not _WORKLOAD.fullmatch(workload):
            raise UserError(f"--workload {workload!r}: give 1-64 of A-Z a-z 0-9 _ . - starting with a letter or digit")
        return workload
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(files[0]).stem).lstrip("_.-")[:64]
    return name or "imported"


def _new_manifest(host: str, run_id: str, started: datetime, cpu_model: str | None) -> dict:
    stamp = started.strftime("%Y-%m-%dT%H:%M:%SZ")
    facts: dict = {"hostname": host}
    if cpu_model:
        facts["cpu"] = {"model_name": cpu_model}
    return {
        "bundle_schema": 1, "origin": "import", "run_id": run_id, "host": host, "profile": "external",
        "started_at": stamp, "finished_at": stamp, "status": "complete", "error": None,
        "fleetscope": {"version": __version__, "git_sha": "import"},
        "facts": facts, "knobs": [], "experiments": [],
    }


def check_host(host: str) -> None:
    if not _HOST.fullmatch(host):
        raise UserError(f"--host {host!r}: use letters, digits, '.', '_' and '-' (it names a folder)")


def replace_bundle(results_dir: Path, run_id: str, host: str, fill: Callable[[Path], int], *, keep: bool) -> int:
    """Build the bundle results/<run_id>/<host>/ whole beside the old one (a copy of it when `keep`, else
    empty) with `fill(staging)`, which writes its files and returns how many changed; validate it like any
    bundle and only then put it in the old one's place. An import that fails leaves results/ and the
    warehouse as they were; one that changed nothing (fill returned 0) leaves the old bundle alone."""
    bundle = results_dir / run_id / host
    results_dir.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=".import-", dir=results_dir))
    try:
        staging = staged / run_id / host
        if keep and bundle.exists():
            shutil.copytree(bundle, staging)
        else:
            staging.mkdir(parents=True)
        changed = fill(staging)
        if changed:
            try:
                load_bundle(staging)
            except BundleError as error:
                raise UserError(f"the imported files do not make a valid bundle: {error}") from None
            bundle.parent.mkdir(parents=True, exist_ok=True)
            if bundle.exists():
                bundle.rename(staged / "previous")
            staging.rename(bundle)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return changed


def import_files(results_dir: Path, host: str, tool: str, files: list[Path], *, run_id: str | None = None,
                 started_at: str | None = None, cpu_model: str | None = None,
                 workload: str | None = None) -> ImportedBundle:
    """Write (or extend) the bundle results/<run_id>/<host>/ holding `files` as raw outputs of `tool` (perf's
    under one workload name: `workload`, else the first file's name)."""
    check_host(host)
    if run_id is not None and not _RUN_ID.fullmatch(run_id):
        raise UserError(f"--run-id {run_id!r}: expected a fleetscope run id like 20250314T093000Z-a1b2c3")
    if workload is not None and tool != "perf":
        raise UserError("--workload: only with `fleetscope import perf`")
    files = [Path(path) for path in files]
    contents, tools = _check_files(tool, files)
    workload = workload_name(files, workload) if tool == "perf" else None
    started = _started_at(files, started_at)
    run_id = run_id or _run_id(host, tool, contents, started)
    bundle = Path(results_dir) / run_id / host

    manifest_path = bundle / "manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if manifest.get("origin") != "import":
            raise UserError(f"{bundle} is a bundle a playbook run collected or a reference curve: import into "
                            "another --run-id")
    else:
        manifest = _new_manifest(host, run_id, started, cpu_model)
    name = EXPERIMENT_OF_TOOL.get(tool, tool)
    experiment = next((entry for entry in manifest["experiments"] if entry["name"] == name), None)
    if experiment is None:
        experiment = {"name": name, "status": "ok", "file": None, "error": None, "wall_s": None,
                      "notes": [f"imported by fleetscope import from {tool} outputs measured outside fleetscope"],
                      "raw": []}
        manifest["experiments"].append(experiment)

    known = {entry["path"] for entry in experiment["raw"]}

    def add_files(staging: Path) -> int:
        added = 0
        for path, content, read_as in zip(files, contents, tools):
            relative = f"raw/{read_as}/{path.name}"
            if relative in known and (staging / relative).read_bytes() == content:
                continue  # the same file imported again
            if relative in known:
                relative = f"raw/{read_as}/{path.stem}-{hashlib.sha256(content).hexdigest()[:8]}{path.suffix}"
                if relative in known:
                    continue
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            (staging / relative).write_bytes(content)
            params = {"imported_from": str(path), **({"workload": workload} if workload else {})}
            experiment["raw"].append({"path": relative, "tool": read_as, "params": params})
            known.add(relative)
            added += 1
        if added:
            (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        return added

    added = replace_bundle(Path(results_dir), run_id, host, add_files, keep=True)
    return ImportedBundle(bundle, run_id, added, workload)
