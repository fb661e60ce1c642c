"""Where code of a nested scope runs, seen from a scope around it: the points of the outer scope at which a function,
lambda, comprehension, class body or method of the file may run. A name of the outer scope read inside it holds the
binding in force there (a notebook's `model` loaded in one cell and rebound in a later one is, inside `train()`, the
model bound where `train()` is called), not its last binding.

A function runs where it is called by name (each call site, lifted through the functions that call it) or passed to
a call that runs it before returning (`ds.map(f)` of a `datasets.Dataset`, as the library models say); one passed
along otherwise (`Trainer(compute_metrics=f)`), decorated by something that may call it, never called in the
file, or a method (called on an instance the file may hand anywhere) may run where that happens or any time after:
a ray, joining every binding from there on. A comprehension runs where it sits, a class body at its `class`
statement. A call inside a loop also sees the bindings later in that loop (the next pass). The file runs as a
script: a caller importing it later is not seen, except the call being evaluated for an importer (a project module's
function, `project`), which runs once the module has run whole.
"""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from bertlint.facts.abstract import Frame
from bertlint.facts.model import Model
from bertlint.facts.nodes import Call, Event, Scope, dotted

# decorators of Python's that return a wrapper running the function only when the wrapper is called (a library's: the
# library models, `Model.wraps`)
WRAPPING_DECORATORS = frozenset({"functools.lru_cache", "functools.cache", "functools.wraps"})
MAX_POINTS = 64  # points followed through the file's call graph before giving up


class Point(NamedTuple):
    order: int  # where, in the outer scope's order of execution
    loops: tuple[cst.CSTNode, ...]  # the outer scope's loops around it: their later bindings reach it on the next pass
    ray: bool  # there or any time after


class _TooMany(Exception):
    pass


_CYCLE: list[Point] = []  # the answer for a function already being followed (compared by identity)


def points(model: Model, scope: Scope, owner: Scope, frame: Frame | None = None) -> list[Point] | None:
    """The points of `owner` where code of `scope` (nested in `owner`) may run, for the call `frame` evaluates (and
    the calls that evaluate its callers); None when they cannot be bounded."""
    memo = model.answers.setdefault(points, {})  # once per file, scope, outer scope and frame
    key = (id(scope), id(owner), id(frame))
    if key not in memo:
        memo[key] = None  # asked again while being found (a library model evaluating a receiver): not bounded
        try:
            memo[key] = _points(model, scope, owner, frame, frozenset())
        except _TooMany:
            memo[key] = None
    return memo[key]


def orders_in_force(model: Model, name: str, scope: Scope, owner: Scope, frame: Frame | None = None) -> list[int] | None:
    """The orders of `owner` at which `name` (bound in `owner`) is read when code of `scope` reads it: each point
    where that code may run, and just after each binding that may be in force there too (after a ray's start; later in
    a loop around the point). None when a function rebinds it (`global`, `nonlocal`) or the points are not bounded."""
    if any(name in s.globals_ or name in s.nonlocals for defs in model.functions.values() for _, s in defs):
        return None  # bound where a function runs, whenever that is
    found = points(model, scope, owner, frame)
    if found is None:
        return None
    events = owner.events.get(name, [])
    orders = set()
    for point in found:
        orders.add(point.order)
        orders.update(e.order + 1 for e in events if point.ray and e.order > point.order or _shares_loop(e, point))
    return sorted(orders)


def _shares_loop(event: Event, point: Point) -> bool:
    return any(loop is other for loop in event.loops for other in point.loops)


def _points(model: Model, scope: Scope, owner: Scope, frame: Frame | None, visiting: frozenset) -> list[Point] | None:
    parent = scope.parent
    if parent is None:
        return None
    site = _site(frame, scope.node)
    if site is not None and site[0].scope.module is not owner.module:  # called by an importer (`project`): the module has run whole
        return [Point(model.last_order + 1, (), False)]
    if site is not None:  # the call being evaluated: it runs there
        return _at(model, site[0].scope, owner, site[1], Point(site[0].order, site[0].loops, False), visiting)
    if scope.kind == "lambda":  # a comprehension runs where it sits; a lambda there or later, when called
        return _at(model, parent, owner, None, Point(scope.at, scope.loops, isinstance(scope.node, cst.Lambda)), visiting)
    defined = _definition(parent, scope.node)
    if scope.kind == "class":
        return _at(model, parent, owner, None, Point(defined.order, defined.loops, False), visiting) if defined is not None else None
    if parent.kind == "class":  # a method: any time after its class is defined
        found = _points(model, parent, owner, None, visiting)
        return None if found is None else [p._replace(ray=True) for p in found]
    if defined is None:
        return None
    loads = model.name_loads.get(scope.node.name.value, ())
    if not loads or not all(_wrapping(model, d.decorator, parent) for d in scope.node.decorators):
        return _at(model, parent, owner, None, Point(defined.order, defined.loops, True), visiting)  # any time after its `def`
    if id(scope) in visiting:
        return _CYCLE
    visiting = visiting | {id(scope)}
    found: list[Point] = []
    for node, where, order, loops in loads:
        call = _called(model, node) or _called_back(model, node)
        point = Point(call.order, call.loops, False) if call is not None else Point(order, loops, True)
        lifted = _at(model, where, owner, None, point, visiting)
        if lifted is None:
            return None
        found.extend(lifted)
        if len(found) > MAX_POINTS:
            raise _TooMany
    return found


def _at(model: Model, where: Scope, owner: Scope, frame: Frame | None, point: Point, visiting: frozenset) -> list[Point] | None:
    """`point` of `where` (nested in `owner`, or `owner` itself) as points of `owner`."""
    while where is not owner and where.kind == "lambda" and not isinstance(where.node, cst.Lambda) and where.parent is not None:
        where = where.parent  # a comprehension runs where it sits: its point is one of the scope around it
    if where is owner:
        return [point]
    if not _within(where, owner):
        return None
    found = _points(model, where, owner, frame, visiting)
    if found is _CYCLE:  # called within a run of its own: nothing new, unless it may run later (passed along)
        return None if point.ray else []
    return None if found is None else [p._replace(ray=p.ray or point.ray) for p in found]


def _within(scope: Scope | None, outer: Scope) -> bool:
    while scope is not None:
        if scope is outer:
            return True
        scope = scope.parent
    return False


def _definition(parent: Scope, node: cst.CSTNode | None) -> Event | None:
    """The `def` or `class` event that binds `node` in `parent`."""
    name = getattr(getattr(node, "name", None), "value", None)
    return next((e for e in parent.events.get(name, ()) if e.op == "def" and e.value is node), None) if name else None


def _site(frame: Frame | None, fn: cst.CSTNode | None) -> tuple[Call, Frame | None] | None:
    """The call (and its caller's frame) that the frame evaluating `fn` among `frame` and its callers stands for."""
    while frame is not None and frame.function is not fn:
        frame = frame.caller
    return (frame.site, frame.caller) if frame is not None and frame.site is not None else None


def _called(model: Model, node: cst.Name) -> Call | None:
    """The call whose callee `node` is (`f(...)`), or None for a name passed along."""
    parent = model.parent(node)
    return model.call_of(parent) if isinstance(parent, cst.Call) and parent.func is node else None


def _called_back(model: Model, node: cst.Name) -> Call | None:
    """The call `node` is passed to when the library runs it before that call returns (`ds.map(tokenize)`)."""
    arg = model.parent(node)
    parent = model.parent(arg) if isinstance(arg, cst.Arg) and arg.value is node else None
    call = model.call_of(parent) if isinstance(parent, cst.Call) else None
    return call if call is not None and model.calls_back(call) else None


def _wrapping(model: Model, decorator: cst.BaseExpression, scope: Scope) -> bool:
    func = decorator.func if isinstance(decorator, cst.Call) else decorator
    qualname = model.qualname(func, scope)
    return qualname in WRAPPING_DECORATORS or dotted(func) in ("staticmethod", "classmethod") or model.wraps(qualname)
