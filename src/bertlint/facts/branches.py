"""Branches a line runs under that the file's own values do not take.

A statement in the body of `if TEST:` runs only where TEST is true; one in its `elif`/`else` only where it is false.
Where the value layer knows TEST as a bool from the file alone (constants, the defaults of its command-line options:
`if args.optimizer == "adamw":` under `add_argument("--optimizer", default="adafactor")`, its configuration dicts),
the line does not run in the file as written. A test the value layer does not know says nothing, and so does a test
that reads a name the branch itself rebinds (its value at the `if` is not the one at the line).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.nodes import UNKNOWN, walk
from bertlint.facts.values import Values

# the targets a statement binds names with: assignments, augmented and annotated ones, loops, `with ... as`, `:=`
_BINDERS = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem, cst.NamedExpr)


def not_taken(facts: Values, node: cst.CSTNode, cli: bool = True) -> bool:
    """An `if`/`elif`/`else` arm around `node` that the file's own values do not take (`cli=False`: a command-line or
    environment default does not decide it, the user picks another at run time: `--ds_name boolq`)."""
    stmt = facts.statement_of(node)
    scope, target = facts.scope_of(node), stmt
    for around in reversed(facts.enclosing(stmt)):  # innermost first
        if isinstance(around, cst.If) and (arm := _arm(around, target)) is not None and _test(facts, around, scope, cli) is (not arm):
            return True
        target = around
    return False


def taken_arm(facts: Values, node: cst.If, cli: bool = True) -> tuple | None:
    """The statements of the arm of the `if` chain `node` that the file's own values take (with `cli`, the defaults of
    its command-line options too: the run as written, given no option), `()` where no arm is, None where a test on the
    way is not known."""
    scope = facts.scope_of(node)
    current: cst.CSTNode | None = node
    while isinstance(current, cst.If):
        value = _test(facts, current, scope, cli)
        if value is True:
            return tuple(current.body.body) if isinstance(current.body, cst.IndentedBlock) else None
        if value is not False:
            return None
        current = current.orelse.body if isinstance(current.orelse, cst.Else) else current.orelse
    return () if current is None else tuple(current.body) if isinstance(current, cst.IndentedBlock) else None


def _test(facts: Values, node: cst.If, scope, cli: bool) -> Any:
    """The value of `node`'s test where the `if` runs: read at its first call (every binding the `if` makes comes at or
    after it); UNKNOWN where the `if` makes no call, or its test reads a name it rebinds (its value at the `if` is not
    the one at a line inside)."""
    orders = [c.order for c in facts.calls_in(node)]
    if not orders or _read(node.test) & _rebound(node):
        return UNKNOWN
    return facts.value(node.test, scope, order=min(orders), cli=cli)


def _arm(node: cst.If, target: cst.CSTNode) -> bool | None:
    """True where `target` sits in the body, False in the `elif`/`else`, None where neither holds it."""
    if any(n is target for n in walk(node.body)):
        return True
    if node.orelse is not None and any(n is target for n in walk(node.orelse)):
        return False
    return None


def _rebound(node: cst.If) -> set[str]:
    """The names the `if` statement binds anywhere inside it (its arms included)."""
    out: set[str] = set()
    for n in walk(node):
        if isinstance(n, _BINDERS):
            bound = n.asname if isinstance(n, cst.WithItem) else n.target
            if bound is not None:
                out |= _read(bound)
    return out


def _read(node: cst.CSTNode) -> set[str]:
    """The names under `node`, less the attribute names (`args.optimizer` reads `args`)."""
    attrs = {id(n.attr) for n in walk(node) if isinstance(n, cst.Attribute)}
    return {n.value for n in walk(node) if isinstance(n, cst.Name) and id(n) not in attrs}
