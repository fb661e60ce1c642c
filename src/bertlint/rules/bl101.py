"""BL101: `pad_to_max_length=` stopped padding when transformers removed it."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import UNKNOWN
from bertlint.rules import Context, Replacement, Rule


class PadToMaxLengthDeprecated(Rule):
    code = "BL101"
    name = "pad-to-max-length-deprecated"
    severity = "error"
    summary = "`pad_to_max_length=` in a tokenizer call: removed in 4.52, silently ignored in 5.x"
    help = 'use `padding="max_length"` (with `max_length=N, truncation=True`)'
    fix = "safe"
    fix_title = 'replace `pad_to_max_length` with `padding=`'

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.tokenizer_calls:
            arg = call.kwargs.get("pad_to_max_length")
            if arg is None:
                continue
            value = facts.value(arg.value, call.scope, order=call.order)
            replacement = {True: '"max_length"', False: "False"}.get(value) if value is not UNKNOWN else None
            fix = None
            if replacement is not None and "padding" not in call.kwargs:
                fix = [Replacement(arg.keyword, "padding"), Replacement(arg.value, replacement)]
            ctx.report(arg, self._message(ctx), fix=fix, help=f"use `padding={replacement or chr(34) + 'max_length' + chr(34)}` instead (with `max_length=N, truncation=True`)")

    @staticmethod
    def _message(ctx: Context) -> str:
        v, shown = ctx.version, ctx.version_text()
        if v >= (5, 0):
            return f"`pad_to_max_length` was removed: transformers {shown} silently ignores it, so nothing is padded and no warning is printed"
        if v >= (4, 52):
            return f"`pad_to_max_length` was removed in 4.52 (target {shown}): fast tokenizers raise TypeError, slow ones silently do not pad"
        return f"`pad_to_max_length` is deprecated (target {shown}): it still pads with a FutureWarning, but 4.52 removed it and 5.x ignores it silently"
