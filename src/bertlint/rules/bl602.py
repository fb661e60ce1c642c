"""BL602: `Trainer(tokenizer=...)`, renamed `processing_class=` in 4.46 and removed in 5.0."""

from __future__ import annotations

from typing import Iterator

from bertlint.facts import Call, Facts, forwards_kwargs, is_trainer_class
from bertlint.rules.bl601 import RemovedTrainingArgument


class TrainerTokenizerArgument(RemovedTrainingArgument):
    code = "BL602"
    name = "trainer-tokenizer-argument"
    exact = "`tokenizer=` is checked against `Trainer.__init__` of the target transformers version"
    severity = "error"
    fails_at_its_line = True
    summary = "`Trainer(tokenizer=...)`: deprecated from 4.46 (use `processing_class=`), a TypeError from 5.0"
    help = "use `processing_class=` instead"
    fix = "safe"
    fix_title = "rename `tokenizer` to `processing_class`"
    keywords = "Trainer"

    def calls(self, facts: Facts) -> Iterator[tuple[Call, str]]:
        """transformers' trainers, and local subclasses whose `__init__` is theirs, or only passes `**kwargs` on to it."""
        for call in facts.trainers:
            owner = _inherited_init(facts, call.qualname)
            if owner is not None:
                yield call, owner


def _inherited_init(facts: Facts, qualname: str | None) -> str | None:
    """The transformers trainer class whose `__init__` a call to `qualname` runs, or None (a local one, or trl's)."""
    for _ in range(10):
        if qualname is None or not qualname.startswith("<local>."):
            break
        cls = facts.classes.get(qualname.split(".", 1)[1])
        if cls is None or ("__init__" in cls.methods and not forwards_kwargs(facts, cls.methods["__init__"], "tokenizer")):
            return None
        qualname = next((b for b in cls.bases if any(is_trainer_class(q) for q in facts.class_bases(b))), None)
    if qualname is None or not qualname.startswith("transformers.") or not is_trainer_class(qualname):
        return None
    return qualname.rsplit(".", 1)[-1]
