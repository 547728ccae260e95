"""`fleetscope infer --csv`: the ingest's inference on any curve a user has, as a table or JSON, read as the
user says it was measured (pattern, page size, relative), with the plausibility rules that can run on it; a CSV
it cannot read is an error naming the file and line (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleetscope.analyze.inference import INFERENCE_VERSION

CURVES = Path(__file__).resolve().parents[1] / "fixtures" / "curves"

CACHE_CSV = """\
# lat_mem_rd from an old lab machine: bytes, ns and the spread of each point
bytes,ns,std
4096,1.25,0.01
8192,1.26,0.01
16384,1.25,0.3
32768,1.3,0.01
65536,4.0,0.01
131072,4.1,0.01
262144,4.2,0.01
524288,9,0.01
1048576,15,0.01
2097152,15.5,0.01
4194304,16,0.01
8388608,80,0.01
16777216,130,0.01
33554432,131,0.01
67108864,132,0.01
"""


def test_a_cache_curve_prints_its_levels_beside_the_reported_sizes(cli, tmp_path):
    path = tmp_path / "curve.csv"
    path.write_text(CACHE_CSV)
    table = cli("infer", "--csv", path, "--caches", "32k,512k,32m")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[1].split()[:3] == ["level", "latency", "ns"]
    # one point per octave: each size is the bracket the curve gives, with the reported size where it lies in it
    # (never a log-midpoint printed as if exact: issue 28)
    assert lines[2].split()[:7] == ["L1", "1.25", "32–64", "KiB", "·", "published", "32"]
    assert lines[3].split()[2:7] == ["0.5–1", "MiB", "·", "published", "512"]
    assert lines[4].split()[2:4] == ["4–8", "MiB"] and "too coarse for a number" in lines[4]
    assert lines[5].startswith("DRAM") and "memory" in lines[5]
    assert "noisy (std >= 10% of ns): 16384 bytes" in table.stdout

    document = json.loads(cli("infer", "--csv", path, "--format", "json").stdout)
    assert document["kind"] == "cache_levels" and document["inference_version"] == INFERENCE_VERSION
    assert [(level["size_low_bytes"], level["size_high_bytes"], level["capacity_bytes"])
            for level in document["levels"]] == [(32768, 65536, None), (524288, 1048576, None),
                                                 (4194304, 8388608, None), (None, None, None)]
    assert [level["size_estimator"] for level in document["levels"]] == ["onset", "set-load", "onset", None]
    assert document["levels"][0]["latency_cycles"] is None


def test_a_pages_curve_gives_tlb_entries(cli, tmp_path):
    pages = [8 * 2**step for step in range(12)]
    ns = [1.25 if count <= 64 else 3.5 if count <= 2048 else 30.0 for count in pages]
    path = tmp_path / "tlb.csv"
    path.write_text("pages,ns\n" + "".join(f"{count},{value}\n" for count, value in zip(pages, ns)))
    document = json.loads(cli("infer", "--csv", path, "--format", "json").stdout)
    assert document["kind"] == "tlb"
    assert (document["l1_onset_pages"], document["l1_completion_pages"]) == (64, 128)
    # an octave-wide step gives its bracket, not a count (a log-midpoint of 91 would read as exact)
    assert (document["l1_low_pages"], document["l1_high_pages"], document["l1_entries"]) == (64, 128, None)
    assert (document["l2_onset_pages"], document["l2_completion_pages"]) == (2048, 4096)
    assert document["l1_miss_ns"] == pytest.approx(2.25) and document["walk_ns"] == pytest.approx(28.75)
    table = cli("infer", "--csv", path)
    assert "L1 TLB: 64–128 entries (step from 64 to 128 pages)" in table.stdout
    finer = [*pages, 72, 76, 80]
    ns = [1.25 if count <= 72 else 3.5 if count <= 2048 else 30.0 for count in finer]
    path.write_text("pages,ns\n" + "".join(f"{count},{value}\n" for count, value in sorted(zip(finer, ns))))
    assert "L1 TLB: 72–76 · onset 74 entries" in cli("infer", "--csv", path).stdout


@pytest.mark.parametrize("content, message", [
    ("", "curve.csv:1: empty"),
    ("size,latency\n4096,1\n", "curve.csv:1: the header must name 'ns' and one of 'bytes' or 'pages'"),
    ("bytes,ns\n4096,1.2\n8192,fast\n", "curve.csv:3: ns 'fast' is not a number"),
    ("bytes,ns\n4096,1.2\n8192\n", "curve.csv:3: 1 fields, the header has 2"),
    ("bytes,ns\n4096,1.2\n-8192,1.3\n", "curve.csv:3: bytes must be a positive number"),
    ("bytes,ns\n4096.5,1.2\n8192,1.3\n", "curve.csv:2: bytes must be a whole number"),
    ("bytes,ns,std\n4096,1.2,x\n", "curve.csv:2: std 'x' is not a number"),
    ("bytes,ns\n4096,1.2\n4096,1.3\n", "curve.csv:3: 1 distinct bytes values: a curve needs two or more"),
    # zero is a value only on a relative curve's first plateau
    ("bytes,ns\n4096,1.2\n8192,0\n16384,4\n", "curve.csv:3: ns must be a positive number, not '0' (a relative curve"),
    ("pages,ns\n8,0\n16,1.2\n", "curve.csv:2: ns must be a positive number, not '0'"),
])
def test_a_bad_csv_names_the_file_and_line_and_exits_2(cli, tmp_path, content, message):
    path = tmp_path / "curve.csv"
    path.write_text(content)
    result = cli("infer", "--csv", path)
    assert result.returncode == 2
    assert result.stderr.startswith("fleetscope infer: error: ") and message in result.stderr
    assert result.stdout == ""


def test_a_missing_file_is_an_error_too(cli, tmp_path):
    result = cli("infer", "--csv", tmp_path / "nope.csv")
    assert result.returncode == 2 and "nope.csv: cannot read it" in result.stderr


def test_a_kernel_jsonl_becomes_a_csv_the_inference_reads(tmp_path):
    from fleetscope.ingest.curve_csv import kernel_jsonl_to_csv, read_curve

    sweep = tmp_path / "chase.jsonl"
    sweep.write_text("".join(json.dumps({"kernel": "chase", "params": {"working_set_bytes": size, "page_policy": "thp"},
                                         "samples": [ns, ns * 1.1], "summary": {"min": ns}}) + "\n"
                             for size, ns in ((4096, 1.25), (8192, 1.26), (65536, 4.0))))
    csv_path = tmp_path / "chase.csv"
    csv_path.write_text(kernel_jsonl_to_csv(sweep))
    curve = read_curve(csv_path)
    assert curve.kind == "bytes" and curve.sizes == [4096, 8192, 65536] and curve.ns == [1.25, 1.26, 4.0]


def test_a_ramlat_curve_read_as_one_line_per_page_reports_its_tlb_step_apart_from_the_levels(cli):
    # Sapphire Rapids: 48 KiB L1d, 2 MiB L2, 22.5 MB L3; the 256 -> 512 KiB step is 64 L1 DTLB entries x 4 KiB
    path = CURVES / "intel_xeon_w3-2435_sapphirerapids_ramlat.csv"
    document = json.loads(cli("infer", "--csv", path, "--pattern", "line-per-page", "--format", "json").stdout)
    assert [level["level"] for level in document["levels"]] == ["L1", "L2", "L3", "L4"]
    assert [(level["onset_bytes"], level["completion_bytes"]) for level in document["levels"][:3]] == [
        (32768, 65536), (1 << 20, 4 << 20), (16 << 20, 64 << 20)]
    assert [level["confidence"] for level in document["levels"]] == ["high", "interval", "interval", None]
    (step,) = document["tlb_steps"]
    assert (step["level"], step["onset_entries"], step["completion_entries"]) == ("L2", 64, 128)
    assert step["added_ns"] == pytest.approx(1.5, abs=0.01)
    assert document["reading"] == {"pattern": "line-per-page", "page_bytes": 4096, "relative": False,
                                   "relative_because": None}
    flag, sized = document["flags"]
    assert (flag["rule"], flag["status"], flag["item"]) == ("dram_chase_too_fast", "clear", "L4")
    assert (sized["rule"], sized["status"]) == ("size_off_stated", "not_run") and "infer --caches" in sized["reason"]
    assert flag["value"] == pytest.approx(100.4)
    # the same step counted against 16 KiB pages is 16-32 entries
    larger = json.loads(cli("infer", "--csv", path, "--pattern", "line-per-page", "--page-size", "16k",
                            "--format", "json").stdout)
    assert (larger["tlb_steps"][0]["onset_entries"], larger["tlb_steps"][0]["completion_entries"]) == (16, 32)
    # a sequential walk shares a TLB miss among a page's lines: the step stays in the level's note, no entries
    sequential = json.loads(cli("infer", "--csv", path, "--pattern", "sequential", "--format", "json").stdout)
    assert sequential["tlb_steps"] == [] and "not a TLB reach" in sequential["levels"][1]["note"]


def test_a_relative_curve_is_read_stated_or_not_and_keeps_its_own_terms(cli):
    path = CURVES / "aws_graviton2_m6g_neoverse_n1_tinymembench_thp.csv"  # ns over L1: 0.0 up to 64 KiB
    stated = json.loads(cli("infer", "--csv", path, "--relative", "--format", "json").stdout)
    read = json.loads(cli("infer", "--csv", path, "--format", "json").stdout)
    assert stated["levels"] == read["levels"] and stated["relative"] and read["relative"]
    assert read["reading"]["relative"] and "up to 65536 bytes read 0" in read["reading"]["relative_because"]
    assert [level["latency_ns"] for level in read["levels"]][0] == 0.0
    assert any("assumed L1 latency" in note for note in read["notes"])
    # no absolute latency: the DRAM rule says it cannot run, and why
    assert [flag["status"] for flag in read["flags"]] == ["not_run", "not_run"]
    table = cli("infer", "--csv", path).stdout
    assert "latency ns over L1" in table and "read as relative" in table


def test_a_memory_plateau_under_25_ns_is_flagged_with_its_evidence(cli, tmp_path):
    path = tmp_path / "fast.csv"
    path.write_text("bytes,ns\n" + "".join(f"{2**exponent},{1.2 if exponent < 16 else 9.0}\n" for exponent in range(12, 26)))
    table = cli("infer", "--csv", path)
    assert table.returncode == 0
    assert "flag flagged: dram_chase_too_fast: 1 of 1 checked break it; worst L2: 9 ns" in table.stdout
    with_caches = json.loads(cli("infer", "--csv", path, "--caches", "32k", "--format", "json").stdout)
    assert with_caches["flags"][0]["item"] == "DRAM" and with_caches["flags"][0]["status"] == "flagged"


def test_sizes_off_those_caches_states_are_flagged_on_a_curve_alone(cli):
    # the Zen 3 EPYC's ramlat curve, 4 KiB pages: its 32 MiB L3 rises from 8 MiB, where its L2 TLB's reach ends
    path = CURVES / "amd_epyc_74f3_zen3_ramlat.csv"
    document = json.loads(cli("infer", "--csv", path, "--pattern", "line-per-page", "--caches", "32k,512k,32m",
                              "--format", "json").stdout)
    (sized,) = [flag for flag in document["flags"] if flag["rule"] == "size_off_stated"]
    assert (sized["status"], sized["item"], sized["value"]) == ("flagged", "curve L3 8 MiB-16 MiB vs stated 32 MiB", 0.5)
    assert "1 of 3 checked break it" in sized["evidence"] and "a TLB's reach ended inside the level" in sized["evidence"]
    table = cli("infer", "--csv", path, "--pattern", "line-per-page", "--caches", "32k,512k,32m").stdout
    assert "flag flagged: size_off_stated: 1 of 3 checked break it" in table


def test_a_relative_pages_curve_and_a_bad_page_size_are_refused(cli):
    tlb = CURVES / "tegra_k1_t124_cortex-a15_tlb_test.csv"
    result = cli("infer", "--csv", tlb, "--relative")
    assert result.returncode == 2 and "a relative curve must be a bytes,ns curve" in result.stderr
    result = cli("infer", "--csv", tlb, "--page-size", "4q")
    assert result.returncode == 2 and "'4q' is not a size" in result.stderr
