"""Keras: a functional model's `Input` placeholders hold what the model built on them is fed.

Sources (keras 2.x as in tensorflow/python/keras and keras-team/keras 2.15, and keras 3.x): `keras.Input(shape, ...,
name=...)` (`keras.layers.Input`) makes a symbolic tensor, and `keras.Model(inputs, outputs)` (`keras.models.Model`)
builds a graph whose inputs are those placeholders: a single one, a list (fed a list of arrays, position by position)
or a dict (fed a dict, by key). `Model.fit(x, y=None, ...)`, `predict(x, ...)`, `evaluate(x, y=None, ...)` and their
`*_on_batch` forms run the graph with each placeholder given its part of `x`; where `x` is a `tf.data.Dataset`, each
element is unpacked as `(x, y, sample_weight)` when it is a tuple, else is `x` itself (keras 2.15
engine/data_adapter.py:1821 `unpack_x_y_sample_weight`; keras 3.6 trainers/data_adapters/data_adapter_utils.py, same
rule). A dict `x` given to a model whose inputs are a list is matched by each `Input`'s `name=` (its layer's name:
keras 2.15 engine/functional.py:690 `_flatten_to_reference_inputs`). Calling the model (`model(x)`) runs the graph on
`x` too. A subclassed model's `call(self, inputs, training=None, **kwargs)` gets what its runs are given the same
way; keras puts nothing in `**kwargs` but `training` (where the signature does not name it) and `mask` where an input
carries a keras mask (keras 2.15 engine/base_layer.py:2909 `_get_input_masks`: none for fed arrays).

So the value of an `Input(...)` is what every model built on it is fed there, joined (`abstract.agree`): unknown when
one feed is, or when no feed is found.
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst

from bertlint.facts.abstract import Binding, Instance, Pack, Record, agree
from bertlint.facts.functions import enclosing_class
from bertlint.facts.names import is_model_class
from bertlint.facts.nodes import UNKNOWN, Call, Scope, literal

ROOTS = ("tensorflow", "keras", "tf_keras")  # the packages keras's classes are imported from (`tf.keras`, `tensorflow.python.keras`)
# the methods of a keras model that run its graph on `x` (their first argument)
RUNS = ("fit", "predict", "evaluate", "train_on_batch", "predict_on_batch", "test_on_batch")


def _keras(qualname: str | None, *names: str) -> bool:
    """A keras API by its last name: `tf.keras.Model`, `keras.models.Model`, `tf_keras.layers.Input`, ..."""
    parts = (qualname or "").split(".")
    return len(parts) > 1 and parts[0] in ROOTS and parts[-1] in names


def call(ev, call) -> Any:
    if _keras(call.qualname, "Model", "Sequential"):
        return Binding("keras_model", call)
    if _keras(call.qualname, "Input"):
        return fed(ev.f, call)
    return None


def _placeholder(values, expr: cst.BaseExpression, scope, order: int | None) -> Call | None:
    found = values.definition(expr, scope, order, identity=True)
    made = values.call_of(found.value) if found is not None and isinstance(found.value, cst.Call) else None
    return made if made is not None and _keras(made.qualname, "Input") else None


def fed(values, placeholder: Call) -> Any:
    """What the `Input(...)` call `placeholder` holds when its graph runs: its part of what each model built on it
    (`Model(inputs=...)`) is given, joined; UNKNOWN where none is found."""
    found = []
    name = values.kw_value(placeholder, "name", cli=False, default=None)
    for model in values.calls_by_short.get("Model", ()):
        inputs = model.arg(0, "inputs") if _keras(model.qualname, "Model") else None
        where = _position(values, inputs.value, model, placeholder) if inputs is not None else None
        if where is not None:
            found += [_part(values, x, where, name) for x in _given(values, lambda made: made.kind == "keras_model" and made.call is model)]
    return agree(found) if found else UNKNOWN


def _position(values, inputs: cst.BaseExpression, model: Call, placeholder: Call) -> Any:
    """Where `placeholder` sits among a `Model`'s `inputs`: () the only one, an index of a list, a key of a dict;
    None when it is not one of them (or they do not resolve)."""
    if _placeholder(values, inputs, model.scope, model.order) is placeholder:
        return ()
    found = values.definition(inputs, model.scope, model.order, identity=True)
    shown = found.value if found is not None else None
    if isinstance(shown, (cst.List, cst.Tuple)):
        for i, element in enumerate(shown.elements):
            if not isinstance(element, cst.StarredElement) and _placeholder(values, element.value, found.scope, found.order) is placeholder:
                return (i,)
    if isinstance(shown, cst.Dict):
        for element in shown.elements:
            if isinstance(element, cst.DictElement) and _placeholder(values, element.value, found.scope, found.order) is placeholder:
                key = literal(element.key)
                return (key,) if isinstance(key, str) else None
    return None


def _given(values, model: Callable[[Binding | Instance], bool]) -> list:
    """The `x` of every run of a model (`model` tells its objects: a `Binding`, or an `Instance` of the file's class):
    a `fit`/`predict`/`evaluate` of it, or a call (`Model.__call__(inputs)`); a tf.data dataset's elements' first parts
    (`unpack_x_y_sample_weight`)."""
    given = []
    for run in values.calls:
        if run.method in RUNS:
            made, x = values.evaluate(run.receiver, run.scope, run.order), values.given(run, 0, "x")
        elif run.method is None or run.method == "__call__":
            made, x = values.evaluate(run.node.func if run.method is None else run.receiver, run.scope, run.order), values.given(run, 0, "inputs")
        else:
            continue
        objects = made.joined or (made,) if isinstance(made, Binding) else (made,) if isinstance(made, Instance) and made.kind == "instance" else ()
        if not any(model(m) for m in objects):
            continue
        value = values.evaluate(x, run.scope, run.order) if isinstance(x, cst.BaseExpression) else UNKNOWN
        if isinstance(value, Binding) and value.kind == "tf_dataset" and run.method in RUNS:
            element = values.elements_of(value)
            value = element.items[0] if isinstance(element, Pack) and 1 <= len(element.items) <= 3 else element
        given.append(value)
    return given


def parameter(ev, owner: Scope, name: str) -> Any:
    """The parameters of a keras model's `call(self, inputs, training=None, **kwargs)`, a method of the file's subclass
    of a keras `Model` or of a transformers TF model: `inputs` is what each run of an instance is given (`_given`);
    `**kwargs` passes nothing where `training` is a parameter of its own (the module's sources)."""
    made = _model_class(ev.f, owner)
    if made is None:
        return None
    fn = owner.node
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    if params[1:2] == [name]:
        found = _given(ev.f, lambda model: model.call is not None and _made_by(model.call) == made)  # `C(...)`, `C.from_pretrained(...)`
        return agree(found) if found else UNKNOWN
    star = fn.params.star_kwarg
    return {} if star is not None and star.name.value == name and "training" in params else None


def keras_feed(values, expr: cst.BaseExpression, scope: Scope, order: int | None) -> str | None:
    """How keras feeds `expr` a model's data: "input" (an `Input(...)` placeholder of a functional model), "call" (the
    `inputs` parameter of a keras model's `call`, `parameter`, that its body does not rebind), else None."""
    if _placeholder(values, expr, scope, order) is not None:
        return "input"
    if not isinstance(expr, cst.Name):
        return None
    owner, events = values.binding_events(expr.value, scope, order)
    if owner is None or _model_class(values, owner) is None or any(e.op != "param" for e in events):
        return None
    params = [p.name.value for p in (*owner.node.params.posonly_params, *owner.node.params.params)]
    return "call" if params[1:2] == [expr.value] else None


def _model_class(values, owner: Scope) -> str | None:
    """The qualified name of the file's class whose keras `call` method `owner` is: a subclass of a keras `Model` or
    of a transformers TF model class; else None."""
    fn, cls = owner.node, enclosing_class(owner.parent)
    if not isinstance(fn, cst.FunctionDef) or fn.name.value != "call" or fn.decorators or cls is None or owner.parent is not cls:
        return None
    qualname = f"<local>.{cls.name}"
    bases = values.class_bases(qualname)
    return qualname if any(_keras(b, "Model") or b.rsplit(".", 1)[-1].startswith("TF") and is_model_class(b) for b in bases) else None


def _made_by(call: Call) -> str | None:
    """The class whose instance a call makes: `C(...)`, `C.from_pretrained(...)`."""
    return (call.qualname or "").rsplit(".", 1)[0] if call.method == "from_pretrained" else call.qualname


def _part(values, x: Any, where: tuple, name: Any) -> Any:
    """The part of `x` an input at `where` (`_position`) is given: a dict is matched by key, else by the input's name."""
    if isinstance(x, (Record, dict)) and where and isinstance(where[0], str):
        return values.item_of(x, where[0])
    if isinstance(x, (Record, dict)):
        return values.item_of(x, name) if isinstance(name, str) else UNKNOWN
    if not where:
        return x
    return values.item_of(x, where[0]) if isinstance(where[0], int) and isinstance(x, (Pack, list, tuple)) else UNKNOWN
