"""facts.stops: where the run of each scope (the module, a function's body) certainly stops (the engine reports nothing after it)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
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
    "def f():\n    global Dataset\n    Dataset = 1\nprint(Dataset)\n",
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
    ("from transformers import BertModel, BertConfig, DNATokenizer\n", True),  # DNABERT's fork
    ("from transformers import DPOTrainer\n", True),  # trl's
    ("from transformers import AdamW, TFBertModel, modeling_bert, WarmupLinearSchedule\n", False),  # removed, a module, 2.x
    ("from transformers.models.bert import DNATokenizer\n", False),  # no list of a submodule: unknown
])
def test_imports_of_names_no_release_has(tmp_path, source, stops):
    assert (stop_statement(facts_at(tmp_path / "train.py", source)) is not None) is stops


def test_a_module_of_the_same_name_beside_the_file_is_what_it_imports(tmp_path):
    (tmp_path / "datasets").mkdir()
    facts = facts_at(tmp_path / "train.py", "from datasets import tokenized_datasets\n")
    assert stop_statement(facts) is None
    assert str(tmp_path / "datasets.py") in facts.inputs  # looked for: a cached result notices it appear
    (tmp_path / "transformers.py").write_text("DNATokenizer = object\n")
    assert stop_statement(facts_at(tmp_path / "run.py", "from transformers import BertModel, DNATokenizer\n")) is None


def scope_stops(source: str, runtime: Runtime = Runtime()) -> list[tuple[str, str, bool]]:
    """(scope, statement, every_rule) of each stop."""
    source = textwrap.dedent(source)
    module = cst.parse_module(source)
    return [("module" if isinstance(s.scope, cst.Module) else s.scope.name.value,
             module.code_for_node(s.statement).strip(), s.every_rule)
            for s in run_stops(Facts(module, source, Path("train.py"), runtime))]


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
    "from datasets import load_dataset\nn = 0\nds = load_dataset('x')['train'].train_test_split(test_size=n)\n",  # not a literal
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


# A module-level read before the module's scope binds the name: (program, the statement it stops at). Each program runs
# for real (`python -c`) and raises NameError at that statement.
READ_FIRST = [
    ("x.eval()\nprint(x)\nx = 1\n", "x.eval()"),
    ("import random\ntrain, test = train.split()\ntrain = random.random()\n", "train, test = train.split()"),  # its own target
    ("rows = [rows, 1]\n", "rows = [rows, 1]"),
    ("def load():\n    data = 1\n    return data\nprint(data)\ndata = load()\n", "print(data)"),  # a function's own `data`
    ("def f(Dataset):\n    return Dataset\nprint(Dataset)\n", "print(Dataset)"),  # a parameter binds only the function's
    ("if __name__ == '__main__':\n    main()\ndef main():\n    pass\n", "main()"),
    ("class A(Base):\n    pass\nclass Base:\n    pass\n", "class A(Base):\n    pass"),
    ("@register\ndef f():\n    pass\ndef register(g):\n    return g\n", "@register\ndef f():\n    pass"),
    ("def f(n=size):\n    return n\nsize = 3\n", "def f(n=size):\n    return n"),
    ("g = lambda x: x\nprint(g(1), x)\nx = 2\n", "print(g(1), x)"),  # a lambda's parameter is its own
    ("import os\ndef f():\n    global seen\n    seen = 1\nprint(os.sep, later)\nlater = 1\n", "print(os.sep, later)"),
]

# Reads that may find the name bound: no stop.
READ_MAYBE = [
    "x = 1\nprint(x)\nx = 2\n",
    "def f():\n    global x\n    x = 1\nf()\nprint(x)\nx = 2\n",  # a function declares it global
    "import os\nif os.environ:\n    x = 1\nprint(x)\nx = 2\n",  # bound before under a branch
    "import os\nfor x in os.environ:\n    pass\nprint(x)\nx = 2\n",
    "try:\n    import yaml\nexcept ImportError:\n    yaml = None\nprint(yaml)\n",
    "y = (x := 1) + x\nx = 2\n",  # bound by the statement's own value first
    "print((x := 1), x)\nx = 2\n",
    "class A:\n    x = 1\nprint(x)\nx = 2\n",  # a class's body: counted as the module's (too early, never too late)
    "print([x for x in range(2)], x)\nx = 1\n",  # a comprehension's target: the same
    "print(len)\nlen = 1\n",  # a builtin until it is bound
    "import a.b\nprint(a)\n",
    "with open('f') as f, open(f.name) as g:\n    pass\n",  # the same compound statement binds it first
    "if __name__ == '__main__':\n    x = 1\n    x = [x, 2]\n    y = x\n",  # the main block's statements bind in order
]


def test_reads_before_the_first_binding_stop():
    assert [stop(source) for source, _ in READ_FIRST] == [expected for _, expected in READ_FIRST]
    assert [stop(source) for source in READ_MAYBE] == [None] * len(READ_MAYBE)


def test_reads_before_the_first_binding_raise_name_error_when_run():
    """Each program of READ_FIRST run for real by `python -c` raises NameError on the first line of its stop."""
    for source, expected in READ_FIRST:
        result = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=30)
        last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
        line = source.splitlines().index(expected.splitlines()[0].strip()) + 1 if expected.splitlines()[0] in source.splitlines() \
            else next(i for i, text in enumerate(source.splitlines(), 1) if text.strip() == expected.splitlines()[0].strip())
        assert last.startswith("NameError"), (source, result.stderr)
        assert f'line {line}' in result.stderr, (source, result.stderr)


# The driver that runs generated programs: each top-level statement (each of the main block's) by itself in the
# program's namespace, what an earlier one raised ignored, so a statement's own error shows whatever ran before it.
_DRIVER = """
import ast, contextlib, io, json, sys
out = []
for source in json.load(sys.stdin):
    namespace = {"__name__": "__main__"}
    statements = []
    for stmt in ast.parse(source).body:
        main = isinstance(stmt, ast.If) and ast.unparse(stmt.test) in ("__name__ == '__main__'",)
        statements += stmt.body if main else [stmt]
    raised = {}
    for stmt in statements:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(ast.Module([stmt], []), "<program>", "exec"), namespace)
        except Exception as error:
            raised[stmt.lineno] = type(error).__name__
    out.append(raised)
json.dump(out, sys.stdout)
"""


def _program(rng: random.Random) -> str:
    """A few module-level statements that bind and read `a`, `b`, `c` in every way the order walk weighs."""
    lines = []
    for k in range(rng.randint(2, 7)):
        n, m = rng.choice("abc"), rng.choice("abc")
        f = f"f{rng.randint(0, 2)}"
        lines += rng.choice([
            [f"{n} = {k}"], [f"{n} = [{m}, {k}]"], [f"print({k}, {m})"], [f"{n}, {m} = {m}, {k}"],
            [f"def {f}():", f"    {n} = {k}", f"    return {n}"], [f"def {f}():", f"    global {n}", f"    {n} = {k}"], [f"def {f}():", f"    global {n}", f"    {n} = {k}", f"{f}()"],
            [f"def {f}({n}={m}):", f"    return {n}"], [f"{f}()"], [f"if {k} % 2:", f"    {n} = {k}"],
            [f"for {n} in range({k} % 2):", "    pass"], [f"class C{k}:", f"    {n} = {k}"],
            [f"{m} = [{n} for {n} in range({k})]"], [f"print({k}, ({n} := {k}), {m})"], [f"{n} = {m} if {k} % 2 else {k}"],
            [f"import os as {n}"], [f"g{k} = lambda {n}: {n}"], [f"{n} = {m} = {k}"],
            ["if __name__ == '__main__':", f"    print({k}, {m})", f"    {n} = {k}", f"    {m} = [{n}, {k}]"],
        ])
    return "\n".join(lines) + "\n"


def test_generated_programs_raise_name_error_where_they_stop():
    """On 600 generated programs, every module stop that bertlint finds is a statement that raises NameError when it
    runs, whatever the statements before it did."""
    rng = random.Random(27)
    programs = list(dict.fromkeys(_program(rng) for _ in range(600)))
    stops = [stop(source) for source in programs]
    result = subprocess.run([sys.executable, "-c", _DRIVER], input=json.dumps(programs), capture_output=True, text=True, timeout=120)
    raised = json.loads(result.stdout)
    checked = 0
    for source, found, errors in zip(programs, stops, raised):
        if found is None:
            continue
        line = [text.strip() for text in source.splitlines()].index(found.splitlines()[0].strip()) + 1
        assert errors.get(str(line)) == "NameError", (source, found, errors)
        checked += 1
    assert checked > 100  # most programs read some name first


REFUSED = "import sys\nfrom transformers import AutoTokenizer\nnames = sys.argv\n"  # `AutoTokenizer(name)` raises OSError whenever it runs


@pytest.mark.parametrize(("source", "expected"), [
    # a loop's first pass (or a `with`'s body) that certainly raises: the run probably stops there
    (REFUSED + "for name in names:\n    tok = AutoTokenizer(name)\n    print(tok)\nprint(1)\n", [("module", "tok = AutoTokenizer(name)", False)]),
    (REFUSED + "import torch\nwith torch.no_grad():\n    tok = AutoTokenizer('bert-base-uncased')\n", [("module", "tok = AutoTokenizer('bert-base-uncased')", False)]),
    (REFUSED + "while True:\n    for name in names:\n        tok = AutoTokenizer(name)\n", [("module", "tok = AutoTokenizer(name)", False)]),
    (REFUSED + "def train():\n    for name in names:\n        tok = AutoTokenizer(name)\ntrain()\n", [("train", "tok = AutoTokenizer(name)", False)]),  # no stop of its caller
    # a certain stop after the loop is the module's stop
    (REFUSED + "for name in names:\n    tok = AutoTokenizer(name)\ntok = AutoTokenizer('gpt2')\n", [("module", "tok = AutoTokenizer('gpt2')", True)]),
    # bodies that may swallow the raise, or run after a pass that may not come: none
    (REFUSED + "import contextlib\nwith contextlib.suppress(OSError):\n    tok = AutoTokenizer('bert-base-uncased')\n", []),
    (REFUSED + "for name in names:\n    if name:\n        tok = AutoTokenizer(name)\n", []),
    (REFUSED + "for name in names:\n    pass\nelse:\n    tok = AutoTokenizer('x')\n", []),
    (REFUSED + "try:\n    for name in names:\n        tok = AutoTokenizer(name)\nexcept OSError:\n    pass\n", []),
    (REFUSED + "async def f():\n    async for name in names:\n        tok = AutoTokenizer(name)\n", []),
])
def test_a_loop_whose_first_pass_raises_probably_stops(source, expected):
    assert scope_stops(source) == expected


def test_findings_after_a_loop_whose_first_pass_raises(lint):
    """After a probable stop only the findings that say their own line fails go (BL101 here), in the rest of the loop's
    body and after it; those before it, in its first pass, stay."""
    source = ("import sys\nfrom transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-uncased')\nnames = sys.argv\n"
              "for name in names:\n    a = tok(['x', 'y z'], pad_to_max_length=True, max_length=8)\n"
              "    bad = AutoTokenizer(name)\n    b = tok(['x', 'y z'], pad_to_max_length=True, max_length=8)\n"
              "c = tok(['x', 'y z'], pad_to_max_length=True, max_length=8)\n")
    assert [(f.code, f.line) for f in lint(source, transformers_version="5.24")] == [("BL101", 6)]


ARGS = "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--mode', default='train')\nargs = parser.parse_args()\n"


@pytest.mark.parametrize(("source", "expected"), [
    # the arm the run as written takes (a command-line default decides it: the user may pick another) probably stops
    (REFUSED + ARGS + "if args.mode == 'train':\n    tok = AutoTokenizer('bert-base-uncased')\nprint(1)\n", [("module", "tok = AutoTokenizer('bert-base-uncased')", False)]),
    (REFUSED + ARGS + "if args.mode == 'eval':\n    pass\nelif args.mode == 'train':\n    tok = AutoTokenizer('x')\n", [("module", "tok = AutoTokenizer('x')", False)]),
    (REFUSED + ARGS + "if args.mode == 'eval':\n    pass\nelse:\n    tok = AutoTokenizer('x')\n", [("module", "tok = AutoTokenizer('x')", False)]),
    (REFUSED + "import pandas as pd\nMODE = 'train'\nif MODE == 'train':\n    a = pd.read_csv('a.csv')\n    b = pd.read_csv('b.csv')\n    a = a.append(b)\n",
     [("module", "a = a.append(b)", False)]),  # a DataFrame bound in the same arm before the read (pandas >= 2.0)
    (REFUSED + ARGS + "if args.mode == 'eval':\n    tok = AutoTokenizer('x')\n", []),  # the arm not taken
    (REFUSED + "import os\nif os.environ.get('MODE') == 'train':\n    tok = AutoTokenizer('x')\n", []),  # a test not known
])
def test_the_arm_the_run_as_written_takes_probably_stops(source, expected):
    assert scope_stops(source, Runtime(releases=(("pandas", (2, 2, 3)),))) == expected


MODULE = """import torch
from torch import nn
from transformers import BertForQuestionAnswering

ids = torch.ones(2, 8, dtype=torch.long)


class SpanModel(BASE):
    def __init__(self):
        super().__init__()
        self.bert = BertForQuestionAnswering.from_pretrained("bert-large-uncased")

    def forward(self, ids):
        start_logits, end_logits = self.bert(ids)
        return start_logits.masked_fill(ids == 0, -1e20), end_logits
MORE
model = MADE
start, end = model(ids)
print(start)
"""


def module_source(base="nn.Module", more="", made="SpanModel()") -> str:
    return MODULE.replace("BASE", base).replace("MORE", more).replace("MADE", made)


@pytest.mark.parametrize("base", ["nn.Module", "torch.nn.Module", "transformers.BertPreTrainedModel"])
def test_calling_the_file_s_module_runs_its_forward_and_stops_where_it_stops(base):
    """`model(ids)` runs `SpanModel.forward` (torch's `Module.__call__`), whose unpacked `QuestionAnsweringModelOutput`
    (5.x) binds the str "start_logits": `.masked_fill` raises AttributeError, and so does the call."""
    source = module_source(base).replace("import torch\n", "import torch\nimport transformers\n")
    assert stop(source, Runtime(releases=(("transformers", (5, 24, 0)),))) == "start, end = model(ids)"


@pytest.mark.parametrize("variant", [
    {"more": "\n    def __call__(self, ids):\n        return ids, ids\n"},  # its own __call__ runs instead
    {"made": "nn.DataParallel(SpanModel())"},  # a wrapper's call: not known here
    {"base": "nn.Module, object"},  # two bases
    {"made": "SpanModel() if torch.cuda.is_available() else torch.load('model.pt')"},  # may be another object
])
def test_a_call_that_may_not_run_that_forward_is_no_stop(variant):
    assert stop(module_source(**variant), Runtime(releases=(("transformers", (5, 24, 0)),))) is None


def test_a_forward_that_gets_tuples_is_no_stop():
    source = module_source().replace("self.bert(ids)", "self.bert(ids, return_dict=False)")
    assert stop(source, Runtime(releases=(("transformers", (5, 24, 0)),))) is None


LOOP = """import torch
from torch import nn
from transformers import BertForQuestionAnswering


class SpanModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = BertForQuestionAnswering.from_pretrained("bert-large-uncased")

    def forward(self, ids):
        start_logits, end_logits = self.bert(ids)
        return start_logits.masked_fill(ids == 0, -1e20), end_logits


def train(model, loader, flag):
    for ids in loader:
        start, end = model(ids)
        BODY
    AFTER


train(SpanModel(), torch.load("batches.pt"), torch.load("flag.pt"))
"""


@pytest.mark.parametrize("body, after, expected", [
    ("start.sum().backward()", "pass", True),  # in the loop, after the raise: no pass gets there
    ("pass", "torch.ones(1, requires_grad=True).sum().backward()", False),  # after the loop: runs where the loop runs no pass
    ("if flag:\n            start.sum().backward()", "pass", True),
])
def test_a_statement_after_a_certain_raise_of_its_loop_never_runs(body, after, expected):
    from bertlint.facts.stops import raises_before
    source = LOOP.replace("BODY", body).replace("AFTER", after)
    module = cst.parse_module(source)
    facts = Facts(module, source, Path("train.py"), Runtime(releases=(("transformers", (5, 24, 0)),)))
    backward = next(c for c in facts.calls if c.method == "backward")
    assert raises_before(facts, backward.node, backward.scope.node) is expected


def test_a_stop_among_the_scope_s_own_statements_is_liveness_s():
    """`model(ids)` outside any loop stops `train` where it stands: what follows never runs (liveness), not asked here."""
    from bertlint.facts.stops import raises_before
    source = LOOP.replace("    for ids in loader:\n        start, end = model(ids)\n        BODY\n", "    start, end = model(loader)\n").replace("AFTER", "loader.sum().backward()")
    module = cst.parse_module(source)
    facts = Facts(module, source, Path("train.py"), Runtime(releases=(("transformers", (5, 24, 0)),)))
    backward = next(c for c in facts.calls if c.method == "backward")
    assert stop_statement(facts) is not None and raises_before(facts, backward.node, backward.scope.node) is False


def test_a_call_in_an_arm_not_known_to_run_holds_nothing_after_the_arm():
    from bertlint.facts.stops import raises_before
    source = LOOP.replace("    for ids in loader:\n        start, end = model(ids)\n        BODY\n", "    if flag:\n        start, end = model(loader)\n").replace("AFTER", "loader.sum().backward()")
    module = cst.parse_module(source)
    facts = Facts(module, source, Path("train.py"), Runtime(releases=(("transformers", (5, 24, 0)),)))
    backward = next(c for c in facts.calls if c.method == "backward")
    assert raises_before(facts, backward.node, backward.scope.node) is False
