"""BL211: the pad token is the EOS token and a causal-LM collator masks pad ids in the labels: every EOS is masked."""

from __future__ import annotations

import libcst as cst

from bertlint import knowledge
from bertlint.facts import Call, Facts, Scope, Store, dotted, eos_as_pad, pad_guarded, walk
from bertlint.rules import Context, Rule

# DataCollatorForLanguageModeling with mlm=False: `labels = batch["input_ids"].clone()` then
# `labels[labels == self.tokenizer.pad_token_id] = -100` (transformers data/data_collator.py, torch_call/numpy_call; the
# same in every 4.x and 5.x release).
COLLATOR = "transformers.DataCollatorForLanguageModeling"
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
            if facts.kw_value(c, "mlm", cli=False) is False and c.arg(0, "tokenizer") is not None and not _only_evaluates(facts, c) and not _only_inspected(facts, c)
        ]
        if not collators:
            return
        stores = eos_as_pad(facts)
        for store in stores:
            if not any(_same_tokenizer(facts, store, c.arg(0, "tokenizer").value, c.scope, c.order) for c in collators):
                continue
            if not _eos_in_data(facts, stores) or (pad_guarded(facts, store) and not _lacks_pad_token(facts, store)):
                continue  # `if tok.pad_token is None:` runs only for a checkpoint without one (Qwen2's has one)
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


def _lacks_pad_token(facts: Facts, store: Store) -> bool:
    """The tokenizer whose pad token is set loads without one: its checkpoint is known to (GPT-2, Llama, Mistral)."""
    assert isinstance(store.target, cst.Attribute)
    found = facts.kind(store.target.value, store.scope, store.order)
    load = found.call if found is not None and found.kind == "tokenizer" else None
    if load is None or load.method != "from_pretrained":
        return False
    return knowledge.tokenizer_lacks_pad_token(facts.arg_value(load, 0, "pretrained_model_name_or_path", cli=False))


def _only_evaluates(facts: Facts, collator: Call) -> bool:
    """The collator is handed only to trainers that are never trained (an `evaluate()`-only Trainer): the training
    batches come from another collator."""
    trainers = [t for t in facts.trainers if (arg := t.arg(-1, "data_collator")) is not None and _made_by(facts, arg.value, t, collator)]
    if not trainers:
        return False
    trained = {id(k.call) for c in facts.calls if c.method == "train" and (k := facts.kind(c.receiver, c.scope, c.order)) is not None and k.kind == "trainer"}
    return not any(id(t) in trained for t in trainers)


def _only_inspected(facts: Facts, collator: Call) -> bool:
    """The collator is bound to a name that is only ever called directly (`batch = collator(rows)`, looking at one
    batch), never handed on: no trainer, DataLoader `collate_fn=`, attribute or other name gets it, so no training
    batch comes from it."""
    names = [name for name, events in collator.scope.events.items() if any(e.value is collator.node and e.op == "assign" and e.index is None for e in events)]
    if len(names) != 1:
        return False
    name = names[0]
    if not any(isinstance(c.node.func, cst.Name) and c.node.func.value == name for c in facts.calls):
        return False
    passed = [arg.value for c in facts.calls for arg in c.node.args] + [c.receiver for c in facts.calls if c.receiver is not None]
    bound = [s.value for s in facts.stores] + [e.value for events in collator.scope.events.values() for e in events if e.value is not None and e.value is not collator.node]
    return not any(_handed_on(name, node) for node in (*passed, *bound))


def _handed_on(name: str, node: cst.CSTNode) -> bool:
    """`name` appears under `node` other than as the callee of a call (`name(...)`)."""
    callees = {id(n.func) for n in walk(node) if isinstance(n, cst.Call)}
    return any(isinstance(n, cst.Name) and n.value == name and id(n) not in callees for n in walk(node))


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
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.If, cst.IfExp)) or _in_call_to(facts, node, PRINTS):
        return False
    if isinstance(parent, cst.Assign) and any(isinstance(t.target, cst.Attribute) for t in parent.targets):
        return False  # `tok.eos_token = tok2.eos_token`, `model.config.eos_token_id = ...`: settings, not examples
    return True


PRINTS = frozenset({"print", "info", "debug", "warning", "log", "write", "echo", "set_description", "set_postfix"})


def _in_call_to(facts: Facts, node: cst.CSTNode, names: frozenset[str]) -> bool:
    """Is `node` an argument (at any depth) of a call to a function or method named in `names` (`print(f"...")`)?"""
    current = facts.parent(node)
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        if isinstance(current, cst.Call):
            func = current.func
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
            if name in names:
                return True
        current = facts.parent(current)
    return False
