"""BL208: `num_labels=1` turns a classifier into a regressor without a word."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts, classifier, float_cast, known_labels
from bertlint.rules import Context, Rule

CLASSIFICATION_METRICS = frozenset({"accuracy", "f1", "precision", "recall", "matthews_correlation"})
# Methods that drop the single logit's axis: an argmax after them picks a row of the batch (ranking candidates by a
# reward model's score), not a class.
FLATTENING = frozenset({"squeeze", "flatten", "ravel"})
SKLEARN_CLASSIFICATION = frozenset(
    {"accuracy_score", "balanced_accuracy_score", "f1_score", "precision_score", "recall_score", "classification_report", "confusion_matrix", "precision_recall_fscore_support"}
)


class SingleLabelRegressionByAccident(Rule):
    code = "BL208"
    name = "single-label-regression-by-accident"
    severity = "error"
    summary = "`num_labels=1` on a sequence classifier whose labels are integer classes: it trains as regression"
    help = 'set `num_labels` to the number of classes; for a real regression pass float targets or `problem_type="regression"`'

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for load in facts.model_loads:
            if load.head != "seq-cls":
                continue
            setup = classifier(facts, load)
            if setup.num_labels != 1 or setup.problem_type is not None:
                continue  # an explicit problem_type says what the user wants
            evidence = _classification_evidence(facts)
            if evidence is None:
                continue
            ctx.report(
                setup.anchor,
                f"`num_labels=1` makes transformers train a regression (`problem_type=\"regression\"`, MSE loss) but {evidence}: "
                "training runs without any error while the model learns one score, and argmax over a single logit is always 0",
            )


def _classification_evidence(facts: Facts) -> str | None:
    """Why the task is classification: integer labels, else an argmax or a classification metric."""
    if _float_targets(facts):
        return None
    labels = [found for found in known_labels(facts) if not found.per_token]
    if labels:
        if any(isinstance(v, float) for found in labels for v in found.values):
            return None  # float targets: a regression after all
        found = labels[0]
        return f"the labels from {found.origin} are integer classes {sorted(set(found.values))[:6]}"
    for call in facts.calls:
        if call.short == "argmax" and (call.method == "argmax" or (call.qualname or "").startswith(("numpy.", "torch."))) and not _over_scores(facts, call):
            return "the predictions are read with `argmax`"
        if call.qualname and call.qualname.startswith("sklearn.metrics") and call.short in SKLEARN_CLASSIFICATION:
            return f"it is scored with `{call.short}`"
        if call.short in ("load", "load_metric") and (call.qualname or "").startswith(("evaluate.", "datasets.")):
            metric = facts.arg_value(call, 0, "path")
            if metric in CLASSIFICATION_METRICS:
                return f'it is scored with the "{metric}" metric'
    return None


def _float_targets(facts: Facts) -> bool:
    """Labels cast to float on their way in (`batch["labels"] = torch.tensor(y, dtype=torch.float)`): a regression."""
    stores = ((s.value, s.scope, s.order) for s in facts.stores if s.key in ("label", "labels"))
    passed = ((c.kwargs["labels"].value, c.scope, c.order) for c in facts.calls if "labels" in c.kwargs)
    return any(float_cast(facts, value, scope, order) is not None for value, scope, order in (*stores, *passed))


def _over_scores(facts: Facts, call: Call) -> bool:
    """The argmax reads one score per row (`model(...).logits.squeeze(-1).argmax()`, or a name bound once to such a
    squeeze/flatten/ravel): it ranks the batch, which a one-logit model does on purpose."""
    arg = call.arg(0, "input") if call.method is None else None
    expr = call.receiver if call.method == "argmax" else arg.value if arg is not None else None
    bound = facts.definition(expr, call.scope, call.order)
    inner = facts.call_of(bound.value) if bound is not None and isinstance(bound.value, cst.Call) else None
    return inner is not None and inner.method in FLATTENING
