"""Models whose weights are held in float16 and what trains them: a full fine-tune without fp32 master weights."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from bertlint.facts.loops import frozen_models, training_loops
from bertlint.facts.model import per_file
from bertlint.facts.nodes import Call, dotted, walk
from bertlint.facts.training import uses_peft
from bertlint.facts.values import Values as Facts

FLOAT16 = frozenset({"float16", "half", "fp16"})
FLOAT32 = frozenset({"float32", "float"})
QUANTIZATION_KEYWORDS = ("load_in_8bit", "load_in_4bit", "quantization_config")
# Libraries that keep fp32 master copies of half weights (apex amp O2, DeepSpeed's fp16 optimizer) or train adapters.
MASTER_WEIGHT_LIBRARIES = ("apex", "deepspeed", "peft")


@dataclass(frozen=True)
class HalfTraining:
    """A model cast to float16 (`where`: the dtype argument of its load, or the `.half()`/`.to(torch.float16)` call) and
    what updates every one of its parameters in that dtype."""

    where: cst.CSTNode
    load: Call  # the call that made the model
    trained_by: Call  # the `Trainer(...)` it is handed to, or the optimizer built over its `.parameters()`


@per_file
def half_trained_models(facts: Facts) -> list[HalfTraining]:
    """Models loaded or cast to float16 whose parameters are all trained: handed to a transformers Trainer that is
    trained (no `peft_config=`), or all of them given to an optimizer a training loop steps. Nothing when the file
    uses PEFT, apex or DeepSpeed, freezes any parameter, casts the model back to fp32, or loads it quantized."""
    casts: dict[int, tuple[cst.CSTNode, Call]] = {}
    restored: set[int] = set()
    for load in facts.model_loads:
        arg = load.call.kwargs.get("torch_dtype") or load.call.kwargs.get("dtype")
        if arg is not None and not any(k in load.call.kwargs for k in QUANTIZATION_KEYWORDS) and _dtype(facts, arg.value, load.call) in FLOAT16:
            casts.setdefault(id(load.call), (arg, load.call))
    for call in facts.calls:
        if call.method not in ("half", "float", "to") or call.receiver is None:
            continue
        model = _model(facts, call.receiver, call)
        if model is None:
            continue
        wanted = {call.method} if call.method != "to" else {_dtype(facts, a.value, call) for a in call.node.args if a.keyword is None or a.keyword.value == "dtype"}
        if wanted & FLOAT16:
            casts.setdefault(id(model), (call.node, model))
        if wanted & FLOAT32:
            restored.add(id(model))
    if not casts or uses_peft(facts) or facts.imported(*MASTER_WEIGHT_LIBRARIES) or _freezes_something(facts) or frozen_models(facts):
        return []
    found = []
    for key, (where, load) in casts.items():
        if key in restored:
            continue
        trainer = next((t for t in _trained_by(facts) if id(t[0]) == key), None)
        if trainer is not None:
            found.append(HalfTraining(where, load, trainer[1]))
    return found


def _dtype(facts: Facts, expr: cst.BaseExpression, call: Call) -> str | None:
    """"float16", "bfloat16", "float32", ... for `torch.float16`, `"float16"`, a constant naming one; else None."""
    q = facts.qualname(expr, call.scope)
    if q is not None:
        return q.rsplit(".", 1)[-1] if q.startswith("torch.") else None
    value = facts.value(expr, call.scope, order=call.order, cli=False)
    return value if isinstance(value, str) else None


def _model(facts: Facts, expr: cst.BaseExpression | None, call: Call) -> Call | None:
    found = facts.kind(expr, call.scope, call.order)
    return found.call if found is not None and found.kind in ("model", "module") and found.call is not None else None


@per_file
def _trained_by(facts: Facts) -> list[tuple[Call, Call]]:
    """(the model's load, what trains all of it): trained Trainers without an adapter, stepped optimizers over `model.parameters()`."""
    out = []
    trained = {id(t.call) for c in facts.calls if c.method == "train" and (t := facts.kind(c.receiver, c.scope, c.order)) is not None and t.kind == "trainer" and t.call is not None}
    for trainer in facts.trainers:
        arg = trainer.arg(0, "model")
        model = _model(facts, arg.value, trainer) if arg is not None else None
        if model is not None and id(trainer) in trained and "peft_config" not in trainer.kwargs and not trainer.has_double_star:
            out.append((model, trainer))
    stepped = {id(o.call) for loop in training_loops(facts) for s in loop.steps for e in (s.receiver, *(a.value for a in s.positional[:1]))
               if (o := facts.kind(e, s.scope, s.order)) is not None and o.kind == "optimizer" and o.call is not None}  # fmt: skip
    for call in facts.calls:
        if id(call) not in stepped:
            continue
        params = call.arg(0, "params")
        inner = facts.call_of(params.value) if params is not None and isinstance(params.value, cst.Call) else None
        model = _model(facts, inner.receiver, inner) if inner is not None and inner.method == "parameters" and not inner.node.args else None
        if model is not None:
            out.append((model, call))
    return out


def _freezes_something(facts: Facts) -> bool:
    """`x.requires_grad = False` or `x.requires_grad_(False)` anywhere: a part of some model is frozen (a trained head
    over a frozen half base trains in the head's own dtype)."""
    for node in walk(facts.module):
        if isinstance(node, cst.Assign) and dotted(node.value) == "False" and any(
            isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" for t in node.targets
        ):
            return True
    return any(c.method == "requires_grad_" and facts.arg_value(c, 0, "requires_grad", default=True) is False for c in facts.calls)
