"""BL405: a cross-entropy loss fed probabilities (a softmax or sigmoid output), or `NLLLoss` fed raw logits."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts, activation, only_reported
from bertlint.rules import Context, Replacement, Rule

# torch.nn.functional name -> the torch.nn module class of the same loss
LOSSES = {"cross_entropy": "CrossEntropyLoss", "nll_loss": "NLLLoss", "binary_cross_entropy_with_logits": "BCEWithLogitsLoss"}
# what each loss must not be given: it applies its own log_softmax / sigmoid (torch/nn/functional.py), or, for NLLLoss,
# expects log-probabilities
WRONG = {"CrossEntropyLoss": ("softmax", "sigmoid"), "NLLLoss": ("softmax", "sigmoid", "logits"), "BCEWithLogitsLoss": ("sigmoid",)}


class SoftmaxBeforeCrossEntropy(Rule):
    code = "BL405"
    name = "softmax-before-cross-entropy"
    severity = "error"
    summary = "A cross-entropy loss computed on probabilities (softmax/sigmoid outputs), or `NLLLoss` on raw logits"
    help = "feed the loss the logits: `CrossEntropyLoss`/`BCEWithLogitsLoss` apply their own log-softmax/sigmoid; `NLLLoss` wants `log_softmax` outputs"
    fix = "unsafe"
    fix_title = "pass the logits"
    needs = ("torch",)

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.calls:
            loss = loss_class(facts, call)
            if loss is None or only_reported(facts, call):
                continue  # a loss only looked at (under no_grad, or `.item()` on the spot) trains nothing
            arg = call.arg(0, "input")
            if arg is None:
                continue
            found = activation(facts, arg.value, call.scope, call.order)
            if found not in WRONG[loss]:
                continue
            shown = facts.text(arg.value)
            if found == "logits":
                ctx.report(
                    arg.value,
                    f"`NLLLoss` is given raw logits (`{shown}`): it expects log-probabilities and only negates the target's value, "
                    "so the loss has no lower bound and training pushes the logits to infinity instead of fitting the classes",
                    help="apply `log_softmax(dim=-1)` first, or use `CrossEntropyLoss` on the logits",
                    fix=_unwrap(facts, arg.value, call, "log_softmax"),
                )
                continue
            own = "a sigmoid" if loss == "BCEWithLogitsLoss" else "a log-softmax"
            ctx.report(
                arg.value,
                f"`{loss}` is given {found} outputs (`{shown}`), but applies {own} of its own: the loss is computed on "
                f"{'a double sigmoid' if loss == 'BCEWithLogitsLoss' else 'squashed probabilities'}, its gradients shrink toward zero, "
                "and training stalls well short of what the logits would reach",
                help="pass the logits and keep the softmax/sigmoid for predictions and metrics",
                fix=_unwrap(facts, arg.value, call, None),
            )


def loss_class(facts: Facts, call: Call) -> str | None:
    """The loss class a call computes (`F.cross_entropy(...)` -> "CrossEntropyLoss", `criterion(...)` of an
    `nn.NLLLoss()`), for the three losses this rule knows."""
    q = call.qualname
    if q is not None and q.startswith("torch.nn.functional."):
        return LOSSES.get(q.rsplit(".", 1)[-1])
    if not any(c.qualname is not None for name in WRONG for c in facts.calls_by_short.get(name, ())):
        return None  # the file makes none of these losses: no callee can hold one (and evaluating each is the cost)
    found = facts.kind(call.node.func, call.scope, call.order)
    if found is None or found.kind != "loss" or found.call is None or found.call.qualname is None:
        return None
    name = found.call.qualname.rsplit(".", 1)[-1]
    return name if name in WRONG else None


def _unwrap(facts: Facts, expr: cst.BaseExpression, loss: Call, then: str | None) -> list[Replacement] | None:
    """The fix when the activation is written in the loss call itself: `F.softmax(logits, dim=1)` -> `logits`
    (-> `logits.log_softmax(-1)` for NLLLoss on logits, which has no activation to remove: no fix)."""
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if then is not None or call is None or call.has_star_args:
        return None
    inner = call.receiver if call.qualname is None and call.method in ("softmax", "sigmoid") else (call.positional[0].value if call.positional else None)
    return [Replacement(expr, facts.text(inner))] if inner is not None else None
