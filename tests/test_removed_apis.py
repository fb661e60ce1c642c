"""A statement that certainly uses an API the target release of its library removed, and that no rule reports
(data/removed.json), stops the run (facts/library_stops.py); the target of a library outside transformers and the libraries
around it comes from the same stage (a pin, else the newest release)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from bertlint import knowledge, versions
from bertlint.facts import Facts, Runtime, run_stops

DATA = Path(knowledge.__file__).with_name("data")
NEWEST = (("transformers", (5, 24, 0)), ("trl", (1, 16, 0)), ("scikit-learn", (1, 9, 1)), ("torchtext", (0, 18, 0)),
          ("pytorch-lightning", (2, 6, 6)))


def stop(source: str, releases=NEWEST, path: Path = Path("train.py"), **runtime) -> str | None:
    source = textwrap.dedent(source)
    module = cst.parse_module(source)
    found = next((s.statement for s in run_stops(Facts(module, source, path, Runtime(releases=releases, **runtime)))
                  if isinstance(s.scope, cst.Module)), None)
    return None if found is None else module.code_for_node(found).strip()


@pytest.mark.parametrize(("source", "expected"), [
    ("from sklearn.metrics import accuracy_score, plot_confusion_matrix\nx = 1\n", "from sklearn.metrics import accuracy_score, plot_confusion_matrix"),
    ("from torchtext.data import Field, BucketIterator\n", "from torchtext.data import Field, BucketIterator"),
    ("from torchtext.legacy.data import Field\n", "from torchtext.legacy.data import Field"),
    ("from torchtext import legacy\n", "from torchtext import legacy"),  # the removed module imported from its parent
    ("import torchtext.legacy as tl\n", "import torchtext.legacy as tl"),
    ("from pytorch_lightning.core.lightning import LightningModule\n", "from pytorch_lightning.core.lightning import LightningModule"),
    ("from trl import SFTTrainer, DataCollatorForCompletionOnlyLM\n", "from trl import SFTTrainer, DataCollatorForCompletionOnlyLM"),
    ("import torchtext\nTEXT = torchtext.data.Field()\n", "TEXT = torchtext.data.Field()"),  # AttributeError
    ("from torchtext import data\ndef prep():\n    return data.TabularDataset.splits(path='d')\nif __name__ == '__main__':\n    prep()\n",
     "prep()"),  # the call of a function whose body stops
    ("from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('gpt2', load_in_4bit=True)\n",
     "m = AutoModelForCausalLM.from_pretrained('gpt2', load_in_4bit=True)"),
    ("import transformers\nm = transformers.BertModel.from_pretrained('b', use_auth_token='hf_x')\n",
     "m = transformers.BertModel.from_pretrained('b', use_auth_token='hf_x')"),
    ("from transformers import AutoModel\ndef main():\n    pass\nif __name__ == '__main__':\n    m = AutoModel.from_pretrained('b', load_in_8bit=False)\n",
     "m = AutoModel.from_pretrained('b', load_in_8bit=False)"),  # even False reaches `__init__`
    ("from transformers import AutoModel\nkw = {}\nm = AutoModel.from_pretrained('b', load_in_8bit=True, **kw)\n",
     "m = AutoModel.from_pretrained('b', load_in_8bit=True, **kw)"),  # an empty mapping passes nothing
    ("from transformers import AutoModel\nkw = dict(load_in_8bit=True)\nm = AutoModel.from_pretrained('b', **kw)\n",
     "m = AutoModel.from_pretrained('b', **kw)"),  # a mapping's known keys are keywords
])
def test_a_removed_api_stops_the_run_on_the_newest_release(source, expected):
    assert stop(source) == expected


@pytest.mark.parametrize("source", [
    "from torchtext.data.utils import get_tokenizer\n",  # still there
    "from torchtext.datasets import IMDB\n",
    "from sklearn.metrics import ConfusionMatrixDisplay\n",
    "from pytorch_lightning.core.module import LightningModule\nimport pytorch_lightning.core\n",
    "from trl import SFTTrainer\n",
    "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('b', use_auth_token=True)\n",  # a tokenizer swallows it
    "from transformers import AutoModel\nm = AutoModel.from_pretrained('b', token='hf_x')\n",
    "from transformers import AutoModel\nm = AutoModel.from_pretrained('b', trust_remote_code=True, load_in_8bit=True)\n",  # the Hub's class
    "import json\nfrom transformers import AutoModel\nkw = json.load(open('c.json'))\nm = AutoModel.from_pretrained('b', load_in_8bit=True, **kw)\n",  # may hold trust_remote_code
    "from transformers import AutoModel\nkw = {'trust_remote_code': True}\nm = AutoModel.from_pretrained('b', load_in_8bit=True, **kw)\n",
    "from transformers import AutoModel\nkw = {'load_in_8bit': True}\nm = AutoModel.from_pretrained('b', **kw, trust_remote_code=True)\n",
    "from transformers import TFAutoModel\nm = TFAutoModel.from_pretrained('b', load_in_8bit=True)\n",  # not the PyTorch source read
    "import sys\nfrom transformers import AutoModel\nif sys.argv[1:]:\n    m = AutoModel.from_pretrained('b', load_in_8bit=True)\n",  # under a branch
    "try:\n    from torchtext.data import Field\nexcept ImportError:\n    from torchtext.legacy.data import Field\n",  # guarded
    "from .torchtext.data import Field\n",  # the package's own module
    "import torchtext\ntok = torchtext.data.utils.get_tokenizer('basic_english')\n",
    "import torchtext\ndef legacy():\n    return torchtext.data.Field()\n",  # never called
])
def test_what_still_runs(source):
    assert stop(source) is None


@pytest.mark.parametrize(("source", "releases"), [
    ("from sklearn.metrics import plot_roc_curve\n", (("scikit-learn", (1, 1, 3)),)),
    ("from torchtext.data import Field\n", (("torchtext", (0, 8, 1)),)),
    ("from torchtext.legacy.data import Field\n", (("torchtext", (0, 11, 2)),)),
    ("from pytorch_lightning.core.lightning import LightningModule\n", (("pytorch-lightning", (1, 8, 6)),)),
    ("from trl import DataCollatorForCompletionOnlyLM\n", (("trl", (0, 19, 1)),)),
    ("from transformers import AutoModel\nm = AutoModel.from_pretrained('b', load_in_8bit=True)\n", (("transformers", (4, 57, 0)),)),
    ("from sklearn.metrics import plot_roc_curve\n", ()),  # a release that cannot be known: silent
])
def test_an_older_target_or_an_unknown_one_does_not_stop(source, releases):
    assert stop(source, releases) is None


def test_a_module_of_the_library_s_name_beside_the_file_is_what_it_imports(tmp_path):
    (tmp_path / "torchtext").mkdir()
    assert stop("from torchtext.data import Field\n", path=tmp_path / "train.py") is None
    assert stop("from sklearn.metrics import plot_roc_curve\n", path=tmp_path / "train.py") is not None


def test_a_notebook_stops_on_a_removed_import_but_never_on_a_name_it_does_not_bind():
    """Run All stops at the first cell that raises; a name no cell binds may be the kernel's (a cell since deleted)."""
    assert stop("from torchtext.data import Field\n", notebook=True) == "from torchtext.data import Field"
    assert stop("print(undefined_name)\nfrom torchtext.data import Field\n", notebook=True) == "from torchtext.data import Field"


@pytest.mark.parametrize(("source", "releases", "expected"), [
    ("from transformers.modeling_bert import BertModel\n", {"transformers": (5, 24, 0)}, True),  # moved to models.bert in 4.0
    ("import transformers.modeling_bert\n", {"transformers": (4, 0, 0)}, True),
    ("from transformers import modeling_bert\n", {"transformers": (4, 57, 6)}, True),
    ("from transformers.modeling_bert import BertModel\n", {"transformers": (3, 5, 1)}, False),
    ("from transformers.models.bert.modeling_bert import BertModel\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers.modeling_utils import PreTrainedModel\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers.modeling_bert import BertModel\n", {}, False),  # the target unknown
])
def test_a_module_a_release_removed_stops_the_run(source, releases, expected):
    assert (stop(source, releases=releases) is not None) is expected


def test_the_target_comes_from_a_pin_else_the_newest_release(tmp_path, lint):
    """The pin in the folder's requirements.txt decides; no pin: the newest release known (removed.json's `latest`)."""
    source = ("from torchtext.data import Field\nfrom transformers import AutoModel, AutoTokenizer\n"
              "tok = AutoTokenizer.from_pretrained('bert-base-uncased')\nm = AutoModel.from_pretrained('bert-base-uncased')\n"
              "b = tok(['a b', 'c'], padding=True, return_tensors='pt')\nout = m(b['input_ids'])\n")
    script = tmp_path / "train.py"
    assert "BL201" not in [f.code for f in lint(source, script)]
    for pin, fires in (("torchtext==0.8.1", True), ("torchtext==0.10.0", False), ("torchtext<0.9", True), ("torchtext>=0.6", False)):
        (tmp_path / "requirements.txt").write_text(pin + "\n")
        assert ("BL201" in [f.code for f in lint(source, script)]) is fires, pin


def _entries():
    for library, group in json.loads((DATA / "removed.json").read_text())["libraries"].items():
        for kind in ("imports", "keywords"):
            for entry in group.get(kind, ()):
                yield library, entry


@pytest.mark.parametrize(("library", "entry"), list(_entries()))
def test_every_removal_has_its_release_and_its_source(library, entry):
    assert re.fullmatch(r"\d+(\.\d+)*", entry["removed"])
    assert re.search(r"\d+\.\d+\.\d+ \S+\.py(:\d+)?", entry["source"]), "a file (and line) of a released wheel"


@pytest.mark.parametrize(("library", "entry"), list(_entries()))
def test_no_removal_here_is_one_a_drift_rule_reports(library, entry):
    """A removal a drift rule reports (with its fix) is a reported stop, never a silent one: not listed twice."""
    data = versions.data(library) if library == "transformers" else json.loads((DATA / "libraries.json").read_text()).get(library, {})
    text = json.dumps({key: value for key, value in data.items() if key in ("symbols", "keywords", "arguments", "classes")})
    for name in entry.get("names") or entry.get("modules") or [entry["module"].rpartition(".")[2]]:
        assert f'"{name}"' not in text, name


def test_every_library_with_releases_of_its_own_is_resolved():
    for library in knowledge.removal_libraries():
        assert versions.latest(library) >= (0, 1, 0)


TA = "from transformers import TrainingArguments\n"


@pytest.mark.parametrize(("source", "releases"), [
    ("from transformers import BertConfig\nc = BertConfig('roberta-large', num_labels=2)\n", NEWEST),
    ("import transformers\nc = transformers.RobertaConfig(5)\n", (("transformers", (5, 4, 0)),)),
    ("from transformers.models.bert.configuration_bert import BertConfig\nc = BertConfig('b')\n", NEWEST),
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True)\n", NEWEST),  # "no" against "steps"
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True, evaluation_strategy='epoch')\n", (("transformers", (4, 9, 0)),)),
    (TA + "S = 'epoch'\na = TrainingArguments('o', load_best_model_at_end=True, eval_strategy=S, save_strategy='steps')\n", NEWEST),
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True, eval_strategy='steps', eval_steps=300)\n", NEWEST),
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True, eval_strategy='steps', logging_steps=30)\n", NEWEST),
])
def test_a_class_made_from_arguments_its_release_refuses_stops_the_run(source, releases):
    assert stop(source, releases) == source.strip().splitlines()[-1]


@pytest.mark.parametrize(("source", "releases"), [
    ("from transformers import BertConfig\nc = BertConfig('roberta-large', num_labels=2)\n", (("transformers", (5, 3, 0)),)),
    ("from transformers import BertConfig\nc = BertConfig('roberta-large', num_labels=2)\n", ()),  # target unknown
    ("from transformers import BertConfig\nc = BertConfig(num_labels=2)\n", NEWEST),
    ("from transformers import BertConfig\nargs = []\nc = BertConfig(*args)\n", NEWEST),  # may be empty
    ("from transformers import BayesianDetectorConfig\nc = BayesianDetectorConfig(30)\n", NEWEST),  # an __init__ of its own
    ("from transformers import GenerationConfig\nc = GenerationConfig(5)\n", NEWEST),  # no PreTrainedConfig
    ("from my_model import MyConfig\nc = MyConfig('b')\n", NEWEST),  # a Hub model's own class
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True, evaluation_strategy='epoch')\n", (("transformers", (4, 8, 2)),)),
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True)\n", ()),
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True, eval_strategy='epoch', save_strategy='epoch')\n", NEWEST),
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True, eval_strategy='steps')\n", NEWEST),  # 500 and 500
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True, eval_strategy='steps', eval_steps=250)\n", NEWEST),
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True, eval_strategy='epoch', save_strategy='best')\n", NEWEST),
    (TA + "a = TrainingArguments('o', load_best_model_at_end=False, eval_strategy='epoch')\n", NEWEST),
    (TA + "import sys\na = TrainingArguments('o', load_best_model_at_end=True, eval_strategy=sys.argv[1])\n", NEWEST),
    (TA + "kw = {}\na = TrainingArguments('o', load_best_model_at_end=True, **kw)\n", NEWEST),
    (TA + "a = TrainingArguments('o', load_best_model_at_end=True, eval_strategy='epoch', evaluation_strategy='steps')\n", NEWEST),
    ("from trl import SFTConfig\na = SFTConfig('o', load_best_model_at_end=True)\n", NEWEST),  # defaults of its own
])
def test_arguments_the_release_takes_or_that_are_not_known_do_not_stop(source, releases):
    assert stop(source, releases) is None


def test_every_refusal_has_its_release_and_its_source():
    for group in json.loads((DATA / "refusals.json").read_text())["transformers"].values():
        for entry in group if isinstance(group, list) else [group]:
            assert re.fullmatch(r"\d+(\.\d+)*", entry["since"]) and (entry.get("classes") or entry["callables"])
            assert re.search(r"\d+\.\d+\.\d+ \S+\.py:\d+", entry["source"]), "a file and line of a released wheel"


TOKENIZER = "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
BNB = "import torch\nfrom transformers import BitsAndBytesConfig\n"


@pytest.mark.parametrize(("source", "releases", "expected"), [
    (TOKENIZER + "x = tok(['a b'], padding=True, return_tensors='tf')\n", {"transformers": (5, 24, 0)}, True),
    (TOKENIZER + "x = tok('a b', return_tensors='jax')\n", {"transformers": (5, 0, 0)}, True),
    (TOKENIZER + "x = tok.encode('a b', return_tensors='tf')\n", {"transformers": (5, 24, 0)}, True),
    (TOKENIZER + "x = tok.pad({'input_ids': [[5, 6], [7]]}, return_tensors='tf')\n", {"transformers": (5, 24, 0)}, True),
    (TOKENIZER + "KIND = 'tf'\nx = tok('a b', return_tensors=KIND)\n", {"transformers": (5, 24, 0)}, True),  # the value layer's constant
    (TOKENIZER + "TOK = {'padding': True, 'return_tensors': 'tf'}\nx = tok(['a b'], **TOK)\n", {"transformers": (5, 24, 0)}, True),  # a known `**`
    (TOKENIZER + "TOK = {'padding': True, 'return_tensors': 'pt'}\nx = tok(['a b'], **TOK)\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers import AutoTokenizer\nLOAD = {'trust_remote_code': True}\ntok = AutoTokenizer.from_pretrained('x/y', **LOAD)\n"
     "x = tok('a b', return_tensors='tf')\n", {"transformers": (5, 24, 0)}, False),  # a Hub tokenizer's own code, asked through `**`
    (TOKENIZER + "x = tok('a b', return_tensors='pt')\n", {"transformers": (5, 24, 0)}, False),
    (TOKENIZER + "x = tok('a b', return_tensors='tf')\n", {"transformers": (4, 57, 6)}, False),  # 4.x makes TensorFlow tensors
    (TOKENIZER + "x = tok.batch_decode([[5]], return_tensors='tf')\n", {"transformers": (5, 24, 0)}, False),  # a method not checked
    ("from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('x/y', trust_remote_code=True)\n"
     "x = tok('a b', return_tensors='tf')\n", {"transformers": (5, 24, 0)}, False),  # a Hub tokenizer's own code
    ("import transformers\ndef encode(tokenizer):\n    return tokenizer('a b', return_tensors='tf')\n", {"transformers": (5, 24, 0)}, False),
    (BNB + "q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype='torch.bfloat16')\n", {"transformers": (5, 24, 0)}, True),
    (BNB + "q = BitsAndBytesConfig(load_in_8bit=True, bnb_4bit_compute_dtype='torch.float16')\n", {"transformers": (4, 30, 0)}, True),
    (BNB + "q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype='torch.bfloat16')\n", {"transformers": (4, 29, 2)}, False),
    (BNB + "q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype='bfloat16')\n", {"transformers": (5, 24, 0)}, False),
    (BNB + "q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)\n", {"transformers": (5, 24, 0)}, False),
])
def test_a_keyword_value_the_target_refuses(source, releases, expected):
    """`return_tensors="tf"`/`"jax"` of a tokenizer's call, `encode` or `pad` raises ValueError from 5.0 (TensorType is
    pt/np/mlx); `BitsAndBytesConfig(bnb_4bit_compute_dtype="torch.bfloat16")` raises AttributeError from 4.30
    (`getattr(torch, "torch.bfloat16")`). Only a tokenizer the value layer certainly knows, transformers' own."""
    assert (stop(source, releases=releases) is not None) is expected


@pytest.mark.parametrize(("source", "releases", "expected"), [
    ("from transformers import Trainer\nm, a = object(), object()\nt = Trainer(model=m, TrainingArguments=a)\n", {"transformers": (5, 24, 0)}, True),
    ("from transformers import Trainer\nm, a = object(), object()\nt = Trainer(model=m, TrainingArguments=a)\n", {"transformers": (3, 4, 0)}, True),  # asserts kwargs empty
    ("from transformers import Seq2SeqTrainer\nm, a = object(), object()\nt = Seq2SeqTrainer(model=m, optimizer_cls_and_kwargs=a)\n", {"transformers": (5, 24, 0)}, True),
    ("from transformers import Trainer\nm, a = object(), object()\nt = Trainer(model=m, optimizer_cls_and_kwargs=a)\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers import Trainer\nm, t = object(), object()\nt = Trainer(model=m, tokenizer=t)\n", {"transformers": (5, 24, 0)}, False),  # BL602 reports it, with its fix
    ("from transformers import Trainer\nm, a = object(), object()\nt = Trainer(model=m, args=a, compute_loss_func=None, prediction_loss_only=True)\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers import Trainer\nm, a = object(), object()\nkw = {'TrainingArguments': a}\nt = Trainer(model=m, **kw)\n", {"transformers": (5, 24, 0)}, True),
    ("from transformers import Trainer\nimport json\nm = object()\nt = Trainer(model=m, **json.load(open('kw.json')))\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers import Trainer\nclass T(Trainer):\n    def __init__(self, extra=None, **kw):\n        super().__init__(**kw)\nt = T(model=object(), extra=1)\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers import Trainer\nm, a = object(), object()\nt = Trainer(model=m, TrainingArguments=a)\n", {"transformers": (5, 25, 0)}, False),  # past what is known
])
def test_a_trainer_given_a_keyword_no_release_takes(source, releases, expected):
    """No release of `Trainer.__init__` (2.9 to 5.24) has `**kwargs` that it takes silently: a keyword outside the union
    of their parameters raises TypeError (AssertionError on 3.1-3.5); `Seq2SeqTrainer` never took
    `optimizer_cls_and_kwargs`; the file's own subclass is its own signature."""
    assert (stop(source, releases=releases) is not None) is expected


@pytest.mark.parametrize(("source", "releases", "expected"), [
    ("from transformers import TrainingArguments\na = TrainingArguments('o', beta=0.1, max_prompt_length=128)\n", {"transformers": (5, 24, 0)}, True),
    ("from transformers import TrainingArguments\na = TrainingArguments(output_dir='o', max_length=512)\n", {"transformers": (4, 57, 6)}, True),
    ("from transformers import Seq2SeqTrainingArguments\na = Seq2SeqTrainingArguments('o', beta=0.1)\n", {"transformers": (5, 0, 0)}, True),
    ("from transformers import TrainingArguments\na = TrainingArguments('o', learning_rate=2e-5, eval_strategy='epoch')\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers import TrainingArguments\na = TrainingArguments('o', evaluation_strategy='epoch')\n", {"transformers": (5, 24, 0)}, False),  # BL601's
    ("from transformers import Seq2SeqTrainingArguments\na = Seq2SeqTrainingArguments('o', predict_with_generate=True)\n", {"transformers": (5, 24, 0)}, False),
    ("import json\nfrom transformers import TrainingArguments\nkw = json.load(open('c.json'))\na = TrainingArguments('o', **kw)\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers import TrainingArguments\nkw = {'beta': 0.1}\na = TrainingArguments('o', **kw)\n", {"transformers": (5, 24, 0)}, True),  # a known key
    ("from transformers import TrainingArguments\nkw = {'seed': 1}\na = TrainingArguments('o', **kw)\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers import TrainingArguments\na = TrainingArguments('o', beta=0.1)\n", {"transformers": (5, 25, 0)}, False),  # past what is known
    ("from trl import DPOConfig\na = DPOConfig('o', beta=0.1)\n", {"transformers": (5, 24, 0)}, False),
])
def test_training_arguments_given_a_keyword_no_release_has(source, releases, expected):
    """A keyword that is a field of no TrainingArguments release (2.9 to 5.24) raises TypeError: trl's DPOConfig keywords
    (`beta=`, `max_prompt_length=`, `max_length=`) given to transformers' class."""
    assert (stop(source, releases=releases) is not None) is expected


def test_the_training_arguments_fields_hold_every_keyword_bl601_knows():
    """Every `TrainingArguments` keyword of BL601's table (data/versions.json) is a field of some release."""
    fields = json.loads((DATA / "refusals.json").read_text())["transformers"]["closed_keywords"][0]["keywords"]
    assert set(versions.keywords("TrainingArguments")[0]) <= set(fields)


@pytest.mark.parametrize(("source", "releases", "expected"), [
    ("from transformers import Trainer\nm, init, a = object(), object(), object()\nt = Trainer(model=m, model_init=init, args=a)\n", {"transformers": (5, 2, 0)}, True),
    ("from transformers import Seq2SeqTrainer\nm, init = object(), object()\nt = Seq2SeqTrainer(model=m, model_init=init)\n", {"transformers": (5, 24, 0)}, True),
    ("from transformers import Trainer\nm, init, a = object(), object(), object()\nt = Trainer(model=m, model_init=init)\n", {"transformers": (5, 1, 0)}, False),  # 5.1 warns
    ("from transformers import Trainer\nm, init, a = object(), object(), object()\nt = Trainer(model=None, model_init=init)\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers import Trainer\nm, init, a = object(), object(), object()\nt = Trainer(model=m, args=a)\n", {"transformers": (5, 24, 0)}, False),
    ("from transformers import BertModel\nm = BertModel.from_pretrained('bert-base-uncased', gradient_checkpointing=True)\n",
     {"transformers": (5, 0, 0)}, True),
    ("from transformers import BertModel\nm = BertModel.from_pretrained('bert-base-uncased', gradient_checkpointing=True)\n",
     {"transformers": (4, 57, 6)}, False),
])
def test_a_trainer_given_model_and_model_init_and_a_config_keyword_5_removed(source, releases, expected):
    """`Trainer(model=..., model_init=...)` raises ValueError from 5.2 (5.1 warned); `from_pretrained(...,
    gradient_checkpointing=True)` reaches the model's `__init__` from 5.0 (4.x took it as a deprecated config keyword)."""
    assert (stop(source, releases=releases) is not None) is expected


@pytest.mark.parametrize(("source", "releases", "expected"), [
    ("import pandas as pd\ncounts = pd.value_counts([1, 1, 2])\n", {"pandas": (3, 0, 0)}, True),
    ("from pandas import value_counts\n", {"pandas": (3, 1, 1)}, True),
    ("import pandas as pd\ncounts = pd.value_counts([1, 1, 2])\n", {"pandas": (2, 3, 2)}, False),
    ("import pandas as pd\ncounts = pd.Series([1, 1, 2]).value_counts()\n", {"pandas": (3, 1, 1)}, False),
])
def test_pandas_3_has_no_top_level_value_counts(source, releases, expected):
    assert (stop(source, releases=releases) is not None) is expected


@pytest.mark.parametrize(("source", "releases", "expected"), [
    (TA + "a = TrainingArguments('o', optim='adamw_hf')\n", {"transformers": (4, 50, 0)}, True),
    (TA + "OPTIM = 'adamw_hf'\na = TrainingArguments(output_dir='o', optim=OPTIM)\n", {"transformers": (5, 24, 0)}, True),
    ("from transformers import Seq2SeqTrainingArguments\na = Seq2SeqTrainingArguments('o', optim='adamw_hf')\n", {"transformers": (5, 0, 0)}, True),
    ("from trl import SFTConfig\na = SFTConfig(output_dir='o', optim='adamw_hf')\n", {"transformers": (4, 57, 6)}, True),
    (TA + "a = TrainingArguments('o', optim='adamw_apex_fused')\n", {"transformers": (5, 8, 0)}, True),
    (TA + "a = TrainingArguments('o', optim='adamw_hf')\n", {"transformers": (4, 49, 0)}, False),  # 4.49 has it
    (TA + "a = TrainingArguments('o', optim='adamw_apex_fused')\n", {"transformers": (5, 7, 0)}, False),
    (TA + "a = TrainingArguments('o', optim='adamw_torch')\n", {"transformers": (5, 24, 0)}, False),
    (TA + "import sys\na = TrainingArguments('o', optim=sys.argv[1])\n", {"transformers": (5, 24, 0)}, False),  # not known
    ("from trl import PPOConfig\na = PPOConfig(optim='adamw_hf')\n", {"transformers": (5, 24, 0)}, False),  # a config not checked
])
def test_training_arguments_given_an_optimizer_the_release_lacks(source, releases, expected):
    """`optim="adamw_hf"` raises ValueError from 4.50 (`OptimizerNames` lost it; `"adamw_apex_fused"` from 5.8), in
    `TrainingArguments.__post_init__`, which Seq2SeqTrainingArguments and trl's SFT, DPO and reward configs run too."""
    assert (stop(source, releases=releases) is not None) is expected


LOAD = "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n"


@pytest.mark.parametrize(("source", "releases", "expected"), [
    (LOAD + "bnb = BitsAndBytesConfig(load_in_4bit=True)\nm = AutoModelForCausalLM.from_pretrained('x', load_in_8bit=True, quantization_config=bnb)\n",
     {"transformers": (4, 57, 6)}, True),
    (LOAD + "m = AutoModelForCausalLM.from_pretrained('x', load_in_4bit=True, quantization_config=BitsAndBytesConfig(load_in_4bit=True))\n",
     {"transformers": (4, 38, 0)}, True),
    ("from transformers import BertModel\nm = BertModel.from_pretrained('x', load_in_8bit=1, quantization_config={'load_in_8bit': True})\n",
     {"transformers": (4, 45, 2)}, True),
    (LOAD + "bnb = BitsAndBytesConfig(load_in_4bit=True)\nm = AutoModelForCausalLM.from_pretrained('x', load_in_8bit=True, quantization_config=bnb)\n",
     {"transformers": (4, 37, 2)}, False),  # before 4.38 the config's own flags win
    (LOAD + "m = AutoModelForCausalLM.from_pretrained('x', load_in_8bit=False, quantization_config=BitsAndBytesConfig(load_in_4bit=True))\n",
     {"transformers": (4, 57, 6)}, False),
    (LOAD + "m = AutoModelForCausalLM.from_pretrained('x', load_in_8bit=True, quantization_config=None)\n", {"transformers": (4, 57, 6)}, False),
    (LOAD + "import sys\nbnb = BitsAndBytesConfig(load_in_4bit=True) if sys.argv[1] else None\n"
     "m = AutoModelForCausalLM.from_pretrained('x', load_in_8bit=True, quantization_config=bnb)\n", {"transformers": (4, 57, 6)}, False),
    (LOAD + "m = AutoModelForCausalLM.from_pretrained('x', load_in_8bit=True, quantization_config=BitsAndBytesConfig(), trust_remote_code=True)\n",
     {"transformers": (4, 57, 6)}, False),  # a Hub model's own class
    (LOAD + "import json\nkw = json.load(open('k.json'))\nm = AutoModelForCausalLM.from_pretrained('x', load_in_8bit=True, quantization_config=BitsAndBytesConfig(), **kw)\n",
     {"transformers": (4, 57, 6)}, False),  # a mapping of unknown keys may hold trust_remote_code
    (LOAD + "kw = {}\nm = AutoModelForCausalLM.from_pretrained('x', load_in_8bit=True, quantization_config=BitsAndBytesConfig(), **kw)\n",
     {"transformers": (4, 57, 6)}, True),  # an empty mapping passes nothing
    (LOAD + "kw = {'load_in_8bit': True, 'quantization_config': BitsAndBytesConfig()}\nm = AutoModelForCausalLM.from_pretrained('x', **kw)\n",
     {"transformers": (4, 57, 6)}, True),  # a mapping's known keys are keywords
    ("from peft import AutoPeftModelForCausalLM\nfrom transformers import BitsAndBytesConfig\n"
     "m = AutoPeftModelForCausalLM.from_pretrained('x', load_in_8bit=True, quantization_config=BitsAndBytesConfig())\n", {"transformers": (4, 57, 6)}, False),
])
def test_a_model_loaded_with_load_in_8bit_beside_a_quantization_config(source, releases, expected):
    """`from_pretrained(..., load_in_8bit=True, quantization_config=...)` raises ValueError on 4.38 to 4.57 where the
    flag is certainly true and the config certainly not None; transformers' own model classes only."""
    assert (stop(source, releases=releases) is not None) is expected


@pytest.mark.parametrize(("source", "releases", "expected"), [
    ("from sklearn.preprocessing import OneHotEncoder\nenc = OneHotEncoder(sparse=False)\n", NEWEST, True),
    ("from sklearn import preprocessing\nenc = preprocessing.OneHotEncoder(handle_unknown='ignore', sparse=False)\n",
     {"scikit-learn": (1, 4, 0)}, True),
    ("from sklearn.preprocessing import OneHotEncoder\nenc = OneHotEncoder(sparse=False)\n", {"scikit-learn": (1, 3, 2)}, False),
    ("from sklearn.preprocessing import OneHotEncoder\nenc = OneHotEncoder(sparse_output=False)\n", NEWEST, False),
    ("from sklearn.preprocessing import OneHotEncoder\nenc = OneHotEncoder(sparse=False)\n", {}, False),  # the target unknown
])
def test_scikit_learn_1_4_one_hot_encoder_takes_no_sparse(source, releases, expected):
    """`OneHotEncoder(sparse=...)`, deprecated in 1.2 for `sparse_output`, raises TypeError from 1.4."""
    assert (stop(source, releases=releases) is not None) is expected
