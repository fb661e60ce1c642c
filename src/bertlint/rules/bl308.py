"""BL308: a learning-rate schedule stepped at the wrong granularity, or before the optimizer."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts
from bertlint.rules import Context, Rule

# Schedules whose length is counted in optimizer steps: transformers' `get_*_schedule*` (optimization.py: every one takes
# `num_training_steps`/`num_warmup_steps` and is stepped per batch) and torch's OneCycleLR (`total_steps` or
# `epochs * steps_per_epoch`). A length that reads `len(...)` of something (a loader) or `steps_per_epoch` is per step.
PER_STEP_LENGTH = ("OneCycleLR",)


class SchedulerStepGranularity(Rule):
    code = "BL308"
    name = "scheduler-step-granularity"
    severity = "warning"
    summary = "A per-step LR schedule stepped once per epoch, or `scheduler.step()` called before `optimizer.step()`"
    help = "call `scheduler.step()` right after `optimizer.step()`, once per optimizer step, for schedules whose length is counted in steps"
    needs = ("torch",)

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for loop in facts.training_loops:
            if not loop.steps or loop.framework != "torch":
                continue
            step = loop.steps[0]
            for call in facts.calls:
                if call.method != "step" or call.node.args or call is step:
                    continue
                made = _schedule(facts, call)
                if made is None:
                    continue
                if call.loops and call.loops[-1] is loop.node and call.order < step.order and _same_block(facts, call, step):
                    ctx.report(
                        call.node,
                        "`scheduler.step()` runs before `optimizer.step()` in the same iteration: the schedule moves on before "
                        "the first update, so its first learning rate (the start of the warmup) is skipped and PyTorch warns "
                        "\"Detected call of `lr_scheduler.step()` before `optimizer.step()`\"",
                    )
                elif _per_step(facts, made) and _outside(facts, call, loop.node) and call.function is step.function:
                    ctx.report(
                        call.node,
                        f"`{facts.text(made.node.func)}` counts its length in optimizer steps, but it is stepped once per "
                        "epoch, outside the loop over batches: the warmup and decay stretch over epochs-as-steps, so the "
                        "learning rate barely leaves its warmup during the whole run",
                    )


def _schedule(facts: Facts, call: Call) -> Call | None:
    """The schedule construction `call`'s receiver holds (through names, `self.` attributes, `accelerator.prepare`)."""
    found = facts.kind(call.receiver, call.scope, call.order)
    return found.call if found is not None and found.kind == "scheduler" else None


def _per_step(facts: Facts, made: Call) -> bool:
    """The schedule's length is counted in batches: `num_training_steps`/`total_steps` reading `len(...)` or a steps
    count, or OneCycleLR's `steps_per_epoch`."""
    short = made.qualname.rsplit(".", 1)[-1]
    if short == "OneCycleLR" and "steps_per_epoch" in made.kwargs:
        return True
    if not (made.qualname.startswith("transformers.") or short in PER_STEP_LENGTH):
        return False
    length = made.kwargs.get("num_training_steps") or made.kwargs.get("total_steps") or made.arg(2)
    bound = facts.definition(length.value, made.scope, made.order) if length is not None else None  # `total_steps = len(loader) * epochs`
    return bound is not None and any(c.qualname == "builtins.len" for c in facts.calls_in(bound.value))


def _outside(facts: Facts, call: Call, inner: cst.CSTNode) -> bool:
    """`call` runs in a loop around `inner` but not inside it (once per epoch)."""
    return bool(call.loops) and not any(node is inner for node in call.loops) and any(node is call.loops[-1] for node in facts.enclosing(inner))


def _same_block(facts: Facts, a: Call, b: Call) -> bool:
    """Both calls run on every iteration at the same level (no `if` between one of them and the loop)."""
    return facts.enclosing(a.stmt) == facts.enclosing(b.stmt)
