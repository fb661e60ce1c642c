"""Feature guards: the tests a line runs under that a file writes to run on more than one library release.

An API-drift finding says "on the target release this line raises" (ImportError, AttributeError, TypeError) or
"the target ignores it". That is wrong where the file guards the line against exactly that:

- a feature test on the name (`if hasattr(tok, "as_target_tokenizer"):`, `getattr(X, "name", None)`,
  `"name" in dir(X)`, `"name" in inspect.signature(f).parameters`, either arm, in an `if`, a conditional
  expression or an `and`/`or`): the file branches on this very API;
- a `try` whose handlers handle the exception the finding predicts (`except ImportError:`, `except (AttributeError,
  TypeError):`; `except Exception:` or a bare `except:` only where it falls back to other work, not where it
  only logs, skips or raises again), for a line in its body (a function defined there raises where it is
  called, not under the `try`);
- a branch on the library's version that the target does not take (`if version.parse(transformers.__version__)
  >= version.parse("4.46"):`, `transformers.__version__.startswith("4")`, `transformers.__version__ < "5"`,
  a name bound to such a value or test).

A rule states what its finding predicts (`Failure`); `covered` decides. A test on another name or on another
library's version (torch's) is no guard for the finding: it stays. One walk over the statements, once per file.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass
from typing import Callable, Iterator

import libcst as cst

from bertlint.facts.model import Model, per_file
from bertlint.facts.nodes import dotted, literal, walk

Release = Callable[[str], "tuple[int, ...] | None"]  # library -> its target release, None where it cannot be known

# Calls that turn a version string into a comparable version (`packaging.version.parse`, `Version`, `LooseVersion`).
_PARSERS = frozenset({"parse", "Version", "parse_version", "LooseVersion", "StrictVersion"})
# What lists an object's names or a callable's parameters, for `"name" in ...` feature tests.
_LISTINGS = frozenset({"dir", "vars", "fields", "signature", "getfullargspec", "getargspec"})
# What a handler calls that only reports the error, or ends the run.
_REPORTS = frozenset({"print", "print_exc", "debug", "info", "warning", "warn", "error", "exception", "critical", "log", "write"})
_EXITS = frozenset({"exit", "quit", "_exit", "abort"})
_LISTING_ATTRIBUTES = frozenset({"parameters", "__dict__", "__dataclass_fields__", "__annotations__", "co_varnames", "args"})


@dataclass(frozen=True, repr=False)
class Failure:
    """What a drift finding predicts on the target release: the exception its line raises (`"ImportError"`,
    `"ModuleNotFoundError"`, `"AttributeError"`, `"TypeError"`; None where the line runs and the target ignores
    or warns), the API names it is about (the name and what replaces it) and the library whose release it is."""

    raises: str | None
    names: tuple[str, ...]
    library: str = "transformers"

    @staticmethod
    def of(template: str, *names: str | None, library: str = "transformers") -> Failure:
        """From an error template of the knowledge tables (`"TypeError: ... got an unexpected keyword ..."`)."""
        head = template.split(":", 1)[0].strip()
        return Failure(head if _exception(head) else None, tuple(n for n in names if n), library)


@dataclass(frozen=True, repr=False)
class Guard:
    """A test a statement runs under: the condition and the arm (True: its body), or a `try`'s handlers."""

    test: cst.BaseExpression | None
    arm: bool
    handlers: tuple[cst.ExceptHandler, ...] = ()


def covered(facts: Model, node: cst.CSTNode, failure: Failure, release: Release) -> bool:
    """Whether the file guards `node` against `failure`: a feature test on one of its names, a `try` that catches
    what it raises, or a version branch the target release does not take."""
    for guard in _guards_of(facts, node):
        if guard.handlers:
            if failure.raises and any(_catches(h, failure.raises) for h in guard.handlers):
                return True
            continue
        if set(failure.names) & tested_names(facts, guard.test):
            return True
        truth = _truth(facts, guard.test, failure.library, release(failure.library))
        if truth is not None and truth != guard.arm:
            return True
    return False


def _guards_of(facts: Model, node: cst.CSTNode) -> Iterator[Guard]:
    """The guards around `node`: those inside its statement (conditional expressions, `and`/`or`), then the statement's."""
    child, parent = node, facts.parent(node)
    while parent is not None:
        if isinstance(parent, cst.IfExp) and child is not parent.test:
            yield Guard(parent.test, child is parent.body)
        elif isinstance(parent, cst.BooleanOperation) and child is parent.right:
            yield Guard(parent.left, isinstance(parent.operator, cst.And))
        child, parent = parent, facts.parent(parent)
    guards = statement_guards(facts)
    yield from guards[id(child)] if id(child) in guards else guards.get(id(facts.statement_of(child)), ())


@per_file
def statement_guards(facts: Model) -> dict[int, tuple[Guard, ...]]:
    """id(statement) -> the guards it runs under, outermost first (one walk over the statements)."""
    found: dict[int, tuple[Guard, ...]] = {}

    def block(suite, guards: tuple[Guard, ...]) -> None:
        for stmt in suite.body:
            statement(stmt, guards)
            if isinstance(stmt, cst.If) and stmt.orelse is None and _leaves(stmt.body):
                guards += (Guard(stmt.test, False),)  # `if not hasattr(...): return`: what follows runs only when false

    def statement(stmt: cst.CSTNode, guards: tuple[Guard, ...]) -> None:
        found[id(stmt)] = guards
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            for alias in small.names if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar) else ():
                found[id(alias)] = guards  # an import's finding sits on its alias
        if isinstance(stmt, cst.If):
            block(stmt.body, guards + (Guard(stmt.test, True),))
            if isinstance(stmt.orelse, cst.If):
                statement(stmt.orelse, guards + (Guard(stmt.test, False),))
            elif stmt.orelse is not None:
                block(stmt.orelse.body, guards + (Guard(stmt.test, False),))
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            block(stmt.body, guards + (Guard(None, True, tuple(stmt.handlers)),))
            for part in (*stmt.handlers, stmt.orelse, stmt.finalbody):
                if part is not None:
                    block(part.body, guards)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            # its body runs later, when called: outside any `try` around the definition, still under its `if`s
            block(stmt.body, tuple(g for g in guards if not g.handlers) if isinstance(stmt, cst.FunctionDef) else guards)
        elif isinstance(stmt, cst.BaseCompoundStatement):
            for suite in (getattr(stmt, "body", None), getattr(getattr(stmt, "orelse", None), "body", None)):
                if isinstance(suite, cst.BaseSuite):
                    block(suite, guards)
            for case in getattr(stmt, "cases", ()):
                block(case.body, guards)

    block(facts.module, ())
    return found


def _leaves(suite: cst.BaseSuite) -> bool:
    """Whether a block always leaves its own block: it ends in `return`, `raise`, `continue` or `break`."""
    last = suite.body[-1] if suite.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    return isinstance(last, (cst.Return, cst.Raise, cst.Continue, cst.Break))


def tested_names(facts: Model, test: cst.BaseExpression | None) -> set[str]:
    """The API names a condition tests for: `hasattr`/`getattr`'s name, the string before `in`/`not in`
    (`"name" in dir(X)`, `in inspect.signature(f).parameters`); through a name bound once to such a test."""
    names: set[str] = set()
    for node in _operands(facts, test):
        if isinstance(node, cst.Call) and dotted(node.func) in ("hasattr", "getattr") and len(node.args) >= 2:
            value = literal(node.args[1].value)
            if isinstance(value, str):
                names.add(value)
        elif isinstance(node, cst.Comparison) and any(isinstance(t.operator, (cst.In, cst.NotIn)) and _lists_api(t.comparator) for t in node.comparisons):
            value = literal(node.left)
            if isinstance(value, str):
                names.add(value)
    return names


def _lists_api(expr: cst.BaseExpression) -> bool:
    """Whether an expression lists an object's names or parameters (`dir(X)`, `vars(X)`, `X.__dict__`,
    `inspect.signature(f).parameters`, `[f.name for f in fields(X)]`), not a dict's keys (`"text" in batch`)."""
    for node in walk(expr):
        if isinstance(node, cst.Call) and (dotted(node.func) or "").rsplit(".", 1)[-1] in _LISTINGS:
            return True
        if isinstance(node, cst.Attribute) and node.attr.value in _LISTING_ATTRIBUTES:
            return True
    return False


def _operands(facts: Model, test: cst.BaseExpression | None) -> Iterator[cst.CSTNode]:
    """Every node of a condition, and of the value of a name in it that is bound once (`HAS_X = hasattr(...)`)."""
    for node in walk(test) if test is not None else ():
        yield node
        if isinstance(node, cst.Name):
            value = _sole_value(facts, node)
            if value is not None:
                yield from walk(value)


def _sole_value(facts: Model, name: cst.Name) -> cst.BaseExpression | None:
    values = facts.assigned_values(name.value, facts.scope_of(name))
    return values[0] if len(values) == 1 else None


def _catches(handler: cst.ExceptHandler, raises: str) -> bool:
    """Whether an `except` clause handles the builtin exception `raises`: it names that error or a builtin base of
    it and does not leave by raising or exiting; a broad clause (a bare `except:`, `Exception`, `BaseException`)
    only where it falls back to other work, not where it only reports (a `try` around a whole script that logs
    the error, a loop that prints and skips every example: the run still fails). A name that is no builtin
    exception is taken as some other error."""
    if _leaves_run(handler.body):
        return False
    if handler.type is None:
        return not _reports_only(handler.body)
    types = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    for expr in types:
        caught = _exception((dotted(expr) or "").rsplit(".", 1)[-1])
        if caught is not None and issubclass(_exception(raises) or Exception, caught):
            if caught not in (Exception, BaseException) or not _reports_only(handler.body):
                return True
    return False


def _statements_of(suite: cst.BaseSuite) -> list[cst.CSTNode]:
    return [small for stmt in suite.body for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt])]


def _leaves_run(suite: cst.BaseSuite) -> bool:
    """A handler that ends by raising again or exiting (`raise`, `sys.exit(1)`): the error is not handled."""
    body = _statements_of(suite)
    last = body[-1] if body else None
    return isinstance(last, cst.Raise) or (isinstance(last, cst.Expr) and _called(last.value) in _EXITS)


def _reports_only(suite: cst.BaseSuite) -> bool:
    """A handler that only reports the error (`print`, `logger.error`, `traceback.print_exc()`, `pass`, `continue`)."""
    quiet = (cst.Pass, cst.Continue, cst.Break, cst.Raise)
    return all(isinstance(s, quiet) or (isinstance(s, cst.Expr) and _called(s.value) in _REPORTS | _EXITS) for s in _statements_of(suite))


def _called(expr: cst.BaseExpression) -> str:
    return (dotted(expr.func) or "").rsplit(".", 1)[-1] if isinstance(expr, cst.Call) else ""


def _exception(name: str) -> type | None:
    found = getattr(builtins, name, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


# ---- version branches -----------------------------------------------------------------------------------------

def _truth(facts: Model, test: cst.BaseExpression | None, library: str, release: tuple[int, ...] | None) -> bool | None:
    """What a condition on `library`'s version is on `release`; None where it tests anything else or is not known."""
    if test is None or release is None:
        return None
    if isinstance(test, cst.Name):
        value = _sole_value(facts, test)
        return _truth(facts, value, library, release) if value is not None else None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _truth(facts, test.expression, library, release)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left, right = (_truth(facts, side, library, release) for side in (test.left, test.right))
        stop = isinstance(test.operator, cst.Or)  # the value that decides: True for `or`, False for `and`
        if stop in (left, right):
            return stop
        return None if None in (left, right) else not stop
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "startswith" and test.args:
        prefix = literal(test.args[0].value)
        if isinstance(prefix, str) and _is_version(facts, test.func.value, library):
            return ".".join(map(str, release)).startswith(prefix)
        return None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        sides = (test.left, target.comparator)
        ours = [_is_version(facts, side, library) for side in sides]
        if ours.count(True) != 1:
            return None
        other = _version_literal(facts, sides[ours.index(False)])
        if other is None:
            return None
        mine = release + (0,) * (len(other) - len(release))
        other = other + (0,) * (len(mine) - len(other))
        left, right = (mine, other) if ours[0] else (other, mine)
        return _compare(target.operator, left, right)
    return None


def _compare(operator: cst.BaseCompOp, left: tuple[int, ...], right: tuple[int, ...]) -> bool | None:
    checks = {cst.GreaterThanEqual: left >= right, cst.GreaterThan: left > right, cst.LessThanEqual: left <= right,
              cst.LessThan: left < right, cst.Equal: left == right, cst.NotEqual: left != right}
    return checks.get(type(operator))


def _is_version(facts: Model, expr: cst.BaseExpression, library: str) -> bool:
    """`library.__version__`, `importlib.metadata.version("library")`, either parsed (`version.parse(...)`), or a
    name bound once to one of these."""
    if isinstance(expr, cst.Call):
        qualname = facts.qualname(expr.func, facts.scope_of(expr)) or dotted(expr.func) or ""
        if len(expr.args) != 1:
            return False
        if qualname.rsplit(".", 1)[-1] in _PARSERS:
            return _is_version(facts, expr.args[0].value, library)
        return qualname.endswith("metadata.version") and literal(expr.args[0].value) == library
    if isinstance(expr, cst.Name):
        if (facts.qualname(expr, facts.scope_of(expr)) or "") == f"{library}.__version__":
            return True
        value = _sole_value(facts, expr)
        return value is not None and _is_version(facts, value, library)
    return isinstance(expr, cst.Attribute) and facts.qualname(expr, facts.scope_of(expr)) == f"{library}.__version__"


def _version_literal(facts: Model, expr: cst.BaseExpression) -> tuple[int, ...] | None:
    """`"4.46.0"`, or a version parser called on one (`version.parse("4.46")`)."""
    if isinstance(expr, cst.Call) and len(expr.args) == 1:
        qualname = facts.qualname(expr.func, facts.scope_of(expr)) or dotted(expr.func) or ""
        return _version_literal(facts, expr.args[0].value) if qualname.rsplit(".", 1)[-1] in _PARSERS else None
    text = literal(expr)
    if not isinstance(text, str) or not re.match(r"\d+(\.\d+)*", text):
        return None
    return tuple(int(p) for p in re.match(r"\d+(\.\d+)*", text).group(0).split("."))
