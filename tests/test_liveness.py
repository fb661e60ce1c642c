"""facts.liveness: which module-level functions and statements of a file never run (the engine drops what rules find in them)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from bertlint.facts import Facts, Runtime, dead_code, is_script

MAIN = '\nif __name__ == "__main__":\n    main()\n'


def dead(source: str, path: str = "train.py", runtime: Runtime = Runtime()) -> list[str]:
    """The dead functions' names, and each dead module-level statement's first line."""
    source = textwrap.dedent(source)
    module = cst.parse_module(source)
    return [node.name.value if isinstance(node, cst.FunctionDef) else module.code_for_node(node).strip().splitlines()[0]
            for node in dead_code(Facts(module, source, Path(path), runtime))]


@pytest.mark.parametrize(("body", "expected"), [
    ("def main(): pass\ndef unused(): pass\n", ["unused"]),
    ("def main(): helper()\ndef helper(): pass\n", []),
    ("def main(): pass\ndef prepare(): step()\ndef step(): pass\n", ["prepare", "step"]),  # named only by dead code
    ("def main(): pass\ndef again(n): return again(n - 1)\n", ["again"]),  # its own name does not keep it alive
    ("def main(): pass\n@app.command()\ndef cli(): pass\n", []),  # decorated: registered somewhere
    ("def main(): pass\ndef unused(): pass\n__all__ = ['unused']\n", []),  # a word of a string
    ("def main(): pass\ndef unused(): pass\nHANDLERS = {'x': unused}\n", []),  # passed as a value
    ("def main(): pass\ndef unused(): pass\nclass Runner:\n    def run(self): return unused()\n", []),  # from a class body
    ("def main(): pass\ndef unused(): pass\nimport fire\nfire.Fire()\n", []),  # the namespace is the command line
    ("def main(): pass\ndef unused(): pass\nglobals()['un' + 'used']()\n", []),
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


@pytest.mark.parametrize(("source", "expected"), [
    # a read of a name bound nowhere raises NameError: what follows never runs, nor a function only it calls
    ("import pandas as pd\ndf = pd.read_csv('x.csv')\ndata = Dataset.from_pandas(df)\ndef prep(b): pass\ndata.map(prep)\n",
     ["prep", "data.map(prep)"]),
    ("def prep(b): pass\nfor batch in train_dataloader:\n    prep(batch)\nprint('done')\n", ["print('done')"]),  # the stop itself counts as live
    ("def helper(): pass\nhelper()\nx = undefined_name\ny = 2\n", ["y = 2"]),  # called before the stop: it runs
    ("import pandas as pd\ndf = pd.read_csv('x.csv')\nif df.empty:\n    raise SystemExit\n", []),
    ("x = later\nlater = 1\n", []),  # bound somewhere (here after the read): not certain, silent
    ("f = lambda: missing\ny = 1\n", []),  # a lambda's body does not run at definition
    ("g = (missing for _ in range(0))\ny = 1\n", []),  # nor a generator's
    ("print(len([1]), __file__)\ny = 1\n", []),  # builtins and module names
    ("from helpers import *\nx = anything\ny = 1\n", []),  # a star import binds names unseen
    ("exec('z = 1')\nx = z\ny = 1\n", []),
    ("get_ipython().system('pip install x')\ndisplay(df)\ny = 1\n", []),  # an IPython export: its kernel injects names
    ("try:\n    x = missing\nexcept NameError:\n    x = 1\ny = x\n", []),  # a try may catch it
    ("def main():\n    return missing\nmain_value = 1\n", []),  # inside a function: runs only if called
    ("x: Undefined = 1\ny = 1\n", []),  # annotations are not read here
    ("type Batch = dict[str, Later]\ny = 1\n", []),  # a type alias binds its name and evaluates its value lazily
])
def test_statements_after_a_name_bound_nowhere_never_run(source, expected):
    assert dead(source) == expected


def test_a_notebook_is_not_stopped_by_a_name_bound_nowhere():
    assert dead("x = undefined_name\ny = 1\n", "nb.ipynb", Runtime(notebook=True)) == []
