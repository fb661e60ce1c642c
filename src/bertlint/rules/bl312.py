"""BL312: gradients clipped where the clip cannot touch the gradients the next update uses (before `backward()`, after `step()`)."""

from __future__ import annotations

from bertlint.facts import misplaced_clips
from bertlint.rules import Context, Rule


class ClipBeforeBackward(Rule):
    code = "BL312"
    name = "clip-before-backward"
    severity = "error"
    summary = "Gradients are clipped before the iteration's `backward()` (or after its `step()`): the update uses unclipped gradients"
    help = "clip between `backward()` and `optimizer.step()` (after `scaler.unscale_(optimizer)` under a GradScaler)"
    needs = ("torch",)

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for found in misplaced_clips(facts):
            name = facts.text(found.call.node.func)
            if found.where == "before_backward":
                what = (f"`{name}(...)` runs before this iteration's `backward()`: it clips the gradients left from the last step "
                        "(zeros after `zero_grad()`), then `backward()` adds this step's, and `step()` uses them unclipped")  # fmt: skip
            else:
                what = (f"`{name}(...)` runs after this iteration's `step()`: the update has already used the unclipped gradients, "
                        "and the clipped ones are reset or added to before the next update")  # fmt: skip
            ctx.report(found.call.node, what, help="move the clip after `backward()` and before `optimizer.step()`")
