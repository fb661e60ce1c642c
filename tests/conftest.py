"""Shared helpers: lint a snippet or a file with fixture-style options, isolated from any config."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest

from bertlint import engine, target
from bertlint.config import load_settings
from bertlint.rules import all_codes
from bertlint.target import target_version

ROOT = Path(__file__).resolve().parent.parent
# Tests target a fixed release unless they say otherwise, so that what happens to be installed in the
# test environment (the verify extra brings transformers) never changes expected findings.
PINNED_VERSION = "5.23"
# A t5-base summarizer: documents padded to 512 tokens, summaries to 64, batch {batch} (BL502 and its memory probe).
T5_SUMMARIES = """\
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, Seq2SeqTrainer, Seq2SeqTrainingArguments
tok = AutoTokenizer.from_pretrained("t5-base")
model = AutoModelForSeq2SeqLM.from_pretrained("t5-base")
def encode(b):
    enc = tok(b["document"], max_length=512, padding="max_length", truncation=True)
    enc["labels"] = tok(text_target=b["summary"], max_length=64, padding="max_length", truncation=True)["input_ids"]
    return enc
args = Seq2SeqTrainingArguments("out", per_device_train_batch_size={batch})
Seq2SeqTrainer(model=model, args=args).train()
"""
# The verify tests' time limits are for the machine's own CPU kernels; .ci/run's second pass on the reference kernels
# (ATEN_CPU_CAPABILITY=default: no SIMD) checks the verdicts, and allows the scalar kernels twice the time.
KERNEL_SLOWDOWN = 2 if os.environ.get("ATEN_CPU_CAPABILITY") == "default" else 1
OPTION = re.compile(r"(?:#|<!--)\s*bertlint-test:\s*(?P<opts>[^\n]*?)\s*(?:-->)?\s*$", re.MULTILINE)


def record_verdicts(findings) -> None:
    """With $BERTLINT_VERDICTS set (a folder), write each probe verdict there: .ci/run runs the verify tests on the
    machine's CPU kernels and on ATEN_CPU_CAPABILITY=default and compares the two folders with .ci/verdicts.py."""
    folder = os.environ.get("BERTLINT_VERDICTS")
    if not folder:
        return
    rows = [[Path(f.path).name, f.line, f.code, f.verification["status"], (f.verification.get("setup") or "").startswith("cached")]
            for f in findings if f.verification is not None]  # fmt: skip
    with open(Path(folder) / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as out:
        out.writelines(json.dumps(row) + "\n" for row in rows)


def options_in(text: str) -> dict[str, str]:
    """`# bertlint-test: transformers-version=4.40 gpu-memory=24` -> settings overrides."""
    out: dict[str, str] = {}
    for match in OPTION.finditer(text):
        for item in match.group("opts").split():
            key, _, value = item.partition("=")
            out[key.replace("-", "_")] = value
    return out


def lint_text(source: str, path: Path | None = None, **overrides) -> list:
    """Findings for `source` as if it were the file at `path` (default: a temp-less virtual path)."""
    source = textwrap.dedent(source)
    opts = {"transformers_version": PINNED_VERSION, **options_in(source), **overrides}
    path = path or ROOT / "tests" / "_snippet.py"
    settings = load_settings(path.parent, all_codes(), isolated=True, overrides=opts, overrides_from="the settings")
    return engine.lint_source(source, path, settings, target=target_version(settings, path, source))


def codes(findings) -> list[str]:
    return [f.code for f in findings]


@pytest.fixture
def pinned_project(tmp_path, monkeypatch):
    """A project folder as the working directory, with nothing installed anywhere: its pins decide the targets."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(target, "_installed_in", lambda paths, library: None)
    return tmp_path


@pytest.fixture
def lint():
    return lint_text


def probe(facts, name: str):
    """The `probe(name=...)` argument of the last `probe(...)` call in `facts`' file: (expression, scope, order)."""
    call = [c for c in facts.calls if facts.text(c.node.func) == "probe" and name in c.kwargs][-1]
    return call.kwargs[name].value, call.scope, call.order
