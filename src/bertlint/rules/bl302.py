"""BL302: hand-written gradient accumulation that resets the gradients on every micro-batch."""

from __future__ import annotations

from bertlint.facts import UNKNOWN
from bertlint.rules import Context, Rule


class GradientsResetWhileAccumulating(Rule):
    code = "BL302"
    name = "gradients-reset-while-accumulating"
    severity = "error"
    summary = "Gradients are reset on every iteration while the optimizer only steps every N: nothing accumulates"
    help = "reset the gradients only after the step, inside the same `if ... % accum == 0:` block"
    needs = ("torch", "tensorflow", "keras")

    def check(self, ctx: Context) -> None:
        for loop in ctx.facts.training_loops:
            if loop.gate is None or loop.accelerate:
                continue
            every = f"every {loop.accumulation_steps} iterations" if loop.accumulation_steps is not UNKNOWN else "only every N iterations"
            for call in loop.every_iteration_zero_grads:
                ctx.report(
                    call.node,
                    f"`{ctx.facts.text(call.node.func)}()` runs on every iteration but the optimizer steps {every}: "
                    "each step sees only the last micro-batch's gradients, so the accumulation does nothing",
                )
            for assign in loop.recreated_accumulators:
                name = assign.targets[0].target.value
                ctx.report(
                    assign,
                    f"`{name}` is re-created with zeros on every iteration but applied {every}: "
                    "each update holds only the last batch's gradients, so the accumulation does nothing",
                    help=f"create `{name}` once before the loop and reset it right after `apply_gradients`",
                )
