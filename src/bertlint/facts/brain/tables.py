"""Tables of texts: pandas DataFrames and their columns, Hugging Face `datasets` (splits, columns, `map`), the
lines of a text file.

A column, a split's column or a file's lines holds several texts (`Instance("texts")`); one row's field does not
resolve. Sources: pandas' readers (`read_csv`, `read_pickle`, ... `TABLE_MAKERS`) and `DataFrame` make a DataFrame;
`df[col]` a Series; `Series.values/.array/.to_numpy()/.tolist()/.to_list()/.astype()` keep its elements; the
listed DataFrame methods return a DataFrame. A column the file stores (`df[col] = value`, through any name or function
holding the table) holds what was stored, joined with the file's own column unless the table is a dict display
without it (pandas `DataFrame.__setitem__`: the column replaced or added); unknown where a store the model does not
follow may reach it (`df.loc[...] = ...`, an unknown key or object, `insert`, `inplace=True`). datasets `load_dataset` makes a DatasetDict or Dataset; `ds[name]` is a
split or a column; `map(fn)` makes a dataset of what `fn` returns. `file.readlines()`, `str.splitlines()` give lines.

The function a `datasets` `map`/`filter` runs receives, as its first parameter, one example (a dict of one value per
column) or, `batched=True`, a batch (a dict of a list per column): datasets 4.x arrow_dataset.py:3214 `Dataset.map(
function, with_indices, with_rank, input_columns, batched=False, ...)` ("a `dict` mapping to all formatted columns is
passed as one argument" unless `input_columns`), :4143 `filter(...)` alike; iterable_dataset.py:3464/:3646 the same
keywords (commit b7cb10b0). A batch's column holds several texts; an example's field one.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import UNKNOWN, Abstract, Binding, Instance, Pack, Series, agree, is_index
from bertlint.facts.functions import callable_returns, called_directly, first_handed_parameter, hands
from bertlint.facts.nodes import dotted, literal

# DataFrame methods that change its columns in place (pandas DataFrame API: `insert(loc, column, value)`, `pop(item)`,
# `update(other)`, `eval("c = a + b")` assigns a column, in place by default before pandas 0.21; any method with
# `inplace=True`)
TABLE_CHANGING = frozenset({"insert", "pop", "update", "eval", "__setitem__", "__delitem__"})
# pandas' readers of a file or a database (each returns a DataFrame: pandas 2.x io/*.py, `read_json` a Series only with
# `typ="series"`), and `read_pickle`, which returns the object pickled (pandas io/pickle.py: "Load pickled pandas object
# (or any object)"): the DataFrame or Series a `to_pickle` wrote, whose `[column]` reads and stores a script makes of it
# are a frame's (a dict of lists answers them alike)
TABLE_MAKERS = ("pandas.read_csv", "pandas.read_json", "pandas.read_excel", "pandas.read_parquet", "pandas.read_table",
                "pandas.read_fwf", "pandas.read_feather", "pandas.read_orc", "pandas.read_pickle", "pandas.read_sql",
                "pandas.read_sql_query", "pandas.read_sql_table", "pandas.read_xml", "pandas.DataFrame")
TABLE_KEEPING = frozenset({
    "dropna", "drop_duplicates", "sample", "head", "tail", "reset_index", "copy", "fillna", "sort_values", "rename",
    "astype", "query", "drop",
})
COLUMN_KEEPING = frozenset({"tolist", "to_list", "to_numpy", "astype", "fillna", "dropna", "head", "tail", "sample"})
ELEMENT_WISE = {"apply": "func", "map": "arg"}  # a column's methods that give each element through a function: its parameter
NUMBERING = frozenset({"builtins.len", "builtins.int", "builtins.float", "builtins.bool"})  # builtins that give no text
COLUMN_ATTRIBUTES = frozenset({"values", "array"})
# the column methods above that keep any Series' elements as they are (some or all of them: `tolist()`, `head()`,
# `dropna()`; `ndarray.tolist()` and `Tensor.tolist()` too), not those that convert or replace them
ELEMENTS_KEEPING = COLUMN_KEEPING - {"astype", "fillna"}
# attributes of a DataFrame that are no column (pandas DataFrame API): `df.text` is a column, `df.shape` is not
TABLE_ATTRIBUTES = frozenset({
    "loc", "iloc", "at", "iat", "shape", "columns", "index", "dtypes", "values", "size", "ndim", "empty", "T", "axes",
    "attrs", "style", "plot", "str", "flags", "sparse", "array",
})
HUB_MAKERS = ("datasets.load_dataset", "datasets.load_from_disk", "datasets.Dataset.from_pandas", "datasets.Dataset.from_dict", "datasets.Dataset.from_list")
DATASET_KEEPING = frozenset({"with_format", "remove_columns", "rename_column", "shuffle", "select", "filter", "sort", "flatten_indices"})
# a hub dataset mapped by a function that returns no encoding keeps its columns (and a split of it, its splits);
# `train_test_split` makes a DatasetDict of "train" and "test" (arrow_dataset.py:4971)
HUB_KEEPING = DATASET_KEEPING | {"map", "train_test_split"}
EXAMPLE_FUNCTIONS = frozenset({"map", "filter"})  # methods of a datasets dataset that run a function on its examples
# the columns a tokenizer's encoding adds to a mapped dataset (transformers 5.24 tokenization_utils_base.py:988
# `model_input_names = ["input_ids", "attention_mask"]`, and `token_type_ids` for the models that take them)
ENCODING_COLUMNS = frozenset({"input_ids", "attention_mask", "token_type_ids"})
EXAMPLE, BATCH = Instance("examples", None, False), Instance("examples", None, True)  # what a `map` function receives
# sklearn `train_test_split(*arrays, test_size, train_size, random_state, shuffle, stratify)` returns `[a_train, a_test,
# b_train, b_test, ...]`, each some rows of its array in an object of its kind: a list for a list or tuple, a Series for
# a Series, a DataFrame's rows (`take`), an array's or tensor's rows (`array[key]`) (scikit-learn 1.9.1
# model_selection/_split.py:2797, "splitting : list, length=2 * len(arrays)", its return `chain.from_iterable(
# (_safe_indexing(a, train), _safe_indexing(a, test)) for a in arrays)`; utils/_indexing.py `_safe_indexing`)
SPLITTERS = ("sklearn.model_selection.train_test_split",)
# objects whose rows are no slice of them: an instance of the file's class (`_list_indexing`: `[X[i] for i in key]`,
# its `__getitem__` of each index) and a parser or namespace
ROWLESS = frozenset({"instance", "parser", "namespace"})
# scikit-learn's text dataset loaders: a Bunch (a dict with attribute access) whose `data` is the list of all the posts
# of the subset (scikit-learn 1.x datasets/_twenty_newsgroups.py `fetch_20newsgroups`: "data : list of shape
# (n_samples,)", 11,314 train / 7,532 test posts, hundreds per category; `return_X_y=True` returns `(data.data,
# data.target)`)
TEXT_LOADERS = ("sklearn.datasets.fetch_20newsgroups",)
LOADED_TEXTS = "data"
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
    if q in SPLITTERS:
        return _split(ev, call)
    if q in TEXT_LOADERS:
        return _loaded(ev, call)
    if call.method == "map" and (fn := call.arg(0, "function")) is not None and maps_to_encodings(ev.f, fn.value, call):
        return Binding("dataset", call)  # `ds.map(tokenize, batched=True)`: its columns are what `tokenize` returns
    return None


def _loaded(ev, call) -> Any:
    """`fetch_20newsgroups(...)`: a Bunch of several texts, or with `return_X_y=True` the pair (texts, targets)."""
    if call.has_star_args or call.has_double_star:
        return UNKNOWN
    pair = ev.f.kw_value(call, "return_X_y", cli=False, default=False)
    if pair is True:
        return Pack((Instance("texts", call, LOADED_TEXTS), UNKNOWN))
    return Instance("loaded_texts", call) if pair is False else UNKNOWN


def _split(ev, call) -> Any:
    """`train_test_split(texts, labels)`: two parts of each array, each some of its rows (`_safe_indexing(a, train)`):
    what a slice of it holds for an object whose slice is rows (padded ids, a mask, a column, a DataFrame, several
    texts); for a list known element by element, a list each element of which holds what they all hold; a list built
    in a loop or a comprehension, several texts where it is. Unknown for any other array: a list display's rows may be
    one, the rows of an instance of the file's class are its `__getitem__` of each index (not of a slice), those of an
    encoding a fast tokenizer's `tokenizers.Encoding` objects."""
    if call.has_star_args:
        return UNKNOWN
    parts = []
    for arg in call.positional:
        value = ev.sub(arg.value, call.scope, call.order)
        kept = rows(ev, value)
        if kept is UNKNOWN and not isinstance(value, (list, tuple, Pack)) and ev.f.is_batch(arg.value, call.scope, call.order) is True:
            kept = Instance("texts", call)  # a list appended to in a loop, a comprehension
        parts += [kept, kept]
    return Pack(tuple(parts)) if any(p is not UNKNOWN for p in parts) else UNKNOWN


def rows(ev, value) -> Any:
    """What some of the rows of `value` hold, in an object of its kind: what a slice of it holds (`value[:]`), or for a
    list known element by element, what each of its elements holds."""
    if isinstance(value, Pack):
        element = agree(list(value.items))
        return Series(element) if element is not UNKNOWN else UNKNOWN
    if isinstance(value, Instance) and value.kind in ROWLESS or not isinstance(value, Abstract):
        return UNKNOWN
    return ev.f.item_of(value, slice(None))


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
    if isinstance(receiver, Series) and name in ELEMENTS_KEEPING:
        return receiver  # `col.apply(f).tolist()`: the list of the same elements
    if not isinstance(receiver, Instance):
        return None
    if receiver.kind == "table" and name in TABLE_KEEPING:
        return receiver
    if receiver.kind == "texts" and name in ELEMENT_WISE:
        return _element_wise(ev, receiver, call)
    if receiver.kind == "texts" and name in COLUMN_KEEPING:
        return receiver
    if receiver.kind == "hub_dataset" and name in HUB_KEEPING:
        return receiver
    return None


def _element_wise(ev, column: Instance, call) -> Any:
    """`col.apply(f)` / `col.map(f)`: a column of what `f` gives each element (pandas 2.x `Series.apply(func,
    convert_dtype, args, by_row, **kwargs)`, `Series.map(arg, na_action)`: a function, or a mapping's values). Where
    every return is an object the evaluator knows (`tok(t, padding="max_length")["input_ids"]`), a list of it; a number,
    a bool or None (`len`, `label2id.get`), no texts: UNKNOWN; strings, or what the file does not show (`str.strip`, a
    cleaner of its own), the texts the column held, as before."""
    arg = call.arg(0, ELEMENT_WISE[call.method])
    if arg is None or call.has_star_args or call.has_double_star:
        return UNKNOWN
    mapping = ev.sub(arg.value, call.scope, call.order)
    if isinstance(mapping, dict):
        found = list(mapping.values())
    elif (returned := callable_returns(ev.f, arg.value, call)) is not None:
        found = [ev.f.evaluate(arm, scope, frame=frame) for value, scope, frame in returned for arm in _arms(value)]
    else:
        return UNKNOWN if ev.f.qualname(arg.value, call.scope) in NUMBERING else column
    if not found or any(isinstance(v, (bool, int, float)) or v is None for v in found):
        return UNKNOWN
    objects = [v for v in found if isinstance(v, Abstract)]
    if not objects:
        return column
    element = agree(objects) if len(objects) == len(found) else UNKNOWN
    return Series(element) if element is not UNKNOWN else UNKNOWN


def _arms(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values a conditional expression may give, each on its own (`1 if pos else 0`: 1 and 0, which join to no
    value)."""
    return [*_arms(expr.body), *_arms(expr.orelse)] if isinstance(expr, cst.IfExp) else [expr]


def attribute(ev, base, attr: str) -> Any:
    if isinstance(base, Series) and attr in COLUMN_ATTRIBUTES:
        return base  # `.values`, `.array`: the same elements
    if isinstance(base, Instance) and base.kind == "texts" and attr in COLUMN_ATTRIBUTES:
        return base
    if isinstance(base, Instance) and base.kind == "loaded_texts":  # `bunch.data`; its other attributes are no texts
        return Instance("texts", base.call, attr) if attr == LOADED_TEXTS else UNKNOWN
    if isinstance(base, Instance) and base.kind == "table":  # `df.text`: a column, unless a DataFrame attribute
        return UNKNOWN if attr in TABLE_ATTRIBUTES or attr.startswith("_") else column(ev.f, base, attr)
    return None


def item(values, base, key) -> Any:
    if isinstance(base, Binding) and base.kind == "dataset" and base.call.method == "map" and isinstance(key, str):
        return mapped_column(values, base.call, key) or base  # a column of ids, else a split of a mapped DatasetDict
    if not isinstance(base, Instance):
        return None
    if base.kind == "examples":  # one example's field, or a batch's column (whichever: `examples[args.text_column]`)
        return (Instance("texts", base.call, key) if base.detail else Instance("field", base.call, key)) if isinstance(key, str) or key is UNKNOWN else UNKNOWN
    if base.kind == "table" and isinstance(key, str):
        return column(values, base, key)
    if base.kind == "table" and isinstance(key, slice):
        return base  # `df[1:5]`: rows, every column (pandas `DataFrame.__getitem__`: "Do we have a slicer (on rows)?")
    if base.kind == "loaded_texts":  # `bunch["data"]`
        return Instance("texts", base.call, key) if key == LOADED_TEXTS else UNKNOWN
    if base.kind == "texts" and isinstance(key, slice):
        return base
    if base.kind == "texts" and is_index(key):
        return Instance("field", base.call, key)  # one row of the column, at the index a sampler yields
    if base.kind == "hub_dataset" and isinstance(key, (str, slice)):
        return Instance("hub_dataset", base.call, (*base.detail, key))  # a split, a column, rows
    return UNKNOWN


def column(values, table: Instance, key: str) -> Any:
    """`df[key]` (or `df.key`): the texts the file read, or what the file stores in the column (`df[key] = v`, through
    any name or function that holds the table): every value it may hold at a read joined, several texts where each is;
    UNKNOWN where a store or an in-place change may reach it and what it stores is not seen."""
    return values.memoised(("table column", id(table.call), key), lambda: _column(values, table, key))


def _column(values, table: Instance, key: str) -> Any:
    texts = Instance("texts", table.call, key)
    stores = _column_stores(values, table, key)
    if stores is None:
        return UNKNOWN
    if not stores:
        return texts
    found = [] if _absent(values, table, key) else [texts]  # a read before the stores: the file's column, or a KeyError
    found += [_stored(values.evaluate(s.value, s.scope, s.order)) for s in stores if not _keeps_column(s, key)]
    if all(several_texts(v) for v in found):
        return found[-1] if found else texts  # the object a store stored (a read right after it agrees with that store)
    return agree(found)


def _stored(value: Any) -> Any:
    """What a column holds after `value` is stored: an object's rows (ids, another column), a list of several texts; a
    constant is broadcast or made a Series, no value here."""
    return value if isinstance(value, Abstract) else UNKNOWN


def _column_stores(values, table: Instance, key: str) -> list | None:
    """The stores of column `key` into `table`; None where a change the file makes may reach it unseen: a store or
    deletion at a key not known, into an object not known, of `columns`, `df.loc[...] = ...`, or an in-place method
    of the table (`insert`, `inplace=True`)."""
    found = []
    for store in (*values.stores, *values.touched):
        target = store.target
        if isinstance(target, cst.Attribute):
            if target.attr.value not in (key, "columns"):
                continue
        elif isinstance(target, cst.Subscript):
            index = target.slice[0].slice if len(target.slice) == 1 else None
            name = values.evaluate(index.value, store.scope, store.order) if isinstance(index, cst.Index) else UNKNOWN
            if name is not UNKNOWN and name != key:
                continue
        else:
            continue
        owner = values.evaluate(target.value, store.scope, store.order)
        if owner is UNKNOWN:
            return None  # it may hold the table
        if not _same_table(owner, table):
            continue
        if store in values.touched or isinstance(target, cst.Attribute) and target.attr.value == "columns":
            return None
        found.append(store)
    for call in values.calls:
        if call.receiver is not None and (call.method in TABLE_CHANGING or "inplace" in call.kwargs):
            owner = values.evaluate(call.receiver, call.scope, call.order)
            if owner is UNKNOWN or _same_table(owner, table):
                return None
    return found


def _same_table(value: Any, table: Instance) -> bool:
    return isinstance(value, Instance) and value.kind == "table" and value.call is table.call


def _absent(values, table: Instance, key: str) -> bool:
    """`pd.DataFrame({"text": ...})` has no column `key` until the file stores one (its columns: the dict's keys)."""
    call = table.call
    data = call.arg(0, "data")
    if call.qualname != "pandas.DataFrame" or data is None or set(call.kwargs) - {"data"} or call.has_star_args or not isinstance(data.value, cst.Dict):
        return False
    keys = [values.value(e.key, call.scope, order=call.order) if isinstance(e, cst.DictElement) else UNKNOWN for e in data.value.elements]
    return all(isinstance(k, str) for k in keys) and key not in keys


def _keeps_column(store, key: str) -> bool:
    """`df[key] = df[key].apply(f)`: the column again, through methods that keep a column's texts (it holds what the
    column held before)."""
    value = store.value
    while True:
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in COLUMN_KEEPING:
            value = value.func.value
        elif isinstance(value, cst.Attribute) and value.attr.value in COLUMN_ATTRIBUTES:
            value = value.value
        else:
            break
    target = store.target
    same = isinstance(value, type(target)) and dotted(value.value) is not None and dotted(value.value) == dotted(target.value)
    if isinstance(target, cst.Attribute):
        return same and value.attr.value == key
    index = value.slice[0].slice if same and len(value.slice) == 1 else None
    return isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) and literal(index.value) == key


def mapping(value) -> bool | None:
    return True if isinstance(value, Instance) and value.kind == "examples" else None


def parameter(ev, owner, name: str) -> Any:
    """The first parameter of a function the file passes to a datasets `map`/`filter`: an example, or a batch of
    examples (`batched=True`); UNKNOWN where the call sites disagree, or the file also calls the function itself."""
    fn = first_handed_parameter(ev.f, owner, name)
    if fn is None:
        return None
    sites = [c for short in EXAMPLE_FUNCTIONS for c in ev.f.calls_by_short.get(short, ()) if c.method == short and hands(ev.f, _function(c), c, fn)]
    if not sites:
        return None
    if called_directly(ev.f, fn):
        return UNKNOWN  # what it receives there is another question
    return agree([_examples(ev, site) for site in sites])


def _function(call) -> cst.BaseExpression | None:
    arg = call.arg(0, "function")
    return arg.value if arg is not None else None


def _examples(ev, call) -> Any:
    """What a `map`/`filter` call hands its function: an example, or a batch of examples."""
    if len(call.positional) > 1 or call.has_star_args or call.has_double_star or "input_columns" in call.kwargs:
        return UNKNOWN  # `input_columns`: the columns come as positional arguments
    if "batched" in call.kwargs:
        batched = ev.f.kw_value(call, "batched", cli=ev.cli)
        if batched is True and ev.f.kw_value(call, "batch_size", cli=ev.cli, default=1000) == 1:
            return UNKNOWN  # batches of one text: nothing to pad between them
        return (BATCH if batched else EXAMPLE) if isinstance(batched, bool) else UNKNOWN
    receiver = ev.sub(call.receiver, call.scope, call.order)
    known = isinstance(receiver, Instance) and receiver.kind == "hub_dataset" or isinstance(receiver, Binding) and receiver.kind == "dataset"
    return EXAMPLE if known else UNKNOWN  # `batched` defaults to False


def mapped_column(values, mapped, key: str) -> Binding | None:
    """`tokenized["input_ids"]`: the ids column the mapping function's encoding made."""
    if key not in ENCODING_COLUMNS:
        return None
    fn = mapped.arg(0, "function")
    found = [values.evaluate(value, scope, frame=frame) for value, scope, frame in callable_returns(values, fn.value, mapped) or ()] if fn is not None else []
    encoding = agree(found) if found else UNKNOWN
    return Binding("ids", encoding.call, encoding, key) if isinstance(encoding, Binding) and encoding.kind == "encoding" else None


def several_texts(value) -> bool:
    """A column of a table, a column or rows of a hub dataset, a column of a batch of examples: several texts."""
    return isinstance(value, Instance) and (value.kind == "texts" or value.kind == "hub_dataset" and bool(value.detail))


def one_text(value) -> bool:
    """One example's field (a `map` function's example, not batched): one text, or one pre-split sequence; one
    string a library renders (`Instance("text")`: a chat template's)."""
    return isinstance(value, Instance) and value.kind in ("field", "text")


def maps_to_encodings(values, fn, at) -> bool:
    """A `map` function that returns a tokenizer's encoding (a datasets preprocessing function)."""
    return any(
        isinstance(found := values.evaluate(value, scope, frame=frame), Binding) and found.kind == "encoding"
        for value, scope, frame in callable_returns(values, fn, at) or ()
    )
