"""bundle._values_fine, the one-pass scan that spares most documents the value-by-value walk, never passes
what the walk (_first_value_problem) refuses, and passes what it passes unless a sum of finite floats
overflows: on seeded random documents holding each kind of problem at any depth."""

from __future__ import annotations

import random

from fleetscope.ingest import bundle

GOOD = [0, -1, 2**63 - 1, 2**64 - 1, -(2**63), 1.5, -0.0, 1e300, "", "text", "é", True, False, None]
BAD = [float("nan"), float("inf"), -float("inf"), 2**64, -(2**63) - 1, "\ud800", "x" * (bundle.MAX_TEXT_CHARS + 1)]


def document(generator: random.Random, depth: int, bad: bool) -> object:
    if depth == 0 or generator.random() < 0.3:
        return generator.choice(BAD if bad else GOOD)
    if generator.random() < 0.5:
        items = [document(generator, depth - 1, False) for _unused in range(generator.randint(0, 5))]
        if generator.random() < 0.3:  # a list of one type, as samples are
            items = [generator.choice([1.5, 2.25, 7, "a"])] * generator.randint(1, 6)
        if bad:
            items.insert(generator.randint(0, len(items)), document(generator, depth - 1, True))
        return items
    members = {f"k{index}": document(generator, depth - 1, False) for index in range(generator.randint(0, 5))}
    if bad:
        if generator.random() < 0.2:
            members[generator.choice(["\udc80", "y" * (bundle.MAX_TEXT_CHARS + 1)])] = 1
        else:
            members["bad"] = document(generator, depth - 1, True)
    return members


def test_the_scan_agrees_with_the_walk():
    generator = random.Random(33)
    verdicts = {True: 0, False: 0}
    for index in range(4000):
        value = document(generator, 4, bad=index % 2 == 1)
        fine = bundle._values_fine(value)
        walked = bundle._first_value_problem(value) is None
        assert fine == walked, repr(value)[:500]
        verdicts[fine] += 1
    assert min(verdicts.values()) > 1000


def test_finite_floats_whose_sum_overflows_are_walked_and_pass():
    value = {"samples": [1e308, 1e308]}
    assert not bundle._values_fine(value)
    assert bundle._value_problem(value) is None
    assert bundle._value_problem({"a": [1.0, float("nan")]}) == "at $.a[1]: NaN is not a finite number"


def test_json_size_counts_each_string_number_and_bracket():
    # {"a": "xy", "b": [1, 2.5, null, true]}: the object 2 + each key and its quotes, colon and comma 5 + 5,
    # "xy" 4, the list 2 + its 4 commas, 4 scalars 8 each
    value = {"a": "xy", "b": [1, 2.5, None, True]}
    assert bundle._json_size(value, 10**6) == 2 + 10 + 4 + 6 + 32
    assert bundle._json_size((value, value), 10**6) == 2 + 2 + 2 * 54  # a shared object once per place
    assert bundle._json_size(["x" * 100] * 10, 10**6) == 12 + 10 * 102
    assert bundle._json_size(["x" * 100] * 10, 500) == 12 + 5 * 102  # it stops once past the limit
