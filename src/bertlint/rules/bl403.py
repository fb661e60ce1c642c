"""BL403: a Hugging Face tokenizer called inside `tf.data.Dataset.map`, which hands it symbolic tensors."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Facts, holds_tokenizer
from bertlint.rules import Context, Rule

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
            dataset = facts.kind(call.receiver, call.scope, call.order) if call.method == "map" else None
            if dataset is None or dataset.kind != "tf_dataset":
                continue
            fn = call.arg(0, "map_func")
            body = facts.function_named(fn.value, call.scope, call.order) if fn is not None else None
            if body is None or not _tokenizes(facts, body, tokenizer_calls, 0):
                continue
            shown = f"`{fn.value.value}`" if isinstance(fn.value, cst.Name) else "this lambda"
            ctx.report(
                fn,
                f"{shown} calls a tokenizer but runs inside `tf.data.Dataset.map`, which traces it into a graph: the tokenizer gets a symbolic "
                "`tf.Tensor`, not a string, and fails while the dataset is built (`ValueError: text input must be of type `str` ...`, "
                "or an `AttributeError` for `.numpy()`)",
            )


def _tokenizes(facts: Facts, body: cst.CSTNode, tokenizer_calls: set[int], depth: int) -> bool:
    """A tokenizer call runs in `body` in graph mode: directly or through the file's own functions, not under `tf.py_function`."""
    calls = facts.calls_in(body)
    eager = {id(inner.node) for c in calls if c.qualname in EAGER_WRAPPERS for arg in c.node.args for inner in facts.calls_in(arg)}
    for call in calls:
        if id(call.node) in eager:
            continue
        if id(call.node) in tokenizer_calls or (call.method in TOKENIZER_METHODS and holds_tokenizer(facts, call.receiver, call.scope, call.order)):
            return True
        inner = facts.function_named(call.node.func, call.scope, call.order) if depth < MAX_DEPTH else None
        if inner is not None and inner is not body and _tokenizes(facts, inner, tokenizer_calls, depth + 1):
            return True
    return False

