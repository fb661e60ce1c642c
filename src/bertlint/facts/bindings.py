"""The bindings of a name as the walk recorded them: which of its binding events a read at a position sees (a later
binding carried round a loop included), what a plain assignment assigns, the function a name is bound to. Mixed
into `model.Model`; reads the scopes, calls, stores and loop spans the walk records."""

from __future__ import annotations

import functools

import libcst as cst

from bertlint.facts.nodes import Call, Definition, Event, Scope, Variable, names_in


class Bindings:
    """The binding events a read sees, and what they bind as written."""

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

    def latest_definition(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None) -> Definition | None:
        """`definition`, or where a name is bound several times before the read (`ds = ds.select(...)`), the value of the
        last binding before it when that binding is a plain assignment of the whole value that surely ran (in the
        read's own scope, under no branch or loop), nothing changed the name between them, and no later binding comes
        round a loop to the read."""
        found = self.definition(expr, scope, order)
        if found is not None or not isinstance(expr, cst.Name) or order is None:
            return found
        owner, events = self.binding_events(expr.value, scope, order)
        before = [e for e in events if e.order < order]
        if owner is not scope or not before or len(before) < len(events) or before[-1].conditional or before[-1].loops:
            return None
        value = _assigned(before[-1])
        return Definition(value, owner, before[-1].order) if value is not None else None

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


def _assigned(event: Event) -> cst.BaseExpression | None:
    """The value a binding event assigns when it is a plain assignment of the whole value (`x = <value>`)."""
    plain = event.op == "assign" and event.index is None and not event.path
    return event.value if plain and isinstance(event.value, cst.BaseExpression) else None
