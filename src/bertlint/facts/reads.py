"""Names and the bindings that reach a read: the constant a name surely holds (its mutations applied), the object
every binding that may reach it binds (branches joined, a loop's back edge, a list only appended to), a parameter's
value, a name of an outer scope read where the reading code may run (`runs`)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import MAX_SEQ, UNANSWERED, Abstract, Binding, Instance, Pack, Record, Series, agree, constant
from bertlint.facts.functions import frame_of
from bertlint.facts.nodes import UNKNOWN, Event, Scope
from bertlint.facts.operators import augmented, concatenated
from bertlint.facts.reaching import BINDS as _BINDS
from bertlint.facts.runs import orders_in_force


class Reads:
    """The evaluator's names (mixed into `Evaluator`)."""

    def _Name(self, node):
        return self.named(node.value)

    def named(self, name: str) -> Any:
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        owner, _ = self.f.binding_events(name, self.scope, self.order)
        if owner is None:
            return UNKNOWN
        every = self.f.events_through_aliases(owner, name)
        if not self.reads_in(owner) and len(every) > 1:  # bound where this code runs: at each point it may run from
            orders = orders_in_force(self.f, name, self.scope, owner, self.frame)
            outer = frame_of(self.frame, owner)
            return UNKNOWN if orders is None else agree([self.f.named_at(name, owner, order, self.cli, outer) for order in orders])
        order = self.order if self.reads_in(owner) else None
        straight, back = self.f.reaching.events(self, owner, every, order)
        if not straight and not back:
            if name in owner.params:
                return self.param(owner, name)
            straight, back = self.f.reaching.events(self, owner, every, None)  # read before any binding: every one
        kept: list[str] = []  # the methods through which a dropped back-edge binding carries the value round the loop
        back = [e for e in back if not self._carried(name, owner, e, every, kept)]
        value = self._folded(name, owner, straight, back, every)
        if value is UNKNOWN:
            value = self._object(name, owner, straight, back, every)
        if kept and not (isinstance(value, Binding) and all(self.f.ask("keeps", method, value) for method in kept)):
            return UNKNOWN  # `x = x.to(device)` round a loop keeps objects only
        return value

    def _carried(self, name: str, owner: Scope, event: Event, every: list[Event], kept: list[str]) -> bool:
        """The back-edge binding `event` binds `name` to the value `name` held at the head of the same pass of its
        innermost loop, through names each bound once, unbranched, earlier in that pass (`n = v; v = n`), and
        methods that keep their receiver's value (`model = model.to(device)`, added to `kept`): the loop's fixed
        point `v = join(entry, v)` is `entry`, so the binding adds nothing to what reaches the read. Syntactic and
        bounded: no value is evaluated."""
        loop = next((g for g in reversed(event.guards) if g.kind == "loop"), None)
        if loop is None or event.op != "assign" or event.path or event.whole is None:
            return False
        expr, order, methods = event.whole, event.order, []
        for _ in range(MAX_CARRIED):
            while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and self.f.ask("keeps", expr.func.attr.value):
                methods.append(expr.func.attr.value)
                expr = expr.func.value
            if not isinstance(expr, cst.Name):
                return False
            events = every if expr.value == name else self.f.events_through_aliases(owner, expr.value)
            inside = [e for e in events if loop.start < e.order < order]
            if expr.value == name:
                if inside:
                    return False  # read after the pass changed it
                kept.extend(methods)
                return True
            last = inside[-1] if inside else None
            if last is None or last.op != "assign" or last.path or last.whole is None or last.loops != event.loops or not _straight(last):
                return False
            expr, order = last.whole, last.order
        return False

    def reads_in(self, owner: Scope) -> bool:
        """The read runs where `owner`'s statements run: in `owner` itself, or in a list, set or dict comprehension of
        it (evaluated at once; a generator runs later, a function when called)."""
        scope = self.scope
        while scope is not owner:
            if scope.kind != "lambda" or not isinstance(scope.node, (cst.ListComp, cst.SetComp, cst.DictComp)) or scope.parent is None:
                return False
            scope = scope.parent
        return True

    def bound(self, event: Event, owner: Scope) -> Any:
        """What a binding event binds its name to: the value, the element of the unpacked value or of the iterable (a
        loop's last element when read after a loop that cannot break)."""
        loop = event.guards[-1] if event.op == "for" and event.guards and event.guards[-1].kind == "loop" else None
        if loop is None:
            return self.f.unpacked(self.sub(event.whole, owner, event.order), event.path, event.op == "for")
        whole = self.sub(event.whole, owner, loop.at)
        if self.reads_in(owner) and self.order is not None and self.order > loop.end and not self.f.reaching.exits(loop.node):
            return self.f.unpacked(self.f.last_of(whole), event.path, False)
        return self.f.unpacked(whole, event.path, True)

    def _sure(self, straight: list[tuple[Event, bool]]) -> Event | None:
        """The binding that surely ran last before the read, if any."""
        return straight[-1][0] if straight and straight[-1][1] and straight[-1][0].op in _BINDS else None

    def _folded(self, name: str, owner: Scope, straight: list[tuple[Event, bool]], back: list[Event], every: list[Event]) -> Any:
        """The constant the name holds: the last binding that surely ran with the mutations after it applied, or the
        one constant of every binding that may reach the read; UNKNOWN when a method changes it in place."""
        if (id(owner), name) in self.f.mutated or not self.reads_in(owner) and len(every) > 1:
            return UNKNOWN  # read where a function runs: any of the bindings and changes may have run before the call
        first = self._sure(straight)
        later = [e for e, sure in reversed(straight[:-1] if first is not None else straight)]
        if first is not None and not back and all(sure for _, sure in straight) and not any(e.op in _BINDS for e in later):
            value = self._mutated(first, owner, later)
        elif not back and all(e.op in ("setitem", "update") for e in later) and (first is not None or name in owner.params):
            start = self._constant_of(first, owner) if first is not None else constant(self.param(owner, name))
            value = self._items_changed(start, first.loops if first is not None else (), owner, list(reversed(straight[:-1] if first is not None else straight)))
            value = value if isinstance(value, dict) else UNKNOWN  # a dict that came to hold an object: `_object`'s
        elif any(e.op not in _BINDS for e in (*later, *back)):
            return UNKNOWN
        else:
            found = [self._constant_of(e, owner) for e in (*later, *back, *((first,) if first is not None else ()))]
            if first is None and name in owner.params:
                found.append(constant(self.param(owner, name)))
            value = agree(found)
        return UNKNOWN if self._shared(name, owner, first, value) else value

    def _shared(self, name: str, owner: Scope, first: Event | None, value: Any) -> bool:
        """`value`, a list, set or dict (of constants or a `Record`) that `name` holds from `first`, is one that another
        name or a function's parameter may change (`alias = cfg; alias["lr"] = ...`, `bump(cfg)` storing into its
        parameter)."""
        fresh = first is not None and isinstance(first.whole, cst.Dict) and self.reads_in(owner) and self.order is not None  # a display each run binds anew
        if isinstance(value, Pack):  # a list or tuple of objects: changed by a helper, or by a name that shares it other
            # than its plain aliases, whose changes are its own events (`w = v; w += [b]` in a loop or a branch is none)
            return self.f.changed_by_a_callee(name) or self.f.shared_and_changed(name, owner, parts=True)
        return isinstance(value, (list, dict, set, Record)) and (
            self.f.shared_and_changed(name, owner, self.f.calls_by_order.get(self.order), first.order, parts=True) if fresh
            else self.f.shared_and_changed(name, owner, parts=True))

    def _items_changed(self, value: Any, loops: tuple, owner: Scope, later: list[tuple[Event, bool]]) -> Any:
        """`value` (a dict or a `Record`, bound in `loops`) with the items stored and updated after it, in order: a
        change that surely ran applied; one that may not have run (`if os.environ.get(...): cfg["epochs"] = 2`) leaves
        each key it changes holding what both paths agree on, UNKNOWN where they differ, and only where the key was
        there already (which keys the dict has then holds on every path). UNKNOWN for a change in a loop the binding
        is not in, or any change not of a dict's items."""
        for event, sure in later:
            before = dict(value.items) if isinstance(value, Record) else value
            if not isinstance(before, dict) or event.loops != loops:
                return UNKNOWN
            changed = self.item_changes(value, event, owner)
            after = dict(changed.items) if isinstance(changed, Record) else changed
            if not isinstance(after, dict):
                return UNKNOWN
            if not sure:
                if after.keys() != before.keys():
                    return UNKNOWN
                joined = {key: agree([before[key], item]) for key, item in after.items()}
                changed = Record(tuple(joined.items())) if isinstance(value, Record) or isinstance(changed, Record) else joined
            value = changed
        return value

    def _constant_of(self, event: Event, owner: Scope) -> Any:
        if event.op == "import":
            return constant(self.f.project_import(event.value))  # a constant of a module of the project
        return constant(self.bound(event, owner)) if event.op in ("assign", "for") and event.whole is not None else UNKNOWN

    def _mutated(self, first: Event, owner: Scope, later: list[Event]) -> Any:
        """The constant `first` binds with the mutations after it (appends, extends, `+=`, `*=`) applied."""
        value = self._constant_of(first, owner)
        for event in later:
            if value is UNKNOWN or event.loops != first.loops:
                return UNKNOWN
            if event.op in ("setitem", "update"):
                value = constant(self.item_changes(value, event, owner))
                continue
            if event.op == "iadd" and isinstance(value, IMMUTABLE):
                continue  # `alias += x` on a string, number or tuple another name holds binds the alias anew
            arg = self.const_at(event.value, owner, event.order) if event.value is not None else UNKNOWN
            if arg is UNKNOWN:
                return UNKNOWN
            if event.op == "append" and isinstance(value, list):
                value = value + [arg]
            elif event.op in ("extend", "iadd") and isinstance(value, list) and isinstance(arg, (list, tuple, str)):
                value = value + list(arg)
            elif event.op in ("augadd", "augmul") and isinstance(value, (list, tuple, str, int, float)):
                value = augmented(event.op, value, arg)
            else:
                return UNKNOWN
            if isinstance(value, list) and len(value) > MAX_SEQ:
                return UNKNOWN
        return value

    def const_at(self, node, scope: Scope, order: int | None) -> Any:
        return constant(self.sub(node, scope, order))

    def _object(self, name: str, owner: Scope, straight: list[tuple[Event, bool]], back: list[Event], every: list[Event]) -> Any:
        """The object every binding that may reach the read binds (objects keep what they are through mutation)
        (`if f: enc = a` / `else: enc = b`: the same object on every path, else UNKNOWN)."""
        reaching = [e for e, _ in straight if e.op in _BINDS] + [e for e in back if e.op in _BINDS]
        # `enc = None` first (a sentinel): no object, and a read that uses the object fails on that path
        found = [self._extended(owner, every, e, self._bound_object(owner, every, e)) for e in reaching if not _binds_none(e)]
        if found and self._sure(straight) is None and name in owner.params and (given := self.param(owner, name)) is not None:
            found.append(given)  # `tok=None` then `if tok is None: tok = ...`: None is a sentinel too
        value = agree(found) if found else UNKNOWN
        if self._shared(name, owner, self._sure(straight), value):
            return UNKNOWN
        if (id(owner), name) in self.f.mutated and (isinstance(value, (Record, Pack)) or any(e.op in ("setitem", "update") for e, _ in straight)):
            return UNKNOWN  # `cfg["opt"].update(...)`: a change its events do not show
        if any(e.op in ("setitem", "update") for e in (*(e for e, _ in straight), *back)):  # a dict's items changed
            first = self._sure(straight)
            if first is not None and first.op == "assign":
                bound, loops, later = self.bound(first, owner), first.loops, straight[:-1]
            elif first is None and name in owner.params and not any(e.op in _BINDS for e, _ in straight):
                bound, loops, later = self.param(owner, name), (), straight  # the parameter's dict on entry
            else:
                bound = UNKNOWN
            if isinstance(bound, (dict, Record)) and not back:
                changed = self._items_changed(bound, loops, owner, list(reversed(later)))
                return UNKNOWN if self._shared(name, owner, first, changed) else changed  # `fill(cfg)` storing into it too
            return UNKNOWN if isinstance(value, Record) else value
        return value

    def _extended(self, owner: Scope, events: list[Event], bind: Event, value: Any) -> Any:
        """The object `bind` binds after the `x += y` / `x.extend(y)` that follow it before the read, as a library
        model says (`ids += [pad_id] * k`: ids padded by hand); UNKNOWN where such a change may or may not run."""
        for event in events[events.index(bind) + 1 :]:
            if event.op in _BINDS or self.reads_in(owner) and self.order is not None and event.order >= self.order:
                break  # bound anew (what follows changes that object), or after the read
            if isinstance(value, (Pack, Series)) and _built_empty(bind):
                break  # its changes are what `appended` followed
            if isinstance(value, (Pack, Series)):  # a list or tuple of Python's: what the change makes of it
                changed = self._grown(owner, bind, event, value)
            elif event.op not in ("augadd", "extend") or not isinstance(value, Abstract) or event.value is None:
                continue
            else:
                at = type(self)(self.f, owner, event.order, self.cli, self.frame)
                changed = self.f.ask("operation", at, value, cst.Add(), event.value)
                if changed is UNANSWERED:
                    continue
            every_time = not event.conditional or self.runs_before_read(event, owner) or _straight(event) and _straight(bind) and event.loops == bind.loops
            value = changed if every_time else UNKNOWN
        return value

    def _grown(self, owner: Scope, bind: Event, event: Event, value: Pack | Series) -> Any:
        """A list or tuple known element by element (or whose every element holds one value) after the change `event`
        makes in place: `append` adds one element, `extend` and `+=` the other's elements (`+=` of a tuple binds a new
        one; through another name, `alias += ...`, that name alone); UNKNOWN for any other change (an item stored or
        deleted, `*=`)."""
        if event.op == "iadd" and not isinstance(bind.whole, cst.List):
            return value if isinstance(bind.whole, cst.Tuple) else UNKNOWN  # a tuple: the alias is bound anew
        if event.op not in ("append", "extend", "augadd", "iadd") or event.value is None:
            return UNKNOWN
        added = self.sub(event.value, owner, event.order)
        return concatenated(value, (added,) if event.op == "append" else added)

    def runs_before_read(self, event: Event, owner: Scope) -> bool:
        """`event` runs on every path to this read: the read sits later in the same iteration of the loop whose body
        runs `event` unbranched (`ids = tok.encode(t)` then `ids += pad` in one loop body)."""
        if owner is not self.scope or self.order is None or not _straight(event) or not event.loops:
            return False
        return event.order < self.order <= self.f.loop_spans.get(id(event.loops[-1]), (0, -1))[1]

    def _bound_object(self, owner: Scope, events: list[Event], event: Event) -> Any:
        """The object binding `event` binds; a list built empty then only appended to (each element maybe replaced
        right after it is appended) is what `appended` says."""
        after, changes = [], []
        for later in events[events.index(event) + 1 :]:  # what changes it (until it is bound anew), and before the read
            if later.op in _BINDS:
                break
            changes.append(later)
            if len(after) == len(changes) - 1 and not (self.reads_in(owner) and self.order is not None and later.order >= self.order):
                after.append(later)
        if _built_empty(event):
            return self.appended(owner, changes, len(after))
        if event.op in ("assign", "for") and event.whole is not None:
            found = self.bound(event, owner)
            return found if isinstance(found, Abstract) else UNKNOWN
        if event.op == "import":
            found = self.f.project_import(event.value)  # a module of the project, or a class of one
            return found if isinstance(found, Abstract) else UNKNOWN
        if event.op == "def" and isinstance(event.value, cst.FunctionDef):
            return self.function_value(event.value, owner)
        if event.op == "def" and isinstance(event.value, cst.ClassDef) and not event.conditional:
            cls = self.f.classes.get(event.value.name.value)
            return Instance("class", None, cls) if cls is not None and cls.node is event.value else UNKNOWN
        return UNKNOWN


IMMUTABLE = (str, bytes, tuple, int, float, complex)  # constants whose `+=` makes a new object
MAX_CARRIED = 8  # the names a value is followed through round a loop (`_carried`)


def _straight(event: Event) -> bool:
    """In its scope's own body and in no branch inside its innermost loop: every pass of that loop runs it."""
    return not event.guards or event.guards[-1].kind == "loop"


def _built_empty(event: Event) -> bool:
    """`xs = []`: a list built empty, whose changes `Appending.appended` follows."""
    return event.op == "assign" and isinstance(event.whole, cst.List) and not event.whole.elements and not event.path


def _binds_none(event: Event) -> bool:
    return event.op == "assign" and not event.path and is_none(event.whole)


def is_none(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"
