"""BL502: the static lower bound of training memory already exceeds the GPU budget."""

from __future__ import annotations

from dataclasses import dataclass

from bertlint import knowledge
from bertlint.facts import UNKNOWN, Facts, ModelLoad, amp_enabled, chunk_length, fails_before_a_step, freezes_parameters, gpu_card, is_label_call, padding_at, run_anchor, steps_every_n, trained_model, training_arg, uses_peft, weight_dtype
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
        run = training_run(facts, ctx.version) if facts.is_training and not fails_before_a_step(facts) else None
        if run is None:
            return
        info, batch, seq, accum, checkpointing = run.info, run.batch, run.seq, run.accum, run.checkpointing
        estimate, kwargs = min(((run.estimate(precision, run.micro), run.options(precision)) for precision in run.precisions), key=lambda pair: pair[0].total)
        gib, why = ctx.settings.gpu_memory_gib, None
        card = gpu_card(facts) if not ctx.settings.gpu_memory_set else None
        if card is not None:
            gib, why = card  # the default budget assumes a 16 GB card: the file shows which it runs on
        budget = gib * GiB
        if estimate.total <= budget:
            return
        fits = knowledge.max_fitting_batch(info, budget, **kwargs)
        if fits >= 1:
            steps = next(s for s in range(1, batch + 1) if batch % s == 0 and batch // s <= fits)
            how = f"`gradient_accumulation_steps={steps * accum}`" if facts.training_args else f"{steps * accum} gradient accumulation steps"
            advice, help = f"per-device batch {batch // steps} with {how} keeps the effective batch of {batch * accum} and fits", None
        else:
            eight_bit = '`optim="adamw_bnb_8bit"`' if facts.training_args else "`bitsandbytes.optim.AdamW8bit`"
            remedies = [name.format(eight_bit=eight_bit) for name, change in _REMEDIES
                        if any(kwargs[k] != v for k, v in change.items()) and knowledge.max_fitting_batch(info, budget, **{**kwargs, **change}) >= 1]
            help = f"use {', '.join(remedies + ['a smaller model'])} or a larger GPU"
            advice = f"even batch 1 does not fit ({'what would: ' + ', '.join(remedies) if remedies else 'no single change of precision, optimizer or checkpointing makes it fit'})"
        ctx.report(
            run_anchor(facts, ("training_args", "trainer", "fit", "load")),
            f"training `{info.id}` at batch {batch} × {f'{seq} tokens' if run.seq_known else 'any number of tokens'}{f' ({run.target} label tokens)' if run.target else ''}"
            f"{f' with {accum} accumulation steps' if accum > 1 else ''} needs at least {estimate.total / GiB:.1f} GiB "
            f"({estimate.breakdown()}), over the {gib:g} GiB budget{f' ({why})' if why else ''}; {advice}",
            help=help,
        )


# What would make batch 1 fit, each alone: offered only where the estimate says it does (weights, gradients and AdamW states
# dominate a full fine-tune of a 1B+ model: checkpointing or autocast, which shrink activations, do not help there).
_REMEDIES = (
    ("gradient checkpointing", {"gradient_checkpointing": True}),
    ("bf16 mixed precision", {"precision": "amp"}),
    ("PEFT/LoRA", {"trainable_params": 0}),
    ("an 8-bit optimizer ({eight_bit})", {"optimizer": "adamw_8bit"}),
)


@dataclass(frozen=True)
class TrainingRun:
    """What the memory estimate of one training run needs, lifted once for the rule and its `--verify` probe."""

    load: ModelLoad
    info: knowledge.ModelInfo
    batch: int
    seq: int
    accum: int
    precisions: list[str]
    checkpointing: bool
    attention: str
    optimizer: str
    peft: bool
    target: int | None = None  # an encoder-decoder's label length, when its labels are tokenized apart
    seq_known: bool = True  # False: no length is known and `seq` is 1, the bound of weights, gradients and optimizer states alone

    @property
    def micro(self) -> int:
        """Accumulation splits the activations of a batch over its steps (the catalogue's conservative reading)."""
        return max(1, self.batch // self.accum)

    def options(self, precision: str) -> dict:
        return dict(seq_len=self.seq, precision=precision, optimizer=self.optimizer, attention=self.attention, gradient_checkpointing=self.checkpointing,
                    lm_head=self.load.head in ("causal-lm", "masked-lm", "seq2seq"), trainable_params=0 if self.peft else None, target_len=self.target)  # fmt: skip

    def estimate(self, precision: str, batch: int) -> knowledge.MemoryEstimate:
        return knowledge.estimate_training_memory(self.info, batch_size=batch, **self.options(precision))


def training_run(facts: Facts, version: tuple[int, ...]) -> TrainingRun | None:
    """The trained checkpoint with its batch, sequence length, accumulation and precisions; None when any is not
    known statically (or the weights are quantized, which the estimator does not model)."""
    known = trained_model(facts)
    if known is None:
        return None
    load, info = known
    if _sharded(facts) or freezes_parameters(facts):
        return None  # a part frozen: its gradients, optimizer states and (below the trained part) activations are not kept
    batch, (seq, target), accum = _batch_size(facts), _sequence_lengths(facts, load, info, version), _accumulation(facts)
    precisions = _precisions(facts, version)
    chunk = chunk_length(facts) if target is None else UNKNOWN
    seq = chunk if chunk is not UNKNOWN else seq  # a map function that cuts the token stream into blocks sets the length the model sees
    seq_known = seq is not UNKNOWN
    if not seq_known and target is None:
        seq = 1  # still a lower bound: a 7B model's full fine-tuning exceeds 16 GiB at any length
    sizes = (batch, seq, accum) + ((target,) if target is not None else ())
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in sizes) or not precisions:
        return None
    checkpointing = training_arg(facts, "gradient_checkpointing", False) is True or any(c.method == "gradient_checkpointing_enable" for c in facts.calls)
    attention = "eager" if any(facts.kw_value(l.call, "attn_implementation", default=None) == "eager" for l in facts.model_loads) else "sdpa"
    return TrainingRun(load, info, batch, seq, accum, precisions, checkpointing, attention, _optimizer(facts), uses_peft(facts), target, seq_known)


def _sharded(facts: Facts) -> bool:
    """TrainingArguments that hand the run to DeepSpeed (`deepspeed=`) or FSDP (`fsdp=`), or may (a value
    not known): ZeRO and FSDP shard the weights, gradients and optimizer states over the GPUs or offload
    them to the CPU, which a one-GPU bound does not model."""
    return bool(facts.training_args) and any(training_arg(facts, key, None) not in (None, False, "") for key in ("deepspeed", "fsdp"))


def _precisions(facts: Facts, version: tuple[int, ...]) -> list[str]:
    """The precision modes the run may train in; the estimate takes the cheapest. Empty for quantized
    weights, which the estimator does not model."""
    weights = weight_dtype(facts, version)
    if weights == "quantized":
        return []
    if weights == "half":
        return ["bf16_pure"]
    amp = amp_enabled(facts)
    modes = {True: ["amp"], False: ["fp32"], None: ["amp", "fp32"]}[amp]
    return modes + (["bf16_pure"] if weights is UNKNOWN else [])


def _batch_size(facts: Facts):
    """The per-step batch: TrainingArguments, the training DataLoader, or an explicit keras `fit(batch_size=)`."""
    if facts.training_args:
        return training_arg(facts, "per_device_train_batch_size", 8)
    loaders = [c for c in facts.calls if c.short == "DataLoader" and c.qualname and c.qualname.startswith("torch")]
    train = [c for c in loaders if facts.kw_value(c, "shuffle", default=False) is True or "sampler" in c.kwargs] or loaders[:1] * (len(loaders) == 1)
    values = {facts.arg_value(c, 1, "batch_size", default=1) for c in train}
    if len(values) == 1:
        return values.pop()
    if facts.fit_calls:
        return facts.kw_value(facts.fit_calls[0], "batch_size")  # without it a dataset's own batching decides
    return UNKNOWN


def _accumulation(facts: Facts):
    """Gradient accumulation steps: TrainingArguments, `Accelerator(...)`, or UNKNOWN for a hand-written loop whose
    optimizer steps only on some iterations."""
    if facts.training_args:
        return training_arg(facts, "gradient_accumulation_steps", 1)
    accelerators = [c for c in facts.calls if c.qualname and c.qualname.startswith("accelerate") and c.short == "Accelerator"]
    if accelerators:
        return facts.kw_value(accelerators[0], "gradient_accumulation_steps", default=1)
    return UNKNOWN if steps_every_n(facts) else 1


def _sequence_lengths(facts: Facts, load: ModelLoad, info, version: tuple[int, ...]):
    """The source length and, for an encoder-decoder whose labels are tokenized apart, the label length its decoder
    runs at (None when not split out); UNKNOWN when a length cannot be known."""
    label_calls = [c for c in facts.tokenizer_calls if is_label_call(facts, c)] if "seq2seq" in (info.architecture, load.head) else []
    source = _longest(facts, [c for c in facts.tokenizer_calls if c not in label_calls], info, version)
    if not label_calls:
        return source, None
    return source, _longest(facts, label_calls, info, version)


def _longest(facts: Facts, calls: list, info, version: tuple[int, ...]):
    lengths = set()
    for call in calls:
        pad = padding_at(facts, call, version)
        if pad.max_length is None and pad.pads_to_max:
            lengths.add(info.usable_max_tokens or UNKNOWN)
        elif isinstance(pad.max_length, int) and pad.pads_to_max:
            lengths.add(pad.max_length)
        elif pad.max_length is not None:
            lengths.add(UNKNOWN)  # dynamic padding: `max_length` only caps the batch; how long batches get is the data's, unknown
    if not lengths or UNKNOWN in lengths:
        return UNKNOWN
    return max(lengths)  # every example of these calls is padded to its length


def _optimizer(facts: Facts) -> str:
    optim = training_arg(facts, "optim", "adamw_torch")
    if isinstance(optim, str):
        if "adafactor" in optim:
            return "adafactor"
        if "8bit" in optim:
            return "adamw_8bit"
        if "sgd" in optim:
            return "sgd_momentum"
    if any((c.qualname or "").startswith("bitsandbytes") and "8bit" in c.short for c in facts.calls):
        return "adamw_8bit"  # built by hand and handed over (`Trainer(optimizers=(bnb.optim.Adam8bit(...), None))`): the cheaper states bound
    return "adamw"
