"""Which code runs: the one liveness fact of a file, computed once, that the engine and every rule asking "does this
run?" query (`reach`, `unreached`).

The run as written: the file executed as it is, by itself. Its top-level code runs in order (a notebook's cells one
after another, the `if __name__ == "__main__":` block in its place) up to the statement where it stops
(`stops.run_stops`: a certain raise, or a probable one such as a template's placeholder checkpoint), and a function's
body up to its own stop: the statements after a stop never run (`stops.statements_after`). A module-level function or
class runs when code that runs names it: called, passed (`Trainer(compute_metrics=f)`, `collate_fn=f`), assigned, an
attribute of the same name, a word of a string (`__all__`, a dispatch table of names; not a key of data: `ds["train"]`,
`{"train": path}` name no function `train`, nor a docstring); its own name inside itself does
not count, nor a name inside code that never runs (`preprocess` called only by a `prepare` nothing calls, or only after
the run stopped). A method runs when its class is named; a class body's own statements run where the class is defined.
Two exceptions, methods that no instance runs: a class whose `__init__` certainly stops (`stops.unbuildable`) never
yields an instance, so of its methods only `__init__` and what it names run (and its static and class methods); and a
method that only a library calls (data/driven.json: a torch Dataset's `__getitem__`/`__len__`, a LightningModule's or
LightningDataModule's hooks, a Keras layer's `call`/`build`) runs only when the library drives the instance
(`trainer.fit(module)`, iterating a DataLoader of the dataset, `model(x)`), which the run as written never does where
every instance that code that runs makes is held by a name (`module = Classifier()`, `loader = DataLoader(Rows(),
batch_size=8)`: a wrapper given none of the keywords that make it call them) that code that runs never reads: read
only after a certain stop (`trainer.fit(module)` after `pl.Trainer(gpus=1)`, which Lightning 2 refuses). Any other
mention of the class or its instance, a subclass, a method named elsewhere, an unpickling call or the namespace handed
over, and the methods run as before.
A decorated definition is registered somewhere (`@app.command()`, `@click.command()`): it runs. Code that hands the
module's namespace to something (`fire.Fire()` with no argument, `globals()`, `vars()`, `eval`, `exec`) names every
definition, when it runs itself, and code that unpickles (`pickle.load`, `torch.load`) every class.

An `if` arm the file's own values rule out (`branches.not_taken`: `use_lora = False` then `if use_lora:`, a helper's
`if 'ELEC' in kind:` that no call site's constant takes) never runs either, where those values are every run's: in the
run as written, or at a module's top level; a command-line or environment default decides nothing there.

Each node's reach is RUNS, PROBABLY_NOT (reached only through code after a probable stop) or NEVER (after a certain
stop, in a definition that no code that runs names, or in an arm not taken). Two questions:

- `reach(node)`: can this code run at all? A module of definitions (no main block, or one in a file named for helpers:
  `whisper_utils.py`, whose main block is a smoke test) may also be imported and any of its definitions called from
  elsewhere, unless its own top level certainly stops (then importing it raises). The engine drops what a rule finds
  where the reach is NEVER, and where it is PROBABLY_NOT the findings that say their own line fails.
- `reach(node, as_written=True)`: does the run as written reach it, in a script or a module alike (`def train(...)` and
  no call: the run does nothing)? Rules whose harm is a property of one run (a forward computing different outputs) ask
  it (`unreached`).

One walk over the module for the names each definition and the top level refer to (only where a question needs them: a
module whose importers may call every definition needs none), one over the code that never runs.
"""

from __future__ import annotations

import functools
import re

import libcst as cst

from bertlint import knowledge
from bertlint.facts.branches import not_taken
from bertlint.facts.model import Model, per_file
from bertlint.facts.nodes import dotted, walk
from bertlint.facts.stops import methods_of, run_stops, statements_after, unbuildable
from bertlint.facts.walker import is_main_guard

RUNS, PROBABLY_NOT, NEVER = 0, 1, 2

_WORD = re.compile(r"[A-Za-z_]\w*")
# Calls that reach the module's functions by a name computed at run time.
_NAMESPACE_CALLS = frozenset({"globals", "locals", "vars", "eval", "exec", "__import__", "Fire"})
_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_EVERY = "*"  # a reference to every definition (a call handing the namespace over)
# Calls that unpickle: the unpickler finds each object's class in the module by the name the pickle holds (Python's
# `pickle.Unpickler.find_class`), so a class nothing names may run (`model = pickle.load(f)` then `model(x)` runs its
# `forward`). torch.load unpickles with `weights_only=False`, its default before torch 2.6 (torch's own message: "In
# PyTorch 2.6, we changed the default value of the weights_only argument in torch.load from False to True";
# serialization.py `_default_to_weights_only`); joblib, dill, cloudpickle and pandas.read_pickle unpickle too.
_UNPICKLERS = frozenset({"pickle.load", "pickle.loads", "pickle.Unpickler", "dill.load", "dill.loads", "cloudpickle.load",
                         "cloudpickle.loads", "joblib.load", "torch.load", "pandas.read_pickle"})
_CLASSES = "class"  # a reference to every class (an unpickling call)

# Words of a file name that say it is a module of helpers for other files to import (`whisper_utils.py`,
# `train_helpers.py`): its main block, if any, is a smoke test of one of them, not the program that runs the rest.
HELPER_MODULE_WORDS = frozenset({"util", "utils", "helper", "helpers", "common", "lib", "tools", "functions", "modules"})

_Definition = cst.FunctionDef | cst.ClassDef


def is_script(facts: Model) -> bool:
    """The file runs as a program: a notebook, or a top-level `if __name__ == "__main__":` block in a file not named
    as a module of helpers."""
    if facts.runtime.notebook:
        return True
    if facts.path is not None and HELPER_MODULE_WORDS & set(re.split(r"[_\-.]", facts.path.stem.lower())):
        return False
    return any(isinstance(stmt, cst.If) and is_main_guard(stmt) for stmt in facts.module.body)


class Liveness:
    """The reach of every node of one file (see the module's docstring)."""

    def __init__(self, facts: Model):
        stops = run_stops(facts)
        self._after: dict[int, int] = {}  # id of each node after a stop in its scope -> PROBABLY_NOT or NEVER
        for stop in stops:
            level = NEVER if stop.every_rule else PROBABLY_NOT
            for stmt in statements_after(facts, stop):
                for node in walk(stmt):
                    if self._after.get(id(node), RUNS) < level:
                        self._after[id(node)] = level
        self._facts = facts
        self._arms: dict[tuple[int, bool], bool] = {}  # (id of a node, the run as written?) -> in an arm not taken
        self._definitions = {stmt.name.value: stmt for stmt in facts.module.body if isinstance(stmt, _Definition) and not stmt.decorators}
        module_stop = max((NEVER if s.every_rule else PROBABLY_NOT for s in stops if isinstance(s.scope, cst.Module)), default=RUNS)
        # what importers may call: every definition of a module whose import does not certainly raise
        self._importable = module_stop if module_stop < NEVER and not is_script(facts) else None

    def reach(self, node: cst.CSTNode, as_written: bool = False) -> int:
        """RUNS, PROBABLY_NOT or NEVER: how surely `node` runs when the file runs (as written, or also imported)."""
        whole = as_written or self._importable is None  # the run as written is every run there is
        dead = self._unreached_as_written if whole else self._unreached_imported
        found = max(self._after.get(id(node), RUNS), dead.get(id(node), RUNS))
        return NEVER if found < NEVER and self._arm_not_taken(node, whole) else found

    def _arm_not_taken(self, node: cst.CSTNode, whole: bool) -> bool:
        """`node` sits in an `if` arm the file's own values rule out (`branches.not_taken`; a command-line or environment
        default decides nothing, the user may pick another), where those values are every run's: in the run as written,
        or at the module's top level (an importer may call a function with other values)."""
        key = (id(node), whole)
        if key not in self._arms:
            self._arms[key] = (whole or self._facts.scope_of(node) is self._facts.module_scope) and not_taken(self._facts, node, cli=False)
        return self._arms[key]

    def definitions(self, as_written: bool = False) -> dict[_Definition, int]:
        """The module-level definitions that do not surely run, with their reach."""
        if not as_written and self._importable == RUNS:
            return {}  # importers may call every definition
        roots = {None: RUNS} if as_written or self._importable is None else {None: RUNS, **dict.fromkeys(self._definitions, self._importable)}
        reached = _reached(self._named, roots)
        return {stmt: reached.get(name, NEVER) for name, stmt in self._definitions.items() if reached.get(name, NEVER) > RUNS}

    @functools.cached_property
    def _named(self) -> dict[str | None, dict[str, int]]:
        return self._walked[0]

    @functools.cached_property
    def _walked(self) -> tuple[dict[str | None, dict[str, int]], list[cst.CSTNode]]:
        return _names(self._facts, self._definitions, self._after)

    @functools.cached_property
    def _unreached_as_written(self) -> dict[int, int]:
        dead = _nodes(self.definitions(as_written=True))
        return {**dead, **self._idle(dead, driven=True)}

    @functools.cached_property
    def _unreached_imported(self) -> dict[int, int]:
        dead = _nodes(self.definitions())
        return {**dead, **self._idle(dead, driven=False)}

    def _idle(self, dead: dict[int, int], driven: bool) -> dict[int, int]:
        """id of each node of the methods that no instance runs -> NEVER: every method but `__init__` (and what it
        calls) of a class that never yields an instance (`stops.unbuildable`), and, with `driven` (the run as
        written: an importer may drive them), the methods a library drives (data/driven.json) of a class whose every
        instance is held by a name that code that runs never reads. None where the file hands its namespace over or
        unpickles (an instance no `__init__` made, its name unknown)."""
        tables = {stmt: table for stmt in self._definitions.values() if driven and isinstance(stmt, cst.ClassDef)
                  and (table := next(filter(None, (knowledge.driven(self._facts.qualname(b.value)) for b in stmt.bases)), None))}
        classes = unbuildable(self._facts)
        if not (tables or classes) or any(refs.get(word, NEVER) < NEVER for refs in self._named.values() for word in (_EVERY, _CLASSES)):
            return {}
        idle: list[cst.FunctionDef] = []
        for cls in classes:
            methods = methods_of(cls)
            idle.extend(f for name, f in methods.items() if name not in _called_by_init(methods) and not f.decorators)
        live = _Live(self._facts, self._walked[1], {**dead, **{node: level for node, level in self._after.items() if level == NEVER}}) if tables else None
        for cls, table in tables.items():
            if live.held_only(cls, table):
                methods = {name: f for name, f in methods_of(cls).items() if name in table.methods}
                inside = {id(node) for f in methods.values() for node in walk(f)}
                idle.extend(f for name, f in methods.items() if not live.named(name, inside))
        return {id(node): NEVER for f in idle for node in walk(f)}


@per_file
def liveness(facts: Model) -> Liveness:
    """The file's liveness fact, computed once."""
    return Liveness(facts)


def unreached(facts: Model, node: cst.CSTNode) -> bool:
    """The run as written certainly never reaches `node`: after a certain stop, or in a module-level function, or a method
    of a module-level class, that no code that runs names."""
    return liveness(facts).reach(node, as_written=True) == NEVER


def _names(facts: Model, definitions: dict[str, _Definition], after: dict[int, int]) -> tuple[dict[str | None, dict[str, int]], list[cst.CSTNode]]:
    """owner -> {name of a definition (or `_EVERY`, `_CLASSES`): the best reach of a reference to it}: what each
    definition's code (None: the rest of the file) names, each reference as surely as it runs within its owner; and,
    from the same walk, the file's nodes that `_Live` reads (`_MENTIONS`), in the order of a walk of the module."""
    named: dict[str | None, dict[str, int]] = {}
    mentions: list[cst.CSTNode] = []
    for stmt in facts.module.body:
        own = getattr(stmt, "name", None)
        owner = own.value if isinstance(stmt, _Definition) and definitions.get(own.value) is stmt else None
        refs = named.setdefault(owner, {})
        prose: set[int] = set()  # strings that name nothing: data's keys (`ds["train"]`, `{"train": path}`), docstrings
        for node in walk(stmt):
            kind = type(node)  # `is` on the exact class: no libcst node class below is subclassed, and `isinstance`
            # against libcst's classes goes through their ABC metaclass, a Python call per node of the file
            if kind in _MENTIONS:
                mentions.append(node)
            if kind is cst.Name and node is not own:
                words: list[str] = [node.value]
            elif kind is cst.SimpleString or kind is cst.FormattedStringText:
                words = [] if id(node) in prose else _WORD.findall(node.value)
            elif kind is cst.Subscript:
                prose.update(id(e.slice.value) for e in node.slice if isinstance(e.slice, cst.Index))
                continue
            elif kind is cst.DictElement:
                prose.add(id(node.key))
                continue
            elif kind is cst.Expr and isinstance(node.value, _STRINGS):
                prose.update(id(part) for part in walk(node.value))
                continue
            elif kind is cst.Call and hands_namespace(node):
                words = [_EVERY]
            elif kind is cst.Call and _unpickles(facts, node):
                words = [_CLASSES]
            else:
                continue
            level = after.get(id(node), RUNS)
            for word in words:
                if (word in definitions or word in (_EVERY, _CLASSES)) and refs.get(word, NEVER) > level:
                    refs[word] = level
    named[_EVERY] = dict.fromkeys(definitions, RUNS)
    named[_CLASSES] = {name: RUNS for name, stmt in definitions.items() if isinstance(stmt, cst.ClassDef)}
    return named, mentions


def _reached(named: dict[str | None, dict[str, int]], roots: dict[str | None, int]) -> dict[str | None, int]:
    """The best reach of each owner from `roots`: a reference runs as surely as the less sure of its owner and its place
    in it. Each owner's reach only improves, at most twice: linear in the references."""
    best = dict(roots)
    todo = list(roots)
    while todo:
        owner = todo.pop()
        for name, level in named.get(owner, {}).items():
            level = max(level, best[owner])
            if level < best.get(name, NEVER):
                best[name] = level
                todo.append(name)
    return best


def _nodes(definitions: dict[_Definition, int]) -> dict[int, int]:
    """id of each node inside the definitions -> their reach; a class body's own statements run where it is defined,
    so only what its functions and nested classes hold."""
    out: dict[int, int] = {}
    for stmt, level in definitions.items():
        inner = [stmt] if isinstance(stmt, cst.FunctionDef) else [node for node in walk(stmt.body) if isinstance(node, _Definition)]
        for part in inner:
            if id(part) not in out:
                out.update((id(node), level) for node in walk(part))
    return out


def _called_by_init(methods: dict[str, cst.FunctionDef]) -> set[str]:
    """The methods that `__init__` names, and those they name, in turn: they may run while the instance is built
    (class-level hooks too: `__init_subclass__`, `__class_getitem__` run with no instance)."""
    found = {"__init__", "__init_subclass__", "__class_getitem__", "__new__"}
    todo = ["__init__"]
    while todo:
        name = todo.pop()
        for node in walk(methods[name]) if name in methods else ():
            word = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else None
            if word in methods and word not in found:
                found.add(word)
                todo.append(word)
    return found


_MENTIONS = frozenset({cst.Name, cst.Attribute, cst.Arg, cst.Assign})  # the node classes `_Live` reads


class _Live:
    """The reads of each name in code that runs (nodes not in `dead`), for `Liveness._idle`, from `mentions`: the file's
    nodes of the classes in `_MENTIONS`, in the order of a walk of the module (`_names` collects them in its own walk)."""

    def __init__(self, facts: Model, mentions: list[cst.CSTNode], dead: dict[int, int]):
        self._facts = facts
        self._reads: dict[str, list[cst.Name]] = {}  # name -> its nodes in code that runs
        self._attributes: dict[str, list[cst.Name]] = {}  # attribute -> its nodes in code that runs
        self._assigns: list[cst.Assign] = []
        words: set[int] = set()  # an attribute's name and a keyword's are no reads of a name
        for node in mentions:
            if id(node) in dead:
                continue
            kind = type(node)  # `is` on the exact class, as in `_names`
            if kind is cst.Name and id(node) not in words:
                self._reads.setdefault(node.value, []).append(node)
            elif kind is cst.Attribute:
                words.add(id(node.attr))
                self._attributes.setdefault(node.attr.value, []).append(node.attr)
            elif kind is cst.Arg and node.keyword is not None:
                words.add(id(node.keyword))
            elif kind is cst.Assign and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                self._assigns.append(node)

    def held_only(self, cls: cst.ClassDef, table: knowledge.Driven) -> bool:
        """Every instance of `cls` that code that runs makes is held by a name that code that runs never reads:
        `ds = Tweets(...)`, or `loader = DataLoader(Tweets(...), batch_size=8)` of a wrapper given none of its driving
        keywords; any other mention of the class (a subclass, an argument, a return) may hand it to the library."""
        inside = {id(node) for node in walk(cls)}
        held: set[int] = set()
        for assign in self._assigns:
            call, target = assign.value, assign.targets[0].target
            if isinstance(call, cst.Call) and (made := self._made(call, cls.name.value, table)) is not None \
                    and all(node is target for node in self._reads.get(target.value, ())):
                held.add(id(made))
        return all(id(node) in held or id(node) in inside for node in self._reads.get(cls.name.value, ()))

    def _made(self, call: cst.Call, name: str, table: knowledge.Driven) -> cst.Name | None:
        """The class's name that `call` builds an instance of directly, or inside a wrapper that does not drive it."""
        if isinstance(call.func, cst.Name) and call.func.value == name:
            return call.func
        wrapper = table.wrappers.get(self._facts.qualname(call.func) or "")
        if wrapper is None or any(arg.star for arg in call.args):
            return None
        position, keyword, driving = wrapper
        given = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
        positional = [arg.value for arg in call.args if arg.keyword is None]
        inner = positional[position] if position < len(positional) else given.get(keyword)
        if driving & set(given) or not isinstance(inner, cst.Call):
            return None
        return inner.func if isinstance(inner.func, cst.Name) and inner.func.value == name else None

    def named(self, method: str, inside: set[int]) -> bool:
        """Code that runs names `method` outside the nodes `inside` (the driven methods: `self.setup()` in `__init__`)."""
        return any(id(node) not in inside for node in (*self._reads.get(method, ()), *self._attributes.get(method, ())))


def _unpickles(facts: Model, call: cst.Call) -> bool:
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    return name in ("load", "loads", "Unpickler", "read_pickle") and facts.qualname(func) in _UNPICKLERS


def hands_namespace(call: cst.Call) -> bool:
    """`globals()`, `eval(...)`, `exec(...)`, `fire.Fire()` with no argument: a call that reaches the module's functions by
    a name computed at run time. A method of the same name is not one (`model.eval()` switches a module's mode)."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value == "Fire" and not call.args
    return isinstance(func, cst.Name) and func.value in _NAMESPACE_CALLS and (func.value != "Fire" or not call.args)
