"""What a JSON text from a host may cost before Python's parser reads it: how deep its arrays and objects
nest (the parser recurses once per level) and how many object members it holds (each costs the parser and
the checks after it a few hundred bytes). One pass over the text, linear in its length, shared by a
bundle's manifest and results lines (bundle) and fio's JSON output (parsers/fio)."""

from __future__ import annotations

import json
import re
from itertools import accumulate

MAX_JSON_DEPTH = 64                 # arrays and objects nested in any JSON document
MAX_JSON_KEYS = 65536               # object members in one JSON text (a manifest, a results line, fio's output)

# A JSON string from its opening quote to its closing one, or to the end of its line when it has none (a
# JSON string never holds a raw newline, so a stray quote in text around a document, as fio prints, cannot
# hide the next lines' brackets). The quantifiers are possessive: an unterminated string costs its length
# once and the scan goes on after it, so the scan is linear whatever the text holds; the backtracking
# pattern this replaced failed and restarted at each escaped quote (quadratic: a 128 KiB manifest took 86 s).
_STRING = re.compile(r'"(?:[^"\\\n]++|\\[^\n])*+"?')
_NOT_STRUCTURE = re.compile(r"[^\[\]{}:]++")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _nesting(depth: int, step: int) -> int:
    # never below 0: a closing bracket without its opening one (in text around a document) cannot hide
    # the opening brackets after it
    return depth + step if depth + step > 0 else 0


def json_limits_problem(text: str) -> str | None:
    """What is wrong with a JSON text before it is parsed, or None: arrays and objects nested deeper than
    MAX_JSON_DEPTH, or more than MAX_JSON_KEYS object members. Brackets and colons inside strings do not
    count; text around the documents (fio's messages) counts as if it were structure, which only errs
    towards refusing."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH and text.count(":") <= MAX_JSON_KEYS:
        return None
    structure = _NOT_STRUCTURE.sub("", _STRING.sub("", text))
    keys = structure.count(":")
    if keys > MAX_JSON_KEYS:
        return f"{keys} object members, more than MAX_JSON_KEYS ({MAX_JSON_KEYS}) one document may hold"
    steps = map(_DEPTH_STEP.__getitem__, structure.replace(":", ""))
    if max(accumulate(steps, _nesting), default=0) > MAX_JSON_DEPTH:
        return f"arrays and objects nest deeper than MAX_JSON_DEPTH ({MAX_JSON_DEPTH}) levels"
    return None


def parse_json(text: str) -> object:
    """One JSON document whose limits were checked first (json_limits_problem); ValueError saying what is
    wrong."""
    problem = json_limits_problem(text)
    if problem:
        raise ValueError(problem)
    return json.loads(text)
