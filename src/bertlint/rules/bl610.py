"""BL610: a keyword that the target transformers release does not have yet (`eval_strategy=` before 4.41,
`processing_class=` before 4.46): the `added` column of the tables BL601/BL602 read, read the other way."""

from __future__ import annotations

from bertlint import versions
from bertlint.facts import Facts, Failure
from bertlint.rules import Context, Replacement, Rule
from bertlint.rules.bl601 import RemovedTrainingArgument
from bertlint.rules.bl602 import TrainerTokenizerArgument


class ArgumentNewerThanTarget(Rule):
    code = "BL610"
    name = "argument-newer-than-target"
    exact = "the keyword is checked against the release that added it to `TrainingArguments`/`Trainer` (data/versions.json, each row checked in the wheels)"
    severity = "error"
    fails_at_its_line = True
    summary = "a `TrainingArguments`/`Trainer` keyword newer than the target transformers (`eval_strategy=` before 4.41): TypeError"
    help = "use the spelling of the target version, or upgrade transformers"
    fix = "safe"
    fix_title = "use the target version's spelling"
    needs = ("transformers", "trl")
    readers = (RemovedTrainingArgument(), TrainerTokenizerArgument())  # which calls each table governs

    def check(self, ctx: Context) -> None:
        for reader in self.readers:
            table, error = versions.keywords(reader.keywords)
            for call, owner in reader.calls(ctx.facts):
                for keyword, arg in call.kwargs.items():
                    entry = table.get(keyword)
                    if entry is None or entry.added is None or ctx.version >= entry.added:
                        continue
                    if _own_parameter(ctx.facts, call.qualname, keyword):
                        continue  # a local subclass takes the keyword itself
                    older = versions.older_spelling(table, keyword, ctx.version)
                    fix = None
                    if older is not None and older.rename and older.name not in call.kwargs and not call.has_double_star:
                        fix = [Replacement(arg.keyword, older.name)]
                    ctx.report(
                        arg,
                        f"`{keyword}` was added in transformers {versions.show(entry.added)}, after the target "
                        f"{versions.show(ctx.version)} from {ctx.version_source}: this line raises {error.format(cls=owner, name=keyword)}",
                        help=_help(older, entry),
                        fix=fix,
                        fix_message=f"rename `{keyword}` to `{older.name}`" if older else "",
                        failure=Failure.of(error, keyword, older.name if older else None),
                    )


def _own_parameter(facts: Facts, qualname: str | None, keyword: str) -> bool:
    """A local class on the way to the library's `__init__` names `keyword` in its own `__init__` signature."""
    seen = set()
    while qualname and qualname.startswith("<local>.") and qualname not in seen:
        seen.add(qualname)
        cls = facts.classes.get(qualname.split(".", 1)[1])
        if cls is None:
            return True
        init = cls.methods.get("__init__")
        if init is not None and keyword in {p.name.value for p in (*init.params.posonly_params, *init.params.params, *init.params.kwonly_params)}:
            return True
        qualname = cls.bases[0] if cls.bases else None
    return False


def _help(older: versions.Lifecycle | None, entry: versions.Lifecycle) -> str:
    if older is None:
        return f"drop it, or upgrade to transformers>={versions.show(entry.added)}"
    how = f" ({older.note})" if older.note and not older.rename else ""
    return f"use `{older.name}=` on this version{how}, or upgrade to transformers>={versions.show(entry.added)}"
