"""Filters of the fio role: the job plan, probe verdicts (I/O engine, O_DIRECT), the free-space check,
the raw-output entries of the experiment record, and diskspd's command line on Windows."""

from __future__ import annotations

import json

# fio's job names for each access pattern: (fio rw, label prefix, block-size variable)
PATTERNS = {
    "randread": ("randread", "randread", "random"),
    "randwrite": ("randwrite", "randwrite", "random"),
    "randrw": ("randrw", "randrw{mix}", "random"),
    "seqread": ("read", "seqread", "sequential"),
    "seqwrite": ("write", "seqwrite", "sequential"),
}
SYNCHRONOUS_ENGINES = {"sync", "psync", "vsync", "pvsync", "pvsync2", "windowsaio_sync"}
_SIZE_SUFFIXES = ((1 << 30, "g"), (1 << 20, "m"), (1 << 10, "k"))


def _size_label(size: int) -> str:
    """4096 -> '4k', 1048576 -> '1m' (fio's own suffixes, base 2)."""
    for factor, suffix in _SIZE_SUFFIXES:
        if size >= factor and size % factor == 0:
            return f"{size // factor}{suffix}"
    return str(size)


def _positive_int(value, name):
    """An int from an int or its decimal text; bools, zero, negatives and '4k' are refused."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or int(text) <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(text)


def fio_plan(patterns, queue_depths, random_block_size, seq_block_size, seq_iodepth, rwmixread):
    """One job per random pattern and queue depth, one per sequential pattern (at seq_iodepth).

    Each job: {name, pattern, rw, access, block_size_bytes, iodepth, rwmixread (randrw only, else None)}.
    """
    random_bs = _positive_int(random_block_size, "fio_random_block_size")
    seq_bs = _positive_int(seq_block_size, "fio_seq_block_size")
    seq_depth = _positive_int(seq_iodepth, "fio_seq_iodepth")
    depths = [_positive_int(depth, "fio_queue_depths[]") for depth in queue_depths]
    if not depths:
        raise ValueError("fio_queue_depths is empty: name at least one queue depth, e.g. [1, 16]")
    mix = _positive_int(rwmixread, "fio_rwmixread")
    if mix >= 100:
        raise ValueError(f"fio_rwmixread must be between 1 and 99, got {rwmixread!r}")
    jobs = []
    for pattern in patterns:
        if pattern not in PATTERNS:
            raise ValueError(f"unknown fio pattern {pattern!r}: choose from {', '.join(PATTERNS)}")
        rw, prefix, access = PATTERNS[pattern]
        block_size = random_bs if access == "random" else seq_bs
        for depth in (sorted(set(depths)) if access == "random" else [seq_depth]):
            label = prefix.format(mix=mix)
            jobs.append({
                "name": f"{label}_{_size_label(block_size)}_qd{depth}",
                "pattern": pattern,
                "rw": rw,
                "access": access,
                "block_size_bytes": block_size,
                "iodepth": depth,
                "rwmixread": mix if pattern == "randrw" else None,
            })
    return jobs


def fio_filename(path):
    """A path as fio's `filename=` takes it: ':' separates files in fio, so it is escaped; a newline or
    `${` (fio expands environment variables in job files) cannot be written safely and is refused."""
    text = str(path)
    if not text or "\n" in text or "\r" in text or "${" in text:
        raise ValueError(f"fio cannot be given this path safely: {text!r}")
    return text.replace(":", "\\:")


def _first_json(text):
    """The first JSON object in fio's stdout (warnings may come before it), or None."""
    start = (text or "").find("{")
    if start < 0:
        return None
    try:
        document, _unused = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


def _reason(result):
    """Why a probe failed, in one line: fio's own error lines first, then the job's error code."""
    lines = [line.strip() for line in (result.get("stderr") or "").splitlines() if line.strip()]
    lines += [line.strip() for line in (result.get("stdout") or "").splitlines()
              if line.strip().startswith("fio:")]
    document = _first_json(result.get("stdout"))
    if document and document.get("jobs"):
        error = document["jobs"][0].get("error")
        if error:
            lines.append(f"job error {error}")
    if not lines and result.get("msg"):
        lines.append(str(result["msg"]))
    unique = list(dict.fromkeys(line for line in lines if not line.startswith("{")))
    return "; ".join(unique[:3]) or f"exit status {result.get('rc', '?')}"


def fio_probe_ok(result):
    """True when a probe ran: exit status 0, fio's JSON says error 0 and the job did some I/O."""
    if result.get("rc") != 0 or result.get("failed"):
        return False
    document = _first_json(result.get("stdout"))
    if not document or not document.get("jobs"):
        return False
    job = document["jobs"][0]
    done = sum((job.get(direction) or {}).get("total_ios", 0) or 0 for direction in ("read", "write"))
    return not job.get("error") and done > 0


def fio_direct_choice(mode, probe=None, target=""):
    """{'direct': bool, 'note': str, 'error': str | None} from fio_direct and the O_DIRECT probe."""
    if mode == "buffered":
        return {"direct": False, "error": None,
                "note": "buffered I/O (fio_direct: buffered): the numbers include the page cache"}
    if probe is not None and fio_probe_ok(probe):
        return {"direct": True, "error": None, "note": "direct I/O (O_DIRECT): the page cache is bypassed"}
    reason = "not probed" if probe is None else _reason(probe)
    if mode == "direct":
        return {"direct": True, "note": "",
                "error": f"O_DIRECT was refused on {target} ({reason}) and fio_direct is 'direct': "
                         "set fio_direct: auto to fall back to buffered I/O, or choose another fio_directory"}
    return {"direct": False, "error": None,
            "note": f"buffered I/O: O_DIRECT was refused on {target} ({reason}); "
                    "the numbers include the page cache"}


def fio_engine_choice(probes, engines):
    """The first engine whose probe ran, and why each engine before it was refused.

    probes: the registered loop results (each with `item` = the engine).
    Returns {'engine': str | None, 'notes': [str], 'error': str | None}.
    """
    results = {str(probe.get("item")): probe for probe in probes}
    refused = []
    for engine in engines:
        probe = results.get(str(engine))
        if probe is None:
            continue
        if fio_probe_ok(probe):
            notes = [(f"ioengine {engine}: the first of {', '.join(map(str, engines))} that ran a probe job "
                      "on the target")]
            notes += [f"ioengine {name} refused: {why}" for name, why in refused]
            if engine in SYNCHRONOUS_ENGINES:
                notes.append(f"{engine} is synchronous: queue depths above 1 add no outstanding I/O")
            return {"engine": engine, "notes": notes, "error": None}
        refused.append((engine, _reason(probe)))
    why = "; ".join(f"{name}: {reason}" for name, reason in refused) or "no engine was listed"
    return {"engine": None, "notes": [f"ioengine {name} refused: {reason}" for name, reason in refused],
            "error": f"no I/O engine of fio_ioengines ran on this host ({why})"}


def fio_free_space_error(available_bytes, size_bytes, margin_bytes, directory):
    """'' when the scratch file fits, else a message: free, needed, and which variable to change."""
    available, size, margin = int(available_bytes), int(size_bytes), int(margin_bytes)
    needed = size + margin
    if available >= needed:
        return ""
    return (f"not enough free space for the fio scratch file in {directory}: {_human(available)} free, "
            f"{_human(needed)} needed (fio_size {_human(size)} + fio_free_space_margin {_human(margin)}). "
            "Set fio_size smaller, or fio_directory to a filesystem with more room.")


def _human(value):
    for factor, unit in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if abs(value) >= factor:
            return f"{value / factor:.1f} {unit} ({value} bytes)"
    return f"{value} bytes"


def fio_raw_entries(results, tool="fio", extension="json", params=None):
    """The experiment record's `raw` list: one entry per job whose process finished (exit status 0).

    results: the registered loop results (each with `item` = a planned job); params: flat scalars
    every entry shares (engine, direct, target kind ...).
    """
    shared = {key: value for key, value in (params or {}).items() if _scalar(value)}
    entries = []
    for result in results:
        job = result.get("item") or {}
        if result.get("rc") != 0 or result.get("failed") or result.get("skipped"):
            continue
        job_params = {key: value for key, value in job.items() if key != "name" and _scalar(value)}
        entries.append({"path": f"raw/{tool}/{job['name']}.{extension}", "tool": tool,
                        "params": {"job": job["name"], **job_params, **shared}})
    return entries


def _scalar(value):
    return value is None or isinstance(value, (str, int, float, bool))


def fio_diskspd_argv(job, binary, target, size_bytes, runtime_s, ramp_s, direct=True):
    """diskspd's command line for one planned job: latency capture (-L), XML results (-Rxml),
    one thread (-t1) with the job's outstanding I/Os (-o), caching off (-Sh) when direct."""
    write_percent = {"randread": 0, "seqread": 0, "randwrite": 100, "seqwrite": 100}.get(job["pattern"])
    if write_percent is None:
        write_percent = 100 - int(job["rwmixread"])
    argv = [str(binary), f"-c{int(size_bytes)}", f"-b{int(job['block_size_bytes'])}", f"-d{int(runtime_s)}",
            f"-W{int(ramp_s)}", f"-o{int(job['iodepth'])}", "-t1", f"-w{write_percent}", "-L", "-Rxml"]
    if job["access"] == "random":
        argv.append(f"-r{int(job['block_size_bytes'])}")
    if direct:
        argv.append("-Sh")
    argv.append(str(target))
    return argv


def fio_lines_tail(text, lines=5):
    """The last lines of a text, joined with ' | ' (stderr in messages)."""
    return " | ".join([line.strip() for line in str(text or "").splitlines() if line.strip()][-int(lines):])


def fio_failure(result, lines=5):
    """One readable paragraph from a failed task result (a loop of jobs or a single check): which job,
    its exit status and the tail of its stderr, or the check's message."""
    out = []
    for item in result.get("results") or [result]:
        if not item.get("failed"):
            continue
        job = item.get("item")
        name = job.get("name", "") if isinstance(job, dict) else str(job or "")
        status = f"exit {item['rc']}: " if item.get("rc") is not None else ""
        text = fio_lines_tail(item.get("stderr") or item.get("msg") or "", lines)
        out.append(f"{name + ': ' if name else ''}{status}{text}")
    return "\n".join(out) or str(result.get("msg") or "failed")


class FilterModule:
    def filters(self):
        return {
            "fio_plan": fio_plan,
            "fio_filename": fio_filename,
            "fio_probe_ok": fio_probe_ok,
            "fio_direct_choice": fio_direct_choice,
            "fio_engine_choice": fio_engine_choice,
            "fio_free_space_error": fio_free_space_error,
            "fio_raw_entries": fio_raw_entries,
            "fio_diskspd_argv": fio_diskspd_argv,
            "fio_lines_tail": fio_lines_tail,
            "fio_failure": fio_failure,
        }
