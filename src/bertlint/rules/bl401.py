"""BL401: a classification run on labels known to be imbalanced, with no class weighting anywhere."""

from __future__ import annotations

from collections import Counter

import libcst as cst

from bertlint import datafiles
from bertlint.facts import Facts, run_anchor
from bertlint.rules import Context, Rule

LABEL_NAMES = frozenset({"labels", "label", "y", "y_train", "train_labels", "targets", "target", "train_y", "ytrain", "classes"})
MIN_EXAMPLES = 50
MITIGATION_CALLS = ("compute_class_weight", "compute_sample_weight", "WeightedRandomSampler", "RandomOverSampler", "RandomUnderSampler", "SMOTE", "ADASYN", "sigmoid_focal_loss")


class ImbalancedLabelsUnweighted(Rule):
    code = "BL401"
    name = "imbalanced-labels-unweighted"
    severity = "warning"
    summary = "Classification on labels known to be imbalanced, with no class weights, sampler or resampling"
    help = "weight the loss (`CrossEntropyLoss(weight=...)`, keras `class_weight=`) or resample (`WeightedRandomSampler`)"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if not facts.is_training or _mitigated(facts) or _regression(facts):
            return
        anchor = run_anchor(facts)
        if anchor is None:
            return
        for counts, origin in _distributions(facts):
            total = sum(counts.values())
            if total < MIN_EXAMPLES or len(counts) < 2:
                continue
            (major, n_major), (minor, n_minor) = counts.most_common()[0], counts.most_common()[-1]
            ratio = n_major / max(n_minor, 1)
            if ratio < ctx.settings.imbalance_ratio:
                continue
            shown = ", ".join(f"{label!r}: {n}" for label, n in sorted(counts.items(), key=lambda kv: -kv[1]))
            ctx.report(
                anchor,
                f"labels from {origin} are imbalanced {ratio:.1f}:1 ({shown}; {total} examples) and nothing weights the classes: the model learns to predict {major!r}",
            )
            return


def _regression(facts: Facts) -> bool:
    for load in facts.model_loads:
        if facts.kw_value(load.call, "num_labels", default=None) == 1 or facts.kw_value(load.call, "problem_type", default=None) == "regression":
            return True
    return False


def _mitigated(facts: Facts) -> bool:
    for call in facts.calls:
        short = call.short or ""
        if short in MITIGATION_CALLS or "focal" in short.lower():
            return True
        if short == "CrossEntropyLoss" and ("weight" in call.kwargs or call.positional):
            return True
        if short in ("BCEWithLogitsLoss",) and "pos_weight" in call.kwargs:
            return True
        if call.method == "fit" and ("class_weight" in call.kwargs or "sample_weight" in call.kwargs):
            return True
        if short in ("cross_entropy", "nll_loss") and "weight" in call.kwargs:
            return True
    if any(q.split(".", 1)[0] == "imblearn" for q in facts.imports.values()):
        return True
    return any("compute_loss" in cls.methods and _mentions_weight(facts, cls.methods["compute_loss"]) for cls in facts.classes.values())


def _mentions_weight(facts: Facts, fn: cst.FunctionDef) -> bool:
    text = facts.text(fn)
    return "weight" in text or "focal" in text.lower()


def _distributions(facts: Facts):
    """(Counter of labels, where they came from) for every label source we can read statically."""
    for scope, name, event in _label_assignments(facts):
        value = facts.value(cst.Name(name), scope, order=event.order + 1)
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in value):
            yield Counter(value), f"`{name}`"
    for call in facts.calls:
        short = call.short or ""
        if short in ("from_dict", "DataFrame") and call.positional and isinstance(call.positional[0].value, cst.Dict):
            for element in call.positional[0].value.elements:
                if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) and element.key.evaluated_value in LABEL_NAMES:
                    value = facts.value(element.value, call.scope, order=call.order)
                    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in value):
                        yield Counter(value), f"the `{element.key.evaluated_value}` column"
        elif short == "make_classification" and call.qualname and call.qualname.startswith("sklearn"):
            counts = _make_classification(facts, call)
            if counts is not None:
                yield counts, "`make_classification(weights=...)`"
        else:
            path, fmt = datafiles.data_file_of(facts, call)
            if path is not None:
                counts = datafiles.label_counts(path, fmt, _label_columns(facts))
                if counts is not None:
                    yield counts[0], f"`{path.name}` column `{counts[1]}`"


def _label_assignments(facts: Facts):
    scopes = [facts.module_scope] + [scope for defs in facts.functions.values() for _, scope in defs]
    for scope in scopes:
        for name, events in scope.events.items():
            if name.lower() in LABEL_NAMES and any(e.op == "assign" for e in events):
                yield scope, name, events[-1]


def _label_columns(facts: Facts) -> list[str]:
    """Columns the script treats as labels (`df["sentiment"]` assigned to `labels`), then the usual names."""
    found = []
    for scope in [facts.module_scope] + [s for defs in facts.functions.values() for _, s in defs]:
        for name, events in scope.events.items():
            if name.lower() not in LABEL_NAMES:
                continue
            for event in events:
                node = event.value
                while isinstance(node, (cst.Attribute, cst.Call)):
                    node = node.value if isinstance(node, cst.Attribute) else node.func
                if isinstance(node, cst.Subscript) and isinstance(node.slice[0].slice, cst.Index):
                    key = node.slice[0].slice.value
                    if isinstance(key, cst.SimpleString):
                        found.append(key.evaluated_value)
    return found + ["label", "labels", "target", "class", "y"]


def _make_classification(facts: Facts, call) -> Counter | None:
    n = facts.kw_value(call, "n_samples", default=100)
    weights = facts.kw_value(call, "weights", default=None)
    if not isinstance(n, int) or not isinstance(weights, (list, tuple)) or not weights:
        return None
    if not all(isinstance(w, (int, float)) for w in weights):
        return None
    n_classes = facts.kw_value(call, "n_classes", default=2)
    if not isinstance(n_classes, int):
        return None
    weights = list(weights) + ([1 - sum(weights)] if len(weights) == n_classes - 1 else [])
    return Counter({i: int(round(n * w)) for i, w in enumerate(weights)})
