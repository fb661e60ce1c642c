"""The calls a function runs when TensorFlow traces it into a graph (`tf.data.Dataset.map`, `tf.function`)."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from bertlint.facts.brain.tf_data import EAGER_WRAPPERS
from bertlint.facts.nodes import Call
from bertlint.facts.values import Values as Facts

MAX_DEPTH = 8  # nested calls of the file's own functions followed


def traced_calls(facts: Facts, body: cst.FunctionDef | cst.Lambda, depth: int = 0) -> Iterator[Call]:
    """The calls that run traced (on symbolic tensors) when `body` is traced: its own calls and, through the file's own
    functions it calls, theirs (after the call that runs them); not those inside a `tf.py_function`-like wrapper, which run eagerly."""
    calls = facts.calls_in(body)
    eager = {id(inner.node) for c in calls if c.qualname in EAGER_WRAPPERS for arg in c.node.args for inner in facts.calls_in(arg)}
    for call in calls:
        if id(call.node) in eager:
            continue
        yield call
        inner = facts.function_named(call.node.func, call.scope, call.order) if depth < MAX_DEPTH else None
        if inner is not None and inner is not body:
            yield from traced_calls(facts, inner, depth + 1)
