"""What iterating gives: comprehensions and the builtins that make or consume iterables, as the evaluator runs them.

A comprehension is evaluated once for the element every iteration binds (its targets read the element every element
of the iterable holds, `Evaluation.elements_of`); it holds that element as many times as the iterables and `if`s
allow: a constant list when the element and the count are known, a `Series` when the element is an object. One whose
element is its target itself (through methods that keep their receiver's value) is the iterable, listed.

An iterator whose elements are known one by one (`enumerate`, `zip`, `map`, `iter`, a dict's `items()`) is a `Pack`:
never a constant, so no consumer takes a zip object for a list; `list`, `tuple` and `dict` of it are.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts import folding
from bertlint.facts.abstract import MAX_SEQ, Abstract, Instance, Pack, Record, Series, agree, constant
from bertlint.facts.items import items_value
from bertlint.facts.nodes import UNKNOWN, Call
from bertlint.facts.reaching import length, truth

MAX_ITEMS = 64  # the longest iterable followed element by element


class Iteration:
    """The evaluator's methods for iteration (mixed into `evaluator.Evaluator`, whose `eval`, `sub`, `const`, `f`,
    `scope` and `order` they use)."""

    # comprehensions -------------------------------------------------------------------------
    def _ListComp(self, node):
        return self.listed(node)

    def _GeneratorExp(self, node):
        found = self.listed(node)
        return found if isinstance(found, Abstract) else UNKNOWN  # a generator is no list

    def _SetComp(self, node):
        found = self.listed(node)
        return set(found) if isinstance(found, list) and len(set(found)) <= 1 else UNKNOWN  # one element: no order to lose

    def listed(self, node: cst.ListComp | cst.GeneratorExp | cst.SetComp) -> Any:
        """The comprehension as a list: the iterable listed, the same constant `count` times, or a `Series`."""
        comp = node.for_in
        if comp.inner_for_in is None and not comp.ifs and self.keeps(node.elt, comp.target):  # `[t.to(device) for t in batch]`
            whole = self.eval(comp.iter)
            if isinstance(whole, Abstract):
                return UNKNOWN if self.f.ask("mapping", whole) else whole
            if isinstance(whole, (list, tuple, range, str, dict)) and isinstance(node.elt, cst.Name) and len(whole) <= MAX_SEQ:
                return list(whole)
            return UNKNOWN
        indexed = self.indexed_copy(node)
        if indexed is not None:  # `[ids[i] for i in range(len(ids))]`: the elements of a sequence, in order
            whole = self.eval(indexed)
            if isinstance(whole, Abstract):
                return UNKNOWN if self.f.ask("mapping", whole) else whole
            if isinstance(whole, (list, tuple, range, str)) and len(whole) <= MAX_SEQ:
                return list(whole)
            return UNKNOWN
        mapped = self.mapped_texts(node)
        if mapped is not UNKNOWN:
            return mapped
        count = self.count(node)
        if count == 0:
            return []
        element = self.sub(node.elt, self.f.scope_of(node.elt), self.order)
        if element is UNKNOWN:
            return UNKNOWN
        if isinstance(element, Abstract) or count is UNKNOWN:
            return Series(element)  # how many unknown: every element still holds it (`[x for x in xs if x][-1]`)
        return [element] * count if count <= MAX_SEQ else UNKNOWN

    def mapped_texts(self, node) -> Any:
        """`[line.strip() for line in texts]` over known strings: each text through the str methods, one by one."""
        comp = node.for_in
        if comp.inner_for_in is not None or comp.ifs or not isinstance(comp.target, cst.Name):
            return UNKNOWN
        chain, expr = [], node.elt
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in folding.STR_METHODS:
            chain.append(expr)
            expr = expr.func.value
        if not chain or not isinstance(expr, cst.Name) or expr.value != comp.target.value:
            return UNKNOWN
        items = self.items_of(self.eval(comp.iter))
        if items is None or not all(isinstance(t, str) for t in items):
            return UNKNOWN
        scope, out = self.f.scope_of(node.elt), []
        for text in items:
            for made in reversed(chain):  # the innermost call first
                if any(a.star or a.keyword is not None for a in made.args):
                    return UNKNOWN
                text = folding.str_method(text, made.func.attr.value, [constant(self.sub(a.value, scope, self.order)) for a in made.args], {}) if isinstance(text, str) else UNKNOWN
            if text is UNKNOWN:
                return UNKNOWN
            out.append(text)
        return out

    def _DictComp(self, node):
        """`{k: v.to(device) for k, v in batch.items()}`: the batch, moved; else one key and value every time."""
        comp = node.for_in
        target, items = comp.target, comp.iter
        if (comp.inner_for_in is None and not comp.ifs and isinstance(target, cst.Tuple) and len(target.elements) == 2
                and isinstance(items, cst.Call) and isinstance(items.func, cst.Attribute) and items.func.attr.value == "items" and not items.args):
            key, value = (e.value for e in target.elements)
            if isinstance(key, cst.Name) and isinstance(node.key, cst.Name) and node.key.value == key.value and self.keeps(node.value, value):
                whole = self.eval(items.func.value)
                if isinstance(whole, Abstract):
                    return whole
        count = self.count(node)
        if count == 0:
            return {}
        scope = self.f.scope_of(node.key)
        key, value = self.sub(node.key, scope, self.order), self.sub(node.value, scope, self.order)
        if count is UNKNOWN or key is UNKNOWN or isinstance(key, Abstract):
            return UNKNOWN
        return Record(((key, value),)) if isinstance(value, Abstract) else {key: value}

    def count(self, node) -> Any:
        """How many elements the comprehension makes: the iterables' lengths multiplied, 0 when an `if` is false or an
        iterable empty; UNKNOWN when one is not known."""
        scope = self.f.scope_of(node.elt if hasattr(node, "elt") else node.key)
        count: Any = 1
        comp = node.for_in
        while comp is not None:
            iterable = self.eval(comp.iter) if comp is node.for_in else self.sub(comp.iter, scope, self.order)
            size = length(iterable)
            if size == 0:
                return 0
            count = UNKNOWN if size is UNKNOWN or count is UNKNOWN else count * size
            for test in comp.ifs:
                value = truth(self.sub(test.test, scope, self.order))
                if value is False:
                    return 0
                if value is UNKNOWN:
                    count = UNKNOWN
            comp = comp.inner_for_in
        return count

    def indexed_copy(self, node: cst.ListComp | cst.GeneratorExp | cst.SetComp) -> cst.Name | None:
        """The sequence `xs` of `[xs[i] for i in range(len(xs))]`, whose elements the comprehension lists in order (a
        sequence's `xs[i]` is the element iterating gives; a mapping's is not, so the caller leaves mappings out)."""
        comp, elt = node.for_in, node.elt
        if comp.inner_for_in is not None or comp.ifs or not isinstance(comp.target, cst.Name) or not isinstance(elt, cst.Subscript):
            return None
        if not (isinstance(elt.value, cst.Name) and len(elt.slice) == 1 and isinstance(elt.slice[0].slice, cst.Index)):
            return None
        index, seq = elt.slice[0].slice.value, elt.value
        if not (isinstance(index, cst.Name) and index.value == comp.target.value != seq.value):
            return None
        ranged = self.f.call_of(comp.iter) if isinstance(comp.iter, cst.Call) else None
        if ranged is None or ranged.qualname != "builtins.range" or len(ranged.positional) != 1 or ranged.kwargs or ranged.has_star_args:
            return None
        sized = self.f.call_of(ranged.positional[0].value) if isinstance(ranged.positional[0].value, cst.Call) else None
        if sized is None or sized.qualname != "builtins.len" or len(sized.positional) != 1 or sized.kwargs or sized.has_star_args:
            return None
        counted = sized.positional[0].value
        return seq if isinstance(counted, cst.Name) and counted.value == seq.value else None

    def keeps(self, expr: cst.BaseExpression, target: cst.BaseExpression) -> bool:
        """`expr` is the comprehension's target itself, through methods that return their receiver's value."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and self.f.ask("keeps", expr.func.attr.value):
            expr = expr.func.value
        return isinstance(expr, cst.Name) and isinstance(target, cst.Name) and expr.value == target.value

    # builtins that make or consume iterables ----------------------------------------------------
    def items_of(self, value: Any) -> tuple | None:
        """The elements iterating `value` gives, one by one, when known (a dict: its keys)."""
        if isinstance(value, Pack):
            return value.items if len(value.items) <= MAX_ITEMS else None
        if isinstance(value, (list, tuple, range, str, dict)) and len(value) <= MAX_ITEMS:
            return tuple(value)
        return None

    def _sequence_builtin(self, call: Call) -> Any:
        """`tuple(x)`, `list(x)`, `sorted(x)`: a constant folded; known elements listed; an object's elements kept (a
        mapping's keys are not)."""
        folded = self._folded_builtin(call)
        if folded is not UNKNOWN or len(call.positional) != 1 or call.kwargs or call.has_star_args:
            return folded
        arg = call.positional[0].value
        value = self.listed(arg) if isinstance(arg, cst.GeneratorExp) else self.eval(arg)  # `list(x for x in xs)`
        if isinstance(value, list) and isinstance(arg, cst.GeneratorExp):
            return self._listed_as(call, tuple(value))
        if isinstance(value, Pack) and not any(isinstance(v, Abstract) or v is UNKNOWN for v in value.items):
            return self._listed_as(call, value.items)
        if not isinstance(value, Abstract) or self.f.ask("mapping", value):
            return UNKNOWN
        return value if call.qualname != "builtins.sorted" else Series(self.f.elements_of(value))

    def _listed_as(self, call: Call, items: tuple) -> Any:
        make = {"builtins.list": list, "builtins.tuple": tuple, "builtins.sorted": sorted}[call.qualname]
        return make(items)

    def _enumerate(self, call: Call) -> Any:
        """`enumerate(x)`, `enumerate(x, 1)`, `enumerate(x, start=1)`: (count, element) pairs."""
        if not 1 <= len(call.positional) + len(call.kwargs) <= 2 or call.has_star_args or set(call.kwargs) - {"start"} or "start" in call.kwargs and len(call.positional) != 1:
            return UNKNOWN
        value = self.eval(call.positional[0].value)
        given = call.arg(1, "start")
        start = self.const(given.value) if given is not None else 0
        items = self.items_of(value)
        if items is not None and isinstance(start, int) and not isinstance(start, bool):
            return Pack(tuple(_row((start + i, item)) for i, item in enumerate(items)))
        return Series(Pack((UNKNOWN, self.f.elements_of(value))))

    def _zip(self, call: Call) -> Any:
        if not call.positional or call.has_star_args or call.kwargs:
            return UNKNOWN
        values = [self.eval(a.value) for a in call.positional]
        known = [self.items_of(v) for v in values]
        if all(items is not None for items in known):
            return Pack(tuple(_row(row) for row in zip(*known)))
        return Series(Pack(tuple(self.f.elements_of(v) for v in values)))

    def _map(self, call: Call) -> Any:
        """`map(lambda t: t.to(device), batch)`: each element mapped to itself."""
        if len(call.positional) != 2 or call.has_star_args or call.kwargs:
            return UNKNOWN
        fn, iterable = (a.value for a in call.positional)
        params = fn.params.params if isinstance(fn, cst.Lambda) else ()
        if len(params) != 1 or not self.keeps(fn.body, params[0].name):
            return UNKNOWN
        value = self.eval(iterable)
        if isinstance(value, Abstract):
            return UNKNOWN if self.f.ask("mapping", value) else value
        items = self.items_of(value) if isinstance(fn.body, cst.Name) else None  # a constant's elements, unchanged
        return Pack(items) if items is not None and not isinstance(value, dict) else UNKNOWN

    def _dict(self, call: Call) -> Any:
        """`dict(mapping)`, `dict(pairs)`, `dict(..., k=v)`, `dict(**mapping)`: a new dict, key by key (objects too)."""
        if len(call.positional) > 1 or any(a.star == "*" for a in call.node.args):
            return UNKNOWN
        out = {}
        if call.positional:
            value = self.eval(call.positional[0].value)
            items = self.items_of(value)
            if isinstance(value, (dict, Record)):
                given = self.mapping(call.positional[0].value, call.scope, call.order)
                if given is UNKNOWN:
                    return UNKNOWN
                out.update(given)
            elif items is None:
                return UNKNOWN
            else:
                for item in items:
                    pair = item.items if isinstance(item, Pack) else item
                    if not isinstance(pair, (tuple, list)) or len(pair) != 2 or pair[0] is UNKNOWN or isinstance(pair[0], Abstract):
                        return UNKNOWN
                    out[pair[0]] = pair[1]
        for arg in call.node.args:
            if arg.star == "**":
                given = self.mapping(arg.value, call.scope, call.order)
                if given is UNKNOWN:
                    return UNKNOWN
                out.update(given)
            elif arg.keyword is not None:
                out[arg.keyword.value] = self.eval(arg.value)
        return items_value(out)

    def _iter(self, call: Call) -> Any:
        """`iter(x)`: an iterator over x's elements."""
        if len(call.positional) != 1 or call.kwargs or call.has_star_args:
            return UNKNOWN
        value = self.eval(call.positional[0].value)
        items = self.items_of(value)
        if items is not None:
            return Pack(items)
        element = self.f.elements_of(value)
        return Series(element) if element is not UNKNOWN else UNKNOWN

    def _next(self, call: Call) -> Any:
        """`next(iter(x))`: x's first element; `next(it)`: an element of `it` (which one depends on what came before)."""
        if not 1 <= len(call.positional) <= 2 or call.kwargs or call.has_star_args:
            return UNKNOWN
        arg = call.positional[0].value
        value = self.eval(arg)
        fresh = isinstance(arg, cst.Call) and self.f.call_of(arg) is not None and self.f.call_of(arg).qualname == "builtins.iter"
        if isinstance(arg, cst.GeneratorExp):  # `next(x for x in xs)`: the first element the generator makes
            listed = self.listed(arg)
            value, fresh = (Pack(tuple(listed)), True) if isinstance(listed, list) and len(listed) <= MAX_ITEMS else (value, False)
        if fresh and isinstance(value, Pack) and value.items:
            first = value.items[0]
        elif fresh and isinstance(value, Pack) and len(call.positional) == 2:
            return self.eval(call.positional[1].value)  # nothing to give: the default
        elif isinstance(value, (Pack, Series)):
            first = self.f.elements_of(value)
        else:
            return UNKNOWN
        if len(call.positional) == 2 and not (isinstance(value, Pack) and value.items and fresh):
            return agree([first, self.eval(call.positional[1].value)])
        return first

    def _isinstance(self, call: Call) -> Any:
        """`isinstance(t, str)`, `isinstance(x, (list, tuple))` of a constant."""
        if len(call.positional) != 2 or call.kwargs or call.has_star_args:
            return UNKNOWN
        value, types = (a.value for a in call.positional)
        names = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
        found = self.eval(value)
        return folding.is_instance(UNKNOWN if isinstance(found, Abstract) else found, [self.f.qualname(n, self.scope) for n in names])

    def _nullcontext(self, call: Call) -> Any:
        """`contextlib.nullcontext(x)`: what `with ... as` binds is x."""
        if len(call.positional) > 1 or call.has_star_args or set(call.kwargs) - {"enter_result"}:
            return UNKNOWN
        given = call.arg(0, "enter_result")
        return Instance("context", call, self.eval(given.value) if given is not None else None)

    def view(self, receiver: Any, method: str) -> Any:
        """A dict's `keys()`, `values()`, `items()`: its elements one by one."""
        if not isinstance(receiver, dict) or len(receiver) > MAX_ITEMS:
            return UNKNOWN
        if method == "keys":
            return Pack(tuple(receiver))
        if method == "values":
            return Pack(tuple(receiver.values()))
        return Pack(tuple(_row(pair) for pair in receiver.items()))


def _row(items: tuple) -> Any:
    """A tuple an iterator gives (`enumerate`'s, `zip`'s, `items()`'s): a constant when its items are."""
    return Pack(items) if any(isinstance(v, Abstract) or v is UNKNOWN for v in items) else tuple(items)
