"""BL305: hand-written gradient accumulation that sums the micro-batch losses instead of averaging them."""

from __future__ import annotations

from bertlint.facts import UNKNOWN
from bertlint.rules import Context, Rule


# Optimizers whose update is proportional to the gradient (torch.optim: SGD with or without momentum and
# Nesterov; ASGD): the sum of N micro-batch gradients makes the step N times the mean's.
PLAIN_GRADIENT_STEPS = frozenset({"SGD", "ASGD"})


class LossNotScaledForAccumulation(Rule):
    code = "BL305"
    name = "loss-not-scaled-for-accumulation"
    severity = "warning"
    summary = "Hand-written gradient accumulation does not divide the loss by the number of accumulation steps"
    help = "divide the loss by the accumulation steps before `backward()`"
    needs = ("torch",)

    def check(self, ctx: Context) -> None:
        for loop in ctx.facts.training_loops:
            if loop.framework != "torch" or loop.gate is None or loop.accelerate or loop.loss_divided is not False:
                continue
            if not loop.optimizers or not all(q and q.rsplit(".", 1)[-1] in PLAIN_GRADIENT_STEPS for q in loop.optimizers):
                # Adam and the other adaptive optimizers divide the step by the gradients' own scale
                # (m / sqrt(v)): a sum of N micro-batch gradients gives the same update as their mean
                # (up to eps), so nothing is N times too large; an unknown optimizer stays silent
                continue
            if loop.every_iteration_zero_grads:
                # gradients are reset on every micro-batch (BL302's finding): nothing is summed, so the
                # undivided loss is not what is wrong
                continue
            steps = ctx.facts.text(loop.accumulation_expr)
            factor = f"{loop.accumulation_steps}×" if loop.accumulation_steps is not UNKNOWN else f"`{steps}` times"
            ctx.report(
                loop.backward[0].node,
                f"the loss is not divided by the accumulation steps (`{steps}`): the micro-batch gradients are summed, not averaged, "
                f"so every update is {factor} too large, as if the learning rate were {factor} higher",
                help=f"divide the loss before `backward()`: `loss = loss / {steps}`",
            )
