"""BL211: the pad token is the EOS token and a causal-LM collator masks pad ids in the labels: every EOS is masked."""

from __future__ import annotations

from bertlint.facts import eos_in_data, eos_pad_in_force, only_called_directly, only_evaluated, same_tokenizer
from bertlint.rules import Context, Rule

# DataCollatorForLanguageModeling with mlm=False: `labels = batch["input_ids"].clone()` then
# `labels[labels == self.tokenizer.pad_token_id] = -100` (transformers data/data_collator.py, torch_call/numpy_call; the
# same in every 4.x and 5.x release).
COLLATOR = "transformers.DataCollatorForLanguageModeling"


class EosAsPadMaskedInLabels(Rule):
    code = "BL211"
    name = "eos-as-pad-masked-in-labels"
    severity = "warning"
    summary = "`pad_token = eos_token` with `DataCollatorForLanguageModeling(mlm=False)`: every EOS in the labels becomes -100"
    help = 'give the tokenizer a distinct pad token (`tokenizer.add_special_tokens({"pad_token": "<pad>"})` and `model.resize_token_embeddings(len(tokenizer))`, or an unused token such as `unk_token`), or build the labels yourself and keep the final EOS'

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        collators = [
            c for c in facts.calls_to(COLLATOR)
            if facts.kw_value(c, "mlm", cli=False) is False and c.arg(0, "tokenizer") is not None and not only_evaluated(facts, c) and not only_called_directly(facts, c)
        ]
        if not collators:
            return
        for store in eos_pad_in_force(facts):  # `if tok.pad_token is None:` runs only for a checkpoint without one
            if not any(same_tokenizer(facts, store, c.arg(0, "tokenizer").value, c.scope, c.order) for c in collators):
                continue
            if not eos_in_data(facts):
                continue
            ctx.report(
                store.value,
                "the pad token is the EOS token and `DataCollatorForLanguageModeling(mlm=False)` sets every pad id in the labels "
                "to -100: every EOS is masked too, so the model is never trained to end its output and generates until "
                "`max_new_tokens`",
            )
