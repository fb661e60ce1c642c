"""Classification labels: how a classifier load is configured, which label values are statically known, and whether
the loss fits numbers rather than classes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import libcst as cst

from bertlint.facts.data_labels import data_file_labels
from bertlint.facts.names import LABEL_NAMES
from bertlint.facts.nodes import UNKNOWN, Call
from bertlint.facts.values import ModelLoad
from bertlint.facts.values import Values as Facts
from bertlint.patterns import Lazy


# ---------------------------------------------------------------------------------------------
# classification labels


_LABEL_COLUMNS = ("label", "labels")
_LABEL_KEYWORDS = ("num_labels", "id2label", "label2id", "problem_type")


@dataclass(frozen=True)
class Classifier:
    """How a classification model load is configured, as far as it resolves."""

    num_labels: Any  # int, or UNKNOWN
    problem_type: Any  # None (absent) | "regression" | "single_label_classification" | "multi_label_classification" | UNKNOWN
    anchor: cst.CSTNode  # the `num_labels=` argument that sets it, else the load call


def classifier(facts: Facts, load: ModelLoad) -> Classifier:
    """`num_labels`/`problem_type` from the load's keywords, else its config (`config=` / `from_config(cfg)`).
    Unset, a built-in base checkpoint or a config class has 2 labels (transformers' default)."""
    call = load.call
    sources = [call]
    config = call.kwargs.get("config") or (call.arg(0) if load.how != "pretrained" else None)
    if config is not None:
        config_call = _config_call(facts, config.value, call)
        if config_call is None:
            return Classifier(UNKNOWN, UNKNOWN, call.node)
        sources.append(config_call)
    if any(source.has_double_star for source in sources):
        return Classifier(UNKNOWN, UNKNOWN, call.node)
    num_labels: Any = None
    problem_type: Any = None
    anchor: cst.CSTNode = call.node
    for source in sources:
        if num_labels is None:
            num_labels, arg = _num_labels_in(facts, source)
            anchor = arg if arg is not None else anchor
        if problem_type is None:
            problem_type = facts.kw_value(source, "problem_type", default=None)
    if num_labels is None:
        num_labels = 2 if sources[-1].method != "from_pretrained" or _base_checkpoint(facts, sources[-1]) else UNKNOWN
    return Classifier(num_labels, problem_type, anchor)


def _base_checkpoint(facts: Facts, load: Call) -> bool:
    """A published base checkpoint of the built-in table, by its exact id: its config sets no labels.
    (`someone/bert-base-uncased` may be a fine-tuned classifier with labels of its own.)"""
    name = facts.arg_value(load, 0, "pretrained_model_name_or_path")
    info = facts.checkpoint(name)
    return info is not None and info.source == "built-in" and info.id.lower() == name.lower()


def _config_call(facts: Facts, expr: cst.BaseExpression, at: Call) -> Call | None:
    """The `XConfig(...)` / `AutoConfig.from_pretrained(...)` call whose config a config argument holds on every
    path, when nothing in the file sets a label attribute on that config (`config.num_labels = ...`)."""
    config = facts.definite_kind(expr, at.scope, at.order)
    if config is None or config.kind != "config":
        return None
    relabelled = (store for store in facts.stores if store.key in _LABEL_KEYWORDS)
    if any((owner := facts.owner(store)) is not None and owner.call is config.call for store in relabelled):
        return None
    return config.call


def _num_labels_in(facts: Facts, call: Call) -> tuple[Any, cst.Arg | None]:
    """(labels count, the argument setting it) from `num_labels=`/`id2label=`/`label2id=`; (None, None) if absent."""
    for keyword in ("num_labels", "id2label", "label2id"):
        arg = call.kwargs.get(keyword)
        if arg is None:
            continue
        value = facts.value(arg.value, call.scope, order=call.order)
        if keyword != "num_labels":
            value = len(value) if isinstance(value, dict) else UNKNOWN
        return (value if isinstance(value, int) and not isinstance(value, bool) else UNKNOWN), arg
    return None, None


@dataclass(frozen=True)
class KnownLabels:
    """One statically known list of label values, and where it came from."""

    values: tuple  # numbers, flattened one level for per-token labels
    origin: str  # for messages: "`labels`", "the `label` column"
    per_token: bool


def known_labels(facts: Facts) -> list[KnownLabels]:
    """Label lists whose values are statically known: label-named variables, `label` columns of
    `Dataset.from_dict`/`DataFrame` dicts, `labels=` passed to a model, and the `label` column of the one local data
    file a Trainer script loads, where nothing in the file touches that column (`data_file_labels`)."""
    out = []
    for scope, name, assigned, after, _ in facts.variables:
        if name.lower() in LABEL_NAMES and assigned:
            out.append((facts.name_value(name, scope, order=after), f"`{name}`"))
        elif _LABEL_MAP.fullmatch(name.lower()) and assigned:
            classes = _classes(facts.name_value(name, scope, order=after))
            if classes:
                out.append((classes, f"the label map `{name}`"))
    for call in facts.calls:
        if call.short in ("from_dict", "DataFrame") and call.positional:
            columns = facts.value(call.positional[0].value, call.scope, order=call.order)
            if isinstance(columns, dict):
                out.extend((columns[key], f"the `{key}` column") for key in _LABEL_COLUMNS if key in columns)
        elif "labels" in call.kwargs and call.method in (None, "forward"):
            model = facts.kind(call.node.func if call.method is None else call.receiver, call.scope, call.order)
            if model is not None and model.kind == "model":
                out.append((facts.kw_value(call, "labels"), f"`{facts.text(call.kwargs['labels'].value)}`"))
    out.extend(data_file_labels(facts))
    found = []
    for values, origin in out:
        flat = _numbers(values)
        nested = flat is None and isinstance(values, (list, tuple)) and all(isinstance(v, (list, tuple)) for v in values)
        if nested:
            flat = _numbers([v for row in values for v in row])
        if flat:
            found.append(KnownLabels(tuple(flat), origin, nested))
    return found


# `label2id = {"neg": 0, "neu": 1, "pos": 2}`, `id2label = {0: "neg", ...}`: the classes the data is labelled with.
_LABEL_MAP = Lazy(r"(labels?|class(es)?|tags?)_?(2|to)_?(ids?|idx|index)|(labels?|class(es)?)_?(map|mapping|dict)|ids?_?(2|to)_?(labels?|class(es)?|tags?)")


def _classes(mapping: Any) -> list | None:
    """The class indices of a label map (its int values, or its int keys for an id-to-label map)."""
    if not isinstance(mapping, dict) or not mapping:
        return None
    for side in (list(mapping.values()), list(mapping.keys())):
        if all(isinstance(v, int) and not isinstance(v, bool) for v in side):
            return sorted(set(side))
    return None


def _numbers(values: Any) -> list | None:
    if isinstance(values, (list, tuple)) and values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return list(values)
    return None


# ---------------------------------------------------------------------------------------------
# regression: a loss that fits numbers, not classes

# Losses that fit numbers rather than classes: there are no classes to count or weight. Keras: the "Regression" group of
# keras/src/losses/__init__.py `ALL_OBJECTS` (Keras 3, commit 0bd7bf0e), classes and functions, and the string aliases
# its `get(identifier)` resolves (`ALL_OBJECTS_DICT`: "mse", "MAE", ...); CosineSimilarity, grouped there too, also
# compares embeddings and is left out. torch: torch.nn MSELoss/L1Loss/SmoothL1Loss/HuberLoss and their
# torch.nn.functional forms (torch 2.13 `dir(torch.nn)`, `dir(torch.nn.functional)`).
REGRESSION_LOSSES = frozenset({
    "MeanSquaredError", "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "LogCosh", "Huber",
    "mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_logarithmic_error", "log_cosh", "huber",
    "mse", "MSE", "mae", "MAE", "mape", "MAPE", "msle", "MSLE",
    "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
})
_LOSS_MODULES = ("tensorflow.keras.losses.", "keras.losses.", "tf_keras.losses.", "tensorflow.losses.", "torch.nn.")


def regression_loss(facts: Facts) -> Call | None:
    """A call that makes or applies a regression loss (`nn.MSELoss()`, `F.l1_loss(...)`, `keras.losses.Huber()`), or a
    Keras `compile` whose `loss` is one (a name such as `"mse"`, a loss function, or a dict of per-output losses holding
    one): the model fits numbers, not classes."""
    for call in facts.calls:
        if _regression_name(call.qualname):
            return call
        loss = call.arg(1, "loss") if call.method == "compile" else None
        if loss is None:
            continue
        value = facts.value(loss.value, call.scope, order=call.order)
        names = list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(name, str) and name in REGRESSION_LOSSES for name in names) or _regression_name(facts.qualname(loss.value, call.scope)):
            return call
    return None


def _regression_name(qualname: str | None) -> bool:
    return qualname is not None and qualname.startswith(_LOSS_MODULES) and qualname.rsplit(".", 1)[-1] in REGRESSION_LOSSES
