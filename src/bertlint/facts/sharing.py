"""Aliasing and change in place: which names of the file may hold one object (`alias = cfg`, an argument and the
parameter it is passed to, `self.cfg = cfg`) and which of them change it (items stored or deleted, a mutating method,
`+=`): a constant display is folded only where nothing changes it behind its name's back."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import libcst as cst

from bertlint.facts.functions import callee
from bertlint.facts.items import aliased, subscripted
from bertlint.facts.nodes import ENTER, Call, ClassDef, Event, Scope, dotted, literal, names_in
from bertlint.facts.reaching import BINDS as _BINDS


class Sharing:
    """Which names share an object and which change it in place, found once per file (mixed into `Evaluation`)."""

    @functools.cached_property
    def stored_attributes(self) -> frozenset[tuple[str | None, str | None]]:
        """(object, attribute) of every `obj.attr = ...` in the file, by the object's dotted name."""
        stored = {(dotted(s.target.value), s.key) for s in (*self.stores, *self.touched) if isinstance(s.target, cst.Attribute)}
        for call in self.calls_by_short.get("setattr", ()):
            if call.method is None and call.qualname in (None, "builtins.setattr") and len(call.positional) >= 2:
                stored.add((dotted(call.positional[0].value), literal(call.positional[1].value)))
        return frozenset(stored)

    @functools.cached_property
    def stored_items(self) -> dict[tuple[str | None, Any], list]:
        """(object, key) -> the stores `obj["key"] = value` of the file, by the object's dotted name."""
        stored: dict[tuple[str | None, Any], list] = {}
        for store in self.stores:
            if isinstance(store.target, cst.Subscript) and store.key is not None:
                stored.setdefault((dotted(store.target.value), store.key), []).append(store)
        return stored

    @functools.cached_property
    def plain_stores(self) -> dict[int, Any]:
        """The plain item stores `obj[key] = value` of the file, by their target."""
        return {id(s.target): s for s in self.stores if isinstance(s.target, cst.Subscript)}

    @functools.cached_property
    def mutated(self) -> frozenset[tuple[int, str]]:
        """(scope, name) of every name a mutating method of a list, dict or set is called on (`cfg.update(...)`,
        `texts.insert(0, t)`, `h["t"].extend(...)`): its constant is not folded."""
        return self._mutated_by(MUTATORS)

    @functools.cached_property
    def mutated_beyond_order(self) -> frozenset[tuple[int, str]]:
        """`mutated` without the names only reordered in place (`texts.sort()`, `texts.reverse()`: every element stays,
        and so does their number): what holds of every element, or of how many there are, holds after them."""
        return self._mutated_by(MUTATORS - REORDERING)

    def _mutated_by(self, methods: frozenset[str]) -> frozenset[tuple[int, str]]:
        followed = {id(e.value) for scope in self.scopes for events in scope.events.values() for e in events if e.op == "update"}
        found = set()
        for c in self.calls:  # `cfg["opt"].update(...)` changes `cfg`; `cfg.update(...)` as a statement is an event, and
            # so is `xs.append(...)`; `h["t"].append(...)` is none: it changes `h`
            changes = c.method in methods or c.method in GROWING and not isinstance(c.receiver, cst.Name)
            root = subscripted(c.receiver) if changes and id(c.node) not in followed else None
            if isinstance(root, cst.Name):
                found.add((id(c.scope.lookup_scope(root.value) or c.scope), root.value))
        return frozenset(found)

    @functools.cached_property
    def scopes(self) -> list[Scope]:
        """The module's, its functions' and its classes' scopes."""
        return [self.module_scope, *(s for defs in self.functions.values() for _, s in defs), *(c.scope for c in self.classes.values())]

    @functools.cached_property
    def _sharing(self) -> tuple[dict[str, str], dict[str, frozenset[tuple[int, str]]], frozenset[tuple[str, str | None]]]:
        """Names that may hold one object, found in one pass: a name assigned another or a part of it (`alias = cfg`,
        `inner = cfg["opt"]`, `x = cfg if a else b`, `cfg = {"opt": inner}`, a loop over it), an argument and the
        parameters of the file's function it is passed to, joined into groups (by name, file-wide: more joins only make
        more unknown). Returns each shared name's group, each group's changes in place by (scope, name) (an item
        stored or deleted, through attributes too: `h.cfg["lr"] = ...`, a mutating method, `+=`), and (group,
        attribute) of every attribute some member stores."""
        parent: dict[str, str] = {}

        def find(name: str) -> str:
            while parent.get(name, name) != name:
                parent[name] = parent.get(parent[name], parent[name])  # path halving: point at the grandparent, then go there
                name = parent[name]
            return name

        def join(a: str, b: str) -> None:
            parent.setdefault(a, a)
            parent.setdefault(b, b)
            parent[find(a)] = find(b)

        changed: set[tuple[int, str]] = set(self.mutated)
        for scope in self.scopes:
            for name, events in scope.events.items():
                for event in events:
                    if event.op == "assign" and event.path[:1] == (ENTER,):  # `with nullcontext(cfg) as c`
                        for other in names_in(event.whole):
                            join(name, other)
                    elif event.op in ("assign", "for") and event.whole is not None:
                        for other in aliased(self, event.whole):
                            join(name, other)
                    elif event.op not in _BINDS and event.op not in ("unpack", "param"):
                        changed.add((id(scope), name))
        for store in (*self.stores, *self.touched):  # `h.cfg["lr"] = ...`: the object `h` holds changes
            root = subscripted(store.target, attributes=True)
            if isinstance(store.target, cst.Subscript) and isinstance(root, cst.Name):
                changed.add((id(store.scope.lookup_scope(root.value) or store.scope), root.value))
            elif isinstance(store.target, cst.Attribute) and store.value is not store.target:  # `self.cfg = cfg`
                for other in aliased(self, store.value):
                    if isinstance(root, cst.Name):
                        join(root.value, other)
        for call in self.calls:
            if call.qualname is not None and not call.qualname.startswith("<local>."):
                continue
            passed = [a.value.value for a in (*call.positional, *call.kwargs.values()) if isinstance(a.value, cst.Name)]
            target = callee(self, call) if passed else None
            fn = target.fn if target is not None and not isinstance(target, ClassDef) else None
            if isinstance(fn, cst.FunctionDef):
                params = fn.params
                for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                    for name in passed:
                        join(name, param.name.value)
        groups = {name: find(name) for name in parent}
        attributes = set()
        for store in (*self.stores, *self.touched):
            if isinstance(store.target.value, cst.Name) and store.target.value.value in groups:
                attributes.add((groups[store.target.value.value], store.key))
        changes: dict[str, set[tuple[int, str]]] = {}
        for scope_id, name in changed:
            if name in groups:
                changes.setdefault(groups[name], set()).add((scope_id, name))
        return groups, {group: frozenset(found) for group, found in changes.items()}, frozenset(attributes)

    def shared_and_changed(self, name: str, owner: Scope | None = None, at: Call | None = None, since: int = -1) -> bool:
        """`name` may hold the object another name holds, and some name of them changes it in place (other than
        `name` itself in `owner` and its plain aliases there, whose events say how; other than a function's parameter
        when the read is an argument of the call `at` and that function has not run on the object `name` holds, made
        at `since` in `owner`: `changed_later`)."""
        return any(not self.changed_later(scope_id, changer, owner, at, since) for scope_id, changer in self.changers(name, owner))

    def changers(self, name: str, owner: Scope | None = None) -> list[tuple[int, str]]:
        """(scope id, name) of each name that may hold the object `name` holds and changes it in place, other than
        `name` itself in `owner` and its plain aliases there (`shared_and_changed`)."""
        found = self._sharing[1].get(self._sharing[0].get(name), ())
        own = {name, *self._aliases[0].get((id(owner), name), ())} if owner is not None else ()
        return [(scope_id, changer) for scope_id, changer in found if owner is None or scope_id != id(owner) or changer not in own]

    @functools.cached_property
    def calls_by_order(self) -> dict[int, Call]:
        return {c.order: c for c in self.calls}

    def changed_later(self, scope_id: int, changer: str, owner: Scope | None, at: Call | None, since: int = -1) -> bool:
        """The change is a function's (defined in a module or function body), through its parameter `changer`, and no
        call of that function has run on the object read when the arguments of the call `at` in `owner` are evaluated:
        the function's name (there the one that def binds) is read only as the function of calls in `owner`, outside
        loops, each `at` itself, in a later statement (`config = {...}` then `train(config)`, which stores
        `config["epochs"]`: `train`'s argument is the display) or before `since`, where the object read was made (a
        call that ran before the display was evaluated was handed another object: `train(a)`, then `b = {...}`,
        `train(b)`)."""
        found = next((s for s in self.scopes if id(s) == scope_id and changer in s.params), None)
        if at is None or owner is None or found is None or not isinstance(found.node, cst.FunctionDef):
            return False
        name, parent = found.node.name.value, found.parent
        if parent is None or parent.kind not in ("module", "function") or owner.lookup_scope(name) is not parent:
            return False  # a method, or another function of that name at the call
        calls = [c for c in self.calls_by_short.get(name, ()) if c.method is None and isinstance(c.node.func, cst.Name) and c.node.func.value == name]
        if len(calls) != len(self.name_loads.get(name, ())) or len(parent.events.get(name, ())) != 1 or name in parent.params:
            return False  # handed along, or bound more than once
        return all(c.scope is owner and not c.loops and (c is at or c.order > at.order and c.stmt is not at.stmt or c.order < since) for c in calls)

    @functools.cached_property
    def _aliases(self) -> tuple[dict[tuple[int, str], list[str]], dict[tuple[int, str], list[Event]]]:
        """The plain aliases of each name in a scope's own body (`alias = cfg`, unconditional, after an unconditional
        binding of `cfg` and before any other, and then only changing its items: stores, `update`, `append`,
        `extend`, `+=`, all unconditional and before `cfg` is bound anew), and those changes: they change the object
        `cfg` holds. `alias += xs` is handed on as an "iadd": it changes a list as `extend` does (a list's
        `__iadd__`) and binds `alias` anew for a string, a number or a tuple, leaving `cfg`'s value as it was."""
        names: dict[tuple[int, str], list[str]] = {}
        changes: dict[tuple[int, str], list[Event]] = {}
        for scope in self.scopes:
            for alias, events in scope.events.items():
                first, rest = events[0], events[1:]
                if first.op != "assign" or first.path or first.guards or not isinstance(first.whole, cst.Name) or alias in scope.params:
                    continue
                if (id(scope), alias) in self.mutated or any(e.op not in ("setitem", "update", "append", "extend", "augadd") or e.guards for e in rest):
                    continue
                name = first.whole.value
                binds = [e for e in scope.events.get(name, ()) if e.op in _BINDS]
                before = [e for e in binds if e.order < first.order]
                anew = next((e.order for e in binds if e.order > first.order), None)
                if name == alias or name in scope.params or not before or before[-1].op != "assign" or before[-1].guards:
                    continue
                if anew is not None and any(e.order > anew for e in rest):
                    continue  # a change after `cfg` is bound anew changes the object `cfg` held before
                names.setdefault((id(scope), name), []).append(alias)
                changes.setdefault((id(scope), name), []).extend(dataclasses.replace(e, op="iadd") if e.op == "augadd" else e for e in rest)
        return names, changes

    @functools.cached_property
    def _calls_passing(self) -> dict[str, list[Call]]:
        """name -> the calls of the file that pass it as an argument (`f(xs)`, `f(k=xs)`), in order: found once."""
        found: dict[str, list[Call]] = {}
        for call in self.calls:
            for name in dict.fromkeys(a.value.value for a in call.node.args if isinstance(a.value, cst.Name)):
                found.setdefault(name, []).append(call)
        return found

    def changed_by_a_callee(self, name: str, within: Scope | None = None, depth: int = 0, *, unknown: bool = True) -> bool:
        """`name` is passed (any name so spelled, in any scope, to be safe; `within`: in that scope) to a function of
        the file that may change the object in place through the parameter it binds (an event of the parameter other
        than a binding, a mutating method, the same again for the calls it hands the parameter on to, a few deep), or
        to a call of the file whose function is not known: what happens to the object there no event of `name` shows.
        (A library's call is taken to leave it as it is, as for dicts.) `unknown=False`: a call whose function is not
        known is taken to leave it as it is too (`tok(texts)`, the tokenizer a name holds), unless the file defines a function
        or method of its name that changes a parameter (`C().grow(texts)`)."""
        for call in self._calls_passing.get(name, ()):
            passed = [a for a in call.node.args if isinstance(a.value, cst.Name) and a.value.value == name]
            if within is not None and call.scope is not within or call.qualname is not None and not call.qualname.startswith("<local>."):
                continue
            target = callee(self, call)
            fn = target.fn if target is not None and not isinstance(target, ClassDef) else None
            scope = next((s for node, s in self.functions.get(fn.name.value, ()) if node is fn), None) if isinstance(fn, cst.FunctionDef) else None
            if depth >= MAX_HANDED:
                return True
            if scope is None and not unknown:  # a library's call, a tokenizer's; or a function of the file's name, any
                named = self.functions.get(call.method or dotted(call.node.func), ())  # of which may be the one called
                if any(self._changes(p.name.value, s, depth, unknown) for f, s in named for p in (*f.params.posonly_params, *f.params.params, *f.params.kwonly_params)):
                    return True
                continue
            if scope is None:
                return True
            if any(param is None or self._changes(param, scope, depth, unknown) for param in _params_bound(fn, call, passed)):
                return True
        return False

    def _changes(self, param: str, scope: Scope, depth: int, unknown: bool) -> bool:
        """The function whose scope is `scope` may change in place the object its parameter `param` binds: an event of
        it other than a binding, a mutating method, or a callee it hands it on to (`changed_by_a_callee`)."""
        if (id(scope), param) in self.mutated or any(e.op not in _BINDS and e.op not in ("unpack", "param") for e in scope.events.get(param, ())):
            return True
        return self.changed_by_a_callee(param, scope, depth + 1, unknown=unknown)

    def only_grown(self, name: str, owner: Scope) -> bool:
        """Every change in place of the object `name` holds in `owner`, through `name` or any name that may hold it
        (`sharing`), adds elements: `append`, `extend`, `+=` (a list only grows; `+=` binds a new, longer string or
        tuple). False where one may remove or replace elements (a mutating method, an item stored or deleted, `*=`)
        or where a change is not the changer's own event (through an attribute: `h.texts.clear()`)."""
        group = self._sharing[0].get(name)
        changers = self._sharing[1].get(group, ()) if group is not None else ((id(owner), name),)
        scopes = {id(s): s for s in self.scopes}
        for scope_id, changer in changers:
            if (scope_id, changer) in self.mutated or scope_id not in scopes:
                return False
            changes = [e.op for e in scopes[scope_id].events.get(changer, ()) if e.op not in _BINDS and e.op not in ("unpack", "param")]
            if any(op not in GROWING for op in changes) or group is not None and not changes:
                return False
        return True

    def changed_through_a_name_bound_to_it(self, owner: Scope, name: str) -> bool:
        """A name of `owner` bound to the object `name` holds (`t = texts`, under a test or in a loop too) changes it
        where that name is no plain alias, whose changes `events_through_aliases` gives in order: by a mutating
        method (`t.remove(...)`), or by changes under a test or after a binding of its own."""
        plain = set(self._aliases[0].get((id(owner), name), ()))
        return any(alias not in plain for alias in self._changing_names_bound_to.get((id(owner), name), ()))

    @functools.cached_property
    def _changing_names_bound_to(self) -> dict[tuple[int, str], list[str]]:
        """(scope, name) -> the other names of that scope bound to it by a plain assignment (`t = texts`) that change
        their object (a mutating method, or an event other than a binding): found once per file."""
        found: dict[tuple[int, str], list[str]] = {}
        for scope in self.scopes:
            for alias, events in scope.events.items():
                if (id(scope), alias) not in self.mutated and all(e.op in _BINDS or e.op in ("unpack", "param") for e in events):
                    continue
                for name in {e.whole.value for e in events if e.op == "assign" and not e.path and isinstance(e.whole, cst.Name)} - {alias}:
                    found.setdefault((id(scope), name), []).append(alias)
        return found

    def events_through_aliases(self, owner: Scope, name: str) -> list[Event]:
        """`name`'s events in `owner`, with the changes its plain aliases make to its object, in order."""
        own = owner.events.get(name, [])
        through = self._aliases[1].get((id(owner), name))
        return sorted([*own, *through], key=lambda e: e.order) if through else own

    def attribute_stored_through_another(self, name: str, attr: str) -> bool:
        """Some name that may hold `name`'s object stores its attribute `attr` (`alias = cfg; alias.lr = ...`)."""
        group = self._sharing[0].get(name)
        return group is not None and (group, attr) in self._sharing[2]


def _params_bound(fn: cst.FunctionDef, call: Call, passed: list[cst.Arg]) -> list[str | None]:
    """The parameters of `fn` the arguments `passed` of `call` bind (None: not known, `*args`, `**kwargs`). A method
    called on an object (`self.check(texts)`) binds its receiver to its first parameter, `self` or `cls`, and the
    arguments to the rest; a method whose first parameter is otherwise named is not known."""
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    if call.method is not None:
        if not params or params[0] not in ("self", "cls"):
            return [None]
        params = params[1:]
    found: list[str | None] = []
    for arg in passed:
        if arg.star:
            found.append(None)
        elif arg.keyword is not None:
            found.append(arg.keyword.value)
        else:
            index = [a for a in call.node.args if not a.keyword].index(arg)
            found.append(params[index] if index < len(params) and not any(a.star for a in call.node.args[:index]) else None)
    return found


MAX_HANDED = 3  # calls of the file's functions an object handed on is followed through (`changed_by_a_callee`)
# the changes in place that only add elements (events of the changed name)
GROWING = frozenset({"append", "extend", "augadd"})
# methods of list, dict and set that change the object in place (append/extend are followed as events)
MUTATORS = frozenset({"insert", "pop", "remove", "clear", "update", "setdefault", "sort", "reverse", "popitem", "discard", "add", "__setitem__", "__delitem__"})
# of those, the list methods that only reorder the elements (`list.sort`, `list.reverse`)
REORDERING = frozenset({"sort", "reverse"})
