"""BL505: a model loaded or cast to float16 and then fully fine-tuned: no fp32 master weights."""

from __future__ import annotations

from bertlint.facts import chained_half_models, half_trained_models, training_arg
from bertlint.rules import Context, Rule


class HalfPrecisionWeightsFullyTrained(Rule):
    code = "BL505"
    name = "half-precision-weights-fully-trained"
    severity = "error"
    summary = "A model whose weights are float16 is fully fine-tuned (every parameter, no adapter): no fp32 master weights"
    help = "load the weights in fp32 and train with autocast (`fp16=True`/`bf16=True`, `torch.autocast`), or train a LoRA adapter (peft) over the fp16 base"
    needs = ("torch", "transformers")

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for found in [*half_trained_models(facts), *chained_half_models(facts)]:
            by = found.trained_by
            trainer = by.qualname is not None and "Trainer" in by.qualname.rsplit(".", 1)[-1] or by.qualname is None
            how = (f"`{facts.text(by.node.func)}(...)` trains every parameter" if trainer
                   else f"`{facts.text(by.node.func)}` updates every one of its parameters")  # fmt: skip
            scaler = (" (and with `fp16=True` the Trainer's GradScaler stops at the first clip or step: "
                      "`ValueError: Attempting to unscale FP16 gradients.`)") if trainer and training_arg(facts, "fp16") is True else ""  # fmt: skip
            ctx.report(
                found.where,
                f"the model's weights are float16 and {how} in float16, with no fp32 master copy: updates smaller than a "
                "weight's float16 spacing are lost, Adam's `eps` (1e-8) rounds to 0 in float16 so a parameter with a zero gradient "
                f"gets 0/0 = NaN, and the loss turns NaN{scaler}",
            )
