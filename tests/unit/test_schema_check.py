"""The schemas compiled into plain checks (fleetscope.ingest.schema_check) judge as jsonschema does, set up as
bundle.py sets it up: on every real point and manifest of the fixture runs, on each point moved to every other
experiment and kernel or given another experiment's params (which breaks their rules), and on thousands of
seeded mutations of them (a member removed, added, or given a value of another type or range); and each
keyword on small schemas with known answers."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from fleetscope.ingest import bundle
from fleetscope.ingest.schema_check import Unsupported, compile_schema

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RUNS = [FIXTURES / "default_run" / "results", FIXTURES / "workload_run" / "results"]
# values a member is swapped for: every JSON type, integers written as floats, the bounds the schemas use,
# texts a whole-text pattern refuses and the timestamps the date-time format judges
ODD_VALUES = [None, True, False, 0, 1, -1, 0.5, -0.5, 1.0, 4096.0, 2147483647, 2147483648, 1e300, "", "x", "ns",
              "latency_sweep", "abc\n", "A", "2026-11-23T18:45:18Z", "2026-11-23T18:45:18", "2026-11-23 18:45:18+00:00",
              "9999-12-31T23:59:59-14:00", [], [1], ["a", "a"], [1, 1.0], {}, {"a": 1}]


def real_points() -> list[dict]:
    points = []
    for path in sorted(path for run in RUNS for path in run.glob("*/*/results/*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        points += [json.loads(line) for line in lines[:6] if line.strip()]
    return [{**point, "samples": point["samples"][:3]} for point in points]


def real_manifests() -> list[dict]:
    return [json.loads(path.read_text(encoding="utf-8")) for run in RUNS for path in run.glob("*/*/manifest.json")]


def variants(points: list[dict]) -> list[dict]:
    experiments = sorted({point["experiment"] for point in points}) + ["no_such_experiment"]
    kernels = sorted({point["kernel"] for point in points})
    params = {point["experiment"]: point["params"] for point in points}
    out = []
    for point in points:
        out.append(point)
        out += [{**point, "experiment": experiment} for experiment in experiments]
        out += [{**point, "kernel": kernel} for kernel in kernels]
        out += [{**point, "params": copy.deepcopy(other)} for other in params.values()]
        out += [{key: value for key, value in point.items() if key != name} for name in ("experiment", "kernel")]
        out.append({**point, "kernel": 7})
    return out


def places(document: object, path: tuple = ()) -> list[tuple]:
    """The path of every member and item of `document`."""
    found = []
    if isinstance(document, dict):
        for key, value in document.items():
            found.append((*path, key))
            found += places(value, (*path, key))
    elif isinstance(document, list):
        for index, value in enumerate(document[:4]):
            found.append((*path, index))
            found += places(value, (*path, index))
    return found


def mutations(document: dict, count: int, seed: int) -> list[dict]:
    generator = random.Random(seed)
    where = places(document)
    out = []
    for _unused in range(count):
        mutated = copy.deepcopy(document)
        for _unused in range(generator.choice((1, 1, 1, 2))):
            path = generator.choice(where)
            parent = mutated
            try:
                for step in path[:-1]:
                    parent = parent[step]
                how = generator.random()
                if how < 0.15 and isinstance(parent, dict):
                    parent.pop(path[-1], None)
                elif how < 0.25 and isinstance(parent, dict):
                    parent["unexpected_member"] = generator.choice(ODD_VALUES)
                else:
                    parent[path[-1]] = copy.deepcopy(generator.choice(ODD_VALUES))
            except (KeyError, IndexError, TypeError):
                continue  # an earlier mutation moved that place
        out.append(mutated)
    return out


def judge(check: bundle._SchemaCheck, documents: list[dict]) -> list[bool]:
    verdicts = []
    for document in documents:
        compiled = check.compiled(document)
        assert compiled == check.validator.is_valid(document), json.dumps(document)[:2000]
        verdicts.append(compiled)
    return verdicts


def test_the_compiled_point_schema_judges_as_jsonschema():
    points = real_points()
    assert len({point["experiment"] for point in points}) >= 10
    assert bundle._POINT_SCHEMA.compiled is not None, "the point schema uses a keyword schema_check lacks"
    documents = variants(points) + [mutated for index, point in enumerate(points)
                                    for mutated in mutations(point, 12, seed=index)]
    verdicts = judge(bundle._POINT_SCHEMA, documents)
    assert verdicts.count(True) > len(points) and verdicts.count(False) > len(points)  # both verdicts reached


def test_the_compiled_manifest_schema_judges_as_jsonschema():
    manifests = real_manifests()
    assert manifests and bundle._MANIFEST_SCHEMA.compiled is not None
    documents = manifests + [mutated for index, manifest in enumerate(manifests)
                             for mutated in mutations(manifest, 600, seed=1000 + index)]
    verdicts = judge(bundle._MANIFEST_SCHEMA, documents)
    assert verdicts[:len(manifests)] == [True] * len(manifests)
    assert verdicts.count(True) > 50 and verdicts.count(False) > 50


def test_an_invalid_point_still_gets_jsonschemas_message_naming_the_field():
    point = real_points()[0]
    problem = bundle._POINT_SCHEMA.problem({**point, "summary": {**point["summary"], "count": 4096.0}})
    assert problem is not None and problem.startswith("at $.summary.count:")


@pytest.mark.parametrize(("schema", "valid", "invalid"), [
    ({"type": "integer"}, [1, -5, 2**70], [1.0, 4096.0, True, "1", None]),
    ({"type": "number"}, [1, 1.5], [True, "1", None]),
    ({"type": ["string", "null"]}, ["", None], [0, [], {}]),
    ({"const": 1}, [1, 1.0], [True, "1", 2]),
    ({"const": "a"}, ["a"], ["b", 1]),
    ({"enum": ["a", 1]}, ["a", 1, 1.0], [True, "1", None]),
    ({"minimum": 1, "exclusiveMaximum": 3}, [1, 2.5, "not a number", True], [0, 0.99, 3]),
    ({"pattern": "^[a-z]+$"}, ["abc", 5], ["abc\n", "ab1", ""]),
    ({"pattern": "b"}, ["b"], ["abc"]),  # whole-text match, as bundle.py's validator
    ({"minLength": 1, "maxLength": 2}, ["a", "ab", 7], ["", "abc"]),
    ({"minItems": 1, "maxItems": 2, "items": {"type": "integer"}}, [[1], [1, 2], "x"], [[], [1, 2, 3], [1.5]]),
    ({"uniqueItems": True}, [[1, True], ["a", "b"], [{"a": 1}, {"a": 2}]],
     [[1, 1.0], ["a", "a"], [{"a": 1}, {"a": 1}]]),
    ({"required": ["a"], "properties": {"a": {"type": "string"}}, "additionalProperties": False},
     [{"a": "x"}, 3], [{}, {"a": 1}, {"a": "x", "b": 1}]),
    ({"maxProperties": 1}, [{}, {"a": 1}], [{"a": 1, "b": 2}]),
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, [-1, 0.5], [1, -0.5]),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, [1, None], ["a"]),
    ({"not": {"type": "string"}}, [1], ["a"]),
    ({"if": {"properties": {"k": {"const": "a"}}}, "then": {"required": ["x"]}, "else": {"required": ["y"]}},
     # without k the `if` holds (properties holds for an object without the member): x is required
     [{"k": "a", "x": 1}, {"k": "b", "y": 1}, {"x": 1}], [{"k": "a", "y": 1}, {"k": "b", "x": 1}, {"y": 1}]),
    ({"format": "date-time"}, ["2026-11-23T18:45:18Z", 5],
     ["2026-11-23T18:45:18", "2026-11-23", "9999-12-31T23:59:59-14:00"]),
    ({"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"},
     [{"next": {"next": {}}}], [{"next": {"next": 1}}]),
])
def test_each_keyword_gives_jsonschemas_verdict(schema, valid, invalid):
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    validator = bundle._schema_validator("point.schema.json", schema)
    compiled = compile_schema(schema)
    for value in valid:
        assert compiled(value) and validator.is_valid(value), value
    for value in invalid:
        assert not compiled(value) and not validator.is_valid(value), value


@pytest.mark.parametrize("schema", [{"patternProperties": {"a": {}}}, {"$ref": "https://example.com/x.json"},
                                    {"properties": {"a": {"$id": "inner"}}}, {"format": "email"},
                                    {"prefixItems": [{"type": "string"}]}])
def test_what_the_compiler_does_not_take_leaves_jsonschema_to_decide(schema):
    with pytest.raises(Unsupported):
        compile_schema(schema)
    check = bundle._SchemaCheck(bundle._schema_validator("point.schema.json", schema))
    assert check.compiled is None


@pytest.mark.parametrize("name", sorted(path.name for path in bundle.SCHEMA_DIR.glob("*.schema.json")))
def test_each_shipped_schema_is_valid_against_its_meta_schema(name):
    """bundle.py does not check its schemas when it loads them (0.4 s of every ingest): this does."""
    import jsonschema

    schema = json.loads((bundle.SCHEMA_DIR / name).read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema).check_schema(schema)
