"""BL501: a large model trained in full fp32."""

from __future__ import annotations

from bertlint import knowledge, versions
from bertlint.facts import asks_for_tpu, fails_before_a_step, freezes_parameters, lightning_spelling, mixed_precision, run_anchor, runs_on_cpu, runs_on_mps, trained_checkpoints, trains_on_a_handful, uses_peft
from bertlint.rules import Context, Rule

LARGE = 300_000_000


class LargeModelWithoutMixedPrecision(Rule):
    code = "BL501"
    name = "large-model-without-mixed-precision"
    severity = "warning"
    summary = "A model of 300M+ parameters trained with no mixed precision anywhere"
    help = "train in mixed precision: `bf16=True` (Ampere or newer) or `fp16=True` in TrainingArguments, or `torch.autocast`"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if not any((info := facts.checkpoint_info(load)) is not None and info.params >= LARGE for load in facts.model_loads):
            return  # no checkpoint of 300M+ loaded: no run of one can be found below (and what trains is not asked)
        runs = trained_checkpoints(facts)
        if not runs or not facts.is_training or fails_before_a_step(facts) or trains_on_a_handful(facts) or uses_peft(facts) or freezes_parameters(facts) or asks_for_tpu(facts) or runs_on_mps(facts) or runs_on_cpu(facts):
            return  # a part frozen: what trains (a head?) is not the model; on the CPU or Apple MPS the CUDA switches of the help do not apply; on a TPU, XLA already multiplies fp32 in bf16 and none of the GPU switches of the help apply
        if any(info.params < LARGE or mixed_precision(facts, ctx.version, load) is not False or versions.symbol_removed("tensorflow", load.class_name, ctx.version) for load, info in runs):
            return  # several checkpoints (one picked by a command-line value, or each trained in turn): every one large and in fp32, or no finding; a TF/Flax class the target no longer ships: the load raises (BL606) and nothing trains
        load, info = runs[0]
        t5 = knowledge.t5_overflows_fp16(checkpoint=info.id, class_name=load.class_name, info=info)  # fp16 overflows there (BL306): bf16 only
        ctx.report(
            run_anchor(facts, ("training_args", "trainer", "fit", "lightning")) or load.call.node,  # a hand loop's: the load of the model named
            f"`{info.id}` has {info.params / 1e6:.0f}M parameters and is trained in fp32: twice the activation memory and several times slower than "
            f"{'bf16' if t5 else 'bf16/fp16'} mixed precision",
            help=_help(t5, lightning=bool(facts.lightning_trainers) and not (facts.training_args or facts.trainers), spelling=lightning_spelling(facts),
                       keras=bool(facts.fit_calls) and not (facts.training_args or facts.trainers or facts.backward_calls or facts.lightning_trainers),
                       before_bf16=ctx.version < TRAINING_ARGS_BF16),
        )


def _help(t5: bool, lightning: bool, keras: bool, spelling: tuple[tuple[int, ...], str | None, str] | None = None, before_bf16: bool = False) -> str | None:
    if lightning:
        return _lightning_help(t5, spelling)
    if keras:
        return KERAS_T5_HELP if t5 else KERAS_HELP
    if before_bf16 and not t5:
        return BEFORE_BF16_HELP
    return T5_HELP if t5 else None


def _lightning_help(t5: bool, spelling: tuple[tuple[int, ...], str | None, str] | None) -> str:
    """Lightning's own switch as the target release spells it (`lightning_spelling`); both spellings where it is not known."""
    if spelling is None:
        return LIGHTNING_T5_HELP if t5 else LIGHTNING_HELP
    release, bf16, fp16 = spelling
    which = f"Lightning {release[0]}.x's" if release < (2, 0) else "Lightning's"
    bare = fp16.strip('"')  # "16-mixed" as said in prose
    if t5:
        return f"train in bf16 mixed precision with {which} `Trainer(precision={bf16})` (Ampere or newer); not {bare}, whose range T5's activations overflow" \
            if bf16 else T5_HELP
    if bf16 is None:
        return f"train in mixed precision with {which} `Trainer(precision={fp16})`"
    return f"train in mixed precision with {which} `Trainer(precision={bf16})` (Ampere or newer) or `precision={fp16}`"


# TrainingArguments' `bf16=` came in transformers 4.13.0 (training_args.py of the 4.12.0 and 4.13.0 wheels); `torch.autocast`
# in torch 1.10, `torch.cuda.amp.autocast` in 1.6 (and still there): a target before 4.13 is told the switches it has.
TRAINING_ARGS_BF16 = (4, 13)
BEFORE_BF16_HELP = "train in mixed precision: `fp16=True` in TrainingArguments (this transformers has no `bf16=`: it came in 4.13), or `torch.cuda.amp.autocast()` in a hand loop"
T5_HELP = "train in bf16 mixed precision: `bf16=True` in TrainingArguments or `torch.autocast(\"cuda\", dtype=torch.bfloat16)` (Ampere or newer); not fp16, whose range T5's activations overflow"
# Lightning's own switch (its `Trainer(precision=...)`: "16-mixed"/"bf16-mixed" in 2.x, 16/"bf16" in 1.x; facts/brain/steps.py)
LIGHTNING_HELP = 'train in mixed precision with Lightning\'s `Trainer(precision="bf16-mixed")` (Ampere or newer) or `precision="16-mixed"` (Lightning 1.x: `precision="bf16"` or `precision=16`)'
# keras's switch: a global dtype policy set before the model is built (tensorflow.org api_docs r2.5-r2.13, tf.keras.mixed_precision.set_global_policy; TF 2.3 had only experimental.set_policy; the policy names
# "mixed_float16"/"mixed_bfloat16" are the ones facts/training.py counts as mixed precision)
KERAS_HELP = 'train in mixed precision with keras: `tf.keras.mixed_precision.set_global_policy("mixed_float16")` (or `"mixed_bfloat16"` on Ampere or newer) before the model is loaded'
KERAS_T5_HELP = 'train in bf16 mixed precision with keras: `tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")` (Ampere or newer) before the model is loaded; not mixed_float16, whose range T5\'s activations overflow'
LIGHTNING_T5_HELP = 'train in bf16 mixed precision with Lightning\'s `Trainer(precision="bf16-mixed")` (Lightning 1.x: `precision="bf16"`; Ampere or newer); not 16, whose range T5\'s activations overflow'
