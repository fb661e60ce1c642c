"""Aliasing and change in place: which names of the file may hold one object (`alias = cfg`, an argument and the
parameter it is passed to, `self.cfg = cfg`) and which of them change it (items stored or deleted, a mutating method,
`+=`): a constant display is folded only where nothing changes it behind its name's back."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import libcst as cst

from bertlint.facts.functions import callee
from bertlint.facts.items import HOLDS, INSIDE, PART, SAME, aliased, subscripted
from bertlint.facts.nodes import ENTER, Call, ClassDef, Event, Scope, dotted, literal, walk
from bertlint.facts.reaching import BINDS as _BINDS


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class Shared:
    """The file's variables that may hold one object (`Sharing._sharing`)."""

    groups: dict[tuple, tuple]  # variable (binding scope id, name) -> its group
    changes: dict[tuple, frozenset[tuple[int, str]]]  # group -> (scope id, name) of each change in place
    attributes: frozenset[tuple[tuple, str | None]]  # (group, attribute) of every attribute some member stores
    named: dict[str, list[tuple]]  # name -> the groups of the variables so named
    outer: dict[tuple, set[tuple]]  # group -> the groups whose objects may hold its objects
    linked: dict[tuple, set[tuple]]  # group -> the groups that hold a part of its objects, or whose part it holds
    mixed: frozenset[tuple]  # groups joined from a name and one that may hold its object or be held by it
    deep: frozenset[tuple[int, str]]  # changes that may reach inside the objects of the items


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
        `texts.insert(0, t)`, `h["t"].extend(...)`): its constant is not folded. (`cfg.update(...)` as a statement is
        an event, and so is `xs.append(...)`; `h["t"].append(...)` is none: it changes `h`.)"""
        return frozenset((scope_id, name) for scope_id, name, _method, _receiver in self._mutating_calls)

    @functools.cached_property
    def mutated_beyond_order(self) -> frozenset[tuple[int, str]]:
        """`mutated` without the names only reordered in place (`texts.sort()`, `texts.reverse()`: every element stays,
        and so does their number): what holds of every element, or of how many there are, holds after them."""
        return frozenset((scope_id, name) for scope_id, name, method, _receiver in self._mutating_calls if method not in REORDERING)

    @functools.cached_property
    def scopes(self) -> list[Scope]:
        """The module's, its functions' and its classes' scopes."""
        return [self.module_scope, *(s for defs in self.functions.values() for _, s in defs), *(c.scope for c in self.classes.values())]

    @functools.cached_property
    def _read_scopes(self) -> dict[int, Scope]:
        """The scope each read of a name is evaluated in, by the read: found once per file."""
        return {id(read): scope for loads in self.name_loads.values() for read, scope, _order, _loops in loads}

    def _node(self, name: str, scope: Scope | None) -> tuple[int | None, str]:
        """The variable a name read or bound in `scope` is: (its binding scope, the name). A name of no known binding
        scope, and `self` and `cls` (a method's receiver, whatever method binds it), are one file-wide variable."""
        found = scope.lookup_scope(name) if scope is not None and name not in RECEIVERS else None
        return (id(found) if found is not None else None, name)

    def _read(self, read: cst.Name) -> tuple[int | None, str]:
        return self._node(read.value, self._read_scopes.get(id(read)))

    @functools.cached_property
    def _sharing(self) -> Shared:
        """Variables (a name in the scope that binds it) that may hold one object, found in one pass: a name assigned
        another or what holds it (`alias = cfg`, `x = cfg if a else b`, `cfg = {"opt": inner}`, `x = f(cfg)`), an
        argument and the parameters of the file's function it is passed to, joined into groups (more joins only make
        more unknown; a function's `cfg` is not a module's `cfg` unless it reads that one). A name bound to a part of
        another's object (`v = d["k"]`, `for v in d`, `[d["k"]]`) and a value stored into an object (`d["k"] = v`,
        `d.append(v)`, a library's call given both) are edges between groups: the part's group is inside the other's.
        Changes in place (an item stored or deleted, through attributes too: `h.cfg["lr"] = ...`, a mutating method,
        `+=`) by (scope, name), each shallow (only the slots of the object the name holds: `d["a"] = 1`, `d.pop("a")`)
        or deep (`d["k"]["a"] = 1`, `h.cfg["lr"] = ...`, a method of the file's)."""
        parent: dict[tuple, tuple] = {}
        mixed: set[tuple] = set()  # variables joined to one that may hold their object or be held by it
        edges: list[tuple[tuple, tuple]] = []  # (inner, outer): the first's objects may be inside the second's
        links: list[tuple[tuple, tuple]] = []  # (holder, value): a part of the second's object is stored into the first's

        def find(node: tuple) -> tuple:
            while parent.get(node, node) != node:
                parent[node] = parent.get(parent[node], parent[node])  # path halving: point at the grandparent, then go there
                node = parent[node]
            return node

        def join(a: tuple, b: tuple, how: str = SAME) -> None:
            if a[1] in KEYWORDS or b[1] in KEYWORDS:
                return
            parent.setdefault(a, a)
            parent.setdefault(b, b)
            if how in (PART, INSIDE):
                edges.append((a, b) if how == PART else (b, a))
                return
            if how == SHARES:
                links.append((a, b))
                return
            if how == HOLDS:
                mixed.update((a, b))
            parent[find(a)] = find(b)

        def stored_in(value: tuple, holder: tuple, how: str) -> None:
            """An object `value` holds is stored into the one `holder` holds: the value's is inside the holder's now;
            a part of the value's (`d["k"] = other["k"]`) is inside both, taken here as the holder inside the value's
            (an edge no object shows, which only keeps the value's shallow changes from a holder's part)."""
            if how == PART:
                join(holder, value, SHARES)
            else:
                join(value, holder, PART)

        own = set(self.functions)
        augmented = {id(s.target) for s in self.touched if s.value is not s.target}  # `d["k"] += xs`
        changed: set[tuple[int, str]] = set(self.mutated)
        deep: set[tuple[int, str]] = {(i, n) for i, n, method, receiver in self._mutating_calls if method in own or not isinstance(receiver, cst.Name)}
        for scope in self.scopes:
            for name, events in scope.events.items():
                node = self._node(name, scope)
                for event in events:
                    if event.op == "assign" and event.path[:1] == (ENTER,):  # `with nullcontext(cfg) as c`
                        for other in walk(event.whole):
                            if isinstance(other, cst.Name) and id(other) in self._read_scopes:
                                join(node, self._read(other), HOLDS)
                    elif event.op in ("assign", "for") and event.whole is not None:
                        for other, how in aliased(self, event.whole, PART if event.op == "for" or event.path else SAME):
                            join(node, self._read(other), how)
                    elif event.op not in _BINDS and event.op not in ("unpack", "param"):
                        changed.add((id(scope), name))
                        if not _shallow(event, own, augmented):
                            deep.add((id(scope), name))
        for store in (*self.stores, *self.touched):  # `h.cfg["lr"] = ...`: the object `h` holds changes
            root = subscripted(store.target, attributes=True)
            if isinstance(store.target, cst.Subscript) and isinstance(root, cst.Name):
                key = (id(store.scope.lookup_scope(root.value) or store.scope), root.value)
                changed.add(key)
                if not isinstance(store.target.value, cst.Name) or id(store.target) in augmented:  # `d["k"] += xs`: the list too
                    deep.add(key)
                if store.value is not store.target:  # the value stored is inside the object now
                    for other, how in aliased(self, store.value):
                        stored_in(self._read(other), self._node(root.value, store.scope), how)
            elif isinstance(store.target, cst.Attribute) and store.value is not store.target:  # `self.cfg = cfg`
                for other, _how in aliased(self, store.value):
                    if isinstance(root, cst.Name):
                        join(self._node(root.value, store.scope), self._read(other), HOLDS)
        for call in self.calls:
            local = call.qualname is None or call.qualname.startswith("<local>.")
            holder = subscripted(call.receiver, attributes=True) if call.method in STORING else (call.positional[0].value if call.qualname in STORING_CALLS and call.positional else None)
            if isinstance(holder, cst.Name):  # `xs.append(v)`, `d.update(k=v)`, `setattr(h, "c", v)`
                for arg in call.node.args:
                    if arg.value is not holder:
                        for other, how in aliased(self, arg.value):
                            stored_in(self._read(other), self._node(holder.value, call.scope), how)
            if not local:
                continue
            passed = [self._read(read) for a in call.node.args for read, _how in aliased(self, a.value)]  # `f(cfg)`, `f(d["k"])`
            target = callee(self, call) if passed or call.method is not None else None
            fn = target.fn if target is not None and not isinstance(target, ClassDef) else None
            if isinstance(target, ClassDef):  # `H(cfg)`: its `__init__`'s parameters; an inherited one's: held by the instance
                fn = target.methods.get("__init__")
                if fn is None:
                    for node in passed:
                        join(node, (None, "self"), HOLDS)
            scope = next((s for node, s in self.functions.get(fn.name.value, ()) if node is fn), None) if isinstance(fn, cst.FunctionDef) else None
            receiver = subscripted(call.receiver, attributes=True) if call.method is not None else None
            if isinstance(fn, cst.FunctionDef) and isinstance(receiver, cst.Name) and fn.params.params and fn.params.params[0].name.value in RECEIVERS:  # `h.bump()`: `self` in `bump` is the object `h` holds
                join(self._node(receiver.value, call.scope), (None, fn.params.params[0].name.value))
            if isinstance(fn, cst.FunctionDef):
                params = fn.params
                every = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
                for arg in call.node.args:  # the parameter an argument binds (any, where not known) holds its value: `f(d["k"])` a part
                    bound = _params_bound(fn, call, [arg]) if not isinstance(target, ClassDef) else [None]
                    reads = list(aliased(self, arg.value))
                    for param in every if bound[0] is None or bound[0] not in every else bound:
                        for read, how in reads:
                            join(self._node(param, scope) if scope is not None else (None, param), self._read(read), how)
        by_name: dict[str, list[tuple]] = {}
        for node in list(parent):
            by_name.setdefault(node[1], []).append(node)
        for name, nodes in by_name.items():  # a variable of no known scope may be any of its name
            if (None, name) in parent:
                for node in nodes:
                    join(node, (None, name))
        groups = {node: find(node) for node in parent}
        attributes = set()
        for store in (*self.stores, *self.touched):
            if isinstance(store.target.value, cst.Name) and (node := self._node(store.target.value.value, store.scope)) in groups:
                attributes.add((groups[node], store.key))
        changes: dict[tuple, set[tuple[int, str]]] = {}
        for scope_id, name in changed:
            node = (None, name) if name in RECEIVERS else (scope_id, name)
            if node in groups:
                changes.setdefault(groups[node], set()).add((scope_id, name))
        named = {name: list(dict.fromkeys(groups[node] for node in nodes)) for name, nodes in by_name.items()}
        outer: dict[tuple, set[tuple]] = {}
        for inner, holder in edges:
            outer.setdefault(groups[inner], set()).add(groups[holder])
        linked: dict[tuple, set[tuple]] = {}
        for holder, value in links:
            linked.setdefault(groups[holder], set()).add(groups[value])
            linked.setdefault(groups[value], set()).add(groups[holder])
        return Shared(groups, {group: frozenset(found) for group, found in changes.items()}, frozenset(attributes), named, outer,
                      linked, frozenset(groups[node] for node in mixed), frozenset(deep))

    @functools.cached_property
    def _mutating_calls(self) -> list[tuple[int, str, str, cst.BaseExpression]]:
        """(scope id, name, method, receiver) of each call of `mutated`, for its depth: found once."""
        followed = {id(e.value) for scope in self.scopes for events in scope.events.values() for e in events if e.op == "update"}
        found = []
        for c in self.calls:
            changes = c.method in MUTATORS or c.method in GROWING and not isinstance(c.receiver, cst.Name)
            root = subscripted(c.receiver) if changes and id(c.node) not in followed else None
            if isinstance(root, cst.Name):
                found.append((id(c.scope.lookup_scope(root.value) or c.scope), root.value, c.method, c.receiver))
        return found

    def _groups(self, name: str, owner: Scope | None) -> list[tuple]:
        """The groups of the variable `name` is in `owner` (None: of every variable so named)."""
        if owner is None:
            return self._sharing.named.get(name, [])
        group = self._sharing.groups.get(self._node(name, owner))
        return [group] if group is not None else []

    def shared_and_changed(self, name: str, owner: Scope | None = None, at: Call | None = None, since: int = -1, *, parts: bool = False) -> bool:
        """`name` may hold the object another name holds, and some name of them changes it in place (other than
        `name` itself in `owner` and its plain aliases there, whose events say how; other than a function's parameter
        when the read is an argument of the call `at` and that function has not run on the object `name` holds, made
        at `since` in `owner`: `changed_later`). `parts`: the object is a list, dict or set of Python's, whose items
        no store into the slots of a dict or list it was taken from changes (`changers`)."""
        return any(not self.changed_later(scope_id, changer, owner, at, since) for scope_id, changer in self.changers(name, owner, parts=parts))

    def changers(self, name: str, owner: Scope | None = None, *, parts: bool = False) -> list[tuple[int, str]]:
        """(scope id, name) of each name that may hold the object `name` holds, a part of it or an object it is part
        of, and changes it in place, other than `name` itself in `owner` and its plain aliases there
        (`shared_and_changed`). `parts` (with `owner`): less the shallow changes of a dict or list display the object
        was taken out of (`v = d["k"]`, then `d["a"] = 1`): they store into its slots, not into the object, unless
        the object may be it (a display of names joined, a cycle of objects holding each other)."""
        groups = self._groups(name, owner)
        found = {change for group in groups for change in self._reachable_changes.get(group, ())}
        if parts and owner is not None:
            found -= {change for group in groups for outer in self._containers(group) for change in self._sharing.changes.get(outer, ())
                      if change not in self._sharing.deep}
        own = {name, *self._aliases[0].get((id(owner), name), ())} if owner is not None else ()
        return sorted((scope_id, changer) for scope_id, changer in found if owner is None or scope_id != id(owner) or changer not in own)

    @functools.cached_property
    def _reachable_changes(self) -> dict[tuple, frozenset[tuple[int, str]]]:
        """group -> the changes of every group joined to it by parts and holders, either way: found once per file."""
        shared = self._sharing
        top: dict[tuple, tuple] = {}

        def find(group: tuple) -> tuple:
            while top.get(group, group) != group:
                top[group] = top.get(top[group], top[group])
                group = top[group]
            return group

        for inner, outers in (*shared.outer.items(), *shared.linked.items()):
            for outer in outers:
                top.setdefault(inner, inner)
                top.setdefault(outer, outer)
                top[find(inner)] = find(outer)
        gathered: dict[tuple, set[tuple[int, str]]] = {}
        for group, changes in shared.changes.items():
            gathered.setdefault(find(group), set()).update(changes)
        return {group: frozenset(gathered.get(find(group), ())) for group in set(shared.groups.values())}

    def _containers(self, group: tuple) -> frozenset[tuple]:
        """The groups whose shallow changes leave the objects of `group` as they were: each a dict or list display
        (no parameter, joined to nothing that may hold it) that some object `group` reaches was taken out of (its
        part: `v = d["k"]`, `kw = {"p": v}` for `d`) or shares a part with (`d["k"] = other["k"]`), and that none of
        them may reach, nor any object they were taken out of (an object taken out of one may be any object inside
        it): a store into its slots changes no object `group` reaches. Found once per group."""
        return self.memoised(("containers", group), lambda: self._find_containers(group))

    def _find_containers(self, group: tuple) -> frozenset[tuple]:
        shared = self._sharing
        reached = {group, *self._inside(group)}
        above, stack = set(), [up for member in reached for up in (*shared.outer.get(member, ()), *shared.linked.get(member, ()))]
        while stack:
            outer = stack.pop()
            if outer not in above:
                above.add(outer)
                stack += [*shared.outer.get(outer, ()), *shared.linked.get(outer, ())]
        for outer in above:
            reached.update(self._inside(outer))
        return frozenset(outer for outer in above - reached if outer not in self._cyclic and outer not in shared.mixed and outer in self._displays)

    def _inside(self, group: tuple) -> frozenset[tuple]:
        """The groups whose objects may be inside the objects of `group`, through any number of holders."""
        return self.memoised(("inside", group), lambda: self._find_inside(group))

    def _find_inside(self, group: tuple) -> frozenset[tuple]:
        found, stack = set(), list(self._inner.get(group, ()))
        while stack:
            inner = stack.pop()
            if inner not in found:
                found.add(inner)
                stack += self._inner.get(inner, ())
        return frozenset(found)

    @functools.cached_property
    def _inner(self) -> dict[tuple, list[tuple]]:
        """group -> the groups whose objects its objects may hold."""
        found: dict[tuple, list[tuple]] = {}
        for inner, outers in self._sharing.outer.items():
            for outer in outers:
                found.setdefault(outer, []).append(inner)
        return found

    @functools.cached_property
    def _cyclic(self) -> frozenset[tuple]:
        """The groups on a cycle of holders (an object that may hold itself, through others too): Tarjan's
        strongly connected components, once per file."""
        outer = self._sharing.outer
        index: dict[tuple, int] = {}
        low: dict[tuple, int] = {}
        on, stack, found = set(), [], set()
        for root in list(outer):
            if root in index:
                continue
            work = [(root, iter(outer.get(root, ())))]
            index[root] = low[root] = len(index)
            stack.append(root)
            on.add(root)
            while work:
                node, children = work[-1]
                child = next(children, None)
                if child is not None:
                    if child not in index:
                        index[child] = low[child] = len(index)
                        stack.append(child)
                        on.add(child)
                        work.append((child, iter(outer.get(child, ()))))
                    elif child in on:
                        low[node] = min(low[node], index[child])
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in outer.get(node, ()):
                        found.update(component)
        return frozenset(found)

    @functools.cached_property
    def _displays(self) -> frozenset[tuple]:
        """The groups every variable of which is bound only to dict or list displays (comprehensions too) or to
        another name (`alias = d`, of the group then: joined), never a parameter: each object a dict or list of
        Python's, whose items a store into its slots does not change."""
        scopes = {id(s): s for s in self.scopes}
        plain: dict[tuple, bool] = {}
        for node, group in self._sharing.groups.items():
            scope = scopes.get(node[0])
            binds = [e for e in scope.events.get(node[1], ()) if e.op in _BINDS] if scope is not None else []
            ok = bool(binds) and node[1] not in scope.params and all(
                e.op == "assign" and not e.path and isinstance(e.whole, (cst.Dict, cst.List, cst.DictComp, cst.ListComp, cst.Name)) for e in binds)
            plain[group] = plain.get(group, True) and ok
        return frozenset(group for group, ok in plain.items() if ok)

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
        group = next(iter(self._groups(name, owner)), None)
        changers = self._reachable_changes.get(group, ()) if group is not None else ((id(owner), name),)
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
        return any((group, attr) in self._sharing.attributes for group in self._groups(name, None))


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


# the names of a method's receiver, one variable file-wide: which method binds it the sharing pass does not follow
RECEIVERS = frozenset({"self", "cls"})
# how a value stored relates to the object it is stored into: a part of the value's is in it (`Sharing._sharing`)
SHARES = "shares"
# names that are no variables
KEYWORDS = frozenset({"True", "False", "None"})
MAX_HANDED = 3  # calls of the file's functions an object handed on is followed through (`changed_by_a_callee`)
# the changes in place that only add elements (events of the changed name)
GROWING = frozenset({"append", "extend", "augadd"})
# methods of list, dict and set that change the object in place (append/extend are followed as events)
MUTATORS = frozenset({"insert", "pop", "remove", "clear", "update", "setdefault", "sort", "reverse", "popitem", "discard", "add", "__setitem__", "__delitem__"})
# methods of list, dict and set, and functions, that store their arguments into an object (the receiver, the first)
STORING = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "__setitem__"})
STORING_CALLS = frozenset({"builtins.setattr", "operator.setitem"})


def _shallow(event: Event, own: set[str], augmented: set[int]) -> bool:
    """An event that changes only the slots of the object its name holds: an item stored or deleted at one level
    (`d["k"] = v`, `del d["k"]`; not `d["k"] += xs`, of the targets `augmented`, which extends the list in the slot
    first), a list's or dict's method that is no method of the file's, `+=`, `*=`."""
    if event.op == "setitem":
        return isinstance(event.value, cst.Subscript) and isinstance(event.value.value, cst.Name) and id(event.value) not in augmented
    if event.op in ("update", "append", "extend"):
        method = event.value.func.attr.value if event.op == "update" and isinstance(event.value, cst.Call) and isinstance(event.value.func, cst.Attribute) else event.op
        return method not in own
    return event.op in ("augadd", "augmul") and not own & {"__iadd__", "__imul__"}
# of those, the list methods that only reorder the elements (`list.sort`, `list.reverse`)
REORDERING = frozenset({"sort", "reverse"})
