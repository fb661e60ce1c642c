"""BL105: padding to `max_length` without truncation leaves long texts uncut."""

from __future__ import annotations

from bertlint.facts import padding_of, token_bound
from bertlint.rules import Context, Replacement, Rule


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
            if facts.gives(call, "truncation") is not False or facts.gives(call, "padding") is not True:
                continue  # `pad_to_max_length=True` alone still truncates (the implicit truncation is decided first): BL101's case
            pad = padding_of(facts, call)
            if not pad.pads_to_max or not isinstance(pad.max_length, int):
                continue
            longest = token_bound(facts, call)
            if longest is not None and longest <= pad.max_length:
                continue  # the texts are known and too short to ever exceed it
            length = facts.keywords(call)["max_length"]  # maybe a key of a dict the call spreads
            ctx.report(
                length.at,
                f"padding to `max_length={pad.max_length}` without `truncation`: shorter texts are padded to {pad.max_length} "
                "but longer ones are not cut, so the batch is ragged (tensor creation fails) or overflows the model",
                fix=[Replacement(length.at, ", truncation=True", after=True)] if length.explicit else None,
            )
