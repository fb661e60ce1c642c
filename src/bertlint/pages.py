"""The rule reference pages (`rules/BLnnn.md`), shipped inside the package as `bertlint/pages/`,
each shown with the rule's measured precision (`data/precision.json`) and, for a preview rule, why."""

from __future__ import annotations

from pathlib import Path

from bertlint import rules

_HERE = Path(__file__).resolve().parent


def pages_dir() -> Path:
    """`bertlint/pages` in an installed wheel; the checkout's top-level `rules/` in an editable install."""
    installed = _HERE / "pages"
    return installed if installed.is_dir() else _HERE.parent.parent / "rules"


def page(code: str) -> str | None:
    path = pages_dir() / f"{code}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    return f"{text.rstrip()}\n\n{precision_section(code)}"


def precision_section(code: str) -> str:
    """The page's `## Precision` section: the measured figures, the corpus, default or preview and why."""
    data = rules.precision_data()
    corpus, figures = data["corpus"], rules.measured(code)
    on = f"{corpus['files']} public training scripts and notebooks (corpus {corpus['recipe']}, {data['date']})"
    if figures["judged"]:
        parts = ", ".join(f"{name} {part['right']}/{part['judged']}" for name, part in figures.get("corpora", {}).items() if part["judged"])
        measured_text = (f"Measured precision: {figures['precision']:.2f} ({figures['right']} of {figures['judged']} findings judged right by hand) on {on}"
                         + (f"; per corpus: {parts}." if parts else "."))
    else:
        measured_text = f"Measured precision: none yet (no finding on {on})."
    reason = rules.preview_reason(code)
    if reason is None:
        why = f"exact by construction: {figures['exact']}" if figures["exact"] else (
            f"at least {rules.MIN_PRECISION} over at least {rules.MIN_JUDGED} judged findings, no corpus of "
            f"{rules.CORPUS_MIN_JUDGED} or more below {rules.CORPUS_MIN_PRECISION}")
        status = f"On by default ({why})."
    else:
        status = (f"**Preview rule**: off unless preview is on (`--preview`, or `preview = true` in the config), "
                  f"because {reason}.")
    return f"## Precision\n\n{measured_text}\n\n{status}\n\nHow it is measured: `benchmarks/precision/` in the repository.\n"
