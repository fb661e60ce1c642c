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

What this module knows is Python: names and the bindings that may reach a read (`reaching`: branches on constant
tests, loops that run, a loop's back edge; for a name of an outer scope, where the reading code may run: `runs`); targets of any shape (`for`, `with`, assignment and comprehension
targets, tuples, lists, starred, nested: an `Event`'s `path`); displays; comparisons and `and`/`or` on constants;
indexing and slicing; the file's own functions, methods and classes (their `return`s evaluated for each call's
arguments, a bounded depth), parameters (the call being evaluated, else what every call site passes, else the
default: `calls`), `self` attributes, lambdas, `functools.partial`; comprehensions and the builtins over iterables
(`iteration`); range/len and the other folded builtins. What a library call makes, what its objects' methods,
attributes, items and iteration give, is asked of the library models (`brain`), which `values.Values` hands in: this
module imports none of them.
"""

from __future__ import annotations

import functools
from typing import Any

import libcst as cst

from bertlint.facts import folding
from bertlint.facts.abstract import FAILURES, MAX_DEPTH, MAX_SEQ, Abstract, Binding, Frame, Function, Instance, Pack, Record, Series, agree, constant
from bertlint.facts.calls import CallFrames, Calls
from bertlint.facts.functions import Passed, ancestors, arguments, callee, enclosing_class, frame_of, function_scope, inherited, is_dataclass, returns_of
from bertlint.facts.items import Items, aliased, subscripted
from bertlint.facts.iteration import Iteration
from bertlint.facts.instances import self_attribute_sources
from bertlint.facts.model import Model, Runtime
from bertlint.facts.nodes import ENTER, UNKNOWN, Call, ClassDef, Event, Scope, dotted, literal, names_in, walk
from bertlint.facts.reaching import BINDS as _BINDS, Reaching
from bertlint.facts.runs import orders_in_force
from bertlint.facts.strings import formatted


class Evaluation(CallFrames, Model):
    """The semantic model of one file with the evaluator's memo. `brains` (the library models, set by `Values`) are
    modules answering the hooks `ask` names (listed in `brain/__init__.py`); each answers None for what is not its
    library's."""

    brains: tuple = ()

    def __init__(self, module: cst.Module, source: str, path=None, runtime: Runtime = Runtime()):
        super().__init__(module, source, path, runtime)
        self._memo: dict[tuple, Any] = {}
        self.assumed_attributes: dict[tuple, Any] = {}  # (`self.x`, class) -> the value its reads are taken to hold
        self.reaching = Reaching(self)

    def evaluate(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None, *, cli: bool = True, frame: Frame | None = None) -> Any:
        """The abstract value of `expr` read in `scope` at `order`: a constant, an `Abstract` value, or UNKNOWN."""
        if expr is None:
            return UNKNOWN
        return self._memoised((id(expr), order, cli, id(frame)), lambda: Evaluator(self, scope, order, cli, frame).eval(expr))

    def named_at(self, name: str, scope: Scope, order: int | None, cli: bool, frame: Frame | None) -> Any:
        """The value `name` holds read in `scope` at `order` (memoised like `evaluate`)."""
        return self._memoised((name, id(scope), order, cli, id(frame)), lambda: Evaluator(self, scope, order, cli, frame).named(name))

    def _memoised(self, key: tuple, find) -> Any:
        """`find()`'s value, once per key; a value read while it is being found (defined through itself, `x = x + 1`
        round a loop) is UNKNOWN there. (A checked fixed point, s22-iter, found more but cost rounds to the power of the
        loops' and calls' nesting on large files: 25 s for one transformers modeling file.)"""
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = UNKNOWN
        try:
            result = find()
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
    def plain_stores(self) -> dict[int, Any]:
        """The plain item stores `obj[key] = value` of the file, by their target."""
        return {id(s.target): s for s in self.stores if isinstance(s.target, cst.Subscript)}

    @functools.cached_property
    def _elements(self) -> dict[tuple[int, Any], cst.Subscript]:
        return {}

    def element_of(self, expr: cst.BaseExpression, key: Any) -> cst.Subscript:
        """The subscript `expr[key]` (a spread argument's element), one node per expression and key."""
        found = self._elements.get((id(expr), key))
        if found is None:
            index = cst.Integer(str(key)) if isinstance(key, int) else cst.SimpleString(repr(key))
            found = self._elements[(id(expr), key)] = cst.Subscript(expr, [cst.SubscriptElement(cst.Index(index))])
        return found

    def passed(self, site: Call, frame: Frame | None = None) -> Passed | None:
        """What the call `site` passes, its `*`/`**` arguments spread where known element by element (`Items.spread`),
        read in `frame` (the caller's: a binding of the site's arguments) without command-line defaults: which keys
        a mapping has and how long a sequence is must hold for every run."""
        return Evaluator(self, site.scope, site.order, False, frame).spread(site)

    @functools.cached_property
    def mutated(self) -> frozenset[tuple[int, str]]:
        """(scope, name) of every name a mutating method of a list, dict or set is called on (`cfg.update(...)`,
        `texts.insert(0, t)`): its constant is not folded."""
        followed = {id(e.value) for scope in self.scopes for events in scope.events.values() for e in events if e.op == "update"}
        found = set()
        for c in self.calls:  # `cfg["opt"].update(...)` changes `cfg`; `cfg.update(...)` as a statement is an event
            root = subscripted(c.receiver) if c.method in MUTATORS and id(c.node) not in followed else None
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
                name = parent[name] = parent.get(parent[name], parent[name])
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

    def shared_and_changed(self, name: str, owner: Scope | None = None) -> bool:
        """`name` may hold the object another name holds, and some name of them changes it in place (other than
        `name` itself in `owner` and its plain aliases there, whose events say how)."""
        found = self._sharing[1].get(self._sharing[0].get(name), ())
        own = {name, *self._aliases[0].get((id(owner), name), ())} if owner is not None else ()
        return any(owner is None or scope_id != id(owner) or changer not in own for scope_id, changer in found)

    @functools.cached_property
    def _aliases(self) -> tuple[dict[tuple[int, str], list[str]], dict[tuple[int, str], list[Event]]]:
        """The plain aliases of each name bound once in a scope's own body (`alias = cfg`, unconditional, after the
        one binding of `cfg`, and then only changing its items: stores, `update`, `append`, `extend`, all
        unconditional), and those changes: they change the object `cfg` holds."""
        names: dict[tuple[int, str], list[str]] = {}
        changes: dict[tuple[int, str], list[Event]] = {}
        for scope in self.scopes:
            for alias, events in scope.events.items():
                first, rest = events[0], events[1:]
                if first.op != "assign" or first.path or first.guards or not isinstance(first.whole, cst.Name) or alias in scope.params:
                    continue
                if (id(scope), alias) in self.mutated or any(e.op not in ("setitem", "update", "append", "extend") or e.guards for e in rest):
                    continue
                name = first.whole.value
                binds = [e for e in scope.events.get(name, ()) if e.op in _BINDS]
                if name == alias or name in scope.params or len(binds) != 1 or binds[0].op != "assign" or binds[0].guards or binds[0].order > first.order:
                    continue
                names.setdefault((id(scope), name), []).append(alias)
                changes.setdefault((id(scope), name), []).extend(rest)
        return names, changes

    def events_through_aliases(self, owner: Scope, name: str) -> list[Event]:
        """`name`'s events in `owner`, with the changes its plain aliases make to its object, in order."""
        own = owner.events.get(name, [])
        through = self._aliases[1].get((id(owner), name))
        return sorted([*own, *through], key=lambda e: e.order) if through else own

    def attribute_stored_through_another(self, name: str, attr: str) -> bool:
        """Some name that may hold `name`'s object stores its attribute `attr` (`alias = cfg; alias.lr = ...`)."""
        group = self._sharing[0].get(name)
        return group is not None and (group, attr) in self._sharing[2]

    def calls_back(self, call: Call) -> bool:
        return bool(self.ask("calls_back", Evaluator(self, call.scope, call.order, True, None), call))

    def wraps(self, decorator: str | None) -> bool:
        return bool(self.ask("wraps", decorator))

    def ask(self, hook: str, *args) -> Any:
        """The first library model's answer to `hook`, or None."""
        for brain in self.brains:
            answer = getattr(brain, hook, None)
            found = answer(*args) if answer is not None else None
            if found is not None:
                return found
        return None

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
        if isinstance(value, Series) and isinstance(key, int) and not isinstance(key, bool):
            return value.element  # a list every element of which holds it (an iterator has no items: the run fails)
        if isinstance(value, Record):
            return dict(value.items).get(key, UNKNOWN)
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
        if isinstance(value, (list, tuple, range, str, dict)) and value:
            return agree(list(value))
        if isinstance(value, Abstract):
            found = self.ask("iterate", self, value)
            return UNKNOWN if found is None else found
        return UNKNOWN

    def last_of(self, value: Any) -> Any:
        """The last element iterating `value` yields (a loop's target after the loop), else what every one holds."""
        if isinstance(value, Pack):
            return value.items[-1] if value.items else UNKNOWN
        if isinstance(value, (list, tuple, range, str, dict)):
            return list(value)[-1] if len(value) else UNKNOWN
        return self.elements_of(value)

    def entered(self, value: Any) -> Any:
        """What `with value as target` binds: `nullcontext(x)`'s x; an object a rule asks about is its own context (a
        `GradientTape`); anything else unknown (`__enter__` may return another object)."""
        if isinstance(value, Instance) and value.kind == "context":
            return value.detail
        return value if isinstance(value, Binding) else UNKNOWN

    def unpacked(self, value: Any, path: tuple, iterated: bool) -> Any:
        """The value a target at `path` binds when `value` is assigned (or, `iterated`, looped over)."""
        if iterated:
            value = self.elements_of(value)
        for step in path:
            if step is ENTER:
                value = self.entered(value)
                continue
            value = self.item_of(value, step)
            if isinstance(step, slice) and isinstance(value, tuple):
                value = list(value)  # a starred target always binds a list
        return value


# ---------------------------------------------------------------------------------------------
# the evaluator proper


class Evaluator(Iteration, Calls, Items):
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

    def _FormattedString(self, node):
        return formatted(node, self.const)

    def _seq(self, elements):
        """The elements' values (a starred constant spread), or UNKNOWN where a starred one is not constant."""
        out = []
        for element in elements:
            if isinstance(element, cst.StarredElement):
                inner = self.eval(element.value)
                if isinstance(inner, Pack):
                    out.extend(inner.items)
                elif isinstance(inner, (list, tuple)) or isinstance(inner, (set, dict)) and len(inner) <= 1:  # one element: no order
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
            if isinstance(element, cst.StarredDictElement):  # `{**defaults, **overrides}`: each key by key, objects too
                inner = self.mapping(element.value, self.scope, self.order)
                if inner is UNKNOWN:
                    return UNKNOWN
                out.update(inner)
                continue
            key = self.const(element.key)
            if key is UNKNOWN:
                return UNKNOWN
            out[key] = self.eval(element.value)  # unknown values stay UNKNOWN per key
        return Record(tuple(out.items())) if any(isinstance(v, Abstract) for v in out.values()) else out

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

    def _Comparison(self, node):
        """`len(x) == 1`, `mode in ("a", "b")`, `x is None`: on constants (`is` on None, True and False alone)."""
        left = self.const(node.left)
        for target in node.comparisons:
            right = self.const(target.comparator)
            if left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            op = type(target.operator)
            if op in (cst.Is, cst.IsNot):  # a constant other than None, True and False is none of them
                if not any(v is None or isinstance(v, bool) for v in (left, right)):
                    return UNKNOWN
                result = (left is right) == (op is cst.Is)
            elif op in _COMPARISONS:
                result = _COMPARISONS[op](left, right)
            else:
                return UNKNOWN
            if not result:
                return False
            left = right
        return True

    def _BooleanOperation(self, node):
        """`a and b`, `a or b`: the operand Python returns, when the left one's truth is known."""
        left = self.eval(node.left)
        if left is UNKNOWN or isinstance(left, Abstract):
            return UNKNOWN
        return left if bool(left) == isinstance(node.operator, cst.Or) else self.eval(node.right)

    def _IfExp(self, node):
        test = self.const(node.test)
        if test is UNKNOWN:
            return UNKNOWN
        return self.eval(node.body if test else node.orelse)

    # comprehensions ----------------------------------------------------------------------
    # names --------------------------------------------------------------------------------
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
        folded = self._folded(name, owner, straight, back, every)
        if folded is not UNKNOWN:
            return folded
        return self._object(name, owner, straight, back, every)

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
        elif any(e.op not in _BINDS for e in (*later, *back)):
            return UNKNOWN
        else:
            found = [self._constant_of(e, owner) for e in (*later, *back, *((first,) if first is not None else ()))]
            if first is None and name in owner.params:
                found.append(constant(self.param(owner, name)))
            value = agree(found)
        if isinstance(value, (list, dict, set)) and self.f.shared_and_changed(name, owner):
            return UNKNOWN  # `alias = cfg; alias["lr"] = ...`, `bump(cfg)` storing into its parameter
        return value

    def _constant_of(self, event: Event, owner: Scope) -> Any:
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
        if any(e.op in ("setitem", "update") for e in (*(e for e, _ in straight), *back)):  # a dict's items changed
            first = self._sure(straight)
            bound = self.bound(first, owner) if first is not None and first.op == "assign" else UNKNOWN
            if isinstance(bound, (dict, Record)) and not back and all(sure for _, sure in straight):
                return self._items_after(first, owner, [e for e, _ in reversed(straight[:-1])], bound)
            return UNKNOWN if isinstance(value, Record) else value
        return value

    def _items_after(self, first: Event, owner: Scope, later: list[Event], value: Any) -> Any:
        """The dict `first` binds with the items its scope stores and updates after it applied, every one of which
        surely ran before the read (in the same loop iteration); UNKNOWN for any other change."""
        for event in later:
            if event.loops != first.loops or value is UNKNOWN:
                return UNKNOWN
            value = self.item_changes(value, event, owner)
        return value

    def _extended(self, owner: Scope, events: list[Event], bind: Event, value: Any) -> Any:
        """The object `bind` binds after the `x += y` / `x.extend(y)` that follow it before the read, as a library
        model says (`ids += [pad_id] * k`: ids padded by hand); UNKNOWN where such a change may or may not run."""
        for event in events[events.index(bind) + 1 :]:
            if event.op in _BINDS or self.reads_in(owner) and self.order is not None and event.order >= self.order:
                break  # bound anew (what follows changes that object), or after the read
            if event.op not in ("augadd", "extend") or not isinstance(value, Abstract) or event.value is None:
                continue
            at = Evaluator(self.f, owner, event.order, self.cli, self.frame)
            changed = self.f.ask("operation", at, value, cst.Add(), event.value)
            if changed is None:
                continue
            every_time = not event.conditional or self.runs_before_read(event, owner) or _straight(event) and _straight(bind) and event.loops == bind.loops
            value = changed if every_time else UNKNOWN
        return value

    def runs_before_read(self, event: Event, owner: Scope) -> bool:
        """`event` runs on every path to this read: the read sits later in the same iteration of the loop whose body
        runs `event` unbranched (`ids = tok.encode(t)` then `ids += pad` in one loop body)."""
        if owner is not self.scope or self.order is None or not _straight(event) or not event.loops:
            return False
        return event.order < self.order <= self.f.loop_spans.get(id(event.loops[-1]), (0, -1))[1]

    def _bound_object(self, owner: Scope, events: list[Event], event: Event) -> Any:
        """The object binding `event` binds; a list built empty then only appended to is a `Series` of what every
        append adds."""
        after = []
        for later in events[events.index(event) + 1 :]:  # what changes it before the read (until it is bound anew)
            if later.op in _BINDS or self.reads_in(owner) and self.order is not None and later.order >= self.order:
                break
            after.append(later)
        if event.op == "assign" and isinstance(event.whole, cst.List) and not event.whole.elements and not event.path:
            added = [e for e in after if e.op == "append"]
            if not added or len(added) != len(after):
                return UNKNOWN
            element = agree([self.sub(e.value, owner, e.order) for e in added])
            return Series(element) if isinstance(element, Abstract) else UNKNOWN
        if event.op in ("assign", "for") and event.whole is not None:
            found = self.bound(event, owner)
            return found if isinstance(found, Abstract) else UNKNOWN
        if event.op == "def" and isinstance(event.value, cst.FunctionDef):
            return self.function_value(event.value, owner)
        if event.op == "def" and isinstance(event.value, cst.ClassDef) and not event.conditional:
            cls = self.f.classes.get(event.value.name.value)
            return Instance("class", None, cls) if cls is not None and cls.node is event.value else UNKNOWN
        return UNKNOWN

    def _Lambda(self, node):
        return self.function_value(node, self.scope)

    # attributes and items ---------------------------------------------------------------------
    def _Attribute(self, node):
        text = dotted(node)
        if text and text.startswith("self.") and text.count(".") == 1:
            return self.self_attribute(text)
        return self.attribute(node.value, self.scope, self.order, self.frame, node.attr.value, 0)

    def self_attribute(self, text: str) -> Any:
        """`self.x` in a method: what every binding of it by the classes whose code may run on `self` gives (their
        methods' `self.x = ...`, their bodies' `x = ...`: `instances`), when they agree."""
        cls = enclosing_class(self.scope)
        key = (text, id(cls))
        if key in self.f.assumed_attributes:
            return self.f.assumed_attributes[key]
        return self.f._memoised(("self", *key, self.cli), lambda: self._self_attribute(text, cls, key))

    def _self_attribute(self, text: str, cls: ClassDef | None, key: tuple) -> Any:
        attr = text.split(".", 1)[1]
        found = self_attribute_sources(self.f, cls, attr)
        if found is None or not any(found):
            return UNKNOWN
        getters = [agree([self.sub(v, function_scope(self.f, fn), None, None) if v is not None else None for v in self.f.return_values(fn)] or [UNKNOWN]) for fn in found.getters]
        assigned = [a for a in found.assigned if not _is_none(a[0])]
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
        for cycled in [k for k, v in self.f._memo.items() if k[0] in inside and v is UNKNOWN]:
            del self.f._memo[cycled]  # unknown only through the cycle the assumption breaks
        known = set(self.f._memo)
        self.f.assumed_attributes[key] = base
        try:
            found = agree([base] + [self.sub(value, owner, order, None) for value, owner, order in derived])
        finally:
            del self.f.assumed_attributes[key]
        if found is UNKNOWN:
            for stale in set(self.f._memo) - known:
                del self.f._memo[stale]
        return found

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
        if len(node.slice) != 1:
            return UNKNOWN
        index = node.slice[0].slice
        base = self.eval(node.value)
        if base is UNKNOWN or isinstance(base, Record) and self._changed(node.value):
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

    def _changed(self, expr) -> bool:
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
            return owner is None or (id(owner), root.value) in self.f.mutated or self.f.shared_and_changed(root.value, owner)
        name = dotted(root)
        stores = (s for s in (*self.f.stores, *self.f.touched) if isinstance(s.target, cst.Subscript))
        return name is None or self.f.shared_and_changed(name) or any(dotted(subscripted(s.target.value)) == name for s in stores)

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
                if isinstance(receiver, Instance) and receiver.kind == "instance":  # its class's method, or one it inherits
                    cls = receiver.detail
                    fn = cls.methods.get(call.method) or inherited(self.f, cls, call.method, ancestors(self.f, cls))
                    if fn is not None:
                        return self.run(fn, call, True)
            if isinstance(receiver, Record):
                receiver = UNKNOWN if self._changed(call.receiver) else dict(receiver.items)
            if call.method in ("keys", "values", "items") and isinstance(receiver, dict) and not call.node.args:
                return self.view(receiver, call.method)
            if isinstance(receiver, str) and not call.has_star_args:  # `"a\nb".splitlines()`, `line.strip()`
                return folding.str_method(receiver, call.method, [self.const(a.value) for a in call.positional], {k: self.const(a.value) for k, a in call.kwargs.items()})
            if call.method == "get" and isinstance(receiver, dict) and len(call.positional) in (1, 2) and not call.kwargs:
                key = self.const(call.positional[0].value)
                if key is UNKNOWN:
                    return UNKNOWN
                return receiver[key] if key in receiver else (self.const(call.positional[1].value) if len(call.positional) == 2 else None)
        if call.qualname is None or call.qualname.startswith("<local>.") and call.method is not None:
            called = self.eval(call.node.func)  # `tok(texts)`, `toks[0](texts)`, `Config.tok(texts)`: an object called
            if isinstance(called, Function):
                return self.call_value(called, call)
            if isinstance(called, Abstract):
                found = self.f.ask("called", self, called, call)
                return UNKNOWN if found is None else found
        return UNKNOWN

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



def _fresh(values: Evaluation, call: Call) -> bool:
    """`call` runs a function of the file every `return` of which is a dict display: it returns a new dict, that no
    name held before (`def f(p): return {"k": p}`)."""
    returned = returns_of(values, call)
    return bool(returned) and all(isinstance(value, cst.Dict) for value, _ in returned)


def _straight(event: Event) -> bool:
    """In its scope's own body and in no branch inside its innermost loop: every pass of that loop runs it."""
    return not event.guards or event.guards[-1].kind == "loop"


def _binds_none(event: Event) -> bool:
    return event.op == "assign" and not event.path and _is_none(event.whole)


def _is_none(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


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
_COMPARISONS = {
    cst.Equal: lambda a, b: a == b,
    cst.NotEqual: lambda a, b: a != b,
    cst.LessThan: lambda a, b: a < b,
    cst.LessThanEqual: lambda a, b: a <= b,
    cst.GreaterThan: lambda a, b: a > b,
    cst.GreaterThanEqual: lambda a, b: a >= b,
    cst.In: lambda a, b: a in b,
    cst.NotIn: lambda a, b: a not in b,
}
_FOLDED = {f"builtins.{fn.__name__}": fn for fn in (int, float, str, round, len, min, max, abs, sum, bool, list, tuple, sorted, range)}
# the builtins the evaluator runs: folded on constants, or followed through objects
_BUILTINS = {
    **{name: "_folded_builtin" for name in _FOLDED},
    "builtins.list": "_sequence_builtin", "builtins.tuple": "_sequence_builtin", "builtins.sorted": "_sequence_builtin",
    "builtins.enumerate": "_enumerate", "builtins.zip": "_zip", "builtins.dict": "_dict", "builtins.map": "_map",
    "builtins.iter": "_iter", "builtins.next": "_next", "contextlib.nullcontext": "_nullcontext", "functools.partial": "partial_value", "builtins.isinstance": "_isinstance",
}
