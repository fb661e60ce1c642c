"""BL201: a padded batch reaches the model without its attention mask."""

from __future__ import annotations

import libcst as cst

from bertlint import knowledge, versions
from bertlint.facts import UNKNOWN, Binding, Call, Facts, default_collated, ModelLoad, dotted, eos_pad_in_force, is_model_call, keras_feed, load_behind, padded_ids, padding_of, padding_side, passed_as, shared, shown_example, unreached
from bertlint.rules import Context, Replacement, Rule


class MissingAttentionMask(Rule):
    code = "BL201"
    name = "missing-attention-mask"
    severity = "error"
    summary = "A model forward or `generate` gets padded `input_ids` and no `attention_mask`"
    help = "pass `attention_mask=` (or call the model with `**encoding`)"
    fix = "unsafe"
    fix_title = "pass the encoding's `attention_mask`"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.calls:
            if not is_model_call(facts, call) or unreached(facts, call.node):
                continue  # the run as written never gets there: its outputs cannot differ
            if "attention_mask" in call.kwargs and facts.passes(call, "attention_mask") or len(call.positional) >= 2:
                continue  # `attention_mask=None` is the forward's default: no mask
            star = next((a for a in call.node.args if a.star == "**"), None)
            ids_arg = star or call.arg(0, "input_ids")
            if ids_arg is None or _gone(facts, call, ctx.version):
                continue
            ids_expr = ids_arg.value
            ids = facts.kind(ids_expr, call.scope, call.order)
            if star is not None and facts.gives(call, "attention_mask") is False and (given := facts.given(call, 0, "input_ids")) not in (None, UNKNOWN):
                ids_expr, ids = given, facts.kind(given, call.scope, call.order)  # `model(**batch)`: a batch of known keys, none the mask
            elif star is not None:
                # `model(**enc)` carries the mask, unless the tokenizer was told not to make one.
                if ids is None or ids.kind != "encoding" or shared(ids, lambda enc: padding_of(facts, enc.call).return_attention_mask) is not False:
                    continue
                ids = facts.item_of(ids, "input_ids")
            why = padded_ids(facts, ids, ctx.version)
            if why is None or shown_example(facts, call, ids_arg.value):
                continue  # a one-example demo: only its shown output would differ
            harm = _harm(facts, _load_behind(facts, call), ids, ctx.version, call)
            if harm is None:
                continue
            effect, severity = harm
            source = ids.parent.call if ids.parent is not None else None
            feed = keras_feed(facts, ids_expr, call.scope, call.order)
            if feed is not None:  # a keras graph's input: the mask is a second input the model is fed
                ctx.report(
                    next((a for a in call.node.args if a.value is ids_expr), ids_arg),
                    f"padded `input_ids` ({why}) reach the model without `attention_mask` through the keras "
                    f"{'`Input`' if feed == 'input' else 'model'} they are fed to: {effect}",
                    help=KERAS_HELP[feed],
                    severity=severity,
                )
                continue
            if source is not None and padding_of(facts, source).return_attention_mask is False:
                ctx.report(
                    ids_arg,
                    f"padded `input_ids` ({why}) reach the model, but the tokenizer call has `return_attention_mask=False`: {effect}",
                    help="drop `return_attention_mask=False` and pass the encoding's `attention_mask`",
                    severity=severity,
                )
                continue
            mask = _mask_expression(facts, call, ids_arg.value, ids)
            spread = ", ".join(f"`{k}`" for k in facts.keywords(call)) if ids_arg is star else None
            ctx.report(
                ids_arg,
                f"padded `input_ids` ({why}) reach the model without `attention_mask`: {effect}",
                help=f"pass `attention_mask={mask}` or call the model with `**encoding`" if mask else
                f"the batch holds only {spread}: put the tokenizer's `attention_mask` in each item beside the ids, and `**batch` passes it" if spread else self.help,
                fix=[_mask_replacement(call, mask)] if mask else None,
                severity=severity,
            )


        for trainer in facts.trainers:  # the forward a Trainer runs on the batches its default collator makes
            batches = default_collated(facts, trainer)
            if batches is None or unreached(facts, trainer.node) or "attention_mask" in batches or batches.get("input_ids") is None:
                continue
            ids, model = batches["input_ids"], facts.given(trainer, 0, "model")
            why = padded_ids(facts, ids, ctx.version)
            load = load_behind(facts, facts.kind(model, trainer.scope, trainer.order)) if isinstance(model, cst.BaseExpression) else None
            harm = _harm(facts, load, ids, ctx.version, None) if why is not None and load is not None else None
            if harm is not None:
                keys = ", ".join(f"`{k}`" for k in batches)
                ctx.report(trainer.kwargs.get("train_dataset") or trainer.node,
                           f"padded `input_ids` ({why}) reach the model without `attention_mask`: the Trainer's default collator stacks "
                           f"the dataset's items, which hold only {keys}; {harm[0]}",
                           help="put the tokenizer's `attention_mask` in each item beside the ids", severity=harm[1])


# The fix where keras feeds the ids: the tokenizer's `attention_mask` fed beside them (no one edit makes it).
KERAS_HELP = {
    "input": "pass the mask as `attention_mask=` from an `Input` of its own (the ids' shape, int32) that "
             "`Model(inputs=[...])` lists beside the ids, and feed the model the tokenizer's `input_ids` and `attention_mask` both",
    "call": "feed the model the tokenizer's `input_ids` and `attention_mask` both (a dict of the two, or a list), and "
            "in `call` pass the mask to the transformer as `attention_mask=`",
}


def _gone(facts: Facts, call: Call, version: tuple[int, ...]) -> bool:
    """The model is one of transformers' TensorFlow classes, which the target no longer has (5.x): the file fails at
    its import, before any forward."""
    model = _model_of(facts, call)
    return model is not None and shared(model, lambda m: (load := load_behind(facts, m)) is not None and versions.symbol_removed("tensorflow", load.class_name, version)) is True


def _mask_replacement(call: Call, mask: str) -> Replacement:
    """The mask passed: the value of an `attention_mask=None` the call gives, else a keyword after its last argument."""
    given = call.kwargs.get("attention_mask")
    return Replacement(given.value, mask) if given is not None else Replacement(call.node.args[-1], f", attention_mask={mask}", after=True)


_SILENTLY = "silently computes different outputs"


def _eos_pad_passed(facts: Facts, call: Call) -> bool:
    """`generate(..., pad_token_id=tok.eos_token_id)`."""
    arg = call.kwargs.get("pad_token_id")
    return arg is not None and isinstance(arg.value, cst.Attribute) and arg.value.attr.value == "eos_token_id"


def _harm(facts: Facts, load: ModelLoad | None, ids: Binding, version: tuple[int, ...], call: Call | None) -> tuple[str, str] | None:
    """(what the missing mask does, severity), or None where the pads cannot reach a real token: a causal model
    with right padding, or a text encoder that conditions a diffusion model (trained on unmasked embeddings). `call`:
    the forward or `generate` call, None for the forward a Trainer runs."""
    if call is not None and call.method == "generate":
        # A decoder-only model's `generate` rebuilds the mask from the pad ids (`input_ids != pad_token_id`) unless the
        # pad token is the EOS token: transformers generation/utils.py, `_prepare_attention_mask_for_generation`.
        eos_pad = bool(eos_pad_in_force(facts)) or _eos_pad_passed(facts, call)
        if not eos_pad and (_attention(facts, load) != "bidirectional" or version < (5,)):
            return None  # 4.x infers it for encoder-decoder models too; 5.x only for decoder-only ones
        why = "the pad token is the EOS token, so `generate` cannot tell pads from real tokens: it" if eos_pad else "`generate`"
        return f"{why} attends to the [PAD] tokens and {_SILENTLY}", "error"
    if load is not None and call is not None and _conditions_diffusion(facts, load, call):
        return None
    attention = _attention(facts, load)
    side = shared(ids, lambda source: padding_side(facts, source.call))
    if side == "left":
        return f"with left padding every real token attends to the [PAD] tokens before it and the model {_SILENTLY}", "error"
    if attention == "causal":
        return None  # right padding (or a side that does not resolve): the pads come after every real token it sees
    if attention == "bidirectional":
        return f"it attends to the [PAD] tokens and {_SILENTLY}", "error"
    unless = "causal (decoder-only)" if side == "right" else "causal (decoder-only) and pads on the right"
    return f"unless the model is {unless}, it attends to the [PAD] tokens and {_SILENTLY}", "warning"


def _load_behind(facts: Facts, call: Call) -> ModelLoad | None:
    """The model load a forward/`generate` call runs on (through `get_peft_model` and `.to()`-like chains)."""
    return load_behind(facts, _model_of(facts, call))


def _model_of(facts: Facts, call: Call) -> Binding | None:
    """The model a forward/`generate` call runs."""
    target = call.receiver if call.method in ("forward", "generate") else call.node.func
    return facts.kind(target, call.scope, call.order)


def _attention(facts: Facts, load: ModelLoad | None) -> str | None:
    """"causal" | "bidirectional" | None, from the checkpoint when it is known, else the class (its head)."""
    if load is None:
        return None
    found = knowledge.attention_of(class_name=load.class_name, info=facts.checkpoint_info(load))
    if found is None and load.head == "causal-lm":
        return "causal"  # `AutoModelForCausalLM` loads decoder-only models (or encoders configured as decoders)
    if found is None and load.head in ("seq2seq", "masked-lm"):
        return "bidirectional"  # the encoder of a seq2seq model; masked-LM encoders
    return found


def _conditions_diffusion(facts: Facts, load: ModelLoad, call: Call) -> bool:
    """A text encoder whose hidden states condition a diffusion model: diffusers is imported, and the encoder comes
    from a pipeline's `text_encoder*` subfolder, is a conditioning text-encoder class, or its output is passed on as
    `encoder_hidden_states`."""
    if not facts.imported("diffusers"):
        return False
    subfolder = facts.kw_value(load.call, "subfolder", cli=False, default=None)
    return knowledge.conditioning_encoder(load.class_name, subfolder) or passed_as(facts, call, "encoder_hidden_states")


def _mask_expression(facts: Facts, call: Call, ids_expr: cst.BaseExpression, ids: Binding) -> str | None:
    """`enc["input_ids"]` -> `enc["attention_mask"]`; `enc.input_ids` -> `enc.attention_mask`, where `enc` holds the
    encoding that made the ids (a batch of a Dataset's items need hold no mask)."""
    if not isinstance(ids_expr, (cst.Subscript, cst.Attribute)) or not dotted(ids_expr.value):
        return None
    holder = facts.kind(ids_expr.value, call.scope, call.order)
    if holder is None or holder.kind != "encoding" or ids.parent is None or holder.call is not ids.parent.call:
        return None
    if isinstance(ids_expr, cst.Subscript) and ids.detail == "input_ids":
        return f'{dotted(ids_expr.value)}["attention_mask"]'
    if isinstance(ids_expr, cst.Attribute) and ids_expr.attr.value == "input_ids":
        return f"{dotted(ids_expr.value)}.attention_mask"
    return None
