"""BL105: padding to `max_length` without truncation leaves long texts uncut."""

from __future__ import annotations

from bertlint.facts import padding_at
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
            if "truncation" in call.kwargs or call.has_double_star:
                continue
            pad = padding_at(facts, call, ctx.version)
            if not pad.pads_to_max or not isinstance(pad.max_length, int):
                continue
            length = call.kwargs["max_length"]
            ctx.report(
                length,
                f"padding to `max_length={pad.max_length}` without `truncation`: shorter texts are padded to {pad.max_length} "
                "but longer ones are not cut, so the batch is ragged (tensor creation fails) or overflows the model",
                fix=[Replacement(length.value, ", truncation=True", after=True)],
            )
