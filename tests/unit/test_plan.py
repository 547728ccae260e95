"""The plan and its price (plugins/filter/plan.py through fleetscope.planning, the roles' own defaults), on
the real topologies of tests/fixtures/sysfs and on synthetic 64-, 128- and 256-CPU servers (2 sockets, SMT,
8 CCDs a socket, up to 8 NUMA nodes) and a hybrid part (tests/sysfs_synthetic.py): every profile with a
budget fits it, what the budget cut is said, c2c's sampled pairs cover what they must, and the processes
the plan gives are the ones the role runs."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from sysfs_synthetic import BIG, Kind, Machine, write

from fleetscope import planning
from fleetscope.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
SYSFS = ROOT / "tests" / "fixtures" / "sysfs"
REAL = sorted(path.name for path in SYSFS.iterdir() if path.is_dir())
GIB = 1 << 30


@pytest.fixture(scope="module")
def module():
    return planning.plan_module()


@pytest.fixture(scope="module")
def facts_of(tmp_path_factory):
    """Facts of a machine by name: a real fixture (64 GiB available, which its tree does not say) or a
    synthetic one of sysfs_synthetic.BIG."""
    cache = {}

    def facts(name: str) -> dict:
        if name not in cache:
            if name in BIG:
                root = write(tmp_path_factory.mktemp(name), BIG[name])
                cache[name] = planning.facts_from_sysfs(root)
            else:
                cache[name] = planning.facts_from_sysfs(SYSFS / name)
                cache[name]["memory"]["mem_available_bytes"] = 64 * GIB
        return cache[name]
    return facts


def cpus(text: str) -> list[int]:
    out = []
    for item in str(text).split(","):
        first, _, last = item.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


@pytest.mark.parametrize("profile", ["quick", "standard"])
@pytest.mark.parametrize("machine", [*REAL, *BIG])
def test_every_profile_with_a_budget_fits_it_on_every_topology(facts_of, module, machine, profile):
    plan = planning.plan(facts_of(machine), profile)
    budget = {"quick": 120, "standard": 900}[profile]
    assert plan["budget_s"] == budget
    assert plan["within_budget"] is True, module.plan_summary(plan, machine) + "\n" + "\n".join(module.plan_cuts(plan))
    assert 0 < plan["bound_s"] <= budget
    assert plan["bound_s"] == pytest.approx(sum(entry["bound_s"] for entry in plan["experiments"]), abs=0.01)
    for entry in plan["experiments"]:
        if entry["skip"]:
            assert entry["points"] == 0 and not entry["run"]
            continue
        if entry["name"] == "fio":  # the fio role runs its jobs; the plan prices them
            assert entry["points"] == entry["processes"] > 0 and entry["run"] == []
            continue
        assert entry["points"] > 0 and entry["processes"] == len(entry["run"]) > 0, entry["name"]
        for process in entry["run"]:
            assert process["argv"][0] == "fleetscope-kernels"
            assert all(isinstance(arg, str) for arg in process["argv"])
            # every kernel process writes its experiment's own results file
            assert f"<bundle>/results/{entry['name']}.jsonl" in process["argv"]


@pytest.mark.parametrize("machine", ["intel-xeon-e5-2node", "epyc-256"])
def test_full_states_its_own_price_and_cuts_nothing(facts_of, module, machine):
    plan = planning.plan(facts_of(machine), "full")
    assert plan["budget_s"] is None and plan["within_budget"] is None
    assert not module.plan_cuts(plan)
    assert "(full: no budget, this is its price)" in module.plan_summary(plan, machine)
    c2c = next(entry for entry in plan["experiments"] if entry["name"] == "c2c")
    count = facts_of(machine)["cpu"]["logical_cpus"]
    assert c2c["points"] == count * (count - 1)  # the whole matrix


def domain_of(facts: dict) -> dict[int, str]:
    return {record["cpu"]: record["llc"] for record in facts["topology"]["cpus"]}


@pytest.mark.parametrize("machine", ["epyc-64", "epyc-128", "epyc-256", "amd-opteron-8node"])
@pytest.mark.parametrize("profile", ["quick", "standard"])
def test_sampled_c2c_pairs_cover_every_llc_domain_pair_and_smt_siblings(facts_of, machine, profile):
    facts = facts_of(machine)
    plan = planning.plan(facts, profile)
    c2c = next(entry for entry in plan["experiments"] if entry["name"] == "c2c")
    (process,) = c2c["run"]
    argv = process["argv"]
    assert "--pairs" in argv and "--cpus" not in argv
    pairs = [tuple(map(int, item.split(":"))) for item in argv[argv.index("--pairs") + 1].split(",")]
    assert len(pairs) == len(set(pairs)) == c2c["points"]
    domains = domain_of(facts)
    covered = {frozenset((domains[a], domains[b])) for a, b in pairs}
    every = {frozenset(pair) for pair in itertools.combinations_with_replacement(set(domains.values()), 2)}
    alone = {frozenset((domain,)) for domain in domains.values() if len(cpus(domain)) == 1}
    assert every - alone <= covered  # every pair of domains, and every domain of two or more CPUs with itself
    siblings = {record["cpu"]: set(cpus(record["smt_siblings"])) for record in facts["topology"]["cpus"]}
    smt = any(len(group) > 1 for group in siblings.values())
    assert any(b in siblings[a] for a, b in pairs) == smt
    # a within-domain pair is two cores, never two threads of one core (except the SMT pair)
    for a, b in pairs:
        if domains[a] == domains[b] and b in siblings[a]:
            continue
        assert b not in siblings[a]
    count = facts["cpu"]["logical_cpus"]
    cut = " ".join(c2c["cuts"])
    assert f"{len(pairs)} of {count * (count - 1):,} ordered CPU pairs" in cut
    assert "kernels_c2c_all_pairs: true measures the whole matrix" in cut


def test_c2c_on_the_128_cpu_server_names_its_cut_in_the_words_of_the_issue(facts_of):
    plan = planning.plan(facts_of("epyc-128"), "standard")
    c2c = next(entry for entry in plan["experiments"] if entry["name"] == "c2c")
    # 16 LLC domains: 120 pairs across, 16 within, one SMT pair
    assert c2c["points"] == 137
    assert any(cut.startswith("137 of 16,256 ordered CPU pairs (budget): every pair of the 16 LLC domains")
               for cut in c2c["cuts"])


def test_a_hybrid_part_has_a_pair_within_and_across_its_core_kinds(facts_of):
    facts = facts_of("hybrid-32")
    plan = planning.plan(facts, "quick")
    (process,) = next(entry for entry in plan["experiments"] if entry["name"] == "c2c")["run"]
    argv = process["argv"]
    pairs = [tuple(map(int, item.split(":"))) for item in argv[argv.index("--pairs") + 1].split(",")]
    kind = {record["cpu"]: record["kind"] for record in facts["topology"]["cpus"]}
    assert {frozenset((kind[a], kind[b])) for a, b in pairs} >= {frozenset(("P-core",)), frozenset(("E-core",)),
                                                                  frozenset(("P-core", "E-core"))}


def test_c2c_measures_the_whole_matrix_where_it_fits_or_when_asked(facts_of):
    plan = planning.plan(facts_of("intel-raptorlake-hybrid"), "standard")
    c2c = next(entry for entry in plan["experiments"] if entry["name"] == "c2c")
    asked = planning.plan(facts_of("epyc-64"), "standard", {"kernels_c2c_all_pairs": True})
    whole = next(entry for entry in asked["experiments"] if entry["name"] == "c2c")
    assert "--pairs" not in whole["run"][0]["argv"] and whole["points"] == 64 * 63
    assert any("over its allowance" in cut for cut in whole["cuts"])
    # the dev VM's two CPUs: both ordered pairs, no sampling to say
    topology = {"cpus": [{"cpu": 0, "llc": "0-1", "smt_siblings": "0"}, {"cpu": 1, "llc": "0-1", "smt_siblings": "1"}],
                "llc_domains": ["0-1"], "core_kinds": []}
    two = planning.plan({**facts_of("intel-xeon-e5-2node"), "topology": topology,
                         "cpu": {"logical_cpus": 2, "physical_cores": 2}}, "quick")
    pair = next(entry for entry in two["experiments"] if entry["name"] == "c2c")
    assert pair["points"] == 2 and "--pairs" not in pair["run"][0]["argv"] and not pair["cuts"]
    assert c2c["points"] > 0


def test_thread_sweep_steps_geometrically_past_four_threads(module, facts_of):
    assert module._thread_steps(4, 4, 2.0) == [1, 2, 3, 4]
    steps = module._thread_steps(256, 128, 2 ** 0.5)
    assert steps[:4] == [1, 2, 3, 4] and steps[-1] == 256 and 128 in steps
    ratios = [b / a for a, b in zip(steps[3:], steps[4:])]
    assert max(ratios) <= 1.5 and len(steps) < 30
    plan = planning.plan(facts_of("epyc-256"), "standard")
    sweep = next(entry for entry in plan["experiments"] if entry["name"] == "thread_sweep")
    argv = sweep["run"][0]["argv"]
    counts = [int(count) for count in argv[argv.index("--threads") + 1].split(",")]
    assert counts[:4] == [1, 2, 3, 4] and counts[-1] == 256 and 128 in counts
    assert sweep["points"] == 2 * len(counts)
    assert any(cut.startswith(f"{len(counts)} of 256 thread counts (budget)") for cut in sweep["cuts"])


def test_numa_matrices_are_sized_to_the_budget_on_eight_nodes(facts_of):
    facts = facts_of("epyc-256")
    assert facts["numa"]["nodes"] == 8
    full = planning.plan(facts, "full")
    matrix = next(entry for entry in full["experiments"] if entry["name"] == "numa_matrix")
    assert matrix["points"] == 2 * 64 and not matrix["cuts"]
    for profile in ("quick", "standard"):
        plan = planning.plan(facts, profile)
        matrix = next(entry for entry in plan["experiments"] if entry["name"] == "numa_matrix")
        assert matrix["bound_s"] <= matrix["allowance_s"] + 0.01
        cells = {(process["argv"][process["argv"].index("--mem-node") + 1]) for process in matrix["run"]}
        assert {"0"} <= cells  # node 0's local cell stays
        assert any("cells of each matrix (budget)" in cut for cut in matrix["cuts"])
        # every distance the firmware lists from node 0 (10 local, 12 same socket, 32 the other) is measured
        distances = facts["numa"]["distances"]["node0"]
        assert {distances[int(cell)] for cell in cells} == set(distances)


def test_a_huge_reported_llc_cuts_dram_working_sets_and_says_they_may_hit_it(tmp_path):
    """A guest whose sysfs reports the host's 480 MiB L3 (as a Zen 5 guest did): the rules ask for 8 x 480
    MiB DRAM working sets; the budget cuts them to fit and says they are no longer safely beyond the LLC."""
    machine = Machine("zen5-guest", 1, 1, (Kind(1, 2, 48, 1024),), l3_kib=480 * 1024, mem_available_bytes=23 * GIB)
    facts = planning.facts_from_sysfs(write(tmp_path, machine))
    for profile in ("quick", "standard"):
        plan = planning.plan(facts, profile)
        assert plan["within_budget"] is True
        zero_queue = next(entry for entry in plan["experiments"] if entry["name"] == "zero_queue")
        argv = zero_queue["run"][0]["argv"]
        dram = int(argv[argv.index("--dram-size") + 1])
        assert dram < 8 * 480 * (1 << 20)
        (cut,) = [cut for cut in zero_queue["cuts"] if cut.startswith("DRAM working set cut from 3.75 GiB")]
        # the warning exactly where the cut working set is under twice the LLC
        assert ("under twice the 480 MiB last-level cache" in cut) == (dram < 2 * 480 * (1 << 20)), cut
        if profile == "quick":
            assert dram < 2 * 480 * (1 << 20)


def test_the_plan_lists_only_the_selected_experiments_and_prices_fio_apart(facts_of):
    facts = facts_of("intel-xeon-e5-2node")
    plan = planning.plan(facts, "quick", selected=["latency_sweep", "fio"])
    assert [entry["name"] for entry in plan["experiments"]] == ["latency_sweep", "fio"]
    fio = plan["experiments"][1]
    assert fio["points"] == fio["processes"] == 5 and fio["run"] == []  # quick: 3 random patterns at qd 1, 2 sequential


def test_tags_select_from_the_catalogue_as_the_playbook_does(facts_of):
    """--tags reads fleetscope/catalog.py: a family's tag selects all of it, an experiment's own tag that one,
    and a typo is refused with a suggestion rather than planning nothing."""
    from fleetscope import catalog
    latency = [entry.name for entry in catalog.EXPERIMENTS if entry.family == "latency"]
    assert planning.select(["latency"]) == latency
    assert planning.select(["bandwidth_sweep"]) == ["bandwidth"]
    assert planning.select(["storage", "tlb"]) == ["tlb", "fio"]
    with pytest.raises(UserError, match="did you mean 'latency_sweep'"):
        planning.select(["latency_sweap"])
    plan = planning.plan(facts_of("intel-xeon-e5-2node"), "quick", selected=planning.select(["cpu_os_io"]))
    assert [entry["name"] for entry in plan["experiments"]] == ["affinity", "smt", "aio"]
    # every experiment of the kernels role in the catalogue has a planner, and the planner no other
    kernels = {entry.name for entry in catalog.EXPERIMENTS if entry.role == "kernels"}
    assert kernels == set(planning.plan_module()._PLANNERS)


def test_the_allowances_of_every_profile_fit_its_budget():
    for profile in ("quick", "standard"):
        variables, context = planning.role_variables("kernels", "kernels_", profile)
        table = context["__kernels_profile"]
        assert sum(table["allowance_s"].values()) <= table["budget_s"]
        registry = planning._yaml(planning.ROLES_DIR / "kernels" / "vars" / "main.yml")["__kernels_experiments"]
        assert set(table["allowance_s"]) == {*registry, "fio"}
        # fio is host-independent: its price must fit its allowance on every host
        fio = planning.settings(profile, {"cpu": {}})["storage"]
        assert fio["bound_s"] <= table["allowance_s"]["fio"]
    _, context = planning.role_variables("kernels", "kernels_", "full")
    assert context["__kernels_profile"]["budget_s"] is None


def test_leftover_allowance_goes_to_what_was_cut_and_never_past_the_sum(facts_of, module):
    """A host without SMT or a second node leaves smt's and numa_matrix's allowance unspent: the experiments
    the budget cut get it, and the total stays within the selected experiments' allowances."""
    facts = facts_of("intel-raptorlake-hybrid")  # one node
    settings = planning.settings("standard", facts)
    host = module.Host(facts)
    names = [name for name in settings["selected"] if name in module._PLANNERS]
    given = {name: float(settings["table"]["allowance_s"][name]) for name in names}
    first = {name: module._fit(name, host, settings, given[name]) for name in names}
    spent = module._spend_leftover(host, settings, first, given)
    before = sum(exp.record()["bound_s"] for exp in first.values())
    after = sum(exp.record()["bound_s"] for exp in spent.values())
    assert before < after <= sum(given.values()) + 0.01
    assert sum(len(exp.cuts) for exp in spent.values()) <= sum(len(exp.cuts) for exp in first.values())


def test_fleetscope_plan_prices_a_host_that_is_not_at_hand(cli, tmp_path):
    tree = SYSFS / "intel-xeon-e5-2node"
    result = cli("plan", "--sysfs", tree, "--mem-available", "64g", "--profile", "standard")
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("intel-xeon-e5-2node: 20 experiments, ") and first.endswith("(budget 15 m)")
    assert "numa_matrix" in result.stdout and "fio" in result.stdout
    # a tree without /proc/meminfo cannot say how much memory the working sets may take
    missing = cli("plan", "--sysfs", tree)
    assert missing.returncode == 1 and "--mem-available" in missing.stderr
    # a bundle's manifest, as JSON; the plan the run itself would make
    manifest = next((ROOT / "tests" / "fixtures" / "default_run" / "results").glob("*/*/manifest.json"))
    as_json = cli("plan", "--facts", manifest, "--profile", "quick", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    plan = __import__("json").loads(as_json.stdout)
    assert plan["budget_s"] == 120 and plan["bound_s"] <= 120
    assert all("run" not in entry for entry in plan["experiments"])


def test_fleetscope_plan_exits_4_when_a_variable_pushes_it_past_the_budget(cli, tmp_path):
    root = write(tmp_path / "epyc-128", BIG["epyc-128"])
    result = cli("plan", "--sysfs", root, "--profile", "standard", "-e", "kernels_c2c_all_pairs=true")
    assert result.returncode == 4
    assert "OVER the 15 m budget" in result.stdout.splitlines()[0]
    assert "16,256" in result.stdout  # the whole matrix's points, as asked
    bad = cli("plan", "--sysfs", root, "-e", "kernels_c2c_all_pairs")
    assert bad.returncode == 1 and "NAME=VALUE" in bad.stderr


def _compute(plan: dict, name: str) -> tuple[dict, list[str]]:
    entry = next(entry for entry in plan["experiments"] if entry["name"] == name)
    assert len(entry["run"]) == 1 and entry["run"][0]["label"] == "all points"
    return entry, entry["run"][0]["argv"]


def _option(argv: list[str], option: str) -> str:
    return argv[argv.index(option) + 1]


def test_compute_on_a_hybrid_part_steps_through_its_core_kinds_with_the_profiles_windows(facts_of, module):
    """Raptor Lake (6 P-cores, 8 E-cores): one process each, one CPU per core P-cores first; core_clock at
    1, 2, 4, 6 (every P-core), 8 and 14 active cores, peak_flops on 1, 6 and 14; each point a fixed number
    of windows (no --target-ci), priced from those windows."""
    facts = facts_of("intel-raptorlake-hybrid")
    order = module._kinds.core_kind_cpu_order(facts["topology"])
    for profile in ("quick", "standard", "full"):
        variables, context = planning.role_variables("kernels", "kernels_", profile)
        table = context["__kernels_profile"]
        windows, window_ms = table["compute_windows"], table["compute_window_ms"]
        plan = planning.plan(facts, profile, selected=["core_clock", "peak_flops"])
        clock, argv = _compute(plan, "core_clock")
        assert _option(argv, "--cpus") == order["cores"] and _option(argv, "--active") == "1,2,4,6,8,14"
        assert _option(argv, "--samples") == str(windows) and _option(argv, "--min-sample-ms") == f"{window_ms:g}"
        assert _option(argv, "--ramp-repeats") == str(table["clock_ramp_repeats"]) and "--target-ci" not in argv
        assert _option(argv, "--output").endswith("/results/core_clock.jsonl")
        assert clock["points"] == 4 * 6 + table["clock_ramp_repeats"] and clock["target_rel"] is None
        ramps_s = table["clock_ramp_repeats"] * 0.3
        point_s = (windows + 1) * window_ms / 1000 + module.COMPUTE_POINT_S
        assert clock["bound_s"] == pytest.approx(module.PROCESS_S + module.EXPERIMENT_S + 24 * point_s + ramps_s)
        flops, argv = _compute(plan, "peak_flops")
        assert _option(argv, "--cpus") == order["cores"] and _option(argv, "--threads") == "1,6,14"
        assert _option(argv, "--precisions") == "fp64,fp32" and _option(argv, "--classes") == "auto"
        assert flops["points"] == 4 * 2 * 3
        point_s = 2 * (windows + 1) * window_ms / 1000 + module.COMPUTE_POINT_S
        assert flops["bound_s"] == pytest.approx(module.PROCESS_S + module.EXPERIMENT_S + 24 * point_s)
        assert any("pinned threads take one CPU per core by core kind" in note for note in flops["notes"])
        assert not clock["cuts"] and not flops["cuts"]


@pytest.mark.parametrize("machine", ["intel-xeon-e5-2node", "epyc-256"])
def test_compute_on_one_kind_leaves_the_cpus_and_steps_to_the_kernel_and_prices_them(facts_of, machine):
    """One core kind: no --cpus, the kernel takes one CPU per physical core and steps 1, 2, 4 ... all
    (core_clock) or 1 and all (peak_flops); the plan counts those steps from the facts' physical cores."""
    facts = facts_of(machine)
    cores = int(facts["cpu"]["physical_cores"])
    steps = sorted({2 ** k for k in range(cores.bit_length()) if 2 ** k < cores} | {cores})
    plan = planning.plan(facts, "quick", selected=["core_clock", "peak_flops"])
    clock, argv = _compute(plan, "core_clock")
    assert "--cpus" not in argv and "--active" not in argv and clock["points"] == 4 * len(steps) + 1
    assert any(", ".join(map(str, steps)) + " cores active" in note for note in clock["notes"])
    flops, argv = _compute(plan, "peak_flops")
    assert "--cpus" not in argv and "--threads" not in argv and flops["points"] == 4 * 2 * 2


def test_compute_counts_the_classes_it_is_given_and_the_budget_cuts_ramps_then_windows(facts_of):
    """A class list is priced as given (auto as the most any CPU runs); where the allowance is too small the
    budget takes one ramp, then 3 windows, and says so, and the process runs what the cut says."""
    facts = facts_of("epyc-256")
    overrides = {"kernels_core_clock_classes": ["scalar_int", "fma256"], "kernels_peak_flops_precisions": ["fp64"]}
    plan = planning.plan(facts, "standard", overrides=overrides, selected=["core_clock", "peak_flops"])
    clock, argv = _compute(plan, "core_clock")
    cores = int(facts["cpu"]["physical_cores"])  # 128: 1, 2, 4 ... 128 active
    assert _option(argv, "--classes") == "scalar_int,fma256" and clock["points"] == 2 * (cores.bit_length()) + 3
    flops, argv = _compute(plan, "peak_flops")
    assert _option(argv, "--precisions") == "fp64" and flops["points"] == 4 * 1 * 2
    tight = planning.plan(facts, "full", overrides={"kernels_compute_windows": 40}, selected=["core_clock"])
    natural, _ = _compute(tight, "core_clock")
    squeezed = planning.settings("full", facts, {"kernels_compute_windows": 40}, ["core_clock"])
    module = planning.plan_module()
    cut = module._fit("core_clock", module.Host(facts), squeezed, natural["bound_s"] / 2)
    argv = cut.processes[0]["argv"]
    assert _option(argv, "--ramp-repeats") == "1" and _option(argv, "--samples") == "3"
    assert sorted(cut.cuts) == ["1 ramp from idle instead of 5 (budget)", "3 windows per point instead of 40 (budget)"]
    assert cut.record()["bound_s"] < natural["bound_s"] / 2
