"""Dicts changed in place and spread into calls, the way Python does it: which names may hold one object (an alias, a
part of another object, a loop over it), what a dict holds after its own scope stores items and calls `update` on it,
and the arguments a `*sequence` or `**mapping` passes.
"""

from __future__ import annotations

import functools
from typing import Any, Iterator

import libcst as cst

from bertlint.facts.abstract import Abstract, Binding, Pack, Record
from bertlint.facts.functions import Passed, callee
from bertlint.facts.nodes import UNKNOWN, Call, ClassDef, Event, Scope

# calls whose result may hold their arguments' objects (a shallow copy shares the nested ones)
SHALLOW = frozenset({
    "builtins.dict", "builtins.list", "builtins.tuple", "builtins.set", "builtins.frozenset", "builtins.sorted", "builtins.reversed",
    "builtins.iter", "builtins.next", "builtins.zip", "builtins.enumerate", "builtins.vars", "builtins.getattr", "builtins.max",
    "builtins.min", "copy.copy", "types.SimpleNamespace", "argparse.Namespace", "functools.partial",
})
# methods whose result may be their receiver's object, a part of it, or one of their arguments
SHARING_METHODS = frozenset({"get", "setdefault", "pop", "popitem", "copy", "values", "items"})
# how a value relates to the object of a name it was made from (`aliased`)
SAME, PART, INSIDE, HOLDS = "same", "part", "inside", "holds"


def subscripted(expr: cst.BaseExpression | None, attributes: bool = False) -> cst.BaseExpression | None:
    """What a chain of subscripts (and, with `attributes`, of attributes) starts from: `cfg` of `cfg["opt"]["lr"]`."""
    kinds = (cst.Subscript, cst.Attribute) if attributes else (cst.Subscript,)
    while isinstance(expr, kinds):
        expr = expr.value
    return expr


def aliased(model: Any, expr: cst.BaseExpression, start: str = SAME) -> Iterator[tuple[cst.Name, str]]:
    """The reads of names whose objects the value of `expr` may be or hold: the name, the object a part is read from
    (`cfg["opt"]`, `args.opts`), either arm, a display's elements, a comprehension's iterables, a call of the file's
    own function or class (its arguments, what it returns), a shallow copy, `cfg.get(...)`. Each with how the value
    relates to the name's object: SAME (it may be that object: `cfg`, either arm), PART (it is new or holds only
    objects inside that one: `cfg["opt"]`, `[cfg["opt"]]`, `f(cfg["opt"])`: never that object itself, nor one that
    holds it, unless the object holds itself), INSIDE (it is a new display that holds it: `{"opt": cfg}`), or HOLDS
    (it may be or hold it: a call, a comprehension, an element of a display taken out again: `(cfg, 0)[0]`).
    `start`: how the value of `expr` itself relates to the value asked about (PART for a loop's iterable). Each
    expression is looked at once for each relation: a function that returns a call of itself ends the search."""
    stack, seen = [(expr, start)], set()
    while stack:
        node, how = stack.pop()
        if (id(node), how) in seen:
            continue
        seen.add((id(node), how))
        if isinstance(node, cst.Name):
            yield node, how
        elif isinstance(node, (cst.Subscript, cst.Attribute)):
            stack.append((node.value, PART))
        elif isinstance(node, (cst.NamedExpr, cst.StarredElement)):
            stack.append((node.value, how))
        elif isinstance(node, cst.IfExp):
            stack += [(node.body, how), (node.orelse, how)]
        elif isinstance(node, cst.BooleanOperation):
            stack += [(node.left, how), (node.right, how)]
        elif isinstance(node, (cst.Tuple, cst.List, cst.Set, cst.Dict)):  # a new display holds its elements' objects
            stack += [(e.value, INSIDE if how in (SAME, INSIDE) else HOLDS) for e in node.elements]
        elif isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            loop = node.for_in
            while loop is not None:
                stack.append((loop.iter, HOLDS))
                loop = loop.inner_for_in
        elif isinstance(node, cst.Call):
            stack += [(e, HOLDS) for e in _call_shares(model, node)]


def _call_shares(model: Any, node: cst.Call) -> list[cst.BaseExpression]:
    call = model.call_of(node)
    if call is None:
        return []
    args = [a.value for a in call.node.args]
    if call.method is not None and call.qualname is None:
        return [call.receiver, *args] if call.method in SHARING_METHODS else [call.receiver]
    if call.qualname in SHALLOW:
        return args
    if isinstance(call.node.func, cst.Lambda):
        return [*args, call.node.func.body]
    target = callee(model, call) if call.qualname is None or call.qualname.startswith("<local>.") else None
    if target is None:
        return []
    if isinstance(target, ClassDef):
        return args
    return [*args, *(r for r in model.return_values(target.fn) if r is not None)]


class Items:
    """The evaluator's dicts changed in place by their own scope, and the arguments spread into a call."""

    def item_changes(self, value: Any, event: Event, owner: Scope) -> Any:
        """`value` (a dict, or a `Record`) after `event`: `d["k"] = v` (a plain store of one level at a constant key)
        or `d.update(...)` (a mapping and keywords) or `d.setdefault(key[, value])` (the key stored when absent);
        UNKNOWN for any other change (a deletion, `d["k"] += 1`, a nested store) or a key not known."""
        items = dict(value.items) if isinstance(value, Record) else value
        if not isinstance(items, dict):
            return UNKNOWN
        items = dict(items)
        if event.op == "setitem":
            store = self.f.plain_stores.get(id(event.value))
            if store is None or not isinstance(store.target.value, cst.Name) or len(store.target.slice) != 1 or not isinstance(store.target.slice[0].slice, cst.Index):
                return UNKNOWN
            key = self.const_at(store.target.slice[0].slice.value, store.scope, store.order)
            if key is UNKNOWN:
                return UNKNOWN
            items[key] = self.sub(store.value, store.scope, store.order)
        elif event.op == "update" and (call := self.f.call_of(event.value)) is not None and call.method == "setdefault":
            key = self.const_at(call.positional[0].value, call.scope, call.order) if len(call.positional) in (1, 2) and not call.node.args[-1].keyword and not call.has_star_args else UNKNOWN
            if key is UNKNOWN:
                return UNKNOWN
            if key not in items:
                items[key] = self.sub(call.positional[1].value, call.scope, call.order) if len(call.positional) == 2 else None
        elif event.op == "update":
            call = self.f.call_of(event.value)
            if call is None or len(call.positional) > 1 or call.has_star_args:
                return UNKNOWN
            given = self.mapping(call.positional[0].value, call.scope, call.order) if call.positional else {}
            if given is UNKNOWN:
                return UNKNOWN
            items.update(given)
            items.update({k: self.sub(a.value, call.scope, call.order) for k, a in call.kwargs.items()})
        else:
            return UNKNOWN
        return items_value(items)

    def mapping(self, expr: cst.BaseExpression, scope: Scope, order: int | None) -> Any:
        """The dict `expr` holds, key by key (a constant dict or a `Record`), else UNKNOWN."""
        found = self.sub(expr, scope, order)
        if isinstance(found, Record):
            return UNKNOWN if self.changed_in_place(expr) else dict(found.items)
        keys = self.f.ask("keys", self.f, found) if isinstance(found, Binding) and not self.changed_in_place(expr) else None
        if keys:  # an object of known keys (a DataLoader's batch of dicts): each key's item, as `found[key]` reads it
            return {key: self.f.item_of(found, key) for key in sorted(keys)}
        return found if isinstance(found, dict) else UNKNOWN

    def spread(self, call: Call) -> Passed | None:
        """What `call`'s arguments pass, `*sequence` and `**mapping` spread (`bind` and each call site of a parameter
        read them so): its positional expressions up to the first `*` not known element by element, its keyword
        expressions, whether some `*` or `**` hides more, and where only one `**mapping` of unknown keys does, its item
        for a name; None for a keyword given twice (a TypeError). A spread element is the subscript `seq[i]` /
        `mapping["k"]` Python reads it as."""
        positional: list[cst.BaseExpression] = []
        keywords: dict[str, cst.BaseExpression] = {}
        hidden = False
        opaque: list[cst.BaseExpression | None] = []  # what hides more: a `**mapping`'s expression, None for a `*sequence`
        for arg in call.node.args:
            if arg.star == "*":
                found = self.sub(arg.value, call.scope, call.order)
                items = found.items if isinstance(found, Pack) else found if isinstance(found, (list, tuple)) else None
                if items is None or hidden:
                    hidden = True
                    opaque.append(None)
                    continue
                positional += [self.f.element_of(arg.value, i) for i in range(len(items))]
            elif arg.star == "**":
                found = self.mapping(arg.value, call.scope, call.order)
                if found is UNKNOWN or not all(isinstance(k, str) for k in found):
                    hidden = True
                    opaque.append(arg.value)
                    continue
                if set(found) & set(keywords):
                    return None
                keywords.update({k: self.f.element_of(arg.value, k) for k in found})
            elif arg.keyword is not None:
                if arg.keyword.value in keywords:
                    return None
                keywords[arg.keyword.value] = arg.value
            elif not hidden:
                positional.append(arg.value)
        mapping = opaque[0] if len(opaque) == 1 else None
        return positional, keywords, hidden, functools.partial(self.f.element_of, mapping) if mapping is not None else None

def items_value(items: dict) -> Any:
    """A dict of values as the evaluator holds it: a `Record` when some value is an object, else the dict."""
    return Record(tuple(items.items())) if any(isinstance(v, Abstract) for v in items.values()) else items
