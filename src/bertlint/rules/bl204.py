"""BL204: a class label the model has no output for: the loss indexes past its logits."""

from __future__ import annotations

from bertlint.facts import UNKNOWN, classifier, known_labels
from bertlint.rules import Context, Rule

CLASSIFICATION_HEADS = ("seq-cls", "token-cls")
IGNORED_LABEL = -100  # CrossEntropyLoss's ignore_index: padding and sub-word positions


class LabelOutOfRange(Rule):
    code = "BL204"
    name = "label-out-of-range"
    severity = "error"
    summary = "Labels known to hold a value outside `0..num_labels-1`"
    help = "set `num_labels` to the number of classes (largest label + 1), or map the labels to `0..num_labels-1`"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        loads = [load for load in facts.model_loads if load.head in CLASSIFICATION_HEADS]
        if len(loads) != 1:
            return  # no classifier, or several: which labels feed which is not known
        load = loads[0]
        setup = classifier(facts, load)
        n = setup.num_labels
        if n is UNKNOWN or n < 2 or setup.problem_type not in (None, "single_label_classification"):
            return  # num_labels=1 is BL208's case; regression and multi-label take other targets
        for labels in known_labels(facts):
            if labels.per_token != (load.head == "token-cls") or not all(isinstance(v, int) for v in labels.values):
                continue
            bad = [v for v in labels.values if v != IGNORED_LABEL and not 0 <= v < n]
            if not bad:
                continue
            where = f"`num_labels={n}`" if setup.anchor is not load.call.node else f"no `num_labels`, so {n} outputs"
            hint = " (they look 1-based)" if min(labels.values) == 1 and max(labels.values) == n else ""
            ctx.report(
                setup.anchor,
                f"labels from {labels.origin} include {bad[0]}{hint} but the model has {where} (valid targets 0..{n - 1}): "
                + _failure(bad[0], load.keras, n),
            )
            return


def _failure(label: int, keras: bool, n: int) -> str:
    if keras:
        return f"TensorFlow fails with `Received a label value of {label} which is outside the valid range of [0, {n})` on CPU and returns a NaN loss on GPU"
    return f"the loss fails with `IndexError: Target {label} is out of bounds.` on CPU and `RuntimeError: CUDA error: device-side assert triggered` on GPU"
