"""BL106: padding every example to a fixed length where dynamic padding would do."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts, asks_for_tpu, fails_before_a_step, feeds_layout_model, inspected, is_label_call, longest_of_a_set, mapped_function, only_inspected, padding_at, tokenizer_load_of, unfed_map_function
from bertlint.rules import Context, Rule

# Back ends that want fixed shapes (each new shape is a recompilation, or the engine is built for one shape): static
# padding is right there. TPU/XLA (torch_xla, JAX/Flax, TF's TPUStrategy and jit_compile, accelerate's
# `DistributedType.XLA`/`.TPU`, SageMaker Training Compiler, which runs PyTorch/XLA), static-shape inference engines
# (TensorRT, ONNX Runtime, OpenVINO, Core ML, TF Lite; `torch.onnx.export` without `dynamic_axes`), and diffusion
# pipelines, whose denoiser is conditioned on text embeddings of the fixed length it was trained with (CLIP's 77).
XLA_IMPORTS = ("torch_xla", "jax", "flax")
STATIC_ENGINE_IMPORTS = ("tensorrt", "torch_tensorrt", "onnxruntime", "openvino", "coremltools", "tflite_runtime", "diffusers")
STATIC_ENGINE_MODULES = ("optimum.onnxruntime", "optimum.intel", "optimum.neuron", "optimum.habana")
XLA_CALLS = ("TPUStrategy", "TPUClusterResolver", "is_torch_xla_available", "is_torch_tpu_available", "is_tpu_available", "TrainingCompilerConfig")
XLA_DISTRIBUTED_TYPES = ("accelerate.DistributedType.XLA", "accelerate.DistributedType.TPU", "accelerate.utils.DistributedType.XLA", "accelerate.utils.DistributedType.TPU")
# Accelerate's examples import `DistributedType` to special-case XLA (`max_length = 128 if ... == DistributedType.XLA`):
# a file importing it is written to run on TPU too.
XLA_NAMES = ("accelerate.DistributedType", "accelerate.utils.DistributedType")
NEGLIGIBLE_LENGTH = 4  # labels padded to 2-3 tokens (a class word, "positive"): nothing worth a collator
LABEL_PADDING_COLLATORS = ("transformers.DataCollatorForSeq2Seq", "transformers.DataCollatorForTokenClassification", "transformers.DataCollatorForLanguageModeling")
DYNAMIC_PADDING = "tokenize without padding and pad each batch to its longest text with `DataCollatorWithPadding(tokenizer)`"
# `DataCollatorWithPadding` cannot pad a `labels` column (`ValueError: Unable to create tensor`): where the map function
# builds labels, the collators that pad them with -100 are the dynamic padding to recommend.
LABELS_PADDING = {
    "token-cls": "`DataCollatorForTokenClassification(tokenizer)`",
    None: "`DataCollatorForSeq2Seq(tokenizer, model=model)`",
}

class StaticPaddingToMax(Rule):
    code = "BL106"
    name = "static-padding-to-max"
    severity = "info"
    summary = '`padding="max_length"` in preprocessing (or without `max_length`): compute spent on padding'
    help = DYNAMIC_PADDING

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        static = [(call, pad) for call in facts.tokenizer_calls if (pad := padding_at(facts, call, ctx.version)).pads_to_max]
        if not static or _fixed_shapes_wanted(facts) or feeds_layout_model(facts):
            return  # fixed shapes wanted; a layout model's boxes (and word labels) padded to the same length as its ids
        # (a run that stops before its first step computes over no padding)
        feeds_training = bool(facts.trainers or facts.calls_to("torch.utils.data.DataLoader")) and not fails_before_a_step(facts)
        # a seq2seq model's labels padded to a fixed length where no collator pads labels (`DataCollatorWithPadding`
        # and `tokenizer.pad` leave them as they are): the fixed length is what lets them batch, not waste
        fixed_labels_needed = (
            bool(facts.model_loads)
            and {load.head for load in facts.model_loads} == {"seq2seq"}
            and not facts.calls_to(*LABEL_PADDING_COLLATORS)
        )
        for call, pad in static:
            if isinstance(pad.max_length, int) and pad.max_length <= NEGLIGIBLE_LENGTH or longest_of_a_set(facts, call) or inspected(facts, call.node) or only_inspected(facts, call):
                continue  # a few tokens of padding at most, or to the longest of a fixed label set; ids only decoded or compared
            anchor = facts.keyword_at(call, "padding" if facts.gives(call, "padding") else "pad_to_max_length")
            load = tokenizer_load_of(facts, call)
            if facts.gives(call, "padding") is True and pad.max_length is None and (load is None or load.method == "from_pretrained"):
                ctx.report(anchor, '`padding="max_length"` without `max_length` pads every example to the tokenizer\'s `model_max_length` (512 for BERT-style checkpoints), however short it is')
            elif feeds_training and (function := mapped_function(facts, call)) is not None and not unfed_map_function(facts, function) and not (fixed_labels_needed and is_label_call(facts, call)):
                ctx.report(
                    anchor,
                    "padding to `max_length` in the `.map` preprocessing pads every example to the full length before batching: "
                    "the model computes over the padding of every short text",
                    help=f"{_dynamic_padding(facts, call, function)} (keep `truncation=True, max_length=N`)",
                )


def _dynamic_padding(facts: Facts, call: Call, function: cst.FunctionDef | cst.Lambda) -> str:
    """What to recommend instead: `DataCollatorWithPadding`, or where the map function builds labels the collator that pads them."""
    builds_labels = "text_target" in call.kwargs or any(s.key == "labels" and s.function is function for s in facts.stores)
    if not builds_labels:
        return DYNAMIC_PADDING
    heads = {load.head for load in facts.model_loads}
    token_cls = heads == {"token-cls"}
    collator = LABELS_PADDING["token-cls"] if token_cls else LABELS_PADDING[None]
    help = f"tokenize without padding and pad each batch with {collator}, which pads the `labels` with -100 (`DataCollatorWithPadding` cannot pad labels)"
    if token_cls:
        return help
    return (f"{help}; the collator pads only ids, so drop the raw text columns (`remove_columns=` in the `.map`, or keep "
            "`remove_unused_columns=True`), and in `compute_metrics` replace -100 by `tokenizer.pad_token_id` before `batch_decode`")


def _fixed_shapes_wanted(facts: Facts) -> bool:
    if asks_for_tpu(facts):
        return True
    imports = facts.imports.values()
    if facts.imported(*XLA_IMPORTS, *STATIC_ENGINE_IMPORTS) or any(q.startswith(STATIC_ENGINE_MODULES) or q in XLA_NAMES for q in imports):
        return True
    for call in facts.calls:
        if call.qualname and call.qualname.rsplit(".", 1)[-1] in XLA_CALLS:
            return True
        if "tpu_num_cores" in call.kwargs or facts.kw_value(call, "jit_compile") is True:
            return True
        if call.qualname == "torch.onnx.export" and "dynamic_axes" not in call.kwargs and not call.has_double_star:
            return True
    return any(facts.qualname(node, scope) in XLA_DISTRIBUTED_TYPES for node, scope, _ in facts.attr_loads if node.attr.value in ("XLA", "TPU"))
