"""facts.stops: where the run of each scope (the module, a function's body) certainly stops (the engine reports nothing after it)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from bertlint.facts import Facts, Runtime, run_stops


def stop_statement(facts: Facts):
    """The module's own stop, or None."""
    return next((s.statement for s in run_stops(facts) if isinstance(s.scope, cst.Module)), None)


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


def scope_stops(source: str) -> list[tuple[str, str, bool]]:
    """(scope, statement, every_rule) of each stop."""
    source = textwrap.dedent(source)
    module = cst.parse_module(source)
    return [("module" if isinstance(s.scope, cst.Module) else s.scope.name.value,
             module.code_for_node(s.statement).strip(), s.every_rule)
            for s in run_stops(Facts(module, source, Path("train.py"), Runtime()))]


@pytest.mark.parametrize(("source", "expected"), [
    # a function's body stops at its first certain raise, whether or not it is called
    ("from datasets import load_dataset\ndef main():\n    ds = load_dataset('x')['train']\n    ds = ds.train_test_split(test_size=0)\n    go(ds)\n",
     [("main", "ds = ds.train_test_split(test_size=0)", True)]),
    ("from datasets import load_dataset\nds = load_dataset('x')['train'].train_test_split(test_size=0.0, seed=1)\n",
     [("module", "ds = load_dataset('x')['train'].train_test_split(test_size=0.0, seed=1)", True)]),
    ("from sklearn.model_selection import train_test_split\na, b = train_test_split(rows, test_size=0)\nrows = []\n",
     [("module", "a, b = train_test_split(rows, test_size=0)", True)]),
    # a forgotten import: an unbound name that the library the file imports from exports
    ("from transformers import Trainer\ntok = AutoTokenizer.from_pretrained('gpt2')\n", [("module", "tok = AutoTokenizer.from_pretrained('gpt2')", True)]),
    ("from datasets import load_dataset\nds = Dataset.from_dict({})\n", [("module", "ds = Dataset.from_dict({})", True)]),
    ("import torch\nloader = DataLoader([1, 2], batch_size=2)\n", [("module", "loader = DataLoader([1, 2], batch_size=2)", True)]),
    ("import numpy as np\nloader = DataLoader([1, 2], batch_size=2)\n", [("module", "loader = DataLoader([1, 2], batch_size=2)", False)]),
    # a fragment's unbound object: only the findings that say their own line fails go
    ("from transformers import Trainer\ntrainer = Trainer(model=model)\n", [("module", "trainer = Trainer(model=model)", False)]),
    # a template's placeholder checkpoint
    ("from transformers import AutoModel\nmodel_name = 'bert-base-uncased'\nm = AutoModel.from_pretrained('model_name')\n",
     [("module", "m = AutoModel.from_pretrained('model_name')", False)]),
    ("from transformers import AutoModel\nm = AutoModel.from_pretrained('/path/to/your/model')\n", [("module", "m = AutoModel.from_pretrained('/path/to/your/model')", False)]),
    ("from transformers import AutoModel\nm = AutoModel.from_pretrained('<your-model>')\n", [("module", "m = AutoModel.from_pretrained('<your-model>')", False)]),
    ("from transformers import AutoModel\ndef f():\n    m = AutoModel.from_pretrained('gpt-3.5-turbo')\n", [("f", "m = AutoModel.from_pretrained('gpt-3.5-turbo')", False)]),
    # a placeholder data file given to a loader, followed through a parameter's value from its call sites
    ("import pandas as pd\ndef load(p):\n    return pd.read_csv(p)\nx = 1\ndf = load('/path/to/your/data.csv')\ny = 2\n",
     [("module", "df = load('/path/to/your/data.csv')", False), ("load", "return pd.read_csv(p)", False)]),
    ("f = open('path/to/train.txt')\n", [("module", "f = open('path/to/train.txt')", False)]),
    ("from datasets import load_dataset\nds = load_dataset('csv', data_files=['a.csv', '<your file>'])\n",
     [("module", "ds = load_dataset('csv', data_files=['a.csv', '<your file>'])", False)]),
    # a certain stop propagates to the caller as certain (what it cuts off: test_liveness)
    ("from datasets import load_dataset\ndef split(ds):\n    return ds.train_test_split(test_size=0)\n"
     "def train():\n    pass\ndef main():\n    split(load_dataset('x')['train'])\n    train()\nmain()\n",
     [("module", "main()", True), ("split", "return ds.train_test_split(test_size=0)", True),
      ("main", "split(load_dataset('x')['train'])", True)]),
    # a loader that may return before it opens the placeholder, a generator (calling it runs none of its body): no
    # stop in the caller
    ("import os\ndef load(p):\n    if not os.path.exists(p):\n        return None\n    return open(p)\nload('/path/to/a.txt')\n",
     [("load", "return open(p)", False)]),
    ("def g():\n    yield 1\n    x = Trainer\ng()\n", [("g", "x = Trainer", False)]),
])
def test_stops_of_each_scope(source, expected):
    assert scope_stops(source) == expected


@pytest.mark.parametrize("source", [
    "from datasets import load_dataset\nds = load_dataset('x')['train'].train_test_split(test_size=0.1)\n",
    "from datasets import load_dataset\nds = load_dataset('x')['train'].train_test_split(test_size=n)\nn = 0\n",  # not a literal
    "class S:\n    def train_test_split(self, test_size):\n        return self\nS().train_test_split(test_size=0)\n",  # not datasets'
    "from datasets import load_dataset\ndef train_test_split(**kw):\n    pass\nload_dataset('x').train_test_split(test_size=0)\n",
    "from transformers import AutoModel\nm = AutoModel.from_pretrained('model')\nmodel = 1\n",  # a folder a previous script saved
    "from transformers import AutoModel\nmodel_name = 'x'\nm = AutoModel.from_pretrained('model_name')\nm.save_pretrained('model_name')\n",
    "from transformers import AutoModel\nm = AutoModel.from_pretrained('gpt2')\n",
    "from transformers import AutoModel\nm = AutoModel.from_pretrained('openai-community/gpt2')\n",
    "import json\nm = json.from_pretrained('/path/to/model')\n",  # not a transformers class
    "from transformers import AutoModel\ndef f(x):\n    if x:\n        m = AutoModel.from_pretrained('/path/to/model')\n",  # under a branch
    "import pandas as pd\ndf = pd.read_csv('data/train.csv')\n",  # a real-looking path
    "f = open('/path/to/your/out.txt', 'w')\n",  # writing: no file to find
    "import pandas as pd\ndef load(p):\n    return pd.read_csv(p)\ndf = load('/path/to/a.csv')\ndg = load('train.csv')\n",  # two values
])
def test_no_stop_of_any_scope(source):
    assert scope_stops(source) == []


def test_findings_after_a_stop_in_a_function_go(lint):
    """BL602 after a certain crash in the same function body goes; a preview rule after a fragment's unbound object stays."""
    body = ("from datasets import load_dataset\nfrom transformers import Trainer, TrainingArguments\n"
            "def main():\n    ds = load_dataset('x')['train']\n    ds = ds.train_test_split(test_size={size})\n"
            "    trainer = Trainer(model=model, args=TrainingArguments(output_dir='o'), train_dataset=ds, tokenizer=tok)\n"
            "if __name__ == '__main__':\n    main()\n")
    assert [f.code for f in lint(body.format(size="0.1"))] == ["BL602"]
    assert [f.code for f in lint(body.format(size="0"))] == []
