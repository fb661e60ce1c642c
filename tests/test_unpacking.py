"""Unpacking into targets of a fixed shape: a value of known length that does not fit raises ValueError in Python, so
the targets hold nothing (UNKNOWN); one that fits binds each element (a starred target a list). Each case runs for
real: the value layer's answer is the value Python binds, or UNKNOWN where Python raises. Unpacking iterates the
value: a dict gives its keys."""

from __future__ import annotations

import libcst as cst
import pytest

from bertlint.facts.core import Facts
from bertlint.facts.nodes import UNKNOWN

CASES = [
    "a, b = (1, 2)\nprobe = b",
    "a, b = (1, 2, 3)\nprobe = b",
    "a, b, c = [1, 2]\nprobe = a",
    "a, *b = (1, 2, 3)\nprobe = b",
    "a, *b, c = (1,)\nprobe = a",
    "a, *b, c = (1, 2)\nprobe = b",
    "t = (1, (2, 3))\na, (b, c) = t\nprobe = c",
    "t = (1, (2, 3, 4))\na, (b, c) = t\nprobe = c",
    "def f():\n    return 1, 2, 3, 4\nx, y, z = f()\nprobe = z",
    "def f():\n    return 1, 2, 3\nx, y, z = f()\nprobe = z",
    "rows = [(1, 2, 3), (4, 5, 6)]\nfor a, b in rows:\n    pass\nprobe = a",
    "rows = [(1, 2), (4, 5)]\nfor a, b in rows:\n    pass\nprobe = b",
    "a, b = 'xy'\nprobe = b",
    "a, b = 'xyz'\nprobe = b",
    "a, b = {'k': 1, 'l': 2}\nprobe = a",  # a dict unpacks into its keys, not its items by index
    "a, b = {0: 'p', 1: 'q'}\nprobe = a",
    "a, b = {0: 'p', 1: 'q', 2: 'r'}\nprobe = a",
    "d = {'k': 1}\nd['l'] = 2\na, b = d\nprobe = b",
    "for a, b in [{'k': 1, 'l': 2}]:\n    pass\nprobe = b",
]


@pytest.mark.parametrize("source", CASES)
def test_an_unpacking_binds_what_python_binds(source: str):
    scope: dict = {}
    try:
        exec(source, scope)  # noqa: S102 - the cases above
        expected = scope["probe"]
    except ValueError:
        expected = UNKNOWN
    facts = Facts(cst.parse_module(source), source)
    found = facts.named_at("probe", facts.module_scope, None, True, None)
    if expected is UNKNOWN:
        assert found is UNKNOWN, (source, found)
    else:
        assert found == expected, (source, found, expected)
