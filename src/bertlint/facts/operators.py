"""Constants, displays and operators: literals, f-strings, list/tuple/set/dict displays (starred elements spread),
unary and binary operators, comparisons, `and`/`or` and conditional expressions on constants, lambdas."""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import MAX_JOINED, MAX_SEQ, SCALARS, UNANSWERED, Abstract, Choice, Pack, Record, Series, agree, members, one_of
from bertlint.facts.nodes import UNKNOWN, literal
from bertlint.facts.strings import formatted


class Operators:
    """The evaluator's literals, displays and operators (mixed into `Evaluator`)."""

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
        return self._each(lambda value: unary(type(node.operator), value), node.expression)

    def _BinaryOperation(self, node):
        left = self.eval(node.left)
        if isinstance(node.operator, cst.Add) and isinstance(left, (Pack, Series, list, tuple)):
            joined = concatenated(left, self.eval(node.right))
            if joined is not None:
                return joined
        if isinstance(left, Abstract) and not isinstance(left, Choice):  # `ids + [pad_id] * (n - len(ids))`: what a library model says
            found = self.f.ask("operation", self, left, node.operator, node.right)
            return UNKNOWN if found is UNANSWERED else found
        return self._each(lambda a, b: binary(type(node.operator), a, b), left, node.right)

    def _Comparison(self, node):
        """`len(x) == 1`, `mode in ("a", "b")`, `x is None`: on constants (`is` on None, True and False alone)."""
        operators = [type(target.operator) for target in node.comparisons]
        return self._each(lambda *values: compare(values, operators), node.left, *(t.comparator for t in node.comparisons))

    def _each(self, operation, *operands) -> Any:
        """`operation` of the operands' constants (a node is evaluated; a `Choice` is each of its constants in turn):
        the one result, a `Choice` of the results, or UNKNOWN (an operand not constant, too many combinations, a
        combination that raises or gives no scalar)."""
        options = [members(op if not isinstance(op, cst.CSTNode) else self.eval(op)) for op in operands]
        if any(o is None for o in options):
            return UNKNOWN
        combinations = [()]
        for option in options:
            combinations = [(*c, value) for c in combinations for value in option]
            if len(combinations) > MAX_JOINED:
                return UNKNOWN
        if len(combinations) == 1:
            return operation(*combinations[0])
        results = []
        for values in combinations:
            try:
                results.append(operation(*values))
            except Exception:  # the combination raises where the program runs it: no value to join
                return UNKNOWN
        return one_of(results) if all(isinstance(r, (Choice, *SCALARS)) for r in results) else UNKNOWN

    def _BooleanOperation(self, node):
        """`a and b`, `a or b`: the operand Python returns, when the left one's truth is known (a `Choice` whose
        constants are all true, or all false)."""
        left = self.eval(node.left)
        truth = _truth(left)
        if truth is None:
            return UNKNOWN
        return left if truth == isinstance(node.operator, cst.Or) else self.eval(node.right)

    def _IfExp(self, node):
        truth = _truth(self.eval(node.test))
        if truth is None:
            return UNKNOWN
        return self.eval(node.body if truth else node.orelse)

    def _Lambda(self, node):
        return self.function_value(node, self.scope)


def _truth(value: Any) -> bool | None:
    """The truth of a constant, or of every constant a `Choice` may be when they agree; None otherwise."""
    found = members(value)
    truths = {bool(v) for v in found} if found is not None else set()
    return truths.pop() if len(truths) == 1 else None


def unary(op: type, value: Any) -> Any:
    """`-value`, `+value`, `not value` on a constant; UNKNOWN for `~`."""
    if op is cst.Minus:
        return -value
    if op is cst.Plus:
        return +value
    if op is cst.Not:
        return not value
    return UNKNOWN


def compare(values: tuple, operators: list[type]) -> Any:
    """A chained comparison of constants as Python runs it (`a < b < c`); `is` only on None, True and False."""
    for left, right, op in zip(values, values[1:], operators):
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
    return True


def binary(op: type, left: Any, right: Any) -> Any:
    """`left <op> right` on constants, as Python computes it (a TypeError is the caller's to catch); UNKNOWN for an
    operator not modelled, a bool operand, a repeated sequence too long or a power too large."""
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


def concatenated(left: Any, right: Any) -> Any:
    """`left + right` of two sequences, one of them known element by element (`Pack`) or an iterable every element of
    which holds one value (`Series`): a list or tuple of both one's elements (where the two are not of one type Python
    raises, and nothing after runs); None where neither is such (constants: `binary`)."""
    if not any(isinstance(side, (Pack, Series)) for side in (left, right)):
        return None
    sides = [side.items if isinstance(side, Pack) else side for side in (left, right)]
    if all(isinstance(side, (tuple, list)) for side in sides):
        return Pack((*sides[0], *sides[1]))
    if not all(isinstance(side, (tuple, list, Series)) for side in sides):
        return UNKNOWN
    element = agree([e for side in sides for e in ((side.element,) if isinstance(side, Series) else side)])
    return Series(element) if element is not UNKNOWN else UNKNOWN


def augmented(op: str, value: Any, arg: Any) -> Any:
    """`value += arg` (op "augadd") / `value *= arg` ("augmul") on constants as Python runs them: a list changed in
    place (`+=` extends it by the elements of any list, tuple or string, `*=` repeats it), any other value (a tuple, a
    string, a number) replaced by the binary operator's result."""
    if op == "augadd" and isinstance(value, list):
        return value + list(arg) if isinstance(arg, (list, tuple, str)) else UNKNOWN
    return binary({"augadd": cst.Add, "augmul": cst.Multiply}[op], value, arg)


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
