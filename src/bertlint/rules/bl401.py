"""BL401: a classification run on labels known to be imbalanced, with no class weighting anywhere."""

from __future__ import annotations

from collections import Counter

import libcst as cst

from bertlint import datafiles
from bertlint.facts import (
    LABEL_NAMES, Facts, data_file_rows_of, fails_before_a_step, index_taken_from_rows, label_columns, literal, mapped_counts, mapped_label_columns, module_step, names_in,
    regression_loss, rewritten_columns, run_anchor, runs_at_module_level,
)
from bertlint.rules import Context, Rule

MIN_EXAMPLES = 50
SHOWN = 6  # classes the message lists in full; more: the three largest and the two smallest
LM_HEADS = frozenset({"causal-lm", "masked-lm", "seq2seq"})
MITIGATION_CALLS = ("compute_class_weight", "compute_sample_weight", "WeightedRandomSampler", "RandomOverSampler", "RandomUnderSampler", "SMOTE", "ADASYN", "sigmoid_focal_loss")


class ImbalancedLabelsUnweighted(Rule):
    code = "BL401"
    name = "imbalanced-labels-unweighted"
    severity = "warning"
    summary = "Classification on labels known to be imbalanced, with no class weights, sampler or resampling"
    help = "weight the loss (`CrossEntropyLoss(weight=...)`, keras `class_weight=`) or resample (`WeightedRandomSampler`)"
    needs = ("transformers", "torch", "tensorflow", "keras", "tf_keras")  # any classifier, not only transformers ones

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if not facts.is_training or not _classification(facts) or fails_before_a_step(facts):
            return  # (a run that stops before its first step learns nothing, balanced or not)
        anchor = run_anchor(facts, ("trainer", "training_args", "fit", "load", "loss"))
        if anchor is None or _mitigated(facts, _trained_by(facts, anchor)):
            return
        for counts, origin in label_distributions(facts):
            total = sum(counts.values())
            if total < MIN_EXAMPLES or len(counts) < 2:
                continue
            (major, n_major), (_, n_minor) = counts.most_common()[0], counts.most_common()[-1]
            ratio = n_major / max(n_minor, 1)
            if ratio < ctx.settings.imbalance_ratio:
                continue
            ranked = counts.most_common()
            shown = ", ".join(f"{label!r}: {n}" for label, n in (ranked if len(ranked) <= SHOWN else ranked[:3])) + (
                "" if len(ranked) <= SHOWN else f", ..., {', '.join(f'{label!r}: {n}' for label, n in ranked[-2:])}; {len(ranked)} classes")
            # the majority swamps the loss only where it holds at least half of the examples
            effect = f"the model learns to predict {major!r}" if 2 * n_major >= total else f"the rarest classes ({ranked[-1][0]!r}: {n_minor}) are seldom predicted"
            ctx.report(
                anchor,
                f"labels from {origin} are imbalanced {ratio:.1f}:1 ({shown}; {total} examples) and nothing weights the classes: {effect}",
            )
            return


def _classification(facts: Facts) -> bool:
    """No model the script loads is a regression head or a language model (whose labels are tokens), and no loss it
    makes or compiles fits numbers (`loss="mse"`, `nn.MSELoss()`)."""
    if regression_loss(facts) is not None:
        return False
    for load in facts.model_loads:
        if load.head in LM_HEADS:
            return False
        if facts.kw_value(load.call, "num_labels", default=None) == 1 or facts.kw_value(load.call, "problem_type", default=None) == "regression":
            return False
    return True


def _trained_by(facts: Facts, anchor) -> int | None:
    """Where a keras `fit` that trains there and then, in the module's own body, sits: whatever the module does after it
    (a resampling or weighted fit in a later cell) cannot balance that first run. None for any other anchor: a model
    load or a `Trainer` trains later, after whatever comes between."""
    fits = facts.fit_calls
    if fits and fits[0].node is anchor and runs_at_module_level(facts, anchor):
        return module_step(facts, anchor)
    return None


def _mitigated(facts: Facts, trained_at: int | None = None) -> bool:
    """Something weights or resamples the classes: anywhere in the file, or, for a run that trains at module statement
    `trained_at`, in that statement or before it."""
    for call in facts.calls:
        if trained_at is not None and module_step(facts, call.node) > trained_at:
            continue
        # the file's own functions count too (`focal_loss(...)`): they resolve to no qualname
        short = call.short or (call.node.func.value if isinstance(call.node.func, cst.Name) else "")
        if short in MITIGATION_CALLS or "focal" in short.lower():
            return True
        if short in ("CrossEntropyLoss", "NLLLoss") and (facts.passes(call, "weight") or call.positional):
            return True
        if short in ("BCEWithLogitsLoss",) and facts.passes(call, "pos_weight"):
            return True
        if call.method == "fit" and (facts.passes(call, "class_weight") or facts.passes(call, "sample_weight")):
            return True
        if short in ("cross_entropy", "nll_loss") and facts.passes(call, "weight"):
            return True
    if any((call.qualname or "").split(".", 1)[0] == "imblearn" and (trained_at is None or module_step(facts, call.node) <= trained_at) for call in facts.calls):
        return True  # an imbalanced-learn resampler, pipeline or balanced batch generator runs (an import alone balances nothing)
    return any("compute_loss" in cls.methods and _weights_classes(cls.methods["compute_loss"]) for cls in facts.classes.values())


def _weights_classes(fn: cst.FunctionDef) -> bool:
    """A `compute_loss` override that uses a name for class weights or a focal loss (comments and strings do not count)."""
    names = {name.lower() for name in names_in(fn)}
    return any(("weight" in n and "decay" not in n) or "focal" in n for n in names)


def label_distributions(facts: Facts):
    """(Counter of labels, where they came from) for every label source we can read statically."""
    for scope, name, assigned, after, _ in facts.variables:
        if name.lower() not in LABEL_NAMES or not assigned:
            continue
        value = facts.name_value(name, scope, order=after)
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in value):
            yield Counter(value), f"`{name}`"
    for call in facts.calls:
        short = call.short or ""
        if short in ("from_dict", "DataFrame") and call.positional and isinstance(call.positional[0].value, cst.Dict):
            for element in call.positional[0].value.elements:
                if isinstance(element, cst.DictElement) and literal(element.key) in LABEL_NAMES:
                    value = facts.value(element.value, call.scope, order=call.order)
                    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in value):
                        yield Counter(value), f"the `{literal(element.key)}` column"
        elif short == "make_classification" and call.qualname and call.qualname.startswith("sklearn"):
            counts = _make_classification(facts, call)
            if counts is not None:
                yield counts, "`make_classification(weights=...)`"
        else:
            path, fmt = data_file_rows_of(facts, call)
            if path is None:
                continue
            index, mapped = index_taken_from_rows(call), mapped_label_columns(facts)
            for column, mapping in mapped:  # labels the script makes of a column's values, one by one
                found = datafiles.label_counts(path, fmt, [column], exact=True, index=index)
                counts = mapped_counts(found[0], mapping) if found is not None else None
                if counts is not None:
                    yield counts, f"`{path.name}` column `{column}` as the script maps it"
            counts = datafiles.label_counts(path, fmt, label_columns(facts), index=index)
            # a column rewritten in place, or mapped into the labels, trains other counts
            if counts is not None and counts[1] not in rewritten_columns(facts) and all(counts[1] != column for column, _ in mapped):
                yield counts[0], f"`{path.name}` column `{counts[1]}`"


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
