"""How long the texts a tokenizer call encodes can be, when the file shows every one of them."""

from __future__ import annotations

import libcst as cst

from bertlint.facts.nodes import Call, Scope
from bertlint.facts.values import Values as Facts

# No tokenizer makes more tokens of a text than its UTF-8 bytes plus one: byte-level BPE one token per byte at worst
# (plus an added prefix space), WordPiece one per character, SentencePiece one per character of the text with its
# spaces turned into word-start marks and one prepended (one per byte with byte fallback); no pair of texts gets
# more than 4 special tokens (RoBERTa's `<s> A </s></s> B </s>`).
SPECIAL_TOKENS_ADDED = 4


def token_bound(facts: Facts, call: Call) -> int | None:
    """An upper bound of the tokens any one encoded input of this tokenizer call has, when every text it encodes is
    known (`longest_text`); None otherwise."""
    sides = []
    for first, second in ((call.arg(0, "text"), call.arg(1, "text_pair")), (call.kwargs.get("text_target"), call.kwargs.get("text_pair_target"))):
        if first is None:
            if second is not None:
                return None
            continue
        total = 0
        for arg in (first, second):
            if arg is not None:
                longest = longest_text(facts, arg.value, call.scope, call.order)
                if longest is None:
                    return None
                total += longest + 1
        sides.append(total + SPECIAL_TOKENS_ADDED)
    return max(sides) if sides else None


def longest_text(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None, depth: int = 3) -> int | None:
    """UTF-8 bytes of the longest text `expr` can hold: a known string or list of strings, `[""] * n` (n unknown
    too), `["..." for _ in ...]`, or a name bound once to one of these; None when any text may be unknown."""
    value = facts.value(expr, scope, order=order)
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return max(len(v.encode("utf-8")) for v in value)
    if depth == 0:
        return None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        repeated = next((side for side in (expr.left, expr.right) if isinstance(side, (cst.List, cst.Tuple))), None)
        return longest_text(facts, repeated, scope, order, depth - 1) if repeated is not None else None
    if isinstance(expr, cst.ListComp) and not isinstance(expr.elt, (cst.Name, cst.Call)):
        element = facts.value(expr.elt, scope, order=order)
        return len(element.encode("utf-8")) if isinstance(element, str) else None
    if isinstance(expr, cst.Name) and (bound := facts.definition(expr, scope, order)) is not None:
        return longest_text(facts, bound.value, scope, order, depth - 1)
    return None
