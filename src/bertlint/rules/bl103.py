"""BL103: ids built by hand with `tokenize()` + `convert_tokens_to_ids()` reach the model."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from bertlint.facts import Call, Facts, Scope, holds_tokenizer, is_model_call, literal, walk
from bertlint.rules import Context, Rule

# What a value passes through unchanged on its way to the model: tensor constructors and tensor methods.
TENSOR_BUILDERS = ("torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.IntTensor", "numpy.array", "numpy.asarray",
                   "tensorflow.constant", "tensorflow.convert_to_tensor", "builtins.list")  # fmt: skip
TENSOR_METHODS = ("unsqueeze", "squeeze", "to", "cuda", "long", "int", "view", "reshape", "clone", "detach", "tolist")
SPECIAL_TOKENS = ("[CLS]", "[SEP]", "<s>", "</s>", "<|endoftext|>")
SPECIAL_TOKEN_ATTRS = ("cls_token", "sep_token", "bos_token", "eos_token")


class ManualTokenizationSkipsSpecialTokens(Rule):
    code = "BL103"
    name = "manual-tokenization-skips-special-tokens"
    severity = "warning"
    summary = "Model inputs built with `tokenize()` + `convert_tokens_to_ids()`: no special tokens, truncation or mask"
    help = "encode with `tokenizer(text, truncation=True, max_length=N)`: it adds the special tokens, truncates, pads and returns the attention mask"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        converts = [c for c in facts.calls_by_short.get("convert_tokens_to_ids", ()) if holds_tokenizer(facts, c.receiver, c.scope, c.order)]
        if not converts:
            return
        reached = {id(node) for value, scope, order in _model_inputs(facts, converts) for node, _, _ in _flow(facts, value, scope, order)}
        for call in converts:
            if id(call.node) in reached and _from_tokenize(facts, call):
                ctx.report(
                    call.node,
                    "these ids come from `tokenize()` + `convert_tokens_to_ids()` and reach the model without `[CLS]`/`[SEP]`: "
                    "the inputs do not look like pre-training, nothing truncates them to the model's limit, and padding is left to hand-made code",
                )


def _model_inputs(facts: Facts, converts: list[Call]) -> Iterator[tuple[cst.BaseExpression, Scope, int | None]]:
    """Expressions that become `input_ids`: a model call's first argument, and `"input_ids"` entries
    built in the functions that call `convert_tokens_to_ids` (a Dataset's `__getitem__`, a collate function)."""
    for call in facts.calls:
        arg = call.arg(0, "input_ids")
        if arg is not None and is_model_call(facts, call):
            yield arg.value, call.scope, call.order
    for function in {c.function for c in converts if c.function is not None}:
        scope = facts.scope_of(function.body)
        for node in walk(function.body):
            if isinstance(node, cst.DictElement) and _is_input_ids_key(node.key):
                yield node.value, scope, None
            elif isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Subscript) and _is_input_ids_key(t.target.slice[0].slice) for t in node.targets):
                yield node.value, scope, None
            elif isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "input_ids":
                yield node.value, scope, None


def _is_input_ids_key(node: cst.CSTNode) -> bool:
    value = node.value if isinstance(node, cst.Index) else node
    return literal(value) == "input_ids"


def _flow(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None, seen: set[int] | None = None):
    """(node, scope, order) for every expression the value of `expr` is built from: names are followed to
    their assignments, appends and loops, lists, comprehensions and `+` to their parts, tensors and slices
    to what they wrap."""
    seen = set() if seen is None else seen
    if id(expr) in seen:
        return
    seen.add(id(expr))
    yield expr, scope, order
    parts: list[tuple[cst.BaseExpression, Scope, int | None]] = []
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, scope, order)
        parts = [(e.value, owner, e.order) for e in events if e.op in ("assign", "append", "extend", "augadd", "for") and e.value is not None and e.index is None]
    elif isinstance(expr, (cst.List, cst.Tuple)):
        parts = [(e.value, scope, order) for e in expr.elements]
    elif isinstance(expr, cst.BinaryOperation):
        parts = [(expr.left, scope, order), (expr.right, scope, order)]
    elif isinstance(expr, cst.Subscript):
        parts = [(expr.value, scope, order)]
    elif isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
        parts = [(expr.elt, facts.scope_of(expr.elt), None)]
    elif isinstance(expr, cst.Call):
        call = facts.call_of(expr)
        if call is not None and call.method in TENSOR_METHODS and call.receiver is not None:
            parts = [(call.receiver, scope, order)]
        elif call is not None and call.qualname in TENSOR_BUILDERS and call.positional:
            parts = [(call.positional[0].value, scope, order)]
    for part, part_scope, part_order in parts:
        yield from _flow(facts, part, part_scope, part_order, seen)


def _from_tokenize(facts: Facts, convert: Call) -> bool:
    """The tokens come from `tokenizer.tokenize(...)`, and no special token was added to them by hand."""
    if not convert.positional:
        return False
    tokenized = False
    for node, scope, order in _flow(facts, convert.positional[0].value, convert.scope, convert.order):
        if isinstance(node, cst.SimpleString) and literal(node) in SPECIAL_TOKENS:
            return False
        if isinstance(node, cst.Attribute) and node.attr.value in SPECIAL_TOKEN_ATTRS:
            return False
        call = facts.call_of(node) if isinstance(node, cst.Call) else None
        if call is not None and call.method == "tokenize" and holds_tokenizer(facts, call.receiver, call.scope, call.order):
            tokenized = True
    return tokenized
