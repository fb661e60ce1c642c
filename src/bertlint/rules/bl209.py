"""BL209: padding with the tokenizer of a checkpoint that has no pad token, with nothing setting one."""

from __future__ import annotations

import libcst as cst

from bertlint import knowledge
from bertlint.facts import Call, Facts, padding_at
from bertlint.rules import Context, Rule

# Collators that pad through `tokenizer.pad(...)`, whose `padding=True` default raises on a tokenizer without a pad
# token (transformers data/data_collator.py: DataCollatorWithPadding, DataCollatorForSeq2Seq, DataCollatorForTokenClassification
# call `pad_without_fast_tokenizer_warning(self.tokenizer, ...)`; DataCollatorForLanguageModeling does for dict examples).
PADDING_COLLATORS = (
    "transformers.DataCollatorWithPadding",
    "transformers.DataCollatorForSeq2Seq",
    "transformers.DataCollatorForTokenClassification",
    "transformers.DataCollatorForLanguageModeling",
)
PAD_ATTRIBUTES = frozenset({"pad_token", "pad_token_id"})
# transformers 4.x `TextDataset` (data/datasets/language_modeling.py; gone in 5.x) cuts the text into blocks of exactly
# `block_size` ids and returns each as a tensor: DataCollatorForLanguageModeling then collates plain tensors through
# `_torch_collate_batch`, which stacks equal lengths and only needs a pad token when the lengths differ or a
# `pad_to_multiple_of` does not divide them.
EQUAL_BLOCKS = "transformers.TextDataset"
ERROR = "ValueError: Asking to pad but the tokenizer does not have a padding token"  # tokenization_utils_base.py, all 4.x and 5.x


class MissingPadToken(Rule):
    code = "BL209"
    name = "missing-pad-token"
    severity = "error"
    fails_at_its_line = True
    summary = "Padding with the tokenizer of a checkpoint that has no pad token (GPT-2, Llama, Mistral) when nothing sets one"
    help = "set one after loading the tokenizer: `tokenizer.pad_token = tokenizer.eos_token` (or `tokenizer.add_special_tokens({'pad_token': '[PAD]'})` and `model.resize_token_embeddings(len(tokenizer))`)"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if _sets_pad_token(facts):
            return
        for call in facts.tokenizer_calls:
            pad = padding_at(facts, call, ctx.version)
            if pad.padding in (True, "longest") or (pad.pads_to_max and call.kwargs.get("max_length") is not None):
                node = call.kwargs.get("padding") or call.kwargs.get("pad_to_max_length") or call.node
                self._report(ctx, call, node, call.receiver if call.method else call.node.func, "padding here raises")
        for call in facts.calls:
            if call.method == "pad" and call.receiver is not None and facts.kw_value(call, "padding", default=True) is not False:
                self._report(ctx, call, call.node, call.receiver, "`tokenizer.pad` raises")
        blocks = bool(facts.calls_to(EQUAL_BLOCKS))
        for call in facts.calls_to(*PADDING_COLLATORS):
            if blocks and call.qualname.endswith(".DataCollatorForLanguageModeling") and "pad_to_multiple_of" not in call.kwargs:
                continue  # the examples may all be TextDataset blocks of one length: stacked, never padded (cannot tell)
            arg = call.arg(0, "tokenizer")
            if arg is not None and not call.has_star_args:
                self._report(ctx, call, call.node, arg.value, "this collator pads every batch with `tokenizer.pad`, which raises")

    def _report(self, ctx: Context, call: Call, node: cst.CSTNode, tokenizer: cst.BaseExpression | None, what: str) -> None:
        checkpoint = _checkpoint(ctx.facts, tokenizer, call)
        if checkpoint is None:
            return
        ctx.report(
            node,
            f"the `{checkpoint}` tokenizer has no pad token and nothing in this file sets one: {what} `{ERROR}`",
        )


def _checkpoint(facts: Facts, tokenizer: cst.BaseExpression | None, at: Call) -> str | None:
    """The checkpoint of the tokenizer `tokenizer` holds, when it is one known to load without a pad token."""
    found = facts.kind(tokenizer, at.scope, at.order)
    load = found.call if found is not None and found.kind == "tokenizer" else None
    if load is None or load.method != "from_pretrained" or load.has_double_star or PAD_ATTRIBUTES & set(load.kwargs):
        return None
    checkpoint = facts.arg_value(load, 0, "pretrained_model_name_or_path", cli=False)  # a command-line default may name another model
    return checkpoint if knowledge.tokenizer_lacks_pad_token(checkpoint) else None


def _sets_pad_token(facts: Facts) -> bool:
    """Anything in the file that may give a tokenizer a pad token: `x.pad_token = ...`, `x.pad_token_id = ...`,
    `setattr(x, "pad_token", ...)`, `add_special_tokens(...)` unless its literal dict names no pad token, a TRL trainer
    or `setup_chat_format` (they set one themselves)."""
    if any(store.key in PAD_ATTRIBUTES for store in facts.stores):
        return True
    for call in facts.calls:
        if (isinstance(call.node.func, cst.Name) and call.node.func.value == "setattr") or (call.qualname or "").startswith("trl."):
            return True
        if call.method == "add_special_tokens":
            arg = call.arg(0, "special_tokens_dict")
            value = facts.value(arg.value, call.scope, order=call.order) if arg is not None else None
            if not isinstance(value, dict) or PAD_ATTRIBUTES & set(value):
                return True
    return False
