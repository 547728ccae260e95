"""Bundle validation: good bundles pass, and each kind of corruption is refused with a message that
names the file, the line (for JSON lines) and the field."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fleetscope.ingest import bundle as bundle_module
from fleetscope.ingest.bundle import BundleError, load_bundle

RESULTS_FILE = "results/latency_sweep.jsonl"


def edit_manifest(bundle: Path, edit) -> None:
    path = bundle / "manifest.json"
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))


def edit_line(bundle: Path, line_number: int, edit) -> None:
    path = bundle / RESULTS_FILE
    lines = path.read_text().splitlines()
    document = json.loads(lines[line_number - 1])
    edit(document)
    lines[line_number - 1] = json.dumps(document)
    path.write_text("\n".join(lines) + "\n")


def test_a_good_bundle_loads_with_every_point(bundles):
    loaded = load_bundle(bundles.write())
    assert (loaded.run_id, loaded.host) == (bundles.run_id, "node1")
    points = list(loaded.points())
    assert len(points) == len(bundles.latency_points())
    assert [point.point_index for point in points] == list(range(len(points)))


def test_the_content_hash_follows_the_content(bundles):
    bundle = bundles.write()
    first = load_bundle(bundle).content_sha256
    assert load_bundle(bundle).content_sha256 == first
    edit_line(bundle, 1, lambda point: point["samples"].append(9.0))
    assert load_bundle(bundle).content_sha256 != first


def _truncate_last_line(bundle: Path) -> None:
    path = bundle / RESULTS_FILE
    path.write_bytes(path.read_bytes()[:-40])


def _symlink_out(bundle: Path) -> None:
    outside = bundle.parent.parent.parent / "outside.jsonl"
    outside.write_text((bundle / RESULTS_FILE).read_text())
    (bundle / RESULTS_FILE).unlink()
    os.symlink(outside, bundle / RESULTS_FILE)


def _set_file(value: str):
    return lambda document: document["experiments"][0].update(file=value)


CORRUPTIONS = {
    "manifest is not JSON": (
        lambda bundle: (bundle / "manifest.json").write_text('{"bundle_schema": 1,'),
        ["manifest.json", "not valid JSON"],
    ),
    "manifest field missing": (
        lambda bundle: edit_manifest(bundle, lambda document: document.pop("profile")),
        ["manifest.json", "at $:", "'profile' is a required property"],
    ),
    "manifest field of the wrong type": (
        lambda bundle: edit_manifest(bundle, lambda document: document["facts"]["cpu"].update(logical_cpus="two")),
        ["manifest.json", "at $.facts.cpu.logical_cpus", "is not of type 'integer'"],
    ),
    "timestamp that is not RFC 3339": (
        lambda bundle: edit_manifest(bundle, lambda document: document.update(started_at="yesterday")),
        ["manifest.json", "at $.started_at", "date-time"],
    ),
    "bundle schema newer than supported": (
        lambda bundle: edit_manifest(bundle, lambda document: document.update(bundle_schema=2)),
        ["manifest.json", "bundle schema 2 is newer than this fleetscope supports (1): upgrade fleetscope"],
    ),
    "bundle schema that is not a number": (
        lambda bundle: edit_manifest(bundle, lambda document: document.update(bundle_schema="1")),
        ["manifest.json", "at $.bundle_schema", "integer"],
    ),
    "run_id differs from its directory": (
        lambda bundle: edit_manifest(bundle, lambda document: document.update(run_id="20261122T034500Z-ffffff")),
        ["manifest.json", "at $.run_id", "does not match the bundle directory name", "{run_id}"],
    ),
    "host differs from its directory": (
        lambda bundle: edit_manifest(bundle, lambda document: document.update(host="node2")),
        ["manifest.json", "at $.host", "'node2'", "'node1'"],
    ),
    "results file escaping the bundle": (
        lambda bundle: edit_manifest(bundle, _set_file("../../../outside.jsonl")),
        ["manifest.json", "at $.experiments[0].file", "outside the bundle is never read"],
    ),
    "results file given as an absolute path": (
        lambda bundle: edit_manifest(bundle, _set_file("/etc/hostname")),
        ["at $.experiments[0].file", "absolute path"],
    ),
    "results file symlinked out of the bundle": (
        _symlink_out,
        ["at $.experiments[0].file", "outside the bundle"],
    ),
    "ok experiment whose file is missing": (
        lambda bundle: (bundle / RESULTS_FILE).unlink(),
        ["at $.experiments[0].file", "does not exist"],
    ),
    "run-level error that is not text": (
        lambda bundle: edit_manifest(bundle, lambda document: document.update(error={"stage": 3})),
        ["manifest.json", "at $.error", "is not of type"],
    ),
    "experiment listed twice": (
        lambda bundle: edit_manifest(bundle, lambda document: document["experiments"].append(
            {"name": "latency_sweep", "status": "skipped", "file": None})),
        ["at $.experiments[1].name", "appears twice"],
    ),
    "CPU listed twice in the topology": (
        lambda bundle: edit_manifest(bundle, lambda document: document["facts"].update(topology={
            "cpus": [{"cpu": 0, "llc": "0-1"}, {"cpu": 1, "llc": "0-1"}, {"cpu": 0, "llc": "0-1"}]})),
        ["manifest.json", "at $.facts.topology.cpus[2].cpu", "0 appears twice"],
    ),
    "core kind listed twice": (
        lambda bundle: edit_manifest(bundle, lambda document: document["facts"].update(topology={
            "core_kinds": [{"kind": "P", "cpus": "0", "representative_cpu": 0, "caches": []},
                           {"kind": "P", "cpus": "1", "representative_cpu": 1, "caches": []}]})),
        ["manifest.json", "at $.facts.topology.core_kinds[1].kind", "'P' appears twice"],
    ),
    "truncated last line": (
        _truncate_last_line,
        [f"{RESULTS_FILE}: line {{last_line}}", "truncated"],
    ),
    "line that is not JSON": (
        lambda bundle: (bundle / RESULTS_FILE).write_text(
            (bundle / RESULTS_FILE).read_text().splitlines()[0] + '\n{"schema_version": 1,, }\n'),
        [f"{RESULTS_FILE}: line 2", "not valid JSON"],
    ),
    "point field missing": (
        lambda bundle: edit_line(bundle, 2, lambda point: point.pop("samples")),
        [f"{RESULTS_FILE}: line 2", "'samples' is a required property"],
    ),
    "point field of the wrong type": (
        lambda bundle: edit_line(bundle, 3, lambda point: point["summary"].update(median="fast")),
        [f"{RESULTS_FILE}: line 3", "at $.summary.median", "is not of type 'number'"],
    ),
    "point of another experiment": (
        lambda bundle: edit_line(bundle, 4, lambda point: point.update(experiment="bandwidth")),
        [f"{RESULTS_FILE}: line 4", "at $.experiment", "'bandwidth'", "'latency_sweep'"],
    ),
    "point schema newer than supported": (
        lambda bundle: edit_line(bundle, 5, lambda point: point.update(schema_version=2)),
        [f"{RESULTS_FILE}: line 5", "point schema 2 is newer than this fleetscope supports (1)"],
    ),
    "sample that is NaN": (
        lambda bundle: (bundle / RESULTS_FILE).write_text(
            (bundle / RESULTS_FILE).read_text().replace('"samples": [', '"samples": [NaN, ', 1)),
        [f"{RESULTS_FILE}: line 1", "NaN"],
    ),
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_a_corrupt_bundle_is_refused_with_a_precise_message(bundles, corruption):
    corrupt, expected_fragments = CORRUPTIONS[corruption]
    bundle = bundles.write()
    corrupt(bundle)
    with pytest.raises(BundleError) as refused:
        load_bundle(bundle)
    for fragment in expected_fragments:
        fragment = fragment.format(last_line=len(bundles.latency_points()), run_id=bundles.run_id)
        assert fragment in str(refused.value)


def test_failed_and_skipped_experiments_may_have_no_or_a_partial_file(bundles):
    partial_points = [point for point in bundles.latency_points() if point["params"]["page_policy"] == "thp"][:3]
    experiments = [
        {"name": "latency_sweep", "status": "failed", "file": RESULTS_FILE, "error": "chase: killed by OOM", "wall_s": 4.0},
        {"name": "tlb", "status": "failed", "file": "results/tlb.jsonl", "error": "timeout", "wall_s": None},
        {"name": "bandwidth", "status": "skipped", "file": None, "error": None, "wall_s": None},
    ]
    bundle = bundles.write(bundles.manifest(status="partial", experiments=experiments),
                          results={RESULTS_FILE: partial_points})
    loaded = load_bundle(bundle)
    assert loaded.manifest["status"] == "partial"
    assert len(list(loaded.points())) == 3


def test_older_bundle_schemas_go_through_the_upgrade_chain(bundles, monkeypatch):
    old = bundles.manifest(bundle_schema=0)
    old["facts"]["hostname_v0"] = old["facts"].pop("hostname")
    bundle = bundles.write(old)

    def upgrade_0_to_1(document: dict) -> dict:
        facts = dict(document["facts"], hostname=document["facts"]["hostname_v0"])
        return {**document, "bundle_schema": 1, "facts": facts}

    monkeypatch.setattr(bundle_module, "MANIFEST_UPGRADES", {0: upgrade_0_to_1})
    loaded = load_bundle(bundle)
    assert loaded.delivered_bundle_schema == 0
    assert loaded.manifest["bundle_schema"] == 1
    assert loaded.manifest["facts"]["hostname"] == "node1"


def test_a_version_with_no_upgrade_step_is_refused(bundles):
    bundle = bundles.write(bundles.manifest(bundle_schema=0))
    with pytest.raises(BundleError, match=r"bundle schema 0 .* cannot be upgraded"):
        load_bundle(bundle)
