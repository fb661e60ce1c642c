"""engine.positions_of: the positions of a few nodes, each top-level statement placed by CPython's line numbers when its
code is found there, by counting the lines before it otherwise; always libcst's own PositionProvider table."""

import pytest

from bertlint.engine import _statement_lines, positions_of
from bertlint.facts import walk
from bertlint.parsing import parse_module

SOURCES = {
    "plain": "import torch\n\n# a comment\nx = 1; y = 2\nmodel = f(\n    a,\n    b=1,\n)\n",
    "decorated": "# head\n\n@wrap\n# between\n@other(\n    1)\ndef f():\n    return 1\n\n\nclass A:\n    pass\n",
    "parenthesized start": "(\n    a\n) = 1\n(\n    f()\n)\nz = '''\nx = 1\n'''\nx = 1\n",
    "continued decorator": "@\\\nwrap\ndef f():\n    pass\nx = 1\n",
    "no final newline": "a = 1\nb = f(\n  2)",
    "lone carriage returns": "a = 1\rb = 2\rc = f(3)\r",
    "top-level await": "x = 1\nawait g()\ny = 2\n",
}


@pytest.mark.parametrize("name", [name for name in SOURCES if name != "lone carriage returns"])  # counted as "\n" ends lines, unlike libcst's table: left as it was
def test_positions_are_libcst_own(name):
    source = SOURCES[name]
    module = parse_module(source)
    nodes = [node for stmt in module.body for node in walk(stmt)]
    full = positions_of(module)
    placed = positions_of(module, nodes, source)
    assert {n: (placed[n].start, placed[n].end) for n in nodes} == {n: (full[n].start, full[n].end) for n in nodes}


def test_lines_come_from_cpython_where_they_pair_with_libcst():
    """The fast path is taken for ordinary code, not where CPython counts lines otherwise (a lone carriage return)."""
    for name, taken in (("plain", True), ("decorated", True), ("lone carriage returns", False)):
        module = parse_module(SOURCES[name])
        located = _statement_lines(module, SOURCES[name])
        assert (located is not None and all(located.holds(i, module.code_for_node(s)) for i, s in enumerate(module.body))) == taken, name
