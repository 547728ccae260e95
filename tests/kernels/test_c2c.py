"""Tests for the `c2c` (core-to-core latency) kernel of fleetscope-kernels, run as a subprocess
(fixtures in conftest.py)."""

import itertools
import math
import os
import statistics
import subprocess
from pathlib import Path

import pytest

from kernelrun import QUICK, parse_lines

TOP_KEYS = {"schema_version", "experiment", "kernel", "metric", "unit", "params",
            "samples", "summary", "context"}
PARAM_KEYS = {"cpu_a", "cpu_b", "smt_siblings", "same_core", "same_package", "numa_node_a",
              "numa_node_b", "core_id_a", "core_id_b", "package_a", "package_b",
              "round_trips_per_sample", "one_way", "seed"}
SUMMARY_KEYS = {"min", "median", "mean", "ci95_low", "ci95_high", "count"}
CONTEXT_KEYS = {"precision", "counters", "canary_before_ns", "canary_after_ns", "core_clock_ghz",
                "median_cycles", "wall_s", "order_index"}
SYSFS = Path("/sys/devices/system")

ALLOWED = sorted(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="c2c needs two allowed CPUs")
TWO = ",".join(str(cpu) for cpu in ALLOWED[:2])


def c2c_records(run, *args):
    result = run("c2c", *args)
    assert result.returncode == 0, result.stderr
    return parse_lines(result.stdout)


def run_with(build, *args, env=None, cpus=None):
    """The binary with extra environment or a narrower affinity mask."""
    def narrow():
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
    return subprocess.run([str(build["binary"]), "c2c", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})}, preexec_fn=narrow)


def by_pair(records):
    return {(r["params"]["cpu_a"], r["params"]["cpu_b"]): r for r in records}


def parse_cpulist(text):
    cpus = []
    for item in filter(None, text.strip().split(",")):
        low, _, high = item.partition("-")
        cpus += range(int(low), int(high or low) + 1)
    return cpus


def read_or_none(path):
    try:
        return path.read_text().strip()
    except OSError:
        return None


def sysfs_facts(cpu):
    """Topology of one CPU, read here independently of the C code."""
    topology = SYSFS / "cpu" / f"cpu{cpu}" / "topology"
    core, package = read_or_none(topology / "core_id"), read_or_none(topology / "physical_package_id")
    siblings = read_or_none(topology / "thread_siblings_list")
    node = None
    for directory in sorted(SYSFS.glob("node/node[0-9]*")):
        if cpu in parse_cpulist(read_or_none(directory / "cpulist") or ""):
            node = int(directory.name[4:])
    return {"core": None if core is None else int(core),
            "package": None if package is None else int(package),
            "siblings": None if siblings is None else parse_cpulist(siblings), "node": node}


@pytest.fixture(scope="module")
def measured(run):
    """Every ordered pair of the first two allowed CPUs, measured for real."""
    result = run("c2c", "--cpus", TWO, "--samples", "5", "--min-sample-ms", "5", "--seed", "5")
    assert result.returncode == 0, result.stderr
    return {"result": result, "records": parse_lines(result.stdout)}


def test_list_names_c2c(run):
    result = run("--list")
    assert result.returncode == 0
    lines = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert "c2c" in lines
    assert lines["c2c"].split()[1] == "c2c"


@pytest.mark.parametrize("args", [["c2c", "--help"], ["c2c", "-h"]])
def test_help_documents_every_option(run, args):
    result = run(*args)
    assert result.returncode == 0
    assert result.stderr == ""
    for option in ["--cpus", "--pairs", "--samples", "--min-sample-ms", "--cpu", "--seed", "--ordered",
                   "--experiment", "--output", "--human", "--max-bytes", "--help"]:
        assert option in result.stdout, option
    assert "round-trip time / 2" in result.stdout
    assert "Example" in result.stdout


@pytest.mark.parametrize("args", [
    ["--cpus", "0"],
    ["--cpus", "0,0"],
    ["--cpus", "0-1,1"],
    ["--cpus", "99999"],
    ["--cpus", "0,99999"],
    ["--cpus", "x"],
    ["--cpus", ""],
    ["--cpus", "0,,1"],
    ["--cpus", "1-0"],
    ["--cpus", "-1"],
    ["--cpus", "0-99999999999"],
    ["--cpus"],
    ["--cpu", "0"],
    ["--cpus", "0,1", "--cpu", "0"],
    ["--cpus", "0,1", "stray"],
    ["--cpus", "0,1", "--bogus"],
    ["--cpus", "0,1", "--samples", "0"],
    ["--cpus", "0,1", "--samples", "many"],
    ["--cpus", "0,1", "--min-sample-ms", "0"],
    ["--cpus", "0,1", "--experiment", ""],
    ["--pairs", "0:0"],
    ["--pairs", "0:1,0:1"],
    ["--pairs", "0-1"],
    ["--pairs", "0:x"],
    ["--pairs", ""],
    ["--pairs", "0:1:2"],
    ["--pairs", "0:99999"],
    ["--pairs", ":1"],
    ["--pairs", "0:1", "--cpus", "0,1"],
    ["--cpus", "0,1", "--pairs", "0:1"],
])
def test_bad_arguments_exit_2_with_one_line_message(run, args):
    result = run("c2c", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    message = result.stderr.strip()
    assert message and "\n" not in message


def test_cpu_is_refused_pointing_to_cpus(run):
    result = run("c2c", "--cpu", "0")
    assert result.returncode == 2
    assert "--cpus" in result.stderr


def test_one_cpu_is_refused(run, build):
    result = run("c2c", "--cpus", str(ALLOWED[0]))
    assert result.returncode == 2
    assert "two CPUs" in result.stderr
    # The default (the affinity mask) with a single CPU allowed.
    result = run_with(build, cpus=[ALLOWED[0]])
    assert result.returncode == 2
    assert result.stdout == ""
    assert "two CPUs" in result.stderr


@needs_two_cpus
def test_records_follow_the_output_contract(measured):
    records = measured["records"]
    cpus = ALLOWED[:2]
    assert sorted(by_pair(records)) == sorted(itertools.permutations(cpus, 2))
    for record in records:
        assert set(record) == TOP_KEYS
        assert set(record["params"]) == PARAM_KEYS
        assert set(record["summary"]) == SUMMARY_KEYS
        assert set(record["context"]) == CONTEXT_KEYS
        assert record["schema_version"] == 1
        assert (record["experiment"], record["kernel"]) == ("c2c", "c2c")
        assert (record["metric"], record["unit"]) == ("latency", "ns")
        params = record["params"]
        assert params["cpu_a"] != params["cpu_b"]
        assert params["one_way"] == "round_trip/2"
        assert params["seed"] == 5
        assert params["round_trips_per_sample"] >= 64
        samples, summary = record["samples"], record["summary"]
        assert len(samples) == summary["count"] == 5
        assert summary["min"] == min(samples)
        assert summary["median"] == sorted(samples)[2]
        assert summary["ci95_low"] <= summary["median"] <= summary["ci95_high"]
        context = record["context"]
        assert context["canary_before_ns"] > 0 and context["canary_after_ns"] > 0
        assert context["core_clock_ghz"] > 0.2
        assert math.isclose(context["median_cycles"],
                            summary["median"] * context["core_clock_ghz"], rel_tol=1e-6)
    assert sorted(r["context"]["order_index"] for r in records) == [0, 1]


@needs_two_cpus
def test_topology_matches_sysfs(measured):
    for record in measured["records"]:
        params = record["params"]
        a, b = sysfs_facts(params["cpu_a"]), sysfs_facts(params["cpu_b"])
        assert params["core_id_a"] == a["core"] and params["core_id_b"] == b["core"]
        assert params["package_a"] == a["package"] and params["package_b"] == b["package"]
        assert params["numa_node_a"] == a["node"] and params["numa_node_b"] == b["node"]
        expected_smt = None if a["siblings"] is None else params["cpu_b"] in a["siblings"]
        assert params["smt_siblings"] is expected_smt
        if a["package"] is not None and b["package"] is not None:
            assert params["same_package"] is (a["package"] == b["package"])
            if a["core"] is not None and b["core"] is not None:
                assert params["same_core"] is (a["package"] == b["package"]
                                               and a["core"] == b["core"])


def fake_sysfs(root, cpus, nodes):
    """cpus: {cpu: (core_id, package_id, siblings_list) or None}; nodes: {node: cpulist}."""
    for cpu, facts in cpus.items():
        topology = root / "cpu" / f"cpu{cpu}" / "topology"
        topology.mkdir(parents=True)
        if facts:
            for name, value in zip(["core_id", "physical_package_id", "thread_siblings_list"],
                                   facts):
                (topology / name).write_text(f"{value}\n")
    for node, cpulist in nodes.items():
        (root / "node" / f"node{node}").mkdir(parents=True)
        (root / "node" / f"node{node}" / "cpulist").write_text(f"{cpulist}\n")
    return {"FLEETSCOPE_SYSFS_ROOT": str(root / "cpu")}


@needs_two_cpus
def test_smt_siblings_and_numa_nodes_from_a_fake_sysfs(build, tmp_path):
    a, b = ALLOWED[:2]
    env = fake_sysfs(tmp_path, {a: (3, 1, f"{a},{b}"), b: (3, 1, f"{a},{b}")},
                     {0: "", 4: str(a), 7: f"{b},{b + 100}-{b + 101}"})
    result = run_with(build, "--cpus", f"{a},{b}", *QUICK, env=env)
    assert result.returncode == 0, result.stderr
    for record in parse_lines(result.stdout):
        params = record["params"]
        assert params["smt_siblings"] is True
        assert params["same_core"] is True and params["same_package"] is True
        assert (params["core_id_a"], params["package_a"]) == (3, 1)
        nodes = {a: 4, b: 7}
        assert params["numa_node_a"] == nodes[params["cpu_a"]]
        assert params["numa_node_b"] == nodes[params["cpu_b"]]


@needs_two_cpus
def test_missing_topology_is_null_not_guessed(build, tmp_path):
    a, b = ALLOWED[:2]
    env = fake_sysfs(tmp_path, {a: None, b: (0, 1, str(b))}, {})
    result = run_with(build, "--cpus", f"{a},{b}", *QUICK, env=env)
    assert result.returncode == 0, result.stderr
    for record in parse_lines(result.stdout):
        params = record["params"]
        assert params["numa_node_a"] is None and params["numa_node_b"] is None
        assert params["same_package"] is None and params["same_core"] is None
        known, unknown = ("a", "b") if params["cpu_a"] == b else ("b", "a")
        assert params[f"core_id_{unknown}"] is None and params[f"package_{unknown}"] is None
        assert params[f"package_{known}"] == 1
        assert params["smt_siblings"] is (None if params["cpu_a"] == a else False)


@needs_two_cpus
def test_default_is_every_pair_of_the_affinity_mask(build):
    cpus = ALLOWED[:3]
    result = run_with(build, *QUICK, cpus=cpus)
    assert result.returncode == 0, result.stderr
    pairs = by_pair(parse_lines(result.stdout))
    assert sorted(pairs) == sorted(itertools.permutations(cpus, 2))


@needs_two_cpus
def test_one_progress_line_per_pair(measured):
    progress = [line for line in measured["result"].stderr.splitlines()
                if line.startswith("c2c: ") and " -> " in line]
    assert len(progress) == 2
    assert progress[-1].startswith("c2c: 2/2 ")


@needs_two_cpus
def test_latency_is_plausible(measured):
    for record in measured["records"]:
        # A one-way cache-line transfer between two cores: tens to a few hundred ns. Below 5 ns
        # nothing crossed cores; above 10 us the threads were not running side by side.
        assert 5 < record["summary"]["median"] < 10_000


@needs_two_cpus
def test_matrix_is_symmetric_within_noise(run):
    """Each run's min(a->b) / min(b->a), median over seven runs, within 0.5..2.

    On the 2-vCPU development VM the host moves vCPUs and other guests add load, so the level
    drifts between ~40 and ~180 ns from minute to minute and a single run's ratio was seen from
    0.42 to 3.0 (idle guest, 5 to 9 samples). Pooling the samples of five runs was not enough:
    CI's guest once put one direction's fastest sample at a third of the other's (2.9), as
    a vCPU placement that lasts part of one run gives one direction only. Each run measures
    both directions within about 0.1 s, so its ratio pairs like with like, and the median over
    runs ignores the runs a placement change split. A true asymmetry of the method (one
    direction timing something else) would show in every run, so in the median."""
    a, b = ALLOWED[:2]
    ratios = []
    for seed in range(7):
        pairs = by_pair(c2c_records(run, "--cpus", TWO, "--samples", "5",
                                    "--min-sample-ms", "5", "--seed", str(seed)))
        # The fastest samples: other work on the vCPUs only ever adds time (seen up to 4x on
        # medians while the whole test suite ran beside it).
        ratios.append(min(pairs[(a, b)]["samples"]) / min(pairs[(b, a)]["samples"]))
    assert 0.5 <= statistics.median(ratios) <= 2.0, ratios


@needs_two_cpus
def test_ping_pong_is_not_elided(measured):
    for record in measured["records"]:
        round_trips = record["params"]["round_trips_per_sample"]
        for one_way_ns in record["samples"]:
            # Each sample was calibrated to take >= 5 ms: one-way ns x 2 transfers per round
            # trip x round trips must account for that (allowing for a faster repeat).
            assert one_way_ns * 2 * round_trips >= 0.5 * 5e6
        assert record["context"]["wall_s"] >= 5 * 5e-3


@needs_two_cpus
def test_pairs_are_shuffled_by_seed_and_ordered_keeps_row_major(run):
    a, b = ALLOWED[:2]
    orders = set()
    for seed in range(6):
        records = c2c_records(run, "--cpus", TWO, "--seed", str(seed), *QUICK)
        assert [r["context"]["order_index"] for r in records] == [0, 1]
        orders.add(tuple((r["params"]["cpu_a"], r["params"]["cpu_b"]) for r in records))
    assert orders == {((a, b), (b, a)), ((b, a), (a, b))}
    records = c2c_records(run, "--cpus", f"{b},{a}", "--ordered", *QUICK)
    assert [(r["params"]["cpu_a"], r["params"]["cpu_b"]) for r in records] == [(b, a), (a, b)]


@needs_two_cpus
def test_pairs_measures_exactly_the_pairs_given(run):
    """--pairs (the pairs a budget samples, plugins/filter/plan.py): those ordered pairs and no others,
    shuffled by the seed, in the order given with --ordered."""
    a, b = ALLOWED[:2]
    records = c2c_records(run, "--pairs", f"{b}:{a}", *QUICK)
    assert [(r["params"]["cpu_a"], r["params"]["cpu_b"]) for r in records] == [(b, a)]
    records = c2c_records(run, "--pairs", f"{a}:{b},{b}:{a}", "--ordered", *QUICK)
    assert [(r["params"]["cpu_a"], r["params"]["cpu_b"]) for r in records] == [(a, b), (b, a)]
    assert [r["context"]["order_index"] for r in records] == [0, 1]


@needs_two_cpus
def test_experiment_label_and_human_table(run):
    (first, _) = c2c_records(run, "--cpus", TWO, "--experiment", "lab c2c", *QUICK)
    assert first["experiment"] == "lab c2c"
    result = run("c2c", "--cpus", TWO, "--human", *QUICK)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["point", "median", "unit"]
    assert len(lines) == 3 and " -> " in lines[1]


@needs_two_cpus
def test_output_failure_after_a_pair_exits_1_and_stops_the_threads(run):
    # /dev/full takes the open and fails the write: the error comes after a pair was measured,
    # so the process must still end (responder joined) with exit 1, not hang.
    result = run("c2c", "--cpus", TWO, "--output", "/dev/full", *QUICK)
    assert result.returncode == 1
    assert "cannot write output" in result.stderr
