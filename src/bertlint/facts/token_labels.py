"""Token labels: where a script writes the ignore index into its labels and whether at the pads, the collators and
tokenizer calls that make labels, and label keys a dataset never hands on."""

from __future__ import annotations

import libcst as cst

from bertlint.facts.nodes import Call, ClassDef, Store, dotted, literal, walk
from bertlint.facts.uses import uses
from bertlint.facts.values import Values as Facts


# ---------------------------------------------------------------------------------------------
# the ignore index


IGNORE_INDEX = -100  # the label index the loss skips (CrossEntropyLoss's default `ignore_index`)


def ignore_index_markers(facts: Facts) -> list[cst.CSTNode]:
    """Where the file writes the ignore index: each literal `-100`, and each read of a name or attribute that holds it
    (`IGNORE_INDEX = -100`, a parameter `ignore_id=-100`, `self.ignore_id = ignore_id`: `x[x == pad] = self.ignore_id`,
    a config field `ignore_index: int = -100` read as `cfg.ignore_index`)."""
    nodes = list(walk(facts.module))
    literals = [n for n in nodes if _is_ignore_index(n)]
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, cst.Param) and node.default is not None and _is_ignore_index(node.default):
            names.add(node.name.value)
        elif isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None and _is_ignore_index(node.value):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            names.update(t.value for t in targets if isinstance(t, cst.Name))
    attributes = {s.key for s in facts.stores if isinstance(s.target, cst.Attribute) and (_is_ignore_index(s.value) or isinstance(s.value, cst.Name) and s.value.value in names)}
    attributes |= names  # a class attribute or a config field (`ignore_index: int = -100`) read as `self.X`, `args.X`
    held = [n for n in nodes if isinstance(n, cst.Name) and n.value in names or isinstance(n, cst.Attribute) and n.attr.value in attributes]
    declared = {id(p.name) for p in nodes if isinstance(p, cst.Param)} | {id(p.default) for p in nodes if isinstance(p, cst.Param)}
    return [n for n in literals + held if id(n) not in declared]  # a parameter's default writes nothing into the labels


def at_pad_positions(facts: Facts, marker: cst.CSTNode) -> bool:
    """The ignore index `marker` is written where the pads are: the statement that writes it (or an `if`/`for`/`while`
    header around it) names the pad id or the attention mask, or compares with 0 (the pad id of T5/BERT):
    `labels[labels == tok.pad_token_id] = -100`, `[t if t != pad_id else -100 for t in row]`,
    `labels.masked_fill(attention_mask == 0, -100)`. A keyword's own name (`padding=`) names no pad; a keyword argument
    other than `value=` (`label_pad_token_id=-100`, `ignore_index=-100`) writes nothing into the labels."""
    parent = facts.parent(marker)
    if isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value != "value":
        return False
    stmt = facts.statement_of(marker)
    headers = [s.test if isinstance(s, (cst.If, cst.While)) else s.iter for s in facts.enclosing(stmt) if isinstance(s, (cst.If, cst.While, cst.For))]
    nodes = [node for part in (stmt, *headers) for node in walk(part)]
    keywords = {id(node.keyword) for node in nodes if isinstance(node, cst.Arg) and node.keyword is not None}
    return any(_names_pads(node) for node in nodes if id(node) not in keywords)


def over_leading_positions(facts: Facts, marker: cst.CSTNode) -> bool:
    """The ignore index `marker` is written over the labels' leading positions: the value of an assignment whose
    target's last index is a slice from the start (`labels[i, :prompt_len] = -100`, `labels[:, :n] = -100`,
    `labels[:n] = [-100] * n`, `labels[i][:n] = -100`). Where the pads come first (left padding) that prefix covers
    them, unless a pad run outgrows it."""
    stmt = facts.statement_of(marker)
    small = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()
    return any(isinstance(s, cst.Assign) and any(n is marker for n in walk(s.value)) and any(_leading_slice(t.target) for t in s.targets) for s in small)


def _leading_slice(target: cst.BaseExpression) -> bool:
    """`x[..., :n]`: a subscript whose last index is a slice from the start (no lower bound, or 0) to a bound, no step."""
    if not isinstance(target, cst.Subscript) or not target.slice:
        return False
    last = target.slice[-1].slice
    if not isinstance(last, cst.Slice) or last.upper is None or last.step is not None:
        return False
    return last.lower is None or isinstance(last.lower, cst.Integer) and last.lower.evaluated_value == 0


def _names_pads(node: cst.CSTNode) -> bool:
    if isinstance(node, (cst.Name, cst.Attribute, cst.SimpleString)):  # `pad_token_id`, `attention_mask`, `enc["attention_mask"]`
        name = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else literal(node) or ""
        return "pad" in name.lower() or name == "attention_mask"
    if isinstance(node, cst.Comparison):
        return any(isinstance(c.operator, (cst.Equal, cst.NotEqual)) and isinstance(c.comparator, cst.Integer) and c.comparator.evaluated_value == 0 for c in node.comparisons)
    return False


def _is_ignore_index(node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer)
            and -node.expression.evaluated_value == IGNORE_INDEX)


# ---------------------------------------------------------------------------------------------
# tokenizer calls that make labels

# Collators that build each batch's `labels` from its `input_ids`, replacing any `labels` the dataset holds, with every
# pad id set to -100 (transformers data/data_collator.py, DataCollatorForLanguageModeling.torch_call: mlm=False
# `labels = batch["input_ids"].clone(); labels[labels == pad_token_id] = -100`, mlm=True `torch_mask_tokens`; trl's
# DataCollatorForCompletionOnlyLM calls it and masks the prompt too). DataCollatorForSeq2Seq is not one: it pads the
# dataset's own labels.
LABEL_BUILDING_COLLATORS = ("transformers.DataCollatorForLanguageModeling", "trl.DataCollatorForCompletionOnlyLM")


def label_building_collators(facts: Facts) -> list[Call]:
    """The file's calls that make a collator which builds the batches' `labels` itself (`LABEL_BUILDING_COLLATORS`)."""
    return facts.calls_to(*LABEL_BUILDING_COLLATORS)


LABEL_WORDS = ("label", "target")


def is_label_call(facts: Facts, call: Call) -> bool:
    """A tokenizer call whose ids become labels: `labels = tok(...)`, `x["labels"] = tok(...)["input_ids"]`, `labels=tok(...)`."""
    if "text_target" in call.kwargs:
        return True
    node, parent = call.node, facts.parent(call.node)
    # climb `tok(...)["input_ids"].to(device)` up to the argument or assignment it feeds
    while isinstance(parent, (cst.Subscript, cst.SubscriptElement, cst.Index, cst.Attribute)) or (isinstance(parent, cst.Call) and parent.func is node):
        node, parent = parent, facts.parent(parent)
    if isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == "labels":
        return True
    stmt = facts.statement_of(call.node)
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    name = dotted(target.target) or ""
                    if isinstance(target.target, cst.Subscript):
                        key = target.target.slice[0].slice
                        if isinstance(key, cst.Index) and isinstance(literal(key.value), str):
                            name = literal(key.value)
                    if any(w in name.lower() for w in LABEL_WORDS):
                        return True
    return False


# ---------------------------------------------------------------------------------------------
# labels a dataset never hands on

def never_served(facts: Facts, store: Store) -> bool:
    """`enc["labels"] = ...` into a mapping whose value (`uses.uses`) goes only into constructions of the file's own
    dataset classes whose `__getitem__` reads the attribute holding it only at other string keys
    (`self.data["input_ids"][idx]`): the key never reaches a batch, so no loss reads it."""
    base = store.target.value if isinstance(store.target, cst.Subscript) else None
    made = facts.definition(base, store.scope, store.order, identity=True) if base is not None else None
    if made is None:
        return False
    sinks = []
    for use in uses(facts, made.value):
        if use.how == "read" and _stored_into(facts, use.node):
            continue
        cls = facts.classes.get(facts.text(use.call.node.func)) if use.how == "arg" and use.call is not None else None
        if cls is None or "__getitem__" not in cls.methods or "__init__" not in cls.methods:
            return False
        sinks.append((cls, use))
    served = [_served_keys(facts, cls, use.call, use.node) for cls, use in sinks]
    return bool(served) and all(None not in keys and store.key not in keys for keys in served)


def _stored_into(facts: Facts, node: cst.CSTNode) -> bool:
    """`node` is the target of an item assignment: `enc["labels"] = ...`."""
    return any(s.target is node for s in facts.stores)


def _served_keys(facts: Facts, cls: ClassDef, call: Call, arg: cst.CSTNode) -> frozenset | set:
    """The string keys `__getitem__` reads of the attribute `__init__` stores the argument `arg` in; a set holding None
    where it reads it otherwise (whole, at a computed key) or the attribute cannot be told."""
    init = cls.methods["__init__"]
    params = [p.name.value for p in (*init.params.posonly_params, *init.params.params)][1:]
    position = next((i for i, a in enumerate(call.positional) if any(n is arg for n in walk(a.value))), None)
    if position is None or position >= len(params):
        return {None}
    names = [text for text, assigned in facts.self_attrs.items() if any(isinstance(v, cst.Name) and v.value == params[position] and s.node is init for v, s, _ in assigned)]
    if len(names) != 1:
        return {None}
    keys = set()
    for node in walk(cls.methods["__getitem__"]):
        if isinstance(node, cst.Attribute) and dotted(node) == names[0]:
            parent = facts.parent(node)
            index = parent.slice[0].slice if isinstance(parent, cst.Subscript) and len(parent.slice) == 1 else None
            keys.add(literal(index.value) if isinstance(index, cst.Index) and isinstance(literal(index.value), str) else None)
    return frozenset(keys)
