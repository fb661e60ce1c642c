"""Which pretrained weights a run really trains: the parts of a model a file freezes (`requires_grad`, keras `trainable`),
the parameters an optimizer is given (a fresh head's, a plain module's), and the model a keras optimizer is compiled into.

A model is named by the call that loaded it (`id(load.call)`, what `Binding.call` holds). Freezing is read where the file
spells it out: `model.requires_grad_(False)`, `for p in model.parameters(): p.requires_grad = False` (a flag set directly in
the loop's body, not under an `if`), `bert.trainable = False`; the same on the model's body (`model.bert`, `model.transformer`,
`model.base_model`: its `base_model_prefix`). Anything that sets a flag to something else on the model or any part of it
(`requires_grad = True`, `requires_grad_()`, `trainable = True`, gradual unfreezing) thaws the whole model, except its
head (a fresh task head, `model.classifier`, or an LM's output projection, `model.lm_head`): what trains is then the head
alone. Unknown stays silent.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from bertlint import knowledge
from bertlint.facts.abstract import Instance
from bertlint.facts.attribute_stops import missing_attribute
from bertlint.facts.brain.tensors import own_tensors
from bertlint.facts.brain.transformers import PART
from bertlint.facts.brain.data import dataset_item, item_keys
from bertlint.facts.model import per_file
from bertlint.facts.names import TRAINER_POSITION
from bertlint.facts.nodes import Call, Scope, dotted, walk
from bertlint.facts.loops import NO_GRAD_MODES, forward_model, is_model_call, under_grad_mode
from bertlint.facts.frame_rows import ROW_KEEPING, ROW_SUBSETS
from bertlint.facts.functions import enclosing_class
from bertlint.facts.library_stops import refused_call
from bertlint.facts.liveness import NEVER, liveness
from bertlint.facts.removals import refused
from bertlint.facts.stops import raises_before
from bertlint.facts.training import map_calls, uses_peft
from bertlint.facts.values import ModelLoad
from bertlint.facts.values import Values as Facts

WHOLE, BODY, HEAD = "whole", "body", "head"


def frozen_models(facts: Facts) -> frozenset[int]:
    """The models the file freezes whole and never unfreezes. A forward of one records no graph. Freezing its body alone
    (`model.bert.parameters()`, `model.base_model`) leaves the head's graph: not here (see `frozen_bodies`)."""
    frozen, _ = _freezing(facts)
    return frozenset(model for model, part in frozen if part == WHOLE)


def frozen_bodies(facts: Facts) -> frozenset[int]:
    """The models whose pretrained weights the file freezes and never unfreezes, whole or their body (`model.bert`,
    `model.transformer`, `model.base_model`): what trains is a fresh head or something outside the model, at its own rate.
    None where the file uses PEFT: an adapter added to a frozen model trains new weights inside it."""
    if uses_peft(facts):
        return frozenset()
    frozen, _ = _freezing(facts)
    return frozenset(model for model, _ in frozen)


@per_file
def _freezing(facts: Facts) -> tuple[frozenset[tuple[int, str]], frozenset[int]]:
    """((model, part) frozen and never thawed, models thawed somewhere)."""
    frozen: set[tuple[int, str]] = set()
    thawed: set[int] = set()

    def mark(expr: cst.BaseExpression, scope: Scope, order: int | None, flag: Any) -> None:
        found = _part(facts, expr, scope, order)
        if found is None:
            return
        model, part = found
        if flag is False and part in (WHOLE, BODY):
            frozen.add((model, part))
        elif flag is not False and part != HEAD:
            thawed.add(model)

    for call in facts.calls:
        if call.method == "requires_grad_":
            mark(call.receiver, call.scope, call.order, facts.arg_value(call, 0, "requires_grad", default=True))
    for store in facts.stores if "trainable" in facts.source else ():
        if store.key == "trainable" and isinstance(store.target, cst.Attribute):
            mark(store.target.value, store.scope, store.order, False if dotted(store.value) == "False" else True)
    for node, scope, _ in facts.loops if "requires_grad" in facts.source else ():
        if not isinstance(node, cst.For) or not isinstance(node.iter, cst.Call) or not isinstance(node.iter.func, cst.Attribute):
            continue
        method = node.iter.func.attr.value
        target = node.target
        if method == "named_parameters" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            target = target.elements[1].value
        if method not in ("parameters", "named_parameters") or not isinstance(target, cst.Name):
            continue
        flags = [_requires_grad_set(n, target.value) for n in walk(node.body)]
        direct = [_requires_grad_set(small, target.value) for stmt in node.body.body if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body]
        iterated = facts.call_of(node.iter)  # the model as the loop sees it, not as the file's last assignment leaves it
        order = iterated.order if iterated is not None else None
        if any(flag is not False and flag is not None for flag in flags):
            mark(node.iter.func.value, scope, order, True)
        elif False in direct:
            mark(node.iter.func.value, scope, order, False)
    return frozenset((model, part) for model, part in frozen if model not in thawed), frozenset(thawed)


def _part(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int | None) -> tuple[int, str | None] | None:
    """(the model `expr` belongs to, WHOLE / BODY / HEAD (a task head or `lm_head`, and what is in it) / None for another part) for
    the model itself, its body attribute, or anything reached from it by attributes, items and method calls
    (`model.bert.encoder.layer[-1]`); None when it reaches no model."""
    depth = 0
    child = None  # the attribute taken directly off the expression looked at now
    while expr is not None:
        found = facts.kind(expr, scope, order)
        if found is not None and found.kind == "model" and found.call is not None:
            if depth > 0:
                return id(found.call), HEAD if child is not None and knowledge.is_head(child) else None
            if isinstance(expr, cst.Attribute) and (expr.attr.value in ("base_model", "model") or found.detail == PART):
                # the value layer's same model, or a part of it that is a model (`model.bert`, a seq2seq's `encoder`)
                body = _is_body(facts, found.call, expr.attr.value) or found.detail == PART and _is_layer_stack(facts, found.call, expr)
                return id(found.call), BODY if body else None
            return id(found.call), WHOLE
        if isinstance(expr, cst.Attribute):
            owner = facts.kind(expr.value, scope, order)
            if depth == 0 and owner is not None and owner.kind == "model" and owner.call is not None and (
                _is_body(facts, owner.call, expr.attr.value) or _is_layer_stack(facts, owner.call, expr)
            ):
                return id(owner.call), BODY
            child = expr.attr.value
            expr = expr.value
        elif isinstance(expr, cst.Subscript):
            child, expr = None, expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            child, expr = None, expr.func.value
        else:
            return None
        depth += 1
    return None


def _is_body(facts: Facts, load_call: Call, attribute: str) -> bool:
    """`attribute` of the model `load_call` made holds its pretrained body: `base_model`, or its type's `base_model_prefix`."""
    if attribute == "base_model":
        return True
    return any(attribute == knowledge.body_attribute(_model_type(facts, load)) for load in facts.model_loads if load.call is load_call)


def _is_layer_stack(facts: Facts, load_call: Call, expr: cst.Attribute) -> bool:
    """`model.bert.encoder`, `model.base_model.transformer`, `model.transformer.h`: every transformer layer of the body, on a
    known checkpoint that is encoder-only or decoder-only (a seq2seq model's `encoder` is half of it)."""
    body = expr.value
    if not (knowledge.is_layer_stack(expr.attr.value) and isinstance(body, cst.Attribute) and _is_body(facts, load_call, body.attr.value)):
        return False
    infos = [facts.checkpoint_info(load) for load in facts.model_loads if load.call is load_call]
    return bool(infos) and all(info is not None and info.architecture in ("encoder", "decoder") for info in infos)


def _model_type(facts: Facts, load) -> str | None:
    info = facts.checkpoint_info(load)
    if info is not None and info.model_type is not None:
        return info.model_type
    return knowledge.model_type_from_class_name(load.class_name.rsplit(".", 1)[-1])


def _requires_grad_set(node: cst.CSTNode, param: str) -> Any:
    """The flag `node` gives `param.requires_grad` (`p.requires_grad = False`, `p.requires_grad_(False)`), True when
    it cannot tell (anything but a literal False), None when `node` sets none."""
    if isinstance(node, cst.Assign) and any(
        isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" and dotted(t.target.value) == param for t in node.targets
    ):
        return False if dotted(node.value) == "False" else True
    if isinstance(node, cst.Expr):
        node = node.value
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "requires_grad_" and dotted(node.func.value) == param:
        return False if node.args and dotted(node.args[0].value) == "False" else True
    return None


@per_file
def untrained_models(facts: Facts) -> frozenset[int]:
    """The models (by the call that made them) whose weights no training step changes: frozen whole (`frozen_models`),
    or run only without gradients: the file shows forward passes of theirs, every one under `torch.no_grad()` /
    `torch.inference_mode()` (or a `generate`, which runs under `no_grad` itself), and hands them to no Trainer (which
    runs forwards of its own). A frozen feature extractor under a small trained head, a teacher beside its student."""
    forwards: dict[int, list[Call]] = {}
    for call in facts.calls:
        if is_model_call(facts, call) and (model := forward_model(facts, call)) is not None:
            forwards.setdefault(model, []).append(call)
    handed = {
        part[0] for trainer in facts.trainers
        if (arg := trainer.arg(0, "model")) is not None and (part := _part(facts, arg.value, trainer.scope, trainer.order)) is not None and part[1] == WHOLE
    }
    grad_free = {model for model, calls in forwards.items() if model not in handed and all(c.method == "generate" or under_grad_mode(facts, c, NO_GRAD_MODES) for c in calls)}
    return frozen_models(facts) | grad_free


def trainer_models(facts: Facts, args: Call | None = None) -> frozenset[int] | None:
    """The models (by the call that made them) a file trains when it trains only through Trainers, each handed a model the
    file made (`Trainer(model=cls_model)`): a model loaded only to lend its config or weights to another is not among
    them. With `args` (a TrainingArguments call), only the Trainers given it: the models its rate trains. None where
    the file also trains otherwise (a `backward`, a keras `fit`), a Trainer's model (or, with `args`, any Trainer's
    arguments) is not known, or no Trainer gets `args`."""
    if not facts.trainers or facts.backward_calls or facts.fit_calls:
        return None
    handed = set()
    for trainer in facts.trainers:
        if args is not None:
            given = trainer.arg(1, "args")
            kind = facts.kind(given.value, trainer.scope, trainer.order) if given is not None else None
            if kind is None or kind.kind != "training_args":
                return None
            if kind.call is not args:
                continue
        arg = trainer.arg(0, "model")
        part = _part(facts, arg.value, trainer.scope, trainer.order) if arg is not None else None
        if part is None or part[1] != WHOLE:
            return None
        handed.add(part[0])
    return frozenset(handed) if handed else None


@per_file
def optimised_models(facts: Facts) -> frozenset[int]:
    """The models (by the call that made them) whose parameters a torch optimizer gets: `AdamW(model.parameters())`,
    grouped parameters from `model.named_parameters()`, through a name bound once in the statement that reads them."""
    optimizers = _torch_optimizers(facts)
    found = set()
    for call in facts.calls:
        if call.method in ("parameters", "named_parameters") and call.receiver is not None:
            model = facts.kind(call.receiver, call.scope, call.order)
            if model is not None and model.kind in ("model", "module") and model.call is not None and _feeds(call, optimizers):
                found.add(id(model.call))
    return frozenset(found)


def _torch_optimizers(facts: Facts) -> list[Call]:
    """The file's torch optimizers: calls of the classes of `torch.optim`."""
    return [c for c in facts.calls if (c.qualname or "").startswith("torch.optim.") and c.qualname.rsplit(".", 1)[-1][:1].isupper()]


def _feeds(call: Call, optimizers: list[Call]) -> bool:
    """The statement of `call` builds one of `optimizers`, or binds a name that one of them is passed."""
    if any(o.stmt is call.stmt for o in optimizers):
        return True
    stmt = call.stmt
    targets = {t.target.value for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()) if isinstance(small, cst.Assign) for t in small.targets if isinstance(t.target, cst.Name)}
    return any(isinstance(a.value, cst.Name) and a.value.value in targets for o in optimizers for a in o.node.args)


def freezes_parameters(facts: Facts) -> bool:
    """`x.requires_grad = False` or `x.requires_grad_(False)` anywhere: some parameters of some model are frozen, so
    which of them train is not the whole model (a head over a frozen base trains the head alone, in its own dtype)."""
    return any(s.key == "requires_grad" and dotted(s.value) == "False" for s in facts.stores) or any(
        c.method == "requires_grad_" and facts.arg_value(c, 0, "requires_grad", default=True) is False for c in facts.calls
    )


def trained_model(facts: Facts) -> tuple[ModelLoad, knowledge.ModelInfo] | None:
    """The one known checkpoint the script trains (`trained_models`); None when there are several different ones or none."""
    found = trained_models(facts)
    return found[0] if found and len({info.id for _, info in found}) == 1 else None


@per_file
def trained_models(facts: Facts) -> list[tuple[ModelLoad, knowledge.ModelInfo]]:
    """Each load of a known checkpoint that the script may train, in the file's order: one of them is what trains
    (`if args.model_type == "bert": ... elif ...: ...` picks one by a command-line value), or each in turn (a notebook's
    cells training one model after another). A model the file never trains (`untrained_models`: frozen whole, or run
    only under `no_grad`) does not count, nor does the encoder-only class of an encoder-decoder checkpoint (its size is
    not the checkpoint's), nor a load that never runs (reach NEVER: in a script, a helper nothing calls,
    `def load_model(): ... from_pretrained("roberta-large")` left beside the `load_local_model(path)` that the run does
    call; a module of definitions keeps its functions, an importer may call them). Empty where nothing trains."""
    if facts.trainers and not (facts.backward_calls or facts.fit_calls) and not any(
        t.arg(0, "model") is not None or "model_init" in t.kwargs or t.has_double_star for t in facts.trainers
    ):
        return []  # `Trainer(args=...)` without a model raises at construction: nothing is trained
    if facts.backward_calls and not (facts.trainers or facts.fit_calls) and (optimizers := _torch_optimizers(facts)) and not any(
        trains_pretrained(facts, optimizer) for optimizer in optimizers
    ):
        return []  # every optimizer of the hand loop updates tensors the file made (a gradient-inversion attack's dummy inputs): no weights train
    found = []
    untrained = untrained_models(facts)
    for load in facts.model_loads:
        if id(load.call) in untrained or liveness(facts).reach(load.call.node) == NEVER:
            continue
        info = facts.checkpoint_info(load)
        if info is not None and not (info.architecture == "seq2seq" and load.class_name.endswith("EncoderModel")):
            found.append((load, info))  # `T5EncoderModel` of a seq2seq checkpoint holds the encoder alone: the table's counts are not its own
    return found


def trained_checkpoints(facts: Facts) -> list[tuple[ModelLoad, knowledge.ModelInfo]]:
    """Each checkpoint the run may train (`trained_models`) by its first load, in the file's order; where there are
    several, those whose model a torch optimizer (`optimised_models`) or a Trainer (`trainer_models`) is seen to get, where
    the file shows any (a model loaded only to score or write examples is not what trains)."""
    runs: dict[str, tuple[ModelLoad, knowledge.ModelInfo]] = {}
    for load, info in trained_models(facts):
        runs.setdefault(info.id, (load, info))
    if len(runs) > 1:
        shown = optimised_models(facts) | (trainer_models(facts) or frozenset())
        return [run for run in runs.values() if id(run[0].call) in shown] or list(runs.values())
    return list(runs.values())


# The transformers Trainers whose `compute_loss` takes the loss the model returns (a user subclass may compute its own;
# trl's trainers build labels themselves); the collators that build no labels (`DataCollatorWithPadding` pads what it is
# given and renames `label` to `labels`; `default_data_collator` stacks what it is given): trainer.py, data_collator.py, 5.24.
_PLAIN_TRAINERS = frozenset({"transformers.Trainer", "transformers.Seq2SeqTrainer", "transformers.trainer.Trainer", "transformers.trainer_seq2seq.Seq2SeqTrainer"})
_LABELLESS_COLLATORS = frozenset({"DataCollatorWithPadding", "default_data_collator"})


@per_file
def fails_before_a_step(facts: Facts) -> bool:
    """The file trains only through Trainers that raise at their first step (`trainer_without_loss`) or whose every
    `train()` the run never reaches (after a certain stop: `Trainer(TrainingArguments=args)`, a keyword no release takes,
    raises before its own `trainer.train()`) or that itself raises before a step (a dataset of the file's subclass of
    `datasets.Dataset` that never built its base: `library_stops`), hand loops whose every `backward()` is read of a str (`loss, logits =
    model(...)`: `attribute_stops`, AttributeError at the first step) or runs only after a statement of its loop that
    certainly raises (`stops.raises_before`: the call of a model whose `forward` unpacks a `ModelOutput`'s keys) or that
    the run never reaches (after a certain stop: `from_pretrained(..., load_in_4bit=True)` on 5.x), Keras `fit` calls the
    run never reaches, and Lightning `fit` calls never reached or that the target
    Lightning refuses before it (`removals.refused`: a module defining an epoch-end hook that
    Lightning 2.0 removed, checked in `fit`'s `_verify_loop_configurations` before the loop): no gradient, no optimizer
    state is ever made. The model is still the one the run means to train (its load is what it is)."""
    fits = facts.lightning_fits
    steps = [call for call in facts.backward_calls if not missing_attribute(facts, call.node.func) and not raises_before(facts, call.node, call.scope.node)]
    return bool(facts.trainers or fits or facts.backward_calls or facts.fit_calls) and _unreached(facts, [*steps, *facts.fit_calls]) \
        and all(trainer_without_loss(facts, t) or _never_trained(facts, t) for t in facts.trainers) and all(refused(facts, fit.node) or _unreached(facts, [fit]) for fit, _ in fits)


def _train_calls(facts: Facts, trainer: Call) -> list[Call]:
    """The file's `X.train()` calls whose receiver is the trainer `trainer` makes."""
    return [c for c in facts.calls_by_short.get("train", ()) if c.method == "train" and c.receiver is not None
            and (made := facts.kind(c.receiver, c.scope, c.order)) is not None and made.kind == "trainer" and made.call is trainer]


def _never_trained(facts: Facts, trainer: Call) -> bool:
    """The file trains `trainer` (a `train()` of it is found) and each of its `train()` calls is never reached or
    certainly raises before the first step (`library_stops.refused_call`: a dataset whose columns cannot be read)."""
    runs = _train_calls(facts, trainer)
    return bool(runs) and _unreached(facts, [c for c in runs if not refused_call(facts, c.node, {})])


def _unreached(facts: Facts, calls: list[Call]) -> bool:
    return all(liveness(facts).reach(c.node) is NEVER for c in calls)


def default_collated(facts: Facts, trainer: Call) -> dict[str, Any] | None:
    """Each key of the batches a plain transformers `Trainer` makes with its default collator of the items of the
    file's dataset class it trains on, with what it holds (the object, or None where not known): no `data_collator=`
    and no tokenizer given (`processing_class=`,
    4.x `tokenizer=`; then `DataCollatorWithPadding`, whose `tokenizer.pad` adds a mask), so `default_data_collator`
    (5.24 trainer.py:562-568; data/data_collator.py:123-154 stacks each key of the first item, `label`/`label_ids`
    made `labels`: no key added), where the file's `trainer.train()` may run. None where the keys are not certain
    (`brain.data.item_keys`)."""
    if trainer.qualname not in _PLAIN_TRAINERS or any(facts.gives(trainer, k) is not False for k in ("data_collator", "processing_class", "tokenizer")) \
            or any(trainer.arg(TRAINER_POSITION[k]) is not None for k in ("data_collator", "processing_class")):
        return None
    runs = _train_calls(facts, trainer)
    if not runs or _unreached(facts, runs):
        return None  # a Trainer the file never trains
    given = facts.given(trainer, TRAINER_POSITION["train_dataset"], "train_dataset")
    dataset = facts.kind(given, trainer.scope, trainer.order) if isinstance(given, cst.BaseExpression) else None
    keys = item_keys(facts, dataset)
    if keys is None:
        return None
    return {"labels" if k in ("label", "label_ids") else k: dataset_item(facts, dataset, k) for k in sorted(keys)}


def trainer_without_loss(facts: Facts, trainer: Call) -> bool:
    """A plain transformers `Trainer` of a causal LM whose training examples are exactly what a tokenizer call returns
    (`ds.map(lambda b: tok(b["text"], truncation=True))`: input ids and a mask, no labels) and whose collator builds no
    labels (none given, `DataCollatorWithPadding`, `default_data_collator`), without a `compute_loss_func`: a causal LM
    returns a loss only when given labels, so `Trainer.compute_loss` raises "The model did not return a loss from the
    inputs" at the first step (a `label` column of the data would give labels of the wrong shape, which fails too)."""
    if trainer.qualname not in _PLAIN_TRAINERS or "compute_loss_func" in trainer.kwargs or trainer.has_double_star:
        return False
    model = trainer.arg(0, "model")
    kind = facts.kind(model.value, trainer.scope, trainer.order) if model is not None else None
    if kind is None or kind.kind != "model" or not all(any(load.call is member.call and load.head == "causal-lm" for load in facts.model_loads) for member in kind.joined or (kind,)):
        return False  # (a model made on several paths: a causal LM on each)
    collator = trainer.arg(TRAINER_POSITION["data_collator"], "data_collator")
    if collator is not None:
        built = facts.kind(collator.value, trainer.scope, trainer.order)
        name = (built.call.qualname if built is not None and built.call is not None else facts.qualname(collator.value, trainer.scope)) or ""
        if name.rsplit(".", 1)[-1] not in _LABELLESS_COLLATORS:
            return False
    data = trainer.arg(TRAINER_POSITION["train_dataset"], "train_dataset")
    mapped = _mapping_call(facts, data.value, trainer.scope, trainer.order) if data is not None else None
    functions = [fn for call, fn, _ in map_calls(facts) if call is mapped]
    return bool(functions) and all(_returns_tokenizer_call(facts, fn) for fn in functions)


def _mapping_call(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None) -> Call | None:
    """The `.map(...)` call whose result `expr` is, through names and split subscripts (`tokenized["train"]`)."""
    chain = _dataset_chain(facts, expr, scope, order)
    return chain[0] if chain and chain[0].method == "map" else None


def _dataset_chain(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None) -> list[Call]:
    """The calls that made the dataset `expr` holds, last first: through names, split subscripts and `.map`/`.filter`/
    `.shuffle`/`.select` receivers, down to the call that built it (`Dataset.from_dict(...)`, `load_dataset(...)`); a
    split of a `DatasetDict({"train": ..., ...})` the file builds is the dataset it is given for that key."""
    chain: list[Call] = []
    split = None  # the key of the split subscript last taken (`tokenized["train"]`)
    for _ in range(8):
        while isinstance(expr, cst.Subscript):
            key = expr.slice[0].slice if len(expr.slice) == 1 else None
            split = facts.value(key.value, scope, order=order, cli=False) if isinstance(key, cst.Index) else None
            expr = expr.value
        if isinstance(expr, cst.Name):
            found = facts.latest_definition(expr, scope, order)
            if found is None or found.value is expr:
                return chain
            expr, scope, order = found.value, found.scope, found.order
            continue
        call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
        if call is None:
            return chain
        given = _split_given(facts, call, split)
        if given is not None:
            expr, scope, order = given, call.scope, call.order
            continue
        chain.append(call)
        if call.method not in _DATASET_STEPS or call.receiver is None:
            return chain
        expr, order = call.receiver, call.order
    return chain


def _split_given(facts: Facts, call: Call, split: Any) -> cst.BaseExpression | None:
    """The dataset a `datasets.DatasetDict({...})` call is given for the key `split`, where its argument is a dict display
    (or a name one plain assignment binds to one) with that constant key; None otherwise."""
    if call.qualname != "datasets.DatasetDict" or not isinstance(split, str) or len(call.positional) != 1:
        return None
    display = call.positional[0].value
    bound = facts.definition(display, call.scope, call.order) if isinstance(display, cst.Name) else None
    display = bound.value if bound is not None else display
    if not isinstance(display, cst.Dict) or not all(isinstance(e, cst.DictElement) for e in display.elements):
        return None
    given = [e.value for e in display.elements if facts.value(e.key, call.scope, order=call.order, cli=False) == split]
    return given[-1] if given else None


_DATASET_STEPS = frozenset({"map", "filter", "shuffle", "select", "train_test_split", "with_format", "remove_columns", "rename_column"})
FEW_EXAMPLES = 256  # a training set the file cuts to at most this many examples: a smoke or debug run, minutes of training in any precision


def trains_on_a_handful(facts: Facts) -> bool:
    """The file trains only through Trainers whose training set the file itself bounds to at most `FEW_EXAMPLES` examples,
    whatever `.map`s follow: a literal display (`Dataset.from_dict({"text": [three strings]})`, `Dataset.from_list([...])`), a
    `.select(range(N))` (`range(min(len(ds), N))` included), a `load_dataset(..., split="train[:N]")` slice, or the DataFrame of
    a `Dataset.from_pandas` bounded by its rows (`df.iloc[:1]`, `df.head(N)`: `_frame_rows`). A demo, smoke or
    debug run, whose speed no precision setting changes in a way that matters (its memory at the first step is BL502's)."""
    examples = examples_trained(facts)
    return examples is not None and examples <= FEW_EXAMPLES


@per_file
def examples_trained(facts: Facts) -> int | None:
    """The most examples the file trains on, where it trains only through Trainers whose training set the file itself
    bounds (the sources `trains_on_a_handful` reads): the largest of their bounds; None where one is not bounded or the
    file also trains otherwise (a `backward()`, keras `fit`)."""
    if not facts.trainers or facts.backward_calls or facts.fit_calls:
        return None
    bounds = [_examples_bound(facts, t) for t in facts.trainers]
    return None if None in bounds else max(bounds)


def _examples_bound(facts: Facts, trainer: Call) -> int | None:
    data = trainer.arg(TRAINER_POSITION["train_dataset"], "train_dataset")
    chain = _dataset_chain(facts, data.value, trainer.scope, trainer.order) if data is not None else []
    bounds = [b for b in (_examples_at_most(facts, call) for call in chain) if b is not None]
    return min(bounds) if bounds else None


def _examples_at_most(facts: Facts, made: Call) -> int | None:
    """The most examples the dataset `made` returns can hold, where the call itself says; None when it does not."""
    q = made.qualname or ""
    if made.short in ("from_dict", "from_list") and q.startswith("datasets.") and made.positional:
        return _display_length(facts, made)
    if made.short == "from_pandas" and q.startswith("datasets.") and made.positional:
        return _frame_rows(facts, made.positional[0].value, made.scope, made.order)
    if made.method == "select" and made.positional:
        return _range_stop(facts, made.positional[0].value, made)
    if made.short == "load_dataset" and q.startswith("datasets"):
        split = facts.kw_value(made, "split", cli=False, default=None)
        match = re.fullmatch(r"\s*\w+\s*\[\s*:\s*(\d+)\s*\]\s*", split) if isinstance(split, str) else None  # "train[:200]"
        return int(match.group(1)) if match else None
    return None


def _display_length(facts: Facts, made: Call) -> int | None:
    display = made.positional[0].value
    found = facts.definition(display, made.scope, made.order) if isinstance(display, cst.Name) else None
    display = found.value if found is not None else display
    if made.short == "from_list":
        columns = [display]
    elif isinstance(display, cst.Dict) and all(isinstance(e, cst.DictElement) for e in display.elements):
        columns = [e.value for e in display.elements]
    else:
        return None
    if not columns or not all(isinstance(c, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in c.elements) for c in columns):
        return None
    return max(len(c.elements) for c in columns)


# DataFrame methods whose result holds at most the rows of the frame they are called on: those that keep them one to one
# and those that take some (`frame_rows`' tables), and `drop` (columns or rows: never more)
_ROWS_AT_MOST_THE_FRAMES = ROW_KEEPING | ROW_SUBSETS | {"drop"}
# DataFrame methods that keep the first or last `n` rows, or draw `n` of them, `n` their first parameter (pandas
# `DataFrame.head(n=5)`, `tail(n=5)`, `sample(n=None, frac=None, replace=False, ...)`: n rows, one by default unless
# `frac=` is given)
_FIRST_N = {"head": 5, "tail": 5, "sample": 1}


def _frame_rows(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None) -> int | None:
    """The most rows the DataFrame `expr` holds, where the file bounds them: through names and the frame methods that
    keep or drop rows (`_ROWS_AT_MOST_THE_FRAMES`, a column or mask subscript), the least of the bounds met on the way:
    a positional row slice (`df.iloc[:1]`, `df[:100]`, `df.iloc[10:20]`), `df.head(N)`/`tail(N)`/`sample(n=N)`, or
    a frame made by `pd.DataFrame(records)` of constant records (a list of row dicts, or a dict of column lists). None
    where nothing on the way bounds them (`sample(frac=...)` may repeat rows)."""
    bounds: list[int] = []
    for _ in range(12):
        if isinstance(expr, cst.Name):
            found = facts.latest_definition(expr, scope, order)
            if found is None or found.value is expr:
                break
            expr, scope, order = found.value, found.scope, found.order
        elif isinstance(expr, cst.Subscript):
            rows = expr.value
            if isinstance(rows, cst.Attribute) and rows.attr.value == "iloc":
                rows = rows.value
            elif isinstance(rows, cst.Attribute):
                break  # `df.loc[...]` takes labels, inclusive; any other attribute is no frame's rows
            bound = _slice_length(facts, expr, scope, order)
            bounds += [bound] if bound is not None else []
            expr = rows  # a row slice, a column, a row mask: at most the frame's rows
        elif isinstance(expr, cst.Call) and (call := facts.call_of(expr)) is not None:
            if "frac" in call.kwargs:
                break
            if call.method not in _ROWS_AT_MOST_THE_FRAMES or call.receiver is None:  # the frame a call made (through the file's functions)
                table = facts.evaluate(expr, scope, order)
                frame = table.call if isinstance(table, Instance) and table.kind == "table" and table.call.qualname == "pandas.DataFrame" else None
                bound = _records(facts, frame) if frame is not None else None
                bounds += [bound] if bound is not None else []
                break
            if call.method in _FIRST_N:
                n = facts.arg_value(call, 0, "n", cli=False, default=_FIRST_N[call.method])
                bounds += [n] if isinstance(n, int) and not isinstance(n, bool) else []
            expr = call.receiver
        else:
            break
    return min(bounds) if bounds else None


def _slice_length(facts: Facts, subscript: cst.Subscript, scope: Scope, order: int | None) -> int | None:
    """How many rows a positional slice `x[a:b]` (constant, non-negative bounds, no step) can hold: b - a."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Slice):
        return None
    part = subscript.slice[0].slice
    lower = facts.value(part.lower, scope, order=order, cli=False) if part.lower is not None else 0
    upper = facts.value(part.upper, scope, order=order, cli=False) if part.upper is not None else None
    known = all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (lower, upper))
    return max(upper - lower, 0) if known and part.step is None else None


def _records(facts: Facts, frame: Call) -> int | None:
    """The rows of `pd.DataFrame(records)` of constant records (a list of row dicts, or a dict of column lists)."""
    if len(frame.positional) != 1 or frame.kwargs.keys() - {"columns"}:
        return None
    records = facts.value(frame.positional[0].value, frame.scope, order=frame.order, cli=False)
    if isinstance(records, (list, tuple)):
        return len(records)
    if isinstance(records, dict) and records and all(isinstance(column, (list, tuple)) for column in records.values()):
        return max(len(column) for column in records.values())
    return None


def _range_stop(facts: Facts, expr: cst.BaseExpression, at: Call) -> int | None:
    """The stop of `range(N)`/`range(a, N)` (or `list(range(...))`) as an upper bound; `min(len(ds), N)` bounds it by N."""
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is not None and call.qualname == "builtins.list" and len(call.positional) == 1:
        return _range_stop(facts, call.positional[0].value, at)
    if call is None or call.qualname != "builtins.range" or not 1 <= len(call.positional) <= 2:
        return None
    stop = call.positional[-1].value
    inner = facts.call_of(stop) if isinstance(stop, cst.Call) else None
    candidates = [a.value for a in inner.positional] if inner is not None and inner.qualname == "builtins.min" else [stop]
    values = [facts.value(c, at.scope, order=at.order, cli=False) for c in candidates]
    known = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return min(known) if known else None


def _returns_tokenizer_call(facts: Facts, fn: cst.FunctionDef | cst.Lambda) -> bool:
    """Every return of `fn` is a tokenizer call itself (`return tokenizer(...)`), nothing added to its encoding."""
    returned = facts.return_values(fn)
    calls = {id(c.node) for c in facts.tokenizer_calls}
    return bool(returned) and all(isinstance(r, cst.Call) and id(r) in calls for r in returned)


def trains_pretrained(facts: Facts, optimizer: Call) -> bool:
    """Whether a torch optimizer built over `x.parameters()` may train pretrained transformer weights: False when `x` is a
    plain module (an `nn.Sequential`, the file's own head, the file's own module holding no unfrozen pretrained model), a head
    of the model or of the file's own module (`model.classifier`, `model.score`, `model.lm_head`), or a model whose
    pretrained weights the file freezes, or tensors the file made itself (`[torch.randn(..., requires_grad=True)]`, an
    `nn.Parameter`: a gradient-inversion attack's dummy input, a soft prompt); True otherwise (unknown parameters included)."""
    params = optimizer.arg(0, "params")
    if params is not None and own_tensors(facts.evaluate(params.value, optimizer.scope, optimizer.order)):
        return False
    if params is None or not isinstance(params.value, cst.Call) or not isinstance(params.value.func, cst.Attribute):
        return True
    func = params.value.func
    if func.attr.value != "parameters":
        return True
    owner = func.value
    kind = facts.kind(owner, optimizer.scope, optimizer.order)
    if kind is not None and kind.kind == "module" and kind.call is not None:
        idle = frozen_bodies(facts) | untrained_models(facts)  # frozen, or run only under `no_grad`: its gradients stay None
        return any(model not in idle for model in held_models(facts, kind.call))
    if kind is not None:
        return kind.kind == "model" and (kind.call is None or id(kind.call) not in frozen_bodies(facts))
    if isinstance(owner, cst.Attribute) and knowledge.is_head(owner.attr.value):
        model = facts.kind(owner.value, optimizer.scope, optimizer.order)
        if model is not None and model.kind in ("model", "module"):
            return False  # the head alone: of a transformers model, or of the file's own module (its `nn.Linear` over a body)
    name = dotted(owner)
    if name is None or "." in name or not (values := facts.assigned_values(name, optimizer.scope)):
        return True
    return any(_handed_a_model(facts, value) for value in values)  # an object of a class the file imports from its project


def _handed_a_model(facts: Facts, value: cst.BaseExpression | None) -> bool:
    """`value` builds an object out of a transformers model or module it is handed (`models.Model(backbone=xlmr, head=head)`):
    it may train that model's pretrained weights; unless the file freezes parameters anywhere (`name.startswith("bert")`
    over the object's `named_parameters()`): which of the object's train is then not evident."""
    call = facts.call_of(value) if isinstance(value, cst.Call) else None
    return call is not None and not freezes_parameters(facts) and any(
        (found := facts.kind(arg.value, call.scope, call.order)) is not None and found.kind in ("model", "module") for arg in call.node.args)


def held_models(facts: Facts, module_call: Call) -> list[int]:
    """The pretrained models (by the call that loaded them) an instance of the file's own torch module holds: handed to
    its constructor (`BERT_Arch(bert)`; each model a name bound on several branches may hold, `if args.model_type ==
    "bert": encoder = BertModel.from_pretrained(...)` `elif ...`), or loaded in its class body (`self.bert =
    BertModel.from_pretrained(...)`)."""
    held = [id(member.call) for arg in module_call.node.args
            if (found := facts.kind(arg.value, module_call.scope, module_call.order)) is not None and found.kind == "model"
            for member in found.joined or (found,) if member.call is not None]
    cls = facts.classes.get((module_call.qualname or "").rsplit(".", 1)[-1])
    if cls is not None:
        held += [id(load.call) for load in facts.model_loads if enclosing_class(load.call.scope) is cls.scope]
    return held


def params_without_rates(facts: Facts, call: Call) -> bool:
    """A torch optimizer's parameters (its first argument, through a name's one definition) are `x.parameters()` (or a
    filter of them), or a list literal of groups none of which sets `"lr"`: the optimizer's own rate is every group's;
    anything else (a helper's result, a comprehension) may carry per-group rates."""
    params = call.arg(0, "params")
    bound = facts.definition(params.value, call.scope, call.order) if params is not None else None
    if bound is None:
        return False
    expr = bound.value
    text = facts.text(expr)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return all(isinstance(e.value, cst.Dict) for e in expr.elements) and "'lr'" not in text and '"lr"' not in text
    return isinstance(expr, cst.Call) and (text.endswith("parameters()") or dotted(expr.func) == "filter" and text.endswith("parameters())"))


def keras_trains_pretrained(facts: Facts, optimizer: Call) -> bool:
    """Whether a keras optimizer may train pretrained transformer weights: False when every `compile` given it (built in the
    call, or a name bound to it) compiles a keras `Sequential` none of whose layers (constructor or `.add`) is a transformer
    model, and there is at least one such `compile`; True otherwise."""
    targets = []
    for call in facts.calls:
        if call.method != "compile" or (arg := call.arg(0, "optimizer")) is None:
            continue
        built = arg.value
        if not isinstance(built, cst.Call):
            bound = facts.definition(built, call.scope, call.order)
            built = bound.value if bound is not None else None
        if built is optimizer.node:
            targets.append(facts.kind(call.receiver, call.scope, call.order))
    return not targets or any(t is None or t.kind != "keras_model" or _holds_model(facts, t.call) for t in targets)


def _holds_model(facts: Facts, sequential: Call | None) -> bool:
    """A keras `Sequential` built with, or later given (`.add`), a layer that may be a transformer model; any other keras
    model (a functional `Model(inputs, outputs)`, whose layers its arguments do not show) may."""
    if sequential is None or sequential.short != "Sequential":
        return True
    layers = [(a.value, sequential) for a in sequential.node.args]
    for call in facts.calls:
        if call.method == "add" and call.positional:
            owner = facts.kind(call.receiver, call.scope, call.order)
            if owner is not None and owner.call is sequential:
                layers.append((call.positional[0].value, call))
    for expr, where in layers:
        for node in walk(expr):
            if isinstance(node, (cst.Name, cst.Attribute, cst.Call)):
                found = facts.kind(node, where.scope, where.order)
                if found is not None and found.kind == "model":
                    return True
    return False
