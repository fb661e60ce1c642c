"""The semantic model of one file, built by the one walk over the libcst tree: imports and qualified
names, scopes and their binding events, calls, classes, stores and statements.

The walk itself is `walker`; which bindings a read sees, `bindings`. Nothing here evaluates an expression; the
evaluator does that on top of this model.
"""

from __future__ import annotations

import builtins
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import libcst as cst

from bertlint.facts.bindings import Bindings
from bertlint.facts.names import BUILTINS, CONVENTIONAL_MODULES, same_symbol
from bertlint.facts.nodes import Call, ClassDef, Event, Scope, Store, dotted, walk
from bertlint.facts.walker import Walker

T = TypeVar("T")

_UNBOUND = object()  # `Model.bound_symbol`: no scope around the read binds the name
# the events that change the object a name holds without binding the name anew
MUTATIONS = frozenset({"append", "extend", "setitem", "update"})


@dataclass(frozen=True, repr=False)
class Runtime:
    """What the caller knows of how the code runs, beyond its text: whether it is a notebook's code cells
    (run one by one in a kernel), whether it is a script of IPython cells (`# %%` markers, an export that kept its `!pip`
    lines: linted masked, run in a kernel that may hold names of cells since deleted) and the accelerator its saved
    metadata names (Colab's `"accelerator": "TPU"`), and the release of each library it targets where that is known
    (`releases`: package name -> release, from the target stage; a release that cannot be known is left out).
    `uncompiled`: the lines of a notebook's joined text where a code cell stands that certainly does not compile in
    IPython, each as one placeholder statement `0` (running it raises SyntaxError: Run All stops there)."""

    notebook: bool = False
    accelerator: str | None = None
    cells: bool = False
    releases: tuple[tuple[str, tuple[int, ...]], ...] = ()
    uncompiled: tuple[int, ...] = ()


def per_file(query: Callable[[Any], T]) -> Callable[[Any], T]:
    """Memoise a derived query `query(facts)` once per file (the model keeps the answers)."""

    @functools.wraps(query)
    def cached(model: Any) -> T:
        answers = model.answers
        if query not in answers:
            answers[query] = query(model)
        return answers[query]

    return cached


class Model(Bindings):
    """Imports, scopes, bindings, calls and statements of one file: what the rules and the evaluator look up."""

    def __init__(self, module: cst.Module, source: str, path: Path | None = None, runtime: Runtime = Runtime()):
        self.module = module
        self.source = source
        self.path = path
        self.runtime = runtime
        self.base_dir = path.parent if path is not None else None
        self.imports: dict[str, str] = {}  # local alias -> qualified name
        self.import_nodes: list[tuple[str, cst.CSTNode, cst.CSTNode]] = []  # (qualname, alias node, statement)
        self.alias_qualnames: dict[int, str] = {}  # id(alias node) -> the qualified name its import binds
        self.imported_as: dict[str, set[str]] = {}  # local name -> the qualified names imported under it, in any scope
        self.calls: list[Call] = []
        self.classes: dict[str, ClassDef] = {}
        self.functions: dict[str, list[tuple[cst.FunctionDef, Scope]]] = {}
        self.loops: list[tuple[cst.CSTNode, Scope, cst.FunctionDef | None]] = []
        self.attr_loads: list[tuple[cst.Attribute, Scope, int]] = []
        self.stores: list[Store] = []  # `x["labels"] = ...`, `config.vocab_size = ...`
        self.touched: list[Store] = []  # items and attributes changed other than by a plain store: `args.lr *= 2`, `del x["k"]`
        self.inputs: list[str] = []  # other files read or looked for: the findings depend on them (`depends_on`)
        self.module_scope = Scope("module", module, None)
        self.self_attrs: dict[str, list[tuple[cst.BaseExpression, Scope, int]]] = {}  # "self.x" -> (value, scope, order) per assignment
        self.self_attrs_unseen: set[str] = set()  # "self.x" bound other than by `self.x = value` (unpacked, `+=`, `del`, a loop's target)
        self.name_loads: dict[str, list[tuple[cst.Name, Scope, int, tuple]]] = {}  # name -> (node, scope, order, loops) of each read
        self.load_order: dict[int, int] = {}  # id of a read Name -> its order: `read_order` in constant time
        self.loop_spans: dict[int, tuple[int, int]] = {}  # id(loop) -> (the last order before a pass, the last in it)
        self.star_imports: list[str] = []  # modules of `from m import *`
        self.last_order = 0
        self.stmt_of: dict[int, cst.CSTNode] = {}
        self.scope_of_node: dict[int, Scope] = {}
        self.parents: dict[int, cst.CSTNode] = {}
        Walker(self).run()
        self.calls_by_short: dict[str, list[Call]] = {}
        for call in self.calls:
            # Calls of the file's own functions resolve to no qualname: index them by name too,
            # so that a parameter's value can be read from its call sites.
            short = call.short or (call.node.func.value if isinstance(call.node.func, cst.Name) else None)
            if short:
                self.calls_by_short.setdefault(short, []).append(call)
        self.answers: dict[Callable, Any] = {}  # per_file queries' answers


    # ---- other files -----------------------------------------------------------------------
    def depends_on(self, path: Path) -> None:
        """Note that what is said of this file depends on `path` (read, or looked for and absent), so that
        a cached result notices it appear or change."""
        self.inputs.append(os.path.abspath(path))


    # ---- names ---------------------------------------------------------------------------
    def qualname(self, expr: cst.BaseExpression | None, scope: Scope | None = None) -> str | None:
        """Resolve `T.from_pretrained` to `transformers.AutoTokenizer.from_pretrained` via the bindings of `T` that
        reach the read (`bound_symbol`), else the file's imports elsewhere, builtins, conventional module names."""
        text = dotted(expr)
        if text is None:
            return None
        head, _, rest = text.partition(".")
        found = self.bound_symbol(expr, head, scope or self.module_scope)
        if found is not _UNBOUND:
            base = found
        elif head in self.imports:
            base = self.imports[head]  # imported in another function only
        elif head in BUILTINS:
            base = f"builtins.{head}"
        elif hasattr(builtins, head):
            return None
        elif head in CONVENTIONAL_MODULES:
            base = CONVENTIONAL_MODULES[head]  # `torch.no_grad()` in a notebook cell whose import ran in another cell
        elif len(self.star_imports) == 1:
            base = f"{self.star_imports[0]}.{head}"  # `from transformers import *`: the one library it can come from
        else:
            return None
        return None if base is None else f"{base}.{rest}" if rest else base

    def bound_symbol(self, expr: cst.BaseExpression, name: str, scope: Scope) -> Any:
        """The symbol the bindings of `name` that may reach the read `expr` (starting with `name`) bind it to: walking
        back from the last binding before the read (in the read's own scope; a read from a nested scope comes after
        every binding) to one that surely ran, each an import (its qualified name) or the `class` statement of the
        file's class of that name (`<local>.name`). One symbol when they agree; when they are imports only, the last
        (`try: from a import X` / `except ImportError: from b import X`); None when they differ otherwise, when another
        binding (an assignment, a `def`, a loop target) reaches, or a parameter may; `_UNBOUND` when nothing in a scope
        around the read binds `name`."""
        owner = scope.lookup_scope(name)
        if owner is None:
            return _UNBOUND
        binds = [e for e in owner.events.get(name, ()) if e.op not in MUTATIONS]
        if not any(e.op in ("import", "def") for e in binds):
            return None  # a variable: no binding of it names a symbol
        if owner is scope and len(binds) > 1:
            _, events = self.binding_events(name, scope, self.read_order(expr))
            binds = [e for e in events if e.op not in MUTATIONS]
        reaching = []
        for event in reversed(binds):
            reaching.append(event)
            if not event.conditional:
                break
        else:
            if name in owner.params or not reaching:
                return None
        found = {self._symbol(event, name) for event in reaching}
        if len(found) == 1 or all(e.op == "import" for e in reaching):
            return self._symbol(reaching[0], name)
        return None

    def _symbol(self, event: Event, name: str) -> str | None:
        if event.op == "import":
            return self.alias_qualnames.get(id(event.value))
        cls = self.classes.get(name)
        return f"<local>.{name}" if event.op == "def" and cls is not None and cls.node is event.value else None

    def read_order(self, expr: cst.BaseExpression) -> int | None:
        """The order a read of `name` (the head of `expr`) sees bindings before (None while the walk has not
        recorded it: every binding recorded so far comes before it)."""
        while isinstance(expr, cst.Attribute):
            expr = expr.value
        at = self.load_order.get(id(expr))
        return None if at is None else at + 1

    def imported(self, *roots: str) -> bool:
        """Does the file import one of `roots` (an import whose name a later one rebinds included)?"""
        return any(q.split(".", 1)[0] in roots for q in (*(q for q, _alias, _stmt in self.import_nodes), *self.star_imports))

    def calls_to(self, *qualnames: str) -> list[Call]:
        """Calls whose callee resolves to one of `qualnames` (exact, or as a suffix after a module)."""
        wanted = set(qualnames)
        out = []
        for name in {q.rsplit(".", 1)[-1] for q in qualnames}:
            for call in self.calls_by_short.get(name, ()):
                if call.qualname and (call.qualname in wanted or any(same_symbol(call.qualname, w) for w in wanted)):
                    out.append(call)
        out.sort(key=lambda c: c.order)
        return out

    def class_bases(self, qualname: str | None, _depth: int = 0) -> set[str]:
        """All resolvable ancestors of a class (local classes are followed to their bases)."""
        if not qualname or _depth > 10:
            return set()
        found = {qualname}
        if qualname.startswith("<local>."):
            cls = self.classes.get(qualname.split(".", 1)[1])
            if cls is not None:
                for base in cls.bases:
                    found |= self.class_bases(base, _depth + 1)
        return found

    def local_subclasses(self, predicate) -> list[ClassDef]:
        return [c for c in self.classes.values() if any(predicate(b) for b in self.class_bases(f"<local>.{c.name}"))]

    # ---- statements ---------------------------------------------------------------------
    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        return self.stmt_of.get(id(node), node)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(id(node))

    def scope_of(self, node: cst.CSTNode) -> Scope:
        current: cst.CSTNode | None = node
        while current is not None:
            scope = self.scope_of_node.get(id(current))
            if scope is not None:
                return scope
            parent = self.parents.get(id(current))
            if parent is None:
                stmt = self.stmt_of.get(id(current))
                parent = stmt if stmt is not current else None
            current = parent
        return self.module_scope

    def calls_in(self, node: cst.CSTNode) -> list[Call]:
        ids = {id(n) for n in walk(node)}
        return [c for c in self.calls if id(c.node) in ids]

    def calls_back(self, call: Call) -> bool:
        """Does the library run a function passed to `call` before the call returns? (Nothing here knows a library: the
        value layer asks its library models.)"""
        return False

    def leaves_alone(self, call: Call) -> bool:
        """Does the library call `call` never run the objects it is given (`torch.save` pickles a module, never calls
        it)? (Asked of the library models, like `calls_back`.)"""
        return False

    def wraps(self, decorator: str | None) -> bool:
        """Does the library decorator `decorator` (a qualified name) return a wrapper that runs the function only when
        called? (Asked of the library models, like `calls_back`.)"""
        return False

    def call_of(self, node: cst.Call) -> Call | None:
        return self._call_index.get(id(node))

    @functools.cached_property
    def _call_index(self) -> dict[int, Call]:
        return {id(c.node): c for c in self.calls}

    # ---- derived facts ------------------------------------------------------------------

    def text(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)


    @functools.cached_property
    def statement_paths(self) -> dict[int, tuple[tuple[cst.CSTNode, ...], tuple[str, ...]]]:
        """id(statement) -> (the compound statements around it, outermost first; its indentation, level by level)."""
        return {id(stmt): (around, indent) for stmt, around, indent in _statements(self.module, (), (), self.module.default_indent)}

    def enclosing(self, stmt: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
        return self.statement_paths.get(id(stmt), ((), ()))[0]

    @functools.cached_property
    def name_counts(self) -> dict[str, int]:
        """How often the file writes each name outside its imports and `x.name` attributes."""
        skip = {id(node) for _q, alias, _s in self.import_nodes for node in walk(alias)}
        counts: dict[str, int] = {}
        for node in walk(self.module):  # an attribute comes before its name
            if isinstance(node, cst.Attribute):
                skip.add(id(node.attr))
            elif isinstance(node, cst.Name) and id(node) not in skip:
                counts[node.value] = counts.get(node.value, 0) + 1
        return counts

    def reads_in(self, node: cst.CSTNode, name: str) -> list[cst.Name]:
        """Every `Name` node spelling `name` under `node`, as written (an attribute's or a keyword's name too)."""
        return [n for n in walk(node) if isinstance(n, cst.Name) and n.value == name]

    def reads_after(self, stmt: cst.CSTNode, name: str) -> list[cst.Name]:
        """The reads of `name` in the statements after `stmt` in its block, up to the next statement that assigns
        `name` again (the reads in its value included: what came before is gone after it)."""
        block = self.parent(stmt) if self.parent(stmt) is not None else self._block_of(stmt)
        body = getattr(block, "body", None)
        if not isinstance(body, (list, tuple)) or not any(s is stmt for s in body):
            return []
        reads = []
        for later in list(body)[next(i for i, s in enumerate(body) if s is stmt) + 1 :]:
            rebinding = next(
                (s for s in later.body if isinstance(s, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in s.targets)),
                None,
            ) if isinstance(later, cst.SimpleStatementLine) else None
            reads += self.reads_in(rebinding.value if rebinding is not None else later, name)
            if rebinding is not None:
                break
        return reads

    def _block_of(self, stmt: cst.CSTNode) -> cst.CSTNode | None:
        """The module or indented block whose body holds `stmt`."""
        around = self.enclosing(stmt)
        if not around:
            return self.module
        inner = around[-1]
        for suite in (getattr(inner, "body", None), getattr(getattr(inner, "orelse", None), "body", None)):
            if isinstance(suite, cst.IndentedBlock) and any(s is stmt for s in suite.body):
                return suite
        return None


# ---------------------------------------------------------------------------------------------




def _statements(suite, around: tuple, indent: tuple, unit: str) -> Iterator[tuple[cst.CSTNode, tuple, tuple]]:
    """(statement, compound statements around it, its indentation level by level) for every statement under `suite`."""
    if isinstance(suite, cst.IndentedBlock):
        indent += (suite.indent if suite.indent is not None else unit,)
    for stmt in suite.body:
        yield from _statement_tree(stmt, around, indent, unit)


def _statement_tree(stmt: cst.CSTNode, around: tuple, indent: tuple, unit: str) -> Iterator[tuple[cst.CSTNode, tuple, tuple]]:
    yield stmt, around, indent
    if not isinstance(stmt, cst.BaseCompoundStatement):
        return
    inner = around + (stmt,)
    orelse = getattr(stmt, "orelse", None)
    suites = [getattr(stmt, "body", None), orelse.body if isinstance(orelse, cst.Else) else None]
    suites += [part.body for part in (*getattr(stmt, "handlers", ()), getattr(stmt, "finalbody", None), *getattr(stmt, "cases", ())) if part is not None]
    for suite in suites:
        if suite is not None:
            yield from _statements(suite, inner, indent, unit)
    if isinstance(orelse, cst.If):  # `elif`: nested in its `if`, at the same indentation
        yield from _statement_tree(orelse, inner, indent, unit)


# ---------------------------------------------------------------------------------------------
