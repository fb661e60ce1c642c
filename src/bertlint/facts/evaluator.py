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

Here: `Evaluation` (the memo, the hooks, what `passed` spreads) and `Evaluator` (one read's position and call; `eval`
dispatches on the node's type). The parts of Python are mixins, one module each: `protocol` (items, iteration, `with`
and target unpacking of a value) and `sharing` (aliasing, change in place) on `Evaluation`; `operators` (constants,
displays, operators), `reads` (names and the bindings that reach a read), `access` (attributes and items),
`iteration`, `calls` and `items` on `Evaluator`.
"""

from __future__ import annotations

import functools
from typing import Any

import libcst as cst

from bertlint.facts.abstract import FAILURES, NONE, UNANSWERED, Binding, Frame, agree, constant
from bertlint.facts.access import Access
from bertlint.facts.appending import Appending
from bertlint.facts.calls import CallFrames, Calls
from bertlint.facts.functions import Passed
from bertlint.facts.items import Items
from bertlint.facts.iteration import Iteration
from bertlint.facts.model import Model, Runtime
from bertlint.facts.nodes import UNKNOWN, Call, Scope, dotted
from bertlint.facts.operators import Operators
from bertlint.facts.project import imported
from bertlint.facts.protocol import Protocol
from bertlint.facts.reaching import Reaching
from bertlint.facts.reads import Reads
from bertlint.facts.sharing import Sharing


# the hooks that ask about an object, and where their arguments hold it
OBJECT_ARGUMENT = {"item": 1, "iterate": 1, "attribute": 1, "method": 1, "operation": 1, "keys": 1}


class Evaluation(Protocol, Sharing, CallFrames, Model):
    """The semantic model of one file with the evaluator's memo. `brains` (the library models, set by `Values`) are
    modules answering the hooks `ask` names (listed in `brain/__init__.py`); each answers None for what is not its
    library's."""

    brains: tuple = ()

    def __init__(self, module: cst.Module, source: str, path=None, runtime: Runtime = Runtime()):
        super().__init__(module, source, path, runtime)
        self.memo: dict[tuple, Any] = {}
        self.assumed_attributes: dict[tuple, Any] = {}  # (`self.x`, class) -> the value its reads are taken to hold
        self.reaching = Reaching(self)
        self.imported_by: Evaluation | None = None  # the file whose import of a project module this evaluates (`project`)
        self.homes: dict[int, Evaluation] = {}  # module scope -> the evaluation of a project module it imports, here or deeper

    def evaluate(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None, *, cli: bool = True, frame: Frame | None = None) -> Any:
        """The abstract value of `expr` read in `scope` at `order`: a constant, an `Abstract` value, or UNKNOWN."""
        if expr is None:
            return UNKNOWN
        home = self.home(scope)
        if home is not self:
            return home.evaluate(expr, scope, order, cli=cli, frame=frame)
        return self.memoised((id(expr), order, cli, id(frame)), lambda: Evaluator(self, scope, order, cli, frame).eval(expr))

    def named_at(self, name: str, scope: Scope, order: int | None, cli: bool, frame: Frame | None) -> Any:
        """The value `name` holds read in `scope` at `order` (memoised like `evaluate`)."""
        home = self.home(scope)
        if home is not self:
            return home.named_at(name, scope, order, cli, frame)
        return self.memoised((name, id(scope), order, cli, id(frame)), lambda: Evaluator(self, scope, order, cli, frame).named(name))

    def home(self, scope: Scope | None) -> Evaluation:
        """The evaluation whose code `scope` is: this file's, or a project module's whose value reached this file (an
        object a function of it made, whose arguments a query reads): each module's code is read by its own model."""
        if not self.homes or scope is None:
            return self
        return self.homes.get(id(scope.module), self)

    def memoised(self, key: tuple, find) -> Any:
        """`find()`'s value, once per key; a value read while it is being found (defined through itself, `x = x + 1`
        round a loop) is UNKNOWN there. (A checked fixed point, s22-iter, found more but cost rounds to the power of the
        loops' and calls' nesting on large files: 25 s for one transformers modeling file.)"""
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = UNKNOWN
        try:
            result = find()
        except FAILURES:
            result = UNKNOWN  # SyntaxError: libcst's `evaluated_value` of a string holding a null byte
        self.memo[key] = result
        return result

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

    def project_import(self, alias: cst.CSTNode) -> Any:
        """What the import `alias` binds when it finds a module of the file's own project (`project`), else UNKNOWN:
        looked up once per import (each read of the name asks again)."""
        return self.memoised(("project import", id(alias)), lambda: self._project_import(alias))

    def _project_import(self, alias: cst.CSTNode) -> Any:
        stmt = self._import_statements.get(id(alias))
        if isinstance(stmt, cst.Import):
            name = dotted(alias.name)
            return imported(self, name if alias.asname is not None else name.split(".", 1)[0], 0, None)
        if isinstance(stmt, cst.ImportFrom) and isinstance(alias.name, cst.Name):
            return imported(self, dotted(stmt.module) if stmt.module is not None else "", len(stmt.relative), alias.name.value)
        return UNKNOWN

    @functools.cached_property
    def _import_statements(self) -> dict[int, cst.CSTNode]:
        """Each alias's `import` or `from ... import` statement (a line may hold several: `import a; from b import c`)."""
        return {id(alias): small for _name, alias, stmt in self.import_nodes for small in getattr(stmt, "body", ())
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar) and any(a is alias for a in small.names)}

    def passed(self, site: Call, frame: Frame | None = None) -> Passed | None:
        """What the call `site` passes, its `*`/`**` arguments spread where known element by element (`Items.spread`),
        read in `frame` (the caller's: a binding of the site's arguments) without command-line defaults: which keys
        a mapping has and how long a sequence is must hold for every run."""
        return Evaluator(self, site.scope, site.order, False, frame).spread(site)

    def calls_back(self, call: Call) -> bool:
        return bool(self.ask("calls_back", Evaluator(self, call.scope, call.order, True, None), call))

    def leaves_alone(self, call: Call) -> bool:
        return bool(self.ask("leaves_alone", call.qualname))

    def wraps(self, decorator: str | None) -> bool:
        return bool(self.ask("wraps", decorator))

    def ask(self, hook: str, *args) -> Any:
        """The first library model's answer to `hook` (the value None for its `NONE`), or `UNANSWERED` (falsy). Asked
        of a join (objects of one kind, `abstract.join`), the answers for each object it may be, joined."""
        at = OBJECT_ARGUMENT.get(hook)
        joined = args[at].joined if at is not None and len(args) > at and isinstance(args[at], Binding) else ()
        if joined:
            return agree([self.ask(hook, *args[:at], member, *args[at + 1 :]) for member in joined])
        made = getattr(args[at], "call", None) if at is not None and len(args) > at else None
        home = self.home(made.scope) if made is not None else self
        if home is not self:  # an object a project module's code made: its library model reads that module
            return home.ask(hook, home if args[0] is self else Evaluator(home, made.scope, made.order, args[0].cli, None), *args[1:])
        for brain in self.brains:
            hooked = getattr(brain, hook, None)
            found = hooked(*args) if hooked is not None else None
            if found is not None:
                return None if found is NONE else found
        return UNANSWERED


class Evaluator(Reads, Access, Operators, Iteration, Calls, Items, Appending):
    """One expression's evaluation at a position (`scope`, `order`) for a call (`frame`): `eval` dispatches on the
    node's type to the mixins, each one part of Python (`operators`, `reads`, `access`, `iteration`, `calls`,
    `items`)."""

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
