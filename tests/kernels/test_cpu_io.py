"""Tests for the CPU, OS and I/O kernels of fleetscope-kernels: affinity, smt, aio and workload, run as
subprocesses (fixtures in conftest.py). Timing relations are checked only where they cannot depend on
other work sharing this machine."""

import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kernelrun import parse_lines

from fleetscope.analyze.plausibility import ONE_CPU_UTILIZED

ALLOWED = sorted(os.sched_getaffinity(0))
FAST = ["--samples", "2", "--min-sample-ms", "5"]
SYSFS = Path("/sys/devices/system/cpu")


def run_kernel(build, *args, env=None, timeout=120):
    return subprocess.run([str(build["binary"]), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def one_line_error(result, status):
    assert result.returncode == status, (result.returncode, result.stderr)
    assert result.stdout == ""
    message = result.stderr.strip()
    assert message and "\n" not in message, message
    return message


def host_has_smt_siblings():
    for siblings in SYSFS.glob("cpu[0-9]*/topology/thread_siblings_list"):
        text = siblings.read_text().strip()
        if "," in text or "-" in text:
            return True
    return False


def fake_sysfs(root, cpus):
    """cpus: {cpu: (core_id, package_id, thread_siblings_list) or None (no topology files)}."""
    for cpu, facts in cpus.items():
        topology = root / "cpu" / f"cpu{cpu}" / "topology"
        topology.mkdir(parents=True)
        if facts:
            for name, value in zip(["core_id", "physical_package_id", "thread_siblings_list"], facts):
                (topology / name).write_text(f"{value}\n")
    return {"FLEETSCOPE_SYSFS_ROOT": str(root / "cpu")}


# ---- registry, help, bad arguments ------------------------------------------------------------

@pytest.mark.parametrize("kernel, experiment", [("affinity", "affinity"), ("smt", "smt"), ("aio", "aio"),
                                                ("workload", "workloads")])
def test_listed_and_documented(run, kernel, experiment):
    listing = [line.split()[:2] for line in run("--list").stdout.splitlines() if line]
    assert [kernel, experiment] in listing
    result = run(kernel, "--help")
    assert result.returncode == 0 and result.stderr == ""
    for option in ["--samples", "--seed", "--output", "--max-bytes", "Example"]:
        assert option in result.stdout, option


@pytest.mark.parametrize("args", [
    ["affinity", "--placements", "anywhere"],
    ["affinity", "--placements", "pinned,pinned"],
    ["affinity", "--workloads", "disk"],
    ["affinity", "--workloads", ""],
    ["affinity", "--threads", "0"],
    ["affinity", "--threads", "many"],
    ["affinity", "--threads", "1000", "--placements", "pinned"],
    ["affinity", "--cpu", "0"],
    ["affinity", "--buffer-bytes", "100"],
    ["affinity", "--buffer-bytes", "1000000g"],
    ["affinity", "--repeats", "0"],
    ["affinity", "stray"],
    ["affinity", "--cpus", "0,0"],
    ["affinity", "--cpus", "zero"],
    ["affinity", "--cpus", ""],
    ["affinity", "--cpus", "4000"],
    ["affinity", "--cpus", "0", "--threads", "2", "--placements", "pinned"],
    ["smt", "--cpus", "0,0"],
    ["smt", "--cpus", "3-1"],
    ["smt", "--workloads", "compute,compute"],
    ["smt", "--cpu", "0"],
    ["smt", "--buffer-bytes", "3"],
    ["smt", "--repeats", "x"],
    ["aio"],
    ["aio", "--directory", "/tmp", "--file", "/etc/hostname"],
    ["aio", "--directory", "/tmp", "--block-size", "1000"],
    ["aio", "--directory", "/tmp", "--queue-depths", "0"],
    ["aio", "--directory", "/tmp", "--queue-depths", "1,1"],
    ["aio", "--directory", "/tmp", "--queue-depths", "2000"],
    ["aio", "--directory", "/tmp", "--engines", "libaio"],
    ["aio", "--directory", "/tmp", "--engines", "io_uring,io_uring"],
    ["aio", "--directory", "/tmp", "--pattern", "zigzag"],
    ["aio", "--directory", "/tmp", "--direct", "maybe"],
    ["aio", "--directory", "/tmp", "--size", "4k"],
    ["aio", "--directory", ""],
    ["aio", "--file", "/etc"],
    ["workload", "--", "true"],
    ["workload", "--name", "bad name", "--", "true"],
    ["workload", "--name", "-x", "--", "true"],
    ["workload", "--name", "ok"],
    ["workload", "--name", "ok", "--"],
    ["workload", "--name", "ok", "--timeout-s", "0", "--", "true"],
    ["workload", "--name", "ok", "--bogus", "--", "true"],
])
def test_bad_arguments_exit_2_with_one_line_message(build, args):
    one_line_error(run_kernel(build, *args), 2)


# ---- affinity ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def affinity_records(build):
    result = run_kernel(build, "affinity", "--repeats", "1", "--buffer-bytes", "8m", "--seed", "5", *FAST)
    assert result.returncode == 0, result.stderr
    return parse_lines(result.stdout)


def test_affinity_writes_one_record_per_thread_of_every_run(affinity_records):
    runs = {(r["params"]["placement"], r["params"]["workload"]) for r in affinity_records}
    assert runs == {(p, w) for p in ("unpinned", "pinned") for w in ("compute", "memory")}
    threads = affinity_records[0]["params"]["threads"]
    assert len(affinity_records) == 4 * threads
    for record in affinity_records:
        assert record["experiment"] == "affinity" and record["metric"] == "throughput"
        assert record["unit"] == ("Gop/s" if record["params"]["workload"] == "compute" else "GB/s")
        assert len(record["samples"]) == 2 and all(sample > 0 for sample in record["samples"])
        assert (record["params"]["buffer_bytes"] is None) == (record["params"]["workload"] == "compute")


def test_affinity_records_migrations_and_context_switches_per_thread(affinity_records):
    for record in affinity_records:
        context = record["context"]
        for key in ("migrations_observed", "cpu_checks", "voluntary_context_switches", "involuntary_context_switches"):
            assert isinstance(context[key], int) and context[key] >= 0, key
        # the thread's own CPU time can exceed its windows' wall time only by getrusage's tick
        assert 0 <= context["thread_cpu_s"] <= context["windows_s"] + 0.02 and context["windows_s"] > 0
        assert context["cpu_checks"] > 0
        assert set(context["cpus_seen"]) <= set(ALLOWED) and context["cpus_seen"]
        if record["params"]["placement"] == "pinned":
            # a pinned thread cannot move: every check saw its CPU
            assert context["cpus_seen"] == [record["params"]["cpu"]]
            assert context["migrations_observed"] == 0
        else:
            assert record["params"]["cpu"] is None


def test_pinned_threads_take_one_cpu_per_core(affinity_records):
    pinned = [r["params"]["cpu"] for r in affinity_records if r["params"]["placement"] == "pinned"
              and r["params"]["workload"] == "compute"]
    assert len(pinned) == len(set(pinned))


def test_threads_confined_to_one_cpu_record_one_cpus_time_between_them(build):
    """Two unpinned threads of a process confined to one CPU (taskset) ran on that CPU alone: each sees only it,
    and their own CPU time over their windows adds up to about one CPU's - what plausibility's
    threads_shared_one_cpu reads, so it flags them. Each thread's share is over its own windows, which the
    scheduler's time slices shift against the other's (20 ms windows once summed to 1.12), so the windows are
    long and the bound is the rule's own threshold."""
    cpu = ALLOWED[0]
    result = subprocess.run([str(build["binary"]), "affinity", "--placements", "unpinned", "--workloads", "compute",
                             "--threads", "2", "--repeats", "1", "--samples", "3", "--min-sample-ms", "100"],
                            capture_output=True, text=True, timeout=120, preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    assert result.returncode == 0, result.stderr
    records = parse_lines(result.stdout)
    assert len(records) == 2
    assert all(record["context"]["cpus_seen"] == [cpu] for record in records)
    shares = [record["context"]["thread_cpu_s"] / record["context"]["windows_s"] for record in records]
    assert all(share > 0 for share in shares) and sum(shares) <= ONE_CPU_UTILIZED, shares


def test_oversubscribed_threads_are_switched_involuntarily(build):
    """Twice as many busy threads as CPUs must time-share: the kernel sees the preemptions."""
    result = run_kernel(build, "affinity", "--placements", "unpinned", "--workloads", "compute",
                        "--threads", str(2 * len(ALLOWED)), "--repeats", "1", "--samples", "2",
                        "--min-sample-ms", "60")
    assert result.returncode == 0, result.stderr
    records = parse_lines(result.stdout)
    assert len(records) == 2 * len(ALLOWED)
    assert sum(r["context"]["involuntary_context_switches"] for r in records) > 0


def test_cores_come_from_sysfs(build, tmp_path):
    """Two CPUs that sysfs puts on one core are one core: one pinned thread by default."""
    if len(ALLOWED) < 2:
        pytest.skip("needs two CPUs")
    a, b = ALLOWED[:2]
    env = fake_sysfs(tmp_path, {a: (0, 0, f"{a},{b}"), b: (0, 0, f"{a},{b}")})
    result = run_kernel(build, "affinity", "--placements", "pinned", "--workloads", "compute", "--repeats", "1",
                        *FAST, env=env)
    assert result.returncode == 0, result.stderr
    (record,) = parse_lines(result.stdout)
    assert record["params"]["threads"] == 1 and record["params"]["cpu"] == a
    message = one_line_error(run_kernel(build, "affinity", "--placements", "pinned", "--threads", "2", *FAST,
                                        env=env), 2)
    assert "physical cores" in message


def test_pinned_threads_take_the_cpus_given_in_their_order(build):
    """--cpus (the kernels role's kind order on a hybrid host, fastest kind first): thread t on the t-th CPU."""
    if len(ALLOWED) < 2:
        pytest.skip("needs two CPUs")
    a, b = ALLOWED[:2]
    result = run_kernel(build, "affinity", "--placements", "pinned", "--workloads", "compute", "--repeats", "1",
                        "--cpus", f"{b},{a}", *FAST)
    assert result.returncode == 0, result.stderr
    records = sorted(parse_lines(result.stdout), key=lambda record: record["params"]["thread"])
    assert [(r["params"]["thread"], r["params"]["cpu"]) for r in records] == [(0, b), (1, a)]
    assert {r["params"]["core_rule"] for r in records} == {"the CPUs given (--cpus), in their order"}
    assert all(r["context"]["cpus_seen"] == [r["params"]["cpu"]] for r in records)
    message = one_line_error(run_kernel(build, "affinity", "--cpus", str(max(ALLOWED) + 1), *FAST), 2)
    assert f"--cpus names CPU {max(ALLOWED) + 1}, which this process may not run on" in message


# ---- smt ----------------------------------------------------------------------------------------

@pytest.mark.skipif(host_has_smt_siblings(), reason="this host has SMT siblings")
def test_smt_is_a_recorded_skip_on_a_host_without_siblings(build):
    plan = json.loads(run_kernel(build, "smt", "--plan").stdout)
    assert plan["runnable"] is False and plan["cpu"] is None
    assert "no SMT siblings" in plan["reason"]
    assert plan["cpus_with_siblings"] == 0 and plan["allowed_cpus"] == len(ALLOWED)
    message = one_line_error(run_kernel(build, "smt", *FAST), 4)
    assert "no SMT siblings" in message and "not measured" in message


@pytest.mark.parametrize("layout, reason", [
    ("alone", "no SMT siblings"),
    ("no_topology", "sysfs lists no SMT siblings"),
    ("siblings_elsewhere", "may not run on them"),
])
def test_smt_says_why_a_fake_topology_cannot_be_measured(build, tmp_path, layout, reason):
    if len(ALLOWED) < 2:
        pytest.skip("needs two CPUs")
    a, b = ALLOWED[:2]
    far = max(ALLOWED) + 100  # a CPU this process may not run on
    cpus = {"alone": {a: (0, 0, str(a)), b: (1, 0, str(b))},
            "no_topology": {a: None, b: None},
            "siblings_elsewhere": {a: (0, 0, f"{a},{far}"), b: (1, 0, f"{b},{far + 1}")}}[layout]
    env = fake_sysfs(tmp_path, cpus)
    plan = json.loads(run_kernel(build, "smt", "--plan", env=env).stdout)
    assert plan["runnable"] is False and reason in plan["reason"], plan
    assert plan["sysfs_root"] == env["FLEETSCOPE_SYSFS_ROOT"]
    assert reason in one_line_error(run_kernel(build, "smt", *FAST, env=env), 4)


def test_smt_pairs_two_siblings_of_one_core_from_a_fake_sysfs(build, tmp_path):
    """Two CPUs that sysfs lists as siblings of the only core: alone and siblings are measured, pinned
    where the plan says, and the two-core placement is left out with a note (a 2-vCPU guest that is
    one core with two threads)."""
    if len(ALLOWED) < 2:
        pytest.skip("needs two CPUs")
    a, b = ALLOWED[:2]
    env = fake_sysfs(tmp_path, {a: (0, 0, f"{a},{b}"), b: (0, 0, f"{a},{b}")})
    plan = json.loads(run_kernel(build, "smt", "--plan", env=env).stdout)
    assert plan["runnable"] is True and plan["reason"] is None
    assert (plan["cpu"], plan["sibling_cpu"], plan["other_core_cpu"]) == (a, b, None)
    assert "two-core placement is left out" in plan["note"]
    result = run_kernel(build, "smt", "--repeats", "1", "--buffer-bytes", "4m", *FAST, env=env)
    assert result.returncode == 0, result.stderr
    records = parse_lines(result.stdout)
    placements = {(r["params"]["placement"], r["params"]["workload"], r["params"]["thread"]): r for r in records}
    assert sorted(placements) == sorted((p, w, t) for w in ("compute", "memory")
                                        for p, t in (("alone", 0), ("siblings", 0), ("siblings", 1)))
    assert placements[("siblings", "memory", 1)]["params"]["cpus"] == [a, b]
    for record in records:
        assert record["params"]["other_core_cpu"] is None and record["params"]["sibling_cpu"] == b
        # every thread stayed on the CPU the plan gave it
        assert record["context"]["cpus_seen"] == [record["params"]["cpu"]]


def test_smt_takes_its_cpus_in_the_order_given(build):
    """The Raptor Lake fixture's CPUs 0 and 1 are SMT siblings of one P-core: --cpus decides which of them
    the plan takes first; without --cpus it takes the lowest."""
    if ALLOWED[:2] != [0, 1]:
        pytest.skip("needs CPUs 0 and 1, the fixture's siblings")
    env = {"FLEETSCOPE_SYSFS_ROOT": str(Path(__file__).resolve().parents[1] / "fixtures" / "sysfs"
                                        / "intel-raptorlake-hybrid" / "sys" / "devices" / "system" / "cpu")}
    plans = {order: json.loads(run_kernel(build, "smt", "--plan", *(["--cpus", order] if order else []),
                                          env=env).stdout) for order in (None, "1,0")}
    assert (plans[None]["cpu"], plans[None]["sibling_cpu"], plans[None]["cpu_order"]) == (0, 1, "ascending")
    assert (plans["1,0"]["cpu"], plans["1,0"]["sibling_cpu"], plans["1,0"]["cpu_order"]) == (1, 0, "given")
    # only the listed CPUs: CPU 0 alone lists no sibling of its own
    alone = json.loads(run_kernel(build, "smt", "--plan", "--cpus", "0", env=env).stdout)
    assert alone["runnable"] is False and alone["allowed_cpus"] == 1
    assert alone["reason"].startswith("CPU 0 has SMT siblings, but --cpus does not list them")


@pytest.mark.skipif(len(ALLOWED) < 3, reason="placing siblings beside another core needs three CPUs")
def test_smt_pairs_siblings_and_another_core_from_a_fake_sysfs(build, tmp_path):
    a, b, c = ALLOWED[:3]
    # a and b share core 0; c is core 1 of the same package; another package comes second
    cpus = {a: (0, 0, f"{a},{b}"), b: (0, 0, f"{a},{b}"), c: (1, 0, str(c))}
    for extra in ALLOWED[3:]:
        cpus[extra] = (extra, 1, str(extra))
    env = fake_sysfs(tmp_path, cpus)
    plan = json.loads(run_kernel(build, "smt", "--plan", env=env).stdout)
    assert plan["runnable"] is True and plan["reason"] is None
    assert (plan["cpu"], plan["sibling_cpu"], plan["other_core_cpu"]) == (a, b, c)
    result = run_kernel(build, "smt", "--repeats", "1", "--buffer-bytes", "4m", *FAST, env=env)
    assert result.returncode == 0, result.stderr
    records = parse_lines(result.stdout)
    cpus_of = {(r["params"]["placement"], r["params"]["workload"]): r["params"]["cpus"] for r in records}
    assert cpus_of[("alone", "compute")] == [a]
    assert cpus_of[("siblings", "memory")] == [a, b]
    assert cpus_of[("cores", "compute")] == [a, c]
    assert len(records) == 2 * (1 + 2 + 2)
    for record in records:
        assert record["context"]["cpus_seen"] == [record["params"]["cpu"]]


# ---- aio ----------------------------------------------------------------------------------------

def test_aio_plan_names_each_engine_and_says_why_one_is_missing(run):
    plan = json.loads(run("aio", "--plan").stdout)
    engines = {entry["engine"]: entry for entry in plan["engines"]}
    assert set(engines) == {"blocking", "posix_aio", "io_uring"}
    assert engines["blocking"]["available"] and engines["posix_aio"]["available"]
    for entry in engines.values():
        assert entry["available"] == (entry["reason"] is None)


@pytest.fixture(scope="module")
def aio_run(build, tmp_path_factory):
    directory = tmp_path_factory.mktemp("aio")
    plan = json.loads(run_kernel(build, "aio", "--plan").stdout)
    engines = [entry["engine"] for entry in plan["engines"] if entry["available"]]
    result = run_kernel(build, "aio", "--directory", str(directory), "--size", "32m", "--engines", ",".join(engines),
                        "--queue-depths", "1,4", "--seed", "9", *FAST)
    assert result.returncode == 0, result.stderr
    return {"records": parse_lines(result.stdout), "directory": directory, "engines": engines}


def test_aio_measures_every_engine_and_depth(aio_run):
    points = {(r["params"]["engine"], r["params"]["queue_depth"]) for r in aio_run["records"]}
    assert points == {(engine, depth) for engine in aio_run["engines"] for depth in (1, 4)}
    for record in aio_run["records"]:
        params, context = record["params"], record["context"]
        assert record["unit"] == "MB/s" and record["metric"] == "throughput"
        assert params["threads"] == (params["queue_depth"] if params["engine"] == "blocking" else 1)
        assert params["file_bytes"] == 32 << 20 and params["block_size_bytes"] == 4096
        assert isinstance(params["direct"], bool) and params["direct_note"]
        assert params["file_mode"].startswith(("anonymous scratch file", "scratch file unlinked"))
        # the page cache of the file was dropped before the point, and that was checked
        assert params["cache_dropped"] in (True, False, None)
        if params["cache_dropped"] is not None:
            assert params["cache_dropped"] == (params["cache_resident_bytes_after_drop"] == 0)
        percentiles = [context[key] for key in ("latency_min_us", "latency_p50_us", "latency_p90_us",
                                                "latency_p99_us", "latency_p99_9_us", "latency_max_us")]
        assert percentiles == sorted(percentiles) and percentiles[0] > 0
        assert sum(context["latency_histogram_counts"]) == context["ios"] > 0
        assert context["latency_histogram_upper_us"] == sorted(context["latency_histogram_upper_us"])
        # MB/s of the windows and the reads counted agree: ios x 4 KiB over the measured time
        measured_s = len(record["samples"]) * params["window_ms"] / 1000
        assert context["iops"] == pytest.approx(context["ios"] / measured_s)
        assert record["summary"]["mean"] == pytest.approx(context["iops"] * 4096 / 1e6, rel=1e-6)


def test_aio_leaves_nothing_in_its_directory(aio_run):
    assert list(aio_run["directory"].iterdir()) == []


def test_aio_widens_a_window_that_completed_no_read(run, tmp_path):
    # 0.1 us windows: no read can complete in the measured ones, so the point is measured again with
    # doubled windows until reads land, and the record says which window it used
    result = run("aio", "--directory", str(tmp_path), "--size", "32m", "--engines", "blocking",
                 "--queue-depths", "1", "--samples", "2", "--min-sample-ms", "0.0001")
    assert result.returncode == 0, result.stderr
    (record,) = parse_lines(result.stdout)
    widened = record["params"]["window_widened"]
    assert widened >= 1 and "measuring again" in result.stderr
    assert record["params"]["window_ms"] == pytest.approx(0.0001 * 2 ** widened)
    assert record["context"]["ios"] > 0 and sum(record["context"]["latency_histogram_counts"]) == record["context"]["ios"]


def test_aio_file_has_no_name_while_it_runs_and_nothing_is_left_when_killed(build, tmp_path):
    with subprocess.Popen([str(build["binary"]), "aio", "--directory", str(tmp_path), "--size", "32m",
                           "--engines", "blocking", "--queue-depths", "1,2,4", "--samples", "50",
                           "--min-sample-ms", "100"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            # the kernel says which file it reads once the file is laid out
            line = process.stderr.readline()
            assert "scratch file" in line, line
            time.sleep(0.3)
            assert process.poll() is None
            assert list(tmp_path.iterdir()) == []
        finally:
            process.send_signal(signal.SIGKILL)
            process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL
    assert list(tmp_path.iterdir()) == []


def test_aio_failing_after_the_file_exists_leaves_nothing(build, tmp_path):
    """/dev/full refuses the first record: the kernel fails mid-run, with the file already laid out."""
    result = run_kernel(build, "aio", "--directory", str(tmp_path), "--size", "16m", "--engines", "blocking",
                        "--queue-depths", "1", "--output", "/dev/full", *FAST)
    assert result.returncode == 1
    assert "cannot write output" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_aio_refuses_a_file_larger_than_the_free_space(build, tmp_path):
    message = one_line_error(run_kernel(build, "aio", "--directory", str(tmp_path), "--size", "1000000g", *FAST), 1)
    assert "free" in message
    assert list(tmp_path.iterdir()) == []


def test_aio_reads_an_existing_file_without_changing_it(build, tmp_path):
    target = tmp_path / "data.bin"
    target.write_bytes(os.urandom(4 << 20))
    before = (hashlib.sha256(target.read_bytes()).hexdigest(), target.stat().st_mtime_ns)
    result = run_kernel(build, "aio", "--file", str(target), "--engines", "blocking,posix_aio",
                        "--queue-depths", "2", "--direct", "off", *FAST)
    assert result.returncode == 0, result.stderr
    records = parse_lines(result.stdout)
    assert {r["params"]["engine"] for r in records} == {"blocking", "posix_aio"}
    for record in records:
        assert record["params"]["direct"] is False and record["params"]["file_bytes"] == 4 << 20
        assert record["params"]["file_mode"].startswith("existing file")
    assert (hashlib.sha256(target.read_bytes()).hexdigest(), target.stat().st_mtime_ns) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["data.bin"]


# ---- workload -----------------------------------------------------------------------------------

def test_workload_times_each_run_and_discards_the_command_s_stdout(build):
    result = run_kernel(build, "workload", "--name", "echo-sleep", "--samples", "3", "--", "sh", "-c",
                        "echo not-json; echo to-stderr >&2; sleep 0.05")
    assert result.returncode == 0, result.stderr
    (record,) = parse_lines(result.stdout)  # nothing but the record on stdout
    assert record["experiment"] == "workloads" and record["metric"] == "wall_time" and record["unit"] == "s"
    assert record["params"]["workload"] == "echo-sleep" and record["params"]["runs"] == 3
    assert record["params"]["argv"][:2] == ["sh", "-c"]
    assert len(record["samples"]) == 3 and all(0.05 <= sample < 5 for sample in record["samples"])
    for key in ("user_s", "sys_s", "max_rss_bytes", "minor_faults", "voluntary_context_switches"):
        assert len(record["context"][key]) == 3, key
    assert result.stderr.count("to-stderr") == 3


@pytest.mark.parametrize("command, says", [
    (["sh", "-c", "echo broken input >&2; exit 3"], "exited with status 3"),
    (["sh", "-c", "kill -TERM $$"], "killed by signal 15"),
    (["/nonexistent/program"], "cannot execute"),
])
def test_a_failing_command_exits_5_with_no_record(build, command, says):
    result = run_kernel(build, "workload", "--name", "failing", "--", *command)
    assert result.returncode == 5
    assert result.stdout == ""
    assert says in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("fleetscope-kernels workload: workload 'failing' failed")


def test_a_command_past_its_timeout_is_killed_with_its_children(build):
    started = time.monotonic()
    result = run_kernel(build, "workload", "--name", "slow", "--timeout-s", "1", "--", "sh", "-c", "sleep 30 & sleep 30")
    assert result.returncode == 5 and "did not finish within --timeout-s 1 s" in result.stderr
    assert time.monotonic() - started < 10
    assert subprocess.run(["pgrep", "-f", "sleep 30 & sleep 30"], capture_output=True).returncode == 1
