"""The keys of a DataLoader's batch (`brain/data.keys`): known only where every item is a dict of the same spelt keys."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from bertlint.facts.core import Facts
from bertlint.facts.nodes import UNKNOWN

HEAD = """\
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel, AutoTokenizer, default_data_collator
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
enc = tok(["a", "b"], padding="max_length", max_length=8)
"""


def _gives_mask(body: str):
    source = HEAD + textwrap.dedent(body) + "for batch in loader:\n    model(**batch)\n"
    facts = Facts(cst.parse_module(source), source)
    call = next(c for c in facts.calls if c.node.args and c.node.args[0].star == "**")
    return facts.gives(call, "attention_mask"), facts.gives(call, "input_ids")


@pytest.mark.parametrize("body, expected", [
    ("""
     class D(Dataset):
         def __getitem__(self, i):
             return {"input_ids": enc["input_ids"][i], "labels": 1}
     loader = DataLoader(D(), batch_size=2)
     """, (False, True)),
    ("""
     class D(Dataset):
         def __getitem__(self, i):
             return dict(input_ids=enc["input_ids"][i], attention_mask=enc["attention_mask"][i])
     loader = DataLoader(D(), batch_size=2)
     """, (True, True)),
    ("""
     class D(Dataset):
         def __getitem__(self, i):
             if i % 2:
                 return {"input_ids": enc["input_ids"][i]}
             return {"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i]}
     loader = DataLoader(D(), batch_size=2)
     """, (UNKNOWN, UNKNOWN)),  # the returns spell different keys
    ("""
     class D(Dataset):
         def __getitem__(self, i):
             item = {"input_ids": enc["input_ids"][i]}
             item.update(extra[i])
             return item
     loader = DataLoader(D(), batch_size=2)
     """, (UNKNOWN, UNKNOWN)),  # changed by more than item stores of string keys
    ("""
     class D(Dataset):
         def __getitem__(self, i):
             return {k: v[i] for k, v in enc.items()}
     loader = DataLoader(D(), batch_size=2)
     """, (UNKNOWN, UNKNOWN)),  # an encoding's keys are the tokenizer's
    ("""
     class D(Dataset):
         def __getitem__(self, i):
             return {"input_ids": enc["input_ids"][i], "labels": 1}
     loader = DataLoader(D(), batch_size=2, collate_fn=default_data_collator)
     """, (UNKNOWN, UNKNOWN)),  # a transformers collator may rename and drop keys
    ("""
     def collate(rows):
         return {"input_ids": torch.stack(rows)}
     loader = DataLoader(list(enc["input_ids"]), batch_size=2, collate_fn=collate)
     """, (False, True)),
    ("""
     loader = DataLoader(torch.utils.data.TensorDataset(torch.tensor(enc["input_ids"])), batch_size=2)
     """, (UNKNOWN, UNKNOWN)),  # a TensorDataset's batch is a list: `**` of it raises, nothing said
])
def test_a_batch_passes_the_keys_every_item_spells(body, expected):
    assert _gives_mask(body) == expected


@pytest.mark.parametrize("unpack, holds_ids", [
    ("ids, mask = batch", False),  # a batch of dicts: unpacking gives its keys (strings), as Python iterates a dict
    ("ids = batch['input_ids']", True),
])
def test_unpacking_a_batch_of_dicts_gives_its_keys(unpack, holds_ids):
    source = HEAD + (
        "class D(Dataset):\n    def __getitem__(self, i):\n"
        "        return {'input_ids': enc['input_ids'][i], 'attention_mask': enc['attention_mask'][i]}\n"
        f"for batch in DataLoader(D(), batch_size=2):\n    {unpack}\n    probe = ids\n")
    facts = Facts(cst.parse_module(source), source)
    found = facts.named_at("probe", next(s for s in facts.scopes if s.kind == "module"), None, True, None)
    assert (getattr(found, "kind", None) == "ids") is holds_ids
    assert (getattr(found, "kind", None) == "key") is not holds_ids
