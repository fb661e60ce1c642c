"""BL602: `Trainer(tokenizer=...)`, renamed `processing_class=` in 4.46 and removed in 5.0."""

from __future__ import annotations

from typing import Iterator

from bertlint import versions
from bertlint.facts import Call, Facts, fails_before_a_step, forwards_kwargs, is_trainer_class
from bertlint.rules import Context
from bertlint.rules.bl601 import RemovedTrainingArgument, removed_keywords


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


def training_never_starts(ctx: Context) -> bool:
    """The file trains only through transformers trainers that never take a step on the target release: each raises at
    its first step (`fails_before_a_step`), or the target refuses to build it (a keyword removed from `Trainer.__init__`,
    `tokenizer=` on 5.x, or from the `TrainingArguments` it is given as `args`: TypeError before `train()`). No weights
    are trained, no gradient or optimizer state is made. Unknown (False) where the target release cannot be known."""
    facts = ctx.facts
    if fails_before_a_step(facts):
        return True
    if isinstance(ctx.version, versions.Unknown) or not facts.trainers or facts.backward_calls or facts.fit_calls:
        return False
    built = {id(call) for call, _ in TrainerTokenizerArgument().calls(facts)}
    return all(_refused(ctx, call, id(call) in built) for call in facts.trainers)


def _refused(ctx: Context, trainer: Call, transformers_init: bool) -> bool:
    if transformers_init and removed_keywords(trainer, TrainerTokenizerArgument.keywords, ctx.version):
        return True
    args = trainer.arg(1, "args")
    made = ctx.facts.kind(args.value, trainer.scope, trainer.order) if args is not None else None
    return (made is not None and made.kind == "training_args" and made.call is not None
            and bool(removed_keywords(made.call, RemovedTrainingArgument.keywords, ctx.version)))
