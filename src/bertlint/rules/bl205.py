"""BL205: token ids or class labels cast to float on their way into the model or the loss."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import UNKNOWN, Call, Facts, classifier, float_cast, shared
from bertlint.rules import Context, Rule

EMBEDDING_ERROR = (
    "RuntimeError: Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
    "but got torch.FloatTensor instead (while checking arguments for embedding)"
)
CLASSIFICATION_HEADS = ("seq-cls", "token-cls")
CLASS_LOSSES = ("torch.nn.CrossEntropyLoss", "torch.nn.NLLLoss", "torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss")


class WrongDtypeIdsOrLabels(Rule):
    code = "BL205"
    name = "wrong-dtype-ids-or-labels"
    severity = "error"
    summary = "`input_ids` cast to float, or integer class labels cast to float for a multi-class loss"
    help = "keep token ids and class labels as integers (`torch.long`)"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.calls:
            model = called_model(facts, call)
            if model is not None:
                self._check_forward(ctx, call, model)
            elif is_class_loss(facts, call):
                target = call.arg(1, "target")
                if target is not None and _casts_class_labels(facts, target.value, call):
                    ctx.report(
                        target,
                        "integer class labels are cast to float for a multi-class loss: it reads float targets as class probabilities "
                        "of the logits' shape and fails with `RuntimeError: expected target dtype to be Long or Byte, but got Float`",
                    )

    def _check_forward(self, ctx: Context, call: Call, model) -> None:
        facts = ctx.facts
        ids = call.arg(0, "input_ids")
        source = float_cast(facts, ids.value, call.scope, call.order) if ids is not None else None
        if source is not None:
            found = facts.kind(source, call.scope, call.order)
            if ids.keyword is not None or (found is not None and found.kind == "ids"):  # a first positional may be pixels
                ctx.report(ids, f"`input_ids` are cast to float, but the embedding looks them up by integer index: `{EMBEDDING_ERROR}`")
        labels = call.kwargs.get("labels")
        if labels is None or not _casts_class_labels(facts, labels.value, call):
            return
        load = next((load for load in facts.model_loads if load.call is model.call), None)
        if load is None or load.head not in CLASSIFICATION_HEADS:
            return
        setup = classifier(facts, load)
        if setup.num_labels is UNKNOWN or setup.num_labels < 2 or setup.problem_type is not None:
            return  # regression or an explicit problem type: float targets are what it wants
        ctx.report(
            labels,
            f"integer class labels are cast to float: with num_labels={setup.num_labels} transformers then picks multi-label classification (BCE), "
            f"which wants one-hot targets and fails with `ValueError: Target size (torch.Size([N])) must be the same as input size (torch.Size([N, {setup.num_labels}]))`",
        )


def called_model(facts: Facts, call: Call):
    target = call.node.func if call.method is None else call.receiver if call.method == "forward" else None
    found = facts.kind(target, call.scope, call.order) if target is not None else None
    return found if found is not None and found.kind == "model" else None


def is_class_loss(facts: Facts, call: Call) -> bool:
    """`F.cross_entropy(...)`, or `criterion(...)` where `criterion = nn.CrossEntropyLoss(...)` (every loss it may be)."""
    if call.qualname in CLASS_LOSSES:
        return True
    made = facts.kind(call.node.func, call.scope, call.order) if call.qualname is None else None
    return made is not None and made.kind == "loss" and bool(shared(made, lambda loss: loss.call.qualname in CLASS_LOSSES))


def _casts_class_labels(facts: Facts, expr: cst.BaseExpression, at: Call) -> bool:
    """`expr` casts class indices to float: a known flat list of whole numbers (one-hot rows would be nested)."""
    source = float_cast(facts, expr, at.scope, at.order)
    values = facts.value(source, at.scope, order=at.order) if source is not None else None
    return (
        isinstance(values, (list, tuple))
        and bool(values)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() for v in values)
    )
