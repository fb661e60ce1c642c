"""BL501: a large model trained in full fp32."""

from __future__ import annotations

from bertlint.facts import asks_for_tpu, freezes_parameters, mixed_precision, run_anchor, trained_model, uses_peft
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
        known = trained_model(facts)
        if known is None or not facts.is_training or uses_peft(facts) or freezes_parameters(facts) or asks_for_tpu(facts):
            return  # a part frozen: what trains (a head?) is not the model; on a TPU, XLA already multiplies fp32 in bf16 and none of the GPU switches of the help apply
        _, info = known
        if info.params < LARGE or mixed_precision(facts, ctx.version) is not False:
            return
        ctx.report(
            run_anchor(facts, ("training_args", "trainer", "fit", "load")),
            f"`{info.id}` has {info.params / 1e6:.0f}M parameters and is trained in fp32: twice the activation memory and several times slower than bf16/fp16 mixed precision",
        )
