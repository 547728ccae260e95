"""templates/fio/job.fio.j2 renders a job file fio accepts, one section per planned job, and a section run
on its own gives every percentile of percentile_list for lat and clat, read back by our fio parser."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import jinja2
import pytest

from fleetscope.ingest.parsers import fio as fio_parser

PROJECT = Path(__file__).resolve().parents[2]
FIO = shutil.which("fio")
pytestmark = pytest.mark.skipif(FIO is None, reason="fio is not installed (make test installs it)")
PERCENTILES = [50, 90, 95, 99, 99.9, 99.99]

_spec = importlib.util.spec_from_file_location("_fio_storage_filters", PROJECT / "plugins/filter/storage.py")
storage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(storage)


def render(target: Path, **overrides) -> str:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(PROJECT / "templates/fio"),
                                     undefined=jinja2.StrictUndefined, trim_blocks=True)
    environment.filters.update({f"fleetscope.fleet.{name}": function for name, function in storage.FilterModule().filters().items()})
    jobs = storage.fio_plan(["randread", "randwrite", "randrw", "seqread", "seqwrite"], [1, 16], 4096, 1048576, 8, 70)
    variables = {"__fio_target": str(target), "__fio_size_bytes": target.stat().st_size, "__fio_engine": "psync",
                 "__fio_direct": False, "fio_runtime_s": 1, "fio_ramp_s": 0, "fio_percentiles": PERCENTILES,
                 "__fio_jobs": jobs, **overrides}
    return environment.get_template("job.fio.j2").render(**variables)


@pytest.fixture
def target(tmp_path) -> Path:
    path = tmp_path / "scratch:file.dat"  # a ':' must reach fio escaped
    path.write_bytes(os.urandom(8 << 20))
    return path


def test_the_job_file_has_a_section_per_job_and_fio_accepts_it(target, tmp_path):
    text = render(target)
    sections = [line[1:-1] for line in text.splitlines() if line.startswith("[")]
    assert sections == ["global", "randread_4k_qd1", "randread_4k_qd16", "randwrite_4k_qd1", "randwrite_4k_qd16",
                        "randrw70_4k_qd1", "randrw70_4k_qd16", "seqread_1m_qd8", "seqwrite_1m_qd8"]
    assert "filename=" + str(target).replace(":", "\\:") in text
    assert "percentile_list=50:90:95:99:99.9:99.99" in text and "lat_percentiles=1" in text
    assert text.count("rwmixread=70") == 2
    job_file = tmp_path / "jobs.fio"
    job_file.write_text(text)
    proc = subprocess.run([FIO, "--parse-only", str(job_file)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_one_section_runs_alone_and_reports_every_percentile(target, tmp_path):
    job_file = tmp_path / "jobs.fio"
    job_file.write_text(render(target))
    output = tmp_path / "randrw70_4k_qd16.json"
    proc = subprocess.run([FIO, "--output-format=json", f"--output={output}", "--eta=never",
                           "--section=randrw70_4k_qd16", str(job_file)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert [job["jobname"] for job in json.loads(output.read_text())["jobs"]] == ["randrw70_4k_qd16"]
    parsed = fio_parser.parse(output.read_text(), str(output))
    (job,) = parsed["jobs"]
    assert job["iodepth"] == 16 and job["rw"] == "randrw" and job["ioengine"] == "psync"
    assert [direction["direction"] for direction in job["directions"]] == ["read", "write"]
    for direction in job["directions"]:
        for kind in ("lat", "clat"):
            points = [p for p in direction["percentiles"] if p["kind"] == kind]
            assert [p["percentile"] for p in points] == [float(p) for p in PERCENTILES], (direction["direction"], kind)
            values = [p["value_ns"] for p in points]
            assert values == sorted(values) and values[0] > 0
