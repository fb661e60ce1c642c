"""Are these ids padded, and why: the one judgement every rule takes about an `ids` value.

Padded ids come from a tokenizer call that pads (to `max_length`, or a batch of several texts to the longest),
a padding utility (`pad_sequence`, keras `pad_sequences`, `F.pad` of ids), ids extended by hand with the pad id
(`ids + [0] * (n - len(ids))`, tokens with `[PAD]` converted), or the batches of a transformers collator that pads
(`brain.transformers.PADDING_COLLATORS`), from a DataLoader or called directly.
"""

from __future__ import annotations

import libcst as cst

from bertlint.facts.abstract import Binding
from bertlint.facts.brain.transformers import padding_collator as brain_collator
from bertlint.facts.nodes import Call, walk
from bertlint.facts.loops import is_model_call
from bertlint.facts.tensors import receiver_role
from bertlint.facts.training import in_call_to, padding_at, text_container
from bertlint.facts.values import Values as Facts

PAD_TOKENS = ("[PAD]", "<pad>")


def padded_ids(facts: Facts, ids: Binding | None, version: tuple[int, ...]) -> str | None:
    """Why these ids are padded (words for a message), or None when they may not be (on the target version)."""
    if ids is None or ids.kind != "ids":
        return None
    if ids.detail == "padded":
        return f"built with `{facts.text(ids.call.node.func)}`"
    if ids.detail == "padded by hand":
        return "padded by hand with the pad id"
    if ids.detail == "manual":
        return "padded by hand with pad tokens" if _pad_tokens_converted(facts, ids.call) else None
    if ids.detail not in ("input_ids", "") or ids.call is None or ids.parent is None:
        return None
    if ids.parent.kind in ("dataloader_item", "collated"):
        collator = padding_collator(facts, ids.call) if ids.parent.kind == "dataloader_item" else brain_collator(facts, ids.parent.parent)
        return f"batches padded by `{collator}`" if collator else None
    return padded_call(facts, ids.call, version)


def padded_call(facts: Facts, call: Call, version: tuple[int, ...]) -> str | None:
    """Why the ids a tokenizer (or processor) call makes are padded, or None when they may not be."""
    pad = padding_at(facts, call, version)
    line = facts.text(call.node.func)
    if pad.pads_to_max:
        legacy = "pad_to_max_length" in call.kwargs and "padding" not in call.kwargs
        keyword = "pad_to_max_length=True" if legacy else 'padding="max_length"'
        return f"`{line}(..., {keyword})`"
    if pad.pads_batch:
        keyword = 'padding="longest"' if pad.padding == "longest" else "padding=True"
        return f"`{line}(..., {keyword})` pads a batch of several texts"
    return None


def padding_collator(facts: Facts, loader: Call) -> str | None:
    """The transformers collator that pads a DataLoader's batches, by class name."""
    arg = loader.kwargs.get("collate_fn")
    return brain_collator(facts, facts.kind(arg.value, loader.scope, loader.order) if arg is not None else None)


def _pad_tokens_converted(facts: Facts, call: Call | None) -> bool:
    """`convert_tokens_to_ids(tokens)` where tokens were extended with pad tokens."""
    if call is None or not call.positional:
        return False
    arg = call.positional[0].value
    nodes = [arg]
    if isinstance(arg, cst.Name):
        owner, events = facts.binding_events(arg.value, call.scope, call.order)
        nodes += [e.value for e in events if e.value is not None]
    for node in nodes:
        for sub in walk(node):
            if isinstance(sub, cst.SimpleString) and any(p in sub.value for p in PAD_TOKENS):
                return True
            if isinstance(sub, cst.Attribute) and sub.attr.value in ("pad_token", "pad_token_id"):
                return True
    return False


# Calls that gather an encoding with others (a batch, an array, a dataset): the examples must then share a length.
COLLECTORS = frozenset({"append", "extend", "insert", "stack", "cat", "concatenate", "vstack", "hstack", "array", "asarray", "from_tensor_slices", "DataFrame"})
# Wrappers an encoding of one example passes through on its way to a name: `torch.tensor([tok.encode(t)])`, `.to(device)`.
WRAPPERS = frozenset({"tensor", "LongTensor", "constant", "convert_to_tensor", "to", "cuda", "unsqueeze", "squeeze"})


MAX_READS = 64  # reads followed from one encoding (through the names it is handed on to)


def fed_alone(facts: Facts, call: Call) -> bool:
    """One example encoded (`encode`/`encode_plus`, or a tokenizer call on one string) into a name that only a model's
    forward or `generate` reads, and whose outputs (a forward's) are never gathered with other examples' (appended,
    stacked, returned, stored): padding it changes nothing the file uses, since the model attends with its mask."""
    text = call.arg(0, "text")
    one = text is not None and (text_container(facts, text.value, call.scope, call.order) == "str" or facts.is_batch(text.value, call.scope, call.order) is False)
    if call.method not in ("encode", "encode_plus") and not one:
        return False
    bound = _bound_name(facts, call.node)
    reads = _later_reads(facts, *bound) if bound else None
    if not reads:
        return False
    fed = False
    for read in reads:  # grows with the names the value is handed on to (`ids = enc["input_ids"]`)
        if _collected(facts, read):
            return False
        feeding = _feeding_call(facts, read)
        if feeding is None:
            alias = _bound_name(facts, read)
            more = _later_reads(facts, *alias) if alias and len(reads) < MAX_READS else []
            if more is None:
                return False
            reads += more
            continue
        fed = True
        outputs = _bound_name(facts, feeding.node) if feeding.method != "generate" else None
        later = _later_reads(facts, *outputs) if outputs else []
        if later is None or any(_collected(facts, r) for r in later):
            return False
    return fed


def _bound_name(facts: Facts, node: cst.BaseExpression) -> tuple[cst.CSTNode, str] | None:
    """(statement, name) of `name = node`, through the wrappers of one example (`torch.tensor([node]).to(d)`, `node[None, :]`)."""
    current: cst.CSTNode = node
    stmt = facts.statement_of(node)
    assigns = [s for s in stmt.body if isinstance(s, cst.Assign)] if isinstance(stmt, cst.SimpleStatementLine) else []
    while True:
        assign = next((a for a in assigns if a.value is current), None)
        if assign is not None:
            targets = assign.targets
            return (stmt, targets[0].target.value) if len(targets) == 1 and isinstance(targets[0].target, cst.Name) else None
        parent = facts.parent(current)
        wrapped = (
            isinstance(parent, (cst.Attribute, cst.Subscript)) and parent.value is current
            or isinstance(parent, cst.Call) and parent.func is current and isinstance(current, cst.Attribute) and current.attr.value in WRAPPERS
            or isinstance(parent, cst.Element) or isinstance(parent, cst.List) and len(parent.elements) == 1
            or isinstance(parent, cst.Arg) and isinstance(call := facts.parent(parent), cst.Call) and len(call.args) == 1 and facts.call_of(call) is not None and facts.call_of(call).short in WRAPPERS
            or isinstance(parent, cst.Call) and any(a is current for a in parent.args)
        )
        if not wrapped:
            return None
        current = parent


def _later_reads(facts: Facts, stmt: cst.CSTNode, name: str) -> list[cst.Name] | None:
    """The reads of `name` in the statements after `stmt`, its block's and then each enclosing block's, up to an
    assignment that rebinds it to something not made from it (`x = f(x)` carries on); None when the block is not known."""
    reads: list[cst.Name] = []
    while True:
        block = _block_of(facts, stmt)
        if block is None:
            return None
        body = list(block.body)
        for later in body[next(i for i, s in enumerate(body) if s is stmt) + 1 :]:
            rebinding = next((s for s in getattr(later, "body", ()) if isinstance(s, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in s.targets)), None) if isinstance(later, cst.SimpleStatementLine) else None
            found = [n for n in walk(rebinding.value if rebinding is not None else later) if isinstance(n, cst.Name) and n.value == name and not _is_target(facts, n)]
            reads += found
            if rebinding is not None and not found:
                return reads
        around = facts.enclosing(stmt)
        if not around or isinstance(around[-1], (cst.FunctionDef, cst.ClassDef)):
            return reads
        stmt = around[-1]


def _block_of(facts: Facts, stmt: cst.CSTNode) -> cst.CSTNode | None:
    """The block (module, or a compound statement's suite) that holds `stmt` directly."""
    around = facts.enclosing(stmt)
    if not around:
        return facts.module if any(s is stmt for s in facts.module.body) else None
    inner = around[-1]
    for suite in (getattr(inner, "body", None), getattr(getattr(inner, "orelse", None), "body", None)):
        if isinstance(suite, cst.IndentedBlock) and any(s is stmt for s in suite.body):
            return suite
    return None


def _is_target(facts: Facts, node: cst.Name) -> bool:
    parent = facts.parent(node)
    return isinstance(parent, (cst.AssignTarget, cst.For)) and getattr(parent, "target", None) is node


def _collected(facts: Facts, read: cst.Name) -> bool:
    """The read gathers the value with others or hands it out: an argument of `append`/`stack`/`np.array`..., a
    `return`/`yield`, or the value of an assignment to an attribute or an item (`self.x = ...`, `d[k] = ...`)."""
    if in_call_to(facts, read, COLLECTORS):
        return True
    stmt = facts.statement_of(read)
    for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
        if isinstance(small, cst.Return) or isinstance(small, cst.Expr) and isinstance(small.value, (cst.Yield,)):
            return True
        if isinstance(small, cst.Assign) and any(not isinstance(t.target, cst.Name) for t in small.targets):
            return True
    return False


def _feeding_call(facts: Facts, read: cst.Name) -> Call | None:
    """The model forward or `generate` call the read is an argument of (at any depth), if any."""
    current = facts.parent(read)
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        if isinstance(current, cst.Call) and (found := facts.call_of(current)) is not None:
            if found.method == "generate" or is_model_call(facts, found) or receiver_role(facts, current.func, found.scope, found.order) == "model":
                return found
        current = facts.parent(current)
    return None
