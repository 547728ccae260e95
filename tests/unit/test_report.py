"""`fleetscope report` through the real CLI: a page per host run and a fleet index, host data escaped, the
Vega runtime written once under assets/, page names that cannot collide, pages rewritten only when their
data changed, and one host's undrawable section kept to that host's page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

from fleetscope.report.pages import MANIFEST_NAME, page_path, page_stem

SCRIPT_IN_FACT = "<script>alert(1)</script>"
SQL_IN_FACT = "'; DROP TABLE runs; --"
SCRIPT_IN_PARAMS = "</script><script>alert(2)</script>"
FIO_SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "fio_samples" / "fio-3.28_libaio_randrw50_4k_qd1.json"
PAGE_LIMIT_BYTES = 400 * 1024


def ingest_and_report(cli, results_dir, tmp_path, expect_report=0):
    db = tmp_path / "fleet.duckdb"
    out = tmp_path / "reports"
    ingested = cli("ingest", results_dir, "--db", db)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    reported = cli("report", "--db", db, "--out", out)
    assert reported.returncode == expect_report, reported.stdout + reported.stderr
    return db, out, reported


def layer_values(spec: dict, index: int) -> list[dict]:
    """The records a chart's layer draws: inline, or a dataset the spec names once for several layers."""
    data = spec["layer"][index]["data"]
    return data["values"] if "values" in data else spec["datasets"][data["name"]]


def pages(out: Path) -> list[str]:
    return sorted(str(path.relative_to(out)) for path in out.rglob("*.html"))


def test_report_writes_a_page_per_host_an_index_and_the_vega_runtime_once(bundles, cli, tmp_path):
    bundles.write()
    bundles.write(bundles.manifest(host="node2"))
    db, out, reported = ingest_and_report(cli, bundles.results_dir, tmp_path)
    assert pages(out) == ["index.html", "node1.html", "node2.html"]
    assert "wrote 3 pages (0 unchanged)" in reported.stdout
    asset, fleet_script = sorted((out / "assets").iterdir(), key=lambda path: path.name.startswith("fleet-"))
    assert re.fullmatch(r"vega-embed-vl-convert-[0-9.]+\.js", asset.name) and asset.stat().st_size > 500_000
    assert re.fullmatch(r"fleet-[0-9a-f]{12}\.js", fleet_script.name)  # the fleet page's own script

    index = (out / "index.html").read_text()
    assert 'href="node1.html"' in index and 'href="node2.html"' in index
    assert "AMD EPYC 9B14" in index and "32 KiB" in index and "32 MiB" in index

    page = (out / "node1.html").read_text()
    assert len(page.encode()) < PAGE_LIMIT_BYTES
    assert f'<script src="assets/{asset.name}"></script>' in page and "vegaEmbed" in page
    spec = json.loads(re.search(r'id="latency-chart-spec">(.*?)</script>', page, re.DOTALL).group(1))
    assert len(layer_values(spec, 0)) == len(bundles.latency_points())
    # the sysfs rules and the inferred levels are marked on the curve
    assert [mark["label"] for mark in layer_values(spec, 3)] == ["L1d (sysfs)", "L2 (sysfs)", "L3 (sysfs)"]
    with duckdb.connect(str(db), read_only=True) as connection:
        inferred = [level for (level,) in connection.execute(
            "SELECT level FROM inferred_levels WHERE host = 'node1' AND page_policy = 'thp' AND level <> 'DRAM' "
            "ORDER BY level_index").fetchall()]
    assert len(inferred) >= 2 and [mark["level"] for mark in layer_values(spec, 5)] == inferred
    # nothing is fetched from elsewhere: the only script with a source is the relative asset
    assert re.findall(r"<(?:script|link|img|iframe)[^>]+(?:src|href)=\"([^\"]+)\"", page) == [f"assets/{asset.name}"]
    assert "no cpufreq driver on this host" in page
    assert str(bundles.results_dir / bundles.manifest()["run_id"] / "node1") in page


def test_the_summary_opens_the_page_and_says_why_a_figure_is_missing(bundles, cli, tmp_path):
    manifest = bundles.manifest()
    manifest["experiments"].append({"name": "smt", "status": "skipped", "file": None, "error": None, "wall_s": 0.1,
                                    "notes": ["no SMT siblings: each CPU is alone in its core"]})
    manifest["experiments"].append({"name": "tlb", "status": "failed", "file": None, "error": "tlb: mmap failed",
                                    "wall_s": 0.1})
    bundles.write(manifest)
    db, out, _ = ingest_and_report(cli, bundles.results_dir, tmp_path)
    page = (out / "node1.html").read_text()
    summary = page[page.index('id="summary"'):page.index('id="latency"')]
    assert "AMD EPYC 9B14" in summary and "AuthenticAMD family 25 (0x19), model 17 (0x11)" in summary
    assert "2 cores, 2 threads, 1 socket, SMT off" in summary and "6.1.0-27-cloud-amd64" in summary
    assert "kvm" in summary and "2 min 10 s" in summary and "quick" in summary
    with duckdb.connect(str(db), read_only=True) as connection:
        inferred = connection.execute("SELECT level, latency_ns FROM inferred_levels WHERE page_policy = 'thp' "
                                      "ORDER BY level_index").fetchall()
    assert re.findall(r"<tr><td>(L\d|DRAM)</td>", summary) == [level for level, _ in inferred]
    assert inferred[-1][0] == "DRAM" and f"{inferred[-1][1]:.0f} ns" in summary
    figures = dict(re.findall(r"<dt>(?:<a[^>]*>)?([^<]+)(?:</a>)?</dt>\s*<dd>(.*?)</dd>", summary, re.DOTALL))
    assert "failed: tlb: mmap failed" in figures["TLB"]
    assert "not run: this run has no mlp experiment" in figures["Memory-level parallelism"]
    assert "not run: this run has no fio experiment" in figures["Storage p99 at queue depth 1"]
    # one check flags: the synthetic guest's L3 share ends at 3 MiB where its sysfs states the host's 32 MiB
    assert "1 flagged" in summary


def test_host_data_is_stored_verbatim_and_escaped_on_the_page(bundles, cli, tmp_path):
    hostile = bundles.manifest()
    hostile["facts"]["hostname"] = SCRIPT_IN_FACT
    hostile["facts"]["cpu"]["model_name"] = SCRIPT_IN_FACT
    hostile["facts"]["kernel"]["cmdline"] = SQL_IN_FACT
    hostile["experiments"][0]["error"] = SCRIPT_IN_FACT
    points = bundles.latency_points()
    for point in points:
        point["params"]["page_policy"] = SCRIPT_IN_PARAMS
    bundles.write(hostile, results={"results/latency_sweep.jsonl": points})
    db, out, _ = ingest_and_report(cli, bundles.results_dir, tmp_path)

    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT hostname, kernel_cmdline FROM host_facts").fetchone() == (
            SCRIPT_IN_FACT, SQL_IN_FACT)
        assert connection.execute("SELECT DISTINCT page_policy FROM latency_curve").fetchall() == [(SCRIPT_IN_PARAMS,)]
    for page in ((out / "node1.html").read_text(), (out / "index.html").read_text()):
        assert SCRIPT_IN_FACT not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    host_page = (out / "node1.html").read_text()
    assert "&#39;; DROP TABLE runs; --" in host_page
    assert "alert(2)" in host_page and "<script>alert(2)" not in host_page
    assert "\\u003c/script\\u003e\\u003cscript\\u003ealert(2)" in host_page


def test_a_failed_run_is_shown_as_failed(bundles, cli, tmp_path):
    failed = bundles.manifest(status="failed", error="stage characterize failed: kernels did not build")
    failed["experiments"][0].update(status="failed", error="chase: mmap of 256 MiB failed: Cannot allocate memory")
    bundles.write(failed, results={"results/latency_sweep.jsonl": bundles.latency_points()[:4]})
    _, out, _ = ingest_and_report(cli, bundles.results_dir, tmp_path)
    page = (out / "node1.html").read_text()
    assert "This run failed." in page
    assert "stage characterize failed: kernels did not build" in page
    assert "chase: mmap of 256 MiB failed: Cannot allocate memory" in page
    assert 'class="status status-failed">failed<' in (out / "index.html").read_text()


def test_every_run_of_a_host_has_a_page_and_the_latest_is_the_host_page(bundles, cli, tmp_path):
    bundles.write(bundles.manifest(status="partial"))
    later = bundles.manifest(run_id="20261123T010000Z-0a0b0c", started_at="2026-11-23T01:00:00Z",
                             finished_at="2026-11-23T01:02:00Z")
    bundles.write(later)
    _, out, _ = ingest_and_report(cli, bundles.results_dir, tmp_path)
    latest = (out / "node1.html").read_text()
    assert "Run <code>20261123T010000Z-0a0b0c</code>" in latest
    older_name = f"node1/{bundles.manifest()['run_id']}.html"
    assert f'href="{older_name}"' in latest
    older = (out / older_name).read_text()
    assert "This run is partial." in older
    # an older run's page reaches the index, the latest run and the shared script one folder up
    assert 'href="../index.html"' in older and 'href="../node1.html"' in older and 'src="../assets/vega-' in older


ADVERSARIAL_HOSTS = ["a", "a--20261122T034500Z-a1b2c3", "A", "a_2fb", "a b", "a/b".replace("/", "_"), "index",
                     "INDEX", "assets", "_69ndex", ".hidden", "..x", "nöde", "n_c3_b6de", "<b>lab host & co",
                     "x" * 200, "x" * 199 + "y"]


def test_page_names_are_injective_for_adversarial_hosts_and_runs(bundles, cli, tmp_path):
    later = dict(run_id="20261123T010000Z-0a0b0c", started_at="2026-11-23T01:00:00Z", finished_at="2026-11-23T01:02:00Z")
    for host in ADVERSARIAL_HOSTS:
        bundles.write(bundles.manifest(host=host))
        bundles.write(bundles.manifest(host=host, **later))
    _, out, reported = ingest_and_report(cli, bundles.results_dir, tmp_path)
    written = int(re.search(r"wrote (\d+) pages", reported.stdout).group(1))
    on_disk = pages(out)
    assert written == len(on_disk) == 2 * len(ADVERSARIAL_HOSTS) + 1
    assert all(re.fullmatch(r"[A-Za-z0-9_.~-]+(/[A-Za-z0-9_.-]+)?\.html", name) for name in on_disk)
    assert not any(name.startswith(".") or "/." in name for name in on_disk)
    index = (out / "index.html").read_text()
    assert "&lt;b&gt;lab host &amp; co" in index
    for host in ("a", "a--20261122T034500Z-a1b2c3"):  # the collision of finding 10: both hosts keep both runs
        page = (out / page_path(host, later["run_id"], later["run_id"])).read_text()
        assert f"<h1>{host}</h1>" in page


@pytest.mark.parametrize("name", ["../../etc/passwd", "..", ".", "index", "INDEX", "assets", "node 1", "nöde",
                                  "a/b", "", "x" * 300, "a\nb"])
def test_page_stem_never_traverses_hides_or_takes_a_reserved_name(name):
    stem = page_stem(name)
    assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.~-]*", stem) and len(stem) <= 120
    assert stem.lower() not in ("index", "assets")


def test_page_stem_keeps_plain_names_and_is_injective():
    assert page_stem("node1.lab.example") == "node1.lab.example"
    names = ADVERSARIAL_HOSTS + ["a/b", "a_b", "a_5fb", "", "_", ".", "..", "a\nb", "a\n", "x" * 300, "x" * 301]
    stems = [page_stem(name) for name in names]
    assert len(set(stems)) == len(set(names))


def test_only_pages_whose_data_changed_are_written_again(bundles, cli, tmp_path):
    for host in ("node1", "node2", "node3"):
        bundles.write(bundles.manifest(host=host))
    db, out, _ = ingest_and_report(cli, bundles.results_dir, tmp_path)
    first = {name: (out / name).stat().st_mtime_ns for name in pages(out)}

    again = cli("report", "--db", db, "--out", out)
    assert again.returncode == 0 and "wrote 0 pages (4 unchanged)" in again.stdout  # the index too
    # node2 is re-run: its new latest page and its older-run page are written, node1's and node3's are not
    bundles.write(bundles.manifest(host="node2", run_id="20261123T010000Z-0a0b0c", started_at="2026-11-23T01:00:00Z",
                                   finished_at="2026-11-23T01:02:00Z"))
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    rerun = cli("report", "--db", db, "--out", out)
    assert rerun.returncode == 0 and "wrote 3 pages (2 unchanged)" in rerun.stdout, rerun.stdout
    after = {name: (out / name).stat().st_mtime_ns for name in pages(out)}
    assert after["node1.html"] == first["node1.html"] and after["node3.html"] == first["node3.html"]
    assert after["node2.html"] != first["node2.html"] and f"node2/{bundles.run_id}.html" in after
    assert after["index.html"] != first["index.html"]  # the fleet page shows node2's new run
    # a page removed by hand is written again; --all writes every page
    (out / "node3.html").unlink()
    assert "wrote 1 pages (4 unchanged)" in cli("report", "--db", db, "--out", out).stdout  # what it shows is the same
    assert "wrote 5 pages (0 unchanged)" in cli("report", "--db", db, "--out", out, "--all").stdout
    assert set(json.loads((out / MANIFEST_NAME).read_text())["pages"]) == set(pages(out)) - {"index.html"}


def _aio_point(queue_depth: int | None) -> dict:
    params = {"engine": "io_uring", "threads": 1, "block_size_bytes": 4096, "direct": True, "cache_dropped": True}
    if queue_depth is not None:
        params["queue_depth"] = queue_depth
    return {"schema_version": 1, "experiment": "aio", "kernel": "aio", "metric": "throughput", "unit": "MB/s",
            "params": params, "samples": [98.0, 100.0, 102.0],
            "summary": {"min": 98.0, "median": 100.0, "mean": 100.0, "ci95_low": 98.0, "ci95_high": 102.0, "count": 3},
            "context": {"iops": 25000.0, "ios": 1000, "latency_p50_us": 38.0, "latency_p99_us": 90.0}}


def test_a_section_that_cannot_be_drawn_stays_on_its_hosts_page(bundles, cli, tmp_path):
    """Finding 4 of issue 14: an aio point without a queue depth and fio's "iodepth": "0" are accepted by
    ingest; each stops only its own section, shown as an error box, and report says how many failed."""
    bundles.write()
    aio = bundles.manifest(host="bad-aio")
    aio["experiments"].append({"name": "aio", "status": "ok", "file": "results/aio.jsonl", "error": None, "wall_s": 1.0})
    bundles.write(aio, results={"results/latency_sweep.jsonl": bundles.latency_points(),
                                "results/aio.jsonl": [_aio_point(1), _aio_point(4), _aio_point(None)]})
    fio_output = json.loads(FIO_SAMPLE.read_text())
    for job in fio_output["jobs"]:
        job["job options"]["iodepth"] = "0"
    fio = bundles.manifest(host="bad-fio")
    fio["experiments"].append({"name": "fio", "status": "ok", "file": None, "error": None, "wall_s": 2.0,
                               "raw": [{"tool": "fio", "path": "raw/fio/randrw50.json", "params": {"job": "randrw50"}}]})
    bundles.write(fio, results={"results/latency_sweep.jsonl": bundles.latency_points(),
                                "raw/fio/randrw50.json": json.dumps(fio_output)})
    _, out, reported = ingest_and_report(cli, bundles.results_dir, tmp_path, expect_report=1)

    assert pages(out) == ["bad-aio.html", "bad-fio.html", "index.html", "node1.html"]
    assert "2 sections could not be drawn" in reported.stdout
    assert re.search(r"FAILED +bad-aio\.html: section aio: drawing its chart: ChartError: 1 of 3 points have no "
                     r"queue depth above zero", reported.stdout)
    assert re.search(r"FAILED +bad-fio\.html: section storage: drawing its chart: ChartError: .* queue depth", reported.stdout)
    bad_aio = (out / "bad-aio.html").read_text()
    error = bad_aio[bad_aio.index('id="aio-error"'):]
    assert "could not be drawn" in error[:400] and "ChartError: 1 of 3 points have no queue depth above zero (None)" in error
    assert 'id="aio-table"' in bad_aio and 'id="latency-chart"' in bad_aio  # its rows and the other sections stay
    bad_fio = (out / "bad-fio.html").read_text()
    assert 'id="storage-error"' in bad_fio and 'id="storage-extra-table"' in bad_fio and 'id="latency-chart"' in bad_fio
    assert not re.search(r'id="[a-z-]+-error"', (out / "node1.html").read_text())
    # the failed pages are drawn again next time, the good one is not
    again = cli("report", "--db", tmp_path / "fleet.duckdb", "--out", out)
    assert again.returncode == 1 and "wrote 2 pages (2 unchanged)" in again.stdout


def test_refused_bundles_are_listed_on_the_fleet_page(bundles, cli, tmp_path):
    bundles.write()
    db, out, _ = ingest_and_report(cli, bundles.results_dir, tmp_path)
    assert 'id="refused-bundles"' not in (out / "index.html").read_text()  # nothing refused
    with duckdb.connect(str(db)) as connection:  # what ingest records (names a host sent are escaped on the page)
        connection.execute(
            "INSERT INTO bundle_refusals VALUES "
            "('results/r1/<evil>', 'r1', '<evil>', 'manifest.json: at $.host: <script>x</script>', "
            "TIMESTAMP '2026-11-23 10:00:00'), ('results/r2/h2', NULL, NULL, 'manifest.json: not JSON', "
            "TIMESTAMP '2026-11-23 11:00:00')")
    reported = cli("report", "--db", db, "--out", out)
    assert reported.returncode == 0, reported.stderr
    index = (out / "index.html").read_text()
    box = index[index.index('id="refused-bundles"'):index.index("</div>", index.index('id="refused-bundles"'))]
    assert "2 bundles refused by ingest" in box
    assert box.index("results/r2/h2") < box.index("results/r1/&lt;evil&gt;")  # newest first
    assert "manifest.json: at $.host: &lt;script&gt;x&lt;/script&gt;" in box and "<script>x" not in index


def test_every_number_on_a_page_is_for_people(bundles, cli, tmp_path):
    """No scientific notation in what a page shows (its text, not its scripts), sizes in IEC units."""
    points = bundles.latency_points()
    for point in points:
        point["params"]["accesses_per_sample"] = 16384
    bundles.write(results={"results/latency_sweep.jsonl": points})
    _, out, _ = ingest_and_report(cli, bundles.results_dir, tmp_path)
    page = (out / "node1.html").read_text()
    visible = re.sub(r"<script.*?</script>", "", page, flags=re.DOTALL)
    visible = re.sub(r"<[^>]+>", " ", visible)
    assert not re.search(r"\d[eE][+-]\d", visible)
    assert "256 MiB" in visible and "268435456" not in visible.replace("268,435,456", "")


def test_a_table_and_its_chart_use_the_same_unit(cli, tmp_path):
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("import", "--db", db, "--results", tmp_path / "results", "--host", "lab-fio", "fio",
               FIO_SAMPLE).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0
    page = (out / "lab-fio.html").read_text()
    spec = json.loads(re.search(r'id="storage-chart-spec">(.*?)</script>', page, re.DOTALL).group(1))
    unit = re.fullmatch(r"latency \((.+), log scale\)", spec["spec"]["encoding"]["y"]["title"]).group(1)
    table = page[page.index('id="storage-extra-table"'):]
    headers = re.findall(r"<th[^>]*>(p[\d.]+|mean) \(([^)]+)\)</th>", table[:table.index("</thead>")])
    assert unit == "µs" and headers and {symbol for _, symbol in headers} == {unit}


def test_the_page_shows_every_derived_table_that_derive_writes():
    from fleetscope.analyze.derive import DERIVED_TABLES
    from fleetscope.report.derived_tables import SHOWN_TABLE_NAMES

    # workload_cases is shown in the Workloads section itself (its extra table), beside the chart it explains
    assert set(SHOWN_TABLE_NAMES) == set(DERIVED_TABLES) - {"inference_runs", "workload_cases"}
    assert len(SHOWN_TABLE_NAMES) == len(set(SHOWN_TABLE_NAMES))


def test_flatten_facts_reads_bytes_for_people(bundles):
    from fleetscope.report.pages import flatten_facts

    rows = dict(flatten_facts(bundles.manifest()["facts"]))
    assert rows["memory.mem_total_bytes"] == "25,000,000,000 (23.28 GiB)" and "caches" not in " ".join(rows)


def test_a_run_without_the_latency_sweep_says_it_was_not_selected(bundles, cli, tmp_path):
    manifest = bundles.manifest(experiments=[{"name": "smt", "status": "skipped", "file": None, "error": None,
                                              "wall_s": 0.1, "notes": ["no SMT siblings"]}])
    bundles.write(manifest, results={})
    _, out, _ = ingest_and_report(cli, bundles.results_dir, tmp_path)
    page = (out / "node1.html").read_text()
    missing = re.search(r'id="latency-chart-missing">(.*?)</p>', page, re.DOTALL).group(1)
    assert "latency_sweep was not among the experiments this run selected" in missing


def test_the_vega_bundle_is_built_once_per_user_and_a_cache_others_may_write_is_not_trusted(tmp_path, monkeypatch):
    from fleetscope.report import pages as report_pages

    cache = tmp_path / "cache"
    monkeypatch.setenv("FLEETSCOPE_CACHE_DIR", str(cache))
    first = report_pages._write_vega_asset(tmp_path / "one")
    built = (tmp_path / "one" / first).read_bytes()
    cached = cache / Path(first).name
    assert cached.read_bytes() == built and [path.name for path in cache.iterdir()] == [cached.name]

    cached.write_bytes(b"/* from the cache */")  # what the next report copies, unbuilt
    report_pages._write_vega_asset(tmp_path / "two")
    assert (tmp_path / "two" / first).read_bytes() == b"/* from the cache */"

    cached.chmod(0o666)  # anyone may write it: built again, and the cache refilled with the build
    report_pages._write_vega_asset(tmp_path / "three")
    assert (tmp_path / "three" / first).read_bytes() == built == cached.read_bytes()

    (tmp_path / "a-file").write_text("")  # a cache that cannot be made (root writes any folder) costs only the build
    monkeypatch.setenv("FLEETSCOPE_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    report_pages._write_vega_asset(tmp_path / "four")
    assert (tmp_path / "four" / first).read_bytes() == built
