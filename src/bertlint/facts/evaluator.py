"""The evaluator: what a Python expression holds, knowing Python and no library.

Every expression evaluates, lazily and once per file (memoised on the expression, the position it is read at and
the call it is evaluated for), to one abstract value:

- a Python constant (`2e-5`, `"max_length"`, `[0, 1, 1]`, a config dict), folded only where it cannot differ at
  run time;
- an `Abstract` value: a `Binding` (an object the rules care about, with the call that made it), an `Instance`
  (an object a library model or the file's own class describes: a parsed command line, a table, an instance),
  a `Pack` (a tuple or list whose elements are known one by one), a `Series` (an iterable whose every element
  holds one value);
- `UNKNOWN`, the one sentinel every consumer treats as "say nothing".

What this module knows is Python: names and the binding in force at a read; targets of any shape (`for`,
assignment and comprehension targets, tuples, lists, starred, nested: an `Event`'s `path`); displays; indexing
and slicing; the file's own functions, methods and classes (their `return`s evaluated for each call's arguments,
a bounded depth), parameters (the call being evaluated, else what every call site passes, else the default),
`self` attributes, lambdas, `functools.partial`; the builtins enumerate/zip/tuple/list/sorted/range/len; a
comprehension that maps each element to itself. What a library call makes, what its objects' methods, attributes,
items and iteration give, is asked of the library models (`brain`), which `values.Values` hands in: this module
imports none of them.
"""

from __future__ import annotations

import functools
from typing import Any

import libcst as cst

from bertlint.facts.abstract import FAILURES, MAX_DEPTH, MAX_SEQ, Abstract, Binding, Frame, Instance, Pack, Series, agree, constant
from bertlint.facts.functions import arguments, bind, callee, defined_at, enclosing_class, frame_of, function_scope, is_dataclass
from bertlint.facts.model import Model, Runtime
from bertlint.facts.nodes import UNKNOWN, Call, ClassDef, Event, Scope, dotted, iter_children, literal, names_in


class Evaluation(Model):
    """The semantic model of one file with the evaluator's memo. `brains` (the library models, set by `Values`) are
    modules answering the hooks `ask` names (listed in `brain/__init__.py`); each answers None for what is not its
    library's."""

    brains: tuple = ()

    def __init__(self, module: cst.Module, source: str, path=None, runtime: Runtime = Runtime()):
        super().__init__(module, source, path, runtime)
        self._memo: dict[tuple, Any] = {}
        self._frames: dict[tuple[int, int], Frame | None] = {}
        self._returns: dict[int, list[cst.BaseExpression | None]] = {}

    def evaluate(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None, *, cli: bool = True, frame: Frame | None = None) -> Any:
        """The abstract value of `expr` read in `scope` at `order`: a constant, an `Abstract` value, or UNKNOWN."""
        if expr is None:
            return UNKNOWN
        key = (id(expr), order, cli, id(frame))
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = UNKNOWN  # a value defined through itself is unknown
        try:
            result = Evaluator(self, scope, order, cli, frame).eval(expr)
        except FAILURES:
            result = UNKNOWN  # SyntaxError: libcst's `evaluated_value` of a string holding a null byte
        self._memo[key] = result
        return result

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
    def mutated(self) -> frozenset[tuple[int, str]]:
        """(scope, name) of every name a mutating method of a list, dict or set is called on (`cfg.update(...)`,
        `texts.insert(0, t)`): its constant is not folded."""
        return frozenset((id(c.scope.lookup_scope(c.receiver.value) or c.scope), c.receiver.value) for c in self.calls if c.method in MUTATORS and isinstance(c.receiver, cst.Name))

    @functools.cached_property
    def _sharing(self) -> tuple[dict[str, str], frozenset[str], frozenset[tuple[str, str | None]]]:
        """Names that may hold one object, found in one pass: a name assigned another (`alias = cfg`), an argument
        and the parameters of the file's function it is passed to, joined into groups (by name, file-wide: more
        joins only make more unknown). Returns each shared name's group, the groups whose object some member changes
        in place (an item stored or deleted, a mutating method, `+=`), and (group, attribute) of every attribute some
        member stores."""
        parent: dict[str, str] = {}

        def find(name: str) -> str:
            while parent.get(name, name) != name:
                name = parent[name] = parent.get(parent[name], parent[name])
            return name

        def join(a: str, b: str) -> None:
            parent.setdefault(a, a)
            parent.setdefault(b, b)
            parent[find(a)] = find(b)

        scopes = [self.module_scope, *(s for defs in self.functions.values() for _, s in defs), *(c.scope for c in self.classes.values())]
        changed: set[str] = {name for _, name in self.mutated}
        for scope in scopes:
            for name, events in scope.events.items():
                for event in events:
                    if event.op == "assign" and not event.path and isinstance(event.whole, cst.Name):
                        join(name, event.whole.value)
                    elif event.op not in _BINDS and event.op not in ("unpack", "param"):
                        changed.add(name)
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
        return groups, frozenset(groups[n] for n in changed if n in groups), frozenset(attributes)

    def shared_and_changed(self, name: str) -> bool:
        """`name` may hold the object another name holds, and some name of them changes it in place."""
        return self._sharing[0].get(name) in self._sharing[1]

    def attribute_stored_through_another(self, name: str, attr: str) -> bool:
        """Some name that may hold `name`'s object stores its attribute `attr` (`alias = cfg; alias.lr = ...`)."""
        group = self._sharing[0].get(name)
        return group is not None and (group, attr) in self._sharing[2]

    def ask(self, hook: str, *args) -> Any:
        """The first library model's answer to `hook`, or None."""
        for brain in self.brains:
            answer = getattr(brain, hook, None)
            found = answer(*args) if answer is not None else None
            if found is not None:
                return found
        return None

    def return_values(self, fn: cst.FunctionDef | cst.Lambda) -> list[cst.BaseExpression | None]:
        """The values of the `return`s of `fn`'s own body (nested functions and classes left out; a lambda's body),
        found once."""
        if isinstance(fn, cst.Lambda):
            return [fn.body]
        if id(fn) not in self._returns:
            found = []
            stack = list(iter_children(fn.body))
            while stack:
                node = stack.pop()
                if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    continue
                if isinstance(node, cst.Return):
                    found.append(node.value)
                stack.extend(iter_children(node))
            self._returns[id(fn)] = found
        return self._returns[id(fn)]

    def partial_frame(self, partial: Call, fn: cst.FunctionDef) -> Frame:
        """`partial(collate, tok=tokenizer)` as a frame of `fn`: those arguments bound, the first left free."""
        key = (id(partial.node), 0)
        if key not in self._frames:
            params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)][1:]
            bound = dict(zip(params, partial.positional[1:]))
            bound.update(partial.kwargs)
            self._frames[key] = Frame(fn, {name: (arg.value, partial.scope, partial.order) for name, arg in bound.items()}, None, 1)
        return self._frames[key]

    def frame_for(self, call: Call, fn: cst.FunctionDef | cst.Lambda, method: bool, caller: Frame | None, partial: Call | None = None) -> Frame | None:
        """The frame that evaluates `fn` for `call`'s arguments (one per call and caller); None when they do not bind."""
        key = (id(call.node), id(caller))
        if key not in self._frames:
            self._frames[key] = bind(call, fn, method, caller, partial)
        return self._frames[key]

    # ---- what Python does with a value ---------------------------------------------------
    def item_of(self, value: Any, key: Any) -> Any:
        """`value[key]`: a constant's element, a Pack's, or what the library model of an object says."""
        if value is UNKNOWN or key is UNKNOWN and not isinstance(value, (Binding, Instance)):
            return UNKNOWN  # an object's item at an unknown key: what its library model says (a batch's any column)
        if isinstance(key, slice):
            if isinstance(value, Pack):
                return Pack(value.items[key])
            if isinstance(value, Series):
                return value  # some of the elements, each holding the same
            if isinstance(value, Abstract):
                found = self.ask("item", self, value, key)  # `texts[i : i + bs]`, `ds["input_ids"][:8]`
                return UNKNOWN if found is None else found
            return value[key] if isinstance(value, (list, tuple, str)) else UNKNOWN
        if isinstance(value, Pack):
            return value.items[key] if isinstance(key, int) and -len(value.items) <= key < len(value.items) else UNKNOWN
        if isinstance(value, Abstract):
            found = self.ask("item", self, value, key)
            return UNKNOWN if found is None else found
        if isinstance(value, dict):
            return value.get(key, UNKNOWN)
        if isinstance(value, (list, tuple, str)) and isinstance(key, int) and not isinstance(key, bool):
            return value[key]
        return UNKNOWN

    def elements_of(self, value: Any) -> Any:
        """What iterating `value` yields, when every element holds the same."""
        if isinstance(value, Series):
            return value.element
        if isinstance(value, Pack):
            return agree(list(value.items))
        if isinstance(value, (list, tuple)) and value:
            return agree(list(value))
        if isinstance(value, Abstract):
            found = self.ask("iterate", self, value)
            return UNKNOWN if found is None else found
        return UNKNOWN

    def unpacked(self, value: Any, path: tuple, iterated: bool) -> Any:
        """The value a target at `path` binds when `value` is assigned (or, `iterated`, looped over)."""
        if iterated:
            value = self.elements_of(value)
        for step in path:
            value = self.item_of(value, step)
            if isinstance(step, slice) and isinstance(value, tuple):
                value = list(value)  # a starred target always binds a list
        return value


# ---------------------------------------------------------------------------------------------
# the evaluator proper


class Evaluator:
    def __init__(self, values: Evaluation, scope: Scope, order: int | None, cli: bool, frame: Frame | None):
        self.f = values
        self.scope = scope
        self.order = order
        self.cli = cli
        self.frame = frame

    def eval(self, node: cst.BaseExpression) -> Any:
        method = getattr(self, "_" + type(node).__name__, None)
        return UNKNOWN if method is None else method(node)

    def sub(self, node, scope: Scope, order: int | None, frame: Frame | None = None) -> Any:
        return self.f.evaluate(node, scope, order, cli=self.cli, frame=frame if frame is not None else self.frame)

    def const(self, node) -> Any:
        return constant(self.eval(node))

    def kind(self, node, scope: Scope | None = None, order: int | None = None) -> Binding | None:
        found = self.eval(node) if scope is None else self.sub(node, scope, order)
        return found if isinstance(found, Binding) else None

    # literals and displays ----------------------------------------------------------------
    def _Integer(self, node):
        return node.evaluated_value

    _Float = _Integer

    def _SimpleString(self, node):
        value = literal(node)
        return UNKNOWN if value is None else value

    _ConcatenatedString = _SimpleString

    def _seq(self, elements):
        """The elements' values (a starred constant spread), or UNKNOWN where a starred one is not constant."""
        out = []
        for element in elements:
            if isinstance(element, cst.StarredElement):
                inner = self.eval(element.value)
                if isinstance(inner, Pack):
                    out.extend(inner.items)
                elif isinstance(inner, (list, tuple)):
                    out.extend(inner)
                else:
                    return UNKNOWN
                continue
            out.append(self.eval(element.value))
        return out

    def _display(self, node, make):
        seq = self._seq(node.elements)
        if seq is UNKNOWN:
            return UNKNOWN
        if any(isinstance(v, Abstract) or v is UNKNOWN for v in seq):
            return Pack(tuple(seq)) if any(isinstance(v, Abstract) for v in seq) else UNKNOWN
        return make(seq)

    def _List(self, node):
        return self._display(node, list)

    def _Tuple(self, node):
        return self._display(node, tuple)

    def _Set(self, node):
        seq = self._seq(node.elements)
        return UNKNOWN if seq is UNKNOWN or any(isinstance(v, Abstract) or v is UNKNOWN for v in seq) else set(seq)

    def _Dict(self, node):
        out = {}
        for element in node.elements:
            if isinstance(element, cst.StarredDictElement):
                inner = self.const(element.value)
                if not isinstance(inner, dict):
                    return UNKNOWN
                out.update(inner)
                continue
            key = self.const(element.key)
            if key is UNKNOWN:
                return UNKNOWN
            out[key] = self.const(element.value)  # unknown values stay UNKNOWN per key
        return out

    def _UnaryOperation(self, node):
        value = self.const(node.expression)
        if value is UNKNOWN:
            return UNKNOWN
        op = type(node.operator)
        if op is cst.Minus:
            return -value
        if op is cst.Plus:
            return +value
        if op is cst.Not:
            return not value
        return UNKNOWN

    def _BinaryOperation(self, node):
        left = self.eval(node.left)
        if isinstance(left, Abstract):  # `ids + [pad_id] * (n - len(ids))`: what a library model says
            found = self.f.ask("operation", self, left, node.operator, node.right)
            return UNKNOWN if found is None else found
        if left is UNKNOWN:
            return UNKNOWN
        right = self.const(node.right)
        if right is UNKNOWN:
            return UNKNOWN
        op = type(node.operator)
        if op is cst.Multiply and isinstance(left, (list, tuple, str)) and isinstance(right, int) or isinstance(right, (list, tuple, str)) and isinstance(left, int) and op is cst.Multiply:
            size = (len(left) * right) if isinstance(right, int) else (len(right) * left)
            if size > MAX_SEQ:
                return UNKNOWN
        if op is cst.Power and isinstance(right, (int, float)) and abs(right) > 64:
            return UNKNOWN
        fn = _OPERATORS.get(op)
        if fn is None or isinstance(left, bool) or isinstance(right, bool):
            return UNKNOWN
        return fn(left, right)

    def _IfExp(self, node):
        test = self.const(node.test)
        if test is UNKNOWN:
            return UNKNOWN
        return self.eval(node.body if test else node.orelse)

    # comprehensions ----------------------------------------------------------------------
    def _ListComp(self, node):
        comp = node.for_in
        if comp.inner_for_in is not None or comp.ifs:
            return UNKNOWN
        if self.keeps(node.elt, comp.target):  # `[t.to(device) for t in batch]`: the batch, moved
            return self.eval(comp.iter)
        iterable = self.const(comp.iter)  # `[c for _ in range(n)]` with a constant element
        if not isinstance(iterable, (range, list, tuple)):
            return self.series(node)
        if isinstance(comp.target, cst.Name) and comp.target.value in names_in(node.elt):
            return self.series(node)
        element = self.sub(node.elt, self.f.scope_of(node.elt), None)
        if element is UNKNOWN or isinstance(element, Abstract):
            return UNKNOWN
        return [element] * len(iterable)

    def _GeneratorExp(self, node):
        comp = node.for_in
        if comp.inner_for_in is None and not comp.ifs and self.keeps(node.elt, comp.target):
            return self.eval(comp.iter)
        return self.series(node)

    def series(self, node: cst.ListComp | cst.GeneratorExp) -> Any:
        """`[tok(t, padding="max_length")["input_ids"] for t in texts]`: every element holds the same object."""
        element = self.sub(node.elt, self.f.scope_of(node.elt), None)
        return Series(element) if isinstance(element, Abstract) else UNKNOWN

    def _DictComp(self, node):
        """`{k: v.to(device) for k, v in batch.items()}`: the batch, moved."""
        comp = node.for_in
        target, items = comp.target, comp.iter
        if comp.inner_for_in is not None or comp.ifs or not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
            return UNKNOWN
        key, value = (e.value for e in target.elements)
        if not (isinstance(items, cst.Call) and isinstance(items.func, cst.Attribute) and items.func.attr.value == "items" and not items.args):
            return UNKNOWN
        if isinstance(key, cst.Name) and isinstance(node.key, cst.Name) and node.key.value == key.value and self.keeps(node.value, value):
            whole = self.eval(items.func.value)
            return whole if isinstance(whole, Abstract) else UNKNOWN
        return UNKNOWN

    def keeps(self, expr: cst.BaseExpression, target: cst.BaseExpression) -> bool:
        """`expr` is the comprehension's target itself, through methods that return their receiver's value."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and self.f.ask("keeps", expr.func.attr.value):
            expr = expr.func.value
        return isinstance(expr, cst.Name) and isinstance(target, cst.Name) and expr.value == target.value

    # names --------------------------------------------------------------------------------
    def _Name(self, node):
        return self.named(node.value)

    def named(self, name: str) -> Any:
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        owner, events = self.f.binding_events(name, self.scope, self.order)
        if owner is None:
            return UNKNOWN
        if not events and name in owner.params:
            return self.param(owner, name)
        folded = self._folded(name, owner, events)
        if folded is not UNKNOWN:
            return folded
        return self._object(owner, events or owner.events.get(name, []))

    def bound(self, event: Event, owner: Scope) -> Any:
        """What a binding event binds its name to: the value, the element of the unpacked value or of the iterable."""
        whole = self.sub(event.whole, owner, event.order)
        return self.f.unpacked(whole, event.path, event.op == "for")

    def _folded(self, name: str, owner: Scope, events: list[Event]) -> Any:
        """The constant of the last plain assignment with the mutations after it applied, when nothing is conditional
        and no method changes it in place."""
        if not events or any(e.conditional for e in events) or (id(owner), name) in self.f.mutated:
            return UNKNOWN
        if owner is not self.scope and len(events) > 1:
            return UNKNOWN  # read where a function runs: any of the bindings and changes may have run before the call
        start = max((i for i, e in enumerate(events) if e.op in ("assign", "for", "import", "def", "unpack", "param")), default=None)
        if start is None:
            return UNKNOWN
        first = events[start]
        if first.op != "assign" or first.whole is None:
            return UNKNOWN
        value = constant(self.bound(first, owner))
        for event in events[start + 1 :]:
            if value is UNKNOWN or event.loops != first.loops:
                return UNKNOWN
            arg = self.const_at(event.value, owner, event.order) if event.value is not None else UNKNOWN
            if arg is UNKNOWN:
                return UNKNOWN
            if event.op == "append" and isinstance(value, list):
                value = value + [arg]
            elif event.op in ("extend", "augadd") and isinstance(value, list) and isinstance(arg, (list, tuple)):
                value = value + list(arg)
            elif event.op == "augadd" and isinstance(value, (int, float, str)) and type(arg) is type(value):
                value = value + arg
            elif event.op == "augmul" and isinstance(value, (int, float)) and isinstance(arg, (int, float)):
                value = value * arg
            else:
                return UNKNOWN
            if isinstance(value, list) and len(value) > MAX_SEQ:
                return UNKNOWN
        if isinstance(value, (list, dict, set)) and self.f.shared_and_changed(name):
            return UNKNOWN  # `alias = cfg; alias["lr"] = ...`, `bump(cfg)` storing into its parameter
        return value

    def const_at(self, node, scope: Scope, order: int | None) -> Any:
        return constant(self.sub(node, scope, order))

    def _object(self, owner: Scope, events: list[Event]) -> Any:
        """The object every binding that may reach the read binds (objects keep what they are through mutation): the
        last binding, joined with those before it back to the last unconditional one when it sits in a branch, a
        `try`, or a loop (`if f: enc = a` / `else: enc = b`: the same object on every path, else UNKNOWN)."""
        reaching = []
        for i in reversed(range(len(events))):
            if events[i].op in _BINDS:
                reaching.append(i)
                if not events[i].conditional or self.runs_before_read(events[i], owner):
                    break
        # `enc = None` first (a sentinel): no object, and a read that uses the object fails on that path
        found = [self._changed(owner, events, i, self._bound_object(owner, events, i)) for i in reaching if not _binds_none(events[i])]
        return agree(found) if found else UNKNOWN

    def _changed(self, owner: Scope, events: list[Event], i: int, value: Any) -> Any:
        """The object `events[i]` binds after the `x += y` / `x.extend(y)` that follow it before the read, as a library
        model says (`ids += [pad_id] * k`: ids padded by hand); UNKNOWN where such a change may or may not run."""
        bind = events[i]
        for event in events[i + 1 :]:
            if event.op in _BINDS:
                break  # bound anew: what follows changes that object
            if event.op not in ("augadd", "extend") or not isinstance(value, Abstract) or event.value is None:
                continue
            at = Evaluator(self.f, owner, event.order, self.cli, self.frame)
            changed = self.f.ask("operation", at, value, cst.Add(), event.value)
            if changed is None:
                continue
            every_time = not event.conditional or self.runs_before_read(event, owner) or event.straight and bind.straight and event.loops == bind.loops
            value = changed if every_time else UNKNOWN
        return value

    def runs_before_read(self, event: Event, owner: Scope) -> bool:
        """`event` runs on every path to this read: the read sits later in the same iteration of the loop whose body
        runs `event` unbranched (`ids = tok.encode(t)` then `ids = ids + pad` in one loop body: the second binds)."""
        if owner is not self.scope or self.order is None or not event.straight or not event.loops:
            return False
        return event.order < self.order <= self.f.loop_end.get(id(event.loops[-1]), -1)

    def _bound_object(self, owner: Scope, events: list[Event], i: int) -> Any:
        """The object binding `events[i]` binds; a list built empty then only appended to is a `Series` of what every
        append adds."""
        event, after = events[i], events[i + 1 :]
        if event.op == "assign" and isinstance(event.whole, cst.List) and not event.whole.elements and not event.path:
            added = [e for e in after if e.op == "append"]
            if not added or len(added) != len(after):
                return UNKNOWN
            element = agree([self.sub(e.value, owner, e.order) for e in added])
            return Series(element) if isinstance(element, Abstract) else UNKNOWN
        if event.op in ("assign", "for") and event.whole is not None:
            found = self.bound(event, owner)
            return found if isinstance(found, Abstract) else UNKNOWN
        if event.op == "def" and isinstance(event.value, cst.ClassDef) and owner is self.f.module_scope and not event.conditional:
            cls = self.f.classes.get(event.value.name.value)
            return Instance("class", None, cls) if cls is not None and cls.node is event.value else UNKNOWN
        return UNKNOWN

    def param(self, owner: Scope, name: str) -> Any:
        """A parameter: the argument of the call being evaluated, else what every call site passes, else its default."""
        if frame_of(self.frame, owner) is None:
            given = self.f.ask("parameter", self, owner, name)  # a click command's parameter: click passes it
            if given is not None:
                return given
        sources = arguments(self.f, owner, name, self.frame)
        if sources is None:
            return UNKNOWN
        if not sources:  # never called here: a default counts like a command-line default (a caller elsewhere may pass another)
            default = owner.params[name].default
            return self.f.evaluate(default, owner.parent, defined_at(owner), cli=True) if default is not None and self.cli else UNKNOWN
        return agree([self.f.evaluate(expr, scope, order, cli=self.cli, frame=caller) for expr, scope, order, caller in sources])

    # attributes and items ---------------------------------------------------------------------
    def _Attribute(self, node):
        text = dotted(node)
        if text and text.startswith("self.") and text.count(".") == 1:
            return self.self_attribute(text)
        return self.attribute(node.value, self.scope, self.order, self.frame, node.attr.value, 0)

    def self_attribute(self, text: str) -> Any:
        """`self.x` in a method: what every assignment of it in the class gives (its methods' own `self.x = ...`)."""
        cls = enclosing_class(self.scope)
        mine = [(v, s, o) for v, s, o in self.f.self_attrs.get(text, ()) if cls is not None and enclosing_class(s) is cls]
        return agree([self.sub(value, owner, order, None) for value, owner, order in mine]) if mine else UNKNOWN

    def attribute(self, base: cst.BaseExpression, scope: Scope, order: int | None, frame: Frame | None, attr: str, depth: int) -> Any:
        """`base.attr`: what the object `base` holds says; a parameter receiving several is followed to each call site."""
        value = self.sub(base, scope, order, frame)
        if isinstance(value, Abstract):
            found = self.instance_attribute(value, attr)
            if found is None:
                found = self.f.ask("attribute", self, value, attr)
            if found is None:
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
        return agree([self.attribute(expr, where, at, caller, attr, depth + 1) for expr, where, at, caller in sources or ()])

    def instance_attribute(self, value: Abstract, attr: str) -> Any:
        """An attribute of the file's own class (`Config.lr`) or of an instance of it: the constructor's keyword of a
        dataclass, else what `__init__` alone assigns to `self.attr` for this construction, else the class-level value.
        None for what is no such instance; UNKNOWN for a class with bases, or an attribute set elsewhere too."""
        if not isinstance(value, Instance) or value.kind not in ("instance", "class"):
            return None
        cls = value.detail
        if value.kind == "class":
            return self.class_field(cls, attr)
        if any(base != "builtins.object" for base in cls.bases):
            return UNKNOWN
        construction = value.call
        dataclass_ = is_dataclass(cls)
        if dataclass_ and attr in construction.kwargs:
            return self.f.evaluate(construction.kwargs[attr].value, construction.scope, construction.order, cli=self.cli)
        init = cls.methods.get("__init__")
        assigned = [(v, s, o) for v, s, o in self.f.self_attrs.get(f"self.{attr}", ()) if enclosing_class(s) is cls.scope]
        if init is not None and not dataclass_:
            if not assigned or any(s.node is not init for _, s, _ in assigned) or len(assigned) != 1 or construction.has_star_args:
                return UNKNOWN
            expr, where, at = assigned[0]
            frame = self.f.frame_for(construction, init, True, self.frame)
            return self.f.evaluate(expr, where, at, cli=self.cli, frame=frame) if frame is not None else UNKNOWN
        if assigned or construction.positional:
            return UNKNOWN
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
        if len(node.slice) != 1:
            return UNKNOWN
        index = node.slice[0].slice
        base = self.eval(node.value)
        if base is UNKNOWN:
            return UNKNOWN
        if isinstance(index, cst.Index):
            key = self.const(index.value)
            found = self.f.item_of(base, key)
            stored = self.f.stored_items.get((dotted(node.value), key), ()) if isinstance(base, Abstract) else ()
            stored = [s for s in stored if self.order is None or s.order < self.order]
            if stored:  # `enc["input_ids"] = ...`: the item is what every store and the object agree on
                return agree([found, *(self.sub(s.value, s.scope, s.order) for s in stored)])
            return found
        if isinstance(index, cst.Slice):
            parts = [self.const(p) if p is not None else None for p in (index.lower, index.upper, index.step)]
            if any(p is UNKNOWN for p in parts):  # `texts[i : i + bs]`: some slice of an object, whichever
                return self.f.item_of(base, slice(None)) if isinstance(base, Abstract) and not isinstance(base, Pack) else UNKNOWN
            return self.f.item_of(base, slice(*parts))
        return UNKNOWN

    # calls ----------------------------------------------------------------------------------
    def _Call(self, node):
        call = self.f.call_of(node)
        if call is None:
            return UNKNOWN
        if call.qualname in _BUILTINS:
            return getattr(self, _BUILTINS[call.qualname])(call)
        found = self.f.ask("call", self, call)
        if found is not None:
            return found
        if call.qualname is None or call.qualname.startswith("<local>."):
            found = self.returned(call)  # a function of the file's own: a constant or an object
            if found is not UNKNOWN:
                return found
        if call.method is not None:
            receiver = self.sub(call.receiver, call.scope, call.order)
            if isinstance(receiver, Abstract):
                if self.f.ask("keeps", call.method, receiver):
                    return receiver
                found = self.f.ask("method", self, receiver, call)
                if found is not None:
                    return found
                if isinstance(receiver, Instance) and receiver.kind == "instance" and call.method in receiver.detail.methods:
                    return self.run(receiver.detail.methods[call.method], call, True)
            if call.method == "get" and isinstance(receiver, dict) and len(call.positional) in (1, 2) and not call.kwargs:
                key = self.const(call.positional[0].value)
                if key is UNKNOWN:
                    return UNKNOWN
                return receiver[key] if key in receiver else (self.const(call.positional[1].value) if len(call.positional) == 2 else None)
        if call.qualname is None and isinstance(call.node.func, (cst.Name, cst.Attribute)):
            called = self.eval(call.node.func)  # `tok(texts)`: an object called
            if isinstance(called, Abstract):
                found = self.f.ask("called", self, called, call)
                return UNKNOWN if found is None else found
        return UNKNOWN

    def returned(self, call: Call) -> Any:
        """What the file's own function, method or class that `call` runs returns for these arguments."""
        target = callee(self.f, call)
        if target is None:
            return UNKNOWN
        if isinstance(target, ClassDef):
            return Instance("instance", call, target)
        return self.run(target.fn, call, target.method, target.partial)

    def run(self, fn: cst.FunctionDef | cst.Lambda, call: Call, method: bool, partial: Call | None = None) -> Any:
        """What `fn` returns for `call`'s arguments, when every `return` agrees; once per call, to a bounded depth."""
        depth = self.frame.depth + 1 if self.frame is not None else 1
        if depth > MAX_DEPTH or call.has_star_args:
            return UNKNOWN
        frame = self.f.frame_for(call, fn, method, self.frame, partial)
        fn_scope = function_scope(self.f, fn)
        found = [self.f.evaluate(value, fn_scope, None, cli=self.cli, frame=frame) if value is not None else None for value in self.f.return_values(fn)]
        return agree(found) if found else UNKNOWN

    def _folded_builtin(self, call: Call) -> Any:
        if call.kwargs or call.has_star_args:
            return UNKNOWN
        args = [self.const(a.value) for a in call.positional]
        if any(a is UNKNOWN for a in args):
            return UNKNOWN
        if call.qualname == "builtins.range":
            result = range(*args)
            return result if len(result) <= MAX_SEQ else UNKNOWN
        return _FOLDED[call.qualname](*args)

    def _sequence_builtin(self, call: Call) -> Any:
        """`tuple(x)`, `list(x)`, `sorted(x)`: a constant folded; an object's elements kept (a mapping's keys are not)."""
        folded = self._folded_builtin(call)
        if folded is not UNKNOWN or len(call.positional) != 1 or call.kwargs or call.has_star_args:
            return folded
        value = self.eval(call.positional[0].value)
        if not isinstance(value, Abstract) or self.f.ask("mapping", value):
            return UNKNOWN
        return value if call.qualname != "builtins.sorted" else Series(self.f.elements_of(value))

    def _enumerate(self, call: Call) -> Any:
        if len(call.positional) != 1 or call.has_star_args:
            return UNKNOWN
        return Series(Pack((UNKNOWN, self.f.elements_of(self.eval(call.positional[0].value)))))

    def _zip(self, call: Call) -> Any:
        if not call.positional or call.has_star_args:
            return UNKNOWN
        return Series(Pack(tuple(self.f.elements_of(self.eval(a.value)) for a in call.positional)))

    def _map(self, call: Call) -> Any:
        """`map(lambda t: t.to(device), batch)`: each element mapped to itself."""
        if len(call.positional) != 2 or call.has_star_args or call.kwargs:
            return UNKNOWN
        fn, iterable = (a.value for a in call.positional)
        params = fn.params.params if isinstance(fn, cst.Lambda) else ()
        if len(params) != 1 or not self.keeps(fn.body, params[0].name):
            return UNKNOWN
        value = self.eval(iterable)
        return value if isinstance(value, Abstract) and not self.f.ask("mapping", value) else UNKNOWN

    def _dict(self, call: Call) -> Any:
        return UNKNOWN if call.positional or call.has_star_args else {k: self.const(a.value) for k, a in call.kwargs.items()}


def _binds_none(event: Event) -> bool:
    return event.op == "assign" and not event.path and isinstance(event.whole, cst.Name) and event.whole.value == "None"


# the events that bind a name anew (the others change the object it holds)
_BINDS = frozenset({"assign", "for", "import", "def"})
# methods of list, dict and set that change the object in place (append/extend are followed as events)
MUTATORS = frozenset({"insert", "pop", "remove", "clear", "update", "setdefault", "sort", "reverse", "popitem", "discard", "add", "__setitem__", "__delitem__"})
_OPERATORS = {
    cst.Add: lambda a, b: a + b,
    cst.Subtract: lambda a, b: a - b,
    cst.Multiply: lambda a, b: a * b,
    cst.Divide: lambda a, b: a / b,
    cst.FloorDivide: lambda a, b: a // b,
    cst.Modulo: lambda a, b: a % b if not isinstance(a, str) else UNKNOWN,
    cst.Power: lambda a, b: a**b,
}
_FOLDED = {f"builtins.{fn.__name__}": fn for fn in (int, float, str, round, len, min, max, abs, sum, bool, list, tuple, sorted, range)}
# the builtins the evaluator runs: folded on constants, or followed through objects
_BUILTINS = {
    **{name: "_folded_builtin" for name in _FOLDED},
    "builtins.list": "_sequence_builtin", "builtins.tuple": "_sequence_builtin", "builtins.sorted": "_sequence_builtin",
    "builtins.enumerate": "_enumerate", "builtins.zip": "_zip", "builtins.dict": "_dict", "builtins.map": "_map",
}
