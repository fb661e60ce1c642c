"""Every `fixtures/**/*.py` is a test: its findings must equal `<name>.expected` exactly.

`<name>.expected` lists `LINE:COL CODE` per finding (empty for a near-miss that must stay silent).
Run with BERTLINT_REGEN=1 to rewrite the expected files after an intended change (never in CI).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import ROOT, lint_text

FIXTURES = sorted(p for p in (ROOT / "fixtures").rglob("*.py") if "verify" not in p.relative_to(ROOT / "fixtures").parts)


def _expected_path(path: Path) -> Path:
    return path.with_suffix(".expected")


def _render(findings) -> str:
    return "".join(f"{f.line}:{f.column} {f.code}\n" for f in findings)


@pytest.mark.parametrize("path", FIXTURES, ids=[str(p.relative_to(ROOT / "fixtures")) for p in FIXTURES])
def test_fixture(path: Path) -> None:
    findings = lint_text(path.read_text(encoding="utf-8"), path)
    expected = _expected_path(path)
    if os.environ.get("BERTLINT_REGEN") == "1":
        expected.write_text(_render(findings), encoding="utf-8")
    assert expected.exists(), f"{expected.name} is missing: write it (or run once with BERTLINT_REGEN=1 and review it)"
    assert _render(findings) == expected.read_text(encoding="utf-8")


def test_fixture_coverage() -> None:
    """Every rule has at least 3 fixtures where it fires and 3 near-misses named for it where it must not."""
    from bertlint.rules import all_rules

    fired: dict[str, set[str]] = {}
    for path in FIXTURES:
        for line in _expected_path(path).read_text().splitlines():
            fired.setdefault(line.split()[1], set()).add(path.name)
    missing = []
    for code in all_rules():
        positives = fired.get(code, set())
        near_misses = [p for p in FIXTURES if p.name.startswith(f"{code.lower()}_ok")]
        silent = [p for p in near_misses if code not in _expected_path(p).read_text()]
        if len(positives) < 3 or len(silent) < 3:
            missing.append(f"{code}: {len(positives)} firing fixtures, {len(silent)} near-misses")
    assert not missing, "\n".join(missing)
