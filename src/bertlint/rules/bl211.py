"""BL211: the pad token is the EOS token and a causal-LM collator masks pad ids in the labels: every EOS is masked."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Facts, Scope, Store, dotted
from bertlint.rules import Context, Rule

# DataCollatorForLanguageModeling with mlm=False: `labels = batch["input_ids"].clone()` then
# `labels[labels == self.tokenizer.pad_token_id] = -100` (transformers data/data_collator.py, torch_call/numpy_call; the
# same in every 4.x and 5.x release).
COLLATOR = "transformers.DataCollatorForLanguageModeling"
EOS_ATTRIBUTES = {"pad_token": "eos_token", "pad_token_id": "eos_token_id"}
NOT_DATA_KEYWORDS = frozenset({"pad_token_id", "eos_token_id"})  # `generate(pad_token_id=tok.eos_token_id)`, configs


class EosAsPadMaskedInLabels(Rule):
    code = "BL211"
    name = "eos-as-pad-masked-in-labels"
    severity = "warning"
    summary = "`pad_token = eos_token` with `DataCollatorForLanguageModeling(mlm=False)`: every EOS in the labels becomes -100"
    help = 'give the tokenizer a distinct pad token (`tokenizer.add_special_tokens({"pad_token": "<pad>"})` and `model.resize_token_embeddings(len(tokenizer))`, or an unused token such as `unk_token`), or build the labels yourself and keep the final EOS'

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        collators = [c for c in facts.calls_to(COLLATOR) if facts.kw_value(c, "mlm", cli=False) is False and c.arg(0, "tokenizer") is not None]
        if not collators:
            return
        stores = [s for s in facts.stores if s.key in EOS_ATTRIBUTES and _eos_of_same(s)]
        for store in stores:
            if not any(_same_tokenizer(facts, store, c.arg(0, "tokenizer").value, c.scope, c.order) for c in collators):
                continue
            if not _eos_in_data(facts, stores):
                continue
            ctx.report(
                store.value,
                "the pad token is the EOS token and `DataCollatorForLanguageModeling(mlm=False)` sets every pad id in the labels "
                "to -100: every EOS is masked too, so the model is never trained to end its output and generates until "
                "`max_new_tokens`",
            )


def _eos_of_same(store: Store) -> bool:
    """`tok.pad_token = tok.eos_token` / `tok.pad_token_id = tok.eos_token_id` (the same object on both sides)."""
    value = store.value
    return (
        isinstance(store.target, cst.Attribute)
        and isinstance(value, cst.Attribute)
        and value.attr.value == EOS_ATTRIBUTES[store.key]
        and dotted(value.value) is not None
        and dotted(value.value) == dotted(store.target.value)
    )


def _same_tokenizer(facts: Facts, store: Store, passed: cst.BaseExpression, scope: Scope, order: int) -> bool:
    """The collator's tokenizer is the one whose pad token was set: the same load, or the same name."""
    assert isinstance(store.target, cst.Attribute)
    mine = facts.kind(store.target.value, store.scope, store.order)
    theirs = facts.kind(passed, scope, order)
    if mine is not None and theirs is not None:
        return mine.kind == theirs.kind == "tokenizer" and mine.call is theirs.call
    return dotted(passed) is not None and dotted(passed) == dotted(store.target.value)


def _eos_in_data(facts: Facts, stores: list[Store]) -> bool:
    """The file puts EOS tokens into its examples: it reads `eos_token`/`eos_token_id` other than to set the pad token or
    to pass it as a `pad_token_id=`/`eos_token_id=` argument (`text + tok.eos_token`, `ids + [tok.eos_token_id]`)."""
    setting = {id(s.value) for s in stores}
    for attr, _, _ in facts.attr_loads:
        if attr.attr.value not in ("eos_token", "eos_token_id") or id(attr) in setting:
            continue
        parent = facts.parent(attr)
        if isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value in NOT_DATA_KEYWORDS:
            continue
        return True
    return False
