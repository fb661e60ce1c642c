"""The data model the walk records (scopes, binding events, calls, stores, classes), UNKNOWN, and tree helpers."""

from __future__ import annotations

import dataclasses
import functools
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NamedTuple

import libcst as cst


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False


UNKNOWN: Any = _Unknown()


class _Enter:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ENTER"


ENTER: Any = _Enter()  # a step of a target's path: what `with value as target` binds is `value.__enter__()`


@dataclass(frozen=True, repr=False, eq=False)
class Element:
    """A step of a target's path: the element `key` (an index; a slice for a starred target, always a list) of a value
    unpacked into `size` targets, which must have exactly `size` elements (at least `size - 1` with a starred one):
    `a, b = (x, y, z)` raises ValueError, and neither name is bound."""

    key: Any
    size: int
    starred: bool

    def fits(self, length: int) -> bool:
        return length >= self.size - 1 if self.starred else length == self.size


# ---------------------------------------------------------------------------------------------
# the data model


@dataclass(repr=False, eq=False)
class Scope:
    """A module, function or class body: where names are bound."""

    kind: str  # "module" | "function" | "class" | "lambda"
    node: cst.CSTNode | None
    parent: Scope | None
    name: str = ""
    events: dict[str, list[Event]] = field(default_factory=dict)
    params: dict[str, cst.Param] = field(default_factory=dict)
    globals_: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    at: int = 0  # a lambda's or comprehension's: the order where it sits in its parent scope
    loops: tuple[cst.CSTNode, ...] = ()  # ... and the loops of that scope around it

    @property
    def module(self) -> Scope:
        """The module scope this scope is in (the file's, or a project module's)."""
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def lookup_scope(self, name: str) -> Scope | None:
        scope: Scope | None = self
        while scope is not None:
            if scope.kind != "class" or scope is self:
                if name in scope.events or name in scope.params:
                    return scope
            scope = scope.parent
        return None


@dataclass(repr=False, eq=False)
class Event:
    """An assignment or a mutation of a name, in source order."""

    order: int
    op: str  # "assign" | "append" | "extend" | "augadd" | "augmul" | "unpack" | "for" | "import" | "def" | "setitem" | "update" (`d.update(...)` or `d.setdefault(...)`, a statement)
    value: cst.CSTNode | None
    conditional: bool  # inside an if/for/while/try/with-less branch of its scope
    loops: tuple[cst.CSTNode, ...]  # loops of its own scope that enclose it
    index: int | None = None  # position in a flat tuple unpacking whose value is not a display
    whole: cst.CSTNode | None = None  # for assign/for: the value assigned or the iterable looped over, whole
    path: tuple = ()  # where the name sits in the target: positions (negative after a starred one) and slices
    guards: tuple[Guard, ...] = ()  # why it may not run, outermost first (empty when not `conditional`)


@dataclass(repr=False, eq=False)
class Guard:
    """A region of a scope whose code may not run: an arm of an `if` chain, a loop's body, or another (`try`, `match`,
    a loop's `else`, an operand of `and`/`or`, a binding from another scope). Its code's orders lie in (start, end]."""

    kind: str  # "if" | "loop" | "other"
    node: cst.CSTNode | None = None  # the If of the arm, the For or While
    start: int = 0
    end: int = 0
    at: int = 0  # the order its tests (an if chain's, a while's on entry) and a for's iterable are read at
    tests: tuple = ()  # an arm: the tests of the chain up to it
    orelse: bool = False  # an arm: the `else` (taken when every test is false)


class Definition(NamedTuple):
    """The expression a name stands for, with the scope and position it is evaluated at (its assignment's)."""

    value: cst.BaseExpression
    scope: Scope
    order: int | None


class Variable(NamedTuple):
    """A name bound in the module or in one of the file's functions."""

    scope: Scope
    name: str
    assigned: bool  # some binding of it is an assignment
    after: int  # a position just after its last binding: where its final value is read
    written: tuple  # what each binding binds, as written (an assigned or appended value, a loop's iterable; None)


@dataclass(repr=False, eq=False)
class Call:
    """A call expression with what we could resolve about its callee."""

    node: cst.Call
    qualname: str | None  # "transformers.Trainer", "torch.optim.AdamW", "builtins.print" or None
    method: str | None  # the attribute name when the callee is `<expr>.method`
    receiver: cst.BaseExpression | None  # the `<expr>` of `<expr>.method(...)`
    scope: Scope
    stmt: cst.CSTNode  # the enclosing statement (suppression comments and positions)
    order: int
    loops: tuple[cst.CSTNode, ...]  # enclosing for/while loops, outermost first
    in_with: tuple[cst.With, ...]  # enclosing `with` statements, outermost first
    function: cst.FunctionDef | None
    conditional: bool = False

    @functools.cached_property
    def kwargs(self) -> dict[str, cst.Arg]:
        return {a.keyword.value: a for a in self.node.args if a.keyword is not None}

    @functools.cached_property
    def positional(self) -> list[cst.Arg]:
        return [a for a in self.node.args if a.keyword is None and not a.star]

    @property
    def has_star_args(self) -> bool:
        return any(a.star for a in self.node.args)

    @property
    def has_double_star(self) -> bool:
        return any(a.star == "**" for a in self.node.args)

    def arg(self, index: int, keyword: str | None = None) -> cst.Arg | None:
        """The argument passed for the parameter at `index` (positional) or named `keyword`, or None: a positional
        before any `*args` is that positional (`from_pretrained(name, **kw)` passes `name`); only keywords may hide in
        `**kwargs`, and every position from a `*args` on."""
        if keyword is not None and keyword in self.kwargs:
            return self.kwargs[keyword]
        pos = self.fixed_positional
        return pos[index] if 0 <= index < len(pos) else None

    @functools.cached_property
    def fixed_positional(self) -> list[cst.Arg]:
        """The positional arguments before any `*args`: their positions are known."""
        out = []
        for a in self.node.args:
            if a.star == "*":
                break
            if a.keyword is None and not a.star:
                out.append(a)
        return out

    @property
    def short(self) -> str | None:
        return self.qualname.rsplit(".", 1)[-1] if self.qualname else self.method


@dataclass(repr=False, eq=False)
class Store:
    """An item or attribute assignment: `target` (a Subscript or an Attribute) `= value`."""

    target: cst.BaseExpression
    value: cst.BaseExpression
    scope: Scope
    order: int
    function: cst.FunctionDef | None

    @property
    def key(self) -> str | None:
        """The attribute name, or the literal string key of `x["key"]`."""
        if isinstance(self.target, cst.Attribute):
            return self.target.attr.value
        index = self.target.slice[0].slice if len(self.target.slice) == 1 else None
        return literal(index.value) if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) else None


@dataclass(repr=False, eq=False)
class ClassDef:
    """A class the file defines: its node, name, resolved bases, methods and scope."""

    node: cst.ClassDef
    name: str
    bases: tuple[str, ...]  # qualified names of the bases we could resolve
    methods: dict[str, cst.FunctionDef]
    scope: Scope


# ---------------------------------------------------------------------------------------------
# the walk


_SKIP_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "semicolon", "colon", "equal", "dot", "star", "header", "footer",
        "leading_lines", "lines_after_decorators", "trailing_whitespace", "operator", "asynchronous",
        "whitespace_before", "whitespace_after", "whitespace_after_func", "whitespace_before_args",
        "whitespace_after_arg", "whitespace_after_star", "whitespace_after_param", "whitespace_before_colon",
        "whitespace_after_def", "whitespace_after_name", "whitespace_before_params", "whitespace_after_for",
        "whitespace_before_in", "whitespace_after_in", "whitespace_after_class", "whitespace_after_if",
        "whitespace_after_while", "whitespace_after_with", "whitespace_after_import", "whitespace_after_from",
        "whitespace_before_import", "whitespace_after_return", "whitespace_after_indicator",
        "whitespace_before_equal", "whitespace_after_equal", "whitespace_after_del", "whitespace_after_assert",
        "whitespace_after_lambda", "whitespace_before_from", "whitespace_after_raise", "whitespace_after_except",
        "whitespace_before_walrus", "whitespace_after_walrus", "whitespace_after_await", "whitespace_after_cls",
        "whitespace_after_type_parameters", "whitespace_after_at", "whitespace_before_expression",
        "whitespace_before_value", "whitespace_after_value", "whitespace_after_yield",
    }
)


class ByType(dict):
    """An answer per type, computed on first sight (`ByType(lambda t: issubclass(t, cst.Call))[type(node)]`): an
    `isinstance` against libcst's node classes goes through their ABC metaclass, a Python call each time (about ten
    times a dict lookup), and the walks ask it of every node."""

    def __init__(self, answer: Callable[[type], Any]):
        super().__init__()
        self.answer = answer

    def __missing__(self, node_type: type) -> Any:
        value = self[node_type] = self.answer(node_type)
        return value


# Read off the type's MRO: `issubclass` of a type that is no node (str, tuple, None, MaybeSentinel: most of a node's
# fields) goes through ABCMeta, which asks every one of libcst's ~200 node classes in turn (~0.5 ms per such type, once
# per run). libcst registers no virtual subclass of CSTNode, so the answer is the same.
_IS_NODE = ByType(lambda t: cst.CSTNode in t.__mro__)
_IS_ATTRIBUTE = ByType(lambda t: issubclass(t, cst.Attribute))
_IS_NAME = ByType(lambda t: issubclass(t, cst.Name))
# The fields of a node type that can hold code (whitespace and punctuation skipped).
_CHILD_FIELDS = ByType(lambda t: tuple(f.name for f in dataclasses.fields(t) if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")))


def iter_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Children that can hold code (whitespace and punctuation skipped), in order: cheaper than node.children. A list
    built in one call, not a generator: the walks ask it of every node, several times per file."""
    out = []
    for name in _CHILD_FIELDS[type(node)]:
        value = getattr(node, name)
        if _IS_NODE[type(value)]:
            out.append(value)
        elif isinstance(value, (tuple, list)):
            out.extend([item for item in value if _IS_NODE[type(item)]])
    return out


def literal(node: cst.BaseExpression) -> Any:
    """The value of a string literal; None for anything else. An invalid escape like `"\\d"` makes the
    evaluation warn about the user's code, which is not ours to print, so that warning is silenced; an
    escape CPython refuses (`"\\N{bogus}"`) raises SyntaxError, which the engine reports as BL901."""
    if not isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return None
    if "\\" not in (node.value if isinstance(node, cst.SimpleString) else "\\"):
        return node.evaluated_value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return node.evaluated_value


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every code-bearing node under `node`, depth first, in source order."""
    stack = [node]
    pop, extend = stack.pop, stack.extend
    while stack:
        current = pop()
        yield current
        children = iter_children(current)
        if children:
            children.reverse()
            extend(children)


def dotted(expr: cst.BaseExpression | None) -> str | None:
    """`a.b.c` for Name/Attribute chains, else None."""
    parts = []
    while _IS_ATTRIBUTE[type(expr)]:
        parts.append(expr.attr.value)
        expr = expr.value
    if _IS_NAME[type(expr)]:
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def names_in(node: cst.CSTNode) -> set[str]:
    """Every name used under `node`."""
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}
