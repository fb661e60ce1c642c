"""BL303: a PyTorch training loop that never zeroes its gradients."""

from __future__ import annotations

from bertlint.rules import Context, Rule


class MissingZeroGrad(Rule):
    code = "BL303"
    name = "missing-zero-grad"
    severity = "error"
    summary = "A PyTorch training loop calls `backward()` and `optimizer.step()` but never zeroes the gradients"
    help = "call `optimizer.zero_grad()` after `optimizer.step()` in the loop"
    needs = ("torch",)

    def check(self, ctx: Context) -> None:
        for loop in ctx.facts.training_loops:
            # Under Accelerate a DeepSpeed config chosen at launch resets the gradients inside the engine's step.
            if loop.framework != "torch" or not loop.steps or not loop.backward or loop.zeroed or loop.accelerate:
                continue
            step = loop.steps[0]
            ctx.report(
                step.node,
                f"the gradients are never zeroed in this loop: every `backward()` adds to those of all earlier batches, "
                f"so `{ctx.facts.text(step.node.func)}()` applies an ever-growing sum and training diverges",
            )
