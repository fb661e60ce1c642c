"""BL203 reads the ignore index where a name holds it: a later line that writes `self.ignore_id` (an `__init__` default
of -100), a module constant, or a config field (`ignore_index: int = -100`) into the pad positions masks them."""

from __future__ import annotations

import pytest

from conftest import codes

SCRIPT = """\
from dataclasses import dataclass

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

{holder}

tok = AutoTokenizer.from_pretrained("gpt2")
tok.pad_token = tok.eos_token
model = AutoModelForCausalLM.from_pretrained("gpt2")
enc = tok(["a short line", "a somewhat longer line of text"], padding="max_length", max_length=32, return_tensors="pt")
labels = enc["input_ids"].clone()
labels[{where}] = {value}
loss = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], labels=labels).loss
loss.backward()
"""
HOLDERS = {
    "constant": ("IGNORE_INDEX = -100", "IGNORE_INDEX"),
    "annotated": ("IGNORE_INDEX: int = -100", "IGNORE_INDEX"),
    "config-field": ("@dataclass\nclass Config:\n    ignore_index: int = -100\n\n\ncfg = Config()", "cfg.ignore_index"),
}


@pytest.mark.parametrize("holder", sorted(HOLDERS))
@pytest.mark.parametrize(("where", "expected"), [
    ('enc["attention_mask"] == 0', []),  # the pads
    (":, :2", ["BL203"]),  # a prompt prefix: the pads stay
])
def test_an_ignore_index_held_in_a_name_masks_where_it_is_written(lint, holder, where, expected):
    source, value = HOLDERS[holder]
    found = lint(SCRIPT.format(holder=source, where=where, value=value))
    assert [c for c in codes(found) if c == "BL203"] == expected
