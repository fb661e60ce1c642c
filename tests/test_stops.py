"""facts.stops: the module-level statement where a script's run certainly stops (the engine reports nothing after it)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from bertlint.facts import Facts, Runtime, stop_statement


def stop(source: str, runtime: Runtime = Runtime()) -> str | None:
    source = textwrap.dedent(source)
    module = cst.parse_module(source)
    found = stop_statement(Facts(module, source, Path("train.py"), runtime))
    return None if found is None else module.code_for_node(found).strip()


@pytest.mark.parametrize(("source", "expected"), [
    ("x = 1\nds = Dataset.from_pandas(x)\ny = 2\n", "ds = Dataset.from_pandas(x)"),
    ("import os; print(missing); y = 1\n", "import os; print(missing); y = 1"),  # the line holding it
    ("if __name__ == '__main__':\n    run(1)\n", "run(1)"),  # the main block runs for certain
    ("f(x=undefined)\n", "f(x=undefined)"),  # a keyword's value is read, its name is not
    ("from transformers import AutoTokenizer\ntok = AutoTokenizer('bert-base-uncased')\n", "tok = AutoTokenizer('bert-base-uncased')"),
    ("import transformers as tf\nm = tf.AutoModelForCausalLM('gpt2')\n", "m = tf.AutoModelForCausalLM('gpt2')"),
    ("for row in rows:\n    pass\n", "for row in rows:\n    pass"),  # a loop's iterable is evaluated before its body
])
def test_certain_stops(source, expected):
    assert stop(source) == expected


@pytest.mark.parametrize("source", [
    "from datasets import Dataset\nds = Dataset.from_pandas(x := 1)\n",
    "print(len, __file__, ExceptionGroup, WindowsError)\n",  # builtins (any Python's), module dunders
    "x.eval()\nprint(x)\nx = 1\n",  # bound later in the file: NameError only maybe (a loop, a retry); said nothing
    "def f():\n    global Dataset\n    Dataset = 1\nprint(Dataset)\n",
    "def f(Dataset):\n    return Dataset\nprint(Dataset)\n",  # bound in any scope counts
    "from m import *\nprint(Dataset)\n",
    "exec('Dataset = 1')\nprint(Dataset)\n",
    "globals()['Dataset'] = 1\nprint(Dataset)\n",
    "import sys\nsetattr(sys.modules[__name__], 'Dataset', 1)\nprint(Dataset)\n",
    "import builtins\nprint(Dataset)\n",
    "import gettext\ngettext.install('app')\nprint(_('hello'))\n",  # `install()` may add builtins
    "f = lambda: Dataset\ng = [Dataset for _ in range(0)]\nh = a if True else Dataset\n",  # not evaluated for certain
    "a = 1\nb = a or Dataset\n",
    "import os\nif os.environ:\n    print(Dataset)\n",  # only the test of an `if` runs for certain
    "try:\n    print(Dataset)\nexcept NameError:\n    pass\n",
    "def f():\n    print(Dataset)\n",  # runs only when called
    "from transformers import AutoTokenizer\nAutoTokenizer = object\ntok = AutoTokenizer()\n",  # rebound: not the Auto class
    "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-uncased')\n",
    "# In[1]:\nprint(Dataset)\n",  # a notebook export: its kernel held cells it no longer has
    "# %%\nprint(Dataset)\n",
    "get_ipython().system('ls')\nprint(Dataset)\n",
])
def test_no_certain_stop(source):
    assert stop(source) is None


def test_a_notebook_never_certainly_stops():
    assert stop("print(Dataset)\n", Runtime(notebook=True)) is None


def test_a_cell_script_is_not_stopped(lint):
    """A script of IPython cells (`!pip install`) ran in a kernel that may hold the name: the findings after it stay."""
    source = "!pip install transformers\nfrom transformers import TrainingArguments\nprint(Dataset)\nargs = TrainingArguments(output_dir='o', evaluation_strategy='epoch')\n"
    assert [f.code for f in lint(source)] == ["BL601"]
    assert [f.code for f in lint(source.replace("!pip install transformers\n", ""))] == []


def facts_at(path: Path, source: str) -> Facts:
    path.write_text(source)
    return Facts(cst.parse_module(source), source, path)


@pytest.mark.parametrize(("source", "stops"), [
    ("from datasets import tokenized_datasets, load_dataset\n", True),
    ("from torch.utils.data import Dataset, Dataloader\n", True),
    ("from datasets import load_dataset, load_metric, arrow_reader\n", False),  # removed in 3.0, a submodule: some release has them
    ("from torch.utils.data import DataLoader2\n", False),  # torch 1.11-1.13
    ("from torch.utils import Dataloader\n", False),  # no list of torch.utils
    ("from datasets import *\n", False),
])
def test_imports_of_names_no_release_has(tmp_path, source, stops):
    assert (stop_statement(facts_at(tmp_path / "train.py", source)) is not None) is stops


def test_a_module_of_the_same_name_beside_the_file_is_what_it_imports(tmp_path):
    (tmp_path / "datasets").mkdir()
    facts = facts_at(tmp_path / "train.py", "from datasets import tokenized_datasets\n")
    assert stop_statement(facts) is None
    assert str(tmp_path / "datasets.py") in facts.inputs  # looked for: a cached result notices it appear
