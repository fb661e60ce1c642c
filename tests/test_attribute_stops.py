"""facts.attribute_stops: plain Python errors that stop a run (an argparse namespace's attribute no argument defines,
`self.NAME` no class of the chain binds, `parse_args()` in a notebook's kernel); the engine reports nothing after them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from bertlint.facts import Facts, Runtime, run_stops
from test_notebook import lint, nb_json


BOUND = "from elsewhere import base, extra, flags, ns, other, x, Args, Base, Custom, Meta\n"  # names the sources read, bound


def stops(source: str, runtime: Runtime = Runtime()) -> list[str]:
    source = BOUND + textwrap.dedent(source)
    module = cst.parse_module(source)
    return [module.code_for_node(s.statement).strip() for s in run_stops(Facts(module, source, Path("train.py"), runtime))]


PARSER = "import argparse\nparser = argparse.ArgumentParser()\n"


@pytest.mark.parametrize(("arguments", "read"), [
    ("parser.add_argument('--learning_rate')\n", "args.lr"),
    ("parser.add_argument('-l', '--learning-rate')\n", "args.l"),  # the first long option names it: `learning_rate`
    ("parser.add_argument('-l')\n", "args.lr"),  # no long option: the first, prefix stripped (`l`)
    ("parser.add_argument('--lr', dest='rate')\n", "args.lr"),  # dest= names it
    ("parser.add_argument('data')\n", "args.lr"),
])
def test_an_argparse_attribute_no_argument_defines_stops(arguments, read):
    assert stops(PARSER + arguments + f"args = parser.parse_args()\nprint({read})\nx = 1\n") == [f"print({read})"]


@pytest.mark.parametrize(("arguments", "read"), [
    ("parser.add_argument('-l', '--learning-rate')\n", "args.learning_rate"),
    ("parser.add_argument('-l')\n", "args.l"),
    ("parser.add_argument('--lr', dest='rate')\n", "args.rate"),
    ("parser.add_argument('data-dir')\n", "args.data_dir"),  # a positional's dest as written; both spellings count
    ("parser.add_argument('--learning_rate')\nparser.set_defaults(lr=1)\n", "args.lr"),
    ("parser.add_argument('--learning_rate')\nparser.set_defaults(**extra)\n", "args.lr"),
    ("parser.add_argument('--learning_rate', action=Custom)\n", "args.lr"),  # an Action class may set any name
    ("parser.add_argument(*flags)\n", "args.lr"),
    ("parser.add_argument('--learning_rate')\nsub = parser.add_subparsers()\n", "args.lr"),
    ("parser.add_argument('--learning_rate')\nparser.parse_known_args()\n", "args.lr"),
    ("parser.add_argument('--learning_rate')\nargs.lr = 1\n", "args.lr"),  # stored before (anywhere in the file)
    ("parser.add_argument('--learning_rate')\nsetattr(ns, 'lr', 1)\n", "args.lr"),
    ("parser.add_argument('--learning_rate')\n", "args._get_kwargs"),  # the namespace's own
    ("parser.add_argument('--learning_rate')\n", "args.__dict__"),
])
def test_an_argparse_attribute_that_may_be_there_is_no_stop(arguments, read):
    assert stops(PARSER + arguments + f"args = parser.parse_args()\nprint({read})\n") == []


@pytest.mark.parametrize("source", [
    PARSER.replace("ArgumentParser()", "ArgumentParser(parents=[base])") + "parser.add_argument('--a')\nargs = parser.parse_args()\nprint(args.lr)\n",
    PARSER + "parser.add_argument('--a')\nif x:\n    args = parser.parse_args()\nelse:\n    args = other\nprint(args.lr)\n",
    PARSER + "parser.add_argument('--a')\nargs = parser.parse_args(namespace=ns)\nprint(args.lr)\n",
    "from transformers import HfArgumentParser\nparser = HfArgumentParser(Args)\nargs = parser.parse_args()\nprint(args.lr)\n",
])
def test_a_namespace_whose_names_are_not_all_known_is_no_stop(source):
    assert stops(source) == []


def test_an_argparse_attribute_read_in_a_function_stops_the_function():
    source = PARSER + "parser.add_argument('--a')\nargs = parser.parse_args()\ndef train():\n    print(args.lr)\n    y = 2\n"
    assert stops(source) == ["print(args.lr)"]


def test_an_argparse_attribute_of_a_parameter_every_call_passes_the_namespace_stops():
    source = PARSER + "parser.add_argument('--a')\ndef main(args):\n    print(args.lr)\n    y = 2\n"
    assert stops(source + "if __name__ == '__main__':\n    main(parser.parse_args())\n") == ["main(parser.parse_args())", "print(args.lr)"]
    assert stops(source + "main(parser.parse_args())\nmain(other)\n") == []  # a call passes something else
    assert stops(source.replace("print(args.lr)", "args = other\n    print(args.lr)") + "main(parser.parse_args())\n") == []


CLASS = """
class Scorer{bases}:
    def __init__(self):
        self.rate = 1
    def run(self):
        self.{name}()
        return 1
{more}
Scorer().run()
"""


@pytest.mark.parametrize(("bases", "name", "more"), [
    ("", "step", ""),
    ("(object)", "step", ""),
    ("(Base)", "step", "class Base:\n    def other(self): pass\n"),
    ("", "rat", ""),  # a data attribute no one assigns
])
def test_self_name_no_class_of_the_chain_binds_stops_the_method(bases, name, more):
    source = CLASS.format(bases=bases, name=name, more=more)
    if bases == "(Base)":
        source = more + source.replace(more, "")
    assert f"self.{name}()" in stops(source)


@pytest.mark.parametrize(("bases", "name", "more"), [
    ("", "rate", ""),  # assigned in __init__
    ("", "step", "    step = print\n"),  # bound in the class body
    ("(Base)", "step", ""),  # a base from elsewhere
    ("(Base)", "step", "class Base:\n    def step(self): pass\n"),
    ("", "step", "    def __getattr__(self, name): return print\n"),
    ("", "step", "class Sub(Scorer):\n    def step(self): pass\n"),
    ("(metaclass=Meta)", "step", ""),
    ("", "step", "other.step = print\n"),  # any attribute of that name the file stores
    ("", "__class__", ""),
])
def test_self_name_that_may_be_there_is_no_stop(bases, name, more):
    source = CLASS.format(bases=bases, name=name, more=more)
    if bases == "(Base)" and more:
        source = more + source.replace(more, "")
    assert f"self.{name}()" not in stops(source)


def test_self_name_in_a_class_the_file_never_builds_is_no_stop():
    """A mixin: a class of another module may subclass it and define the method."""
    assert stops("class Mixin:\n    def run(self):\n        self.step()\n        return 1\n") == []


def test_self_name_in_a_decorated_method_or_a_nested_function_is_no_stop():
    source = "class A:\n    @staticmethod\n    def run(self):\n        self.step()\n    def go(self):\n        def inner(self):\n            self.step()\n        return inner\nA().go()\n"
    assert stops(source) == []


NOTEBOOK_PARSER = "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--lr', type=float, default=1e-3)\n"
PAD_LATER = ("from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
             "enc = tok(['a', 'bb'], pad_to_max_length=True, max_length=8, truncation=True)\n")


@pytest.mark.parametrize(("parse", "stopped"), [
    ("args = parser.parse_args()\n", True),  # the kernel's `-f <connection file>`: unrecognized arguments, SystemExit
    ("args = parser.parse_args(args=[])\n", False),
    ("args = parser.parse_args('')\n", False),
    ("args, _ = parser.parse_known_args()\n", False),
    ("import sys\nsys.argv = ['']\nargs = parser.parse_args()\n", False),
    ("parser.add_argument('-f', '--file')\nargs = parser.parse_args()\n", False),
    ("parser.add_argument('--file')\nargs = parser.parse_args()\n", False),  # VS Code's `--f=<file>` abbreviates it
    ("parser.add_argument('--fp16', action='store_true')\nargs = parser.parse_args()\n", True),  # a flag refuses `=<file>`
    ("parser.add_argument('--fold', type=int)\nargs = parser.parse_args()\n", True),  # `int('<file>')` fails
    ("parser.add_argument('--fold', type=int)\nparser.add_argument('-fp')\nargs = parser.parse_args()\n", False),
    ("parser.add_argument('rest', nargs='*')\nargs = parser.parse_args()\n", False),
])
def test_parse_args_in_a_notebook_kernel(parse, stopped):
    findings = lint(nb_json(("code", NOTEBOOK_PARSER + parse), ("code", PAD_LATER)))
    assert ([f.cell for f in findings if f.code == "BL101"] == []) is stopped


def test_parse_args_in_a_script_is_no_stop():
    assert stops(NOTEBOOK_PARSER + "args = parser.parse_args()\n") == []
    assert stops(NOTEBOOK_PARSER + "args = parser.parse_args()\n", Runtime(cells=True)) == []
    assert stops(NOTEBOOK_PARSER + "args = parser.parse_args()\n", Runtime(notebook=True)) == ["args = parser.parse_args()"]


MAIN = "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--fold', type=int)\n    args = parser.parse_args()\n    print(args.fold)\n"


def test_parse_args_in_a_function_a_notebook_cell_calls_after_defining_it():
    """Run All binds `main` to the cell's function before the call, whatever the kernel held: its stop is the call's."""
    assert stops("import argparse\n" + MAIN + "main()\nx = 1\n", Runtime(notebook=True)) == ["main()", "args = parser.parse_args()"]
    findings = lint(nb_json(("code", "import argparse\n" + MAIN), ("code", "main()\n"), ("code", PAD_LATER)))
    assert "BL101" not in [f.code for f in findings]


def test_a_notebook_call_before_its_function_is_defined_is_no_stop():
    """The call runs whatever `main` the kernel held (a cell since deleted): only the function's own stop."""
    assert stops("import argparse\nmain()\n" + MAIN, Runtime(notebook=True)) == ["args = parser.parse_args()"]
    findings = lint(nb_json(("code", "import argparse\nmain()\n"), ("code", PAD_LATER), ("code", MAIN)))
    assert "BL101" in [f.code for f in findings]


LOADED = """import torch
from transformers import AutoModelForSequenceClassification, BertConfig, TFAutoModel
ids, y = torch.tensor([[1, 2, 3]]), torch.tensor([1])
"""
TRANSFORMERS_5 = Runtime(releases=(("transformers", (5, 24, 0)),))


@pytest.mark.parametrize("source", [
    "model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\nloss, logits = model(ids, labels=y)\nloss.backward()\n",
    "model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased').to('cuda')\nloss, _ = model(input_ids=ids, labels=y)\nprint(loss.item())\n",
    "model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased', return_dict=True)\nloss, logits = model(ids, labels=y, return_dict=True)\nloss.backward()\n",
    "d = {'loss': 1, 'logits': 2}\nloss, logits = d\nloss.backward()\n",  # a dict's keys
    "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-uncased')\nmodel = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\n"
    "batch = tok(['a b', 'c'], padding=True, return_tensors='pt')\nloss, logits = model.forward(**batch, labels=y)\nloss.backward()\n",  # an encoding's fields
])
def test_an_attribute_str_has_not_of_a_key_an_unpacking_binds_stops(source):
    """`loss, logits = model(...)` of a transformers model whose forward returns a `ModelOutput` (an OrderedDict: its
    iteration gives the keys) binds strings: `loss.backward()` raises AttributeError (run on 5.24: 'loss', 'logits')."""
    assert stops(LOADED + source, TRANSFORMERS_5)[-1:] == [source.strip().splitlines()[-1]]


@pytest.mark.parametrize(("source", "runtime"), [
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\nloss, logits = model(ids, labels=y, return_dict=False)\nloss.backward()\n", TRANSFORMERS_5),
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased', return_dict=False)\nloss, logits = model(ids, labels=y)\nloss.backward()\n", TRANSFORMERS_5),
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased', torchscript=True)\nloss, logits = model(ids, labels=y)\nloss.backward()\n", TRANSFORMERS_5),
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased', config=BertConfig())\nloss, logits = model(ids, labels=y)\nloss.backward()\n", TRANSFORMERS_5),
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased', **extra)\nloss, logits = model(ids, labels=y)\nloss.backward()\n", TRANSFORMERS_5),
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\nmodel.config.return_dict = False\nloss, logits = model(ids, labels=y)\nloss.backward()\n", TRANSFORMERS_5),
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\nloss, logits = model(ids, labels=y, **flags)\nloss.backward()\n", TRANSFORMERS_5),
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\nbatch = {'input_ids': ids, 'return_dict': False}\nloss, logits = model(**batch)\nloss.backward()\n", TRANSFORMERS_5),
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\nloss, logits = model(ids, labels=y)\nloss.backward()\n", Runtime(releases=(("transformers", (3, 5, 1)),))),  # tuples then
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\nloss, logits = model(ids, labels=y)\nloss.backward()\n", Runtime()),  # target unknown
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\noutputs = model(ids, labels=y)\nloss = outputs[0]\nloss.backward()\n", TRANSFORMERS_5),
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\nloss, logits = model(ids, labels=y)\nprint(loss.upper())\n", TRANSFORMERS_5),  # a str method
    ("model = TFAutoModel.from_pretrained('bert-base-uncased')\nloss, logits = model(ids)\nloss.numpy()\n", TRANSFORMERS_5),
    ("class Net(torch.nn.Module):\n    def forward(self, x):\n        return x, x\nmodel = Net()\nloss, logits = model(ids)\nloss.backward()\n", TRANSFORMERS_5),
    ("model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\nif x:\n    loss, logits = model(ids, labels=y)\nelse:\n    loss = other\nloss.backward()\n", TRANSFORMERS_5),
])
def test_an_unpacked_forward_that_may_return_a_tuple_is_no_stop(source, runtime):
    assert stops(LOADED + source, runtime) == []


POOLED = """from torch import nn
from transformers import BertModel
bert = BertModel.from_pretrained('bert-base-uncased')
LAYER
_, pooled = bert(ids)
USE
"""


@pytest.mark.parametrize(("layer", "use"), [
    ("drop = nn.Dropout(0.3)", "out = drop(pooled)"),  # torch 2.13: TypeError dropout(): ... must be Tensor, not str
    ("head = nn.Linear(768, 2)", "out = head(pooled)"),
    ("head = torch.nn.LayerNorm(768)", "out = head(pooled)"),
    ("", "out = pooled(ids)"),  # a str called: TypeError
])
def test_a_key_handed_to_a_torch_layer_or_called_stops(layer, use):
    """`_, pooled = bert(ids)` (a `BaseModelOutputWithPooling` on 5.x: its keys) binds the str "pooler_output"."""
    assert stops(LOADED + POOLED.replace("LAYER", layer).replace("USE", use), TRANSFORMERS_5)[-1:] == [use]


@pytest.mark.parametrize(("layer", "use", "runtime"), [
    ("drop = nn.Identity()", "out = drop(pooled)", TRANSFORMERS_5),  # returns its input
    ("drop = nn.Dropout(0.3)", "out = drop(ids)", TRANSFORMERS_5),  # a tensor
    ("drop = nn.Dropout(0.3)", "out = drop(pooled)", Runtime(releases=(("transformers", (3, 5, 1)),))),  # tuples then
    ("drop = nn.Dropout(0.3)", "out = drop(*[pooled])", TRANSFORMERS_5),
    ("drop = Custom()", "out = drop(pooled)", TRANSFORMERS_5),  # not known to refuse a str
    ("drop = nn.Dropout(0.3)", "_, pooled = bert(ids, return_dict=False)\nout = drop(pooled)", TRANSFORMERS_5),  # tensors
])
def test_a_key_handed_where_a_str_may_do_is_no_stop(layer, use, runtime):
    assert stops(LOADED + POOLED.replace("LAYER", layer).replace("USE", use), runtime) == []


BATCHED = """
from datasets import load_dataset
PAIRS = [("en", "fr"), ("en", "de")]
def preprocess(batch):
    {line}
    return batch
ds = load_dataset("opus100", "en-fr")["train"].map(preprocess, {how})
"""


@pytest.mark.parametrize("line", [
    'sources = batch["translation"]["en"]',
    'sources = [batch["translation"][pair[0]] for pair in PAIRS]',  # over a constant that is not empty
    'sources = [t.lower() for t in batch["translation"]["en"]]',  # the iterable is evaluated whatever it holds
])
def test_a_string_key_into_a_batched_column_stops_the_map_function(line):
    assert stops(BATCHED.format(line=line, how="batched=True")) == [line]


@pytest.mark.parametrize(("line", "how"), [
    ('sources = batch["translation"]["en"]', "batched=False"),  # one example: a dict
    ('sources = batch["translation"]["en"]', ""),  # `batched` defaults to False
    ('sources = batch["translation"]["en"]', "batched=flags"),  # not known
    ('sources = batch["translation"]["en"]', "batched=True, input_columns=['translation']"),  # the columns come apart
    ('sources = batch["translation"][0]', "batched=True"),  # an int indexes the list
    ('sources = [x["en"] for x in batch["translation"]]', "batched=True"),  # each element a dict
    ('sources = [batch["translation"][pair[0]] for pair in PAIRS if pair]', "batched=True"),  # an `if`: may run none
    ('sources = [batch["translation"][pair[0]] for pair in []]', "batched=True"),  # over nothing
    ('sources = [batch["translation"][key] for key in extra]', "batched=True"),  # not known
])
def test_what_may_index_a_batched_column_rightly_is_no_stop(line, how):
    assert stops(BATCHED.format(line=line, how=how)) == []


def test_a_map_function_the_file_also_calls_itself_is_no_stop():
    source = BATCHED.format(line='sources = batch["translation"]["en"]', how="batched=True") + 'preprocess({"translation": {"en": "a"}})\n'
    assert stops(source) == []
