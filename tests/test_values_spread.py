"""Keywords a call receives through `**mapping` (`Values.given`, `gives`, `keywords`): Python's binding, checked against
execution where a stand-in records the call (the value each keyword received, and whether it received it at all) and
directly where the question is where the file spells a key."""

from __future__ import annotations

import libcst as cst
import pytest

from bertlint.facts import UNKNOWN, Facts, padding_of
from test_values_differential import PRELUDE, run

OPTIMIZER = "torch.optim.AdamW(model.parameters(), {})\n"
TOKENIZE = 'tok(["a b", "c"], {})\n'

# every answer the value layer gives at the recorded call is the one the call received, and every one is given
KNOWN = {
    "display": ('kw = {"lr": 2e-05, "weight_decay": 0.01}\n', OPTIMIZER.format("**kw")),
    "inline-display": ("", OPTIMIZER.format('**{"lr": 2e-05}')),
    "dict-call": ("kw = dict(lr=2e-05)\n", OPTIMIZER.format("**kw")),
    "item-stores": ('kw = {}\nkw["lr"] = 2e-05\n', OPTIMIZER.format("**kw")),
    "update": ("kw = {}\nkw.update(lr=2e-05)\n", OPTIMIZER.format("**kw")),
    "merged": ('a = {"lr": 1e-3}\nb = {"lr": 2e-05}\nkw = {**a, **b}\n', OPTIMIZER.format("**kw")),  # the later key wins
    "two-stars": ('a = {"weight_decay": 0.0}\nb = {"lr": 2e-05}\n', OPTIMIZER.format("**a, **b")),
    "returned": ('def options():\n    return {"lr": 2e-05}\n', OPTIMIZER.format("**options()")),
    "nested": ('cfg = {"optim": {"lr": 2e-05}, "seed": 0}\n', OPTIMIZER.format('**cfg["optim"]')),
    "explicit-beside": ('kw = {"weight_decay": 0.0}\n', OPTIMIZER.format("lr=2e-05, **kw")),
    "tokenizer-options": ('opts = {"padding": True, "truncation": True, "max_length": 8}\n', TOKENIZE.format("**opts")),
    "tokenizer-options-absent": ('opts = {"padding": "longest"}\n', TOKENIZE.format("**opts")),  # truncation certainly absent
}


@pytest.mark.parametrize("shape", KNOWN)
def test_a_keyword_passed_through_a_known_mapping_is_what_the_call_received(shape: str):
    before, call = KNOWN[shape]
    outcome = run(PRELUDE + before + call, {})
    assert not outcome.details, "\n".join(outcome.details)
    line = PRELUDE.count("\n") + before.count("\n") + 1
    asked = {key: found for key, found in outcome.results.items() if key[0] == line}
    assert asked and all(found == "known" for found in asked.values()), asked


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(source), source)


def _call(facts: Facts, short: str):
    return next(c for c in facts.calls if c.short == short)


@pytest.mark.parametrize(("source", "lr", "given"), [
    ('kw = {"lr": 0.1}\nopt = AdamW(p, lr=0.2, **kw)\n', UNKNOWN, UNKNOWN),  # an explicit keyword and a key: TypeError
    ('a = {"lr": 0.1}\nb = {"lr": 0.2}\nopt = AdamW(p, **a, **b)\n', UNKNOWN, UNKNOWN),  # two `**` giving one name: TypeError
    ("kw = load()\nopt = AdamW(p, **kw)\n", UNKNOWN, UNKNOWN),  # keys not known: maybe passed, never absent
    ('kw = {"weight_decay": 0.0}\nopt = AdamW(p, **kw)\n', "absent", False),  # keys known: certainly absent
    ('kw = {"weight_decay": 0.0}\nopt = AdamW(p, **kw, **load())\n', UNKNOWN, UNKNOWN),  # one more `**` of unknown keys
    ("kw = load()\nopt = AdamW(p, lr=0.2, **kw)\n", 0.2, True),  # the explicit one, or a TypeError: never another
    ("opt = AdamW(*load(), lr=0.2)\n", 0.2, True),  # a `*sequence` passes no keyword
    ("opt = AdamW(p, *load())\n", UNKNOWN, False),  # ... but may pass `lr` by position (`gives` asks of a keyword)
])
def test_python_s_binding_of_a_keyword(source: str, lr, given):
    facts = _facts("from torch.optim import AdamW\n" + source)
    call = _call(facts, "AdamW")
    value = facts.arg_value(call, 1, "lr", default="absent")
    assert value is UNKNOWN if lr is UNKNOWN else value == lr
    assert facts.gives(call, "lr") is given


def test_presence_questions_take_an_unresolved_spread_as_maybe_given():
    """`passes` (a value other than None) and `padding_of`'s defaults: a `**` of unknown keys may hold the keyword."""
    facts = _facts('from transformers import AutoTokenizer\nimport json\ntok = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
                   'opts = json.load(open("c.json"))\nenc = tok(["a b"], **opts)\nknown = tok(["a b"], **{"padding": True})\n')
    unresolved, resolved = [c for c in facts.tokenizer_calls]
    assert facts.passes(unresolved, "attention_mask") and facts.gives(unresolved, "truncation") is UNKNOWN
    pad = padding_of(facts, unresolved)
    assert pad.padding is UNKNOWN and pad.truncation is UNKNOWN and pad.max_length is UNKNOWN
    pad = padding_of(facts, resolved)
    assert pad.padding is True and pad.truncation is None and pad.max_length is None
    assert not facts.passes(resolved, "attention_mask") and facts.gives(resolved, "padding") is True


def test_where_a_spread_keyword_is_spelt():
    facts = _facts(
        "from transformers import TrainingArguments as T\n"
        'a = {"lr": 1, \'seed\': 2}\nT(**a)\n'  # a display's key, reaching this call alone
        "b = dict(lr=1)\nT(**b)\nprint(b)\n"  # dict(...)'s keyword, read elsewhere too
        'c = {}\nc["lr"] = 1\nT(**c)\n'  # item stores: the `**` argument
        'T(**{"lr": 1, "lr": 2})\n'  # a key written twice: the `**` argument
        "T(lr=3, **{})\n"
    )
    calls = [c for c in facts.calls if c.qualname == "transformers.TrainingArguments"]
    found = [facts.keywords(c) for c in calls]
    assert [facts.module.code_for_node(g["seed"].at) for g in found[:1]] == ["'seed'"] and found[0]["seed"].spelt("seed2") == "'seed2'"
    assert [(type(g["lr"].at).__name__, type(g["lr"].spelling).__name__, g["lr"].alone, g["lr"].explicit) for g in found] == [
        ("SimpleString", "SimpleString", True, False),
        ("Arg", "Name", False, False),
        ("Arg", "NoneType", False, False),
        ("Arg", "NoneType", False, False),
        ("Arg", "Name", True, True),
    ]
    assert facts.keyword_at(calls[0], "absent") is calls[0].node
