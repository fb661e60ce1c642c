"""The value layer: one evaluator that says what an expression holds, with its provenance.

Every expression evaluates, lazily and once per file (memoised on the expression, the position it is read at
and the call it is evaluated for), to one abstract value:

- a Python constant (`2e-5`, `"max_length"`, `[0, 1, 1]`, a config dict), folded only where the value cannot
  differ at run time;
- a `Binding`: an object the rules care about (tokenizer, model, encoding, ids, optimizer, dataloader,
  trainer, training arguments, accelerator, collator, ...) with the call that made it and what it came from;
- `UNKNOWN`, the one sentinel every consumer treats as "say nothing".

What the evaluator sees through: names (the binding in force at the read, mutations by append/extend/+=),
the file's own functions (the definition in force at the call, its `return`s evaluated for that call's
arguments, one summary per call and a bounded depth; a parameter outside such a call is what every call site
passes, or its default), methods called on `self`, nested functions, `self.x` attributes, configuration
(argparse, click and typer defaults, `HfArgumentParser` dataclasses, dataclass and `SimpleNamespace`
instances, `class Config:` attributes, module-level dicts, `os.environ.get("LR", "2e-5")`), wrappers that keep
what they wrap (`accelerator.prepare`, `unwrap_model`, `model.module`, PEFT), and the batches a DataLoader
yields. Defaults that the command line or the environment may override count only with `cli=True`.

`Values` is the semantic model (`model.Model`) plus this evaluator and the file's run-wide lists that need it
(tokenizer calls, model loads, trainers, ...). Derived queries (`training`, `labels`, `loops`) sit above it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import libcst as cst

from bertlint import knowledge
from bertlint.facts.model import Model
from bertlint.facts.names import ENCODE_METHODS, TRAINING_ARGS_CLASSES, TRANSFORMERS_ROOTS, is_model_class, is_tokenizer_class, is_trainer_class, is_transformers_name, model_head, same_symbol
from bertlint.facts.nodes import UNKNOWN, Call, Event, Scope, Store, dotted, iter_children, literal, names_in

MAX_SEQ = 5_000_000  # give up on constant lists larger than this
MAX_DEPTH = 3  # nested calls of the file's own functions evaluated for their arguments


@dataclass(eq=False)
class Binding:
    """An object the rules care about, and where it came from."""

    kind: str  # tokenizer | model | config | encoding | ids | optimizer | accelerator | gradient_tape | loss | trainer | training_args | dataloader | dataloader_item | dataset | module | collator | generated
    call: Call | None = None  # the call that made it (the tokenizer call of an encoding, the load of a model)
    parent: Binding | None = None  # the encoding an `ids` binding came from, the model a wrapper wraps
    detail: str = ""  # for ids: which key ("input_ids", "labels", ...); for a model: the wrapper ("peft", "unwrapped")


@dataclass(eq=False)
class ModelLoad:
    call: Call
    class_name: str  # qualified name of the transformers class (or the first transformers base of a local class)
    how: str  # "pretrained" | "config" | "constructor"
    checkpoint: Any  # resolved checkpoint string, or UNKNOWN
    head: str
    keras: bool


@dataclass(eq=False)
class _Frame:
    """A call of one of the file's own functions, its parameters bound to the call's arguments."""

    function: cst.FunctionDef
    args: dict[str, tuple[cst.BaseExpression, Scope, int | None]]  # parameter -> (argument, its scope, its order)
    caller: _Frame | None
    depth: int


# RecursionError: an expression nested deeper than the interpreter's stack (500 chained calls) is unknown, the file
# still analysed.
_FAILURES = (ArithmeticError, TypeError, ValueError, IndexError, KeyError, AttributeError, OverflowError, RecursionError, MemoryError, SyntaxError)


class Values(Model):
    """The model of one file with its evaluator: `evaluate` (any abstract value), `value` (constants), `kind` (objects)."""

    def __init__(self, module: cst.Module, source: str, path=None):
        super().__init__(module, source, path)
        self._memo: dict[tuple, Any] = {}
        self._frames: dict[tuple[int, int], _Frame | None] = {}
        self._returns: dict[int, list[cst.BaseExpression | None]] = {}

    # ---- the evaluator ----------------------------------------------------------------
    def evaluate(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None, *, cli: bool = True, frame: _Frame | None = None) -> Any:
        """The abstract value of `expr` read in `scope` at `order`: a constant, a Binding, or UNKNOWN."""
        if expr is None:
            return UNKNOWN
        key = (id(expr), order, cli, id(frame))
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = UNKNOWN  # a value defined through itself is unknown
        try:
            result = _Evaluator(self, scope, order, cli, frame).eval(expr)
        except _FAILURES:
            result = UNKNOWN  # SyntaxError: libcst's `evaluated_value` of a string holding a null byte
        self._memo[key] = result
        return result

    def name_value(self, name: str, scope: Scope, *, order: int | None = None, cli: bool = True) -> Any:
        """The constant a name holds when read in `scope` at `order` (a name no expression of the file reads there)."""
        key = (name, id(scope), order, cli)
        if key not in self._memo:
            self._memo[key] = UNKNOWN
            try:
                found = _Evaluator(self, scope, order, cli, None).named(name)
            except _FAILURES:
                found = UNKNOWN
            self._memo[key] = UNKNOWN if isinstance(found, Binding) else found
        return self._memo[key]

    def value(self, expr: cst.BaseExpression | None, scope: Scope, *, order: int | None = None, cli: bool = True) -> Any:
        """The constant value of `expr`, or UNKNOWN. `cli=False` treats command-line and environment defaults as unknown."""
        found = self.evaluate(expr, scope, order, cli=cli)
        return UNKNOWN if isinstance(found, Binding) else found

    def kind(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None) -> Binding | None:
        """The object `expr` holds (tokenizer, model, encoding, ids, ...), or None."""
        found = self.evaluate(expr, scope, order)
        return found if isinstance(found, Binding) else None

    def definite_kind(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None) -> Binding | None:
        """The object `expr` holds on every path, or None: `kind`, except that a name counts only when one plain,
        unconditional assignment binds it (`kind` follows the last of several, which a branch may skip)."""
        if isinstance(expr, cst.Name):
            owner, events = self.binding_events(expr.value, scope, order)
            assigns = [e for e in events if e.op == "assign"]
            if owner is None or len(assigns) != 1 or assigns[0].conditional or assigns[0].index is not None:
                return None
        return self.kind(expr, scope, order)

    def owner(self, store: Store) -> Binding | None:
        """The object whose attribute or item `store` sets (`tok.padding_side = "left"`: the tokenizer), or None."""
        return self.kind(store.target.value, store.scope, store.order)

    def arg_value(self, call: Call, index: int, keyword: str | None = None, *, cli: bool = True, default: Any = UNKNOWN) -> Any:
        arg = call.arg(index, keyword)
        if arg is None:
            return default
        return self.value(arg.value, call.scope, order=call.order, cli=cli)

    def kw_value(self, call: Call, keyword: str, *, cli: bool = True, default: Any = UNKNOWN) -> Any:
        arg = call.kwargs.get(keyword)
        if arg is None:
            return default
        return self.value(arg.value, call.scope, order=call.order, cli=cli)

    def is_batch(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None, _depth: int = 0) -> Any:
        """Does `expr` hold several texts? True for a constant list of two or more, a comprehension, `list(...)`,
        `.tolist()`, a slice of a dataset column, a helper returning one, a parameter every call site passes one
        to; False for one string; UNKNOWN otherwise."""
        if expr is None or _depth > MAX_DEPTH:
            return UNKNOWN
        constant = self.value(expr, scope, order=order)
        if isinstance(constant, str):
            return False
        if isinstance(constant, (list, tuple)):
            return len(constant) > 1
        if isinstance(expr, (cst.List, cst.Tuple)):
            return len(expr.elements) > 1
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            return True
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice):
            return True if _is_column(self, expr.value, scope, order) else UNKNOWN
        if isinstance(expr, cst.Call):
            call = self.call_of(expr)
            if call is None:
                return UNKNOWN
            if call.qualname in ("builtins.list", "builtins.sorted") and len(call.positional) == 1:
                return True  # a list made of an iterable (a column, a comprehension, the texts of a collated batch)
            if call.method in ("tolist", "to_list") and call.qualname is None:
                return True
            return _agree([self.is_batch(r, s, None, _depth + 1) for r, s in _returns_of(self, call) or ()])
        if isinstance(expr, cst.Name):
            owner, events = self.binding_events(expr.value, scope, order)
            if owner is None:
                return UNKNOWN
            if not events and expr.value in owner.params:
                sources = param_arguments(self, owner, expr.value)
                return _agree([self.is_batch(e, s, o, _depth + 1) for e, s, o in sources or ()])
            assigns = [e for e in events if e.op == "assign"]
            if len(assigns) == 1 and assigns[0].index is None and not assigns[0].conditional:
                return self.is_batch(assigns[0].value, owner, assigns[0].order, _depth + 1)
        return UNKNOWN

    # ---- the file's run-wide lists --------------------------------------------------
    @functools.cached_property
    def tokenizer_calls(self) -> list[Call]:
        """Encoding calls on a tokenizer: `tok(...)`, `tok.encode_plus(...)`, `tok.batch_encode_plus(...)`."""
        out = []
        for call in self.calls:
            if call.method in ENCODE_METHODS:
                if holds_tokenizer(self, call.receiver, call.scope, call.order):
                    out.append(call)
            elif call.qualname is None and isinstance(call.node.func, (cst.Name, cst.Attribute)):
                if holds_tokenizer(self, call.node.func, call.scope, call.order):  # `tok(...)`, `self.tokenizer(...)`
                    out.append(call)
        return out

    @functools.cached_property
    def model_loads(self) -> list[ModelLoad]:
        return [load for call in self.calls if (load := _model_load(self, call)) is not None]

    @functools.cached_property
    def tokenizer_loads(self) -> list[Call]:
        return [c for c in self.calls if _is_tokenizer_load(self, c)]

    def checkpoint_info(self, load: ModelLoad) -> knowledge.ModelInfo | None:
        if isinstance(load.checkpoint, str):
            return self.checkpoint(load.checkpoint)
        return None

    @functools.cached_property
    def training_args(self) -> list[Call]:
        return self.calls_to(*(f"{root}.{name}" for root in ("transformers", "trl") for name in TRAINING_ARGS_CLASSES))

    @functools.cached_property
    def trainers(self) -> list[Call]:
        """`Trainer(...)`-like constructions, user subclasses included."""
        return [c for c in self.calls if c.qualname and any(is_trainer_class(b) for b in self.class_bases(c.qualname))]

    @functools.cached_property
    def fit_calls(self) -> list[Call]:
        return [c for c in self.calls if c.method == "fit" and _is_keras_model(self, c)]

    @functools.cached_property
    def backward_calls(self) -> list[Call]:
        return [c for c in self.calls if c.method == "backward"]

    @functools.cached_property
    def is_training(self) -> bool:
        """Does this script train something (Trainer, a loop with backward, keras fit, accelerate)?"""
        return bool(self.trainers or self.backward_calls or self.fit_calls or any(c.method == "apply_gradients" for c in self.calls))

    @functools.cached_property
    def argparse_arguments(self) -> dict[str, tuple]:
        """dest -> (default expr or None, scope, order) for every `add_argument` in the file (groups included)."""
        out: dict[str, tuple] = {}
        for call in self.calls:
            if call.method != "add_argument":
                continue
            flags = [self.value(a.value, call.scope) for a in call.positional]
            if not flags or any(not isinstance(x, str) for x in flags):
                continue
            dest = self.kw_value(call, "dest")
            if not isinstance(dest, str):
                longs = [x for x in flags if x.startswith("--")]
                dest = (longs[0] if longs else flags[0]).lstrip("-").replace("-", "_")
            default = call.kwargs.get("default")
            action = self.kw_value(call, "action")
            if default is None:
                if action in ("store_true", "store_false"):
                    out[dest] = (cst.Name("False" if action == "store_true" else "True"), call.scope, call.order)
                else:
                    out[dest] = (None, call.scope, call.order)
            else:
                out[dest] = (default.value, call.scope, call.order)
        return out

    def _return_values(self, fn: cst.FunctionDef) -> list[cst.BaseExpression | None]:
        """The values of the `return`s of `fn`'s own body (nested functions and classes left out), found once."""
        if id(fn) not in self._returns:
            found = []
            stack = list(iter_children(fn.body))
            while stack:
                node = stack.pop()
                if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    continue
                if isinstance(node, cst.Return):
                    found.append(node.value)
                stack.extend(iter_children(node))
            self._returns[id(fn)] = found
        return self._returns[id(fn)]

    def _partial_frame(self, partial: Call, fn: cst.FunctionDef) -> _Frame:
        """`partial(collate, tok=tokenizer)` as a frame of `fn`: those arguments bound, the first (the batch) left free.
        Kept, like every frame, for as long as the memo that names it."""
        key = (id(partial.node), 0)
        if key not in self._frames:
            params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)][1:]
            bound = dict(zip(params, partial.positional[1:]))
            bound.update(partial.kwargs)
            self._frames[key] = _Frame(fn, {name: (arg.value, partial.scope, partial.order) for name, arg in bound.items()}, None, 1)
        return self._frames[key]

    def _frame_for(self, call: Call, fn: cst.FunctionDef, method: bool, caller: _Frame | None) -> _Frame | None:
        """The frame that evaluates `fn` for `call`'s arguments (one per call and caller); None when they do not bind."""
        key = (id(call.node), id(caller))
        if key not in self._frames:
            self._frames[key] = _bind(call, fn, method, caller)
        return self._frames[key]


# ---------------------------------------------------------------------------------------------
# the evaluator proper


class _Evaluator:
    def __init__(self, values: Values, scope: Scope, order: int | None, cli: bool, frame: _Frame | None):
        self.f = values
        self.scope = scope
        self.order = order
        self.cli = cli
        self.frame = frame

    def eval(self, node: cst.BaseExpression) -> Any:
        method = getattr(self, "_" + type(node).__name__, None)
        return UNKNOWN if method is None else method(node)

    def _sub(self, node, scope: Scope, order: int | None, frame: _Frame | None = None) -> Any:
        return self.f.evaluate(node, scope, order, cli=self.cli, frame=frame if frame is not None else self.frame)

    def const(self, node) -> Any:
        found = self.eval(node)
        return UNKNOWN if isinstance(found, Binding) else found

    def kind(self, node, scope: Scope | None = None, order: int | None = None) -> Binding | None:
        found = self.eval(node) if scope is None else self._sub(node, scope, order)
        return found if isinstance(found, Binding) else None

    # literals -----------------------------------------------------------------------
    def _Integer(self, node):
        return node.evaluated_value

    _Float = _Integer

    def _SimpleString(self, node):
        value = literal(node)
        return UNKNOWN if value is None else value

    _ConcatenatedString = _SimpleString

    def _seq(self, elements):
        out = []
        for element in elements:
            if isinstance(element, cst.StarredElement):
                inner = self.const(element.value)
                if not isinstance(inner, (list, tuple)):
                    return UNKNOWN
                out.extend(inner)
                continue
            value = self.const(element.value)
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
                inner = self.const(element.value)
                if not isinstance(inner, dict):
                    return UNKNOWN
                out.update(inner)
                continue
            key = self.const(element.key)
            if key is UNKNOWN:
                return UNKNOWN
            out[key] = self.const(element.value)  # unknown values stay UNKNOWN per key
        return out

    def _UnaryOperation(self, node):
        value = self.const(node.expression)
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
        left = self.const(node.left)
        if left is UNKNOWN:
            return UNKNOWN
        right = self.const(node.right)
        if right is UNKNOWN:
            return UNKNOWN
        op = type(node.operator)
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

    def _IfExp(self, node):
        test = self.const(node.test)
        if test is UNKNOWN:
            return UNKNOWN
        return self.eval(node.body if test else node.orelse)

    def _ListComp(self, node):
        """`[c for _ in range(n)]` with a constant element."""
        comp = node.for_in
        if comp.inner_for_in is not None or comp.ifs:
            return UNKNOWN
        iterable = self.const(comp.iter)
        if not isinstance(iterable, (range, list, tuple)):
            return UNKNOWN
        if isinstance(comp.target, cst.Name) and comp.target.value in names_in(node.elt):
            return UNKNOWN
        element = self._sub(node.elt, self.f.scope_of(node.elt), None)
        if element is UNKNOWN or isinstance(element, Binding):
            return UNKNOWN
        return [element] * len(iterable)

    # names --------------------------------------------------------------------------
    def _Name(self, node):
        return self.named(node.value)

    def named(self, name: str) -> Any:
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        owner, events = self.f.binding_events(name, self.scope, self.order)
        if owner is None:
            return UNKNOWN
        if not events and name in owner.params:
            return self._param(owner, name)
        constant = self._folded(name, owner, events)
        if constant is not UNKNOWN:
            return constant
        return self._object(name, owner, events or owner.events.get(name, []))

    def _folded(self, name: str, owner: Scope, events: list[Event]) -> Any:
        """The value of the last plain assignment with the mutations after it applied, when nothing is conditional."""
        if not events or any(e.conditional for e in events):
            return UNKNOWN
        if owner is not self.scope and len({self.f.text(e.value) if e.value is not None else "" for e in events if e.op == "assign"}) > 1:
            return UNKNOWN
        start = max((i for i, e in enumerate(events) if e.op in ("assign", "for", "import", "def", "unpack", "param")), default=None)
        if start is None:
            return UNKNOWN
        first = events[start]
        if first.op != "assign" or first.value is None or first.index is not None:
            return UNKNOWN
        value = self._sub(first.value, owner, first.order)
        for event in events[start + 1 :]:
            if value is UNKNOWN or isinstance(value, Binding) or event.loops != first.loops:
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
        return UNKNOWN if isinstance(value, Binding) else value

    def _object(self, name: str, owner: Scope, events: list[Event]) -> Any:
        """The object the last assignment binds (objects keep their kind through mutation and branches)."""
        for event in reversed(events):
            if event.op == "assign" and event.value is not None and event.index is None:
                return self.kind(event.value, owner, event.order) or UNKNOWN
            if event.op == "assign" and event.index is not None:
                found = self._unpacked(event, owner)
                if found is not None:
                    return found
            if event.op == "for":
                return _loop_item(self, event, owner) or UNKNOWN
        return UNKNOWN

    def _unpacked(self, event: Event, owner: Scope) -> Binding | None:
        """`model, opt = accelerator.prepare(model, opt)`: prepare wraps, it keeps the kind."""
        passed = _prepared_argument(self, event.value, event.index)
        return self.kind(passed, owner, event.order) if passed is not None else None

    def _param(self, owner: Scope, name: str) -> Any:
        """A parameter: the argument of the call being evaluated, else what every call site passes, else its default."""
        clicked = _click_default(self, owner, name) if _frame_of(self.frame, owner) is None else None
        if clicked is not None:  # a click command's parameter: click passes it, whatever the call sites show
            return clicked
        sources = _arguments(self.f, owner, name, self.frame)
        if sources is None:
            return UNKNOWN
        if not sources:  # never called here: a default counts like a command-line default (a caller elsewhere may pass another)
            default = owner.params[name].default
            return self.f.evaluate(default, owner.parent, None, cli=True) if default is not None and self.cli else UNKNOWN
        return _agree([self.f.evaluate(expr, scope, order, cli=self.cli, frame=caller) for expr, scope, order, caller in sources])

    # attributes and items -----------------------------------------------------------
    def _Attribute(self, node):
        attr = node.attr.value
        text = dotted(node)
        if text and text.startswith("self."):
            for value, owner, order in self.f.self_attrs.get(text, ()):
                found = self.kind(value, owner, order)
                if found is not None:
                    return found
            return UNKNOWN
        field = self._field(node.value, self.scope, self.order, self.frame, attr, 0)
        if field is not None:
            return field
        base = self.kind(node.value)
        if base is not None:
            if base.kind in ("encoding", "dataloader_item"):
                return Binding("ids", base.call, base, attr)
            if base.kind == "model" and attr in ("module", "base_model", "model"):
                return base
        return UNKNOWN

    def _field(self, base: cst.BaseExpression, scope: Scope, order: int | None, frame: _Frame | None, attr: str, depth: int) -> Any:
        """`base.attr` where `base` holds configuration: the parsed command line, a config object, or a parameter that
        receives one (`def train(args): ... args.lr`, followed to the arguments of its calls). None when `base` holds
        no configuration; UNKNOWN when it does but the field cannot be known."""
        defaults = _argparse_defaults(self.f, base, scope, order)
        if defaults is not None:
            if not self.cli or attr not in defaults:
                return UNKNOWN
            expr, where, at = defaults[attr]
            return self.f.evaluate(expr, where, at, cli=self.cli) if expr is not None else None
        found = _config_field(self, base, scope, order, attr)
        if found is not None or not isinstance(base, cst.Name) or depth >= MAX_DEPTH:
            return found
        owner, events = self.f.binding_events(base.value, scope, order)
        if owner is None or events or base.value not in owner.params:
            return None
        sources = _arguments(self.f, owner, base.value, frame)
        found = [self._field(expr, where, at, caller, attr, depth + 1) for expr, where, at, caller in sources or ()]
        return None if not found or any(v is None for v in found) else _agree(found)

    def _Subscript(self, node):
        if len(node.slice) != 1:
            return UNKNOWN
        index = node.slice[0].slice
        base = self.eval(node.value)
        if isinstance(base, Binding):
            if base.kind == "dataset" and base.call.method == "map" and isinstance(index, cst.Index) and isinstance(self.const(index.value), str):
                return base  # a split of a mapped DatasetDict (`tokenized["train"]`)
            if base.kind in ("encoding", "dataloader_item"):
                key = self.const(index.value) if isinstance(index, cst.Index) else UNKNOWN
                item = _batch_item(self.f, base.call, key) if base.kind == "dataloader_item" else None
                return item or Binding("ids", base.call, base, key if isinstance(key, str) else "")
            return base if base.kind == "ids" else UNKNOWN
        if base is UNKNOWN:
            return UNKNOWN
        if isinstance(index, cst.Index):
            key = self.const(index.value)
            if key is UNKNOWN:
                return UNKNOWN
            if isinstance(base, dict):
                return base.get(key, UNKNOWN)
            if isinstance(base, (list, tuple, str)) and isinstance(key, int):
                return base[key]
            return UNKNOWN
        if isinstance(index, cst.Slice) and isinstance(base, (list, tuple, str)):
            parts = [self.const(p) if p is not None else None for p in (index.lower, index.upper, index.step)]
            if any(p is UNKNOWN for p in parts):
                return UNKNOWN
            return base[slice(*parts)]
        return UNKNOWN

    # calls --------------------------------------------------------------------------
    def _Call(self, node):
        call = self.f.call_of(node)
        if call is None:
            return UNKNOWN
        constant = self._call_result(call)
        if constant is not UNKNOWN:
            return constant
        return self._object_call(call) or UNKNOWN

    def _call_result(self, call: Call) -> Any:
        """What a call computes: folded builtins, configuration reads, and the file's own functions (a constant or an object)."""
        q = call.qualname
        if q in _BUILTIN_FUNCTIONS:
            if call.kwargs or call.has_star_args:
                return UNKNOWN
            args = [self.const(a.value) for a in call.positional]
            if any(a is UNKNOWN for a in args):
                return UNKNOWN
            if q == "builtins.range":
                result = range(*args)
                return result if len(result) <= MAX_SEQ else UNKNOWN
            return _BUILTIN_FUNCTIONS[q](*args)
        if q == "builtins.dict":
            return UNKNOWN if call.positional else {k: self.const(a.value) for k, a in call.kwargs.items()}
        if q in ("numpy.array", "numpy.asarray", "torch.tensor") and call.positional:
            return self.const(call.positional[0].value)
        if q in _ENVIRONMENT_READS and len(call.positional) == 2 and not call.kwargs:
            # `os.environ.get("LR", "2e-5")`: the default, unless the environment sets it (like a command-line default)
            return self.const(call.positional[1].value) if self.cli else UNKNOWN
        if q in _CLI_OPTIONS:  # `lr: float = typer.Option(2e-5)`: its default
            default = call.arg(0, "default")
            return self.const(default.value) if default is not None and self.cli and not isinstance(default.value, cst.Ellipsis) else UNKNOWN
        if call.method == "get" and call.receiver is not None and len(call.positional) in (1, 2):
            base = self.const(call.receiver)
            if isinstance(base, dict):
                key = self.const(call.positional[0].value)
                if key is UNKNOWN:
                    return UNKNOWN
                if key in base:
                    return base[key]
                return self.const(call.positional[1].value) if len(call.positional) == 2 else None
        if call.qualname is None or call.qualname.startswith("<local>."):
            return self._returned(call)  # a function of the file's own: a constant or an object
        return UNKNOWN

    def _object_call(self, call: Call) -> Binding | None:
        f = self.f
        if _is_tokenizer_load(f, call):
            return Binding("tokenizer", call)
        if _model_load(f, call) is not None:
            return Binding("model", call)
        if call.qualname:
            short = call.qualname.rsplit(".", 1)[-1]
            if (kind := _object_kind(call.qualname)) is not None:
                return Binding(kind, call)
            if short in TRAINING_ARGS_CLASSES and is_transformers_name(call.qualname):
                return Binding("training_args", call)
            config_class = call.qualname.rsplit(".", 1)[0] if call.method == "from_pretrained" else call.qualname
            if config_class.endswith("Config") and is_transformers_name(call.qualname):
                return Binding("config", call)  # `BertConfig(...)`, `AutoConfig.from_pretrained(...)`
            if any(is_trainer_class(b) for b in f.class_bases(call.qualname)):
                return Binding("trainer", call)
            if call.qualname.startswith("torch.utils.data") and short == "DataLoader":
                return Binding("dataloader", call)
            if _dataset_class(f, call.qualname) is not None:
                return Binding("dataset", call)
            if _module_class(f, call.qualname) is not None:
                return Binding("module", call)  # the file's own torch module: its forward's parameters come from its calls
            if short.startswith("DataCollator") and is_transformers_name(call.qualname):
                return Binding("collator", call)
            if call.qualname in _DATA_PARALLEL and call.positional:  # `DistributedDataParallel(model)`: `.module` is the model
                inner = self.kind(call.positional[0].value)
                return inner if inner is not None and inner.kind == "model" else None
            if call.qualname in ("peft.get_peft_model", "peft.prepare_model_for_kbit_training"):
                first = call.arg(0, "model")
                return Binding("model", call, self.kind(first.value) if first else None, "peft")
            if call.qualname.startswith(("torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.stack", "torch.cat")):
                inner = call.arg(0)
                value = inner.value if inner else None
                if isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) == 1:
                    value = value.elements[0].value  # torch.tensor([ids]): a batch of one
                inner_kind = self.kind(value) if value is not None else None
                return inner_kind if inner_kind and inner_kind.kind == "ids" else None
            if short == "pad_sequence" and call.qualname.startswith("torch"):
                return Binding("ids", call, None, "padded")
        if call.method == "map" and (fn := call.arg(0, "function")) is not None and _maps_to_encodings(f, fn.value, call):
            return Binding("dataset", call)  # `ds.map(tokenize, batched=True)`: its columns are what `tokenize` returns
        if call.method is not None:
            recv = self.kind(call.receiver, call.scope, call.order)
            if recv is not None:
                if recv.kind == "dataset" and call.method in _DATASET_KEEPING_METHODS:
                    return recv
                if call.method in _KIND_KEEPING_METHODS and recv.kind in ("model", "encoding", "ids"):
                    return recv
                if recv.kind == "tokenizer" and (call.method in ENCODE_METHODS or call.method == "pad"):
                    return Binding("encoding", call)
                if recv.kind == "tokenizer" and call.method == "convert_tokens_to_ids":
                    return Binding("ids", call, None, "manual")
                if recv.kind == "model" and call.method == "generate":
                    return Binding("generated", call)
                if recv.kind == "encoding" and call.method == "get":
                    key = f.arg_value(call, 0)
                    return Binding("ids", recv.call, recv, key if isinstance(key, str) else "")
                if recv.kind == "accelerator" and call.method == "unwrap_model" and call.positional:
                    inner = self.kind(call.positional[0].value)
                    return inner if inner is not None and inner.kind == "model" else None
            passed = _prepared_argument(self, call.node, None)
            if passed is not None:
                return self.kind(passed, call.scope, call.order)
        fn = call.node.func
        if call.qualname is None and isinstance(fn, (cst.Name, cst.Attribute)):
            recv = self.kind(fn)
            if recv is not None and recv.kind == "tokenizer":
                return Binding("encoding", call)
            if recv is None and _looks_like_tokenizer(f, fn, self.scope):
                return Binding("encoding", call)
        return None

    def _returned(self, call: Call) -> Any:
        """What the file's own function (or `self.` method) that `call` runs returns for these arguments, when every
        `return` agrees; evaluated once per call, to a bounded depth."""
        depth = self.frame.depth + 1 if self.frame is not None else 1
        target = _callee(self.f, call)
        if target is None or depth > MAX_DEPTH:
            return UNKNOWN
        fn, fn_scope, method = target
        frame = self.f._frame_for(call, fn, method, self.frame)
        found = [self.f.evaluate(value, fn_scope, None, cli=self.cli, frame=frame) if value is not None else None for value in self.f._return_values(fn)]
        if not found:
            return UNKNOWN
        return _agree(found)


_OPERATORS = {
    cst.Add: lambda a, b: a + b,
    cst.Subtract: lambda a, b: a - b,
    cst.Multiply: lambda a, b: a * b,
    cst.Divide: lambda a, b: a / b,
    cst.FloorDivide: lambda a, b: a // b,
    cst.Modulo: lambda a, b: a % b if not isinstance(a, str) else UNKNOWN,
    cst.Power: lambda a, b: a**b,
}
_BUILTIN_FUNCTIONS = {
    f"builtins.{fn.__name__}": fn
    for fn in (int, float, str, round, len, min, max, abs, sum, bool, list, tuple, sorted, range)
}
_ENVIRONMENT_READS = ("os.environ.get", "os.getenv")
_CLI_OPTIONS = ("typer.Option", "typer.Argument")
_DATA_PARALLEL = ("torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel")
_DATASET_KEEPING_METHODS = frozenset({"with_format", "remove_columns", "rename_column", "shuffle", "select", "filter", "sort", "flatten_indices"})
_KIND_KEEPING_METHODS = frozenset({
    "to", "cuda", "cpu", "train", "eval", "half", "bfloat16", "float", "double", "long", "int", "requires_grad_", "squeeze",
    "unsqueeze", "view", "reshape", "clone", "detach", "contiguous", "pin_memory", "to_device",
})


def _agree(found: list) -> Any:
    """The one value every source gives (objects agree on their kind), else UNKNOWN."""
    if not found or any(v is UNKNOWN for v in found):
        return UNKNOWN
    first = found[0]
    if isinstance(first, Binding):
        return first if all(isinstance(v, Binding) and v.kind == first.kind for v in found) else UNKNOWN
    return first if all(not isinstance(v, Binding) and v == first and type(v) is type(first) for v in found[1:]) else UNKNOWN


# ---------------------------------------------------------------------------------------------
# the file's own functions


def _callee(values: Values, call: Call) -> tuple[cst.FunctionDef, Scope, bool] | None:
    """(definition, its scope, is a method) of the function a call runs: the definition in force at the call for a
    plain name, the enclosing class's method for `self.name(...)`."""
    func = call.node.func
    if call.has_star_args:
        return None
    if isinstance(func, cst.Name):
        owner, events = values.binding_events(func.value, call.scope, call.order)
        if owner is None:
            return None
        events = [e for e in (events or owner.events.get(func.value, [])) if e.op in ("def", "assign", "import")]
        if not events or events[-1].op != "def" or events[-1].conditional or not isinstance(events[-1].value, cst.FunctionDef):
            return None
        fn = events[-1].value
        return fn, _function_scope(values, fn), False
    if call.method is not None and dotted(call.receiver) == "self":
        scope: Scope | None = call.scope
        while scope is not None and scope.kind != "class":
            scope = scope.parent
        cls = values.classes.get(scope.name) if scope is not None else None
        fn = cls.methods.get(call.method) if cls is not None else None
        return (fn, _function_scope(values, fn), True) if fn is not None else None
    return None


def _function_scope(values: Values, fn: cst.FunctionDef) -> Scope:
    return next(scope for node, scope in values.functions[fn.name.value] if node is fn)


def _bind(call: Call, fn: cst.FunctionDef, method: bool, caller: _Frame | None) -> _Frame | None:
    """Bind `call`'s arguments to `fn`'s parameters; None when they cannot be matched."""
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if method:
        params = params[1:]
    names = [p.name.value for p in params] + [p.name.value for p in fn.params.kwonly_params]
    args: dict[str, tuple] = {}
    for param, arg in zip(params, call.positional):
        args[param.name.value] = (arg.value, call.scope, call.order)
    if len(call.positional) > len(params) and not isinstance(fn.params.star_arg, cst.Param):
        return None
    for keyword, arg in call.kwargs.items():
        if keyword not in names and not isinstance(fn.params.star_kwarg, cst.Param):
            return None
        args[keyword] = (arg.value, call.scope, call.order)
    return _Frame(fn, args, caller, (caller.depth if caller is not None else 0) + 1)


def _method_sites(values: Values, class_name: str, fn: cst.FunctionDef) -> list[Call]:
    """The calls of a method of a class of the file: its constructions for `__init__`; for the file's own torch module
    `obj.method(...)` and, for `forward`, `obj(...)`, where `obj` holds an instance of that class."""
    def instance(expr: cst.BaseExpression | None, call: Call) -> bool:
        found = values.kind(expr, call.scope, call.order)
        return found is not None and found.kind == "module" and found.call.qualname == f"<local>.{class_name}"

    method = fn.name.value
    if method == "__init__":  # `ReviewDataset(texts, labels)`: the constructions of the class
        return [c for c in values.calls if c.qualname == f"<local>.{class_name}"]
    sites = [c for c in values.calls_by_short.get(method, ()) if c.method == method and instance(c.receiver, c)]
    if method == "forward":
        sites += [c for c in values.calls if c.qualname is None and c.method != "forward" and instance(c.node.func, c)]
    return sorted(sites, key=lambda c: c.order)


def _returns_of(values: Values, call: Call) -> list[tuple[cst.BaseExpression, Scope]] | None:
    target = _callee(values, call)
    if target is None:
        return None
    fn, scope, _ = target
    returned = values._return_values(fn)
    return None if any(r is None for r in returned) else [(r, scope) for r in returned]


def param_arguments(values: Values, owner: Scope, name: str) -> list[tuple[cst.BaseExpression, Scope, int | None]] | None:
    """(expression, scope, order) each call site of a plain function (or of a method of the file's own torch module:
    `model(ids)` for its `forward`) passes for a parameter, the default where a site omits it; [] when the file never
    calls it, None when a site is opaque (`*args`, no value)."""
    fn = owner.node
    if not isinstance(fn, cst.FunctionDef) or owner.parent is None:
        return None
    param = owner.params[name]
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if owner.parent.kind == "class":
        if fn.decorators or not params or param is params[0]:
            return None
        params = params[1:]
        sites = _method_sites(values, owner.parent.name, fn)
        if not sites:
            return None  # an object's method may be called where the file does not show it (a Trainer calls `forward`)
    else:
        sites = [s for s in values.calls_by_short.get(fn.name.value, ()) if s.method is None and isinstance(s.node.func, cst.Name)]
    position = next((i for i, p in enumerate(params) if p is param), None)
    out = []
    for site in sites:
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


# ---------------------------------------------------------------------------------------------
# configuration: argparse, click, dataclasses, namespaces, config classes


def _argparse_defaults(values: Values, base: cst.BaseExpression, scope: Scope, order: int | None) -> dict[str, tuple] | None:
    """If `base` is `parser.parse_args()`'s result, map dest -> (default expr, scope, order)."""
    if not isinstance(base, cst.Name):
        return None
    owner, events = values.binding_events(base.value, scope, order)
    if owner is None:
        return None
    assigns = [e for e in events or owner.events.get(base.value, []) if e.op == "assign"]
    if not assigns or not isinstance(assigns[-1].value, cst.Call):
        return None
    call = values.call_of(assigns[-1].value)
    if call is None or call.method not in ("parse_args", "parse_known_args"):
        return None
    if call.method == "parse_known_args" and assigns[-1].index not in (0, None):
        return None
    if _parser_call(values, call.receiver, call.scope) is None:
        return None
    return values.argparse_arguments


def _parser_call(values: Values, expr, scope) -> Call | None:
    """The `argparse.ArgumentParser(...)` call a name was bound to."""
    if not isinstance(expr, cst.Name):
        return None
    owner, _ = values.binding_events(expr.value, scope)
    if owner is None:
        return None
    for event in reversed(owner.events.get(expr.value, [])):
        if event.op == "assign" and isinstance(event.value, cst.Call):
            call = values.call_of(event.value)
            if call is not None and call.qualname and same_symbol(call.qualname, "argparse.ArgumentParser"):
                return call
    return None


def _click_default(ev: _Evaluator, owner: Scope, name: str) -> Any:
    """`@click.option("--lr", default=2e-5) def main(lr)`: the option's default, a command-line default (UNKNOWN
    with `cli=False` or without a default); None when `name` is no click parameter."""
    fn = owner.node
    if not isinstance(fn, cst.FunctionDef):
        return None
    for decorator in fn.decorators:
        call = ev.f.call_of(decorator.decorator) if isinstance(decorator.decorator, cst.Call) else None
        if call is None or call.qualname not in ("click.option", "click.argument"):
            continue
        flags = [ev.f.value(a.value, call.scope) for a in call.positional]
        names = [x for x in flags if isinstance(x, str) and x.isidentifier()]  # an explicit parameter name
        dest = names[0] if names else next((x.lstrip("-").replace("-", "_").lower() for x in flags if isinstance(x, str) and x.startswith("--")), None)
        if dest == name:
            default = call.kwargs.get("default")
            return ev.f.evaluate(default.value, call.scope, call.order, cli=True) if default is not None and ev.cli else UNKNOWN
    return None


_NAMESPACES = ("types.SimpleNamespace", "argparse.Namespace")


def _config_field(ev: _Evaluator, base: cst.BaseExpression, scope: Scope, order: int | None, attr: str) -> Any:
    found = _config_source_field(ev, base, scope, order, attr)
    name = dotted(base)
    if found is not None and any(isinstance(s.target, cst.Attribute) and dotted(s.target.value) == name and s.key == attr for s in ev.f.stores):
        return UNKNOWN  # `cfg.lr = ...` somewhere: which one is read depends on the order of execution
    return found


def _config_source_field(ev: _Evaluator, base: cst.BaseExpression, scope: Scope, order: int | None, attr: str) -> Any:
    """`cfg.lr` where `cfg` is a `SimpleNamespace(...)`, an instance of a plain or dataclass config class of the file
    (its keyword arguments, else its class-level default), or the class itself (`Config.lr`). None when `base` is
    none of these; UNKNOWN when it is one but the field may be changed."""
    f = ev.f
    source = base
    name = base.value if isinstance(base, cst.Name) else None
    if name is not None:
        owner, events = f.binding_events(name, scope, order)
        if owner is None:
            return None
        if name in f.classes and f.module_scope is owner:
            return _class_field(ev, f.classes[name], attr, None)
        assigns = [e for e in events if e.op == "assign"]
        if len(assigns) != 1 or assigns[0].conditional or len(events) != len(assigns):
            return None
        if assigns[0].index is not None:
            return _parsed_field(ev, assigns[0], owner, attr)
        source = assigns[0].value
    call = f.call_of(source) if isinstance(source, cst.Call) else None
    if call is None or call.qualname is None or call.has_double_star or call.has_star_args:
        return None
    if call.qualname in _NAMESPACES:
        arg = call.kwargs.get(attr)
        return f.evaluate(arg.value, call.scope, call.order, cli=ev.cli) if arg is not None else UNKNOWN
    if call.qualname.startswith("<local>.") and call.qualname.count(".") == 1:
        cls = f.classes.get(call.qualname.split(".", 1)[1])
        if cls is None or cls.bases:
            return None
        if "__init__" in cls.methods and not _is_dataclass(cls):
            return None  # its own __init__ may set anything
        if call.positional:
            return UNKNOWN
        return _class_field(ev, cls, attr, call)
    return None


def _frame_of(frame: _Frame | None, owner: Scope) -> _Frame | None:
    """The frame among `frame` and its callers that evaluates the function `owner` is the scope of."""
    while frame is not None and frame.function is not owner.node:
        frame = frame.caller
    return frame


def _arguments(values: Values, owner: Scope, name: str, frame: _Frame | None) -> list[tuple[cst.BaseExpression, Scope, int | None, _Frame | None]] | None:
    """(expression, scope, order, its frame) a parameter receives: the argument (or default) of the call being
    evaluated, else what each call site passes; [] when the file never calls it, None when that cannot be seen."""
    frame = _frame_of(frame, owner)
    if frame is not None:
        if name in frame.args:
            return [(*frame.args[name], frame.caller)]
        default = owner.params[name].default
        return [(default, owner.parent, None, frame.caller)] if default is not None else None
    sources = param_arguments(values, owner, name)
    return None if sources is None else [(expr, scope, order, None) for expr, scope, order in sources]


def _is_dataclass(cls) -> bool:
    return any(dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) in ("dataclass", "dataclasses.dataclass") for d in cls.node.decorators)


def _class_field(ev: _Evaluator, cls, attr: str, construction: Call | None) -> Any:
    """A field of a config class: the constructor's keyword, else the class-level value (plain and dataclass)."""
    if construction is not None and attr in construction.kwargs:
        return ev.f.evaluate(construction.kwargs[attr].value, construction.scope, construction.order, cli=ev.cli)
    events = cls.scope.events.get(attr, [])
    if len(events) != 1 or events[0].op != "assign" or events[0].conditional or events[0].index is not None:
        return UNKNOWN
    value = events[0].value
    call = ev.f.call_of(value) if isinstance(value, cst.Call) else None
    if call is not None and call.qualname in ("dataclasses.field", "<local>.field") or dotted(getattr(value, "func", None)) == "field":
        default = call.kwargs.get("default") if call is not None else None
        value = default.value if default is not None else None
    return ev.f.evaluate(value, cls.scope, events[0].order, cli=ev.cli) if value is not None else UNKNOWN


def _parsed_field(ev: _Evaluator, event: Event, owner: Scope, attr: str) -> Any:
    """`model_args, training_args = HfArgumentParser((ModelArgs, TrainArgs)).parse_args_into_dataclasses()`:
    `model_args.lr` is ModelArgs' field default, a command-line default."""
    call = ev.f.call_of(event.value) if isinstance(event.value, cst.Call) else None
    if call is None or call.method != "parse_args_into_dataclasses" or not ev.cli:
        return None
    parser = call.receiver
    if isinstance(parser, cst.Name):
        parser_owner, events = ev.f.binding_events(parser.value, owner, event.order)
        assigns = [e for e in events if e.op == "assign"]
        parser = assigns[-1].value if len(assigns) == 1 else None
    made = ev.f.call_of(parser) if isinstance(parser, cst.Call) else None
    if made is None or not made.qualname or not same_symbol(made.qualname, "transformers.HfArgumentParser") or not made.positional:
        return None
    classes = made.positional[0].value
    elements = [e.value for e in classes.elements] if isinstance(classes, (cst.Tuple, cst.List)) else [classes]
    if event.index >= len(elements):
        return None
    name = dotted(elements[event.index])
    cls = ev.f.classes.get(name) if name else None
    if cls is None or not _is_dataclass(cls):
        return None
    return _class_field(ev, cls, attr, None)


# ---------------------------------------------------------------------------------------------
# what a call makes


def holds_tokenizer(values: Values, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None) -> bool:
    """`expr` is a tokenizer: evaluated to one, or an unresolved name plainly called `tokenizer`."""
    found = values.kind(expr, scope, order)
    return found.kind == "tokenizer" if found is not None else _looks_like_tokenizer(values, expr, scope)


def _is_keras_model(values: Values, call: Call) -> bool:
    recv = values.kind(call.receiver, call.scope, call.order)
    if recv is not None and recv.kind in ("model", "keras_model"):
        return True
    return values.imported("tensorflow", "keras", "tf_keras") and recv is None and call.receiver is not None and "model" in (dotted(call.receiver) or "").lower()


def _looks_like_tokenizer(values: Values, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    """An unresolved name that is plainly a tokenizer: a parameter or attribute called `tokenizer`."""
    text = dotted(expr)
    if text is None or not values.imported(*TRANSFORMERS_ROOTS):
        return False
    last = text.rsplit(".", 1)[-1]
    if not (last in ("tokenizer", "tok", "processing_class") or last.endswith("_tokenizer") or last.startswith("tokenizer_")):
        return False
    owner = scope.lookup_scope(last) if "." not in text else None
    if owner is not None and owner.events.get(last):
        return False  # bound to something we could not classify: not our business
    return last not in values.functions


def _is_tokenizer_load(values: Values, call: Call) -> bool:
    if call.qualname is None:
        return False
    base, _, tail = call.qualname.rpartition(".")
    # A resolved callee is a class or a function, never a method of an object: `transformers.BertTokenizer(...)` constructs.
    candidates = values.class_bases(base if tail == "from_pretrained" else call.qualname)
    return any(is_tokenizer_class(c) for c in candidates)


def _model_load(values: Values, call: Call) -> ModelLoad | None:
    if call.qualname is None:
        return None
    if call.method in ("from_pretrained", "from_config"):
        cls = call.qualname.rsplit(".", 1)[0]
        how = "pretrained" if call.method == "from_pretrained" else "config"
    else:  # `BertForMaskedLM(config)`, `transformers.BertForMaskedLM(config)`
        cls, how = call.qualname, "constructor"
    tf_class = next((b for b in values.class_bases(cls) if is_model_class(b)), None)
    if tf_class is None:
        return None
    checkpoint: Any = UNKNOWN
    if how == "pretrained":
        checkpoint = values.arg_value(call, 0, "pretrained_model_name_or_path")
        if not isinstance(checkpoint, str):
            checkpoint = UNKNOWN
    last = tf_class.rsplit(".", 1)[-1]
    return ModelLoad(call, tf_class, how, checkpoint, model_head(last), keras=last.startswith("TF"))


_OPTIMIZER_MODULES = (
    "torch.optim.", "torch.distributed.optim.", "bitsandbytes.optim.", "apex.optimizers.", "deepspeed.ops.",
    "tensorflow.keras.optimizers.", "keras.optimizers.", "tf_keras.optimizers.", "tensorflow.optimizers.",
)


def _object_kind(qualname: str) -> str | None:
    """optimizer | accelerator | gradient_tape | loss, for a constructor resolved through the imports."""
    root, last = qualname.split(".", 1)[0], qualname.rsplit(".", 1)[-1]
    if qualname.startswith(_OPTIMIZER_MODULES) and last[:1].isupper():
        return None if any(part in qualname for part in (".lr_scheduler.", ".schedules.", ".swa_utils.")) else "optimizer"
    if is_transformers_name(qualname) and last in ("AdamW", "Adafactor", "AdamWeightDecay"):
        return "optimizer"
    if root == "accelerate" and last == "Accelerator":
        return "accelerator"
    if root == "tensorflow" and last == "GradientTape":
        return "gradient_tape"
    if qualname.startswith("torch.nn.") and last.endswith("Loss"):
        return "loss"
    return None


def _prepared_argument(ev: _Evaluator, value: cst.CSTNode | None, index: int | None) -> cst.BaseExpression | None:
    """What `accelerator.prepare(a, b)` hands back at `index` (None: its only result): prepare wraps, it keeps the kind."""
    call = ev.f.call_of(value) if isinstance(value, cst.Call) else None
    if call is None or call.method != "prepare" or call.has_star_args:
        return None
    accelerator = ev.f.kind(call.receiver, call.scope, call.order)
    if accelerator is None or accelerator.kind != "accelerator":
        return None
    args = call.positional
    if index is None:
        return args[0].value if len(args) == 1 else None
    return args[index].value if index < len(args) else None


_ITERATION_WRAPPERS = ("builtins.enumerate", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm")


def _loop_item(ev: _Evaluator, event: Event, scope: Scope) -> Binding | None:
    """`for batch in loader` / `for step, batch in enumerate(tqdm(loader))`: a batch of that DataLoader."""
    iterable, index = event.value, event.index
    while isinstance(iterable, cst.Call) and iterable.args:
        wrapper = ev.f.qualname(iterable.func, scope)
        if wrapper not in _ITERATION_WRAPPERS:
            break
        if wrapper == "builtins.enumerate":
            if index != 1:
                return None
            index = None
        iterable = iterable.args[0].value
    loader = ev.kind(iterable, scope, event.order)
    if loader is None or loader.kind != "dataloader":
        return None
    return Binding("dataloader_item", loader.call) if index is None else _batch_item(ev.f, loader.call, index)


def _dataset_class(values: Values, qualname: str) -> str | None:
    """`TensorDataset`, or the file's own map-style dataset class (a `Dataset` subclass, or any class with `__getitem__`)."""
    if same_symbol(qualname, "torch.utils.data.TensorDataset") and qualname.startswith("torch."):
        return "TensorDataset"
    cls = values.classes.get(qualname.split(".", 1)[1]) if qualname.startswith("<local>.") and qualname.count(".") == 1 else None
    return cls.name if cls is not None and "__getitem__" in cls.methods else None


def _module_class(values: Values, qualname: str) -> str | None:
    """The file's own `torch.nn.Module` subclass (directly, or through its own classes), by its qualified name."""
    if not qualname.startswith("<local>.") or qualname.count(".") != 1:
        return None
    bases = values.class_bases(qualname)
    return qualname.split(".", 1)[1] if any(same_symbol(b, "torch.nn.Module") for b in bases if b.startswith("torch.")) else None


def _batch_item(values: Values, loader: Call, key: Any) -> Binding | None:
    """What a DataLoader's batches hold at `key` (a dict key, a position): what its collate function of the file's own
    returns there, else (the items stacked as they are) the dataset's item at that key — a `TensorDataset`'s tensor at
    that position, the column a `dataset.map(fn)` function returns, what a dataset class's `__getitem__` returns."""
    if loader.has_star_args or not isinstance(key, (str, int)) or isinstance(key, bool):
        return None
    if "collate_fn" in loader.kwargs:
        return _item(values, _callable_returns(values, loader.kwargs["collate_fn"].value, loader), key)
    arg = loader.arg(0, "dataset")
    dataset = values.kind(arg.value, loader.scope, loader.order) if arg is not None else None
    if dataset is None or dataset.kind != "dataset":
        return None
    made = dataset.call
    if made.method == "map":
        return _item(values, _callable_returns(values, made.arg(0, "function").value, made), key)
    if _dataset_class(values, made.qualname) == "TensorDataset":
        if not isinstance(key, int) or made.has_star_args or not 0 <= key < len(made.positional):
            return None
        return values.kind(made.positional[key].value, made.scope, made.order)
    getitem = values.classes[made.qualname.split(".", 1)[1]].methods["__getitem__"]
    scope = _function_scope(values, getitem)
    return _item(values, [(value, scope, None) for value in values._return_values(getitem) if value is not None], key)


def _item(values: Values, returned: list[tuple[cst.BaseExpression, Scope, _Frame | None]] | None, key: Any) -> Binding | None:
    """The object at `key` of what a function returns (every `return` agreeing): an encoding it returns
    (`tokenizer(texts, padding=True)`, `tokenizer.pad(features)`) gives its ids; a dict or tuple, its element."""
    found = []
    for value, scope, frame in returned or ():
        whole = values.evaluate(value, scope, frame=frame)
        if isinstance(whole, Binding) and whole.kind == "encoding":
            found.append(Binding("ids", whole.call, whole, key) if isinstance(key, str) else None)
        else:
            found.append(_element(values, value, scope, key, 0))
    return found[0] if found and found[0] is not None and all(b is not None and b.kind == found[0].kind for b in found) else None


def _callable_returns(values: Values, collate: cst.BaseExpression, loader: Call) -> list[tuple[cst.BaseExpression, Scope, _Frame | None]] | None:
    """(returned expression, its scope, the frame binding `partial`'s arguments) for each `return` of a function the
    file passes along (a collate function, a `map` function): a def, a lambda, `functools.partial(fn, ...)`, or an
    instance of a class of the file with `__call__`."""
    if isinstance(collate, cst.Lambda):
        return [(collate.body, values.scope_of(collate.body), None)]
    call = values.call_of(collate) if isinstance(collate, cst.Call) else None
    partial = None
    if call is not None and call.qualname == "functools.partial" and call.positional and not call.has_star_args:
        partial, collate = call, call.positional[0].value
    elif call is not None and call.qualname and call.qualname.startswith("<local>.") and call.qualname.count(".") == 1:
        cls = values.classes.get(call.qualname.split(".", 1)[1])
        method = cls.methods.get("__call__") if cls is not None else None
        return [(r, _function_scope(values, method), None) for r in values._return_values(method) if r is not None] if method is not None else None
    if not isinstance(collate, cst.Name):
        return None
    owner, events = values.binding_events(collate.value, loader.scope, loader.order)
    defs = [e for e in events if e.op in ("def", "assign", "import")]
    if not defs or defs[-1].op != "def" or not isinstance(defs[-1].value, cst.FunctionDef):
        return None
    fn = defs[-1].value
    frame = values._partial_frame(partial, fn) if partial is not None else None
    return [(r, _function_scope(values, fn), frame) for r in values._return_values(fn) if r is not None]


def _maps_to_encodings(values: Values, fn: cst.BaseExpression, at: Call) -> bool:
    """A `map` function that returns a tokenizer's encoding (a datasets preprocessing function)."""
    return any(
        isinstance(found := values.evaluate(value, scope, frame=frame), Binding) and found.kind == "encoding"
        for value, scope, frame in _callable_returns(values, fn, at) or ()
    )


def _element(values: Values, expr: cst.BaseExpression | None, scope: Scope, key: Any, depth: int) -> Binding | None:
    """The object at `key` of a dict display, `dict(...)` call or tuple `expr` (through one plain name)."""
    if isinstance(expr, cst.Name) and depth == 0:  # `item = {...}; item["labels"] = ...; return item`
        owner, events = values.binding_events(expr.value, scope)
        if owner is not scope or not events or events[0].op != "assign" or events[0].index is not None or any(e.op != "setitem" for e in events[1:]):
            return None
        stored = [s for s in values.stores if s.scope is scope and isinstance(s.target, cst.Subscript) and dotted(s.target.value) == expr.value]
        if any(s.key is None for s in stored):
            return None
        stored = [s for s in stored if s.key == key]
        return values.kind(stored[-1].value, scope) if stored else _element(values, events[0].value, scope, key, 1)
    if isinstance(expr, cst.DictComp) and isinstance(key, str) and not expr.for_in.ifs and expr.for_in.inner_for_in is None:
        # `{k: torch.tensor(v[i]) for k, v in self.encodings.items()}`: every key of an encoding, per example
        items = values.call_of(expr.for_in.iter) if isinstance(expr.for_in.iter, cst.Call) else None
        source = values.kind(items.receiver, items.scope, items.order) if items is not None and items.method == "items" else None
        return Binding("ids", source.call, source, key) if source is not None and source.kind == "encoding" else None
    if isinstance(expr, cst.Dict) and isinstance(key, str):
        element = next((e for e in expr.elements if isinstance(e, cst.DictElement) and values.value(e.key, scope) == key), None)
        return values.kind(element.value, scope) if element is not None else None
    if isinstance(expr, cst.Tuple) and isinstance(key, int) and 0 <= key < len(expr.elements):
        element = expr.elements[key]
        return None if isinstance(element, cst.StarredElement) or any(isinstance(e, cst.StarredElement) for e in expr.elements) else values.kind(element.value, scope)
    call = values.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is not None and call.qualname == "builtins.dict" and isinstance(key, str) and key in call.kwargs:
        return values.kind(call.kwargs[key].value, scope)
    return None


def _is_column(values: Values, expr: cst.BaseExpression, scope: Scope, order: int | None) -> bool:
    """`df["text"]`, `ds["train"]["text"]`, `df.text.values`: a column of a table or a dataset split, by a string key."""
    while isinstance(expr, cst.Attribute) and expr.attr.value in ("values", "array"):
        expr = expr.value
    if not (isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)):
        return False
    return isinstance(values.value(expr.slice[0].slice.value, scope, order=order), str) and not isinstance(values.value(expr.value, scope, order=order), (dict, str))
