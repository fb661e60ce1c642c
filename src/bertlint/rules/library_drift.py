"""The drift rules of the libraries around transformers (BL612 datasets, BL613 huggingface_hub, BL614 TRL,
BL615 PEFT, BL616 accelerate, and BL617's processor keywords): one generic reader of a library's group of
`data/libraries.json` (or of `data/versions.json` for transformers), both ways (what the target release
removed or deprecates, and what it does not have yet), against that library's own target.

A keyword row may say what the target does with a removed keyword when that is not an error (`effect`,
with its `severity`: datasets 4 ignores `trust_remote_code=`), that this matters only for a true value
(`only_if_true`: `reduce_labels=False` asked for the default anyway), and may apply to some of its group's
callables only (`callables`). A group's `patched_by` names packages whose import patches its callables to
accept the old keywords (unsloth rewrites every trl trainer's `__init__`): a file importing one is silent."""

from __future__ import annotations

from typing import ClassVar

from bertlint import versions
from bertlint.facts import UNKNOWN, Facts, Failure
from bertlint.rules import Context, Replacement, Rule
from bertlint.rules.symbols import SymbolUse, symbol_uses


class LibraryDrift(Rule):
    library: ClassVar[str]
    severity = "error"
    fails_at_its_line = True
    fix = "safe"
    fix_title = "rename the keyword"
    help = "use what replaces it in the target version"

    def check(self, ctx: Context) -> None:
        version, source = ctx.target(self.library)
        knowledge = versions.data(self.library)
        for group in knowledge.get("symbols", {}):
            self._symbols(ctx, group, version, source)
        for group, table in knowledge.get("keywords", {}).items():
            if not ctx.facts.imported(*table.get("patched_by", ())):  # `import unsloth` makes trl's trainers take them
                self._keywords(ctx, group, table["callables"], version, source, table.get("args"))

    def _symbols(self, ctx: Context, group: str, version: versions.Version, source: str) -> None:
        _, templates = versions.symbols(group, self.library)
        for use in symbol_uses(ctx.facts, group, self.library):
            found = _state(use.entry, version, source, self.library)
            if found is None:
                continue
            severity, text, _ = found
            name = f"{use.module}.{use.name}"
            message = f"`{name}` {text}" + (f": this line raises {use.raises(ctx.facts, templates, version, self.library)}" if severity == "error" else "")
            ctx.report(use.node, message, help=self._symbol_help(ctx.facts, use), severity=severity, failure=use.failure(templates, severity == "error", self.library))

    def _symbol_help(self, facts: Facts, use: SymbolUse) -> str:
        """An import whose binding the file never reads: drop it (`SymbolUse.unread`). A row whose replacement takes
        the same arguments (`call`): the file's own calls, rewritten (`evaluate.load("rouge")` for
        `load_metric("rouge")`), else the row's `otherwise`. Else the row's help, its replacement, or the rule's."""
        if (unread := use.unread(facts)) is not None:
            return unread
        row = use.entry.extra
        if (spec := row.get("call")) is not None:
            calls = use.call_in_place(facts, spec)
            return row["help"].format(call=", ".join(f"`{c}`" for c in calls) if calls else spec["otherwise"])
        return row.get("help") or (f"use `{use.entry.replacement}` instead" if use.entry.replacement else self.help)

    def _keywords(self, ctx: Context, group: str, callables: list[str], version: versions.Version, source: str, args_at: int | None = None) -> None:
        table, error = versions.keywords(group, self.library)
        for call in ctx.facts.calls_to(*callables):
            given = ctx.facts.keywords(call)  # a `**mapping`'s known keys too, each where the file spells it
            states: dict[str, tuple[versions.Lifecycle, tuple[str, str, bool]]] = {}
            for keyword in given:
                entry = table.get(keyword)
                if entry is None or call.qualname not in entry.extra.get("callables", (call.qualname,)):
                    continue
                found = _state(entry, version, source, self.library)
                if found is not None and not _harmless(ctx, call, keyword, entry, version):
                    states[keyword] = entry, found
            # the call raises on the first keyword it refuses, in the order the call passes them
            first = next((keyword for keyword, (_, found) in states.items() if found[2]), None)
            for keyword, (entry, (severity, text, raises)) in states.items():
                arg = given[keyword]
                message = f"`{keyword}=` of `{call.qualname}` {text}" + (
                    f": {'this' if arg.explicit else 'the'} call raises {error.format(name=first)}" + (f" (`{first}`, passed before `{keyword}`, is refused too)" if first != keyword else "")
                    if raises else "")
                replacement = _spelling_at(table, entry, version)
                renaming = ctx.facts.renaming(call, arg, replacement) if replacement is not None else None
                fix = [Replacement(*renaming)] if renaming else None
                ctx.report(
                    arg.at, message, runs=call.node, severity=severity, fix=fix, fix_message=f"rename `{keyword}` to `{replacement}`",
                    help=(f"use `{replacement}=` instead" if replacement else _config_help(ctx, call, keyword, entry.extra["config"], version, args_at)
                          if "config" in entry.extra else entry.note or f"drop `{keyword}=`"),
                    failure=Failure.of(error if raises else "", keyword, replacement, library=self.library),
                )


def _config_help(ctx: Context, call, keyword: str, config: dict, version: versions.Version, args_at: int | None) -> str:
    """Where a trainer keyword that moved into the config class goes for this call on the target `version`
    (`config`: the `class`; `removed`/`replacement` where the config itself dropped or renamed the field; its
    `default` from `default_from` on): nowhere (the config has none either, or the value is its default), onto
    the config the call passes as `args=` (or at the group's positional `args_at`), onto a config in place of the
    plain `TrainingArguments` it passes (which has no such field unless the row says `training_arguments`), or
    into a new `args=`."""
    library, short = config["class"].split(".")
    field, renamed = keyword, ""
    if "removed" in config and version >= versions.parse_version(config["removed"]):
        if "replacement" not in config:
            return f"drop `{keyword}=`: `{short}` has no such field either, from {library} {config['removed']} on"
        field = config["replacement"]
        renamed = f"; `{short}` renamed `{keyword}` to `{field}` in {library} {config['removed']}"
    if "default" in config and version >= versions.parse_version(config["default_from"]) and ctx.facts.kw_value(call, keyword) == config["default"]:
        return f"drop `{keyword}=`: {config['default']!r} is `{short}`'s default"
    args = call.arg(args_at, "args")
    if args is None:
        return f"pass `args={short}(..., {field}=...)`: the trainer reads it from its config{renamed}"
    made = ctx.facts.kind(args.value, call.scope, call.order)
    built = made.call.qualname.rsplit(".", 1)[-1] if made is not None and made.kind == "training_args" and made.call.qualname else None
    if built is None or built == short or config.get("training_arguments"):
        return f"set `{field}=` on the `{built or short}` passed as `args=`{renamed}"
    return f"pass `args={short}(..., {field}=...)` in place of the `{built}`, which has no such field (`{short}` takes all of its fields){renamed}"


def _state(entry: versions.Lifecycle, version: versions.Version, source: str, library: str) -> tuple[str, str, bool] | None:
    """(severity, what happened to it, whether the line raises) in `version`: removed (an error, or the row's
    own `effect` and `severity`), deprecated (warning), not there yet (error)."""
    if entry.added is not None and version < entry.added:
        return "error", f"was added in {library} {versions.show(entry.added)}, after the target {library} {versions.show(version)} from {source}", True
    status = entry.status(version)
    if status is None:
        return None
    text = versions.lifecycle_text(entry, status, version, source, library)
    if status != "removed":
        return "warning", text, False
    effect = entry.extra.get("effect")
    return (entry.extra.get("severity", "error"), f"{text}: {effect}", False) if effect else ("error", text, True)


def _harmless(ctx: Context, call, keyword: str, entry: versions.Lifecycle, version: versions.Version) -> bool:
    """A removed keyword that the target ignores (`effect`) where ignoring it changes nothing: an `only_if_true`
    row whose value is not known to be true."""
    if not entry.extra.get("only_if_true") or entry.status(version) != "removed":
        return False
    value = ctx.facts.kw_value(call, keyword)
    return value is UNKNOWN or not value


def _spelling_at(table: dict[str, versions.Lifecycle], entry: versions.Lifecycle, version: versions.Version) -> str | None:
    """The keyword that takes the same value in `version`: the renamed one (`use_auth_token` -> `token`), or,
    for a keyword not there yet, the older one it renamed (`token` -> `use_auth_token`); None when none does."""
    if entry.added is not None and version < entry.added:
        older = versions.older_spelling(table, entry.name, version)
        return older.name if older and older.rename else None
    if entry.rename and (entry.replacement not in table or table[entry.replacement].exists(version)):
        return entry.replacement
    return None
