"""Who a host is: its inventory groups travel from the manifest into the warehouse (older bundles without them
still load), and the warehouse names its CPU's microarchitecture from the table in
warehouse/views/microarchitectures.sql, on the real CPUs of this repository's fixtures (the default run's
facts, the curves and Intel MLC outputs of tests/fixtures, the dev VM) and on known vendor / family / model
and Arm implementer / part numbers, with 'unknown (...)' and the numbers where the table has no entry."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from fleetscope.store.warehouse import open_warehouse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FACTS_MODULE = Path(__file__).resolve().parents[2] / "plugins" / "modules" / "fleetscope_facts.py"
DEFAULT_RUN_MANIFEST = next((FIXTURES / "default_run" / "results").glob("*/*/manifest.json"))


def x86(vendor: str, family: int, model: int, stepping: int | None = None) -> dict:
    return {"vendor": vendor, "family": family, "model": model, "stepping": stepping}


def arm(implementer: str, *parts: str) -> dict:
    return {"vendor": "unavailable", "family": None, "model": None, "implementer": implementer, "parts": list(parts)}


# (the CPU, the fixture that shows it exists here, its identity numbers, the name the table must give). The
# numbers are the ones the CPU reports (Intel ARK / AMD PPR / the Arm TRM's MIDR); the fixture file proves
# only that the CPU is one this repository holds a real measurement of.
REAL_CPUS = [
    ("Xeon w3-2435", "curves/intel_xeon_w3-2435_sapphirerapids_ramlat.csv", x86("GenuineIntel", 6, 0x8F, 8),
     "Sapphire Rapids"),
    ("N100", "curves/intel_n100_gracemont_ramlat.csv", x86("GenuineIntel", 6, 0xBE, 0), "Alder Lake-N"),
    ("EPYC 74F3", "curves/amd_epyc_74f3_zen3_ramlat.csv", x86("AuthenticAMD", 0x19, 0x01, 1), "Zen 3 (Milan)"),
    ("Ryzen 7 7800X3D", "curves/amd_ryzen7_7800x3d_zen4_ramlat.csv", x86("AuthenticAMD", 0x19, 0x61, 2),
     "Zen 4 (Raphael)"),
    ("Ampere Altra Q80-26", "curves/ampere_altra_q80-26_neoverse_n1_ramlat.csv", arm("0x41", "0xd0c"), "Neoverse N1"),
    ("Graviton2", "curves/aws_graviton2_m6g_neoverse_n1_tinymembench_thp.csv", arm("0x41", "0xd0c"), "Neoverse N1"),
    ("Raspberry Pi 4B", "curves/rpi4b_cortex-a72_ramlat.csv", arm("0x41", "0xd08"), "Cortex-A72"),
    ("Tegra K1", "curves/tegra_k1_t124_cortex-a15_tlb_test.csv", arm("0x41", "0xc0f"), "Cortex-A15"),
    ("Apple M1 Pro", "curves/apple_m1pro_pcore_firestorm_ramlat.csv", arm("0x61", "0x024", "0x025"),
     "Apple M1 Pro Icestorm + Apple M1 Pro Firestorm"),
    ("i7-12700K", "mlc_samples/adl_i7-12700K_v3.10_windows_idle_latency_bsweep.txt", x86("GenuineIntel", 6, 0x97, 2),
     "Alder Lake"),
    ("i7-10750H", "mlc_samples/cml_i7-10750H_v3.11b_idle_latency_b16_l16_c0.txt", x86("GenuineIntel", 6, 0xA5, 2),
     "Comet Lake"),
    ("i9-13900KF", "mlc_samples/rpl_i9-13900KF_v3.11b_help_usage.txt", x86("GenuineIntel", 6, 0xB7, 1), "Raptor Lake"),
    ("Xeon Cascade Lake (CSIT)", "mlc_samples/csit_clx_idle_latency.txt", x86("GenuineIntel", 6, 0x55, 7),
     "Cascade Lake"),
    ("Xeon Skylake-SP (CSIT)", "mlc_samples/csit_skx_idle_latency.txt", x86("GenuineIntel", 6, 0x55, 4), "Skylake-SP"),
    ("Atom C3000 Denverton (CSIT)", "mlc_samples/csit_dnv_idle_latency.txt", x86("GenuineIntel", 6, 0x5F, 1),
     "Denverton"),
    ("Xeon Haswell-EP (CSIT)", "mlc_samples/csit_hsw_idle_latency.txt", x86("GenuineIntel", 6, 0x3F, 2), "Haswell-EP"),
]

KNOWN_NUMBERS = [
    (x86("GenuineIntel", 6, 0x4E), "Skylake"),
    (x86("GenuineIntel", 6, 0x9E, 10), "Coffee Lake"),
    (x86("GenuineIntel", 6, 0x9E, 9), "Kaby Lake"),
    (x86("GenuineIntel", 6, 0x9E), "Kaby Lake / Coffee Lake"),   # no stepping recorded: the whole model
    (x86("GenuineIntel", 6, 0x55, 11), "Cooper Lake"),
    (x86("GenuineIntel", 6, 0x6A), "Ice Lake-SP"),
    (x86("GenuineIntel", 6, 0x8C), "Tiger Lake"),
    (x86("GenuineIntel", 6, 0xA7), "Rocket Lake"),
    (x86("GenuineIntel", 6, 0xAC), "Meteor Lake"),
    (x86("GenuineIntel", 6, 0xC6), "Arrow Lake"),
    (x86("GenuineIntel", 6, 0xBD), "Lunar Lake"),
    (x86("GenuineIntel", 6, 0xCF), "Emerald Rapids"),
    (x86("GenuineIntel", 6, 0xAD), "Granite Rapids"),
    (x86("GenuineIntel", 6, 0xAF), "Sierra Forest"),
    (x86("AuthenticAMD", 0x17, 0x01), "Zen"),
    (x86("AuthenticAMD", 0x17, 0x08), "Zen+ (Pinnacle Ridge)"),
    (x86("AuthenticAMD", 0x17, 0x31), "Zen 2 (Rome)"),
    (x86("AuthenticAMD", 0x17, 0x71), "Zen 2 (Matisse)"),
    (x86("AuthenticAMD", 0x19, 0x21), "Zen 3 (Vermeer)"),
    (x86("AuthenticAMD", 0x19, 0x44), "Zen 3+ (Rembrandt)"),
    (x86("AuthenticAMD", 0x19, 0xA0), "Zen 4c (Bergamo / Siena)"),
    (x86("AuthenticAMD", 0x1A, 0x02), "Zen 5 (Turin)"),
    (x86("AuthenticAMD", 0x1A, 0x44), "Zen 5 (Granite Ridge)"),
    (arm("0x41", "0xd4f"), "Neoverse V2"),
    (arm("0x41", "0xd40"), "Neoverse V1"),
    (arm("0x41", "0xD49"), "Neoverse N2"),                          # hex case does not matter
    (arm("0x41", "0xd05", "0xd0b"), "Cortex-A55 + Cortex-A76"),     # big.LITTLE: every core type, in CPU order
    (arm("0xc0", "0xac3"), "AmpereOne"),
    (x86("GenuineIntel", 6, 0xFF), "unknown (GenuineIntel family 6, model 255)"),
    (x86("AuthenticAMD", 0x1F, 0x01), "unknown (AuthenticAMD family 31, model 1)"),
    (arm("0x41", "0xd99"), "unknown (implementer 0x41, part 0xd99)"),
    ({"vendor": "unavailable", "family": None, "model": None}, "unknown (no CPU family and model recorded)"),
]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """A real warehouse file with one run per CPU below (the runs and facts tables filled directly: the
    subject here is the view, not ingest)."""
    db = tmp_path_factory.mktemp("identity") / "fleet.duckdb"
    connection = open_warehouse(db)
    default_run = json.loads(DEFAULT_RUN_MANIFEST.read_text())["facts"]["cpu"]
    dev_vm = {"vendor": "AuthenticAMD", "family": 25, "model": 17, "stepping": 1, "model_name": "AMD EPYC 9B14"}
    cpus = ([("default-run", default_run), ("dev-vm", dev_vm)]
            + [(f"real-{index}", cpu) for index, (_, _, cpu, _) in enumerate(REAL_CPUS)]
            + [(f"known-{index}", cpu) for index, (cpu, _) in enumerate(KNOWN_NUMBERS)])
    for index, (host, cpu) in enumerate(cpus):
        run_id = f"20261201T000000Z-{index:06x}"
        connection.execute("INSERT INTO runs (run_id, host, profile, started_at, finished_at, fleetscope_version, "
                           "fleetscope_git_sha, bundle_schema, bundle_path, content_sha256, loaded_at) VALUES "
                           "(?, ?, 'quick', now(), now(), '0', '0', 1, '-', '-', now())", [run_id, host])
        connection.execute("INSERT INTO facts VALUES (?, ?, ?)", [run_id, host, json.dumps({"hostname": host, "cpu": cpu})])
    yield connection
    connection.close()


def named(connection: duckdb.DuckDBPyConnection, host: str) -> tuple[str, bool]:
    return connection.execute("SELECT microarchitecture, uarch_known FROM host_identity WHERE host = ?", [host]).fetchone()


def test_the_fixtures_real_cpus_are_named(warehouse):
    assert named(warehouse, "default-run") == ("Rocket Lake", True)  # family 6 model 0xA7, as its KVM guest reports
    assert named(warehouse, "dev-vm") == ("Zen 4 (Genoa)", True)
    for index, (cpu_name, fixture, _, expected) in enumerate(REAL_CPUS):
        assert (FIXTURES / fixture).is_file(), fixture
        assert named(warehouse, f"real-{index}") == (expected, True), cpu_name


@pytest.mark.parametrize("index, expected", [(index, name) for index, (_, name) in enumerate(KNOWN_NUMBERS)])
def test_known_numbers_and_unknown_ones(warehouse, index, expected):
    name, known = named(warehouse, f"known-{index}")
    assert name == expected
    assert known == (not expected.startswith("unknown"))


def test_cores_and_segment_come_with_the_name(warehouse):
    rows = warehouse.execute("SELECT host, uarch_cores, uarch_segment FROM host_identity WHERE host IN "
                             "('real-11', 'real-0', 'known-26')").fetchall()
    assert sorted(rows) == [("known-26", "Cortex-A55 + Cortex-A76", "client"),
                            ("real-0", "Golden Cove", "server"),
                            ("real-11", "Raptor Cove + Gracemont", "client, hybrid")]


def load_facts_module():
    spec = importlib.util.spec_from_file_location("fleetscope_facts", FACTS_MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BIG_LITTLE_CPUINFO = "".join(
    f"processor\t: {cpu}\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\n"
    f"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: {variant}\nCPU part\t: {part}\nCPU revision\t: 0\n\n"
    for cpu, (variant, part) in enumerate([("0x2", "0xd05")] * 4 + [("0x4", "0xd0b")] * 4))
X86_CPUINFO = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
               "model name\t: AMD EPYC 9B14\nstepping\t: 1\n\n")


def test_the_facts_module_records_arm_implementer_and_every_part():
    facts = load_facts_module()
    assert facts.arm_cpu_ids(BIG_LITTLE_CPUINFO) == {"implementer": "0x41", "parts": ["0xd05", "0xd0b"]}
    assert facts.arm_cpu_ids(X86_CPUINFO) == {}


def test_inventory_groups_come_from_the_controller_not_the_host_s_manifest(bundles, cli, tmp_path):
    """Issue 27 item 15: a host's manifest named its own groups, so a host could place itself in any group
    (here 'admins'). The warehouse records the groups the controller gives ingest; a host it names none for,
    or an ingest given none, records none."""
    bundles.write(bundles.manifest(host="rack-a-1", inventory_groups=["lab", "rack_a", "admins"]))
    bundles.write(bundles.manifest(host="old-bundle"))  # collected before manifests carried groups
    bundles.write(bundles.manifest(host="unknown", inventory_groups=["admins"]))
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"rack-a-1": ["rack_a", "lab"], "old-bundle": ["lab"]}))
    db = tmp_path / "fleet.duckdb"
    proc = cli("ingest", bundles.results_dir, "--db", db, "--inventory-groups", groups)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with duckdb.connect(str(db), read_only=True) as connection:
        rows = connection.execute("SELECT host, inventory_groups, microarchitecture FROM fleet_overview ORDER BY host"
                                  ).fetchall()
    assert rows == [("old-bundle", ["lab"], "Zen 4 (Genoa)"), ("rack-a-1", ["lab", "rack_a"], "Zen 4 (Genoa)"),
                    ("unknown", None, "Zen 4 (Genoa)")]
    compared = cli("compare", "--db", db, "group:admins", "group:lab", "--format", "json")
    assert compared.returncode == 1 and "'admins'" in compared.stderr, compared.stdout + compared.stderr


def test_ansible_inventory_list_output_gives_each_host_its_group_names(bundles, cli, tmp_path):
    """`ansible-inventory --list` as the groups file: a host is in a group directly or through a child
    group, as Ansible's group_names says ('all' aside), read from standard input here."""
    listed = {"_meta": {"hostvars": {}}, "all": {"children": ["ungrouped", "lab"]}, "ungrouped": {"hosts": ["lone"]},
              "lab": {"children": ["rack_a"]}, "rack_a": {"hosts": ["rack-a-1"]}}
    bundles.write(bundles.manifest(host="rack-a-1"))
    bundles.write(bundles.manifest(host="lone"))
    db = tmp_path / "fleet.duckdb"
    proc = subprocess.run([sys.executable, "-m", "fleetscope", "ingest", str(bundles.results_dir), "--db", str(db),
                           "--inventory-groups", "-"], input=json.dumps(listed), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT host, inventory_groups FROM runs ORDER BY host").fetchall() == [
            ("lone", ["ungrouped"]), ("rack-a-1", ["lab", "rack_a"])]


@pytest.mark.parametrize("content, said", [
    ("[1, 2]", "expected a JSON object"), ("{", "not JSON"), ('{"node1": "lab"}', "expected a list"),
    ('{"node1": ["rack\\u0007a"]}', "expected a list"), ('{"no\\u202ede": ["lab"]}', "is not a host name"),
])
def test_a_groups_file_that_is_not_one_stops_the_ingest_before_it_loads(bundles, cli, tmp_path, content, said):
    bundles.write()
    groups = tmp_path / "groups.json"
    groups.write_text(content)
    proc = cli("ingest", bundles.results_dir, "--db", tmp_path / "fleet.duckdb", "--inventory-groups", groups)
    assert proc.returncode == 1 and said in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "fleet.duckdb").exists()


def test_a_group_name_with_a_control_character_refuses_the_bundle(bundles, cli, tmp_path):
    bundles.write(bundles.manifest(inventory_groups=["lab", "rack\u0007a"]))
    proc = cli("ingest", bundles.results_dir, "--db", tmp_path / "fleet.duckdb")
    assert proc.returncode == 3  # refused, the others loaded
    assert "REFUSED" in proc.stdout and "inventory_groups" in proc.stdout
