"""`abstract.Choice`: a parameter whose call sites pass different constants is one of them, and an operator applied
to it is applied to each (`kind == "electra"` is False whichever it is). Proven against execution: each program runs,
its `probe(x=...)` records the value every time it runs, and the value layer's answer inside the function (where no
call frame says which site) must be what every run recorded, or unknown; never another value."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from conftest import probe

from bertlint.facts import UNKNOWN, Facts
from bertlint.facts.abstract import Choice, agree


def answer_and_runs(body: str):
    source = textwrap.dedent(body)
    facts = Facts(cst.parse_module(source), source)
    recorded: list = []
    exec(compile(source, "<program>", "exec"), {"probe": lambda x: recorded.append(x)})
    return facts.value(*probe(facts, "x")[:2], order=probe(facts, "x")[2]), recorded


@pytest.mark.parametrize(("body", "expected"), [
    # a test every call site's constant answers the same way
    ("def f(kind='base'):\n    probe(x=kind == 'electra')\nf()\nf(kind='roberta')\n", False),
    ("def f(kind):\n    probe(x='ELEC' in kind)\nf('ResRoBERTa')\nf('TokenBERT')\n", False),
    ("def f(kind):\n    probe(x=kind in ('a', 'b'))\nf('a')\nf('b')\n", True),
    ("def f(n):\n    probe(x=n > 0 and n < 10)\nf(1)\nf(9)\n", True),
    ("def f(n):\n    probe(x=128 if n > 64 else 512)\nf(100)\nf(65)\n", 128),
    ("def f(n):\n    probe(x=not n)\nf(1)\nf(2)\nf(3)\n", False),
    ("def f(n=None):\n    probe(x=n is None)\nf()\nf(None)\n", True),  # one constant: no Choice at all
    # the sites disagree on the result: unknown
    ("def f(kind):\n    probe(x=kind == 'a')\nf('a')\nf('b')\n", UNKNOWN),
    ("def f(n):\n    probe(x=n * 2)\nf(1)\nf(2)\n", UNKNOWN),  # a Choice of results is no constant
    ("def f(n):\n    probe(x=n)\nf(1)\nf(2)\n", UNKNOWN),
    # a site that passes no constant: unknown
    ("import os\ndef f(kind):\n    probe(x=kind == 'a')\nf('b')\nf(os.environ['K'])\n", UNKNOWN),
    # two Choices: every combination
    ("def f(a, b):\n    probe(x=a + b > 1)\nf(1, 2)\nf(2, 1)\n", True),
    ("def f(a, b):\n    probe(x=a + b > 2)\nf(1, 2)\nf(2, 1)\n", UNKNOWN),  # each parameter on its own: (1, 1) counts too
    ("def f(a, b):\n    probe(x=a < b)\nf(1, 2)\nf(2, 1)\n", UNKNOWN),  # (2, 2) and (1, 1) are no site, yet unknown is sound
    # a call is not applied to each constant (`len`, a method): unknown
    ("def f(a):\n    probe(x=len(a) > 0)\nf('s')\nf('t')\n", UNKNOWN),
])
def test_a_test_of_call_site_constants(body, expected):
    if "os.environ" in body:
        import os
        os.environ.setdefault("K", "b")
    answer, runs = answer_and_runs(body)
    assert answer == expected if expected is not UNKNOWN else answer is UNKNOWN
    if answer is not UNKNOWN:
        assert runs and all(r == answer and type(r) is type(answer) for r in runs)


def test_agree_makes_a_choice_only_of_every_path():
    assert agree(["a", "b"]) is UNKNOWN  # branches, loops: no Choice
    assert agree(["a", "b"], choice=True) == Choice(("a", "b"))
    assert agree(["a", "a"], choice=True) == "a"
    assert agree([1, 1.0, True], choice=True) == Choice((1, 1.0, True))  # equal, but not the same constant
    assert agree([str(i) for i in range(9)], choice=True) is UNKNOWN  # more than MAX_JOINED
    assert not isinstance(agree([[1], [2, 3]], choice=True), Choice)  # lists are no scalars
    assert agree([Choice(("a", "b")), "c"], choice=True) == Choice(("a", "b", "c"))
