"""The fio role through `site.yml --tags fio` on this machine (quick profile): raw JSON per job in the
bundle, the experiment record with the engine and O_DIRECT decisions, the storage views, the report's
storage section, and the safety rules: a raw device is never touched without fio_destructive_ok, a
scratch file that does not fit is never written, and nothing is left behind."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil

import duckdb
import pytest

from helpers import Outputs, knob_values, run_playbook, scratch_leftovers

pytestmark = [pytest.mark.functional,
              pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make test installs it)")]

QUICK_JOBS = ["randread_4k_qd1", "randread_4k_qd16", "randwrite_4k_qd1", "randwrite_4k_qd16",
              "randrw70_4k_qd1", "randrw70_4k_qd16", "seqread_1m_qd8", "seqwrite_1m_qd8"]
PERCENTILES = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99]
MISSING_ENGINE = "fleetscope_no_such_engine"


def fio_record(outputs: Outputs) -> dict:
    (record,) = [e for e in outputs.manifest()["experiments"] if e["name"] == "fio"]
    return record


def rows(outputs: Outputs, sql: str) -> list[tuple]:
    with duckdb.connect(str(outputs.warehouse), read_only=True) as db:
        return db.execute(sql).fetchall()


def fio_scratch_files() -> list[str]:
    return glob.glob("/var/tmp/**/fleetscope-fio-*.dat", recursive=True)


@pytest.fixture(scope="module")
def fio_run(tmp_path_factory):
    """One quick `site.yml --tags fio` whose engine list starts with an engine fio does not have, so the
    fallback is exercised in the same run; at queue depths 1 and 16 (quick's own is 1 alone), so the rates
    of two depths can be compared."""
    outputs = Outputs(tmp_path_factory.mktemp("fio"))
    before = knob_values()
    proc = run_playbook("site.yml", outputs, "--tags", "fio",
                        "-e", json.dumps({"fio_ioengines": [MISSING_ENGINE, "io_uring", "libaio", "psync"],
                                          "fio_queue_depths": [1, 16]}))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert knob_values() == before, "knobs not restored"
    assert not scratch_leftovers() and not fio_scratch_files()
    return outputs


def test_only_fio_ran_and_its_record_says_how(fio_run):
    manifest = fio_run.manifest()
    assert [e["name"] for e in manifest["experiments"]] == ["fio"]
    record = fio_record(fio_run)
    assert record["status"] == "ok" and record["error"] is None and record["file"] is None
    assert 5 < record["wall_s"] < 60
    notes = record["notes"]
    chosen = next(note for note in notes if re.match(r"ioengine \S+: the first of", note))
    engine = chosen.split()[1].rstrip(":")
    assert engine in ("io_uring", "libaio", "psync")
    assert chosen.startswith(f"ioengine {engine}: the first of {MISSING_ENGINE}, io_uring, libaio, psync")
    refused = next(note for note in notes if note.startswith(f"ioengine {MISSING_ENGINE} refused: "))
    assert "not loadable" in refused  # fio's own reason
    assert "direct I/O (O_DIRECT): the page cache is bypassed" in notes  # /var/tmp is ext4 here
    assert any(note.startswith("target: scratch file /var/tmp/fleetscope-") for note in notes)


def test_the_bundle_keeps_a_json_per_job_and_the_job_file(fio_run):
    (bundle,) = fio_run.bundles()
    record = fio_record(fio_run)
    assert [entry["path"] for entry in record["raw"]] == [f"raw/fio/{job}.json" for job in QUICK_JOBS]
    for entry in record["raw"]:
        assert entry["tool"] == "fio" and entry["params"]["job"] in QUICK_JOBS
        assert entry["params"]["direct"] is True and entry["params"]["runtime_s"] == 1  # quick: 1 s a job
        document = json.loads((bundle / entry["path"]).read_text())
        assert [job["jobname"] for job in document["jobs"]] == [entry["params"]["job"]]
        assert document["jobs"][0]["error"] == 0
    job_file = (bundle / "raw/fio/jobs.fio").read_text()
    assert [line[1:-1] for line in job_file.splitlines() if line.startswith("[")] == ["global", *QUICK_JOBS]
    assert "percentile_list=50:90:95:99:99.9:99.99" in job_file


def test_every_percentile_of_every_queue_depth_reaches_the_warehouse(fio_run):
    series = rows(fio_run, """select job, direction, queue_depth, list(percentile order by percentile),
                                     list(latency_ns order by percentile)
                              from storage_percentiles where tool = 'fio' group by all""")
    by_job = {(job, direction): (depth, percentiles, values) for job, direction, depth, percentiles, values in series}
    expected = {(job, direction) for job in QUICK_JOBS
                for direction in (["read", "write"] if "randrw" in job else
                                  ["write"] if "write" in job else ["read"])}
    assert set(by_job) == expected
    for (job, _), (depth, percentiles, values) in by_job.items():
        assert depth == int(job.rsplit("qd", 1)[1])
        assert percentiles == PERCENTILES
        assert values == sorted(values) and values[0] > 0, (job, values)
    kinds = rows(fio_run, "select distinct latency_kind from storage_percentiles")
    assert kinds == [("lat",)]


def test_fio_jobs_view_has_the_rates(fio_run):
    jobs = rows(fio_run, """select job, direction, block_size_bytes, iodepth, ioengine, direct, iops,
                                   bandwidth_bytes_per_s, p50_ns, p99_ns, p99_9_ns from fio_jobs""")
    assert len(jobs) == 10  # two randrw jobs have two directions
    for job, direction, block, depth, engine, direct, iops, bandwidth, p50, p99, p999 in jobs:
        assert block == (1048576 if job.startswith("seq") else 4096) and direct is True
        assert iops > 0 and bandwidth == pytest.approx(iops * block, rel=0.01)
        assert 0 < p50 <= p99 <= p999
    iops = {job: iops for job, _, _, _, _, _, iops, *_ in jobs}
    assert iops["randread_4k_qd16"] > iops["randread_4k_qd1"], "16 reads in flight must beat one"


def test_the_report_page_has_the_storage_section(fio_run):
    (page,) = [p for p in fio_run.reports.glob("*.html") if p.name != "index.html"]
    html = page.read_text()
    assert '<h2 id="storage">Storage latency</h2>' in html and 'id="storage-extra-table"' in html
    spec = json.loads(re.search(r'id="storage-chart-spec">(.*?)</script>', html, re.DOTALL).group(1))
    values = spec["data"]["values"]
    assert {v["series"] for v in values} == {"randread_4k · read", "randwrite_4k · write", "randrw70_4k · read",
                                             "randrw70_4k · write", "seqread_1m · read", "seqwrite_1m · write"}
    assert {v["queue_depth"] for v in values} == {1, 8, 16}
    assert len(values) == 10 * 6


def test_a_raw_device_without_the_opt_in_is_refused_before_anything_runs(outputs, knobs_unchanged, tmp_path):
    # a stand-in for a device: preflight must refuse before any host is changed
    device = tmp_path / "precious-disk"
    device.write_bytes(os.urandom(1 << 20))
    digest, mtime = hashlib.sha256(device.read_bytes()).hexdigest(), device.stat().st_mtime_ns
    proc = run_playbook("site.yml", outputs, "--tags", "fio", "-e", json.dumps({"fio_device": str(device)}))
    assert proc.returncode != 0
    assert f"fio_device={device} names a raw device but fio_destructive_ok is not true" in proc.stdout
    assert "PLAY [Measure" not in proc.stdout and not outputs.bundles()
    assert hashlib.sha256(device.read_bytes()).hexdigest() == digest and device.stat().st_mtime_ns == mtime


def test_a_scratch_file_that_does_not_fit_is_never_written(outputs, knobs_unchanged):
    size = 1 << 50  # 1 PiB
    proc = run_playbook("site.yml", outputs, "--tags", "fio", "-e", json.dumps({"fio_size": size}))
    record = fio_record(outputs)
    assert record["status"] == "failed" and record["raw"] == []
    error = record["error"]
    assert error.startswith("not enough free space for the fio scratch file in /var/tmp/fleetscope-")
    assert re.search(r"GiB \(\d+ bytes\) free, 1024\.0 TiB \(\d+ bytes\) needed \(fio_size 1024\.0 TiB", error)
    assert "Set fio_size smaller, or fio_directory" in error
    assert "fio failed: not enough free space" in proc.stdout
    (bundle,) = outputs.bundles()
    assert not list((bundle / "raw").glob("fio/*.json"))
    assert not fio_scratch_files()
    assert rows(outputs, "select status, error is not null from experiments where experiment = 'fio'") == [
        ("failed", True)]
