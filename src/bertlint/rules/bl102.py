"""BL102: `padding=True` with `max_length` and no truncation: the length neither pads nor cuts."""

from __future__ import annotations

from bertlint.facts import padding_of
from bertlint.rules import Context, Replacement, Rule


class MaxLengthHasNoEffect(Rule):
    code = "BL102"
    name = "max-length-has-no-effect"
    severity = "warning"
    summary = "`padding=True`/`\"longest\"` with `max_length` and no `truncation`: `max_length` is ignored"
    help = 'add `truncation=True` to cut texts at `max_length`, or pad to it with `padding="max_length"`'
    fix = "unsafe"
    fix_title = "add `truncation=True`"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.tokenizer_calls:
            if facts.gives(call, "truncation") is not False:  # given, or maybe in a `**mapping` of unknown keys
                continue
            pad = padding_of(facts, call)
            if pad.padding not in (True, "longest") or not isinstance(pad.max_length, int):
                continue
            length = facts.keywords(call)["max_length"]  # maybe a key of a dict the call spreads
            padding = "True" if pad.padding is True else '"longest"'
            ctx.report(
                length.at,
                f"`max_length={pad.max_length}` has no effect with `padding={padding}` and no `truncation`: "
                f"the batch is padded to its longest text, not to {pad.max_length}, and longer texts are not cut",
                fix=[Replacement(length.at, ", truncation=True", after=True)] if length.explicit else None,
            )
