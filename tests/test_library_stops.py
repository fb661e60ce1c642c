"""Stops of libraries outside transformers' circle (data/removed.json, facts/library_stops.py, facts/removals.py): Keras's
removed module paths, Lightning 2's refused epoch-end hooks; and the targets they are judged on (keras from the
tensorflow pin, a package name with a dash pinned like any other)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from bertlint import knowledge
from bertlint.config import Settings
from bertlint.facts import Facts, Runtime, run_stops
from bertlint.target import target_version

DATA = Path(knowledge.__file__).with_name("data")
NEWEST = (("keras", (3, 15, 1)), ("pytorch-lightning", (2, 6, 6)), ("lightning", (2, 6, 6)), ("pandas", (3, 1, 1)))


def stop(source: str, releases=NEWEST, path: Path = Path("train.py")) -> str | None:
    source = textwrap.dedent(source)
    module = cst.parse_module(source)
    found = next((s.statement for s in run_stops(Facts(module, source, path, Runtime(releases=releases)))
                  if isinstance(s.scope, cst.Module)), None)
    return None if found is None else module.code_for_node(found).strip()


@pytest.mark.parametrize("line", [
    "from keras.engine.topology import Layer", "from keras.engine import training", "import keras.engine",
    "from keras.layers.merge import add", "from keras.layers.core import Dense, Dropout", "from keras.utils import np_utils",
    "from keras.utils.np_utils import to_categorical", "from keras.wrappers.scikit_learn import KerasClassifier",
    "from keras.preprocessing.text import Tokenizer", "from keras.preprocessing import sequence, text",
    "from keras.layers.embeddings import Embedding", "from keras.initializers.initializers_v2 import Constant",
])
def test_a_keras_module_keras_3_lacks_stops_the_run(line):
    assert stop(line + "\nx = 1\n") == line


@pytest.mark.parametrize("line", [
    "from keras.preprocessing.sequence import pad_sequences",  # still in 3.x (keras/preprocessing/sequence/)
    "from keras.layers import Dense, LSTM", "from keras.utils import to_categorical", "import keras.backend as K",
    "from tensorflow.keras.preprocessing.text import Tokenizer",  # tf.keras keeps it (keras/_tf_keras/)
])
def test_what_keras_3_still_has(line):
    assert stop(line + "\n") is None


@pytest.mark.parametrize(("line", "release", "stops"), [
    ("from keras.preprocessing.text import Tokenizer", (2, 15, 0), False),
    ("from keras.layers.core import Dense", (2, 12, 0), False),
    ("from keras.layers.core import Dense", (2, 13, 1), True),
    ("from keras.layers.merge import add", (2, 8, 0), False),
    ("from keras.layers.merge import add", (2, 9, 0), True),
    ("from keras.engine.topology import Layer", (2, 4, 3), False),
    ("from keras.engine.topology import Layer", (2, 6, 0), True),
])
def test_each_keras_removal_from_its_release(line, release, stops):
    assert (stop(line + "\n", (("keras", release),)) is not None) is stops


def test_an_unknown_keras_or_a_folder_named_keras_does_not_stop(tmp_path):
    assert stop("from keras.engine.topology import Layer\n", ()) is None
    (tmp_path / "keras").mkdir()
    assert stop("from keras.engine.topology import Layer\n", path=tmp_path / "train.py") is None


@pytest.mark.parametrize(("pins", "expected"), [
    ("", (3, 15, 1)),  # nothing pinned: the newest keras
    ("tensorflow==2.12.0", (2, 12, 0)),  # tensorflow 2.12.0 requires keras<2.13,>=2.12.0
    ("tensorflow==2.15.1", (2, 15, 0)),
    ("tensorflow==2.6.0", (2, 15, 0)),  # keras~=2.6: the newest 2.x a resolver finds
    ("tensorflow==2.16.1", (3, 15, 1)),  # keras>=3.0.0
    ("tensorflow==2.20.0", (3, 15, 1)),  # newer than the table: what the newest requires
    ("tensorflow==2.12.0\nkeras==2.15.0", (2, 15, 0)),  # keras's own pin wins
])
def test_keras_target_from_its_pin_else_the_tensorflow_pin(tmp_path, pins, expected):
    (tmp_path / "requirements.txt").write_text(pins + "\n")
    assert tuple(target_version(Settings(project_root=tmp_path), tmp_path / "train.py").of("keras")[0]) == expected


def test_keras_under_a_tensorflow_with_its_own_keras_is_unknown(tmp_path):
    from bertlint.versions import Unknown
    (tmp_path / "requirements.txt").write_text("tensorflow==2.4.0\n")
    assert isinstance(target_version(Settings(project_root=tmp_path), tmp_path / "train.py").of("keras")[0], Unknown)


@pytest.mark.parametrize(("pin", "library", "expected"), [
    ("scikit-learn==1.1.3", "scikit-learn", (1, 1, 3)), ("scikit_learn<1.2", "scikit-learn", (1, 1, 0)),
    ("pytorch-lightning==1.9.5", "pytorch-lightning", (1, 9, 5)), ("pytorch_lightning==1.9.5", "pytorch-lightning", (1, 9, 5)),
])
def test_a_package_name_with_a_dash_is_pinned_like_any_other(tmp_path, pin, library, expected):
    (tmp_path / "requirements.txt").write_text(pin + "\n")
    assert tuple(target_version(Settings(project_root=tmp_path), tmp_path / "train.py").of(library)[0]) == expected


LIGHTNING = """\
import {module} as pl

class Classifier(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch
    def {hook}(self, outputs):
        pass
    def configure_optimizers(self):
        return None

model = Classifier()
trainer = pl.Trainer(max_epochs=1)
trainer.{method}(model)
x = 1
"""


@pytest.mark.parametrize(("module", "hook", "method"), [
    ("pytorch_lightning", "training_epoch_end", "fit"), ("pytorch_lightning", "validation_epoch_end", "fit"),
    ("pytorch_lightning", "validation_epoch_end", "validate"), ("pytorch_lightning", "test_epoch_end", "test"),
    ("lightning.pytorch", "training_epoch_end", "fit"), ("lightning", "validation_epoch_end", "fit"),
])
def test_lightning_2_refuses_to_run_a_module_with_an_epoch_end_hook(module, hook, method):
    assert stop(LIGHTNING.format(module=module, hook=hook, method=method)) == f"trainer.{method}(model)"


@pytest.mark.parametrize(("module", "hook", "method", "releases"), [
    ("pytorch_lightning", "test_epoch_end", "fit", NEWEST),  # fit runs no test hook
    ("pytorch_lightning", "training_epoch_end", "test", NEWEST),
    ("pytorch_lightning", "training_epoch_end", "predict", NEWEST),
    ("pytorch_lightning", "on_train_epoch_end", "fit", NEWEST),  # the 2.x hook
    ("pytorch_lightning", "training_epoch_end", "fit", (("pytorch-lightning", (1, 9, 5)),)),
    ("lightning.pytorch", "training_epoch_end", "fit", (("lightning", (1, 9, 5)),)),
    ("pytorch_lightning", "training_epoch_end", "fit", ()),  # the release is not known
])
def test_what_lightning_still_runs(module, hook, method, releases):
    assert stop(LIGHTNING.format(module=module, hook=hook, method=method), releases) is None


@pytest.mark.parametrize("change", [
    ("model = Classifier()\n", "import sys\nif sys.argv[1:]:\n    model = Classifier()\nelse:\n    model = object()\n"),  # on a branch
    ("trainer.fit(model)\n", "def run(model):\n    trainer.fit(model)\n"),  # a parameter (and never called)
    ("trainer = pl.Trainer(max_epochs=1)\n", "trainer = make_trainer()\n"),  # not certainly a Lightning trainer
    ("class Classifier(pl.LightningModule):", "class Classifier(Base):"),  # not certainly a LightningModule
])
def test_lightning_objects_not_certainly_known_do_not_stop(change):
    source = LIGHTNING.format(module="pytorch_lightning", hook="training_epoch_end", method="fit").replace(*change)
    assert stop("def make_trainer():\n    return 1\nclass Base:\n    pass\n" + source) is None


def test_a_folder_named_pytorch_lightning_is_what_the_file_imports(tmp_path):
    source = LIGHTNING.format(module="pytorch_lightning", hook="training_epoch_end", method="fit")
    assert stop(source, path=tmp_path / "train.py") is not None
    (tmp_path / "pytorch_lightning.py").write_text("")
    assert stop(source, path=tmp_path / "train.py") is None


def test_every_hook_row_has_its_release_and_source():
    for library, group in json.loads((DATA / "removed.json").read_text())["libraries"].items():
        for entry in group.get("hooks", ()):
            assert entry["removed"] and entry["methods"] and " " in entry["source"], library


@pytest.mark.parametrize("source", [
    "import pandas as pd\ndf = pd.read_csv('a.csv', error_bad_lines=False)\n",
    "from pandas import read_table\ndf = read_table('a.tsv', warn_bad_lines=True)\n",
    "import pandas as pd\ndf = pd.read_csv('a.csv')\nextra = pd.DataFrame({'a': [1]})\ndf = df.append(extra, ignore_index=True)\n",
    "import pandas as pd\ndf = pd.read_csv('a.csv').dropna()\nfor name, column in df.iteritems():\n    pass\n",
    "import pandas as pd\ndef load():\n    return pd.read_json('a.json')\nframe = load()\nframe.append({'a': 1}, ignore_index=True)\n",
])
def test_pandas_2_refuses_a_removed_keyword_or_method(source):
    assert stop(source) is not None and stop(source, (("pandas", (1, 5, 3)),)) is None


@pytest.mark.parametrize("source", [
    "import pandas as pd\ndf = pd.read_csv('a.csv', on_bad_lines='skip')\n",  # the keyword that replaced them
    "import pandas as pd\ndf = []\ndf.append(1)\n",  # a name is no type
    "import pandas as pd\nimport sys\nif sys.argv[1:]:\n    df = pd.read_csv('a.csv')\nelse:\n    df = []\ndf.append(1)\n",
    "import pandas as pd\ndef add(df, row):\n    return df.append(row)\n",  # a parameter: any caller's object
    "import pandas as pd\ndf = pd.read_csv('a.csv')\nfor name, column in df.items():\n    pass\n",
    "import pandas as pd\ndf = pd.read_csv('a.csv')\nrows = df.to_dict('records')\nrows.append({})\n",
])
def test_what_pandas_2_still_runs(source):
    assert stop(source) is None


def test_a_folder_named_pandas_is_what_the_file_imports(tmp_path):
    source = "import pandas as pd\ndf = pd.read_csv('a.csv', error_bad_lines=False)\n"
    assert stop(source, path=tmp_path / "train.py") is not None
    (tmp_path / "pandas").mkdir()
    assert stop(source, path=tmp_path / "train.py") is None
    assert stop(source, ()) is None  # no known release


@pytest.mark.parametrize("pins", ["tensorflow-gpu==2.10.0", "tensorflow-macos\n", "tensorflow_cpu>=2.9"])
def test_keras_under_a_variant_of_tensorflow_is_unknown(tmp_path, pins):
    from bertlint.versions import Unknown
    (tmp_path / "requirements.txt").write_text(pins + "\n")
    assert isinstance(target_version(Settings(project_root=tmp_path), tmp_path / "train.py").of("keras")[0], Unknown)


@pytest.mark.parametrize(("source", "releases", "expected"), [
    ("from tensorflow.keras.optimizers import Adam\nopt = Adam(lr=1e-5)\n", {"keras": (3, 15, 1)}, True),
    ("import keras\nopt = keras.optimizers.SGD(lr=0.1)\n", {"keras": (3, 0, 0)}, True),
    ("from tensorflow.keras.optimizers import Adam\nopt = Adam(lr=1e-5)\n", {"keras": (2, 15, 0)}, False),  # warns
    ("from tensorflow.keras.optimizers import Adam\nopt = Adam(learning_rate=1e-5)\n", {"keras": (3, 15, 1)}, False),
    ("import pytorch_lightning as pl\ntrainer = pl.Trainer(gpus=1, max_epochs=3)\n", {"pytorch-lightning": (2, 0, 0)}, True),
    ("from lightning.pytorch import Trainer\ntrainer = Trainer(tpu_cores=8)\n", {"lightning": (2, 6, 6)}, True),
    ("import pytorch_lightning as pl\ntrainer = pl.Trainer(gpus=1)\n", {"pytorch-lightning": (1, 9, 5)}, False),
    ("import pytorch_lightning as pl\ntrainer = pl.Trainer(accelerator='gpu', devices=1)\n", {"pytorch-lightning": (2, 0, 0)}, False),
])
def test_keras_3_optimizers_refuse_lr_and_lightning_2_trainers_refuse_their_removed_keywords(source, releases, expected):
    assert (stop(source, releases=releases) is not None) is expected


ARROW_TRAINER = """\
import torch
from datasets import Dataset
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


class Encoded(BASE):
    def __init__(self, rows):
        INIT
        self.rows = rows

    def __getitem__(self, idx):
        return self.rows[idx]

    def __len__(self):
        return len(self.rows)
CLASS_MORE

model = AutoModelForSequenceClassification.from_pretrained("xlm-roberta-large", num_labels=2)
args = TrainingArguments(output_dir="out"ARGS)
trainer = TRAINER(model=model, args=args, train_dataset=Encoded(torch.load("rows.pt")))
trainer.train()
trainer.save_model("out")
"""


def arrow_trainer(base="Dataset", init="pass", args="", trainer="Trainer", more=""):
    return ARROW_TRAINER.replace("BASE", base).replace("INIT", init).replace("ARGS", args).replace("TRAINER", trainer).replace("CLASS_MORE", more)


@pytest.mark.parametrize("release, expected", [
    ((5, 24, 0), "trainer.train()"), ((4, 6, 0), "trainer.train()"),  # get_train_dataloader -> _remove_unused_columns
    ((4, 5, 1), "trainer = Trainer(model=model, args=args, train_dataset=Encoded(torch.load(\"rows.pt\")))"),  # in __init__
    ((3, 2, 0), "trainer = Trainer(model=model, args=args, train_dataset=Encoded(torch.load(\"rows.pt\")))"),
    ((3, 1, 0), None),  # 3.1 checked `nlp.Dataset`
])
def test_a_trainer_given_a_datasets_subclass_that_never_built_its_base_stops(release, expected):
    assert stop(arrow_trainer(), (*NEWEST, ("transformers", release))) == expected


@pytest.mark.parametrize("variant", [
    {"base": "torch.utils.data.Dataset"},  # no columns asked of a torch dataset
    {"init": "super().__init__(rows.data)"}, {"init": "Dataset.__init__(self, rows.data)"}, {"init": "self.build(rows)", "more": "\n    def build(self, rows):\n        super().__init__(rows.data)\n"},
    {"args": ", remove_unused_columns=False"}, {"args": ", **torch.load('options.pt')"},  # no column removed / not known
    {"more": "\n    @property\n    def column_names(self):\n        return ['input_ids']\n"},
    {"trainer": "MyTrainer", "more": "\n\nclass MyTrainer(Trainer):\n    def get_train_dataloader(self):\n        return torch.load('loader.pt')\n"},
])
def test_no_stop_where_the_columns_may_be_read_or_are_not_asked(variant):
    source = arrow_trainer(**variant)
    assert stop(source, (*NEWEST, ("transformers", (5, 24, 0)))) is None


def test_the_file_s_trainer_subclass_that_only_computes_its_loss_stops_too():
    more = "\n\nclass MyTrainer(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False):\n        return model(**inputs).loss\n"
    assert stop(arrow_trainer(trainer="MyTrainer", more=more), (*NEWEST, ("transformers", (5, 24, 0)))) == "trainer.train()"


def test_an_unknown_transformers_release_does_not_stop():
    assert stop(arrow_trainer(), NEWEST) is None
