"""A stall is about the whole update (rate x epochs), and a loop over a certainly empty collection never steps."""

import libcst as cst
import pytest
from conftest import lint_text

from bertlint.facts import Facts, epochs_of, never_steps
from bertlint.rules.bl301 import run_epochs


def facts_of(source: str) -> Facts:
    return Facts(cst.parse_module(source), source)


def loop_over(facts: Facts, name: str) -> cst.For:
    return next(node for node, _, _ in facts.loops if isinstance(node, cst.For) and facts.text(node.iter) == name)


@pytest.mark.parametrize("source", [
    "train = []\n'''\nfor r in rows:\n    train.append(r)\n'''\nfor x in train:\n    pass\n",
    "for x in range(0):\n    pass\n",
    "EPOCHS = 0\nfor x in range(EPOCHS):\n    pass\n",
    "for x in ():\n    pass\n",
])
def test_certainly_empty_iterable_never_iterates(source):
    facts = facts_of(source)
    assert facts.never_iterates(next(node for node, _, _ in facts.loops))


@pytest.mark.parametrize("source", [
    "train = []\nfor r in rows:\n    train.append(r)\nfor x in train:\n    pass\n",  # appended by code that runs
    "train = []\ntrain.extend(rows)\nfor x in train:\n    pass\n",
    "train = []\ndef fill():\n    train.append(1)\nfill()\nfor x in train:\n    pass\n",  # appended in a function that is called
    "import pandas as pd\ntrain = list(pd.read_csv('t.csv').itertuples())\nfor x in train:\n    pass\n",  # built from data
    "import sys\nfor x in range(int(sys.argv[1])):\n    pass\n",
    "def run(batches):\n    for x in batches:\n        pass\n",  # a parameter: unknown
    "buf = []\nfor epoch in range(3):\n    for x in buf:\n        pass\n    buf.append(epoch)\n",  # filled on the first pass
])
def test_possibly_filled_iterable_is_not_empty(source):
    facts = facts_of(source)
    assert not any(facts.never_iterates(node) for node, _, _ in facts.loops)


LOOP = """
import torch
from transformers import BertForSequenceClassification
model = BertForSequenceClassification.from_pretrained("bert-base-uncased")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)
EPOCHS = {epochs}
batches = [[101, 2023, 102]] * {batches}
for epoch in range(EPOCHS):
    for ids in batches:
        model(input_ids=torch.tensor([ids]), labels=torch.tensor([1])).loss.backward()
        optimizer.step()
"""


def _optimizer(facts):
    return next(c for c in facts.calls if c.qualname == "torch.optim.AdamW")


def test_empty_loop_steps_nothing():
    facts = facts_of(LOOP.format(epochs=2, batches=0))
    assert never_steps(facts, _optimizer(facts))
    assert facts.training_loops == []


def test_filled_loop_steps():
    facts = facts_of(LOOP.format(epochs=2, batches=3))
    assert not never_steps(facts, _optimizer(facts))
    assert len(facts.training_loops) == 1


def test_hand_loop_epochs_are_the_outer_ranges():
    facts = facts_of(LOOP.format(epochs=100, batches=3))
    assert epochs_of(facts, _optimizer(facts)) == 100


def test_folds_that_build_the_optimizer_anew_are_no_epochs():
    source = LOOP.format(epochs=4, batches=3).replace("optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)\n", "")
    source = source.replace("for epoch in range(EPOCHS):\n", "for fold in range(50):\n  optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)\n  for epoch in range(EPOCHS):\n")
    facts = facts_of(source)
    assert epochs_of(facts, _optimizer(facts)) == 4


def test_single_loop_has_no_known_epochs():
    facts = facts_of(LOOP.format(epochs=100, batches=3).replace("    for ids in batches:\n", "    if True:\n        ids = batches[0]\n"))
    assert epochs_of(facts, _optimizer(facts)) is None


def test_hand_loop_accumulating_by_hand_has_no_known_epochs():
    source = LOOP.format(epochs=100, batches=3).replace("        optimizer.step()\n", "        if epoch % 4 == 0:\n            optimizer.step()\n")
    facts = facts_of(source)
    assert epochs_of(facts, _optimizer(facts)) is None


@pytest.mark.parametrize("kwargs, expected", [
    ("num_train_epochs=3000", 3000),
    ("", 3.0),  # TrainingArguments' default
    ("num_train_epochs=32, gradient_accumulation_steps=16", 2.0),  # 16 times fewer updates
    ("num_train_epochs=3000, max_steps=500", None),  # the step count wins and the dataset's size is unknown
    ("num_train_epochs=3000, **extra", None),  # the `**` may set max_steps
    ("**extra", None),
    ("num_train_epochs=3000, **{}", 3000),  # an empty mapping passes nothing
    ("**{'max_steps': 500}", None),  # a mapping's known keys are keywords
])
def test_trainer_run_epochs(kwargs, expected):
    source = f"import json\nfrom transformers import TrainingArguments\nextra = json.load(open('extra.json'))\nargs = TrainingArguments('out', learning_rate=1e-6, {kwargs})\n"
    facts = facts_of(source)
    assert run_epochs(facts, facts.training_args[0]) == expected


TRAINER = """
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments
model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
args = TrainingArguments("out", learning_rate=1e-6, {kwargs})
Trainer(model=model, args=args, train_dataset=load_dataset("imdb")["train"]).train()
"""


@pytest.mark.parametrize("kwargs, fires", [
    ("num_train_epochs=100", False),  # 1e-6 x 100 >= 2.2e-5 (the middle of 5e-6..1e-4) x 3
    ("num_train_epochs=15", True),  # only the range's low end x 3: still a stall
    ("num_train_epochs=100, gradient_accumulation_steps=16", True),  # 16 times fewer updates
    ("num_train_epochs=100, max_steps=200", True),  # the length in epochs is not known
])
def test_stall_is_rate_times_updates(kwargs, fires):
    findings = [f for f in lint_text(TRAINER.format(kwargs=kwargs)) if f.code == "BL301"]
    assert bool(findings) == fires
