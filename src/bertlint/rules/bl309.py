"""BL309: the data a run is evaluated on is its training data: the metrics measure memorisation."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from bertlint.facts import Call, Facts, data_path, same_arrays, same_data
from bertlint.rules import Context, Rule


class EvaluatedOnTrainingData(Rule):
    code = "BL309"
    name = "evaluated-on-training-data"
    severity = "warning"
    summary = "The evaluation data is the training data (`eval_dataset=` the train split, `validation_data=` the fit arrays)"
    help = 'evaluate on a held-out split (`eval_dataset=ds["validation"]`, `ds.train_test_split(test_size=0.1)`, `validation_split=0.1`)'
    needs = ("transformers", "tensorflow", "keras", "tf_keras")

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for node, data in _evaluations_on_training_data(facts):
            ctx.report(
                node,
                f"the evaluation data is the training data (`{data}`): the metrics measure how well the model memorised "
                "its training examples, not how it does on unseen ones, so they look better than they are and cannot "
                "catch overfitting",
            )


def _evaluations_on_training_data(facts: Facts) -> Iterator[tuple[cst.CSTNode, str]]:
    """(where, what) for each evaluation given the training data itself."""
    for trainer in facts.trainers:
        train, evaluated = trainer.kwargs.get("train_dataset"), trainer.kwargs.get("eval_dataset")
        if train is not None and evaluated is not None and same_data(train.value, evaluated.value) and not _other_evaluation(facts, [train.value]):
            yield evaluated, facts.text(train.value)
    for fit in facts.fit_calls:
        x, y = fit.arg(0, "x"), fit.arg(1, "y")
        if x is None:
            continue
        trained = [x.value] + ([y.value] if y is not None else [])
        validation = fit.kwargs.get("validation_data")
        if validation is not None and same_arrays(trained, validation.value):
            yield validation, facts.text(x.value)
        for evaluate in facts.calls:
            if evaluate.method != "evaluate" or evaluate.receiver is None or fit.receiver is None or not same_data(evaluate.receiver, fit.receiver):
                continue  # another model's evaluation
            first = evaluate.arg(0, "x")
            if first is not None and same_data(first.value, x.value) and not _other_evaluation(facts, trained):
                yield first, facts.text(x.value)


def _other_evaluation(facts: Facts, trained: list[cst.BaseExpression]) -> bool:
    """Some evaluation in the file reads other data: the training-data score is then a deliberate "train accuracy"."""
    keys = {data_path(t) for t in trained}
    for call in facts.calls:
        data = _evaluated_data(call)
        if data is not None and (data_path(data) is None or data_path(data) not in keys):
            return True
    return False


def _evaluated_data(call: Call) -> cst.BaseExpression | None:
    if call.method == "evaluate":
        arg = call.arg(0, "eval_dataset") or call.kwargs.get("x")
        return arg.value if arg is not None else None
    if call.method == "predict":
        arg = call.arg(0, "test_dataset") or call.kwargs.get("x")
        return arg.value if arg is not None else None
    return None
