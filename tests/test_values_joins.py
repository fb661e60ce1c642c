"""Joins (facts/abstract.py `join`, `shared`, `each`): objects of one kind that several sources give (a helper's call
sites, a branch's arms) join into an object of that kind holding the objects it may be; a question asked of the join
(are these ids padded? on which side?) has the answer every one of them gives, else none. Each on a join that keeps
the fact and on a near miss where one source lacks it."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from bertlint.facts import UNKNOWN, Binding, Facts, is_model_call, padded_ids, shared
from bertlint.facts.abstract import MAX_JOINED, agree, join, same_object
from bertlint.facts.training import padding_side

HEAD = """\
import torch
from torch.utils.data import DataLoader
from transformers import AutoModel, AutoTokenizer, DataCollatorWithPadding

tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
"""


def forward_ids(body: str) -> tuple[Facts, object]:
    """The value of the `input_ids` the last model forward of `body` gets."""
    source = HEAD + textwrap.dedent(body)
    facts = Facts(cst.parse_module(source), source)
    call = [c for c in facts.calls if is_model_call(facts, c)][-1]
    arg = call.arg(0, "input_ids")
    return facts, facts.evaluate(arg.value, call.scope, call.order)


TWO_ENCODINGS = """\
a = tok(["a b", "c"], padding=True, return_tensors="pt")
b = tok(["d", "e f g"], {padding}, return_tensors="pt")
def run(ids):
    return model(ids)
run(a["input_ids"])
run(b["input_ids"])
"""

TWO_LOADERS = """\
train_loader = DataLoader([], batch_size=8, collate_fn=DataCollatorWithPadding(tok))
val_loader = DataLoader([], batch_size={val})
def step(batch):
    return model(input_ids=batch["input_ids"])
for batch in train_loader:
    step(batch)
for batch in val_loader:
    step(batch)
"""


@pytest.mark.parametrize("body", [
    TWO_ENCODINGS.format(padding='padding="max_length", max_length=16'),
    TWO_ENCODINGS.format(padding="padding=True"),
    TWO_LOADERS.replace("batch_size={val}", "batch_size=8, collate_fn=DataCollatorWithPadding(tok)"),
    # the arms of a branch the value layer cannot decide
    'a = tok(["a b", "c"], padding=True)["input_ids"]\nb = tok(["d", "e f"], padding="longest")["input_ids"]\n'
    "if len(__name__) % 2:\n    ids = a\nelse:\n    ids = b\nmodel(ids)\n",
])
def test_ids_padded_at_every_source_join_into_padded_ids(body):
    facts, ids = forward_ids(body)
    assert isinstance(ids, Binding) and ids.kind == "ids" and ids.call is None and len(ids.joined) == 2
    assert padded_ids(facts, ids, (5, 23)) is not None


@pytest.mark.parametrize("body", [
    TWO_ENCODINGS.format(padding="padding=False"),
    TWO_ENCODINGS.format(padding="truncation=True"),
    TWO_LOADERS.replace("{val}", "1"),
    'a = tok(["a b", "c"], padding=True)["input_ids"]\nb = tok("d")["input_ids"]\nif len(__name__) % 2:\n    ids = a\nelse:\n    ids = b\nmodel(ids)\n',
])
def test_ids_one_source_of_which_may_be_unpadded_are_not_known_padded(body):
    facts, ids = forward_ids(body)
    assert isinstance(ids, Binding) and ids.joined  # still ids (of two sources)
    assert padded_ids(facts, ids, (5, 23)) is None


@pytest.mark.parametrize("sides, expected", [(("left", "left"), "left"), (("left", "right"), None)])
def test_a_join_has_the_padding_side_every_source_has(sides, expected):
    body = (f'tok.padding_side = "{sides[0]}"\n' if sides[0] == sides[1] else "") + (
        f'a = tok(["a b", "c"], padding=True, padding_side="{sides[0]}")\nb = tok(["d", "e f"], padding=True, padding_side="{sides[1]}")\n'
        'def run(ids):\n    return model(ids)\nrun(a["input_ids"])\nrun(b["input_ids"])\n'
    )
    facts, ids = forward_ids(body)
    assert shared(ids, lambda source: padding_side(facts, source.call)) == expected


def test_an_item_of_a_join_is_the_join_of_the_items():
    """`batch["input_ids"]` of the batches of two loaders: the ids of each loader's batches."""
    facts, ids = forward_ids(TWO_LOADERS.replace("{val}", "1"))
    assert [(m.detail, m.parent.kind) for m in ids.joined] == [("input_ids", "dataloader_item")] * 2
    assert ids.joined[0].call is not ids.joined[1].call


def _ids(n: int) -> Binding:
    return Binding("ids", call=object(), detail="input_ids")  # a stand-in call: only its identity is read


def test_join_flattens_and_drops_repeats():
    a, b, c = _ids(0), _ids(1), _ids(2)
    ab = agree([a, b])
    assert agree([a, a]) is a
    assert agree([ab, b, c]).joined == (a, b, c)
    assert same_object(agree([b, a]), ab) and not same_object(ab, agree([a, c]))
    assert agree([a, Binding("encoding", call=object())]) is UNKNOWN  # objects of two kinds: unknown


def test_a_join_that_cannot_hold_its_objects_keeps_only_a_kind_a_rule_may_read_without_them():
    """A source itself of unknown provenance, or more than MAX_JOINED: a model stays a model; ids are unknown."""
    assert agree([_ids(0), Binding("ids")]) is UNKNOWN
    assert agree([_ids(i) for i in range(MAX_JOINED + 1)]) is UNKNOWN
    assert len(join([_ids(i) for i in range(MAX_JOINED)]).joined) == MAX_JOINED
    model = agree([Binding("model", call=object()), Binding("model")])
    assert model.kind == "model" and model.call is None and not model.joined


@pytest.mark.parametrize("other, expected", [("nn.CrossEntropyLoss(label_smoothing=0.1)", True), ("nn.BCEWithLogitsLoss()", False)])
def test_a_loss_of_two_sources_is_a_class_loss_when_both_are(other, expected):
    """BL205's question of a join: a class loss when every loss it may be is one."""
    from bertlint.rules.bl205 import is_class_loss

    source = f"import sys\nfrom torch import nn\nif len(sys.argv) > 1:\n    criterion = nn.CrossEntropyLoss()\nelse:\n    criterion = {other}\ncriterion(logits, y)\n"
    facts = Facts(cst.parse_module(source), source)
    call = [c for c in facts.calls if c.short == "criterion" or facts.text(c.node.func) == "criterion"][-1]
    assert facts.kind(call.node.func, call.scope, call.order).joined
    assert is_class_loss(facts, call) is expected
