"""BL604: transformers' own `AdamW`, deprecated from 4.16 and removed in 4.50 (use `torch.optim.AdamW`)."""

from __future__ import annotations

import libcst as cst

from bertlint import versions
from bertlint.facts import Facts
from bertlint.rules import Context, Replacement, Rule
from bertlint.rules.symbols import SymbolUse, symbol_uses


class TransformersAdamW(Rule):
    code = "BL604"
    name = "transformers-adamw"
    exact = "the name is checked against what the target transformers version exports"
    severity = "error"
    fails_at_its_line = True
    summary = "`transformers.AdamW`: deprecated from 4.16, an ImportError from 4.50"
    help = "use `torch.optim.AdamW` (its defaults differ: eps=1e-8, weight_decay=0.01)"
    fix = "safe"
    fix_title = "import `AdamW` from `torch.optim`, keeping transformers' defaults explicit"
    symbols = "optimizer"  # the group of `data/versions.json` this rule reads

    def check(self, ctx: Context) -> None:
        _, templates = versions.symbols(self.symbols)
        for use in symbol_uses(ctx.facts, self.symbols):
            status = use.entry.status(ctx.version)
            if status is None:
                continue
            message = f"`{use.module}.{use.name}` {versions.lifecycle_text(use.entry, status, ctx.version, ctx.version_source)}"
            if status == "removed":
                message += f": this line raises {use.raises(ctx.facts, templates, ctx.version)}"
            unread = use.unread(ctx.facts)
            fix = _drop(ctx.facts, use) if unread is not None else self.fix_for(ctx.facts, use)
            ctx.report(use.node, message, severity="error" if status == "removed" else "warning", fix=fix,
                       fix_message=f"drop `{use.name}` from the import" if unread is not None else "",
                       help=unread or self.help_for(ctx.facts, use, status, ctx.version), failure=use.failure(templates, status == "removed"))

    def help_for(self, facts: Facts, use: SymbolUse, status: str, version: versions.Version) -> str | None:
        """What else the calls must change on the target `version`: the keywords the replacement lacks (`correct_bias=`),
        the defaults it does not share; None for the rule's own help."""
        qualname = f"{use.module}.{use.name}"
        calls = [c for c in facts.calls if c.qualname == qualname]
        defaults = ", ".join(f"{k}={v}" for k, (_, v) in use.entry.extra["defaults"].items())
        drops = []
        for keyword in use.entry.extra["unsupported"]:
            values = {facts.kw_value(c, keyword) for c in calls if keyword in c.kwargs}
            if keyword == "correct_bias" and values:
                drops.append("drop `correct_bias=`: torch's AdamW always corrects the bias"
                             + (" (nothing in torch turns it off, so the first steps will differ a little)" if values != {True} else ""))
            elif values:
                drops.append(f"drop `{keyword}=`: torch's AdamW has no such parameter")
        keep = f", or keep `{qualname}` while the target still has it (before transformers {versions.show(use.entry.removed)})" if status != "removed" and drops else ""
        return f"use `{use.entry.replacement}` with `{defaults}` (transformers' defaults; torch's are eps=1e-8, weight_decay=0.01)" + (
            "; " + "; ".join(drops) if drops else "") + keep

    def fix_for(self, facts: Facts, use: SymbolUse) -> list[Replacement] | None:
        """Import the replacement instead, and write transformers' defaults into every call, so that nothing
        but the import changes. None when a use is not a plain call (the defaults could not be kept)."""
        module, _, name = use.entry.replacement.rpartition(".")
        qualname = f"{use.module}.{use.name}"
        calls = [c for c in facts.calls if c.qualname == qualname]
        edits: list[Replacement] = []
        if use.statement is not None:
            local = (use.node.asname.name if use.node.asname else use.node.name).value
            named = [c for c in calls if isinstance(c.node.func, cst.Name)]
            if len(named) != facts.name_counts.get(local, 0):  # every other use of the name is a call
                return None
            rewrite = _rewrite_import(facts, use, module, name)
            if rewrite is None:
                return None
            edits.append(rewrite)
        if use.attributes:
            prefix = _module_alias(facts, module)
            funcs = {id(c.node.func) for c in calls}
            if prefix is None or any(id(a) not in funcs for a in use.attributes):
                return None
            edits += [Replacement(a, f"{prefix}.{name}") for a in use.attributes]
        for call in calls:
            keep = _keep_defaults(call, use.entry)
            if keep is None:
                return None
            edits += keep
        return edits


def _rewrite_import(facts: Facts, use: SymbolUse, module: str, name: str) -> Replacement | None:
    """`from transformers import AdamW` -> `from torch.optim import AdamW`; a statement importing more names
    is split (at module level, where the new line's indentation is known)."""
    statement, imp = use.statement, use.imported_by
    if not isinstance(imp, cst.ImportFrom) or imp.relative:
        return None
    if len(imp.names) == 1:
        return Replacement(imp.module, module)
    if len(statement.body) != 1 or not any(s is statement for s in facts.module.body):
        return None
    alias = f" as {use.node.asname.name.value}" if use.node.asname else ""
    return Replacement(imp, f"{_without(facts, imp, use.node)}\nfrom {module} import {name}{alias}")


def _drop(facts: Facts, use: SymbolUse) -> list[Replacement] | None:
    """An import whose binding the file never reads (`SymbolUse.unread`): the name dropped from the import; None where
    it is the import's only name (deleting the line could leave a block empty)."""
    imp = use.imported_by
    return [Replacement(imp, _without(facts, imp, use.node))] if imp is not None and len(imp.names) > 1 else None


def _without(facts: Facts, imp: cst.Import | cst.ImportFrom, alias: cst.ImportAlias) -> str:
    """The import's text without `alias` (the last name keeping the comma, or none, the dropped one had)."""
    others = [a for a in imp.names if a is not alias]
    if imp.names[-1] is alias:
        others[-1] = others[-1].with_changes(comma=alias.comma)
    return facts.module.code_for_node(imp.with_changes(names=others))


def _module_alias(facts: Facts, module: str) -> str | None:
    """How the file spells `module` (`torch.optim`): `torch.optim` after `import torch`, `optim` after `from torch import optim`."""
    for local, qualname in facts.imports.items():
        if qualname == module:
            return local
        if module.startswith(qualname + "."):
            return local + module[len(qualname):]
    return None


def _keep_defaults(call, entry: versions.Lifecycle) -> list[Replacement] | None:
    """Spell out the defaults the replacement does not share; None where the call cannot move as is."""
    defaults: dict[str, list] = entry.extra["defaults"]
    positional = len(call.positional)
    if call.has_star_args or not call.node.args or positional > max(i for i, _ in defaults.values()) + 1:
        return None
    if any(k in call.kwargs for k in entry.extra["unsupported"]):
        return None
    missing = [f"{k}={v}" for k, (index, v) in defaults.items() if k not in call.kwargs and positional <= index]
    if not missing:
        return []
    return [Replacement(call.node.args[-1], ", " + ", ".join(missing), after=True)]
