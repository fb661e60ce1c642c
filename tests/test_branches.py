"""facts.branches.not_taken and the engine: what a rule finds in an `if` arm that the file's own values do not take
cannot happen when the file runs as written, in a program (a script, a notebook) or at a module's top level; a module
of definitions may be imported and its functions called with other values; a command-line or environment default
decides nothing (the user picks another at run time), and a test the value layer does not know (a loop's flag, a
value joined over a back edge) says nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import lint_text

HEAD = "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
PAD = "tok(['a', 'b'], pad_to_max_length=True, max_length=8)"
MAIN = "\nif __name__ == '__main__':\n    {call}\n"


def bl101_lines(source: str, name: str = "train.py") -> list[int]:
    findings = lint_text(HEAD + source, Path(name))
    assert "BL901" not in {f.code for f in findings}
    return [f.line for f in findings if f.code == "BL101"]


@pytest.mark.parametrize(("source", "expected"), [
    # a module-level constant decides the arm: the other arm's finding stays, the arm not taken is silent
    (f"MODE = 'new'\nif MODE == 'legacy':\n    x = {PAD}\nelse:\n    y = {PAD}\n", [7]),
    # a command-line option's default decides nothing: the user picks another at run time (`--mode legacy`)
    ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--mode', default='new')\nargs = p.parse_args()\n"
     f"if args.mode == 'legacy':\n    x = {PAD}\nelse:\n    y = {PAD}\n", [8, 10]),
    # nor does an environment variable's
    (f"import os\nif os.environ.get('MODE', 'new') == 'legacy':\n    x = {PAD}\n", [5]),
    # a script's function called with a constant: the branch for another value never runs as written
    (f"def encode(kind='base'):\n    if kind == 'electra':\n        return {PAD}\n    return None\n"
     + MAIN.format(call="encode(kind='roberta')"), []),
    # ... and does run where the call passes the value the branch tests
    (f"def encode(kind='base'):\n    if kind == 'electra':\n        return {PAD}\n    return None\n"
     + MAIN.format(call="encode(kind='electra')"), [5]),
    # call sites that pass different constants, none of which the test takes (`abstract.Choice`)
    (f"def encode(kind='TokenBERT'):\n    if 'ELEC' in kind:\n        return {PAD}\n    return None\n"
     "def other():\n    return encode()\n" + MAIN.format(call="encode(kind='ResRoBERTa')"), []),
    # ... and where one of them takes it, the arm may run
    (f"def encode(kind='TokenBERT'):\n    if 'BERT' in kind:\n        return {PAD}\n    return None\n"
     "def other():\n    return encode()\n" + MAIN.format(call="encode(kind='Electra')"), [5]),
    # a flag a loop rebinds after the test: True on the first pass, the arm runs
    (f"first = True\nfor t in ['a', 'b']:\n    if first:\n        x = {PAD}\n    first = False\n", [6]),
    # a counter a `while` loop advances: the value at the test is not one constant
    (f"n = 0\nwhile n < 3:\n    if n == 1:\n        x = {PAD}\n    n += 1\n", [6]),
    # a test the value layer does not know
    (f"import os\nif os.environ.get('LEGACY'):\n    x = {PAD}\n", [5]),
])
def test_findings_in_arms_the_file_does_not_take_are_dropped(source, expected):
    assert bl101_lines(source) == expected


def test_a_module_of_definitions_keeps_its_functions_branches():
    """`helpers.py` (no main block): an importer may call `encode(kind='electra')`, so the arm may run."""
    source = f"def encode(kind='base'):\n    if kind == 'electra':\n        return {PAD}\n    return None\nencode()\n"
    assert bl101_lines(source, "helpers.py") == [5]
    assert bl101_lines(source + MAIN.format(call="pass"), "train.py") == []
