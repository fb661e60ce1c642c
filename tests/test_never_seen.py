"""facts.inspection.never_seen: a value whose numbers (sums, averages) end in names nobody reads shows nothing."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from bertlint.facts import Facts, never_seen

EVAL = """
import torch
def evaluate(model, loader):
    total = 0
    for batch in loader:
        with torch.no_grad():
            out = model(**batch)
        loss = out.loss
        {accumulate}
    avg = total / len(loader)
    {end}
"""


def _seen(accumulate: str, end: str) -> bool:
    source = textwrap.dedent(EVAL).format(accumulate=accumulate, end=end)
    facts = Facts(cst.parse_module(source), source)
    [forward] = [c for c in facts.calls if c.method is None and facts.text(c.node.func) == "model"]
    return not never_seen(facts, forward.node)


@pytest.mark.parametrize(("accumulate", "end"), [
    ("total += loss.item()", "return 0"),
    ("total += float(loss)", "pass"),
    ("total += loss.detach().cpu().item() * 2", "return None"),
    ("total -= loss.mean().item()", "ratio = avg * 100"),  # a name nobody reads
])
def test_numbers_that_end_in_names_nobody_reads_are_never_seen(accumulate, end):
    assert not _seen(accumulate, end)


@pytest.mark.parametrize(("accumulate", "end"), [
    ("total += loss.item()", "return avg"),  # returned to its caller
    ("total += loss.item()", "print(avg)"),
    ("total += loss.item()", "print(f'{avg:.3f}')"),
    ("total += loss.item()\n        print(loss)", "pass"),
    ("total += loss.item()", "history.append(avg)"),  # kept
    ("total += loss.item()", "best = min(best, avg)"),  # handed to a call
    ("losses.append(loss.item())", "pass"),
    ("total = loss.item() if loss < 1 else 0", "pass"),  # compared
    ("total += loss.item()", "if avg < 1:\n        save()"),
])
def test_numbers_that_reach_a_use_are_seen(accumulate, end):
    assert _seen(accumulate, end)
