"""BL611: a tokenizer attribute or method that the target transformers release removed (`tokenizer.max_len`
from 4.0, `prepare_seq2seq_batch` and `as_target_tokenizer()` from 5.0): the "tokenizer" and "methods"
groups of data/versions.json."""

from __future__ import annotations

from bertlint import versions
from bertlint.facts import Facts, Failure, holds_tokenizer, tokenizer_names
from bertlint.rules import Context, Replacement, Rule


class RemovedTokenizerApi(Rule):
    code = "BL611"
    name = "removed-tokenizer-api"
    exact = "the attribute is checked against the tokenizer classes of the target transformers version (data/versions.json, each row checked in the wheels)"
    severity = "error"
    fails_at_its_line = True
    summary = "a tokenizer attribute or method the target transformers removed (`tokenizer.max_len`, `prepare_seq2seq_batch`, `as_target_tokenizer()`): AttributeError"
    help = "use what replaces it"
    fix = "safe"
    fix_title = "rename the attribute"

    def check(self, ctx: Context) -> None:
        self._context_managers(ctx)
        facts = ctx.facts
        entries, templates = versions.symbols("tokenizer")
        removed = {e.name: e for e in entries if e.status(ctx.version) == "removed"}
        if not removed:
            return
        for attribute, scope, order in facts.attr_loads:
            name = attribute.attr.value
            entry = removed.get(name)
            if entry is None or name in facts.functions or not holds_tokenizer(facts, attribute.value, scope, order):
                continue  # not a tokenizer, or the file defines a method of that name itself
            kept_by = entry.extra.get("kept_by")
            if kept_by and not _load_excludes(facts, attribute, scope, order, kept_by):
                continue  # the tokenizer may be one of the families that keep it
            fix = [Replacement(attribute.attr, entry.replacement)] if entry.rename else None
            ctx.report(
                attribute,
                f"`{facts.text(attribute)}` {versions.lifecycle_text(entry, 'removed', ctx.version, ctx.version_source)}: "
                f"this line raises {templates['attribute_error'].format(name=name)}",
                help=entry.extra.get("help") or f"use `{entry.replacement}` instead",
                fix=fix,
                fix_message=f"rename `{name}` to `{entry.replacement}`",
                failure=Failure.of(templates["attribute_error"], name, entry.replacement),
            )

    @staticmethod
    def _context_managers(ctx: Context) -> None:
        """`with tokenizer.as_target_tokenizer():` / `with processor.as_target_processor():` (the "methods" group):
        names of transformers' own, so any call of them that resolves to nothing else."""
        entries, _ = versions.symbols("methods")
        removed = {e.name: e for e in entries if e.status(ctx.version) == "removed"}
        for call in ctx.facts.calls if removed else ():
            entry = removed.get(call.method or "")
            if entry is None or call.qualname is not None or call.method in ctx.facts.functions:
                continue  # resolved to something else, or the file defines a method of that name itself
            ctx.report(
                call.node.func,
                f"`{call.method}` {versions.lifecycle_text(entry, 'removed', ctx.version, ctx.version_source)}: this call raises "
                f"AttributeError: ... has no attribute '{call.method}'",
                help=entry.extra["help"],
                failure=Failure("AttributeError", (call.method, entry.replacement)),
            )


def _load_excludes(facts: Facts, attribute, scope, order: int, families: list[str]) -> bool:
    """The tokenizer resolves to a load whose class or literal checkpoint rules out every one of `families`
    (a checkpoint that is not a literal, or a tokenizer that does not resolve, rules out nothing)."""
    found = facts.kind(attribute.value, scope, order)
    load = found.call if found is not None and found.kind == "tokenizer" else None
    if load is None or (load.method == "from_pretrained" and not isinstance(facts.arg_value(load, 0, "pretrained_model_name_or_path"), str)):
        return False
    return not any(family in tokenizer_names(facts, load) for family in families)
