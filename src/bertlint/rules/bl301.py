"""BL301: a fine-tuning learning rate outside the range that works for the model family."""

from __future__ import annotations

from bertlint import knowledge
from bertlint.facts import Call, Facts, dotted, trained_model, training_arg, uses_peft
from bertlint.rules import Context, Rule

# Only the optimizers whose fine-tuning rates are published (api-facts.md section 8): the Adam family and
# Adafactor. SGD, Adagrad, RMSprop or Lion work at other rates; a range borrowed from AdamW would misfire.
ADAM_FAMILY = frozenset({"Adam", "AdamW", "NAdam", "Nadam", "RAdam", "Adam8bit", "AdamW8bit", "PagedAdamW", "PagedAdamW8bit", "PagedAdamW32bit"})
KERAS_SCHEDULES = frozenset({"ExponentialDecay", "PolynomialDecay", "CosineDecay", "CosineDecayRestarts", "InverseTimeDecay"})
FAR = 10  # this many times outside the range is an error, not a warning
# The LoRA range (1e-5..1e-3) is LoRA's: peft ships some thirty other methods (prompt/prefix/P-tuning, IA3,
# LoHa, LoKr, OFT, BOFT, VeRA, FourierFT, RoAd, ...: peft/src/peft/tuners/__init__.py) whose recipes run 10-100x
# higher (peft's prompt-tuning examples use 3e-2; Lester et al. 0.3). The range applies only where the method is
# evidently LoRA: a `LoraConfig` (and its helpers, exported by peft/tuners/lora) and no other peft method config.
LORA_CONFIGS = frozenset({"LoraConfig", "LoftQConfig", "EvaConfig", "LoraRuntimeConfig", "ArrowConfig"})
# Preference optimization (DPO and its relatives) is not supervised fine-tuning: its loss is measured
# against a frozen reference model and its recipes sit below every fine-tuning range (DPO paper 1e-6,
# Zephyr 5e-7, trl's DPOConfig default 1e-6). No published range covers it, so the rule stays silent.
PREFERENCE_OPTIMIZATION = tuple(f"trl.{name}" for name in ("DPOConfig", "DPOTrainer", "KTOConfig", "KTOTrainer", "ORPOConfig", "ORPOTrainer", "CPOConfig", "CPOTrainer", "BCOConfig", "BCOTrainer"))


class LearningRateOutOfRange(Rule):
    code = "BL301"
    name = "learning-rate-out-of-range"
    severity = "warning"
    summary = "A fine-tuning learning rate outside the safe range for the model family and optimizer"
    help = "use a rate inside the family's range (tune it with `learning-rate` in [tool.bertlint])"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        loads = [load for load in facts.model_loads if not load.class_name.startswith("peft.")]
        if not loads:
            return  # not a pretrained transformer: ranges do not apply
        if facts.calls_to(*PREFERENCE_OPTIMIZATION):
            return  # DPO & co.: no published range applies
        method = peft_method(facts)
        if method == "other":
            return  # a PEFT method other than LoRA, or one the file does not show: no range of ours covers it
        families = {family_of(facts, load) for load in loads}
        if method != "lora" and (len(families) != 1 or None in families and "default" not in (ctx.settings.lr_ranges or {})):
            return  # an unknown family (speech, vision, unlisted models), or several: not BERT, stay silent
        known = trained_model(facts)
        info = known[1] if known else None
        from_scratch = all(load.how != "pretrained" for load in loads)
        family = next(iter(families)) if len(families) == 1 else None
        # error only where the range is LoRA's or the family's own: not the generic from-scratch or a configured default
        severe = method == "lora" or not from_scratch and family is not None
        for call, arg, optimizer in rate_sites(facts):
            value = facts.value(arg.value, call.scope, order=call.order)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                continue
            found = knowledge.lr_range(info, optimizer, from_scratch=from_scratch, peft=method == "lora", family=family, overrides=ctx.settings.lr_ranges)
            if found is None:
                continue
            low, high, label = found
            if low <= value <= high:
                continue
            above = value > high
            factor = value / high if above else low / value
            effect = "diverges (loss rises or turns NaN, or the model collapses to one class)" if above else "barely moves the weights: the loss stalls"
            ctx.report(
                arg,
                f"learning rate {value:g} is {factor:.3g}× {'above' if above else 'below'} the safe range {low:g}–{high:g} for {label}: fine-tuning at this rate {effect}",
                severity="error" if severe and factor >= FAR * (1 - 1e-9) else "warning",
                help=f"use a rate between {low:g} and {high:g}; typical recipes for {label} sit inside it",
            )


def peft_method(facts: Facts) -> str | None:
    """"lora" when the run's PEFT method is evidently LoRA/QLoRA, "other" when it is another method or not shown
    (`PeftModel.from_pretrained` of a saved adapter, `get_peft_config`), None without PEFT."""
    configs = {c.qualname.rsplit(".", 1)[-1] for c in facts.calls if c.qualname and c.qualname.startswith("peft.") and c.qualname.endswith("Config")}
    if configs and configs <= LORA_CONFIGS and "LoraConfig" in configs:
        return "lora"
    return "other" if configs or uses_peft(facts) else None


def family_of(facts: Facts, load) -> str | None:
    """The learning-rate family of one model load: its checkpoint's (by size), else its class's base family."""
    info = facts.checkpoint_info(load)
    if info is not None and info.family is not None:
        return info.family
    return knowledge.family_for_model_type(knowledge.model_type_from_class_name(load.class_name.rsplit(".", 1)[-1]))


def model_type_of(loads) -> str | None:
    types = {knowledge.model_type_from_class_name(load.class_name.rsplit(".", 1)[-1]) for load in loads}
    return types.pop() if len(types) == 1 else None


def _optim_kind_from_args(facts: Facts) -> str | None:
    """The optimizer kind `TrainingArguments(optim=...)` selects; None for one without a published range."""
    if training_arg(facts, "adafactor", False) is True:
        return "adafactor"
    optim = training_arg(facts, "optim", "adamw_torch")
    if not isinstance(optim, str):
        return None
    return "adafactor" if "adafactor" in optim else "adamw" if "adam" in optim else None


def rate_sites(facts: Facts):
    """(call, the arg that sets the initial rate, optimizer kind) for every place a rate takes effect."""
    if not any("optimizers" in t.kwargs for t in facts.trainers):  # `Trainer(optimizers=...)` ignores `learning_rate`
        kind = _optim_kind_from_args(facts)
        for call in facts.training_args:
            if "learning_rate" in call.kwargs and kind is not None:
                yield call, call.kwargs["learning_rate"], kind
    for call in facts.calls:
        site = _optimizer_rate(facts, call) if call.qualname else None
        if site is not None and site[0] is not None:
            yield call, *site


def _optimizer_rate(facts: Facts, call: Call):
    """(the rate argument, optimizer kind) of an optimizer or schedule construction, or None."""
    q = call.qualname
    root, last = q.split(".", 1)[0], q.rsplit(".", 1)[-1]
    if (q.startswith("torch.optim") or root == "bitsandbytes") and last in ADAM_FAMILY:
        return (call.arg(1, "lr"), "adamw") if not _optimizes_other_model(facts, call) else None
    if root == "transformers":
        if last == "AdamW":
            return call.arg(1, "lr"), "adamw"
        if last == "Adafactor" and facts.kw_value(call, "relative_step", default=True) is False:
            return call.arg(1, "lr"), "adafactor"  # with relative steps Adafactor ignores `lr`
        if last == "AdamWeightDecay":
            return call.arg(0, "learning_rate"), "adamw"
        if last == "create_optimizer":
            return call.arg(0, "init_lr"), "adamw"
    if q.startswith(("tensorflow.keras", "keras", "tf_keras", "tensorflow.optimizers")):
        if last in ADAM_FAMILY or last == "Adafactor":
            arg = call.arg(0, "learning_rate")
            if arg is not None and facts.kind(arg.value, call.scope, call.order) is None:
                return arg, "adafactor" if last == "Adafactor" else "adamw"
        if last in KERAS_SCHEDULES:
            return call.arg(0, "initial_learning_rate"), "adamw"
    return None


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
