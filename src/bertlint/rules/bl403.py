"""BL403: a Hugging Face tokenizer called inside `tf.data.Dataset.map`, which hands it symbolic tensors."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import holds_tokenizer, traced_calls
from bertlint.rules import Context, Rule

TOKENIZER_METHODS = frozenset({"tokenize", "encode", "convert_tokens_to_ids"})


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
            if body is None or not any(
                id(c.node) in tokenizer_calls or (c.method in TOKENIZER_METHODS and holds_tokenizer(facts, c.receiver, c.scope, c.order))
                for c in traced_calls(facts, body)
            ):
                continue
            shown = f"`{fn.value.value}`" if isinstance(fn.value, cst.Name) else "this lambda"
            ctx.report(
                fn,
                f"{shown} calls a tokenizer but runs inside `tf.data.Dataset.map`, which traces it into a graph: the tokenizer gets a symbolic "
                "`tf.Tensor`, not a string, and fails while the dataset is built (`ValueError: text input must be of type `str` ...`, "
                "or an `AttributeError` for `.numpy()`)",
            )

