"""The constant folder behind Facts.value, the call-site arguments of parameters, and argparse defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import libcst as cst

from bertlint.facts.names import _same_symbol
from bertlint.facts.nodes import UNKNOWN, Call, Scope, literal, walk

if TYPE_CHECKING:
    from bertlint.facts.core import Facts


MAX_SEQ = 5_000_000  # give up on constant lists larger than this


# ---------------------------------------------------------------------------------------------
# the constant folder


class _Evaluator:
    def __init__(self, facts: Facts, scope: Scope, order: int | None, cli: bool):
        self.f = facts
        self.scope = scope
        self.order = order
        self.cli = cli

    def eval(self, node: cst.BaseExpression) -> Any:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            return UNKNOWN
        return method(node)

    def _sub(self, node, scope=None, order=None) -> Any:
        if scope is None:
            return self.eval(node)
        return self.f.value(node, scope, order=order, cli=self.cli)

    # literals
    def _Integer(self, node):
        return node.evaluated_value

    def _Float(self, node):
        return node.evaluated_value

    def _SimpleString(self, node):
        value = literal(node)
        return UNKNOWN if value is None else value

    _ConcatenatedString = _SimpleString

    def _FormattedString(self, node):
        return UNKNOWN

    def _Imaginary(self, node):
        return UNKNOWN

    def _seq(self, elements):
        out = []
        for element in elements:
            if isinstance(element, cst.StarredElement):
                inner = self.eval(element.value)
                if inner is UNKNOWN or not isinstance(inner, (list, tuple)):
                    return UNKNOWN
                out.extend(inner)
                continue
            value = self.eval(element.value)
            if value is UNKNOWN:
                return UNKNOWN
            out.append(value)
        return out

    def _List(self, node):
        return self._seq(node.elements)

    def _Tuple(self, node):
        seq = self._seq(node.elements)
        return UNKNOWN if seq is UNKNOWN else tuple(seq)

    def _Set(self, node):
        seq = self._seq(node.elements)
        return UNKNOWN if seq is UNKNOWN else set(seq)

    def _Dict(self, node):
        out = {}
        for element in node.elements:
            if isinstance(element, cst.StarredDictElement):
                inner = self.eval(element.value)
                if not isinstance(inner, dict):
                    return UNKNOWN
                out.update(inner)
                continue
            key = self.eval(element.key)
            if key is UNKNOWN:
                return UNKNOWN
            out[key] = self.eval(element.value)  # unknown values stay UNKNOWN per key
        return out

    def _UnaryOperation(self, node):
        value = self.eval(node.expression)
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
        if left is UNKNOWN:
            return UNKNOWN
        right = self.eval(node.right)
        if right is UNKNOWN:
            return UNKNOWN
        op = type(node.operator)
        if op is cst.Multiply and isinstance(left, (list, tuple, str)) and isinstance(right, int) or isinstance(right, (list, tuple, str)) and isinstance(left, int) and op is cst.Multiply:
            size = (len(left) * right) if isinstance(right, int) else (len(right) * left)
            if size > MAX_SEQ:
                return UNKNOWN
        if op is cst.Power and isinstance(right, (int, float)) and abs(right) > 64:
            return UNKNOWN
        ops = {
            cst.Add: lambda a, b: a + b,
            cst.Subtract: lambda a, b: a - b,
            cst.Multiply: lambda a, b: a * b,
            cst.Divide: lambda a, b: a / b,
            cst.FloorDivide: lambda a, b: a // b,
            cst.Modulo: lambda a, b: a % b if not isinstance(a, str) else UNKNOWN,
            cst.Power: lambda a, b: a**b,
        }
        fn = ops.get(op)
        if fn is None:
            return UNKNOWN
        if isinstance(left, bool) or isinstance(right, bool):
            return UNKNOWN
        return fn(left, right)

    def _Name(self, node):
        name = node.value
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        owner, events = self.f.binding_events(name, self.scope, self.order)
        if owner is None:
            return UNKNOWN
        if not events and name in owner.params:
            return self._param(owner, name)
        if not events:
            return UNKNOWN
        use_in_other_scope = owner is not self.scope
        relevant = events
        if any(e.conditional for e in relevant):
            return UNKNOWN
        if use_in_other_scope and any(e.op in ("assign",) for e in relevant[1:]) and len({self.f.text(e.value) if e.value is not None else "" for e in relevant if e.op == "assign"}) > 1:
            return UNKNOWN
        # start from the last plain assignment and apply the mutations after it
        start = max((i for i, e in enumerate(relevant) if e.op in ("assign", "for", "import", "def", "unpack", "param")), default=None)
        if start is None:
            return UNKNOWN
        first = relevant[start]
        if first.op != "assign" or first.value is None or first.index is not None:
            return UNKNOWN
        value = self._sub(first.value, owner, first.order)
        for event in relevant[start + 1 :]:
            if value is UNKNOWN:
                return UNKNOWN
            if event.loops != first.loops:
                return UNKNOWN
            arg = self._sub(event.value, owner, event.order) if event.value is not None else UNKNOWN
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

    def _param(self, owner: Scope, name: str):
        """A parameter's value: the one value every call site in this file passes (or the default)."""
        sources = param_arguments(self.f, owner, name)
        if sources is None:
            return UNKNOWN
        if not sources:
            default = owner.params[name].default
            if default is None or not self.cli:
                return UNKNOWN
            sources = [(default, owner.parent, None)]
        values = [self._sub(expr, scope, order) for expr, scope, order in sources]
        if any(v is UNKNOWN for v in values) or any(v != values[0] for v in values[1:]):
            return UNKNOWN
        return values[0]

    def _Subscript(self, node):
        if len(node.slice) != 1:
            return UNKNOWN
        base = self.eval(node.value)
        if base is UNKNOWN:
            return UNKNOWN
        index = node.slice[0].slice
        if isinstance(index, cst.Index):
            key = self.eval(index.value)
            if key is UNKNOWN:
                return UNKNOWN
            if isinstance(base, dict):
                return base.get(key, UNKNOWN)
            if isinstance(base, (list, tuple, str)) and isinstance(key, int):
                return base[key]
            return UNKNOWN
        if isinstance(index, cst.Slice) and isinstance(base, (list, tuple, str)):
            parts = [self.eval(p) if p is not None else None for p in (index.lower, index.upper, index.step)]
            if any(p is UNKNOWN for p in parts):
                return UNKNOWN
            return base[slice(*parts)]
        return UNKNOWN

    def _Attribute(self, node):
        base = node.value
        attr = node.attr.value
        defaults = self.f.argparse_defaults(base, self.scope, self.order)
        if defaults is not None:
            if not self.cli:
                return UNKNOWN
            expr_scope = defaults.get(attr)
            if expr_scope is None:
                return UNKNOWN
            expr, scope, order = expr_scope
            return self._sub(expr, scope, order) if expr is not None else None
        return UNKNOWN

    def _Call(self, node):
        call = self.f.call_of(node)
        if call is None:
            return UNKNOWN
        q = call.qualname
        if q in ("builtins.int", "builtins.float", "builtins.str", "builtins.round", "builtins.len", "builtins.min", "builtins.max", "builtins.abs", "builtins.sum", "builtins.bool", "builtins.list", "builtins.tuple", "builtins.sorted", "builtins.range"):
            if call.kwargs or call.has_star_args:
                return UNKNOWN
            args = [self.eval(a.value) for a in call.positional]
            if any(a is UNKNOWN for a in args):
                return UNKNOWN
            fn = {"int": int, "float": float, "str": str, "round": round, "len": len, "min": min, "max": max, "abs": abs, "sum": sum, "bool": bool, "list": list, "tuple": tuple, "sorted": sorted, "range": range}[q.split(".")[1]]
            if q == "builtins.range":
                result = range(*args)
                return result if len(result) <= MAX_SEQ else UNKNOWN
            return fn(*args)
        if q == "builtins.dict":
            if call.positional:
                return UNKNOWN
            return {k: self.eval(a.value) for k, a in call.kwargs.items()}
        if q in ("numpy.array", "numpy.asarray", "torch.tensor") and call.positional:
            return self.eval(call.positional[0].value)
        if call.method == "get" and call.receiver is not None and len(call.positional) in (1, 2):
            base = self.eval(call.receiver)
            if isinstance(base, dict):
                key = self.eval(call.positional[0].value)
                if key is UNKNOWN:
                    return UNKNOWN
                if key in base:
                    return base[key]
                return self.eval(call.positional[1].value) if len(call.positional) == 2 else None
        return UNKNOWN

    def _ListComp(self, node):
        """`[c for _ in range(n)]` with a constant element."""
        comp = node.for_in
        if comp.inner_for_in is not None or comp.ifs:
            return UNKNOWN
        iterable = self.eval(comp.iter)
        if iterable is UNKNOWN or not isinstance(iterable, (range, list, tuple)):
            return UNKNOWN
        inner_scope = self.f.scope_of(node.elt)
        if isinstance(comp.target, cst.Name) and comp.target.value in _names_in(node.elt):
            return UNKNOWN
        element = self.f.value(node.elt, inner_scope, cli=self.cli)
        if element is UNKNOWN:
            return UNKNOWN
        return [element] * len(iterable)

    def _IfExp(self, node):
        test = self.eval(node.test)
        if test is UNKNOWN:
            return UNKNOWN
        return self.eval(node.body if test else node.orelse)


def param_arguments(facts: Facts, owner: Scope, name: str) -> list[tuple[cst.BaseExpression, Scope, int | None]] | None:
    """(expression, scope, order) each call site of a plain function passes for a parameter, the default where a
    site omits it; [] when the file never calls it, None when a site is opaque (`*args`, no value)."""
    fn = owner.node
    if not isinstance(fn, cst.FunctionDef) or owner.parent is None or owner.parent.kind == "class":
        return None
    param = owner.params[name]
    params = list(fn.params.posonly_params) + list(fn.params.params)
    position = next((i for i, p in enumerate(params) if p is param), None)
    out = []
    for site in facts.calls_by_short.get(fn.name.value, ()):
        if site.method is not None or not isinstance(site.node.func, cst.Name):
            continue
        if site.has_star_args or site.has_double_star:
            return None
        arg = site.kwargs.get(name)
        if arg is None and position is not None and position < len(site.positional):
            arg = site.positional[position]
        if arg is not None:
            out.append((arg.value, site.scope, site.order))
        elif param.default is not None:
            out.append((param.default, owner.parent, None))
        else:
            return None
    return out


def _names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


# ---------------------------------------------------------------------------------------------
# argparse


def _argparse_defaults(facts: Facts, base: cst.BaseExpression, scope: Scope, order: int | None):
    """If `base` is `parser.parse_args()`'s result, map dest -> (default expr, scope, order)."""
    if not isinstance(base, cst.Name):
        return None
    owner, events = facts.binding_events(base.value, scope, order)
    if owner is None:
        return None
    events = events or owner.events.get(base.value, [])
    assigns = [e for e in events if e.op == "assign"]
    if not assigns or not isinstance(assigns[-1].value, cst.Call):
        return None
    call = facts.call_of(assigns[-1].value)
    if call is None or call.method not in ("parse_args", "parse_known_args"):
        return None
    if call.method == "parse_known_args" and assigns[-1].index not in (0, None):
        return None
    if _parser_call(facts, call.receiver, call.scope) is None:
        return None
    return facts.argparse_arguments


def _parser_call(facts: Facts, expr, scope) -> Call | None:
    """The `argparse.ArgumentParser(...)` call a name was bound to."""
    if not isinstance(expr, cst.Name):
        return None
    owner, _ = facts.binding_events(expr.value, scope)
    if owner is None:
        return None
    for event in reversed(owner.events.get(expr.value, [])):
        if event.op == "assign" and isinstance(event.value, cst.Call):
            call = facts.call_of(event.value)
            if call is not None and call.qualname and _same_symbol(call.qualname, "argparse.ArgumentParser"):
                return call
    return None


def _parser_arguments(facts: Facts) -> dict[str, tuple]:
    """dest -> (default expr or None, scope, order) for every `add_argument` in the file (groups included)."""
    out: dict[str, tuple] = {}
    for call in facts.calls:
        if call.method != "add_argument":
            continue
        flags = [facts.value(a.value, call.scope) for a in call.positional]
        if not flags or any(not isinstance(x, str) for x in flags):
            continue
        dest = facts.kw_value(call, "dest")
        if not isinstance(dest, str):
            longs = [x for x in flags if x.startswith("--")]
            dest = (longs[0] if longs else flags[0]).lstrip("-").replace("-", "_")
        default = call.kwargs.get("default")
        action = facts.kw_value(call, "action")
        if default is None:
            if action in ("store_true", "store_false"):
                out[dest] = (cst.Name("False" if action == "store_true" else "True"), call.scope, call.order)
            else:
                out[dest] = (None, call.scope, call.order)
        else:
            out[dest] = (default.value, call.scope, call.order)
    return out
