"""Methods that no instance runs (facts/liveness.py, facts/stops.py): a class whose `__init__` certainly stops yields
no instance, so its other methods never run through one, and building it is a stop itself; a method that only a library
calls (data/driven.json: a Dataset's `__getitem__`, a LightningModule's `training_step`, a Keras layer's `call`) runs
only when the library drives the instance, which it cannot where code that runs never reads the name holding it."""

from __future__ import annotations

import inspect
import json
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from bertlint import knowledge
from bertlint.facts import NEVER, RUNS, Facts, Runtime, liveness, run_stops, walk

NEWEST = (("keras", (3, 15, 1)), ("pytorch-lightning", (2, 6, 6)), ("lightning", (2, 6, 6)), ("transformers", (5, 24, 0)))
DATA = Path(knowledge.__file__).with_name("data") / "driven.json"


def facts_of(source: str, path: str = "train.py") -> Facts:
    source = textwrap.dedent(source)
    return Facts(cst.parse_module(source), source, Path(path), Runtime(releases=NEWEST))


def method_reach(source: str, name: str, path: str = "train.py", as_written: bool = True) -> int:
    facts = facts_of(source, path)
    method = next(f for f in walk(facts.module) if isinstance(f, cst.FunctionDef) and f.name.value == name)
    return liveness(facts).reach(method.body, as_written=as_written)


def module_stop(source: str) -> str | None:
    facts = facts_of(source)
    found = next((s.statement for s in run_stops(facts) if isinstance(s.scope, cst.Module)), None)
    return None if found is None else facts.module.code_for_node(found).strip()


KERAS_CLASS = """
from tensorflow.keras.optimizers import Adam
from tensorflow.keras.models import Sequential

class Scorer{bases}:
    def __init__(self):
        self.model = self.make()
{new}
    {decorator}
    def make({param}):
        model = Sequential()
        model.compile(optimizer=Adam({keyword}=1e-5), loss="mse")
        return model

    def score(self, texts):
        return self.model.predict(texts)
{tail}
"""


def keras_class(keyword="lr", bases="", new="", decorator="", param="self", tail="") -> str:
    return KERAS_CLASS.format(keyword=keyword, bases=bases, new=new, decorator=decorator, param=param, tail=tail)


@pytest.mark.parametrize(("source", "expected"), [
    (keras_class(tail="scorer = Scorer()\nprint(scorer)\n"), "scorer = Scorer()"),  # __init__ -> self.make() stops
    (keras_class(decorator="@staticmethod", param="", tail="scorer = Scorer()\n"), "scorer = Scorer()"),
    (keras_class(keyword="learning_rate", tail="scorer = Scorer()\n"), None),  # Keras 3 takes learning_rate=
    # a subclass of the file may replace `make`: `self.make()` may run another body
    (keras_class(tail="class Other(Scorer):\n    def make(self):\n        return None\nscorer = Scorer()\n"), None),
    (keras_class(new="    def __new__(cls):\n        return object.__new__(cls)\n", tail="scorer = Scorer()\n"), None),
])
def test_building_a_class_whose_init_stops_stops_the_run(source, expected):
    assert module_stop(source) == expected


@pytest.mark.parametrize(("source", "expected"), [
    (keras_class(), NEVER),  # a module of definitions: an importer's instance raises too
    (keras_class(keyword="learning_rate"), RUNS),
    (keras_class(tail="import pickle\nscorer = pickle.load(open('scorer.pkl', 'rb'))\n"), RUNS),  # no __init__ ran
])
def test_a_class_that_never_yields_an_instance_runs_none_of_its_methods(source, expected):
    assert method_reach(source, "score", as_written=False) == expected
    assert method_reach(source, "make", as_written=False) == RUNS  # `__init__` calls it


LIGHTNING = """
import pytorch_lightning as pl

class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
{init}
    def training_step(self, batch, batch_idx):
        return self.net(batch).loss

def main():
{body}

if __name__ == "__main__":
    main()
"""


def lightning(body: str, init: str = "") -> str:
    return LIGHTNING.format(body=textwrap.indent(textwrap.dedent(body), "    "), init=init)


@pytest.mark.parametrize(("source", "expected"), [
    (lightning("module = Classifier()\ntrainer = pl.Trainer(gpus=1)\ntrainer.fit(module)\n"), NEVER),
    (lightning("module = Classifier()\ntrainer = pl.Trainer()\ntrainer.fit(module)\npl.Trainer(gpus=1)\n"), RUNS),
    (lightning("module = Classifier()\nshow(module)\npl.Trainer(gpus=1)\n"), RUNS),  # what `show` does is not known
    (lightning("module = Classifier()\npl.Trainer(gpus=1)\n", init="        self.training_step(None, 0)\n"), RUNS),
    (lightning("pl.Trainer().fit(Classifier())\npl.Trainer(gpus=1)\n"), RUNS),  # handed over as it is built
    # a subclass (defined before the stop) may be driven
    (lightning("module = Classifier()\ntrainer = pl.Trainer(gpus=1)\n").replace("def main", "class Child(Classifier):\n    pass\n\ndef main"), RUNS),
    (lightning("module = Classifier()\nglobals()['go'](module)\npl.Trainer(gpus=1)\n"), RUNS),
])
def test_a_lightning_hook_runs_only_at_the_trainers_call(source, expected):
    assert method_reach(source, "training_step") == expected


DATASET = """
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig

class Rows(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, index):
        return index

if __name__ == "__main__":
{body}
"""


@pytest.mark.parametrize(("body", "expected"), [
    ("loader = DataLoader(Rows(), batch_size=2)\nBertConfig('bert-base-uncased')\nfor batch in loader:\n    print(batch)\n", NEVER),
    ("loader = DataLoader(dataset=Rows(), batch_size=2)\nBertConfig('bert-base-uncased')\nprint(list(loader))\n", NEVER),
    ("loader = DataLoader(Rows(), batch_size=2)\nprint(list(loader))\nBertConfig('bert-base-uncased')\n", RUNS),
    ("loader = DataLoader(Rows(), shuffle=True)\nBertConfig('bert-base-uncased')\n", RUNS),  # RandomSampler reads len()
    ("rows = Rows()\nfirst = rows[0]\nBertConfig('bert-base-uncased')\n", RUNS),
    ("loader = DataLoader(Rows(), batch_size=2)\nprint(list(loader))\n", RUNS),  # no stop
])
def test_a_datasets_items_are_read_only_when_it_is_driven(body, expected):
    assert method_reach(DATASET.format(body=textwrap.indent(body, "    ")), "__getitem__") == expected


def test_a_keras_layers_call_runs_at_its_first_call():
    source = """
    import tensorflow as tf
    from transformers import BertConfig

    class Head(tf.keras.layers.Layer):
        def call(self, inputs):
            return inputs * 2

    if __name__ == "__main__":
        head = Head()
        BertConfig("bert-base-uncased")
        print(head(tf.ones((1, 2))))
    """
    assert method_reach(source, "call") == NEVER
    assert method_reach(source.replace('        BertConfig("bert-base-uncased")\n', "") , "call") == RUNS


def test_a_module_of_definitions_keeps_its_driven_methods():
    """An importer may drive the instance: only the run as written drops them."""
    source = DATASET.replace('if __name__ == "__main__":\n{body}\n', "loader = DataLoader(Rows())\nBertConfig('x')\n")
    assert method_reach(source, "__getitem__", path="helpers.py", as_written=False) == NEVER  # the import stops
    source = DATASET.replace('if __name__ == "__main__":\n{body}\n', "")
    assert method_reach(source, "__getitem__", path="helpers.py", as_written=False) == RUNS


def test_the_table_is_well_formed():
    rows = json.loads(DATA.read_text())["classes"]
    bases = [base for row in rows for base in row["bases"]]
    assert len(bases) == len(set(bases)) and all(row["source"] and row["driven_by"] and row["methods"] for row in rows)
    for row in rows:
        for name, wrapper in row["wrappers"].items():
            assert knowledge.driven(row["bases"][0]).wrappers[name][:2] == tuple(wrapper["dataset"])


def test_the_dataloader_row_matches_torch():
    """The installed torch's DataLoader takes the dataset first, and the driving keywords are its own."""
    torch_data = pytest.importorskip("torch.utils.data")
    parameters = list(inspect.signature(torch_data.DataLoader.__init__).parameters)
    (position, keyword, driving), = knowledge.driven("torch.utils.data.Dataset").wrappers.values()
    assert parameters[position + 1] == keyword and driving <= set(parameters)
    assert {"__getitem__", "__len__"} <= knowledge.driven("torch.utils.data.Dataset").methods
