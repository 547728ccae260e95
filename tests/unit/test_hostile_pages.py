"""What a host's numbers and texts can make a page show (issue 27 item 12): "inf ns", "MAD inf%", "-0 ns",
"-185 ns", "-24 h", a NUL and a bidirectional override. Values no measurement has (a negative or zero time,
a run that ends before it starts) are refused at the boundary; a value that passed it but overflows where a
page derives from it (a latency in cycles), and text that would reorder or hide what a reader sees, are
shown as something a person can read."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path

import pytest

from fleetscope.units import format_number, format_time_ns, format_with_unit, readable_text

RESULTS_FILE = "results/latency_sweep.jsonl"


def _scaled(point: dict, factor: float) -> dict:
    point = copy.deepcopy(point)
    point["samples"] = [value * factor for value in point["samples"]]
    for key in ("min", "median", "mean", "ci95_low", "ci95_high"):
        point["summary"][key] *= factor
    point["context"]["median_cycles"] = point["summary"]["median"] * 3.4
    return point


# (host, how the bundle is made hostile, fragments of its refusal)
REFUSED = {
    "negative-latency": (lambda bundles, points: {RESULTS_FILE: [_scaled(point, -50) for point in points]},
                         None, [f"{RESULTS_FILE}: line 1", "at $.samples[0]", "is not above 0"]),
    "zero-latency": (lambda bundles, points: {RESULTS_FILE: [_scaled(point, 0) for point in points]},
                     None, [f"{RESULTS_FILE}: line 1", "at $.samples[0]", "is not above 0"]),
    "latency-beyond-reason": (lambda bundles, points: {RESULTS_FILE: [_scaled(point, 1e300) for point in points]},
                              None, [f"{RESULTS_FILE}: line 1", "at $.samples[0]", "MAX_MEASURED"]),
    "ends-before-it-starts": (None, lambda manifest: manifest.update(finished_at="2026-11-21T03:45:00Z"),
                              ["manifest.json", "at $.finished_at", "before $.started_at"]),
    "negative-wall-time": (None, lambda manifest: manifest["experiments"][0].update(wall_s=-86400.0),
                           ["manifest.json", "at $.experiments[0].wall_s", "less than the minimum of 0"]),
    "bidi-in-host-name": ("host", None, ["at $.host", "does not match"]),
}


@pytest.mark.parametrize("host", REFUSED)
def test_values_no_measurement_has_refuse_the_bundle(bundles, cli, tmp_path, host):
    results, edit, fragments = REFUSED[host]
    manifest = bundles.manifest(host=host if results != "host" else "node\u202e1")
    if edit:
        edit(manifest)
    points = bundles.latency_points()
    bundles.write(manifest, results=results(bundles, points) if callable(results) else None)
    result = cli("ingest", bundles.results_dir, "--db", tmp_path / "fleet.duckdb")
    assert result.returncode == 3, result.stdout + result.stderr
    assert all(fragment in result.stdout for fragment in fragments), result.stdout


def test_a_page_shows_no_infinite_negative_zero_nul_or_bidi_text(bundles, cli, tmp_path):
    manifest = bundles.manifest(host="odd-texts")
    manifest["facts"]["compiler"] = "gcc\u0000 12 \u202egnp.exe\u202c"
    manifest["facts"]["kernel"]["release"] = "6.1\u2066evil\u2069"
    manifest["experiments"][0]["notes"] = ["a note \u202eton\u202c with a NUL\u0000 inside"]
    points = bundles.latency_points()
    for point in points:  # a clock no core has: cycles = ns x GHz overflow to infinity where a page derives them
        point["context"]["core_clock_ghz"] = 1e300
        point["context"]["median_cycles"] = 1e308
    bundles.write(manifest, results={RESULTS_FILE: points})
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    report = cli("report", "--db", db, "--out", tmp_path / "reports")
    assert report.returncode in (0, 1), report.stderr
    assert "Traceback" not in report.stderr
    for page in (tmp_path / "reports" / "odd-texts.html", tmp_path / "reports" / "index.html"):
        html = page.read_text(encoding="utf-8")
        text = re.sub(r"<script.*?</script>", "", html, flags=re.DOTALL)
        for bad in ("\u0000", "\u202e", "\u202c", "\u2066", "\u2069"):
            assert bad not in html, (page.name, repr(bad))
        for shown in (r"\binf\b", r"\bnan\b", r"-0 ", r"\binfinity\b"):
            assert not re.search(shown, text, flags=re.IGNORECASE), (page.name, shown)
        assert "gcc\\x00 12 \\u202egnp.exe\\u202c" in html or page.name == "index.html"


def test_a_note_of_huge_numbers_reads_as_written_and_costs_its_size(bundles, cli, tmp_path):
    """Notes are free text from the host, and numbers in them are made readable: '1e308' once became 309
    digits with commas (a 1.26 MB manifest gave a 171 MB page) and a 401-digit byte count overflowed
    format_bytes, failing the host's page. Past 1e15, and past 19 digits of bytes, a number stays as written."""
    huge = "1e308 " * 10000  # as long as one text may be (MAX_TEXT_CHARS), ten times
    manifest = bundles.manifest(host="huge-notes")
    manifest["experiments"][0]["notes"] = [huge] * 10 + ["9" * 401 + " B of scratch", "a 2147483648 B buffer"]
    bundles.write(manifest)
    db = tmp_path / "fleet.duckdb"
    ingest = cli("ingest", bundles.results_dir, "--db", db)
    assert ingest.returncode == 0, ingest.stdout
    report = cli("report", "--db", db, "--out", tmp_path / "reports")
    assert report.returncode in (0, 1) and "Traceback" not in report.stderr, report.stderr
    html = (tmp_path / "reports" / "huge-notes.html").read_text(encoding="utf-8")
    assert "9" * 401 + " B of scratch" in html and "a 2 GiB buffer" in html
    assert not re.search(r"\d{1,3}(,\d{3}){6,}", html)
    assert len(html.encode()) < 4 * 10 * len(huge) + 4_000_000, len(html)


def test_one_long_text_does_not_pad_every_row_of_a_query_table():
    """`fleetscope query`'s aligned table padded a column to its widest cell: one host's 64 KiB note made
    every other row 64 KiB wide. Past TEXT_COLUMN_MAX a cell is shown whole and widens nothing."""
    from fleetscope.store.query import TEXT_COLUMN_MAX, render

    rows = [("x" * 65536, 1)] + [("short", index) for index in range(1000)]
    table = render(["note", "n"], rows, "table")
    assert len(table) < 65536 + 1000 * (TEXT_COLUMN_MAX + 20), len(table)
    assert "x" * 65536 in table and table.splitlines()[3].startswith("short")


@pytest.mark.parametrize("text, shown", [
    ("1e308 ns", "1e308 ns"), ("1e15 B", "1e15 B"), ("9.99e14 ns", "999,000,000,000,000 ns"),
    ("1" * 19 + " B", "1,010,550 TiB"), ("1" * 20 + " B", "1" * 20 + " B"),
])
def test_numbers_past_what_is_written_out_stay_as_written(text, shown):
    assert readable_text(text) == shown


@pytest.mark.parametrize("value, shown", [
    (math.inf, "—"), (-math.inf, "—"), (math.nan, "—"), (-0.0, "0"), (-1e-9, "0"), (-0.00004, "0"),
])
def test_a_number_that_is_not_finite_or_is_minus_zero_reads_as_such(value, shown):
    assert format_number(value) == shown
    assert format_time_ns(value) in (shown, f"{shown} ns")
    assert "inf" not in format_with_unit(value, "ns") and "nan" not in format_with_unit(value, "fraction")


@pytest.mark.parametrize("text, shown", [
    ("rises to -0 ns at 4096 B", "rises to 0 ns at 4 KiB"),
    ("MAD inf% of it", "MAD —% of it"), ("rises to -inf ns", "rises to — ns"), ("nan ns", "— ns"),
    ("an info line", "an info line"), ("-0.5 ns", "-0.5 ns"),
])
def test_free_text_with_a_non_finite_or_minus_zero_number_reads_as_such(text, shown):
    assert readable_text(text) == shown


def test_a_point_whose_samples_are_all_zero_is_not_infinitely_noisy(bundles, cli, tmp_path):
    """A count (the one unit that may be 0) of 0 in every sample: its MAD over its median is 0 / 0, which
    the noise flag wrote as "MAD inf% of it" with the value infinity. No spread is measured of it."""
    points = bundles.latency_points()
    zero = copy.deepcopy(points[0])
    zero.update(unit="count", samples=[0] * 7,
                summary={"min": 0, "median": 0, "mean": 0, "ci95_low": 0, "ci95_high": 0, "count": 7})
    bundles.write(results={RESULTS_FILE: [zero, *points[1:]]})
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    flags = cli("query", "SELECT rule, value, evidence FROM flags WHERE rule = 'noisy_point'", "--format", "json",
                "--db", db)
    assert flags.returncode == 0, flags.stderr
    assert "inf" not in flags.stdout.lower().replace("info", "") and "null" not in flags.stdout, flags.stdout
