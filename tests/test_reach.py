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
        (16, "forward.attention_mask", False, "library call data.load_batches()"),
        (16, "forward.input_ids", False, "library call data.load_batches()"),
        (17, "optimizer.lr", False, "library call json.load()"),
        (18, "training_args.learning_rate", True, ""),
    ]


def test_a_keyword_not_passed_is_no_site_unless_kwargs_may_hide_it():
    """A keyword a `**` mapping of known keys passes is a site like any other; one of unknown keys hides it."""
    assert sites("""
        import json
        import torch
        from transformers import AutoModel
        model = AutoModel.from_pretrained("bert-base-uncased")
        torch.optim.AdamW(model.parameters())
        torch.optim.AdamW(model.parameters(), **{"lr": 1e-3})
        torch.optim.AdamW(model.parameters(), **json.load(open("o.json")))
    """) == [(5, "from_pretrained.checkpoint", True, ""), (7, "optimizer.lr", True, ""), (8, "optimizer.lr", False, "**kwargs")]


def test_a_parameter_or_a_for_target_stops_where_its_argument_or_iterable_does():
    """A parameter the file's calls pass: stopped where the first argument the evaluator does not know stops, or by
    call sites giving different values; a `for` target over an unknown iterable: where the iterable stops; a method
    no call of the file runs: the method parameter itself."""
    assert sites("""
        import json
        import torch
        from transformers import AutoModel
        model = AutoModel.from_pretrained("bert-base-uncased")
        def fit(lr):
            torch.optim.AdamW(model.parameters(), lr=lr)
        fit(json.load(open("c.json"))["lr"])
        def tune(lr):
            torch.optim.SGD(model.parameters(), lr=lr)
        tune(1e-3)
        tune(1e-2)
        for rate in zip(json.load(open("r.json")), [1, 2]):
            torch.optim.Adam(model.parameters(), lr=rate)
        class Head(torch.nn.Module):
            def step(self, lr):
                torch.optim.Adam(model.parameters(), lr=lr)
    """) == [
        (5, "from_pretrained.checkpoint", True, ""),
        (7, "optimizer.lr", False, "library call json.load()"),
        (10, "optimizer.lr", False, "parameter the call sites give different values"),
        (14, "optimizer.lr", False, "library call json.load()"),
        (17, "optimizer.lr", False, "method parameter (no call of the file the evaluator follows runs it)"),
    ]


def test_a_self_attribute_is_stopped_by_what_binds_it_or_by_its_object():
    """`self.tokenizer.model_max_length` is stopped by `self.tokenizer` (a library base's attribute: no code of the file
    binds it); `self.lr`, bound in two methods, at several places."""
    found = sites("""
        import torch
        from diffusers import StableDiffusionPipeline
        from transformers import CLIPTokenizer
        class Pipe(StableDiffusionPipeline):
            def __init__(self, tokenizer: CLIPTokenizer):
                super().__init__()
                self.register_modules(tokenizer=tokenizer)
            def encode(self, prompt):
                return self.tokenizer(prompt, max_length=self.tokenizer.model_max_length)
        class Data:
            def __init__(self, texts, tok):
                self.texts = texts
                self.tok = tok
                self.lr = 1e-3
            def reset(self, lr):
                self.lr = lr
            def encode(self, model):
                torch.optim.AdamW(model.parameters(), lr=self.lr)
                return self.tok(self.texts)
    """)
    assert [s for s in found if not s[2] and s[1] in ("tokenize.max_length", "optimizer.lr")] == [
        (10, "tokenize.max_length", False, "self attribute no code of the file binds (a library base's)"),
        (19, "optimizer.lr", False, "self attribute bound at several places (unknown, or disagreeing)"),
    ]


def test_an_unknown_attribute_of_a_known_object_is_named_by_what_the_object_is():
    """A command line parsed in a helper (the option required), a namespace built by hand, an instance of the file's
    class: each an object the evaluator holds whose attribute it does not know."""
    assert sites("""
        import argparse, types
        from transformers import AutoModel
        def parse_args():
            parser = argparse.ArgumentParser()
            parser.add_argument("--ckpt", required=True)
            return parser.parse_args()
        args = parse_args()
        AutoModel.from_pretrained(args.ckpt)
        ns = types.SimpleNamespace(name="bert-base-uncased")
        AutoModel.from_pretrained(ns.other)
        class Config:
            def __init__(self, name):
                self.name = name
        cfg = Config(open("name.txt").read())
        AutoModel.from_pretrained(cfg.name)
    """) == [
        (9, "from_pretrained.checkpoint", False, "command-line option (no default, or a parser the evaluator does not see)"),
        (11, "from_pretrained.checkpoint", False, "attribute of a namespace built by hand"),
        (16, "from_pretrained.checkpoint", False, "attribute of an instance of the file's class"),
    ]
