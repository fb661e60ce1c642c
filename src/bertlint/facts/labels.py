"""Classification labels: how a classifier load is configured and which label values are statically known."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import libcst as cst

from bertlint import datafiles, knowledge
from bertlint.facts.model import per_file
from bertlint.facts.nodes import UNKNOWN, Call, ClassDef, Store, dotted, literal, names_in, walk
from bertlint.facts.uses import uses
from bertlint.facts.values import ModelLoad
from bertlint.facts.values import Values as Facts


# ---------------------------------------------------------------------------------------------
# classification labels


LABEL_NAMES = frozenset({"labels", "label", "y", "y_train", "train_labels", "targets", "target", "train_y", "ytrain", "classes"})
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
    file a Trainer script loads, where nothing in the file touches that column (`_data_file_labels`)."""
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
    out.extend(_data_file_labels(facts))
    found = []
    for values, origin in out:
        flat = _numbers(values)
        nested = flat is None and isinstance(values, (list, tuple)) and all(isinstance(v, (list, tuple)) for v in values)
        if nested:
            flat = _numbers([v for row in values for v in row])
        if flat:
            found.append(KnownLabels(tuple(flat), origin, nested))
    return found


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


# ---------------------------------------------------------------------------------------------
# labels from the data file a script loads

# The columns a transformers Trainer takes the labels from without being told (its default collator renames `label`
# to `labels`; transformers data/data_collator.py, DefaultDataCollator / torch_default_data_collator).
_DATA_LABEL_COLUMNS = ("label", "labels")
# Keywords of a read that leave the file's header and rows as datafiles.py reads them (`names=`, `header=`, `skiprows=`,
# `usecols=`, `converters=`, `nrows=` ... change what the script sees: unknown).
_PLAIN_READ_KEYWORDS = frozenset({"data_files", "split", "encoding", "lines", "keep_default_na", "low_memory"})
_LABEL_WORD = re.compile(r"\blabels?\b")
# Where a string naming the label column only looks at it or keeps it: printing, counting, the columns a dataset hands
# out (`set_format(columns=[..., "label"])`). Anywhere else it may change the values: unknown.
_LOOKS_ONLY = frozenset({"print", "set_format", "with_format", "value_counts", "unique", "nunique", "head", "describe", "info"})
# Other ways a script makes the data it may train on.
_OTHER_DATASETS = frozenset({"load_dataset", "load_from_disk", "from_dict", "from_list", "from_generator", "from_records", "TensorDataset"})
# Calls that encode or re-map labels without naming the column.
_ENCODERS = frozenset({"LabelEncoder", "OrdinalEncoder", "ClassLabel", "class_encode_column", "cast_column", "align_labels_with_mapping", "factorize"})


def _data_file_labels(facts: Facts) -> list[tuple[list, str]]:
    """The values of the `label`/`labels` column of the one local data file (CSV/TSV/JSON/JSONL/Parquet, read by
    datafiles.py in bounded time and size) that a script training with a transformers Trainer loads, when they reach
    the Trainer unchanged: the read has no keyword that changes rows or header, the file loads no other dataset, and
    nothing in it names the label column other than to look at it or keep it (no `df["label"] - 1`, `.map(...)`,
    `rename_column`, `replace`, a LabelEncoder, a `{"label": ...}` built by a map function). Anything done to the
    column makes it unknown, except the one copy `_label_copy` reads (`df["label"] = df["stars"] - 1`: the `stars`
    column shifted), where nothing else names the source column."""
    if not any(_is_hf_trainer(t) for t in facts.trainers):
        return []
    copy = _label_copy(facts)
    if copy is None:
        return []
    column, shift, skip, frame = copy
    if _label_column_touched(facts, skip) or column not in _DATA_LABEL_COLUMNS and _column_named(facts, re.compile(rf"\b{re.escape(column)}\b"), skip, (column,)):
        return []
    reads = []
    for call in facts.calls:
        path, fmt = data_file_of(facts, call)
        if path is not None:
            reads.append((call, path, fmt))
        elif call.short in _OTHER_DATASETS:
            return []  # a dataset from the Hub, a script, the disk or the file's own values: which one trains is not known
    if len(reads) != 1:
        return []
    call, path, fmt = reads[0]
    if call.has_double_star or len(call.positional) > 1 or set(call.kwargs) - _PLAIN_READ_KEYWORDS:
        return []
    if frame is not None:  # the store writes the frame the file is read into (`df = pd.read_csv(...)`)
        made = facts.definition(frame.target.value, frame.scope, frame.order, identity=True)
        if made is None or not any(node is call.node for node in walk(made.value)):
            return []
    counts = datafiles.label_counts(path, fmt, [column] if column not in _DATA_LABEL_COLUMNS else list(_DATA_LABEL_COLUMNS))
    if counts is None or shift and not all(isinstance(v, int) for v in counts[0]):
        return []
    where = f"`{path.name}` column `{counts[1]}`" + (f" {'+' if shift > 0 else '-'} {abs(shift)}" if shift else "")
    return [(sorted(v + shift for v in counts[0]) if shift else sorted(counts[0], key=repr), where)]


def _label_copy(facts: Facts) -> tuple[str, int, frozenset[int], Store | None] | None:
    """Which column of the data file becomes the label column, and shifted by what: ("label", 0, {}) where no store
    writes the label column; ("stars", -1, nodes) for the one store `df["label"] = df["stars"] - 1` into the frame the
    column is read from (a copy, a copy plus or minus an integer constant, either cast `.astype(int)`), with the nodes
    of that store, which name the columns without changing them, and the store itself; ("stars", 0, nodes, None) for the
    one rename of a column to the label column; None for any other store at the label column or rename to it."""
    stores = [store for store in facts.stores if store.key in _DATA_LABEL_COLUMNS]
    renamed = [(old, call) for old, new, call in column_renames(facts) if new in _DATA_LABEL_COLUMNS]
    if not stores and not renamed:
        return "label", 0, frozenset(), None
    if not stores:  # `df.rename(columns={"stars": "label"})`, `ds.rename_column("stars", "label")`: the values as they are
        if len(renamed) != 1 or not isinstance(renamed[0][0], str) or renamed[0][0] in _DATA_LABEL_COLUMNS:
            return None
        return renamed[0][0], 0, frozenset(id(node) for arg in renamed[0][1].node.args for node in walk(arg)), None  # its arguments, not its receiver
    if renamed:
        return None
    if len(stores) != 1 or not isinstance(stores[0].target, cst.Subscript) or stores[0].function is not None:
        return None
    store = stores[0]
    expr, shift = _without_one_to_one_cast(store.value), 0
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)) and isinstance(expr.right, cst.Integer):
        shift = expr.right.evaluated_value * (-1 if isinstance(expr.operator, cst.Subtract) else 1)
        expr = _without_one_to_one_cast(expr.left)
    if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    column = literal(expr.slice[0].slice.value)
    if not isinstance(column, str) or column in _DATA_LABEL_COLUMNS or dotted(expr.value) is None or dotted(expr.value) != dotted(store.target.value):
        return None  # the label column from itself, or from another frame
    return column, shift, frozenset(id(node) for node in (*walk(store.target), *walk(store.value))), store


def column_renames(facts: Facts) -> list[tuple[Any, Any, Call]]:
    """(old, new, call) column names from `ds.rename_column(old, new)`, `rename_columns({...})`, `df.rename(columns={...})`
    (datasets `Dataset.rename_column(original_column_name, new_column_name)` / `rename_columns(column_mapping)`, pandas
    `DataFrame.rename(columns=...)`)."""
    out = []
    for call in facts.calls:
        if call.method == "rename_column" and len(call.positional) == 2:
            old, new = (facts.value(a.value, call.scope, order=call.order) for a in call.positional)
            out.append((old, new, call))
        elif call.method in ("rename_columns", "rename"):
            arg = call.kwargs.get("columns") if call.method == "rename" else call.arg(0, "column_mapping")
            mapping = facts.value(arg.value, call.scope, order=call.order) if arg is not None else None
            if isinstance(mapping, dict):
                out.extend((old, new, call) for old, new in mapping.items())
    return out


# Encoders that give each class one code, so the class counts of the column they encode survive them (scikit-learn
# preprocessing.LabelEncoder / OrdinalEncoder: `fit_transform(y)` / `transform(y)` return one code per value).
_CODING_ENCODERS = frozenset({"sklearn.preprocessing.LabelEncoder", "sklearn.preprocessing.OrdinalEncoder"})
_USUAL_LABEL_COLUMNS = ("label", "labels", "target", "class", "y")


def label_columns(facts: Facts) -> list[str]:
    """Columns the script treats as labels, then the usual names: a column renamed to a label name, a column read into
    `df["label"]` or a label-named variable (`labels = df["sentiment"].map(...)`), directly or coded by a label encoder
    (`df["label"] = LabelEncoder().fit_transform(df["emotion"])`)."""
    sources = [(old, None, None) for old, new, _ in column_renames(facts) if new in LABEL_NAMES]
    sources += [(store.value, store.scope, store.order) for store in facts.stores if isinstance(store.target, cst.Subscript) and store.key in LABEL_NAMES]
    sources += [(value, variable.scope, variable.after) for variable in facts.variables if variable.name.lower() in LABEL_NAMES for value in variable.written]
    return [column for column in (_column_read(facts, *source) or _column_at(facts, *source) for source in sources) if column] + list(_USUAL_LABEL_COLUMNS)


def _column_read(facts: Facts, source: Any, scope: Any, order: int | None) -> str | None:
    """`"sentiment"` for a column name, `df["sentiment"]`, `df["sentiment"].map(...)`, `df["sentiment"].values`, the
    column named by a constant (`target = "Exited"; y = df[target]`), and the same coded by a label encoder
    (`encoder.fit_transform(df["sentiment"])`)."""
    if isinstance(source, str):
        return source
    node = _coded(facts, source, scope, order) or source
    while isinstance(node, (cst.Attribute, cst.Call)):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            return _column_attribute(facts, node, scope, order)
        node = node.value if isinstance(node, cst.Attribute) else node.func
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        key = node.slice[0].slice.value
        column = literal(key) if scope is None else facts.value(key, scope, order=order)
        return column if isinstance(column, str) else None
    return None


# Frame methods that change its columns in place (`inplace=True` on any method does too).
_COLUMN_MUTATORS = frozenset({"pop", "insert", "set_axis"})


def _column_at(facts: Facts, source: Any, scope: Any, order: int | None) -> str | None:
    """The header name of the column `frame.iloc[:, i]` reads (`y = dataset.iloc[:, -1].values`), where `frame` is bound
    once to a plain read of a local CSV/TSV file and nothing writes into it or changes its columns in place."""
    if scope is None or not isinstance(source, cst.BaseExpression):
        return None
    node = source
    while isinstance(node, (cst.Attribute, cst.Call)):
        node = node.value if isinstance(node, cst.Attribute) else node.func
    if not isinstance(node, cst.Subscript) or not isinstance(node.value, cst.Attribute) or node.value.attr.value != "iloc" or len(node.slice) != 2:
        return None
    rows, column = (element.slice for element in node.slice)
    if not isinstance(rows, cst.Slice) or any(part is not None for part in (rows.lower, rows.upper, rows.step)) or not isinstance(column, cst.Index):
        return None
    named = _located_column(facts, column.value, node.value.value, scope, order)
    if named is not None:
        return named
    index = facts.value(column.value, scope, order=order)
    frame = node.value.value
    if not isinstance(index, int) or isinstance(index, bool) or not isinstance(frame, cst.Name):
        return None
    if any(isinstance(c.receiver, cst.Name) and c.receiver.value == frame.value and (c.method in _COLUMN_MUTATORS or "inplace" in c.kwargs) for c in facts.calls):
        return None
    if any(isinstance(store.target, (cst.Attribute, cst.Subscript)) and isinstance(store.target.value, cst.Name) and store.target.value.value == frame.value for store in facts.stores):
        return None
    names = _read_header(facts, frame, scope, order)
    return names[index] if names and -len(names) <= index < len(names) else None


def _column_attribute(facts: Facts, node: cst.Attribute, scope: Any, order: int | None) -> str | None:
    """`"v1"` for `df.v1`, where `df` is bound once to a plain read of a local CSV/TSV file whose header names `v1` and
    `v1` is no attribute or method of a DataFrame (`df.size`, `df.T`, `df.values` are never columns: pandas falls back
    to the columns only where attribute lookup fails)."""
    column = node.attr.value
    if scope is None or column.startswith("_") or column in knowledge.pandas_frame_attributes():
        return None
    names = _read_header(facts, node.value, scope, order)
    return column if names and column in names else None


def _read_header(facts: Facts, frame: cst.Name, scope: Any, order: int | None) -> list[str] | None:
    """The header of the local file `frame` is bound to by one plain read (no keyword that renames or shifts it)."""
    made = facts.definition(frame, scope, order)
    read = facts.call_of(made.value) if made is not None and isinstance(made.value, cst.Call) else None
    if read is None or read.has_double_star or set(read.kwargs) - _PLAIN_READ_KEYWORDS - {"sep", "delimiter"}:
        return None
    path, fmt = data_file_of(facts, read)
    return datafiles.header(path, fmt) if path is not None else None


def _located_column(facts: Facts, expr: cst.BaseExpression, frame: cst.BaseExpression, scope: Any, order: int | None) -> str | None:
    """`"Exited"` for `frame.columns.get_loc("Exited")` (pandas `Index.get_loc(key)`: the position of that column in
    the same frame), so `frame.iloc[:, frame.columns.get_loc("Exited")]` reads the column by its name."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute) or expr.func.attr.value != "get_loc":
        return None
    owner = expr.func.value
    if not isinstance(owner, cst.Attribute) or owner.attr.value != "columns" or dotted(owner.value) is None or dotted(owner.value) != dotted(frame):
        return None
    if len(expr.args) != 1 or expr.args[0].keyword is not None or expr.args[0].star:
        return None
    column = facts.value(expr.args[0].value, scope, order=order)
    return column if isinstance(column, str) else None


def _coded(facts: Facts, node: Any, scope: Any, order: int | None) -> cst.BaseExpression | None:
    """What `encoder.fit_transform(x)` / `encoder.transform(x)` codes (`x`), where the encoder is made by one of
    `_CODING_ENCODERS` (`LabelEncoder()` itself, or a name bound to it)."""
    if scope is None or not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute) or node.func.attr.value not in ("fit_transform", "transform"):
        return None
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        return None
    made = facts.definition(node.func.value, scope, order, identity=True)
    maker = facts.call_of(made.value) if made is not None and isinstance(made.value, cst.Call) else None
    return node.args[0].value if maker is not None and maker.qualname in _CODING_ENCODERS else None


def _without_one_to_one_cast(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`df["stars"]` for `df["stars"].astype(int)` (an integer column cast to int keeps its values) and for
    `df["stars"].astype("category").cat.codes` (each category its own code: one-to-one)."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "codes" and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "cat":
        inner = expr.value.value
        if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "astype" and len(inner.args) == 1 and literal(inner.args[0].value) == "category":
            return inner.func.value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "astype" and len(expr.args) == 1:
        if dotted(expr.args[0].value) in ("int", "np.int64", "numpy.int64") or literal(expr.args[0].value) in ("int", "int64"):
            return expr.func.value
    return expr


def _is_hf_trainer(call: Call) -> bool:
    return (call.qualname or "").startswith("transformers.")


def _label_column_touched(facts: Facts, skip: frozenset[int]) -> bool:
    """Something in the file may change the label column's values or rows: a string naming it (or a query such as
    `"label != 5"`) outside a look-only call, an item store at it, an attribute `.label`, or an encoder. The nodes in
    `skip` (the one store `_label_copy` reads) do not count."""
    if any(call.short in _ENCODERS or call.method in _ENCODERS for call in facts.calls):
        return True
    if any(store.key in _DATA_LABEL_COLUMNS and id(store.target) not in skip for store in facts.stores):
        return True
    return _column_named(facts, _LABEL_WORD, skip, _DATA_LABEL_COLUMNS)


def _column_named(facts: Facts, word: re.Pattern, skip: frozenset[int], attributes: tuple[str, ...]) -> bool:
    """A string in which `word` is found (a column name, or a query such as `"stars != 3"`) outside a look-only call,
    or an attribute in `attributes` (`df.label`), anywhere but in the nodes `skip`."""
    nodes = list(walk(facts.module))
    bare = {id(node.value) for node in nodes if isinstance(node, cst.Expr)}  # docstrings and other bare strings
    for node in nodes:
        if id(node) in skip:
            continue
        if isinstance(node, cst.Attribute) and node.attr.value in attributes:
            return True
        if isinstance(node, cst.SimpleString) and id(node) not in bare and word.search(literal(node) or "") and not _looks_only(facts, node):
            return True
    return False


def _looks_only(facts: Facts, node: cst.CSTNode) -> bool:
    """A string inside a call that only looks at (or keeps) the column, or one of a list of columns a frame is
    indexed by (`df[["text", "label"]]` keeps them as they are)."""
    parent = facts.parent(node)
    chain = [parent]
    for _ in range(4):
        chain.append(facts.parent(chain[-1]) if chain[-1] is not None else None)
    if [type(n) for n in chain] == [cst.Element, cst.List, cst.Index, cst.SubscriptElement, cst.Subscript]:
        return True
    while parent is not None and not isinstance(parent, cst.BaseSmallStatement | cst.BaseCompoundStatement):
        if isinstance(parent, cst.Call):
            func = parent.func
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
            return name in _LOOKS_ONLY
        parent = facts.parent(parent)
    return False


# `label2id = {"neg": 0, "neu": 1, "pos": 2}`, `id2label = {0: "neg", ...}`: the classes the data is labelled with.
_LABEL_MAP = re.compile(r"(labels?|class(es)?|tags?)_?(2|to)_?(ids?|idx|index)|(labels?|class(es)?)_?(map|mapping|dict)|ids?_?(2|to)_?(labels?|class(es)?|tags?)")


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


IGNORE_INDEX = -100  # the label index the loss skips (CrossEntropyLoss's default `ignore_index`)


def ignore_index_markers(facts: Facts) -> list[cst.CSTNode]:
    """Where the file writes the ignore index: each literal `-100`, and each read of a name or attribute that holds it
    (`IGNORE_INDEX = -100`, a parameter `ignore_id=-100`, `self.ignore_id = ignore_id`: `x[x == pad] = self.ignore_id`,
    a config field `ignore_index: int = -100` read as `cfg.ignore_index`)."""
    nodes = list(walk(facts.module))
    literals = [n for n in nodes if _is_ignore_index(n)]
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, cst.Param) and node.default is not None and _is_ignore_index(node.default):
            names.add(node.name.value)
        elif isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None and _is_ignore_index(node.value):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            names.update(t.value for t in targets if isinstance(t, cst.Name))
    attributes = {s.key for s in facts.stores if isinstance(s.target, cst.Attribute) and (_is_ignore_index(s.value) or isinstance(s.value, cst.Name) and s.value.value in names)}
    attributes |= names  # a class attribute or a config field (`ignore_index: int = -100`) read as `self.X`, `args.X`
    held = [n for n in nodes if isinstance(n, cst.Name) and n.value in names or isinstance(n, cst.Attribute) and n.attr.value in attributes]
    declared = {id(p.name) for p in nodes if isinstance(p, cst.Param)} | {id(p.default) for p in nodes if isinstance(p, cst.Param)}
    return [n for n in literals + held if id(n) not in declared]  # a parameter's default writes nothing into the labels


def at_pad_positions(facts: Facts, marker: cst.CSTNode) -> bool:
    """The ignore index `marker` is written where the pads are: the statement that writes it (or an `if`/`for`/`while`
    header around it) names the pad id or the attention mask, or compares with 0 (the pad id of T5/BERT):
    `labels[labels == tok.pad_token_id] = -100`, `[t if t != pad_id else -100 for t in row]`,
    `labels.masked_fill(attention_mask == 0, -100)`. A keyword's own name (`padding=`) names no pad; a keyword argument
    other than `value=` (`label_pad_token_id=-100`, `ignore_index=-100`) writes nothing into the labels."""
    parent = facts.parent(marker)
    if isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value != "value":
        return False
    stmt = facts.statement_of(marker)
    headers = [s.test if isinstance(s, (cst.If, cst.While)) else s.iter for s in facts.enclosing(stmt) if isinstance(s, (cst.If, cst.While, cst.For))]
    nodes = [node for part in (stmt, *headers) for node in walk(part)]
    keywords = {id(node.keyword) for node in nodes if isinstance(node, cst.Arg) and node.keyword is not None}
    return any(_names_pads(node) for node in nodes if id(node) not in keywords)


def _names_pads(node: cst.CSTNode) -> bool:
    if isinstance(node, (cst.Name, cst.Attribute, cst.SimpleString)):  # `pad_token_id`, `attention_mask`, `enc["attention_mask"]`
        name = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else literal(node) or ""
        return "pad" in name.lower() or name == "attention_mask"
    if isinstance(node, cst.Comparison):
        return any(isinstance(c.operator, (cst.Equal, cst.NotEqual)) and isinstance(c.comparator, cst.Integer) and c.comparator.evaluated_value == 0 for c in node.comparisons)
    return False


def _is_ignore_index(node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer)
            and -node.expression.evaluated_value == IGNORE_INDEX)


# ---------------------------------------------------------------------------------------------
# tokenizer calls that make labels

# Collators that build each batch's `labels` from its `input_ids`, replacing any `labels` the dataset holds, with every
# pad id set to -100 (transformers data/data_collator.py, DataCollatorForLanguageModeling.torch_call: mlm=False
# `labels = batch["input_ids"].clone(); labels[labels == pad_token_id] = -100`, mlm=True `torch_mask_tokens`; trl's
# DataCollatorForCompletionOnlyLM calls it and masks the prompt too). DataCollatorForSeq2Seq is not one: it pads the
# dataset's own labels.
LABEL_BUILDING_COLLATORS = ("transformers.DataCollatorForLanguageModeling", "trl.DataCollatorForCompletionOnlyLM")


def label_building_collators(facts: Facts) -> list[Call]:
    """The file's calls that make a collator which builds the batches' `labels` itself (`LABEL_BUILDING_COLLATORS`)."""
    return facts.calls_to(*LABEL_BUILDING_COLLATORS)


LABEL_WORDS = ("label", "target")


def is_label_call(facts: Facts, call: Call) -> bool:
    """A tokenizer call whose ids become labels: `labels = tok(...)`, `x["labels"] = tok(...)["input_ids"]`, `labels=tok(...)`."""
    if "text_target" in call.kwargs:
        return True
    node, parent = call.node, facts.parent(call.node)
    # climb `tok(...)["input_ids"].to(device)` up to the argument or assignment it feeds
    while isinstance(parent, (cst.Subscript, cst.SubscriptElement, cst.Index, cst.Attribute)) or (isinstance(parent, cst.Call) and parent.func is node):
        node, parent = parent, facts.parent(parent)
    if isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == "labels":
        return True
    stmt = facts.statement_of(call.node)
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    name = dotted(target.target) or ""
                    if isinstance(target.target, cst.Subscript):
                        key = target.target.slice[0].slice
                        if isinstance(key, cst.Index) and isinstance(literal(key.value), str):
                            name = literal(key.value)
                    if any(w in name.lower() for w in LABEL_WORDS):
                        return True
    return False


# ---------------------------------------------------------------------------------------------
# labels a dataset never hands on


def never_served(facts: Facts, store: Store) -> bool:
    """`enc["labels"] = ...` into a mapping whose value (`uses.uses`) goes only into constructions of the file's own
    dataset classes whose `__getitem__` reads the attribute holding it only at other string keys
    (`self.data["input_ids"][idx]`): the key never reaches a batch, so no loss reads it."""
    base = store.target.value if isinstance(store.target, cst.Subscript) else None
    made = facts.definition(base, store.scope, store.order, identity=True) if base is not None else None
    if made is None:
        return False
    sinks = []
    for use in uses(facts, made.value):
        if use.how == "read" and _stored_into(facts, use.node):
            continue
        cls = facts.classes.get(facts.text(use.call.node.func)) if use.how == "arg" and use.call is not None else None
        if cls is None or "__getitem__" not in cls.methods or "__init__" not in cls.methods:
            return False
        sinks.append((cls, use))
    served = [_served_keys(facts, cls, use.call, use.node) for cls, use in sinks]
    return bool(served) and all(None not in keys and store.key not in keys for keys in served)


def _stored_into(facts: Facts, node: cst.CSTNode) -> bool:
    """`node` is the target of an item assignment: `enc["labels"] = ...`."""
    return any(s.target is node for s in facts.stores)


def _served_keys(facts: Facts, cls: ClassDef, call: Call, arg: cst.CSTNode) -> frozenset | set:
    """The string keys `__getitem__` reads of the attribute `__init__` stores the argument `arg` in; a set holding None
    where it reads it otherwise (whole, at a computed key) or the attribute cannot be told."""
    init = cls.methods["__init__"]
    params = [p.name.value for p in (*init.params.posonly_params, *init.params.params)][1:]
    position = next((i for i, a in enumerate(call.positional) if any(n is arg for n in walk(a.value))), None)
    if position is None or position >= len(params):
        return {None}
    names = [text for text, assigned in facts.self_attrs.items() if any(isinstance(v, cst.Name) and v.value == params[position] and s.node is init for v, s, _ in assigned)]
    if len(names) != 1:
        return {None}
    keys = set()
    for node in walk(cls.methods["__getitem__"]):
        if isinstance(node, cst.Attribute) and dotted(node) == names[0]:
            parent = facts.parent(node)
            index = parent.slice[0].slice if isinstance(parent, cst.Subscript) and len(parent.slice) == 1 else None
            keys.add(literal(index.value) if isinstance(index, cst.Index) and isinstance(literal(index.value), str) else None)
    return frozenset(keys)


# Keywords of a pandas read that make the rows or the header differ from the file's (`nrows=50` reads 50 rows, `names=`
# and `header=` rename or shift the header, `chunksize=` hands out pieces): the file's label counts are not what trains.
_ROW_CHANGING_KEYWORDS = frozenset({"nrows", "skiprows", "skipfooter", "header", "names", "chunksize", "iterator", "converters", "true_values", "false_values"})


# Calls that add rows to a frame: `pd.concat([df, extra])`, `df.append(extra)` (pandas < 2).
_ROW_JOINING = frozenset({"concat", "append"})
# Frame (and `datasets` Dataset) methods whose result holds only some of the rows, or other rows: `df.head(200)`,
# `df.sample(n=500)` (`sample(frac=1)` keeps every row, shuffled), `df.dropna()`, `df.query("x > 0")`,
# `ds.filter(fn)`, `ds.select(range(1000))` (pandas DataFrame API; datasets arrow_dataset.py `Dataset.filter/select/shard`).
# Where a name is ambiguous the safe reading is taken: pandas `df.filter(items=...)` selects columns and `df.where(cond)`
# keeps the rows, but reading them as taking rows only makes the counts unknown.
_ROW_TAKING = frozenset({
    "head", "tail", "sample", "dropna", "drop_duplicates", "query", "nlargest", "nsmallest", "truncate", "explode",
    "filter", "select", "shard", "take", "skip", "groupby", "resample", "where", "mask", "melt", "pivot", "stack", "unstack",
})
# Frame methods whose result has the frame's rows, one to one (a copy, a rename, a reorder, a cast, a column selection
# or a column drop): the file's label counts hold for it.
_ROW_KEEPING = frozenset({"copy", "reset_index", "rename", "astype", "fillna", "sort_values", "sort_index", "set_index", "replace", "assign", "infer_objects"})
# Column methods that make a row mask: `df[df["label"].isin(kept)]`, `df[df.text.notna()]`.
_MASKS = frozenset({"isin", "notna", "notnull", "isna", "isnull", "between", "contains", "startswith", "endswith", "duplicated", "eq", "ne", "gt", "lt", "ge", "le"})
# Frame attributes that hold no rows (the column names, the index, the dtypes, the shape): what is taken of them takes no rows.
_NOT_ROWS = frozenset({"columns", "index", "dtypes", "shape", "size", "ndim", "axes"})
_KEEPS, _TAKES, _UNKNOWN = "keeps", "takes", "unknown"


def data_file_rows_of(facts: Facts, call: Call) -> tuple[Path | None, str]:
    """`data_file_of`, for a read that takes the file's rows under the file's header (no `nrows=`, `names=`, ...) into a
    frame whose rows stay the file's (`_rows_changed`)."""
    if call.has_double_star or set(call.kwargs) & _ROW_CHANGING_KEYWORDS:
        return None, ""
    path, fmt = data_file_of(facts, call)
    return (None, "") if path is None or _rows_changed(facts, call) else (path, fmt)


def _rows_changed(facts: Facts, call: Call) -> bool:
    """The rows that train may not be the file's: the file's counts hold only for frames whose rows are certainly the
    file's rows, the read itself or what keeps its rows one to one (`df.sample(frac=1)`, `df[["text", "label"]]`).
    Changed: the read is taken part of as it is made (`pd.read_csv(...)[:4000]`); a frame derived from it is a part of
    its rows (`df[df["class"] == 0]`, `df.head(200)`, `df.iloc[:500]`), joined with other rows (`pd.concat([df, extra])`,
    `df.append(x)`), or rebound to either; a label-named variable reads a column of a frame derived from it in a way
    not known to keep the rows (`y = df.pipe(clean)["label"]`)."""
    top = call.node
    while _wraps(facts.parent(top), top):  # `pd.read_csv(...)[:4000]`, `pd.read_csv(...).head(100)`
        top = facts.parent(top)
    _, verdict = _derivation(facts, top, call.node)
    if verdict == _TAKES:
        return True
    variables, appended = _frame_derivations(facts)
    holders = {name for _, name, written, *_ in variables if written is top}
    kept, derived = (holders, set()) if verdict == _KEEPS else (set(), holders)
    by_base: dict[str, list[tuple[str, str]]] = {}
    for _, name, _, base, how, _ in variables:
        if base is not None:
            by_base.setdefault(base, []).append((name, how))
    work = [(name, name in kept) for name in holders]
    while work:  # each name enters each set once: linear in the derivations
        frame, whole = work.pop()
        for name, how in by_base.get(frame, ()):
            if whole and how == _TAKES:
                return True
            into = kept if whole and how == _KEEPS else derived
            if name not in into:
                into.add(name)
                work.append((name, into is kept))
    if (kept | derived) & appended or any(joined & (kept | derived) for *_, joined in variables):
        return True
    return any(name.lower() in LABEL_NAMES and _column_frame(written) in derived for _, name, written, *_ in variables)


def _column_frame(expr: cst.BaseExpression) -> str | None:
    """The name of the frame a column is read from in `frame["label"]`, `frame["label"].values`, `frame.label.map(f)`."""
    node = expr
    while isinstance(node, (cst.Attribute, cst.Call, cst.Subscript)):
        if isinstance(node, cst.Call):  # a method call (`y.reshape(-1, 1)`) reads no column
            node = node.func.value if isinstance(node.func, cst.Attribute) else node.func
        elif isinstance(node.value, cst.Name):
            return node.value.value
        else:
            node = node.value
    return None


def _wraps(parent: cst.CSTNode | None, node: cst.CSTNode) -> bool:
    """`parent` subscripts `node`, takes an attribute of it, or calls it (the method `node` names)."""
    if isinstance(parent, (cst.Subscript, cst.Attribute)):
        return parent.value is node
    return isinstance(parent, cst.Call) and parent.func is node


def _worse(a: str, b: str) -> str:
    return _TAKES if _TAKES in (a, b) else _UNKNOWN if _UNKNOWN in (a, b) else _KEEPS


@per_file
def _frame_derivations(facts: Facts) -> tuple[list[tuple[Any, str, Any, str | None, str, set[str]]], set[str]]:
    """For `_rows_changed`, one pass over the file's variables: each written value with (scope, name, the value, the
    frame name it is derived from by a chain of subscripts, attributes and method calls, whether that chain keeps the
    rows, takes part of them (outside a loop) or is not known to do either, the names a row-joining call joins); and the names a
    `.append(...)` is called on."""
    out = []
    for v in facts.variables:
        for written in v.written:
            if not isinstance(written, cst.BaseExpression):
                continue
            base, how = _derivation(facts, written)
            if how == _TAKES and any(isinstance(s, (cst.For, cst.While)) for s in facts.enclosing(facts.statement_of(written))):
                how = _UNKNOWN  # a batch a loop takes at each step (`rows = df.iloc[i:i + 16]`): the steps may cover every row
            joined = names_in(written) if isinstance(written, cst.Call) and _joins_rows(written) else set()
            out.append((v.scope, v.name, written, base, how, joined))
    appended = {c.receiver.value for c in facts.calls if c.method in _ROW_JOINING and isinstance(c.receiver, cst.Name)}
    return out, appended


def _derivation(facts: Facts, expr: cst.BaseExpression, stop: cst.CSTNode | None = None) -> tuple[str | None, str]:
    """(the name of the frame `expr` is derived from, how: keeps / takes / unknown) for a chain of subscripts, attributes
    and method calls on a name, or on the node `stop` (`df[df["class"] == 1].sample(n=3500)`: `df`, takes); (None,
    unknown) for anything else."""
    verdict, node = _KEEPS, expr
    while node is not stop:
        if isinstance(node, cst.Name):
            return node.value, verdict
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            verdict, node = _worse(verdict, _step(facts, node)), node.func.value
        elif isinstance(node, cst.Subscript):
            verdict, inner = _worse(verdict, _step(facts, node)), node.value
            node = inner.value if isinstance(inner, cst.Attribute) and inner.attr.value in ("iloc", "loc") else inner
        elif isinstance(node, cst.Attribute):
            if node.attr.value in _NOT_ROWS:
                return None, _UNKNOWN  # `df.columns[df.columns != "Exited"]` masks the column names, not the rows
            verdict, node = _worse(verdict, _step(facts, node)), node.value
        else:
            return None, _UNKNOWN
    return None, verdict


def _step(facts: Facts, node: cst.CSTNode) -> str:
    """What one link of a chain does to the rows of the frame it is applied to."""
    if isinstance(node, cst.Attribute):  # a column (`df.v1`), its values or an accessor; `df.T` turns columns into rows
        return _UNKNOWN if node.attr.value == "T" else _KEEPS
    if isinstance(node, cst.Call):
        method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        if method == "sample":
            frac = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "frac"), None)
            return _KEEPS if isinstance(frac, (cst.Integer, cst.Float)) and float(frac.value) == 1 else _TAKES
        if method == "drop":  # `df.drop(columns=[...])`, `df.drop([...], axis=1)` drop columns; any other drop drops rows
            keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
            axis = keywords.get("axis")
            by_columns = "columns" in keywords and "index" not in keywords or _column_axis(axis)
            return _KEEPS if by_columns else _TAKES
        return _KEEPS if method in _ROW_KEEPING else _TAKES if method in _ROW_TAKING or method in _ROW_JOINING else _UNKNOWN
    if isinstance(node, cst.Subscript):
        if isinstance(node.value, cst.Attribute) and node.value.attr.value in ("iloc", "loc"):
            rows = node.slice[0].slice
            every = isinstance(rows, cst.Slice) and rows.lower is None and rows.upper is None and rows.step is None
            return _KEEPS if every else _TAKES
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return _TAKES if len(node.slice) == 1 else _UNKNOWN  # `df[:4000]`: the first rows
        key = node.slice[0].slice.value
        if _drops_repeated_header(key):
            return _KEEPS
        if isinstance(key, (cst.Comparison, cst.BooleanOperation, cst.BinaryOperation, cst.UnaryOperation)):
            return _TAKES  # a row mask: `df[df["class"] == 0]`, `df[~df.text.isna()]`, `df[(a) & (b)]`
        if isinstance(key, cst.Call) and isinstance(key.func, cst.Attribute) and key.func.attr.value in _MASKS:
            return _TAKES  # `df[df["label"].isin(kept)]`
        if isinstance(key, cst.List) and all(isinstance(e.value, cst.SimpleString) for e in key.elements):
            return _KEEPS  # `df[["text", "label"]]`: columns
        return _KEEPS if isinstance(literal(key), str) else _UNKNOWN
    return _UNKNOWN


def _joins_rows(node: cst.Call) -> bool:
    """A row-adding call; `pd.concat(..., axis=1)` joins columns side by side and adds no rows."""
    func = node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    axis = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "axis"), None)
    return name in _ROW_JOINING and not _column_axis(axis)


def _column_axis(axis: cst.BaseExpression | None) -> bool:
    """`axis=1` / `axis="columns"`: the call works along the columns."""
    return axis is not None and (isinstance(axis, cst.Integer) and axis.value == "1" or literal(axis) == "columns")


def rewritten_columns(facts: Facts) -> frozenset[str]:
    """Columns the script rewrites in place with other values (`df["quality"] = df["quality"].apply(bin)`,
    `df["y"].replace(old, new, inplace=True)`): their counts in the file are not the ones that train. A one-to-one recoding
    of the column keeps its counts: a label encoder (`LabelEncoder().fit_transform(df["y"])`), `.map`/`.replace` with a
    dict literal of distinct literal values, `.astype(...)`, or a copy of another column."""
    rewritten = set()
    for store in facts.stores:
        key = store.key
        if key is not None and isinstance(store.target, cst.Subscript) and not _recodes(facts, store.value, key, store.scope, store.order):
            rewritten.add(key)  # and the column it is derived from (`df["label"] = df["stars"].apply(...)`), whose raw counts label_columns would read
            rewritten.update(column for column in [_column_read(facts, store.value, None, None)] if column is not None)
    for call in facts.calls:
        receiver = call.receiver
        if "inplace" in call.kwargs and isinstance(receiver, cst.Subscript) and len(receiver.slice) == 1:
            index = receiver.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(literal(index.value), str):
                rewritten.add(literal(index.value))
    return frozenset(rewritten)


def _one_to_one(facts: Facts, mapping: Any, scope: Any, order: int) -> bool:
    """A `.map`/`.replace` mapping taken to recode one-to-one: a dict literal of distinct literal values, a dict
    comprehension (`{name: i for i, name in enumerate(names)}`), or a name whose value is not known to map two keys to
    one value (`label2id`). A function or lambda (`.map(lambda s: s > 3)`) is not."""
    if isinstance(mapping, cst.DictComp):
        return True
    if not isinstance(mapping, (cst.Dict, cst.Name, cst.Attribute)):
        return False
    known = facts.value(mapping, scope, order=order)
    if isinstance(known, dict):
        return len(set(map(repr, known.values()))) == len(known)
    return not isinstance(mapping, cst.Dict)  # a dict literal whose values are not known: unknown


def _recodes(facts: Facts, value: cst.BaseExpression, key: str, scope: Any, order: int) -> bool:
    """`value` stored into column `key` keeps that column's counts: it reads another column as it is (a copy or rename),
    or recodes `key` itself one-to-one."""
    coded = _coded(facts, value, scope, order)
    source = _without_one_to_one_cast(coded if coded is not None else value)
    if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and source.func.attr.value in ("map", "replace"):
        mapping = source.args[0].value if len(source.args) == 1 and source.args[0].keyword is None else None
        if not _one_to_one(facts, mapping, scope, order):
            return False
        source = source.func.value
    if isinstance(source, cst.Subscript) and len(source.slice) == 1 and isinstance(source.slice[0].slice, cst.Index):
        column = literal(source.slice[0].slice.value)
        return isinstance(column, str) and (column != key or coded is not None or source is not value)
    return False


def data_file_of(facts: Facts, call: Call) -> tuple[Path | None, str]:
    """The existing local file a `pd.read_csv`/`load_dataset("csv", data_files=...)`-like call reads."""
    short = call.short or ""
    q = call.qualname or ""
    if short in datafiles.READERS and (q.startswith(("pandas", "datasets")) or call.method in datafiles.READERS):
        fmt = datafiles.READERS[short]
        arg = call.arg(0, "path_or_buf" if fmt == "json" else "filepath_or_buffer")
        if arg is None:
            arg = call.arg(0, "path") or call.arg(0, "path_or_paths")
        if fmt == "json" and facts.kw_value(call, "lines", default=False) is True:
            fmt = "jsonl"
    elif short == "load_dataset" and q.startswith("datasets"):
        builder = facts.arg_value(call, 0, "path")
        if builder not in datafiles.BUILDERS:
            return None, ""
        fmt, arg = datafiles.BUILDERS[builder], call.kwargs.get("data_files")
    else:
        return None, ""
    if arg is None:
        return None, ""
    value = facts.value(arg.value, call.scope, order=call.order)
    if isinstance(value, dict):
        value = value.get("train", next(iter(value.values()), None))
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if not isinstance(value, str) or "://" in value:
        return None, ""
    path = _colab_relative(value, facts.base_dir)
    if not path.is_absolute() and facts.base_dir is not None:
        facts.depends_on(facts.base_dir / path)  # cached results must notice it appear or change
        if (facts.base_dir / path).is_file():
            path = facts.base_dir / path
    facts.depends_on(path)
    if fmt == "json" and path.suffix == ".jsonl":
        fmt = "jsonl"
    separator = _separator(call)
    if fmt in datafiles.DELIMITED and separator is not None:
        fmt = datafiles.DELIMITED_BY.get(facts.value(separator.value, call.scope, order=call.order))
        if fmt is None:
            return None, ""  # a regular expression, whitespace, or a separator not known: the rows cannot be split as pandas splits them
    elif fmt == "csv" and path.suffix.lower() in (".tsv", ".tab"):
        return None, ""  # pandas (and datasets' csv builder) split on commas whatever the suffix: not the rows the name suggests
    try:
        if not path.is_file() or path.stat().st_size > datafiles.MAX_BYTES:
            return None, ""
    except OSError:
        return None, ""
    return path, fmt


# Colab runs a notebook in /content, where the files uploaded beside it land: `/content/train.csv` there is what
# `train.csv` is beside the notebook in its repository (a Drive mount, /content/drive, and Colab's own sample_data are not).
_COLAB_HOME = "/content/"
_COLAB_ELSEWHERE = ("/content/drive/", "/content/gdrive/", "/content/sample_data/")


def _colab_relative(value: str, base_dir: Path | None) -> Path:
    """`value` as a path; a Colab working-directory path (`/content/train.csv`) relative to the script's folder when that
    folder holds the file."""
    if base_dir is not None and value.startswith(_COLAB_HOME) and not value.startswith(_COLAB_ELSEWHERE):
        relative = Path(value[len(_COLAB_HOME):])
        if relative.parts and ".." not in relative.parts and (base_dir / relative).is_file():
            return relative
    return Path(value)


def _separator(call: Call) -> cst.Arg | None:
    """The `sep=`/`delimiter=` argument of a delimited-text read (pandas `read_csv(filepath_or_buffer, sep, ...)`,
    `read_table`; datasets `from_csv(path_or_paths, split, ...)` passes its keywords on to `read_csv`)."""
    if call.short in ("read_csv", "read_table"):
        return call.arg(1, "sep") or call.kwargs.get("delimiter")
    return call.kwargs.get("sep") or call.kwargs.get("delimiter")


def _drops_repeated_header(mask: cst.BaseExpression) -> bool:
    """`frame["label"] != "label"`: the rows whose column holds its own header name, the repeated header of files
    concatenated with their headers, which datafiles.py does not count as examples either."""
    if not isinstance(mask, cst.Comparison) or len(mask.comparisons) != 1 or not isinstance(mask.comparisons[0].operator, cst.NotEqual):
        return False
    left, right = mask.left, mask.comparisons[0].comparator
    column = literal(left.slice[0].slice.value) if isinstance(left, cst.Subscript) and len(left.slice) == 1 and isinstance(left.slice[0].slice, cst.Index) else None
    return isinstance(column, str) and literal(right) == column
