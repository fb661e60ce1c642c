"""bertlint.parsing: libcst's parse without per-node validation, the check back on after every parse."""

import libcst as cst
import pytest

from bertlint.parsing import parse_module


def test_same_tree_and_validation_back_on():
    source = "import torch\nx = (())\nmodel = f(a, b=1)\n"
    assert parse_module(source).deep_equals(cst.parse_module(source))
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_validation_back_on_after_a_parse_error():
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def (:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_valid_code_libcst_validation_refuses():
    """`() if 0 else(lambda:())`: libcst's own check raises a TypeError on it (LibCST issue #1061); parsed here."""
    source = "() if 0 else(lambda:())\n"
    with pytest.raises(TypeError):
        cst.parse_module(source)
    assert parse_module(source).code == source
