"""The storage views and the report's storage section, over real fio and DiskSpd outputs loaded through
`fleetscope import` and the real ingest (the fio role's own runs are checked in tests/functional)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIO_QD32 = FIXTURES / "fio_samples" / "fio-3.36_io_uring_randread_4k_qd32_pctlist.json"
FIO_MIX = FIXTURES / "fio_samples" / "fio-3.16_libaio_randrw70_4k_qd1_nvme.json"
FIO_2X = FIXTURES / "fio" / "fio-2.17_pkb_randrw_16k_numjobs2.json"
DISKSPD_TEXT = FIXTURES / "diskspd" / "diskspd_text_L_randrw70_4k_qd1.txt"


def query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return connection.execute(sql).fetchall()


@pytest.fixture
def warehouse(cli, tmp_path) -> Path:
    db = tmp_path / "fleet.duckdb"
    common = ["--db", db, "--results", tmp_path / "results", "--started-at", "2025-03-14T09:30:00Z"]
    for host, tool, files in (("lab-fio", "fio", [FIO_QD32, FIO_MIX, FIO_2X]), ("lab-win", "diskspd", [DISKSPD_TEXT])):
        proc = cli("import", *common, "--host", host, tool, *files)
        assert proc.returncode == 0, proc.stderr
    return db


def test_fio_jobs_has_one_row_per_job_and_direction_with_fio_s_numbers(warehouse):
    rows = query(warehouse, """select job, direction, rw, block_size_bytes, iodepth, numjobs, ioengine, iops,
                                      latency_kind, p50_ns, p99_ns, p99_9_ns, p99_99_ns
                               from fio_jobs where path like '%qd32%'""")
    # fio printed: iops 145492.483584, clat percentiles 50 181248, 99 724992, 99.9 937984 (no lat percentiles)
    assert rows == [("randread_bs4k", "read", "randread", 4096, 32, 1, "io_uring", 145492.483584, "clat",
                     181248.0, 724992.0, 937984.0, None)]
    mixed = query(warehouse, "select direction, rw from fio_jobs where path like '%randrw70%' order by direction")
    assert mixed == [("read", "randrw"), ("write", "randrw")]
    # fio 2.x: bs '16k' read with fio's base-2 suffix, latencies converted from µs
    old = query(warehouse, "select block_size_bytes, numjobs, p50_ns from fio_jobs where path like '%fio-2.17%'")
    assert {(bs, numjobs) for bs, numjobs, _ in old} == {(16384, 2)} and all(p50 > 1000 for *_, p50 in old)


def test_storage_percentiles_mixes_fio_and_diskspd_on_one_shape(warehouse):
    fio = query(warehouse, """select queue_depth, threads, latency_kind, percentile, latency_ns from storage_percentiles
                              where path like '%qd32%' order by percentile""")
    assert fio == [(32, 1, "clat", 50.0, 181248.0), (32, 1, "clat", 95.0, 536576.0), (32, 1, "clat", 99.0, 724992.0),
                   (32, 1, "clat", 99.9, 937984.0)]
    disk = query(warehouse, """select direction, rw, block_size_bytes, queue_depth, latency_kind, latency_ns
                               from storage_percentiles where tool = 'diskspd' and percentile = 99.9
                               order by direction""")
    # DiskSpd printed the 3-nines row: read 1.608 ms, write 8.378 ms, total 7.432 ms
    assert disk == [("read", "randrw", 4096, 1, "lat", 1608000.0), ("total", "randrw", 4096, 1, "lat", 7432000.0),
                    ("write", "randrw", 4096, 1, "lat", 8378000.0)]
    assert query(warehouse, "select distinct job from storage_percentiles where tool = 'diskspd'") == [
        ("diskspd_text_L_randrw70_4k_qd1",)]
    # every percentile of a job and direction, one latency kind each: no duplicates
    assert query(warehouse, """select count(*) from (select path, job, direction, percentile, count(*) n
                               from storage_percentiles group by all having n > 1)""") == [(0,)]


def test_the_report_shows_the_storage_section_for_a_fio_run(cli, warehouse, tmp_path):
    out = tmp_path / "reports"
    proc = cli("report", "--db", warehouse, "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = next(path for path in out.iterdir() if path.name.startswith("lab-fio")).read_text()
    assert '<h2 id="storage">Storage latency</h2>' in page and 'id="storage-extra-table"' in page
    spec = json.loads(re.search(r'id="storage-chart-spec">(.*?)</script>', page, re.DOTALL).group(1))
    assert spec["facet"]["field"] == "series" and spec["spec"]["encoding"]["y"]["scale"]["type"] == "log"
    values = spec["data"]["values"]
    assert {value["percentile_label"] for value in values} <= {"p50", "p90", "p95", "p99", "p99.9", "p99.99"}
    assert {value["series"] for value in values} >= {"randread_bs4k · read", "Job1 · read", "Job1 · write"}
    assert '<th class="num">k IOPS</th>' in page and ">145<" in page  # the IOPS in the table: 145,492
