"""`fleetscope report`: pages per host and for the fleet, self-contained, with host data escaped."""

from __future__ import annotations

import json
import re

import duckdb
import pytest

from fleetscope.report import cache_marks, format_bytes, host_file_stem

SCRIPT_IN_FACT = "<script>alert(1)</script>"
SQL_IN_FACT = "'; DROP TABLE runs; --"
SCRIPT_IN_PARAMS = "</script><script>alert(2)</script>"


def ingest_and_report(cli, results_dir, tmp_path):
    db = tmp_path / "fleet.duckdb"
    out = tmp_path / "reports"
    ingested = cli("ingest", results_dir, "--db", db)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    reported = cli("report", "--db", db, "--out", out)
    assert reported.returncode == 0, reported.stderr
    return db, out


def test_report_writes_a_self_contained_page_per_host_and_an_index(bundles, cli, tmp_path):
    bundles.write()
    bundles.write(bundles.manifest(host="node2"))
    _, out = ingest_and_report(cli, bundles.results_dir, tmp_path)
    assert sorted(path.name for path in out.iterdir()) == ["index.html", "node1.html", "node2.html"]

    index = (out / "index.html").read_text()
    assert 'href="node1.html"' in index and 'href="node2.html"' in index
    assert "AMD EPYC 9B14" in index and "32 KiB" in index and "32 MiB" in index

    page = (out / "node1.html").read_text()
    assert 'id="latency-chart"' in page and "window.vegaEmbed" in page
    spec = json.loads(re.search(r'id="latency-chart-spec">(.*?)</script>', page, re.DOTALL).group(1))
    assert len(spec["layer"][0]["data"]["values"]) == len(bundles.latency_points())
    assert [mark["label"] for mark in spec["layer"][3]["data"]["values"]] == ["L1d", "L2", "L3"]
    # nothing is fetched: no external scripts, stylesheets or images in the markup
    markup = re.sub(r"<script>.*?</script>", "", page, flags=re.DOTALL)
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", markup)
    assert "no cpufreq driver on this host" in page
    assert str(bundles.results_dir / bundles.manifest()["run_id"] / "node1") in page


def test_host_data_is_stored_verbatim_and_escaped_on_the_page(bundles, cli, tmp_path):
    hostile = bundles.manifest()
    hostile["facts"]["hostname"] = SCRIPT_IN_FACT
    hostile["facts"]["kernel"]["cmdline"] = SQL_IN_FACT
    hostile["experiments"][0]["error"] = SCRIPT_IN_FACT
    points = bundles.latency_points()
    for point in points:
        point["params"]["page_policy"] = SCRIPT_IN_PARAMS
    bundles.write(hostile, results={"results/latency_sweep.jsonl": points})
    db, out = ingest_and_report(cli, bundles.results_dir, tmp_path)

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
    _, out = ingest_and_report(cli, bundles.results_dir, tmp_path)
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
    _, out = ingest_and_report(cli, bundles.results_dir, tmp_path)
    latest = (out / "node1.html").read_text()
    assert "Run <code>20261123T010000Z-0a0b0c</code>" in latest
    older_name = f"node1--{bundles.manifest()['run_id']}.html"
    assert f'href="{older_name}"' in latest
    assert "This run is partial." in (out / older_name).read_text()


def test_odd_host_names_become_safe_file_names(bundles, cli, tmp_path):
    bundles.write(bundles.manifest(host="<b>lab host & co"))
    bundles.write(bundles.manifest(host="index"))
    _, out = ingest_and_report(cli, bundles.results_dir, tmp_path)
    names = sorted(path.name for path in out.iterdir())
    assert len(names) == 3 and "index.html" in names
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+\.html", name) for name in names)
    assert "&lt;b&gt;lab host &amp; co" in (out / "index.html").read_text()


@pytest.mark.parametrize("host", ["../../etc/passwd", "..", "index", "INDEX", "node 1", "nöde", "a/b", ""])
def test_host_file_stem_never_traverses_or_collides(host):
    stem = host_file_stem(host)
    assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", stem)
    assert stem.lower() != "index"


def test_host_file_stem_keeps_plain_names():
    assert host_file_stem("node1.lab.example") == "node1.lab.example"
    assert host_file_stem("a/b") != host_file_stem("a_b")


def test_byte_labels_and_cache_marks(bundles):
    assert [format_bytes(value) for value in (512, 32768, 1048576, 3 * 2**20 // 2, 2**30)] == [
        "512 B", "32 KiB", "1 MiB", "1.5 MiB", "1 GiB"]
    caches = bundles.manifest()["facts"]["caches"]
    assert cache_marks(caches) == [
        {"label": "L1d", "size_bytes": 32768}, {"label": "L2", "size_bytes": 1048576},
        {"label": "L3", "size_bytes": 33554432}]
