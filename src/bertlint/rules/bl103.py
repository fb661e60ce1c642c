"""BL103: ids built by hand with `tokenize()` + `convert_tokens_to_ids()` reach the model."""

from __future__ import annotations

from bertlint.facts import holds_tokenizer, model_input_ids, sources, tokens_from_tokenize
from bertlint.rules import Context, Rule


class ManualTokenizationSkipsSpecialTokens(Rule):
    code = "BL103"
    name = "manual-tokenization-skips-special-tokens"
    severity = "warning"
    summary = "Model inputs built with `tokenize()` + `convert_tokens_to_ids()`: no special tokens, truncation or mask"
    help = "encode with `tokenizer(text, truncation=True, max_length=N)`: it adds the special tokens, truncates, pads and returns the attention mask"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        converts = [c for c in facts.calls_by_short.get("convert_tokens_to_ids", ()) if holds_tokenizer(facts, c.receiver, c.scope, c.order)]
        if not converts:
            return
        functions = {c.function for c in converts if c.function is not None}  # a Dataset's `__getitem__`, a collate function
        reached = {id(node) for value, scope, order in model_input_ids(facts, functions) for node, _, _ in sources(facts, value, scope, order)}
        for call in converts:
            if id(call.node) in reached and tokens_from_tokenize(facts, call):
                ctx.report(
                    call.node,
                    "these ids come from `tokenize()` + `convert_tokens_to_ids()` and reach the model without `[CLS]`/`[SEP]`: "
                    "the inputs do not look like pre-training, nothing truncates them to the model's limit, and padding is left to hand-made code",
                )
