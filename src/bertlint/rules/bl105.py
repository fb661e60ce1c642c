"""BL105: padding to `max_length` without truncation leaves long texts uncut."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts, padding_of
from bertlint.rules import Context, Replacement, Rule

# No tokenizer makes more tokens of a text than its UTF-8 bytes plus one: byte-level BPE one token per byte at worst
# (plus an added prefix space), WordPiece one per character, SentencePiece one per character of the text with its
# spaces turned into word-start marks and one prepended (one per byte with byte fallback); no pair of texts gets
# more than 4 special tokens (RoBERTa's `<s> A </s></s> B </s>`).
SPECIAL_TOKENS = 4


class MaxLengthWithoutTruncation(Rule):
    code = "BL105"
    name = "max-length-without-truncation"
    severity = "warning"
    summary = '`padding="max_length"` with `max_length` and no `truncation`: long texts are not cut'
    help = "add `truncation=True`"
    fix = "safe"
    fix_title = "add `truncation=True`"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.tokenizer_calls:
            if "truncation" in call.kwargs or "padding" not in call.kwargs or call.has_double_star:
                continue  # `pad_to_max_length=True` alone still truncates (the implicit truncation is decided first): BL101's case
            pad = padding_of(facts, call)
            if not pad.pads_to_max or not isinstance(pad.max_length, int):
                continue
            longest = _token_bound(facts, call)
            if longest is not None and longest <= pad.max_length:
                continue  # the texts are known and too short to ever exceed it
            length = call.kwargs["max_length"]
            ctx.report(
                length,
                f"padding to `max_length={pad.max_length}` without `truncation`: shorter texts are padded to {pad.max_length} "
                "but longer ones are not cut, so the batch is ragged (tensor creation fails) or overflows the model",
                fix=[Replacement(length, ", truncation=True", after=True)],
            )


def _token_bound(facts: Facts, call: Call) -> int | None:
    """An upper bound of the tokens any one encoded input of this call has, when every text it encodes is known."""
    sides = []
    for first, second in ((call.arg(0, "text"), call.arg(1, "text_pair")), (call.kwargs.get("text_target"), call.kwargs.get("text_pair_target"))):
        if first is None:
            if second is not None:
                return None
            continue
        total = 0
        for arg in (first, second):
            if arg is not None:
                longest = _longest_text(facts, arg.value, call, 3)
                if longest is None:
                    return None
                total += longest + 1
        sides.append(total + SPECIAL_TOKENS)
    return max(sides) if sides else None


def _longest_text(facts: Facts, expr: cst.BaseExpression, call: Call, depth: int) -> int | None:
    """UTF-8 bytes of the longest text `expr` can hold: a known string or list of strings, `[""] * n` (n unknown
    too), `["..." for _ in ...]`, or a name bound once to one of these; None when any text may be unknown."""
    value = facts.value(expr, call.scope, order=call.order)
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return max(len(v.encode("utf-8")) for v in value)
    if depth == 0:
        return None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        repeated = next((side for side in (expr.left, expr.right) if isinstance(side, (cst.List, cst.Tuple))), None)
        return _longest_text(facts, repeated, call, depth - 1) if repeated is not None else None
    if isinstance(expr, cst.ListComp) and not isinstance(expr.elt, (cst.Name, cst.Call)):
        element = facts.value(expr.elt, call.scope, order=call.order)
        return len(element.encode("utf-8")) if isinstance(element, str) else None
    if isinstance(expr, cst.Name) and (bound := facts.definition(expr, call.scope, call.order)) is not None:
        return _longest_text(facts, bound.value, call, depth - 1)
    return None
