"""Plain data expressions as written (facts/flow.py: `data_path`, `same_data`, `same_arrays`)."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import data_path, same_arrays, same_data


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def test_names_attributes_and_constant_subscripts_have_a_path():
    assert data_path(expr('ds["train"]')) == "ds['train']"
    assert data_path(expr("self.x")) == "self.x"
    assert data_path(expr("splits[0].data")) is None  # an attribute of a subscript is no dotted name
    assert data_path(expr("splits[0]")) == "splits[0]"


def test_a_call_or_a_computed_subscript_has_none_and_is_never_the_same():
    assert data_path(expr("ds.shuffle()")) is None
    assert data_path(expr("ds[i]")) is None
    assert not same_data(expr("ds.shuffle()"), expr("ds.shuffle()"))
    assert same_data(expr("ds['train']"), expr('ds["train"]'))
    assert not same_data(expr('ds["train"]'), expr('ds["test"]'))


def test_same_arrays_matches_a_tuple_in_order_or_the_one_object():
    given = [expr("x_train"), expr("y_train")]
    assert same_arrays(given, expr("(x_train, y_train)"))
    assert same_arrays(given, expr("(x_train, y_train, weights)"))
    assert not same_arrays(given, expr("(x_val, y_train)"))
    assert same_arrays([expr("train_ds")], expr("train_ds"))
    assert not same_arrays(given, expr("x_train"))
