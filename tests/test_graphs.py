"""The calls a function traced into a TensorFlow graph runs (facts/graphs.py: `traced_calls`)."""

from __future__ import annotations

import textwrap

import libcst as cst

from bertlint.facts import Facts, traced_calls


def traced(source: str, name: str) -> list[str]:
    source = textwrap.dedent(source)
    facts = Facts(cst.parse_module(source), source)
    fn = next(c for c in facts.calls if facts.text(c.node.func) == "keep").node.args[0].value
    body = facts.function_named(fn, facts.calls[0].scope)
    return [facts.text(c.node.func) for c in traced_calls(facts, body)] if body is not None else []


def test_own_calls_and_those_of_the_files_functions_in_order_but_not_under_py_function():
    names = traced("""
        import tensorflow as tf
        def helper(x):
            return tf.strings.lower(x)
        def eager(x):
            return x.numpy()
        def fn(x):
            y = helper(x)
            z = tf.py_function(eager, [y], tf.string)
            return tf.py_function(lambda: inner(y), [], tf.string), z
        keep(fn)
    """, "fn")
    assert names == ["helper", "tf.strings.lower", "tf.py_function", "tf.py_function"]


def test_a_recursive_function_stops_at_itself():
    names = traced("""
        def fn(x):
            return fn(x - 1) + len(x)
        keep(fn)
    """, "fn")
    assert sorted(names) == ["fn", "len"]
