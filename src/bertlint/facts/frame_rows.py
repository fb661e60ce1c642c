"""Frame rows: whether the frames derived from a data file's read hold the file's rows one to one, so that the file's
counts are the counts that train."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst

from bertlint.facts.file_reads import data_file_of
from bertlint.facts.model import per_file
from bertlint.facts.names import LABEL_NAMES
from bertlint.facts.nodes import Call, literal, names_in
from bertlint.facts.values import Values as Facts


# Keywords of a pandas read that make the rows or the header differ from the file's (`nrows=50` reads 50 rows, `names=`
# and `header=` rename or shift the header, `chunksize=` hands out pieces): the file's label counts are not what trains.
_ROW_CHANGING_KEYWORDS = frozenset({"nrows", "skiprows", "skipfooter", "header", "names", "chunksize", "iterator", "converters", "true_values", "false_values"})

# Calls that add rows to a frame: `pd.concat([df, extra])`, `df.append(extra)` (pandas < 2).
_ROW_JOINING = frozenset({"concat", "append"})
# Frame (and `datasets` Dataset) methods whose result holds only some of the rows: `df.head(200)`, `df.sample(n=500)`
# (`sample(frac=1)` keeps every row, shuffled), `df.dropna()`, `df.query("x > 0")`, `ds.filter(fn)`,
# `ds.select(range(1000))` (pandas DataFrame API; datasets arrow_dataset.py `Dataset.filter/select/shard`). Where a name
# is ambiguous the safe reading is taken: pandas `df.filter(items=...)` selects columns and `df.where(cond)` keeps the
# rows, but reading them as taking rows only makes the counts unknown (and the rows are still at most the frame's).
ROW_SUBSETS = frozenset({
    "head", "tail", "sample", "dropna", "drop_duplicates", "query", "nlargest", "nsmallest", "truncate", "filter",
    "select", "shard", "take", "skip", "where", "mask",
})
# ... and those whose result holds other rows (a reshape, a group's rows, an exploded list's elements)
_ROW_TAKING = ROW_SUBSETS | frozenset({"explode", "groupby", "resample", "melt", "pivot", "stack", "unstack"})
# Frame methods whose result has the frame's rows, one to one (a copy, a rename, a reorder, a cast, a column selection
# or a column drop): the file's label counts hold for it.
ROW_KEEPING = frozenset({"copy", "reset_index", "rename", "astype", "fillna", "sort_values", "sort_index", "set_index", "replace", "assign", "infer_objects"})
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
        return _KEEPS if method in ROW_KEEPING else _TAKES if method in _ROW_TAKING or method in _ROW_JOINING else _UNKNOWN
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


def _drops_repeated_header(mask: cst.BaseExpression) -> bool:
    """`frame["label"] != "label"`: the rows whose column holds its own header name, the repeated header of files
    concatenated with their headers, which datafiles.py does not count as examples either."""
    if not isinstance(mask, cst.Comparison) or len(mask.comparisons) != 1 or not isinstance(mask.comparisons[0].operator, cst.NotEqual):
        return False
    left, right = mask.left, mask.comparisons[0].comparator
    column = literal(left.slice[0].slice.value) if isinstance(left, cst.Subscript) and len(left.slice) == 1 and isinstance(left.slice[0].slice, cst.Index) else None
    return isinstance(column, str) and literal(right) == column
