"""BL309: the data a run is evaluated on is its training data: the metrics measure memorisation."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from bertlint.facts import Call, Facts, dotted, literal
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
        for node, data in _same_data(facts):
            ctx.report(
                node,
                f"the evaluation data is the training data (`{data}`): the metrics measure how well the model memorised "
                "its training examples, not how it does on unseen ones, so they look better than they are and cannot "
                "catch overfitting",
            )


def _same_data(facts: Facts) -> Iterator[tuple[cst.CSTNode, str]]:
    """(where, what) for each evaluation given the training data itself."""
    for trainer in facts.trainers:
        train, evaluated = trainer.kwargs.get("train_dataset"), trainer.kwargs.get("eval_dataset")
        if train is not None and evaluated is not None and _same(facts, train.value, evaluated.value) and not _other_evaluation(facts, [train.value]):
            yield evaluated, facts.text(train.value)
    for fit in facts.fit_calls:
        x, y = fit.arg(0, "x"), fit.arg(1, "y")
        if x is None:
            continue
        trained = [x.value] + ([y.value] if y is not None else [])
        validation = fit.kwargs.get("validation_data")
        if validation is not None and _same_arrays(facts, trained, validation.value):
            yield validation, facts.text(x.value)
        for evaluate in facts.calls:
            if evaluate.method != "evaluate" or evaluate.receiver is None or fit.receiver is None or not _same(facts, evaluate.receiver, fit.receiver):
                continue  # another model's evaluation
            first = evaluate.arg(0, "x")
            if first is not None and _same(facts, first.value, x.value) and not _other_evaluation(facts, trained):
                yield first, facts.text(x.value)


def _same(facts: Facts, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """The same plain data expression (names, attributes, constant subscripts: no call that could make it differ)."""
    key = _key(a)
    return key is not None and key == _key(b)


def _key(expr: cst.BaseExpression) -> str | None:
    """`ds["train"]` -> "ds['train']", `self.x` -> "self.x"; None for anything else."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        index = expr.slice[0].slice.value
        base = _key(expr.value)
        constant = literal(index) if isinstance(index, cst.SimpleString) else index.evaluated_value if isinstance(index, cst.Integer) else None
        return f"{base}[{constant!r}]" if base is not None and constant is not None else None
    return dotted(expr)


def _same_arrays(facts: Facts, trained: list[cst.BaseExpression], validation: cst.BaseExpression) -> bool:
    """`validation_data=(x_train, y_train)` for `fit(x_train, y_train)`, or the same dataset object."""
    if isinstance(validation, cst.Tuple):
        parts = [e.value for e in validation.elements]
        return len(parts) >= len(trained) and all(_same(facts, p, t) for p, t in zip(parts, trained))
    return len(trained) == 1 and _same(facts, validation, trained[0])


def _other_evaluation(facts: Facts, trained: list[cst.BaseExpression]) -> bool:
    """Some evaluation in the file reads other data: the training-data score is then a deliberate "train accuracy"."""
    keys = {_key(t) for t in trained}
    for call in facts.calls:
        data = _evaluated_data(call)
        if data is not None and (_key(data) is None or _key(data) not in keys):
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
