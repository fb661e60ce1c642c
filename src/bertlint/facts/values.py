"""The value layer's face: `Values` is the semantic model (`model.Model`) with the evaluator (`evaluator`, which
knows Python) running the library models (`brain`), the queries the rules ask of it, and the file's run-wide lists
that need it (tokenizer calls, model loads, trainers, ...). Derived queries (`training`, `labels`, `loops`) sit
above it.

`evaluate` gives any abstract value; `value` a constant (`cli=False`: command-line and environment defaults count
as unknown); `kind` an object the rules care about (a `Binding`); `is_batch` whether texts are several.
"""

from __future__ import annotations

import builtins
import functools
import re
from collections import Counter
from typing import Any, NamedTuple

import libcst as cst

from bertlint import knowledge
from bertlint.facts.brain import BRAINS, config, tables
from bertlint.facts.brain.transformers import ModelLoad, checkpoint_argument, holds_tokenizer, is_keras_model, is_tokenizer_load, load_behind, model_load
from bertlint.facts.abstract import MAX_DEPTH, Abstract, Binding, Instance, Pack, Series, agree
from bertlint.facts.evaluator import Evaluation, Evaluator
from bertlint.facts.functions import enclosing_class, param_arguments, returns_of
from bertlint.facts.instances import self_attribute_values
from bertlint.facts.names import ENCODE_METHODS, TRAINING_ARGS_CLASSES, is_trainer_class
from bertlint.facts.nodes import UNKNOWN, Call, Scope, Store, dotted, literal, walk
from bertlint.facts.reaching import length
from bertlint.facts.sharing import GROWING

MAX_STEPS = 8  # hops within one scope `is_batch` follows (a name to its binding, a slice to what it slices)

__all__ = ["Binding", "Given", "Instance", "ModelLoad", "Pack", "Series", "Values", "checkpoint_argument", "holds_tokenizer", "load_behind"]


class Given(NamedTuple):
    """A keyword a call passes, as Python binds it: `value`, the expression it reads (the keyword argument's, or the item
    `mapping["k"]` of a `**mapping` whose keys are known); `at`, where the file spells it (the keyword argument, the
    string key of the dict display or the keyword of the `dict(...)` call the mapping is, else the `**` argument);
    `spelling`, the node a rename rewrites (None where none can: the `**` argument); `alone`, whether that spelling
    reaches this call only (a rename there changes no other call)."""

    value: cst.BaseExpression
    at: cst.CSTNode
    spelling: cst.CSTNode | None
    alone: bool

    @property
    def explicit(self) -> bool:
        """Passed as a keyword argument of the call itself (not by a `**mapping`)."""
        return isinstance(self.at, cst.Arg) and self.at.value is self.value

    def spelt(self, keyword: str) -> str:
        """`keyword` written where this one is spelt: a name, or a string key in the same quotes."""
        key = self.spelling
        return f"{key.prefix}{key.quote}{keyword}{key.quote}" if isinstance(key, cst.SimpleString) else keyword


class Values(Evaluation):
    """The model of one file with its evaluator: `evaluate` (any abstract value), `value` (constants), `kind` (objects)."""

    brains = BRAINS

    def checkpoint(self, name: Any) -> knowledge.ModelInfo | None:
        """What is known of the checkpoint `name` as this file passes it to `from_pretrained`: a local
        folder's config.json (beside the file, or under the working directory) wins over the table."""
        if not isinstance(name, str):
            return None
        for local in knowledge.local_config_candidates(name, self.base_dir):
            self.depends_on(local)
        return knowledge.lookup_checkpoint(name, self.base_dir)

    def name_value(self, name: str, scope: Scope, *, order: int | None = None, cli: bool = True) -> Any:
        """The constant a name holds when read in `scope` at `order` (a name no expression of the file reads there)."""
        found = self.named_at(name, scope, order, cli, None)
        return UNKNOWN if isinstance(found, Abstract) else found

    def value(self, expr: cst.BaseExpression | None, scope: Scope, *, order: int | None = None, cli: bool = True) -> Any:
        """The constant value of `expr`, or UNKNOWN. `cli=False` treats command-line and environment defaults as unknown."""
        found = self.evaluate(expr, scope, order, cli=cli)
        return UNKNOWN if isinstance(found, Abstract) else found

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

    def given(self, call: Call, index: int, keyword: str | None = None) -> Any:
        """The expression `call` passes for the parameter at `index` (-1: keyword only) or named `keyword`, as Python
        binds it: the argument, or the item `mapping["k"]` of a `**mapping` whose keys are known (`Items.spread`:
        a dict display, `dict(...)`, one built by item stores and `update`, merged, returned by the file's function);
        None when nothing passes it; UNKNOWN when a `*` or `**` whose contents are not known may, or when the call
        raises a TypeError (a keyword given twice: explicitly and by a `**`, or by two)."""
        if not call.has_star_args or index < 0 and not call.has_double_star:  # (a `*sequence` passes no keyword)
            arg = call.arg(index, keyword)
            return arg.value if arg is not None else None
        found = self.memoised(("passed", id(call)), lambda: self.passed(call))
        if found is None or found is UNKNOWN:  # (UNKNOWN: asked again while being found)
            return UNKNOWN
        positional, keywords, hidden, _ = found
        if keyword is not None and keyword in keywords:
            return keywords[keyword]
        if 0 <= index < len(positional):
            return positional[index]
        return UNKNOWN if hidden else None

    def gives(self, call: Call, keyword: str) -> Any:
        """Whether `call` passes `keyword` as a keyword (`given`; a `*sequence` passes none): True, False, or UNKNOWN (a
        `**` of unknown keys may, or the call raises a TypeError)."""
        found = self.given(call, -1, keyword)
        return UNKNOWN if found is UNKNOWN else found is not None

    def keywords(self, call: Call) -> dict[str, Given]:
        """Every keyword `call` passes, in the order Python passes them, with where the file spells it (`Given`): those
        of a `**mapping` whose keys are known too. Only the explicit ones where the call raises a TypeError (a keyword
        given twice)."""
        explicit = {k: Given(a.value, a, a.keyword, True) for k, a in call.kwargs.items()}
        found = self.memoised(("passed", id(call)), lambda: self.passed(call)) if call.has_double_star else None
        if found is None or found is UNKNOWN:
            return explicit
        stars = [a for a in call.node.args if a.star == "**"]
        return {k: explicit[k] if k in explicit else self._spelt(call, stars, k, v) for k, v in found[1].items()}

    def renaming(self, call: Call, given: Given, new: str) -> tuple[cst.CSTNode, str] | None:
        """The rewrite that renames the keyword `given` (one of `keywords(call)`) to `new` where the file spells it: only
        where that spelling reaches this call alone and `new` is certainly not passed already; else None."""
        if given.spelling is None or not given.alone or self.gives(call, new) is not False:
            return None
        return given.spelling, given.spelt(new)

    def keyword_at(self, call: Call, keyword: str) -> cst.CSTNode:
        """Where the file spells the `keyword` that `call` passes (`keywords`: its argument, a key of the dict it
        spreads), else the call."""
        found = self.keywords(call).get(keyword)
        return found.at if found is not None else call.node

    def _spelt(self, call: Call, stars: list[cst.Arg], keyword: str, value: cst.BaseExpression) -> Given:
        """Where the file spells `keyword`, which one of the `**mapping` arguments `stars` passes as `value` (the item
        `mapping["keyword"]`): the string key of the dict display the mapping is (bound to a name once, and not changed
        since), or the keyword of its `dict(...)` call; else the `**` argument itself."""
        star = next(a for a in stars if a.value is value.value)
        found = self.definition(star.value, call.scope, call.order)
        made = self.call_of(found.value) if found is not None and isinstance(found.value, cst.Call) else None
        spellings = []
        if found is not None and isinstance(found.value, cst.Dict):
            spellings = [e.key for e in found.value.elements if isinstance(e, cst.DictElement) and literal(e.key) == keyword]
        elif made is not None and made.qualname == "builtins.dict":
            spellings = [a.keyword for a in made.node.args if a.keyword is not None and a.keyword.value == keyword]
        if len(spellings) != 1:
            return Given(value, star, None, False)
        at = spellings[0] if isinstance(spellings[0], cst.SimpleString) else made.kwargs[keyword]
        alone = not isinstance(star.value, cst.Name) or self._name_counts[star.value.value] == 2  # its binding and this read
        return Given(value, at, spellings[0], alone)

    @functools.cached_property
    def _name_counts(self) -> Counter:
        """How often each name is written in the file (bound or read)."""
        return Counter(n.value for n in walk(self.module) if isinstance(n, cst.Name))

    def arg_value(self, call: Call, index: int, keyword: str | None = None, *, cli: bool = True, default: Any = UNKNOWN) -> Any:
        expr = self.given(call, index, keyword)
        if expr is None:
            return default
        return UNKNOWN if expr is UNKNOWN else self.value(expr, call.scope, order=call.order, cli=cli)

    def kw_value(self, call: Call, keyword: str, *, cli: bool = True, default: Any = UNKNOWN) -> Any:
        return self.arg_value(call, -1, keyword, cli=cli, default=default)

    def passes(self, call: Call, keyword: str) -> bool:
        """The call gives `keyword` a value other than None: `weight=None` (or a name holding None on every path) is
        the parameter's default, as if absent; a value that cannot be told counts as given."""
        return self.kw_value(call, keyword, default=None) is not None

    def is_batch(self, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None, _depth: int = 0, *, words: bool = False, _steps: int = 0) -> Any:
        """Does `expr` hold several texts? The one answer every rule takes: True for a constant list of two or more,
        a comprehension, `list(...)`, `.tolist()`, a file's lines, a column of a table or a dataset (or a slice of
        one), a list built by appending in a loop, a batch's column in a datasets `map` function, `[t] if
        isinstance(t, str) else t`, a helper returning one, a parameter every call site passes one to; False for one
        string or one example's field; UNKNOWN otherwise. `words` (`is_split_into_words=True`): a list of strings is
        one pre-split text, so only a column of examples counts as several. `_depth` counts the hops into the file's
        functions (a parameter to its call sites, a call to its returns), `_steps` the hops within one scope (a name
        to its binding, a slice to what it slices), each bounded on its own: a name bound to a slice of a name
        holding texts, reached through a parameter, is three steps and one hop."""
        if expr is None or _depth > MAX_DEPTH or _steps > MAX_STEPS:
            return UNKNOWN
        found = self.evaluate(expr, scope, order)
        if isinstance(found, str) or tables.one_text(found):
            return False
        if tables.several_texts(found):
            return True
        if words:
            return UNKNOWN
        if isinstance(found, (list, tuple)):
            return len(found) > 1
        if isinstance(found, Pack):
            return len(found.items) > 1
        if isinstance(found, Series):
            return True  # a comprehension, a list appended to in a loop
        if isinstance(expr, (cst.List, cst.Tuple)):
            return len(expr.elements) > 1
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            return True
        if isinstance(expr, cst.IfExp) and _normalised_to_list(expr):
            return True
        if _makes_a_string(self, expr, scope, order):
            return False
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice):
            return True if _is_column(self, expr.value, scope, order) or self.is_batch(expr.value, scope, order, _depth, _steps=_steps + 1) is True else UNKNOWN
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            key = self.evaluate(expr.slice[0].slice.value, scope, order)  # `df["text"][i]`: one text of a column
            one = not isinstance(key, (str, Abstract)) and tables.several_texts(self.evaluate(expr.value, scope, order))
            return False if one else UNKNOWN  # (an element of any list of two or more need be no text: `[0, texts][1]`)
        if isinstance(expr, cst.Call):
            call = self.call_of(expr)
            if call is None:
                return UNKNOWN
            if call.qualname in ("builtins.list", "builtins.sorted") and len(call.positional) == 1:
                return True  # a list made of an iterable (a column, a comprehension, the texts of a collated batch)
            if call.method in tables.LINE_METHODS and call.qualname is None:
                return True
            return agree([self.is_batch(r, s, None, _depth + 1) for r, s in returns_of(self, call) or ()])
        if isinstance(expr, cst.Attribute) and dotted(expr) == f"self.{expr.attr.value}":  # what every binding of it answers
            sources = self_attribute_values(self, enclosing_class(scope), expr.attr.value)
            return agree([self.is_batch(e, s, o, _depth + 1) for e, s, o in sources or ()])
        if isinstance(expr, cst.Name):
            owner, events = self.binding_events(expr.value, scope, order)
            if owner is None:
                return UNKNOWN
            if not events and expr.value in owner.params:
                sources = param_arguments(self, owner, expr.value)
                return agree([self.is_batch(e, s, o, _depth + 1) for e, s, o in sources or ()])
            if len(events) == 1 and events[0].op == "for" and not events[0].path and events[0].guards and events[0].guards[-1].kind == "loop":
                return self._elements_batch(events[0].whole, owner, events[0].guards[-1].at, _depth, _steps)
            assigns = [i for i, e in enumerate(events) if e.op == "assign"]
            if not assigns or events[assigns[-1]].index is not None:
                return UNKNOWN
            first, after = events[assigns[-1]], events[assigns[-1] + 1 :]
            own = owner.events.get(expr.value, ())
            through = [e for e in self.events_through_aliases(owner, expr.value) if e not in own and e.order > first.order and (owner is not scope or order is None or e.order < order)]
            after = sorted([*after, *through], key=lambda e: e.order)  # `alias = texts; alias.extend(dev)` changes `texts`
            if len(assigns) > 1 and (owner is not scope or order is None or first.order >= order):
                return UNKNOWN  # the last of several bindings answers only for a read after it in its own scope
            if first.conditional and not Evaluator(self, scope, order, True, None).runs_before_read(first, owner):
                return UNKNOWN  # (bound in a loop body and read later in the same pass: it ran, and hides what came before)
            # `grow(texts)`: a helper of the file extends its parameter; `texts.pop()`, or a name bound to the list changes
            # it (`t = texts; t.extend(dev); t.remove(t[0])`: no plain alias, whose events `after` holds); `texts.sort()`
            # keeps every text, and so several
            shared = self.changed_by_a_callee(expr.value, unknown=False) or (id(owner), expr.value) in self.mutated_beyond_order or self.changed_through_a_name_bound_to_it(owner, expr.value)
            if not after and not shared:
                return self.is_batch(first.value, owner, first.order, _depth, _steps=_steps + 1)
            grown = self.only_grown(expr.value, owner)
            if isinstance(first.value, cst.List) and all(e.op in ("append", "extend") for e in after) and any(len(e.loops) > len(first.loops) for e in after) and (grown or not shared):
                return True  # a list appended to in a loop
            if all(e.op in GROWING or e.op == "iadd" for e in after) and grown:  # `texts = train; texts.extend(dev)` (an alias's `+=`: "iadd")
                return True if self.is_batch(first.value, owner, first.order, _depth, _steps=_steps + 1) is True else UNKNOWN  # several stay several
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            # `train_texts + dev_texts`: a list of both lists' elements (one text each may make two: only several stay several)
            several = all(self.is_batch(side, scope, order, _depth, _steps=_steps + 1) is True for side in (expr.left, expr.right))
            return True if several else UNKNOWN
        return UNKNOWN

    def _elements_batch(self, iterable: cst.BaseExpression | None, scope: Scope, order: int, _depth: int, _steps: int) -> Any:
        """`is_batch` of a loop target over `iterable` (its one binding): when the iterable is a display (or a name
        bound once to one), what every element answers (`for t in ["a b", "c d"]`: one text each pass)."""
        found = self.latest_definition(iterable, scope, order)
        if found is None or not isinstance(found.value, (cst.List, cst.Tuple, cst.Set)) or not found.value.elements:
            return UNKNOWN
        if any(isinstance(e, cst.StarredElement) for e in found.value.elements):
            return UNKNOWN
        return agree([self.is_batch(e.value, found.scope, found.order, _depth, _steps=_steps + 1) for e in found.value.elements])

    # ---- the file's run-wide lists --------------------------------------------------
    @functools.cached_property
    def tokenizer_calls(self) -> list[Call]:
        """Encoding calls on a tokenizer: `tok(...)`, `tok.encode_plus(...)`, `tok.batch_encode_plus(...)`."""
        out = []
        for call in self.calls:
            if call.method in ENCODE_METHODS:
                if holds_tokenizer(self, call.receiver, call.scope, call.order):
                    out.append(call)
            elif call.qualname is None or call.qualname.startswith("<local>."):  # `Config.tokenizer(...)`: a class attribute
                if holds_tokenizer(self, call.node.func, call.scope, call.order):  # `tok(...)`, `self.tokenizer(...)`, `toks[0](...)`
                    out.append(call)
        return out

    @functools.cached_property
    def model_loads(self) -> list[ModelLoad]:
        return [load for call in self.calls if (load := model_load(self, call)) is not None]

    @functools.cached_property
    def tokenizer_loads(self) -> list[Call]:
        return [c for c in self.calls if is_tokenizer_load(self, c)]

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
        return [c for c in self.calls if c.method == "fit" and is_keras_model(self, c)]

    @functools.cached_property
    def lightning_fits(self) -> list[tuple[Call, Call]]:
        """The file's Lightning `fit` calls (`trainer.fit(module)`, `pl.Trainer(...).fit(module)`), each with the
        `Trainer(...)` construction it is called on."""
        found = []
        for call in self.calls_by_short.get("fit", ()):
            made = self.evaluate(call.receiver, call.scope, call.order) if call.method == "fit" and call.receiver is not None else None
            if isinstance(made, Instance) and made.kind == "lightning_trainer" and made.call is not None:
                found.append((call, made.call))
        return found

    @functools.cached_property
    def lightning_trainers(self) -> list[Call]:
        """The Lightning `Trainer(...)` constructions whose `fit` the file calls: each trains the module's models by its
        `training_step`."""
        return list({id(trainer): trainer for _, trainer in self.lightning_fits}.values())

    @functools.cached_property
    def backward_calls(self) -> list[Call]:
        return [c for c in self.calls if c.method == "backward"]

    @functools.cached_property
    def is_training(self) -> bool:
        """Does this script train something (Trainer, a loop with backward, keras fit, Lightning's `Trainer.fit`, accelerate)? A backward pass in a
        `for` loop over a name the file never binds does not count: the loop's header raises NameError before its first step;
        nor does one in a loop that never iterates (`never_runs`)."""
        live_backward = any(not self.loops_over_unbound(c) and not self.never_runs(c) for c in self.backward_calls)
        return bool(self.trainers or live_backward or self.fit_calls or self.lightning_trainers or any(c.method == "apply_gradients" for c in self.calls))

    def iterated(self, loop: cst.CSTNode) -> Any:
        """The value a `for` loop of the file iterates, as its header reads it; UNKNOWN for a `while` or an unknown value."""
        scope = next((s for node, s, _ in self.loops if node is loop), None)
        if not isinstance(loop, cst.For) or scope is None:
            return UNKNOWN
        return self.value(loop.iter, scope, order=self.loop_spans[id(loop)][0])

    def never_iterates(self, loop: cst.CSTNode) -> bool:
        """A `for` whose iterable is certainly empty where the loop reads it runs its body zero times: `range(0)`,
        `range(EPOCHS)` with `EPOCHS = 0`, `()`, a `train = []` that no code that runs appends to (its `append` loop left
        inside a string literal). Only what the value layer knows: a list appended to anywhere reachable, extended, built from
        data or read from a file has no known length, and neither has a parameter nor a `while` loop's test."""
        return self.memoised(("never_iterates", id(loop)), lambda: (size := length(self.iterated(loop))) is not UNKNOWN and size == 0)

    def never_runs(self, call: Call) -> bool:
        """`call` sits in a `for` loop (of its own scope) that never iterates (`never_iterates`)."""
        return any(self.never_iterates(loop) for loop in call.loops)

    def loops_over_unbound(self, call: Call) -> bool:
        """A `for` loop around `call` iterates an expression that reads a name bound nowhere in the file, in no enclosing
        scope, and no builtin (`for batch in train_dataloader:` with no `train_dataloader` anywhere): NameError, so the
        body never runs. Never when the file may bind names unseen (`from m import *`, `exec`, `globals()`)."""
        if _NAMESPACE_WRITES.search(self.source):
            return False
        return any(isinstance(loop, cst.For) and any(call.scope.lookup_scope(name) is None for name in _free_names(loop.iter)) for loop in call.loops)

    @functools.cached_property
    def argparse_arguments(self) -> dict[str, tuple]:
        """dest -> (default expr or None, scope, order, `type=`'s qualified name or None) for every `add_argument` in
        the file (groups included)."""
        return config.argparse_arguments(self)

    @functools.cached_property
    def environment_set(self) -> frozenset | None:
        """The environment variables the file sets itself; None when it sets one it does not name."""
        return config.environment_set(self)


_NAMESPACE_WRITES = re.compile(r"\bimport \*|\bexec\(|\bglobals\(\)|\bvars\(\)|\b__builtins__\b|^\s*[%!]", re.M)
_BUILTINS = frozenset(dir(builtins))


def _free_names(expr: cst.BaseExpression) -> set[str]:
    """The names an expression reads that are not builtins (an attribute's name and a keyword are not reads); empty when
    it binds names of its own (a lambda, a comprehension, `:=`)."""
    names: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.NamedExpr)):
            return set()
        if isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, cst.Attribute):
            stack.append(node.value)
        elif isinstance(node, cst.Arg):
            stack.append(node.value)
        else:
            stack.extend(node.children)
    return names - _BUILTINS


# str methods that give a str (no list or pandas Series has them: a Series has them under `.str`)
STRING_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "casefold", "title", "capitalize", "format"})


def _makes_a_string(values: Values, expr: cst.BaseExpression, scope: Scope, order: int | None) -> bool:
    """`expr` makes one str whatever its operands hold: an f-string, `sep.join(...)`, `re.sub(...)`, `str(x)`,
    `text.strip()`, `prefix + text` with a string constant or another string made so (`title + " " + body`)."""
    if isinstance(expr, cst.FormattedString):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):  # not `"p: " + df["text"]` (a Series)
        sides = [values.evaluate(side, scope, order) for side in (expr.left, expr.right)]
        strings = any(isinstance(value, str) or _makes_a_string(values, side, scope, order) for value, side in zip(sides, (expr.left, expr.right)))
        return strings and not any(tables.several_texts(side) for side in sides)
    call = values.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is None:
        return False
    if call.qualname in ("builtins.str", "re.sub"):
        return True
    if call.method == "join":
        return isinstance(values.value(call.receiver, scope, order=order), str)
    accessor = isinstance(call.receiver, cst.Attribute) and call.receiver.attr.value == "str"  # pandas `col.str.lower()`
    return call.method in STRING_METHODS and not accessor and not tables.several_texts(values.evaluate(call.receiver, scope, order))


def _normalised_to_list(expr: cst.IfExp) -> bool:
    """`[t] if isinstance(t, str) else t` (or the branches the other way round): texts made a list, one or several."""
    test, body, orelse = expr.test, expr.body, expr.orelse
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    test = test.expression if negated else test
    if not (isinstance(test, cst.Call) and dotted(test.func) == "isinstance" and len(test.args) == 2 and dotted(test.args[1].value) == "str"):
        return False
    name = dotted(test.args[0].value)
    wrapped, kept = (orelse, body) if negated else (body, orelse)
    return name is not None and dotted(kept) == name and isinstance(wrapped, cst.List) and len(wrapped.elements) == 1 and dotted(wrapped.elements[0].value) == name


def _is_column(values: Values, expr: cst.BaseExpression, scope: Scope, order: int | None) -> bool:
    """`df["text"]`, `ds["train"]["text"]`, `df.text.values`: a column of a table or a dataset split, by a string key."""
    while isinstance(expr, cst.Attribute) and expr.attr.value in ("values", "array"):
        expr = expr.value
    if not (isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)):
        return False
    return isinstance(values.value(expr.slice[0].slice.value, scope, order=order), str) and not isinstance(values.value(expr.value, scope, order=order), (dict, str))
