"""The abstract values the evaluator gives, and how several sources of one value agree.

A value is a Python constant, one of the `Abstract` values here, or `UNKNOWN` (the one sentinel every consumer
treats as "say nothing"). Where sources give different objects of one kind (a helper's call sites, a branch's arms)
the value is their join: a `Binding` of that kind with no call, holding the objects it may be; a question a rule asks
of it (padded? on which side?) has the answer all of them give (`shared`, `each`), else none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import libcst as cst

from bertlint.facts.nodes import UNKNOWN, Call, Scope

MAX_SEQ = 5_000_000  # give up on constant lists larger than this
MAX_DEPTH = 3  # nested calls of the file's own functions evaluated for their arguments
MAX_JOINED = 8  # objects a join holds; more: an object of that kind, which one unknown


class Abstract:
    """A value that is no constant: consumers asking for a constant read it as UNKNOWN."""

    __slots__ = ()


@dataclass(repr=False, eq=False)
class Binding(Abstract):
    """An object the rules care about, and where it came from."""

    kind: str  # tokenizer | model | config | encoding | ids | optimizer | accelerator | gradient_tape | loss | trainer | training_args | dataloader | dataloader_item | dataset | tf_dataset | module | collator | generated | output
    call: Call | None = None  # the call that made it (the tokenizer call of an encoding, the load of a model)
    parent: Binding | None = None  # the encoding an `ids` binding came from, the model a wrapper wraps
    detail: Any = ""  # for ids: which key ("input_ids", "labels", ...) or how padded; for a model: the wrapper ("peft")
    joined: tuple[Binding, ...] = ()  # a join (`agree`): the objects of this kind it may be, none certain; no call, parent or detail


@dataclass(repr=False, eq=False)
class Instance(Abstract):
    """An object a library model or the file's own class describes, that no rule asks for by kind: `instance` (of a
    class of the file), `parser` and `namespace` (a command line), `table`, `column`, `hub_dataset`, `texts`, `pad_id` (a
    tokenizer's `pad_token_id`), `tensor` (one the file makes itself: `torch.randn`, `nn.Parameter`), `key` (a str, one
    of a mapping's keys that unpacking it gives), `index` (`INDEX`)."""

    kind: str
    call: Call | None
    detail: Any = None  # the ClassDef of an instance; the dataclass of a parsed namespace


@dataclass(frozen=True, repr=False)
class Pack(Abstract):
    """A tuple or list known element by element (at least one element is no constant)."""

    items: tuple


@dataclass(frozen=True, repr=False)
class Record(Abstract):
    """A dict display known key by key (at least one value is an object): `{"model": model, "lr": 1e-5}`."""

    items: tuple  # (key, value) pairs


@dataclass(frozen=True, repr=False)
class Choice(Abstract):
    """One of a few constants (str, int, float, bool or None), each the value on some path: a parameter's call sites
    that pass different constants (`encode(texts)` and `encode(texts, kind="roberta")`). An operator applied to it is
    applied to each (`kind == "electra"` is False whichever it is); a consumer asking for one constant reads UNKNOWN."""

    values: tuple  # at least two, at most MAX_JOINED, no two equal and of one type


SCALARS = (str, int, float, bool, type(None))


@dataclass(repr=False, eq=False)
class Series(Abstract):
    """An iterable every element of which holds `element` (`enumerate(loader)`, `zip(a, b)`)."""

    element: Any


@dataclass(repr=False, eq=False)
class Unfinished(Abstract):
    """A list read part-way through the loop pass that appended its last element and is replacing it (`xs.append(a)`
    then `xs[-1] = f(xs[-1])`): its last element holds `last`; of the others (earlier passes') nothing is said."""

    last: Any


@dataclass(repr=False, eq=False)
class Frame:
    """A call of one of the file's own functions, its parameters bound to the call's arguments."""

    function: cst.FunctionDef | cst.Lambda
    args: dict[str, tuple[cst.BaseExpression, Scope, int | None] | None]  # parameter -> (argument, its scope, its order); None: hidden in *args/**kwargs
    caller: Frame | None
    depth: int
    site: Call | None = None  # the call it stands for (where the function runs); None for a function handed along
    closure: Frame | None = None  # for a function called as a value (`Function`): the frame of the function around it
    closed: bool = False  # `closure` is the lexical parent's frame (else the caller is: the function runs inside it)
    reader: Any = None  # the evaluation whose code `args` are (an importer calling a function of a project module); None: the function's own


@dataclass(frozen=True, repr=False)
class Function(Abstract):
    """A function as a value (a `def`'s name, a lambda, `functools.partial(fn, ...)`; the file's own or a project
    module's, `home`): its definition,
    the frame of the call of the function around it that made it (what its free names read), and the
    `functools.partial` calls whose arguments come before those of a call (outermost last)."""

    fn: cst.FunctionDef | cst.Lambda
    closure: Frame | None = None
    partials: tuple[Call, ...] = ()
    home: Any = None  # the evaluation of the module that defines it (the file's, or a project module's: `project`)


class _Answer:
    """A sentinel of the library models' protocol (`brain/__init__.py`), falsy like UNKNOWN."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __bool__(self) -> bool:
        return False


# A hook answers None for what is not its library's; `NONE` is its answer "the value None" (`os.environ.get(k, None)`,
# an argparse option without a default). `Evaluation.ask` gives the value None for `NONE`, and `UNANSWERED` where no
# library model answers.
NONE: Any = _Answer("NONE")
# An int of no known value that is some position of the object it indexes: the index a sampler hands a map-style
# dataset's `__getitem__` (`brain/data`). A list's item there is what every element holds.
INDEX = Instance("index", None)


def is_index(key: Any) -> bool:
    return isinstance(key, Instance) and key.kind == "index"
UNANSWERED: Any = _Answer("UNANSWERED")


def answer(value: Any) -> Any:
    """A hook's answer for `value`: `NONE` for the value None."""
    return NONE if value is None else value


# RecursionError: an expression nested deeper than the interpreter's stack (500 chained calls) is unknown, the file
# still analysed.
FAILURES = (ArithmeticError, TypeError, ValueError, IndexError, KeyError, AttributeError, OverflowError, RecursionError, MemoryError, SyntaxError)


# kinds that stay known without their objects when a join cannot hold them (one of them is itself of unknown
# provenance, or there are more than `MAX_JOINED`): a helper called with models is called with a model. Other kinds'
# joins are then unknown.
KIND_ONLY = frozenset({"model", "module", "optimizer", "accelerator", "tf_dataset", "tokenizer"})


def agree(found: list, choice: bool = False) -> Any:
    """The one value every source gives, else UNKNOWN: constants equal, objects the same object (made by the same
    call, the same key of the same parent), other abstract values equal; objects of one kind join (`join`). `choice`:
    the sources are every path there is (every call site of a function), so scalar constants that differ are a
    `Choice` of them (at most MAX_JOINED)."""
    if not found or any(v is UNKNOWN for v in found):
        return UNKNOWN
    if choice and all(isinstance(v, (Choice, *SCALARS)) for v in found):
        return one_of(found)
    first = found[0]
    if isinstance(first, Binding):
        if all(isinstance(v, Binding) and same_object(v, first) for v in found[1:]):
            return first
        if all(isinstance(v, Binding) and v.kind == first.kind for v in found[1:]):
            return join(found)
        return UNKNOWN
    if isinstance(first, Abstract):
        if all(v is first or v == first for v in found[1:]):
            return first
        return _agree_items(found) if isinstance(first, Pack) else UNKNOWN
    if all(not isinstance(v, Abstract) and v == first and type(v) is type(first) for v in found[1:]):
        return first
    return _agree_items(found) if isinstance(first, (tuple, list)) else UNKNOWN


def one_of(found: list) -> Any:
    """The constant all of `found` (scalar constants and `Choice`s) are, a `Choice` of them, or UNKNOWN past
    MAX_JOINED."""
    members: list = []
    for value in found:
        for member in value.values if isinstance(value, Choice) else (value,):
            if not any(type(m) is type(member) and m == member for m in members):
                members.append(member)
    if len(members) == 1:
        return members[0]
    return Choice(tuple(members)) if len(members) <= MAX_JOINED else UNKNOWN


def members(value: Any) -> tuple | None:
    """The constants `value` may be: itself, each of a `Choice`, None for anything else (an object, UNKNOWN)."""
    if isinstance(value, Choice):
        return value.values
    return None if value is UNKNOWN or isinstance(value, Abstract) else (value,)


def join(found: list[Binding]) -> Binding:
    """Objects of one kind that several sources give (a helper's call sites, a branch's arms): an object of that kind
    with no call, so that what depends on which one it is stays unknown, holding the objects it may be (up to
    `MAX_JOINED`), of which `shared` asks what they all have (ids padded by each of two loaders are padded ids)."""
    members: list[Binding] = []
    for value in found:
        for member in value.joined or (value,):
            if not any(same_object(member, seen) for seen in members):
                members.append(member)
    kind = found[0].kind
    if any(m.call is None for m in members) or len(members) > MAX_JOINED:  # an object of the kind, which one unknown
        return Binding(kind) if kind in KIND_ONLY else UNKNOWN
    return Binding(kind, joined=tuple(members))


def shared(binding: Binding, question: Callable[[Binding], Any]) -> Any:
    """`question` asked of an object: of a join, the answer every object it may be gives, else None (unknown)."""
    answers = each(binding, question)
    return answers[0] if answers and all(a == answers[0] for a in answers) else None


def each(binding: Binding, question: Callable[[Binding], Any]) -> list | None:
    """`question`'s answer for every object `binding` may be (itself, or each object of a join), or None when one of
    them answers None (unknown)."""
    answers = [question(member) for member in binding.joined or (binding,)]
    return None if any(a is None for a in answers) else answers


def _agree_items(found: list) -> Any:
    """Sequences of one length agree element by element (`(0, enc)` and `(1, enc)`: a pair whose second is enc)."""
    rows = [v.items if isinstance(v, Pack) else v for v in found]
    if not all(isinstance(r, (tuple, list)) and len(r) == len(rows[0]) for r in rows):
        return UNKNOWN
    return Pack(tuple(agree([r[i] for r in rows]) for i in range(len(rows[0]))))


def same_object(a: Binding | None, b: Binding | None) -> bool:
    """Two bindings of one object: the same kind made by the same call, the same key of the same parent (joins: the
    same objects)."""
    if a is b:
        return True
    if a is None or b is None:
        return False
    if a.joined or b.joined:
        return a.kind == b.kind and len(a.joined) == len(b.joined) and all(any(same_object(x, y) for y in b.joined) for x in a.joined)
    return a.kind == b.kind and a.call is b.call and a.detail == b.detail and same_object(a.parent, b.parent)


def constant(value: Any) -> Any:
    return UNKNOWN if isinstance(value, Abstract) else value
