"""torch.utils.data: DataLoader, TensorDataset, the file's own Dataset classes, and the batches a loader yields.

A batch is what the collate function of the file's own returns (a def, a lambda, `functools.partial`, a class with
`__call__`), else the dataset's items stacked as they are (torch `default_collate`, transformers
`default_data_collator`): a `TensorDataset`'s tensor at each position, what a `Dataset` class's `__getitem__`
returns, the columns a `datasets` `map` function returns.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import INDEX, UNKNOWN, Binding, Instance, Series
from bertlint.facts.brain.tables import one_text
from bertlint.facts.functions import callable_returns, called_directly, function_scope, first_handed_parameter, hands
from bertlint.facts.names import is_transformers_name, same_symbol
from bertlint.facts.nodes import dotted, literal


# transformers collators that stack each key of the dataset's items as it is, padding nothing: 5.24
# data/data_collator.py:72 `default_data_collator`, :96 `DefaultDataCollator` (both through `torch_default_data_collator`
# :123, `torch.stack`/`torch.tensor` of `[f[k] for f in features]` at :148-154); only `label`/`label_ids` become
# `labels` (:134-143).
STACKING_COLLATORS = frozenset({"default_data_collator", "DefaultDataCollator"})
STACKING_RENAMED = frozenset({"labels", "label", "label_ids"})


def call(ev, call) -> Any:
    q = call.qualname
    if not q:
        return None
    if q.startswith("torch.utils.data") and q.rsplit(".", 1)[-1] == "DataLoader":
        return Binding("dataloader", call)
    if dataset_class(ev.f, q) is not None:
        return Binding("dataset", call)
    return None


def iterate(values, base) -> Any:
    if isinstance(base, Binding) and base.kind == "dataloader":
        return Binding("dataloader_item", base.call)
    return None


def item(values, base, key) -> Any:
    if not isinstance(base, Binding) or base.kind != "dataloader_item":
        return None
    if isinstance(key, slice):
        return UNKNOWN  # some of a batch's tensors
    return batch_item(values, base.call, key) or Binding("ids", base.call, base, key if isinstance(key, str) else "")


def attribute(ev, base, attr: str) -> Any:
    if isinstance(base, Binding) and base.kind == "dataloader_item":
        return Binding("ids", base.call, base, attr)  # `batch.input_ids`
    return None


def keys(values, base) -> frozenset[str] | None:
    """The keys a DataLoader's batch certainly has, and only those: its dataset's items' where every `return` of the
    file's dataset class's `__getitem__` spells the same keys (torch 2.13 utils/data/_utils/collate.py:171-186,
    `default_collate` of a Mapping: `{key: collate([d[key] for d in batch]) for key in elem}`, the first item's keys),
    or those every `return` of the file's collate function spells. None where not certain: a `datasets` or
    `TensorDataset` source, a transformers collator, an encoding returned (its keys are the tokenizer's)."""
    if not isinstance(base, Binding) or base.kind != "dataloader_item" or base.call.has_star_args or base.call.has_double_star:
        return None
    loader = base.call
    collate = loader.kwargs.get("collate_fn")
    if collate is not None:
        returned = None if stacks_items(values, collate.value, loader.scope) else callable_returns(values, collate.value, loader)
    else:
        arg = loader.arg(0, "dataset")
        returned = _getitem_returns(values, values.kind(arg.value, loader.scope, loader.order) if arg is not None else None)
    return _agreed_keys(values, returned)


def item_keys(values, dataset) -> frozenset[str] | None:
    """The keys every item of the file's dataset class (the `Binding` `dataset` made) certainly has, and only those:
    those every `return` of its `__getitem__` spells alike; None where not certain."""
    return _agreed_keys(values, _getitem_returns(values, dataset))


def dataset_item(values, dataset, key: Any) -> Binding | None:
    """The object at `key` of the items of the file's dataset class (the `Binding` `dataset` made), every `return` of
    its `__getitem__` agreeing."""
    returned = _getitem_returns(values, dataset)
    return _item(values, [r for r in returned if r[0] is not None], key) if returned is not None else None


def _getitem_returns(values, dataset) -> list | None:
    """(returned expression, scope, None) for each `return` of the `__getitem__` of the file's dataset class that made
    `dataset`; None for any other dataset (a `datasets` map, a `TensorDataset`, a class of no `__getitem__`)."""
    if not isinstance(dataset, Binding) or dataset.kind != "dataset" or dataset.call.method == "map" or dataset_class(values, dataset.call.qualname) in (None, "TensorDataset"):
        return None
    getitem = values.classes[dataset.call.qualname.split(".", 1)[1]].methods["__getitem__"]
    return [(value, function_scope(values, getitem), None) for value in values.return_values(getitem)]


def _agreed_keys(values, returned) -> frozenset[str] | None:
    spelt = {_spelt_keys(values, value, scope) if value is not None else None for value, scope, _ in returned or ()}
    return spelt.pop() if len(spelt) == 1 and None not in spelt else None


def _spelt_keys(values, expr: cst.BaseExpression, scope, depth: int = 0) -> frozenset[str] | None:
    """The keys a dict display or `dict(k=...)` call `expr` spells, every one a string (through one plain name bound
    once and then only given items of string keys: `item = {...}; item["labels"] = y; return item`)."""
    if isinstance(expr, cst.Dict):
        found = [literal(e.key) if isinstance(e, cst.DictElement) else None for e in expr.elements]
        return frozenset(found) if all(isinstance(k, str) for k in found) else None
    made = values.call_of(expr) if isinstance(expr, cst.Call) else None
    if made is not None and made.qualname == "builtins.dict" and not made.positional and not made.has_star_args and not made.has_double_star:
        return frozenset(made.kwargs)
    filled = _filled(values, expr.value, scope) if isinstance(expr, cst.Name) and not depth and not values.shared_and_changed(expr.value, scope) else None
    base = _spelt_keys(values, filled[0], scope, 1) if filled is not None else None
    return base | frozenset(s.key for s in filled[1]) if base is not None and all(isinstance(s.key, str) for s in filled[1]) else None


def _filled(values, name: str, scope) -> tuple[cst.BaseExpression, list] | None:
    """A name that `scope` binds once, by a plain assignment, and then only gives items of known keys (`item = {...};
    item["labels"] = y`): (the value it is bound to, the item stores in order); None otherwise."""
    owner, events = values.binding_events(name, scope)
    if owner is not scope or not events or events[0].op != "assign" or events[0].index is not None or events[0].path \
            or any(e.op != "setitem" for e in events[1:]):
        return None
    stored = [s for s in values.stores if s.scope is scope and isinstance(s.target, cst.Subscript) and dotted(s.target.value) == name]
    return None if any(s.key is None for s in stored) else (events[0].value, stored)


ITEMS = Series(UNKNOWN)  # the list of dataset items a collate function receives


def parameter(ev, owner, name: str) -> Any:
    """The first parameter of a collate function the file hands a DataLoader: the list of the dataset's items of one
    batch (torch 2.13 utils/data/_utils/fetch.py:49-57 `_MapDatasetFetcher.fetch`: `collate_fn([dataset[i] for i in
    batch])` with automatic batching; dataloader.py:508 automatic batching is on unless `batch_size=None`). UNKNOWN
    where the file also calls the function itself or hands it to another call."""
    fn = first_handed_parameter(ev.f, owner, name)
    if fn is None:
        return None
    if isinstance(fn, cst.FunctionDef) and fn.name.value == "__getitem__":
        return ev.f.memoised(("fetched index", id(owner)), lambda: _fetched_index(ev, owner))
    loaders = [c for c in ev.f.calls_by_short.get("DataLoader", ()) if c.qualname and c.qualname.startswith("torch.utils.data") and "collate_fn" in c.kwargs]
    sites = [c for c in loaders if hands(ev.f, c.kwargs["collate_fn"].value, c, fn)]
    if not sites:
        return None
    if called_directly(ev.f, fn) or any(_unbatched(ev, c) for c in sites) or handed_elsewhere(ev.f, fn, sites):
        return UNKNOWN
    whole = [_one_batch(ev, c) for c in sites]
    return whole[0] if all(w is not None and w == whole[0] and type(w) is type(whole[0]) for w in whole) else ITEMS


def _fetched_index(ev, owner) -> Any:
    """The index of a map-style dataset class's `__getitem__` that a DataLoader draws its items from: an int the
    sampler yields (torch 2.13 utils/data/_utils/fetch.py:51-54 `_MapDatasetFetcher.fetch`, `self.dataset[idx]` for
    each idx of the batch; sampler.py `SequentialSampler`/`RandomSampler` yield ints). None where no DataLoader of the
    file takes the class's instances, or a sampler or batch sampler of its own may yield other keys; UNKNOWN where the
    file also subscripts an instance itself with anything but an int constant (`ds[:1]` passes a slice)."""
    cls = _class_named(ev.f, owner.parent)
    if cls is None:
        return None
    made = f"<local>.{cls}"
    loaders = [c for c in ev.f.calls_by_short.get("DataLoader", ()) if c.qualname and c.qualname.startswith("torch.utils.data")]
    driven = [c for c in loaders if (arg := c.arg(0, "dataset")) is not None and _made_by(ev.f.kind(arg.value, c.scope, c.order), made)]
    if not driven or any(c.has_star_args or c.has_double_star or "sampler" in c.kwargs or "batch_sampler" in c.kwargs for c in driven):
        return None
    for site in ev.f.calls_by_short.get(cls, ()):
        if site.qualname == made and _subscripted(ev.f, site):
            return UNKNOWN
    return INDEX


def _class_named(values, scope) -> str | None:
    """The name of the file's dataset class whose body is `scope` (a module-level class with `__getitem__`)."""
    if scope is None or scope.kind != "class":
        return None
    return scope.name if dataset_class(values, f"<local>.{scope.name}") == scope.name and values.classes[scope.name].scope is scope else None


def _made_by(value, made: str) -> bool:
    return isinstance(value, Binding) and value.kind == "dataset" and value.call.qualname == made


def _subscripted(values, site) -> bool:
    """The instance `site` makes, bound to a name, is subscripted other than at an int constant (`ds[:1]`, `ds[i]`)."""
    stmt = values.statement_of(site.node)
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not isinstance(small, cst.Assign) or small.value is not site.node:
        return not isinstance(values.parent(site.node), cst.Arg)  # held elsewhere: a DataLoader's argument, or not seen
    for target in small.targets:
        if not isinstance(target.target, cst.Name):
            return True
        for read, _scope, _order, _loops in values.name_loads.get(target.target.value, ()):
            parent = values.parent(read)
            if isinstance(parent, cst.Subscript) and parent.value is read and not (len(parent.slice) == 1 and isinstance(parent.slice[0].slice, cst.Index) and isinstance(parent.slice[0].slice.value, cst.Integer)):
                return True
    return False


def handed_elsewhere(values, fn, sites) -> bool:
    """The function is handed to another call than `sites` too (a DataLoader's `collate_fn` and a transformers Trainer's
    `data_collator`), which may call it with other items."""
    known = {id(c.node) for c in sites}
    return any(
        id(c.node) not in known and c.qualname != "functools.partial" and any(hands(values, a.value, c, fn) for a in (*c.positional, *c.kwargs.values()))
        for c in values.calls
    )


def _one_batch(ev, loader) -> list | None:
    """The one batch of a loader over a constant list no longer than its batch size, in order: the list itself
    (torch 2.13 dataloader.py:400-403 `SequentialSampler` unless `shuffle`; sampler.py:341-344 `BatchSampler` yields
    consecutive indices `batch_size` at a time, drop_last=False by default; fetch.py:54 `[dataset[i] for i in batch]`).
    None where another sampler, `shuffle` or `drop_last` may be at work, or the size is not known."""
    if loader.has_star_args or loader.has_double_star or any(k in loader.kwargs for k in ("sampler", "batch_sampler", "drop_last")):
        return None
    def value(arg):  # a command-line default decides nothing: a run may pass another
        return ev.f.evaluate(arg.value, loader.scope, loader.order, cli=False, frame=ev.frame)

    shuffle, dataset, size = loader.arg(2, "shuffle"), loader.arg(0, "dataset"), loader.arg(1, "batch_size")
    if shuffle is not None and value(shuffle) not in (False, None) or dataset is None or _changed_later(ev, dataset.value, loader):
        return None
    rows, size = value(dataset), value(size) if size is not None else 1
    if not isinstance(rows, (list, tuple)) or not isinstance(size, int) or isinstance(size, bool) or not 0 < len(rows) <= size:
        return None
    return list(rows)


def _changed_later(ev, expr, loader) -> bool:
    """The list `expr` names may change after the loader is made, before its batches are drawn (`rows.append(...)`)."""
    if not isinstance(expr, cst.Name):
        return not isinstance(expr, (cst.List, cst.Tuple))
    owner, _ = ev.f.binding_events(expr.value, loader.scope, loader.order)
    later = [e for e in (owner.events.get(expr.value, []) if owner is not None else ()) if owner is not loader.scope or e.order > loader.order]
    return owner is None or bool(later) or ev.f.shared_and_changed(expr.value) or (id(owner), expr.value) in ev.f.mutated


def _unbatched(ev, loader) -> bool:
    """`DataLoader(ds, batch_size=None)`: the collate function gets one item at a time."""
    arg = loader.arg(1, "batch_size")
    return arg is not None and ev.sub(arg.value, loader.scope, loader.order) is None or loader.has_star_args or loader.has_double_star


def dataset_class(values, qualname: str) -> str | None:
    """`TensorDataset`, or the file's own map-style dataset class (a `Dataset` subclass, or any class with `__getitem__`)."""
    if same_symbol(qualname, "torch.utils.data.TensorDataset") and qualname.startswith("torch."):
        return "TensorDataset"
    cls = values.classes.get(qualname.split(".", 1)[1]) if qualname.startswith("<local>.") and qualname.count(".") == 1 else None
    return cls.name if cls is not None and "__getitem__" in cls.methods else None


def stacks_items(values, expr: cst.BaseExpression, scope) -> bool:
    """`collate_fn=default_data_collator` (or `DefaultDataCollator()`): the items stacked key by key, as they are."""
    made = values.call_of(expr) if isinstance(expr, cst.Call) else None
    name = made.qualname if made is not None else values.qualname(expr, scope)
    return is_transformers_name(name) and name.rsplit(".", 1)[-1] in STACKING_COLLATORS


def batch_item(values, loader, key: Any) -> Any:
    """What a DataLoader's batches hold at `key` (a dict key, a position)."""
    if loader.has_star_args or not isinstance(key, (str, int)) or isinstance(key, bool):
        return None
    collate = loader.kwargs.get("collate_fn")
    if collate is not None and not stacks_items(values, collate.value, loader.scope):
        return _item(values, callable_returns(values, collate.value, loader), key)
    if collate is not None and key in STACKING_RENAMED:
        return None  # the collator makes `labels` of the items' `label`/`label_ids`
    arg = loader.arg(0, "dataset")
    dataset = values.kind(arg.value, loader.scope, loader.order) if arg is not None else None
    if dataset is None or dataset.kind != "dataset":
        return None
    made = dataset.call
    if made.method == "map":
        return _item(values, callable_returns(values, made.arg(0, "function").value, made), key)
    if dataset_class(values, made.qualname) == "TensorDataset":
        if not isinstance(key, int) or made.has_star_args or not 0 <= key < len(made.positional):
            return None
        return values.kind(made.positional[key].value, made.scope, made.order)
    found = dataset_item(values, dataset, key)
    if found is None and collate is None and _texts_at(values, dataset, key):
        return Instance("texts", loader, key)  # one text per item: `default_collate` gives the list of them
    return found


def _texts_at(values, dataset, key: Any) -> bool:
    """Every item of the file's dataset class holds one text at `key` (torch 2.13 utils/data/_utils/collate.py
    `collate_str_fn`: a batch of strings is collated to the list of them)."""
    returned = _getitem_returns(values, dataset) or ()
    found = [_element(values, value, scope, key, 0, of=values.evaluate) for value, scope, _ in returned if value is not None]
    return bool(found) and all(one_text(v) for v in found)


def _item(values, returned, key: Any) -> Binding | None:
    """The object at `key` of what a function returns (every `return` agreeing): an encoding it returns
    (`tokenizer(texts, padding=True)`, `tokenizer.pad(features)`) gives its ids; a dict or tuple, its element."""
    found = []
    for value, scope, frame in returned or ():
        whole = values.evaluate(value, scope, frame=frame)
        if isinstance(whole, Binding) and whole.kind == "encoding":
            found.append(Binding("ids", whole.call, whole, key) if isinstance(key, str) else None)
        else:
            found.append(_element(values, value, scope, key, 0))
    return found[0] if found and found[0] is not None and all(b is not None and b.kind == found[0].kind for b in found) else None


def _element(values, expr: cst.BaseExpression | None, scope, key: Any, depth: int, of=None) -> Any:
    """The object at `key` of a dict display, `dict(...)` call or tuple `expr` (through one plain name); `of(expr,
    scope)` reads the element (`values.kind`: the object a rule asks for by kind, by default)."""
    of = of or values.kind
    if isinstance(expr, cst.Name) and depth == 0:  # `item = {...}; item["labels"] = ...; return item`
        filled = _filled(values, expr.value, scope)
        if filled is None:
            return None
        stored = [s for s in filled[1] if s.key == key]
        return of(stored[-1].value, scope) if stored else _element(values, filled[0], scope, key, 1, of)
    if isinstance(expr, cst.DictComp) and isinstance(key, str) and not expr.for_in.ifs and expr.for_in.inner_for_in is None:
        # `{k: torch.tensor(v[i]) for k, v in self.encodings.items()}`: every key of an encoding, per example
        items = values.call_of(expr.for_in.iter) if isinstance(expr.for_in.iter, cst.Call) else None
        source = values.kind(items.receiver, items.scope, items.order) if items is not None and items.method == "items" else None
        return Binding("ids", source.call, source, key) if source is not None and source.kind == "encoding" else None
    if isinstance(expr, cst.Dict) and isinstance(key, str):
        element = next((e for e in expr.elements if isinstance(e, cst.DictElement) and values.value(e.key, scope) == key), None)
        return of(element.value, scope) if element is not None else None
    if isinstance(expr, cst.Tuple) and isinstance(key, int) and 0 <= key < len(expr.elements):
        element = expr.elements[key]
        return None if isinstance(element, cst.StarredElement) or any(isinstance(e, cst.StarredElement) for e in expr.elements) else of(element.value, scope)
    made = values.call_of(expr) if isinstance(expr, cst.Call) else None
    if made is not None and made.qualname == "builtins.dict" and isinstance(key, str) and key in made.kwargs:
        return of(made.kwargs[key].value, scope)
    return None



