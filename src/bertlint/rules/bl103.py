"""BL103: ids built by hand with `tokenize()` + `convert_tokens_to_ids()` reach the model."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from bertlint.facts import Call, Facts, Scope, holds_tokenizer, is_model_call, keyed_values, literal, sources
from bertlint.rules import Context, Rule

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
        reached = {id(node) for value, scope, order in _model_inputs(facts, converts) for node, _, _ in sources(facts, value, scope, order)}
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
        for value in keyed_values(function.body, "input_ids"):
            yield value, scope, None


def _from_tokenize(facts: Facts, convert: Call) -> bool:
    """The tokens come from `tokenizer.tokenize(...)`, and no special token was added to them by hand."""
    if not convert.positional:
        return False
    tokenized = False
    for node, _scope, _order in sources(facts, convert.positional[0].value, convert.scope, convert.order):
        if isinstance(node, cst.SimpleString) and literal(node) in SPECIAL_TOKENS:
            return False
        if isinstance(node, cst.Attribute) and node.attr.value in SPECIAL_TOKEN_ATTRS:
            return False
        call = facts.call_of(node) if isinstance(node, cst.Call) else None
        if call is not None and call.method == "tokenize" and holds_tokenizer(facts, call.receiver, call.scope, call.order):
            tokenized = True
    return tokenized
