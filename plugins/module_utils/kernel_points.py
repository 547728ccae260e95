"""How the kernels role runs an experiment's points and judges each one: shared by the module that runs them
on the host (plugins/modules/fleetscope_points.py) and the filters on the controller (plugins/filter/experiments.py,
which loads this file by path)."""

from __future__ import annotations

import math
import re

# fleetscope-kernels' last stderr line under FLEETSCOPE_KERNELS_EXIT_NOTE=1 (kernels/include/cli.h, cli_exit).
_EXIT_NOTE = re.compile(r"^fleetscope-kernels: exit (\d+)$", re.M)
# A process whose only point stopped at its time cap while drifting asks for a second attempt.
REQUEUE = re.compile(r"(?m)^[a-z_0-9]+: re-queue: ")
# What an adaptive process (--target-ci) left of its time bank, written just before its exit note of 0
# (kernels/src/sampler.c, sampler_bank_open): the next process of the experiment gets it with --bank-s.
_BANK_LEFT = re.compile(r"(?m)^fleetscope-kernels: bank left ([0-9]+(?:\.[0-9]+)?) s$")
# The kernels' bound on --bank-s (kernels/src/kopts.c).
BANK_MAX_S = 86400.0


def requeue_point(point):
    """A point's second attempt (its kernel asked for one: it stopped at its time cap while drifting):
    the same argv with `--attempt 2`, and its perf CSV, where it has one, beside the first attempt's
    (`<NNN>.attempt2.csv`, raw params `attempt: 2`), so both attempts' counts are kept."""
    again = dict(point, label=f"{point['label']} (second attempt)", argv=[*point["argv"], "--attempt", "2"])
    if point.get("raw"):
        first = point["raw"]["path"]
        path = first.removesuffix(".csv") + ".attempt2.csv"
        again["argv"] = [path if arg == first else arg for arg in again["argv"]]
        again["raw"] = dict(point["raw"], path=path, params=dict(point["raw"]["params"], attempt=2))
    return again


def kernel_exit(result):
    """The exit status a fleetscope-kernels process reported itself (its exit note, the last one on
    its stderr), or None when it wrote none: it did not end by itself (a signal, the OOM killer).
    Its parent's rc is not enough: perf stat (6.1) reports a workload that ends before perf waits
    for it (a crash at start, a quick usage error) as exit 0, with no signal line."""
    notes = _EXIT_NOTE.findall((result or {}).get("stderr") or "")
    return int(notes[-1]) if notes else None


def kernel_status(result):
    """None when a fleetscope-kernels process ended by itself with status 0 (what ran it exited 0
    and the kernel's exit note says 0); else what happened, in words, for the failure record."""
    rc, note = result.get("rc", "?"), kernel_exit(result)
    if rc == 0 and note == 0:
        return None
    if rc == 0 and note is None:
        return "killed (no exit note from the kernel, though what ran it reported exit 0)"
    if rc == 0:
        return f"exit {note}"
    if isinstance(rc, int) and rc < 0:
        return f"killed by signal {-rc}"
    return f"exit {rc}"


def bank_left(result):
    """The seconds of its time bank a fleetscope-kernels process reported left at its exit 0 (the line before its
    exit note), or None where it reported none (no --target-ci, a failure, a kernel that does not say)."""
    if kernel_status(result) is not None:
        return None
    found = _BANK_LEFT.findall((result or {}).get("stderr") or "")
    return min(float(found[-1]), BANK_MAX_S) if found else None


def adaptive(argv):
    """Whether a process samples to a target (--target-ci): only such a process has a time bank and takes
    --bank-s (the kernels refuse it otherwise)."""
    return "--target-ci" in argv or any(str(arg).startswith("--target-ci=") for arg in argv)


def run_points(run, points, extra_args=(), requeue=True, bank_s=0.0):
    """Run each point's process (run(argv) -> {rc, stdout, stderr, ...}), one after another, then once more,
    with --attempt 2 (requeue_point), every point whose kernel asked for a re-queue, after all the others.

    The experiment's time bank passes from process to process: an adaptive process (--target-ci) starts with
    `--bank-s S`, S the seconds of sampling the earlier processes were priced for and left (bank_s, what the
    caller's earlier processes of this experiment left, to begin with), and its own report of what is left at
    its exit (bank_left) becomes the next one's S. Only priced time that was not spent moves on: a process that
    failed or did not report passes nothing on (what it spent is unknown), a process with a fixed count (no
    bank) passes S on untouched.

    Returns (results, requeued, bank_s): one record per process, as an Ansible loop over the command module
    registers them (the point as `item`, its rc, stdout, stderr, `failed` when kernel_status says so), and
    the seconds left for the experiment's next process. A failed point does not stop the others; a failed
    first pass runs no second attempts (the experiment has failed: its record keeps what was measured)."""
    bank = max(0.0, min(float(bank_s or 0.0), BANK_MAX_S))

    def one(point):
        nonlocal bank
        argv = [*point["argv"], *extra_args]
        takes_bank = adaptive(argv)
        if takes_bank and bank > 0.0:
            # rounded down: a process is never seeded with more than was left
            argv = [*point["argv"], "--bank-s", f"{math.floor(bank * 1e6) / 1e6:.6f}", *extra_args]
        record = dict(run(argv), item=point)
        status = kernel_status(record)
        record["failed"] = status is not None
        if takes_bank:
            left = bank_left(record)
            bank = left if left is not None else 0.0
        return record

    results = [one(point) for point in points]
    if not requeue or any(record["failed"] for record in results):
        return results, [], bank
    again = [requeue_point(record["item"]) for record in results if REQUEUE.search(record.get("stderr") or "")]
    return results, [one(point) for point in again], bank
