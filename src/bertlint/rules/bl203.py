"""BL203: generation labels copied from padded ids, pad tokens and all: the loss learns to predict padding."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import UNKNOWN, Call, Facts, Scope, padding_at, walk
from bertlint.rules import Context, Rule

GENERATIVE_HEADS = frozenset({"seq2seq", "causal-lm"})
MASKING_COLLATORS = ("transformers.DataCollatorForSeq2Seq", "transformers.DataCollatorForLanguageModeling", "trl.DataCollatorForCompletionOnlyLM")
COPY_METHODS = frozenset({"copy", "clone", "detach"})
COPY_FUNCTIONS = ("builtins.list", "copy.copy", "copy.deepcopy")
IGNORE_INDEX = 100  # written `-100`: the index the loss skips


class PadTokensInLabels(Rule):
    code = "BL203"
    name = "pad-tokens-in-labels"
    severity = "warning"
    summary = "Seq2seq or causal-LM labels copied from padded ids without masking the pad tokens with -100"
    help = "replace pad ids with -100 (`[t if t != tokenizer.pad_token_id else -100 for t in ids]`), or let `DataCollatorForSeq2Seq` / `DataCollatorForLanguageModeling(mlm=False)` build the labels"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        heads = {load.head for load in facts.model_loads}
        if not heads or not heads <= GENERATIVE_HEADS or _pads_masked(facts):
            return
        found = []
        for store in facts.stores:
            if store.key == "labels" and isinstance(store.target, cst.Subscript):
                found.append((store.value, _padded(ctx, store.value, store.scope, store.order)))
        for call in facts.calls:
            if "labels" in call.kwargs:
                found.append((call.kwargs["labels"].value, _padded(ctx, call.kwargs["labels"].value, call.scope, call.order)))
        for call in facts.tokenizer_calls:
            if "text_target" in call.kwargs and call.arg(0, "text") is not None:  # with inputs, "labels" holds the padded target ids
                found.append((call.kwargs["text_target"], _padding_of(ctx, call)))
        found = [(node, why) for node, why in found if why is not None]
        if not found or _masks_with_ignore_index(facts):
            return
        for node, why in found:
            ctx.report(node, f"labels are copied from ids padded with {why} and the pad ids are not replaced with -100: the loss also trains the model to predict [PAD], and padding dilutes the reported loss")


def _pads_masked(facts: Facts) -> bool:
    """A collator that sets pad labels to -100, a TRL trainer (it builds its own labels), or a loss that ignores the pad id."""
    if facts.calls_to(*MASKING_COLLATORS):
        return True
    return any((t.qualname or "").startswith("trl.") for t in facts.trainers) or any("ignore_index" in c.kwargs for c in facts.calls)


def _masks_with_ignore_index(facts: Facts) -> bool:
    """`-100` written anywhere: the script masks some labels itself (only looked for once a finding is at stake)."""
    return any(
        isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer) and node.expression.evaluated_value == IGNORE_INDEX
        for node in walk(facts.module)
    )


def _padded(ctx: Context, expr: cst.BaseExpression, scope: Scope, order: int) -> str | None:
    """How `expr` is padded when it holds (a copy of) a padding tokenizer call's `input_ids`."""
    facts = ctx.facts
    while isinstance(expr, cst.Call):
        call = facts.call_of(expr)
        if call is not None and call.method in COPY_METHODS and call.qualname is None and not call.node.args:
            expr = call.receiver
        elif call is not None and call.qualname in COPY_FUNCTIONS and len(call.positional) == 1:
            expr = call.positional[0].value
        else:
            break
    ids = facts.kind(expr, scope, order)
    if ids is None or ids.kind != "ids" or ids.detail != "input_ids" or ids.parent is None or ids.parent.kind != "encoding" or ids.call is None:
        return None
    return _padding_of(ctx, ids.call)


def _padding_of(ctx: Context, call: Call) -> str | None:
    pad = padding_at(ctx.facts, call, ctx.version)
    if pad.pads_to_max:
        return '`padding="max_length"`'
    if pad.padding in (True, "longest") and (pad.batch is True or (pad.batch is UNKNOWN and _sees_batches(ctx.facts, call))):
        return '`padding="longest"`' if pad.padding == "longest" else "`padding=True`"
    return None


def _sees_batches(facts: Facts, call: Call) -> bool:
    """`call` runs in a function handed to `dataset.map(..., batched=True)` or as a `collate_fn`: it tokenizes many texts at once."""
    if call.function is None:
        return False
    name = call.function.name.value
    for user in facts.calls:
        fn = user.arg(0, "function") if user.method == "map" and facts.kw_value(user, "batched") is True else user.kwargs.get("collate_fn")
        if fn is not None and isinstance(fn.value, cst.Name) and fn.value.value == name:
            return True
    return False
