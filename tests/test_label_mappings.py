"""Labels a script makes of a data file's column value by value: the exact values pandas reads (`datafiles`
exact mode, the leading index fields of a ragged file) and the expressions the mapping follows (`frame_columns`)."""

from collections import Counter

import libcst as cst
import pytest

from bertlint import datafiles
from bertlint.facts import Facts, mapped_counts, mapped_label_columns


def _write(tmp_path, text, name="d.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_exact_values_are_what_pandas_reads(tmp_path):
    path = _write(tmp_path, "y,x\nham,1\nspam,2\nham,3\n")
    assert datafiles.label_counts(path, "csv", ["y"], exact=True) == (Counter({"ham": 2, "spam": 1}), "y")
    floats = _write(tmp_path, "y\n1\n2.5\nNA\n", "f.csv")
    counts, _ = datafiles.label_counts(floats, "csv", ["y"], exact=True)
    assert counts[1.0] == 1 and counts[2.5] == 1 and sum(counts.values()) == 3  # ints beside floats or NaN: float64
    assert datafiles.label_counts(_write(tmp_path, "y\n1\n2\n", "i.csv"), "csv", ["y"], exact=True) == (Counter({1: 1, 2: 1}), "y")


@pytest.mark.parametrize("cells", ["True\nFalse", " ham\nspam", "1\nham"])
def test_exact_values_refuse_what_pandas_may_read_otherwise(tmp_path, cells):
    """A boolean, a cell padded with spaces (pandas keeps them, the classes strip them), numbers beside text."""
    assert datafiles.label_counts(_write(tmp_path, "y\n" + cells + "\n"), "csv", ["y"], exact=True) is None


def test_a_ragged_file_takes_its_leading_fields_as_the_index(tmp_path):
    """Rows with one field more than the header: the header names the fields after the first (pandas leading_cols)."""
    path = _write(tmp_path, "label,text\n0,a,x\n1,a,y\n2,b,z\n")
    assert datafiles.label_counts(path, "csv", ["label"]) == (Counter({"a": 2, "b": 1}), "label")
    assert datafiles.label_counts(path, "csv", ["label"], index=False) is None  # index_col=/usecols=: not followed
    plain = _write(tmp_path, "label,text\na,x\nb,y\n", "p.csv")
    assert datafiles.label_counts(plain, "csv", ["label"], index=False) == (Counter({"a": 1, "b": 1}), "label")


def _mapped(body, counts):
    source = "import pandas as pd\ndf = pd.read_csv('d.csv')\n" + body
    facts = Facts(cst.parse_module(source), source)
    return [mapped_counts(Counter(counts), mapping) for _, mapping in mapped_label_columns(facts)]


@pytest.mark.parametrize("body, counts, expected", [
    ("labels = [0 if v == 'ham' else 1 for v in df['v1'].values]", {"ham": 9, "spam": 1, "x": 2}, {0: 9, 1: 3}),
    ("y = df['g'].map(lambda g: g in ('a', 'b')).values", {"a": 1, "b": 2, "c": 3}, {True: 3, False: 3}),
    ("y = df['g'].apply(lambda g: {'a': 'x', 'b': 'x', 'c': 'z'}[g])", {"a": 1, "b": 2, "c": 3}, {"x": 3, "z": 3}),
    ("df['target'] = df['rate'] < 9", {5.0: 2, 10.0: 3, datafiles.NAN: 1}, {True: 2, False: 4}),
    ("def f(q):\n    if q <= 4:\n        return 'bad'\n    elif q <= 6:\n        return 'ok'\n    else:\n        return 'good'\ny = df['quality'].apply(f)",
     {3: 1, 5: 4, 6: 2, 8: 1}, {"bad": 1, "ok": 6, "good": 1}),
    ("df['t'] = df['rate'] > 2\ny = df.pop('t')", {1: 2, 3: 1}, {False: 2, True: 1}),
])
def test_mappings_followed(body, counts, expected):
    assert _mapped(body, counts) == [Counter(expected)]


@pytest.mark.parametrize("body, counts", [
    ("y = df['g'].map(lambda g: helper(g))", {"a": 1}),  # a function not followed
    ("y = df['g'].map(lambda g: g < 3)", {"a": 1}),  # a str compared with an int raises
    ("y = df['g'].apply(lambda g: {'a': 0}[g])", {"b": 1}),  # a key the dict lacks
    ("def f(q):\n    if q > 3:\n        return 1\ny = df['q'].apply(f)", {1: 1}),  # falls off its end: None, no class
    ("y = df['g'].map(lambda g: g)", {datafiles.NAN: 1}),  # NaN is no class
    ("@wrap\ndef f(g):\n    return g == 'a'\ny = df['g'].map(f)", {"a": 1}),  # a decorated function may be another
    ("df['g'] = df['g'].str.lower()\ny = df['g'].map(lambda g: g == 'a')", {"a": 1}),  # the column holds values not the file's
])
def test_mappings_not_followed_give_no_counts(body, counts):
    assert _mapped(body, counts) == [None]


def test_no_mapping_for_a_plain_read_a_dict_or_a_membership_test_of_a_series():
    assert _mapped("y = df['g'].values\nlabels = df['g'].map({'a': 0})\nlabels = df['g'] in ('a',)", {"a": 1}) == []


def test_a_column_binned_in_place_by_its_one_store_and_a_chained_comparison():
    body = "def f(q):\n    if q <= 4:\n        return 0\n    elif 5 <= q <= 6:\n        return 1\n    return 2\ndf['quality'] = df['quality'].apply(f)\ny = df['quality']"
    assert _mapped(body, {3: 2, 5: 5, 6: 1, 7: 1}) == [Counter({0: 2, 1: 6, 2: 1})]
    assert _mapped(body + "\ndf['quality'] = df['quality'] + 1", {3: 2}) == []  # stored twice: no one store to follow


def test_module_step_and_level():
    """`module_step`: the place of the top-level statement that holds a node (a def's body: the def's place);
    `runs_at_module_level`: only a simple statement of the module's own body."""
    from bertlint.facts import module_step, runs_at_module_level

    source = "a = f()\ndef g():\n    b = h()\nfor i in r:\n    c = k()\nd = m()\n"
    facts = Facts(cst.parse_module(source), source)
    by_name = {facts.text(call.node.func): call.node for call in facts.calls}
    assert [module_step(facts, by_name[name]) for name in ("f", "h", "k", "m")] == [0, 1, 2, 3]
    assert [runs_at_module_level(facts, by_name[name]) for name in ("f", "h", "k", "m")] == [True, False, False, True]
