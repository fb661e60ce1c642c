"""Training-script facts, extracted once per file by one walk over the libcst tree.

Rules never walk the tree themselves: they query these facts. Names are resolved through the
file's imports with a light pass of our own (libcst's scope metadata costs ~9x the parse), and
values are evaluated on demand by a small constant folder that gives up (returns UNKNOWN)
whenever a value could differ at run time — precision beats recall.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import libcst as cst

from bertlint import knowledge


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False


UNKNOWN: Any = _Unknown()
MAX_SEQ = 5_000_000  # give up on constant lists larger than this

# ---------------------------------------------------------------------------------------------
# the data model


@dataclass(eq=False)
class Scope:
    """A module, function or class body: where names are bound."""

    kind: str  # "module" | "function" | "class" | "lambda"
    node: cst.CSTNode | None
    parent: Scope | None
    name: str = ""
    events: dict[str, list[Event]] = field(default_factory=dict)
    params: dict[str, cst.Param] = field(default_factory=dict)
    globals_: set[str] = field(default_factory=set)

    def lookup_scope(self, name: str) -> Scope | None:
        scope: Scope | None = self
        while scope is not None:
            if scope.kind != "class" or scope is self:
                if name in scope.events or name in scope.params:
                    return scope
            scope = scope.parent
        return None


@dataclass(eq=False)
class Event:
    """An assignment or a mutation of a name, in source order."""

    order: int
    op: str  # "assign" | "append" | "extend" | "augadd" | "augmul" | "unpack" | "for" | "import" | "def"
    value: cst.CSTNode | None
    conditional: bool  # inside an if/for/while/try/with-less branch of its scope
    loops: tuple[cst.CSTNode, ...]  # loops of its own scope that enclose it
    index: int | None = None  # position in a tuple unpacking


@dataclass(eq=False)
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
        if keyword is not None and keyword in self.kwargs:
            return self.kwargs[keyword]
        pos = self.positional
        return pos[index] if 0 <= index < len(pos) and not self.has_star_args else None

    @property
    def short(self) -> str | None:
        return self.qualname.rsplit(".", 1)[-1] if self.qualname else self.method


@dataclass(eq=False)
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


@dataclass(eq=False)
class ClassDef:
    node: cst.ClassDef
    name: str
    bases: tuple[str, ...]  # qualified names of the bases we could resolve
    methods: dict[str, cst.FunctionDef]
    scope: Scope


@dataclass(eq=False)
class Binding:
    """What an expression holds, as far as a rule needs to know."""

    kind: str  # tokenizer | model | encoding | ids | optimizer | accelerator | gradient_tape | trainer | training_args | dataloader | config | collator
    call: Call | None = None
    parent: Binding | None = None  # the encoding an `ids` binding came from, etc.
    detail: str = ""  # for ids: which key ("input_ids", "labels", ...)


# ---------------------------------------------------------------------------------------------
# name classification (transformers & torch vocabulary)

TRANSFORMERS_ROOTS = ("transformers", "peft", "trl", "sentence_transformers")
_MODEL_SUFFIX = re.compile(r"(Model|LMHeadModel|For[A-Z]\w*|Transformer)$")
_NOT_MODEL = re.compile(r"(Config|Tokenizer|TokenizerFast|Processor|FeatureExtractor|Trainer|Arguments|Pipeline|Collator|Output|Callback)")


def is_transformers_name(qualname: str | None) -> bool:
    return bool(qualname) and qualname.split(".", 1)[0] in TRANSFORMERS_ROOTS


def is_tokenizer_class(qualname: str | None) -> bool:
    if not is_transformers_name(qualname):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return "Tokenizer" in last and not last.endswith("Trainer")


def is_model_class(qualname: str | None) -> bool:
    if not is_transformers_name(qualname):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return bool(_MODEL_SUFFIX.search(last)) and not _NOT_MODEL.search(last)


def model_head(class_name: str) -> str:
    """The task head a model class trains, from its name (AutoModelForCausalLM -> causal-lm)."""
    name = class_name.rsplit(".", 1)[-1]
    table = (
        ("SequenceClassification", "seq-cls"),
        ("TokenClassification", "token-cls"),
        ("CausalLM", "causal-lm"),
        ("LMHeadModel", "causal-lm"),
        ("MaskedLM", "masked-lm"),
        ("PreTraining", "masked-lm"),
        ("Seq2SeqLM", "seq2seq"),
        ("ConditionalGeneration", "seq2seq"),
        ("QuestionAnswering", "qa"),
        ("MultipleChoice", "multiple-choice"),
    )
    for needle, head in table:
        if needle in name:
            return head
    return "base"


# ---------------------------------------------------------------------------------------------
# the walk


_CONTROL = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.Match) if hasattr(cst, "TryStar") else (cst.If, cst.For, cst.While, cst.Try)
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


@functools.cache
def _child_fields(node_type: type) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in dataclasses.fields(node_type)
        if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")
    )


def iter_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Children that can hold code (whitespace and punctuation skipped): cheaper than node.children."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


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
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(iter_children(current))))


def dotted(expr: cst.BaseExpression | None) -> str | None:
    """`a.b.c` for Name/Attribute chains, else None."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


class Facts:
    """Everything the rules ask about one file."""

    def __init__(self, module: cst.Module, source: str, path: Path | None = None):
        self.module = module
        self.source = source
        self.path = path
        self.base_dir = path.parent if path is not None else None
        self.imports: dict[str, str] = {}  # local alias -> qualified name
        self.import_nodes: list[tuple[str, cst.CSTNode, cst.CSTNode]] = []  # (qualname, alias node, statement)
        self.calls: list[Call] = []
        self.classes: dict[str, ClassDef] = {}
        self.functions: dict[str, list[tuple[cst.FunctionDef, Scope]]] = {}
        self.loops: list[tuple[cst.CSTNode, Scope, cst.FunctionDef | None]] = []
        self.attr_loads: list[tuple[cst.Attribute, Scope, int]] = []
        self.stores: list[Store] = []  # `x["labels"] = ...`, `config.vocab_size = ...`
        self.module_scope = Scope("module", module, None)
        self._order = 0
        self._stmt_of: dict[int, cst.CSTNode] = {}
        self._scope_of_node: dict[int, Scope] = {}
        self._parents: dict[int, cst.CSTNode] = {}
        _Walker(self).run()
        self.calls_by_short: dict[str, list[Call]] = {}
        for call in self.calls:
            # Calls of the file's own functions resolve to no qualname: index them by name too,
            # so that a parameter's value can be read from its call sites.
            short = call.short or (call.node.func.value if isinstance(call.node.func, cst.Name) else None)
            if short:
                self.calls_by_short.setdefault(short, []).append(call)
        self._value_stack: set[int] = set()
        self._kind_cache: dict[int, Binding | None] = {}

    # ---- names ---------------------------------------------------------------------------
    def qualname(self, expr: cst.BaseExpression | None, scope: Scope | None = None) -> str | None:
        """Resolve `T.from_pretrained` to `transformers.AutoTokenizer.from_pretrained` via imports."""
        text = dotted(expr)
        if text is None:
            return None
        head, _, rest = text.partition(".")
        if scope is not None:
            owner = scope.lookup_scope(head)
            if owner is not None and owner is not self.module_scope:
                return None  # a local variable shadows any import
        if head in self.imports:
            base = self.imports[head]
        elif head in self.classes:
            base = f"<local>.{head}"
        elif head in _BUILTINS:
            base = f"builtins.{head}"
        else:
            return None
        return f"{base}.{rest}" if rest else base

    def imported(self, *roots: str) -> bool:
        return any(q.split(".", 1)[0] in roots for q in self.imports.values())

    def calls_to(self, *qualnames: str) -> list[Call]:
        """Calls whose callee resolves to one of `qualnames` (exact, or as a suffix after a module)."""
        wanted = set(qualnames)
        out = []
        for name in {q.rsplit(".", 1)[-1] for q in qualnames}:
            for call in self.calls_by_short.get(name, ()):
                if call.qualname and (call.qualname in wanted or any(_same_symbol(call.qualname, w) for w in wanted)):
                    out.append(call)
        out.sort(key=lambda c: c.order)
        return out

    def class_bases(self, qualname: str | None, _depth: int = 0) -> set[str]:
        """All resolvable ancestors of a class (local classes are followed to their bases)."""
        if not qualname or _depth > 10:
            return set()
        found = {qualname}
        if qualname.startswith("<local>."):
            cls = self.classes.get(qualname.split(".", 1)[1])
            if cls is not None:
                for base in cls.bases:
                    found |= self.class_bases(base, _depth + 1)
        return found

    def local_subclasses(self, predicate) -> list[ClassDef]:
        return [c for c in self.classes.values() if any(predicate(b) for b in self.class_bases(f"<local>.{c.name}"))]

    # ---- statements ---------------------------------------------------------------------
    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        return self._stmt_of.get(id(node), node)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(id(node))

    def scope_of(self, node: cst.CSTNode) -> Scope:
        current: cst.CSTNode | None = node
        while current is not None:
            scope = self._scope_of_node.get(id(current))
            if scope is not None:
                return scope
            parent = self._parents.get(id(current))
            if parent is None:
                stmt = self._stmt_of.get(id(current))
                parent = stmt if stmt is not current else None
            current = parent
        return self.module_scope

    def calls_in(self, node: cst.CSTNode) -> list[Call]:
        ids = {id(n) for n in walk(node)}
        return [c for c in self.calls if id(c.node) in ids]

    # ---- values -------------------------------------------------------------------------
    def value(self, expr: cst.BaseExpression | None, scope: Scope, *, order: int | None = None, cli: bool = True) -> Any:
        """The constant value of `expr`, or UNKNOWN. `cli=False` treats command-line defaults as unknown."""
        if expr is None:
            return UNKNOWN
        key = id(expr)
        if key in self._value_stack:
            return UNKNOWN
        self._value_stack.add(key)
        try:
            return _Evaluator(self, scope, order, cli).eval(expr)
        except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, AttributeError, OverflowError, RecursionError, MemoryError, SyntaxError):
            return UNKNOWN  # SyntaxError: libcst's `evaluated_value` of a string holding a null byte
        finally:
            self._value_stack.discard(key)

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

    def binding_events(self, name: str, scope: Scope, order: int | None = None) -> tuple[Scope | None, list[Event]]:
        owner = scope.lookup_scope(name)
        if owner is None:
            return None, []
        events = owner.events.get(name, [])
        if owner is scope and order is not None:
            before = [e for e in events if e.order < order]
            return owner, before
        return owner, list(events)

    # ---- what an expression holds ------------------------------------------------------
    def kind(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None) -> Binding | None:
        if expr is None:
            return None
        key = id(expr)
        if key in self._kind_cache:
            return self._kind_cache[key]
        self._kind_cache[key] = None  # recursion guard
        result = _classify(self, expr, scope, order)
        self._kind_cache[key] = result
        return result

    def call_of(self, node: cst.Call) -> Call | None:
        return self._call_index.get(id(node))

    @functools.cached_property
    def _call_index(self) -> dict[int, Call]:
        return {id(c.node): c for c in self.calls}

    # ---- derived facts ------------------------------------------------------------------
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
        out = []
        for call in self.calls:
            load = _model_load(self, call)
            if load is not None:
                out.append(load)
        return out

    @functools.cached_property
    def tokenizer_loads(self) -> list[Call]:
        return [c for c in self.calls if _is_tokenizer_load(self, c)]

    def checkpoint_info(self, load: ModelLoad) -> knowledge.ModelInfo | None:
        if isinstance(load.checkpoint, str):
            return knowledge.lookup_checkpoint(load.checkpoint, self.base_dir)
        return None

    @functools.cached_property
    def training_args(self) -> list[Call]:
        return self.calls_to(*(f"{root}.{name}" for root in ("transformers", "trl") for name in TRAINING_ARGS_CLASSES))

    @functools.cached_property
    def trainers(self) -> list[Call]:
        """`Trainer(...)`-like constructions, user subclasses included."""
        out = []
        for call in self.calls:
            if call.qualname and any(is_trainer_class(b) for b in self.class_bases(call.qualname)):
                out.append(call)
        return out

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

    def text(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def argparse_defaults(self, base: cst.BaseExpression, scope: Scope, order: int | None):
        return _argparse_defaults(self, base, scope, order)

    @functools.cached_property
    def argparse_arguments(self) -> dict[str, tuple]:
        return _parser_arguments(self)

    @functools.cached_property
    def statement_paths(self) -> dict[int, tuple[tuple[cst.CSTNode, ...], tuple[str, ...]]]:
        """id(statement) -> (the compound statements around it, outermost first; its indentation, level by level)."""
        return {id(stmt): (around, indent) for stmt, around, indent in _statements(self.module, (), (), self.module.default_indent)}

    def enclosing(self, stmt: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
        return self.statement_paths.get(id(stmt), ((), ()))[0]

    @functools.cached_property
    def gradient_calls(self) -> list[Call]:
        """Backward passes: `.backward()` (a loss, an accelerator), `torch.autograd.grad/backward`, `tape.gradient(...)`."""
        return [c for c in self.calls if _is_gradient_call(self, c)]

    @functools.cached_property
    def training_loops(self) -> list[TrainingLoop]:
        return _training_loops(self)


# ---------------------------------------------------------------------------------------------

ENCODE_METHODS = frozenset({"__call__", "encode_plus", "batch_encode_plus", "encode", "prepare_seq2seq_batch"})
TRAINING_ARGS_CLASSES = ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "RewardConfig")
_BUILTINS = frozenset({"int", "float", "str", "len", "list", "dict", "tuple", "range", "round", "min", "max", "sum", "abs", "print", "open", "set", "sorted", "zip", "enumerate", "bool", "isinstance", "super"})


def _same_symbol(found: str, wanted: str) -> bool:
    """`transformers.trainer.Trainer` is `transformers.Trainer`; `torch.optim.adamw.AdamW` is `torch.optim.AdamW`."""
    f_root, f_last = found.split(".", 1)[0], found.rsplit(".", 1)[-1]
    w_root, w_last = wanted.split(".", 1)[0], wanted.rsplit(".", 1)[-1]
    return f_root == w_root and f_last == w_last


def is_trainer_class(qualname: str) -> bool:
    if not is_transformers_name(qualname):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return last.endswith("Trainer") and last != "TFTrainer"


def _is_keras_model(facts: Facts, call: Call) -> bool:
    recv = facts.kind(call.receiver, call.scope, call.order)
    if recv is not None and recv.kind in ("model", "keras_model"):
        return True
    return facts.imported("tensorflow", "keras", "tf_keras") and recv is None and call.receiver is not None and "model" in (dotted(call.receiver) or "").lower()


def _looks_like_tokenizer(expr: cst.BaseExpression | None, facts: Facts, scope: Scope) -> bool:
    """An unresolved name that is plainly a tokenizer: a parameter or attribute called `tokenizer`."""
    text = dotted(expr)
    if text is None or not facts.imported(*TRANSFORMERS_ROOTS):
        return False
    last = text.rsplit(".", 1)[-1]
    if not (last in ("tokenizer", "tok", "processing_class") or last.endswith("_tokenizer") or last.startswith("tokenizer_")):
        return False
    owner = scope.lookup_scope(last) if "." not in text else None
    if owner is not None and owner.events.get(last):
        return False  # bound to something we could not classify: not our business
    return last not in facts.functions


def _is_tokenizer_load(facts: Facts, call: Call) -> bool:
    if call.qualname is None:
        return False
    base, _, tail = call.qualname.rpartition(".")
    # A resolved callee is a class or a function, never a method of an object: `transformers.BertTokenizer(...)` constructs.
    candidates = facts.class_bases(base if tail == "from_pretrained" else call.qualname)
    return any(is_tokenizer_class(c) for c in candidates)


@dataclass(eq=False)
class ModelLoad:
    call: Call
    class_name: str  # qualified name of the transformers class (or the first transformers base of a local class)
    how: str  # "pretrained" | "config" | "constructor"
    checkpoint: Any  # resolved checkpoint string, or UNKNOWN
    head: str
    keras: bool


def _model_load(facts: Facts, call: Call) -> ModelLoad | None:
    if call.qualname is None:
        return None
    if call.method in ("from_pretrained", "from_config"):
        cls = call.qualname.rsplit(".", 1)[0]
        how = "pretrained" if call.method == "from_pretrained" else "config"
    else:  # `BertForMaskedLM(config)`, `transformers.BertForMaskedLM(config)`
        cls, how = call.qualname, "constructor"
    tf_class = next((b for b in facts.class_bases(cls) if is_model_class(b)), None)
    if tf_class is None:
        return None
    checkpoint: Any = UNKNOWN
    if how == "pretrained":
        checkpoint = facts.arg_value(call, 0, "pretrained_model_name_or_path")
        if not isinstance(checkpoint, str):
            checkpoint = UNKNOWN
    last = tf_class.rsplit(".", 1)[-1]
    return ModelLoad(call, tf_class, how, checkpoint, model_head(last), keras=last.startswith("TF"))


def _classify(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None) -> Binding | None:
    """What kind of object `expr` evaluates to (tokenizer, model, encoding, ids, ...)."""
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, scope, order)
        if owner is None:
            return None
        if not events and expr.value in owner.params:
            return _param_kind(facts, owner, expr.value)
        for event in reversed(events or owner.events.get(expr.value, [])):
            if event.op == "assign" and event.value is not None and event.index is None:
                return facts.kind(event.value, owner, event.order)
            if event.op == "assign" and event.index is not None and (passed := _prepared_argument(facts, event.value, event.index)) is not None:
                return facts.kind(passed, owner, event.order)
            if event.op == "param" and event.value is not None:
                return facts.kind(event.value, owner, event.order)
            if event.op == "for":
                return _loop_item(facts, event, owner)
        return None
    if isinstance(expr, cst.Attribute):
        text = dotted(expr)
        if text and text.startswith("self."):
            return _classify_self_attr(facts, text, scope)
        base = facts.kind(expr.value, scope, order)
        attr = expr.attr.value
        if base is not None:
            if base.kind == "encoding":
                return Binding("ids", base.call, base, attr)
            if base.kind == "dataloader_item":
                return Binding("ids", base.call, base, attr)
            if base.kind == "model" and attr in ("module", "base_model", "model"):
                return base
        return None
    if isinstance(expr, cst.Subscript):
        base = facts.kind(expr.value, scope, order)
        if base is not None and base.kind in ("encoding", "dataloader_item"):
            key = facts.value(expr.slice[0].slice.value, scope, order=order) if isinstance(expr.slice[0].slice, cst.Index) else UNKNOWN
            return Binding("ids", base.call, base, key if isinstance(key, str) else "")
        if base is not None and base.kind == "ids":
            return base
        return None
    if isinstance(expr, cst.Call):
        call = facts.call_of(expr)
        if call is None:
            return None
        if _is_tokenizer_load(facts, call):
            return Binding("tokenizer", call)
        load = _model_load(facts, call)
        if load is not None:
            return Binding("model", call)
        if call.qualname:
            short = call.qualname.rsplit(".", 1)[-1]
            if (kind := _object_kind(call.qualname)) is not None:
                return Binding(kind, call)
            if short in TRAINING_ARGS_CLASSES and is_transformers_name(call.qualname):
                return Binding("training_args", call)
            if any(is_trainer_class(b) for b in facts.class_bases(call.qualname)):
                return Binding("trainer", call)
            if call.qualname.startswith("torch.utils.data") and short == "DataLoader":
                return Binding("dataloader", call)
            if short.startswith("DataCollator") and is_transformers_name(call.qualname):
                return Binding("collator", call)
            if call.qualname in ("peft.get_peft_model", "peft.prepare_model_for_kbit_training"):
                return Binding("model", call, facts.kind(call.arg(0, "model").value if call.arg(0, "model") else None, scope, order))
            if call.qualname.startswith(("torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.stack", "torch.cat")) or call.qualname in ("torch.tensor", "torch.as_tensor"):
                inner = call.arg(0)
                value = inner.value if inner else None
                if isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) == 1:
                    value = value.elements[0].value  # torch.tensor([ids]): a batch of one
                inner_kind = facts.kind(value, scope, order)
                return inner_kind if inner_kind and inner_kind.kind == "ids" else None
            if short in ("pad_sequence",) and call.qualname.startswith("torch"):
                return Binding("ids", call, None, "padded")
        if call.method is not None:
            recv = facts.kind(call.receiver, call.scope, call.order)
            if recv is not None:
                if call.method in ("to", "cuda", "cpu", "train", "eval", "half", "bfloat16", "float", "double", "long", "int", "requires_grad_", "squeeze", "unsqueeze", "view", "reshape", "clone", "detach", "contiguous", "pin_memory", "to_device"):
                    if recv.kind in ("model", "encoding", "ids"):
                        return recv
                if recv.kind == "tokenizer" and call.method in ENCODE_METHODS:
                    return Binding("encoding", call)
                if recv.kind == "tokenizer" and call.method == "convert_tokens_to_ids":
                    return Binding("ids", call, None, "manual")
                if recv.kind == "model" and call.method in ("generate",):
                    return Binding("generated", call)
                if recv.kind in ("encoding",) and call.method == "get":
                    key = facts.arg_value(call, 0)
                    return Binding("ids", recv.call, recv, key if isinstance(key, str) else "")
            if (passed := _prepared_argument(facts, expr, None)) is not None:
                return facts.kind(passed, scope, order)
        fn = call.node.func
        if call.qualname is None and isinstance(fn, (cst.Name, cst.Attribute)):
            recv = facts.kind(fn, scope, order)
            if recv is not None and recv.kind == "tokenizer":
                return Binding("encoding", call)
            if recv is None and _looks_like_tokenizer(fn, facts, scope):
                return Binding("encoding", call)
            if isinstance(fn, cst.Name) and len(facts.functions.get(fn.value, ())) == 1:
                return _returned_kind(facts, *facts.functions[fn.value][0])
    return None


def _returned_kind(facts: Facts, fn: cst.FunctionDef, scope: Scope) -> Binding | None:
    """What a function of the file returns, when every `return` of its own body returns the same kind."""
    found = []
    stack = list(iter_children(fn.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Return):
            found.append(facts.kind(node.value, scope) if node.value is not None else None)
        stack.extend(iter_children(node))
    kinds = {b.kind if b is not None else None for b in found}
    return found[0] if len(kinds) == 1 else None


_OPTIMIZER_MODULES = (
    "torch.optim.", "torch.distributed.optim.", "bitsandbytes.optim.", "apex.optimizers.", "deepspeed.ops.",
    "tensorflow.keras.optimizers.", "keras.optimizers.", "tf_keras.optimizers.", "tensorflow.optimizers.",
)


def _object_kind(qualname: str) -> str | None:
    """optimizer | accelerator | gradient_tape, for a constructor resolved through the imports."""
    root, last = qualname.split(".", 1)[0], qualname.rsplit(".", 1)[-1]
    if qualname.startswith(_OPTIMIZER_MODULES) and last[:1].isupper():
        return None if any(part in qualname for part in (".lr_scheduler.", ".schedules.", ".swa_utils.")) else "optimizer"
    if is_transformers_name(qualname) and last in ("AdamW", "Adafactor", "AdamWeightDecay"):
        return "optimizer"
    if root == "accelerate" and last == "Accelerator":
        return "accelerator"
    if root == "tensorflow" and last == "GradientTape":
        return "gradient_tape"
    return None


def _prepared_argument(facts: Facts, value: cst.CSTNode | None, index: int | None) -> cst.BaseExpression | None:
    """What `accelerator.prepare(a, b)` hands back at `index` (None: its only result): prepare wraps, it keeps the kind."""
    call = facts.call_of(value) if isinstance(value, cst.Call) else None
    if call is None or call.method != "prepare" or call.has_star_args:
        return None
    accelerator = facts.kind(call.receiver, call.scope, call.order)
    if accelerator is None or accelerator.kind != "accelerator":
        return None
    args = call.positional
    if index is None:
        return args[0].value if len(args) == 1 else None
    return args[index].value if index < len(args) else None


def _param_kind(facts: Facts, owner: Scope, name: str) -> Binding | None:
    """A parameter holds what the file's call sites pass, when they all agree: `train(model, optimizer, loader)`."""
    sources = param_arguments(facts, owner, name)
    found = [facts.kind(expr, scope, order) for expr, scope, order in sources or ()]
    return found[0] if found and len({b.kind if b else None for b in found}) == 1 else None


_ITERATION_WRAPPERS = ("builtins.enumerate", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm")


def _loop_item(facts: Facts, event: Event, scope: Scope) -> Binding | None:
    """`for batch in loader` / `for step, batch in enumerate(tqdm(loader))`: a batch of that DataLoader."""
    iterable, index = event.value, event.index
    while isinstance(iterable, cst.Call) and iterable.args:
        wrapper = facts.qualname(iterable.func, scope)
        if wrapper not in _ITERATION_WRAPPERS:
            break
        if wrapper == "builtins.enumerate":
            if index != 1:
                return None
            index = None
        iterable = iterable.args[0].value
    loader = facts.kind(iterable, scope, event.order) if index is None else None
    return Binding("dataloader_item", loader.call) if loader is not None and loader.kind == "dataloader" else None


def _classify_self_attr(facts: Facts, text: str, scope: Scope) -> Binding | None:
    """`self.model` / `self.tokenizer`: classify by any assignment to that attribute in the file."""
    for value, owner, order in facts._self_attrs.get(text, ()):
        found = facts.kind(value, owner, order)
        if found is not None:
            return found
    return None


# ---------------------------------------------------------------------------------------------


class _Walker:
    """The one traversal: imports, scopes and bindings, calls, classes, loops."""

    def __init__(self, facts: Facts):
        self.f = facts
        facts._self_attrs = {}

    def run(self) -> None:
        self._block(self.f.module.body, self.f.module_scope, ctx=_Ctx())

    def _next(self) -> int:
        self.f._order += 1
        return self.f._order

    # statements -------------------------------------------------------------------------
    def _block(self, body, scope: Scope, ctx: _Ctx) -> None:
        if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            body = body.body
        for stmt in body:
            self.f._scope_of_node[id(stmt)] = scope
            self._stmt(stmt, scope, ctx)

    def _stmt(self, stmt: cst.CSTNode, scope: Scope, ctx: _Ctx) -> None:
        f = self.f
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                f._parents[id(small)] = stmt
                self._small(small, stmt, scope, ctx)
            return
        if isinstance(stmt, cst.FunctionDef):
            self._decorators(stmt, scope, ctx)
            inner = Scope("function", stmt, scope, stmt.name.value)
            f._scope_of_node[id(stmt.body)] = inner
            f.functions.setdefault(stmt.name.value, []).append((stmt, inner))
            self._bind(scope, stmt.name.value, "def", stmt, ctx)
            self._params(stmt.params, inner, scope, stmt, ctx)
            self._block(stmt.body, inner, _Ctx(function=stmt, stmt=stmt))
            return
        if isinstance(stmt, cst.ClassDef):
            self._decorators(stmt, scope, ctx)
            bases = []
            for arg in stmt.bases:
                self._expr(arg.value, stmt, scope, ctx)
                q = f.qualname(arg.value, scope)
                if q:
                    bases.append(q)
            inner = Scope("class", stmt, scope, stmt.name.value)
            f._scope_of_node[id(stmt.body)] = inner
            methods = {}
            body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else stmt.body.body
            for item in body:
                if isinstance(item, cst.FunctionDef):
                    methods[item.name.value] = item
            f.classes[stmt.name.value] = ClassDef(stmt, stmt.name.value, tuple(bases), methods, inner)
            self._bind(scope, stmt.name.value, "def", stmt, ctx)
            self._block(stmt.body, inner, ctx.enter(stmt=stmt))
            return
        if isinstance(stmt, (cst.For,)):
            self._expr(stmt.iter, stmt, scope, ctx)
            inner_ctx = ctx.enter(loop=stmt, conditional=True, stmt=stmt)
            self._target(stmt.target, scope, "for", stmt, inner_ctx, value=stmt.iter)
            f.loops.append((stmt, scope, ctx.function))
            self._block(stmt.body, scope, inner_ctx)
            if stmt.orelse:
                self._block(stmt.orelse.body, scope, ctx.enter(conditional=True))
            return
        if isinstance(stmt, cst.While):
            self._expr(stmt.test, stmt, scope, ctx)
            inner_ctx = ctx.enter(loop=stmt, conditional=True, stmt=stmt)
            f.loops.append((stmt, scope, ctx.function))
            self._block(stmt.body, scope, inner_ctx)
            if stmt.orelse:
                self._block(stmt.orelse.body, scope, ctx.enter(conditional=True))
            return
        if isinstance(stmt, cst.If):
            self._expr(stmt.test, stmt, scope, ctx)
            self._block(stmt.body, scope, ctx.enter(conditional=not _is_main_guard(stmt), stmt=stmt))
            orelse = stmt.orelse
            while orelse is not None:
                if isinstance(orelse, cst.If):
                    self._expr(orelse.test, orelse, scope, ctx)
                    self._block(orelse.body, scope, ctx.enter(conditional=True))
                    orelse = orelse.orelse
                else:
                    self._block(orelse.body, scope, ctx.enter(conditional=True))
                    orelse = None
            return
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self._expr(item.item, stmt, scope, ctx)
                if item.asname is not None:
                    self._target(item.asname.name, scope, "assign", stmt, ctx, value=item.item)
            self._block(stmt.body, scope, ctx.enter(with_=stmt, stmt=stmt))
            return
        if isinstance(stmt, (cst.Try,) + ((cst.TryStar,) if hasattr(cst, "TryStar") else ())):
            self._block(stmt.body, scope, ctx.enter(conditional=True, in_try=True))
            for handler in stmt.handlers:
                if handler.type is not None:
                    self._expr(handler.type, handler, scope, ctx)
                self._block(handler.body, scope, ctx.enter(conditional=True))
            if stmt.orelse:
                self._block(stmt.orelse.body, scope, ctx.enter(conditional=True))
            if stmt.finalbody:
                self._block(stmt.finalbody.body, scope, ctx)
            return
        if isinstance(stmt, cst.Match):
            self._expr(stmt.subject, stmt, scope, ctx)
            for case in stmt.cases:
                self._block(case.body, scope, ctx.enter(conditional=True))
            return
        # anything else: visit expressions generically
        for node in iter_children(stmt):
            if isinstance(node, cst.BaseExpression):
                self._expr(node, stmt, scope, ctx)

    def _decorators(self, stmt, scope, ctx) -> None:
        for dec in stmt.decorators:
            self._expr(dec.decorator, stmt, scope, ctx)

    def _params(self, params: cst.Parameters, inner: Scope, outer: Scope, stmt, ctx) -> None:
        every = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
        for extra in (params.star_arg, params.star_kwarg):
            if isinstance(extra, cst.Param):
                every.append(extra)
        for param in every:
            inner.params[param.name.value] = param
            if param.default is not None:
                self._expr(param.default, stmt, outer, ctx)

    def _small(self, small: cst.CSTNode, stmt: cst.CSTNode, scope: Scope, ctx: _Ctx) -> None:
        f = self.f
        if isinstance(small, cst.Import):
            for alias in small.names:
                name = dotted(alias.name)
                if alias.asname is not None:
                    local = alias.asname.name.value
                    f.imports[local] = name
                else:
                    local = name.split(".", 1)[0]
                    f.imports.setdefault(local, local)
                f.import_nodes.append((name, alias, stmt))
                self._bind(scope, local, "import", alias, ctx)
            return
        if isinstance(small, cst.ImportFrom):
            module = dotted(small.module) if small.module is not None else ""
            if small.relative:
                module = "." * len(small.relative) + (module or "")
            if isinstance(small.names, cst.ImportStar):
                return
            for alias in small.names:
                name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
                local = alias.asname.name.value if alias.asname is not None else name
                qual = f"{module}.{name}" if module else name
                f.imports[local] = qual
                f.import_nodes.append((qual, alias, stmt))
                self._bind(scope, local, "import", alias, ctx)
            return
        if isinstance(small, cst.Assign):
            self._expr(small.value, stmt, scope, ctx)
            for target in small.targets:
                self._target(target.target, scope, "assign", stmt, ctx, value=small.value)
            return
        if isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._expr(small.value, stmt, scope, ctx)
                self._target(small.target, scope, "assign", stmt, ctx, value=small.value)
            return
        if isinstance(small, cst.AugAssign):
            self._expr(small.value, stmt, scope, ctx)
            op = {cst.AddAssign: "augadd", cst.MultiplyAssign: "augmul"}.get(type(small.operator), "augother")
            self._target(small.target, scope, op, stmt, ctx, value=small.value)
            return
        if isinstance(small, cst.Global):
            for name in small.names:
                scope.globals_.add(name.name.value)
            return
        if isinstance(small, cst.Expr):
            self._expr(small.value, stmt, scope, ctx)
            value = small.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Name):
                method = value.func.attr.value
                if method in ("append", "extend") and len(value.args) == 1:
                    self._bind(scope, value.func.value.value, method, value.args[0].value, ctx, mutation=True)
            return
        for node in iter_children(small):
            if isinstance(node, cst.BaseExpression):
                self._expr(node, stmt, scope, ctx)

    def _bind(self, scope: Scope, name: str, op: str, value, ctx: _Ctx, index: int | None = None, mutation: bool = False) -> None:
        target_scope = self.f.module_scope if name in scope.globals_ else scope
        if mutation:
            owner = scope.lookup_scope(name)
            target_scope = owner if owner is not None else scope
        event = Event(self._next(), op, value, ctx.conditional if target_scope is scope else True, ctx.loops, index)
        target_scope.events.setdefault(name, []).append(event)

    def _target(self, target, scope: Scope, op: str, stmt, ctx: _Ctx, value=None) -> None:
        if isinstance(target, cst.Name):
            self._bind(scope, target.value, op, value, ctx)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for i, element in enumerate(target.elements):
                inner = element.value
                if isinstance(inner, cst.Name):
                    unpack_value = value
                    idx = i
                    if op == "for":
                        self._bind(scope, inner.value, "for", value, ctx, index=i)
                        continue
                    if isinstance(value, (cst.Tuple, cst.List)) and i < len(value.elements) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
                        unpack_value, idx = value.elements[i].value, None
                    self._bind(scope, inner.value, "assign", unpack_value, ctx, index=idx)
                else:
                    self._target(inner, scope, op, stmt, ctx, value=None)
        elif isinstance(target, cst.Attribute):
            text = dotted(target)
            if text and text.startswith("self.") and value is not None and op == "assign":
                self.f._self_attrs.setdefault(text, []).append((value, scope, self.f._order))
            self._store(target, value, scope, op, ctx)
            self._expr(target, stmt, scope, ctx)
        elif isinstance(target, cst.Subscript):
            self._store(target, value, scope, op, ctx)
            self._expr(target, stmt, scope, ctx)
            base = target.value
            if isinstance(base, cst.Name):
                self._bind(scope, base.value, "setitem", None, ctx, mutation=True)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value, scope, op, stmt, ctx)

    def _store(self, target, value, scope: Scope, op: str, ctx: _Ctx) -> None:
        if op == "assign" and value is not None:
            self.f.stores.append(Store(target, value, scope, self._next(), ctx.function))

    # expressions ------------------------------------------------------------------------
    def _expr(self, expr: cst.CSTNode, stmt: cst.CSTNode, scope: Scope, ctx: _Ctx) -> None:
        f = self.f
        stack: list[tuple[cst.CSTNode, Scope]] = [(expr, scope)]
        while stack:
            node, sc = stack.pop()
            f._stmt_of[id(node)] = stmt
            if isinstance(node, cst.Call):
                self._call(node, stmt, sc, ctx)
            elif isinstance(node, cst.Lambda):
                inner = Scope("lambda", node, sc)
                f._scope_of_node[id(node)] = inner
                self._params(node.params, inner, sc, stmt, ctx)
                children = [node.body]
                for child in children:
                    f._parents[id(child)] = node
                stack.append((node.body, inner))
                continue
            elif isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                inner = Scope("lambda", node, sc)
                f._scope_of_node[id(node)] = inner
                comp = node.for_in
                while comp is not None:
                    self._target(comp.target, inner, "for", stmt, ctx, value=comp.iter)
                    comp = comp.inner_for_in
                for child in iter_children(node):
                    f._parents[id(child)] = node
                    stack.append((child, inner if child is not node.for_in else sc))
                continue
            elif isinstance(node, cst.Attribute):
                f.attr_loads.append((node, sc, self.f._order))
            for child in iter_children(node):
                f._parents[id(child)] = node
                stack.append((child, sc))

    def _call(self, node: cst.Call, stmt, scope: Scope, ctx: _Ctx) -> None:
        f = self.f
        func = node.func
        method = receiver = None
        if isinstance(func, cst.Attribute):
            method, receiver = func.attr.value, func.value
        qual = f.qualname(func, scope)
        f.calls.append(Call(node, qual, method, receiver, scope, stmt, self._next(), ctx.loops, ctx.withs, ctx.function, ctx.conditional))


def _is_main_guard(stmt: cst.If) -> bool:
    test = stmt.test
    return isinstance(test, cst.Comparison) and dotted(test.left) == "__name__"


@dataclass(frozen=True)
class _Ctx:
    function: cst.FunctionDef | None = None
    loops: tuple = ()
    withs: tuple = ()
    conditional: bool = False
    stmt: cst.CSTNode | None = None

    def enter(self, *, loop=None, with_=None, conditional: bool = False, stmt=None, in_try: bool = False) -> _Ctx:
        return _Ctx(
            self.function,
            self.loops + ((loop,) if loop is not None else ()),
            self.withs + ((with_,) if with_ is not None else ()),
            self.conditional or conditional,
            stmt or self.stmt,
        )


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


# ---------------------------------------------------------------------------------------------
# derived facts about the training run, shared by several rules


@dataclass(frozen=True)
class Padding:
    """What a tokenizer call asks for, as far as it resolves (UNKNOWN where it does not)."""

    padding: Any  # False | True | "longest" | "max_length" | "do_not_pad" | UNKNOWN
    truncation: Any  # None (absent) | True | False | strategy string | UNKNOWN
    max_length: Any  # None (absent) | int | UNKNOWN
    batch: Any  # True (several texts) | False (one text) | UNKNOWN
    return_attention_mask: Any  # None (absent) | bool | UNKNOWN

    @property
    def pads_to_max(self) -> bool:
        return self.padding == "max_length"

    @property
    def pads_batch(self) -> bool:
        return self.padding in (True, "longest") and self.batch is True


def padding_of(facts: Facts, call: Call) -> Padding:
    def kw(name, default=None):
        return facts.kw_value(call, name, default=default) if name in call.kwargs else default

    padding = kw("padding", False)
    if isinstance(padding, str) and padding not in ("longest", "max_length", "do_not_pad"):
        padding = UNKNOWN
    if padding == "do_not_pad":
        padding = False
    if "pad_to_max_length" in call.kwargs and padding is False:
        legacy = kw("pad_to_max_length")
        padding = "max_length" if legacy is True else (False if legacy is False else UNKNOWN)
    if call.has_double_star:
        padding = UNKNOWN if "padding" not in call.kwargs else padding
    text = call.arg(0, "text") or call.kwargs.get("text_target")  # `tok(text_target=summaries)` encodes the targets
    batch: Any = UNKNOWN
    if call.method == "batch_encode_plus":
        batch = True
    elif call.method in ("encode_plus", "encode"):
        batch = False
    elif text is not None:
        value = facts.value(text.value, call.scope, order=call.order)
        if isinstance(value, str):
            batch = False
        elif isinstance(value, (list, tuple)):
            batch = len(value) > 1
        elif isinstance(text.value, (cst.List, cst.Tuple)):
            batch = len(text.value.elements) > 1
    return Padding(padding, kw("truncation"), kw("max_length"), batch, kw("return_attention_mask"))


def run_anchor(facts: Facts, prefer: tuple[str, ...] = ("trainer", "training_args", "fit", "load")) -> cst.CSTNode | None:
    """Where a whole-run finding sits: the call that starts or configures the run."""
    for what in prefer:
        if what == "trainer" and facts.trainers:
            return facts.trainers[0].node
        if what == "training_args" and facts.training_args:
            return facts.training_args[0].node
        if what == "fit" and facts.fit_calls:
            return facts.fit_calls[0].node
        if what == "load":
            loads = facts.model_loads
            if loads:
                return loads[0].call.node
    return None


def trained_model(facts: Facts) -> tuple[ModelLoad, knowledge.ModelInfo] | None:
    """The one known checkpoint the script trains; None when there are several different ones or none."""
    found = []
    for load in facts.model_loads:
        info = facts.checkpoint_info(load)
        if info is not None:
            found.append((load, info))
    if not found or len({info.id for _, info in found}) != 1:
        return None
    return found[0]


def uses_peft(facts: Facts) -> bool:
    return bool(facts.calls_to("peft.get_peft_model", "peft.LoraConfig", "peft.prepare_model_for_kbit_training", "peft.PeftModel.from_pretrained")) or any(
        load.call.qualname and load.call.qualname.startswith("peft.") for load in facts.model_loads
    )


_HALF_DTYPES = ("float16", "bfloat16", "half", "bf16", "fp16")
_QUANTIZATION_KEYWORDS = ("load_in_8bit", "load_in_4bit", "quantization_config")


def _dtype_named(facts: Facts, expr: cst.BaseExpression, call: Call) -> Any:
    """"half", "fp32", "auto" for an expression naming a dtype (`torch.bfloat16`, "float16"), else UNKNOWN."""
    q = facts.qualname(expr, call.scope)
    value = q.rsplit(".", 1)[-1] if q is not None and q.startswith("torch.") else facts.value(expr, call.scope, order=call.order, cli=False)
    if value == "auto":
        return "auto"
    if isinstance(value, str):
        return "half" if value in _HALF_DTYPES else "fp32" if value in ("float32", "float") else UNKNOWN
    return UNKNOWN


def _load_dtype(facts: Facts, load: ModelLoad, version: tuple[int, ...]) -> Any:
    """The dtype one model load gives its weights. 4.x loads fp32 by default; 5.x the stored dtype (`dtype="auto"`)."""
    call = load.call
    if any(k in call.kwargs for k in _QUANTIZATION_KEYWORDS):
        return "quantized"
    arg = call.kwargs.get("torch_dtype") or call.kwargs.get("dtype")
    if arg is None and call.has_double_star:
        return UNKNOWN
    wanted = _dtype_named(facts, arg.value, call) if arg is not None else ("auto" if version >= (5,) and load.how == "pretrained" else "fp32")
    if wanted != "auto":
        return wanted
    info = facts.checkpoint_info(load)
    stored = info.stored_dtype if info is not None else None
    return UNKNOWN if stored is None else "half" if stored in _HALF_DTYPES else "fp32"


def weight_dtype(facts: Facts, version: tuple[int, ...]) -> Any:
    """How the trained model's weights are held: "quantized", "half" (16-bit), "fp32", or UNKNOWN."""
    for call in facts.calls:
        if call.method in ("half", "bfloat16", "to") and call.receiver is not None:
            recv = facts.kind(call.receiver, call.scope, call.order)
            if recv is not None and recv.kind == "model" and (call.method != "to" or any(_dtype_named(facts, a.value, call) == "half" for a in call.node.args)):
                return "half"
    found = {_load_dtype(facts, load, version) for load in facts.model_loads}
    for dtype in ("quantized", "half", UNKNOWN):
        if dtype in found:
            return dtype
    return "fp32"


def amp_enabled(facts: Facts) -> bool | None:
    """True if the run trains under autocast / mixed precision, False if plainly not, None if the command
    line, a config file or a launcher may decide."""
    unknown = False
    for call in facts.training_args:
        for key in ("fp16", "bf16", "half_precision_backend"):
            if key in call.kwargs:
                value = facts.kw_value(call, key, cli=False)
                if value is True:
                    return True
                if value is UNKNOWN:
                    unknown = True
        if call.has_double_star or "deepspeed" in call.kwargs:
            unknown = True
    for trainer in facts.trainers:
        args = trainer.arg(1, "args")
        kind = facts.kind(args.value, trainer.scope, trainer.order) if args is not None else None
        if args is not None and (kind is None or kind.kind != "training_args"):
            unknown = True  # `HfArgumentParser` or a config file built them
    for call in facts.calls:
        q = call.qualname or ""
        if q.startswith(("torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast")):
            return True
        if q.endswith(("mixed_precision.set_global_policy", "mixed_precision.set_policy")):
            policy = facts.arg_value(call, 0, cli=False)
            if isinstance(policy, str) and "16" in policy:
                return True
            unknown = unknown or not isinstance(policy, str)
        if _same_symbol(q, "accelerate.Accelerator") and q.startswith("accelerate"):
            value = facts.kw_value(call, "mixed_precision", cli=False, default=UNKNOWN)  # absent: `accelerate launch` decides
            if value in ("fp16", "bf16", "fp8"):
                return True
            unknown = unknown or value is UNKNOWN
    if any(dest in ("fp16", "bf16", "mixed_precision", "amp", "use_amp", "half", "precision") for dest in facts.argparse_arguments):
        unknown = True
    return None if unknown else False


def mixed_precision(facts: Facts, version: tuple[int, ...]) -> bool | None:
    """True if the run uses 16-bit/mixed precision or quantization somewhere, False if plainly not, None if unknown."""
    weights = weight_dtype(facts, version)
    amp = amp_enabled(facts)
    if weights in ("half", "quantized") or amp is True:
        return True
    return None if weights is UNKNOWN or amp is None else False


def training_arg(facts: Facts, name: str, default: Any = UNKNOWN) -> Any:
    """A TrainingArguments field's value when the script builds exactly one (UNKNOWN when ambiguous)."""
    calls = facts.training_args
    if len(calls) != 1:
        return UNKNOWN
    call = calls[0]
    if name in call.kwargs:
        return facts.kw_value(call, name)
    return UNKNOWN if call.has_double_star else default


def holds_tokenizer(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None) -> bool:
    """`expr` is a tokenizer: classified as one, or an unresolved name plainly called `tokenizer`."""
    found = facts.kind(expr, scope, order)
    return found.kind == "tokenizer" if found is not None else _looks_like_tokenizer(expr, facts, scope)


def padding_at(facts: Facts, call: Call, version: tuple[int, ...]) -> Padding:
    """`padding_of` for a target version: `pad_to_max_length=True` stopped padding in 4.52 (api-facts §1)."""
    pad = padding_of(facts, call)
    if version >= (4, 52) and "pad_to_max_length" in call.kwargs and "padding" not in call.kwargs and not call.has_double_star:
        return dataclasses.replace(pad, padding=False)
    return pad


# Tokenizers whose encoding methods take inputs of their own (boxes, tables, xpaths); 5.x keeps their `encode_plus`.
STRUCTURED_TOKENIZERS = ("layoutlmv2", "layoutlmv3", "layoutxlm", "markuplm", "tapas", "udop")


def tokenizer_load_of(facts: Facts, call: Call) -> Call | None:
    """The `from_pretrained` or constructor call that made the tokenizer an encoding call runs on, when it resolves."""
    target = call.receiver if call.method in ENCODE_METHODS else call.node.func
    found = facts.kind(target, call.scope, call.order)
    return found.call if found is not None and found.kind == "tokenizer" else None


def structured_tokenizer(facts: Facts, call: Call) -> bool:
    """Is `call` an encoding call on a LayoutLM/TAPAS-style tokenizer (by its class or its checkpoint)?"""
    load = tokenizer_load_of(facts, call)
    if load is None:
        return False
    checkpoint = facts.arg_value(load, 0, "pretrained_model_name_or_path") if load.method == "from_pretrained" else None
    names = f"{load.qualname or ''} {checkpoint if isinstance(checkpoint, str) else ''}".lower()
    return any(family in names for family in STRUCTURED_TOKENIZERS)


# ---------------------------------------------------------------------------------------------
# classification labels


LABEL_NAMES = frozenset({"labels", "label", "y", "y_train", "train_labels", "targets", "target", "train_y", "ytrain", "classes"})
_LABEL_COLUMNS = ("label", "labels")
_LABEL_KEYWORDS = ("num_labels", "id2label", "label2id", "problem_type")


@dataclass(frozen=True)
class Classifier:
    """How a classification model load is configured, as far as it resolves."""

    num_labels: Any  # int, or UNKNOWN
    problem_type: Any  # None (absent) | "regression" | "single_label_classification" | "multi_label_classification" | UNKNOWN
    anchor: cst.CSTNode  # the `num_labels=` argument that sets it, else the load call


def classifier(facts: Facts, load: ModelLoad) -> Classifier:
    """`num_labels`/`problem_type` from the load's keywords, else its config (`config=` / `from_config(cfg)`).
    Unset, a built-in base checkpoint or a config class has 2 labels (transformers' default)."""
    call = load.call
    sources = [call]
    config = call.kwargs.get("config") or (call.arg(0) if load.how != "pretrained" else None)
    if config is not None:
        config_call = _config_call(facts, config.value, call)
        if config_call is None:
            return Classifier(UNKNOWN, UNKNOWN, call.node)
        sources.append(config_call)
    if any(source.has_double_star for source in sources):
        return Classifier(UNKNOWN, UNKNOWN, call.node)
    num_labels: Any = None
    problem_type: Any = None
    anchor: cst.CSTNode = call.node
    for source in sources:
        if num_labels is None:
            num_labels, arg = _num_labels_in(facts, source)
            anchor = arg if arg is not None else anchor
        if problem_type is None:
            problem_type = facts.kw_value(source, "problem_type", default=None)
    if num_labels is None:
        num_labels = 2 if sources[-1].method != "from_pretrained" or _base_checkpoint(facts, sources[-1]) else UNKNOWN
    return Classifier(num_labels, problem_type, anchor)


def _base_checkpoint(facts: Facts, load: Call) -> bool:
    """A published base checkpoint of the built-in table, by its exact id: its config sets no labels.
    (`someone/bert-base-uncased` may be a fine-tuned classifier with labels of its own.)"""
    name = facts.arg_value(load, 0, "pretrained_model_name_or_path")
    info = knowledge.lookup_checkpoint(name, facts.base_dir) if isinstance(name, str) else None
    return info is not None and info.source == "built-in" and info.id.lower() == name.lower()


def _config_call(facts: Facts, expr: cst.BaseExpression, at: Call) -> Call | None:
    """The `XConfig(...)` / `AutoConfig.from_pretrained(...)` call a config argument comes from, left unchanged after."""
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, at.scope, at.order)
        assigns = [e for e in events if e.op == "assign"]
        if owner is None or len(assigns) != 1 or assigns[0].conditional or assigns[0].index is not None:
            return None
        if any(store.key in _LABEL_KEYWORDS and dotted(store.target.value) == expr.value for store in facts.stores):
            return None  # `config.num_labels = ...` after the fact
        expr = assigns[0].value
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is None or not call.qualname or not is_transformers_name(call.qualname):
        return None
    cls = call.qualname.rsplit(".", 1)[0] if call.method == "from_pretrained" else call.qualname
    return call if cls.endswith("Config") else None


def _num_labels_in(facts: Facts, call: Call) -> tuple[Any, cst.Arg | None]:
    """(labels count, the argument setting it) from `num_labels=`/`id2label=`/`label2id=`; (None, None) if absent."""
    for keyword in ("num_labels", "id2label", "label2id"):
        arg = call.kwargs.get(keyword)
        if arg is None:
            continue
        value = facts.value(arg.value, call.scope, order=call.order)
        if keyword != "num_labels":
            value = len(value) if isinstance(value, dict) else UNKNOWN
        return (value if isinstance(value, int) and not isinstance(value, bool) else UNKNOWN), arg
    return None, None


@dataclass(frozen=True)
class KnownLabels:
    """One statically known list of label values, and where it came from."""

    values: tuple  # numbers, flattened one level for per-token labels
    origin: str  # for messages: "`labels`", "the `label` column"
    per_token: bool


def known_labels(facts: Facts) -> list[KnownLabels]:
    """Label lists whose values are statically known: label-named variables, `label` columns of
    `Dataset.from_dict`/`DataFrame` dicts, and `labels=` passed to a model."""
    out = []
    scopes = [facts.module_scope] + [scope for defs in facts.functions.values() for _, scope in defs]
    for scope in scopes:
        for name, events in scope.events.items():
            if name.lower() in LABEL_NAMES and any(e.op == "assign" for e in events):
                out.append((facts.value(cst.Name(name), scope, order=events[-1].order + 1), f"`{name}`"))
    for call in facts.calls:
        if call.short in ("from_dict", "DataFrame") and call.positional:
            columns = facts.value(call.positional[0].value, call.scope, order=call.order)
            if isinstance(columns, dict):
                out.extend((columns[key], f"the `{key}` column") for key in _LABEL_COLUMNS if key in columns)
        elif "labels" in call.kwargs and call.method in (None, "forward"):
            model = facts.kind(call.node.func if call.method is None else call.receiver, call.scope, call.order)
            if model is not None and model.kind == "model":
                out.append((facts.kw_value(call, "labels"), f"`{facts.text(call.kwargs['labels'].value)}`"))
    found = []
    for values, origin in out:
        flat = _numbers(values)
        nested = flat is None and isinstance(values, (list, tuple)) and all(isinstance(v, (list, tuple)) for v in values)
        if nested:
            flat = _numbers([v for row in values for v in row])
        if flat:
            found.append(KnownLabels(tuple(flat), origin, nested))
    return found


def _numbers(values: Any) -> list | None:
    if isinstance(values, (list, tuple)) and values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return list(values)
    return None


# ---------------------------------------------------------------------------------------------
# hand-written training loops


def _statements(suite, around: tuple, indent: tuple, unit: str) -> Iterator[tuple[cst.CSTNode, tuple, tuple]]:
    """(statement, compound statements around it, its indentation level by level) for every statement under `suite`."""
    if isinstance(suite, cst.IndentedBlock):
        indent += (suite.indent if suite.indent is not None else unit,)
    for stmt in suite.body:
        yield from _statement(stmt, around, indent, unit)


def _statement(stmt: cst.CSTNode, around: tuple, indent: tuple, unit: str) -> Iterator[tuple[cst.CSTNode, tuple, tuple]]:
    yield stmt, around, indent
    if not isinstance(stmt, cst.BaseCompoundStatement):
        return
    inner = around + (stmt,)
    orelse = getattr(stmt, "orelse", None)
    suites = [getattr(stmt, "body", None), orelse.body if isinstance(orelse, cst.Else) else None]
    suites += [part.body for part in (*getattr(stmt, "handlers", ()), getattr(stmt, "finalbody", None), *getattr(stmt, "cases", ())) if part is not None]
    for suite in suites:
        if suite is not None:
            yield from _statements(suite, inner, indent, unit)
    if isinstance(orelse, cst.If):  # `elif`: nested in its `if`, at the same indentation
        yield from _statement(orelse, inner, indent, unit)


@dataclass(eq=False)
class TrainingLoop:
    """The innermost for/while loop around a hand-written weight update or backward pass."""

    node: cst.For | cst.While
    framework: str  # "torch" | "tensorflow"
    backward: list[Call]  # gradient calls in it, nested loops included
    steps: list[Call]  # `optimizer.step()`, `scaler.step(optimizer)`, `optimizer.apply_gradients(...)` in it
    zeroed: bool  # gradients reset in it or an enclosing loop, directly or through a local helper
    every_iteration_zero_grads: list[Call]  # `optimizer/model.zero_grad()` that run on every iteration
    gate: cst.If | None  # the `if ... % n ...` every step sits under: accumulation written by hand
    accumulation_expr: cst.BaseExpression | None  # that n as written
    accumulation_steps: Any  # its value, or UNKNOWN
    recreated_accumulators: list[cst.Assign]  # TF: gradient accumulators rebuilt with zeros on every iteration
    accelerate: bool  # backward through an `Accelerator`, or `accelerator.accumulate()`: it takes care of all this
    loss_divided: bool | None  # torch: the loss is divided (or multiplied) on its way to backward; None: cannot tell


def _training_loops(facts: Facts) -> list[TrainingLoop]:
    steps = {id(c) for c in facts.calls if c.loops and _is_update(facts, c)}
    grads = {id(c) for c in facts.gradient_calls if c.loops}
    index: dict[int, list[Call]] = {}  # id(loop or function) -> the calls inside it
    for call in facts.calls:
        for owner in (*call.loops, call.function):
            index.setdefault(id(owner), []).append(call)
    innermost = {id(c.loops[-1]) for c in facts.calls if id(c) in steps or id(c) in grads}
    return [_training_loop(facts, node, steps, grads, index) for node, _, _ in facts.loops if id(node) in innermost]


def _training_loop(facts: Facts, node, step_ids: set[int], grad_ids: set[int], index: dict[int, list[Call]]) -> TrainingLoop:
    inside = index.get(id(node), [])
    steps = [c for c in inside if id(c) in step_ids]
    backward = [c for c in inside if id(c) in grad_ids]
    framework = "tensorflow" if any(c.method in ("apply_gradients", "gradient") for c in steps + backward) else "torch"
    gates = [_accumulation_gate(facts, node, c) for c in steps]
    gate, accumulation_expr, accumulation_steps = gates[0] if gates and all(gates) else (None, None, UNKNOWN)
    body = list(walk(node.body))
    # a `continue` may skip what looks unconditional: then nothing counts as run on every iteration
    can_skip = any(isinstance(n, cst.Continue) for n in body)
    zero_grads = [
        c for c in inside
        if c.method == "zero_grad" and c.loops[-1] is node and not can_skip and _every_iteration(facts, node, c.stmt)
        and (_kind_is(facts, c.receiver, c, "optimizer") or _kind_is(facts, c.receiver, c, "model"))
    ]
    recreated = []
    if gate is not None and framework == "tensorflow" and not can_skip:
        used = _names_in(gate)
        for assign in (n for n in body if isinstance(n, cst.Assign) and len(n.targets) == 1):
            target = assign.targets[0].target
            if isinstance(target, cst.Name) and target.value in used and _creates_zeros(facts, assign.value) and _every_iteration(facts, node, facts.parent(assign)):
                recreated.append(assign)
    accelerate = any(c.method in ("backward", "accumulate") and _kind_is(facts, c.receiver, c, "accelerator") for c in inside)
    verdicts = {_divided(facts, loss, c.scope, c.order, node) for c in backward if (loss := _backward_loss(facts, c)) is not None}
    return TrainingLoop(
        node, framework, backward, steps, _zeroed(facts, node, index), zero_grads, gate, accumulation_expr, accumulation_steps, recreated, accelerate,
        verdicts.pop() if len(verdicts) == 1 and framework == "torch" else None,
    )


def in_context(facts: Facts, call: Call, here: Callable[[Call], bool], _seen: set[int] | None = None) -> bool:
    """`here(call)`, or `here` holds at a call site of the local function `call` sits in (transitively)."""
    if here(call):
        return True
    fn = call.function
    seen = _seen if _seen is not None else set()
    if fn is None or id(fn) in seen:
        return False
    seen.add(id(fn))
    return any(in_context(facts, site, here, seen) for site in _calls_of_function(facts, fn))


def in_training_step(facts: Facts, call: Call) -> bool:
    """Is `call` part of a training step: in a loop that runs a backward pass, beside a backward pass at its own or an
    outer loop level of the same function, or in a local function that such a step calls?"""
    training = {id(loop.node) for loop in facts.training_loops if loop.backward}

    def here(c: Call) -> bool:
        return any(id(loop) in training for loop in c.loops) or any(g.scope is c.scope and _prefix(g.loops, c.loops) for g in facts.gradient_calls)

    return in_context(facts, call, here)


def _within(loops: tuple, node: cst.CSTNode) -> bool:
    return any(loop is node for loop in loops)


def _prefix(short: tuple, long: tuple) -> bool:
    return len(short) <= len(long) and all(a is b for a, b in zip(short, long))


def _kind_is(facts: Facts, expr: cst.BaseExpression | None, call: Call, kind: str) -> bool:
    found = facts.kind(expr, call.scope, call.order)
    return found is not None and found.kind == kind


def _is_gradient_call(facts: Facts, call: Call) -> bool:
    if call.method == "backward" or call.qualname in ("torch.autograd.grad", "torch.autograd.backward"):
        return True
    return call.method == "gradient" and _kind_is(facts, call.receiver, call, "gradient_tape")


def _is_update(facts: Facts, call: Call) -> bool:
    """`optimizer.step()`, `optimizer.apply_gradients(...)`, `scaler.step(optimizer)`, `xm.optimizer_step(optimizer)`."""
    if call.method in ("step", "apply_gradients") and _kind_is(facts, call.receiver, call, "optimizer"):
        return True
    if call.method == "step" or (call.qualname and _same_symbol(call.qualname, "torch_xla.core.xla_model.optimizer_step")):
        first = call.arg(0, "optimizer")
        return first is not None and _kind_is(facts, first.value, call, "optimizer")
    return False


def _in_loop(facts: Facts, loop, stmt) -> tuple:
    """The compound statements between `loop` and `stmt`."""
    around = facts.enclosing(stmt)
    index = next((i for i, s in enumerate(around) if s is loop), None)
    return () if index is None else around[index + 1 :]


def _every_iteration(facts: Facts, loop, stmt) -> bool:
    """`stmt` runs on every iteration of `loop`: nothing but `with` blocks between them."""
    return stmt is not None and all(isinstance(s, cst.With) for s in _in_loop(facts, loop, stmt))


def _accumulation_gate(facts: Facts, loop, call: Call) -> tuple[cst.If, cst.BaseExpression, Any] | None:
    """The `if` on `... % n` (directly or through a flag set from it) that a step sits under, with n; None for n == 1."""
    for stmt in _in_loop(facts, loop, call.stmt):
        if not isinstance(stmt, cst.If):
            continue
        sources = [stmt.test]
        for name in (n for n in walk(stmt.test) if isinstance(n, cst.Name)):
            _, events = facts.binding_events(name.value, call.scope, call.order)
            sources += [e.value for e in events[-1:] if e.op == "assign" and e.value is not None]
        modulo = next((n for s in sources for n in walk(s) if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo)), None)
        if modulo is not None:
            steps = facts.value(modulo.right, call.scope, order=call.order)
            return None if steps == 1 else (stmt, modulo.right, steps)
    return None


def _grad_attribute(expr: cst.BaseExpression | None) -> bool:
    """`p.grad` or `p.grad.data`."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        expr = expr.value
    return isinstance(expr, cst.Attribute) and expr.attr.value == "grad"


def _resets_gradients(calls: list[Call], root: cst.CSTNode) -> bool:
    """`zero_grad()` (optimizer, model, accelerated or DeepSpeed wrapper), `p.grad.zero_()`, `p.grad = None` under `root`."""
    if any(c.method == "zero_grad" or (c.method == "zero_" and _grad_attribute(c.receiver)) for c in calls):
        return True
    return any(
        isinstance(n, cst.Assign) and dotted(n.value) == "None" and any(_grad_attribute(t.target) for t in n.targets) for n in walk(root)
    )


def _zeroed(facts: Facts, node, index: dict[int, list[Call]]) -> bool:
    """Gradients are reset in the outermost loop of this function around `node`, or by a local helper called in `node`."""
    around = facts.enclosing(node)
    last_def = max((i for i, s in enumerate(around) if isinstance(s, (cst.FunctionDef, cst.ClassDef))), default=-1)
    outer = next((s for s in around[last_def + 1 :] if isinstance(s, (cst.For, cst.While))), node)
    if _resets_gradients(index.get(id(outer), []), outer):
        return True
    helpers = {id(fn): fn for call in index.get(id(node), []) for fn in _local_functions(facts, call)}
    return any(_resets_gradients(index.get(id(fn), []), fn.body) for fn in helpers.values())


def _local_functions(facts: Facts, call: Call) -> list[cst.FunctionDef]:
    """The file's own functions (or `self.` methods) a call may run, by name."""
    if call.qualname is None and isinstance(call.node.func, cst.Name):
        name = call.node.func.value
    elif call.method is not None and dotted(call.receiver) == "self":
        name = call.method
    else:
        return []
    return [fn for fn, _ in facts.functions.get(name, ())]


def _calls_of_function(facts: Facts, fn: cst.FunctionDef) -> list[Call]:
    return [c for c in facts.calls_by_short.get(fn.name.value, ()) if any(f is fn for f in _local_functions(facts, c))]


def _creates_zeros(facts: Facts, value: cst.BaseExpression) -> bool:
    """`[tf.zeros_like(v) for v in ...]`, `[tf.Variable(tf.zeros_like(v)) ...]`: a fresh accumulator."""
    for node in walk(value):
        call = facts.call_of(node) if isinstance(node, cst.Call) else None
        if call is not None and call.qualname and any(_same_symbol(call.qualname, f"tensorflow.{name}") for name in ("zeros_like", "zeros")):
            return True
    return False


def _backward_loss(facts: Facts, call: Call) -> cst.BaseExpression | None:
    """The loss a torch backward call differentiates: `loss.backward()`, `scaler.scale(loss).backward()`, `accelerator.backward(loss)`."""
    if call.method != "backward":
        return None
    if call.qualname is not None or _kind_is(facts, call.receiver, call, "accelerator"):
        return call.positional[0].value if call.positional else None
    loss = call.receiver
    inner = facts.call_of(loss) if isinstance(loss, cst.Call) else None
    if inner is not None and inner.method == "scale" and len(inner.positional) == 1:
        loss = inner.positional[0].value
    return loss


def _divided(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None, loop, depth: int = 0) -> bool | None:
    """Is the loss divided (or multiplied) on its way to backward inside `loop`? None when that cannot be seen."""
    nodes = list(walk(expr))
    calls = [c for n in nodes if isinstance(n, cst.Call) and (c := facts.call_of(n)) is not None]
    if any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Divide, cst.Multiply)) for n in nodes):
        return True
    if any(c.method in ("div", "div_", "mul", "mul_") for c in calls):
        return True
    if any(_local_functions(facts, c) for c in calls):
        return None  # a helper of the file's own may divide inside
    if not isinstance(expr, cst.Name) or depth > 4:
        return False
    owner, events = facts.binding_events(expr.value, scope, order)
    here = [e for e in events if _within(e.loops, loop)]
    if not here or owner is None:
        return None
    if any(e.op in ("augmul", "augother") for e in here):
        return True
    verdicts = {_divided(facts, e.value, owner, e.order, loop, depth + 1) for e in here if e.op == "assign" and e.value is not None}
    return True if True in verdicts else (False if verdicts == {False} else None)


_FLOAT_DTYPES = frozenset({"float", "float16", "float32", "float64", "double", "half", "bfloat16", "FloatTensor", "DoubleTensor", "HalfTensor"})


def float_cast(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None) -> cst.BaseExpression | None:
    """What `expr` casts to a float dtype (`x.float()`, `x.to(torch.float32)`, `torch.tensor(x, dtype=torch.float)`,
    `a.astype(np.float32)`), following one plain assignment of a name; None when it is no such cast."""
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, scope, order)
        assigns = [e for e in events if e.op == "assign"]
        if owner is None or len(assigns) != 1 or assigns[0].index is not None or not isinstance(assigns[0].value, cst.Call):
            return None
        expr = assigns[0].value
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is None:
        return None
    if call.qualname is None and call.method in ("float", "double", "half", "bfloat16") and not call.node.args:
        return call.receiver
    if call.qualname is None and call.method in ("to", "type", "astype"):
        dtypes = [a for a in call.node.args if a.keyword is None or a.keyword.value == "dtype"]
        return call.receiver if any(_float_dtype(facts, a.value, call) for a in dtypes) else None
    if call.qualname in ("torch.tensor", "torch.as_tensor", "numpy.array", "numpy.asarray") and call.positional:
        dtype = call.kwargs.get("dtype")
        return call.positional[0].value if dtype is not None and _float_dtype(facts, dtype.value, call) else None
    if call.qualname in ("torch.FloatTensor", "torch.DoubleTensor") and call.positional:
        return call.positional[0].value
    return None


def _float_dtype(facts: Facts, expr: cst.BaseExpression, call: Call) -> bool:
    qualname = facts.qualname(expr, call.scope)
    if qualname is not None:
        return (qualname.split(".", 1)[0] in ("torch", "numpy") or qualname == "builtins.float") and qualname.rsplit(".", 1)[-1] in _FLOAT_DTYPES
    value = facts.value(expr, call.scope, order=call.order)
    return isinstance(value, str) and value in _FLOAT_DTYPES


def is_model_call(facts: Facts, call: Call) -> bool:
    """A forward pass: `model(...)`, `self.model(...)`, `model.forward(...)`, `model.generate(...)`."""
    target = call.receiver if call.method in ("forward", "generate") else call.node.func
    found = facts.kind(target, call.scope, call.order)
    return found is not None and found.kind == "model"
