"""A JSON Schema compiled once into nested Python checks, for the verdict on many documents (every point of
every bundle). The schema files of fleetscope/schemas/ stay the one definition of a valid bundle: this module
reads them, it holds no rule of its own.

`compile_schema(schema)` returns a function document -> bool that says what jsonschema (as bundle.py sets it
up: integers written as integers, patterns matched whole, date-time checked) would say of the document, at a
small part of jsonschema's cost: jsonschema builds a validator object per keyword and subschema for every
instance it checks (~0.4 ms a point), the compiled checks are plain closures (a few us). They answer only
valid or not; a document found invalid is checked by jsonschema again, for the message that names the field,
and jsonschema's verdict is the one that stands.

Only the keywords the schemas use are compiled (the table below), each with jsonschema's meaning for draft
2020-12; a schema with any other keyword, a `$ref` outside the document or a `$id` below its root raises
Unsupported, and the caller keeps jsonschema for every document. tests/unit/test_schema_check.py compares
the two verdicts on the real points and manifest and on thousands of mutations of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

Check = Callable[[object], bool]

# Keywords that only annotate: no effect on the verdict.
_ANNOTATIONS = frozenset({"$schema", "$comment", "title", "description", "examples", "default", "$defs",
                          "deprecated", "readOnly", "writeOnly"})
_TYPES: dict[str, Callable[[object], bool]] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    # jsonschema counts a bool as neither number nor integer; bundle.py counts 4096.0 as no integer
    "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
}


class Unsupported(ValueError):
    """The schema uses something this compiler does not: jsonschema must judge every document."""


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _canonical(value: object) -> object:
    """A hashable form of a JSON value under jsonschema's equality: a bool is no number, 1 equals 1.0,
    arrays and objects compare member by member."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if value is None:
        return ("null",)
    if isinstance(value, list):
        return ("array", tuple(_canonical(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((key, _canonical(item)) for key, item in value.items()))
    raise Unsupported(f"{type(value).__name__} is not a JSON value")


def _late(holder: list[Check]) -> Check:
    """The check `holder` will hold once it is built."""
    def check(value: object) -> bool:
        return holder[0](value)
    return check


def rfc3339_datetime(value: object) -> bool:
    """The date-time format as bundle.py checks it (jsonschema checks it only with rfc3339-validator)."""
    if not isinstance(value, str):
        return True  # the "type" keyword reports non-strings
    try:
        parsed = datetime.fromisoformat(value)
        if "T" not in value.upper() or parsed.tzinfo is None:
            return False
        parsed.astimezone(UTC)  # OverflowError for a time that is not a UTC time (9999-12-31T23:59:59-14:00)
    except (ValueError, OverflowError):
        return False
    return True


_FORMATS = {"date-time": rfc3339_datetime}


def compile_schema(schema: dict) -> Check:
    """The checks of `schema` (a draft 2020-12 document with local `$ref`s only); raises Unsupported."""
    compiled: dict[str, Check] = {}

    def resolve(reference: str) -> Check:
        if not reference.startswith("#"):
            raise Unsupported(f"$ref {reference!r} leaves the document")
        if reference not in compiled:
            target: object = schema
            for part in filter(None, reference[1:].split("/")):
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, dict) or part not in target:
                    raise Unsupported(f"$ref {reference!r} names nothing")
                target = target[part]
            holder: list[Check] = []
            compiled[reference] = _late(holder)  # a reference may lead back to itself: built after it is named
            holder.append(build(target, root=False))
        return compiled[reference]

    def build(node: object, root: bool) -> Check:
        if node is True:
            return lambda value: True
        if node is False:
            return lambda value: False
        if not isinstance(node, dict):
            raise Unsupported(f"{node!r} is not a schema")
        checks: list[Check] = []
        unknown = set(node) - _ANNOTATIONS - set(_KEYWORDS) - ({"$id"} if root else set()) - {"then", "else"}
        if unknown:
            raise Unsupported(f"keywords {sorted(unknown)} are not compiled")
        for keyword, argument in node.items():
            if keyword in _KEYWORDS:
                checks.append(_KEYWORDS[keyword](argument, node, lambda sub: build(sub, root=False), resolve))
        if not checks:
            return lambda value: True
        if len(checks) == 1:
            return checks[0]
        return lambda value: all(check(value) for check in checks)

    return build(schema, root=True)


# ---- one function per keyword: (its argument, the schema holding it, compile a subschema, resolve a $ref) ----

def _type(argument, _node, _sub, _resolve) -> Check:
    names = [argument] if isinstance(argument, str) else argument
    if not isinstance(names, list) or not names or any(name not in _TYPES for name in names):
        raise Unsupported(f"type {argument!r}")
    tests = [_TYPES[name] for name in names]
    if len(tests) == 1:
        return tests[0]
    return lambda value: any(test(value) for test in tests)


def _const(argument, _node, _sub, _resolve) -> Check:
    wanted = _canonical(argument)
    if isinstance(argument, str):
        return lambda value: isinstance(value, str) and value == argument
    return lambda value: _canonical(value) == wanted


def _enum(argument, _node, _sub, _resolve) -> Check:
    if not isinstance(argument, list):
        raise Unsupported("enum is not a list")
    if all(isinstance(item, str) for item in argument):
        strings = frozenset(argument)
        return lambda value: isinstance(value, str) and value in strings
    wanted = frozenset(_canonical(item) for item in argument)
    return lambda value: _canonical(value) in wanted


def _bound(compare: Callable[[object, object], bool]):
    def keyword(argument, _node, _sub, _resolve) -> Check:
        if not _is_number(argument):
            raise Unsupported(f"bound {argument!r}")
        return lambda value: not _is_number(value) or compare(value, argument)
    return keyword


def _length(of: type, compare: Callable[[int, int], bool]):
    def keyword(argument, _node, _sub, _resolve) -> Check:
        if not isinstance(argument, int) or isinstance(argument, bool):
            raise Unsupported(f"length {argument!r}")
        return lambda value: not isinstance(value, of) or compare(len(value), argument)
    return keyword


def _pattern(argument, _node, _sub, _resolve) -> Check:
    compiled = re.compile(argument)  # as bundle._full_match_pattern: the whole text must match
    return lambda value: not isinstance(value, str) or compiled.fullmatch(value) is not None


def _format(argument, _node, _sub, _resolve) -> Check:
    if argument not in _FORMATS:
        raise Unsupported(f"format {argument!r}")  # bundle.py's checker knows no other format
    return _FORMATS[argument]


def _required(argument, _node, _sub, _resolve) -> Check:
    names = tuple(argument)
    return lambda value: not isinstance(value, dict) or all(name in value for name in names)


def _properties(argument, _node, sub, _resolve) -> Check:
    checks = tuple((name, sub(schema)) for name, schema in argument.items())

    def check(value) -> bool:
        if not isinstance(value, dict):
            return True
        for name, test in checks:
            if name in value and not test(value[name]):
                return False
        return True
    return check


def _additional_properties(argument, node, sub, _resolve) -> Check:
    if "patternProperties" in node:
        raise Unsupported("additionalProperties beside patternProperties")
    known = frozenset(node.get("properties", {}))
    test = sub(argument)
    return lambda value: not isinstance(value, dict) or all(test(item) for name, item in value.items()
                                                            if name not in known)


def _max_properties(argument, _node, _sub, _resolve) -> Check:
    return lambda value: not isinstance(value, dict) or len(value) <= argument


def _items(argument, node, sub, _resolve) -> Check:
    if "prefixItems" in node or not isinstance(argument, dict | bool):
        raise Unsupported("items beside prefixItems, or items as a list")
    test = sub(argument)
    return lambda value: not isinstance(value, list) or all(test(item) for item in value)


def _unique_items(argument, _node, _sub, _resolve) -> Check:
    if argument is not True:
        return lambda value: True

    def check(value) -> bool:
        if not isinstance(value, list):
            return True
        seen = {_canonical(item) for item in value}
        return len(seen) == len(value)
    return check


def _all_of(argument, _node, sub, _resolve) -> Check:
    tests = tuple(sub(schema) for schema in argument)
    return lambda value: all(test(value) for test in tests)


def _any_of(argument, _node, sub, _resolve) -> Check:
    tests = tuple(sub(schema) for schema in argument)
    return lambda value: any(test(value) for test in tests)


def _one_of(argument, _node, sub, _resolve) -> Check:
    tests = tuple(sub(schema) for schema in argument)
    return lambda value: sum(1 for test in tests if test(value)) == 1


def _not(argument, _node, sub, _resolve) -> Check:
    test = sub(argument)
    return lambda value: not test(value)


def _if(argument, node, sub, _resolve) -> Check:
    condition = sub(argument)
    then = sub(node["then"]) if "then" in node else None
    otherwise = sub(node["else"]) if "else" in node else None

    def check(value) -> bool:
        branch = then if condition(value) else otherwise
        return branch is None or branch(value)
    return check


def _ref(argument, _node, _sub, resolve) -> Check:
    return resolve(argument)


_KEYWORDS = {
    "type": _type, "const": _const, "enum": _enum,
    "minimum": _bound(lambda value, bound: value >= bound), "maximum": _bound(lambda value, bound: value <= bound),
    "exclusiveMinimum": _bound(lambda value, bound: value > bound),
    "exclusiveMaximum": _bound(lambda value, bound: value < bound),
    "minLength": _length(str, lambda length, bound: length >= bound),
    "maxLength": _length(str, lambda length, bound: length <= bound),
    "minItems": _length(list, lambda length, bound: length >= bound),
    "maxItems": _length(list, lambda length, bound: length <= bound),
    "pattern": _pattern, "format": _format, "required": _required, "properties": _properties,
    "additionalProperties": _additional_properties, "maxProperties": _max_properties, "items": _items,
    "uniqueItems": _unique_items, "allOf": _all_of, "anyOf": _any_of, "oneOf": _one_of, "not": _not, "if": _if,
    "$ref": _ref,
}
