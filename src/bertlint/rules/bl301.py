"""BL301: a fine-tuning learning rate outside the range that works for the model family."""

from __future__ import annotations

from bertlint import knowledge
from bertlint.facts import UNKNOWN, Call, Facts, dotted, trained_model, training_arg, uses_peft
from bertlint.rules import Context, Rule

# (qualified-name suffixes, keyword, positional index, optimizer kind)
TORCH_OPTIMIZERS = {"AdamW": "adamw", "Adam": "adamw", "SGD": "sgd", "RMSprop": "adamw", "Adagrad": "adamw", "NAdam": "adamw", "RAdam": "adamw", "Adamax": "adamw", "AdamW8bit": "adamw", "PagedAdamW": "adamw", "PagedAdamW8bit": "adamw"}
KERAS_OPTIMIZERS = {"Adam": "adamw", "AdamW": "adamw", "SGD": "sgd", "RMSprop": "adamw", "Adafactor": "adafactor", "Nadam": "adamw", "Adamax": "adamw", "Lion": "adamw"}
KERAS_SCHEDULES = ("ExponentialDecay", "PolynomialDecay", "CosineDecay", "CosineDecayRestarts", "InverseTimeDecay", "PiecewiseConstantDecay")


class LearningRateOutOfRange(Rule):
    code = "BL301"
    name = "learning-rate-out-of-range"
    severity = "warning"
    summary = "A fine-tuning learning rate outside the safe range for the model family and optimizer"
    help = "use a rate inside the family's range (tune it with `learning-rate` in [tool.bertlint])"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        loads = facts.model_loads
        if not loads:
            return  # not a pretrained transformer: ranges do not apply
        known = trained_model(facts)
        info = known[1] if known else None
        from_scratch = all(load.how != "pretrained" for load in loads)
        model_type = None if info else _model_type(loads)
        peft = uses_peft(facts)
        for call, arg, optimizer in _rate_sites(facts):
            value = facts.value(arg.value, call.scope, order=call.order)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                continue
            low, high, label = knowledge.lr_range(info, optimizer, from_scratch=from_scratch, peft=peft, model_type=model_type, overrides=ctx.settings.lr_ranges)
            if low <= value <= high:
                continue
            far = value > 10 * high or value < low / 10
            effect = "diverges (loss rises or turns NaN, or the model collapses to one class)" if value > high else "barely moves the weights: the loss stalls"
            ctx.report(
                arg,
                f"learning rate {value:g} is {'above' if value > high else 'below'} the safe range {low:g}–{high:g} for {label}: fine-tuning at this rate {effect}",
                severity="error" if far else "warning",
                help=f"use a rate between {low:g} and {high:g}; typical recipes for {label} sit inside it",
            )


def _model_type(loads) -> str | None:
    types = {knowledge.model_type_from_class_name(load.class_name.rsplit(".", 1)[-1]) for load in loads}
    return types.pop() if len(types) == 1 else None


def _optim_kind_from_args(facts: Facts) -> str:
    optim = training_arg(facts, "optim", "adamw_torch")
    if isinstance(optim, str) and "adafactor" in optim:
        return "adafactor"
    if isinstance(optim, str) and "sgd" in optim:
        return "sgd"
    return "adamw" if training_arg(facts, "adafactor", False) is not True else "adafactor"


def _rate_sites(facts: Facts):
    """(call, the arg that sets the initial rate, optimizer kind) for every place a rate takes effect."""
    for call in facts.training_args:
        arg = call.kwargs.get("learning_rate")
        if arg is not None:
            yield call, arg, _optim_kind_from_args(facts)
    for call in facts.calls:
        q = call.qualname
        if not q:
            continue
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.optim") and last in TORCH_OPTIMIZERS or q.startswith("bitsandbytes.optim") and last in TORCH_OPTIMIZERS:
            arg = call.arg(1, "lr")
            if arg is not None and not _optimizes_other_model(facts, call):
                yield call, arg, TORCH_OPTIMIZERS[last]
        elif q.startswith("transformers") and last in ("AdamW", "Adafactor"):
            arg = call.arg(1, "lr")
            if arg is not None and not (last == "Adafactor" and facts.kw_value(call, "relative_step", default=True) is not False):
                yield call, arg, "adafactor" if last == "Adafactor" else "adamw"
        elif q.startswith("transformers") and last == "create_optimizer":
            arg = call.arg(0, "init_lr")
            if arg is not None:
                yield call, arg, "adamw"
        elif _is_keras(q) and last in KERAS_OPTIMIZERS:
            arg = call.arg(0, "learning_rate")
            if arg is not None and facts.kind(arg.value, call.scope, call.order) is None:
                yield call, arg, KERAS_OPTIMIZERS[last]
        elif _is_keras(q) and last in KERAS_SCHEDULES and last != "PiecewiseConstantDecay":
            arg = call.arg(0, "initial_learning_rate")
            if arg is not None:
                yield call, arg, "adamw"


def _is_keras(qualname: str) -> bool:
    return qualname.startswith(("tensorflow.keras", "keras", "tf_keras", "tensorflow.optimizers"))


def _optimizes_other_model(facts: Facts, call: Call) -> bool:
    """`torch.optim.Adam(head.parameters(), ...)` where `head` is a plain module, not the transformer."""
    params = call.arg(0, "params")
    if params is None or not hasattr(params.value, "func"):
        return False
    func = params.value.func
    owner = getattr(func, "value", None)
    if dotted(func) is None or not dotted(func).endswith("parameters") or owner is None:
        return False
    kind = facts.kind(owner, call.scope, call.order)
    if kind is not None:
        return kind.kind != "model"
    name = dotted(owner)
    return name is not None and "." not in name and bool(call.scope.lookup_scope(name) and call.scope.lookup_scope(name).events.get(name))
