"""The point schema's rules chosen per (experiment, kernel) (bundle._PointSchemas) give the whole schema's
verdict: on every point of the real default run, and on each of them moved to every other experiment and
kernel, stripped of either, or given a params object of another experiment (which breaks their rules)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from fleetscope.ingest import bundle

DEFAULT_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "default_run" / "results"


def real_points() -> list[dict]:
    points = []
    for path in sorted(DEFAULT_RUN.glob("*/*/results/*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        points += [json.loads(line) for line in lines[:6] if line.strip()]
    return points


def variants(points: list[dict]) -> list[dict]:
    experiments = sorted({point["experiment"] for point in points}) + ["no_such_experiment"]
    kernels = sorted({point["kernel"] for point in points})
    params = {point["experiment"]: point["params"] for point in points}
    out = []
    for point in points:
        point = {**point, "samples": point["samples"][:1]}
        out.append(point)
        out += [{**point, "experiment": experiment} for experiment in experiments]
        out += [{**point, "kernel": kernel} for kernel in kernels]
        out += [{**point, "params": copy.deepcopy(other)} for other in params.values()]
        out += [{key: value for key, value in point.items() if key != name} for name in ("experiment", "kernel")]
        out.append({**point, "kernel": 7})
    return out


def test_the_rules_chosen_per_experiment_and_kernel_judge_as_the_whole_schema():
    schemas = bundle._PointSchemas(bundle._POINT_VALIDATOR)
    assert schemas.usable, "the point schema's rules are no longer const/enum tests of experiment or kernel"
    points = real_points()
    assert len({point["experiment"] for point in points}) >= 10
    verdicts = []
    for document in variants(points):
        chosen = schemas.validator(document).is_valid(document)
        assert chosen == bundle._POINT_VALIDATOR.is_valid(document), document
        verdicts.append(chosen)
    assert True in verdicts and False in verdicts  # both verdicts were reached
    assert verdicts.count(False) > len(points)


def test_a_rule_of_another_shape_leaves_the_whole_schema_to_decide():
    whole = bundle._POINT_VALIDATOR
    odd = bundle._schema_validator("point.schema.json", {
        **whole.schema, "allOf": [*whole.schema["allOf"], {"if": {"required": ["context"]}, "then": {}}]})
    schemas = bundle._PointSchemas(odd)
    assert not schemas.usable
    point = real_points()[0]
    assert schemas.validator(point) is odd
