"""BL617: transformers tokenizer and processor API drift; today a tokenizer keyword the target renamed (`is_pretokenized=` -> `is_split_into_words=`, 4.0):
the "tokenizer_call" keyword group of data/versions.json, read both ways."""

from __future__ import annotations

from bertlint import versions
from bertlint.facts import structured_tokenizer
from bertlint.rules import Context, Replacement, Rule


class RenamedTokenizerKeyword(Rule):
    code = "BL617"
    name = "tokenizer-processor-drift"
    exact = "the keyword is checked against the tokenizer call signature of the target transformers version (data/versions.json, rows checked in the wheels)"
    severity = "error"
    summary = "a tokenizer call keyword the target transformers renamed (`is_pretokenized=`): TypeError on 4.x fast tokenizers, silently ignored on 5.x"
    help = "use the keyword of the target version"
    fix = "safe"
    fix_title = "rename the keyword"
    keywords = "tokenizer_call"

    def check(self, ctx: Context) -> None:
        table, error = versions.keywords(self.keywords)
        for call in ctx.facts.tokenizer_calls:
            if structured_tokenizer(ctx.facts, call):
                continue  # LayoutLM/TAPAS-style tokenizers have signatures of their own
            for keyword, arg in call.kwargs.items():
                entry = table.get(keyword)
                if entry is None:
                    continue
                if entry.added is not None and ctx.version < entry.added:
                    older = versions.older_spelling(table, keyword, ctx.version)
                    self._report(ctx, call, arg, keyword, older.name if older and older.rename else None, "warning",
                                 f"`{keyword}=` was added in transformers {versions.show(entry.added)}, after the target "
                                 f"{versions.show(ctx.version)} from {ctx.version_source}: the tokenizer does not read it")
                    continue
                status = entry.status(ctx.version)
                if status is None:
                    continue
                text = f"`{keyword}=` {versions.lifecycle_text(entry, status, ctx.version, ctx.version_source)}"
                if status == "removed":
                    text += ": " + _effect(ctx.version, error.format(name=keyword))
                self._report(ctx, call, arg, keyword, versions.replacement_at(table, entry, ctx.version) if entry.rename else None,
                             "error" if status == "removed" else "warning", text)

    @staticmethod
    def _report(ctx: Context, call, arg, keyword: str, replacement: str | None, severity: str, message: str) -> None:
        fix = None
        if replacement is not None and replacement not in call.kwargs and not call.has_double_star:
            fix = [Replacement(arg.keyword, replacement)]
        ctx.report(arg, message, severity=severity, fix=fix, fix_message=f"rename `{keyword}` to `{replacement}`",
                   help=f"use `{replacement}=` instead" if replacement else None)


def _effect(version: versions.Version, error: str) -> str:
    """What the target does with the old keyword (api-facts 1: unknown tokenizer keywords by version)."""
    if version >= (5, 0):
        return "transformers 5 ignores it silently, so pre-split words are encoded as separate sequences"
    return f"fast tokenizers raise {error}, slow ones log it as not recognized and encode the words as separate sequences"
