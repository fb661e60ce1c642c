"""A demo forward: one example of the data run through the model only to show its result.

A tutorial checks its data with one forward before training (`model(input_ids=ds["input_ids"][0].unsqueeze(0),
labels=...)` then `outputs` in the cell). Nothing the run computes depends on it: whatever padding does to that one
output, the user only looks at it. `shown_example(facts, call, ids_expr)` says so when both hold:

- the ids are one row taken out of a batch or dataset by a constant index and made a batch of one again
  (`.unsqueeze(0)`, `[None]`, `.view(1, -1)`, `.reshape(1, -1)`, `torch.tensor([row])`), through names bound once;
- the forward's output is never fed (`inspection.never_fed`): printed, displayed as a cell's last line, measured, or
  not read at all. An output returned, stored, appended or fed to `backward()` is a use.

One sentence the program exists to process (`generate` on `tokenizer("translate ...: hello", padding="max_length")`,
the translation printed) is no demo: the printed result is the program's output, and the pads change it.
"""

from __future__ import annotations

import libcst as cst

from bertlint.facts.brain import tensors
from bertlint.facts.inspection import never_fed
from bertlint.facts.nodes import Call
from bertlint.facts.values import Values as Facts

_BATCH_OF_ONE = frozenset({"unsqueeze", "view", "reshape"})  # with a leading 0 (`unsqueeze(0)`) or 1 (`view(1, -1)`)


def shown_example(facts: Facts, call: Call, ids_expr: cst.BaseExpression) -> bool:
    """The forward/`generate` `call` runs one row of the data (its ids `ids_expr`) and only shows the output."""
    return _batch_of_one_row(facts, ids_expr, call, 3) and never_fed(facts, call.node)


def _batch_of_one_row(facts: Facts, expr: cst.BaseExpression, call: Call, depth: int) -> bool:
    """`expr` makes a batch of one out of a row picked by a constant index (through names bound once)."""
    expr = _kept(expr, keep_batching=False)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _BATCH_OF_ONE:
        lead = expr.args[0].value if expr.args else None
        wanted = "0" if expr.func.attr.value == "unsqueeze" else "1"
        return isinstance(lead, cst.Integer) and lead.value == wanted and _picked_row(facts, expr.func.value, call, depth)
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and _is_none(expr.slice[0].slice):
        return _picked_row(facts, expr.value, call, depth)
    found = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if found is not None and found.qualname in tensors.TENSOR_CONSTRUCTORS[:3] and found.positional:
        inner = found.positional[0].value
        return isinstance(inner, cst.List) and len(inner.elements) == 1 and _picked_row(facts, inner.elements[0].value, call, depth)
    if isinstance(expr, cst.Name) and depth and (bound := facts.definition(expr, call.scope, call.order)) is not None and bound.value is not expr:
        return _batch_of_one_row(facts, bound.value, call, depth - 1)
    return False


def _picked_row(facts: Facts, expr: cst.BaseExpression, call: Call, depth: int) -> bool:
    """`expr` is one row of something, picked by a constant integer index somewhere in its subscripts."""
    expr = _kept(expr, keep_batching=True)
    while isinstance(expr, cst.Subscript):
        if any(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Integer) for e in expr.slice):
            return True
        expr = _kept(expr.value, keep_batching=True)
    if isinstance(expr, cst.Name) and depth and (bound := facts.definition(expr, call.scope, call.order)) is not None and bound.value is not expr:
        return _picked_row(facts, bound.value, call, depth - 1)
    return False


def _kept(expr: cst.BaseExpression, keep_batching: bool) -> cst.BaseExpression:
    """Strip the method calls that keep a tensor's value (`.to(device)`, `.long()`), the batching ones only when asked."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in tensors.KEEPS:
        if expr.func.attr.value in _BATCH_OF_ONE and not keep_batching:
            break
        expr = expr.func.value
    return expr


def _is_none(element: cst.BaseSlice) -> bool:
    return isinstance(element, cst.Index) and isinstance(element.value, cst.Name) and element.value.value == "None"
