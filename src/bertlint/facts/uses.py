"""Where a value goes: the reads that consume what one expression makes, followed forward.

`uses(facts, expr)` follows the value `expr` evaluates to through what keeps it (an attribute or a subscript of it,
a method or conversion that keeps a tensor's value: `torch.tensor([ids]).to(device)`, a one-element list, a tuple
it is a position of, a dict it is an entry of), through the names it is bound to (each read that binding reaches, `x = f(x)` carrying on), and
out of a function through its `return` to each of the file's calls of that function (`a, b = f()` takes the
position). It ends at each use, one of:

- "arg": an argument of a call that is not one of those that keep the value (`model(ids)`, `batch.append(ids)`);
  `Use.call` is that call
- "method": a method called on the value that does not keep it (`enc.keys()`); `Use.call` is that call
- "gathered": an element of a list or set with other elements (`[ids, other]`), or of a comprehension (`[f(t) for t
  in texts]`)
- "stored": assigned to an attribute or an item (`cache[k] = ids`, `obj.ids = ids`); `self.ids = ids` goes on to the
  reads of `self.ids` where they are all the file has of that attribute (`_self_reads`)
- "returned": returned or yielded where the file calls the function nowhere (the value leaves the file)
- "read": any other read (a test, an operand, an f-string, a loop's iterable)

Each node is followed once, so recursion and loops end.

`passed_as(facts, call, keyword)` answers a narrower question by name, as written: is the value a call's statement
assigns handed on as `keyword=`?

`unread_import(facts, alias)` asks the same of an import's binding: does any read of the file see it?
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import libcst as cst

from bertlint.facts.brain import tensors
from bertlint.facts.functions import Target, callee, enclosing_class, family, method_sites
from bertlint.facts.instances import class_of
from bertlint.facts.liveness import hands_namespace
from bertlint.facts.model import per_file
from bertlint.facts.nodes import Call, ClassDef, Event, Scope
from bertlint.facts.reaching import BINDS
from bertlint.facts.runs import orders_in_force
from bertlint.facts.values import Values as Facts

# calls that make a tensor or array of one argument's value (`torch.tensor([ids])`)
CONVERSIONS = frozenset({"tensor", "as_tensor", "LongTensor", "IntTensor", "constant", "convert_to_tensor", "array", "asarray"})


@dataclass(frozen=True)
class Use:
    """One place a value is consumed: `node` holds the value there (the read, or what keeps it around the read)."""

    node: cst.CSTNode
    how: str  # "arg" | "method" | "gathered" | "stored" | "returned" | "read"
    call: Call | None = None


def uses(facts: Facts, expr: cst.BaseExpression) -> list[Use]:
    """Every use of the value `expr` evaluates to, in no particular order (see the module's docstring)."""
    found: list[Use] = []
    seen: set[tuple[int, tuple[int, ...]]] = set()
    todo: list[tuple[cst.CSTNode, tuple[int, ...]]] = [(expr, ())]
    while todo:
        node, path = todo.pop()
        if (id(node), path) in seen:
            continue
        seen.add((id(node), path))
        _follow(facts, node, path, todo, found)
    return found


def _follow(facts: Facts, node: cst.CSTNode, path: tuple[int, ...], todo: list, found: list[Use]) -> None:
    """Climb from `node` through what keeps its value; at the first parent that does not, record the use or queue
    the nodes the value goes on to (a name's reads, a call site of the function it is returned from). `path` holds
    the tuple positions the value sits at, innermost last."""
    current = node
    while True:
        parent = facts.parent(current) or _small_statement(facts, current)
        if isinstance(parent, cst.Attribute) and parent.value is current:
            grand = facts.parent(parent)
            if isinstance(grand, cst.Call) and grand.func is parent:
                if parent.attr.value in tensors.KEEPS:
                    current = grand
                    continue
                found.append(Use(current, "method", facts.call_of(grand)))
                return
            current = parent
        elif isinstance(parent, cst.Subscript) and parent.value is current:
            current = parent
        elif isinstance(parent, cst.Arg):
            call = facts.parent(parent)
            found_call = facts.call_of(call) if isinstance(call, cst.Call) else None
            if found_call is None:
                found.append(Use(current, "read"))
                return
            if found_call.short in CONVERSIONS and parent.keyword is None and not parent.star and call.args[0] is parent:
                current = call
                continue
            found.append(Use(current, "arg", found_call))
            return
        elif isinstance(parent, cst.Element):
            display = facts.parent(parent)
            if isinstance(display, cst.Tuple):
                path = path + (next(i for i, e in enumerate(display.elements) if e is parent),)
                current = display
            elif isinstance(display, cst.List) and len(display.elements) == 1:
                current = display
            else:
                found.append(Use(current, "gathered"))
                return
        elif isinstance(parent, cst.DictElement) and parent.value is current:
            current = facts.parent(parent)  # one entry of a mapping: `model(**{"input_ids": ids})`
        elif isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            found.append(Use(current, "gathered"))
            return
        elif isinstance(parent, cst.Assign) and parent.value is current:
            for target in parent.targets:
                _bound(facts, target.target, parent, facts.scope_of(current), path, todo, found)
            return
        elif isinstance(parent, (cst.Return, cst.Yield)):
            _returned(facts, current, parent, path, todo, found)
            return
        else:
            found.append(Use(current, "read"))
            return


def _small_statement(facts: Facts, expr: cst.CSTNode) -> cst.CSTNode | None:
    """The small statement (`x = expr`, `return expr`) whose value is the whole expression `expr`."""
    stmt = facts.statement_of(expr)
    smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()
    return next((s for s in smalls if getattr(s, "value", None) is expr), None)


def _bound(facts: Facts, target: cst.BaseExpression, assign: cst.Assign, scope: Scope, path: tuple[int, ...], todo: list, found: list[Use]) -> None:
    """The value (at the tuple positions `path`) assigned to `target`: queue the reads of the names it binds."""
    while path and isinstance(target, (cst.Tuple, cst.List)):
        elements = target.elements
        if any(isinstance(e, cst.StarredElement) for e in elements) or path[-1] >= len(elements):
            found.append(Use(target, "read"))
            return
        target, path = elements[path[-1]].value, path[:-1]
    if isinstance(target, cst.Name):
        todo.extend((read, path) for read in reads_of(facts, target, assign, scope))
    elif isinstance(target, cst.Attribute) and (reads := _self_reads(facts, target, scope)) is not None:
        todo.extend((read, path) for read in reads)
    elif isinstance(target, (cst.Attribute, cst.Subscript)):
        found.append(Use(assign.value, "stored"))
    else:  # a tuple target unpacking the value itself (`a, b = enc`): its parts go on under names
        found.append(Use(assign.value, "read"))


def _self_reads(facts: Facts, target: cst.Attribute, scope: Scope) -> list[cst.Attribute] | None:
    """The reads of `self.x` that a method's `self.x = value` may reach: every read of an attribute `x` in the file,
    where each is `self.x` in a method of a class whose code may run on the instance (`instances.family`). None where
    the attribute may be read otherwise: through another name (`model.x`), `getattr`, `vars` or `__dict__`, a dunder
    (which Python or a library reads by name), or a read in a function nested in a method."""
    cls = _method_class(facts, scope, target.value)
    reads = _attribute_reads(facts)
    if cls is None or reads is None or target.attr.value.startswith("__"):
        return None
    found = reads.get(target.attr.value, [])
    classes = {id(c.scope) for c in family(facts, cls)}
    return [read for read, _ in found] if all(owner is not None and id(owner.scope) in classes for _, owner in found) else None


@per_file
def _attribute_reads(facts: Facts) -> dict[str, list[tuple[cst.Attribute, ClassDef | None]]] | None:
    """Each attribute name's reads, each with the file's class whose method reads it on `self` (None: another read),
    once per file; None where the file reads attributes by name (`getattr`, `vars`, `__dict__`)."""
    if any(c.short in ("getattr", "vars") for c in facts.calls) or any(a.attr.value == "__dict__" for a, _, _ in facts.attr_loads):
        return None
    found: dict[str, list[tuple[cst.Attribute, ClassDef | None]]] = {}
    for read, read_scope, _ in facts.attr_loads:
        found.setdefault(read.attr.value, []).append((read, _method_class(facts, read_scope, read.value)))
    return found


def _method_class(facts: Facts, scope: Scope, base: cst.BaseExpression) -> ClassDef | None:
    """The file's class whose method `scope` is, when `base` is that method's first parameter (`self`)."""
    fn = scope.node if scope.kind == "function" else None
    if not isinstance(fn, cst.FunctionDef) or scope.parent is None or fn.decorators or not fn.params.params:
        return None
    if not isinstance(base, cst.Name) or base.value != fn.params.params[0].name.value:
        return None
    return class_of(facts, scope.parent)


def reads_of(facts: Facts, target: cst.Name, assign: cst.Assign, scope: Scope) -> list[cst.Name]:
    """The reads of the name `target` that `assign` (in `scope`) binds which that binding may reach: in its scope, those after it
    (or before it in a loop around both) with no binding surely run between; in the scopes nested in it, every read."""
    owner = scope.lookup_scope(target.value)
    events = owner.events.get(target.value, []) if owner is not None else []
    parts = [e.value for e in assign.value.elements] if isinstance(assign.value, (cst.Tuple, cst.List)) else []
    event = next((e for e in events if e.op == "assign" and any(e.whole is v for v in (assign.value, *parts))), None)
    if event is None:
        return []
    reads = []
    for read, read_scope, order, _loops in facts.name_loads.get(target.value, ()):
        if read_scope.lookup_scope(target.value) is not owner:
            continue
        if read_scope is not owner:
            reads.append(read)
            continue
        # a read's order is the last one given before it (a binding of the same statement's line before it included:
        # `x = f()` then `return x` read at the binding's order), so what precedes it is what is at or before it
        _, before = facts.binding_events(target.value, read_scope, order + 1)
        if any(e is event for e in before) and not _replaced(event, before, order + 1):
            reads.append(read)
    return reads


class Unread(NamedTuple):
    """An import binding that no read of the file sees."""

    name: str  # the local name it binds
    read: bool  # the file reads the name somewhere (other bindings of it)
    rebound: cst.CSTNode | None  # the first statement after the import that surely binds the name anew


def unread_import(facts: Facts, alias: cst.ImportAlias) -> Unread | None:
    """The binding an import's `alias` makes, when no read of the file reaches it: every read of the name sees other
    bindings only (`from transformers import AdamW`, then `from torch.optim import AdamW` before any `AdamW(...)`), or
    there is none. A notebook's cells run in order. Where the binding a read sees cannot be told, it counts as read:
    a read in a nested scope (a function, a lambda, a comprehension, a class body) that may run where the import is
    in force, or whose points are not bounded (`runs.orders_in_force`: a `global` or `nonlocal` of the name, a
    function passed along); the namespace handed over (`globals()`, `vars()`, `eval`, `exec`); a later binding that may
    not run (in a branch, a `try`, another loop). A star import binds nothing the walk sees, so it replaces nothing.
    None where some read may see the binding."""
    local = alias.evaluated_alias or alias.evaluated_name.split(".", 1)[0]
    statement = next((stmt for _q, a, stmt in facts.import_nodes if a is alias), None)
    scopes = (facts.scope_of(statement), facts.module_scope) if statement is not None else ()  # the module's: under `global`
    found = next(((scope, e) for scope in scopes for e in scope.events.get(local, ()) if e.value is alias), None)
    if found is None or any(hands_namespace(c.node) for c in facts.calls):
        return None
    owner, event = found
    for _read, read_scope, order, _loops in facts.name_loads.get(local, ()):
        if read_scope.lookup_scope(local) is not owner:
            continue  # a name of the reading function's own
        # a read's order is the last one given before it (see `reads_of`); nested code reads at the points it may run
        orders = [order + 1] if read_scope is owner else orders_in_force(facts, local, read_scope, owner)
        if orders is None or any(_reaches(facts, local, owner, event, at) for at in orders):
            return None
    rebinding = next((e for e in owner.events[local] if _replaced(event, [e], e.order + 1)), None)
    return Unread(local, bool(facts.name_loads.get(local)), _statement(facts, rebinding) if rebinding is not None else None)


def _reaches(facts: Facts, name: str, owner: Scope, event: Event, order: int) -> bool:
    _, before = facts.binding_events(name, owner, order)
    return any(e is event for e in before) and not _replaced(event, before, order)


def _statement(facts: Facts, event: Event) -> cst.CSTNode:
    """The statement a binding event sits in (an import's: the one its alias is in)."""
    return next((stmt for _q, alias, stmt in facts.import_nodes if alias is event.value), None) or facts.statement_of(event.value)


def _replaced(event: Event, before: list[Event], order: int) -> bool:
    """A binding after `event` and before the read at `order` surely ran (unconditional, in the same loops)."""
    return any(e.order > event.order and e.order < order and e.op in BINDS and not e.conditional and e.loops == event.loops for e in before)


def _returned(facts: Facts, value: cst.CSTNode, stmt: cst.CSTNode, path: tuple[int, ...], todo: list, found: list[Use]) -> None:
    """The value returned by a function of the file: on to each call of it, or out of the file when it has none."""
    scope = facts.scope_of(stmt)
    fn = scope.node if scope.kind == "function" else None
    sites = callers(facts, fn, scope) if isinstance(fn, cst.FunctionDef) and isinstance(stmt, cst.Return) else []
    if not sites:
        found.append(Use(value, "returned"))
        return
    todo.extend((site.node, path) for site in sites)


def callers(facts: Facts, fn: cst.FunctionDef, scope: Scope) -> list[Call]:
    """The file's calls that run `fn`: those its callee resolves to it, and for a method, those on an instance of its
    class (`functions.method_sites`)."""
    sites = [c for c in facts.calls_by_short.get(fn.name.value, ()) if isinstance(target := callee(facts, c), Target) and target.fn is fn]
    cls = enclosing_class(scope.parent) if scope.parent is not None and scope.parent.kind == "class" else None
    if cls is not None:
        sites += [c for c in method_sites(facts, cls.name, fn) or () if all(c is not s for s in sites)]
    return sites


def passed_as(facts: Facts, call: Call, keyword: str) -> bool:
    """The statement `call` is in assigns (its first small statement) to a name that is `keyword` itself, or that some
    call in the file passes as `keyword=` (`hidden = encoder(ids)[0]` ... `unet(x, encoder_hidden_states=hidden)`); by
    name, as written."""
    stmt = call.stmt.body[0] if isinstance(call.stmt, cst.SimpleStatementLine) and call.stmt.body else None
    if not isinstance(stmt, cst.Assign):
        return False
    names = {t.target.value for t in stmt.targets if isinstance(t.target, cst.Name)}
    return keyword in names or any(
        isinstance(arg.value, cst.Name) and arg.value.value in names
        for other in facts.calls if (arg := other.kwargs.get(keyword)) is not None
    )
