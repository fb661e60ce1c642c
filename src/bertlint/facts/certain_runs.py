"""What a scope runs for certain, as the stops read it (`stops` and the kinds of stop it asks): the statements of a
scope in order, the expressions each evaluates whenever it runs, the names a node binds, and the constant an argument
holds.

Statements run for certain: the module's own, and those of the `if __name__ == "__main__":` block; only the parts
of a compound statement that run before its body (an `if`'s test, a `for`'s iterable, a `with`'s managers, a class's
bases and a function's decorators and defaults). Probably run (`first_pass`): the body of a loop or a `with` on its
first pass, the arm of an `if` the file's values (command-line defaults too) take.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from bertlint.facts.model import Model
from bertlint.facts.nodes import dotted, iter_children, literal, walk

# What binds the names inside it: (node type, the fields that hold them).
BINDERS: dict[type, tuple[str, ...]] = {
    cst.AssignTarget: ("target",), cst.AnnAssign: ("target",), cst.AugAssign: ("target",), cst.For: ("target",),
    cst.CompFor: ("target",), cst.AsName: ("name",), cst.NamedExpr: ("target",), cst.Param: ("name",),
    cst.FunctionDef: ("name",), cst.ClassDef: ("name",), cst.Del: ("target",), cst.ImportAlias: ("name",),
    cst.NameItem: ("name",), cst.MatchAs: ("name",), cst.MatchStar: ("name",), cst.MatchMapping: ("rest",),
}


def body_of(scope: cst.Module | cst.FunctionDef) -> tuple | list:
    return scope.body if isinstance(scope, cst.Module) else scope.body.body if isinstance(scope.body, cst.IndentedBlock) else ()


def argument_value(facts: Model, call: cst.Call, expr: cst.BaseExpression):
    """The constant `expr`, an argument of `call`, holds (the value layer's; anything else where there is none)."""
    wrapped = facts.call_of(call)
    return facts.value(expr, wrapped.scope, order=wrapped.order) if wrapped is not None else None


def bound_by(node: cst.CSTNode) -> Iterator[str]:
    """The names `node` binds, when it is a binding node (`BINDERS`, `global`/`nonlocal`): every name inside its target."""
    kind = type(node)
    fields = () if kind is cst.ImportAlias and node.asname is not None else BINDERS.get(kind, ())  # an `as` name binds
    for field in fields:
        target = getattr(node, field)
        if kind is cst.ImportAlias and field == "name":
            target = _head(target)
        for name in ([target] if isinstance(target, cst.Name) else walk(target) if target is not None else ()):
            if isinstance(name, cst.Name):
                yield name.value
    if kind in (cst.Global, cst.Nonlocal):
        yield from (item.name.value for item in node.names)


def _head(name: cst.BaseExpression) -> cst.BaseExpression:
    """`a` of `import a.b.c`: the name the import binds."""
    while isinstance(name, cst.Attribute):
        name = name.value
    return name


def run_for_certain(body) -> Iterator[tuple[cst.CSTNode, cst.CSTNode]]:
    """(statement, small statement or compound statement) of the module in order, with the `if __name__ ==
    "__main__":` block's in its place."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                yield stmt, small
            continue
        yield stmt, stmt
        if isinstance(stmt, cst.If) and main_guard(stmt.test) and isinstance(stmt.body, cst.IndentedBlock):
            yield from run_for_certain(stmt.body.body)


# Context managers made to swallow what their body raises (`contextlib.suppress`, `pytest.raises`, unittest's
# `assertRaises*`): a raise in their body goes no further.
_SWALLOWING = frozenset({"suppress", "raises", "assertRaises", "assertRaisesRegex"})


def first_pass(body, taken, depth: int = 0) -> Iterator[tuple[cst.CSTNode, cst.CSTNode, int]]:
    """`run_for_certain`'s (statement, small statement or compound statement), each with its depth: 0 for the scope's
    own, and after each `for`, `while` and `with` statement the statements of its body that its first pass runs, after
    an `if` those of the arm `taken(if_statement)` says the run as written takes (None: not known) (depth one more):
    they run only if the loop runs a pass at all (a loop over an empty iterable runs none), the manager lets a raise
    through (one of `_SWALLOWING` does not: its body is left out), the command line gives no other option."""
    for stmt, small in run_for_certain(body):
        yield stmt, small, depth
        if small is not stmt:
            continue
        if isinstance(stmt, (cst.For, cst.While, cst.With)) and getattr(stmt, "asynchronous", None) is None \
                and isinstance(stmt.body, cst.IndentedBlock) and not _swallows(stmt):
            yield from first_pass(stmt.body.body, taken, depth + 1)
        elif isinstance(stmt, cst.If) and not main_guard(stmt.test) and (arm := taken(stmt)):
            yield from first_pass(arm, taken, depth + 1)


def _swallows(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.With) and any(
        isinstance(item.item, cst.Call) and (dotted(item.item.func) or "").rsplit(".", 1)[-1] in _SWALLOWING for item in stmt.items)


def main_guard(test: cst.BaseExpression) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = {dotted(test.left) or literal(test.left), dotted(test.comparisons[0].comparator) or literal(test.comparisons[0].comparator)}
    return sides == {"__name__", "__main__"}


def evaluated_by(stmt: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The expressions `stmt` evaluates whenever it runs, before any body of its own."""
    if isinstance(stmt, (cst.Expr, cst.Assign, cst.AugAssign)):
        roots = [stmt.value]
    elif isinstance(stmt, (cst.AnnAssign, cst.Return)):
        roots = [stmt.value] if stmt.value is not None else []
    elif isinstance(stmt, (cst.If, cst.While)):
        roots = [stmt.test]
    elif isinstance(stmt, cst.For):
        roots = [stmt.iter]
    elif isinstance(stmt, cst.With):
        roots = [item.item for item in stmt.items]
    elif isinstance(stmt, cst.ClassDef):
        roots = [*(d.decorator for d in stmt.decorators), *(a.value for a in (*stmt.bases, *stmt.keywords))]
    elif isinstance(stmt, cst.FunctionDef):
        params = stmt.params
        roots = [*(d.decorator for d in stmt.decorators),
                 *(p.default for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.default is not None)]
    else:
        roots = []
    for root in roots:
        yield from _certain(root)


_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})


def certain_parts(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and the parts of it that evaluating it certainly evaluates (a comprehension's element is not among them:
    its iterable may be empty)."""
    return _certain(node)


def _certain(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and the parts of it that evaluating it certainly evaluates; the names it reads are among them (an
    attribute's name and a keyword's are not reads)."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        kind = type(node)  # `is` on the exact class: none of these is subclassed, and `isinstance` against libcst's
        # classes goes through their ABC metaclass, a Python call per node
        if kind is cst.Lambda:
            continue
        if kind in _COMPREHENSIONS:
            stack.append(node.for_in.iter)
        elif kind is cst.IfExp:
            stack.append(node.test)
        elif kind is cst.BooleanOperation:
            stack.append(node.left)
        elif kind is cst.Attribute or kind is cst.Arg:
            stack.append(node.value)
        else:
            stack.extend(reversed(iter_children(node)))
