"""`perf report --stdio` output: where the samples of a `perf record` fell, function by function.

Read in three shapes, all one profile per sampled event:
- perf's own output, `perf report --stdio --no-children --sort dso,symbol` with or without `-n`
  (a samples column) and `-q` (no headers): `# Samples: 4K of event 'cycles'` opens each event's
  profile (perf rounds the count to K or M there: `samples_approximate`), `# Event count (approx.):`,
  then rows `   45.12%   1805  libc.so.6  [.] malloc` (trailing columns after the symbol, such as the
  IPC perf adds to some sorts, are not read);
- a ranked list as a write-up quotes it: `1. 28.56% malloc`, `2. 63.36% clear_page_erms [kernel]`,
  `20. ~0.00% (kernel functions)` (`~`: an approximate share; a parenthesised name: a group, not a
  function).

Every function row is {"line", "share" (a fraction of the event's samples, 0.2856), "samples" (int, or
None where the output has no samples column), "dso" (or None), "space" ("user" | "kernel" | "guest
kernel" | "guest user" | "hypervisor" | None), "symbol", "approximate", "group"}. A profile is
{"event", "samples", "samples_approximate", "event_count", "lost_samples", "functions", "listed_share"
(the share its rows add up to: below 1 where a percent limit or a top-N list left rows out), "complete"
(every sample is in a row with its count: a function not listed had none)}.

parse() returns {"tool": "perf_report", "source", "profiles": [profile]}; rows() gives each function's
share (unit "fraction") and samples ("count") with params {event, dso, symbol, space}. Lines starting with
`#` are comments; any other line that is not a row raises ParseError naming the file and line. Parsing
is linear in the input: rows are split on whitespace, not matched by backtracking patterns.
"""

from __future__ import annotations

import re

from fleetscope.ingest.parsers import ParseError, number, sample, split_lines, text_table

SPACES = {".": "user", "k": "kernel", "g": "guest kernel", "u": "guest user", "H": "hypervisor"}
KERNEL_DSOS = ("[kernel]", "[kernel.kallsyms]", "[kernel.vmlinux]")
_SAMPLES = re.compile(r"#\s*Samples:\s+(?P<count>\d+)(?P<scale>[KMG]?)\s+of event\s+'(?P<event>[^']*)'\s*")
_EVENT_COUNT = re.compile(r"#\s*Event count \(approx\.\):\s+(?P<count>[\d,]+)\s*")
_LOST = re.compile(r"#\s*Total Lost Samples:\s+(?P<count>\d+)\s*")
_RANK = re.compile(r"\d{1,6}\.")
_PERCENT = re.compile(r"~?\d{1,3}(?:\.\d+)?%")
_SCALE = {"": 1, "K": 1_000, "M": 1_000_000, "G": 1_000_000_000}
MAX_SYMBOL = 1024


def looks_like(text: str) -> bool:
    """Whether a text is perf report output (a `# Samples:` header or a ranked list) rather than perf stat's."""
    for raw in split_lines(text)[:200]:
        stripped = raw.strip()
        if _SAMPLES.fullmatch(stripped):
            return True
        tokens = stripped.split()
        if tokens and _PERCENT.fullmatch(tokens[0]) or len(tokens) > 1 and _RANK.fullmatch(tokens[0]) \
                and _PERCENT.fullmatch(tokens[1]):
            return True
    return False


def _new_profile(event: str | None) -> dict:
    return {"event": event, "samples": None, "samples_approximate": False, "event_count": None,
            "lost_samples": None, "functions": [], "listed_share": 0.0, "complete": False}


def parse(text: str, source: str = "<input>") -> dict:
    profiles: list[dict] = []
    lost = None
    current: dict | None = None
    lines = split_lines(text)
    for line_number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if match := _SAMPLES.fullmatch(stripped):
                current = _new_profile(match["event"])
                current["samples"] = int(match["count"]) * _SCALE[match["scale"]]
                current["samples_approximate"] = bool(match["scale"])
                current["lost_samples"] = lost
                profiles.append(current)
            elif match := _EVENT_COUNT.fullmatch(stripped):
                if current is not None:
                    current["event_count"] = int(match["count"].replace(",", ""))
            elif match := _LOST.fullmatch(stripped):
                lost = int(match["count"])
            continue
        if current is None:  # rows before any header (perf report -q): one profile of an unnamed event
            current = _new_profile(None)
            profiles.append(current)
        current["functions"].append(_row(stripped, source, line_number))
    if not any(profile["functions"] for profile in profiles):
        raise ParseError(source, len(lines) or 1, "no perf report rows: expected the output of `perf report --stdio` "
                                                  "(rows like '45.12%  libc.so.6  [.] malloc')")
    for profile in profiles:
        _settle(profile)
    return {"tool": "perf_report", "source": source, "profiles": profiles}


def _row(stripped: str, source: str, line: int) -> dict:
    first = stripped.split(None, 1)
    ranked = len(first) == 2 and _RANK.fullmatch(first[0]) is not None
    parts = stripped.split(None, 2)[1:] if ranked else first
    if len(parts) < 2 or not _PERCENT.fullmatch(parts[0]):
        raise ParseError(source, line, f"expected a perf report row ('45.12%  libc.so.6  [.] malloc' or "
                                       f"'1. 28.56% malloc'), found {stripped[:120]!r}")
    percent_text, rest = parts[0], parts[1].strip()
    row = {"line": line, "share": number(percent_text.lstrip("~").removesuffix("%"), source, line, "the share") / 100,
           "samples": None, "dso": None, "space": None, "symbol": None,
           "approximate": percent_text.startswith("~"), "group": False}
    if ranked:
        return _ranked_row(row, rest, source, line)
    count, _space, after = rest.partition(" ")
    if count.isdigit():  # perf report -n: the samples column
        row["samples"] = int(count)
        rest = after.strip()
    for marker, space in SPACES.items():
        dso, found, symbol = f"{rest} ".partition(f" [{marker}] ")
        if found:
            row.update(dso=dso.strip() or None, space=space, symbol=_symbol(_without_dashes(symbol), source, line))
            return row
    raise ParseError(source, line, f"no '[.]' or '[k]' between the shared object and the symbol in {stripped[:120]!r}: "
                                   "run perf report with --sort dso,symbol")


def _without_dashes(symbol: str) -> str:
    """The symbol without the empty columns perf prints after it for some sorts (its IPC columns: '-  -')."""
    words = symbol.strip().split(" ")
    while words and words[-1] in ("", "-"):
        words.pop()
    return " ".join(words)


def _ranked_row(row: dict, rest: str, source: str, line: int) -> dict:
    """A ranked list's row: 'malloc', 'clear_page_erms [kernel]' or '(kernel functions)'."""
    symbol = rest
    if symbol.endswith("]") and "[" in symbol:
        name, _bracket, tag = symbol.rpartition("[")
        if tag[:-1] in ("kernel", "k", "kernel.kallsyms"):
            row["space"], row["dso"] = "kernel", "[kernel]"
            symbol = name.strip()
    if symbol.startswith("(") and symbol.endswith(")"):
        row["group"] = True
        if "kernel" in symbol:
            row["space"] = "kernel"
    row["symbol"] = _symbol(symbol, source, line)
    return row


def _symbol(symbol: str, source: str, line: int) -> str:
    if not symbol:
        raise ParseError(source, line, "the row names no symbol")
    if len(symbol) > MAX_SYMBOL:
        raise ParseError(source, line, f"a symbol of {len(symbol)} characters (at most {MAX_SYMBOL})")
    return symbol


def _settle(profile: dict) -> None:
    """Fill what the rows tell: the share they add up to, and whether they list every sample (each row has its
    count and the counts add up to the header's, or perf rounded the header and the shares add up to 100%):
    then the exact total is the counts' sum."""
    functions = profile["functions"]
    profile["listed_share"] = round(sum(row["share"] for row in functions), 6)
    counts = [row["samples"] for row in functions]
    total = sum(count for count in counts if count is not None)
    profile["complete"] = bool(functions) and None not in counts and (
        total == profile["samples"] or (profile["samples"] is None or profile["samples_approximate"])
        and profile["listed_share"] >= 0.995)
    if profile["complete"]:
        profile["samples"], profile["samples_approximate"] = total, False


def rows(parsed: dict) -> list[dict]:
    samples = []
    for profile in parsed["profiles"]:
        for row in profile["functions"]:
            params = {"event": profile["event"], "dso": row["dso"], "symbol": row["symbol"], "space": row["space"]}
            samples.append(sample("share", row["share"], "fraction", **params))
            if row["samples"] is not None:
                samples.append(sample("samples", row["samples"], "count", **params))
    return samples


def table(parsed: dict) -> list[str]:
    out = []
    for profile in parsed["profiles"]:
        count = profile["samples"]
        said = "samples not given" if count is None else f"{'~' if profile['samples_approximate'] else ''}{count} samples"
        out.append(f"perf report: event {profile['event'] or '(not named)'}, {said}, "
                   f"{len(profile['functions'])} rows covering {100 * profile['listed_share']:.2f}%")
        body = [[row["line"], f"{'~' if row['approximate'] else ''}{100 * row['share']:.2f}%", row["samples"],
                 row["space"], row["dso"], row["symbol"]] for row in profile["functions"]]
        out += text_table(["line", "share", "samples", "space", "dso", "symbol"], body)
    return out
