"""The catalogue of experiments: the one Python list of what fleetscope measures.

Each entry names an experiment as the kernels' registry (`fleetscope-kernels --list`) and the bundles name
it, with its family (the page's table of contents and the Ansible tag that selects every experiment of it),
its tags, the role that runs it, the kernels that feed it, the warehouse views of its points and the derived
tables computed from them. Every other Python list of experiments reads this one: the host page groups its
sections into families by it, plausibility finds the view an experiment's flags belong to, the fleet page
leaves out of peer scoring what is not a property of the CPU, and the host page links each derived table to
the section of the experiment it is read from. The Ansible side (roles/fleet/tasks/select.yml, the kernels
role's experiment table, switches and argument specs) and the READMEs' tables are held to it by
tests/unit/test_registry.py.

To add an experiment: its kernel (kernels/src/kernel_<name>.c, one line in registry.c), its role task, its
view(s) in warehouse/views/ with a report query, its section in fleetscope/report/sections/, and one entry
here (the README's developer section walks through it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    tag: str     # the Ansible tag that selects every experiment of the family (`--tags latency`)
    title: str   # its heading on the host page and in the fleet page's curves


@dataclass(frozen=True)
class Experiment:
    name: str                     # as the kernel registry and the bundle's results/<name>.jsonl name it
    family: str                   # a Family tag
    role: str                     # the role that runs it (its switch: <role>_<name>_enabled or <role>_enabled)
    kernels: tuple[str, ...]      # the kernels that feed it (none for an external tool)
    views: tuple[str, ...]        # the warehouse views of its points; the first is where its flags are shown
    derived: tuple[str, ...] = ()  # tables fleetscope.analyze.derive computes from its points
    peer_scored: bool = True      # outliers compares its figures with same-CPU peers (a property of the CPU)
    tag: str | None = None        # its own tag, where its name is taken by a family's tag

    @property
    def tags(self) -> tuple[str, ...]:
        """The Ansible tags that select it: its family's and its own."""
        return tuple(dict.fromkeys((self.family, self.tag or self.name)))


FAMILIES: tuple[Family, ...] = (
    Family("latency", "Latency"),
    Family("bandwidth", "Bandwidth"),
    Family("compute", "Compute"),
    Family("cpu_os_io", "CPU, OS and I/O"),
    Family("storage", "Storage"),
    Family("mlc", "Intel MLC"),
    Family("workloads", "Workloads"),
)

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment("latency_sweep", "latency", "kernels", ("chase",), ("latency_curve",), ("inferred_levels",)),
    Experiment("zero_queue", "latency", "kernels", ("zero_queue",), ("zero_queue_levels",)),
    Experiment("pattern_stride", "latency", "kernels", ("pattern_stride",), ("pattern_stride_latency",)),
    Experiment("tlb", "latency", "kernels", ("tlb",), ("tlb_reach",), ("inferred_tlb",)),
    Experiment("mlp", "latency", "kernels", ("mlp",), ("mlp_curve",), ("inferred_mlp",)),
    Experiment("write_cost", "latency", "kernels", ("write_cost",), ("write_cost_levels", "write_cost_flush")),
    Experiment("c2c", "latency", "kernels", ("c2c",), ("c2c_matrix", "c2c_llc_domains")),
    Experiment("numa_matrix", "latency", "kernels", ("chase", "bandwidth"),
               ("numa_latency_matrix", "numa_bandwidth_matrix")),
    Experiment("bandwidth", "bandwidth", "kernels", ("bandwidth",), ("bandwidth_points",),
               ("inferred_level_bandwidth",), tag="bandwidth_sweep"),
    Experiment("stride_bandwidth", "bandwidth", "kernels", ("bandwidth",), ("bandwidth_points",)),
    Experiment("rw_mix", "bandwidth", "kernels", ("bandwidth",), ("bandwidth_points",)),
    Experiment("thread_sweep", "bandwidth", "kernels", ("bandwidth",), ("bandwidth_points", "thread_saturation")),
    Experiment("loaded_latency", "bandwidth", "kernels", ("loaded_latency",), ("loaded_latency_curve",),
               ("inferred_loaded_latency",)),
    Experiment("saxpy", "bandwidth", "kernels", ("saxpy",), ("saxpy_stride", "saxpy_counters"), ("inferred_saxpy",)),
    Experiment("prefetch", "bandwidth", "kernels", ("bandwidth",), ("bandwidth_points",)),
    Experiment("core_clock", "compute", "kernels", ("core_clock",), ("core_clock_curve", "clock_ramp"),
               ("inferred_clock", "inferred_clock_ramp")),
    # The roofline's memory ceilings and measured points come from the bandwidth family (inferred_level_bandwidth,
    # thread_saturation, saxpy_stride); its compute ceilings, and its place on the page, from peak_flops.
    Experiment("peak_flops", "compute", "kernels", ("peak_flops",), ("peak_flops", "roofline")),
    Experiment("affinity", "cpu_os_io", "kernels", ("affinity",), ("affinity_threads", "affinity_summary")),
    Experiment("smt", "cpu_os_io", "kernels", ("smt",), ("smt_interference",)),
    Experiment("aio", "cpu_os_io", "kernels", ("aio",), ("aio_curve",)),
    # Storage is not a property of the CPU: it has no peers in `outliers`.
    Experiment("fio", "storage", "fio", (), ("storage_percentiles", "fio_jobs"), peer_scored=False),
    Experiment("mlc", "mlc", "mlc", (), ("mlc_loaded_latency", "mlc_idle_latency", "mlc_bandwidth", "mlc_matrix"),
               ("inferred_loaded_latency",), tag="bandwidth"),
    Experiment("workloads", "workloads", "workloads", ("workload", "alloc_walk"), ("workload_profile",),
               ("workload_cases", "workload_functions")),
)

_BY_NAME = {experiment.name: experiment for experiment in EXPERIMENTS}
NAMES: tuple[str, ...] = tuple(_BY_NAME)


def experiment(name: str) -> Experiment:
    """The catalogue's entry for `name` (KeyError names it when there is none)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"{name!r} is not in the experiment catalogue (fleetscope/catalog.py)") from None


def family(tag: str) -> Family:
    return next(family for family in FAMILIES if family.tag == tag)


def flag_view(name: str) -> str:
    """The view whose section shows an experiment's numbers and flags; `points` for a name not catalogued."""
    return _BY_NAME[name].views[0] if name in _BY_NAME else "points"


def fed_by(table: str) -> tuple[str, ...]:
    """The experiments a derived table is computed from, in catalogue order."""
    return tuple(experiment.name for experiment in EXPERIMENTS if table in experiment.derived)
