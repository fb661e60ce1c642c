"""The methods a training library calls on the file's classes (`facts/brain/steps.py`): a Lightning step's batch, the
module's `forward` called as `self(...)`, a transformers Trainer subclass's `compute_loss`/`training_step` model and
inputs, the items a Trainer's collate function receives; every source joined, an unseen one unknown."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from conftest import probe

from bertlint.facts import UNKNOWN, Binding, Facts

LIGHTNING = """\
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModel, AutoTokenizer, DataCollatorWithPadding, Trainer, TrainingArguments
from helpers import make_loader

tok = AutoTokenizer.from_pretrained("bert-base-uncased")
enc = tok(["a", "b c"], padding=True, return_tensors="pt")
loader = DataLoader(TensorDataset(enc["input_ids"], enc["attention_mask"]), batch_size=2)
other = DataLoader(TensorDataset(enc["input_ids"]), batch_size=1)


class Module(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = AutoModel.from_pretrained("bert-base-uncased")

    def forward(self, ids, mask=None):
        probe(f=ids)
        return self.encoder(ids, attention_mask=mask)

    def training_step(self, batch, batch_idx):
        probe(b=batch)
        return self(batch[0], batch[1])

    def validation_step(self, batch, batch_idx):
        probe(v=batch)
"""


def facts_of(source: str) -> Facts:
    source = textwrap.dedent(source)
    return Facts(cst.parse_module(source), source)


def value(facts: Facts, name: str):
    return facts.evaluate(*probe(facts, name))


def loader_batch(facts: Facts, name: str, loader: str) -> bool:
    found = value(facts, name)
    return isinstance(found, Binding) and found.kind == "dataloader_item" and facts.text(found.call.node).startswith(f"DataLoader(TensorDataset({loader}")


@pytest.mark.parametrize("fit", [
    "pl.Trainer().fit(Module(), loader)",
    "pl.Trainer().fit(Module(), train_dataloaders=loader)",
    "pl.Trainer().fit(model=Module(), train_dataloader=loader)",  # Lightning 1.x keyword
    "trainer = pl.Trainer()\nmodel = Module()\ntrainer.fit(model, loader, other)",
])
def test_a_training_step_batch_is_an_element_of_the_loader_fit_is_given(fit):
    facts = facts_of(LIGHTNING + fit + "\n")
    assert loader_batch(facts, "b", 'enc["input_ids"], enc["attention_mask"]')


@pytest.mark.parametrize("hook", [
    "class Data(pl.LightningDataModule):\n    def train_dataloader(self):\n        return loader\npl.Trainer().fit(Module(), datamodule=Data())",
    "class Data(pl.LightningDataModule):\n    def train_dataloader(self):\n        return loader\npl.Trainer().fit(Module(), Data())",  # a datamodule in the loaders' place
    "class Sub(Module):\n    def train_dataloader(self):\n        return loader\npl.Trainer().fit(Sub())",  # the module's own hook
])
def test_a_training_step_batch_comes_from_a_datamodule_or_the_module_s_hook(hook):
    facts = facts_of(LIGHTNING + hook + "\n")
    assert loader_batch(facts, "b", 'enc["input_ids"], enc["attention_mask"]')


@pytest.mark.parametrize("fit", [
    "pl.Trainer().fit(Module(), make_loader())",  # a loader the file does not show
    "pl.Trainer().fit(Module(), [loader, other])",  # a collection of loaders: combined batches
    "pl.Trainer().fit(Module())",  # no loader and no hook
    "m = Module()",  # fitted elsewhere
    "pl.Trainer().fit(Module(), loader)\nModule().training_step((1, 2), 0)",  # the file calls the step itself
    "class Sub(Module):\n    def on_after_batch_transfer(self, batch, i):\n        return batch[:1]\npl.Trainer().fit(Sub(), loader)",
])
def test_a_training_step_batch_is_unknown_where_a_source_is(fit):
    facts = facts_of(LIGHTNING + fit + "\n")
    assert value(facts, "b") is UNKNOWN


@pytest.mark.parametrize("fit", [
    "pl.Trainer().fit(Module(), loader)\npl.Trainer().fit(Module(), other)",  # two loaders
    "def go(trainer):\n    trainer.fit(Module(), other)\npl.Trainer().fit(Module(), loader)",  # one through a trainer the file does not show
])
def test_a_training_step_batch_of_two_fits_joins_their_loaders_batches(fit):
    """Two fits of the module: the batch is either loader's, a join of both (s30-join), not one of them."""
    facts = facts_of(LIGHTNING + fit + "\n")
    assert len(value(facts, "b").joined) == 2


def test_a_fit_of_another_class_s_model_is_no_source():
    facts = facts_of(LIGHTNING + "class Other(pl.LightningModule):\n    pass\npl.Trainer().fit(Module(), loader)\npl.Trainer().fit(Other(), other)\n")
    assert loader_batch(facts, "b", 'enc["input_ids"], enc["attention_mask"]')


def test_a_validation_step_batch_joins_fit_s_and_validate_s_loaders():
    same = facts_of(LIGHTNING + "pl.Trainer().fit(Module(), other, loader)\npl.Trainer().validate(Module(), dataloaders=loader)\n")
    assert loader_batch(same, "v", 'enc["input_ids"], enc["attention_mask"]')
    assert loader_batch(same, "b", 'enc["input_ids"])')
    two = facts_of(LIGHTNING + "pl.Trainer().fit(Module(), other, loader)\npl.Trainer().validate(Module(), other)\n")
    assert len(value(two, "v").joined) == 2  # either loader's batch: a join of both


def test_forward_receives_what_self_calls_pass():
    facts = facts_of(LIGHTNING + "pl.Trainer().fit(Module(), loader)\n")
    found = value(facts, "f")
    assert isinstance(found, Binding) and found.kind == "ids" and found.detail == "input_ids" and facts.text(found.call.node).startswith("tok(")


@pytest.mark.parametrize("extra", [
    "class Sub(Module):\n    def __init__(self):\n        super().__init__()\n        self.example_input_array = torch.zeros(1, 8)\n",  # the summary's forward
    "pl.Trainer().predict(Module(), loader)\n",  # the default predict_step: `self(batch)`
])
def test_forward_is_unknown_where_lightning_calls_it_itself(extra):
    facts = facts_of(LIGHTNING + "pl.Trainer().fit(Module(), loader)\n" + extra)
    assert value(facts, "f") is UNKNOWN


TRAINER = """\
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, Trainer, TrainingArguments

tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
rows = ["a", "b c"]


def collate(items):
    probe(items=items)
    return tok(items, padding=True, return_tensors="pt")


class Weighted(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        probe(model=model, inputs=inputs)
        return model(**inputs).loss
"""


def test_compute_loss_receives_the_trainer_s_model_and_its_collator_s_batch():
    facts = facts_of(TRAINER + "Weighted(model=model, args=TrainingArguments('o'), train_dataset=rows, data_collator=collate).train()\n")
    model, inputs = value(facts, "model"), value(facts, "inputs")
    assert model.kind == "model" and facts.text(model.call.node).startswith("AutoModelForSequenceClassification")
    assert inputs.kind == "encoding" and facts.text(inputs.call.node).startswith("tok(items")
    assert facts.is_batch(*probe(facts, "items")) is True  # the collate function gets a list of the dataset's items
    collated = facts_of(TRAINER + "Weighted(model, TrainingArguments('o'), DataCollatorWithPadding(tok), rows).train()\n")
    batch = value(collated, "inputs")
    assert batch.kind == "collated" and batch.parent.kind == "collator"


@pytest.mark.parametrize("extra", [
    "Weighted(model=model, data_collator=collate)\nWeighted(model=model, data_collator=DataCollatorWithPadding(tok))\n",  # two batches
    "class Sub(Weighted):\n    def __init__(self, **kw):\n        super().__init__(**kw)\nSub(model=model, data_collator=collate)\n",  # its own __init__
    "class Sub(Weighted):\n    def get_train_dataloader(self):\n        return None\nSub(model=model, data_collator=collate)\n",  # batches made otherwise
    "class Sub(Weighted):\n    def training_step(self, model, inputs, num_items_in_batch=None):\n        return self.compute_loss(model, {'x': 1})\n"
    "Sub(model=model, data_collator=collate)\n",  # a self-call passing another batch: joined
    "Weighted(model=model, data_collator=collate).compute_loss(model, {})\n",  # the file calls it itself
])
def test_compute_loss_inputs_are_unknown_where_a_source_is(extra):
    facts = facts_of(TRAINER + extra)
    assert value(facts, "inputs") is UNKNOWN


def test_the_default_collator_s_batch_is_collated_by_no_known_collator():
    facts = facts_of(TRAINER + "Weighted(model=model, args=TrainingArguments('o'), train_dataset=rows, processing_class=tok).train()\n")
    batch = value(facts, "inputs")
    assert batch.kind == "collated" and batch.parent.kind == "collator" and batch.parent.call.qualname == "<local>.Weighted"


def test_a_collate_function_handed_to_a_loader_and_a_trainer_is_no_one_batch():
    """A DataLoader over a list no longer than its batch size gives its whole list to the collate function; a Trainer
    handed the same function calls it with other items."""
    facts = facts_of(TRAINER + "loader = torch.utils.data.DataLoader(rows, batch_size=8, collate_fn=collate)\n"
                     "Weighted(model=model, data_collator=collate, train_dataset=['x', 'y', 'z']).train()\n")
    assert value(facts, "items") is UNKNOWN
    alone = facts_of(TRAINER + "loader = torch.utils.data.DataLoader(rows, batch_size=8, collate_fn=collate)\n")
    assert value(alone, "items") == ["a", "b c"]


def test_a_class_s_own_super_init_is_no_call_of_its_init():
    facts = facts_of("""\
        import torch
        from transformers import AutoModel
        class Net(torch.nn.Module):
            def __init__(self, encoder):
                super().__init__()
                self.encoder = encoder
            def forward(self, x):
                probe(e=self.encoder)
        Net(AutoModel.from_pretrained("bert-base-uncased"))(torch.tensor([[1]]))
    """)
    found = value(facts, "e")
    assert isinstance(found, Binding) and found.kind == "model"
