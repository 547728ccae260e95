"""What the firmware claims, as the facts module reads it without dmidecode (plugins/modules/fleetscope_facts.py):
the SMBIOS memory devices and the DIMMs' theoretical peak, and the ACPI HMAT's figures per node.

Real trees first (tests/fixtures/sysfs/SOURCES.md): the two-socket Xeon E5's 24 type 17 entries exactly as its
kernel exported them (/sys/firmware/dmi/entries/17-*/raw), and a Xeon in SNC-4 mode whose firmware fills the HMAT
with zeros. The whole-table path (/sys/firmware/dmi/tables/DMI) reads the same structures end to end, as the
kernel's table holds them; and boards whose locators name channels ('P0 CHANNEL A', as dmidecode prints an AMD
board's) are built at DSP0134 3.3's offsets, since no such raw table is public."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
import sysfs_facts

SYSFS = Path(__file__).resolve().parents[1] / "fixtures" / "sysfs"
XEON = SYSFS / "intel-xeon-e5-2node"
HMAT = SYSFS.parent / "hmat"


def facts_of(root: Path, reader: str, monkeypatch) -> dict:
    monkeypatch.setenv("FLEETSCOPE_SYSFS_ROOT", str(root))
    return getattr(sysfs_facts.facts_module(), reader)()


def type17(handle: int, locator: str, bank: str, size_mib: int, speed: int, configured: int, *, kind: int = 0x1A,
           width: int = 64) -> bytes:
    """A memory device structure of SMBIOS 3.3 (92 bytes formatted, strings after): the fields dmidecode decodes,
    at DSP0134's offsets; a speed of 0xFFFF puts the real one in the extended field (0x54/0x58)."""
    area = bytearray(92)
    area[0:4] = bytes((17, 92)) + struct.pack("<H", handle)
    struct.pack_into("<HH", area, 0x08, width, width)          # total and data width
    struct.pack_into("<H", area, 0x0C, 0x7FFF if size_mib >= 0x7FFF else size_mib)
    area[0x10], area[0x11], area[0x12] = 1, 2, kind          # locator, bank locator (strings 1, 2), type
    struct.pack_into("<H", area, 0x15, min(speed, 0xFFFF))
    struct.pack_into("<I", area, 0x1C, size_mib if size_mib >= 0x7FFF else 0)
    struct.pack_into("<H", area, 0x20, min(configured, 0xFFFF))
    struct.pack_into("<II", area, 0x54, speed if speed >= 0xFFFF else 0, configured if configured >= 0xFFFF else 0)
    return bytes(area) + locator.encode() + b"\0" + bank.encode() + b"\0\0"


END = bytes((127, 4, 0xFF, 0xFF)) + b"\0\0"


def table_root(tmp_path: Path, table: bytes) -> Path:
    path = tmp_path / "root" / "sys" / "firmware" / "dmi" / "tables" / "DMI"
    path.parent.mkdir(parents=True)
    path.write_bytes(table)
    return tmp_path / "root"


def test_a_real_xeons_memory_devices_give_their_speed_and_an_upper_bound_peak(monkeypatch):
    """Eight of 24 slots hold 4 GiB DDR3-1600 (dmidecode: 'DIMM_A1' ...); 'A' names no channel (it is the socket
    on this board), so each DIMM counts as a channel: 8 x 1600 MT/s x 8 B = 102.4 GB/s, an upper bound - here the
    true peak, two Sandy Bridge-EP sockets of four channels each."""
    memory = facts_of(XEON, "smbios_memory", monkeypatch)
    assert memory["source"] == "/sys/firmware/dmi/entries" and memory["reason"] is None
    assert (memory["slots"], memory["populated"]) == (24, 8)
    assert {(dimm["type"], dimm["size_bytes"], dimm["speed_mts"], dimm["configured_speed_mts"], dimm["data_width_bits"])
            for dimm in memory["dimms"]} == {("DDR3", 4 << 30, 1600, 1600, 64)}
    assert sorted(dimm["locator"] for dimm in memory["dimms"]) == [f"DIMM_{socket}{slot}" for socket in "AB"
                                                                   for slot in range(1, 5)]
    assert memory["channels"] == 8 and memory["channels_from"].startswith("one per populated DIMM, an upper bound")
    assert memory["peak_gbps"] == pytest.approx(102.4)


def test_the_whole_smbios_table_reads_as_its_entries(monkeypatch, tmp_path):
    """/sys/firmware/dmi/tables/DMI holds every structure end to end (here the Xeon's type 17 entries, then the end
    of table, after which nothing is read)."""
    raws = sorted((XEON / "sys/firmware/dmi/entries").glob("17-*/raw"), key=lambda path: int(path.parent.name[3:]))
    root = table_root(tmp_path, b"".join(path.read_bytes() for path in raws) + END + b"\x11\x22garbage")
    memory = facts_of(root, "smbios_memory", monkeypatch)
    entries = facts_of(XEON, "smbios_memory", monkeypatch)
    assert memory["source"] == "/sys/firmware/dmi/tables/DMI"
    assert {key: value for key, value in memory.items() if key != "source"} == \
        {key: value for key, value in entries.items() if key != "source"}


@pytest.mark.parametrize("devices, channels, peak", [
    # two DIMMs, one per channel (a dual-channel desktop): 2 x 3200 MT/s x 8 B
    ([("DIMM 0", "P0 CHANNEL A", 16384, 3200, 3200), ("DIMM 0", "P0 CHANNEL B", 16384, 3200, 3200),
      ("DIMM 1", "P0 CHANNEL A", 0, 0, 0), ("DIMM 1", "P0 CHANNEL B", 0, 0, 0)], 2, 51.2),
    # four DIMMs on two channels: the channels share their bus, the peak is not doubled; the slower DIMM sets it
    ([("DIMM 0", "P0 CHANNEL A", 16384, 3200, 3200), ("DIMM 1", "P0 CHANNEL A", 16384, 3200, 2933),
      ("DIMM 0", "P0 CHANNEL B", 16384, 3200, 2933), ("DIMM 1", "P0 CHANNEL B", 16384, 3200, 2933)], 2, 46.928),
    # a 128 GiB DDR5 DIMM: its size in the extended field (past 32 GiB - 1 MiB)
    ([("Node0_Channel0_Dimm0", "BANK 0", 131072, 4800, 4800)], 1, 38.4),
])
def test_locators_that_name_channels_count_them(monkeypatch, tmp_path, devices, channels, peak):
    table = b"".join(type17(0x40 + index, *device) for index, device in enumerate(devices)) + END
    memory = facts_of(table_root(tmp_path, table), "smbios_memory", monkeypatch)
    assert memory["channels"] == channels and memory["channels_from"] == "the locators name each DIMM's channel"
    assert memory["peak_gbps"] == pytest.approx(peak)
    assert memory["dimms"][0]["size_bytes"] == devices[0][2] << 20


def test_an_extended_speed_is_read_from_its_own_field(monkeypatch, tmp_path):
    device = bytearray(type17(0x40, "DIMM 0", "P0 CHANNEL A", 32768, 0xFFFF, 0xFFFF, kind=0x22))
    struct.pack_into("<II", device, 0x54, 70000, 68000)  # a speed beyond 65534 MT/s (DSP0134 3.3)
    memory = facts_of(table_root(tmp_path, bytes(device) + END), "smbios_memory", monkeypatch)
    (dimm,) = memory["dimms"]
    assert (dimm["type"], dimm["speed_mts"], dimm["configured_speed_mts"]) == ("DDR5", 70000, 68000)
    assert memory["peak_gbps"] == pytest.approx(68000 * 8 / 1000)


def test_no_table_or_a_broken_one_says_why_and_reads_in_one_pass(monkeypatch, tmp_path):
    (tmp_path / "empty").mkdir()
    assert "cannot be read" in facts_of(tmp_path / "empty", "smbios_memory", monkeypatch)["reason"]
    # a structure whose length runs past the data, then one that claims 2 bytes: reading stops, nothing is guessed
    truncated = type17(0x40, "DIMM 0", "P0 CHANNEL A", 16384, 3200, 3200) + bytes((17, 92, 0, 0)) + bytes(10)
    memory = facts_of(table_root(tmp_path / "t", truncated), "smbios_memory", monkeypatch)
    assert memory["populated"] == 1 and memory["peak_gbps"] == pytest.approx(25.6)
    huge = facts_of(table_root(tmp_path / "h", bytes(2 << 20)), "smbios_memory", monkeypatch)
    assert "over 1048576 bytes" in huge["reason"]
    noise = facts_of(table_root(tmp_path / "n", bytes(range(256)) * 4096), "smbios_memory", monkeypatch)
    assert noise["reason"] is None and noise["populated"] == 0 and noise["peak_gbps"] is None


def test_hmat_figures_and_a_firmware_that_states_zeros(monkeypatch):
    zeros = facts_of(HMAT / "intel-xeon-snc4", "hmat_facts", monkeypatch)
    assert [node["initiators"] for node in zeros["nodes"]] == [[0], [1], [2], [3]]
    assert all(node["read_latency_ns"] is None for node in zeros["nodes"])
    assert zeros["reason"] == "the firmware's HMAT states every latency and bandwidth as 0: no figures"
    stated = facts_of(HMAT / "hwloc-fake-initiators", "hmat_facts", monkeypatch)
    by_node = {node["node"]: node for node in stated["nodes"]}
    assert stated["reason"] is None
    assert (by_node[8]["initiators"], by_node[8]["read_latency_ns"], by_node[8]["read_bandwidth_mb_s"]) == ([1], 26, 131072)
    assert by_node[10]["initiators"] == [1, 3]
    assert "the firmware has no HMAT" in facts_of(XEON, "hmat_facts", monkeypatch)["reason"]


def test_the_manifest_schema_checks_the_firmware_facts(bundles, monkeypatch):
    from fleetscope.ingest.bundle import BundleError, load_bundle

    manifest = bundles.manifest()
    manifest["facts"]["memory"]["smbios"] = facts_of(XEON, "smbios_memory", monkeypatch)
    manifest["facts"]["memory"]["dram_peak_stated_gbps"] = 307.2
    manifest["facts"]["numa"] = {"nodes": 4, "distances": {"node0": [10, 21]},
                                 "hmat": facts_of(HMAT / "hwloc-fake-initiators", "hmat_facts", monkeypatch)}
    load_bundle(bundles.write(manifest))
    for broken, field in ((lambda facts: facts["memory"]["smbios"]["dimms"][0].update(speed_mts=-1600), "speed_mts"),
                          (lambda facts: facts["memory"].update(dram_peak_stated_gbps=0), "dram_peak_stated_gbps"),
                          (lambda facts: facts["numa"]["hmat"]["nodes"][0].update(read_latency_ns="26"),
                           "read_latency_ns"),
                          (lambda facts: facts["numa"]["distances"].update(node1=[10] * 5000), "distances")):
        changed = json.loads(json.dumps(manifest))
        broken(changed["facts"])
        with pytest.raises(BundleError, match=field):
            load_bundle(bundles.write(changed))
