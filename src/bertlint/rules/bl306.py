"""BL306: training a T5-family model in float16: its activations overflow float16 and the loss turns to NaN."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from bertlint import knowledge
from bertlint.facts import Call, Facts, frozen_models
from bertlint.rules import Context, Rule

AUTOCASTS = ("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast")
LIGHTNING_TRAINERS = ("pytorch_lightning.Trainer", "lightning.Trainer", "lightning.pytorch.Trainer")
FP16_PRECISIONS = (16, "16", "16-mixed", "16-true")


class Fp16WithT5(Rule):
    code = "BL306"
    name = "fp16-with-t5"
    severity = "warning"
    summary = "A T5-family model whose activations overflow float16 (t5-large and up, Flan-T5, mT5, ByT5, UMT5, LongT5) trained in float16"
    help = 'train in bfloat16 where the hardware has it (`bf16=True`, `mixed_precision="bf16"`, `torch.autocast(..., dtype=torch.bfloat16)`; Ampere GPUs or newer, TPUs), else in fp32'

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if not facts.is_training:
            return
        models = trained_t5(facts)
        if not models:
            return
        model = next(iter(models.values()))
        for node, how in _float16(facts, models):
            ctx.report(
                node,
                f"{how} with the T5-family model `{model}`: T5 was pretrained with bfloat16 activations and its feed-forward "
                "outputs exceed float16's range (65504), so they overflow to inf and the loss turns to NaN a few steps in "
                "(transformers#5651, #11461, #23918)",
            )


def trained_t5(facts: Facts) -> dict[int, str]:
    """The T5-family models the script trains (loaded, not frozen whole, not a diffusion text encoder): the id of the call
    that loads each -> its checkpoint or class."""
    frozen = frozen_models(facts)
    found = {}
    for load in facts.model_loads:
        if id(load.call) in frozen or knowledge.conditioning_encoder(load.class_name, facts.kw_value(load.call, "subfolder", default=None)):
            continue
        checkpoint = facts.arg_value(load.call, 0, "pretrained_model_name_or_path", cli=False) if load.how == "pretrained" else None
        info = facts.checkpoint(checkpoint) if isinstance(checkpoint, str) else None
        if knowledge.t5_overflows_fp16(checkpoint=checkpoint, class_name=load.class_name, info=info):
            found[id(load.call)] = checkpoint if isinstance(checkpoint, str) else load.class_name.rsplit(".", 1)[-1]
    return found


def _float16(facts: Facts, models: dict[int, str]) -> Iterator[tuple[cst.CSTNode, str]]:
    """(where, how) for each place the run turns float16 on: for the whole run, or by casting one of `models`."""
    for call in facts.training_args:
        if facts.kw_value(call, "fp16", cli=False) is True:
            yield facts.keyword_at(call, "fp16"), "`fp16=True` (float16 mixed precision)"
    for call in facts.calls_to("accelerate.Accelerator"):
        if facts.kw_value(call, "mixed_precision", cli=False) == "fp16":
            yield facts.keyword_at(call, "mixed_precision"), '`mixed_precision="fp16"`'
    for call in facts.calls_to(*LIGHTNING_TRAINERS):
        if facts.kw_value(call, "precision", cli=False) in FP16_PRECISIONS:
            yield facts.keyword_at(call, "precision"), "Lightning's 16-bit precision (float16)"
    for call in facts.calls_to(*AUTOCASTS):
        if _autocasts_float16(facts, call):
            yield call.node, "float16 autocast"
    for call in facts.calls:
        if call.method in ("half", "to") and call.receiver is not None and _casts_model(facts, call, models):
            yield call.node, f"`.{call.method}(...)` casting the model's weights to float16" if call.method == "to" else "`.half()` (float16 weights)"


def _autocasts_float16(facts: Facts, call: Call) -> bool:
    """`torch.autocast("cuda")` and `torch.cuda.amp.autocast()` default to float16; `dtype=` says otherwise; on the CPU
    the default is bfloat16 (torch/amp/autocast_mode.py)."""
    if call.kwargs.get("enabled") is not None and facts.kw_value(call, "enabled", cli=False) is not True:
        return False
    dtype = call.kwargs.get("dtype") or (call.positional[1] if len(call.positional) > 1 else None)
    if dtype is not None:
        return _is_float16(facts, dtype.value, call)
    if (call.qualname or "").startswith("torch.cuda.amp"):
        return True
    return facts.arg_value(call, 0, "device_type", cli=False) == "cuda"


def _casts_model(facts: Facts, call: Call, models: dict[int, str]) -> bool:
    found = facts.kind(call.receiver, call.scope, call.order)
    while found is not None and found.kind == "model" and found.parent is not None:  # PEFT and other wrappers
        found = found.parent
    if found is None or found.kind != "model" or found.call is None or id(found.call) not in models:
        return False
    if call.method == "half":
        return not call.node.args
    return any(_is_float16(facts, arg.value, call) for arg in call.node.args if arg.keyword is None or arg.keyword.value == "dtype")


def _is_float16(facts: Facts, expr: cst.BaseExpression, call: Call) -> bool:
    qualname = facts.qualname(expr, call.scope)
    if qualname is not None:
        return qualname in ("torch.float16", "torch.half")
    return facts.value(expr, call.scope, order=call.order, cli=False) in ("float16", "fp16", "half")

