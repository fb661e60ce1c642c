"""The value layer (facts/values.py): what an expression holds, seen through the file's own code, and UNKNOWN
wherever a value could differ at run time."""

from __future__ import annotations

import textwrap

import libcst as cst

from bertlint.facts import UNKNOWN, Facts


def facts_of(source: str) -> Facts:
    source = textwrap.dedent(source)
    return Facts(cst.parse_module(source), source)


def last_call(facts: Facts, name: str):
    return [c for c in facts.calls if facts.text(c.node.func) == name][-1]


def test_a_helper_is_evaluated_for_each_call_with_its_own_arguments():
    facts = facts_of("""
        def scaled(base, factor=2):
            return base * factor

        a = scaled(1e-5)
        b = scaled(1e-5, factor=10)
        print(x=a, y=b)
    """)
    call = last_call(facts, "print")
    assert facts.kw_value(call, "x") == 2e-5 and facts.kw_value(call, "y") == 1e-4


def test_the_definition_in_force_at_the_call_is_the_one_evaluated():
    facts = facts_of("""
        def n():
            return 1
        first = n()
        def n():
            return 2
        print(a=first, b=n())
    """)
    call = last_call(facts, "print")
    assert (facts.kw_value(call, "a"), facts.kw_value(call, "b")) == (1, 2)


def test_helpers_whose_returns_disagree_or_recurse_are_unknown():
    facts = facts_of("""
        import random
        def pick():
            if random.random() > 0.5:
                return 1
            return 2
        def forever(n):
            return forever(n + 1)
        print(a=pick(), b=forever(0))
    """)
    call = last_call(facts, "print")
    assert facts.kw_value(call, "a") is UNKNOWN and facts.kw_value(call, "b") is UNKNOWN


def test_nested_helpers_stop_at_the_depth_bound():
    facts = facts_of("""
        def a(x): return x
        def b(x): return a(x)
        def c(x): return b(x)
        def d(x): return c(x)
        print(shallow=b(3), deep=d(3))
    """)
    call = last_call(facts, "print")
    assert facts.kw_value(call, "shallow") == 3 and facts.kw_value(call, "deep") is UNKNOWN


def test_configuration_objects_and_their_command_line_defaults():
    facts = facts_of("""
        import os
        from dataclasses import dataclass
        from types import SimpleNamespace

        @dataclass
        class Args:
            lr: float = 1e-5
            epochs: int = 3

        class Config:
            warmup = 0.1

        args = Args(epochs=5)
        ns = SimpleNamespace(batch=16)
        rate = float(os.environ.get("LR", "3e-5"))
        run(lr=args.lr, epochs=args.epochs, warmup=Config.warmup, batch=ns.batch, rate=rate)
    """)
    call = last_call(facts, "run")
    assert [facts.kw_value(call, k) for k in ("lr", "epochs", "warmup", "batch", "rate")] == [1e-5, 5, 0.1, 16, 3e-5]
    assert facts.kw_value(call, "rate", cli=False) is UNKNOWN  # the environment may set it


def test_a_config_field_assigned_after_the_fact_is_unknown():
    facts = facts_of("""
        class Config:
            lr = 1e-3
        cfg = Config()
        cfg.lr = 2e-5
        run(lr=cfg.lr)
    """)
    assert facts.kw_value(last_call(facts, "run"), "lr") is UNKNOWN


def test_objects_keep_their_kind_through_helpers_wrappers_and_loaders():
    facts = facts_of("""
        import torch
        from accelerate import Accelerator
        from torch.utils.data import DataLoader, TensorDataset
        from transformers import AutoModel, AutoTokenizer

        def load(name):
            return AutoTokenizer.from_pretrained(name)

        tok = load("bert-base-uncased")
        accelerator = Accelerator()
        model = accelerator.prepare(AutoModel.from_pretrained("bert-base-uncased"))
        plain = accelerator.unwrap_model(model)
        enc = tok(["a", "b c"], padding=True, return_tensors="pt")
        loader = DataLoader(TensorDataset(enc["input_ids"], enc["attention_mask"]), batch_size=2)
        for ids, mask in loader:
            plain(ids, attention_mask=mask)
    """)
    kinds = {c.short or facts.text(c.node.func): c for c in facts.calls}
    forward = kinds["plain"]
    assert facts.kind(forward.node.func, forward.scope, forward.order).kind == "model"
    ids = facts.kind(forward.positional[0].value, forward.scope, forward.order)
    assert ids.kind == "ids" and ids.detail == "input_ids" and ids.call.node is kinds["tok"].node


def test_batches_of_texts_in_any_form():
    facts = facts_of("""
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained("bert-base-uncased")

        def encode(texts):
            return tok(texts, padding=True)

        rows = [{"text": "a"}, {"text": "b"}]
        tok([r["text"] for r in rows], padding=True)
        tok(list(df["text"]), padding=True)
        tok(ds["train"]["text"][:64], padding=True)
        tok("one text", padding=True)
        encode(["x", "y"])
    """)
    batches = [facts.is_batch(c.positional[0].value, c.scope, c.order) for c in facts.tokenizer_calls]
    assert batches == [True, True, True, True, False]  # the helper's `texts` first: its one call site passes a list


def test_unbound_conventional_names_and_star_imports_resolve():
    facts = facts_of("""
        from transformers import *
        torch.no_grad()
        AutoTokenizer.from_pretrained("bert-base-uncased")
        np = None
        np.array([1])
    """)
    assert [c.qualname for c in facts.calls] == ["torch.no_grad", "transformers.AutoTokenizer.from_pretrained", None]


def test_an_import_in_a_function_body_binds_its_name_in_that_function():
    facts = facts_of("""
        def load(Tok=None):
            from transformers import AutoTokenizer
            import torch.nn as nn
            import torch.optim
            head = nn.Linear(2, 2)
            opt = torch.optim.AdamW(head.parameters())
            tok = AutoTokenizer.from_pretrained("bert-base-uncased")
            other = Tok.from_pretrained("bert-base-uncased")

        def shadowed():
            from transformers import AutoTokenizer
            AutoTokenizer = object
            AutoTokenizer.from_pretrained("bert-base-uncased")
    """)
    quals = [c.qualname for c in facts.calls if c.method in ("Linear", "AdamW", "from_pretrained")]
    assert quals == ["torch.nn.Linear", "torch.optim.AdamW", "transformers.AutoTokenizer.from_pretrained", None, None]


def test_encode_returns_the_ids_of_its_encoding():
    facts = facts_of("""
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained("bert-base-uncased")
        ids = tok.encode("one text", padding="max_length", max_length=8, return_tensors="pt")
        enc = tok.encode_plus("one text")
        print(ids, enc)
    """)
    call = last_call(facts, "print")
    ids, enc = (facts.kind(a.value, call.scope, call.order) for a in call.positional)
    assert (ids.kind, ids.detail, ids.parent.kind, ids.call.method) == ("ids", "input_ids", "encoding", "encode")
    assert enc.kind == "encoding"


def test_default_data_collator_batches_hold_the_items_keys_as_they_are():
    facts = facts_of("""
        from datasets import load_dataset
        from torch.utils.data import DataLoader
        from transformers import AutoTokenizer, DefaultDataCollator, default_data_collator
        tok = AutoTokenizer.from_pretrained("bert-base-uncased")
        def encode(examples):
            return tok(examples["text"], padding="max_length", max_length=8)
        ds = load_dataset("imdb", split="test").map(encode, batched=True)
        for a, b in zip(DataLoader(ds, collate_fn=default_data_collator), DataLoader(ds, collate_fn=DefaultDataCollator())):
            print(a["input_ids"], b["input_ids"], a["labels"])
    """)
    call = last_call(facts, "print")
    a, b, labels = (facts.kind(x.value, call.scope, call.order) for x in call.positional)
    assert a.kind == b.kind == "ids" and a.call.method is None and a.parent.kind == "encoding" and b.call is a.call
    assert labels is None or labels.parent.kind == "dataloader_item"


def test_a_dict_display_holds_its_objects_key_by_key_through_the_changes_its_scope_surely_makes():
    facts = facts_of("""
        from transformers import AutoModel
        models = {"bert": AutoModel.from_pretrained("bert-base-uncased"), "lr": 2e-5}
        changed = {"bert": AutoModel.from_pretrained("bert-base-uncased")}
        changed.update(bert=None)
        stored = {"bert": AutoModel.from_pretrained("bert-base-uncased")}
        stored["bert"] = None
        maybe = {"bert": AutoModel.from_pretrained("bert-base-uncased")}
        if len(__name__) > 1:
            maybe["bert"] = None
        print(models["bert"], models.get("bert"), models["lr"], models.get("gpt"), changed["bert"], changed.get("bert"), stored.get("bert"), maybe["bert"])
    """)
    call = last_call(facts, "print")
    found = [facts.evaluate(a.value, call.scope, call.order) for a in call.positional]
    assert found[0].kind == found[1].kind == "model" and found[0] is found[1]
    assert found[2:4] == [2e-5, None]
    assert found[4:] == [None, None, None, UNKNOWN]


def test_a_tokenizer_called_through_the_file_s_class_or_function_is_a_tokenizer_call():
    """`Config.tokenizer(...)` (a class attribute) and `get_tokenizer()(...)`: calls whose name resolves into the file
    are encoding calls where what they call holds a tokenizer; a class constructed or a function called is none."""
    facts = facts_of("""
        from transformers import AutoTokenizer

        class Config:
            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            rate = 1e-05

        def get_tokenizer():
            return Config.tokenizer

        Config.tokenizer(["a", "b"], padding=True)
        get_tokenizer()("c", padding=True)
        Config()
        get_tokenizer()
    """)
    assert [facts.text(c.node.func) for c in facts.tokenizer_calls] == ["Config.tokenizer", "get_tokenizer()"]


def test_rows_of_an_array_indexed_with_whole_trailing_axes_are_its_rows():
    facts = facts_of("""
        import torch
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained("bert-base-uncased")
        ids = tok(["a", "b c"], padding=True, return_tensors="pt")["input_ids"]
        enc = tok(["a", "b c"], padding=True)
        d = {"k": ids}
        print(ids[0:2, :], ids[i:i + 8, :, :], ids[0:2, 1:], enc[0:2, :], d[0:2, :], [ids][0:1, :])
    """)
    call = last_call(facts, "print")
    found = [facts.kind(a.value, call.scope, call.order) for a in call.positional]
    assert [(f.kind, f.detail) for f in found[:2]] == [("ids", "input_ids")] * 2
    assert found[2:] == [None] * 4  # a column slice; an encoding, a dict and a list fail on a tuple key
