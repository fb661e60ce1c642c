"""Models whose weights are held in float16 and what trains them: a full fine-tune without fp32 master weights."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from bertlint.facts.loops import training_loops
from bertlint.facts.trainable import freezes_parameters, frozen_models
from bertlint.facts.model import per_file
from bertlint.facts.nodes import Call, dotted
from bertlint.facts.training import trained_trainers, uses_peft
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
    if not casts or uses_peft(facts) or facts.imported(*MASTER_WEIGHT_LIBRARIES) or freezes_parameters(facts) or frozen_models(facts):
        return []
    found = []
    for key, (where, load) in casts.items():
        if key in restored:
            continue
        trainer = next((t for t in _trained_by(facts) if id(t[0]) == key), None)
        if trainer is not None:
            found.append(HalfTraining(where, load, trainer[1]))
    return found


def _half_chain(facts: Facts, expr: cst.BaseExpression | None, at: Call) -> tuple[cst.CSTNode, Call] | None:
    """(the cast, the first call) when a name the value layer cannot type is bound once to a call chain that ends in
    a float16 cast: `model = MyNet(...).to(device).half()`; None otherwise (or when the name is cast back later)."""
    if not isinstance(expr, cst.Name):
        return None
    owner, events = facts.binding_events(expr.value, at.scope, at.order)
    if owner is None or len(events) != 1 or events[0].op != "assign" or not isinstance(events[0].value, cst.Call):
        return None
    call, cast = facts.call_of(events[0].value), None
    while call is not None and call.qualname is None and call.method is not None and isinstance(call.receiver, cst.Call):
        if cast is None and (call.method == "half" or call.method == "to" and any(_dtype(facts, a.value, call) in FLOAT16 for a in call.node.args)):
            cast = call
        call = facts.call_of(call.receiver)
    later = [c for c in facts.calls if dotted(c.receiver) == expr.value and c.method in ("float", "to") and c.order > at.order]
    return (cast.node, call) if cast is not None and call is not None and not later else None


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
    trained = trained_trainers(facts)
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
        if inner is None or inner.method != "parameters" or inner.node.args or "eps" in call.kwargs:
            continue  # an `eps=` of the user's own: chosen for float16 (1e-8 is not representable there)
        model = _model(facts, inner.receiver, inner)
        if model is not None:
            out.append((model, call))
    return out


@per_file
def chained_half_models(facts: Facts) -> list[HalfTraining]:
    """Stepped optimizers over every parameter of a name bound to a chain ending in `.half()` whose class the value
    layer does not know (a model of the project's own modules)."""
    if uses_peft(facts) or facts.imported(*MASTER_WEIGHT_LIBRARIES) or freezes_parameters(facts):
        return []
    found = []
    for loop in training_loops(facts):
        for step in loop.steps:
            o = facts.kind(step.receiver, step.scope, step.order)
            call = o.call if o is not None and o.kind == "optimizer" else None
            params = call.arg(0, "params") if call is not None and "eps" not in call.kwargs else None
            inner = facts.call_of(params.value) if params is not None and isinstance(params.value, cst.Call) else None
            if inner is None or inner.method != "parameters" or inner.node.args or _model(facts, inner.receiver, inner) is not None:
                continue
            chain = _half_chain(facts, inner.receiver, inner)
            if chain is not None and not any(h.trained_by is call for h in found):
                found.append(HalfTraining(chain[0], chain[1], call))
    return found
