"""BL301: a fine-tuning learning rate outside the range that works for the model family."""

from __future__ import annotations

import math
from dataclasses import dataclass

import libcst as cst

from bertlint import knowledge
from bertlint.facts import Call, Facts, epochs_of, fails_before_a_step, frozen_bodies, never_steps, not_taken, keras_trains_pretrained, params_without_rates, trained_model, trainer_models, training_field, trains_pretrained, uses_peft
from bertlint.rules import Context, Rule

# Only the optimizers whose fine-tuning rates are published (api-facts.md section 8): the Adam family and
# Adafactor. SGD, Adagrad, RMSprop or Lion work at other rates; a range borrowed from AdamW would misfire.
ADAM_FAMILY = frozenset({"Adam", "AdamW", "NAdam", "Nadam", "RAdam", "Adam8bit", "AdamW8bit", "PagedAdamW", "PagedAdamW8bit", "PagedAdamW32bit"})
KERAS_SCHEDULES = frozenset({"ExponentialDecay", "PolynomialDecay", "CosineDecay", "CosineDecayRestarts", "InverseTimeDecay"})
FAR = 10  # this many times outside the range is an error, not a warning
# The ranges are where the published recipes sit, not where training breaks: a rate at most NEAR times outside one
# (2e-4 for BERT-base's 1e-4 ceiling, 1e-6 for a large encoder's 2e-6 floor) is a recipe's choice whose effect the
# message cannot promise (on the judged corpora, each of the four rates within 2x of a bound trained as its file
# meant: a warm-up that never reaches its peak, a deliberate replication, a pseudo-label pass, a tuned 9.99e-6).
# Beyond it the divergence or the stall is the rule's claim.
NEAR = 2
# The LoRA range (1e-5..1e-3) is LoRA's: peft ships some thirty other methods (prompt/prefix/P-tuning, IA3,
# LoHa, LoKr, OFT, BOFT, VeRA, FourierFT, RoAd, ...: peft/src/peft/tuners/__init__.py) whose recipes run 10-100x
# higher (peft's prompt-tuning examples use 3e-2; Lester et al. 0.3). The range applies only where the method is
# evidently LoRA: a `LoraConfig` (and its helpers, exported by peft/tuners/lora) and no other peft method config.
LORA_CONFIGS = frozenset({"LoraConfig", "LoftQConfig", "EvaConfig", "LoraRuntimeConfig", "ArrowConfig"})
# LoRA without peft: Microsoft's own loralib (the LoRA paper's code) swaps layers for `lora.Linear` and then calls
# `mark_only_lora_as_trainable(model)`, which sets requires_grad False on every parameter whose name lacks 'lora_'
# (microsoft/LoRA, loralib/utils.py): the same adapters, at the paper's rates (4e-4 to 5e-4 for RoBERTa-base).
LORALIB_FREEZE = "loralib.mark_only_lora_as_trainable"
# Preference optimization (DPO and its relatives) is not supervised fine-tuning: its loss is measured
# against a frozen reference model and its recipes sit below every fine-tuning range (DPO paper 1e-6,
# Zephyr 5e-7, trl's DPOConfig default 1e-6). No published range covers it, so the rule stays silent.
PREFERENCE_OPTIMIZATION = tuple(f"trl.{name}" for name in ("DPOConfig", "DPOTrainer", "KTOConfig", "KTOTrainer", "ORPOConfig", "ORPOTrainer", "CPOConfig", "CPOTrainer", "BCOConfig", "BCOTrainer"))
# The rate an optimizer runs at when none is passed. torch/optim/adam.py, adamw.py, radam.py `lr=1e-3`, nadam.py
# `lr=2e-3` (the installed torch 2.13; the same since each was added); transformers' own AdamW (optimization.py, 4.x)
# `lr=1e-3`; Keras Adam/AdamW `learning_rate=0.001` (tf.keras optimizer_v2/adam.py, keras/src/optimizers/adam.py), which
# is also what `compile(optimizer="adam")` builds.
TORCH_DEFAULTS = {"Adam": 1e-3, "AdamW": 1e-3, "RAdam": 1e-3, "NAdam": 2e-3}
KERAS_DEFAULTS = {"Adam": 1e-3, "AdamW": 1e-3}
KERAS_ROOTS = ("tensorflow.keras", "keras", "tf_keras", "tensorflow.optimizers")
# Schedulers that set the rate themselves (`max_lr=`, `base_lr=`), whatever the optimizer was built with.
RATE_SETTING_SCHEDULERS = ("torch.optim.lr_scheduler.OneCycleLR", "torch.optim.lr_scheduler.CyclicLR")
EFFECT = {True: "diverges (loss rises or turns NaN, or the model collapses to one class)", False: "barely moves the weights: the loss stalls"}
TF_MODELS_REMOVED = (5,)  # transformers 5.0 removed the TensorFlow models: on 5.x a Keras fine-tune fails at its import (BL606)
SUGGESTED = 2e-5  # the rate of the BERT paper's and the Trainer examples' recipes, kept inside the family's range
# A stall is about the whole update, not the rate alone: with AdamW each update moves a weight by about the rate, so a
# run moves its weights about rate x updates. The ranges are those of recipes that run about 3 epochs (the BERT paper's
# 2-4; TrainingArguments' `num_train_epochs=3.0`), and the recipes cluster in the middle of the range on a log scale
# (2.2e-5 for BERT-base's 5e-6..1e-4, the BERT paper's 2e-5..5e-5). A rate below the range over a run known to make at
# least as many updates x rate as that typical recipe over 3 epochs (accumulating k batches makes k times fewer updates)
# moves the weights as far, and is no stall; matching only the range's low end is not enough.
TYPICAL_EPOCHS = 3


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
        if one_step_demo(facts):
            return  # the API shown once (the course's `loss.backward(); optimizer.step()`): no run whose rate matters
        if fails_before_a_step(facts):
            return  # the run stops before its first step: no update at any rate
        method = peft_method(facts)
        if method == "other":
            return  # a PEFT method other than LoRA, or one the file does not show: no range of ours covers it
        handed = trainer_models(facts)
        trained = [load for load in loads if handed is None or id(load.call) in handed] or loads  # not a donor of weights
        if method is None and all(id(load.call) in frozen_bodies(facts) for load in trained):
            return  # every pretrained body is frozen and no adapter is added: a fresh head or a soft prompt trains, at rates of its own
        families = {family_of(facts, load) for load in loads}
        if method != "lora" and (len(families) != 1 or None in families and "default" not in (ctx.settings.lr_ranges or {})):
            return  # an unknown family (speech, vision, unlisted models), or several: not BERT, stay silent
        known = trained_model(facts)
        info = known[1] if known else None
        from_scratch = all(load.how != "pretrained" for load in loads)
        family = next(iter(families)) if len(families) == 1 else None
        # error only where the range is LoRA's or the family's own: not the generic from-scratch or a configured default
        severe = method == "lora" or not from_scratch and family is not None
        if not from_scratch and family is not None:
            for default in default_rate_sites(facts, ctx.version):
                self._report_default(ctx, default, info, family, method == "lora", severe)
        heads = frozen_bodies(facts) if method is None else frozenset()
        # LoRA is read off the whole file: with several TrainingArguments rates in a LoRA file (a `--lora` path beside a
        # full fine-tune), which run is the adapters' is not evident, so no range is, and those rates are left alone
        runs = sum("learning_rate" in c.kwargs for c in facts.training_args)
        for call, arg, optimizer in rate_sites(facts):
            if (models := _models_of_args(facts, call)) and models <= heads:
                continue  # these TrainingArguments go to Trainers of frozen bodies only: a head's rate, beside a full run's
            if method == "lora" and runs > 1 and any(c is call for c in facts.training_args):
                continue
            value = facts.value(arg.value, call.scope, order=call.order)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                continue
            found = knowledge.lr_range(info, optimizer, from_scratch=from_scratch, peft=method == "lora", family=family, overrides=ctx.settings.lr_ranges)
            if found is None:
                continue
            low, high, label = found
            factor = outside(value, low, high)
            if factor is None:
                continue
            above = value > high
            if not above and (epochs := run_epochs(facts, call)) is not None and value * epochs >= math.sqrt(low * high) * TYPICAL_EPOCHS:
                continue  # a low rate made up for by a long run (t5-base at 1e-6 for 3,000 epochs): the weights do move
            effect = EFFECT[above]
            ctx.report(
                arg,
                f"learning rate {value:g} is {factor:.3g}× {'above' if above else 'below'} the safe range {low:g}–{high:g} for {label}: fine-tuning at this rate {effect}",
                severity="error" if severe and factor >= FAR * (1 - 1e-9) else "warning",
                help=f"use a rate between {low:g} and {high:g}; typical recipes for {label} sit inside it",
            )


    def _report_default(self, ctx: Context, default: DefaultRate, info, family: str, lora: bool, severe: bool) -> None:
        found = knowledge.lr_range(info, default.optimizer, from_scratch=False, peft=lora, family=family, overrides=ctx.settings.lr_ranges)
        if found is None or (factor := outside(default.rate, found[0], found[1])) is None:
            return
        low, high, label = found
        where = "above" if default.rate > high else "below"
        suggested = min(max(SUGGESTED, low), high)
        ctx.report(
            default.node,
            f"{default.what} sets no learning rate, so it runs at its default {default.rate:g}, {factor:.3g}× {where} the safe range "
            f"{low:g}–{high:g} for {label}: the default is the cause, and fine-tuning at it {EFFECT[where == 'above']}",
            severity="error" if severe and factor >= FAR * (1 - 1e-9) else "warning",
            help=f"pass the rate explicitly: `{default.keyword}={suggested:g}` (between {low:g} and {high:g} for {label})",
        )


@dataclass
class DefaultRate:
    """An optimizer left at its default rate: where to report it, how to name it, and the keyword that would set it."""

    call: Call
    node: cst.CSTNode
    optimizer: str  # the kind knowledge.lr_range takes: "adamw"
    rate: float
    what: str
    keyword: str


def outside(rate: float, low: float, high: float) -> float | None:
    """How many times `rate` lies outside `low`..`high`, where that is more than `NEAR` times; None otherwise."""
    factor = rate / high if rate > high else low / rate
    return factor if factor > NEAR * (1 + 1e-9) else None


def one_step_demo(facts: Facts) -> bool:
    """Every backward pass of the file runs once, at module level and outside any loop, and nothing else trains
    (no Trainer, no keras `fit`): a demonstration of one optimizer step, not a training run."""
    return bool(facts.backward_calls) and not facts.trainers and not facts.fit_calls and all(
        not c.loops and c.function is None for c in facts.backward_calls)


def default_rate_sites(facts: Facts, version: tuple[int, ...]):
    """Every Adam-family optimizer the file trains with at its default rate (no rate keyword, no positional rate, no
    `*args`/`**kwargs`), unless something else sets the rate: a store to `...["lr"]`, or a scheduler that sets it.
    A torch optimizer counts where it is built over the model's parameters; a Keras one where it is what `compile`
    of the transformer gets (by name, or built there or in a name bound once), on a target that still has TF models."""
    if any(store.key == "lr" for store in facts.stores) or facts.calls_to(*RATE_SETTING_SCHEDULERS):
        return
    seen: set[int] = set()
    for call in facts.calls:
        q = call.qualname or ""
        last = q.rsplit(".", 1)[-1]
        if (q.startswith("torch.optim") and last in TORCH_DEFAULTS) or q == "transformers.AdamW":
            if not call.has_star_args and "lr" not in call.kwargs and len(call.positional) <= 1 and params_without_rates(facts, call) and trains_pretrained(facts, call) and not facts.replaced_before_use(call) and not not_taken(facts, call.node):
                yield DefaultRate(call, call.node, "adamw", TORCH_DEFAULTS[last], f"`{facts.text(call.node.func)}(...)`", "lr")
        elif call.method == "compile" and version < TF_MODELS_REMOVED and (arg := call.arg(0, "optimizer")) is not None and _compiles_transformer(facts, call) and not _keras_one_step(facts, call) and not not_taken(facts, call.node):
            found = _keras_default(facts, arg.value, call)
            if found is not None and id(found.node) not in seen:  # one optimizer compiled twice: one finding
                seen.add(id(found.node))
                yield found


def _compiles_transformer(facts: Facts, call: Call) -> bool:
    model = facts.kind(call.receiver, call.scope, call.order)
    return model is not None and model.kind == "model" and any(load.call is model.call for load in facts.model_loads)


def _keras_one_step(facts: Facts, compile_call: Call) -> bool:
    """The compiled model is trained only by `train_on_batch` calls run once each (module level, outside any loop), never
    `fit`: the course's one-batch demonstration of the API (Keras's `one_step_demo`), no run whose rate matters."""
    model = facts.kind(compile_call.receiver, compile_call.scope, compile_call.order)
    steps = [c for c in facts.calls if c.method in ("fit", "train_on_batch") and c.receiver is not None
             and (k := facts.kind(c.receiver, c.scope, c.order)) is not None and k.call is model.call]
    return bool(steps) and all(c.method == "train_on_batch" and not c.loops and c.function is None for c in steps)


def _keras_default(facts: Facts, expr: cst.BaseExpression, compile_call: Call) -> DefaultRate | None:
    """`optimizer="adam"`, `optimizer=Adam()`, or a name bound once to `Adam()`: Keras's Adam at its default rate."""
    name = facts.value(expr, compile_call.scope, order=compile_call.order)
    if isinstance(name, str):
        keras_name = {"adam": "Adam", "adamw": "AdamW"}.get(name.lower())
        return DefaultRate(compile_call, expr, "adamw", KERAS_DEFAULTS[keras_name], f'`optimizer="{name}"` (Keras `{keras_name}()`)', "learning_rate") if keras_name else None
    bound = facts.definition(expr, compile_call.scope, compile_call.order)
    call = facts.call_of(bound.value) if bound is not None and isinstance(bound.value, cst.Call) else None
    q = call.qualname or "" if call is not None else ""
    last = q.rsplit(".", 1)[-1]
    if call is None or not q.startswith(KERAS_ROOTS) or last not in KERAS_DEFAULTS or call.has_star_args or call.positional:
        return None
    if {"learning_rate", "lr"} & set(call.kwargs):  # tf.keras 2 also takes `lr=`
        return None
    return DefaultRate(call, call.node, "adamw", KERAS_DEFAULTS[last], f"`{facts.text(call.node.func)}()`", "learning_rate")


def peft_method(facts: Facts) -> str | None:
    """"lora" when the run's PEFT method is evidently LoRA/QLoRA (peft's `LoraConfig`, or loralib's adapters made the only
    trainable weights), "other" when it is another method or not shown (`PeftModel.from_pretrained` of a saved adapter,
    `get_peft_config`), None without PEFT."""
    configs = {c.qualname.rsplit(".", 1)[-1] for c in facts.calls if c.qualname and c.qualname.startswith("peft.") and c.qualname.endswith("Config")}
    if configs and configs <= LORA_CONFIGS and "LoraConfig" in configs:
        return "lora"
    if configs or uses_peft(facts):
        return "other"
    return "lora" if facts.calls_to(LORALIB_FREEZE) else None


def family_of(facts: Facts, load) -> str | None:
    """The learning-rate family of one model load: its checkpoint's (by size), else its class's base family."""
    info = facts.checkpoint_info(load)
    if info is not None and info.family is not None:
        return info.family
    return knowledge.family_for_model_type(knowledge.model_type_from_class_name(load.class_name.rsplit(".", 1)[-1]))


def model_type_of(loads) -> str | None:
    types = {knowledge.model_type_from_class_name(load.class_name.rsplit(".", 1)[-1]) for load in loads}
    return types.pop() if len(types) == 1 else None


def _models_of_args(facts: Facts, call: Call) -> frozenset[int] | None:
    """The models the Trainers given this TrainingArguments call train (None for an optimizer, or where not known)."""
    return trainer_models(facts, call) if any(c is call for c in facts.training_args) else None


def _optim_kind_of(facts: Facts, call: Call) -> str | None:
    """The optimizer kind one `TrainingArguments(optim=...)` call selects (its own keywords: a file may build several,
    the tutorial's bare `TrainingArguments("test_trainer")` before the real one); None for one without a published range."""
    adafactor = training_field(facts, call, "adafactor", False)
    if adafactor is True:
        return "adafactor"
    optim = training_field(facts, call, "optim", "adamw_torch")
    if adafactor is not False or not isinstance(optim, str):
        return None
    return "adafactor" if "adafactor" in optim else "adamw" if "adam" in optim else None


def rate_sites(facts: Facts):
    """(call, the arg that sets the initial rate, optimizer kind) for every place a rate takes effect."""
    if not any("optimizers" in t.kwargs for t in facts.trainers):  # `Trainer(optimizers=...)` ignores `learning_rate`
        for call in facts.training_args:
            kind = _optim_kind_of(facts, call) if "learning_rate" in call.kwargs else None
            if kind is not None and not not_taken(facts, call.node):
                yield call, call.kwargs["learning_rate"], kind
    for call in facts.calls:
        site = _optimizer_rate(facts, call) if call.qualname else None
        if site is not None and site[0] is not None and not facts.replaced_before_use(call) and not not_taken(facts, call.node) and not never_steps(facts, call):
            yield call, *site


def run_epochs(facts: Facts, call: Call) -> float | None:
    """How many epochs' worth of updates the run a rate site sets makes, where the file says: a TrainingArguments'
    `num_train_epochs` (3 by default) over its `gradient_accumulation_steps` (1), unless `max_steps` overrides the epochs;
    or a hand loop's `range(EPOCHS)` around the optimizer's steps."""
    if any(c is call for c in facts.training_args):
        fields = [training_field(facts, call, name, default) for name, default in (("max_steps", -1), ("num_train_epochs", 3.0), ("gradient_accumulation_steps", 1))]
        if not all(isinstance(f, (int, float)) and not isinstance(f, bool) for f in fields):
            return None
        max_steps, epochs, accumulation = fields
        if max_steps > 0 or epochs <= 0 or accumulation < 1:
            return None  # a step count replaces the epochs, and the dataset's size is not known
        return epochs / accumulation
    return epochs_of(facts, call)


def _optimizer_rate(facts: Facts, call: Call):
    """(the rate argument, optimizer kind) of an optimizer or schedule construction, or None."""
    q = call.qualname
    root, last = q.split(".", 1)[0], q.rsplit(".", 1)[-1]
    if (q.startswith("torch.optim") or root == "bitsandbytes") and last in ADAM_FAMILY or root == "transformers" and last == "AdamW":
        return (call.arg(1, "lr"), "adamw") if trains_pretrained(facts, call) else None
    if root == "transformers":
        if last == "Adafactor" and facts.kw_value(call, "relative_step", default=True) is False:
            return call.arg(1, "lr"), "adafactor"  # with relative steps Adafactor ignores `lr`
        if last == "AdamWeightDecay":
            return call.arg(0, "learning_rate"), "adamw"
        if last == "create_optimizer":
            return call.arg(0, "init_lr"), "adamw"
    if q.startswith(KERAS_ROOTS):
        if last in ADAM_FAMILY or last == "Adafactor":
            arg = call.arg(0, "learning_rate")
            if arg is not None and facts.kind(arg.value, call.scope, call.order) is None and keras_trains_pretrained(facts, call):
                return arg, "adafactor" if last == "Adafactor" else "adamw"
        if last in KERAS_SCHEDULES:
            return call.arg(0, "initial_learning_rate"), "adamw"
    return None
