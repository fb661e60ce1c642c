"""A call's assigned value handed on as a keyword, by name (facts/uses.py: `passed_as`)."""

from __future__ import annotations

import textwrap

import libcst as cst

from bertlint.facts import Facts, passed_as


def handed(source: str) -> bool:
    source = textwrap.dedent(source)
    facts = Facts(cst.parse_module(source), source)
    encoder = next(c for c in facts.calls if facts.text(c.node.func) == "text_encoder")
    return passed_as(facts, encoder, "encoder_hidden_states")


def test_a_name_handed_on_as_the_keyword_or_named_for_it():
    assert handed("hidden = text_encoder(ids)[0]\nout = unet(x, t, encoder_hidden_states=hidden)\n")
    assert handed("encoder_hidden_states = text_encoder(ids)[0]\n")


def test_another_name_or_no_assignment_is_not():
    assert not handed("hidden = text_encoder(ids)[0]\nout = unet(x, t, encoder_hidden_states=other)\n")
    assert not handed("hidden = text_encoder(ids)[0]\nout = unet(x, t, hidden)\n")
    assert not handed("print(text_encoder(ids))\n")
