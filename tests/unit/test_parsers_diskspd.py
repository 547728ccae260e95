"""The DiskSpd parser on real outputs from public repositories (tests/fixtures/diskspd/SOURCES.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fleetscope.ingest.parsers import ParseError, decode, diskspd

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "diskspd"
TEXT = "diskspd_text_L_randrw70_4k_qd1.txt"
XML_LATENCY = "diskspd-2.0.21a_xml_L_randrw70_4k_qd1.xml"
XML_PLAIN = "diskspd-2.0.21a_xml_seqread_64k_qd2_4threads.xml"


def sample_text(name: str) -> str:
    path = SAMPLES / name
    assert path.is_file(), f"fixture {path} is missing"
    return path.read_text(encoding="utf-8")


def parse(name: str) -> dict:
    return diskspd.parse(sample_text(name), source=name)


def totals(parsed: dict) -> dict[str, dict]:
    return {total["direction"]: total for total in parsed["timespans"][0]["totals"]}


def percentiles(parsed: dict, direction: str) -> dict[float, int]:
    return {p["percentile"]: p["value_ns"] for p in parsed["timespans"][0]["percentiles"] if p["direction"] == direction}


def test_every_sample_is_tested_and_has_its_provenance_recorded():
    samples = {path.name for path in SAMPLES.iterdir() if path.name != "SOURCES.md"}
    assert samples == {TEXT, XML_LATENCY, XML_PLAIN}
    sources = (SAMPLES / "SOURCES.md").read_text(encoding="utf-8")
    for name in samples:
        (row,) = [line for line in sources.splitlines() if line.startswith(f"| `{name}` |")]
        assert re.search(r"\| `[0-9a-f]{40}` \|", row) and ("MIT" in row or "Apache-2.0" in row)


def test_text_report_with_latency_percentiles():
    parsed = parse(TEXT)
    assert (parsed["format"], parsed["version"], parsed["computer_name"]) == ("text", None, "QuickTest2")
    assert parsed["start_time"] == "2021/04/16 19:03:38 UTC"
    profile = parsed["profile"]
    assert (profile["duration_s"], profile["warmup_s"], profile["cooldown_s"], profile["measure_latency"]) == (30, 15, 0, True)
    assert profile["targets"] == [{"path": "diskspd.dat", "block_size_bytes": 4096, "outstanding_ios_per_thread": 1,
                                   "threads_per_file": 1, "write_ratio_percent": 30, "access": "random"}]
    span = parsed["timespans"][0]
    assert (span["index"], span["line"], span["test_time_s"], span["thread_count"], span["proc_count"]) == (1, 29, 30.01, 1, 4)
    assert span["cpu_average_percent"] == {"usage": 0.82, "user": 0.10, "kernel": 0.72, "idle": 99.18}
    by_direction = totals(parsed)
    assert by_direction["total"] == {"direction": "total", "bytes": 146169856, "ios": 35686, "iops": 1189.03,
                                     "bw_bytes_per_s": 1189.03 * 4096, "lat_mean_ns": 840000, "lat_stddev_ns": 1051000,
                                     "iops_stddev": 129.18}
    assert (by_direction["read"]["ios"], by_direction["read"]["iops"], by_direction["read"]["lat_mean_ns"]) == (25060, 834.98, 272000)
    assert (by_direction["write"]["bytes"], by_direction["write"]["lat_stddev_ns"]) == (43524096, 1037000)
    assert span["empty_directions"] == []
    assert [(t["direction"], t["thread"], t["target"]) for t in span["threads"]] == [
        ("total", 0, "diskspd.dat"), ("read", 0, "diskspd.dat"), ("write", 0, "diskspd.dat")]
    read = percentiles(parsed, "read")
    assert len(read) == 15
    assert (read[0.0], read[50.0], read[99.9], read[100.0]) == (36000, 232000, 1608000, 7990000)
    assert percentiles(parsed, "write")[99.9999999] == 35257000 and percentiles(parsed, "total")[25.0] == 198000


def test_xml_report_with_latency_buckets():
    parsed = parse(XML_LATENCY)
    assert (parsed["format"], parsed["version"], parsed["computer_name"]) == ("xml", "2.0.21a", "QuickTest2")
    assert parsed["profile"]["targets"][0] == {"path": "diskspd.test", "block_size_bytes": 4096,
                                               "outstanding_ios_per_thread": 1, "threads_per_file": 1,
                                               "write_ratio_percent": 30, "access": "random"}
    span = parsed["timespans"][0]
    assert (span["test_time_s"], span["thread_count"], span["line"]) == (120.01, 1, 66)
    by_direction = totals(parsed)
    read = by_direction["read"]
    assert (read["bytes"], read["ios"], read["lat_mean_ns"], read["lat_stddev_ns"], read["iops_stddev"]) == (
        152215552, 37162, 2477000, 2732000, 34.796)
    assert read["iops"] == pytest.approx(37162 / 120.01) and read["bw_bytes_per_s"] == pytest.approx(152215552 / 120.01)
    assert (by_direction["write"]["lat_mean_ns"], by_direction["total"]["lat_mean_ns"]) == (1767000, 2266000)
    assert by_direction["total"]["iops_stddev"] == 45.369
    read_percentiles = percentiles(parsed, "read")
    assert len(read_percentiles) == 108
    assert (read_percentiles[0.0], read_percentiles[50.0], read_percentiles[99.0], read_percentiles[99.9],
            read_percentiles[100.0]) == (45000, 2250000, 21897000, 23166000, 33846000)
    assert percentiles(parsed, "write")[99.9] == 6649000 and percentiles(parsed, "total")[99.0] == 19270000
    (thread_read,) = [t for t in span["threads"] if t["direction"] == "read"]
    assert (thread_read["target"], thread_read["lat_mean_ns"], thread_read["lat_stddev_ns"]) == ("diskspd.test", 2477000, 2732000)


def test_xml_report_without_latency_and_without_writes():
    parsed = parse(XML_PLAIN)
    assert (parsed["computer_name"], parsed["start_time"]) == ("pkb-044ffc87-0", "2018/10/18 21:39:04 UTC")
    assert parsed["profile"]["measure_latency"] is False
    assert parsed["profile"]["targets"][0] == {"path": "C:\\scratch\\testfile.dat", "block_size_bytes": 65536,
                                               "outstanding_ios_per_thread": 2, "threads_per_file": 4,
                                               "write_ratio_percent": 0, "access": "sequential"}
    span = parsed["timespans"][0]
    assert (span["test_time_s"], span["thread_count"], span["cpu_average_percent"]["usage"]) == (30.02, 4, 3.20)
    assert span["empty_directions"] == ["write"] and span["percentiles"] == []
    read = totals(parsed)["read"]
    assert (read["bytes"], read["ios"]) == (1484062720 + 1482620928 + 1477705728 + 1517420544, 22645 + 22623 + 22548 + 23154)
    assert read["lat_mean_ns"] is None and read["iops"] == pytest.approx(90970 / 30.02)
    assert [t["thread"] for t in span["threads"] if t["direction"] == "read"] == [0, 1, 2, 3]
    assert not any(s["params"]["direction"] == "write" for s in diskspd.rows(parsed))


def test_text_and_xml_share_one_shape():
    text, xml = parse(TEXT), parse(XML_LATENCY)
    assert text.keys() == xml.keys()
    assert text["timespans"][0].keys() == xml["timespans"][0].keys()
    assert totals(text)["read"].keys() == totals(xml)["read"].keys()


def test_a_windows_console_copy_reads_the_same():
    text = sample_text(TEXT)
    console = "C:\\diskspd>diskspd.exe -b4K -d30 -L -r -w30 diskspd.dat\r\n\r\n" + text.replace("\n", "\r\n") + "\r\nC:\\diskspd>\r\n"
    (copied,), (original,) = diskspd.parse(console, "console.txt")["timespans"], parse(TEXT)["timespans"]
    assert copied["line"] == original["line"] + 2
    assert {**copied, "line": None} == {**original, "line": None}
    # PowerShell's `diskspd ... > out.txt` writes UTF-16 with a BOM
    utf16 = diskspd.parse(decode(text.replace("\n", "\r\n").encode("utf-16")), "ps.txt")
    assert utf16["timespans"] == parse(TEXT)["timespans"]


@pytest.mark.parametrize(("text", "line", "message"), [
    ("", 1, "empty input"),
    ("hello\n", 1, "expected DiskSpd output"),
    ("Input parameters:\n\n\tduration: 30s\n", 3, "no 'Results for timespan'"),
    ('<?xml version="1.0"?>\n<!DOCTYPE Results [<!ENTITY x "y">]>\n<Results/>\n', 2, "DTD"),
    ("<Results>\n  <System>\n</Results>\n", 3, "not valid XML: mismatched tag"),
    ("<Results>\n  <TimeSpan>\n    <TestTimeSeconds>ten</TestTimeSeconds>\n  </TimeSpan>\n</Results>\n", 3, "TestTimeSeconds"),
    ("<Results>\n  <System/>\n</Results>\n", 1, "no <TimeSpan> results"),
    ("<Profile/>\n", 1, "DiskSpd writes <Results>"),
    ("<Results>\n" + "<a>" * 64 + "\n", 2, "XML nested deeper than 64 elements"),
])
def test_unreadable_input_names_file_and_line(text, line, message):
    with pytest.raises(ParseError) as raised:
        diskspd.parse(text, "d.out")
    assert str(raised.value).startswith(f"d.out:{line}: ") and message in str(raised.value)


def test_damaged_text_rows_are_errors_with_lines():
    text = sample_text(TEXT)
    with pytest.raises(ParseError, match=r"^d\.txt:50: total IO row has 7 columns, the header 8"):
        diskspd.parse(text.replace("     129.18 |     1.051\n", "     1.051\n"), "d.txt")
    with pytest.raises(ParseError, match=r"^d\.txt:76: cannot read this latency percentile row"):
        diskspd.parse(text.replace("   95th |", "   95% |"), "d.txt")
    with pytest.raises(ParseError, match=r"^d\.txt:72: 25th read latency \(ms\): expected a number"):
        diskspd.parse(text.replace("   25th |      0.175", "   25th |      0.1x5"), "d.txt")


def test_long_format_rows():
    samples = diskspd.rows(parse(TEXT))
    keyed = {(s["metric"], s["params"]["direction"], s["params"].get("percentile")): s for s in samples}
    iops = keyed[("iops", "read", None)]
    assert (iops["value"], iops["unit"]) == (834.98, "iops")
    assert iops["params"] == {"timespan": 1, "direction": "read", "threads": 1, "block_size_bytes": 4096,
                              "outstanding_ios_per_thread": 1, "write_ratio_percent": 30, "access": "random"}
    assert keyed[("latency_percentile", "write", 99.0)]["value"] == 6107000
    assert keyed[("bandwidth", "total", None)]["unit"] == "B/s"
    assert len(samples) == 3 * 7 + 45
    for path in sorted(SAMPLES.iterdir()):
        if path.name != "SOURCES.md":
            parsed = diskspd.parse(path.read_text(encoding="utf-8"), path.name)
            assert json.loads(json.dumps(parsed)) == parsed
