"""Derived facts about the training run shared by several rules: padding, the run's anchor, dtypes, mixed precision, tokenizers."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

import libcst as cst

from bertlint import knowledge
from bertlint.facts.brain import tensors
from bertlint.facts.brain.steps import LIGHTNING_PRECISION, LIGHTNING_PRECISION_DEFAULT, LIGHTNING_PRECISION_OVERRIDES, lightning_spellings
from bertlint.facts.names import ENCODE_METHODS, same_symbol
from bertlint.facts.brain.tables import EXAMPLE_FUNCTIONS
from bertlint.facts.functions import Target, callee, hands
from bertlint.facts.model import per_file
from bertlint.facts.nodes import UNKNOWN, Call, Scope, Store, dotted, literal, walk
from bertlint.facts.values import ModelLoad, param_arguments
from bertlint.facts.values import Values as Facts


# ---------------------------------------------------------------------------------------------
# derived facts about the training run, shared by several rules


@dataclass(frozen=True, repr=False)
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
    def kw(name, default=None):  # (UNKNOWN where a `**mapping` of unknown keys may pass it)
        return facts.kw_value(call, name, default=default)

    padding = kw("padding", call.method == "pad")  # `tokenizer.pad(features)` pads to the longest by default
    if isinstance(padding, str) and padding not in ("longest", "max_length", "do_not_pad"):
        padding = UNKNOWN
    if padding == "do_not_pad":
        padding = False
    if padding is False and (legacy := kw("pad_to_max_length", False)) is not False:
        padding = "max_length" if legacy is True else UNKNOWN
    text = text_argument(facts, call)
    batch: Any = UNKNOWN
    if call.method in ("batch_encode_plus", "pad"):
        batch = True
    elif call.method in ("encode_plus", "encode"):
        batch = False
    elif text is not None:
        words = kw("is_split_into_words", False)  # a list of strings is one pre-split text
        batch = facts.is_batch(text.value, call.scope, call.order, words=True) if words is not False else facts.is_batch(text.value, call.scope, call.order)
    return Padding(padding, kw("truncation"), kw("max_length"), batch, kw("return_attention_mask"))


def text_argument(facts: Facts, call: Call) -> cst.Arg | None:
    """The texts a tokenizer call encodes: its first argument (`tok(text_target=summaries)` encodes the targets); a
    processor's `text=` (its first parameter is `images`)."""
    made = facts.kind(call.node, call.scope, call.order)
    if made is not None and made.kind == "encoding" and made.detail == "processor":
        return call.kwargs.get("text")
    return call.arg(0, "text") or call.kwargs.get("text_target")


def run_anchor(facts: Facts, prefer: tuple[str, ...] = ("trainer", "training_args", "fit", "load")) -> cst.CSTNode | None:
    """Where a whole-run finding sits: the call that starts or configures the run ("lightning": a Lightning `Trainer(...)`
    that is fitted; with "loss" in `prefer`, else the construction of the classification loss it trains with)."""
    for what in prefer:
        if what == "trainer" and facts.trainers:
            return facts.trainers[0].node
        if what == "training_args" and facts.training_args:
            return facts.training_args[0].node
        if what == "fit" and facts.fit_calls:
            return facts.fit_calls[0].node
        if what == "lightning" and facts.lightning_trainers:
            return facts.lightning_trainers[0].node
        if what == "load":
            loads = facts.model_loads
            if loads:
                return loads[0].call.node
        if what == "loss":  # a script whose model is built in another module: the classification loss it trains with
            losses = facts.calls_to(*CLASSIFICATION_LOSSES)
            if losses:
                return losses[0].node
    return None


def module_step(facts: Facts, node: cst.CSTNode) -> int:
    """The place, in the module's body, of the top-level statement that holds `node`: a statement placed later cannot run
    before one placed earlier has run (a function or class it defines is bound only then)."""
    stmt = facts.statement_of(node)
    around = facts.enclosing(stmt)
    top = around[0] if around else stmt
    return _module_steps(facts).get(id(top), len(facts.module.body))


@per_file
def _module_steps(facts: Facts) -> dict[int, int]:
    """Each top-level statement's place in the module's body, by identity: found once per file (`module_step` is asked
    of every call when a rule orders them)."""
    return {id(statement): i for i, statement in enumerate(facts.module.body)}


def runs_at_module_level(facts: Facts, node: cst.CSTNode) -> bool:
    """`node` sits in a simple statement of the module's own body: it runs, for certain, when the module reaches it
    (not in a loop, a branch or a function)."""
    return not facts.enclosing(facts.statement_of(node))


# torch's class-index losses (torch/nn/modules/loss.py)
CLASSIFICATION_LOSSES = ("torch.nn.CrossEntropyLoss", "torch.nn.NLLLoss", "torch.nn.modules.loss.CrossEntropyLoss", "torch.nn.modules.loss.NLLLoss")


def uses_peft(facts: Facts) -> bool:
    return bool(facts.calls_to("peft.get_peft_model", "peft.LoraConfig", "peft.prepare_model_for_kbit_training", "peft.PeftModel.from_pretrained")) or any(
        load.call.qualname and load.call.qualname.startswith("peft.") for load in facts.model_loads
    )


_HALF_DTYPES = ("float16", "bfloat16", "half", "bf16", "fp16")
_QUANTIZATION_KEYWORDS = ("load_in_8bit", "load_in_4bit", "quantization_config")


def _dtype_name(facts: Facts, expr: cst.BaseExpression, call: Call) -> Any:
    """The dtype an expression names as written: "bfloat16" for `torch.bfloat16` or the string "bfloat16"."""
    q = facts.qualname(expr, call.scope)
    return q.rsplit(".", 1)[-1] if q is not None and q.startswith("torch.") else facts.value(expr, call.scope, order=call.order, cli=False)


def _dtype_named(facts: Facts, expr: cst.BaseExpression, call: Call) -> Any:
    """"half", "fp32", "auto" for an expression naming a dtype (`torch.bfloat16`, "float16"), else UNKNOWN."""
    value = _dtype_name(facts, expr, call)
    if value == "auto":
        return "auto"
    if isinstance(value, str):
        return "half" if value in _HALF_DTYPES else "fp32" if value in ("float32", "float") else UNKNOWN
    return UNKNOWN


def _load_dtype(facts: Facts, load: ModelLoad, version: tuple[int, ...]) -> Any:
    """The dtype one model load gives its weights. 4.x loads fp32 by default; 5.x the stored dtype (`dtype="auto"`)."""
    call = load.call
    if any(facts.gives(call, k) is not False for k in _QUANTIZATION_KEYWORDS):
        return "quantized" if any(facts.gives(call, k) is True for k in _QUANTIZATION_KEYWORDS) else UNKNOWN
    given = facts.given(call, -1, "torch_dtype")
    given = facts.given(call, -1, "dtype") if given is None else given
    if given is UNKNOWN:
        return UNKNOWN
    wanted = _dtype_named(facts, given, call) if given is not None else ("auto" if version >= (5,) and load.how == "pretrained" else "fp32")
    if wanted != "auto":
        return wanted
    info = facts.checkpoint_info(load)
    stored = info.stored_dtype if info is not None else None
    return UNKNOWN if stored is None else "half" if stored in _HALF_DTYPES else "fp32"


def weight_dtype(facts: Facts, version: tuple[int, ...], trained: ModelLoad | None = None) -> Any:
    """How the trained model's weights are held: "quantized", "half" (16-bit), "fp32", or UNKNOWN. `trained`: the load
    of the model that trains, where the caller knows it (a model loaded again to evaluate a saved checkpoint, a
    teacher, a reference model do not say how it trains); else every load of the file counts."""
    for call in facts.calls:
        if call.method in ("half", "bfloat16", "to") and call.receiver is not None:
            recv = facts.kind(call.receiver, call.scope, call.order)
            if recv is not None and recv.kind == "model" and (call.method != "to" or any(_dtype_named(facts, a.value, call) == "half" for a in call.node.args)):
                return "half"
    found = {_load_dtype(facts, load, version) for load in ((trained,) if trained is not None else facts.model_loads)}
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
            value = facts.kw_value(call, key, cli=False, default=None)
            if value is True:
                return True
            if value is UNKNOWN:
                unknown = True
        if facts.gives(call, "deepspeed") is not False:
            unknown = True
    for trainer in facts.trainers:
        args = trainer.arg(1, "args")
        kind = facts.kind(args.value, trainer.scope, trainer.order) if args is not None else None
        if args is not None and (kind is None or kind.kind != "training_args"):
            unknown = True  # `HfArgumentParser` or a config file built them
    for call in facts.lightning_trainers:
        found = lightning_precision(facts, call)
        if found is True:
            return True
        unknown = unknown or found is None
    for call in facts.calls:
        q = call.qualname or ""
        if q.startswith(("torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast")):
            return True
        if q.endswith(("mixed_precision.set_global_policy", "mixed_precision.set_policy")):
            policy = facts.arg_value(call, 0, cli=False)
            if isinstance(policy, str) and "16" in policy:
                return True
            unknown = unknown or not isinstance(policy, str)
        if same_symbol(q, "accelerate.Accelerator") and q.startswith("accelerate"):
            value = facts.kw_value(call, "mixed_precision", cli=False, default=UNKNOWN)  # absent: `accelerate launch` decides
            if value in ("fp16", "bf16", "fp8"):
                return True
            unknown = unknown or value is UNKNOWN
    if any(dest in ("fp16", "bf16", "mixed_precision", "amp", "use_amp", "half", "precision") for dest in facts.argparse_arguments):
        unknown = True
    return None if unknown else False


def lightning_precision(facts: Facts, trainer: Call) -> bool | None:
    """Does a Lightning `Trainer(...)` train in 16-bit (mixed or true half) or fp8 (True), in fp32 (False, `precision=32`
    or none), or is it not known (None: another value, one from the command line or a config, a precision plugin)?"""
    if trainer.has_double_star or any(k in trainer.kwargs for k in LIGHTNING_PRECISION_OVERRIDES) or len(trainer.positional) > 0:
        return None
    value = facts.kw_value(trainer, "precision", cli=False, default=LIGHTNING_PRECISION_DEFAULT)
    return LIGHTNING_PRECISION.get(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def lightning_spelling(facts: Facts) -> tuple[tuple[int, ...], str | None, str] | None:
    """(the release, its bf16 spelling or None, its fp16 spelling) of mixed precision in `Trainer(precision=...)` for the
    target release of the library (`pytorch_lightning`: the pytorch-lightning package; `lightning`) whose `Trainer` the
    file builds (`brain.steps.lightning_spellings`), where every Lightning Trainer of the file is of one library and its
    release is known; else None."""
    tops = {(call.qualname or "").split(".", 1)[0] for call in facts.lightning_trainers}
    release = dict(facts.runtime.releases).get(tops.pop().replace("_", "-")) if len(tops) == 1 else None
    return None if release is None else (release, *lightning_spellings(release))


def mixed_precision(facts: Facts, version: tuple[int, ...], trained: ModelLoad | None = None) -> bool | None:
    """True if the run uses 16-bit/mixed precision or quantization somewhere, False if plainly not, None if unknown
    (`trained`: as for `weight_dtype`)."""
    weights = weight_dtype(facts, version, trained)
    amp = amp_enabled(facts)
    if weights in ("half", "quantized") or amp is True:
        return True
    return None if weights is UNKNOWN or amp is None else False


def training_arg(facts: Facts, name: str, default: Any = UNKNOWN) -> Any:
    """A TrainingArguments field's value when the script builds exactly one (UNKNOWN when ambiguous)."""
    calls = facts.training_args
    if len(calls) != 1:
        return UNKNOWN
    return training_field(facts, calls[0], name, default)


def training_field(facts: Facts, call: Call, name: str, default: Any = UNKNOWN) -> Any:
    """One TrainingArguments call's field: the keyword's value, else the field's `default` (UNKNOWN where a `**kwargs`
    may set it)."""
    return facts.kw_value(call, name, default=default)


def padding_at(facts: Facts, call: Call, version: tuple[int, ...]) -> Padding:
    """`padding_of` for a target version: `pad_to_max_length=True` stopped padding in 4.52 (api-facts §1)."""
    pad = padding_of(facts, call)
    if facts.gives(call, "pad_to_max_length") is True and facts.gives(call, "padding") is False and version >= (4, 52):  # the release only where it matters
        return dataclasses.replace(pad, padding=False)
    return pad


def map_functions(facts: Facts) -> list[tuple[cst.FunctionDef | cst.Lambda, Scope]]:
    """The functions (and lambdas) a `.map(fn)`/`.filter(fn)` runs on a dataset's examples, with their scopes: the one
    handed (`functions.hands`: itself, its name, `functools.partial(fn, ...)`, `self.fn`), and the file's function a
    lambda handed calls (`lambda rows: preprocess(rows, tokenizer, 128)`)."""
    return [(fn, scope) for _, fn, scope in map_calls(facts)]


@per_file
def map_calls(facts: Facts) -> list[tuple[Call, cst.FunctionDef | cst.Lambda, Scope]]:
    """Each `.map(fn)`/`.filter(fn)` call with a function it runs (`map_functions`) and that function's scope."""
    defs = [(fn, scope) for found in facts.functions.values() for fn, scope in found]
    out: list[tuple[Call, cst.FunctionDef | cst.Lambda, Scope]] = []
    for call in (c for short in EXAMPLE_FUNCTIONS for c in facts.calls_by_short.get(short, ()) if c.method == short):
        arg = call.arg(0, "function")
        value = arg.value if arg is not None else None
        named = facts.function_named(value, call.scope, call.order)
        if isinstance(named, cst.Lambda):  # `ds.map(lambda ...)`, or a name bound to one
            out.append((call, named, facts.scope_of(named.body)))
            inner = facts.call_of(named.body) if isinstance(named.body, cst.Call) else None
            target = callee(facts, inner) if inner is not None else None
            out += [(call, target.fn, target.scope)] if isinstance(target, Target) else []
        elif value is not None:
            out += [(call, fn, scope) for fn, scope in defs if hands(facts, value, call, fn)]
    return out


def mapped_function(facts: Facts, call: Call) -> cst.FunctionDef | cst.Lambda | None:
    """The `.map`/`.filter` function (`map_functions`) that a call runs in directly: the innermost lambda or def around
    it, when that is one of them; else None."""
    node = facts.parent(call.node)
    while node is not None and not isinstance(node, cst.Lambda):
        node = facts.parent(node)
    function = node if node is not None else call.function
    return function if function is not None and any(fn is function for fn, _ in map_functions(facts)) else None


def longest_of_a_set(facts: Facts, call: Call) -> bool:
    """The tokenizer call's `max_length` is the longest tokenized text of a set (`max(len(tok(c)["input_ids"]) for c in
    classes)`): padded to it, the texts are padded to the longest of them, which is what batch padding would do."""
    arg = call.kwargs.get("max_length")
    bound = facts.definition(arg.value, call.scope, call.order) if arg is not None else None
    expr = bound.value if bound is not None else None
    inner = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if inner is None or inner.qualname != "builtins.max":
        return False
    nested = facts.calls_in(expr)
    tokenizing = {id(c.node) for c in facts.tokenizer_calls}
    return any(c.qualname == "builtins.len" for c in nested) and any(id(c.node) in tokenizing for c in nested)


def chunk_length(facts: Facts) -> Any:
    """The length the run's examples are cut to when no tokenizer call says it: the block of a map function
    (`map_functions`) that chunks the token stream (`[t[i : i + block_size] for i in range(0, total, block_size)]`,
    the `group_texts` of the language-modelling examples), else a collator's `padding="max_length", max_length=N`;
    UNKNOWN otherwise."""
    found = {facts.value(upper.right, scope) for fn, scope in map_functions(facts) if isinstance(fn, cst.FunctionDef) for upper in _chunk_ends(fn)}
    for call in facts.calls:
        if call.qualname and call.short.startswith("DataCollator") and facts.kw_value(call, "padding", default=None) == "max_length":
            found.add(facts.kw_value(call, "max_length"))
    return found.pop() if len(found) == 1 and isinstance(next(iter(found)), int) else UNKNOWN


def _chunk_ends(fn: cst.FunctionDef) -> list[cst.BinaryOperation]:
    """The `i + block_size` ends of the slices `t[i : i + block_size]` in a function's body."""
    slices = (node for node in walk(fn.body) if isinstance(node, cst.Slice) and node.lower is not None)
    return [s.upper for s in slices if isinstance(s.upper, cst.BinaryOperation) and isinstance(s.upper.operator, cst.Add) and dotted(s.upper.left) == dotted(s.lower) is not None]


# Tokenizers whose encoding methods take inputs of their own (boxes, tables, xpaths); 5.x keeps their `encode_plus`.
STRUCTURED_TOKENIZERS = ("layoutlmv2", "layoutlmv3", "layoutxlm", "markuplm", "tapas", "udop")


def tokenizer_load_of(facts: Facts, call: Call) -> Call | None:
    """The `from_pretrained` or constructor call that made the tokenizer an encoding call runs on, when it resolves."""
    target = call.receiver if call.method in ENCODE_METHODS else call.node.func
    found = facts.kind(target, call.scope, call.order)
    return found.call if found is not None and found.kind == "tokenizer" else None


def padding_side(facts: Facts, call: Call) -> Any:
    """"left" | "right" | UNKNOWN: the side the padding made by `call` sits on. A padding utility (`pad_sequence`,
    keras `pad_sequences`, `F.pad`): what its own arguments say. A tokenizer call: its `padding_side=` (a call-time argument since 4.45), else
    what the file sets on that tokenizer anywhere (`tok.padding_side = ...` on the same object, `padding_side=` at
    its load): "left" if any of it is, UNKNOWN if any does not resolve, else "right" (PreTrainedTokenizerBase's
    default). A call whose tokenizer does not resolve (a DataLoader's collator, say): the same over the whole file."""
    utility = tensors.pad_side(facts, call)
    if utility is not None:
        return utility
    if "padding_side" in call.kwargs:
        return facts.kw_value(call, "padding_side")
    load = tokenizer_load_of(facts, call)
    stores = [s for s in facts.stores if s.key == "padding_side"]
    calls = [c for c in facts.calls if "padding_side" in c.kwargs]
    if load is not None:  # its own attribute and load; an item store (`kwargs["padding_side"] = ...`) may feed any load
        stores = [s for s in stores if not isinstance(s.target, cst.Attribute) or ((owner := facts.owner(s)) is not None and owner.call is load)]
        calls = [load] if any(c is load for c in calls) else []
    sides = {facts.value(s.value, s.scope, order=s.order) for s in stores} | {facts.kw_value(c, "padding_side") for c in calls}
    return "left" if "left" in sides else UNKNOWN if sides - {"right"} else "right"


def structured_tokenizer(facts: Facts, call: Call) -> bool:
    """Is `call` an encoding call on a LayoutLM/TAPAS-style tokenizer (by its class or its checkpoint)?"""
    load = tokenizer_load_of(facts, call)
    return load is not None and any(family in tokenizer_names(facts, load) for family in STRUCTURED_TOKENIZERS)


def tokenizer_names(facts: Facts, load: Call) -> str:
    """A tokenizer load's class and literal checkpoint, lowercased (`autotokenizer ... nllb-200`): what names its family."""
    checkpoint = facts.arg_value(load, 0, "pretrained_model_name_or_path") if load.method == "from_pretrained" else None
    return f"{load.qualname or ''} {checkpoint if isinstance(checkpoint, str) else ''}".lower()


EOS_ATTRIBUTES = {"pad_token": "eos_token", "pad_token_id": "eos_token_id"}


def eos_as_pad(facts: Facts) -> list[Store]:
    """Where the file makes a tokenizer's pad token its EOS token: `tok.pad_token = tok.eos_token` /
    `tok.pad_token_id = tok.eos_token_id` (the same object on both sides)."""
    return [
        s for s in facts.stores
        if s.key in EOS_ATTRIBUTES and isinstance(s.target, cst.Attribute) and isinstance(s.value, cst.Attribute)
        and s.value.attr.value == EOS_ATTRIBUTES[s.key] and dotted(s.value.value) is not None
        and dotted(s.value.value) == dotted(s.target.value)
    ]


def pad_guarded(facts: Facts, store: Store) -> bool:
    """Does `store` run only when the tokenizer has no pad token (`if tok.pad_token is None:`, `if not tok.pad_token:`)?
    Then it depends on the checkpoint: Qwen2's tokenizers come with one, GPT-2's and Llama's do not."""
    for node in walk(facts.module):
        if isinstance(node, cst.If) and _asks_for_missing_pad(node.test) and any(n is store.target for n in walk(node.body)):
            return True
    return False


@per_file
def eos_pad_in_force(facts: Facts) -> tuple[Store, ...]:
    """The `eos_as_pad` stores that run: unguarded, or under `if tok.pad_token is None:` for a tokenizer whose
    checkpoint is known to load without a pad token (GPT-2, Llama, Mistral; Flan-T5's and Qwen2's come with one)."""
    return tuple(s for s in eos_as_pad(facts) if not pad_guarded(facts, s) or _lacks_pad_token(facts, s))


def _lacks_pad_token(facts: Facts, store: Store) -> bool:
    """The tokenizer whose pad token is set loads without one: its checkpoint is known to."""
    found = facts.kind(store.target.value, store.scope, store.order)
    load = found.call if found is not None and found.kind == "tokenizer" else None
    if load is None or load.method != "from_pretrained":
        return False
    return knowledge.tokenizer_lacks_pad_token(facts.arg_value(load, 0, "pretrained_model_name_or_path", cli=False))


def _asks_for_missing_pad(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
        return isinstance(test, cst.Attribute) and test.attr.value in EOS_ATTRIBUTES
    return (
        isinstance(test, cst.Comparison) and isinstance(test.left, cst.Attribute) and test.left.attr.value in EOS_ATTRIBUTES
        and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, (cst.Is, cst.Equal))
        and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"
    )


def same_tokenizer(facts: Facts, store: Store, expr: cst.BaseExpression, scope: Scope, order: int | None) -> bool:
    """`expr` (read in `scope` at `order`) holds the tokenizer whose attribute `store` sets: the same load, or, where
    either is not known, the same dotted name."""
    mine = facts.owner(store)
    theirs = facts.kind(expr, scope, order)
    if mine is not None and theirs is not None:
        return mine.kind == theirs.kind == "tokenizer" and mine.call is theirs.call
    return dotted(expr) is not None and dotted(expr) == dotted(store.target.value)


@per_file
def trained_trainers(facts: Facts) -> frozenset[int]:
    """The Trainers (by the call that made them) whose `train()` the file calls."""
    return frozenset(
        id(t.call) for c in facts.calls
        if c.method == "train" and (t := facts.kind(c.receiver, c.scope, c.order)) is not None and t.kind == "trainer" and t.call is not None
    )


def only_evaluated(facts: Facts, call: Call) -> bool:
    """The object `call` makes (a collator) is handed as `data_collator` only to Trainers that are never trained (an
    `evaluate()`-only Trainer): the training batches come from elsewhere."""
    def made_by(expr: cst.BaseExpression, at: Call) -> bool:
        found = facts.kind(expr, at.scope, at.order)
        return found is not None and found.call is call or expr is call.node

    trainers = [t for t in facts.trainers if (arg := t.arg(-1, "data_collator")) is not None and made_by(arg.value, t)]
    return bool(trainers) and not any(id(t) in trained_trainers(facts) for t in trainers)


# calls that only show a value; keywords whose value configures a model or generation rather than building an example
SHOWING = frozenset({"print", "info", "debug", "warning", "log", "write", "echo", "set_description", "set_postfix"})
NOT_DATA_KEYWORDS = frozenset({"pad_token_id", "eos_token_id"})  # `generate(pad_token_id=tok.eos_token_id)`, configs


@per_file
def eos_in_data(facts: Facts) -> bool:
    """The file puts EOS tokens into its examples: it formats them with a chat template (for training, not a
    generation prompt), or reads `eos_token`/`eos_token_id` into a text or a list of ids
    (`text + tok.eos_token`, `f"{text}{tok.eos_token}"`, `ids + [tok.eos_token_id]`), not only to set the pad token, to
    pass it as a `pad_token_id=`/`eos_token_id=` argument, to compare it, or to print it."""
    setting = {id(s.value) for s in eos_as_pad(facts)}
    for call in facts.calls:  # a chat template ends each assistant turn with the chat model's EOS (`<|im_end|>`, `</s>`)
        if call.method == "apply_chat_template" and facts.kw_value(call, "add_generation_prompt", default=False) is False:
            return True
    return any(attr.attr.value in ("eos_token", "eos_token_id") and id(attr) not in setting and _into_data(facts, attr) for attr, _, _ in facts.attr_loads)


def _into_data(facts: Facts, node: cst.CSTNode) -> bool:
    parent = facts.parent(node)
    if parent is None:  # an assignment's target (`tok.eos_token = "</s>"`) or its whole value: a setting, not an example
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value in NOT_DATA_KEYWORDS:
        return False
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.If, cst.IfExp)) or in_call_to(facts, node, SHOWING):
        return False
    if isinstance(parent, cst.Assign) and any(isinstance(t.target, cst.Attribute) for t in parent.targets):
        return False  # `tok.eos_token = tok2.eos_token`, `model.config.eos_token_id = ...`: settings, not examples
    return True


def only_called_directly(facts: Facts, call: Call) -> bool:
    """The object `call` makes (a collator, say) is bound to a name that is only ever called directly (`batch = collator(rows)`,
    looking at one batch), never handed on: no trainer, DataLoader `collate_fn=`, attribute or other name gets it."""
    names = [name for name, events in call.scope.events.items() if any(e.value is call.node and e.op == "assign" and e.index is None for e in events)]
    if len(names) != 1:
        return False
    name = names[0]
    if not any(isinstance(c.node.func, cst.Name) and c.node.func.value == name for c in facts.calls):
        return False
    passed = [arg.value for c in facts.calls for arg in c.node.args] + [c.receiver for c in facts.calls if c.receiver is not None]
    bound = [s.value for s in facts.stores] + [e.value for events in call.scope.events.values() for e in events if e.value is not None and e.value is not call.node]
    return not any(_handed_on(name, node) for node in (*passed, *bound))


def _handed_on(name: str, node: cst.CSTNode) -> bool:
    """`name` appears under `node` other than as the callee of a call (`name(...)`)."""
    callees = {id(n.func) for n in walk(node) if isinstance(n, cst.Call)}
    return any(isinstance(n, cst.Name) and n.value == name and id(n) not in callees for n in walk(node))


def in_call_to(facts: Facts, node: cst.CSTNode, names: frozenset[str]) -> bool:
    """Is `node` an argument (at any depth) of a call to a function or method named in `names` (`print(f"...")`)?"""
    current = facts.parent(node)
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        if isinstance(current, cst.Call):
            func = current.func
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
            if name in names:
                return True
        current = facts.parent(current)
    return False


_STR_METHODS = frozenset({"join", "strip", "lstrip", "rstrip", "lower", "upper", "format", "capitalize", "title", "casefold"})
_LIST_METHODS = frozenset({"tolist", "to_list", "readlines"})
_ARRAY_MAKERS = ("numpy.array", "numpy.asarray", "numpy.stack", "numpy.concatenate")


def text_container(facts: Facts, expr: cst.BaseExpression | None, scope, order: int | None = None, _depth: int = 0) -> str:
    """What the text argument of a tokenizer call is, as far as the file shows: "str" (one string: a constant,
    an f-string, `str(...)`, `sep.join(...)`), "sequence" (a list or tuple: a display, a comprehension, `list(...)`,
    `sorted(...)`, `.tolist()`), "array" (a numpy array: `.values`, `.to_numpy()`, `np.array(...)`), else
    "iterable" (a zip, a generator, a pandas Series or a dataset column: anything). A name is followed through its
    one plain assignment (`Model.definition`), a parameter to the arguments of every call site (when they agree); a
    folded constant counts only for an expression that is none of these (the value layer folds `np.array([...])`
    to its list, which is not the shape the tokenizer sees)."""
    if expr is None or _depth > 3:
        return "iterable"
    if isinstance(expr, (cst.FormattedString, cst.ConcatenatedString)):
        return "str"
    if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp)):
        return "sequence"
    if isinstance(expr, cst.Attribute):
        return "array" if expr.attr.value == "values" else "iterable"
    if isinstance(expr, cst.Call):
        call = facts.call_of(expr)
        if call is None:
            return "iterable"
        if call.qualname in ("builtins.list", "builtins.tuple", "builtins.sorted"):
            return "sequence"
        if call.qualname == "builtins.str" or (call.method in _STR_METHODS and isinstance(facts.value(call.receiver, scope, order=order), str)):
            return "str"
        if call.qualname is None and call.method in _LIST_METHODS:
            return "sequence"
        if call.qualname in _ARRAY_MAKERS or (call.qualname is None and call.method == "to_numpy"):
            return "array"
        return "iterable"
    if isinstance(expr, cst.Name):
        if (function := facts.parameter_read(expr, scope, order)) is not None:
            found = {text_container(facts, e, s, o, _depth + 1) for e, s, o in param_arguments(facts, function, expr.value) or ()}
            return found.pop() if len(found) == 1 else "iterable"
        bound = facts.definition(expr, scope, order)
        return text_container(facts, *bound, _depth + 1) if bound is not None else "iterable"
    constant = facts.value(expr, scope, order=order)
    return "str" if isinstance(constant, str) else "sequence" if isinstance(constant, (list, tuple)) else "iterable"


# Layout models: their inputs carry a box per token (`bbox`), padded to the same length as the ids.
LAYOUT_FAMILIES = ("layoutlm", "layoutxlm", "lilt", "udop", "bros")


def feeds_layout_model(facts: Facts) -> bool:
    """Does the file build inputs for a layout model (LayoutLM v1-v3, LayoutXLM, LiLT, UDOP, BROS), whose `bbox` (and
    word labels) are padded to the ids' fixed length and must stay aligned with them? Boxes handed to an encoding call
    (`boxes=`), a `bbox` column (`encoding["bbox"] = ...`), or a tokenizer, processor or model of one of those families."""
    if any("boxes" in c.kwargs for c in facts.tokenizer_calls) or any(s.key == "bbox" and isinstance(s.target, cst.Subscript) for s in facts.stores):
        return True  # not any `bbox=`: matplotlib's `ax.text(..., bbox=dict(...))` is one
    loads = [c for c in facts.calls if c.method == "from_pretrained" or (c.qualname or "").startswith("transformers.")]
    return any(family in tokenizer_names(facts, load) for load in loads for family in LAYOUT_FAMILIES)


# A TPU is asked for by name: `tf.config.list_logical_devices("TPU")`, `os.environ["PJRT_DEVICE"] = "TPU"`, Colab's TPU address.
TPU_NAMES = frozenset({"TPU", "COLAB_TPU_ADDR", "TPU_NAME", "XRT_TPU_CONFIG", "TPU_IP_ADDRESS"})
TPU_MODULES = ("tensorflow.tpu.", "tensorflow.config.experimental_connect_to_cluster", "keras.distribution.")


def runs_on_mps(facts: Facts) -> bool:
    """Does the file pick Apple's MPS device and never a CUDA one: a string "mps" outside docstrings (`torch.device("mps"
    if torch.backends.mps.is_available() else "cpu")`) and no "cuda" string or `.cuda()` call anywhere? CUDA's mixed
    precision switches (`fp16=True`, bf16 on Ampere) are then not what it runs on."""
    if "mps" not in facts.source or "cuda" in facts.source:
        return False
    return any(isinstance(node, cst.SimpleString) and literal(node) == "mps" for node in walk(facts.module))


# Words that name, pick or hand over a device (`.cuda()`, `.to(device)`, `device_map=`, `torch.set_default_device`, "gpu"),
# or a wrapper or launcher that places the model itself (accelerate, DeepSpeed, Lightning Fabric, XLA, MPS, TPU).
_DEVICE_WORDS = re.compile(r"(?<![a-z])(?:cuda|device|gpu|accelerat|deepspeed|fabric|xla|mps|tpu)", re.IGNORECASE)  # not inside a word ("output")


def runs_on_cpu(facts: Facts) -> bool:
    """Does the file train only by hand loops (`loss.backward()`: no transformers Trainer, Lightning Trainer or keras `fit`,
    which place the model on an accelerator themselves) and never name a device (`_DEVICE_WORDS`), nor move anything
    with `.to(...)` other than to a torch dtype (`.to(0)`, `.to(cfg.dev)`)? PyTorch then keeps every tensor on the CPU,
    where CUDA's mixed precision switches are not what it runs on."""
    if not facts.backward_calls or facts.trainers or facts.fit_calls or facts.lightning_trainers or _DEVICE_WORDS.search(facts.source):
        return False
    return not any(c.method == "to" and not all((facts.qualname(a.value, c.scope) or "").startswith("torch.") for a in c.node.args) for c in facts.calls)


def asks_for_tpu(facts: Facts) -> bool:
    """Does the file look for or set up a TPU outside torch_xla/JAX imports: a TensorFlow TPU call, a string (not a
    docstring) naming a TPU device or a TPU runtime's environment variable (`"COLAB_TPU_ADDR" in os.environ`), or a
    notebook saved with a TPU runtime (the accelerator its metadata names, handed in by the caller: `facts.runtime`)?"""
    accelerator = facts.runtime.accelerator
    if (accelerator or "").lower().startswith("tpu") or any((c.qualname or "").startswith(TPU_MODULES) for c in facts.calls):
        return True
    docstrings = set()
    for node in walk(facts.module):  # a docstring's statement comes before the string in the walk
        if isinstance(node, cst.SimpleStatementLine):
            docstrings.update(id(small.value) for small in node.body if isinstance(small, cst.Expr))
        elif isinstance(node, cst.SimpleString) and id(node) not in docstrings and literal(node) in TPU_NAMES:
            return True
    return False


_AMPERE_ATTENTION = ("flash_attention_2", "flash_attention_3")


def gpu_card(facts: Facts) -> tuple[float, str] | None:
    """The memory (GiB) of the GPU the file shows it runs on, with why: the card a notebook's saved runtime names (Colab's
    `gpuType`, Kaggle's accelerator; `knowledge.CARD_MEMORY_GIB`), else, for a run that asks for what only Ampere or newer
    cards give (`tf32=True`, `attn_implementation="flash_attention_2"`) or is set for them (`bf16=True`, a bfloat16
    autocast or `Accelerator(mixed_precision="bf16")`), `knowledge.AMPERE_BUDGET_GIB`. None when the file says nothing."""
    card = facts.runtime.accelerator
    if card in knowledge.CARD_MEMORY_GIB:
        return knowledge.CARD_MEMORY_GIB[card], f"the notebook's {card} runtime"
    asks = [key for key in ("bf16", "tf32") if training_arg(facts, key, None) is True]
    for call in facts.calls:
        q = call.qualname or ""
        if q.startswith(("torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast")) and any(_dtype_name(facts, a.value, call) == "bfloat16" for a in call.node.args):
            asks.append("bf16")
        elif same_symbol(q, "accelerate.Accelerator") and q.startswith("accelerate") and facts.kw_value(call, "mixed_precision", cli=False, default=None) == "bf16":
            asks.append("bf16")
    if any(facts.kw_value(load.call, "attn_implementation", cli=False, default=None) in _AMPERE_ATTENTION for load in facts.model_loads):
        asks.append("FlashAttention 2")
    if not asks:
        return None
    return knowledge.AMPERE_BUDGET_GIB, f"{asks[0]} sets the run for an Ampere-class GPU"
