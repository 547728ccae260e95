"""Bad input is refused in preflight, with a message naming the variable, before any lab host is
changed: no knob written, no state file, no scratch directory, no bundle."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.lab

BAD_INPUTS = {
    "unknown profile": (["-e", "fleet_profile=turbo"], ["fleet_profile", "turbo", "quick, standard, full"]),
    "negative size": (["-e", "kernels_latency_sweep_max_bytes=-4096"],
                      ["kernels_latency_sweep_max_bytes=-4096 is negative"]),
    "negative size in a list": (["-e", json.dumps({"kernels_pattern_stride_strides": [64, -256]})],
                                ["kernels_pattern_stride_strides=[64, -256] is negative"]),
    "unknown experiment tag": (["--tags", "zero_queu"],
                               ["--tags zero_queu: no experiment or tag of that name (did you mean zero_queue?)"]),
    "unknown experiment switch": (["-e", "kernels_zero_queu_enabled=false"],
                                  ["kernels_zero_queu_enabled is not a variable of role kernels",
                                   "did you mean kernels_zero_queue_enabled?"]),
    "raw device without the destructive opt-in": (["-e", "fio_device=/dev/vdb"], ["fio_device", "fio_destructive_ok"]),
}


def assert_refused_before_any_change(lab, run, proc, fragments):
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output[-3000:]
    for fragment in fragments:
        assert fragment in output, f"{fragment!r} not in:\n{output[-3000:]}"
    assert "PLAY [Facts" not in output, "the run went past preflight"
    assert not run.results.exists() and not run.warehouse.exists()
    for host in lab.hosts:
        assert host.knobs() == host.originals, host.name
        assert not host.state_file().exists(), host.name
        assert host.scratch_leftovers() == [], host.name


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_is_refused_in_preflight(lab, lab_run, case):
    arguments, fragments = BAD_INPUTS[case]
    # --tags keeps a run that wrongly got past preflight short
    tags = [] if "--tags" in arguments else ["--tags", "zero_queue,fio"]
    proc = lab_run.run("site.yml", *tags, *arguments)
    assert_refused_before_any_change(lab, lab_run, proc, fragments)


@pytest.mark.parametrize("hostvars, fragment", [
    ({}, "inventory host fslab9 has no address: set ansible_host for it"),
    ({"ansible_host": '""'}, "inventory host fslab9 has an empty ansible_host"),
])
def test_an_inventory_host_without_an_address_stops_the_whole_run(lab, lab_run, hostvars, fragment):
    inventory = lab.write_inventory(lab.inventory_dir / "no-address.yml", extra_hosts={"fslab9": hostvars})
    proc = lab_run.run("site.yml", "--tags", "zero_queue", inventory=inventory)
    assert_refused_before_any_change(lab, lab_run, proc, [fragment])
