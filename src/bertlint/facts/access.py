"""Attribute and item access: `self.x` in a method, an attribute of the file's own class or instance (a dataclass's
field, what `__init__` assigns), a parameter's attribute followed to each call site, `x[key]` and slices, and whether
a dict may be changed in place where its display does not show it."""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import MAX_DEPTH, UNANSWERED, Abstract, Frame, Instance, Pack, Record, Series, Unfinished, agree, constant, is_index
from bertlint.facts.functions import ancestors, arguments, enclosing_class, family, function_scope, is_dataclass, returns_of
from bertlint.facts.instances import bound_elsewhere, self_attribute_sources
from bertlint.facts.items import subscripted
from bertlint.facts.model import MUTATIONS, Model
from bertlint.facts.nodes import UNKNOWN, Call, ClassDef, Scope, Store, dotted, walk
from bertlint.facts.reads import is_none


class Access:
    """The evaluator's attributes and items (mixed into `Evaluator`)."""

    def _Attribute(self, node):
        text = dotted(node)
        if text and text.startswith("self.") and text.count(".") == 1:
            return self.self_attribute(text)
        return self.attribute(node.value, self.scope, self.order, self.frame, node.attr.value, 0)

    def _getattr(self, call: Call) -> Any:
        """`getattr(obj, "name")` reads `obj.name`; with a default, the default where `obj` has no such attribute: known
        only where the attribute and the default agree (an attribute the value layer knows may still be missing when
        the call runs: bound by a method not yet called)."""
        if call.kwargs or call.has_star_args or len(call.positional) not in (2, 3):
            return UNKNOWN
        name = self.const(call.positional[1].value)
        if not isinstance(name, str) or not name.isidentifier():
            return UNKNOWN
        base = call.positional[0].value
        if isinstance(base, cst.Name) and base.value == "self":
            found = self.self_attribute(f"self.{name}")
        else:
            found = self.attribute(base, self.scope, self.order, self.frame, name, 0)
        if len(call.positional) == 2 or self._has_class_attribute(self.eval(base), name):
            return found
        return agree([found, self.eval(call.positional[2].value)])

    def _has_class_attribute(self, value: Any, name: str) -> bool:
        """`value`, a class of the file or an instance of one, surely has the attribute `name`: its class or a base of
        the file binds it unconditionally in its body, and none of them defines `__getattr__`/`__getattribute__`."""
        if not isinstance(value, Instance) or value.kind not in ("class", "instance") or not isinstance(value.detail, ClassDef):
            return False
        classes = [value.detail, *ancestors(self.f, value.detail)]
        if any(hook in c.methods for c in classes for hook in ("__getattr__", "__getattribute__")):
            return False
        return any(any(e.op in ("assign", "def") and not e.conditional for e in c.scope.events.get(name, ())) for c in classes)

    def self_attribute(self, text: str) -> Any:
        """`self.x` in a method: what every binding of it by the classes whose code may run on `self` gives (their
        methods' `self.x = ...`, their bodies' `x = ...`: `instances`), when they agree."""
        cls = enclosing_class(self.scope)
        key = (text, id(cls))
        if key in self.f.assumed_attributes:
            return self.f.assumed_attributes[key]
        return self.f.memoised(("self", *key, self.cli), lambda: self._self_attribute(text, cls, key))

    def _self_attribute(self, text: str, cls: ClassDef | None, key: tuple) -> Any:
        attr = text.split(".", 1)[1]
        found = self_attribute_sources(self.f, cls, attr)
        if found is not None and not any(found):  # bound by no code of the file: a library base's attribute
            made = self.f.ask("self_attribute", self, cls, attr)
            return UNKNOWN if made is UNANSWERED else made
        if found is None:
            return UNKNOWN
        getters = [agree([self.sub(v, function_scope(self.f, fn), None, None) if v is not None else None for v in self.f.return_values(fn)] or [UNKNOWN]) for fn in found.getters]
        assigned = [a for a in found.assigned if not is_none(a[0])]
        plain = [m for m in assigned if not any(dotted(n) == text for n in walk(m[0]) if isinstance(n, cst.Attribute))]
        if plain and len(plain) < len(assigned):
            bound = [self._through_itself(key, plain, [m for m in assigned if m not in plain])]
        else:
            bound = [self.sub(value, owner, order, None) for value, owner, order in assigned]
        given = bound + [self.class_field(c, attr) for c in found.class_level] + getters
        if len(assigned) < len(found.assigned) and not all(isinstance(v, Abstract) for v in given):
            return UNKNOWN  # `self.model = None` until a method loads one: None is a sentinel only beside objects
        return agree(given)

    def _through_itself(self, key: tuple, plain: list, derived: list) -> Any:
        """`self.x = Model(...)` then `self.x = self.x.eval()`: the value the plain assignments agree on, when each
        assignment made from the attribute itself, read as holding that value, gives it again (then by induction every
        read does); else UNKNOWN, with what was worked out under that assumption forgotten."""
        base = agree([self.sub(value, owner, order, None) for value, owner, order in plain])
        if base is UNKNOWN:
            return UNKNOWN
        inside = {id(n) for value, _, _ in derived for n in walk(value)}
        for cycled in [k for k, v in self.f.memo.items() if k[0] in inside and v is UNKNOWN]:
            del self.f.memo[cycled]  # unknown only through the cycle the assumption breaks
        known = set(self.f.memo)
        self.f.assumed_attributes[key] = base
        try:
            found = agree([base] + [self.sub(value, owner, order, None) for value, owner, order in derived])
        finally:
            del self.f.assumed_attributes[key]
        if found is UNKNOWN:
            for stale in set(self.f.memo) - known:
                del self.f.memo[stale]
        return found

    def attribute(self, base: cst.BaseExpression, scope: Scope, order: int | None, frame: Frame | None, attr: str, depth: int) -> Any:
        """`base.attr`: what the object `base` holds says; a parameter receiving several is followed to each call site."""
        value = self.sub(base, scope, order, frame)
        if isinstance(value, Abstract):
            found = self.instance_attribute(value, attr)
            if found is None:
                found = self.f.ask("attribute", self, value, attr)
                if found is UNANSWERED:
                    return UNKNOWN
            if not isinstance(found, Abstract) and ((dotted(base), attr) in self.f.stored_attributes or isinstance(base, cst.Name) and self.f.attribute_stored_through_another(base.value, attr)):
                return UNKNOWN  # `cfg.lr = ...` somewhere: which one is read depends on the order of execution
            return found
        if not isinstance(base, cst.Name) or depth >= MAX_DEPTH or value is not UNKNOWN:
            return UNKNOWN
        owner, events = self.f.binding_events(base.value, scope, order)
        if owner is None or events or base.value not in owner.params:
            return UNKNOWN
        sources = arguments(self.f, owner, base.value, frame)
        return agree([self.attribute(expr, where, at, caller, attr, depth + 1) if reader is self.f else UNKNOWN for expr, where, at, caller, reader in sources or ()])

    def instance_attribute(self, value: Abstract, attr: str) -> Any:
        """An attribute of the file's own class (`Config.lr`) or of an instance of it: the constructor's keyword of a
        dataclass, else what `__init__` alone assigns to `self.attr` for this construction, else the class-level value.
        None for what is no such instance; UNKNOWN for a class with bases, or an attribute set elsewhere too."""
        if isinstance(value, Instance) and value.kind == "exports":
            return value.detail.get(attr)  # a module of the project, or a class of one
        if not isinstance(value, Instance) or value.kind not in ("instance", "class"):
            return None
        if self.f.home(value.detail.scope) is not self.f:
            return UNKNOWN  # an object of a project module's class (a tuple a function of the module returned)
        cls = value.detail
        if value.kind == "class":
            return self.class_field(cls, attr)
        if any(base != "builtins.object" for base in cls.bases) or bound_elsewhere(self.f, family(self.f, cls), attr):
            return UNKNOWN  # a base's code, or a store through a name the read need not use (`config.name = n`, read as `self.config.name`)
        construction = value.call
        dataclass_ = is_dataclass(cls)
        if dataclass_ and attr in construction.kwargs:
            return self.f.evaluate(construction.kwargs[attr].value, construction.scope, construction.order, cli=self.cli)
        init = cls.methods.get("__init__")
        assigned = [(v, s, o) for v, s, o in self.f.self_attrs.get(f"self.{attr}", ()) if enclosing_class(s) is cls.scope]
        if init is not None and not dataclass_:
            if not assigned or any(s.node is not init for _, s, _ in assigned) or len(assigned) != 1:
                return UNKNOWN
            expr, where, at = assigned[0]
            frame = self.f.frame_for(construction, init, True, self.frame)
            return self.f.evaluate(expr, where, at, cli=self.cli, frame=frame) if frame is not None else UNKNOWN
        if assigned or construction.positional or construction.has_star_args:
            return UNKNOWN  # a field passed by position, `*args` or `**kwargs`
        return self.class_field(cls, attr)

    def class_field(self, cls: ClassDef, attr: str) -> Any:
        """The class-level value of an attribute of a class of the file (plain, or a dataclass's `field(default=...)`)."""
        events = cls.scope.events.get(attr, [])
        if len(events) != 1 or events[0].op != "assign" or events[0].conditional or events[0].index is not None:
            return UNKNOWN
        value = events[0].value
        made = self.f.call_of(value) if isinstance(value, cst.Call) else None
        if made is not None and made.qualname in ("dataclasses.field", "<local>.field") or dotted(getattr(value, "func", None)) == "field":
            default = made.kwargs.get("default") if made is not None else None
            value = default.value if default is not None else None
        return self.f.evaluate(value, cls.scope, events[0].order, cli=self.cli) if value is not None else UNKNOWN

    def _Subscript(self, node):
        if len(node.slice) != 1 and not _rows_only(node):
            return UNKNOWN
        index = node.slice[0].slice
        base = self.eval(node.value)
        if len(node.slice) != 1 and not (isinstance(base, Abstract) and not isinstance(base, (Pack, Series, Record, Unfinished))):
            return UNKNOWN  # `x[a, :]` of a Python container: a tuple key (what a library object gives: its rows `x[a]`)
        if isinstance(base, Record) and self.changed_in_place(node.value):
            return UNKNOWN
        if isinstance(index, cst.Index):
            key = self.eval(index.value)
            key = key if is_index(key) else constant(key)  # an object is no key, but the index a sampler yields
            stored = self.f.stored_items.get((dotted(node.value), key), ()) if base is UNKNOWN or isinstance(base, Abstract) else ()
            stored = [s for s in stored if self.order is None or s.order < self.order]
            last = self.last_store(node.value, key, stored, base) if stored else None
            if last is not None:  # `df["ids"] = v` run before every read of it here: the item is what was stored
                value = self.sub(last.value, last.scope, last.order)
                if base is not UNKNOWN or isinstance(value, Abstract):
                    return value  # (into an object not known, an object: what any container gives back is it, converted)
            if base is UNKNOWN:
                return UNKNOWN
            found = self.f.item_of(base, key)
            if stored:  # `enc["input_ids"] = ...`: the item is what every store and the object agree on
                return agree([found, *(self.sub(s.value, s.scope, s.order) for s in stored)])
            return found
        if base is UNKNOWN:
            return UNKNOWN
        if isinstance(index, cst.Slice):
            parts = [self.const(p) if p is not None else None for p in (index.lower, index.upper, index.step)]
            if any(p is UNKNOWN for p in parts):  # `texts[i : i + bs]`: some slice of an object, whichever
                return self.f.item_of(base, slice(None)) if isinstance(base, Abstract) and not isinstance(base, Pack) else UNKNOWN
            return self.f.item_of(base, slice(*parts))
        return UNKNOWN

    def last_store(self, expr, key: Any, before: list, base: Any) -> Store | None:
        """The store `name[key] = value` (of `before`, the file's stores of that item before the read) that every run of
        this read follows, with nothing between them that may change the item: Python's `__setitem__` then
        `__getitem__` of one key give back what was stored (a dict, a list, a pandas DataFrame's column). The store
        is the last of the item's in the file, in the read's own scope, not in a branch or a loop; after it, the name
        is neither bound again nor changed but by stores of other constant keys (loops' back edges included), no
        other name that may hold the object changes it, and no code hands the object to a call or calls a method of
        it for its effect (`fill(df)`, `df.rename(..., inplace=True)`, `df.insert(...)`). `base`: the object the name
        holds at the read; a name that shares it by the file-wide groups but holds another object made by another call
        is no change of it (`apart`). None otherwise."""
        if not isinstance(expr, cst.Name) or self.order is None:
            return None
        name, last = expr.value, max(before, key=lambda s: s.order)
        if any(s.scope is not self.scope or s.order >= self.order for s in self.f.stored_items.get((name, key), ())):
            return None
        owner, events = self.f.binding_events(name, self.scope, self.order)
        own = next((e for e in events if e.op == "setitem" and e.value is last.target), None) if owner is self.scope else None
        if own is None or own.conditional or own.loops:
            return None
        for event in events:
            store = self.f.plain_stores.get(id(event.value)) if event.op == "setitem" else None
            if event.order > own.order and (store is None or store.key is None or store.key == key):
                return None
        if any(e.order > own.order for e in self.f.events_through_aliases(owner, name) if e not in owner.events[name]):
            return None  # `alias = x; alias["k"] = other`: a plain alias's change is the object's
        if any(not self.apart(changer, owner, base) if scope_id == id(owner) else True for scope_id, changer in self.f.changers(name, owner)):
            return None
        if (id(owner), name) in self.f.mutated:
            return None
        if any(dotted(subscripted(s.target)) == name for s in self.f.touched) or (name, key) in self.f.stored_attributes:
            return None
        latest, elsewhere = self.f.memoised(("handed or changed", name, id(owner)), lambda: _handed_or_changed_at(self.f, name, owner))
        return None if elsewhere or latest > last.order else last

    def apart(self, other: str, owner: Scope, base: Any) -> bool:
        """`other`, a name of `owner` bound once (a plain assignment outside branches and loops, as `base`'s own
        call), holds another object than `base`: one made by another call (`df_dev = pd.read_csv("dev.csv")` beside
        `df_train = pd.read_csv("train.csv")`: each call makes a new table, whatever one helper both are passed to)."""
        made = getattr(base, "call", None)
        binds = [e for e in owner.events.get(other, ()) if e.op not in MUTATIONS]
        if made is None or made.loops or len(binds) != 1 or binds[0].op != "assign" or binds[0].conditional or binds[0].path or other in owner.params:
            return False
        found = self.sub(binds[0].value, owner, binds[0].order)
        theirs = getattr(found, "call", None)
        return isinstance(found, Abstract) and theirs is not None and not theirs.loops and theirs is not made

    def changed_in_place(self, expr) -> bool:
        """The dict `expr` holds may be changed in place somewhere in the file in a way its value does not show (a
        mutating method, an item stored or deleted through another name that may hold it or through an attribute):
        its display no longer says what it holds. A display, `dict(...)` or a call of the file's function returning
        only displays is a new dict; a name's own items stored and `update`s in its scope are its events, which its
        value follows or is unknown for."""
        made = self.f.call_of(expr) if isinstance(expr, cst.Call) else None
        if isinstance(expr, (cst.Dict, cst.DictComp)) or made is not None and (made.qualname == "builtins.dict" or _fresh(self.f, made)):
            return False  # a new dict: nothing else holds it yet
        root = subscripted(expr)
        if isinstance(root, cst.Name):
            owner = self.scope.lookup_scope(root.value)
            return owner is None or (id(owner), root.value) in self.f.mutated or self.f.shared_and_changed(root.value, owner, parts=True)
        name = dotted(root)
        stores = (s for s in (*self.f.stores, *self.f.touched) if isinstance(s.target, cst.Subscript))
        return name is None or self.f.shared_and_changed(name) or any(dotted(subscripted(s.target.value)) == name for s in stores)


def _handed_or_changed_at(values: Model, name: str, owner: Scope) -> tuple[int, bool]:
    """Where the object `name` holds in `owner` goes to a call or has a method called for its effect
    (`_handed_or_changed`): the last order of such a read in `owner` (-1: none), and whether a read in another scope
    that sees `owner`'s binding does so. Found once per name and scope."""
    latest, elsewhere = -1, False
    for read, scope, order, _loops in values.name_loads.get(name, ()):
        if scope is owner and order > latest and _handed_or_changed(values, read):
            latest = order
        elif scope is not owner and not elsewhere and scope.lookup_scope(name) is owner and _handed_or_changed(values, read):
            elsewhere = True
    return latest, elsewhere


def _handed_or_changed(values: Model, read: cst.Name) -> bool:
    """The object a read of a name gives goes to a call (`fill(df)`), or a method of it is called for its effect: its
    value dropped (`df.insert(0, "ids", v)`) or with `inplace=` (`df.rename(columns=..., inplace=True)`)."""
    parent = values.parent(read)
    if isinstance(parent, cst.Arg):
        return True
    if not isinstance(parent, cst.Attribute) or parent.value is not read:
        return False
    call = values.parent(parent)
    if not isinstance(call, cst.Call) or call.func is not parent:
        return False
    return isinstance(values.parent(call), cst.Expr) or any(arg.keyword is not None and arg.keyword.value == "inplace" for arg in call.args)


def _fresh(values: Model, call: Call) -> bool:
    """`call` runs a function of the file every `return` of which is a dict display: it returns a new dict, that no
    name held before (`def f(p): return {"k": p}`)."""
    returned = returns_of(values, call)
    return bool(returned) and all(isinstance(value, cst.Dict) for value, _ in returned)


def _rows_only(node: cst.Subscript) -> bool:
    """`x[rows, :, :]`: every index after the first a bare `:`, which an array's (numpy, torch, tensorflow) indexing
    takes as the whole axis, so the item is `x[rows]`; an object that has no such axes fails on the tuple key."""
    return all(isinstance(e.slice, cst.Slice) and e.slice.lower is None and e.slice.upper is None and e.slice.step is None for e in node.slice[1:])
