"""BL210: `generate` of a decoder-only model on prompts padded on the right: new tokens follow the pad tokens."""

from __future__ import annotations

from bertlint import knowledge
from bertlint.facts import Binding, Call, Facts, ModelLoad, padding_at, tokenizer_load_of
from bertlint.rules import Context, Replacement, Rule

CALL_PADDING_SIDE = (4, 45)  # `padding_side=` as a call-time argument: transformers#33385, first released in 4.45.0


class RightPaddingInBatchedGeneration(Rule):
    code = "BL210"
    name = "right-padding-in-batched-generation"
    severity = "warning"
    summary = "`generate` of a decoder-only model on prompts the tokenizer padded on the right"
    help = 'pad prompts on the left for generation: `tokenizer.padding_side = "left"` before encoding them (or `padding_side="left"` in the call, 4.45+)'
    fix = "unsafe"
    fix_title = 'add `padding_side="left"` to the tokenizer call'

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        sides = {facts.value(store.value, store.scope, order=store.order) for store in facts.stores if store.key == "padding_side"}
        if sides - {"right"}:
            return  # something may set it to "left"
        reported: set[int] = set()
        for call in facts.calls:
            if call.method != "generate" or not _decoder_only(facts, call):
                continue
            encode = prompt_encoding(facts, call)
            if encode is None or id(encode.node) in reported or not _pads(ctx, encode):
                continue
            side = _padding_side(facts, encode, explicit_right=bool(sides))
            if side is None:
                continue
            reported.add(id(encode.node))
            padding = encode.kwargs.get("padding") or encode.kwargs.get("pad_to_max_length")
            fix = [Replacement(padding, ', padding_side="left"', after=True)] if padding is not None and ctx.version >= CALL_PADDING_SIDE and "padding_side" not in encode.kwargs else None
            ctx.report(
                padding or encode.node,
                f"these prompts are padded on the right ({side}) and then continued by `generate` of a decoder-only model: the "
                "new tokens are appended after the pad tokens, so the shorter prompts are continued from padding and come back "
                "degraded or empty",
                fix=fix,
            )


def generated_load(facts: Facts, call: Call) -> ModelLoad | None:
    """The load of the model whose `generate` this is (through PEFT and other wrappers)."""
    found = facts.kind(call.receiver, call.scope, call.order)
    while found is not None and found.kind == "model" and found.parent is not None:  # PEFT and other wrappers
        found = found.parent
    return next((load for load in facts.model_loads if found is not None and found.kind == "model" and load.call is found.call), None)


def _decoder_only(facts: Facts, call: Call) -> bool:
    """`generate` runs on a model loaded as a causal LM, or from a checkpoint known to be decoder-only."""
    load = generated_load(facts, call)
    if load is None:
        return False
    info = facts.checkpoint_info(load)
    if info is not None:
        return info.architecture == "decoder"
    return load.head == "causal-lm"


def prompt_encoding(facts: Facts, call: Call) -> Call | None:
    """The tokenizer call whose ids `generate` receives: `**enc`, `input_ids=enc["input_ids"]`, `enc.input_ids`."""
    found: list[Binding] = []
    for arg in call.node.args:
        if arg.star == "**" or (arg.star == "" and (arg.keyword is None or arg.keyword.value in ("input_ids", "inputs"))):
            binding = facts.kind(arg.value, call.scope, call.order)
            if binding is not None and (binding.kind == "encoding" or (binding.kind == "ids" and binding.detail == "input_ids" and binding.parent is not None)):
                found.append(binding)
            if arg.keyword is None and arg.star == "":
                break  # only the first positional argument holds the prompts
    tokenizer_calls = {id(c.node): c for c in facts.tokenizer_calls}
    calls = {id(b.call.node): b.call for b in found if b.call is not None and id(b.call.node) in tokenizer_calls}
    return next(iter(calls.values())) if len(calls) == 1 else None


def _pads(ctx: Context, encode: Call) -> bool:
    """The call pads: several prompts to the longest, or any prompt to a fixed length."""
    pad = padding_at(ctx.facts, encode, ctx.version)
    return pad.pads_batch or (pad.pads_to_max and encode.kwargs.get("max_length") is not None)


def _padding_side(facts: Facts, encode: Call, explicit_right: bool) -> str | None:
    """How we know the prompts are padded on the right (a phrase for the message), or None when they may not be."""
    load = tokenizer_load_of(facts, encode)
    for where, call in (("`padding_side=\"right\"` in the call", encode), ("`padding_side=\"right\"` at load", load)):
        if call is not None and "padding_side" in call.kwargs:
            return where if facts.kw_value(call, "padding_side") == "right" else None
    if explicit_right:
        return '`padding_side = "right"`'
    if load is None or load.method != "from_pretrained" or load.has_double_star:
        return None
    checkpoint = facts.arg_value(load, 0, "pretrained_model_name_or_path", cli=False)
    return f"the `{checkpoint}` tokenizer's default" if knowledge.tokenizer_pads_right(checkpoint) else None
