"""Every rule has a reference page in `rules/` whose header agrees with the code, and whose examples behave."""

from __future__ import annotations

import re

import pytest

from bertlint.rules import all_codes, describe
from conftest import ROOT, codes, lint_text

PAGES = ROOT / "rules"
CODE_BLOCK = re.compile(r"^## (?P<section>[^\n]+)\n(?:(?!^## ).)*?```python\n(?P<code>.*?)```", re.MULTILINE | re.DOTALL)


def _examples(text: str) -> dict[str, str]:
    return {m.group("section").strip(): m.group("code") for m in CODE_BLOCK.finditer(text)}


@pytest.mark.parametrize("code", all_codes())
def test_page_header_matches_rule(code: str) -> None:
    text = (PAGES / f"{code}.md").read_text(encoding="utf-8")
    name, severity, _, fix = describe(code)
    assert text.splitlines()[0] == f"# {code} {name}"
    assert f"Severity: {severity}" in text
    assert f"Fix: {fix or 'none'}" in text
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert heading in text, heading


@pytest.mark.parametrize("code", all_codes())
def test_page_examples(code: str) -> None:
    text = (PAGES / f"{code}.md").read_text(encoding="utf-8")
    examples = _examples(text)
    bad, good = examples["Example"], examples["Use instead"]
    opts = {k: v for k, v in __import__("conftest").options_in(text).items()}
    assert sorted(set(codes(lint_text(bad, **opts)))) == [code]
    assert codes(lint_text(good, **opts)) == []


def test_every_page_is_a_rule() -> None:
    assert sorted(p.stem for p in PAGES.glob("BL*.md")) == all_codes()
