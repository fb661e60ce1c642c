"""BL203: generation labels copied from padded ids, pad tokens and all: the loss learns to predict padding."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Facts, Scope, at_pad_positions, default_collated, examples_trained, fails_before_a_step, is_model_call, ignore_index_markers, label_building_collators, never_seen, never_served, only_reported, over_leading_positions, padded_call, padded_ids, padded_on_the_left, padding_side, shared, unfed_map_function
from bertlint.rules import Context, Rule

GENERATIVE_HEADS = frozenset({"seq2seq", "causal-lm"})
# DataCollatorForSeq2Seq pads with -100 only the positions it adds itself and leaves pad ids already in the labels
# (transformers data/data_collator.py, DataCollatorForSeq2Seq.__call__: `label + [self.label_pad_token_id] * (max_label_length - len(label))`).
SEQ2SEQ_COLLATOR = "transformers.DataCollatorForSeq2Seq"
IGNORE_INDEX = 100  # written `-100`: the index the loss skips
# the most examples a run that only checks its pipeline trains on: one batch of `TrainingArguments`' default
# `per_device_train_batch_size=8` (three hard-coded "mock" sentences, `df.iloc[:1]`, `select(range(8))`)
SMOKE_RUN = 8


class PadTokensInLabels(Rule):
    code = "BL203"
    name = "pad-tokens-in-labels"
    severity = "warning"
    summary = "Seq2seq or causal-LM labels copied from padded ids without masking the pad tokens with -100"
    help = "replace pad ids with -100 (`[t if t != tokenizer.pad_token_id else -100 for t in ids]`), or tokenize the targets without padding and let `DataCollatorForSeq2Seq` pad them with -100 (causal LM: `DataCollatorForLanguageModeling(mlm=False)` builds the labels)"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        heads = {load.head for load in facts.model_loads}
        # a smoke run of the pipeline on one batch (`Dataset.from_pandas(df.iloc[:1])`, three mock sentences): no run's
        # loss to spoil (a lab run on `select(range(100))` still trains the model on the pads)
        smoke = (examples := examples_trained(facts)) is not None and examples <= SMOKE_RUN
        if not heads or not heads <= GENERATIVE_HEADS or _pads_ignored(facts) or smoke:
            return
        # a collator that masks the pads builds the batches' `labels`: only a forward handed the batches' padded ids as
        # `labels=` itself (`model(input_ids=ids, labels=ids)`) bypasses it
        masking = label_building_collators(facts)
        # Labels stored in a dataset reach a loss only where the file trains; a file that tokenizes and saves them (or
        # hands them to another module's Trainer) computes no loss, while a forward given `labels=` computes one here.
        # ... and where a step runs: a run that stops before its first step (a load the target refuses before
        # `trainer.train()`) computes no loss on them
        training = facts.is_training and not fails_before_a_step(facts)
        found = []
        stored_in: set[int] = set()  # scopes that write `x["labels"] = ...` themselves
        for store in facts.stores:
            if store.key == "labels" and isinstance(store.target, cst.Subscript) and training and not masking and not never_served(facts, store) and not unfed_map_function(facts, store.scope.node):
                stored_in.add(id(store.scope))
                found.append((store.value, *_padded(ctx, store.value, store.scope, store.order)))
        evaluated: set[int] = set()  # labels given to a forward whose loss is only looked at (under `no_grad`, `.item()`)
        for call in facts.calls:
            labels, at = _labels_given(facts, call)
            if labels is not None and (not masking or _batch_ids(facts, labels, call)):
                reported = only_reported(facts, call)
                if reported and never_seen(facts, call.node):
                    continue  # a loss only looked at, whose numbers reach nothing the run shows: no diluted loss is seen
                found.append((at, *_padded(ctx, labels, call.scope, call.order)))
                if reported:
                    evaluated.add(id(at))
        for trainer in facts.trainers if training and not masking else ():  # the labels of a dataset class's items
            batches = default_collated(facts, trainer)
            if batches is not None and batches.get("labels") is not None:
                found.append((trainer.kwargs.get("train_dataset") or trainer.node, _padded_ids(ctx, batches["labels"]), padded_on_the_left(facts, batches["labels"])))
        for call in facts.tokenizer_calls:
            # with inputs, "labels" holds the padded target ids; a function that writes "labels" itself overrides or
            # ignores them (`labels = tok(..., text_target=...)` read only for its `input_ids`), reported at that store
            if "text_target" in call.kwargs and call.arg(0, "text") is not None and id(call.scope) not in stored_in and training and not masking and not unfed_map_function(facts, call.scope.node):
                found.append((call.kwargs["text_target"], padded_call(facts, call, ctx.version), padding_side(facts, call) == "left"))
        found = [(node, why, left) for node, why, left in found if why is not None]
        if not found or _masks_pad_positions(facts):
            return
        if any(left for _, _, left in found) and _masks_leading_positions(facts):
            found = [(node, why, left) for node, why, left in found if not left]
        collator = " (`DataCollatorForSeq2Seq` pads with -100 only the positions it adds itself)" if facts.calls_to(SEQ2SEQ_COLLATOR) else ""
        if masking:
            collator = f" (the batches' own `labels`, which `{facts.text(masking[0].node.func)}` masks with -100, are bypassed)"
        trains = "the loss also trains the model to predict [PAD], and padding dilutes the reported loss"
        reported = "the [PAD] positions count in the loss, so the reported loss (and perplexity) is diluted by padding"
        for node, why, _ in found:
            harm = trains if training and id(node) not in evaluated else reported
            ctx.report(node, f"labels are copied from padded ids ({why}) and the pad ids are not replaced with -100{collator}: {harm}")


def _pads_ignored(facts: Facts) -> bool:
    """A TRL trainer (it builds its own labels), or a loss that ignores another index than -100 (the pad id:
    `CrossEntropyLoss(ignore_index=tok.pad_token_id)`; -100 is the default and skips no pad)."""
    return any((t.qualname or "").startswith("trl.") for t in facts.trainers) or any(
        "ignore_index" in c.kwargs and facts.kw_value(c, "ignore_index") != -IGNORE_INDEX for c in facts.calls
    )


def _masks_pad_positions(facts: Facts) -> bool:
    """A -100 written where the pads are: the statement that writes it (or an `if`/`for` around it) names the pad id or the
    attention mask, or compares with 0 (the pad id of T5/BERT): `labels[labels == tok.pad_token_id] = -100`,
    `[t if t != pad_id else -100 for t in row]`, `labels.masked_fill(attention_mask == 0, -100)`. Masking the prompt
    (`[-100] * len(prompt_ids) + answer_ids`) leaves the pads in; a collator's `label_pad_token_id=-100` pads only what it
    adds. A name bound to -100 (a constant, a parameter's default, `self.ignore_id` set from one) counts where it is used. Only looked for once a finding is at stake."""
    return any(at_pad_positions(facts, marker) for marker in ignore_index_markers(facts))


def _masks_leading_positions(facts: Facts) -> bool:
    """A -100 written over the labels' leading positions (`labels[i, :prompt_len] = -100`): where the tokenizer pads on
    the left the pads sit there, covered unless a pad run outgrows the masked prefix."""
    return any(over_leading_positions(facts, marker) for marker in ignore_index_markers(facts))


def _padded(ctx: Context, expr: cst.BaseExpression, scope: Scope, order: int) -> tuple[str | None, bool]:
    """(why `expr` is padded when it holds (a copy of) the `input_ids` of a tokenizer call or of a DataLoader's batches:
    the brain's judgement; whether those pads come first)."""
    ids = ctx.facts.kind(expr, scope, order)
    return _padded_ids(ctx, ids), padded_on_the_left(ctx.facts, ids)


def _padded_ids(ctx: Context, ids) -> str | None:
    """Why the ids `ids` are padded when they are (a copy of) the `input_ids` of a tokenizer call or of a DataLoader's
    batches."""
    if ids is None or not shared(ids, lambda source: source.kind == "ids" and source.detail == "input_ids" and source.parent is not None and source.parent.kind in ("encoding", "dataloader_item")):
        return None
    return padded_ids(ctx.facts, ids, ctx.version)


def _labels_given(facts: Facts, call) -> tuple[cst.BaseExpression | None, cst.CSTNode | None]:
    """(the labels a call passes, where to report them): its `labels=` argument, or a model forward's `**batch` whose
    `labels` key is known (a DataLoader's batch of a dataset class's items, a dict of the file's)."""
    if "labels" in call.kwargs:
        return call.kwargs["labels"].value, call.kwargs["labels"].value
    if not call.has_double_star or not is_model_call(facts, call):
        return None, None
    given = facts.given(call, -1, "labels")
    return (given, facts.keyword_at(call, "labels")) if isinstance(given, cst.BaseExpression) else (None, None)


def _batch_ids(facts: Facts, expr: cst.BaseExpression, call) -> bool:
    """`expr` holds the `input_ids` of a DataLoader's batches (not the batches' own `labels`)."""
    ids = facts.kind(expr, call.scope, call.order)
    return ids is not None and bool(shared(ids, lambda source: source.kind == "ids" and source.detail == "input_ids" and source.parent is not None and source.parent.kind == "dataloader_item"))
