"""Facts: what the rules query about one file — the semantic model, the value layer on it, and the training loops."""

from __future__ import annotations

from bertlint.facts import loops
from bertlint.facts.nodes import Call
from bertlint.facts.values import Values


class Facts(Values):
    """Everything the rules ask about one file: names and bindings (`model.Model`), what expressions hold
    (`values.Values`), and the hand-written training loops (`loops`)."""

    @property
    def gradient_calls(self) -> list[Call]:
        return loops.gradient_calls(self)

    @property
    def training_loops(self) -> list[loops.TrainingLoop]:
        return loops.training_loops(self)
