"""Tables of texts: pandas DataFrames and their columns, Hugging Face `datasets` (splits, columns, `map`), the
lines of a text file.

A column, a split's column or a file's lines holds several texts (`Instance("texts")`); one row's field does not
resolve. Sources: pandas `read_csv/read_json/read_excel/read_parquet/read_table/DataFrame` make a DataFrame;
`df[col]` a Series; `Series.values/.array/.to_numpy()/.tolist()/.to_list()/.astype()` keep its elements; the
listed DataFrame methods return a DataFrame. datasets `load_dataset` makes a DatasetDict or Dataset; `ds[name]` is a
split or a column; `map(fn)` makes a dataset of what `fn` returns. `file.readlines()`, `str.splitlines()` give lines.
"""

from __future__ import annotations

from typing import Any

from bertlint.facts.abstract import UNKNOWN, Binding, Instance
from bertlint.facts.functions import callable_returns

TABLE_MAKERS = ("pandas.read_csv", "pandas.read_json", "pandas.read_excel", "pandas.read_parquet", "pandas.read_table", "pandas.DataFrame")
TABLE_KEEPING = frozenset({
    "dropna", "drop_duplicates", "sample", "head", "tail", "reset_index", "copy", "fillna", "sort_values", "rename",
    "astype", "query", "drop",
})
COLUMN_KEEPING = frozenset({"tolist", "to_list", "to_numpy", "astype", "apply", "map", "fillna", "dropna", "head", "tail", "sample"})
COLUMN_ATTRIBUTES = frozenset({"values", "array"})
HUB_MAKERS = ("datasets.load_dataset", "datasets.load_from_disk", "datasets.Dataset.from_pandas", "datasets.Dataset.from_dict", "datasets.Dataset.from_list")
DATASET_KEEPING = frozenset({"with_format", "remove_columns", "rename_column", "shuffle", "select", "filter", "sort", "flatten_indices"})
LINE_METHODS = frozenset({"tolist", "to_list", "readlines", "splitlines"})  # methods that give a list of lines or texts
# `Dataset.map/filter` process every row before returning; an `IterableDataset`'s (`streaming=True`) run as it is
# iterated (https://huggingface.co/docs/datasets/about_mapstyle_vs_iterable, "Eager data processing and lazy data processing")
EAGER_CALLBACKS = frozenset({"map", "filter"})


def call(ev, call) -> Any:
    q = call.qualname
    if q in TABLE_MAKERS:
        return Instance("table", call)
    if q in HUB_MAKERS:
        return Instance("hub_dataset", call, ())
    if call.method == "map" and (fn := call.arg(0, "function")) is not None and maps_to_encodings(ev.f, fn.value, call):
        return Binding("dataset", call)  # `ds.map(tokenize, batched=True)`: its columns are what `tokenize` returns
    return None


def calls_back(ev, call) -> bool | None:
    """A `datasets` dataset loaded without streaming runs the function its `map`/`filter` is given before returning."""
    if call.method not in EAGER_CALLBACKS or call.receiver is None:
        return None
    receiver = ev.sub(call.receiver, call.scope, call.order)
    return True if isinstance(receiver, Instance) and receiver.kind == "hub_dataset" and "streaming" not in receiver.call.kwargs else None


def method(ev, receiver, call) -> Any:
    name = call.method
    if isinstance(receiver, Binding) and receiver.kind == "dataset" and name in DATASET_KEEPING:
        return receiver
    if not isinstance(receiver, Instance):
        return None
    if receiver.kind == "table" and name in TABLE_KEEPING:
        return receiver
    if receiver.kind == "texts" and name in COLUMN_KEEPING:
        return receiver
    if receiver.kind == "hub_dataset" and name in DATASET_KEEPING:
        return receiver
    return None


def attribute(ev, base, attr: str) -> Any:
    if isinstance(base, Instance) and base.kind == "texts" and attr in COLUMN_ATTRIBUTES:
        return base
    return None


def item(values, base, key) -> Any:
    if isinstance(base, Binding) and base.kind == "dataset" and base.call.method == "map" and isinstance(key, str):
        return base  # a split of a mapped DatasetDict (`tokenized["train"]`)
    if not isinstance(base, Instance):
        return None
    if base.kind == "table" and isinstance(key, str):
        return Instance("texts", base.call, key)
    if base.kind == "texts" and isinstance(key, slice):
        return base
    if base.kind == "hub_dataset" and isinstance(key, (str, slice)):
        return Instance("hub_dataset", base.call, (*base.detail, key))  # a split, a column, rows
    return UNKNOWN


def several_texts(value) -> bool:
    """A column of a table, a column or rows of a hub dataset: several texts."""
    return isinstance(value, Instance) and (value.kind == "texts" or value.kind == "hub_dataset" and bool(value.detail))


def maps_to_encodings(values, fn, at) -> bool:
    """A `map` function that returns a tokenizer's encoding (a datasets preprocessing function)."""
    return any(
        isinstance(found := values.evaluate(value, scope, frame=frame), Binding) and found.kind == "encoding"
        for value, scope, frame in callable_returns(values, fn, at) or ()
    )
