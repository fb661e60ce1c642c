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
One walk over the tree, once per file.

`unreached(facts, node)` asks the stricter question of the run as written: the file executed as it is, by itself.
Its top-level code (a main block included) is what runs; a module-level function or class that this code never names
(directly or through the functions and classes it names) never runs, whether the file is a script or a module of
definitions that nothing in it calls (`def train(...)` and no call: the run does nothing). A method runs when its
class is named; a function handed to a library (`Trainer(compute_metrics=f)`, `ds.map(f)`, `collate_fn=f`) is named
there. Rules whose harm is a property of one run (a forward computing different outputs) ask it; the engine keeps
its own rule (`dead_functions`, scripts only), since a module's code also runs when another file imports it.
"""

from __future__ import annotations

import re

import libcst as cst

from bertlint.facts.model import Model, per_file
from bertlint.facts.walker import is_main_guard
from bertlint.facts.nodes import walk

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
def dead_functions(facts: Model) -> tuple[cst.FunctionDef, ...]:
    """The module-level functions of a script that no code that runs refers to: named nowhere but inside
    functions that are dead themselves (see the module's docstring)."""
    if not is_script(facts):
        return ()
    return _never_named(facts, (cst.FunctionDef,))


@per_file
def unreached_definitions(facts: Model) -> tuple[cst.FunctionDef | cst.ClassDef, ...]:
    """The module-level functions and classes that the file's top-level code, run as written, never names (see the
    module's docstring), in a script or a module alike."""
    return _never_named(facts, (cst.FunctionDef, cst.ClassDef))


def unreached(facts: Model, node: cst.CSTNode) -> bool:
    """`node` sits in a module-level function, or a method of a module-level class, that the run as written never
    reaches (a class body's own statements run where the class is defined)."""
    dead = unreached_definitions(facts)
    if not dead:
        return False
    own = top = facts.scope_of(node)
    while top is not None and top.parent is not None and top.parent.kind != "module":
        top = top.parent
    if top is None or top.kind == "class" and top is own:
        return False
    return any(top.node is d for d in dead)


def _never_named(facts: Model, kinds: tuple[type, ...]) -> tuple[cst.FunctionDef | cst.ClassDef, ...]:
    """The undecorated module-level definitions of `kinds` named nowhere but inside definitions that are never
    named themselves; none where the file hands its namespace to something."""
    candidates = {stmt.name.value: stmt for stmt in facts.module.body if isinstance(stmt, kinds) and not stmt.decorators}
    if not candidates:
        return ()
    named: dict[str | None, set[str]] = {}  # the names each candidate's code refers to; None: the rest of the file
    for stmt in facts.module.body:
        owner = stmt.name.value if isinstance(stmt, kinds) and candidates.get(stmt.name.value) is stmt else None
        refs = named.setdefault(owner, set())
        for node in walk(stmt):
            if isinstance(node, cst.Name) and node is not getattr(stmt, "name", None):
                refs.add(node.value)
            elif isinstance(node, (cst.SimpleString, cst.FormattedStringText)):
                refs.update(_WORD.findall(node.value))
            elif isinstance(node, cst.Call) and _hands_namespace(node):
                return ()
    live: set[str] = set()
    todo = [name for name in named.get(None, ()) if name in candidates]
    while todo:
        name = todo.pop()
        if name not in live:
            live.add(name)
            todo += [other for other in named.get(name, ()) if other in candidates]
    return tuple(stmt for name, stmt in candidates.items() if name not in live)


def _hands_namespace(call: cst.Call) -> bool:
    """`globals()`, `eval(...)`, `exec(...)`, `fire.Fire()` with no argument: a call that reaches the module's functions by
    a name computed at run time. A method of the same name is not one (`model.eval()` switches a module's mode)."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value == "Fire" and not call.args
    return isinstance(func, cst.Name) and func.value in _NAMESPACE_CALLS and (func.value != "Fire" or not call.args)
