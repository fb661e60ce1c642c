"""The one walk over a file's libcst tree, recording into its `model.Model`: imports and qualified names, scopes
and their binding events (targets of any shape), calls, classes, loops and their spans, stores, the statement and
scope of every node."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from bertlint.facts.names import KNOWN_LIBRARIES
from bertlint.facts.nodes import ENTER, ByType, Call, ClassDef, Element, Event, Guard, Scope, Store, dotted, iter_children, walk


class Walker:
    """The one traversal: imports, scopes and bindings, calls, classes, loops."""

    def __init__(self, model):  # the `model.Model` it records into
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
        self.f.last_order += 1
        return self.f.last_order

    # statements -------------------------------------------------------------------------
    def _block(self, body, scope: Scope, ctx: _Ctx) -> None:
        if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            body = body.body
        for stmt in body:
            self.f.scope_of_node[id(stmt)] = scope
            self._stmt(stmt, scope, ctx)

    def _stmt(self, stmt: cst.CSTNode, scope: Scope, ctx: _Ctx) -> None:
        f = self.f
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                f.parents[id(small)] = stmt
                self._small(small, stmt, scope, ctx)
            return
        if isinstance(stmt, cst.FunctionDef):
            self._decorators(stmt, scope, ctx)
            inner = Scope("function", stmt, scope, stmt.name.value)
            f.scope_of_node[id(stmt.body)] = inner
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
            f.scope_of_node[id(stmt.body)] = inner
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
            guard = Guard("loop", stmt, self.f.last_order, at=at)
            inner_ctx = ctx.enter(loop=stmt, conditional=True, stmt=stmt, guard=guard)
            self._target(stmt.target, scope, "for", stmt, inner_ctx, value=stmt.iter)
            f.loops.append((stmt, scope, ctx.function))
            self._block(stmt.body, scope, inner_ctx)
            guard.end = self.f.last_order
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
            guard.end = self.f.last_order
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
        guard.start = self.f.last_order
        self._block(body, scope, ctx.enter(conditional=True, guard=guard, **enter))
        guard.end = self.f.last_order

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
                elif method in ("update", "setdefault"):  # `cfg.update(lr=1e-4)`: the call itself, which the evaluator may follow
                    self._bind(scope, value.func.value.value, "update", value, ctx, mutation=True)
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
                    key = i
                elif i == star:
                    key = slice(i, i - len(elements) + 1 or None)
                else:
                    key = i - len(elements)
                step = Element(key, len(elements), star is not None)
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
                self.f.self_attrs.setdefault(text, []).append((value, scope, self.f.last_order))
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
            f.stmt_of[id(node)] = stmt
            kind = _EXPR_KIND[type(node)]
            if kind is cst.Call:
                self._call(node, stmt, sc, ctx)
            elif kind is cst.Name:
                parent = f.parents.get(id(node))
                parent_kind = _EXPR_KIND[type(parent)]
                if not (parent_kind is cst.Attribute and parent.attr is node or parent_kind is cst.Arg and parent.keyword is node):
                    f.name_loads.setdefault(node.value, []).append((node, sc, f.last_order, ctx.loops))
                    f.load_order[id(node)] = f.last_order
            elif kind is cst.Lambda:
                inner = Scope("lambda", node, sc, at=f.last_order + 1, loops=ctx.loops)
                f.scope_of_node[id(node)] = inner
                self._params(node.params, inner, sc, stmt, ctx)
                children = [node.body]
                for child in children:
                    f.parents[id(child)] = node
                stack.append((node.body, inner))
                continue
            elif kind is _COMPREHENSIONS:
                inner = Scope("lambda", node, sc, at=f.last_order + 1, loops=ctx.loops)
                f.scope_of_node[id(node)] = inner
                comp = node.for_in
                while comp is not None:
                    self._target(comp.target, inner, "for", stmt, ctx, value=comp.iter)
                    comp = comp.inner_for_in
                for child in iter_children(node):
                    f.parents[id(child)] = node
                    stack.append((child, inner if child is not node.for_in else sc))
                continue
            elif kind is cst.Attribute:
                f.attr_loads.append((node, sc, self.f.last_order))
            elif kind is cst.NamedExpr and isinstance(node.target, cst.Name):
                owner = sc
                while owner.kind == "lambda" and not isinstance(owner.node, cst.Lambda) and owner.parent is not None:
                    owner = owner.parent  # `:=` in a comprehension binds in the scope around it
                # conditional: an operand of `and`/`or`, of a conditional expression, may not run
                self._bind(owner, node.target.value, "assign", node.value, ctx.enter(conditional=True, guard=Guard("other")), whole=node.value)
            for child in iter_children(node):
                f.parents[id(child)] = node
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
# the class (or tuple of classes) among these that a node of the type is an instance of, else None: `Walker._small`
# asks it of every small statement, `Walker._expr` of every node of every expression
_SMALL_KIND = ByType(lambda t: next((k for k in (cst.Import, cst.ImportFrom, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Del, cst.Global, cst.Nonlocal, cst.Expr) if issubclass(t, k)), None))
_EXPR_KIND = ByType(lambda t: next((k for k in (cst.Call, cst.Name, cst.Lambda, _COMPREHENSIONS, cst.Attribute, cst.NamedExpr, cst.Arg) if issubclass(t, k)), None))


def is_main_guard(stmt: cst.If) -> bool:
    test = stmt.test
    return isinstance(test, cst.Comparison) and dotted(test.left) == "__name__"


@dataclass(frozen=True, repr=False)
class _Ctx:
    """Where the walk stands: the enclosing function, loops, `with` blocks, statement and guards."""

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
