"""Instances of the file's own classes, as Python builds them: which classes' code may run on one object, and where
the file binds an attribute `self.x` of it.

`self` in a method of class C is an instance of C or of any subclass of C; the methods that run on it are those of
every class such an instance derives from (C's ancestors, its subclasses, and their other bases: a mixin). So what
`self.x` may hold there is what any of those classes binds it to: each `self.x = ...` in their methods, each class
body's `x = ...` (read through the instance until one is bound). The attribute is not seen through where something
else may bind it: a store through another name (`trainer.lr = ...`), `setattr` with a computed name, `__dict__`, a
`self.x` bound by unpacking, a loop, `with`, `+=` or `del`, a method of that name. A property is its getter's return.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import libcst as cst

from bertlint.facts.abstract import Binding, Instance
from bertlint.facts.functions import enclosing_class, family, function_scope, is_dataclass
from bertlint.facts.model import Model, per_file
from bertlint.facts.nodes import UNKNOWN, ClassDef, Scope, dotted, literal


class Sources(NamedTuple):
    """Where an attribute of `self` is bound: `self.x = value` in a method (value, scope, order), the classes whose
    body binds `x`, and the getters of the properties named `x` (`@property def x(self): return ...`)."""

    assigned: list[tuple[cst.BaseExpression, Scope, int]]
    class_level: list[ClassDef]
    getters: list[cst.FunctionDef]


def class_of(values: Model, scope: Scope | None) -> ClassDef | None:
    """The file's class whose body is `scope` (None when its name is not the file's one class of that name)."""
    cls = values.classes.get(scope.name) if scope is not None and scope.kind == "class" else None
    return cls if cls is not None and cls.scope is scope else None


def self_attribute_sources(values: Model, scope: Scope, attr: str) -> Sources | None:
    """Where `self.attr`, read in a method of the class whose body is `scope`, may be bound; None where it may be
    bound where the file does not show how."""
    cls = class_of(values, scope)
    if cls is None:
        return None
    classes = family(values, cls)
    if bound_elsewhere(values, classes, attr):
        return None
    scopes = {id(c.scope) for c in classes}
    assigned = [(v, s, o) for v, s, o in values.self_attrs.get(f"self.{attr}", ()) if id(enclosing_class(s)) in scopes]
    level, getters = [], []
    for c in classes:
        if is_dataclass(c) and attr in _fields(c):
            given = _field_arguments(values, c, attr) if len(classes) == 1 else None
            if given is None:
                return None  # a field of a dataclass: what each construction passes
            assigned += given
            continue
        events = c.scope.events.get(attr, ())
        if len(events) > 1 or any(e.conditional or e.index is not None or e.path for e in events):
            return None  # bound more than once in the class body (a property's setter too), or under a test
        if events and events[0].op == "assign":
            if c.node.decorators or any(not (b.startswith("<local>.") or b == "builtins.object") for k in classes for b in k.bases):
                return None  # a library base or a decorator may make it something else (an Enum member, a field)
            level.append(c)
        elif events and _is_property(events[0].value):
            getters.append(events[0].value)
        elif events:
            return None  # a method of that name: a bound method
    return Sources(assigned, level, getters)


def self_attribute_values(values: Model, scope: Scope | None, attr: str) -> list[tuple[cst.BaseExpression, Scope, int | None]] | None:
    """Each expression `self.attr`, read in a method of the class whose body is `scope`, may hold, read where it is
    bound: every `self.attr = value` of the classes whose code may run on `self`, each class body's `attr = value`,
    each property getter's `return`s. None where the file does not show them all (`self_attribute_sources`), where no
    code of the file binds it (a library base's attribute), or a getter returns nothing."""
    found = self_attribute_sources(values, scope, attr) if scope is not None else None
    if found is None or not any(found):
        return None
    out = list(found.assigned)
    for cls in found.class_level:
        event = cls.scope.events[attr][0]
        out.append((event.value, cls.scope, event.order))
    for getter in found.getters:
        returned = values.return_values(getter)
        if not returned or any(r is None for r in returned):
            return None
        out += [(r, function_scope(values, getter), None) for r in returned]
    return out


def _fields(cls: ClassDef) -> list[str]:
    """The fields of a dataclass, in order: its body's annotated names (a `ClassVar` is none)."""
    body = cls.node.body.body if isinstance(cls.node.body, cst.IndentedBlock) else ()
    return [
        small.target.value for line in body if isinstance(line, cst.SimpleStatementLine) for small in line.body
        if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and "ClassVar" not in (dotted(small.annotation.annotation) or "ClassVar")
    ]  # fmt: skip


def _field_arguments(values: Model, cls: ClassDef, attr: str) -> list[tuple[cst.BaseExpression, Scope, int | None]] | None:
    """What each construction of the dataclass `cls` binds its field `attr` to (the argument, else the default);
    None where a construction may not show it: the class read other than called by its name (handed to a parser,
    `cls(...)` in a classmethod), `dataclasses.replace`, `*args`/`**kwargs`, a default factory."""
    reads = values.name_loads.get(cls.name, ())
    sites = [c for c in values.calls if c.qualname == f"<local>.{cls.name}"]
    if len(reads) != len(sites) or not sites or any(c.has_star_args for c in sites) or values.calls_by_short.get("replace"):
        return None
    position = _fields(cls).index(attr)
    events = cls.scope.events.get(attr, ())
    default = events[0].value if len(events) == 1 and events[0].op == "assign" and not events[0].conditional else None
    made = values.call_of(default) if isinstance(default, cst.Call) else None
    if made is not None and (made.qualname in ("dataclasses.field", "<local>.field") or dotted(default.func) == "field"):
        default = made.kwargs["default"].value if "default" in made.kwargs else None
    out = []
    for site in sites:
        arg = site.kwargs.get(attr) or (site.positional[position] if position < len(site.positional) else None)
        if arg is None and default is None:
            return None
        out.append((arg.value, site.scope, site.order) if arg is not None else (default, cls.scope, events[0].order))
    return out


def bound_elsewhere(values: Model, classes: list[ClassDef], attr: str) -> bool:
    """Whether an attribute `attr` of an instance of one of `classes` may be bound where no `self.x = value` of a class
    shows it: `setattr`, `__dict__`, an unpacked or augmented `self.x`, or a store through another name whose object
    may be such an instance (`config.name = ...`, read later as `self.config.name`)."""
    unseen, stores = _unseen(values)
    if attr in unseen or None in unseen:
        return True
    names = {c.name for c in classes}
    return any(_may_be_instance(values.evaluate(base, scope, order), names) for base, scope, order in stores.get(attr, ()))


def _may_be_instance(value: Any, names: set[str]) -> bool:
    """`value`, an object an attribute is stored on, may be an instance (or the class object) of the file's classes
    `names`: unknown, one of them, or an object a call of the file's own made. A library's object (a parsed command
    line, a tokenizer, a table) or a constant is none; nor an instance of another class of the file."""
    if isinstance(value, Instance):
        return isinstance(value.detail, ClassDef) and value.detail.name in names
    if isinstance(value, Binding):
        members = value.joined or (value,)
        return any(m.call is None or (m.call.qualname or "<local>.").startswith("<local>.") for m in members)
    return value is UNKNOWN


def _is_property(fn: cst.CSTNode | None) -> bool:
    return isinstance(fn, cst.FunctionDef) and [dotted(d.decorator) for d in fn.decorators] in (["property"], ["functools.cached_property"], ["cached_property"])


@per_file
def _unseen(values: Model) -> tuple[frozenset[str | None], dict[str, list[tuple[cst.BaseExpression, Scope, int]]]]:
    """The attribute names an instance may have bound where no `self.x = value` of a class shows it (None: any), and
    for each name the objects (expression, scope, order) a store through another name binds it on: `trainer.lr = ...`."""
    unseen: set[str | None] = {text.split(".", 1)[1] for text in values.self_attrs_unseen}
    stores: dict[str, list[tuple[cst.BaseExpression, Scope, int]]] = {}
    for store in (*values.stores, *values.touched):
        target = store.target
        if isinstance(target, cst.Attribute) and dotted(target.value) != "self":
            stores.setdefault(target.attr.value, []).append((target.value, store.scope, store.order))
    for call in values.calls_by_short.get("setattr", ()):
        if call.method is None and call.positional[1:]:
            unseen.add(literal(call.positional[1].value))  # None: a computed name
    if any(c.method is not None and (dotted(c.receiver) or "").endswith("__dict__") for c in values.calls):
        unseen.add(None)  # `self.__dict__.update(kwargs)`
    return frozenset(unseen), stores
