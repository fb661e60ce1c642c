"""benchmarks/reach.py: the sites a rule asks about, resolved or not, and what stopped the evaluator."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import libcst as cst

from bertlint.facts import Facts

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import reach  # noqa: E402


def sites(source: str) -> list[tuple[int, str, bool, str]]:
    source = textwrap.dedent(source)
    found = reach.file_sites(Facts(cst.parse_module(source), source), "x.py")
    return sorted((s.line, s.kind, s.resolved, s.construct) for s in found)


def test_each_site_is_counted_resolved_or_stopped_by_its_construct():
    assert sites("""
        import argparse, json
        from data import load_batches
        import torch
        from transformers import AutoModel, AutoTokenizer, TrainingArguments
        parser = argparse.ArgumentParser()
        parser.add_argument("--ckpt")
        args = parser.parse_args()
        tok = AutoTokenizer.from_pretrained("bert-base-uncased")
        model = AutoModel.from_pretrained(args.ckpt)
        def encode(batch):
            return tok(batch["text"], padding=True, max_length=128)
        enc = tok(["a", "b"], return_tensors="pt")
        model(**enc)
        for batch in load_batches():
            model(**batch)
        opt = torch.optim.AdamW(model.parameters(), lr=json.load(open("c.json"))["lr"])
        TrainingArguments("out", learning_rate=2e-5)
    """) == [
        (9, "from_pretrained.checkpoint", True, ""),
        (10, "from_pretrained.checkpoint", False, "command-line option (no default, or a parser the evaluator does not see)"),
        (12, "tokenize.max_length", True, ""),
        (12, "tokenize.padding", True, ""),
        (12, "tokenize.texts", False, "parameter of a function the file never calls (an entry point)"),
        (13, "tokenize.texts", True, ""),
        (14, "forward.attention_mask", True, ""),
        (14, "forward.input_ids", True, ""),
        (16, "forward.attention_mask", False, "for target over a call's result"),
        (16, "forward.input_ids", False, "for target over a call's result"),
        (17, "optimizer.lr", False, "library call json.load()"),
        (18, "training_args.learning_rate", True, ""),
    ]


def test_a_keyword_not_passed_is_no_site_unless_kwargs_may_hide_it():
    assert sites("""
        import torch
        from transformers import AutoModel
        model = AutoModel.from_pretrained("bert-base-uncased")
        torch.optim.AdamW(model.parameters())
        torch.optim.AdamW(model.parameters(), **{"lr": 1e-3})
    """) == [(4, "from_pretrained.checkpoint", True, ""), (6, "optimizer.lr", False, "**kwargs")]
