"""Calls that the target release of a library refuses for the object the value layer certainly knows they are made
on or given, and that no rule reports (data/removed.json), for facts/library_stops.py: such a call stops the run.

- a keyword a library function or class no longer takes (`pd.read_csv(path, error_bad_lines=False)` on pandas >= 2.0,
  `OneHotEncoder(sparse=False)` on scikit-learn >= 1.4: TypeError; `keywords` with `functions`);
- a method an instance of a library class no longer has, called on an object the value layer certainly knows is one
  (`df.append(other)`, `df` what `pd.read_csv(...)` or `pd.DataFrame(...)` returned, on pandas >= 2.0: AttributeError;
  `methods`); never guessed from a name (`df`);
- `trainer.fit(model)` (and `validate`, `test`) of a Lightning `Trainer`, `model` an instance of the file's
  LightningModule subclass that (or a class of the file it derives from) defines `training_epoch_end`,
  `validation_epoch_end` or `test_epoch_end`: Lightning 2.0 raises NotImplementedError before it trains (`hooks`).

Certainly known: the receiver and the argument are a call's value, or a name that one plain, unconditional assignment
binds in its scope (never a parameter, which any caller may fill, nor a name bound on a branch); where the library's
top module is a module of the file's folder (`pytorch_lightning.py`, `lightning/`), that is what the file imports.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint import knowledge
from bertlint.facts.abstract import Instance
from bertlint.facts.brain.steps import LIGHTNING_ROOTS
from bertlint.facts.functions import ancestors
from bertlint.facts.model import Model
from bertlint.facts.nodes import Call

_MODULE_CLASS = "LightningModule"
# The library class each kind of the value layer's objects is an instance of (facts/brain/tables.py: "table", what
# pandas' readers and `DataFrame(...)` return, and the DataFrame methods that keep it).
_CLASSES = {"table": "pandas.DataFrame"}


def refused(facts: Model, node: cst.Call) -> bool:
    """Does the target release of its library certainly refuse the call `node` (see the module's docstring)?"""
    call = facts.call_of(node)
    if call is None:
        return False
    if call.receiver is None or call.method is None:
        return _removed_keyword(facts, call)
    return _removed_keyword(facts, call) or _removed_method(facts, call) or _removed_hook(facts, call)


def shadowed(facts: Model, top: str) -> bool:
    """Is `top` (a library's top module) a module of the file's folder (`top.py`, `top/`), which the file imports
    instead? A cached result notices one appear; a file without a folder counts as shadowed (nothing is certain)."""
    if facts.base_dir is None:
        return True
    paths = (facts.base_dir / f"{top}.py", facts.base_dir / top)
    for path in paths:
        facts.depends_on(path)
    return any(path.exists() for path in paths)


def _removed_keyword(facts: Model, call: Call) -> bool:
    """`pd.read_csv(path, error_bad_lines=False)`: a keyword the target release of the function's library removed."""
    gone = knowledge.removed_keywords(call.qualname, dict(facts.runtime.releases)) if call.qualname else ()
    return any(keyword in gone for keyword in facts.keywords(call)) and not shadowed(facts, call.qualname.split(".", 1)[0])


def _removed_method(facts: Model, call: Call) -> bool:
    """`df.append(row)`, `df` certainly an instance of a library class whose target release removed the method."""
    releases = dict(facts.runtime.releases)
    gone = {cls for cls in _CLASSES.values() if call.method in knowledge.removed_methods(cls, releases)}
    if not gone:
        return False  # the common case, decided before any value is evaluated
    held = _held(facts, call.receiver, call)
    cls = _CLASSES.get(held.kind) if isinstance(held, Instance) else None
    return cls in gone and not shadowed(facts, cls.split(".", 1)[0])


def _removed_hook(facts: Model, call: Call) -> bool:
    """`trainer.fit(model)` of a Lightning trainer whose target release refuses a hook `model`'s class defines."""
    if not any(knowledge.removed_hooks(top, call.method, dict(facts.runtime.releases)) for top in LIGHTNING_ROOTS):
        return False  # no trainer method that refuses a hook: nothing to evaluate
    trainer = _held(facts, call.receiver, call)
    if not (isinstance(trainer, Instance) and trainer.kind == "lightning_trainer" and trainer.call is not None and trainer.call.qualname):
        return False
    top = trainer.call.qualname.split(".", 1)[0]
    hooks = knowledge.removed_hooks(top, call.method, dict(facts.runtime.releases))
    given = call.arg(0, "model")
    model = _held(facts, given.value, call) if hooks and given is not None and not call.has_star_args else None
    if not (isinstance(model, Instance) and model.kind == "instance" and model.detail is not None):
        return False
    bases = facts.class_bases(f"<local>.{model.detail.name}")
    if not any(b.split(".", 1)[0] in LIGHTNING_ROOTS and b.rpartition(".")[2] == _MODULE_CLASS for b in bases):
        return False
    defined = {name for cls in ancestors(facts, model.detail) for name in cls.methods}
    return any(hook in defined for hook in hooks) and not shadowed(facts, top)


def _held(facts: Model, expr: cst.BaseExpression, call: Call) -> Any:
    """What `expr`, read by `call`, certainly holds: a call's value, or a name's that one plain assignment in its scope
    binds, unconditionally or in the same branch as the read, before it (an `if` arm, a loop's body: the read runs
    only after it); None otherwise."""
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, call.scope, call.order)
        if owner is None or len(events) != 1 or events[0].op != "assign" or events[0].index is not None \
                or events[0].conditional and not all(g.start < call.order <= g.end for g in events[0].guards):
            return None
    elif not isinstance(expr, cst.Call):
        return None
    return facts.evaluate(expr, call.scope, call.order)
