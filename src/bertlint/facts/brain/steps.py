"""The methods a training library calls on the file's own classes, and what it passes their parameters.

A step method has no call site in the file: the library calls it with a batch of the data the file hands the library.
Each table row says which of the file's values become which parameter; every source that may flow is joined
(`agree`), and a source the file does not show makes the parameter unknown.

PyTorch Lightning (lightning 2.x src/lightning/pytorch/trainer/trainer.py:528 `fit(model, train_dataloaders=None,
val_dataloaders=None, datamodule=None, ckpt_path=None, ...)`, :642 `validate(model=None, dataloaders=None,
ckpt_path=None, verbose=True, datamodule=None, ...)`, :760 `test(...)` alike, :879 `predict(model=None,
dataloaders=None, datamodule=None, ...)`; `train_dataloaders`/`dataloaders` may be a LightningDataModule; 1.x named the
first `train_dataloader`): `training_step(self, batch, batch_idx)` receives an element of the loader `fit` is given,
else of the datamodule's `train_dataloader()`, else of the module's own; `validation_step`, `test_step`,
`predict_step` alike with their loaders. A `transfer_batch_to_device`, `on_before_batch_transfer` or
`on_after_batch_transfer` hook (core/hooks.py:565-659) changes the batch: unknown. `forward` runs for `self(...)` in
the module's methods, for the default `predict_step` (core/module.py: `return self(batch)`) and for the model summary
of `example_input_array`: the last two unknown.

transformers `Trainer` (5.24 trainer.py:379 `__init__(model, args, data_collator, train_dataset, eval_dataset, ...)`,
the same first five in 4.x): `training_step(self, model, inputs, ...)` (:2051), `compute_loss(self, model, inputs,
return_outputs=False, ...)` (:2130, called by `training_step` :2090 and `prediction_step` :3275) and
`prediction_step(self, model, inputs, ...)` (:3193) receive the Trainer's `model=` (wrapped, the same model) and a batch
its `data_collator` made (:568, every loader's `collate_fn` :1018-1026): a transformers collator's batch, or what the
file's collate function returns; that function receives the list of the dataset's items of one batch. Without
`data_collator=` the batch is the default collator's (:562-568: `DataCollatorWithPadding(processing_class)` for a
tokenizer, else `default_data_collator`), a collated dict whose padding is not known. A subclass's own `__init__`, or
an override of how batches are made or prepared: unknown.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import UNKNOWN, Binding, Function, Instance, agree
from bertlint.facts.brain.data import ITEMS, handed_elsewhere
from bertlint.facts.functions import ancestors, callable_returns, called_directly, defined_at, enclosing_class, family, function_scope, first_handed_parameter, hands, method_sites
from bertlint.facts.model import per_file
from bertlint.facts.names import TRAINER_POSITION
from bertlint.facts.nodes import Call, ClassDef, Scope, dotted

LIGHTNING_ROOTS = ("pytorch_lightning", "lightning")
# `Trainer(precision=...)` -> trains in 16-bit (mixed or true half) or fp8: True; in fp32: False. lightning 2.x
# fabric/plugins/precision/precision.py `_PRECISION_INPUT`: 64/32/16, the aliases "64"/"32"/"16"/"bf16" of
# "64-true"/"32-true"/"16-mixed"/"bf16-mixed" (`_PRECISION_INPUT_STR_ALIAS_CONVERSION`), "16-true", "bf16-true",
# "transformer-engine", "transformer-engine-float16"; the default "32-true". 1.x trainer/connectors/
# accelerator_connector.py: 16 and "bf16" build a mixed precision plugin (native AMP, or apex with `amp_backend="apex"`),
# 32 (the default) `PrecisionPlugin()`. 64 (double) and any other value: neither.
LIGHTNING_PRECISION = {
    16: True, "16": True, "16-mixed": True, "bf16": True, "bf16-mixed": True, "16-true": True, "bf16-true": True,
    "transformer-engine": True, "transformer-engine-float16": True, 32: False, "32": False, "32-true": False,
}
LIGHTNING_PRECISION_DEFAULT = 32
# How each release spells mixed precision in `Trainer(precision=...)`, newest first: (from release, bf16, fp16); None where the
# release has no bf16. 2.0.0 lightning_fabric/plugins/precision/precision.py `_PRECISION_INPUT_STR` "16-mixed"/"bf16-mixed" (the
# default "32-true"; 16 and "bf16" are still taken as aliases); 1.5.0 to 1.9.5 trainer/connectors/accelerator_connector.py
# `precision in (16, "bf16")` (the default 32; "16-mixed" is refused there); 1.4.9 `select_precision_plugin`: 16 alone.
LIGHTNING_MIXED_SPELLINGS = (((2, 0), '"bf16-mixed"', '"16-mixed"'), ((1, 5), '"bf16"', "16"), ((0,), None, "16"))


def lightning_spellings(release: tuple[int, ...]) -> tuple[str | None, str]:
    """(bf16, fp16): how the Lightning `release` spells mixed precision in `Trainer(precision=...)`."""
    return next((bf16, fp16) for since, bf16, fp16 in LIGHTNING_MIXED_SPELLINGS if release >= since)


LIGHTNING_PRECISION_OVERRIDES = ("plugins",)  # a precision plugin handed in decides instead
# step -> (the module's and datamodule's loader hook, the trainer calls that run it: (method, position, keywords))
LIGHTNING_STEPS = {
    "training_step": ("train_dataloader", (("fit", 1, ("train_dataloaders", "train_dataloader")),)),
    "validation_step": ("val_dataloader", (("fit", 2, ("val_dataloaders",)), ("validate", 1, ("dataloaders",)))),
    "test_step": ("test_dataloader", (("test", 1, ("dataloaders",)),)),
    "predict_step": ("predict_dataloader", (("predict", 1, ("dataloaders",)),)),
}
LIGHTNING_DATAMODULE_AT = {"fit": 3, "validate": 4, "test": 4, "predict": 2}  # position of `datamodule=`
BATCH_HOOKS = ("transfer_batch_to_device", "on_before_batch_transfer", "on_after_batch_transfer")
SUMMARY_INPUT = "example_input_array"

HF_TRAINERS = ("transformers.Trainer", "transformers.Seq2SeqTrainer")
HF_STEPS = frozenset({"training_step", "compute_loss", "prediction_step"})  # (self, model, inputs, ...)
# Trainer methods whose override changes which batches or which model reach the steps
HF_BATCH_MAKERS = frozenset({"get_train_dataloader", "get_eval_dataloader", "get_test_dataloader", "_get_dataloader", "_prepare_inputs", "_prepare_input", "_remove_unused_columns", "_get_collator_with_removed_columns"})
HF_MODEL_MAKERS = frozenset({"_wrap_model"})


def call(ev, call) -> Any:
    """A Lightning `Trainer(...)`: what its `fit`/`validate`/`test`/`predict` are called on."""
    if is_lightning_trainer(call.qualname):
        return Instance("lightning_trainer", call)
    return None


def is_lightning_trainer(qualname: str | None) -> bool:
    """`qualname` is Lightning's `Trainer` (`pytorch_lightning.Trainer`, `lightning.Trainer`, `lightning.pytorch.Trainer`)."""
    return bool(qualname) and _lightning(qualname, "Trainer")


def parameter(ev, owner: Scope, name: str) -> Any:
    collated = _collator_items(ev, owner, name)
    if collated is not None:
        return collated
    fn, cls = owner.node, _class_of(ev.f, owner)
    if cls is None or not isinstance(fn, cst.FunctionDef) or fn.decorators:
        return None
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)][1:]
    bases = {b for c in family(ev.f, cls) for b in ev.f.class_bases(f"<local>.{c.name}")}
    method = fn.name.value
    if any(_lightning(b, "LightningModule") for b in bases):
        if method in LIGHTNING_STEPS and params[:1] == [name]:
            return _lightning_batch(ev, cls, method)
        if method == "forward" and name in params:
            return _lightning_forward(ev, cls, fn, owner, name)
    if method in HF_STEPS and name in params[:2] and any(same(b, t) for b in bases for t in HF_TRAINERS):
        return _trainer_argument(ev, cls, fn, params.index(name))
    return None


def _class_of(values, owner: Scope) -> ClassDef | None:
    scope = owner.parent
    if scope is None or scope.kind != "class":
        return None
    cls = values.classes.get(scope.name)
    return cls if cls is not None and cls.scope is scope else None


def _lightning(qualname: str, last: str) -> bool:
    return qualname.split(".", 1)[0] in LIGHTNING_ROOTS and qualname.rsplit(".", 1)[-1] == last


def same(found: str, wanted: str) -> bool:
    return found.split(".", 1)[0] == wanted.split(".", 1)[0] and found.rsplit(".", 1)[-1] == wanted.rsplit(".", 1)[-1]


# ---- Lightning ---------------------------------------------------------------------------------


def _lightning_batch(ev, cls: ClassDef, step: str) -> Any:
    """An element of every loader that may feed `step`, joined; UNKNOWN where one is not seen."""
    hook, runs = LIGHTNING_STEPS[step]
    values = ev.f
    if _defines(family(values, cls), BATCH_HOOKS) or values.calls_by_short.get(step):
        return UNKNOWN  # the batch changed by a hook, or the step called by the file itself
    found = []
    for trainer_method, position, keywords in runs:
        for site in values.calls_by_short.get(trainer_method, ()):
            if site.method != trainer_method or not _may_run(ev, site, cls):
                continue
            if site.has_star_args:
                return UNKNOWN
            loaders = next((site.kwargs[k] for k in keywords if k in site.kwargs), None) or site.arg(position)
            datamodule = site.arg(LIGHTNING_DATAMODULE_AT[trainer_method], "datamodule")
            given = _evaluated(ev, loaders, site)
            if given is not None:
                found.append(_batches(ev, given, hook))
            elif datamodule is not None:
                found.append(_batches(ev, _evaluated(ev, datamodule, site), hook))
            else:
                own = _hook_loader(ev, cls, hook)
                if own is not None or step == "training_step":
                    found.append(UNKNOWN if own is None else _element(ev, own))
    return agree(found) if found else UNKNOWN


def _may_run(ev, site: Call, cls: ClassDef) -> bool:
    """`trainer.fit(model, ...)` may run `cls`'s steps: a Lightning trainer (or an object the file does not show) given
    an instance of `cls`'s family, or a model it does not show (omitted: the one it fitted)."""
    receiver = ev.sub(site.receiver, site.scope, site.order) if site.receiver is not None else UNKNOWN
    if receiver is not UNKNOWN and not (isinstance(receiver, Instance) and receiver.kind == "lightning_trainer"):
        return False  # a Keras model's or sklearn estimator's `fit`
    model = site.arg(0, "model")
    found = ev.sub(model.value, site.scope, site.order) if model is not None else UNKNOWN
    return found is UNKNOWN or _of_family(ev.f, found, cls)


def _of_family(values, found: Any, cls: ClassDef) -> bool:
    names = {c.name for c in family(values, cls)}
    if isinstance(found, Instance):
        return found.kind == "instance" and found.detail.name in names
    return isinstance(found, Binding) and found.kind == "module" and found.call is not None and found.call.qualname in {f"<local>.{n}" for n in names}


def _evaluated(ev, arg, site: Call) -> Any:
    """The value of a trainer call's argument; None where it is not passed (or passed as None)."""
    return None if arg is None else ev.sub(arg.value, site.scope, site.order)


def _batches(ev, given: Any, hook: str) -> Any:
    """An element of what a trainer call is given: a loader, or a datamodule of the file whose hook returns one."""
    if isinstance(given, Instance) and given.kind == "instance":
        dm = given.detail
        if not any(_lightning(b, "LightningDataModule") for b in ev.f.class_bases(f"<local>.{dm.name}")) or _defines(ancestors(ev.f, dm), BATCH_HOOKS):
            return UNKNOWN
        loader = _hook_loader(ev, dm, hook, ancestors(ev.f, dm))
        return UNKNOWN if loader is None else _element(ev, loader)
    return _element(ev, given)


def _element(ev, loader: Any) -> Any:
    """A batch of a DataLoader (a list or dict of loaders combines theirs: unknown)."""
    return ev.f.elements_of(loader) if isinstance(loader, Binding) and loader.kind == "dataloader" else UNKNOWN


def _hook_loader(ev, cls: ClassDef, hook: str, classes: list[ClassDef] | None = None) -> Any:
    """What the `train_dataloader()` (or another loader hook) of the class's family returns, every `return` agreeing;
    None where no class of the family defines it, UNKNOWN where several do."""
    defining = [c for c in (family(ev.f, cls) if classes is None else classes) if hook in c.methods]
    if not defining:
        return None
    if len(defining) > 1:
        return UNKNOWN
    fn = defining[0].methods[hook]  # an instance of a class without it runs Lightning's, which raises
    returned = ev.f.return_values(fn)
    scope = function_scope(ev.f, fn)
    return agree([ev.f.evaluate(r, scope, None, cli=ev.cli) if r is not None else None for r in returned]) if returned else UNKNOWN


def _defines(classes: list[ClassDef], methods) -> bool:
    return any(m in c.methods for c in classes for m in methods)


def _lightning_forward(ev, cls: ClassDef, fn: cst.FunctionDef, owner: Scope, name: str) -> Any:
    """`forward`'s parameter: what every `self(...)`/`self.forward(...)` of the module's methods and every call of an
    instance passes; unknown where Lightning calls it itself (the default `predict_step` run by `trainer.predict`, the
    summary of `example_input_array`) or a call passes the receiver itself."""
    values = ev.f
    classes = family(values, cls)
    if any(SUMMARY_INPUT == key for obj, key in values.stored_attributes if obj == "self") or any(SUMMARY_INPUT in c.scope.events for c in classes):
        return UNKNOWN
    if not _defines(classes, ("predict_step",)) and any(c.method == "predict" for c in values.calls_by_short.get("predict", ())):
        return UNKNOWN
    sites = method_sites(values, cls.name, fn)
    return _passed(ev, sites, fn, owner, name) if sites else UNKNOWN


def _on_self(receiver) -> bool:
    return dotted(receiver) == "self" or isinstance(receiver, cst.Call) and dotted(receiver.func) == "super"


def _passed(ev, sites: list[Call], fn: cst.FunctionDef, owner: Scope, name: str) -> Any:
    """What every call of the method `fn` passes for `name` (its default where one omits it), joined."""
    found = []
    for site in sites:
        frame = ev.f.frame_for(site, fn, True, None)
        if frame is None:
            return UNKNOWN
        if name in frame.args:
            bound = frame.args[name]
            found.append(UNKNOWN if bound is None else ev.f.evaluate(bound[0], bound[1], bound[2], cli=ev.cli))
        else:
            default = owner.params[name].default
            found.append(ev.f.evaluate(default, owner.parent, defined_at(owner), cli=ev.cli) if default is not None else UNKNOWN)
    return agree(found)


# ---- transformers Trainer ----------------------------------------------------------------------


def _trainer_argument(ev, cls: ClassDef, fn: cst.FunctionDef, index: int) -> Any:
    """The Trainer's `model=` (index 0) or one of its collator's batches (1) for every construction of the subclass's
    family, joined with what the family's own `self.step(...)`/`super().step(...)` calls pass."""
    values = ev.f
    classes = family(values, cls)
    if _defines(classes, ("__init__",)) or _defines(classes, HF_MODEL_MAKERS if index == 0 else HF_BATCH_MAKERS):
        return UNKNOWN
    names = {f"<local>.{c.name}" for c in classes}
    built = [c for c in values.calls if c.qualname in names]
    if not built:
        return UNKNOWN  # constructed elsewhere
    found = []
    for made in built:
        if made.has_star_args:
            return UNKNOWN
        if index == 0:
            model = made.arg(0, "model")
            found.append(ev.sub(model.value, made.scope, made.order) if model is not None else UNKNOWN)
        else:
            found.append(_collated(ev, made))
    method = fn.name.value
    scopes = {id(c.scope) for c in classes}
    own = [c for c in values.calls_by_short.get(method, ()) if c.method == method and _on_self(c.receiver) and id(enclosing_class(c.scope)) in scopes]
    if any(c.method == method and not _on_self(c.receiver) for c in values.calls_by_short.get(method, ())):
        return UNKNOWN  # `trainer.compute_loss(...)` called by the file on an instance
    owner = function_scope(values, fn)
    if own:
        found.append(_passed(ev, own, fn, owner, [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)][1 + index]))
    return agree(found)


def _collator_items(ev, owner: Scope, name: str) -> Any:
    """The first parameter of a function the file hands a transformers Trainer as `data_collator`: the list of the
    dataset's items of one batch (the collator is every loader's `collate_fn`); UNKNOWN where the file also calls it
    or hands it to another call. None for any other parameter."""
    fn = first_handed_parameter(ev.f, owner, name)
    if fn is None:
        return None
    sites = [c for c in _trainer_builds(ev.f) if (arg := c.arg(TRAINER_POSITION["data_collator"], "data_collator")) is not None and hands(ev.f, arg.value, c, fn)]
    if not sites:
        return None
    return UNKNOWN if called_directly(ev.f, fn) or handed_elsewhere(ev.f, fn, sites) else ITEMS


@per_file
def _trainer_builds(values) -> list[Call]:
    """The file's calls that construct a transformers Trainer, or a subclass of the file's (found once per file: each
    parameter handed to a Trainer asks)."""
    return [call for call in values.calls if _builds_trainer(values, call)]


def _builds_trainer(values, call: Call) -> bool:
    """`call` constructs a transformers Trainer, or a subclass of the file's."""
    q = call.qualname
    bases = values.class_bases(q) if q and q.startswith("<local>.") else {q} if q else set()
    return any(same(b, t) for b in bases if b for t in HF_TRAINERS)


def _collated(ev, made: Call) -> Any:
    """A batch the Trainer `made` collates: a transformers collator's, the default collator's (which one unknown: its
    collator is no class a rule knows), or what the file's collate function returns."""
    arg = made.arg(TRAINER_POSITION["data_collator"], "data_collator")
    if arg is None:  # the default: `DataCollatorWithPadding(processing_class)` or `default_data_collator`, whichever
        return Binding("collated", made, Binding("collator", made))
    collator = ev.sub(arg.value, made.scope, made.order)
    if isinstance(collator, Binding) and collator.kind == "collator":
        return Binding("collated", made, collator)
    if isinstance(collator, Function) or collator is UNKNOWN:
        returned = callable_returns(ev.f, arg.value, made)
        if returned:
            return agree([ev.f.evaluate(value, scope, None, cli=ev.cli, frame=frame) for value, scope, frame in returned])
    return UNKNOWN
