"""The file's own functions: which definition a call runs, how its arguments bind to the parameters, what each
call site passes for a parameter, what a function handed along (a collate or `map` function) returns.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import libcst as cst

from bertlint.facts.abstract import UNKNOWN, Binding, Frame, Instance
from bertlint.facts.model import Model, per_file
from bertlint.facts.nodes import Call, ClassDef, Event, Scope, dotted, walk
from bertlint.facts.runs import orders_in_force

# what a call passes (`Items.spread`): its positional expressions up to the first `*args` not known element by element,
# its keyword expressions, whether some `*args` or `**kwargs` hides more, and where the one hidden thing is a
# `**mapping` of unknown keys (every positional known), the item `mapping["p"]` for a name `p`: a parameter nothing
# else can fill (no default, not positional-only, given by no other argument) is that item, or the call is a TypeError
Passed = tuple[list[cst.BaseExpression], dict[str, cst.BaseExpression], bool, "Callable[[str], cst.BaseExpression] | None"]

def is_dataclass(cls: ClassDef) -> bool:
    return any(dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) in ("dataclass", "dataclasses.dataclass") for d in cls.node.decorators)


def enclosing_class(scope: Scope | None) -> Scope | None:
    while scope is not None and scope.kind != "class":
        scope = scope.parent
    return scope


def in_class_or_lambda(scope: Scope | None) -> bool:
    """Is `scope` a class body or a lambda, or inside one (a method, a function nested in either)?"""
    while scope is not None:
        if scope.kind == "class" or isinstance(scope.node, cst.Lambda):
            return True
        scope = scope.parent
    return False


class Target(NamedTuple):
    """The function a call runs: its definition (a def or a lambda), its scope, whether it is a method (its first
    parameter is the receiver), and the `functools.partial` call whose arguments come first."""

    fn: cst.FunctionDef | cst.Lambda
    scope: Scope
    method: bool
    partial: Call | None = None


def callee(values: Model, call: Call, frame: Frame | None = None) -> Target | ClassDef | None:
    """The function a call runs: the definition in force at the call for a plain name (a def, a lambda, a
    `functools.partial` of a def; for a name of an outer scope bound more than once, the one in force at every point
    the calling code may run from, for the call `frame` evaluates), the enclosing class's method for
    `self.name(...)`; the class itself for a class of the file."""
    func = call.node.func
    if isinstance(func, (cst.Lambda, cst.Call)):  # `(lambda p: p)(x)`, `functools.partial(fn, k=2)(x)`
        return _assigned_callable(values, func)
    if isinstance(func, cst.Name):
        last = _binding_in_force(values, func.value, call, frame)
        if last is None:
            return None
        if last.op == "assign" and last.index is None and not last.path:
            return _assigned_callable(values, last.value)
        if last.op != "def":
            return None
        if isinstance(last.value, cst.ClassDef):  # the file's class of that name, wherever its `class` statement is
            cls = values.classes.get(func.value)
            return cls if cls is not None and cls.node is last.value else None
        if not isinstance(last.value, cst.FunctionDef):
            return None
        return Target(last.value, function_scope(values, last.value), False)
    if call.method is not None and dotted(call.receiver) == "self":
        scope = enclosing_class(call.scope)
        cls = values.classes.get(scope.name) if scope is not None else None
        if cls is None or cls.scope is not scope:
            return None
        fn = cls.methods.get(call.method) or inherited(values, cls, call.method)
        if fn is None or overridden(values, cls, call.method):
            return None  # `self` may be an instance of a subclass with its own method
        return Target(fn, function_scope(values, fn), True)
    return None


def family(values: Model, cls: ClassDef) -> list[ClassDef]:
    """The file's classes whose code may run on an instance that runs `cls`'s: every ancestor of `cls` and of each
    of its subclasses in the file (them included)."""
    mine = f"<local>.{cls.name}"
    names = {name for c in values.classes.values() if mine in values.class_bases(f"<local>.{c.name}") for name in _local_ancestors(values, c)}
    return [c for name, c in values.classes.items() if name in names]


def ancestors(values: Model, cls: ClassDef) -> list[ClassDef]:
    """`cls` and the file's classes it derives from."""
    names = _local_ancestors(values, cls)
    return [c for name, c in values.classes.items() if name in names]


def _local_ancestors(values: Model, cls: ClassDef) -> set[str]:
    """The names of `cls` and of the file's module-level classes it derives from."""
    return {q.split(".", 1)[1] for q in values.class_bases(f"<local>.{cls.name}") if q.startswith("<local>.") and q.count(".") == 1}


def inherited(values: Model, cls: ClassDef, method: str, classes: list[ClassDef] | None = None) -> cst.FunctionDef | None:
    """The method `self.method(...)` runs in a method of `cls` that does not define it: the one definition among
    the classes of its family (`classes`: of an instance of `cls` itself, its ancestors), in an ancestor of `cls`,
    when no library class may come before it in the order Python looks methods up in (every class of the family
    but that ancestor and its own ancestors derives only from the file's classes)."""
    classes = family(values, cls) if classes is None else classes
    defining = [c for c in classes if method in c.methods]
    if len(defining) != 1 or f"<local>.{defining[0].name}" not in values.class_bases(f"<local>.{cls.name}"):
        return None
    above = values.class_bases(f"<local>.{defining[0].name}")
    before = [c for c in classes if f"<local>.{c.name}" not in above]
    if any(not (b.startswith("<local>.") or b == "builtins.object") for c in before for b in c.bases):
        return None
    return defining[0].methods[method]


def _binding_in_force(values: Model, name: str, call: Call, frame: Frame | None) -> Event | None:
    """The one binding (def, assignment, import) of `name` in force where `call` runs, or None: an unconditional one,
    or one earlier in every region (branch, loop body, `try`) the call sits in, which ran whenever the call runs
    (a `class` statement in a loop's body, its class called later in the same pass)."""
    owner, events = values.binding_events(name, call.scope, call.order)
    if owner is None:
        return None
    binds = [e for e in (events or owner.events.get(name, [])) if e.op in ("def", "assign", "import")]
    if owner is not call.scope and len(owner.events.get(name, [])) > 1:  # which one depends on when the calling code runs
        found = {_last_before(owner.events[name], order) for order in orders_in_force(values, name, call.scope, owner, frame) or ()}
        return found.pop() if len(found) == 1 else None
    if not binds:
        return None
    last = binds[-1]
    ran = owner is call.scope and last.order < call.order and all(g.start < call.order <= g.end for g in last.guards)
    return last if not last.conditional or ran else None


def _last_before(events: list[Event], order: int) -> Event | None:
    binds = [e for e in events if e.order < order and e.op in ("def", "assign", "import")]
    return binds[-1] if binds and not binds[-1].conditional else None


def overridden(values: Model, cls: ClassDef, method: str) -> bool:
    """A class of the file derived from `cls` defines `method` again."""
    return any(method in other.methods and f"<local>.{cls.name}" in values.class_bases(f"<local>.{other.name}") for other in values.classes.values() if other is not cls)


def _assigned_callable(values: Model, value: cst.CSTNode | None) -> Target | None:
    """`lambda x: ...`, `functools.partial(fn, k=2)` (assigned to a name, or called at once): the function it runs."""
    if isinstance(value, cst.Lambda):
        return Target(value, function_scope(values, value), False)
    made = values.call_of(value) if isinstance(value, cst.Call) else None
    if made is None or made.qualname != "functools.partial" or not made.positional or made.has_star_args or not isinstance(made.positional[0].value, cst.Name):
        return None
    owner, events = values.binding_events(made.positional[0].value.value, made.scope, made.order)
    events = [e for e in events if e.op in ("def", "assign", "import")]
    if not events or events[-1].op != "def" or events[-1].conditional or not isinstance(events[-1].value, cst.FunctionDef):
        return None
    fn = events[-1].value
    return Target(fn, function_scope(values, fn), False, made)


def forwards_kwargs(values: Model, fn: cst.FunctionDef, keyword: str) -> bool:
    """`def __init__(self, *args, weights=None, **kwargs): ...; super().__init__(*args, **kwargs)`: a `keyword=` the
    signature does not name reaches the parent's `__init__`, the `**kwargs` used nowhere else (a `.pop` is doubt)."""
    star = fn.params.star_kwarg
    names = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    if not isinstance(star, cst.Param) or keyword in names:
        return False
    forwarded = [
        arg for call in values.calls_in(fn.body)
        if call.method == "__init__" and isinstance(call.receiver, cst.Call) and dotted(call.receiver.func) == "super"
        for arg in call.node.args if arg.star == "**" and isinstance(arg.value, cst.Name) and arg.value.value == star.name.value
    ]  # fmt: skip
    return len(forwarded) == 1 == len(values.reads_in(fn.body, star.name.value))


def function_scope(values: Model, fn: cst.FunctionDef | cst.Lambda) -> Scope:
    if isinstance(fn, cst.Lambda):
        return values.scope_of(fn)
    return next(scope for node, scope in values.functions[fn.name.value] if node is fn)


def bind(call: Call, fn: cst.FunctionDef | cst.Lambda, method: bool, caller: Frame | None, passed: Callable[[Call], Passed | None], partials: tuple[Call, ...] = (), closure: Frame | None = None, closed: bool = False, reader=None) -> Frame | None:
    """Bind `call`'s arguments (after those of the `functools.partial` calls that wrap `fn`, innermost first) to
    `fn`'s parameters, each call's arguments as `passed` spreads them (`Items.spread`: a `*sequence` or `**mapping`
    known element by element passes its elements); None when they cannot be matched (a TypeError). What another
    `*args` or `**kwargs` passes is not known."""
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if method:
        params = params[1:]
    names = [p.name.value for p in params] + [p.name.value for p in fn.params.kwonly_params]
    given: list[tuple[cst.BaseExpression, Call]] = []
    keywords: dict[str, tuple[cst.BaseExpression, Call]] = {}
    hidden = False
    for site in (*partials, call):
        found = passed(site)
        if found is None:
            return None
        positional, named, opaque, item = found
        given.extend((expr, site) for expr in (positional[1:] if site is not call else positional))
        keywords.update((k, (expr, site)) for k, expr in named.items())
        item = item if not hidden else None  # a partial's own hidden arguments: unknown
        hidden = hidden or opaque
    args: dict[str, tuple | None] = {}
    for param, (expr, site) in zip(params, given):
        args[param.name.value] = (expr, site.scope, site.order)
    if len(given) > len(params) and not isinstance(fn.params.star_arg, cst.Param):
        return None
    for keyword, (expr, site) in keywords.items():
        if keyword not in names and not isinstance(fn.params.star_kwarg, cst.Param) or keyword in args:
            return None  # no such parameter, or one given by position too: a TypeError
        args[keyword] = (expr, site.scope, site.order)
    if hidden:
        fixed = {p.name.value for p, _ in zip(params, given)} | {k for k, (_, site) in keywords.items() if site is call}
        fillable = unfilled(fn, method, fixed | set(keywords)) if item is not None else set()
        for name in names:  # `train(model, **kw)`: what `*args` or `**kwargs` may pass (a partial's keyword too) is not known
            if name in fillable:
                args[name] = (item(name), call.scope, call.order)  # `train(**batch)`: `batch["input_ids"]`, else a TypeError
            elif name not in fixed:
                args[name] = None
    return Frame(fn, args, caller, (caller.depth if caller is not None else 0) + 1, call, closure, closed, reader)


def method_sites(values: Model, class_name: str, fn: cst.FunctionDef) -> list[Call] | None:
    """The calls that may run a method of a class of the file (or of a subclass of it in the file, the family): the
    family's constructions for `__init__`; `obj.method(...)` and, for `forward`, `obj(...)`, where `obj` holds an
    instance of the family (the file's own torch module, or any class); `self.method(...)` and `super().method(...)`
    in the family's methods (for a method other than `__init__` and `forward`, only when no library class is a base
    that may call it too; a class's own `super().method(...)` runs an ancestor's), and for `forward` `self(...)` there
    (a torch module's `__call__` runs it: the only way a library reaches it, `run_unseen` says where one may). None
    when a call passes the receiver itself (`Base.method(self, ...)`)."""
    family = _family_names(values, class_name)
    constructors = {f"<local>.{n}" for n in family}

    def instance(expr: cst.BaseExpression | None, call: Call) -> bool:
        return _instance_of(values, family, expr, call)

    method = fn.name.value
    named = values.calls_by_short.get(method, ())
    if any(c.method == method and dotted(c.receiver) in family for c in named):
        return None
    if method == "__init__":  # `ReviewDataset(texts, labels)`: the constructions of the classes it initialises
        sites = [c for c in values.calls if c.qualname in {f"<local>.{n}" for n in family if _may_initialise(values, n, class_name, fn)}]
    else:
        sites = [c for c in named if c.method == method and instance(c.receiver, c)]
        if method == "forward":
            sites += [c for c in values.calls if c.qualname is None and c.method != "forward" and instance(c.node.func, c)]
    own = own_class(values, class_name)
    if method in ("__init__", "forward") or own:  # a library reaches `forward` only through `__call__`, whose calls are listed
        sites += [c for c in named if c.method == method and _on_self(c) and _in_family(c, family) and not (_on_super(c) and enclosing_class(c.scope).name == class_name)]
    if method == "forward":  # `self(...)` in the family's methods: the module's `__call__` runs `forward`
        sites += [c for c in values.calls if c.qualname is None and c.method is None and dotted(c.node.func) == "self" and _in_family(c, family)]
    return sorted(sites, key=lambda c: c.order)


def own_class(values: Model, class_name: str) -> bool:
    """No library class is a base of the class `class_name` of the file, nor of its family."""
    return all(base.startswith("<local>.") or base == "builtins.object" for n in _family_names(values, class_name) for base in values.class_bases(f"<local>.{n}"))


def _family_names(values: Model, class_name: str) -> set[str]:
    return {class_name} | {c.name for c in values.local_subclasses(lambda base: base == f"<local>.{class_name}")}


def _instance_of(values: Model, family: set[str], expr: cst.BaseExpression | None, call: Call) -> bool:
    """`expr`, read at `call`, holds an instance of a class of `family` (the file's own torch module, or any class)."""
    found = values.evaluate(expr, call.scope, call.order) if expr is not None else UNKNOWN
    if isinstance(found, Instance):
        return found.kind == "instance" and found.detail.name in family
    return isinstance(found, Binding) and found.kind == "module" and found.call is not None and found.call.qualname in {f"<local>.{n}" for n in family}


def run_unseen(values: Model, class_name: str) -> bool:
    """Code the file does not show may run the class `class_name` of the file (or its family): the file builds none
    (an importer does), or an instance is an argument of a call that is not the file's own (a library's, builtins and
    the `leaves_alone` ones aside: `Trainer(model=m)`, `nn.DataParallel(m)`, `summary(m, ...)`), or `self` is, in a
    method of the family: the library may call its `forward` with what the file does not show. Found once per class
    (taken as run unseen while it is being found: an argument whose value asks it again)."""
    known = _run_unseen(values)
    if class_name not in known:
        known[class_name] = True
        known[class_name] = _unseen_runs(values, _family_names(values, class_name))
    return known[class_name]


@per_file
def _run_unseen(values: Model) -> dict[str, bool]:
    return {}


def _unseen_runs(values: Model, family: set[str]) -> bool:
    constructors = {f"<local>.{n}" for n in family}
    if not any(c.qualname in constructors for c in values.calls):
        return True  # built where the file does not show (a module an importer builds and calls)
    for call in values.calls:
        if call.qualname is not None and call.qualname.startswith("builtins.") or values.leaves_alone(call):
            continue
        if _in_family(call, family):  # in its own methods only `self` is the instance (their other values may be
            if any(dotted(a.value) == "self" for a in call.node.args) and not _runs_own_code(values, call):
                return True  # what `forward` is given: evaluating them here would ask this again)
            continue
        handed = [
            a.value for a in call.node.args
            if isinstance(a.value, (cst.Name, cst.Attribute, cst.Subscript)) or isinstance(a.value, cst.Call) and (made := values.call_of(a.value)) is not None and made.qualname in constructors
        ]  # fmt: skip
        if any(_instance_of(values, family, v, call) for v in handed) and not _runs_own_code(values, call):
            return True
    return False


def _runs_own_code(values: Model, call: Call) -> bool:
    """`call` runs a function, method or class of the file (its arguments go where the file shows)."""
    if callee(values, call) is not None:
        return True
    receiver = values.evaluate(call.receiver, call.scope, call.order) if call.method is not None and call.receiver is not None else UNKNOWN
    return isinstance(receiver, Instance) and receiver.kind == "instance" and call.method in receiver.detail.methods


def _in_family(call: Call, family: set[str]) -> bool:
    """`call` is in a method (or a function nested in one) of a class of `family`."""
    cls = enclosing_class(call.scope)
    return cls is not None and cls.name in family


def _may_initialise(values: Model, name: str, owner: str, init: cst.FunctionDef) -> bool:
    """A construction of the class `name` (of the family of `owner`, whose `__init__` is `init`) may run `init` itself:
    the `__init__` Python finds for it is `init`, or may be (not told apart, and `owner` is among its ancestors). A
    subclass with an `__init__` of its own runs `init` only through `super().__init__(...)`, a site of its own."""
    cls = values.classes.get(name)
    if cls is None:
        return True
    found = cls.methods.get("__init__") or inherited(values, cls, "__init__", ancestors(values, cls))
    return found is init or found is None and owner in _local_ancestors(values, cls)


@per_file
def _classes_used_outside(values: Model) -> frozenset[str]:
    """The file's own classes it names somewhere outside their own body: builds them, or hands them on
    (`LightningCLI(Model)`, `fire.Fire(Model)`), so that their constructors' defaults are what a run of this file may get."""
    used = set()
    for name, cls in values.classes.items():
        skip, inside = set(), 0
        for node in walk(cls.node):  # counted as `name_counts` counts: no `x.name` attribute
            if isinstance(node, cst.Attribute):
                skip.add(id(node.attr))
            elif isinstance(node, cst.Name) and node.value == cls.name and id(node) not in skip:
                inside += 1
        if values.name_counts.get(cls.name, 0) > inside:
            used.add(name)
    return frozenset(used)


def _on_super(call: Call) -> bool:
    """`super().method(...)`: in a class's own method it runs an ancestor's, never that class's."""
    return isinstance(call.receiver, cst.Call) and dotted(call.receiver.func) == "super"


def _on_self(call: Call) -> bool:
    """`self.method(...)` or `super().method(...)`."""
    receiver = call.receiver
    return dotted(receiver) == "self" or isinstance(receiver, cst.Call) and dotted(receiver.func) == "super"


def returns_of(values: Model, call: Call) -> list[tuple[cst.BaseExpression, Scope]] | None:
    target = callee(values, call)
    if target is None or isinstance(target, ClassDef):
        return None
    returned = values.return_values(target.fn)
    return None if any(r is None for r in returned) else [(r, target.scope) for r in returned]


def unfilled(fn: cst.FunctionDef | cst.Lambda, method: bool, given: set[str], positional: int = 0) -> set[str]:
    """The parameters of `fn` that only a `**mapping` can fill: no default, not positional-only, not `*args` or
    `**kwargs`, neither among the first `positional` (after `self` of a method) nor among the names `given`."""
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if method:
        params = params[1:]
    posonly = {p.name.value for p in fn.params.posonly_params}
    by_position = {p.name.value for p in params[:positional]}
    return {
        p.name.value for p in (*params, *fn.params.kwonly_params)
        if p.default is None and p.name.value not in posonly | by_position | given
    }


def param_arguments(values: Model, owner: Scope, name: str) -> list[tuple[cst.BaseExpression, Scope, int | None]] | None:
    """(expression, scope, order) each call site of a plain function (or of a method of the file's own torch module:
    `model(ids)` for its `forward`) passes for a parameter, the default where a site omits it; [] when the file never
    calls it, None when a site is opaque (`*args`, no value)."""
    fn = owner.node
    if not isinstance(fn, cst.FunctionDef) or owner.parent is None:
        return None
    param = owner.params[name]
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if owner.parent.kind == "class":
        cls = values.classes.get(owner.parent.name)
        if fn.decorators or not params or param is params[0] or cls is None or cls.scope is not owner.parent:
            return None  # a class the file's name for it does not single out: its constructions cannot be told apart
        params = params[1:]
        sites = method_sites(values, owner.parent.name, fn)
        if fn.name.value == "forward" and not own_class(values, owner.parent.name) and run_unseen(values, owner.parent.name):
            return None  # the module built by an importer, or handed to a library, which may call it (a `Trainer`, `nn.DataParallel`)
        if sites is None or not sites and fn.name.value != "__init__":
            return None  # an object's method may be called where the file does not show it (a Trainer calls `forward`)
        if not sites and owner.parent.name not in _classes_used_outside(values):
            return None  # a class the file defines and never names again (a model module): whoever builds it elsewhere passes what it passes
    else:
        sites = [s for s in values.calls_by_short.get(fn.name.value, ()) if s.method is None and isinstance(s.node.func, cst.Name)]
    position = next((i for i, p in enumerate(params) if p is param), None)
    out = []
    for site in sites:
        arg = site.kwargs.get(name)
        if arg is None and position is not None:
            arg = site.arg(position)
        expr = arg.value if arg is not None else None
        if expr is None and site.has_star_args:  # `*args` or `**kwargs` may pass it, unless known element by element
            found = values.passed(site)
            if found is None:
                return None
            positional, keywords, hidden, item = found
            expr = keywords.get(name, positional[position] if position is not None and position < len(positional) else None)
            if expr is None and item is not None and name in unfilled(fn, owner.parent.kind == "class", set(keywords), len(positional)):
                expr = item(name)  # `train(**batch)`: `batch["input_ids"]`, else a TypeError
            if expr is None and hidden:
                return None
        if expr is not None:
            out.append((expr, site.scope, site.order))
        elif param.default is not None:
            out.append((param.default, owner.parent, defined_at(owner)))
        else:
            return None
    if owner.parent.kind != "class":
        for made in _partials_of(values, fn):
            if made is None:
                return None  # a partial object the file calls itself, with arguments that may bind this one again
            arg = made.kwargs.get(name) or (made.arg(position + 1) if position is not None else None)
            if arg is None or made.has_star_args:
                return None  # what the code handed the partial passes (or `*args`)
            out.append((arg.value, made.scope, made.order))
    return out


def _partials_of(values: Model, fn: cst.FunctionDef) -> list[Call | None]:
    """The `functools.partial(fn, ...)` calls of the file, each handed to a library call as it is, directly or through
    a name bound to it (`collate_fn=functools.partial(collate, tok=tok)`); None for one that may be called otherwise
    (by the file, with arguments that may bind a parameter again)."""
    found: list[Call | None] = []
    for made in values.calls_by_short.get("partial", ()):
        if made.qualname != "functools.partial" or not made.positional or not hands(values, made.positional[0].value, made, fn):
            continue
        body = made.stmt.body if isinstance(made.stmt, cst.SimpleStatementLine) else ()
        assign = body[0] if len(body) == 1 and isinstance(body[0], cst.Assign) and body[0].value is made.node and len(body[0].targets) == 1 else None
        if _handed_to_library(values, made.node):
            found.append(made)
        elif assign is not None and isinstance(assign.targets[0].target, cst.Name):
            loads = values.name_loads.get(assign.targets[0].target.value, ())
            found.append(made if all(_handed_to_library(values, node) for node, *_ in loads) else None)
        else:
            found.append(None)
    return found


def _handed_to_library(values: Model, node: cst.BaseExpression) -> bool:
    """`node` is an argument, as it is, of a call of a library's (no function of the file's), or of the construction
    of a class of the file whose constructor is a library class's (`class MyTrainer(Trainer)` defining no
    `__init__` or `__new__`, nor any class of the file it derives from)."""
    arg = values.parent(node)
    call = values.parent(arg) if isinstance(arg, cst.Arg) and arg.value is node else None
    made = values.call_of(call) if isinstance(call, cst.Call) else None
    if made is None or made.qualname is None:
        return False
    return not made.qualname.startswith("<local>.") or _library_constructor(values, made.qualname)


def _library_constructor(values: Model, qualname: str) -> bool:
    """The class of the file `qualname` names is constructed by a library class's `__init__`: neither it nor any
    class of the file it derives from defines `__init__` or `__new__`, every base of theirs resolves, and one is a
    library's."""
    cls = values.classes.get(qualname.split(".", 1)[1]) if qualname.count(".") == 1 else None
    if cls is None:
        return False
    family = ancestors(values, cls)
    if any("__init__" in c.methods or "__new__" in c.methods or len(c.bases) != len(c.node.bases) for c in family):
        return False
    return any(not b.startswith("<local>.") and b != "builtins.object" for b in values.class_bases(qualname))


def defined_at(owner: Scope) -> int | None:
    """Where the `def` of the function `owner` is the scope of runs: its defaults are evaluated there."""
    fn = owner.node
    if not isinstance(fn, cst.FunctionDef) or owner.parent is None:
        return None
    return next((e.order for e in owner.parent.events.get(fn.name.value, ()) if e.value is fn), None)


def frame_of(frame: Frame | None, owner: Scope) -> Frame | None:
    """The frame among `frame` and its callers that evaluates the function `owner` is the scope of."""
    while frame is not None and frame.function is not owner.node:
        frame = frame.closure if frame.closed else frame.caller  # a function called as a value: the frame that made it
    return frame


def arguments(values: Model, owner: Scope, name: str, frame: Frame | None) -> list[tuple[cst.BaseExpression, Scope, int | None, Frame | None, Model]] | None:
    """(expression, scope, order, its frame, the evaluation whose code it is) a parameter receives: the argument (or
    default) of the call being evaluated (an importer's argument for a function of a project module it calls), else
    what each call site passes; [] when the file never calls it, None when that cannot be seen."""
    frame = frame_of(frame, owner)
    if frame is not None:
        if name in frame.args:
            return [(*frame.args[name], frame.caller, frame.reader if frame.reader is not None else values)] if frame.args[name] is not None else None
        default = owner.params[name].default
        return [(default, owner.parent, defined_at(owner), frame.caller if frame.reader is None else None, values)] if default is not None else None
    sources = param_arguments(values, owner, name)
    return None if sources is None else [(expr, scope, order, None, values) for expr, scope, order in sources]


def callable_returns(values: Model, fn_expr: cst.BaseExpression, at: Call) -> list[tuple[cst.BaseExpression, Scope, Frame | None]] | None:
    """(returned expression, its scope, the frame binding `partial`'s arguments) for each `return` of a function the
    file passes along (a collate function, a `map` function): a def, a lambda, `functools.partial(fn, ...)`, or an
    instance of a class of the file with `__call__`."""
    if isinstance(fn_expr, cst.Lambda):
        return [(fn_expr.body, values.scope_of(fn_expr.body), None)]
    call = values.call_of(fn_expr) if isinstance(fn_expr, cst.Call) else None
    partial = None
    if call is not None and call.qualname == "functools.partial" and call.positional and not call.has_star_args:
        partial, fn_expr = call, call.positional[0].value
    elif call is not None and call.qualname and call.qualname.startswith("<local>.") and call.qualname.count(".") == 1:
        cls = values.classes.get(call.qualname.split(".", 1)[1])
        method = cls.methods.get("__call__") if cls is not None else None
        return [(r, function_scope(values, method), None) for r in values.return_values(method) if r is not None] if method is not None else None
    if not isinstance(fn_expr, cst.Name):
        return None
    owner, events = values.binding_events(fn_expr.value, at.scope, at.order)
    defs = [e for e in events if e.op in ("def", "assign", "import")]
    if not defs or defs[-1].op != "def" or not isinstance(defs[-1].value, cst.FunctionDef):
        return None
    fn = defs[-1].value
    frame = values.partial_frame(partial, fn) if partial is not None else None
    return [(r, function_scope(values, fn), frame) for r in values.return_values(fn) if r is not None]


def hands(values: Model, expr: cst.BaseExpression | None, at: Call, fn: cst.FunctionDef | cst.Lambda) -> bool:
    """`expr`, an argument of `at`, is the function `fn` handed along (a `map` or collate function): `fn` itself, the
    name its def binds at `at`, or `functools.partial(fn, ...)`."""
    made = values.call_of(expr) if isinstance(expr, cst.Call) else None
    if made is not None and made.qualname == "functools.partial" and made.positional:
        expr = made.positional[0].value
    if expr is fn:
        return True
    if not isinstance(fn, cst.FunctionDef):
        return False
    if isinstance(expr, cst.Attribute) and dotted(expr) == f"self.{fn.name.value}":  # `self.ds.map(self.tokenize)`
        cls = enclosing_class(at.scope)
        return cls is not None and function_scope(values, fn).parent is cls
    if not isinstance(expr, cst.Name) or expr.value != fn.name.value:
        return False
    _, events = values.binding_events(expr.value, at.scope, at.order)
    defs = [e for e in events if e.op in ("def", "assign", "import")]
    return bool(defs) and defs[-1].value is fn


def first_handed_parameter(values: Model, owner: Scope, name: str) -> cst.FunctionDef | cst.Lambda | None:
    """The function `owner` is the scope of, when `name` is the first of its parameters a caller fills (the receiver of
    a method left out): the item, batch or example a library hands a function it was given. None otherwise."""
    fn = owner.node
    if not isinstance(fn, (cst.FunctionDef, cst.Lambda)):
        return None
    params = [*fn.params.posonly_params, *fn.params.params]
    method = isinstance(fn, cst.FunctionDef) and owner.parent is not None and owner.parent.kind == "class"
    if method and not any(dotted(d.decorator) == "staticmethod" for d in fn.decorators):
        params = params[1:]
    return fn if params and params[0].name.value == name else None


def called_directly(values: Model, fn: cst.FunctionDef | cst.Lambda) -> bool:
    """The file calls `fn` by its name, or a method of its name (besides handing it along)."""
    return isinstance(fn, cst.FunctionDef) and any(c.method in (None, fn.name.value) for c in values.calls_by_short.get(fn.name.value, ()))
