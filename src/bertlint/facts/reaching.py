"""Which bindings of a name may reach a read of it, the way Python runs a scope's statements.

Walking back from the read, every event of the name counts until one that surely ran (relative to the read) binds it
anew; an event surely ran when each region it sits in (`nodes.Guard`) also holds the read, or is surely entered: an
arm of an `if` chain whose tests are constants that take it, a loop over a known non-empty iterable (or a `while`
whose test is true on entry) that has no `break` or `continue`. An event in an arm the constants never take, or in a
loop over an empty iterable, never runs and is left out. A read inside a loop is also reached, through the loop's
back edge, by the events after it in that loop (its own statement's binding too: `x = x + 1`), unless a binding that surely ran in the loop comes before it.
Tests and iterables are read without command-line and environment defaults (`cli=False`): a flag a run may set
decides no branch.

A read from another scope (a function reading a global), or at no known order, comes after every event.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import Abstract, Pack
from bertlint.facts.nodes import UNKNOWN, Event, Guard, Scope, iter_children, walk

# the events that bind a name anew (the others change the object it holds)
BINDS = frozenset({"assign", "for", "import", "def"})

DEAD, SURE, MAYBE = "dead", "sure", "maybe"


_OWN_EXITS = frozenset({cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda})  # whose `break`s are not the enclosing loop's


class Reaching:
    """The reaching bindings of one file's reads; `f` evaluates the tests and iterables of the regions."""

    def __init__(self, f: Any):
        self.f = f
        self._exits: dict[int, bool] = {}

    def events(self, ev: Any, owner: Scope, events: list[Event], order: int | None) -> tuple[list[tuple[Event, bool]], list[Event]]:
        """(the events before the read that may reach it, latest first, each with whether it surely ran; the last is
        the binding that surely ran, when one does), (the events reaching it through a loop's back edge)."""
        straight: list[tuple[Event, bool]] = []
        stop: Event | None = None
        for event in reversed([e for e in events if order is None or e.order < order]):
            status = self.status(ev, owner, event, order)
            if status == DEAD:
                continue
            straight.append((event, status == SURE))
            if status == SURE and event.op in BINDS:
                stop = event
                break
        back = []
        if order is not None:
            for event in events:
                if event.order >= order and any(g.kind == "loop" and _holds(g, order) and (stop is None or stop.order <= g.start) for g in event.guards):
                    if all(self.guard(ev, owner, g, event) != DEAD for g in event.guards):
                        back.append(event)
        return straight, back

    def status(self, ev: Any, owner: Scope, event: Event, order: int | None) -> str:
        """Whether `event` ran before a read at `order`: surely, maybe, or never (dead)."""
        found = SURE
        for guard in event.guards:
            if order is not None and _holds(guard, order):
                continue
            status = self.guard(ev, owner, guard, event)
            if status == DEAD:
                return DEAD
            if status == MAYBE:
                found = MAYBE
        return found

    def guard(self, ev: Any, owner: Scope, guard: Guard, event: Event) -> str:
        """Whether the code of `guard`'s region runs (`event` in it: a loop's own target runs before any `break`)."""
        if guard.kind == "if":
            return self._arm(ev, owner, guard)
        if guard.kind != "loop":
            return MAYBE
        node = guard.node
        if isinstance(node, cst.For):
            size = length(self.f.evaluate(node.iter, owner, guard.at, cli=False, frame=ev.frame))
            entered = UNKNOWN if size is UNKNOWN else size > 0
        else:
            entered = truth(self.f.evaluate(node.test, owner, guard.at, cli=False, frame=ev.frame))
        if entered is UNKNOWN:
            return MAYBE
        if not entered:
            return DEAD
        target = event.op == "for" and event.guards and event.guards[-1] is guard
        return SURE if target or not self.exits(node) else MAYBE

    def _arm(self, ev: Any, owner: Scope, guard: Guard) -> str:
        """An arm of an `if` chain: taken when the tests before it are false and its own true (an `else`: all false)."""
        found = SURE
        tests = guard.tests if guard.orelse else guard.tests[:-1]
        if any(isinstance(n, cst.NamedExpr) for t in guard.tests for n in walk(t)):
            return MAYBE  # a test binds a name the next test reads
        for test in tests:
            value = truth(self.f.evaluate(test, owner, guard.at, cli=False, frame=ev.frame))
            if value is True:
                return DEAD
            if value is UNKNOWN:
                found = MAYBE
        if not guard.orelse:
            value = truth(self.f.evaluate(guard.tests[-1], owner, guard.at, cli=False, frame=ev.frame))
            if value is False:
                return DEAD
            if value is UNKNOWN:
                found = MAYBE
        return found

    def exits(self, loop: cst.CSTNode) -> bool:
        """The loop's body has a `break` or `continue` of its own (nested loops and functions left out)."""
        if id(loop) not in self._exits:
            stack = list(iter_children(loop.body))
            found = False
            while stack and not found:
                node = stack.pop()
                kind = type(node)  # the exact class, as in `calls.return_values`: none of these is subclassed
                if kind is cst.Break or kind is cst.Continue:
                    found = True
                elif kind not in _OWN_EXITS:
                    stack.extend(iter_children(node))
            self._exits[id(loop)] = found
        return self._exits[id(loop)]


def _holds(guard: Guard, order: int) -> bool:
    return guard.start < order <= guard.end


def truth(value: Any) -> Any:
    """The truth of a constant (True/False), UNKNOWN for anything else."""
    if value is UNKNOWN or isinstance(value, Abstract):
        return UNKNOWN
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 - a constant whose truth Python refuses
        return UNKNOWN


def length(value: Any) -> Any:
    """How many elements iterating a known value yields, else UNKNOWN."""
    if isinstance(value, Pack):
        return len(value.items)
    if isinstance(value, (list, tuple, range, str, dict, set)):
        return len(value)
    return UNKNOWN
