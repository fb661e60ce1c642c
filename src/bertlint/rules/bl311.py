"""BL311: a training or evaluation control written so that it does nothing (`torch.no_grad()` alone, `model.eval`)."""

from __future__ import annotations

from bertlint.facts import inert_statements
from bertlint.rules import Context, Replacement, Rule

EFFECTS = {
    "eval": "the model stays in training mode: dropout stays on and batch-norm keeps updating its statistics",
    "train": "the model stays in the mode it was in (evaluation mode after an `eval()`): dropout stays off while it trains",
    "zero_grad": "the gradients are never reset: every `backward()` adds to the last ones",
    "step": "the weights are never updated",
    "schedule": "the learning rate never changes from its first value",
    "backward": "no gradient is computed: the optimizer steps on no gradient (or stale ones)",
}
ROLES = {"optimizer": "optimizer", "scheduler": "learning-rate scheduler", "model": "model", "loss": "loss"}


class CallThatDoesNothing(Rule):
    code = "BL311"
    name = "call-that-does-nothing"
    severity = "error"
    summary = "A training or evaluation control written so that it has no effect: `torch.no_grad()` as a statement, `model.eval` without `()`"
    help = "call the method (`model.eval()`), or put the block under `with torch.no_grad():`"
    fix = "safe"
    fix_title = "add the missing `()`"
    needs = ("torch", "transformers")

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for inert in inert_statements(facts):
            text = facts.text(inert.node)
            if inert.role == "context":
                name = text.split("(", 1)[0]
                ctx.report(
                    inert.node,
                    f"`{text}` on its own line creates a context manager and drops it: the grad mode only changes inside a "
                    f"`with {name}():` block, so the code after it runs exactly as before",
                    help=f"put the block under `with {name}():` (or decorate its function with `@{name}()`)",
                )
                continue
            ctx.report(
                inert.node,
                f"`{text}` names the {ROLES[inert.role]}'s `{inert.what}` method without calling it: {EFFECTS['schedule' if inert.role == 'scheduler' else inert.what]}",
                help=f"call it: `{text}()`",
                fix=[Replacement(inert.node, f"{text}()")],
            )
