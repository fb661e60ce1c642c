"""BL403: a Hugging Face tokenizer called inside `tf.data.Dataset.map`, which hands it symbolic tensors."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts, holds_tokenizer, walk
from bertlint.rules import Context, Rule

DATASET_METHODS = frozenset({"map", "batch", "padded_batch", "shuffle", "prefetch", "cache", "repeat", "filter", "take", "skip", "unbatch", "zip", "concatenate", "with_options"})
TF_DATASET_FACTORIES = ("tensorflow.keras.utils.text_dataset_from_directory", "keras.utils.text_dataset_from_directory", "tensorflow.keras.preprocessing.text_dataset_from_directory")
EAGER_WRAPPERS = ("tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.compat.v1.py_func")
TOKENIZER_METHODS = frozenset({"tokenize", "encode", "convert_tokens_to_ids"})
MAX_DEPTH = 8


class TokenizerInTfDataMap(Rule):
    code = "BL403"
    name = "tokenizer-in-tf-data-map"
    severity = "error"
    summary = "A Hugging Face tokenizer called inside a function passed to `tf.data.Dataset.map`"
    help = "tokenize before building the dataset (`tf.data.Dataset.from_tensor_slices(dict(tokenizer(texts, ...)))`), or wrap the call in `tf.py_function`"
    needs = ("tensorflow",)

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        tokenizer_calls = {id(c.node) for c in facts.tokenizer_calls}
        for call in facts.calls:
            if call.method != "map" or not _is_tf_dataset(facts, call.receiver, call, 0):
                continue
            fn = call.arg(0, "map_func")
            body = _function(facts, fn.value) if fn is not None else None
            if body is None or not _tokenizes(facts, body, tokenizer_calls, 0):
                continue
            shown = f"`{fn.value.value}`" if isinstance(fn.value, cst.Name) else "this lambda"
            ctx.report(
                fn,
                f"{shown} calls a tokenizer but runs inside `tf.data.Dataset.map`, which traces it into a graph: the tokenizer gets a symbolic "
                "`tf.Tensor`, not a string, and fails while the dataset is built (`ValueError: text input must be of type `str` ...`, "
                "or an `AttributeError` for `.numpy()`)",
            )


def _is_tf_dataset(facts: Facts, expr: cst.BaseExpression | None, at: Call, depth: int) -> bool:
    """`tf.data.Dataset.from_tensor_slices(...)` and what its methods return, through assignments."""
    if expr is None or depth > MAX_DEPTH:
        return False
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, at.scope, at.order)
        assigns = [e for e in events if e.op == "assign" and e.index is None]
        return owner is not None and bool(assigns) and _is_tf_dataset(facts, assigns[-1].value, at, depth + 1)
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is None:
        return False
    qualname = call.qualname or ""
    if qualname.startswith("tensorflow.data.") or qualname in TF_DATASET_FACTORIES or call.method in ("to_tf_dataset", "prepare_tf_dataset"):
        return True
    return call.method in DATASET_METHODS and not qualname and _is_tf_dataset(facts, call.receiver, call, depth + 1)


def _function(facts: Facts, expr: cst.BaseExpression) -> cst.CSTNode | None:
    """The lambda, or the file's own `def`, that `expr` names."""
    if isinstance(expr, cst.Lambda):
        return expr
    if isinstance(expr, cst.Name) and expr.value in facts.functions:
        return facts.functions[expr.value][-1][0]
    return None


def _tokenizes(facts: Facts, body: cst.CSTNode, tokenizer_calls: set[int], depth: int) -> bool:
    """A tokenizer call runs in `body` in graph mode: directly or through the file's own functions, not under `tf.py_function`."""
    calls = facts.calls_in(body)
    eager = {id(node) for c in calls if c.qualname in EAGER_WRAPPERS for arg in c.node.args for node in walk(arg)}
    for call in calls:
        if id(call.node) in eager:
            continue
        if id(call.node) in tokenizer_calls or (call.method in TOKENIZER_METHODS and holds_tokenizer(facts, call.receiver, call.scope, call.order)):
            return True
        inner = _function(facts, call.node.func) if depth < MAX_DEPTH else None
        if inner is not None and inner is not body and _tokenizes(facts, inner, tokenizer_calls, depth + 1):
            return True
    return False

