"""A value dropped once its shape is read (facts/inspection.py: `only_shape_read`)."""

from __future__ import annotations

import textwrap

import libcst as cst

from bertlint.facts import Facts, only_shape_read


def reads_only_shape(line: str) -> bool:
    source = textwrap.dedent(f"""
        import torch
        model = torch.nn.Linear(2, 2)
        {line}
    """)
    facts = Facts(cst.parse_module(source), source)
    forward = [c for c in facts.calls if facts.text(c.node.func) == "model"][-1]
    return only_shape_read(facts, forward.node)


def test_a_shape_size_dim_or_ndim_read_through_attributes_and_items():
    assert reads_only_shape("width = model(x).last_hidden_state.shape[-1]")
    assert reads_only_shape("n = model(x)[0].size(1)")
    assert reads_only_shape("d = model(x).ndim")
    assert reads_only_shape("n = len(model(x).shape)")  # what is done with the shape does not matter


def test_a_kept_value_or_a_shape_of_something_else_is_not():
    assert not reads_only_shape("out = model(x)")
    assert not reads_only_shape("out = model(x).logits")
    assert not reads_only_shape("n = f(model(x)).shape")
