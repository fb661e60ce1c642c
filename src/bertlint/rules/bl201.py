"""BL201: a padded batch reaches the model without its attention mask."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Binding, Call, Facts, dotted, padding_of, walk
from bertlint.rules import Context, Replacement, Rule

FORWARD_METHODS = (None, "forward", "generate", "__call__")


class MissingAttentionMask(Rule):
    code = "BL201"
    name = "missing-attention-mask"
    severity = "error"
    summary = "A model forward or `generate` gets padded `input_ids` and no `attention_mask`"
    help = "pass `attention_mask=` (or call the model with `**encoding`)"
    fix = "unsafe"
    fix_title = "pass the encoding's `attention_mask`"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.calls:
            if not _is_model_call(facts, call):
                continue
            if "attention_mask" in call.kwargs or len(call.positional) >= 2:
                continue
            star = next((a for a in call.node.args if a.star == "**"), None)
            if star is not None:
                source = facts.kind(star.value, call.scope, call.order)
                if source is not None and source.kind == "encoding" and padding_of(facts, source.call).return_attention_mask is False:
                    ctx.report(call.node, "the encoding was made with `return_attention_mask=False`, so the model attends to its [PAD] tokens", help="drop `return_attention_mask=False` from the tokenizer call")
                continue
            ids_arg = call.arg(0, "input_ids")
            if ids_arg is None:
                continue
            ids = facts.kind(ids_arg.value, call.scope, call.order)
            why = _padded(facts, ids)
            if why is None:
                continue
            fix = None
            mask = _mask_expression(ids_arg.value, ids)
            if mask is not None:
                fix = [Replacement(call.node.args[-1], f", attention_mask={mask}", after=True)]
            ctx.report(
                ids_arg,
                f"padded `input_ids` ({why}) reach the model without `attention_mask`: it attends to the [PAD] tokens and silently computes different outputs",
                help=f"pass `attention_mask={mask or '...'}`" + (" or call the model with `**encoding`" if mask else ""),
                fix=fix,
            )


def _is_model_call(facts: Facts, call: Call) -> bool:
    if call.method is None:
        target = call.node.func
    elif call.method in ("forward", "generate"):
        target = call.receiver
    else:
        return False
    kind = facts.kind(target, call.scope, call.order)
    return kind is not None and kind.kind == "model"


def _padded(facts: Facts, ids: Binding | None) -> str | None:
    """Why these ids are padded (for the message), or None when they may not be."""
    if ids is None or ids.kind != "ids":
        return None
    if ids.detail == "padded":
        return "built with `pad_sequence`"
    if ids.detail == "manual":
        return "padded by hand with pad tokens" if _manually_padded(facts, ids.call) else None
    if ids.detail not in ("input_ids", "") or ids.call is None or ids.parent is None:
        return None
    pad = padding_of(facts, ids.call)
    line = facts.text(ids.call.node.func)
    if pad.pads_to_max:
        return f'`{line}(..., padding="max_length")`'
    if pad.pads_batch:
        return f"`{line}(...)` pads a batch of several texts"
    return None


def _manually_padded(facts: Facts, call: Call | None) -> bool:
    """`convert_tokens_to_ids(tokens)` where tokens were extended with pad tokens."""
    if call is None or not call.positional:
        return False
    arg = call.positional[0].value
    nodes = [arg]
    if isinstance(arg, cst.Name):
        owner, events = facts.binding_events(arg.value, call.scope, call.order)
        nodes += [e.value for e in events if e.value is not None]
    for node in nodes:
        for sub in walk(node):
            if isinstance(sub, cst.SimpleString) and any(p in sub.value for p in ("[PAD]", "<pad>")):
                return True
            if isinstance(sub, cst.Attribute) and sub.attr.value in ("pad_token", "pad_token_id"):
                return True
    return False


def _mask_expression(ids_expr: cst.BaseExpression, ids: Binding) -> str | None:
    """`enc["input_ids"]` -> `enc["attention_mask"]`; `enc.input_ids` -> `enc.attention_mask`."""
    if isinstance(ids_expr, cst.Subscript) and dotted(ids_expr.value) and ids.detail == "input_ids":
        return f'{dotted(ids_expr.value)}["attention_mask"]'
    if isinstance(ids_expr, cst.Attribute) and dotted(ids_expr) and ids_expr.attr.value == "input_ids":
        return f"{dotted(ids_expr.value)}.attention_mask"
    return None
