"""The fio parser on every real output in tests/fixtures/fio_samples (a copy of ../shared/fixtures) and tests/fixtures/fio (fio 2.x)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleetscope.ingest.parsers import ParseError, fio

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "fio_samples"
LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "fio"


def sample_text(name: str) -> str:
    path = (LEGACY if name.startswith("fio-2.") else SAMPLES) / name
    assert path.is_file(), f"fixture {path} is missing: tests/fixtures holds copies of the shared fixtures"
    return path.read_text(encoding="utf-8")


def parse(name: str) -> dict:
    return fio.parse(sample_text(name), source=name)


def direction(parsed: dict, job: str, name: str) -> dict:
    (found,) = [d for j in parsed["jobs"] if j["name"] == job for d in j["directions"] if d["direction"] == name]
    return found


def percentiles(found: dict, kind: str = "clat") -> dict[float, int]:
    return {p["percentile"]: p["value_ns"] for p in found["percentiles"] if p["kind"] == kind}


def test_every_fio_sample_is_tested():
    assert SAMPLES.is_dir(), f"{SAMPLES} is missing: tests/fixtures holds copies of the shared fixtures"
    shared = {path.name for path in SAMPLES.iterdir() if path.name != "SOURCES.md"}
    legacy = {path.name for path in LEGACY.iterdir() if path.name != "SOURCES.md"}
    assert shared | legacy == TESTED


TESTED = {
    "fio-3.16_libaio_randrw70_4k_qd1_nvme.json", "fio-3.28_libaio_randrw50_4k_qd1.json",
    "fio-3.36_defaultengine_randrw70_4k_qd1_file.json", "fio-3.36_io_uring_randread_4k_qd32_pctlist.json",
    "fio-3.41_windowsaio_rw_sweep_4jobs.json", "fio-3.41_windowsaio_rw_sweep_4jobs_normal_output.txt",
    "fio-2.1.4_pkb_5jobs.json", "fio-2.17_pkb_randrw_16k_numjobs2.json",
}


def test_fio_3_16_mixed_random_read_write():
    parsed = parse("fio-3.16_libaio_randrw70_4k_qd1_nvme.json")
    assert (parsed["format"], parsed["version"], parsed["messages"]) == ("json", "3.16", [])
    (job,) = parsed["jobs"]
    assert (job["name"], job["line"], job["rw"], job["ioengine"], job["block_size"]) == ("Job1", 13, "randrw", "libaio", "4k")
    assert (job["iodepth"], job["iodepth_source"]) == (1, "global options")
    assert job["empty_directions"] == ["trim", "sync"]
    read = direction(parsed, "Job1", "read")
    assert (read["iops"], read["bw_bytes_per_s"], read["io_bytes"], read["total_ios"], read["runtime_ms"]) == (
        10700.069914, 43827486, 376127488, 91828, 8582)
    assert read["slat_ns"] == {"min": 1050, "max": 196673, "mean": 7486.925208, "stddev": 4760.245714}
    assert read["lat_ns"]["mean"] == 74901.887366 and read["clat_ns"]["mean"] == 67041.187296
    read_percentiles = percentiles(read)
    assert len(read_percentiles) == 17
    assert (read_percentiles[1.0], read_percentiles[99.9], read_percentiles[99.99]) == (30080, 301056, 561152)
    assert read["bw_bytes_per_s_stats"]["min"] == 40992 * 1024 and read["bw_bytes_per_s_stats"]["samples"] == 17
    assert read["iops_stats"]["mean"] == 10688.529412
    write = direction(parsed, "Job1", "write")
    assert (write["iops"], write["bw_bytes_per_s"]) == (4572.826847, 18730298)
    assert percentiles(write)[99.99] == 220160
    assert parsed["documents"][0]["disk_util"][0]["name"] == "nvme0n1"


def test_fio_3_28_job_options_and_sample_counts():
    parsed = parse("fio-3.28_libaio_randrw50_4k_qd1.json")
    (job,) = parsed["jobs"]
    assert (job["iodepth"], job["iodepth_source"], job["numjobs"]) == (1, "job options", 1)
    read = direction(parsed, "test_combination", "read")
    assert (read["iops"], read["bw_bytes_per_s"]) == (8528.149062, 34931298)
    assert read["clat_ns"]["samples"] == 255853 and read["lat_ns"]["max"] == 8366334
    assert percentiles(read)[99.0] == 1286144
    assert percentiles(direction(parsed, "test_combination", "write"))[50.0] == 11712


def test_fio_3_36_default_engine_on_a_file():
    parsed = parse("fio-3.36_defaultengine_randrw70_4k_qd1_file.json")
    (job,) = parsed["jobs"]
    assert job["ioengine"] is None and job["options"]["ramp_time"] == "5s"
    write = direction(parsed, "Mix_70R_70W", "write")
    assert (write["iops"], write["bw_bytes_per_s"]) == (1631.178961, 6681309)
    assert percentiles(write)[99.95] == 5079040
    assert direction(parsed, "Mix_70R_70W", "read")["iops"] == 3811.439619


def test_fio_3_36_percentile_list_at_queue_depth_32():
    parsed = parse("fio-3.36_io_uring_randread_4k_qd32_pctlist.json")
    (job,) = parsed["jobs"]
    assert (job["iodepth"], job["ioengine"], job["empty_directions"]) == (32, "io_uring", ["write", "trim", "sync"])
    read = direction(parsed, "randread_bs4k", "read")
    assert percentiles(read) == {50.0: 181248, 95.0: 536576, 99.0: 724992, 99.9: 937984}
    assert (read["iops"], read["bw_bytes_per_s"]) == (145492.483584, 595941445)


def test_fio_3_41_windows_four_jobs_with_empty_directions():
    parsed = parse("fio-3.41_windowsaio_rw_sweep_4jobs.json")
    assert [job["name"] for job in parsed["jobs"]] == ["100 R", "100 W", "70R 30W", "50R 50W"]
    assert [job["line"] for job in parsed["jobs"]] == [24, 255, 486, 724]
    assert {job["ioengine"] for job in parsed["jobs"]} == {"windowsaio"}
    assert {(job["iodepth"], job["iodepth_source"]) for job in parsed["jobs"]} == {(1, "global options")}
    write_only = parsed["jobs"][1]
    assert [d["direction"] for d in write_only["directions"]] == ["write"] and "read" in write_only["empty_directions"]
    write = direction(parsed, "100 W", "write")
    assert (write["iops"], write["bw_bytes_per_s"], percentiles(write)[99.9]) == (26017.083049, 106565972, 144384)
    assert percentiles(direction(parsed, "70R 30W", "read"))[50.0] == 51456
    assert percentiles(direction(parsed, "70R 30W", "write"))[50.0] == 19072
    assert direction(parsed, "50R 50W", "write")["iops"] == 9713.521441


def test_fio_terse_v3_output_in_microseconds():
    parsed = parse("fio-3.41_windowsaio_rw_sweep_4jobs_normal_output.txt")
    assert (parsed["format"], parsed["version"]) == ("terse", "3.41")
    assert [(job["name"], job["line"]) for job in parsed["jobs"]] == [("100 R", 2), ("100 W", 3), ("70R 30W", 4),
                                                                      ("50R 50W", 5)]
    read = direction(parsed, "100 R", "read")
    assert (read["iops"], read["bw_bytes_per_s"], read["io_bytes"], read["runtime_ms"]) == (
        14999, 59996 * 1024, 3599868 * 1024, 60001)
    assert read["clat_ns"] == {"min": 0, "max": 353009000, "mean": 54241.603, "stddev": 374999.325}
    assert read["lat_ns"]["min"] == 31000
    assert len(read["percentiles"]) == 17 and percentiles(read)[99.99] == 1826000
    assert parsed["jobs"][0]["empty_directions"] == ["write"]
    assert parsed["jobs"][0]["iodepth"] is None and parsed["jobs"][0]["iodepth_distribution_percent"]["1"] == 100.0
    write = direction(parsed, "100 W", "write")
    assert (write["iops"], percentiles(write)[99.9]) == (30692, 146000)
    assert percentiles(direction(parsed, "50R 50W", "write"))[99.99] == 536000


def test_fio_2_1_4_microseconds_and_kib():
    parsed = parse("fio-2.1.4_pkb_5jobs.json")
    assert parsed["version"] == "2.1.4" and len(parsed["jobs"]) == 5
    write = direction(parsed, "sequential_write", "write")
    assert write["source_latency_unit"] == "us"
    assert (write["io_bytes"], write["bw_bytes_per_s"], write["iops"]) == (361984 * 1024, 68118 * 1024, 133)
    assert write["lat_ns"]["mean"] == 478737470 and write["slat_ns"]["min"] == 33000
    assert percentiles(write)[99.0] == 823296000 and percentiles(write)[25.0] == 440380000
    assert 0.0 not in percentiles(write) and len(percentiles(write)) == 19  # "0.00" padding slots dropped
    assert parsed["jobs"][0]["iodepth"] is None  # fio 2.1.4 printed no options
    assert percentiles(direction(parsed, "random_read_test", "read"))[99.0] == 3728000


def test_fio_2_17_job_options():
    parsed = parse("fio-2.17_pkb_randrw_16k_numjobs2.json")
    job = parsed["jobs"][0]
    assert (job["block_size"], job["numjobs"], job["iodepth"], job["ioengine"]) == ("16k", 2, 1, "libaio")
    read = direction(parsed, job["name"], "read")
    assert (read["iops"], read["bw_bytes_per_s"], read["io_bytes"]) == (8086.673998, 129386 * 1024, 1294256 * 1024)
    assert percentiles(read)[99.0] == 1352000


def test_text_around_the_json_document_is_kept_as_messages():
    text = ("fio: this platform does not support process shared mutexes, forcing use of threads.\r\n"
            + sample_text("fio-3.36_io_uring_randread_4k_qd32_pctlist.json").replace("\n", "\r\n")
            + "fio: file hash not empty on exit\r\n")
    parsed = fio.parse(text, "win.json")
    assert [m["line"] for m in parsed["messages"]] == [1, len(text.split("\r\n")) - 1]
    assert parsed["jobs"][0]["line"] == 9
    assert percentiles(direction(parsed, "randread_bs4k", "read"))[99.9] == 937984


def test_two_documents_in_one_file():
    text = sample_text("fio-3.28_libaio_randrw50_4k_qd1.json") + sample_text("fio-3.16_libaio_randrw70_4k_qd1_nvme.json")
    parsed = fio.parse(text, "two.json")
    assert [job["name"] for job in parsed["jobs"]] == ["test_combination", "Job1"]
    assert [job["document"] for job in parsed["jobs"]] == [0, 1]
    assert parsed["version"] is None and parsed["versions"] == ["3.28", "3.16"]


def test_lat_percentiles_are_kept_apart_from_clat():
    document = json.loads(sample_text("fio-3.36_io_uring_randread_4k_qd32_pctlist.json"))
    document["jobs"][0]["read"]["lat_ns"]["percentile"] = {"99.000000": 800000}
    read = direction(fio.parse(json.dumps(document), "lat.json"), "randread_bs4k", "read")
    assert percentiles(read, "lat") == {99.0: 800000} and percentiles(read, "clat")[99.0] == 724992


def truncated_json() -> str:
    lines = sample_text("fio-3.16_libaio_randrw70_4k_qd1_nvme.json").split("\n")
    return "\n".join(lines[:100])


@pytest.mark.parametrize(("text", "line", "message"), [
    ("", 1, "empty input"),
    ("just some words\n", 1, "expected fio JSON or terse output"),
    ("randread: (g=0): rw=randread\nRun status group 0 (all jobs):\n", 1, "human-readable"),
    ('{"fio version": "fio-3.16"}\n', 1, "without a 'jobs' list"),
    ("3;fio-3.41;100 R;0;0;3599868;59996\n", 1, "cut short"),
])
def test_unreadable_output_names_file_and_line(text, line, message):
    with pytest.raises(ParseError) as raised:
        fio.parse(text, "bad.json")
    assert str(raised.value).startswith(f"bad.json:{line}: ") and message in str(raised.value)


def test_cut_json_and_a_non_number_are_errors_with_lines():
    with pytest.raises(ParseError, match=r"^cut\.json:100: not valid fio JSON"):
        fio.parse(truncated_json(), "cut.json")
    broken = sample_text("fio-3.16_libaio_randrw70_4k_qd1_nvme.json").replace('"iops" : 10700.069914', '"iops" : "fast"')
    with pytest.raises(ParseError, match=r"^x\.json:13: jobs\[0\]\.read\.iops: expected a number"):
        fio.parse(broken, "x.json")
    terse = sample_text("fio-3.41_windowsaio_rw_sweep_4jobs_normal_output.txt").replace(";14999;", ";many;")
    with pytest.raises(ParseError, match=r"^t\.txt:2: field 8 \(read IOPS\)"):
        fio.parse(terse, "t.txt")


def test_long_format_rows():
    samples = fio.rows(parse("fio-3.36_io_uring_randread_4k_qd32_pctlist.json"))
    by_metric = {(s["metric"], s["params"].get("percentile")): s for s in samples}
    iops = by_metric[("iops", None)]
    assert iops["value"] == 145492.483584 and iops["unit"] == "iops"
    assert iops["params"] == {"job": "randread_bs4k", "document": 0, "direction": "read", "rw": "randread",
                              "iodepth": 32, "block_size": "4k", "numjobs": 1, "ioengine": "io_uring"}
    assert by_metric[("bandwidth", None)]["unit"] == "B/s"
    assert by_metric[("clat_percentile", 99.9)]["value"] == 937984 and by_metric[("clat_percentile", 99.9)]["unit"] == "ns"
    assert by_metric[("clat_mean", None)]["value"] == 218607.513641
    assert not any(s["params"]["direction"] == "write" for s in samples)
    for path in sorted(SAMPLES.iterdir()) + sorted(LEGACY.iterdir()):
        if path.name != "SOURCES.md":
            parsed = fio.parse(path.read_text(encoding="utf-8"), path.name)
            assert json.loads(json.dumps(parsed)) == parsed
            assert all(isinstance(s["value"], int | float) for s in fio.rows(parsed))
