"""`fleetscope parse TOOL FILE`, run as a user would: a subprocess of the installed CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / "tests" / "fixtures"  # copies of ../shared/fixtures
MLC_LADDER = SHARED / "mlc_samples" / "csit_clx_loaded_latency.txt"
TRUNCATED = SHARED / "mlc_samples" / "rpl_i9-13900KF_v3.11b_loaded_latency_t10_X_TRUNCATED.txt"
FIO_JSON = SHARED / "fio_samples" / "fio-3.36_io_uring_randread_4k_qd32_pctlist.json"
PERF_CSV = SHARED / "perf_samples" / "rpl_i9-13900KF_hybrid_saxpy.perf.csv"
DISKSPD_XML = REPO / "tests" / "fixtures" / "diskspd" / "diskspd-2.0.21a_xml_L_randrw70_4k_qd1.xml"


def fleetscope(*arguments: object, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    for argument in arguments:
        if isinstance(argument, Path) and (argument.is_relative_to(SHARED) or argument.is_relative_to(REPO)):
            assert argument.is_file(), f"fixture {argument} is missing"
    result = subprocess.run([sys.executable, "-m", "fleetscope", "parse", *map(str, arguments)], input=stdin,
                            capture_output=True, timeout=120, cwd=REPO)
    result.stdout, result.stderr = result.stdout.decode(), result.stderr.decode()
    return result


def test_table_summary_of_an_mlc_ladder():
    result = fleetscope("mlc", MLC_LADDER)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{MLC_LADDER}:\nmlc 3.7: 1 runs")
    assert "run 0 [loaded_latency] lines 7-31 (--loaded_latency)" in result.stdout
    assert "233.86" in result.stdout and "2179.9" in result.stdout and result.stderr == ""


def test_json_output_is_what_the_parser_read():
    result = fleetscope("fio", FIO_JSON, "--format", "json")
    assert result.returncode == 0, result.stderr
    parsed = json.loads(result.stdout)
    assert parsed["tool"] == "fio" and parsed["version"] == "3.36"
    (read,) = parsed["jobs"][0]["directions"]
    assert read["iops"] == 145492.483584 and read["bw_bytes_per_s"] == 595941445


@pytest.mark.parametrize(("tool", "path", "expected"), [
    ("perf", PERF_CSV, ["<not supported>", "cpu_atom", "167794821", "hybrid PMUs"]),
    ("diskspd", DISKSPD_XML, ["2.0.21a", "QuickTest2", "2477000"]),
    ("mlc", TRUNCATED, ["TRUNCATED", "delay 15"]),
])
def test_every_tool_has_a_table(tool, path, expected):
    result = fleetscope(tool, path)
    assert result.returncode == 0, result.stderr
    for text in expected:
        assert text in result.stdout


def test_a_parse_error_is_one_line_naming_file_and_line_with_status_2(tmp_path):
    broken = tmp_path / "broken.txt"
    broken.write_text(MLC_LADDER.read_text(encoding="utf-8").replace("00300   96.84", "00300   9x.84"), encoding="utf-8")
    result = fleetscope("mlc", broken)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"fleetscope parse: error: {broken}:20: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_the_wrong_tool_or_a_missing_file_is_status_2(tmp_path):
    wrong = fleetscope("perf", MLC_LADDER)
    assert wrong.returncode == 2 and f"{MLC_LADDER}:1: " in wrong.stderr
    missing = fleetscope("fio", tmp_path / "absent.json")
    assert missing.returncode == 2 and "cannot read the file" in missing.stderr
    unknown = fleetscope("iperf", MLC_LADDER)
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr


def test_utf16_windows_files_and_standard_input(tmp_path):
    utf16 = tmp_path / "mlc_windows.txt"
    utf16.write_bytes(MLC_LADDER.read_text(encoding="utf-8").replace("\n", "\r\n").encode("utf-16"))
    result = fleetscope("mlc", utf16, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["runs"][0]["rows"][0]["latency_ns"] == 233.86
    piped = fleetscope("perf", "-", stdin=PERF_CSV.read_bytes())
    assert piped.returncode == 0 and piped.stdout.startswith("<stdin>:\nperf stat: 8 events")


def test_help_has_examples():
    result = fleetscope("--help")
    assert result.returncode == 0
    assert "usage: fleetscope parse" in result.stdout and "examples:" in result.stdout
    assert "fleetscope parse mlc" in result.stdout
