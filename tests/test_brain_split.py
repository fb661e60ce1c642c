"""scikit-learn's `train_test_split(*arrays, ...)` as a library model (brain/tables.py `_split`): a list of
2 * len(arrays) parts, each some rows of its array in an object of its kind, so what the value layer knows of the
array's rows holds for each part (scikit-learn 1.9.1 model_selection/_split.py:2797 `train_test_split`, its return
`chain.from_iterable((_safe_indexing(a, train), _safe_indexing(a, test)) for a in arrays)`)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from conftest import probe

from bertlint.facts import UNKNOWN, Binding, Facts
from bertlint.facts.abstract import Series

HEADER = """\
import pandas as pd
import torch
from sklearn.model_selection import train_test_split as tts
from sklearn import model_selection
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
"""


def facts_of(body: str) -> Facts:
    source = HEADER + textwrap.dedent(body)
    return Facts(cst.parse_module(source), source)


def test_each_part_of_padded_ids_and_mask_holds_their_rows_under_any_import_name():
    facts = facts_of("""
        enc = tok(["a b", "c"], padding="max_length", max_length=8, return_tensors="pt")
        ids, mask = enc["input_ids"], enc["attention_mask"]
        tr, te, mtr, mte = tts(ids, mask, test_size=0.1, random_state=0)
        a, b = model_selection.train_test_split(ids, shuffle=False)
        probe(tr=tr, te=te, mtr=mtr, mte=mte, a=a, b=b)
    """)
    found = {name: facts.evaluate(*probe(facts, name)) for name in ("tr", "te", "mtr", "mte", "a", "b")}
    assert all(isinstance(v, Binding) and v.kind == "ids" for v in found.values())
    assert [found[n].detail for n in ("tr", "te", "mtr", "mte", "a", "b")] == ["input_ids", "input_ids", "attention_mask", "attention_mask", "input_ids", "input_ids"]


def test_a_dataframe_split_keeps_its_columns():
    facts = facts_of("""
        df = pd.read_csv("reviews.csv")
        train_df, val_df = tts(df, test_size=0.2, stratify=df["label"])
        probe(t=train_df["text"].tolist(), v=val_df.text.values, rows=df[10:20]["text"])
    """)
    assert [facts.is_batch(*probe(facts, name)) for name in ("t", "v", "rows")] == [True, True, True]


def test_a_list_known_element_by_element_gives_lists_of_those_elements():
    facts = facts_of("""
        enc = tok(["a b", "c"], padding=True, return_tensors="pt")
        pairs = [enc["input_ids"], enc["input_ids"]]
        tr, te = tts(pairs)
        probe(x=tr[0])
    """)
    part = facts.evaluate(*probe(facts, "x"))
    assert isinstance(part, Binding) and part.kind == "ids"


@pytest.mark.parametrize("body", [
    'enc = tok(["a", "b"], padding=True)\ntr, te = tts(enc)\nprobe(x=tr)\n',  # an encoding's rows: tokenizers.Encoding objects
    'class D:\n    def __getitem__(self, i):\n        return tok("a")\nd = D()\ntr, te = tts(d)\nprobe(x=tr)\n',  # __getitem__ of each index
    'tr, te = tts(["one", "two"])\nprobe(x=tr)\n',  # a part of two constant rows: which, unknown
    'arrays = [[1, 2], [3, 4]]\ntr, te = tts(*arrays)\nprobe(x=tr)\n',  # which arrays: unknown
    'ids = unknown_ids()\ntr, te = tts(ids)\nprobe(x=tr)\n',
])
def test_what_is_not_rows_of_a_known_object_stays_unknown(body):
    facts = facts_of(body)
    assert facts.evaluate(*probe(facts, "x")) is UNKNOWN


def test_the_parts_are_one_pair_per_array():
    facts = facts_of("""
        df = pd.read_csv("x.csv")
        enc = tok(["a b", "c"], padding=True, return_tensors="pt")
        parts = tts(enc["input_ids"], df["label"])
        probe(first=parts[1], second=parts[2], third=parts[4])
    """)
    assert facts.evaluate(*probe(facts, "first")).kind == "ids"
    assert facts.is_batch(*probe(facts, "second")) is True
    assert facts.evaluate(*probe(facts, "third")) is UNKNOWN


def test_the_stand_in_splits_rows_as_scikit_learn_does():
    """The differential test's `train_test_split` (tests/standins.py): scikit-learn's sizes (`_validate_shuffle_split`:
    test 0.25 by default, a float share of test rounded up, of train rounded down), its refusals, and each part of its
    array's kind holding some of its rows."""
    import standins

    ids = standins.Tensor(4, ((7, "input_ids"),), None)
    frame = standins.DataFrame({"text": ["a", "b", "c", "d"]})
    tr, te, ftr, fte, ltr, lte = standins.train_test_split(ids, frame, ("w", "x", "y", "z"), random_state=0)
    assert (len(tr), len(te), tr.trail) == (3, 1, ids.trail)
    assert sorted(ftr["text"] + fte["text"]) == ["a", "b", "c", "d"] and isinstance(ftr, standins.DataFrame)
    assert isinstance(ltr, list) and sorted(ltr + lte) == ["w", "x", "y", "z"]
    assert standins.train_test_split([1, 2, 3, 4, 5], test_size=1, shuffle=False) == [[1, 2, 3, 4], [5]]
    assert [len(p) for p in standins.train_test_split(list(range(10)), train_size=0.55)] == [5, 5]
    with pytest.raises(ValueError):
        standins.train_test_split(["one"])
    with pytest.raises(ValueError):
        standins.train_test_split([1, 2, 3], [1, 2])
