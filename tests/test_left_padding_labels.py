"""The side a tokenizer pads (`padded_on_the_left`) and a -100 over the labels' leading positions
(`over_leading_positions`): where the pads come first, a prompt mask from the start covers them (BL203)."""

from __future__ import annotations

import libcst as cst
import pytest

from bertlint.facts import Facts, ignore_index_markers, over_leading_positions, padded_on_the_left

LOAD = 'from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("gpt2"{load})\n{store}'


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(source), source)


@pytest.mark.parametrize(("load", "store", "call", "left"), [
    (', padding_side="left"', "", "", True),
    ("", 'tok.padding_side = "left"', "", True),
    ("", "", ', padding_side="left"', True),
    ("", "", "", False),  # PreTrainedTokenizerBase's default: "right"
    (', padding_side="right"', "", "", False),
    ("", 'tok.padding_side = "right"', "", False),
    ("", "tok.padding_side = side", "", False),  # not known: not left
])
def test_padded_on_the_left(load: str, store: str, call: str, left: bool) -> None:
    source = LOAD.format(load=load, store=store) + f'\nids = tok(["a", "b c"], padding=True{call})["input_ids"]\nlabels = ids\n'
    facts = _facts(source)
    labels = facts.module.body[-1].body[0].value
    assert padded_on_the_left(facts, facts.kind(labels, facts.scope_of(labels), 10**9)) is left


def test_a_switch_to_the_left_after_the_call_is_not_left_padding() -> None:
    """Training batches padded on the right, the tokenizer switched to the left for generation afterwards."""
    source = LOAD.format(load="", store="") + 'ids = tok(["a", "b c"], padding=True)["input_ids"]\nlabels = ids\ntok.padding_side = "left"\n'
    facts = _facts(source)
    labels = facts.module.body[-2].body[0].value
    assert padded_on_the_left(facts, facts.kind(labels, facts.scope_of(labels), 10**9)) is False


def test_a_join_is_left_padded_only_when_every_source_is() -> None:
    source = LOAD.format(load="", store="") + (
        'left = AutoTokenizer.from_pretrained("gpt2", padding_side="left")\n'
        'ids = left(["a", "b c"], padding=True)["input_ids"] if flag else tok(["a", "b c"], padding=True)["input_ids"]\nlabels = ids\n'
    )
    facts = _facts(source)
    labels = facts.module.body[-1].body[0].value
    assert padded_on_the_left(facts, facts.kind(labels, facts.scope_of(labels), 10**9)) is False


@pytest.mark.parametrize(("write", "leading"), [
    ("labels[i, :n] = -100", True),
    ("labels[:, :n] = -100", True),
    ("labels[:n] = [-100] * n", True),
    ("labels[i][0:n] = -100", True),
    ("labels[i, n:] = -100", False),  # the trailing positions
    ("labels[i, 1:n] = -100", False),  # not from the start
    ("labels[i, :n:2] = -100", False),  # a step: every other position
    ("labels[:, :] = -100", False),  # no bound
    ("labels[labels == pad] = -100", False),
    ("mask = labels[:n] == -100", False),  # a comparison, not a write
])
def test_over_leading_positions(write: str, leading: bool) -> None:
    facts = _facts(f"labels = ids.clone()\n{write}\n")
    assert [over_leading_positions(facts, m) for m in ignore_index_markers(facts)] == [leading]
