"""Facts: what the rules query about one file — the semantic model, the value layer on it, and the training loops."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bertlint.facts.nodes import Call
from bertlint.facts.values import Values

if TYPE_CHECKING:
    from bertlint.facts.loops import TrainingLoop


class Facts(Values):
    """Everything the rules ask about one file: names and bindings (`model.Model`), what expressions hold
    (`values.Values`), and the hand-written training loops (`loops`)."""

    @property
    def gradient_calls(self) -> list[Call]:
        from bertlint.facts import loops  # imported by the first rule that asks: most default runs never do

        return loops.gradient_calls(self)

    @property
    def training_loops(self) -> list[TrainingLoop]:
        from bertlint.facts import loops

        return loops.training_loops(self)
