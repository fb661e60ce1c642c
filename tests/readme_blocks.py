"""The code blocks of README.md, so that tests run what the README prints."""

from __future__ import annotations

import re

from conftest import ROOT

FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


def readme_block(after: str, lang: str) -> str:
    """The first `lang` code block of README.md after the first occurrence of the text `after`."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(after)
    for match in FENCE.finditer(text, start):
        if match.group("lang") == lang:
            return match.group("body")
    raise LookupError(f"no {lang} block after {after!r} in README.md")


def readme_blocks(lang: str) -> list[str]:
    """Every `lang` code block of README.md, in order."""
    return [m.group("body") for m in FENCE.finditer((ROOT / "README.md").read_text(encoding="utf-8")) if m.group("lang") == lang]
