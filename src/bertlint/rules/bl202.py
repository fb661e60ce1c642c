"""BL202: labels tokenized to another length than the inputs they must align with."""

from __future__ import annotations

from bertlint.facts import Call, Facts, is_label_call, label_building_collators, padding_at
from bertlint.rules import Context, Rule

ALIGNED_HEADS = ("causal-lm", "token-cls", "masked-lm")


class InputLabelLengthMismatch(Rule):
    code = "BL202"
    name = "input-label-length-mismatch"
    severity = "error"
    summary = "Labels tokenized with another `max_length`/padding than the inputs of a model whose labels align with its inputs"
    help = "tokenize labels with the inputs' `max_length` and padding, or copy them from `input_ids`"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        heads = {load.head for load in facts.model_loads}
        if not heads or not heads <= set(ALIGNED_HEADS):
            return  # seq2seq (or unknown) models legitimately use other target lengths
        if label_building_collators(facts):
            return  # the collator replaces the dataset's labels with the batch's own input ids: the two never meet at the loss
        label_calls = [c for c in facts.tokenizer_calls if is_label_call(facts, c)]
        for label_call in label_calls:
            inputs = [c for c in facts.tokenizer_calls if c not in label_calls and c.function is label_call.function]
            shapes = {padded_shape(facts, c, ctx.version) for c in inputs}
            if len(shapes) != 1:
                continue
            input_shape = shapes.pop()
            label_shape = padded_shape(facts, label_call, ctx.version)
            if input_shape is None or label_shape is None or input_shape == label_shape:
                continue
            # on the keyword that differs: the padding mode, else the length
            keyword = "max_length" if input_shape[0] == label_shape[0] else next((k for k in ("padding", "pad_to_max_length") if k in label_call.kwargs), "max_length")
            anchor = label_call.kwargs.get(keyword) or label_call.node
            ctx.report(
                anchor,
                f"labels are tokenized to {_describe(label_shape)} but the inputs to {_describe(input_shape)}: for a {'/'.join(sorted(heads))} model the shapes differ at the loss",
            )


def padded_shape(facts: Facts, call: Call, version: tuple[int, ...]):
    """The fixed length a call pads every sequence to, or "dynamic"; None when it cannot be known."""
    pad = padding_at(facts, call, version)
    if pad.pads_to_max:
        return ("max_length", pad.max_length) if isinstance(pad.max_length, int) else None
    if pad.padding in (True, "longest"):
        return ("longest", pad.max_length) if isinstance(pad.max_length, int) or pad.max_length is None else None
    return None


def _describe(shape) -> str:
    kind, length = shape
    if kind == "max_length":
        return f"a fixed {length} tokens"
    return "the longest text in the batch" + (f" (cut at {length})" if length else "")
