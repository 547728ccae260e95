"""The MLC parser on every real output in tests/fixtures/mlc_samples (a copy of ../shared/fixtures), values read from each file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleetscope.ingest.parsers import ParseError, mlc

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "mlc_samples"


def sample_text(name: str) -> str:
    path = SAMPLES / name
    assert path.is_file(), f"fixture {path} is missing: tests/fixtures holds copies of the shared fixtures"
    return path.read_text(encoding="utf-8")


def parse(name: str) -> dict:
    return mlc.parse(sample_text(name), source=name)


def only_run(parsed: dict, mode: str) -> dict:
    assert [run["mode"] for run in parsed["runs"]] == [mode]
    run = parsed["runs"][0]
    assert run["truncated"] is False and parsed["tool_errors"] == []
    return run


# file -> (version, [(delay, latency ns, MB/s) for the first, a middle and the last row], rows, traffic)
LADDERS = {
    "csit_clx_loaded_latency.txt": ("3.7", [(0, 233.86, 243421.9), (100, 161.65, 236744.8), (20000, 80.19, 2179.9)], 19, "read-only"),
    "csit_dnv_loaded_latency.txt": ("3.5", [(0, 135.35, 27186.0), (50, 139.83, 28419.1), (20000, 93.43, 851.7)], 19, "read-only"),
    "csit_hsw_loaded_latency.txt": ("3.5", [(0, 294.08, 115841.6), (200, 123.72, 72873.6), (20000, 100.77, 1542.5)], 19, "read-only"),
    "csit_skx_loaded_latency.txt": ("3.5", [(0, 282.66, 215712.8), (2500, 90.15, 14672.8), (20000, 81.40, 2541.9)], 19, "read-only"),
    "cml_i7-10750H_v3.11b_loaded_latency_W6_c0.txt": ("3.11b", [(0, 477.23, 30848.3), (50, 95.11, 25213.0), (20000, 65.04, 1054.2)], 19, "W6"),
    "cml_i7-10750H_v3.11b_loaded_latency_b16_W5_c0.txt": ("3.11b", [(0, 1.11, 682553.4), (100, 0.99, 116844.4), (20000, 0.97, 66118.9)], 19, "W5"),
    "cml_i7-10750H_v3.11b_loaded_latency_t4_c0.txt": ("3.11b", [(0, 189.22, 33566.8), (700, 70.77, 7782.5), (20000, 63.76, 1295.1)], 19, "read-only"),
    "v3.10_loaded_latency_W3_l64.txt": ("3.10", [(0, 207.22, 36076.5), (1000, 58.41, 14247.6), (20000, 70.62, 1609.5)], 19, "W3"),
}

# file -> (mode, version, [(label, MB/s)] in file order)
RATIOS = {
    "csit_clx_max_bandwidth.txt": ("max_bandwidth", "3.7", [244114.27, 219441.97, 216603.72, 203679.09, 214902.80]),
    "csit_clx_peak_injection_bandwidth.txt": ("peak_injection_bandwidth", "3.7", [243159.4, 219132.5, 216603.1, 203713.0, 193790.8]),
    "csit_dnv_max_bandwidth.txt": ("max_bandwidth", "3.5", [30032.40, 27450.88, 27567.46, 27501.90, 27124.82]),
    "csit_dnv_peak_injection_bandwidth.txt": ("peak_injection_bandwidth", "3.5", [28150.0, 27425.0, 27565.4, 27489.3, 26878.2]),
    "csit_hsw_max_bandwidth.txt": ("max_bandwidth", "3.5", [115782.41, 105965.78, 103162.38, 88255.82, 105608.10]),
    "csit_hsw_peak_injection_bandwidth.txt": ("peak_injection_bandwidth", "3.5", [115762.2, 106242.2, 103031.8, 87943.7, 100048.4]),
    "csit_skx_max_bandwidth.txt": ("max_bandwidth", "3.5", [216875.73, 182615.14, 178745.67, 149485.27, 180057.87]),
    "csit_skx_peak_injection_bandwidth.txt": ("peak_injection_bandwidth", "3.5", [215733.9, 182141.9, 178615.7, 149911.3, 159533.6]),
    "cml_i7-10750H_v3.11b_peak_injection_bandwidth_c0_l256.txt": ("peak_injection_bandwidth", "3.11b", [21850.8, 23180.6, 23996.5, 24201.4, 22009.9]),
}
RATIO_KEYS = list(mlc.RATIO_TRAFFIC)

# file -> (mode, version, {(cpu node, memory node): value})
MATRICES = {
    "csit_clx_bandwidth_matrix.txt": ("bandwidth_matrix", "3.7", {(0, 0): 122097.7, (0, 1): 51327.9, (1, 0): 51309.2, (1, 1): 122005.5}),
    "csit_clx_latency_matrix.txt": ("latency_matrix", "3.7", {(0, 0): 81.2, (0, 1): 130.2, (1, 0): 130.2, (1, 1): 81.1}),
    "csit_dnv_bandwidth_matrix.txt": ("bandwidth_matrix", "3.5", {(0, 0): 28157.2}),
    "csit_dnv_latency_matrix.txt": ("latency_matrix", "3.5", {(0, 0): 93.1}),
    "csit_hsw_bandwidth_matrix.txt": ("bandwidth_matrix", "3.5", {(0, 0): 57935.5, (0, 1): 30265.2, (1, 0): 30284.6, (1, 1): 58409.9}),
    "csit_hsw_latency_matrix.txt": ("latency_matrix", "3.5", {(0, 0): 101.0, (0, 1): 132.0, (1, 0): 141.2, (1, 1): 98.8}),
    "csit_skx_bandwidth_matrix.txt": ("bandwidth_matrix", "3.5", {(0, 0): 107947.7, (0, 1): 50951.5, (1, 0): 50834.6, (1, 1): 108183.4}),
    "csit_skx_latency_matrix.txt": ("latency_matrix", "3.5", {(0, 0): 81.4, (0, 1): 131.1, (1, 0): 131.1, (1, 1): 81.3}),
}

# file -> (version, HIT ns, HITM ns, {(homed in, writer, reader): ns})
C2C = {
    "csit_clx_c2c_latency.txt": ("3.7", 55.5, 55.6, {("writer", 0, 1): 115.6, ("writer", 1, 0): 115.6,
                                                    ("reader", 0, 1): 178.2, ("reader", 1, 0): 178.4}),
    "csit_hsw_c2c_latency.txt": ("3.5", 42.1, 47.0, {("writer", 0, 1): 108.0, ("writer", 1, 0): 106.9,
                                                    ("reader", 0, 1): 107.7, ("reader", 1, 0): 106.6}),
    "csit_skx_c2c_latency.txt": ("3.5", 53.7, 53.7, {("writer", 0, 1): 113.9, ("writer", 1, 0): 113.9,
                                                    ("reader", 0, 1): 177.9, ("reader", 1, 0): 177.6}),
    "csit_dnv_c2c_latency.txt": ("3.5", 8.8, 8.8, {}),
}

# file -> (version, ns, clocks, clock kind, buffer printed, buffer bytes)
IDLE = {
    "csit_clx_idle_latency.txt": ("3.7", 80.9, 186.1, "core", "2000.000MiB", 2000 << 20),
    "csit_dnv_idle_latency.txt": ("3.5", 93.4, 186.7, "core", "200.000MB", 200 << 20),
    "csit_hsw_idle_latency.txt": ("3.5", 99.0, 227.2, "core", "200.000MB", 200 << 20),
    "csit_skx_idle_latency.txt": ("3.5", 80.8, 202.0, "core", "2000.000MB", 2000 << 20),
    "cml_i7-10850H_v3.11a_idle_latency.txt": ("3.11a", 78.6, 213.3, "base frequency", "200.000MiB", 200 << 20),
    "cml_i7-10750H_v3.11b_idle_latency_b16_l16_c0.txt": ("3.11b", 0.9, 2.4, "base frequency", "0.016MiB", 16 << 10),
}

MULTI_RUN = {  # asserted in their own tests below
    "adl_i7-12700K_v3.10_windows_idle_latency_bsweep.txt", "cml_i7-10850H_v3.11a_default_full.txt",
    "rpl_i9-13900KF_v3.11b_help_usage.txt", "rpl_i9-13900KF_v3.11b_loaded_latency_t10_X_TRUNCATED.txt",
    "v3.11b_idle_latency_b40_x20_concat.txt", "v3.11b_loaded_latency_W2_d0_x10_concat.txt",
    "v3.11b_loaded_latency_d0_bsweep_concat.txt", "v3.11b_loaded_latency_d0_l64_U_concat.txt",
    "v3.11b_loaded_latency_default_x10_concat.txt", "v3.11b_loaded_latency_multi_run_separators.txt",
}


def test_every_mlc_sample_has_asserted_values():
    assert SAMPLES.is_dir(), f"{SAMPLES} is missing: tests/fixtures holds copies of the shared fixtures"
    samples = {path.name for path in SAMPLES.iterdir() if path.name != "SOURCES.md"}
    covered = set(LADDERS) | set(RATIOS) | set(MATRICES) | set(C2C) | set(IDLE) | MULTI_RUN
    assert samples == covered


@pytest.mark.parametrize("name", sorted(LADDERS))
def test_loaded_latency_ladders(name):
    version, checks, count, traffic = LADDERS[name]
    parsed = parse(name)
    run = only_run(parsed, "loaded_latency")
    assert parsed["version"] == version and run["version"] == version
    assert len(run["rows"]) == count and run["traffic"] == traffic
    rows = {row["delay_cycles"]: row for row in run["rows"]}
    for delay, latency, bandwidth in checks:
        assert (rows[delay]["latency_ns"], rows[delay]["bandwidth_mb_s"]) == (latency, bandwidth)
    assert [row["delay_cycles"] for row in run["rows"]] == list(mlc.DEFAULT_DELAYS)
    assert run["throughput_only"] is False


def test_ladder_rows_keep_their_line_and_settings():
    run = only_run(parse("csit_clx_loaded_latency.txt"), "loaded_latency")
    assert run["rows"][0]["line"] == 13 and run["rows"][-1]["line"] == 31
    assert run["command"] == "sudo /home/testuser/mlc --loaded_latency"
    assert run["buffer"] == {"printed": "100.000MiB", "bytes": 100 << 20, "per_thread": True, "from": "printed"}
    assert run["threads_per_core"] == "all"


def test_write_mixes_are_named_from_the_command_line():
    run = only_run(parse("cml_i7-10750H_v3.11b_loaded_latency_W6_c0.txt"), "loaded_latency")
    assert run["options"] == {"mode": "loaded_latency", "W": "6", "c": "0"}
    assert run["traffic_description"] == "0:1 read-non-temporal write"
    assert run["access"] == "random"  # MLC could not disable the prefetchers
    assert "Unable to modify prefetchers (try executing 'modprobe msr')" in run["notes"]
    in_l1 = only_run(parse("cml_i7-10750H_v3.11b_loaded_latency_b16_W5_c0.txt"), "loaded_latency")
    assert in_l1["buffer"]["bytes"] == 16 << 10 and in_l1["buffer"]["from"] == "-b"
    assert in_l1["traffic_description"] == "1:1 read-write"


@pytest.mark.parametrize("name", sorted(RATIOS))
def test_bandwidth_by_read_write_ratio(name):
    mode, version, values = RATIOS[name]
    parsed = parse(name)
    run = only_run(parsed, mode)
    assert parsed["version"] == version
    assert [(row["traffic"], row["bandwidth_mb_s"]) for row in run["rows"]] == list(zip(RATIO_KEYS, values))
    assert run["rows"][0]["label"] == "ALL Reads" and run["rows"][-1]["label"] == "Stream-triad like"


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_latency_and_bandwidth_matrices(name):
    mode, version, cells = MATRICES[name]
    parsed = parse(name)
    run = only_run(parsed, mode)
    key = "latency_ns" if mode == "latency_matrix" else "bandwidth_mb_s"
    assert parsed["version"] == version
    assert {(row["cpu_node"], row["memory_node"]): row[key] for row in run["rows"]} == cells


def test_single_node_matrix_with_a_repeated_banner_is_one_run():
    parsed = parse("csit_dnv_latency_matrix.txt")
    assert parsed["invocations"] == 1
    run = only_run(parsed, "latency_matrix")
    assert run["buffer"]["printed"] == "2000.000MB" and run["rows"][0]["line"] == 10
    assert any("sockets" in note for note in run["notes"])


@pytest.mark.parametrize("name", sorted(C2C))
def test_cache_to_cache_latency(name):
    version, hit, hitm, remote = C2C[name]
    parsed = parse(name)
    run = only_run(parsed, "c2c_latency")
    assert parsed["version"] == version
    local = {row["transfer"]: row["latency_ns"] for row in run["rows"] if row["scope"] == "local_socket"}
    assert local == {"HIT": hit, "HITM": hitm}
    assert {(row["homed_in"], row["writer_node"], row["reader_node"]): row["latency_ns"]
            for row in run["rows"] if row["scope"] == "remote_socket"} == remote
    assert all(row["path"] == "L2->L2" for row in run["rows"])


@pytest.mark.parametrize("name", sorted(IDLE))
def test_idle_latency(name):
    version, latency, clocks, clock, printed, size = IDLE[name]
    parsed = parse(name)
    run = only_run(parsed, "idle_latency")
    assert parsed["version"] == version
    assert run["rows"] == [{"latency_ns": latency, "clocks": clocks, "clock": clock, "line": run["line"]}]
    assert (run["buffer"]["printed"], run["buffer"]["bytes"]) == (printed, size)


def test_windows_transcript_of_a_buffer_sweep():
    parsed = parse("adl_i7-12700K_v3.10_windows_idle_latency_bsweep.txt")
    assert parsed["version"] == "3.10" and parsed["invocations"] == 12
    runs = parsed["runs"]
    assert [run["rows"][0]["latency_ns"] for run in runs] == [3.9, 3.9, 4.0, 16.8, 16.8, 17.0, 34.9, 37.2, 36.8,
                                                              69.9, 69.9, 69.8]
    assert [run["rows"][0]["clocks"] for run in runs][::3] == [14.2, 60.7, 125.8, 252.0]
    assert [run["buffer"]["bytes"] for run in runs][::3] == [900 << 10, 11 << 20, 23 << 20, 60 << 20]
    assert runs[0]["command"] == "mlc --idle_latency -b900k" and runs[0]["buffer"]["printed"] == "0.879MiB"
    assert [run["invocation"] for run in runs] == list(range(12))
    assert runs[-1]["rows"][0]["line"] == 94


def test_default_run_prints_five_sections():
    parsed = parse("cml_i7-10850H_v3.11a_default_full.txt")
    assert parsed["version"] == "3.11a" and parsed["invocations"] == 1
    modes = [run["mode"] for run in parsed["runs"]]
    assert modes == ["latency_matrix", "peak_injection_bandwidth", "bandwidth_matrix", "loaded_latency", "c2c_latency"]
    latency, peak, bandwidth, loaded, c2c = parsed["runs"]
    assert latency["rows"] == [{"cpu_node": 0, "memory_node": 0, "latency_ns": 77.9, "line": 7}]
    assert latency["access"] == "random"
    assert [row["bandwidth_mb_s"] for row in peak["rows"]] == [17602.0, 20384.0, 23013.0, 32980.6, 21714.6]
    assert bandwidth["rows"][0]["bandwidth_mb_s"] == 17610.3 and bandwidth["traffic"] == "read-only"
    assert (loaded["rows"][0]["latency_ns"], loaded["rows"][0]["bandwidth_mb_s"]) == (345.17, 17347.0)
    assert (loaded["rows"][-1]["latency_ns"], loaded["rows"][-1]["bandwidth_mb_s"]) == (74.79, 1063.8)
    assert [(row["transfer"], row["latency_ns"]) for row in c2c["rows"]] == [("HIT", 29.7), ("HITM", 30.5)]
    assert not any(run["truncated"] for run in parsed["runs"])
    assert all(run["command_line"] is None for run in parsed["runs"])


def test_usage_text_is_a_tool_error_not_a_measurement():
    parsed = parse("rpl_i9-13900KF_v3.11b_help_usage.txt")
    assert parsed["version"] == "3.11b"
    assert parsed["runs"] == []
    assert parsed["tool_errors"] == [{"line": 2, "message": "Invalid Argument:--help"}]
    assert mlc.rows(parsed) == []


def test_aborted_run_keeps_its_rows_and_is_flagged():
    parsed = parse("rpl_i9-13900KF_v3.11b_loaded_latency_t10_X_TRUNCATED.txt")
    run = parsed["runs"][0]
    assert len(parsed["runs"]) == 1 and run["mode"] == "loaded_latency"
    assert run["truncated"] is True and "delay 15" in run["truncation"] and "line 15" in run["truncation"]
    assert [(row["delay_cycles"], row["latency_ns"], row["bandwidth_mb_s"]) for row in run["rows"]] == [
        (0, 1261.27, 16790.5), (2, 1248.66, 16105.3), (8, 1243.62, 16126.7)]
    assert run["threads_per_core"] == "one" and run["options"]["X"] == ""


CONCATENATED = {
    "v3.11b_idle_latency_b40_x20_concat.txt": (
        "idle_latency", [1.1, 1.2, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1], None),
    "v3.11b_loaded_latency_W2_d0_x10_concat.txt": (
        "loaded_latency", [671.14, 674.05, 646.38, 772.13, 750.14, 680.45, 730.16, 753.31, 718.02, 732.41],
        [30756.0, 30282.7, 31192.4, 30759.4, 30358.9, 30828.6, 28583.6, 28944.7, 28803.5, 29301.5]),
    "v3.11b_loaded_latency_d0_l64_U_concat.txt": (
        "loaded_latency", [674.85, 636.43, 615.20, 528.14, 657.26, 654.80, 611.76, 555.31, 640.59, 540.41],
        [22342.3, 23690.9, 22921.4, 22371.5, 22430.6, 23022.3, 22588.9, 23514.4, 23801.9, 24401.6]),
    "v3.11b_loaded_latency_d0_bsweep_concat.txt": (
        "loaded_latency", [4.36, 4.51, 4.08, 7.20, 6.32, 97.00, 338.86, 365.35, 350.87, 314.76, 349.87, 399.75,
                           380.74, 349.34], None),
}


@pytest.mark.parametrize("name", sorted(CONCATENATED))
def test_concatenated_single_point_runs(name):
    mode, latencies, bandwidths = CONCATENATED[name]
    parsed = parse(name)
    runs = parsed["runs"]
    assert parsed["invocations"] == len(runs) == len(latencies)
    assert all(run["mode"] == mode and len(run["rows"]) == 1 and not run["truncated"] for run in runs)
    assert [run["rows"][0]["latency_ns"] for run in runs] == latencies
    if bandwidths:
        assert [run["rows"][0]["bandwidth_mb_s"] for run in runs] == bandwidths


def test_working_set_sweep_reads_each_buffer_size():
    runs = parse("v3.11b_loaded_latency_d0_bsweep_concat.txt")["runs"]
    assert [run["buffer"]["bytes"] for run in runs] == [(64 << 10) << i for i in range(14)]
    assert runs[0]["buffer"]["printed"] == "0.062MiB" and runs[-1]["buffer"]["printed"] == "512.000MiB"
    assert (runs[0]["rows"][0]["bandwidth_mb_s"], runs[-1]["rows"][0]["bandwidth_mb_s"]) == (542084.2, 38012.2)
    w2 = parse("v3.11b_loaded_latency_W2_d0_x10_concat.txt")["runs"]
    assert {run["traffic"] for run in w2} == {"W2"}  # this file has no "Using Read-only traffic type" line


def test_ten_full_ladders_in_one_file():
    runs = parse("v3.11b_loaded_latency_default_x10_concat.txt")["runs"]
    assert len(runs) == 10 and all(len(run["rows"]) == 19 and not run["truncated"] for run in runs)
    assert (runs[0]["rows"][0]["latency_ns"], runs[0]["rows"][0]["bandwidth_mb_s"]) == (423.51, 36699.2)
    assert (runs[4]["rows"][0]["latency_ns"], runs[4]["rows"][0]["bandwidth_mb_s"]) == (324.13, 42725.2)
    assert (runs[9]["rows"][-1]["latency_ns"], runs[9]["rows"][-1]["bandwidth_mb_s"]) == (128.55, 973.2)
    assert runs[9]["line"] > runs[8]["end_line"]


def test_runs_between_separators_carry_their_label():
    runs = parse("v3.11b_loaded_latency_multi_run_separators.txt")["runs"]
    assert [run["label"] for run in runs] == ["Run 1", "Run 2", "Run 3"]
    assert runs[0]["buffer"]["printed"] == "133.167MiB" and runs[0]["access"] == "random"
    assert (runs[0]["rows"][0]["latency_ns"], runs[0]["rows"][0]["bandwidth_mb_s"]) == (210.00, 78816.3)
    by_delay = {row["delay_cycles"]: row for row in runs[1]["rows"]}
    assert (by_delay[700]["latency_ns"], by_delay[700]["bandwidth_mb_s"]) == (207.12, 16707.2)
    assert (runs[2]["rows"][-1]["latency_ns"], runs[2]["rows"][-1]["bandwidth_mb_s"]) == (155.95, 1083.9)


# ---- tolerance: the same output copied differently reads the same ------------------------------


def _measurements(parsed: dict) -> list:
    return [[{k: v for k, v in row.items() if k != "line"} for row in run["rows"]] for run in parsed["runs"]]


@pytest.mark.parametrize("name", ["cml_i7-10850H_v3.11a_default_full.txt", "csit_hsw_c2c_latency.txt",
                                  "v3.11b_loaded_latency_multi_run_separators.txt"])
def test_tabs_spaces_indent_and_windows_line_ends_do_not_matter(name):
    text = sample_text(name)
    reformatted = "\r\n".join("    " + line.replace("\t", "   ") for line in text.splitlines())
    assert _measurements(mlc.parse(reformatted, "copy.txt")) == _measurements(mlc.parse(text, name))


def test_throughput_only_rows_have_no_latency():
    # -T prints 0.00 in the latency column: not a latency
    text = sample_text("v3.11b_loaded_latency_W2_d0_x10_concat.txt").split("Intel(R)")[1]
    text = "Intel(R)" + text.replace("-W2 -d0", "-W2 -d0 -T").replace("671.14", "  0.00")
    run = mlc.parse(text, "t.txt")["runs"][0]
    assert run["throughput_only"] is True
    assert run["rows"][0]["latency_ns"] is None and run["rows"][0]["bandwidth_mb_s"] == 30756.0
    assert [sample["metric"] for sample in mlc.rows(mlc.parse(text, "t.txt"))] == ["bandwidth"]


def test_a_default_ladder_cut_at_the_end_of_the_file_is_truncated():
    lines = sample_text("csit_skx_loaded_latency.txt").splitlines()[:20]  # through delay 300
    run = mlc.parse("\n".join(lines), "cut.txt")["runs"][0]
    assert run["truncated"] is True and "300" in run["truncation"] and len(run["rows"]) == 8


def test_a_ratio_list_cut_short_is_truncated():
    lines = sample_text("csit_hsw_max_bandwidth.txt").splitlines()[:13]  # through "3:1 Reads-Writes"
    run = mlc.parse("\n".join(lines), "cut.txt")["runs"][0]
    assert run["truncated"] is True and "3:1 Reads-Writes" in run["truncation"] and len(run["rows"]) == 2


def test_output_ending_before_any_measurement_is_a_truncated_run():
    lines = sample_text("csit_clx_idle_latency.txt").splitlines()[:5]
    run = mlc.parse("\n".join(lines), "cut.txt")["runs"][0]
    assert (run["mode"], run["rows"], run["truncated"]) == ("idle_latency", [], True)


def test_a_declared_binary_megabyte_is_converted_to_1e6_bytes():
    text = sample_text("csit_clx_peak_injection_bandwidth.txt").replace("1,000,000 Bytes/sec", "1,048,576 Bytes/sec")
    run = mlc.parse(text, "mib.txt")["runs"][0]
    assert run["rows"][0]["bandwidth_mb_s"] == pytest.approx(243159.4 * 1.048576)
    assert any("1048576" in note for note in run["notes"])


@pytest.mark.parametrize(("text", "line", "message"), [
    ("", 1, "empty input"),
    ("   \n\n", 1, "empty input"),
    ("hello world\n", 1, "unrecognised MLC output"),
    ("Intel(R) Memory Latency Checker - v3.11b\nMeasuring Memory Bandwidth Scan\n", 2, "does not know"),
    ("Intel(R) Memory Latency Checker - v3.11b\nMeasuring idle latencies (in ns)...\n\t\tNuma node\n"
     "Numa node\t0\t1\n0\t81.2\n", 5, "1 values for 2 columns"),
    ("Intel(R) Memory Latency Checker - v3.11b\nMeasuring Loaded Latencies for the system\nInject\tLatency\tBandwidth\n"
     "Delay\t(ns)\tMB/sec\n==========================\n 00000\t1.5\t2.5\n 00002\t1,5\t2.5\n", 7, "loaded-latency row"),
    ("Intel(R) Memory Latency Checker - v3.11b\nMeasuring cache-to-cache transfer latency (in ns)...\n"
     "Local Socket L2->L2 HIT  latency\tfast\n", 3, "cache-to-cache"),
])
def test_unreadable_output_names_file_and_line(text, line, message):
    with pytest.raises(ParseError) as raised:
        mlc.parse(text, "bad.txt")
    assert str(raised.value).startswith(f"bad.txt:{line}: ") and message in str(raised.value)
    assert raised.value.line == line


def test_long_format_rows_and_json():
    parsed = parse("csit_clx_loaded_latency.txt")
    samples = mlc.rows(parsed)
    assert len(samples) == 38
    assert samples[0] == {"metric": "latency", "value": 233.86, "unit": "ns",
                          "params": {"mode": "loaded_latency", "run": 0, "invocation": 0, "buffer_bytes": 100 << 20,
                                     "traffic": "read-only", "delay_cycles": 0}}
    assert samples[1]["metric"] == "bandwidth" and samples[1]["unit"] == "MB/s" and samples[1]["value"] == 243421.9
    idle = mlc.rows(parse("csit_clx_idle_latency.txt"))
    assert [(s["metric"], s["value"], s["unit"]) for s in idle] == [("latency", 80.9, "ns"), ("latency_clocks", 186.1, "clocks")]
    for name in sorted(SAMPLES.glob("*.txt")):
        parsed = mlc.parse(name.read_text(encoding="utf-8"), name.name)
        assert json.loads(json.dumps(parsed)) == parsed
        assert all(sample["value"] is not None for sample in mlc.rows(parsed))
