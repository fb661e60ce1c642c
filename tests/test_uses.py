"""Where a value goes (facts/uses.py), and `self.x` assigned from itself (`self.m = self.m.eval()`) in the evaluator."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from bertlint.facts import UNKNOWN, Facts, never_fed
from bertlint.facts.uses import unread_import, uses


def facts_of(source: str) -> Facts:
    source = textwrap.dedent(source)
    return Facts(cst.parse_module(source), source)


def uses_of(source: str, callee: str = "tok.encode") -> list[tuple[str, str]]:
    """(how, the consuming call's callee or the node's text) of each use of the last call of `callee`."""
    facts = facts_of(source)
    call = [c for c in facts.calls if facts.text(c.node.func) == callee][-1]
    return sorted((u.how, facts.text(u.call.node.func) if u.call is not None else facts.text(u.node)) for u in uses(facts, call.node))


def test_through_names_conversions_and_returns_to_the_caller_with_the_tuple_position():
    source = """
    def prep(text):
        ids = tok.encode(text)
        ids = torch.tensor([ids]).to("cpu")
        return ids, mask_of(text)

    def predict(text):
        input_ids, mask = prep(text)
        return model(input_ids, attention_mask=mask)
    """
    assert uses_of(source) == [("arg", "model")]


def test_a_later_binding_that_surely_ran_ends_the_reads():
    source = """
    ids = tok.encode(text)
    model(ids)
    ids = other()
    stack(ids)
    """
    assert uses_of(source) == [("arg", "model")]


def test_a_read_with_no_call_between_it_and_the_binding_is_reached():
    # `return ids` right after `ids = ...` (no call or binding between them): the read sits at the binding's order
    source = """
    def prep(text):
        ids = tok.encode(text)
        return ids

    data = prep(t)
    model(data)
    """
    assert uses_of(source) == [("arg", "model")]
    assert uses_of("ids = tok.encode(t)\nkept = ids\nmodel(kept)\n") == [("arg", "model")]


def test_never_fed_values_are_only_inspected_or_dropped():
    facts = facts_of("""
    test = ds.map(f)
    print(test)
    print(len(test["input_ids"]))
    ds.map(g)
    train = ds.map(h)
    trainer = Trainer(train_dataset=train)
    """)
    fed = {facts.text(c.positional[0].value): never_fed(facts, c.node) for c in facts.calls if c.short == "map"}
    assert fed == {"f": True, "g": True, "h": False}


def test_gathered_stored_and_returned_out_of_the_file():
    assert uses_of("def f(t):\n    return tok.encode(t)\nbatch = [f(t) for t in texts]\n") == [("gathered", "f(t)")]
    assert uses_of("def f(t):\n    return tok.encode(t)\n") == [("returned", "tok.encode(t)")]
    assert uses_of("cache[k] = tok.encode(t)\n") == [("stored", "tok.encode(t)")]
    assert uses_of("pair = [tok.encode(a), x]\n") == [("gathered", "tok.encode(a)")]
    assert uses_of("rows.append(tok.encode(a))\n") == [("arg", "rows.append")]


def test_a_method_of_the_class_returns_to_the_calls_on_self_and_on_instances():
    source = """
    class C:
        def prep(self, t):
            return tok.encode(t)

        def run(self, t):
            out.append(self.prep(t))

    C().prep("x").keys()
    """
    assert uses_of(source) == [("arg", "out.append"), ("method", 'C().prep("x").keys')]


SELF_MODEL = """
from transformers import AutoModel

class Service:
    def __init__(self):
        self.model = AutoModel.from_pretrained("bert-base-uncased")
        self.model = self.model.eval()
        self.model = self.model.{last}

    def run(self, ids):
        return self.model(ids)
"""


def _self_model(last: str):
    facts = facts_of(SELF_MODEL.format(last=last))
    call = [c for c in facts.calls if facts.text(c.node.func) == "self.model"][-1]
    return facts.evaluate(call.node.func, call.scope, call.order)


def test_self_attribute_assigned_from_itself_keeps_what_the_plain_assignment_gives():
    found = _self_model('to("cpu")')
    assert getattr(found, "kind", None) == "model"


def test_self_attribute_assigned_from_itself_into_something_else_is_unknown():
    assert _self_model("config") is UNKNOWN


def test_map_functions_handed_by_name_partial_lambda_and_the_function_a_lambda_calls():
    from bertlint.facts import map_functions

    facts = facts_of("""
    import functools
    from datasets import load_dataset

    def tok_a(ex):
        return ex

    def tok_b(ex, n):
        return ex

    def tok_c(ex, tokenizer, n):
        return ex

    def never(ex):
        return ex

    ds = load_dataset("imdb")
    ds = ds.map(tok_a)
    ds = ds.map(functools.partial(tok_b, n=3))
    ds = ds.map(lambda rows: tok_c(rows, None, 128))
    out = map(never, [1, 2])
    """)
    names = sorted(getattr(fn, "name", None).value if hasattr(fn, "name") else "lambda" for fn, _ in map_functions(facts))
    assert names == ["lambda", "tok_a", "tok_b", "tok_c"]


def test_bl203_says_a_forward_under_no_grad_only_reports_its_loss_and_a_trained_one_trains_on_pad():
    from conftest import ROOT, lint_text

    evaluated = lint_text((ROOT / "fixtures/labels/bl203_perplexity_under_no_grad.py").read_text(), select=["BL203"])
    trained = lint_text((ROOT / "fixtures/labels/bl203_bart_manual_loop.py").read_text(), select=["BL203"])
    assert [f.code for f in evaluated] == ["BL203"] and "reported loss (and perplexity) is diluted" in evaluated[0].message
    assert "trains the model to predict [PAD]" not in evaluated[0].message
    assert trained and all("trains the model to predict [PAD]" in f.message for f in trained)


NEVER_SERVED = """
import torch
from transformers import AutoTokenizer

tok = AutoTokenizer.from_pretrained("t5-small")

def encode(src, tgt):
    enc = tok(src, padding="max_length", max_length=8)
    enc["labels"] = tok(tgt, padding="max_length", max_length=8)["input_ids"]
    return enc

class Pairs(torch.utils.data.Dataset):
    def __init__(self, enc):
        self.enc = enc

    def __len__(self):
        return len(self.enc["input_ids"])

    def __getitem__(self, idx):
        return {GETITEM}

ds = Pairs(encode(["a"], ["b"]))
"""


def _never_served(getitem: str) -> bool:
    from bertlint.facts import never_served

    facts = facts_of(NEVER_SERVED.replace("{GETITEM}", getitem))
    return never_served(facts, next(s for s in facts.stores if s.key == "labels"))


def test_labels_a_dataset_reads_only_at_other_keys_are_never_served():
    assert _never_served('{"input_ids": self.enc["input_ids"][idx]}') is True


def test_labels_a_dataset_may_read_are_served():
    assert _never_served("{k: v[idx] for k, v in self.enc.items()}") is False
    assert _never_served('{k: self.enc[k][idx] for k in ("input_ids", "labels")}') is False
    assert _never_served('{"labels": self.enc["labels"][idx]}') is False


@pytest.mark.parametrize(("source", "rebound"), [
    ("from transformers import AdamW\nfrom torch.optim import AdamW\nopt = AdamW(p)\n", "from torch.optim import AdamW"),
    ("from transformers import AdamW\n", None),  # read nowhere
    # a function called only after the rebinding reads the new binding
    ("from transformers import AdamW\ndef make(p):\n    return AdamW(p)\nfrom torch.optim import AdamW\nopt = make(p)\n", "from torch.optim import AdamW"),
    ("def f(p):\n    from transformers import AdamW\n    from torch.optim import AdamW\n    return AdamW(p)\nf(q)\n", "from torch.optim import AdamW"),
    ("from transformers import AdamW\ndef f(AdamW):\n    return AdamW\nfrom torch.optim import AdamW\nAdamW(p)\n", "from torch.optim import AdamW"),  # a parameter
], ids=["rebound", "never-read", "function-called-after", "inside-a-function", "a-parameter-of-that-name"])
def test_an_import_no_read_sees(source, rebound):
    facts = facts_of(source)
    alias = next(a for q, a, _s in facts.import_nodes if q == "transformers.AdamW")
    found = unread_import(facts, alias)
    assert found is not None and found.name == "AdamW" and found.read == (rebound is not None)
    assert (facts.text(found.rebound).strip() if found.read else None) == rebound


@pytest.mark.parametrize("source", [
    "from transformers import AdamW\nopt = AdamW(p)\nfrom torch.optim import AdamW\n",
    "from transformers import AdamW\nif fast:\n    from torch.optim import AdamW\nopt = AdamW(p)\n",
    "try:\n    from transformers import AdamW\nexcept ImportError:\n    from torch.optim import AdamW\nopt = AdamW(p)\n",
    "from transformers import AdamW\nfor i in range(3):\n    opt = AdamW(p)\n    from torch.optim import AdamW\n",  # round the loop: the first pass
    "from transformers import AdamW\ndef make(p):\n    return AdamW(p)\nopt = make(p)\nfrom torch.optim import AdamW\n",
    "from transformers import AdamW\ndef make(p):\n    return AdamW(p)\nfrom torch.optim import AdamW\n",  # may be called from anywhere
    "from transformers import AdamW\nopt = [AdamW(q) for q in ps]\nfrom torch.optim import AdamW\n",  # a comprehension runs where it sits
    "from transformers import AdamW\ndef use():\n    global AdamW\n    AdamW = AdamW\nuse()\nfrom torch.optim import AdamW\n",
    "from transformers import AdamW\nfrom torch.optim import AdamW\nopt = eval('AdamW')(p)\n",  # the namespace handed over
    "from transformers import AdamW\ndel AdamW\n",
    "from transformers import AdamW\nfrom torch.optim import *\nopt = AdamW(p)\n",  # a star import binds nothing the walk sees
], ids=["read-before", "conditional-rebinding", "try", "loop", "function-called-before", "function-not-called", "comprehension",
        "global", "eval", "del", "star-import"])
def test_an_import_some_read_may_see(source):
    facts = facts_of(source)
    alias = next(a for q, a, _s in facts.import_nodes if q == "transformers.AdamW")
    assert unread_import(facts, alias) is None
