"""BL307: `model.eval()` inside the training loop and no `model.train()` before the next training step."""

from __future__ import annotations

from bertlint.facts import Call, Facts, calls_reached, epoch_loop, optimised_models
from bertlint.rules import Context, Rule


class EvalModeNotReset(Rule):
    code = "BL307"
    name = "eval-mode-not-reset"
    severity = "warning"
    summary = "`model.eval()` inside the training loop with no `model.train()` before the next training step"
    help = "call `model.train()` at the start of each epoch (or right after the evaluation), or restore the mode at the end of the evaluation function"
    needs = ("torch", "transformers")

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        reported: set[int] = set()
        optimised = optimised_models(facts)
        for loop in facts.training_loops:
            if not loop.backward or loop.framework != "torch":
                continue
            outer = epoch_loop(facts, loop.node)
            inside = [c for c in facts.calls if any(node is outer for node in c.loops)]
            modes = [(site, _mode(facts, c, optimised)) for site in inside for c in [site, *calls_reached(facts, site)]]
            if any(mode == "train" for _, mode in modes):
                continue
            for site, mode in modes:
                if mode != "eval" or id(site.node) in reported:
                    continue
                reported.add(id(site.node))
                via = "" if site.method == "eval" else f" (through `{facts.text(site.node.func)}`)"
                ctx.report(
                    site.node,
                    f"the model is put in eval mode inside the training loop{via} and nothing in the loop sets it back with "
                    "`model.train()`: every training step after the first evaluation runs with dropout off (and batch-norm "
                    "statistics frozen), so the rest of training silently loses its regularisation",
                )


def _mode(facts: Facts, call: Call, optimised: frozenset[int]) -> str | None:
    """"eval" for `model.eval()` / `model.train(False)` on a model or torch module that is trained (its parameters go to
    an optimizer, when the file shows which); "train" for any `x.train()` that may set training mode (its receiver
    unresolved too: `self.net.train()` restores the mode as well)."""
    if call.method not in ("eval", "train") or call.qualname is not None:
        return None
    if call.method == "train":
        flag = facts.arg_value(call, 0, "mode", default=True)
        if flag is not False:
            return "train"
    elif call.node.args:
        return None
    found = facts.kind(call.receiver, call.scope, call.order)
    if found is None or found.kind not in ("model", "module") or found.call is None:
        return None
    return "eval" if not optimised or id(found.call) in optimised else None  # a frozen teacher stays in eval mode
