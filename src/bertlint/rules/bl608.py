"""BL608: `encode_plus`/`batch_encode_plus` no longer exist in transformers 5."""

from __future__ import annotations

from bertlint.facts import structured_tokenizer
from bertlint.rules import Context, Replacement, Rule

REMOVED = ("encode_plus", "batch_encode_plus")


class EncodePlusRemoved(Rule):
    code = "BL608"
    name = "encode-plus-removed"
    exact = "the method is checked against the tokenizer API of the target transformers version"
    severity = "error"
    summary = "`tokenizer.encode_plus(...)`/`batch_encode_plus(...)` on transformers 5: `AttributeError`"
    help = "call the tokenizer itself: `tokenizer(text, ...)` takes the same arguments"
    fix = "safe"
    fix_title = "call the tokenizer directly"

    def check(self, ctx: Context) -> None:
        if ctx.version < (5, 0):
            return
        facts = ctx.facts
        for call in facts.tokenizer_calls:
            if call.method not in REMOVED or structured_tokenizer(facts, call):
                continue
            fix = [Replacement(call.node.func, facts.text(call.receiver))]
            batch = call.kwargs.get("batch_text_or_text_pairs")
            if batch is not None:
                fix.append(Replacement(batch.keyword, "text"))
            ctx.report(
                call.node.func,
                f"`{call.method}` was removed in transformers 5 (target {ctx.version_text()}): this call raises "
                f"`AttributeError: ... has no attribute {call.method}`",
                fix=fix,
            )
