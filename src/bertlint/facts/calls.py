"""Calls: a builtin folded or followed, a library call asked of the library models, the file's own functions
evaluated for a call: the frames that bind a call's arguments, what a call returns, what a parameter holds (the
argument of the call being evaluated, else what every call site passes, else its default). `CallFrames` is mixed into
the evaluator's per-file memo (`evaluator.Evaluation`), `Calls` into the evaluator."""

from __future__ import annotations

import functools
from typing import Any

import libcst as cst

from bertlint.facts import folding
from bertlint.facts.abstract import MAX_DEPTH, MAX_SEQ, UNANSWERED, Abstract, Frame, Function, Instance, Record, agree
from bertlint.facts.functions import ancestors, arguments, bind, callee, defined_at, frame_of, function_scope, inherited
from bertlint.facts.nodes import UNKNOWN, Call, ClassDef, Scope, iter_children
from bertlint.facts.project import NOT_LOOKED_FOR


_OWN_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})  # whose `return`s are not the enclosing function's


class CallFrames:
    """The frames and `return`s of the file's functions, found once per file."""

    @functools.cached_property
    def _frames(self) -> dict[tuple[int, int], Frame | None]:
        return {}

    @functools.cached_property
    def _returns(self) -> dict[int, list[cst.BaseExpression | None]]:
        return {}

    def return_values(self, fn: cst.FunctionDef | cst.Lambda) -> list[cst.BaseExpression | None]:
        """The values of the `return`s of `fn`'s own body (nested functions and classes left out; a lambda's body),
        found once."""
        if isinstance(fn, cst.Lambda):
            return [fn.body]
        if id(fn) not in self._returns:
            found = []
            stack = list(iter_children(fn.body))
            while stack:
                node = stack.pop()
                kind = type(node)  # the exact class: none of these is subclassed, and `isinstance` against libcst's
                # classes goes through their ABC metaclass, a Python call per node of the body
                if kind in _OWN_SCOPES:
                    continue
                if kind is cst.Return:
                    found.append(node.value)
                stack.extend(iter_children(node))
            self._returns[id(fn)] = found
        return self._returns[id(fn)]

    def partial_frame(self, partial: Call, fn: cst.FunctionDef) -> Frame:
        """`partial(collate, tok=tokenizer)` as a frame of `fn`: those arguments bound, the first left free."""
        key = (id(partial.node), 0)
        if key not in self._frames:
            params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)][1:]
            bound = dict(zip(params, partial.positional[1:]))
            bound.update(partial.kwargs)
            self._frames[key] = Frame(fn, {name: (arg.value, partial.scope, partial.order) for name, arg in bound.items()}, None, 1)
        return self._frames[key]

    def frame_for(self, call: Call, fn: cst.FunctionDef | cst.Lambda, method: bool, caller: Frame | None, partials: tuple[Call, ...] = (), made: Function | None = None) -> Frame | None:
        """The frame that evaluates `fn` for `call`'s arguments (one per call, caller and function value `made`; their
        `*`/`**` arguments spread as `passed` reads them in the caller's frame); None when they do not bind."""
        key = (id(call.node), id(caller), id(fn), id(made.closure) if made is not None else None, *map(id, partials))
        if key not in self._frames:
            closure = (made.closure, True) if made is not None else (None, False)
            reader = self if made is not None and made.home is not self else None  # a project module's function: this file's arguments
            self._frames[key] = bind(call, fn, method, caller, lambda site: self.passed(site, caller), partials, *closure, reader)
        return self._frames[key]


class Calls:
    """The evaluator's calls of the file's own functions, methods and classes, and its parameters."""

    def returned(self, call: Call) -> Any:
        """What the file's own function, method or class that `call` runs returns for these arguments."""
        target = callee(self.f, call, self.frame)
        if target is None:
            return UNKNOWN
        if isinstance(target, ClassDef):
            return Instance("instance", call, target)
        return self.run(target.fn, call, target.method, (target.partial,) if target.partial is not None else ())

    def run(self, fn: cst.FunctionDef | cst.Lambda, call: Call, method: bool, partials: tuple[Call, ...] = (), made: Function | None = None) -> Any:
        """What `fn` returns for `call`'s arguments (those of `partials` first; `made`: the function value called, whose
        free names are read in the frame that made it), when every `return` agrees; once per call, to a bounded depth."""
        depth = self.frame.depth + 1 if self.frame is not None else 1
        if depth > MAX_DEPTH:
            return UNKNOWN
        frame = self.f.frame_for(call, fn, method, self.frame, partials, made)
        if frame is None:
            return UNKNOWN
        home = made.home if made is not None else self.f  # a project module's function runs in its module
        fn_scope = function_scope(home, fn)
        found = [home.evaluate(value, fn_scope, None, cli=self.cli, frame=frame) if value is not None else None for value in home.return_values(fn)]
        if home is not self.f and any(isinstance(value, Instance) and value.kind in ("instance", "class") for value in found):
            return UNKNOWN  # an object of a project module's class: what this file's model knows of classes is its own (left out)
        return agree(found) if found else UNKNOWN

    def call_value(self, made: Function, call: Call) -> Any:
        """`f()()`, `make_fn(lr)(x)`, `functools.partial(g, 1)(x)`: a function held as a value, called."""
        return self.run(made.fn, call, False, made.partials, made)

    def function_value(self, fn: cst.FunctionDef | cst.Lambda, owner: Scope) -> Function | UNKNOWN:
        """The value a `def` bound in `owner` (or a lambda written there) makes: the function, reading its free names in
        the frame of `owner`'s run this evaluation stands for. A decorated `def` binds what its decorator returns."""
        if isinstance(fn, cst.FunctionDef) and fn.decorators:
            return UNKNOWN
        while owner is not None and not isinstance(owner.node, (cst.FunctionDef, cst.Lambda)):
            owner = owner.parent  # a comprehension's, a class body's: the function around it
        return Function(fn, frame_of(self.frame, owner) if owner is not None else None, (), self.f)

    def partial_value(self, call: Call) -> Any:
        """`functools.partial(fn, *args, **kwargs)`: `fn` with those arguments bound first."""
        first = call.node.args[0] if call.node.args else None
        if first is None or first.star or first.keyword is not None:
            return UNKNOWN
        made = self.eval(first.value)
        return Function(made.fn, made.closure, (*made.partials, call), made.home) if isinstance(made, Function) else UNKNOWN

    def param(self, owner: Scope, name: str) -> Any:
        """A parameter: the argument of the call being evaluated, else what every call site passes, else its default."""
        if frame_of(self.frame, owner) is None:
            given = self.f.ask("parameter", self, owner, name)  # a click command's parameter: click passes it
            if given is not UNANSWERED:
                return given
        sources = arguments(self.f, owner, name, self.frame)
        if sources is None:
            return UNKNOWN
        if not sources:  # never called here: a default counts like a command-line default (a caller elsewhere may pass another)
            default = owner.params[name].default
            return self.f.evaluate(default, owner.parent, defined_at(owner), cli=True) if default is not None and self.cli else UNKNOWN
        return agree([reader.evaluate(expr, scope, order, cli=self.cli, frame=caller) for expr, scope, order, caller, reader in sources], choice=True)

    def _Call(self, node):
        call = self.f.call_of(node)
        if call is None:
            return UNKNOWN
        if call.qualname in _BUILTINS:
            return getattr(self, _BUILTINS[call.qualname])(call)
        found = self.f.ask("call", self, call)
        if found is not UNANSWERED:
            return found
        if call.qualname is None or call.qualname.startswith("<local>."):
            found = self.returned(call)  # a function of the file's own: a constant or an object
            if found is not UNKNOWN:
                return found
        if call.method is not None:
            receiver = self.sub(call.receiver, call.scope, call.order)
            if isinstance(receiver, Abstract):
                if self.f.ask("keeps", call.method, receiver):
                    return receiver
                found = self.f.ask("method", self, receiver, call)
                if found is not UNANSWERED:
                    return found
                if isinstance(receiver, Instance) and receiver.kind == "instance" and self.f.home(receiver.detail.scope) is self.f:  # its class's method, or one it inherits
                    cls = receiver.detail
                    fn = cls.methods.get(call.method) or inherited(self.f, cls, call.method, ancestors(self.f, cls))
                    if fn is not None:
                        return self.run(fn, call, True)
            if isinstance(receiver, Record):
                receiver = UNKNOWN if self.changed_in_place(call.receiver) else dict(receiver.items)
            if call.method in ("keys", "values", "items") and isinstance(receiver, dict) and not call.node.args:
                return self.view(receiver, call.method)
            if isinstance(receiver, str) and not call.has_star_args:  # `"a\nb".splitlines()`, `line.strip()`
                return folding.str_method(receiver, call.method, [self.const(a.value) for a in call.positional], {k: self.const(a.value) for k, a in call.kwargs.items()})
            if call.method in ("get", "setdefault") and isinstance(receiver, dict) and len(call.positional) in (1, 2) and not call.kwargs:
                key = self.const(call.positional[0].value)
                if key is UNKNOWN:
                    return UNKNOWN
                return receiver[key] if key in receiver else (self.sub(call.positional[1].value, call.scope, call.order) if len(call.positional) == 2 else None)
        if call.qualname is None or call.qualname.startswith("<local>.") and call.method is not None:
            called = self.eval(call.node.func)  # `tok(texts)`, `toks[0](texts)`, `Config.tok(texts)`: an object called
            if isinstance(called, Function):
                return self.call_value(called, call)
            if isinstance(called, Abstract):
                found = self.f.ask("called", self, called, call)
                return UNKNOWN if found is UNANSWERED else found
        elif call.qualname.split(".", 1)[0] not in NOT_LOOKED_FOR:
            called = self.eval(call.node.func)  # `from utils import pad; pad(ids)`, `utils.pad(ids)`: a project module's function
            if isinstance(called, Function) and called.home is not self.f:
                return self.call_value(called, call)
        return UNKNOWN

    def _folded_builtin(self, call: Call) -> Any:
        if call.kwargs or call.has_star_args:
            return UNKNOWN
        args = [self.const(a.value) for a in call.positional]
        if any(a is UNKNOWN for a in args):
            return UNKNOWN
        if call.qualname == "builtins.range":
            result = range(*args)
            return result if len(result) <= MAX_SEQ else UNKNOWN
        return _FOLDED[call.qualname](*args)


_FOLDED = {f"builtins.{fn.__name__}": fn for fn in (int, float, str, round, len, min, max, abs, sum, bool, list, tuple, sorted, range)}
# the builtins the evaluator runs: folded on constants, or followed through objects
_BUILTINS = {
    **{name: "_folded_builtin" for name in _FOLDED},
    "builtins.list": "_sequence_builtin", "builtins.tuple": "_sequence_builtin", "builtins.sorted": "_sequence_builtin",
    "builtins.enumerate": "_enumerate", "builtins.zip": "_zip", "builtins.dict": "_dict", "builtins.map": "_map",
    "builtins.iter": "_iter", "builtins.next": "_next", "contextlib.nullcontext": "_nullcontext", "functools.partial": "partial_value", "builtins.isinstance": "_isinstance",
    "builtins.getattr": "_getattr",
}
