"""BL608: `encode_plus`/`batch_encode_plus` (and the other tokenizer methods of `data/versions.json` "methods",
`as_target_tokenizer`/`as_target_processor`) no longer exist in transformers 5."""

from __future__ import annotations

from bertlint import versions
from bertlint.facts import structured_tokenizer
from bertlint.rules import Context, Replacement, Rule

REMOVED = ("encode_plus", "batch_encode_plus")


class EncodePlusRemoved(Rule):
    code = "BL608"
    name = "encode-plus-removed"
    exact = "the method is checked against the tokenizer API of the target transformers version"
    severity = "error"
    summary = "`tokenizer.encode_plus(...)`/`batch_encode_plus(...)` (or `as_target_tokenizer()`/`as_target_processor()`) on transformers 5: `AttributeError`"
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
        entries, _ = versions.symbols("methods")
        removed = {e.name: e for e in entries if e.status(ctx.version) == "removed"}
        for call in facts.calls:  # the names are transformers' own (`with tokenizer.as_target_tokenizer():`)
            entry = removed.get(call.method or "")
            if entry is None or call.qualname is not None or call.method in facts.functions:
                continue  # resolved to something else, or the file defines a method of that name itself
            ctx.report(
                call.node.func,
                f"`{call.method}` {versions.lifecycle_text(entry, 'removed', ctx.version, ctx.version_source)}: this call raises "
                f"`AttributeError: ... has no attribute {call.method}`",
                help=entry.extra["help"],
            )
