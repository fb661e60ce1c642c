"""The semantic model of one file, built by the one walk over the libcst tree: imports and qualified
names, scopes and their binding events, calls, classes, stores and statements.

Nothing here evaluates an expression; `values` does that on top of this model.
"""

from __future__ import annotations

import builtins
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import libcst as cst

from bertlint import knowledge
from bertlint.facts.names import BUILTINS, CONVENTIONAL_MODULES, KNOWN_LIBRARIES, same_symbol
from bertlint.facts.nodes import ENTER, ByType, Call, ClassDef, Definition, Event, Guard, Scope, Store, Variable, dotted, iter_children, names_in, walk

T = TypeVar("T")


@dataclass(frozen=True)
class Runtime:
    """What the caller knows of how the code runs, beyond its text: whether it is a notebook's code cells
    (run one by one in a kernel) and the accelerator its saved metadata names (Colab's `"accelerator": "TPU"`)."""

    notebook: bool = False
    accelerator: str | None = None


def per_file(query: Callable[[Any], T]) -> Callable[[Any], T]:
    """Memoise a derived query `query(facts)` once per file (the model keeps the answers)."""

    @functools.wraps(query)
    def cached(model: Any) -> T:
        answers = model.answers
        if query not in answers:
            answers[query] = query(model)
        return answers[query]

    return cached


class Model:
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
        self.loop_spans: dict[int, tuple[int, int]] = {}  # id(loop) -> (the last order before a pass, the last in it)
        self.star_imports: list[str] = []  # modules of `from m import *`
        self._order = 0
        self._stmt_of: dict[int, cst.CSTNode] = {}
        self._scope_of_node: dict[int, Scope] = {}
        self._parents: dict[int, cst.CSTNode] = {}
        _Walker(self).run()
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

    def checkpoint(self, name: Any) -> knowledge.ModelInfo | None:
        """What is known of the checkpoint `name` as this file passes it to `from_pretrained`: a local
        folder's config.json (beside the file, or under the working directory) wins over the table."""
        if not isinstance(name, str):
            return None
        for config in knowledge.local_config_candidates(name, self.base_dir):
            self.depends_on(config)
        return knowledge.lookup_checkpoint(name, self.base_dir)


    # ---- names ---------------------------------------------------------------------------
    def qualname(self, expr: cst.BaseExpression | None, scope: Scope | None = None) -> str | None:
        """Resolve `T.from_pretrained` to `transformers.AutoTokenizer.from_pretrained` via imports."""
        text = dotted(expr)
        if text is None:
            return None
        head, _, rest = text.partition(".")
        if scope is not None:
            owner = scope.lookup_scope(head)
            if owner is not None and owner is not self.module_scope:
                base = self._scoped_import(owner, head)  # an import in a function body binds its name there
                if base is None:
                    return None  # a local variable shadows any import
                return f"{base}.{rest}" if rest else base
        if head in self.imports:
            base = self.imports[head]
        elif head in self.classes and self.classes[head].scope.parent is self.module_scope:
            base = f"<local>.{head}"
        elif head in BUILTINS:
            base = f"builtins.{head}"
        elif head in self.module_scope.events or hasattr(builtins, head):
            return None
        elif head in CONVENTIONAL_MODULES:
            base = CONVENTIONAL_MODULES[head]  # `torch.no_grad()` in a notebook cell whose import ran in another cell
        elif len(self.star_imports) == 1:
            base = f"{self.star_imports[0]}.{head}"  # `from transformers import *`: the one library it can come from
        else:
            return None
        return f"{base}.{rest}" if rest else base

    def _scoped_import(self, owner: Scope, name: str) -> str | None:
        """The qualified name `name` is bound to in a function's scope where only imports of one name bind it, or
        only the `class` statement of the file's class of that name (a class defined in `main()`)."""
        if name in owner.params:
            return None
        events = owner.events.get(name, [])
        if len(events) == 1 and events[0].op == "def" and name in self.classes and self.classes[name].node is events[0].value:
            return f"<local>.{name}"
        quals = {self.alias_qualnames.get(id(e.value)) if e.op == "import" else None for e in events}
        return quals.pop() if len(quals) == 1 and None not in quals else None

    def imported(self, *roots: str) -> bool:
        return any(q.split(".", 1)[0] in roots for q in (*self.imports.values(), *self.star_imports))

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
        return self._stmt_of.get(id(node), node)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(id(node))

    def scope_of(self, node: cst.CSTNode) -> Scope:
        current: cst.CSTNode | None = node
        while current is not None:
            scope = self._scope_of_node.get(id(current))
            if scope is not None:
                return scope
            parent = self._parents.get(id(current))
            if parent is None:
                stmt = self._stmt_of.get(id(current))
                parent = stmt if stmt is not current else None
            current = parent
        return self.module_scope

    def calls_in(self, node: cst.CSTNode) -> list[Call]:
        ids = {id(n) for n in walk(node)}
        return [c for c in self.calls if id(c.node) in ids]

    def binding_events(self, name: str, scope: Scope, order: int | None = None) -> tuple[Scope | None, list[Event]]:
        owner = scope.lookup_scope(name)
        if owner is None:
            return None, []
        events = owner.events.get(name, [])
        if owner is scope and order is not None:
            before = [e for e in events if e.order < order]
            return owner, before + [e for e in events if e.order >= order and self._carried(e, before, order)]
        return owner, list(events)

    def definition(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None, *, identity: bool = False) -> Definition | None:
        """What `expr` stands for at `order`: itself when it is not a name; for a name, the value of its one binding
        in force when that binding is a plain assignment of the whole value (`x = <value>`) and nothing changed it
        since, else None. `identity` asks for the object only: item writes (`x[i] = v`) change what it holds, not which
        object it is. A binding in a branch counts (the read fails where it did not run), unless a parameter of the
        same name may hold another value."""
        if expr is None:
            return None
        if not isinstance(expr, cst.Name):
            return Definition(expr, scope, order)
        owner, events = self.binding_events(expr.value, scope, order)
        events = [e for e in events if e.op not in ("setitem", "update")] if identity else events
        if owner is None or len(events) != 1 or events[0].conditional and expr.value in owner.params:
            return None
        value = _assigned(events[0])
        return Definition(value, owner, events[0].order) if value is not None else None

    @functools.cached_property
    def variables(self) -> list[Variable]:
        """The names bound in the module and in the file's functions, scope by scope, in the order first bound."""
        scopes = [self.module_scope] + [scope for defs in self.functions.values() for _, scope in defs]
        return [
            Variable(scope, name, any(e.op == "assign" for e in events), events[-1].order + 1, tuple(e.value if e.op != "setitem" else None for e in events))
            for scope in scopes for name, events in scope.events.items() if events
        ]

    def replaced_before_use(self, call: Call) -> bool:
        """`x = call(...)` then `x = ...` again with nothing between that mentions `x` (both unconditional, outside
        loops): the value the call made is dropped unused."""
        for name, events in call.scope.events.items():
            for first, then in zip(events, events[1:]):
                if first.value is not call.node or first.op != "assign" or first.index is not None:
                    continue
                if then.op != "assign" or first.conditional or then.conditional or first.loops or then.loops or name in names_in(then.value):
                    return False
                between = (c.node for c in self.calls if first.order < c.order < then.order)
                stored = (n for s in self.stores if first.order < s.order < then.order for n in (s.target, s.value))
                bound = (e.value for other in call.scope.events.values() for e in other if first.order < e.order < then.order and e.value is not None)
                return not any(name in names_in(node) for node in (*between, *stored, *bound))
        return False

    def parameter_read(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None) -> Scope | None:
        """The function (or lambda) scope whose parameter a name reads at `order`, nothing having bound it before."""
        if not isinstance(expr, cst.Name):
            return None
        owner, events = self.binding_events(expr.value, scope, order)
        return owner if owner is not None and not events and expr.value in owner.params else None

    def assigned_values(self, name: str, scope: Scope) -> list[cst.BaseExpression | None]:
        """What each binding of `name` in the scope it resolves to assigns, wherever it runs, before or after any
        read: the whole value of a plain assignment, None for any other binding (a loop target, an unpacking, an
        import, a mutation)."""
        owner = scope.lookup_scope(name)
        return [_assigned(event) for event in owner.events.get(name, ())] if owner is not None else []

    def function_named(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None) -> cst.FunctionDef | cst.Lambda | None:
        """The function `expr` names: a lambda itself, else the `def` a name is bound to at `order` (its last
        binding)."""
        if isinstance(expr, cst.Lambda):
            return expr
        if not isinstance(expr, cst.Name):
            return None
        owner, events = self.binding_events(expr.value, scope, order)
        binds = [e for e in events if e.op in ("def", "assign", "import", "for")]
        return binds[-1].value if binds and binds[-1].op == "def" and isinstance(binds[-1].value, cst.FunctionDef) else None

    def _carried(self, event: Event, before: list[Event], order: int) -> bool:
        """`event`, later than a read at `order` in a loop around both, reaches the read on the next pass, unless a
        binding in that loop binds the name again first on every pass (a `for` target, or an assignment in no branch
        of the innermost loop around it, that loop around the read)."""
        return any(self._around(loop, order) and not any(self._binds_first(e, loop, order) for e in before) for loop in event.loops)

    def _binds_first(self, event: Event, loop: cst.CSTNode, order: int) -> bool:
        if event.op not in ("assign", "for", "import", "def") or not any(m is loop for m in event.loops) or not self._around(event.loops[-1], order):
            return False
        inner = max(i for i, g in enumerate(event.guards) if g.node is event.loops[-1])
        return inner == len(event.guards) - 1  # no branch inside the innermost loop around it

    def _around(self, loop: cst.CSTNode, order: int) -> bool:
        start, end = self.loop_spans.get(id(loop), (order, order))
        return start < order <= end

    def calls_back(self, call: Call) -> bool:
        """Does the library run a function passed to `call` before the call returns? (Nothing here knows a library: the
        value layer asks its library models.)"""
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


def _assigned(event: Event) -> cst.BaseExpression | None:
    """The value a binding event assigns when it is a plain assignment of the whole value (`x = <value>`)."""
    plain = event.op == "assign" and event.index is None and not event.path
    return event.value if plain and isinstance(event.value, cst.BaseExpression) else None


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


class _Walker:
    """The one traversal: imports, scopes and bindings, calls, classes, loops."""

    def __init__(self, model: Model):
        self.f = model

    def run(self) -> None:
        self.repeated_classes: set[str] = set()
        self._block(self.f.module.body, self.f.module_scope, ctx=_Ctx())
        self._forget_repeated_classes()

    def _forget_repeated_classes(self) -> None:
        """A name two class statements bind names no one class of the file: which one a call constructs depends on
        the order of execution, so the name resolves to none (`classes` keeps one class per name)."""
        for name in self.repeated_classes:
            del self.f.classes[name]
        local = {f"<local>.{name}" for name in self.repeated_classes}
        for call in self.f.calls if local else ():
            if call.qualname is not None and ".".join(call.qualname.split(".", 2)[:2]) in local:
                call.qualname = None

    def _next(self) -> int:
        self.f._order += 1
        return self.f._order

    # statements -------------------------------------------------------------------------
    def _block(self, body, scope: Scope, ctx: _Ctx) -> None:
        if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            body = body.body
        for stmt in body:
            self.f._scope_of_node[id(stmt)] = scope
            self._stmt(stmt, scope, ctx)

    def _stmt(self, stmt: cst.CSTNode, scope: Scope, ctx: _Ctx) -> None:
        f = self.f
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                f._parents[id(small)] = stmt
                self._small(small, stmt, scope, ctx)
            return
        if isinstance(stmt, cst.FunctionDef):
            self._decorators(stmt, scope, ctx)
            inner = Scope("function", stmt, scope, stmt.name.value)
            f._scope_of_node[id(stmt.body)] = inner
            f.functions.setdefault(stmt.name.value, []).append((stmt, inner))
            self._bind(scope, stmt.name.value, "def", stmt, ctx)
            self._params(stmt.params, inner, scope, stmt, ctx)
            self._block(stmt.body, inner, _Ctx(function=stmt, stmt=stmt))
            return
        if isinstance(stmt, cst.ClassDef):
            self._decorators(stmt, scope, ctx)
            bases = []
            for arg in stmt.bases:
                self._expr(arg.value, stmt, scope, ctx)
                q = f.qualname(arg.value, scope)
                if q:
                    bases.append(q)
            inner = Scope("class", stmt, scope, stmt.name.value)
            f._scope_of_node[id(stmt.body)] = inner
            methods = {}
            body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else stmt.body.body
            for item in body:
                if isinstance(item, cst.FunctionDef):
                    methods[item.name.value] = item
            if stmt.name.value in f.classes:
                self.repeated_classes.add(stmt.name.value)
            f.classes[stmt.name.value] = ClassDef(stmt, stmt.name.value, tuple(bases), methods, inner)
            self._bind(scope, stmt.name.value, "def", stmt, ctx)
            self._block(stmt.body, inner, ctx.enter(stmt=stmt))
            return
        if isinstance(stmt, (cst.For,)):
            at = self._next()  # the iterable is read once, before the loop's region
            self._expr(stmt.iter, stmt, scope, ctx)
            guard = Guard("loop", stmt, self.f._order, at=at)
            inner_ctx = ctx.enter(loop=stmt, conditional=True, stmt=stmt, guard=guard)
            self._target(stmt.target, scope, "for", stmt, inner_ctx, value=stmt.iter)
            f.loops.append((stmt, scope, ctx.function))
            self._block(stmt.body, scope, inner_ctx)
            guard.end = self.f._order
            f.loop_spans[id(stmt)] = (guard.start, guard.end)
            if stmt.orelse:
                self._guarded(Guard("other"), stmt.orelse.body, scope, ctx)
            return
        if isinstance(stmt, cst.While):
            at = self._next()  # read at `at`, the test is its value on entry; its calls lie in the loop's region
            guard = Guard("loop", stmt, at, at=at)
            self._expr(stmt.test, stmt, scope, ctx)
            inner_ctx = ctx.enter(loop=stmt, conditional=True, stmt=stmt, guard=guard)
            f.loops.append((stmt, scope, ctx.function))
            self._block(stmt.body, scope, inner_ctx)
            guard.end = self.f._order
            f.loop_spans[id(stmt)] = (guard.start, guard.end)
            if stmt.orelse:
                self._guarded(Guard("other"), stmt.orelse.body, scope, ctx)
            return
        if isinstance(stmt, cst.If):
            at = self._next()  # the chain's tests are read at `at`
            self._expr(stmt.test, stmt, scope, ctx)
            tests = (stmt.test,)
            if is_main_guard(stmt):
                self._block(stmt.body, scope, ctx.enter(stmt=stmt))
            else:
                self._guarded(Guard("if", stmt, at=at, tests=tests), stmt.body, scope, ctx, stmt=stmt)
            orelse = stmt.orelse
            while orelse is not None:
                if isinstance(orelse, cst.If):
                    self._expr(orelse.test, orelse, scope, ctx)
                    tests += (orelse.test,)
                    self._guarded(Guard("if", stmt, at=at, tests=tests), orelse.body, scope, ctx)
                    orelse = orelse.orelse
                else:
                    self._guarded(Guard("if", stmt, at=at, tests=tests, orelse=True), orelse.body, scope, ctx)
                    orelse = None
            return
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self._expr(item.item, stmt, scope, ctx)
                if item.asname is not None:
                    self._target(item.asname.name, scope, "assign", stmt, ctx, value=item.item, whole=item.item, path=(ENTER,))
            self._block(stmt.body, scope, ctx.enter(with_=stmt, stmt=stmt))
            return
        if isinstance(stmt, (cst.Try,) + ((cst.TryStar,) if hasattr(cst, "TryStar") else ())):
            self._guarded(Guard("other"), stmt.body, scope, ctx, in_try=True)
            for handler in stmt.handlers:
                if handler.type is not None:
                    self._expr(handler.type, handler, scope, ctx)
                self._guarded(Guard("other"), handler.body, scope, ctx)
            if stmt.orelse:
                self._guarded(Guard("other"), stmt.orelse.body, scope, ctx)
            if stmt.finalbody:
                self._block(stmt.finalbody.body, scope, ctx)
            return
        if isinstance(stmt, cst.Match):
            self._expr(stmt.subject, stmt, scope, ctx)
            for case in stmt.cases:
                self._guarded(Guard("other"), case.body, scope, ctx)
            return
        # anything else: visit expressions generically
        for node in iter_children(stmt):
            if isinstance(node, cst.BaseExpression):
                self._expr(node, stmt, scope, ctx)

    def _guarded(self, guard: Guard, body, scope: Scope, ctx: _Ctx, **enter) -> None:
        """Walk a block that may not run: its events carry `guard`, whose region is the block's orders."""
        guard.start = self.f._order
        self._block(body, scope, ctx.enter(conditional=True, guard=guard, **enter))
        guard.end = self.f._order

    def _decorators(self, stmt, scope, ctx) -> None:
        for dec in stmt.decorators:
            self._expr(dec.decorator, stmt, scope, ctx)

    def _params(self, params: cst.Parameters, inner: Scope, outer: Scope, stmt, ctx) -> None:
        every = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
        for extra in (params.star_arg, params.star_kwarg):
            if isinstance(extra, cst.Param):
                every.append(extra)
        for param in every:
            inner.params[param.name.value] = param
            if param.default is not None:
                self._expr(param.default, stmt, outer, ctx)

    def _small(self, small: cst.CSTNode, stmt: cst.CSTNode, scope: Scope, ctx: _Ctx) -> None:
        f = self.f
        kind = _SMALL_KIND[type(small)]
        if kind is cst.Import:
            for alias in small.names:
                name = dotted(alias.name)
                if alias.asname is not None:
                    local = alias.asname.name.value
                    f.imports[local] = name
                else:
                    local = name.split(".", 1)[0]
                    f.imports.setdefault(local, local)
                f.alias_qualnames[id(alias)] = f.imports[local] if alias.asname is not None else local
                f.import_nodes.append((name, alias, stmt))
                f.imported_as.setdefault(local, set()).add(name)
                self._bind(scope, local, "import", alias, ctx)
            return
        if kind is cst.ImportFrom:
            module = dotted(small.module) if small.module is not None else ""
            if small.relative:
                module = "." * len(small.relative) + (module or "")
            if isinstance(small.names, cst.ImportStar):
                if module.split(".", 1)[0] in KNOWN_LIBRARIES:
                    f.star_imports.append(module)
                return
            for alias in small.names:
                name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
                local = alias.asname.name.value if alias.asname is not None else name
                qual = f"{module}.{name}" if module else name
                f.imports[local] = qual
                f.alias_qualnames[id(alias)] = qual
                f.import_nodes.append((qual, alias, stmt))
                f.imported_as.setdefault(local, set()).add(qual)
                self._bind(scope, local, "import", alias, ctx)
            return
        if kind is cst.Assign:
            self._expr(small.value, stmt, scope, ctx)
            for target in small.targets:
                self._target(target.target, scope, "assign", stmt, ctx, value=small.value)
            return
        if kind is cst.AnnAssign:
            if small.value is not None:
                self._expr(small.value, stmt, scope, ctx)
                self._target(small.target, scope, "assign", stmt, ctx, value=small.value)
            return
        if kind is cst.AugAssign:
            self._expr(small.value, stmt, scope, ctx)
            op = {cst.AddAssign: "augadd", cst.MultiplyAssign: "augmul"}.get(type(small.operator), "augother")
            self._target(small.target, scope, op, stmt, ctx, value=small.value)
            return
        if kind is cst.Del:
            self._deleted(small.target, scope, ctx)
        if kind is cst.Global:
            for name in small.names:
                scope.globals_.add(name.name.value)
            return
        if kind is cst.Nonlocal:
            for name in small.names:
                scope.nonlocals.add(name.name.value)
            return
        if kind is cst.Expr:
            self._expr(small.value, stmt, scope, ctx)
            value = small.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Name):
                method = value.func.attr.value
                if method in ("append", "extend") and len(value.args) == 1:
                    self._bind(scope, value.func.value.value, method, value.args[0].value, ctx, mutation=True)
                elif method == "update":  # `cfg.update(lr=1e-4)`: the call itself, which the evaluator may follow
                    self._bind(scope, value.func.value.value, method, value, ctx, mutation=True)
            return
        for node in iter_children(small):
            if isinstance(node, cst.BaseExpression):
                self._expr(node, stmt, scope, ctx)

    def _bind(self, scope: Scope, name: str, op: str, value, ctx: _Ctx, index: int | None = None, mutation: bool = False, whole=None, path: tuple = ()) -> None:
        target_scope = self.f.module_scope if name in scope.globals_ else scope
        if name in scope.nonlocals and scope.parent is not None:
            target_scope = scope.parent.lookup_scope(name) or scope  # bound there, when the nested function runs
        if mutation:
            owner = scope.lookup_scope(name)
            target_scope = owner if owner is not None else scope
        guards = ctx.guards if target_scope is scope else (Guard("other"),)
        event = Event(self._next(), op, value, bool(guards), ctx.loops, index, whole, path, guards)
        target_scope.events.setdefault(name, []).append(event)

    def _target(self, target, scope: Scope, op: str, stmt, ctx: _Ctx, value=None, whole=None, path: tuple = ()) -> None:
        """Bind the names of `target`; `whole` and `path` say where each sits in the value (`value` keeps the older,
        flat view: the element of a display, the whole value with `index` for a flat tuple target, None deeper)."""
        if whole is None and not path:
            whole = value
        if isinstance(target, cst.Name):
            self._bind(scope, target.value, op, value, ctx, whole=whole if op in ("assign", "for") else None, path=path)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            star = next((i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement)), None)
            for i, element in enumerate(elements):
                inner = element.value
                if star is None or i < star:
                    step = i
                elif i == star:
                    step = slice(i, i - len(elements) + 1 or None)
                else:
                    step = i - len(elements)
                if isinstance(element, cst.StarredElement):
                    self._target(inner, scope, op, stmt, ctx, value=None, whole=whole, path=path + (step,))
                elif isinstance(inner, cst.Name) and not path:
                    if op == "for":
                        self._bind(scope, inner.value, "for", value, ctx, index=i, whole=whole, path=(step,))
                        continue
                    if star is None and isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elements) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
                        self._bind(scope, inner.value, "assign", value.elements[i].value, ctx, whole=value.elements[i].value)
                        continue
                    self._bind(scope, inner.value, "assign", value, ctx, index=i, whole=whole, path=(step,))
                elif op == "assign" and not path and isinstance(inner, cst.Attribute) and _pairs(elements, value):
                    # `self.ids, self.labels = ids, labels`: the display's values are all evaluated before any target
                    # is bound, each bound to its attribute as `self.ids = ids` would (none reads another target)
                    self._target(inner, scope, op, stmt, ctx, value=value.elements[i].value)
                else:
                    self._target(inner, scope, op, stmt, ctx, value=None, whole=whole, path=path + (step,))
        elif isinstance(target, cst.Attribute):
            text = dotted(target)
            if text and text.startswith("self.") and value is not None and op == "assign" and not path:
                self.f.self_attrs.setdefault(text, []).append((value, scope, self.f._order))
            elif text and text.startswith("self."):
                self.f.self_attrs_unseen.add(text)
            self._store(target, value, scope, op, ctx)
            self._expr(target, stmt, scope, ctx)
        elif isinstance(target, cst.Subscript):
            self._store(target, value, scope, op, ctx)
            self._expr(target, stmt, scope, ctx)
            self._mutated_container(target, scope, ctx)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value, scope, op, stmt, ctx, value=None, whole=whole, path=path)

    def _store(self, target, value, scope: Scope, op: str, ctx: _Ctx) -> None:
        if op == "assign" and value is not None:
            self.f.stores.append(Store(target, value, scope, self._next(), ctx.function))
        else:  # changed in place, deleted, or bound by unpacking (`a.lr, b = ...`): to what, no value says
            self.f.touched.append(Store(target, value if value is not None else target, scope, self._next(), ctx.function))

    def _deleted(self, target, scope: Scope, ctx: _Ctx) -> None:
        """`del x["k"]`, `del a.b, c[0]`: the items and attributes changed; the container an item is deleted from
        mutated."""
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._deleted(element.value, scope, ctx)
        elif isinstance(target, (cst.Subscript, cst.Attribute)):
            if isinstance(target, cst.Attribute) and (dotted(target) or "").startswith("self."):
                self.f.self_attrs_unseen.add(dotted(target))
            self._store(target, None, scope, "del", ctx)
            self._mutated_container(target, scope, ctx)

    def _mutated_container(self, target, scope: Scope, ctx: _Ctx) -> None:
        """An item of `cfg`, or of an item of it (`cfg["opt"]["lr"] = ...`), stored or deleted: `cfg` is mutated."""
        base = target.value if isinstance(target, cst.Subscript) else None
        while isinstance(base, cst.Subscript):
            base = base.value
        if isinstance(base, cst.Name):  # the item stored (the evaluator follows a plain store of one level)
            self._bind(scope, base.value, "setitem", target, ctx, mutation=True)

    # expressions ------------------------------------------------------------------------
    def _expr(self, expr: cst.CSTNode, stmt: cst.CSTNode, scope: Scope, ctx: _Ctx) -> None:
        f = self.f
        stack: list[tuple[cst.CSTNode, Scope]] = [(expr, scope)]
        while stack:
            node, sc = stack.pop()
            f._stmt_of[id(node)] = stmt
            kind = _EXPR_KIND[type(node)]
            if kind is cst.Call:
                self._call(node, stmt, sc, ctx)
            elif kind is cst.Name:
                parent = f._parents.get(id(node))
                parent_kind = _EXPR_KIND[type(parent)]
                if not (parent_kind is cst.Attribute and parent.attr is node or parent_kind is cst.Arg and parent.keyword is node):
                    f.name_loads.setdefault(node.value, []).append((node, sc, f._order, ctx.loops))
            elif kind is cst.Lambda:
                inner = Scope("lambda", node, sc, at=f._order + 1, loops=ctx.loops)
                f._scope_of_node[id(node)] = inner
                self._params(node.params, inner, sc, stmt, ctx)
                children = [node.body]
                for child in children:
                    f._parents[id(child)] = node
                stack.append((node.body, inner))
                continue
            elif kind is _COMPREHENSIONS:
                inner = Scope("lambda", node, sc, at=f._order + 1, loops=ctx.loops)
                f._scope_of_node[id(node)] = inner
                comp = node.for_in
                while comp is not None:
                    self._target(comp.target, inner, "for", stmt, ctx, value=comp.iter)
                    comp = comp.inner_for_in
                for child in iter_children(node):
                    f._parents[id(child)] = node
                    stack.append((child, inner if child is not node.for_in else sc))
                continue
            elif kind is cst.Attribute:
                f.attr_loads.append((node, sc, self.f._order))
            elif kind is cst.NamedExpr and isinstance(node.target, cst.Name):
                owner = sc
                while owner.kind == "lambda" and not isinstance(owner.node, cst.Lambda) and owner.parent is not None:
                    owner = owner.parent  # `:=` in a comprehension binds in the scope around it
                # conditional: an operand of `and`/`or`, of a conditional expression, may not run
                self._bind(owner, node.target.value, "assign", node.value, ctx.enter(conditional=True, guard=Guard("other")), whole=node.value)
            for child in iter_children(node):
                f._parents[id(child)] = node
                stack.append((child, sc))

    def _call(self, node: cst.Call, stmt, scope: Scope, ctx: _Ctx) -> None:
        f = self.f
        func = node.func
        method = receiver = None
        if isinstance(func, cst.Attribute):
            method, receiver = func.attr.value, func.value
        qual = f.qualname(func, scope)
        f.calls.append(Call(node, qual, method, receiver, scope, stmt, self._next(), ctx.loops, ctx.withs, ctx.function, ctx.conditional))


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
# the class (or tuple of classes) among these that a node of the type is an instance of, else None: `_Walker._small`
# asks it of every small statement, `_Walker._expr` of every node of every expression
_SMALL_KIND = ByType(lambda t: next((k for k in (cst.Import, cst.ImportFrom, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Del, cst.Global, cst.Nonlocal, cst.Expr) if issubclass(t, k)), None))
_EXPR_KIND = ByType(lambda t: next((k for k in (cst.Call, cst.Name, cst.Lambda, _COMPREHENSIONS, cst.Attribute, cst.NamedExpr, cst.Arg) if issubclass(t, k)), None))


def is_main_guard(stmt: cst.If) -> bool:
    test = stmt.test
    return isinstance(test, cst.Comparison) and dotted(test.left) == "__name__"


@dataclass(frozen=True)
class _Ctx:
    function: cst.FunctionDef | None = None
    loops: tuple = ()
    withs: tuple = ()
    conditional: bool = False
    stmt: cst.CSTNode | None = None
    guards: tuple = ()

    def enter(self, *, loop=None, with_=None, conditional: bool = False, stmt=None, in_try: bool = False, guard: Guard | None = None) -> _Ctx:
        return _Ctx(
            self.function,
            self.loops + ((loop,) if loop is not None else ()),
            self.withs + ((with_,) if with_ is not None else ()),
            self.conditional or conditional,
            stmt or self.stmt,
            self.guards + ((guard,) if guard is not None else ()),
        )


def _pairs(targets, value) -> bool:
    """`a.x, a.y = u, v`: a display as long as a target list without stars, none of whose values reads an attribute
    the targets bind (`self.a, self.b = self.b, self.a` swaps: each value is the one before the statement)."""
    if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) != len(targets):
        return False
    if any(isinstance(e, cst.StarredElement) for e in (*targets, *value.elements)):
        return False
    bound = {dotted(t.value) for t in targets}
    return not any(isinstance(n, cst.Attribute) and dotted(n) in bound for e in value.elements for n in walk(e.value))
