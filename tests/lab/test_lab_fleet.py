"""Three lab hosts measured in parallel by one run of site.yml, with a fault on two of them:
  fslab1  clean: its bundle is complete;
  fslab2  the zero_queue kernel crashes (SIGSEGV) there: that experiment fails with its stderr
          tail, c2c and fio on the same host still run;
  fslab3  reports HTML/JS and SQL metacharacters in its facts, and its scratch disk fills up while
          fio lays out its file: fio fails with the reason, nothing is left behind.
Every host's own knobs are restored, and the three land in the warehouse and on the fleet page."""

from __future__ import annotations

import errno
import json
import os
import re
import threading
import time

import duckdb
import pytest

from lab import HOSTILE_CMDLINE, HOSTILE_HOSTNAME, QUICK_APPLIED, LabRun

pytestmark = pytest.mark.lab

FIO_SIZE = 512 * 1024 * 1024
FAST = {"kernels_samples": 3, "kernels_min_sample_ms": 2, "fio_patterns": ["randread"], "fio_queue_depths": [1],
        "fio_runtime_s": 1, "fio_ramp_s": 0, "fio_size": FIO_SIZE, "fio_free_space_margin": 0}
# fio must have written this much before the disk fills: removing its file then frees enough for
# the rest of the run (fio's stderr log, the manifest, the bundle archive).
FILL_AFTER_BYTES = 32 * 1024 * 1024
# What faults.c prints on fslab2's kernel's stderr just before the crash.
INJECTED = "fslab fault injection: zero_queue on fslab2 stores through a NULL pointer"


class DiskFiller(threading.Thread):
    """Fills a host's /var/tmp to the last byte once fio has started laying out its scratch file
    there: the disk runs full while fio writes, as when another program fills it."""

    def __init__(self, host):
        super().__init__(daemon=True)
        self.var_tmp = host.path("/var/tmp")
        self.filler = self.var_tmp / "fslab-filler"
        self.filled_at_bytes = None
        self.error = None
        self.stop = threading.Event()

    def run(self):
        try:
            while not self.stop.is_set():
                laid_out = list(self.var_tmp.glob("fleetscope-*/fio/fleetscope-fio-*.dat"))
                if laid_out and laid_out[0].stat().st_size >= FILL_AFTER_BYTES:
                    self.filled_at_bytes = laid_out[0].stat().st_size
                    self.fill()
                    return
                time.sleep(0.001)
        except OSError as error:
            self.error = error

    def fill(self):
        """Allocate every free block: in shrinking chunks, since fio takes blocks meanwhile."""
        chunk, size = 64 * 1024 * 1024, 0
        with open(self.filler, "wb") as filler:
            while chunk >= 4096:
                try:
                    os.posix_fallocate(filler.fileno(), size, chunk)
                    size += chunk
                except OSError as error:
                    if error.errno != errno.ENOSPC:
                        raise
                    chunk //= 2

    def remove(self):
        self.stop.set()
        self.join(timeout=5)
        self.filler.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def fleet(lab, tmp_path_factory):
    run = LabRun(tmp_path_factory.mktemp("fleet"), lab.inventory)
    lab["fslab2"].crash_kernel("zero_queue")
    filler = DiskFiller(lab["fslab3"])
    filler.start()
    try:
        proc = run.run("site.yml", "--tags", "zero_queue,c2c,fio", "-e", json.dumps(FAST))
    finally:
        lab["fslab2"].crash_kernel(None)
        filler.remove()
    return run, proc, filler


def experiments(manifest: dict) -> dict[str, dict]:
    return {e["name"]: e for e in manifest["experiments"]}


def test_three_hosts_run_in_parallel_and_each_is_restored(fleet, lab, hosts_as_found):
    run, proc, _ = fleet
    assert proc.returncode == 0, proc.stdout[-4000:]
    manifests = run.manifests()
    assert sorted(manifests) == ["fslab1", "fslab2", "fslab3"]
    assert len({m["run_id"] for m in manifests.values()}) == 1
    # parallel: all three were measuring at one same moment
    assert max(m["started_at"] for m in manifests.values()) < min(m["finished_at"] for m in manifests.values())
    for host in lab.hosts:
        knobs = {k["name"]: k for k in manifests[host.name]["knobs"] if k["name"] in QUICK_APPLIED}
        assert {name: k["before"] for name, k in knobs.items()} == host.originals, host.name
        assert {name: k["applied"] for name, k in knobs.items()} == QUICK_APPLIED, host.name
        assert {name: k["after"] for name, k in knobs.items()} == host.originals, host.name
        assert host.knobs() == host.originals  # the files themselves, as the host sees them
    assert experiments(manifests["fslab1"]).keys() >= {"zero_queue", "c2c", "fio"}
    assert {e["status"] for e in manifests["fslab1"]["experiments"]} <= {"ok", "skipped"}
    assert manifests["fslab1"]["status"] == "complete"


def test_the_warehouse_and_the_fleet_page_list_the_three_hosts(fleet):
    run, _, _ = fleet
    with duckdb.connect(str(run.warehouse), read_only=True) as db:
        runs = db.execute("select host, status from runs order by host").fetchall()
        assert db.execute("select count(distinct run_id) from runs").fetchone()[0] == 1
    assert runs == [("fslab1", "complete"), ("fslab2", "partial"), ("fslab3", "partial")]
    index = (run.reports / "index.html").read_text()
    for host in ("fslab1", "fslab2", "fslab3"):
        assert f'href="{host}.html"' in index
        assert (run.reports / f"{host}.html").exists()
    # grouped on the fleet page by their inventory groups (the lab's racks), which the warehouse play gives
    # ingest from the inventory (each manifest's own list is only the host's claim)
    racks = {"fslab1": ["lab", "rack_a"], "fslab2": ["lab", "rack_b"], "fslab3": ["lab", "rack_a"]}
    assert {host: manifest["inventory_groups"] for host, manifest in run.manifests().items()} == racks
    with duckdb.connect(str(run.warehouse), read_only=True) as db:
        assert dict(db.execute("select host, inventory_groups from runs").fetchall()) == racks
    groups = index[index.index('id="groups-inventory-table"'):]
    groups = groups[:groups.index("</table>")]
    assert re.search(r'data-filter="rack_a" title="fslab1, fslab3">rack_a</button></td><td class="num">2<', groups)
    assert re.search(r'data-filter="rack_b" title="fslab2">rack_b</button></td><td class="num">1<', groups)


def test_a_crashing_kernel_fails_its_experiment_and_the_others_on_that_host_run(fleet):
    run, _, _ = fleet
    manifest = run.manifests()["fslab2"]
    crashed = experiments(manifest)["zero_queue"]
    # First that the injection fired (faults.so was preloaded and read the trigger), then that the role saw it.
    (stderr_log,) = run.results.glob("*/fslab2/raw/zero_queue.stderr.log")
    assert INJECTED in stderr_log.read_text(), f"the crash was not injected on fslab2: its stderr {stderr_log.read_text()!r}"
    assert crashed["status"] == "failed", f"zero_queue crashed on fslab2 but was recorded {crashed}"
    assert INJECTED in crashed["error"]
    # whether or not perf stat saw the signal (it often does not), the kernel never wrote its exit note
    assert "killed" in crashed["error"], crashed["error"]
    assert experiments(manifest)["c2c"]["status"] == "ok"
    assert experiments(manifest)["fio"]["status"] == "ok"
    # the crash was on fslab2 only
    for other in ("fslab1", "fslab3"):
        assert experiments(run.manifests()[other])["zero_queue"]["status"] == "ok"
    with duckdb.connect(str(run.warehouse), read_only=True) as db:
        error = db.execute("select error from experiments where host = 'fslab2' and experiment = 'zero_queue'"
                           ).fetchone()[0]
    assert "NULL pointer" in error


def test_a_disk_that_fills_during_fio_fails_fio_and_leaves_nothing(fleet, lab):
    run, _, filler = fleet
    assert filler.error is None, filler.error
    assert filler.filled_at_bytes is not None, "fio never started laying out its file on fslab3"
    assert filler.filled_at_bytes < FIO_SIZE, "the disk filled only after fio's file was written"
    manifest = run.manifests()["fslab3"]
    fio = experiments(manifest)["fio"]
    assert fio["status"] == "failed"
    assert "No space left on device" in fio["error"], fio["error"]
    assert experiments(manifest)["zero_queue"]["status"] == "ok"
    assert experiments(manifest)["c2c"]["status"] == "ok"
    fslab3 = lab["fslab3"]
    assert fslab3.scratch_leftovers() == []
    assert list(fslab3.path("/var/tmp").iterdir()) == []  # the filler is gone too (the test removed it)


def test_hostile_facts_are_stored_verbatim_and_rendered_escaped(fleet):
    run, _, _ = fleet
    facts = run.manifests()["fslab3"]["facts"]
    assert facts["hostname"] == HOSTILE_HOSTNAME
    assert facts["kernel"]["cmdline"] == HOSTILE_CMDLINE
    with duckdb.connect(str(run.warehouse), read_only=True) as db:
        stored = db.execute("select hostname, kernel_cmdline from host_facts where host = 'fslab3'").fetchone()
        assert db.execute("select count(*) from runs").fetchone()[0] == 3  # DROP TABLE stayed text
    assert stored == (HOSTILE_HOSTNAME, HOSTILE_CMDLINE)
    host_page = (run.reports / "fslab3.html").read_text()
    for page in (host_page, (run.reports / "index.html").read_text()):
        assert "<script>alert(" not in page
        assert "<img src=x" not in page
    assert "&lt;script&gt;alert(&#39;fslab&#39;)&lt;/script&gt;" in host_page
    assert re.search(r"fslab\.note=&#39;; DROP TABLE runs; -- &lt;img src=x onerror=alert\(2\)&gt;", host_page)

