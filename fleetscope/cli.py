"""The `fleetscope` command: verbs in workflow order (plan, ingest, report, compare, outliers, check, query, parse,
import, reference, infer, export, migrate, version)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

import duckdb

from fleetscope import __version__
from fleetscope.errors import UserError
from fleetscope.ingest import DEFAULT_BATCH as DEFAULT_INGEST_BATCH
from fleetscope.ingest.parsers import TOOLS

MAIN_EXAMPLES = """\
examples:
  fleetscope plan --facts results/<run_id>/<host>/manifest.json --profile standard   a host's plan and price
  fleetscope ingest results/                 load every bundle under results/<run_id>/<host>/
  fleetscope report --out reports/           write reports/index.html and one page per host
  fleetscope compare group:rack_a group:rack_b      two inventory groups side by side, level by level
  fleetscope outliers                               hosts far from their peers of the same microarchitecture
  fleetscope check --junit reports/check.xml        exit 4 when a host changed since its previous run (nightly gate)
  fleetscope query "SELECT * FROM runs_overview"
  fleetscope parse mlc raw/mlc_loaded_latency.txt   what fleetscope reads from a raw tool output
  fleetscope import --host node7 mlc old/mlc.txt    a lab's past outputs as an external run
  fleetscope import curve --host ref-a72 --cpu-model "Cortex-A72" a72.csv   a published curve as a reference host
  fleetscope reference load                          the shipped published curves, to compare with
  fleetscope infer --csv old/lat_mem_rd.csv          cache levels from any latency curve
  fleetscope export --parquet lake/                  the warehouse as Parquet for Trino, Spark, BigQuery
  fleetscope migrate                                 bring an older warehouse's schema up to date
  fleetscope version

The warehouse is warehouse/fleet.duckdb unless --db or FLEETSCOPE_DB says otherwise.
"""

INGEST_EXAMPLES = """\
examples:
  fleetscope ingest results/
  fleetscope ingest results/20261122T034500Z-a1b2c3/node1/
  fleetscope ingest --db /data/lab.duckdb results/ old-results/
  fleetscope ingest --jobs 4 results/      # 4 processes validate, this one derives and writes
  fleetscope ingest --batch 128 results/   # 128 bundles a transaction (default 32)
  ansible-inventory -i inventory/lab.yml --list > groups.json
  fleetscope ingest --inventory-groups groups.json results/   # the hosts' groups, from the inventory

Bundles go in batches (--batch): each bundle is validated and derived in memory, and the batch is
written in one transaction; a refused bundle costs the others of its batch nothing. An unchanged bundle
is told by a stat of its files (their size, inode and times as when they were read) before anything is
read. Per bundle it prints one line, once its batch is in the warehouse:
  loaded     first time this (run_id, host) is loaded
  unchanged  already loaded with the same content: nothing changes
  replaced   same (run_id, host) with new content (e.g. a partial run re-collected): replaced whole
  REFUSED    the bundle breaks the contract; the reason says what to fix; nothing of it is loaded,
             it is listed in the view refused_bundles (and on the fleet page) until it loads
A bundle is untrusted input: SECURITY.md lists the limits it is held to.

exit status:
  0  every bundle loaded or was already loaded
  3  some bundles were refused; every other bundle was loaded
  1  nothing to load at a PATH, or the warehouse could not be opened or written (newer schema, full
     disk): the message says which; bundles reported as loaded before it stay loaded
"""

EXIT_REFUSED = 3

PLAN_EXAMPLES = """\
examples:
  fleetscope plan --facts results/20261122T034500Z-a1b2c3/zen3-01/manifest.json --profile standard
  fleetscope plan --sysfs /srv/dumps/epyc-9754/ --mem-available 768g --profile quick
  fleetscope plan --facts facts.json --profile standard -e kernels_c2c_all_pairs=true --format json
  fleetscope plan --facts facts.json --tags latency,bandwidth

The plan a run would make on that host before measuring (roles/kernels/tasks/plan.yml runs the same code,
plugins/filter/plan.py, with the roles' defaults): every experiment's points, processes and an upper bound
on their time, fitted into the profile's budget (quick 2 min, standard 15 min of experiments), with what
the budget cut; full states its own price. --facts takes a bundle's manifest.json or the fleetscope_facts
module's output; --sysfs a copy of a host's /sys and /proc (as tests/fixtures/sysfs holds them); a tree
without /proc/meminfo needs --mem-available. -e NAME=VALUE overrides a role variable (a JSON value, or text).
Exit status 0, or 4 when the plan exceeds the profile's budget (a variable set with -e can do that).
"""
EXIT_OVER_BUDGET = 4

REPORT_EXAMPLES = """\
examples:
  fleetscope report
  fleetscope report --out /srv/www/lab/ --db /data/lab.duckdb
  fleetscope report --all          write every page again, changed or not

Writes OUT/index.html (the fleet), OUT/<host>.html (the host's latest run, with the list of its
runs), OUT/<host>/<run_id>.html for its earlier runs and the charts' script once under OUT/assets/.
Pages open from file:// with no network (keep assets/ beside them). Only the pages whose data changed
since the last report are written again (OUT/.fleetscope-report.json remembers what each shows).
A section that cannot be drawn for a run shows an error box on that page; every other section and
page is still written. Exit status 1 when any section or page could not be drawn.
"""

COMPARE_EXAMPLES = """\
examples:
  fleetscope compare node1 node2                       two hosts (their latest runs)
  fleetscope compare group:rack_a group:rack_b --out reports/racks.html
  fleetscope compare uarch:zen3 uarch:raptor-lake uarch:zen4 --format json
  fleetscope compare node1@20261122T034500Z-a1b2c3 node1@20261129T034500Z-d4e5f6    drift of one host

An operand is a host (its latest run), HOST@RUN_ID (one run), group:NAME (the latest run of every host in
that inventory group) or uarch:NAME (of every host of that microarchitecture; case, spaces and punctuation
do not matter, and 'zen4' matches 'Zen 4 (Genoa)' and 'Zen 4 (Raphael)'). The first operand is the
baseline. Every figure of the host pages' summaries is shown per operand (the median over its runs) with its
difference from the baseline; a level's latency is tested with a Mann-Whitney U test on the raw samples of
its plateau and reported as significant only when the difference is at least 5% and p < 0.05. The page
(default reports/compare.html, beside the fleet page, with the charts' script under reports/assets/) overlays
every family's curves; --format json prints the same figures (keys in README.md), to --out when given.
"""

OUTLIERS_EXAMPLES = """\
examples:
  fleetscope outliers
  fleetscope outliers --by cpu-model --format json

Within each microarchitecture (--by cpu-model: each CPU model), a host's figure is an outlier when it is at
least 10% and 3.5 robust standard deviations (1.4826 x the group's MAD) from its group's median; each
outlier comes with the usual cause of such a difference. A group with fewer hosts than --min-peers + 1 is
listed as not scored. Storage is not a property of the CPU and is not scored. Exit status 0 either way.
"""

CHECK_EXAMPLES = """\
examples:
  fleetscope check                                   every host's latest run against its previous run
  fleetscope check --junit reports/check.xml         the same, and JUnit XML for AWX, Jenkins or GitLab
  fleetscope check --baseline 20261122T034500Z-a1b2c3 node1 node2    against the runs of that run id
  fleetscope check --baseline 2026-11-01              against each host's latest run by the end of that day
  fleetscope check --baseline host:golden-01          every host against one machine's latest run
  fleetscope check --threshold dram_latency=8% --threshold 'l*_size=off' --threshold flagged=+2
  fleetscope check --worse-only --format json

A figure MOVED when it changed by at least its threshold and, for a cache level's latency, the Mann-Whitney
test on the raw samples of the level's plateau gives p < 0.05 (compare's rule). Figures without samples
(bandwidth, TLB entries, MLP, storage p99, sizes, flags) are gated on the threshold alone. A figure the
baseline measured and the latest run did not is LOST and gates too. Default thresholds: a level's latency 5%,
a level's size 50%, storage p99 25%, flags +-1 (count), THP granted +-10 points, everything else 10%;
--threshold FIGURE=VALUE (FIGURE a name of --format json or a pattern: 'l*_latency'; VALUE 8%, +2 in the
figure's unit, or off) overrides them, the last match winning. Reference hosts are not checked unless named.

exit status:
  0  no checked host changed (hosts without a baseline are listed and pass)
  4  a figure of some host moved or was lost
  1  the warehouse, a host or the baseline could not be found: the message says which
"""

QUERY_EXAMPLES = """\
examples:
  fleetscope query "SELECT * FROM fleet_overview"
  fleetscope query --format csv "SELECT * FROM latency_curve WHERE host = 'node1'" > node1.csv
  fleetscope query --format json "SELECT host, run_id, status FROM runs_overview"
  fleetscope query - < analysis/my_query.sql          the SQL from standard input (a file, a heredoc)

One statement, a SELECT (or EXPLAIN): anything else is refused. The warehouse is opened read-only and
the query can reach no file at all, its own included: it cannot change the warehouse or its WAL, read or
write other files (read_csv, read_blob, COPY, ...), ATTACH databases or INSTALL/LOAD extensions.
--format json writes NaN and infinities as null; --format csv escapes control characters and leads a
text that a spreadsheet would run as a formula (=, +, -, @) with an apostrophe.
Tables and views are described in warehouse/README.md, and carry those descriptions as comments:
  fleetscope query "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE table_name = 'runs'"
"""

MIGRATE_EXAMPLES = """\
examples:
  fleetscope migrate
  fleetscope migrate --db /data/lab.duckdb

Applies the migrations of warehouse/migrations/ the file lacks and re-creates every view. ingest and
import do the same before loading; query, report, export and the notebooks only read, and ask for this
when the file's schema is older than this fleetscope. A file from a newer fleetscope is refused.
"""


PARSE_EXAMPLES = """\
examples:
  fleetscope parse mlc results/<run_id>/<host>/raw/mlc_loaded_latency.txt
  fleetscope parse fio --format json raw/fio_randread.json
  fleetscope parse perf raw/perf_stat.csv
  fleetscope parse diskspd diskspd.xml

--format json prints everything the parser read (units in the key names: _ns, _mb_s = 1e6 B/s,
_bytes_per_s); table prints a summary. A file the parser cannot read is an error naming the file
and line; the exit status is then 2.
"""


IMPORT_EXAMPLES = """\
examples:
  fleetscope import --host lab-node7 mlc old/mlc_idle.txt old/mlc_loaded.txt
  fleetscope import --host lab-node7 --cpu-model "Xeon Gold 6248" --started-at 2024-05-02 fio fio/*.json
  fleetscope import --host lab-node7 --run-id 20240502T000000Z-1a2b3c perf perf_saxpy.csv
  fleetscope import --host lab-node7 --workload allocator perf stat.txt cycles.report misses.report
  fleetscope import curve --host ref-n100 --cpu-model "Intel N100" --source https://example.org/n100 \
      --measured-by ramlat --clock-ghz 3.4 --pattern line-per-page --caches 32k,2m,6m n100_ramlat.csv
  fleetscope import curve --host ref-graviton2 --cpu-model "Graviton2" --relative --page-size 2m tmb.csv
Every file is parsed first; one the parser cannot read stops the import (FILE:LINE) and nothing is
written. The files become the bundle RESULTS/<run_id>/<host>/ (profile 'external', raw/<tool>/...),
which is then loaded into the warehouse like any bundle. perf files are one workload's profile: `perf
stat` output (-x, CSV or perf's own table) and `perf report --stdio` profiles (by cycles, by cache misses;
a ranked list '1. 28.56% malloc' too); ingest classifies the workload (case A store/dependency-bound, B
miss-bound, C instruction-cache-bound, or what it could not decide) and import prints the case, its
evidence, the next step and the functions' share of the time beside their share of the misses. The run id
comes from the files' date
(--started-at, else their newest modification time) and content, so importing the same files again
changes nothing; give --run-id to add other tools' files to the same run.

`import curve` stores one published or legacy latency curve (the CSV `fleetscope infer --csv` reads:
bytes,ns or pages,ns) as a REFERENCE host: not a lab machine, marked so on the pages and in compare and
outliers, with --source and --measured-by kept beside it. Say how it was measured (--pattern, --page-size,
--relative), the CPU's published cache sizes (--caches) as for `infer`, and the core clock the source states
(--clock-ghz): the ingest's inference and plausibility rules read it so, the same rules as a run's (a first
plateau far above an L1 hit, a memory plateau under 25 ns). The same file again changes nothing; a corrected
--source or --cpu-model replaces its run.
"""


INFER_EXAMPLES = """\
examples:
  fleetscope infer --csv sweep.csv                   columns bytes,ns: cache levels
  fleetscope infer --csv sweep.csv --caches 32k,1m,32m   the reported sizes beside the levels
  fleetscope infer --csv ramlat.csv --pattern line-per-page --page-size 16k   one line per 16 KiB page
  fleetscope infer --csv tinymembench.csv --relative  ns over L1 (the first plateau reads 0)
  fleetscope infer --csv tlb.csv --format json       columns pages,ns: L1/L2 TLB entries, walk cost

The CSV has a header naming 'ns' and 'bytes' or 'pages' (optional 'std'); several rows of one size are
its samples. The method is the one ingest applies to every run (fleetscope/analyze/inference.py). Say how the
curve was measured where fleetscope cannot know it: steps smaller than a cache level's are reported as
TLB steps with their entries (reach / page size) when the pattern touches every page. A file that
cannot be read is an error naming the file and line; the exit status is then 2.
"""

EXPORT_EXAMPLES = """\
examples:
  fleetscope export --parquet lake/
  fleetscope export --parquet /data/fleet-parquet --overwrite --db /data/lab.duckdb
  fleetscope export --openmetrics /var/lib/prometheus/node-exporter/fleetscope.prom
  fleetscope export --openmetrics -                  the same text on standard output

--parquet writes DIR/tables/<table>/host=<host>/run_id=<run_id>/*.parquet (views likewise under DIR/views/) and
DIR/export.json with the row counts; see warehouse/README.md for reading it from Trino, Spark or BigQuery.
--openmetrics writes each lab host's latest headline figures (cache levels, DRAM, TLB, MLP, storage p99, flags,
run age ...) as gauges in the OpenMetrics text format, replacing FILE atomically, for node_exporter's textfile
collector; docs/monitoring.md lists the metrics and docs/grafana-dashboard.json is a dashboard reading them.
"""


def _size(text: str) -> int:
    part = text.strip().lower()
    factor = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(part[-1:], 1)
    digits = part[:-1] if factor > 1 else part
    if not digits.isdigit() or int(digits) == 0:
        raise argparse.ArgumentTypeError(f"{part!r} is not a size (e.g. 32k, 1m, 33554432)")
    return int(digits) * factor


def _size_list(text: str) -> list[int]:
    return [_size(part) for part in text.split(",") if part.strip()]


def add_curve_reading_options(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    """How a curve from another tool was measured (verbs that read one: infer, import curve)."""
    from fleetscope.analyze.inference import PATTERNS

    parser.add_argument("--pattern", choices=PATTERNS, default=PATTERNS[0],
                        help=f"{prefix}how the chase walks its buffer: random-lines (fleetscope's chase, tinymembench), "
                             "line-per-page (ramlat: one line per page, so a TLB's reach is a step) or sequential "
                             f"(default: {PATTERNS[0]})")
    parser.add_argument("--page-size", type=_size, default=4096, metavar="SIZE",
                        help=f"{prefix}page size the curve was measured with, for TLB entries = reach / page size "
                             "(default: 4k; 16k on Apple silicon, 2m with huge pages)")
    parser.add_argument("--relative", action="store_true",
                        help=f"{prefix}ns are over L1 (tinymembench); read so anyway when the first sizes read 0")


def curve_reading(arguments: argparse.Namespace):
    from fleetscope.analyze.inference import CurveReading

    return CurveReading(arguments.pattern, arguments.page_size, arguments.relative)


def _default_db() -> Path:
    from fleetscope.store.warehouse import DEFAULT_DB

    return Path(os.environ.get("FLEETSCOPE_DB") or DEFAULT_DB)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _positive_seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be zero or more seconds")
    return value


# Each verb imports what it needs when it runs: altair alone takes about a second to import, which
# `fleetscope --help` and `fleetscope query` should not pay.
def _command_plan(arguments: argparse.Namespace) -> int:
    from fleetscope import planning

    if bool(arguments.facts) == bool(arguments.sysfs):
        raise UserError("give one of --facts FILE or --sysfs DIR")
    facts = planning.facts_from_file(arguments.facts) if arguments.facts else planning.facts_from_sysfs(arguments.sysfs)
    overrides = {}
    for item in arguments.extra_vars:
        name, separator, value = item.partition("=")
        if not separator or not name:
            raise UserError(f"-e {item!r}: give NAME=VALUE, e.g. -e kernels_c2c_all_pairs=true")
        try:
            overrides[name] = json.loads(value)
        except ValueError:
            overrides[name] = value
    selected = planning.select([tag.strip() for tag in arguments.tags.split(",") if tag.strip()]) \
        if arguments.tags else None
    plan = planning.plan(facts, arguments.profile, overrides, selected,
                         _size(arguments.mem_available) if arguments.mem_available else None)
    module = planning.plan_module()
    host = facts.get("hostname") or "host"
    if arguments.format == "json":
        print(json.dumps(module.plan_record(plan), indent=2))
    else:
        print(module.plan_summary(plan, host))
        print(f"{'experiment':<18} {'points':>7} {'processes':>9} {'at most':>9} {'allowance':>9}  notes")
        for entry in plan["experiments"]:
            allowance = "" if entry.get("allowance_s") is None else f"{entry['allowance_s']:g} s"
            notes = "; ".join(([f"skipped: {entry['skip']}"] if entry.get("skip") else [])
                              + list(entry.get("notes") or []) + list(entry.get("cuts") or []))
            print(f"{entry['name']:<18} {entry['points']:>7,} {entry['processes']:>9} {entry['bound_s']:>8.1f}s "
                  f"{allowance:>9}  {notes}")
    return 0 if plan["within_budget"] is not False else EXIT_OVER_BUDGET


def _command_ingest(arguments: argparse.Namespace) -> int:
    from fleetscope.ingest.load import find_bundles, forget_vanished_refusals, ingest_bundles
    from fleetscope.store.query import printable
    from fleetscope.store.warehouse import open_warehouse

    bundle_paths = []
    missing = False
    for path in arguments.paths:
        found = find_bundles(path) if path.is_dir() else []
        if not found:
            print(
                f"fleetscope ingest: no bundle at {path} (expected {path}/manifest.json or "
                f"{path}/<run_id>/<host>/manifest.json)",
                file=sys.stderr,
            )
            missing = True
        bundle_paths.extend(found)
    if not bundle_paths:
        return 1
    groups = None
    if arguments.inventory_groups is not None:
        from fleetscope.ingest.inventory_groups import read_groups

        source = arguments.inventory_groups
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        groups = read_groups(text, "standard input" if source == "-" else source)
    refused = 0
    with open_warehouse(arguments.db, lock_wait_s=arguments.lock_wait) as connection:
        forget_vanished_refusals(connection)
        for outcome in ingest_bundles(connection, bundle_paths, jobs=arguments.jobs, groups=groups,
                                      batch=arguments.batch):
            refused += outcome.action == "REFUSED"
            print(f"{outcome.action:<10} {printable(str(outcome.path))}: {outcome.detail}", flush=True)
    print(f"{len(bundle_paths) - refused} of {len(bundle_paths)} bundles accepted into {arguments.db}")
    if missing:
        return 1
    return EXIT_REFUSED if refused else 0


def _command_report(arguments: argparse.Namespace) -> int:
    from fleetscope.report.pages import write_reports
    from fleetscope.store.warehouse import open_snapshot

    with open_snapshot(arguments.db, lock_wait_s=arguments.lock_wait) as connection:
        result = write_reports(connection, arguments.out, rewrite_all=arguments.all)
    for failure in result.failures:
        print(f"FAILED     {failure}", flush=True)
    print(f"wrote {len(result.written)} pages ({len(result.unchanged)} unchanged"
          f"{f', {len(result.removed)} removed' if result.removed else ''}); open {arguments.out / 'index.html'}")
    if result.failures:
        print(f"{len(result.failures)} sections could not be drawn; their pages say why")
        return 1
    return 0


# Beside the fleet page `fleetscope report` writes (its assets/ are shared), not in whatever folder one stands in.
DEFAULT_COMPARE_PAGE = Path("reports") / "compare.html"


def _command_compare(arguments: argparse.Namespace) -> int:
    from fleetscope.report import fleet, fleet_pages
    from fleetscope.report.pages import write_compare_page
    from fleetscope.store.warehouse import open_read_only

    if len(arguments.operands) < 2:
        raise UserError(f"compare needs two operands or more ({', '.join(fleet.OPERAND_FORMS)}), got one")
    with open_read_only(arguments.db, lock_wait_s=arguments.lock_wait) as connection:
        comparison = fleet_pages.compare(connection, arguments.operands, with_curves=arguments.format == "html")
    operands, rows = comparison.operands, comparison.rows
    if arguments.format == "json":
        text = json.dumps(fleet.compare_json(operands, rows, kinds=comparison.kinds, flags=comparison.flags), indent=2,
                          default=str) + "\n"
        if arguments.out is None:
            sys.stdout.write(text)
        else:
            arguments.out.write_text(text, encoding="utf-8")
            print(f"wrote {arguments.out}")
        return 0
    context = fleet_pages.compare_context(operands, rows, comparison.curves, comparison.flags)
    out = write_compare_page(arguments.out or DEFAULT_COMPARE_PAGE, context, fleet.SIGNIFICANT_CHANGE,
                             fleet.SIGNIFICANT_P)
    if context["moved"]:
        print("\n".join(["significant differences:", *(f"  {sentence}" for sentence in context["moved"])]))
    elif context["tested"]:
        print("no level's latency differs by both the threshold and the test")
    else:
        print(f"no test ran: {context['no_test_because']}")
    for group in context["untested"]:
        heading = f"differences of {fleet.SIGNIFICANT_CHANGE:.0%} or more without a test ({group['why']}):"
        print("\n".join([heading, *(f"  {sentence}" for sentence in group["differences"])]))
    flagged = [f"  {item['run'].host}: {', '.join(sorted({flag['rule'] for flag in item['flags']}))}"
               for item in context["flags"] if item["flags"]]
    if flagged:
        print("\n".join(["plausibility flags (on the page, beside the figures they concern):", *flagged]))
    print(f"wrote {out}")
    return 0


def _command_outliers(arguments: argparse.Namespace) -> int:
    from fleetscope.report import fleet
    from fleetscope.store.query import render
    from fleetscope.store.warehouse import open_read_only

    with open_read_only(arguments.db, lock_wait_s=arguments.lock_wait) as connection:
        latest = [run for run in fleet.runs(connection) if run.recency == 1]
        keys = [run.key for run in latest]
        values = fleet.run_values(fleet.batch(connection, keys).rows, keys, fleet.PEER_HEADLINES)
    columns = fleet.measured_columns(values.values(), fleet.PEER_HEADLINES)
    result = fleet.outliers(latest, values, columns, by=arguments.by.replace("-", "_"), min_peers=arguments.min_peers)
    if arguments.format == "json":
        sys.stdout.write(json.dumps(fleet.outliers_json(result), indent=2) + "\n")
        return 0
    print(f"Outliers by {arguments.by}: at least {fleet.OUTLIER_RELATIVE:.0%} and {fleet.OUTLIER_Z:g} robust standard "
          f"deviations from the group's median")
    if result.found:
        sys.stdout.write(render(
            ["host", "group", "figure", "value", "group median", "difference", "usual cause"],
            [(item["host"], item["group"], item["column"].header, fleet.format_value(item["column"], item["value"]),
              fleet.format_value(item["column"], item["group_median"]), f"{item['relative']:+.0%}", item["cause"])
             for item in result.found], "table"))
    else:
        print("no host sits that far from its peers")
    for group in result.groups:
        state = "scored" if group["scored"] else group["note"]
        print(f"  {group['group']}: {len(group['hosts'])} hosts, {state}")
    if result.references:
        print(f"  reference hosts, not scored and no host's peer: {', '.join(result.references)}")
    return 0


def _command_check(arguments: argparse.Namespace) -> int:
    from fleetscope.report import check
    from fleetscope.store.warehouse import open_read_only

    baseline = check.parse_baseline(arguments.baseline)
    thresholds = [check.parse_threshold(text) for text in arguments.threshold]
    with open_read_only(arguments.db, lock_wait_s=arguments.lock_wait) as connection:
        result = check.check(connection, arguments.hosts, baseline, thresholds, worse_only=arguments.worse_only)
    if arguments.junit is not None:
        arguments.junit.parent.mkdir(parents=True, exist_ok=True)
        arguments.junit.write_text(check.to_junit(result), encoding="utf-8")
    text = {"text": check.render_text, "junit": check.to_junit,
            "json": lambda result: json.dumps(check.to_json(result), indent=2, default=str) + "\n"}[arguments.format](result)
    if arguments.out is None:
        sys.stdout.write(text)
    else:
        arguments.out.parent.mkdir(parents=True, exist_ok=True)
        arguments.out.write_text(text, encoding="utf-8")
        print(f"wrote {arguments.out}")
    if arguments.junit is not None:
        print(f"wrote {arguments.junit}", file=sys.stderr)  # standard output may be the JSON or XML itself
    return result.exit_status


def _command_query(arguments: argparse.Namespace) -> int:
    from fleetscope.store.query import render, run
    from fleetscope.store.warehouse import open_read_only

    statement = sys.stdin.read() if arguments.sql == "-" else arguments.sql
    if not statement.strip():
        raise UserError("no SQL given (standard input was empty)")
    with open_read_only(arguments.db, lock_wait_s=arguments.lock_wait) as connection:
        columns, rows = run(connection, statement)
    sys.stdout.write(render(columns, rows, arguments.format))
    return 0


def _command_parse(arguments: argparse.Namespace) -> int:
    from fleetscope.ingest.parsers import ParseError, decode, parser, read_text

    tool = parser(arguments.tool)
    try:
        if str(arguments.file) == "-":
            parsed = tool.parse(decode(sys.stdin.buffer.read()), source="<stdin>")
        else:
            parsed = tool.parse(read_text(arguments.file), source=str(arguments.file))
    except ParseError as error:
        print(f"fleetscope parse: error: {error}", file=sys.stderr)
        return 2
    if arguments.format == "json":
        json.dump(parsed, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join([f"{parsed['source']}:", *tool.table(parsed)]) + "\n")
    return 0


def _command_import(arguments: argparse.Namespace) -> int:
    from fleetscope.ingest.imports import import_files
    from fleetscope.ingest.load import ingest_bundle
    from fleetscope.store.warehouse import open_warehouse

    if arguments.tool == "curve":
        return _command_import_curve(arguments)
    curve_only = [option for option, given in (("--source", arguments.source is not None),
                                               ("--caches", bool(arguments.caches)),
                                               ("--measured-by", arguments.measured_by is not None),
                                               ("--clock-ghz", arguments.clock_ghz is not None),
                                               ("--relative", arguments.relative),
                                               ("--pattern", arguments.pattern != "random-lines"),
                                               ("--page-size", arguments.page_size != 4096)) if given]
    if curve_only:
        raise UserError(f"{', '.join(curve_only)}: only with `fleetscope import curve`")
    imported = import_files(arguments.results, arguments.host, arguments.tool, arguments.files,
                            run_id=arguments.run_id, started_at=arguments.started_at,
                            cpu_model=arguments.cpu_model, workload=arguments.workload)
    with open_warehouse(arguments.db, lock_wait_s=arguments.lock_wait) as connection:
        outcome = ingest_bundle(connection, imported.path)
        cases = _imported_cases(connection, imported.run_id, arguments.host) if arguments.tool == "perf" else []
    if outcome.action == "REFUSED":
        print(f"REFUSED    {imported.path}: {outcome.detail}")
        return 1
    print(f"{outcome.action:<10} {imported.path}: {outcome.detail} "
          f"({imported.added} new of {len(arguments.files)} files)")
    for line in cases:
        print(line)
    return 0


def _imported_cases(connection, run_id: str, host: str) -> list[str]:
    """How ingest classified imported perf outputs, for people: each workload's case, evidence and next step,
    and its functions' time share beside their miss share."""
    from fleetscope.analyze.profiling import percent, significant
    from fleetscope.resources import sql

    lines = []
    for workload, tier, classification, evidence, next_step, undecided, noticed, time_rule, miss_rule, miss_note \
            in connection.execute(sql("imports/workload_cases"), [run_id, host]).fetchall():
        lines += [f"workload {workload}: {classification} (counter tier {tier})",
                  *(f"  {label}: {text}" for label, text in (
                      ("evidence", evidence), ("next step", next_step), ("left out", undecided),
                      ("noticed", noticed), ("time profile", time_rule), ("miss profile", miss_rule or miss_note))
                    if text)]
        functions = connection.execute(sql("imports/workload_functions"), [run_id, host, workload]).fetchall()
        if functions:
            lines.append(f"  {'function':<40} {'time':>8} {'rank':>5} {'misses':>8} {'rank':>5} {'miss/time':>10}  mark")
        for symbol, kernel, time, time_below, time_rank, miss, miss_below, miss_rank, ratio, bound, mark in functions:
            def share(value, below):
                return percent(value) if value is not None else (f"<{percent(below)}" if below else "-")
            said = "-" if ratio is None else {"at least": ">=", "at most": "<="}.get(bound, "") + significant(ratio, 2)
            name = f"{symbol} [kernel]" if kernel else symbol
            lines.append(f"  {name[:40]:<40} {share(time, time_below):>8} {time_rank or '-':>5} "
                         f"{share(miss, miss_below):>8} {miss_rank or '-':>5} {said:>10}  {mark or ''}".rstrip())
    return lines


REFERENCE_EXAMPLES = """\
examples:
  fleetscope reference list                          the published curves fleetscope ships, with their sources
  fleetscope reference list --format json
  fleetscope reference load                          load them all as reference hosts (again: nothing changes)
  fleetscope reference load ref-n100-gracemont ref-epyc-74f3-zen3
  fleetscope compare node1 ref-epyc-74f3-zen3        your machine beside a published Zen 3 curve

Each is a curve measured by another tool on a real machine (ramlat, tinymembench, a TLB test), copied digit
for digit; SOURCES.md in fleetscope/references/ says where each came from, how it was measured and the CPU's
true cache sizes. `load` writes each as a bundle under --results and ingests it, as `import curve` does.
"""


def _command_import_curve(arguments: argparse.Namespace) -> int:
    from fleetscope.ingest.reference import Reference

    if arguments.run_id is not None:
        raise UserError("import curve: --run-id is not taken (a curve's run id comes from its file)")
    if len(arguments.files) != 1:
        raise UserError(f"import curve: one CSV file per reference host, got {len(arguments.files)}")
    if not arguments.cpu_model:
        raise UserError("import curve: --cpu-model is required (the CPU the curve was measured on)")
    reference = Reference(arguments.host, arguments.cpu_model, arguments.source or "not given",
                          curve_reading(arguments), tuple(arguments.caches), tool=arguments.measured_by,
                          clock_ghz=arguments.clock_ghz)
    return _load_references(arguments, [(arguments.files[0], reference, arguments.started_at)])


def _load_references(arguments: argparse.Namespace, curves: list) -> int:
    """Write each (csv, Reference, started_at) as a reference host's bundle and ingest it."""
    from fleetscope.ingest.load import ingest_bundle
    from fleetscope.ingest.reference import import_curve, refuse_lab_host
    from fleetscope.store.warehouse import open_warehouse

    refused = 0
    with open_warehouse(arguments.db, lock_wait_s=arguments.lock_wait) as connection:
        for csv_path, reference, started_at in curves:
            refuse_lab_host(connection, reference.host)
            imported = import_curve(arguments.results, csv_path, reference, started_at=started_at)
            outcome = ingest_bundle(connection, imported.path)
            refused += outcome.action == "REFUSED"
            print(f"{outcome.action:<10} {imported.path}: {outcome.detail} (reference host {reference.host})",
                  flush=True)
    return 1 if refused else 0


def _command_reference(arguments: argparse.Namespace) -> int:
    from fleetscope.store.query import render
    from fleetscope.ingest.reference import chosen, library, library_rows, recorded_at

    entries = library()
    if arguments.action == "list":
        rows = library_rows(entries)
        if arguments.format == "json":
            sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        else:
            columns = ["host", "cpu_model", "kind", "pattern", "page_bytes", "relative", "source"]
            sys.stdout.write(render(columns, [[row[column] for column in columns] for row in rows], "table"))
        return 0
    return _load_references(arguments, [(entry.file, entry.reference, recorded_at())
                                        for entry in chosen(arguments.names, entries)])


def _command_infer(arguments: argparse.Namespace) -> int:
    from fleetscope.ingest.curve_csv import CurveCsvError, infer_curve, read_curve, render
    from fleetscope.analyze.inference import InferenceError

    reading = curve_reading(arguments)
    try:
        curve = read_curve(arguments.csv, reading.relative)
        result = infer_curve(curve, reading, arguments.caches)
    except (CurveCsvError, InferenceError) as error:
        print(f"fleetscope infer: error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(render(curve, reading, result, arguments.format))
    return 0


def _command_export(arguments: argparse.Namespace) -> int:
    if arguments.openmetrics is not None:
        return _command_export_openmetrics(arguments)
    from fleetscope.store.export import export_parquet
    from fleetscope.store.warehouse import open_read_only

    with open_read_only(arguments.db, lock_wait_s=arguments.lock_wait,
                        writable_directory=arguments.parquet) as connection:
        exported = export_parquet(connection, arguments.parquet, overwrite=arguments.overwrite)
    partitioned = sum(item.partitioned for item in exported)
    print(f"wrote {len(exported)} tables and views ({partitioned} partitioned by host and run) to {arguments.parquet}; "
          f"see {arguments.parquet / 'export.json'}")
    return 0


def _command_export_openmetrics(arguments: argparse.Namespace) -> int:
    from fleetscope.report import openmetrics
    from fleetscope.store.warehouse import open_read_only

    with open_read_only(arguments.db, lock_wait_s=arguments.lock_wait) as connection:
        exported = openmetrics.render(connection)
    if str(arguments.openmetrics) == "-":
        sys.stdout.write(exported.text)
        return 0
    openmetrics.write(exported.text, arguments.openmetrics)
    print(f"wrote {exported.samples} samples of {exported.hosts} hosts to {arguments.openmetrics}"
          + (f" (no host has {', '.join(exported.families_without_samples)} yet)"
             if exported.families_without_samples else ""))
    return 0


def _command_migrate(arguments: argparse.Namespace) -> int:
    from fleetscope.store.warehouse import open_warehouse, schema_version

    # opening for writing applies the missing migrations; every view is re-created too
    open_warehouse(arguments.db, lock_wait_s=arguments.lock_wait, create=False, every_view=True).close()
    print(f"warehouse {arguments.db} is at schema version {schema_version()}, its views re-created")
    return 0


def _command_version(arguments: argparse.Namespace) -> int:
    from fleetscope.ingest.bundle import SUPPORTED_BUNDLE_SCHEMA, SUPPORTED_POINT_SCHEMA
    from fleetscope.store.warehouse import schema_version

    print(
        f"fleetscope {__version__} (bundle schema {SUPPORTED_BUNDLE_SCHEMA}, point schema "
        f"{SUPPORTED_POINT_SCHEMA}, warehouse schema {schema_version()}, duckdb {duckdb.__version__})"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fleetscope",
        description="Characterize the memory hierarchy of every machine in a lab: load the result "
        "bundles Ansible collected into a DuckDB warehouse, report and query them.",
        epilog=MAIN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"fleetscope {__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)

    warehouse_options = argparse.ArgumentParser(add_help=False)
    warehouse_options.add_argument(
        "--db",
        type=Path,
        default=_default_db(),
        help="warehouse file (default: $FLEETSCOPE_DB or warehouse/fleet.duckdb)",
    )
    warehouse_options.add_argument(
        "--lock-wait",
        type=_positive_seconds,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait while another process holds the warehouse (default: 60)",
    )

    def add_verb(name: str, summary: str, examples: str, handler) -> argparse.ArgumentParser:
        verb = verbs.add_parser(
            name,
            parents=[warehouse_options] if name not in ("version", "infer") else [],
            help=summary,
            description=summary,
            epilog=examples,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        verb.set_defaults(handler=handler)
        return verb

    plan = verbs.add_parser("plan", help="a host's plan and price: every experiment's points and an upper bound on "
                            "their time, within the profile's budget", description="The plan and price of a host's run "
                            "before measuring, from its facts or a copy of its sysfs.", epilog=PLAN_EXAMPLES,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    plan.set_defaults(handler=_command_plan)
    plan.add_argument("--facts", type=Path, metavar="FILE", help="a bundle's manifest.json or the facts module's JSON")
    plan.add_argument("--sysfs", type=Path, metavar="DIR", help="a copy of the host's /sys and /proc")
    plan.add_argument("--profile", choices=("quick", "standard", "full"), default="quick",
                      help="the profile to plan (default: quick)")
    plan.add_argument("--mem-available", metavar="SIZE",
                      help="the host's available memory (e.g. 64g) where the facts do not say it")
    plan.add_argument("--tags", metavar="LIST",
                      help="only the experiments these tags select, as the playbook's --tags: a family "
                      "(latency, bandwidth, cpu_os_io, storage) or an experiment (comma-separated)")
    plan.add_argument("-e", "--extra-vars", action="append", default=[], metavar="NAME=VALUE",
                      help="a role variable as -e would set it (repeatable)")
    plan.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    ingest = add_verb("ingest", "validate result bundles and load them into the warehouse", INGEST_EXAMPLES, _command_ingest)
    ingest.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH",
        help="a results/ tree, a results/<run_id>/ folder or one bundle results/<run_id>/<host>/",
    )
    ingest.add_argument(
        "--inventory-groups", metavar="FILE",
        help="each host's inventory groups, from the controller: a JSON object host -> [group, ...] or the "
             "output of `ansible-inventory --list` ('-': standard input; playbooks/warehouse.yml gives them). "
             "Without it the runs loaded now record no groups: a host's own manifest is not trusted with them",
    )
    ingest.add_argument(
        "--jobs", type=int, default=1, metavar="N",
        help="processes opening, validating and parsing bundles beside the one that derives them and writes "
             "the warehouse (default: 1, all in one process)",
    )
    ingest.add_argument(
        "--batch", type=_positive_int, default=DEFAULT_INGEST_BATCH, metavar="N",
        help=f"bundles staged, derived and written to the warehouse in one transaction (default: "
             f"{DEFAULT_INGEST_BATCH}); memory follows the batch, a refused bundle costs the others nothing",
    )
    report = add_verb("report", "write an HTML page per host and a fleet index", REPORT_EXAMPLES, _command_report)
    report.add_argument("--out", type=Path, default=Path("reports"), help="output folder (default: reports/)")
    report.add_argument("--all", action="store_true", help="write every page again, not only those whose data changed")
    compare = add_verb("compare", "compare hosts, inventory groups, microarchitectures or runs level by level",
                       COMPARE_EXAMPLES, _command_compare)
    compare.add_argument("operands", nargs="+", metavar="OPERAND",
                         help="HOST, HOST@RUN_ID, group:NAME or uarch:NAME; the first is the baseline")
    compare.add_argument("--out", type=Path, metavar="FILE",
                         help="where to write (html default: reports/compare.html; json default: standard output)")
    compare.add_argument("--format", choices=("html", "json"), default="html", help="output format (default: html)")
    outliers = add_verb("outliers", "list hosts whose figures sit far from their peers'", OUTLIERS_EXAMPLES,
                        _command_outliers)
    outliers.add_argument("--by", choices=("microarchitecture", "cpu-model"), default="microarchitecture",
                          help="who a host's peers are (default: microarchitecture)")
    outliers.add_argument("--min-peers", type=int, default=4, metavar="N",
                          help="peers a host needs before it is scored (default: 4)")
    outliers.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    checker = add_verb("check", "gate: exit 4 when a host's latest run moved beyond thresholds from its baseline",
                       CHECK_EXAMPLES, _command_check)
    checker.add_argument("hosts", nargs="*", metavar="HOST", help="the hosts to check (default: every lab host)")
    checker.add_argument("--baseline", default="previous", metavar="BASELINE",
                         help="previous (default: each host's run before its latest), a run id, a date (YYYY-MM-DD: "
                              "the latest run by its end; or an ISO 8601 time) or host:NAME (that host's latest run)")
    checker.add_argument("--threshold", action="append", default=[], metavar="FIGURE=VALUE",
                         help="how far FIGURE (a name or pattern as --format json names figures) may move: 8%%, "
                              "+2 (in its unit) or off; repeat for more figures")
    checker.add_argument("--worse-only", action="store_true",
                         help="gate only on changes for the worse (slower, smaller, fewer, more flags)")
    checker.add_argument("--format", choices=("text", "json", "junit"), default="text",
                         help="output format (default: text)")
    checker.add_argument("--out", type=Path, metavar="FILE", help="write the output to FILE (default: standard output)")
    checker.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML to FILE")
    query = add_verb("query", "run one SQL query against the warehouse (read-only)", QUERY_EXAMPLES, _command_query)
    query.add_argument("sql", metavar="SQL",
                       help="the query, e.g. \"SELECT * FROM runs_overview\"; '-' reads it from standard input")
    query.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format (default: table)")
    parse = verbs.add_parser(
        "parse",
        help="print what fleetscope reads from a raw MLC, fio, perf or DiskSpd output file",
        description="Read one raw output file (MLC text, fio JSON/terse, `perf stat -x,` CSV, DiskSpd "
        "text or XML) with fleetscope's parser for that tool and print what it read.",
        epilog=PARSE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parse.set_defaults(handler=_command_parse)
    parse.add_argument("tool", choices=TOOLS, help="which tool wrote the file")
    parse.add_argument("file", type=Path, metavar="FILE", help="the raw output file ('-' reads standard input)")
    parse.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    importer = add_verb("import", "load a lab's past MLC, fio, perf or DiskSpd outputs as an external run of a host, "
                        "or a published latency curve as a reference host (import curve)", IMPORT_EXAMPLES,
                        _command_import)
    importer.add_argument("--host", required=True, help="the host the outputs were measured on (for a curve: the "
                          "reference host's name, which must not be a lab host's)")
    importer.add_argument("tool", choices=TOOLS,
                          help="which tool wrote the files; 'curve': a bytes,ns or pages,ns CSV of a reference host")
    importer.add_argument("files", nargs="+", type=Path, metavar="FILE", help="raw output files of that tool")
    importer.add_argument("--run-id", help="add to this run (default: derived from the files' date and content)")
    importer.add_argument("--started-at", metavar="WHEN",
                          help="when they were measured, ISO 8601 (default: the newest file's modification time)")
    importer.add_argument("--cpu-model", help="the host's CPU model, for the fleet page (not guessed when absent)")
    importer.add_argument("--workload", metavar="NAME",
                          help="perf only: the workload the perf stat and perf report files profile (default: the "
                          "first file's name); ingest classifies it and import prints the case")
    importer.add_argument("--results", type=Path, default=Path("results"),
                          help="where the bundle is written (default: results/)")
    importer.add_argument("--source", metavar="URL",
                          help="curve only: where the curve was published (a URL or a citation), kept with it")
    importer.add_argument("--caches", type=_size_list, default=[], metavar="SIZES",
                          help="curve only: the CPU's published cache sizes, smallest first, e.g. 32k,1m,32m")
    importer.add_argument("--measured-by", metavar="TOOL",
                          help="curve only: the tool that measured it (ramlat, lmbench lat_mem_rd ...), shown with it")
    importer.add_argument("--clock-ghz", type=float, metavar="GHZ",
                          help="curve only: the core clock the source states it ran at; the first plateau is then "
                               "checked in cycles against an L1 hit")
    add_curve_reading_options(importer, "curve only: ")
    reference = verbs.add_parser("reference", help="list or load the published curves fleetscope ships as reference "
                                 "hosts", description="The published curves fleetscope ships as reference hosts.",
                                 epilog=REFERENCE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    reference_actions = reference.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = reference_actions.add_parser("list", help="list the library with each curve's source",
                                           epilog=REFERENCE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    listing.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    listing.set_defaults(handler=_command_reference)
    loading = reference_actions.add_parser("load", parents=[warehouse_options], epilog=REFERENCE_EXAMPLES,
                                           help="load the library (or the NAMEs) into the warehouse as reference hosts",
                                           formatter_class=argparse.RawDescriptionHelpFormatter)
    loading.add_argument("names", nargs="*", metavar="NAME", help="only these reference hosts (default: all)")
    loading.add_argument("--results", type=Path, default=Path("results"),
                         help="where the bundles are written (default: results/)")
    loading.set_defaults(handler=_command_reference)
    infer = add_verb("infer", "infer cache or TLB levels from a latency curve in a CSV file", INFER_EXAMPLES,
                     _command_infer)
    infer.add_argument("--csv", type=Path, required=True, metavar="FILE",
                       help="the curve: columns bytes,ns or pages,ns, optional std")
    infer.add_argument("--caches", type=_size_list, default=[], metavar="SIZES",
                       help="reported cache sizes to show beside the levels, smallest first, e.g. 32k,1m,32m")
    add_curve_reading_options(infer)
    infer.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    export = add_verb("export", "write the warehouse as Parquet partitioned by host and run, or each host's latest "
                      "figures as OpenMetrics for Prometheus", EXPORT_EXAMPLES, _command_export)
    export_to = export.add_mutually_exclusive_group(required=True)
    export_to.add_argument("--parquet", type=Path, metavar="DIR", help="output folder")
    export_to.add_argument("--openmetrics", type=Path, metavar="FILE",
                           help="write the latest headline figures as OpenMetrics to FILE ('-': standard output)")
    export.add_argument("--overwrite", action="store_true", help="replace an earlier export in DIR")
    add_verb("migrate", "bring the warehouse's schema up to date (ingest and import do it too)", MIGRATE_EXAMPLES,
             _command_migrate)
    add_verb(
        "version", "print the fleetscope version and the format versions it reads",
        "example:\n  fleetscope version\n", _command_version,
    )
    return parser


def _pandas_absent() -> None:
    """DuckDB's Python client tries `import pandas` on every execute (one to three times, to tell a pandas object
    among the parameters); Python does not remember a failed import, so where pandas is not installed each try
    searches sys.path again: 0.1-0.4 ms each, over a tenth of a bundle's ingest. The command records it as absent
    (what Python does for a module it has been told is not there), which makes each try a dictionary look-up. Only
    the `fleetscope` process itself does: a library importing fleetscope (a marimo notebook, which reads a
    `sys.modules` entry as pandas being there) keeps its interpreter as it was."""
    if "pandas" not in sys.modules and importlib.util.find_spec("pandas") is None:
        sys.modules["pandas"] = None  # type: ignore[assignment]


def main(argv: list[str] | None = None) -> int:
    _pandas_absent()
    arguments = build_parser().parse_args(argv)
    try:
        return arguments.handler(arguments)
    except UserError as error:
        print(f"fleetscope {arguments.verb}: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # a full disk, a read-only folder: what the system said, and where
        where = f"{error.filename}: " if error.filename else ""
        print(f"fleetscope {arguments.verb}: error: {where}{error.strerror or error}: free space or make the folder "
              "writable, then run it again (what was written before it is kept)", file=sys.stderr)
        return 1
    except duckdb.Error as error:  # the warehouse failed under a verb (a full disk, a damaged file)
        from fleetscope.store.warehouse import storage_error

        print(f"fleetscope {arguments.verb}: error: {storage_error(getattr(arguments, 'db', 'the warehouse'), error)}",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"fleetscope {arguments.verb}: interrupted", file=sys.stderr)
        return 130
