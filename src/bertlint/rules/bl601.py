"""BL601: a `TrainingArguments` keyword that the target transformers release deprecated or removed."""

from __future__ import annotations

from typing import Iterator

from bertlint import versions
from bertlint.facts import Call, Facts, Failure
from bertlint.rules import Context, Replacement, Rule


class RemovedTrainingArgument(Rule):
    code = "BL601"
    name = "removed-training-argument"
    exact = "the keyword is checked against the `TrainingArguments` fields of the target transformers version"
    severity = "error"
    fails_at_its_line = True
    summary = "a `TrainingArguments` keyword that the target transformers deprecated (warning) or removed (error: TypeError)"
    help = "use the keyword that replaces it"
    fix = "safe"
    fix_title = "rename the keyword"
    needs = ("transformers", "trl")  # trl's SFTConfig & co. are TrainingArguments too
    keywords = "TrainingArguments"  # the group of `data/versions.json` this rule reads

    def calls(self, facts: Facts) -> Iterator[tuple[Call, str]]:
        """The calls to check, each with the class whose `__init__` would raise."""
        for call in facts.training_args:
            yield call, call.qualname.rsplit(".", 1)[-1]

    def check(self, ctx: Context) -> None:
        table, error = versions.keywords(self.keywords)
        for call, owner in self.calls(ctx.facts):
            given = ctx.facts.keywords(call)  # a `**mapping`'s known keys too, each where the file spells it
            # the call raises on the first keyword the target removed, in the order the call passes them
            first = next((k for k in given if (e := table.get(k)) is not None and e.status(ctx.version) == "removed"), None)
            for keyword, arg in given.items():
                entry = table.get(keyword)
                status = entry.status(ctx.version) if entry is not None else None
                if status is None:
                    continue
                replacement = versions.replacement_at(table, entry, ctx.version)
                message = f"`{keyword}` {versions.lifecycle_text(entry, status, ctx.version, ctx.version_source)}"
                if status == "removed":
                    message += (": this line raises " if arg.explicit else f": the `{owner}(...)` it is passed to raises ") + error.format(cls=owner, name=first) + (
                        f" (`{first}`, passed before `{keyword}`, is removed too)" if first != keyword else "")
                renaming = ctx.facts.renaming(call, arg, replacement) if entry.rename and replacement == entry.replacement else None
                fix = [Replacement(*renaming)] if renaming else None
                ctx.report(
                    arg.at, message, help=self._help(entry, replacement), fix=fix,
                    severity="error" if status == "removed" else "warning",
                    fix_message=f"rename `{keyword}` to `{replacement}`",
                    failure=Failure.of(error if status == "removed" else "", keyword, replacement), runs=call.node,
                )

    @staticmethod
    def _help(entry: versions.Lifecycle, replacement: str | None) -> str:
        if replacement is None:
            return entry.note or "remove it: nothing replaces it in the target version"
        return f"use `{replacement}=` instead" + (f" ({entry.note})" if entry.note else "")
