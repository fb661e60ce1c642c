"""Where a script's run certainly stops: in each scope (the module, each function's body), the first statement run
for certain that raises whenever it runs.

A module-level statement runs once, in order, and nothing catches what it raises: the statements after it never run,
and what a rule finds there (an argument a later call rejects, a name a later import lacks) cannot happen when the file
runs as written. A function's body is the same whenever the function runs (and when it never runs, nothing in it
happens either), so its first certain raise ends it. This module is the engine: it walks each scope's statements run
for certain (`certain_runs`) and asks each kind of stop, each in its own module, of every statement. Causes certain
from the text alone:

- a name read unbound, or read by a module-level statement before the module's scope binds it (`name_stops`);
- a library's refusal (`library_stops`): an import of a name that no release of the library has, a transformers Auto
  class called directly, a refused split, arguments or keyword value, a model class not ready for the target's
  `post_init`, an API the target release removed, a call refused for the object it is made on (`removals`);
- plain Python errors the value layer's tables make certain (`attribute_stops`): a str a `ModelOutput`'s unpacking
  bound used as a tensor (an attribute a str has not, called, handed to a torch layer), an attribute of an argparse
  namespace that no `add_argument` of the file defines (`args.lr` beside `--learning_rate`: AttributeError),
  `self.NAME` in a method of the file's class whose chain of classes (all the file's) never binds NAME
  (AttributeError), and `parser.parse_args()` run in a notebook's kernel, whose `-f <connection file>` the parser
  does not take (SystemExit: "unrecognized arguments"; a notebook's module stop, as a library's refusal).

And one of a notebook's Run All: a code cell that does not compile, which raises SyntaxError when it runs
(`cell_stops`; the notebook stands it in the joined module as one placeholder statement).

Probable, not certain: a template's placeholder checkpoint or data file (`placeholder_stops`); and any of the causes
above in a statement that a loop's first pass runs, a `with`'s body (one that does not swallow the raise), or the arm
of an `if` that the file's values take, command-line defaults included (`certain_runs.first_pass`): the loop may run
no pass, the user may give another option. A certain stop of the scope's own statements comes first.
A call of one of the file's own functions whose body stops (certainly or probably) whenever it runs stops the caller
there too (`_reaches`: no `return` before that stop, no generator, no decorator but `staticmethod`/`classmethod`), and
so do `self.METHOD(...)` in a method of the file's class (one no class of the file subclasses), a call of an instance of
the file's torch module class (`model(ids)`, where the value layer knows `model` holds the object `TweetModel(...)` made:
`nn.Module.__call__` runs its `forward`; no class of its chain defines `__call__`), and the construction of
the file's class, whose `__init__` runs (no `__new__`, decorator or metaclass): a class whose `__init__` certainly stops
never yields an instance (`unbuildable`; `RelationModel.__init__` loads a Keras model through a method that compiles it
with `Adam(lr=...)`, which Keras 3 refuses). Each function's stop is computed
once. What never runs because of a stop (the statements after it, the functions only they name) is `liveness`'s.
Whether a stop silences every rule after it or only those whose finding says its own line fails (`Stop.every_rule`):
a library's refusal and a forgotten import (`library_stops.forgotten_import`) are crashes of a program; a name that no
library exports read unbound is as likely a fragment's object (a test snippet's or a bug report's `model`, a
half-written file), and a placeholder may name a folder that exists.
Where the file's names may come from elsewhere (`name_stops.names_from_elsewhere`), only a library's refusal stops it
(`_stops_from_elsewhere`). One walk over the module, once per file.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

import libcst as cst

from bertlint.facts.abstract import Binding, Instance
from bertlint.facts.attribute_stops import keyed_batch_column, kernel_exit, missing_attribute, str_as_tensor
from bertlint.facts.branches import taken_arm
from bertlint.facts.cell_stops import uncompiled_cells
from bertlint.facts.certain_runs import body_of, evaluated_by, first_pass
from bertlint.facts.library_stops import auto_names, forgotten_import, imports_what_is_not_there, refused_call, removed_api
from bertlint.facts.model import Model, per_file
from bertlint.facts.names import is_model_class
from bertlint.facts.name_stops import Order, bindings, names_from_elsewhere, read_first, unbound
from bertlint.facts.nodes import dotted, walk
from bertlint.facts.placeholder_stops import placeholder

# torch's module class, whose `__call__` runs `forward`
_TORCH_MODULES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# Decorators that leave a method's body as it is: calling it runs the body.
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})


class Stop(NamedTuple):
    """Where a scope's run stops: `statement`, the first of `scope`'s own statements (the module's, or a function's
    body when the function runs) that certainly raises. `every_rule`: the file is a program, not a fragment, so no
    finding after it can happen (a forgotten import, a library's certain crash); otherwise only findings that say their
    own line fails are dropped after it (a fragment's unbound `model`, a template's placeholder checkpoint)."""
    scope: cst.Module | cst.FunctionDef
    statement: cst.CSTNode
    every_rule: bool
    raises: bool = False  # the statement raises whenever it runs, a crash of a program (a probable stop of a loop's first pass too)


@per_file
def run_stops(facts: Model) -> tuple[Stop, ...]:
    """The stop of the module and of each function of the file (see the module's docstring): a function's body stops
    at its first certain raise whenever the function runs, so what follows it in the body never runs either way.
    Where the file's names may come from elsewhere (notebook cells, a cell script, a notebook's export, `exec`), only
    where a library certainly refuses what the statement asks (a removed import, a name no release has, a refused
    split, a placeholder path, the kernel's argv): a name's binding cannot be known there, a library's refusal does not
    depend on it; a module-level call reaches a function's only where the module defined it before
    (`_stops_from_elsewhere`). A notebook's Run All stops at the first cell that raises, as a script does."""
    return _stops_and_classes(facts)[0]


def unbuildable(facts: Model) -> frozenset[cst.ClassDef]:
    """The module's classes whose construction certainly raises (every rule): `C(...)` runs `C.__init__`, whose body
    certainly reaches its stop (`Adam(lr=...)` on Keras 3 in a method it calls): no instance of them ever exists."""
    return _stops_and_classes(facts)[1]


@per_file
def _stops_and_classes(facts: Model) -> tuple[tuple[Stop, ...], frozenset[cst.ClassDef]]:
    """`run_stops` and `unbuildable`, in one pass: a call of the file's function, the construction of its class (its
    `__init__`) and `self.METHOD(...)` in a method of its class stop where the body they run stops."""
    functions: list[cst.FunctionDef] = []
    every_class: list[cst.ClassDef] = []  # every class statement of the file, nested ones too
    found = bindings(facts.module, functions, every_class)
    if found is None or names_from_elsewhere(facts):
        return _stops_from_elsewhere(facts, found), frozenset()
    bound, module_order = found
    autos = auto_names(facts.module, bound)
    own = {f.name.value: f for f in facts.module.body if isinstance(f, cst.FunctionDef) and bound.get(f.name.value) == 1}
    classes = {c.name.value: c for c in facts.module.body if isinstance(c, cst.ClassDef) and bound.get(c.name.value) == 1}
    defined = {id(cls): methods_of(cls) for cls in classes.values()}  # each class's methods, read once
    methods = {id(m): cls for cls in classes.values() for m in defined[id(cls)].values()}
    subclassed = {dotted(base.value) for node in every_class for base in node.bases}
    stops: dict[cst.CSTNode, tuple[cst.CSTNode, bool, bool] | None] = {}

    def stop_of(scope: cst.Module | cst.FunctionDef) -> tuple[cst.CSTNode, bool, bool] | None:
        if scope not in stops:
            stops[scope] = None  # a recursive call meanwhile: no stop
            order = module_order if isinstance(scope, cst.Module) else None
            cls = methods.get(id(scope))
            stops[scope] = _first_stop(facts, body_of(scope), bound, autos, lambda call, _small: called(call, cls), order)
        return stops[scope]

    def reached(function: cst.FunctionDef | None) -> bool | None:
        stop = stop_of(function) if function is not None else None
        return stop[1] if stop is not None and _reaches(function, stop[0]) else None

    def called(call: cst.Call, cls: cst.ClassDef | None) -> bool | None:
        """every_rule of the stop that `call` certainly reaches, else None: of the file's function `name`, the
        `__init__` of its class `name` (one without a `__new__`, a decorator or a metaclass), `self.name` in a method
        of its class that no class of the file subclasses (a subclass's method of that name may run instead), or the
        `forward` of the file's torch module an instance of which is called (`_forward_run`)."""
        func = call.func
        if isinstance(func, cst.Name) and (func.value in own or func.value in classes):
            if func.value in own:
                return reached(own[func.value])
            return reached(_constructor(classes[func.value], defined[id(classes[func.value])]))
        if cls is not None and isinstance(func, cst.Attribute) and dotted(func.value) == "self" and cls.name.value not in subclassed:
            return reached(defined[id(cls)].get(func.attr.value))
        return reached(_forward_run(facts, call, classes, defined))

    found_stops = tuple(Stop(scope, *stop) for scope in (facts.module, *functions) if (stop := stop_of(scope)) is not None)
    return found_stops, frozenset(cls for name, cls in classes.items() if called(cst.Call(cst.Name(name)), None) is True)


def _stops_from_elsewhere(facts: Model, found: tuple[dict[str, int], Order] | None) -> tuple[Stop, ...]:
    """The stops of a file whose names may come from elsewhere (`found`: its `bindings`, None where a star import or
    `exec` hides them): only a library's certain refusal, no name's binding. A module-level call of the file's function
    that the module defines once, in a statement before the call (Run All has bound the name to it by then, whatever
    the kernel held), stops where the function's body stops (`main()` whose `parser.parse_args()` the kernel's argv
    refuses); each such function's own stop is one too."""
    bound, order = found if found is not None else ({}, None)
    own = {f.name.value: f for f in facts.module.body if isinstance(f, cst.FunctionDef) and bound.get(f.name.value) == 1}
    stops = {f: _first_stop(facts, body_of(f), None, {}, lambda call, small: None, None) for f in own.values()}

    def called(call: cst.Call, small: cst.CSTNode) -> bool | None:
        func = call.func
        function = own.get(func.value) if isinstance(func, cst.Name) and order is not None else None
        stop = stops[function] if function is not None and order.first[func.value] < order.order.get(small, -1) else None
        return stop[1] if stop is not None and _reaches(function, stop[0]) else None

    stop = _first_stop(facts, body_of(facts.module), None, {}, called, None)
    return tuple(Stop(scope, *stop) for scope, stop in ((facts.module, stop), *stops.items()) if stop is not None)


def methods_of(cls: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    """The functions a class's body defines, each by its name, where it defines that name once."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    defined = [stmt for stmt in body if isinstance(stmt, cst.FunctionDef)]
    names = [f.name.value for f in defined]
    return {f.name.value: f for f in defined if names.count(f.name.value) == 1}


def _forward_run(facts: Model, node: cst.Call, classes: dict[str, cst.ClassDef], defined: dict[int, dict[str, cst.FunctionDef]]) -> cst.FunctionDef | None:
    """The `forward` that `node`, a call of an object, certainly runs: the value layer knows the object is the one a
    construction of the file's class made (`model = TweetModel(conf)`, through names and call sites), a class (bound
    once at the module's level) whose chain of classes is the file's (`classes`, their methods `defined`: one base each,
    no decorator or metaclass, none defining `__call__`) down to `torch.nn.Module` or a transformers PyTorch model
    class, whose `__call__` (torch's `Module._call_impl`) runs `forward`; the first `forward` of the chain."""
    if not isinstance(node.func, (cst.Name, cst.Attribute)):
        return None
    found = facts.call_of(node)
    value = facts.evaluate(node.func, found.scope, found.order) if found is not None and found.qualname is None else None
    made = value.call if isinstance(value, (Binding, Instance)) and not getattr(value, "joined", ()) else None
    qualname = made.qualname if made is not None and made.node is not node else None
    chain = []
    while qualname is not None and qualname.startswith("<local>.") and len(chain) < 8:
        cls = classes.get(qualname.removeprefix("<local>."))
        bases = facts.classes[cls.name.value].bases if cls is not None and cls.name.value in facts.classes else ()
        if cls is None or cls.decorators or cls.keywords or len(cls.bases) != 1 or len(bases) != 1 or "__call__" in defined[id(cls)]:
            return None
        chain.append(cls)
        qualname = bases[0]
    if not chain or not (qualname in _TORCH_MODULES or is_model_class(qualname) and not qualname.rsplit(".", 1)[-1].startswith(("TF", "Flax"))):
        return None
    return next((defined[id(cls)]["forward"] for cls in chain if "forward" in defined[id(cls)]), None)


def _constructor(cls: cst.ClassDef, methods: dict[str, cst.FunctionDef]) -> cst.FunctionDef | None:
    """The `__init__` that `cls(...)` certainly runs (`methods`: its `methods_of`): its own, where no decorator,
    metaclass or `__new__` may make something else."""
    if cls.decorators or cls.keywords or "__new__" in methods:
        return None
    return methods.get("__init__")



def statements_after(facts: Model, stop: Stop) -> Iterator[cst.CSTNode]:
    """The statements of `stop`'s scope that run after its statement (none of them runs), in order, the main block's in
    their place; for a stop in a loop's first pass or an arm the run takes (`first_pass`), the rest of that body and
    what follows the loop or the `if` (the raise leaves them). Each once: a statement inside one already given is not
    given again."""
    passed, given, inside = False, set(), None
    for stmt, _small, depth in first_pass(body_of(stop.scope), _taken(facts)):
        if inside is not None and depth > inside:
            continue  # within a statement given whole
        inside = None
        if passed and stmt is not stop.statement and id(stmt) not in given:
            given.add(id(stmt))
            inside = depth
            yield stmt
        passed = passed or stmt is stop.statement


def raises_before(facts: Model, node: cst.CSTNode, scope: cst.Module | cst.FunctionDef) -> bool:
    """Does every run of `scope` (the module, or a function's body) that would reach `node` certainly raise first,
    inside a loop, `with` or `if` of the scope: its stop is a statement there that raises whenever it runs
    (`Stop.raises`), and `node` runs after it inside the innermost loop, `with` or `if` that holds it (a loop that runs
    no pass runs neither, and its first pass raises first; an arm the command line may not take runs neither either).
    `backward()` after the model's call, in a hand loop whose model's `forward` certainly raises: no step. A stop among
    the scope's own statements is no answer here: what follows it is `liveness`'s (never reached)."""
    stop = next((s for s in run_stops(facts) if s.scope is scope), None)
    if stop is None or not stop.raises:
        return False
    around: list[cst.CSTNode] = []  # the compound statements holding the one at hand, outermost first
    for stmt, _small, depth in first_pass(body_of(scope), _taken(facts)):
        del around[depth:]
        if stmt is stop.statement:
            break
        around.append(stmt)
    else:
        return False
    return bool(around) and _holds(around[-1], node) and any(_holds(stmt, node) for stmt in statements_after(facts, stop))


def _holds(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(found is node for found in walk(tree))


def _reaches(function: cst.FunctionDef, statement: cst.CSTNode) -> bool:
    """Does every call of `function` run its body up to `statement`: a plain function (no decorator but `staticmethod`
    or `classmethod`, not async, no generator) with no `return` in the statements before it (a return in a branch may
    skip it)."""
    if any(dotted(d.decorator) not in _PLAIN_DECORATORS for d in function.decorators) or function.asynchronous is not None:
        return False
    if any(isinstance(node, (cst.Yield, cst.Await)) for node in walk(function.body)):
        return False
    for stmt in body_of(function):
        if stmt is statement:
            return True
        if any(isinstance(node, cst.Return) for node in walk(stmt)):
            return False
    return False


def _first_stop(facts: Model, body, bound: dict[str, int] | None, autos: dict[str, str], called,
                order: Order | None) -> tuple[cst.CSTNode, bool, bool] | None:
    """(statement, every_rule, raises) of the first statement of `body` run for certain that certainly raises, else of the first
    that a loop's first pass runs (or a `with`'s body) that certainly raises (every_rule False: probable); `bound`: how
    often the file binds each name, None where that cannot be known (then no stop of a name's binding); `called(func)`:
    every_rule of the stop that calling `func` (the file's function or class, or a method of its class) reaches, or None; `order`: the module's (the
    module's own body only), for a read before the module binds the name."""
    releases = dict(facts.runtime.releases)
    uncompiled = uncompiled_cells(facts)
    probable = None  # the first stop in a loop's first pass (a `with`'s body): the loop may run no pass
    top = None  # the statement of `body` that runs the one at hand: where it stands in the module's order
    for stmt, small, depth in first_pass(body, _taken(facts)):
        top = small if not depth else top
        if depth and probable is not None:
            continue
        found = _stop_at(facts, stmt, small, top, bound, autos, called, order, releases, uncompiled)
        if found is not None and not depth:
            return stmt, found, found
        if found is not None:
            probable = (stmt, False, found)
    return probable


def _taken(facts: Model):
    """The arm of an `if` the run as written takes (`branches.taken_arm`, command-line defaults too), one answer per
    statement of the file."""
    return lambda stmt: facts.memoised(("taken arm", id(stmt)), lambda: taken_arm(facts, stmt))


def _stop_at(facts: Model, stmt, small, top, bound, autos, called, order, releases, uncompiled) -> bool | None:
    """every_rule of the stop that `small` (of `stmt`, run by `top`, a statement of the scope's body) certainly makes
    whenever it runs, None where it makes none."""
    if stmt in uncompiled:
        return True
    if isinstance(small, cst.ImportFrom) and imports_what_is_not_there(facts, small):
        return True
    evaluated = list(evaluated_by(small))  # read once: the removed-API check and the checks below walk the same nodes
    if removed_api(facts, small, evaluated, releases):
        return True
    for node in evaluated:
        kind = type(node)  # `is` on the exact class: Name and Call are not subclassed, and `isinstance` against
        # libcst's classes goes through their ABC metaclass, a Python call per node
        if kind is cst.Name and bound is not None:
            first = read_first(node.value, top, order) if order is not None else None
            if unbound(node.value, bound) or first is False:
                return forgotten_import(facts, node.value)
            if first:
                return True
        if bound is not None and (missing_attribute(facts, node) or keyed_batch_column(facts, node)):
            return True
        if kind is cst.Call:
            if refused_call(facts, node, autos) or kernel_exit(facts, node) or bound is not None and str_as_tensor(facts, node):
                return True
            if placeholder(facts, node, bound):
                return False
            if (every := called(node, top)) is not None:
                return every
    return None
