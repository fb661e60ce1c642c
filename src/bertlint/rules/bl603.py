"""BL603: a Trainer subclass's `compute_loss` that cannot take the `num_items_in_batch` newer Trainers pass."""

from __future__ import annotations

import libcst as cst

from bertlint import versions
from bertlint.facts import ClassDef, Facts, Failure, is_trainer_class
from bertlint.rules import Context, Replacement, Rule


class ComputeLossSignature(Rule):
    code = "BL603"
    name = "compute-loss-signature"
    exact = "the override's parameters are checked against the call `Trainer.training_step` makes in the target version"
    severity = "error"
    fails_at_its_line = True
    summary = "a Trainer subclass's `compute_loss` without `num_items_in_batch`/`**kwargs`: TypeError from 4.46"
    help = "add `num_items_in_batch=None` to the parameters"
    fix = "safe"
    fix_title = "add `num_items_in_batch=None` to the parameters"
    needs = ("transformers", "trl")

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        spec = versions.data()["overrides"]["compute_loss"]
        keyword = spec["keyword"]
        for cls in facts.local_subclasses(is_trainer_class):
            method = cls.methods.get("compute_loss")
            if method is None or _accepts(method.params, keyword):
                continue
            inherited = _methods(facts, cls)
            callers = [(name, versions.parse_version(since)) for name, since in spec["callers"].items() if name not in inherited]
            live = [(name, since) for name, since in callers if ctx.version >= since]
            if not live:
                continue
            name, since = min(live, key=lambda pair: pair[1])
            error = spec["error"].format(cls=cls.name)
            message = (
                f"`compute_loss` cannot take `{keyword}`, which `Trainer.{name}` passes from {versions.show(since)} "
                f"(target {versions.show(ctx.version)} from {ctx.version_source}): the run dies with {error}"
            )
            # the Trainer raises it, not this line: only a version branch or a feature test on the keyword guards it
            ctx.report(method.name, message, fix=_add_parameter(method.params, f"{keyword}=None"), failure=Failure(None, (keyword,)))


def _accepts(params: cst.Parameters, keyword: str) -> bool:
    named = [*params.params, *params.kwonly_params]
    return isinstance(params.star_kwarg, cst.Param) or any(p.name.value == keyword for p in named)


def _methods(facts: Facts, cls: ClassDef) -> set[str]:
    """Method names defined by `cls` and its local ancestors (they replace the Trainer's own callers)."""
    names: set[str] = set()
    for qualname in facts.class_bases(f"<local>.{cls.name}"):
        local = facts.classes.get(qualname.split(".", 1)[1]) if qualname.startswith("<local>.") else None
        if local is not None:
            names |= set(local.methods)
    return names


def _add_parameter(params: cst.Parameters, text: str) -> list[Replacement] | None:
    """Insert `text` after the last parameter (keyword-only after `*args`); None after a `/` marker alone."""
    last = [*params.params, *([params.star_arg] if isinstance(params.star_arg, cst.Param) else []), *params.kwonly_params]
    if not last:
        return None
    param = last[-1]
    end = param.default or param.annotation or param.name
    if getattr(end, "lpar", None):
        return None  # a parenthesized default: its position leaves out the parentheses
    return [Replacement(end, f", {text}", after=True)]
