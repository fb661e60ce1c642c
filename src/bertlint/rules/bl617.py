"""BL617: transformers tokenizer and processor API drift, from data/versions.json, read both ways: a tokenizer
keyword the target renamed (`is_pretokenized=` -> `is_split_into_words=`, 4.0: the "tokenizer_call" group), the
image processors' `reduce_labels=` (-> `do_reduce_labels=`: the "image_processor" groups) and a vision
processor's `feature_extractor` attribute (-> `image_processor`, 5.0: the "processor" symbols)."""

from __future__ import annotations

import libcst as cst

from bertlint import versions
from bertlint.facts import Facts, Failure, structured_tokenizer
from bertlint.rules import Context, Replacement
from bertlint.rules.library_drift import LibraryDrift


class RenamedTokenizerKeyword(LibraryDrift):
    code = "BL617"
    name = "tokenizer-processor-drift"
    exact = "the keyword or attribute is checked against the tokenizer, image processor and processor classes of the target transformers version (data/versions.json, rows checked in the wheels)"
    summary = ("a tokenizer or processor keyword or attribute the target transformers renamed (`is_pretokenized=`, `reduce_labels=`, "
               "`processor.feature_extractor`): TypeError or AttributeError, or silently ignored")
    help = "use the keyword of the target version"
    library = "transformers"
    keywords = "tokenizer_call"
    processor_groups = ("image_processor", "image_processor_from_pretrained")

    def check(self, ctx: Context) -> None:
        self._tokenizer_keywords(ctx)
        for group in self.processor_groups:
            self._keywords(ctx, group, versions.data(self.library)["keywords"][group]["callables"], ctx.version, ctx.version_source)
        self._processor_attributes(ctx)

    def _processor_attributes(self, ctx: Context) -> None:
        """`processor.feature_extractor` where `processor` is only ever one of the row's processor classes."""
        entries, templates = versions.symbols("processor")
        current = {e.name: e for e in entries if e.status(ctx.version)}
        for attribute, scope, _order in ctx.facts.attr_loads if current else ():
            entry = current.get(attribute.attr.value)
            cls = _processor_class(ctx.facts, attribute.value, scope, entry.extra["classes"]) if entry else None
            if cls is None:
                continue
            status = entry.status(ctx.version)
            message = f"`{ctx.facts.text(attribute)}` of `{cls}` {versions.lifecycle_text(entry, status, ctx.version, ctx.version_source, self.library)}"
            if status == "removed":
                message += f": this line raises {templates['attribute_error'].format(cls=cls, name=entry.name)}"
            ctx.report(attribute.attr, message, severity="error" if status == "removed" else "warning",
                       help=f"use `{entry.replacement}` instead", fix=[Replacement(attribute.attr, entry.replacement)],
                       fix_message=f"rename `{entry.name}` to `{entry.replacement}`",
                       failure=Failure.of(templates["attribute_error"] if status == "removed" else "", entry.name, entry.replacement))

    def _tokenizer_keywords(self, ctx: Context) -> None:
        table, error = versions.keywords(self.keywords)
        for call in ctx.facts.tokenizer_calls:
            if structured_tokenizer(ctx.facts, call):
                continue  # LayoutLM/TAPAS-style tokenizers have signatures of their own
            for keyword, arg in ctx.facts.keywords(call).items():  # a `**mapping`'s known keys too, each where the file spells it
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
                raises = ""
                if status == "removed":
                    effect, raises = _effect(entry, ctx.version, entry.extra.get("error", error))
                    if call.method in versions.removed_at("encode_methods", ctx.version):  # the line raises AttributeError first
                        effect, raises = f"`{call.method}` is gone too (BL608); once the tokenizer call replaces it, {effect}", ""
                    text += ": " + effect
                self._report(ctx, call, arg, keyword, versions.replacement_at(table, entry, ctx.version) if entry.rename else None,
                             "error" if status == "removed" else "warning", text, raises)

    @staticmethod
    def _report(ctx: Context, call, arg, keyword: str, replacement: str | None, severity: str, message: str, raises: str = "") -> None:
        renaming = ctx.facts.renaming(call, arg, replacement) if replacement is not None else None
        given = replacement is not None and ctx.facts.gives(call, replacement) is True  # the call certainly passes the new keyword too
        help = (f"drop it: the call already passes `{replacement}=`" if given else f"use `{replacement}=` instead") if replacement else None
        ctx.report(arg.at, message, severity=severity, fix=[Replacement(*renaming)] if renaming else None, fix_message=f"rename `{keyword}` to `{replacement}`",
                   help=help, failure=Failure.of(raises, keyword, replacement), runs=call.node)


def _processor_class(facts: Facts, expr: cst.BaseExpression, scope, classes: list[str]) -> str | None:
    """The processor class `expr` holds, when every binding of the name in its scope, before or after the read,
    is a load of one of `classes` (`CLIPProcessor.from_pretrained(...)`, `TrOCRProcessor(...)`); None when any
    binding may be something else (a parameter, a rebinding)."""
    if isinstance(expr, cst.Call):
        values = [expr]
    elif isinstance(expr, cst.Name):
        values = facts.assigned_values(expr.value, scope)
    else:
        return None
    found = set()
    for value in values:
        call = facts.call_of(value) if isinstance(value, cst.Call) else None
        qualname = (call.qualname or "").removesuffix(".from_pretrained") if call else ""
        module, _, name = qualname.rpartition(".")
        if module != "transformers" or name not in classes:
            return None
        found.add(name)
    return found.pop() if len(found) == 1 else None


def _effect(entry: versions.Lifecycle, version: versions.Version, error: str) -> tuple[str, str]:
    """What the target does with a removed tokenizer keyword, from its row (api-facts 1: unknown tokenizer keywords by
    version): (the words, the error the call raises or "" where it raises nothing or not always). `is_pretokenized=`
    raises in fast tokenizers only and is ignored from 5.0; `truncation_strategy=` raises in every tokenizer."""
    ignored = entry.extra.get("ignored_from")
    if ignored is not None and version >= versions.parse_version(ignored):
        return entry.extra["ignored_effect"], ""
    error = error.format(name=entry.name)
    return entry.extra["consequence"].format(error=error), error
