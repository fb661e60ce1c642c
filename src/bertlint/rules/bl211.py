"""BL211: the pad token is the EOS token and a causal-LM collator masks pad ids in the labels: every EOS is masked."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts, Scope, Store, dotted, eos_as_pad, eos_pad_in_force, in_call_to, only_called_directly
from bertlint.rules import Context, Rule

# DataCollatorForLanguageModeling with mlm=False: `labels = batch["input_ids"].clone()` then
# `labels[labels == self.tokenizer.pad_token_id] = -100` (transformers data/data_collator.py, torch_call/numpy_call; the
# same in every 4.x and 5.x release).
COLLATOR = "transformers.DataCollatorForLanguageModeling"
PRINTS = frozenset({"print", "info", "debug", "warning", "log", "write", "echo", "set_description", "set_postfix"})  # calls that only show a value
NOT_DATA_KEYWORDS = frozenset({"pad_token_id", "eos_token_id"})  # `generate(pad_token_id=tok.eos_token_id)`, configs


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
            if facts.kw_value(c, "mlm", cli=False) is False and c.arg(0, "tokenizer") is not None and not _only_evaluates(facts, c) and not only_called_directly(facts, c)
        ]
        if not collators:
            return
        stores = eos_as_pad(facts)
        for store in eos_pad_in_force(facts):  # `if tok.pad_token is None:` runs only for a checkpoint without one
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


def _same_tokenizer(facts: Facts, store: Store, passed: cst.BaseExpression, scope: Scope, order: int) -> bool:
    """The collator's tokenizer is the one whose pad token was set: the same load, or the same name."""
    assert isinstance(store.target, cst.Attribute)
    mine = facts.kind(store.target.value, store.scope, store.order)
    theirs = facts.kind(passed, scope, order)
    if mine is not None and theirs is not None:
        return mine.kind == theirs.kind == "tokenizer" and mine.call is theirs.call
    return dotted(passed) is not None and dotted(passed) == dotted(store.target.value)


def _only_evaluates(facts: Facts, collator: Call) -> bool:
    """The collator is handed only to trainers that are never trained (an `evaluate()`-only Trainer): the training
    batches come from another collator."""
    trainers = [t for t in facts.trainers if (arg := t.arg(-1, "data_collator")) is not None and _made_by(facts, arg.value, t, collator)]
    if not trainers:
        return False
    trained = {id(k.call) for c in facts.calls if c.method == "train" and (k := facts.kind(c.receiver, c.scope, c.order)) is not None and k.kind == "trainer"}
    return not any(id(t) in trained for t in trainers)


def _made_by(facts: Facts, expr: cst.BaseExpression, at: Call, collator: Call) -> bool:
    found = facts.kind(expr, at.scope, at.order)
    return found is not None and found.call is collator or expr is collator.node


def _eos_in_data(facts: Facts, stores: list[Store]) -> bool:
    """The file puts EOS tokens into its examples: it formats them with a chat template (for training, not a
    generation prompt), or reads `eos_token`/`eos_token_id` into a text or a list of ids
    (`text + tok.eos_token`, `f"{text}{tok.eos_token}"`, `ids + [tok.eos_token_id]`), not only to set the pad token, to
    pass it as a `pad_token_id=`/`eos_token_id=` argument, to compare it, or to print it."""
    setting = {id(s.value) for s in stores}
    for call in facts.calls:  # a chat template ends each assistant turn with the chat model's EOS (`<|im_end|>`, `</s>`)
        if call.method == "apply_chat_template" and facts.kw_value(call, "add_generation_prompt", default=False) is False:
            return True
    for attr, _, _ in facts.attr_loads:
        if attr.attr.value not in ("eos_token", "eos_token_id") or id(attr) in setting:
            continue
        if _into_data(facts, attr):
            return True
    return False


def _into_data(facts: Facts, node: cst.CSTNode) -> bool:
    parent = facts.parent(node)
    if parent is None:  # an assignment's target (`tok.eos_token = "</s>"`) or its whole value: a setting, not an example
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value in NOT_DATA_KEYWORDS:
        return False
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.If, cst.IfExp)) or in_call_to(facts, node, PRINTS):
        return False
    if isinstance(parent, cst.Assign) and any(isinstance(t.target, cst.Attribute) for t in parent.targets):
        return False  # `tok.eos_token = tok2.eos_token`, `model.config.eos_token_id = ...`: settings, not examples
    return True
