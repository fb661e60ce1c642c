"""BL402: periodic evaluation is configured, but the Trainer has nothing to evaluate on."""

from __future__ import annotations

from typing import Any

from bertlint.facts import TRAINER_POSITION, UNKNOWN, Call, Facts
from bertlint.rules import Context, Rule

STRATEGY_KEYWORDS = ("eval_strategy", "evaluation_strategy")


class EvalStrategyWithoutEvalDataset(Rule):
    code = "BL402"
    name = "eval-strategy-without-eval-dataset"
    severity = "error"
    fails_at_its_line = True
    summary = "`eval_strategy` is set but the `Trainer` gets no `eval_dataset`"
    help = 'pass `eval_dataset=` to the Trainer, or set `eval_strategy="no"`'

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for trainer in facts.trainers:
            if trainer.has_star_args or trainer.has_double_star:
                continue
            eval_dataset = trainer.arg(TRAINER_POSITION["eval_dataset"], "eval_dataset")
            if eval_dataset is not None and facts.value(eval_dataset.value, trainer.scope, order=trainer.order) is not None:
                continue
            args = trainer.arg(1, "args")
            bound = facts.kind(args.value, trainer.scope, trainer.order) if args is not None else None
            if bound is None or bound.kind != "training_args" or bound.call is None:
                continue
            keyword, strategy = eval_strategy(facts, bound.call)
            if strategy is UNKNOWN or strategy in (None, "no"):
                continue
            if ctx.version < (4, 46) and _set_later(facts, trainer):
                continue
            ctx.report(trainer.node, _message(ctx, keyword, strategy))


def eval_strategy(facts: Facts, call: Call) -> tuple[str, Any]:
    """(keyword, "steps"/"epoch"/"no") as written (a string or `IntervalStrategy.X`); None when not set, UNKNOWN when opaque."""
    keyword = next((k for k in STRATEGY_KEYWORDS if k in call.kwargs), STRATEGY_KEYWORDS[0])
    if call.has_double_star:
        return keyword, UNKNOWN
    arg = call.kwargs.get(keyword)
    if arg is None:
        return keyword, None
    qualname = facts.qualname(arg.value, call.scope)
    if qualname is not None and qualname.startswith("transformers.") and qualname.rsplit(".", 2)[-2] == "IntervalStrategy":
        return keyword, qualname.rsplit(".", 1)[-1].lower()
    value = facts.value(arg.value, call.scope, order=call.order)
    return keyword, value if isinstance(value, str) else UNKNOWN


def _set_later(facts: Facts, trainer: Call) -> bool:
    """`trainer.eval_dataset = ...` after construction: enough before 4.46, which checks only at the first evaluation."""
    return any(store.key == "eval_dataset" and store.order > trainer.order for store in facts.stores)


def _message(ctx: Context, keyword: str, strategy: str) -> str:
    shown = f'{keyword}="{strategy}"'
    if ctx.version >= (4, 46):
        return (
            f"`{shown}` but the Trainer gets no `eval_dataset`: transformers {ctx.version_text()} fails at `Trainer(...)` with "
            f"`ValueError: You have set `args.eval_strategy` to IntervalStrategy.{strategy.upper()} but you didn't pass an `eval_dataset` to `Trainer`. "
            "Either set `args.eval_strategy` to `no` or pass an `eval_dataset`.`"
        )
    when = "after a full epoch of training" if strategy == "epoch" else "after the first `eval_steps` of training"
    return (
        f"`{shown}` but the Trainer gets no `eval_dataset`: transformers {ctx.version_text()} trains, then fails at the first evaluation "
        f"{when} with `ValueError: Trainer: evaluation requires an eval_dataset.`"
    )
