"""What a value is built from, as written: the expressions it flows out of, and the values a file gives a key.

`sources(facts, expr, scope, order)` follows a value back through names (their assignments, appends, extends and
loops), displays, `+`, subscripts, comprehensions, tensor conversions and the methods that keep a tensor's value: it
yields every expression on the way, the ones it starts from included. `keyed_values(facts, node, key)` gives the
values `key` is given under `node`: dict entries, item stores and keywords. `model_input_ids` gives the expressions
that become a model's `input_ids`; `tokens_from_tokenize` whether the tokens `convert_tokens_to_ids` gets come from
`tokenize()` with no special token added by hand. `data_path(expr)` names a plain data expression as written
(`ds["train"]`, `self.x`), so that two reads of the same data compare equal (`same_data`, `same_arrays`).
"""

from __future__ import annotations

from typing import Iterable, Iterator

import libcst as cst

from bertlint.facts.brain import tensors
from bertlint.facts.brain.transformers import SPECIAL_TOKEN_ATTRIBUTES, SPECIAL_TOKENS, holds_tokenizer
from bertlint.facts.loops import is_model_call
from bertlint.facts.nodes import Call, Scope, dotted, literal, walk
from bertlint.facts.values import Values as Facts

# calls that make a tensor or list of their first argument's elements
TENSOR_BUILDERS = ("torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.IntTensor", "numpy.array", "numpy.asarray",
                   "tensorflow.constant", "tensorflow.convert_to_tensor", "builtins.list")  # fmt: skip
# methods whose result holds their receiver's elements: those that keep a tensor's value, and `tolist`
KEEPING_METHODS = tensors.KEEPS | {"tolist"}
# binding events that add to a name's value
ADDING = ("assign", "append", "extend", "augadd", "for")


def sources(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None, seen: set[int] | None = None) -> Iterator[tuple[cst.BaseExpression, Scope, int | None]]:
    """(node, scope, order) for `expr` and every expression its value is built from; each node once."""
    seen = set() if seen is None else seen
    if id(expr) in seen:
        return
    seen.add(id(expr))
    yield expr, scope, order
    for part, part_scope, part_order in _parts(facts, expr, scope, order):
        yield from sources(facts, part, part_scope, part_order, seen)


def _parts(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None) -> list[tuple[cst.BaseExpression, Scope, int | None]]:
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, scope, order)
        return [(e.value, owner, e.order) for e in events if e.op in ADDING and e.value is not None and e.index is None]
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [(e.value, scope, order) for e in expr.elements]
    if isinstance(expr, cst.BinaryOperation):
        return [(expr.left, scope, order), (expr.right, scope, order)]
    if isinstance(expr, cst.Subscript):
        return [(expr.value, scope, order)]
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
        return [(expr.elt, facts.scope_of(expr.elt), None)]
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is not None and call.method in KEEPING_METHODS and call.receiver is not None:
        return [(call.receiver, scope, order)]
    if call is not None and call.qualname in TENSOR_BUILDERS and call.positional:
        return [(call.positional[0].value, scope, order)]
    return []


def keyed_values(node: cst.CSTNode, key: str) -> Iterator[cst.BaseExpression]:
    """The values `key` is given under `node`: `{key: v}`, `x[key] = v`, `f(key=v)`."""
    for inner in walk(node):
        if isinstance(inner, cst.DictElement) and _is_key(inner.key, key):
            yield inner.value
        elif isinstance(inner, cst.Assign) and any(isinstance(t.target, cst.Subscript) and _is_key(t.target.slice[0].slice, key) for t in inner.targets):
            yield inner.value
        elif isinstance(inner, cst.Arg) and inner.keyword is not None and inner.keyword.value == key:
            yield inner.value


def _is_key(node: cst.CSTNode, key: str) -> bool:
    value = node.value if isinstance(node, cst.Index) else node
    return literal(value) == key


def model_input_ids(facts: Facts, functions: Iterable[cst.FunctionDef]) -> Iterator[tuple[cst.BaseExpression, Scope, int | None]]:
    """(node, scope, order) of the expressions that become `input_ids`: a model call's first argument, and the
    `"input_ids"` entries built in `functions` (a Dataset's `__getitem__`, a collate function)."""
    for call in facts.calls:
        arg = call.arg(0, "input_ids")
        if arg is not None and is_model_call(facts, call):
            yield arg.value, call.scope, call.order
    for function in functions:
        scope = facts.scope_of(function.body)
        for value in keyed_values(function.body, "input_ids"):
            yield value, scope, None


def tokens_from_tokenize(facts: Facts, convert: Call) -> bool:
    """The tokens `convert` (a `convert_tokens_to_ids` call) gets come from `tokenizer.tokenize(...)`, and no special
    token was added to them by hand (`["[CLS]"] + tokens`, `[tok.cls_token] + tokens`)."""
    if not convert.positional:
        return False
    tokenized = False
    for node, _scope, _order in sources(facts, convert.positional[0].value, convert.scope, convert.order):
        if isinstance(node, cst.SimpleString) and literal(node) in SPECIAL_TOKENS:
            return False
        if isinstance(node, cst.Attribute) and node.attr.value in SPECIAL_TOKEN_ATTRIBUTES:
            return False
        call = facts.call_of(node) if isinstance(node, cst.Call) else None
        if call is not None and call.method == "tokenize" and holds_tokenizer(facts, call.receiver, call.scope, call.order):
            tokenized = True
    return tokenized


def data_path(expr: cst.BaseExpression) -> str | None:
    """A plain data expression as written: names, attributes and constant subscripts (`ds["train"]` -> "ds['train']",
    `self.x` -> "self.x"); None for anything else (a call could make it differ from one read to the next)."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        index = expr.slice[0].slice.value
        base = data_path(expr.value)
        constant = literal(index) if isinstance(index, cst.SimpleString) else index.evaluated_value if isinstance(index, cst.Integer) else None
        return f"{base}[{constant!r}]" if base is not None and constant is not None else None
    return dotted(expr)


def same_data(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """The same plain data expression (`data_path`)."""
    path = data_path(a)
    return path is not None and path == data_path(b)


def same_arrays(given: list[cst.BaseExpression], other: cst.BaseExpression) -> bool:
    """`other` holds the arrays `given` as written: a tuple of them in order (`(x_train, y_train)` for
    `[x_train, y_train]`, extra parts allowed), or the one same data object."""
    if isinstance(other, cst.Tuple):
        parts = [e.value for e in other.elements]
        return len(parts) >= len(given) and all(same_data(p, g) for p, g in zip(parts, given))
    return len(given) == 1 and same_data(other, given[0])
