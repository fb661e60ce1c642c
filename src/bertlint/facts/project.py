"""The file's own project: a module that an import finds beside the file (`from config import LR`,
`import settings`, `from .config import Config`, `from src.config import MODEL_NAME`) and what it exports.

Where Python finds the module: a script run as `python path/train.py` has its own folder first on `sys.path`, so
`import config` finds `config.py` (or `config/__init__.py`) there before any installed package; a relative import
(`from .config import X`, `from .. import settings`) finds it from the file's package. A module named from a folder
above (`from src.config import X` in `src/train.py`, run as `python -m src.train` from the project's root) is taken
only when the file itself lives inside that package, the one way the import can work whatever the working directory.
A module whose first name is a library bertlint models or a standard module is never looked for: importing it
finds the library. Not followed: `from m import *`, files over `MAX_SIZE`, chains of project imports deeper than
`MAX_CHAIN`, an import cycle.

A found module is read lazily: Python's own `ast` first says whether the name asked for can be one bertlint reads
(bound once, at the top level, by an assignment, an import or a class), and only then is the module evaluated, once
per importing file. What it exports is read from it by the same evaluator, at the module's end (`python` has run it whole
when the import returns), without command-line or environment defaults, and only where no run can make it differ:
a name bound once, unconditionally, at the module's top level (a `global` write in a function is a second binding),
holding a constant (a list, set or dict one only when no alias or callee of the module changes it), or a class of
the module with its class-level constants (`Config.LR`), or a plain function of the module (`from utils import
pad_sequences`): a call of it is evaluated as a call of the file's own functions is (`Calls.run`), its body in the
module's evaluation (a global read there holds what the module bound once it had run), its parameters the importer's
arguments (`Frame.reader`), nested calls bounded by `MAX_DEPTH` and modules by `MAX_CHAIN`; not for a decorated
function, nor where an importer up the chain may change what the module's names hold (an attribute store of any name
the module spells, `setattr`, an imported name changed in place). Each member of a chain reads the others' code by
their own model (`Evaluation.home`: a query about the arguments of a call a helper made, a library model asked about
the object it made). Anything else is UNKNOWN. The importer's own changes (`cfg["lr"] = ...`, `Config.LR = ...`) are
the importer's events, seen as for any other name.
"""

from __future__ import annotations

import ast
import functools
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst

from bertlint.facts.abstract import Abstract, Function, Instance, constant
from bertlint.facts.model import Runtime
from bertlint.facts.names import KNOWN_LIBRARIES
from bertlint.facts.nodes import UNKNOWN, dotted
from bertlint.facts.reaching import BINDS

MAX_SIZE = 100_000  # characters of a project module read (a config or utilities module, not a generated one)
MAX_CHAIN = 3  # modules deep: the file, a module it imports, one that module imports
NOT_LOOKED_FOR = frozenset({*KNOWN_LIBRARIES, *sys.stdlib_module_names, "sklearn", "pandas", "scipy", "peft", "trl",
                             "lightning", "pytorch_lightning", "evaluate", "tokenizers", "sentence_transformers"})
_READ = (ast.Assign, ast.AnnAssign, ast.ImportFrom, ast.Import, ast.ClassDef, ast.FunctionDef)  # the top-level bindings read


class Module:
    """A module of the project an importing file finds: its source, the names its top level binds (Python's `ast`,
    cheap), and its evaluation by the importer's own class (built only for a name worth reading)."""

    def __init__(self, importer, path: Path, source: str):
        self.importer, self.path, self.source = importer, path, source

    @functools.cached_property
    def tree(self) -> ast.Module | None:
        """The module as Python's `ast` parses it, once (None: not Python)."""
        try:
            return ast.parse(self.source)
        except (SyntaxError, ValueError, RecursionError):
            return None

    @functools.cached_property
    def bindings(self) -> dict[str, list[ast.stmt]] | None:
        """The statements binding each name at the module's top level (in any block there, not in a function or
        class body); a name some function declares `global`, or any `:=` binds, once more. None: not Python."""
        tree = self.tree
        if tree is None:
            return None
        found: dict[str, list[ast.stmt]] = {}
        blocks = [tree.body]
        while blocks:
            for stmt in blocks.pop():
                for name in _bound(stmt):
                    found.setdefault(name, []).append(stmt)
                if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    blocks.extend(getattr(stmt, part) for part in ("body", "orelse", "finalbody") if isinstance(getattr(stmt, part, None), list))
                    blocks.extend(handler.body for handler in getattr(stmt, "handlers", ()))
                    blocks.extend(case.body for case in getattr(stmt, "cases", ()))
        for node in ast.walk(tree):  # a `global` write in a function, a `:=` anywhere (`global` or not): once more
            for name in node.names if isinstance(node, ast.Global) else (node.target.id,) if isinstance(node, ast.NamedExpr) else ():
                found.setdefault(name, []).append(node)
        return found

    @functools.cached_property
    def spelled(self) -> frozenset[str]:
        """Every name and attribute name the module's code spells (what a function of it may read)."""
        tree = self.tree
        if tree is None:
            return frozenset()
        return frozenset(node.id if isinstance(node, ast.Name) else node.attr for node in ast.walk(tree) if isinstance(node, (ast.Name, ast.Attribute)))

    def readable(self, name: str) -> bool:
        statements = (self.bindings or {}).get(name, ())
        return len(statements) == 1 and isinstance(statements[0], _READ)

    @functools.cached_property
    def evaluation(self):
        """The module evaluated by the importer's own class, or None (libcst cannot read it)."""
        try:
            module = type(self.importer)(cst.parse_module(self.source), self.source, self.path, Runtime(releases=self.importer.runtime.releases))
        except (SyntaxError, ValueError, cst.ParserSyntaxError, RecursionError):
            return None
        module.imported_by = self.importer
        for importer in _chain(self.importer):  # each reads the other's code by the other's model (`Evaluation.home`)
            importer.homes[id(module.module_scope)] = module
            module.homes[id(importer.module_scope)] = importer
        return module


def _bound(stmt: ast.stmt) -> list[str]:
    """The names a statement binds in its own scope (targets of any shape, imports, definitions, loop targets)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split(".", 1)[0] for alias in stmt.names]
    targets = {ast.Assign: lambda s: s.targets, ast.AnnAssign: lambda s: [s.target], ast.AugAssign: lambda s: [s.target],
               ast.For: lambda s: [s.target], ast.AsyncFor: lambda s: [s.target], ast.Delete: lambda s: s.targets,
               ast.With: lambda s: [i.optional_vars for i in s.items if i.optional_vars is not None]}.get(type(stmt))
    return [node.id for target in (targets(stmt) if targets else ()) for node in ast.walk(target) if isinstance(node, ast.Name)]


@dataclass(repr=False, eq=False)
class Exports:
    """What a module of the project (`cls` None) or one of its classes holds where an importer reads it: `get(name)`."""

    module: Module
    cls: str | None = None
    _reads: dict[str, Any] = field(default_factory=dict)  # the nodes built to read a class's attributes, kept alive

    def get(self, name: str) -> Any:
        return self._class_attribute(name) if self.cls is not None else exported(self.module, name)

    def _class_attribute(self, name: str) -> Any:
        """`Cls.name` read at the module's end: the class-level constant, unless the module stores it anew
        (`Cls.name = ...`, `cls.name = ...` in a class method)."""
        module = self.module.evaluation
        stored = module.stored_attributes
        if (self.cls, name) in stored or ("cls", name) in stored or _changed_by_importers(self.module.importer, name):
            return UNKNOWN
        read = self._reads.get(name)
        if read is None:
            read = self._reads[name] = cst.Attribute(cst.Name(self.cls), cst.Name(name))
        return _constant(module, module.evaluate(read, module.module_scope, None, cli=False), None)


def exported(source: Module, name: str) -> Any:
    """The value the module's name `name` holds once the module has run: a constant, a class's `Exports` (an
    `Instance` of kind "exports"), or UNKNOWN."""
    if not source.readable(name) or source.evaluation is None or _changed_by_importers(source.importer, name):
        return UNKNOWN
    module = source.evaluation
    scope = module.module_scope
    events = scope.events.get(name, ())
    if len(events) != 1 or events[0].conditional or events[0].op not in ("assign", "def", "import"):
        return UNKNOWN
    event = events[0]
    if event.op == "def" and isinstance(event.value, cst.FunctionDef):
        return _function(source, event.value)
    if event.op == "def":
        cls = module.classes.get(name)
        if cls is None or cls.node is not event.value or not _plain(cls.node):
            return UNKNOWN  # a class whose attributes a base, a metaclass or a decorator may supply
        return Instance("exports", None, Exports(source, name))
    return _constant(module, module.named_at(name, scope, None, False, None), name)


def _function(source: Module, fn: cst.FunctionDef) -> Any:
    """A function of the module, called by its importer as the file's own functions are (`Calls.run`): its body
    evaluated in the module (its globals the module's once it has run), its parameters the importer's arguments.
    UNKNOWN for a decorated one (its decorator's value is bound), and where an importer up the chain may change what
    the module's names hold (`config.LR = ...` of any name the module spells, `setattr(config, ...)`, a name it imports
    from a module of the project changed in place: `VOCAB.append(...)`)."""
    stored = {attr for module in _chain(source.importer) for _base, attr in module.stored_attributes}
    if fn.decorators or None in stored or stored & source.spelled or any(_changes_in_place(module) for module in _chain(source.importer)):
        return UNKNOWN
    return Function(fn, None, (), source.evaluation)


def _changes_in_place(importer) -> bool:
    """Does the importer change in place a name an `import` binds at its top level (an item, an append, `+=`)?"""
    events = importer.module_scope.events
    return any(event.op not in BINDS for every in events.values() if any(e.op == "import" for e in every) for event in every)


def _chain(importer):
    """The importing file and the project modules that import it, nearest first."""
    while importer is not None:
        yield importer
        importer = importer.imported_by


def _changed_by_importers(importer, name: str) -> bool:
    """An importer up the chain may store an attribute `name` on the module or its class before the read
    (`config.LR = 1e-3`, `setattr(config, key, v)`), which a `from config import LR` after it reads: not followed."""
    return any(attr in (name, None) for module in _chain(importer) for _base, attr in module.stored_attributes)


def _plain(node: cst.ClassDef) -> bool:
    """A class with no base but `object`, no metaclass, and no decorator but `dataclass` (whose class attributes are
    the fields' defaults)."""
    return (all(dotted(arg.value) == "object" for arg in node.bases) and not node.keywords
            and all(dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) in ("dataclass", "dataclasses.dataclass") for d in node.decorators))


def _constant(module, value: Any, name: str | None) -> Any:
    found = constant(value)
    if isinstance(found, Abstract) or found is UNKNOWN:
        return UNKNOWN
    if isinstance(found, (list, set, dict)) and (name is None or module.shared_and_changed(name, module.module_scope) or (id(module.module_scope), name) in module.mutated):
        return UNKNOWN  # a container the module itself may change after binding it
    return found


def imported(importer, module: str, level: int, name: str | None) -> Any:
    """What an import binds when it finds a module of the project: `import module` (`name` None) the module's
    `Exports` (an `Instance` of kind "exports"); `from module import name` (`level` dots before `module`) the submodule
    `name`'s, else what the module exports as `name`. UNKNOWN for anything else."""
    parts = module.split(".") if module else []
    first = parts[0] if parts else name
    if importer.path is None or level == 0 and first in NOT_LOOKED_FOR or sum(1 for _ in _chain(importer)) >= MAX_CHAIN:
        return UNKNOWN
    found = _module(importer, [*parts, name] if name is not None else parts, level)
    if found is not None:
        return Instance("exports", None, Exports(found))
    if name is None or not parts and level == 0:
        return UNKNOWN
    found = _module(importer, parts or ["__init__"], level)
    return exported(found, name) if found is not None else UNKNOWN


def _module(importer, parts: list[str], level: int) -> Module | None:
    """The project module `parts` (relative to the file's package `level` deep), once per importing file, or None."""
    path = _located(importer, parts, level)
    if path is None or any(module.path is not None and Path(module.path).resolve() == path for module in _chain(importer)):
        return None  # an import cycle
    return importer.memoised(("project module", str(path)), lambda: _read(importer, path)) or None


def _located(importer, parts: list[str], level: int) -> Path | None:
    here = Path(importer.path).resolve().parent
    if level:
        roots = [here] if level == 1 else [here.parents[level - 2]] if len(here.parents) > level - 2 else []
    else:
        roots = [here, *(up for up in here.parents if (up / parts[0]) in (here, *here.parents))]
    for root in roots:
        for candidate in (root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")):
            importer.depends_on(candidate)
            if candidate.is_file():
                return candidate
    return None


def _read(importer, path: Path) -> Module | None:
    try:
        with tokenize.open(path) as handle:
            source = handle.read(MAX_SIZE + 1)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    return Module(importer, path, source) if len(source) <= MAX_SIZE else None
