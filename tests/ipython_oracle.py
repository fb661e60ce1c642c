"""IPython's verdict on a notebook cell, and the cells of issue 26's shapes: shared by tests/test_ipython.py
and benchmarks/ipython_cells.py (the comparison over the precision corpora's notebooks). Needs IPython
(the `test` extra); the lint path never imports it."""

from __future__ import annotations

import ast
import itertools
from contextlib import contextmanager
from typing import Iterable, Iterator

# The magics that run their argument or body as Python in the kernel: IPython compiles it when the
# magic runs (`%time` / `%%time` transform_cell + ast_parse, `%%capture` run_cell), a SyntaxError then.
PYTHON_BODIES = {"time", "timeit", "prun", "capture"}


def ipython_runs(shell, cell: str, shadow: Iterable[str] = ()) -> bool:
    """IPython's verdict: `transform_cell` (static transformers, then the one-line automagic prefilter
    with `shadow` in the user namespace) gives Python that compiles, with top-level await as IPython allows,
    and so do the statements the Python-running magics of the result are given."""
    shadow = list(shadow)
    try:
        with _bound(shell, shadow):
            code = shell.transform_cell(cell)
        tree = compile(code, "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("run_line_magic", "run_cell_magic")
                and node.args and all(isinstance(a, ast.Constant) for a in node.args) and node.args[0].value in PYTHON_BODIES):
            body = node.args[-1].value  # the magic runs when the names are bound: they shadow automagic in it too
            if not (node.func.attr == "run_line_magic" and body.lstrip().startswith("-")) and not ipython_runs(shell, body, shadow):
                return False
    return True


@contextmanager
def _bound(shell, names: list[str]) -> Iterator[None]:
    """`names` in the shell's user namespace for the time of the block."""
    for name in names:
        shell.user_ns[name] = 1
    try:
        yield
    finally:
        for name in names:
            shell.user_ns.pop(name, None)


def ipython_failing(shell, sources: list[str]) -> list[bool]:
    """For each cell of a notebook, in order: whether IPython cannot run it (the names the cells before
    it store shadow automagic)."""
    failing, bound = [], set()
    for source in sources:
        runs = ipython_runs(shell, source, sorted(bound))
        failing.append(not runs)
        if runs:
            tree = ast.parse(shell.transform_cell(source))
            bound |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    return failing


# Generated cells (issue 26): strings whose lines look like IPython syntax, which IPython reads as text
# because it finds its syntax by tokens, and line magics whose argument is itself an escape or a magic.
STRING_PREFIXES = ["", "r", "f", "rb", "Rf", "u", "b"]
QUOTES = ['"""', "'''", '"', "'"]
STRING_TEXTS = ["User: have you heard of transformers", "obj.attr", "x[0]", "!ls -la", "%pwd", "?obj", "what is {x}", ""]
LINE_ENDS = ["?", "??", "!", "%", "", "? "]
HOLDERS = ["text = {s}", "print({s})", "{s}", "messages = [{{'role': 'user', 'content': {s}}}]", "if x:\n    y = {s}"]
AFTER = ["", "\nobj?", "\n!ls", "\nprint(text)", "\n%time f()"]
RUNNING_MAGICS = ["time", "timeit", "prun", "capture", "debug", "matplotlib"]
ARGUMENTS = ["!python train.py --arg=$x > /dev/null", "!!ls", "%pwd", "%time f()", "x = !ls", "x = %pwd", "obj?", "obj.attr??",
             "x = 1", "%%bash", "%%time", "ls", "pip install -q x", "for i in x: !ls", "for i in x: pass", "f(:", "-n 1 !ls",
             "!ls \\\n  -la", ",f a b", "?obj", "f(x)?", "x = 1  # ok?", "'what?'", 'print("""a?\nb""")']
MAGIC_PLACES = ["{m}", "x = 1\n{m}", "{m}\ny = 2", "if x:\n    {m}", "for i in y:\n    {m}\n    z = 2"]


def string_cell(prefix: str, quote: str, backslash: bool, lines: list[str], holder: str, after: str = "") -> str:
    """A cell holding a string whose lines are `lines` (a triple-quoted one opened with a backslash when
    `backslash`; a one-quote one continues its lines with backslashes)."""
    join = "\n" if len(quote) == 3 else "\\\n"
    literal = prefix + quote + ("\\\n" if backslash else "") + join.join(lines) + quote
    return holder.format(s=literal) + after


def generated_cells() -> Iterator[str]:
    """Every string shape with one line, and every magic with every argument in every place."""
    for prefix, quote, backslash, text, end, holder in itertools.product(
            STRING_PREFIXES, QUOTES, (False, True), STRING_TEXTS, LINE_ENDS, HOLDERS):
        yield string_cell(prefix, quote, backslash, [text + end], holder)
    for magic, argument, place in itertools.product(RUNNING_MAGICS, ARGUMENTS, MAGIC_PLACES):
        yield place.format(m=f"%{magic} {argument}")
