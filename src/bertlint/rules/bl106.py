"""BL106: padding every example to a fixed length where dynamic padding would do."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Facts, padding_at, tokenizer_load_of
from bertlint.rules import Context, Rule
from bertlint.rules.bl202 import is_label_call

# TPU/XLA runs want fixed shapes (each new shape is a recompilation): static padding is right there.
XLA_IMPORTS = ("torch_xla", "jax", "flax")
XLA_CALLS = ("TPUStrategy", "TPUClusterResolver")
LABEL_PADDING_COLLATORS = ("transformers.DataCollatorForSeq2Seq", "transformers.DataCollatorForTokenClassification", "transformers.DataCollatorForLanguageModeling")
DYNAMIC_PADDING = "tokenize without padding and pad each batch to its longest text with `DataCollatorWithPadding(tokenizer)`"


class StaticPaddingToMax(Rule):
    code = "BL106"
    name = "static-padding-to-max"
    severity = "info"
    summary = '`padding="max_length"` in preprocessing (or without `max_length`): compute spent on padding'
    help = DYNAMIC_PADDING

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        static = [(call, pad) for call in facts.tokenizer_calls if (pad := padding_at(facts, call, ctx.version)).pads_to_max]
        if not static or _fixed_shapes_wanted(facts):
            return
        feeds_training = bool(facts.trainers or facts.calls_to("torch.utils.data.DataLoader"))
        map_functions = _map_functions(facts)
        # a seq2seq model's labels padded to a fixed length where no collator pads labels (`DataCollatorWithPadding`
        # and `tokenizer.pad` leave them as they are): the fixed length is what lets them batch, not waste
        fixed_labels_needed = (
            bool(facts.model_loads)
            and {load.head for load in facts.model_loads} == {"seq2seq"}
            and not facts.calls_to(*LABEL_PADDING_COLLATORS)
        )
        for call, pad in static:
            anchor = call.kwargs.get("padding") or call.kwargs["pad_to_max_length"]
            load = tokenizer_load_of(facts, call)
            if "padding" in call.kwargs and pad.max_length is None and not call.has_double_star and (load is None or load.method == "from_pretrained"):
                ctx.report(anchor, '`padding="max_length"` without `max_length` pads every example to the tokenizer\'s `model_max_length` (512 for BERT-style checkpoints), however short it is')
            elif feeds_training and _enclosing_function(facts, call) in map_functions and not (fixed_labels_needed and is_label_call(facts, call)):
                ctx.report(
                    anchor,
                    "padding to `max_length` in the `.map` preprocessing pads every example to the full length before batching: "
                    "the model computes over the padding of every short text",
                    help=f"{DYNAMIC_PADDING} (keep `truncation=True, max_length=N`)",
                )


def _fixed_shapes_wanted(facts: Facts) -> bool:
    if facts.imported(*XLA_IMPORTS):
        return True
    for call in facts.calls:
        if call.qualname and call.qualname.rsplit(".", 1)[-1] in XLA_CALLS:
            return True
        if "tpu_num_cores" in call.kwargs or facts.kw_value(call, "jit_compile") is True:
            return True
    return False


def _map_functions(facts: Facts) -> set[int]:
    """ids of the functions and lambdas passed to `.map(...)`, directly, through `functools.partial`, or
    called by the lambda passed (`lambda rows: preprocess(rows, tokenizer, 128)`)."""
    out = set()
    for call in facts.calls_by_short.get("map", ()):
        arg = call.arg(0, "function")
        value = arg.value if arg is not None else None
        inner = facts.call_of(value) if isinstance(value, cst.Call) else None
        if inner is not None and inner.qualname == "functools.partial" and inner.positional:
            value = inner.positional[0].value
        if isinstance(value, cst.Lambda):
            out.add(id(value))
            value = value.body.func if isinstance(value.body, cst.Call) else None
        if isinstance(value, cst.Name):
            _, events = facts.binding_events(value.value, call.scope, call.order)
            out.update(id(e.value) for e in events if e.op == "def")
    return out


def _enclosing_function(facts: Facts, call) -> int | None:
    """id of the innermost lambda or def around a call."""
    node = facts.parent(call.node)
    while node is not None:
        if isinstance(node, cst.Lambda):
            return id(node)
        node = facts.parent(node)
    return id(call.function) if call.function is not None else None
