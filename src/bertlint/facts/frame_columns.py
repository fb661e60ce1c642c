"""Frame columns: which columns of a pandas frame or dataset a script renames, reads into its labels, and rewrites with
other values."""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

import libcst as cst

from bertlint import knowledge
from bertlint.facts.abstract import Instance
from bertlint.facts.file_reads import read_header
from bertlint.facts.model import per_file
from bertlint.facts.names import LABEL_NAMES
from bertlint.facts.nodes import Call, dotted, literal
from bertlint.facts.values import Values as Facts


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


@per_file
def label_columns(facts: Facts) -> list[str]:
    """Columns the script treats as labels, then the usual names: a column renamed to a label name, a column read into
    `df["label"]` or a label-named variable (`labels = df["sentiment"].map(...)`), directly or coded by a label encoder
    (`df["label"] = LabelEncoder().fit_transform(df["emotion"])`)."""
    sources = [(old, None, None) for old, new, _ in column_renames(facts) if new in LABEL_NAMES] + _label_sources(facts)
    return [column for column in (_column_read(facts, *source) or _column_at(facts, *source) for source in sources) if column] + list(_USUAL_LABEL_COLUMNS)


def _label_sources(facts: Facts) -> list[tuple[Any, Any, Any]]:
    """(value, scope, order) of every store into a label-named column (`df["label"] = ...`) and every value a
    label-named variable is bound to."""
    sources = [(store.value, store.scope, store.order) for store in facts.stores if isinstance(store.target, cst.Subscript) and store.key in LABEL_NAMES]
    return sources + [(value, variable.scope, variable.after) for variable in facts.variables if variable.name.lower() in LABEL_NAMES for value in variable.written]


@per_file
def mapped_label_columns(facts: Facts) -> list[tuple[str, Callable[[Any], Any]]]:
    """(column, f) for each label source that makes one label of each value of a column by an expression the file
    spells out, with `f` that label for one value (`_NO` where the expression is not one `_concrete` follows):
    `[0 if v == "ham" else 1 for v in df.v1.values]` (a comprehension over the column), `df.v1.map(lambda v: ...)` /
    `.apply(lambda v: ...)` (pandas `Series.map(arg)` / `Series.apply(func)`: the function of each element), and a
    comparison of the column with constants (`df["rate"] < 9`: pandas compares element by element); a label source
    or the one store into a column the labels read (`df["Target"] = df["rate"] < 9; y = df["Target"]`)."""
    read = set(label_columns(facts)) - set(_USUAL_LABEL_COLUMNS)
    stores = [store for store in facts.stores if isinstance(store.target, cst.Subscript) and store.key in read]
    once = [(store.value, store.scope, store.order) for store in stores if sum(other.key == store.key for other in stores) == 1]
    changed = _column_changes(facts)
    found = []
    for value, scope, order in _label_sources(facts) + once:  # and the one store into a column the labels read
        mapped = _element_mapping(facts, value, scope, order)
        # a column the file changes, other than by the store of this mapping itself, may hold values not the file's
        if mapped is not None:
            found.append(mapped if all(change is value for change in changed.get(mapped[0], ())) else (mapped[0], lambda value: _NO))
    return found


def _column_changes(facts: Facts) -> dict[Any, list[Any]]:
    """For each column the script stores into (`df["y"] = ...`, `df.y = ...`), the values it stores; changed in place
    (`inplace=True`), None."""
    changes: dict[Any, list[Any]] = {}
    for store in facts.stores:
        if store.key is not None and (isinstance(store.target, cst.Subscript) or _column_set_as_attribute(facts, store)):
            changes.setdefault(store.key, []).append(store.value)
    for call in facts.calls:
        receiver = call.receiver
        if "inplace" in call.kwargs and isinstance(receiver, cst.Subscript) and len(receiver.slice) == 1 and isinstance(receiver.slice[0].slice, cst.Index):
            changes.setdefault(literal(receiver.slice[0].slice.value), []).append(None)
    return changes


def _element_mapping(facts: Facts, node: Any, scope: Any, order: Any) -> tuple[str, Callable[[Any], Any]] | None:
    node = _unwrapped(node)
    if isinstance(node, cst.ListComp) and node.for_in.inner_for_in is None and not node.for_in.ifs and node.for_in.asynchronous is None and isinstance(node.for_in.target, cst.Name):
        column, name, body = _plain_column(facts, node.for_in.iter, scope, order), node.for_in.target.value, node.elt
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("map", "apply") and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star:
        fn = node.args[0].value
        if isinstance(fn, cst.Name) and len(facts.functions.get(fn.value, ())) == 1:
            fn = facts.functions[fn.value][0][0]  # the file's own function, defined once
        elif isinstance(fn, (cst.Dict, cst.DictComp, cst.Name, cst.Attribute)):
            return None  # a mapping, or a function not the file's: `_recodes` and the reads of the column judge them
        column = _plain_column(facts, node.func.value, scope, order)
        params = fn.params if isinstance(fn, cst.Lambda) or isinstance(fn, cst.FunctionDef) and not fn.decorators else None
        if column is None:
            return None
        if params is None or len(params.params) != 1 or params.posonly_params or params.kwonly_params or not isinstance(params.star_arg, cst.MaybeSentinel) or params.star_kwarg is not None:
            return column, lambda value: _NO  # a function of the column whose labels are not followed
        name = params.params[0].name.value
        if isinstance(fn, cst.FunctionDef):
            return column, lambda value: _returned(fn.body.body, name, value)
        body = fn.body
    elif isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and not isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) and isinstance(_concrete(node.comparisons[0].comparator, None, None), (int, float, str)):
        column, name, body = _plain_column(facts, node.left, scope, order), node.left, node
    else:
        return None
    return (column, lambda value: _concrete(body, name, value)) if column is not None else None


def _unwrapped(node: Any) -> Any:
    """`node` without the attributes and methods that keep a column's elements (`.values`, `.tolist()`)."""
    while True:
        if isinstance(node, cst.Attribute) and node.attr.value in ("values", "array"):
            node = node.value
        elif isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("tolist", "to_list", "to_numpy"):
            node = node.func.value
        else:
            return node


def _returned(statements: Any, name: str, value: Any) -> Any:
    """What a function body of `if test: return x` / `elif` / `else` and `return x` statements returns where `name`
    holds `value` (None where it falls off its end); `_NO` for any other statement."""
    for statement in statements:
        if isinstance(statement, cst.If):
            test = _concrete(statement.test, name, value)
            if test is _NO:
                return _NO
            branch = statement.body.body if test else (
                [statement.orelse] if isinstance(statement.orelse, cst.If) else statement.orelse.body.body if statement.orelse is not None else [])
            result = _returned(branch, name, value)
            if result is not _FALLS:
                return result
        elif isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Return):
            returned = statement.body[0].value
            return _concrete(returned, name, value) if returned is not None else None
        else:
            return _NO
    return _FALLS


def _plain_column(facts: Facts, node: Any, scope: Any, order: Any) -> str | None:
    """The column `node` reads as it is (`df["v1"]`, `df.v1`, `df.v1.values`, `df["v1"].tolist()`), not through a
    function of it."""
    while True:
        if isinstance(node, cst.Attribute) and node.attr.value in ("values", "array") and not isinstance(node.value, cst.Name):
            node = node.value
        elif isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("tolist", "to_list", "to_numpy"):
            node = node.func.value
        else:
            break
    plain = isinstance(node, cst.Subscript) or isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
    return _column_read(facts, node, scope, order) if plain else None


class _Unknown:
    """The value of an expression `_concrete` does not follow."""


_NO, _FALLS = _Unknown(), _Unknown()  # not followed; the statements end without a return
_COMPARE = {
    cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b, cst.LessThan: lambda a, b: a < b,
    cst.LessThanEqual: lambda a, b: a <= b, cst.GreaterThan: lambda a, b: a > b, cst.GreaterThanEqual: lambda a, b: a >= b,
    cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
}
_CONSTANTS = {"True": True, "False": False, "None": None}


def _concrete(expr: cst.BaseExpression, name: Any, value: Any) -> Any:
    """What `expr` gives where `name` (a variable's name, or the node itself) holds `value`: constants, comparisons,
    `and`/`or`/`not`, conditional expressions and a dict display looked up; `_NO` for anything else, and where Python
    raises (a str compared with an int, a key the dict lacks)."""
    if expr is name or isinstance(expr, cst.Name) and expr.value == name:
        return value
    if isinstance(expr, cst.Name):
        return _CONSTANTS.get(expr.value, _NO)
    if isinstance(expr, (cst.Integer, cst.Float)):
        return expr.evaluated_value
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        text = literal(expr)
        return text if isinstance(text, str) else _NO
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Not)):
        inner = _concrete(expr.expression, name, value)
        if inner is _NO:
            return _NO
        if isinstance(expr.operator, cst.Not):
            return not inner
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else _NO
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        items = [_concrete(e.value, name, value) if not isinstance(e, cst.StarredElement) else _NO for e in expr.elements]
        return _NO if any(i is _NO for i in items) else tuple(items)
    try:
        if isinstance(expr, cst.Comparison) and all(type(c.operator) in _COMPARE for c in expr.comparisons):
            left = _concrete(expr.left, name, value)
            for comparison in expr.comparisons:  # `a < b < c`: `a < b and b < c`, `b` once
                right = _concrete(comparison.comparator, name, value)
                if left is _NO or right is _NO:
                    return _NO
                if not _COMPARE[type(comparison.operator)](left, right):
                    return False
                left = right
            return True
        if isinstance(expr, cst.IfExp):
            test = _concrete(expr.test, name, value)
            return _NO if test is _NO else _concrete(expr.body if test else expr.orelse, name, value)
        if isinstance(expr, cst.BooleanOperation):
            left = _concrete(expr.left, name, value)
            if left is _NO or (not left if isinstance(expr.operator, cst.And) else left):
                return left
            return _concrete(expr.right, name, value)
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Dict) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            table = {}
            for element in expr.value.elements:
                key = _concrete(element.key, name, value) if isinstance(element, cst.DictElement) else _NO
                item = _concrete(element.value, name, value) if isinstance(element, cst.DictElement) else _NO
                if key is _NO or item is _NO:
                    return _NO
                table[key] = item
            key = _concrete(expr.slice[0].slice.value, name, value)
            return _NO if key is _NO else table[key]
    except (TypeError, KeyError):
        return _NO
    return _NO


def mapped_counts(counts: Counter, mapping: Callable[[Any], Any]) -> Counter | None:
    """The counts of the labels `mapping` makes of each value counted, or None where it gives one no label it follows."""
    labels: Counter = Counter()
    for value, n in counts.items():
        label = mapping(value)
        if label is _NO or not isinstance(label, (int, str, float)) or label != label:  # NaN: no class
            return None
        labels[label] += n
    return labels


def _column_read(facts: Facts, source: Any, scope: Any, order: int | None) -> str | None:
    """`"sentiment"` for a column name, `df["sentiment"]`, `df.pop("sentiment")`, `df["sentiment"].map(...)`, `df["sentiment"].values`, the
    column named by a constant (`target = "Exited"; y = df[target]`), and the same coded by a label encoder
    (`encoder.fit_transform(df["sentiment"])`)."""
    if isinstance(source, str):
        return source
    node = _coded(facts, source, scope, order) or source
    while isinstance(node, (cst.Attribute, cst.Call)):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            return _column_attribute(facts, node, scope, order)
        if _popped(node):  # pandas `DataFrame.pop(item)`: "Return item and drop from frame"
            column = literal(node.args[0].value) if scope is None else facts.value(node.args[0].value, scope, order=order)
            return column if isinstance(column, str) else None
        node = node.value if isinstance(node, cst.Attribute) else node.func
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        key = node.slice[0].slice.value
        column = literal(key) if scope is None else facts.value(key, scope, order=order)
        return column if isinstance(column, str) else None
    return None


# Frame methods that change its columns in place (`inplace=True` on any method does too).
_COLUMN_MUTATORS = frozenset({"pop", "insert", "set_axis"})


def _popped(node: Any) -> bool:
    """`frame.pop("label")`: one column, taken out of a frame named plainly."""
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "pop" and isinstance(node.func.value, cst.Name)
            and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star)


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
    names = read_header(facts, frame, scope, order)
    return names[index] if names and -len(names) <= index < len(names) else None


def _column_attribute(facts: Facts, node: cst.Attribute, scope: Any, order: int | None) -> str | None:
    """`"v1"` for `df.v1`, where `df` is bound once to a plain read of a local CSV/TSV file whose header names `v1` and
    `v1` is no attribute or method of a DataFrame (`df.size`, `df.T`, `df.values` are never columns: pandas falls back
    to the columns only where attribute lookup fails)."""
    column = node.attr.value
    if scope is None or column.startswith("_") or column in knowledge.pandas_frame_attributes():
        return None
    names = read_header(facts, node.value, scope, order)
    return column if names and column in names else None


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


def without_one_to_one_cast(expr: cst.BaseExpression) -> cst.BaseExpression:
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


@per_file
def rewritten_columns(facts: Facts) -> frozenset[str]:
    """Columns the script rewrites in place with other values (`df["quality"] = df["quality"].apply(bin)`, or
    `df.quality = ...`, `_column_set_as_attribute`;
    `df["y"].replace(old, new, inplace=True)`): their counts in the file are not the ones that train. A one-to-one recoding
    of the column keeps its counts: a label encoder (`LabelEncoder().fit_transform(df["y"])`), `.map`/`.replace` with a
    dict literal of distinct literal values, `.astype(...)`, or a copy of another column."""
    rewritten = set()
    for store in facts.stores:
        key = store.key
        if key is not None and (isinstance(store.target, cst.Subscript) or _column_set_as_attribute(facts, store)) and not _recodes(facts, store.value, key, store.scope, store.order):
            rewritten.add(key)  # and the column it is derived from (`df["label"] = df["stars"].apply(...)`), whose raw counts label_columns would read
            rewritten.update(column for column in [_column_read(facts, store.value, None, None)] if column is not None)
    for call in facts.calls:
        receiver = call.receiver
        if "inplace" in call.kwargs and isinstance(receiver, cst.Subscript) and len(receiver.slice) == 1:
            index = receiver.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(literal(index.value), str):
                rewritten.add(literal(index.value))
    return frozenset(rewritten)


def _column_set_as_attribute(facts: Facts, store) -> bool:
    """`df.label = ...` on a table, under a name that is no DataFrame attribute: pandas sets the column where one of that
    name exists (pandas core/generic.py `NDFrame.__setattr__`: `elif name in self._info_axis: self[name] = value`), as
    `df["label"] = ...` does."""
    if not isinstance(store.target, cst.Attribute) or store.key.startswith("_") or store.key in knowledge.pandas_frame_attributes():
        return False
    owner = facts.evaluate(store.target.value, store.scope, store.order)
    return isinstance(owner, Instance) and owner.kind == "table"


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
    source = without_one_to_one_cast(coded if coded is not None else value)
    if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and source.func.attr.value in ("map", "replace"):
        mapping = source.args[0].value if len(source.args) == 1 and source.args[0].keyword is None else None
        if not _one_to_one(facts, mapping, scope, order):
            return False
        source = source.func.value
    if isinstance(source, cst.Subscript) and len(source.slice) == 1 and isinstance(source.slice[0].slice, cst.Index):
        column = literal(source.slice[0].slice.value)
        return isinstance(column, str) and (column != key or coded is not None or source is not value)
    return False
