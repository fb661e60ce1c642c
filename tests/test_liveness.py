"""facts.liveness: which module-level functions of a script never run (the engine drops what rules find in them)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from bertlint.facts import Facts, Runtime, dead_functions, is_script

MAIN = '\nif __name__ == "__main__":\n    main()\n'


def dead(source: str, path: str = "train.py", runtime: Runtime = Runtime()) -> list[str]:
    source = textwrap.dedent(source)
    return [f.name.value for f in dead_functions(Facts(cst.parse_module(source), source, Path(path), runtime))]


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
