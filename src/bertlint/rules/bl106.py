"""BL106: padding every example to a fixed length where dynamic padding would do."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts, asks_for_tpu, feeds_layout_model, in_call_to, padding_at, tokenizer_load_of, walk
from bertlint.rules import Context, Rule
from bertlint.rules.bl202 import is_label_call

# Back ends that want fixed shapes (each new shape is a recompilation, or the engine is built for one shape): static
# padding is right there. TPU/XLA (torch_xla, JAX/Flax, TF's TPUStrategy and jit_compile, accelerate's
# `DistributedType.XLA`/`.TPU`, SageMaker Training Compiler, which runs PyTorch/XLA), static-shape inference engines
# (TensorRT, ONNX Runtime, OpenVINO, Core ML, TF Lite; `torch.onnx.export` without `dynamic_axes`), and diffusion
# pipelines, whose denoiser is conditioned on text embeddings of the fixed length it was trained with (CLIP's 77).
XLA_IMPORTS = ("torch_xla", "jax", "flax")
STATIC_ENGINE_IMPORTS = ("tensorrt", "torch_tensorrt", "onnxruntime", "openvino", "coremltools", "tflite_runtime", "diffusers")
STATIC_ENGINE_MODULES = ("optimum.onnxruntime", "optimum.intel", "optimum.neuron", "optimum.habana")
XLA_CALLS = ("TPUStrategy", "TPUClusterResolver", "is_torch_xla_available", "is_torch_tpu_available", "is_tpu_available", "TrainingCompilerConfig")
XLA_DISTRIBUTED_TYPES = ("accelerate.DistributedType.XLA", "accelerate.DistributedType.TPU", "accelerate.utils.DistributedType.XLA", "accelerate.utils.DistributedType.TPU")
# Accelerate's examples import `DistributedType` to special-case XLA (`max_length = 128 if ... == DistributedType.XLA`):
# a file importing it is written to run on TPU too.
XLA_NAMES = ("accelerate.DistributedType", "accelerate.utils.DistributedType")
NEGLIGIBLE_LENGTH = 4  # labels padded to 2-3 tokens (a class word, "positive"): nothing worth a collator
LABEL_PADDING_COLLATORS = ("transformers.DataCollatorForSeq2Seq", "transformers.DataCollatorForTokenClassification", "transformers.DataCollatorForLanguageModeling")
DYNAMIC_PADDING = "tokenize without padding and pad each batch to its longest text with `DataCollatorWithPadding(tokenizer)`"
# `DataCollatorWithPadding` cannot pad a `labels` column (`ValueError: Unable to create tensor`): where the map function
# builds labels, the collators that pad them with -100 are the dynamic padding to recommend.
LABELS_PADDING = {
    "token-cls": "`DataCollatorForTokenClassification(tokenizer)`",
    None: "`DataCollatorForSeq2Seq(tokenizer, model=model)`",
}
# Calls that only look at an encoding (one example printed, displayed, logged, decoded or compared); its ids are never batched.
INSPECTIONS = frozenset({
    "print", "pprint", "display", "len", "decode", "batch_decode", "convert_ids_to_tokens", "array_equal", "equal", "allclose", "assert_equal",
    "debug", "info", "warning", "log", "write", "tokens", "word_ids", "keys",
})


class StaticPaddingToMax(Rule):
    code = "BL106"
    name = "static-padding-to-max"
    severity = "info"
    summary = '`padding="max_length"` in preprocessing (or without `max_length`): compute spent on padding'
    help = DYNAMIC_PADDING

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        static = [(call, pad) for call in facts.tokenizer_calls if (pad := padding_at(facts, call, ctx.version)).pads_to_max]
        if not static or _fixed_shapes_wanted(facts) or feeds_layout_model(facts):
            return  # fixed shapes wanted; a layout model's boxes (and word labels) padded to the same length as its ids
        feeds_training = bool(facts.trainers or facts.calls_to("torch.utils.data.DataLoader"))
        map_functions = _map_functions(facts)
        # a seq2seq model's labels padded to a fixed length where no collator pads labels (`DataCollatorWithPadding`
        # and `tokenizer.pad` leave them as they are): the fixed length is what lets them batch, not waste
        fixed_labels_needed = (
            bool(facts.model_loads)
            and {load.head for load in facts.model_loads} == {"seq2seq"}
            and not facts.calls_to(*LABEL_PADDING_COLLATORS)
        )
        for call, pad in static:
            if isinstance(pad.max_length, int) and pad.max_length <= NEGLIGIBLE_LENGTH or _longest_of_a_set(facts, call) or _inspected(facts, call.node) or _only_inspected(facts, call):
                continue  # a few tokens of padding at most, or to the longest of a fixed label set; ids only decoded or compared
            anchor = call.kwargs.get("padding") or call.kwargs["pad_to_max_length"]
            load = tokenizer_load_of(facts, call)
            if "padding" in call.kwargs and pad.max_length is None and not call.has_double_star and (load is None or load.method == "from_pretrained"):
                ctx.report(anchor, '`padding="max_length"` without `max_length` pads every example to the tokenizer\'s `model_max_length` (512 for BERT-style checkpoints), however short it is')
            elif feeds_training and (function := _enclosing_function(facts, call)) in map_functions and not (fixed_labels_needed and is_label_call(facts, call)):
                ctx.report(
                    anchor,
                    "padding to `max_length` in the `.map` preprocessing pads every example to the full length before batching: "
                    "the model computes over the padding of every short text",
                    help=f"{_dynamic_padding(facts, call, function)} (keep `truncation=True, max_length=N`)",
                )


def _dynamic_padding(facts: Facts, call: Call, function: int | None) -> str:
    """What to recommend instead: `DataCollatorWithPadding`, or where the map function builds labels the collator that pads them."""
    builds_labels = "text_target" in call.kwargs or any(s.key == "labels" and id(s.function) == function for s in facts.stores if s.function is not None)
    if not builds_labels:
        return DYNAMIC_PADDING
    heads = {load.head for load in facts.model_loads}
    token_cls = heads == {"token-cls"}
    collator = LABELS_PADDING["token-cls"] if token_cls else LABELS_PADDING[None]
    help = f"tokenize without padding and pad each batch with {collator}, which pads the `labels` with -100 (`DataCollatorWithPadding` cannot pad labels)"
    if token_cls:
        return help
    return (f"{help}; the collator pads only ids, so drop the raw text columns (`remove_columns=` in the `.map`, or keep "
            "`remove_unused_columns=True`), and in `compute_metrics` replace -100 by `tokenizer.pad_token_id` before `batch_decode`")


def _fixed_shapes_wanted(facts: Facts) -> bool:
    if asks_for_tpu(facts):
        return True
    imports = facts.imports.values()
    if facts.imported(*XLA_IMPORTS, *STATIC_ENGINE_IMPORTS) or any(q.startswith(STATIC_ENGINE_MODULES) or q in XLA_NAMES for q in imports):
        return True
    for call in facts.calls:
        if call.qualname and call.qualname.rsplit(".", 1)[-1] in XLA_CALLS:
            return True
        if "tpu_num_cores" in call.kwargs or facts.kw_value(call, "jit_compile") is True:
            return True
        if call.qualname == "torch.onnx.export" and "dynamic_axes" not in call.kwargs and not call.has_double_star:
            return True
    return any(facts.qualname(node, scope) in XLA_DISTRIBUTED_TYPES for node, scope, _ in facts.attr_loads if node.attr.value in ("XLA", "TPU"))


def _longest_of_a_set(facts: Facts, call: Call) -> bool:
    """`max_length` is the longest tokenized text of a set (`max(len(tok(c)["input_ids"]) for c in classes)`): the
    labels are padded to the longest label, which is what batch padding would do."""
    arg = call.kwargs.get("max_length")
    expr = arg.value if arg is not None else None
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, call.scope, call.order)
        owner, events = (owner, events) if events or owner is None else (owner, owner.events.get(expr.value, []))
        assigns = [e for e in events if e.op == "assign"]
        expr = assigns[0].value if len(assigns) == 1 and assigns[0].index is None else None
    inner = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if inner is None or inner.qualname not in ("builtins.max",):
        return False
    nested = [facts.call_of(n) for n in walk(expr) if isinstance(n, cst.Call)]
    tokenizing = {id(c.node) for c in facts.tokenizer_calls}
    return any(c is not None and c.qualname == "builtins.len" for c in nested) and any(c is not None and id(c.node) in tokenizing for c in nested)


def _only_inspected(facts: Facts, call: Call) -> bool:
    """`x = tok(...)` whose `x` the statements after it (in its block, up to a rebinding) read, but only to inspect it
    (`print`, `decode`, `np.array_equal`, `.shape`): those ids are never fed to a model."""
    stmt = facts.statement_of(call.node)
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not isinstance(small, cst.Assign) or len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
        return False
    node: cst.CSTNode = call.node  # the assigned value must be the encoding itself: `tok(...)`, `tok(...).input_ids.to(d)`
    while node is not small.value:
        parent = facts.parent(node)
        if not (isinstance(parent, (cst.Attribute, cst.Subscript)) and parent.value is node or isinstance(parent, cst.Call) and parent.func is node):
            return False
        node = parent
    name = small.targets[0].target.value
    block = facts.parent(stmt) if facts.parent(stmt) is not None else _block_of(facts, stmt)
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)) or not any(s is stmt for s in body):
        return False
    after = list(body)[next(i for i, s in enumerate(body) if s is stmt) + 1 :]
    read = False
    for later in after:
        rebinding = next(
            (s for s in getattr(later, "body", ()) if isinstance(s, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in s.targets)),
            None,
        ) if isinstance(later, cst.SimpleStatementLine) else None
        for node in walk(rebinding.value if rebinding is not None else later):
            if isinstance(node, cst.Name) and node.value == name:
                if not _inspected(facts, node):
                    return False
                read = True
        if rebinding is not None:
            break  # rebound: what came before is gone
    return read  # never read at all is a demonstration of the call: still a finding


def _block_of(facts: Facts, stmt: cst.CSTNode) -> cst.CSTNode | None:
    around = facts.enclosing(stmt)
    if not around:
        return facts.module
    inner = around[-1]
    for suite in (getattr(inner, "body", None), getattr(getattr(inner, "orelse", None), "body", None)):
        if isinstance(suite, cst.IndentedBlock) and any(s is stmt for s in suite.body):
            return suite
    return None


def _inspected(facts: Facts, read: cst.BaseExpression) -> bool:
    """A read of an encoding (`x`, or the encoding call itself) that feeds nothing: an argument, at any depth, of
    `print`/`display`/`decode`/`array_equal`-like calls (through `x.input_ids`, `x["input_ids"]`, an f-string), `x.shape`,
    `x.tokens()`, a notebook cell's last expression (`x["input_ids"]`, displayed), or a loop over `x.items()` that only
    prints."""
    node: cst.CSTNode = read
    parent = facts.parent(node)
    while isinstance(parent, (cst.Attribute, cst.Subscript, cst.SubscriptElement, cst.Index, cst.Arg)) and not (
        isinstance(parent, cst.Attribute) and parent.attr is node
    ):
        if isinstance(parent, cst.Attribute) and parent.attr.value == "shape":
            return True
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in INSPECTIONS:
            return True  # `enc.tokens()`, `enc.keys()`
        if isinstance(parent, cst.Attribute) and parent.attr.value in ("items", "values") and _printing_loop(facts, facts.parent(parent)):
            return True  # `for key, value in enc.items(): print(key, value)`
        node, parent = parent, facts.parent(parent)
    return _displayed(facts, node) or in_call_to(facts, read, INSPECTIONS)  # `print(enc)`, `logger.info(len(enc["input_ids"]))`


def _displayed(facts: Facts, node: cst.CSTNode) -> bool:
    """`node` is a whole expression statement (a notebook cell's last line displays it)."""
    stmt = facts.statement_of(node)
    return isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(small, cst.Expr) and small.value is node for small in stmt.body)


def _printing_loop(facts: Facts, call: cst.CSTNode | None) -> bool:
    """`call` (`enc.items()`) is what a `for` loop iterates, and the loop's body only calls inspections (`print(k, v)`)."""
    loop = facts.statement_of(call) if isinstance(call, cst.Call) else None
    if not isinstance(loop, cst.For) or loop.iter is not call:
        return False
    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else (loop.body,)
    smalls = [small for stmt in body if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) for small in stmt.body]
    return len(smalls) == len(body) > 0 and all(
        isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and _name_of(small.value.func) in INSPECTIONS for small in smalls
    )


def _name_of(func: cst.BaseExpression) -> str:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def _map_functions(facts: Facts) -> set[int]:
    """ids of the functions and lambdas passed to `.map(...)`, directly, through `functools.partial`, or
    called by the lambda passed (`lambda rows: preprocess(rows, tokenizer, 128)`)."""
    out = set()
    for call in facts.calls_by_short.get("map", ()):
        arg = call.arg(0, "function")
        value = arg.value if arg is not None else None
        inner = facts.call_of(value) if isinstance(value, cst.Call) else None
        if inner is not None and inner.qualname == "functools.partial" and inner.positional:
            value = inner.positional[0].value
        if isinstance(value, cst.Lambda):
            out.add(id(value))
            value = value.body.func if isinstance(value.body, cst.Call) else None
        if isinstance(value, cst.Name):
            _, events = facts.binding_events(value.value, call.scope, call.order)
            out.update(id(e.value) for e in events if e.op == "def")
    return out


def _enclosing_function(facts: Facts, call) -> int | None:
    """id of the innermost lambda or def around a call."""
    node = facts.parent(call.node)
    while node is not None:
        if isinstance(node, cst.Lambda):
            return id(node)
        node = facts.parent(node)
    return id(call.function) if call.function is not None else None
