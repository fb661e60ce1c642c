"""The rule reference pages (`rules/BLnnn.md`), shipped inside the package as `bertlint/pages/`."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def pages_dir() -> Path:
    """`bertlint/pages` in an installed wheel; the checkout's top-level `rules/` in an editable install."""
    installed = _HERE / "pages"
    return installed if installed.is_dir() else _HERE.parent.parent / "rules"


def page(code: str) -> str | None:
    path = pages_dir() / f"{code}.md"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None
