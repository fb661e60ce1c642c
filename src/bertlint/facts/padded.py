"""Are these ids padded, and why: the one judgement every rule takes about an `ids` value.

Padded ids come from a tokenizer call that pads (to `max_length`, or a batch of several texts to the longest),
a padding utility (`pad_sequence`, keras `pad_sequences`, `F.pad` of ids), ids extended by hand with the pad id
(`ids + [0] * (n - len(ids))`, tokens with `[PAD]` converted), or the batches of a transformers collator that pads
(`brain.transformers.PADDING_COLLATORS`), from a DataLoader or called directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from bertlint.facts.abstract import Binding, each
from bertlint.facts.brain.transformers import padding_collator as brain_collator
from bertlint.facts.nodes import Call, walk
from bertlint.facts.training import padding_at, padding_side, text_container
from bertlint.facts.values import Values as Facts

if TYPE_CHECKING:
    from bertlint.facts.uses import Use

PAD_TOKENS = ("[PAD]", "<pad>")


def padding_for_pad_to_max_length(facts: Facts, call: Call) -> str | None:
    """The `padding=` argument (source text) that does what the call's `pad_to_max_length=` did before transformers
    stopped reading it (`True`: `"max_length"`; `False`: `False`), or None when the call passes none or its value is
    not certain (a fix writes only a certain value)."""
    arg = call.kwargs.get("pad_to_max_length")
    if arg is None:
        return None
    value = facts.value(arg.value, call.scope, order=call.order, cli=False)
    return '"max_length"' if value is True else "False" if value is False else None


def padded_ids(facts: Facts, ids: Binding | None, version: tuple[int, ...]) -> str | None:
    """Why these ids are padded (words for a message), or None when they may not be (on the target version). Ids of
    several sources (a join: a helper called on a training and a validation loader's batches) are padded when the
    ids of every source are."""
    if not isinstance(ids, Binding) or ids.kind != "ids":
        return None
    if ids.joined:
        whys = each(ids, lambda source: padded_ids(facts, source, version))
        return " and ".join(dict.fromkeys(whys)) if whys else None
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


def padded_on_the_left(facts: Facts, ids: Binding | None) -> bool:
    """The pads of these ids come first: ids a tokenizer call made (`input_ids` of its encoding, or a copy) whose
    `padding_side` (`training.padding_side`: the call's, the tokenizer's load or a later `tok.padding_side = ...`
    store) is "left" (transformers 4.30-5.24 tokenization_utils_base.py `PreTrainedTokenizerBase.__init__`:
    `self.padding_side = kwargs.pop("padding_side", self.padding_side)`; `_pad`: `padding_side == "left"` puts
    `[pad_token_id] * difference` before the ids), where no `padding_side` store comes after the call in the file (one
    may switch the tokenizer for generation once the training batches were padded on the right). Ids of several
    sources are when those of every source are."""
    if not isinstance(ids, Binding) or ids.kind != "ids":
        return False
    if ids.joined:
        return all(padded_on_the_left(facts, source) for source in ids.joined)
    call = ids.call
    if ids.detail not in ("input_ids", "") or call is None or ids.parent is None or ids.parent.kind != "encoding":
        return False
    # a store after the call may be what made the side left: a tokenizer switched for generation after training
    return padding_side(facts, call) == "left" and ("padding_side" in call.kwargs or all(s.order < call.order for s in facts.stores if s.key == "padding_side"))


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


def fed_alone(facts: Facts, call: Call) -> bool:
    """One example encoded (`encode`/`encode_plus`, or a tokenizer call on one string) whose value (`uses.uses`:
    through names, conversions, subscripts and returns to the file's callers) reaches a model's forward or `generate`
    and is never gathered with other examples (appended, stacked, in a list or a comprehension, stored, returned out
    of the file), nor are a forward's outputs: padding it changes nothing the file uses, since the model attends with
    its mask."""
    text = call.arg(0, "text")
    one = text is not None and (text_container(facts, text.value, call.scope, call.order) == "str" or facts.is_batch(text.value, call.scope, call.order) is False)
    if call.method not in ("encode", "encode_plus") and not one:
        return False
    from bertlint.facts.uses import uses  # loaded by the first single example: BL101 imports this module in every default run

    found = uses(facts, call.node)
    if any(_collected(use) for use in found):
        return False
    fed = [use.call for use in found if use.how == "arg" and _feeds(facts, use.call)]
    return bool(fed) and not any(_collected(out) for forward in fed if forward.method != "generate" for out in uses(facts, forward.node))


def _collected(use: Use) -> bool:
    """The use gathers the value with others or hands it out of the file."""
    return use.how in ("gathered", "stored", "returned") or use.how == "arg" and use.call.short in COLLECTORS


def _feeds(facts: Facts, call: Call) -> bool:
    """A model's forward or `generate`."""
    from bertlint.facts.loops import is_model_call  # as `uses` in `fed_alone`
    from bertlint.facts.tensors import receiver_role

    return call.method == "generate" or is_model_call(facts, call) or receiver_role(facts, call.node.func, call.scope, call.order) == "model"
