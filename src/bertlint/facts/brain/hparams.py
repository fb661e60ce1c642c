"""Lightning's `self.save_hyperparameters()`: `self.hparams.x` holds what the `__init__` parameter `x` held when it ran.

lightning 2.5.0 (checked in the wheel): `HyperparametersMixin.save_hyperparameters(*args, ignore=None, frame=None,
logger=True)` (core/mixins/hparams_mixin.py, a base of `LightningModule` and `LightningDataModule`) takes its caller's
frame and calls `utilities/parsing.py:146 save_hyperparameters`: with no positional argument, `hp` is every init
argument (`collect_init_args` -> `_get_init_args`: `{k: local_vars[k] for k in inspect.signature(cls.__init__)
.parameters}` of the `__init__` frame, the values its locals hold at the call, `**kwargs` merged, `self`/`*args`/
`**kwargs` left out) less the names in `ignore` (a str, or a list/tuple of them); `_set_hparams` makes it an
`AttributeDict`, which `hparams` returns. Where the frame has no `__class__` cell (an `__init__` that never names
`super` nor `__class__`), `_get_init_args` returns `{}`; the frames above an `__init__` are collected too where they are
methods of another such object (`collect_init_args` recursion), and a subclass's `__init__` adds its own arguments.

So only the plain case is modelled: one class of the family defines `__init__`, a Lightning module or datamodule; it
calls `self.save_hyperparameters()` (no positional argument, `ignore=` literal names) once, as a statement of its own
body, and names `super`; the file constructs the class only by its name, outside any class; nothing stores into,
mutates or hands along `hparams`, nor loads the class from a checkpoint (`load_from_checkpoint` builds it from the saved
hyperparameters). Anything else: unknown.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import UNKNOWN, Instance
from bertlint.facts.brain.steps import LIGHTNING_ROOTS
from bertlint.facts.functions import enclosing_class, family, function_scope
from bertlint.facts.model import per_file
from bertlint.facts.nodes import ClassDef, Scope, dotted, literal, walk

ATTRIBUTE = "hparams"
SAVER = "save_hyperparameters"
MIXINS = ("LightningModule", "LightningDataModule", "HyperparametersMixin")
SAVER_KEYWORDS = ("ignore", "logger")
CHECKPOINT_LOADERS = ("load_from_checkpoint",)


def self_attribute(ev, scope: Scope, attr: str) -> Any:
    """`self.hparams` in a method of the class whose body is `scope`, where no class of the file binds it."""
    if attr != ATTRIBUTE:
        return None
    cls = ev.f.classes.get(scope.name) if scope is not None else None
    if cls is None or cls.scope is not scope:
        return None
    saved = _saved(ev.f, cls)
    return UNKNOWN if saved is None else Instance("lightning_hparams", None, saved)


def attribute(ev, base, attr: str) -> Any:
    """`self.hparams.x`: the `__init__` parameter `x` read where `save_hyperparameters()` runs."""
    if not isinstance(base, Instance) or base.kind != "lightning_hparams":
        return None
    init_scope, order, ignored = base.detail
    if attr not in init_scope.params or attr in ignored or _unnamed(init_scope, attr):
        return UNKNOWN
    return ev.f.named_at(attr, init_scope, order, ev.cli, None)


def _unnamed(init_scope: Scope, name: str) -> bool:
    """`self`, `*args` or `**kwargs` of the `__init__`: left out of the hyperparameters."""
    params = init_scope.node.params
    first = [*params.posonly_params, *params.params][:1]
    stars = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return any(p.name.value == name for p in (*first, *stars))


def _saved(values, cls: ClassDef) -> tuple[Scope, int, frozenset[str]] | None:
    """(the `__init__`'s scope, the order of its `save_hyperparameters()` call, the names ignored), or None."""
    classes = family(values, cls)
    defining = [c for c in classes if "__init__" in c.methods]
    if len(defining) != 1 or ATTRIBUTE in _handled(values) or _loaded(values, classes):
        return None
    owner = defining[0]
    if not any(b.split(".", 1)[0] in LIGHTNING_ROOTS and b.rsplit(".", 1)[-1] in MIXINS for b in values.class_bases(f"<local>.{owner.name}")):
        return None
    init = owner.methods["__init__"]
    scopes = {id(c.scope) for c in classes}
    savers = [c for c in values.calls_by_short.get(SAVER, ()) if c.method == SAVER and id(enclosing_class(c.scope)) in scopes]
    if len(savers) != 1 or dotted(savers[0].receiver) != "self" or savers[0].scope.node is not init:
        return None
    saver = savers[0]
    if saver.positional or saver.has_star_args or any(k not in SAVER_KEYWORDS for k in saver.kwargs) or not _statement_of(init, saver.node):
        return None
    ignored = _ignored(saver.kwargs.get("ignore"))
    if ignored is None or not any(isinstance(n, cst.Name) and n.value in ("super", "__class__") for n in walk(init.body)):
        return None
    for c in classes:  # constructed by its name only, outside any class (no other object's init arguments collected)
        made = [site for site in values.calls if site.qualname == f"<local>.{c.name}"]
        if len(values.name_loads.get(c.name, ())) != len(made) or any(enclosing_class(site.scope) is not None for site in made):
            return None
    return function_scope(values, init), saver.order, ignored


def _loaded(values, classes: list[ClassDef]) -> bool:
    """`X.load_from_checkpoint(...)` (a classmethod constructing `X`) where `X` may be a class of the family: anything
    but another class of the file or an imported class (a class another module defines derives from this file's only
    where that module imports this file)."""
    family_names = {f"<local>.{c.name}" for c in classes}
    for call in values.calls_by_short.get(CHECKPOINT_LOADERS[0], ()):
        q = values.qualname(call.receiver, call.scope) if call.method in CHECKPOINT_LOADERS else None
        if q is None or q in family_names or q.startswith("<local>.") and q.split(".", 1)[1] not in values.classes:
            return True
    return False


def _statement_of(fn: cst.FunctionDef, node: cst.Call) -> bool:
    """`node` is a statement of `fn`'s own body (runs once on every call, before what follows)."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    return any(isinstance(line, cst.SimpleStatementLine) and any(isinstance(small, cst.Expr) and small.value is node for small in line.body) for line in body)


def _ignored(arg: cst.Arg | None) -> frozenset[str] | None:
    if arg is None:
        return frozenset()
    value = arg.value
    items = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
    names = [literal(item) for item in items]
    return frozenset(names) if all(isinstance(n, str) for n in names) else None


@per_file
def _handled(values) -> frozenset[str]:
    """{"hparams"} where some `X.hparams` is used otherwise than read for one of its attributes (`X.hparams.lr`): stored
    into, mutated, a method called on it, handed along or aliased."""
    for store in (*values.stores, *values.touched):  # `self.hparams.lr = ...`, `self.hparams.lr *= 2`
        if any(isinstance(n, cst.Attribute) and n.attr.value == ATTRIBUTE for n in walk(store.target)):
            return frozenset({ATTRIBUTE})
    for node in walk(values.module):
        if isinstance(node, cst.Attribute) and node.attr.value == ATTRIBUTE:
            parent = values.parent(node)
            if not isinstance(parent, cst.Attribute) or parent.value is not node:
                return frozenset({ATTRIBUTE})
            grand = values.parent(parent)
            if isinstance(grand, cst.Call) and grand.func is parent:
                return frozenset({ATTRIBUTE})  # `self.hparams.update(...)`
    return frozenset()
