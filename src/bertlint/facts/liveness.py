"""Code that never runs: the module-level functions a script never refers to.

A script (a file with an `if __name__ == "__main__":` block, or a notebook's cells) runs what its
top level calls; a function defined there and never named again is dead, and what a rule finds inside
it cannot happen when the file runs. Conservative by construction: a library module (no main block,
not a notebook, or a main block in a file named for helpers: `whisper_utils.py`) may be imported and
called from anywhere, so all of it is live; in a script a
function is live when its name appears in the live code (called, passed, assigned, an attribute of the
same name, a word of a string: `__all__`, a dispatch table of names; its own name inside itself does not
count, nor a name inside a dead function: `preprocess` called only by a dead `prepare`), when it is
decorated (`@app.command()`, `@click.command()` register it), and every function is live when the file
hands its namespace to something (`fire.Fire()` with no argument, `globals()`, `vars()`, `eval`, `exec`).

A file also stops where its top level certainly raises: a module-level statement that reads a name the file binds
nowhere (not imported, assigned, defined or a parameter anywhere; not a builtin; `Dataset.from_pandas(df)` with no
`Dataset` import) raises NameError whether the file is run or imported, so the statements after it never run, nor a
function only they refer to. Not looked for in notebooks and IPython exports (their kernels inject names), nor where
names can appear unseen (`from x import *`, `globals()`, `exec`, ...). Only the evaluated parts of a statement count:
an `if`/`while` test, a `for` iterable, a `with` item, a simple statement (not a lambda's or a generator's body, not
an annotation, not a `def`/`class`/`try`).
One walk over the tree, once per file.
"""

from __future__ import annotations

import builtins
import re

import libcst as cst

from bertlint.facts.model import Model, is_main_guard, per_file
from bertlint.facts.nodes import dotted, iter_children, walk

_WORD = re.compile(r"[A-Za-z_]\w*")
# Calls that reach the module's functions by a name computed at run time.
_NAMESPACE_CALLS = frozenset({"globals", "locals", "vars", "eval", "exec", "__import__", "Fire"})


# Words of a file name that say it is a module of helpers for other files to import (`whisper_utils.py`,
# `train_helpers.py`): its main block, if any, is a smoke test of one of them, not the program that runs the rest.
HELPER_MODULE_WORDS = frozenset({"util", "utils", "helper", "helpers", "common", "lib", "tools", "functions", "modules"})


def is_script(facts: Model) -> bool:
    """The file runs as a program: a notebook, or a top-level `if __name__ == "__main__":` block in a file not named
    as a module of helpers."""
    if facts.runtime.notebook:
        return True
    if facts.path is not None and HELPER_MODULE_WORDS & set(re.split(r"[_\-.]", facts.path.stem.lower())):
        return False
    return any(isinstance(stmt, cst.If) and is_main_guard(stmt) for stmt in facts.module.body)


@per_file
def dead_code(facts: Model) -> tuple[cst.CSTNode, ...]:
    """The module-level functions of a script that no code that runs refers to: named nowhere but inside
    functions that are dead themselves; and the module-level statements after one that stops the file (see the
    module's docstring)."""
    stop = _stop(facts)
    if stop is None and not is_script(facts):
        return ()
    body = facts.module.body[: stop + 1] if stop is not None else facts.module.body
    return _unreferenced(body) + (tuple(facts.module.body[stop + 1:]) if stop is not None else ())


def _unreferenced(body) -> tuple[cst.FunctionDef, ...]:
    """The functions defined in `body` that its other statements never refer to, directly or through live functions."""
    candidates = {stmt.name.value: stmt for stmt in body if isinstance(stmt, cst.FunctionDef) and not stmt.decorators}
    if not candidates:
        return ()
    named: dict[str | None, set[str]] = {}  # the names each candidate's code refers to; None: the rest of the file
    for stmt in body:
        owner = stmt.name.value if isinstance(stmt, cst.FunctionDef) and candidates.get(stmt.name.value) is stmt else None
        refs = named.setdefault(owner, set())
        for node in walk(stmt):
            if isinstance(node, cst.Name) and node is not getattr(stmt, "name", None):
                refs.add(node.value)
            elif isinstance(node, (cst.SimpleString, cst.FormattedStringText)):
                refs.update(_WORD.findall(node.value))
            elif isinstance(node, cst.Call) and (callee := _callee(node.func)) in _NAMESPACE_CALLS and (callee != "Fire" or not node.args):
                return ()
    live: set[str] = set()
    todo = [name for name in named.get(None, ()) if name in candidates]
    while todo:
        name = todo.pop()
        if name not in live:
            live.add(name)
            todo += [other for other in named.get(name, ()) if other in candidates]
    return tuple(stmt for name, stmt in candidates.items() if name not in live)


def _callee(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None


# Names a module has without binding them; and those notebook kernels inject (Jupyter, Colab, Databricks).
_GIVEN = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__builtins__", "__spec__", "__loader__", "__package__", "__annotations__", "__path__", "__cached__"}
_INJECTED = frozenset({"get_ipython", "display", "In", "Out", "dbutils", "spark", "sc", "sqlContext", "displayHTML"})


def _stop(facts: Model) -> int | None:
    """The index of the first module-level statement that reads a name the file binds nowhere: it raises NameError."""
    if facts.runtime.notebook:
        return None
    module = facts.module_scope  # first the names the top level reads and never binds itself: usually none
    suspects = {name for name, loads in facts.name_loads.items()
                if name not in _GIVEN and name not in module.events and any(load[1] is module for load in loads)}
    if not suspects:
        return None
    nodes = list(walk(facts.module))
    names = {node.value for node in nodes if isinstance(node, cst.Name)}
    if names & _INJECTED or any(isinstance(node, cst.ImportStar) or isinstance(node, cst.Call) and _callee(node.func) in _NAMESPACE_CALLS for node in nodes):
        return None
    unbound = suspects - _bound(nodes)
    if not unbound:
        return None
    for index, stmt in enumerate(facts.module.body):
        if any(name.value in unbound for name in _evaluated(stmt)):
            return index
    return None


def _bound(nodes) -> set[str]:
    """Every name the file binds anywhere, in any scope (an over-approximation: a name bound anywhere is never unbound here)."""
    names: set[str] = set()
    for node in nodes:
        targets: list[cst.CSTNode] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.Del)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Param, cst.TypeAlias, cst.TypeVar, cst.ParamSpec, cst.TypeVarTuple)):
            names.add(node.name.value)
        elif isinstance(node, cst.ImportAlias):
            names.add((dotted(node.name) or "").split(".")[0])
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            names.update(item.name.value for item in node.names)
        elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
            targets = [node.name]
        names.update(n.value for target in targets for n in walk(target) if isinstance(n, cst.Name))
    return names


def _evaluated(stmt: cst.CSTNode):
    """The names a module-level statement certainly reads when it runs."""
    if isinstance(stmt, cst.SimpleStatementLine):
        parts = [small for small in stmt.body if not isinstance(small, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal, cst.Del, cst.TypeAlias))]
    elif isinstance(stmt, (cst.If, cst.While)):
        parts = [stmt.test]
    elif isinstance(stmt, cst.For):
        parts = [stmt.iter]
    elif isinstance(stmt, cst.With):
        parts = [item.item for item in stmt.items]
    else:
        return
    for part in parts:
        yield from _reads(part)


def _reads(root: cst.CSTNode):
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            yield node
        elif not isinstance(node, (cst.Lambda, cst.GeneratorExp, cst.Annotation)):
            skip = node.attr if isinstance(node, cst.Attribute) else node.keyword if isinstance(node, cst.Arg) else None
            stack.extend(child for child in iter_children(node) if child is not skip)
