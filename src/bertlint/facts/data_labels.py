"""Labels counted from data: the values of the label column of the one local data file a Trainer script loads, where
they reach the Trainer unchanged."""

from __future__ import annotations

import re

import libcst as cst

from bertlint import datafiles
from bertlint.facts.file_reads import PLAIN_READ_KEYWORDS, data_file_of
from bertlint.facts.frame_columns import column_renames, without_one_to_one_cast
from bertlint.facts.nodes import Call, Store, dotted, literal, walk
from bertlint.facts.values import Values as Facts


# The columns a transformers Trainer takes the labels from without being told (its default collator renames `label`
# to `labels`; transformers data/data_collator.py, DefaultDataCollator / torch_default_data_collator).
_DATA_LABEL_COLUMNS = ("label", "labels")
_LABEL_WORD = re.compile(r"\blabels?\b")
# Where a string naming the label column only looks at it or keeps it: printing, counting, the columns a dataset hands
# out (`set_format(columns=[..., "label"])`). Anywhere else it may change the values: unknown.
_LOOKS_ONLY = frozenset({"print", "set_format", "with_format", "value_counts", "unique", "nunique", "head", "describe", "info"})
# Other ways a script makes the data it may train on.
_OTHER_DATASETS = frozenset({"load_dataset", "load_from_disk", "from_dict", "from_list", "from_generator", "from_records", "TensorDataset"})
# Calls that encode or re-map labels without naming the column.
_ENCODERS = frozenset({"LabelEncoder", "OrdinalEncoder", "ClassLabel", "class_encode_column", "cast_column", "align_labels_with_mapping", "factorize"})


def data_file_labels(facts: Facts) -> list[tuple[list, str]]:
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
    if call.has_double_star or len(call.positional) > 1 or set(call.kwargs) - PLAIN_READ_KEYWORDS:
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
    expr, shift = without_one_to_one_cast(store.value), 0
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)) and isinstance(expr.right, cst.Integer):
        shift = expr.right.evaluated_value * (-1 if isinstance(expr.operator, cst.Subtract) else 1)
        expr = without_one_to_one_cast(expr.left)
    if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    column = literal(expr.slice[0].slice.value)
    if not isinstance(column, str) or column in _DATA_LABEL_COLUMNS or dotted(expr.value) is None or dotted(expr.value) != dotted(store.target.value):
        return None  # the label column from itself, or from another frame
    return column, shift, frozenset(id(node) for node in (*walk(store.target), *walk(store.value))), store


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
