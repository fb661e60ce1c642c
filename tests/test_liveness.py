"""facts.liveness: the one fact of which code runs. The module-level definitions that never run (the engine drops what
rules find in them: in a script, or a module whose import stops), which code the run as written never reaches, in a
script or a module (`unreached`), and what a stop cuts off: the statements after it and the functions only they name."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from bertlint.facts import NEVER, PROBABLY_NOT, Facts, Runtime, is_script, liveness, run_stops, unreached, walk

MAIN = '\nif __name__ == "__main__":\n    main()\n'


def dead(source: str, path: str = "train.py", runtime: Runtime = Runtime()) -> list[str]:
    source = textwrap.dedent(source)
    found = liveness(Facts(cst.parse_module(source), source, Path(path), runtime)).definitions()
    return [d.name.value for d, reach in found.items() if reach == NEVER]


@pytest.mark.parametrize(("body", "expected"), [
    ("def main(): pass\ndef unused(): pass\n", ["unused"]),
    ("def main(): helper()\ndef helper(): pass\n", []),
    ("def main(): pass\ndef prepare(): step()\ndef step(): pass\n", ["prepare", "step"]),  # named only by dead code
    ("def main(): pass\ndef again(n): return again(n - 1)\n", ["again"]),  # its own name does not keep it alive
    ("def main(): pass\n@app.command()\ndef cli(): pass\n", []),  # decorated: registered somewhere
    ("def main(): pass\ndef unused(): pass\n__all__ = ['unused']\n", []),  # a word of a string
    ("def main(): return ds['unused'], {'unused': 1}\ndef unused(): pass\n", ["unused"]),  # a key of data names nothing
    ("'''Calls unused() once.'''\ndef main(): pass\ndef unused(): pass\n", ["unused"]),  # nor a docstring
    ("def main(): pass\ndef unused(): pass\nHANDLERS = {'x': unused}\n", []),  # passed as a value
    ("def main(): pass\ndef unused(): pass\nclass Runner:\n    def run(self): return unused()\n", ["unused", "Runner"]),  # a class never named
    ("def main(): Runner().run()\ndef unused(): pass\nclass Runner:\n    def run(self): return unused()\n", []),  # from a class named
    ("def main(): pass\ndef unused(): pass\nimport fire\nfire.Fire()\n", []),  # the namespace is the command line
    ("def main(): pass\ndef unused(): pass\nglobals()['un' + 'used']()\n", []),
    ("def main(): pass\ndef unused(): pass\ndef never(): return globals()\n", ["unused", "never"]),  # a namespace handed over by dead code
    ("def main(): model.eval()\ndef unused(): pass\n", ["unused"]),  # a module's mode switch is no builtin `eval`
    # unpickling finds classes by the names the pickle holds: every class may run, no function
    ("import pickle\ndef main(): return pickle.load(f)(x)\nclass Net:\n    def forward(self): pass\ndef unused(): pass\n", ["unused"]),
    ("import torch\ndef main(): return torch.load(p)\nclass Net:\n    def forward(self): pass\n", []),
    ("import json\ndef main(): return json.load(f)\nclass Net:\n    def forward(self): pass\n", ["Net"]),
])
def test_dead_functions_of_a_script(body, expected):
    assert dead(body + MAIN) == expected


def test_a_module_without_main_block_is_all_live():
    assert dead("def unused(): pass\n") == []
    assert not is_script(Facts(cst.parse_module("x = 1\n"), "x = 1\n"))


def test_a_notebook_is_a_script_without_main_block():
    assert dead("def unused(): pass\nx = 1\n", "nb.ipynb", Runtime(notebook=True)) == ["unused"]


def test_a_main_block_in_a_module_named_for_helpers_is_a_smoke_test():
    assert dead("def main(): pass\ndef unused(): pass\n" + MAIN, "whisper_utils.py") == []
    assert dead("def main(): pass\ndef unused(): pass\n" + MAIN, "data-helpers.py") == []


def never_reached(source: str, path: str = "train.py") -> list[str]:
    source = textwrap.dedent(source)
    found = liveness(Facts(cst.parse_module(source), source, Path(path))).definitions(as_written=True)
    return [d.name.value for d, reach in found.items() if reach == NEVER]


@pytest.mark.parametrize(("source", "expected"), [
    ("def train(): pass\ndef helper(): pass\n", ["train", "helper"]),  # a module of definitions: the run does nothing
    ("def train(): helper()\ndef helper(): pass\ntrain()\n", []),  # called at top level, no main block
    ("def train(): pass\ndef unused(): pass\n" + MAIN.replace("main", "train"), ["unused"]),
    ("class Step:\n    def run(self): pass\nStep().run()\n", []),  # a class named: its methods are reached
    ("class Step:\n    def run(self): pass\n", ["Step"]),
    ("def metrics(p): pass\nTrainer(compute_metrics=metrics)\n", []),  # handed to a library
    ("def collate(b): pass\nDataLoader(ds, collate_fn=collate)\n", []),
    ("def train(): pass\nimport fire\nfire.Fire()\n", []),
])
def test_unreached_definitions(source, expected):
    assert never_reached(source) == expected


def test_a_class_body_runs_where_the_class_is_defined():
    source = "class Config:\n    size = compute()\n    def run(self): return go()\n"
    facts = Facts(cst.parse_module(source), source, Path("train.py"))
    calls = {c.func.value: c for c in walk(facts.module) if isinstance(c, cst.Call)}
    assert not unreached(facts, calls["compute"])
    assert unreached(facts, calls["go"])


def reaches(source: str, path: str = "train.py") -> dict[str, int]:
    """name -> reach of each module-level definition that does not surely run (the engine's question)."""
    source = textwrap.dedent(source)
    return {d.name.value: reach for d, reach in liveness(Facts(cst.parse_module(source), source, Path(path))).definitions().items()}


SPLIT = "from datasets import load_dataset\ndef split(ds):\n    return ds.train_test_split(test_size=0)\n"


@pytest.mark.parametrize(("source", "expected"), [
    # a function named only after a certain stop never runs, nor what only it names
    (SPLIT + "def train():\n    prepare()\ndef prepare():\n    pass\ndef main():\n    split(load_dataset('x')['rows'])\n    train()\nmain()\n",
     {"train": NEVER, "prepare": NEVER}),
    # after a probable stop (a placeholder checkpoint): probably never
    ("from transformers import AutoModel\ndef train():\n    pass\nm = AutoModel.from_pretrained('/path/to/model')\ntrain()\n" + MAIN.replace("main", "train"),
     {"train": PROBABLY_NOT}),
    # named before the stop too: it runs
    (SPLIT + "def train():\n    pass\ntrain()\nsplit(load_dataset('x')['rows'])\ntrain()\n", {}),
    # a module's functions may be called by importers, unless importing it certainly raises
    (SPLIT + "def train():\n    pass\ndef main():\n    split(load_dataset('x')['rows'])\n    train()\n", {}),
    (SPLIT + "def train():\n    pass\ndef unused():\n    pass\nsplit(load_dataset('x')['rows'])\ntrain()\n",
     {"train": NEVER, "unused": NEVER}),  # split runs: the stop is in it
])
def test_what_a_stop_cuts_off(source, expected):
    assert reaches(source) == expected


def test_after_a_stop_nothing_runs():
    source = SPLIT + "x = split(load_dataset('x')['rows'])\ny = go()\n"
    facts = Facts(cst.parse_module(source), source, Path("train.py"))
    calls = {c.func.value: c for c in walk(facts.module) if isinstance(c, cst.Call) and isinstance(c.func, cst.Name)}
    assert not unreached(facts, calls["split"]) and unreached(facts, calls["go"])


def test_a_cell_script_has_no_stop():
    source = "from transformers import Trainer\ntrainer = Trainer(model=model)\ngo()\n"
    cells = Facts(cst.parse_module(source), source, Path("train.py"), Runtime(cells=True))
    assert run_stops(cells) == () and not unreached(cells, next(c for c in walk(cells.module) if isinstance(c, cst.Call) and c.func.value == "go"))
    script = Facts(cst.parse_module(source), source, Path("train.py"))
    assert run_stops(script) != () and liveness(script).reach(next(c for c in walk(script.module) if isinstance(c, cst.Call) and c.func.value == "go")) == PROBABLY_NOT
