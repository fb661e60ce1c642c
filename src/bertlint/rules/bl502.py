"""BL502: the static lower bound of training memory already exceeds the GPU budget."""

from __future__ import annotations

from bertlint import knowledge
from bertlint.facts import UNKNOWN, Facts, mixed_precision, padding_of, run_anchor, trained_model, training_arg, uses_peft
from bertlint.rules import Context, Rule

GiB = 2**30


class TrainingMemoryOverBudget(Rule):
    code = "BL502"
    name = "training-memory-over-budget"
    severity = "warning"
    summary = "The estimated peak training memory (a lower bound) exceeds the GPU budget"
    help = "lower the batch size and add gradient accumulation, or enable gradient checkpointing"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        known = trained_model(facts)
        if known is None or not facts.is_training:
            return
        load, info = known
        batch = _batch_size(facts)
        seq = _sequence_length(facts, info)
        if not isinstance(batch, int) or not isinstance(seq, int) or batch <= 0 or seq <= 0:
            return
        accum = training_arg(facts, "gradient_accumulation_steps", 1)
        checkpointing = training_arg(facts, "gradient_checkpointing", False) is True or any(c.method == "gradient_checkpointing_enable" for c in facts.calls)
        if not isinstance(accum, int) or accum < 1:
            return
        precision = "amp" if mixed_precision(facts) else "fp32"
        optimizer = _optimizer(facts)
        attention = "eager" if any(facts.kw_value(l.call, "attn_implementation", default=None) == "eager" for l in facts.model_loads) else "sdpa"
        kwargs = dict(
            seq_len=seq, precision=precision, optimizer=optimizer, attention=attention,
            gradient_checkpointing=checkpointing, lm_head=load.head in ("causal-lm", "masked-lm", "seq2seq"),
            trainable_params=_trainable(facts, info),
        )
        # Accumulation splits the activations of a batch over its steps (the catalogue's conservative reading).
        estimate = knowledge.estimate_training_memory(info, batch_size=max(1, batch // accum), **kwargs)
        budget = ctx.settings.gpu_memory_gib * GiB
        if estimate.total <= budget:
            return
        fits = knowledge.max_fitting_batch(info, budget, **kwargs)
        if fits >= 1:
            steps = next(s for s in range(1, batch + 1) if batch % s == 0 and batch // s <= fits)
            advice = f"per-device batch {batch // steps} with `gradient_accumulation_steps={steps * accum}` keeps the effective batch of {batch * accum} and fits"
        else:
            advice = "even batch 1 does not fit: use gradient checkpointing, mixed precision, a smaller model or PEFT"
        anchor = run_anchor(facts, ("training_args", "trainer", "fit", "load"))
        ctx.report(
            anchor,
            f"training `{info.id}` at batch {batch} × {seq} tokens needs at least {estimate.total / GiB:.1f} GiB ({estimate.breakdown()}), over the {ctx.settings.gpu_memory_gib:g} GiB budget",
            help=advice,
        )


def _batch_size(facts: Facts):
    if facts.training_args:
        return training_arg(facts, "per_device_train_batch_size", 8)
    loaders = [c for c in facts.calls if c.short == "DataLoader" and c.qualname and c.qualname.startswith("torch")]
    values = {facts.arg_value(c, 1, "batch_size", default=1) for c in loaders if c.kwargs.get("shuffle") is not None or len(loaders) == 1}
    if len(values) == 1:
        return values.pop()
    if facts.fit_calls:
        return facts.kw_value(facts.fit_calls[0], "batch_size", default=32)
    return UNKNOWN


def _sequence_length(facts: Facts, info):
    lengths = set()
    for call in facts.tokenizer_calls:
        pad = padding_of(facts, call)
        if pad.max_length is None and pad.pads_to_max:
            lengths.add(info.usable_max_tokens or UNKNOWN)
        elif isinstance(pad.max_length, int) and (pad.pads_to_max or pad.truncation not in (None, False)):
            lengths.add(pad.max_length)
        elif pad.max_length is not None:
            lengths.add(UNKNOWN)
    if not lengths or UNKNOWN in lengths:
        return UNKNOWN
    return max(lengths)  # the peak comes from the longest sequences


def _optimizer(facts: Facts) -> str:
    optim = training_arg(facts, "optim", "adamw_torch")
    if isinstance(optim, str):
        if "adafactor" in optim:
            return "adafactor"
        if "8bit" in optim:
            return "adamw_8bit"
        if "sgd" in optim:
            return "sgd_momentum"
    return "adamw"


def _trainable(facts: Facts, info):
    """PEFT trains a small, unknown share of the weights: count none of them (the bound stays a lower bound)."""
    return 0 if uses_peft(facts) else None
