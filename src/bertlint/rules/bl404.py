"""BL404: a Hugging Face TF model (it outputs logits) compiled with a Keras cross-entropy that expects probabilities."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import UNKNOWN, Call, Facts, ModelLoad
from bertlint.rules import Context, Replacement, Rule

KERAS_ROOTS = ("tensorflow.keras.losses.", "keras.losses.", "tf_keras.losses.", "tensorflow.losses.")
# The probability-expecting cross-entropies (`from_logits=False` by default: keras/src/losses/losses.py), as classes and
# as functions, and the names `compile(loss="...")` resolves to them.
LOSSES = frozenset({
    "SparseCategoricalCrossentropy", "CategoricalCrossentropy", "BinaryCrossentropy",
    "sparse_categorical_crossentropy", "categorical_crossentropy", "binary_crossentropy",
})
TF_REMOVED = (5,)  # transformers 5.0 removed the TensorFlow models: on 5.x the import fails first (BL606)


class KerasLossOnLogits(Rule):
    code = "BL404"
    name = "keras-loss-on-logits"
    severity = "error"
    summary = "A Hugging Face TF model compiled with a Keras cross-entropy that expects probabilities (no `from_logits=True`)"
    help = "pass `from_logits=True` to the loss (`tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)`), or compile without a loss to use the model's own"
    fix = "safe"
    fix_title = "add `from_logits=True`"
    needs = ("tensorflow", "keras", "tf_keras")

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if ctx.version >= TF_REMOVED:
            return
        for call in facts.calls:
            if call.method != "compile" or hf_tf_model(facts, call) is None:
                continue
            arg = call.arg(1, "loss")
            if arg is None:
                continue
            found = probability_loss(facts, arg.value, call)
            if found is None:
                continue
            name, fix = found
            ctx.report(
                arg.value,
                f"the model outputs logits but `{name}` expects probabilities (`from_logits=False`): it applies no softmax, "
                "so the loss and its gradients are wrong and training stalls near chance accuracy",
                fix=fix,
            )


def hf_tf_model(facts: Facts, call: Call) -> ModelLoad | None:
    """The load of the transformers TF model with a task head (its outputs are logits) that `compile` is called on."""
    found = facts.kind(call.receiver, call.scope, call.order)
    if found is None or found.kind != "model":
        return None
    load = next((load for load in facts.model_loads if load.call is found.call), None)
    return load if load is not None and load.keras and load.head != "base" else None


def probability_loss(facts: Facts, expr: cst.BaseExpression, at: Call) -> tuple[str, list[Replacement] | None] | None:
    """(what the loss is, the fix) when `expr` is a cross-entropy left at `from_logits=False`: a string name, the loss
    function, or an instance (directly or through a name bound once)."""
    value = facts.value(expr, at.scope, order=at.order)
    if isinstance(value, str):
        return (f'loss="{value}"', None) if value in LOSSES else None
    bound = facts.definition(expr, at.scope, at.order) if isinstance(expr, cst.Name) else None
    if bound is not None and isinstance(bound.value, cst.Call):
        return probability_loss(facts, bound.value, at)
    qualname = facts.qualname(expr, at.scope)
    if qualname is not None:  # the loss function itself: `loss=tf.keras.losses.sparse_categorical_crossentropy`
        return (qualname.rsplit(".", 1)[-1], None) if _keras_loss(qualname) else None
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is None or call.qualname is None or not _keras_loss(call.qualname) or call.has_double_star:
        return None
    name = call.qualname.rsplit(".", 1)[-1]
    flag = call.kwargs.get("from_logits")
    if flag is None:
        if call.positional:
            return None  # `from_logits` is the first parameter: a positional argument may be it
        return f"{name}()", [Replacement(call.node, _with_from_logits(facts.text(call.node)))]
    setting = facts.kw_value(call, "from_logits", cli=False)
    if setting is UNKNOWN or setting:
        return None
    return f"{name}(from_logits=False)", [Replacement(flag.value, "True")]


def _keras_loss(qualname: str) -> bool:
    return qualname.startswith(KERAS_ROOTS) and qualname.rsplit(".", 1)[-1] in LOSSES


def _with_from_logits(text: str) -> str:
    """`Loss()` -> `Loss(from_logits=True)`, `Loss(reduction="sum")` -> `Loss(reduction="sum", from_logits=True)`."""
    head = text[: text.rindex(")")].rstrip()
    joint = "" if head.endswith("(") else " " if head.endswith(",") else ", "
    return f"{head}{joint}from_logits=True)"
