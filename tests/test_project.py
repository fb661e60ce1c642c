"""Modules of the file's own project (`facts/project.py`): what an import of one binds, proven against execution.

Each case writes a small project, runs its entry point for real (`python path/main.py`, or `python -m pkg.main` from
the project's root, as its layout needs), where `probe(x)` prints `repr(x)`, and asks the value layer what the
argument of each `probe` call holds: the value printed, or UNKNOWN, never another value. Cases marked `known` must
be known (the mechanism works); the others only must not be wrong.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bertlint import runner
from bertlint.engine import positions_of
from bertlint.facts.core import Facts
from bertlint.facts.nodes import UNKNOWN, dotted

PROBE = "def probe(x):\n    print(repr(x))\n"

CASES = {
    "from-import-constant": (True, "main.py", {
        "config.py": 'MODEL_NAME = "bert-base-uncased"\nLR = 5e-2\nSIZES = (8, 16)\n',
        "main.py": "from config import MODEL_NAME, LR, SIZES\nprobe(MODEL_NAME)\nprobe(LR)\nprobe(SIZES[1])\n"}),
    "module-attribute": (True, "main.py", {
        "settings.py": "EPOCHS = 3\nLR = 2e-5 * 2\n",
        "main.py": "import settings\nimport settings as s\nprobe(settings.LR)\nprobe(s.EPOCHS)\n"}),
    "class-attribute": (True, "main.py", {
        "config.py": "class Config:\n    LR = 3e-1\n    NAME = 'roberta-base'\n\n    def show(self):\n        return self.LR\n",
        "main.py": "from config import Config\nprobe(Config.LR)\nprobe(Config.NAME)\n"}),
    "dataclass-default": (True, "main.py", {
        "config.py": "from dataclasses import dataclass\n\n@dataclass\nclass Cfg:\n    lr: float = 1e-3\n    name: str = 'gpt2'\n",
        "main.py": "from config import Cfg\nprobe(Cfg.lr)\nprobe(Cfg.name)\n"}),
    "dict-config": (True, "main.py", {
        "config.py": "CONFIG = {'lr': 4e-5, 'batch_size': 16}\n",
        "main.py": "from config import CONFIG\nprobe(CONFIG['lr'])\nCONFIG['lr'] = 1e-3\nprobe(CONFIG['lr'])\n"}),
    "package-relative": (True, "-m pkg.main", {
        "pkg/__init__.py": "",
        "pkg/config.py": "LR = 7e-5\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/deep.py": "NAME = 'deep'\n",
        "pkg/main.py": "from .config import LR\nfrom . import config\nfrom .sub.deep import NAME\nprobe(LR)\nprobe(config.LR)\nprobe(NAME)\n"}),
    "package-from-root": (True, "-m src.train", {
        "src/__init__.py": "",
        "src/config.py": "MODEL = 'distilbert-base-uncased'\n",
        "src/train.py": "from src.config import MODEL\nfrom src import config\nprobe(MODEL)\nprobe(config.MODEL)\n"}),
    "chained": (True, "main.py", {
        "base.py": "LR = 1e-4\n",
        "config.py": "from base import LR\nSCALED = LR * 10\n",
        "main.py": "from config import LR, SCALED\nprobe(LR)\nprobe(SCALED)\n"}),
    "rebound-by-a-global": (False, "main.py", {
        "config.py": "LR = 1e-3\n\ndef fast():\n    global LR\n    LR = 1e-1\n",
        "main.py": "import config\nconfig.fast()\nprobe(config.LR)\n"}),
    "rebound-by-the-importer": (False, "main.py", {
        "config.py": "LR = 1e-3\nclass C:\n    LR = 2e-3\n",
        "main.py": "import config\nfrom config import C\nconfig.LR = 5e-1\nC.LR = 6e-1\nprobe(config.LR)\nprobe(C.LR)\n"}),
    "changed-in-the-module": (False, "main.py", {
        "config.py": "import os\nCFG = {'lr': 1e-3}\nLR = 1e-3\nif os.environ.get('FAST'):\n    LR = 1e-1\n\ndef bump(c):\n    c['lr'] = 0.5\n\nbump(CFG)\nclass K:\n    LR = 1\n\n    @classmethod\n    def fast(cls):\n        cls.LR = 9\n\nK.fast()\n",
        "main.py": "from config import CFG, LR, K\nprobe(CFG['lr'])\nprobe(LR)\nprobe(K.LR)\n"}),
    "class-with-a-base": (False, "main.py", {
        "config.py": "class Base:\n    LR = 1\nclass Config(Base):\n    pass\nclass Meta(type):\n    LR = 3\nclass M(metaclass=Meta):\n    pass\n",
        "main.py": "from config import Config, M\nprobe(Config.LR)\nprobe(M.LR)\n"}),
    "command-line-in-the-module": (False, "main.py", {
        "config.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--lr', type=float, default=1e-3)\nARGS = p.parse_args()\nLR = ARGS.lr\n",
        "main.py": "from config import LR\nprobe(LR)\n"}),
    "not-constants": (False, "main.py", {
        "config.py": "import os\n\n(N := 3)\nLR2 = 1\nLR2 += 1\nfor STEP in range(2):\n    pass\nHOME = os.environ.get('HOME', '/root')\n",
        "main.py": "from config import N, LR2, STEP, HOME\nprobe(N)\nprobe(LR2)\nprobe(STEP)\nprobe(HOME)\n"}),
    "functions": (True, "main.py", {
        "utils.py": "LR = 1e-3\nLR = LR * 2\nNAME = 'bert-base-uncased'\n\ndef get_lr():\n    return LR\n\ndef same(x, scale=2):\n    return x * scale\n\n"
                    "def pair(a):\n    return a, NAME\n\ndef pad_sequences(ids, maxlen):\n    return [x + [0] * (maxlen - len(x)) for x in ids]\n\n"
                    "def twice(x):\n    return same(x) + same(x, 1)\n\ndef maker(k):\n    def inner(y):\n        return y + k\n    return inner\n",
        "main.py": "from utils import get_lr, same, pair, pad_sequences, twice, maker\nimport utils\nimport functools\n"
                   "probe(get_lr())\nprobe(same(3))\nprobe(utils.same('a', scale=3))\nprobe(pair(4)[1])\nprobe(pad_sequences([[1, 2]], 4))\n"
                   "probe(twice(5))\nprobe(maker(1)(2))\nprobe(functools.partial(same, scale=4)(2))\n"}),
    "objects-a-function-makes": (True, "main.py", {  # read by the module's own library models, not by the importer's
        "opts.py": "import argparse\n\ndef get_args():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--lr', type=float, default=2e-5)\n    return parser.parse_args()\n",
        "main.py": "import argparse\nfrom opts import get_args\nparser = argparse.ArgumentParser()\nparser.add_argument('--lr', type=float, default=0.1)\n"
                   "mine = parser.parse_args()\nargs = get_args()\nprobe(args.lr)\nprobe(mine.lr)\n"}),
    "objects-of-a-module-class": (False, "main.py", {  # left out: this file's model knows its own classes only
        "utils.py": "class Box:\n    def __init__(self):\n        self.v = 3\n\n    def get(self):\n        return self.v\n\ndef make():\n    return Box()\n\ndef pair():\n    return Box(), 1\n",
        "main.py": "from utils import make, pair\n\ndef get():\n    return 0\n\nb = make()\nprobe(b.get())\nc, n = pair()\nprobe(c.get())\nprobe(c.v)\n"}),
    "functions-the-importer-changes": (False, "main.py", {
        "utils.py": "LR = 1e-3\nVOCAB = ['a']\n\ndef get_lr():\n    return LR\n\ndef size():\n    return len(VOCAB)\n\n"
                    "def deco(f):\n    return lambda: 9\n\n@deco\ndef wrapped():\n    return 1\n",
        "other.py": "X = 1\n\ndef get():\n    return X\n\ndef bump():\n    global X\n    X = 2\n",
        "main.py": "import utils\nfrom utils import get_lr, VOCAB, size, wrapped\nimport other\nutils.LR = 0.5\nprobe(get_lr())\nVOCAB.append('b')\nprobe(size())\nprobe(wrapped())\n"
                   "other.bump()\nprobe(other.get())\n"}),
    "cycle": (True, "main.py", {
        "a.py": "import b\nX = 1\n",
        "b.py": "import a\nY = 2\n",
        "main.py": "import a\nimport b\nprobe(a.X)\nprobe(b.Y)\n"}),
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _probes(path: Path) -> list:
    source = path.read_text()
    facts = Facts(cst.parse_module(source), source, path)
    return [facts.evaluate(call.node.args[0].value, call.scope, call.order) for call in facts.calls if dotted(call.node.func) == "probe"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_import_of_the_project_binds_what_the_run_binds(tmp_path: Path, case: str):
    known, entry, files = CASES[case]
    files = dict(files)
    main = entry.split()[-1].replace(".", "/") + ".py" if entry.startswith("-m") else entry
    files[main] = PROBE + files[main]
    _write(tmp_path, files)
    command = [sys.executable, *entry.split()] if entry.startswith("-m") else [sys.executable, str(tmp_path / main)]
    ran = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"})
    printed = [eval(line) for line in ran.stdout.splitlines()]  # noqa: S307 - reprs of constants this test wrote
    answers = _probes(tmp_path / main)
    assert len(answers) == len(printed)
    for answer, value in zip(answers, printed):
        assert answer is UNKNOWN or answer == value, (case, answer, value)
    if known:
        assert UNKNOWN not in answers[: 1 if case == "dict-config" else None], (case, answers)
    else:
        assert all(answer is UNKNOWN for answer in answers), (case, answers)


def test_a_module_not_in_the_project_is_not_looked_for(tmp_path: Path):
    """A local file named like a library or a standard module is not what bertlint reads (the file's other folders
    neither: `from utils.config import X` in `scripts/train.py` works only on a `sys.path` bertlint cannot see)."""
    _write(tmp_path, {"json.py": "LR = 1\n", "torch.py": "LR = 2\n", "utils/config.py": "LR = 3\n",
                      "scripts/train.py": PROBE + "from json import LR\nprobe(LR)\nfrom utils.config import LR\nprobe(LR)\n",
                      "main.py": PROBE + "from torch import LR\nprobe(LR)\nimport missing\nprobe(missing.LR)\n"})
    assert _probes(tmp_path / "main.py") == [UNKNOWN, UNKNOWN]
    assert _probes(tmp_path / "scripts" / "train.py") == [UNKNOWN, UNKNOWN]


TRAIN = """\
import torch
from transformers import AutoModelForSequenceClassification
from config import MODEL_NAME, LR

model = AutoModelForSequenceClassification.from_pretrained(MODEL_NAME, num_labels=2)
loader = torch.utils.data.DataLoader(torch.load("train.pt"), batch_size=8)
optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
for batch in loader:
    optimizer.zero_grad()
    model(**batch).loss.backward()
    optimizer.step()
"""


def test_the_rules_see_it_and_the_cache_notices_the_module_change(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.bertlint]\ntransformers-version = "5.23"\npreview = true\n')
    _write(tmp_path, {"train.py": TRAIN, "config.py": 'MODEL_NAME = "bert-base-uncased"\nLR = 5e-2\n'})
    first = runner.run([tmp_path / "train.py"], jobs=1)
    assert [(f.code, f.line) for f in first.findings] == [("BL301", 7)]
    (tmp_path / "config.py").write_text('MODEL_NAME = "bert-base-uncased"\nLR = 3e-5\n')
    assert runner.run([tmp_path / "train.py"], jobs=1).findings == []
    (tmp_path / "config.py").unlink()
    assert runner.run([tmp_path / "train.py"], jobs=1).findings == []


def test_a_notebook_reads_the_modules_beside_it(tmp_path: Path):
    import json

    (tmp_path / "pyproject.toml").write_text('[tool.bertlint]\ntransformers-version = "5.23"\npreview = true\n')
    cells = [TRAIN.split("model =")[0], "model =" + TRAIN.split("model =")[1]]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": cell, "outputs": [], "execution_count": None} for cell in cells],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    _write(tmp_path, {"nb/train.ipynb": json.dumps(notebook), "nb/config.py": 'MODEL_NAME = "bert-base-uncased"\nLR = 5e-2\n'})
    found = runner.run([tmp_path / "nb" / "train.ipynb"], jobs=1).findings
    assert [(f.code, f.cell, f.line) for f in found] == [("BL301", 2, 3)]


# ---- generated projects: a module's top level built from the ways real config modules bind and change names ----

CONSTANTS = st.sampled_from(["1e-3", "2e-5", "0.5", "3", "'bert-base-uncased'", "'gpt2'", "None", "True", "(8, 16)"])
NAMES = ("A", "B", "C")


@st.composite
def _statement(draw) -> str:
    name, other, value = draw(st.sampled_from(NAMES)), draw(st.sampled_from(NAMES)), draw(CONSTANTS)
    return draw(st.sampled_from([
        f"{name} = {value}",
        f"{name} = {other} if '{other}' in dir() else {value}",
        f"{name} = {value}\nif FLAG:\n    {name} = {draw(CONSTANTS)}",
        f"if os.environ.get('FAST'):\n    {name} = {value}",
        f"def set_{name}():\n    global {name}\n    {name} = {value}",
        f"def set_{name}():\n    global {name}\n    {name} = {value}\nset_{name}()",
        f"{name} = 1\n{name} += 2",
        f"for {name} in range(2):\n    pass",
        f"class K:\n    {name} = {value}",
        f"class K:\n    {name} = {value}\n\n    @classmethod\n    def fast(cls):\n        cls.{name} = {draw(CONSTANTS)}\nK.fast()",
        f"K.{name} = {value}",
        f"from base import {name}",
        f"D = {{'lr': {value}}}",
        f"D = {{'lr': {value}}}\n\ndef bump():\n    D['lr'] = {draw(CONSTANTS)}\nbump()",
        f"E = D\nE['lr'] = {value}",
        f"def get_{name}():\n    return {name}",  # a function of the module: a closure over its global, its parameter,
        f"def same(x):\n    return x",  # a tuple, a constant, the module's dict
        f"def pair(x):\n    return x, {value}",
        f"def const():\n    return {value}",
        f"def lr():\n    return D['lr']",
    ]))


@st.composite
def _project(draw) -> dict[str, str]:
    config = "import os\nFLAG = " + draw(st.sampled_from(["True", "False"])) + "\n" + "\n".join(draw(st.lists(_statement(), min_size=1, max_size=5))) + "\n"
    bound = {target.id for node in ast.parse(config).body for target in ast.walk(node) if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store)}
    bound |= {node.name for node in ast.parse(config).body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    base = "\n".join(f"{name} = {draw(CONSTANTS)}" for name in NAMES) + "\n"
    lines = [f"import base\nbase.{draw(st.sampled_from(NAMES))} = {draw(CONSTANTS)}"] if draw(st.booleans()) else []  # before config imports it
    lines.append("import config")
    for name in sorted(bound & {*NAMES, "D", "K"}):
        change = draw(st.sampled_from(["", "config.{} = {}", "setattr(config, '{}', {})", "import config as alias\nalias.{} = {}"]))
        if change:  # the importer changes the module's name
            lines.append(change.format(name, draw(CONSTANTS)))
        read = {"D": "['lr']", "K": ".A"}.get(name, "")
        lines += [f"probe(config.{name}{read})", f"from config import {name}", f"probe({name}{read})"]
    if "D" in bound and draw(st.booleans()):
        lines.append(f"config.D['lr'] = {draw(CONSTANTS)}")  # the importer changes the module's dict in place
    for function, call in {**{f"get_{name}": "()" for name in NAMES}, "same": f"({draw(CONSTANTS)})", "pair": f"({draw(CONSTANTS)})[1]", "const": "()", "lr": "()"}.items():
        if function in bound:
            lines += [f"probe(config.{function}{call})", f"from config import {function}", f"probe({function}{call})"]
    return {"base.py": base, "config.py": config, "main.py": PROBE + "\n".join(lines) + "\n"}


@settings(max_examples=80, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(_project())
def test_generated_projects_never_give_another_value(tmp_path_factory, files):
    root = tmp_path_factory.mktemp("project")
    _write(root, files)
    ran = subprocess.run([sys.executable, str(root / "main.py")], cwd=root, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    if ran.returncode != 0:
        return  # a name the run never binds (an arm not taken), an attribute a class lacks: nothing to compare
    printed = [eval(line) for line in ran.stdout.splitlines()]  # noqa: S307 - reprs of constants this test wrote
    answers = _probes(root / "main.py")
    assert len(answers) == len(printed)
    for answer, value in zip(answers, printed):
        assert answer is UNKNOWN or answer == value, (files["config.py"], files["main.py"], answer, value)


def test_an_import_is_looked_up_once_however_often_its_name_is_read(tmp_path: Path):
    """Each read of an imported name asks what the import binds: the files looked for are looked for once, and the
    cache's list of what the lint read holds each once."""
    _write(tmp_path, {"config.py": "LR = 1e-3\n", "main.py": "import plotting\nfrom config import LR\n" + "plotting.show(LR)\n" * 20})
    source = (tmp_path / "main.py").read_text()
    facts = Facts(cst.parse_module(source), source, tmp_path / "main.py")
    assert all(facts.evaluate(call.node.args[0].value, call.scope, call.order) == 1e-3 for call in facts.calls if call.method == "show")
    assert all(facts.evaluate(call.node.func.value, call.scope, call.order) is UNKNOWN for call in facts.calls if call.method == "show")
    assert len(facts.inputs) == len(set(facts.inputs)) and any(path.endswith("config.py") for path in facts.inputs)


HELPERS = '"""Helpers."""' + "\n" * 40 + '''
from transformers import AutoModelForSequenceClassification


def load_model():
    return AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)


def ids_of(tokenizer, texts):
    return tokenizer(texts, padding="max_length", max_length=32, return_tensors="pt")["input_ids"]
'''


def test_a_finding_whose_evidence_is_in_a_project_module_is_placed_in_the_linted_file(tmp_path: Path):
    """A project module's function evaluated for the file's call gives values made by the module's nodes (the model's
    load, the tokenizer call that pads): BL201 is placed at the file's argument, BL503 at the file's forward, and no
    finding points into the module (its code lies past the file's end). A rule reporting one of the module's nodes is
    dropped: the engine places only the linted tree's nodes (`positions_of` has none for another tree's)."""
    (tmp_path / "pyproject.toml").write_text('[tool.bertlint]\ntransformers-version = "5.23"\npreview = true\n')
    main = ("from transformers import AutoTokenizer\nfrom helpers import load_model, ids_of\n"
            "model = load_model()\ntok = AutoTokenizer.from_pretrained('roberta-base')\nlogits = model(ids_of(tok, ['a', 'b b'])).logits\n")
    _write(tmp_path, {"helpers.py": HELPERS, "main.py": main})
    found = runner.run([tmp_path / "main.py"], jobs=1).findings
    assert [(f.code, f.line, f.column) for f in found] == [("BL503", 5, 10), ("BL201", 5, 16)]
    assert all(f.source_line == main.splitlines()[f.line - 1] for f in found)
    facts = Facts(cst.parse_module(main), main, tmp_path / "main.py")
    load = next(call for call in facts.calls if dotted(call.node.func) == "load_model")
    made = facts.evaluate(load.node, load.scope, load.order).call.node  # `from_pretrained(...)` in helpers.py
    assert "bert-base-uncased" in cst.Module([]).code_for_node(made) and positions_of(facts.module, [made], main) == {}
