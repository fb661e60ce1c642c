"""Keras: a functional model's `Input` placeholders hold what the model built on them is fed.

Sources (keras 2.x as in tensorflow/python/keras and keras-team/keras 2.15, and keras 3.x): `keras.Input(shape, ...,
name=...)` (`keras.layers.Input`) makes a symbolic tensor, and `keras.Model(inputs, outputs)` (`keras.models.Model`)
builds a graph whose inputs are those placeholders: a single one, a list (fed a list of arrays, position by position)
or a dict (fed a dict, by key). `Model.fit(x, y=None, ...)`, `predict(x, ...)`, `evaluate(x, y=None, ...)` and their
`*_on_batch` forms run the graph with each placeholder given its part of `x`; where `x` is a `tf.data.Dataset`, each
element is unpacked as `(x, y, sample_weight)` when it is a tuple, else is `x` itself (keras 2.15
engine/data_adapter.py `unpack_x_y_sample_weight`; keras 3 trainers/data_adapters/data_adapter_utils.py, same rule).
A dict `x` given to a model whose inputs are a list is matched by each `Input`'s `name=`
(keras 2.15 engine/functional.py `_flatten_to_reference_inputs`).

So the value of an `Input(...)` is what every model built on it is fed there, joined (`abstract.agree`): unknown when
one feed is, or when no feed is found.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import Binding, Pack, Record, agree
from bertlint.facts.nodes import UNKNOWN, Call, literal

ROOTS = ("tensorflow.keras.", "keras.", "tf_keras.")
# the methods of a keras model that run its graph on `x` (their first argument)
RUNS = ("fit", "predict", "evaluate", "train_on_batch", "predict_on_batch", "test_on_batch")


def _keras(qualname: str | None, *names: str) -> bool:
    """A keras API by its last name: `tf.keras.Model`, `keras.models.Model`, `tf_keras.layers.Input`, ..."""
    return (qualname or "").startswith(ROOTS) and (qualname or "").rsplit(".", 1)[-1] in names


def call(ev, call) -> Any:
    if _keras(call.qualname, "Model", "Sequential"):
        return Binding("keras_model", call)
    if _keras(call.qualname, "Input"):
        return fed(ev.f, call)
    return None


def is_input(values, expr: cst.BaseExpression, scope, order: int | None) -> bool:
    """`expr` is a keras `Input(...)` placeholder (the call, or a name bound to it)."""
    return _placeholder(values, expr, scope, order) is not None


def _placeholder(values, expr: cst.BaseExpression, scope, order: int | None) -> Call | None:
    found = values.definition(expr, scope, order, identity=True)
    made = values.call_of(found.value) if found is not None and isinstance(found.value, cst.Call) else None
    return made if made is not None and _keras(made.qualname, "Input") else None


def fed(values, placeholder: Call) -> Any:
    """What the `Input(...)` call `placeholder` holds when its graph runs: its part of what each model built on it
    (`Model(inputs=...)`) is given to `fit`/`predict`/`evaluate`, joined; UNKNOWN where none is found."""
    found = []
    for model in values.calls:
        if model.short != "Model" or not _keras(model.qualname, "Model"):
            continue
        inputs = model.arg(0, "inputs")
        where = _position(values, inputs.value, model, placeholder) if inputs is not None else None
        if where is None:
            continue
        name = values.kw_value(placeholder, "name", cli=False, default=None)
        found += [_part(values, x, where, name) for x in _given(values, model)]
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


def _given(values, model: Call) -> list:
    """The `x` of every run of the model `model` builds (a `fit`/`predict`/`evaluate` of it): the elements' first
    parts where `x` is a tf.data dataset."""
    given = []
    for method in RUNS:
        for run in values.calls_by_short.get(method, ()):
            if run.method != method:
                continue
            made = values.kind(run.receiver, run.scope, run.order)
            if made is None or made.kind != "keras_model" or not any(m.call is model for m in made.joined or (made,)):
                continue
            x = values.given(run, 0, "x")
            value = values.evaluate(x, run.scope, run.order) if isinstance(x, cst.BaseExpression) else UNKNOWN
            if isinstance(value, Binding) and value.kind == "tf_dataset":
                element = values.elements_of(value)
                value = element.items[0] if isinstance(element, Pack) and 1 <= len(element.items) <= 3 else element
            given.append(value)
    return given


def _part(values, x: Any, where: tuple, name: Any) -> Any:
    """The part of `x` an input at `where` (`_position`) is given: a dict is matched by key, else by the input's name."""
    if isinstance(x, (Record, dict)) and where and isinstance(where[0], str):
        return values.item_of(x, where[0])
    if isinstance(x, (Record, dict)):
        return values.item_of(x, name) if isinstance(name, str) else UNKNOWN
    if not where:
        return x
    return values.item_of(x, where[0]) if isinstance(where[0], int) and isinstance(x, (Pack, list, tuple)) else UNKNOWN
