"""Where a value of a training step came from: the role of a receiver (model, optimizer, scheduler, loss value), the
statements that name a training control without running it, and the activation a loss's input went through."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from bertlint.facts.model import per_file
from bertlint.facts.nodes import Call, Scope, dotted, walk
from bertlint.facts.values import Values as Facts

MAX_DEPTH = 6

# Context managers whose `__init__` only records the mode: the switch happens in `__enter__`
# (torch/autograd/grad_mode.py: no_grad.__init__ sets `self.prev = False`, enable_grad has no `__init__`,
# inference_mode.__init__ stores `self.mode`). `set_grad_enabled` is left out: its `__init__` switches the mode.
GRAD_CONTEXTS = frozenset({
    "torch.no_grad", "torch.enable_grad", "torch.inference_mode",
    "torch.autograd.no_grad", "torch.autograd.enable_grad", "torch.autograd.inference_mode",
    "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.enable_grad", "torch.autograd.grad_mode.inference_mode",
})  # fmt: skip
# The methods a bare reference names without calling, and the roles whose method it is.
CONTROLS = {"eval": ("model",), "train": ("model",), "zero_grad": ("optimizer", "model"), "step": ("optimizer", "scheduler"), "backward": ("loss",)}
SCHEDULER_FACTORIES = frozenset({
    "get_scheduler", "get_linear_schedule_with_warmup", "get_cosine_schedule_with_warmup", "get_constant_schedule",
    "get_constant_schedule_with_warmup", "get_cosine_with_hard_restarts_schedule_with_warmup", "get_polynomial_decay_schedule_with_warmup",
    "get_inverse_sqrt_schedule", "get_wsd_schedule", "get_cosine_with_min_lr_schedule_with_warmup", "get_reduce_on_plateau_schedule",
})  # fmt: skip
FUNCTIONAL_LOSSES = frozenset({
    "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "kl_div", "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss",
})  # fmt: skip
# Tensor methods that keep what a tensor holds (its scale): a softmax output stays probabilities through them.
KEEPING = frozenset({"to", "cuda", "cpu", "float", "double", "half", "view", "reshape", "squeeze", "unsqueeze", "contiguous", "flatten", "permute", "transpose"})
ACTIVATIONS = {"softmax": "softmax", "sigmoid": "sigmoid", "Softmax": "softmax", "Sigmoid": "sigmoid", "expit": "sigmoid"}


@dataclass(frozen=True)
class Inert:
    """A statement that names a training control and does nothing: `torch.no_grad()` alone, `model.eval` without `()`."""

    node: cst.BaseExpression  # the call or the attribute reference
    what: str  # "torch.no_grad" | "eval" | "step" | ...
    role: str  # "context" for a grad-mode call; else the receiver's role


@per_file
def inert_statements(facts: Facts) -> list[Inert]:
    """Expression statements that create a grad-mode context manager and drop it, or name a model/optimizer/scheduler/loss
    control method without calling it."""
    found = []
    for call in facts.calls:
        if call.qualname in GRAD_CONTEXTS and _alone(facts, call.node):
            found.append(Inert(call.node, call.qualname, "context"))
    for attr, scope, order in facts.attr_loads:
        roles = CONTROLS.get(attr.attr.value)
        if roles is None or not _alone(facts, attr):
            continue
        role = receiver_role(facts, attr.value, scope, order + 1, attr.attr.value)  # recorded at the last event's order, which binds before it
        if role in roles:
            found.append(Inert(attr, attr.attr.value, role))
    return found


def _alone(facts: Facts, node: cst.BaseExpression) -> bool:
    """`node` is a whole expression statement (its value is dropped)."""
    stmt = facts.statement_of(node)
    return isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(s, cst.Expr) and s.value is node for s in stmt.body)


def receiver_role(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None, named: str = "") -> str | None:
    """"model" (a transformers model or the file's own torch module), "optimizer", "scheduler" or "loss" (a loss value),
    when the value layer or the assignments say so; None otherwise."""
    found = facts.kind(expr, scope, order)
    if found is not None and found.kind in ("model", "module", "optimizer"):
        return "optimizer" if found.kind == "optimizer" else "model"
    sources = _sources(facts, expr, scope, order)
    if sources and all(_is_scheduler(facts, e, s) for e, s, _ in sources):
        return "scheduler"
    if is_loss_value(facts, expr, scope, order):
        return "loss"
    return _used_as(facts, expr, scope, named)


def _used_as(facts: Facts, expr: cst.BaseExpression, scope: Scope, named: str) -> str | None:
    """The role a name plays where the value layer cannot follow it (a parameter, an object of the project's own or
    torchvision class), read off the other uses of the same binding: "model" when it is also called (`model(x)`, `model.forward(x)`), "optimizer" when it also runs
    `zero_grad()` when `step` is the method named (or `step()` when it is `zero_grad`): only an optimizer has both;
    "loss" for `backward` named on a value bound in a function that also runs an update (`step()`/`zero_grad()`)."""
    if not isinstance(expr, cst.Name):
        return None
    name = expr.value
    owner = scope.lookup_scope(name)
    if owner is None:
        return None
    here = [c for c in facts.calls if c.scope.lookup_scope(name) is owner]  # wherever the same binding is seen
    if any(isinstance(c.node.func, cst.Name) and c.node.func.value == name or c.method == "forward" and dotted(c.receiver) == name for c in here):
        return "model"
    methods = {c.method for c in here if dotted(c.receiver) == name and not c.node.args}
    if methods & ({"step", "zero_grad"} - {named}):
        return "optimizer"
    if named == "backward" and owner is scope and name in scope.events and any(c.method in ("step", "zero_grad") and c.scope is scope for c in facts.calls):
        return "loss"  # a value computed in a training step (it runs an update) whose `backward` is named: only a tensor has one
    return None


def _sources(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None) -> list[tuple[cst.BaseExpression, Scope, int | None]] | None:
    """What a name (or `self.x`) may hold: the values of its plain assignments, the last unconditional one and those
    after it; the expression itself when it is no name; None when something else binds it (a loop, an unpacking, a parameter)."""
    if isinstance(expr, cst.Attribute) and dotted(expr) is not None and dotted(expr).startswith("self.") and dotted(expr).count(".") == 1:
        values = facts.self_attrs.get(dotted(expr), [])
        return [(v, s, o) for v, s, o in values] or None
    if not isinstance(expr, cst.Name):
        return [(expr, scope, order)]
    owner, events = facts.binding_events(expr.value, scope, order)
    if owner is None or not events or any(e.op != "assign" or e.index is not None or e.value is None for e in events):
        return None
    last = max((i for i, e in enumerate(events) if not e.conditional), default=0)
    return [(e.value, owner, e.order) for e in events[last:]]


def _is_scheduler(facts: Facts, expr: cst.BaseExpression, scope: Scope) -> bool:
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    q = call.qualname if call is not None else None
    if q is None:
        return False
    return q.startswith("torch.optim.lr_scheduler.") or (q.startswith("transformers") and q.rsplit(".", 1)[-1] in SCHEDULER_FACTORIES)


def is_loss_value(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None, depth: int = 0) -> bool:
    """A loss tensor: what a loss module or a functional loss returns, a model output's `.loss` / `["loss"]`, and
    arithmetic on one (`loss / accum`, `loss.mean()`)."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(expr, cst.Attribute) and expr.attr.value == "loss":
        return True
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        index = expr.slice[0].slice.value
        return isinstance(index, cst.SimpleString) and index.evaluated_value == "loss"
    if isinstance(expr, cst.BinaryOperation):
        return any(is_loss_value(facts, side, scope, order, depth + 1) for side in (expr.left, expr.right))
    if isinstance(expr, cst.Call):
        call = facts.call_of(expr)
        if call is None:
            return False
        if call.qualname is not None:
            return call.qualname.startswith("torch.nn.functional.") and call.qualname.rsplit(".", 1)[-1] in FUNCTIONAL_LOSSES
        if call.method in ("mean", "sum", "float") and call.receiver is not None:
            return is_loss_value(facts, call.receiver, scope, order, depth + 1)
        found = facts.kind(expr.func, call.scope, call.order)
        return found is not None and found.kind == "loss"
    sources = _sources(facts, expr, scope, order) if isinstance(expr, cst.Name) else None
    return bool(sources) and all(is_loss_value(facts, e, s, o, depth + 1) for e, s, o in sources)


NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.inference_mode"})


def only_reported(facts: Facts, call: Call) -> bool:
    """A loss computed only to be looked at: under `with torch.no_grad():`/`inference_mode()`, or turned into a number
    on the spot (`criterion(...).item()`): no gradient ever flows from it."""
    if any(facts.qualname(item.item.func if isinstance(item.item, cst.Call) else item.item, call.scope) in NO_GRAD_CONTEXTS
           for w in call.in_with for item in w.items):
        return True
    parent = facts.parent(call.node)
    return isinstance(parent, cst.Attribute) and parent.attr.value in ("item", "tolist")


def activation(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None, depth: int = 0) -> str | None:
    """What `expr` holds when that is known: "softmax" or "sigmoid" (probabilities: the output of that activation, of a
    module or an `nn.Sequential` that ends in it, or of the file's own module whose `forward` returns one), "logits"
    (a transformers model output's `.logits`, or what an `nn.Linear` returns), else None."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(expr, cst.Attribute) and expr.attr.value == "logits":
        base = _sources(facts, expr.value, scope, order)
        return "logits" if base and all(_model_output(facts, e) for e, _, _ in base) else None
    if isinstance(expr, (cst.Name, cst.Attribute)):
        sources = _sources(facts, expr, scope, order)
        if not sources or sources == [(expr, scope, order)]:
            return None
        found = {activation(facts, e, s, o, depth + 1) for e, s, o in sources}
        return found.pop() if len(found) == 1 else None
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is None:
        return None
    q = call.qualname
    if q is not None:
        last = q.rsplit(".", 1)[-1]
        return ACTIVATIONS.get(last) if q.startswith("torch.") and not last[:1].isupper() else None
    module = _module_output(facts, expr.func, call.scope, call.order, depth + 1)
    if module is not None:
        return module
    if call.method in ("softmax", "sigmoid") and call.receiver is not None and dotted(call.receiver) != "self":
        return call.method  # the tensor method: `logits.softmax(-1)`, `model(x).sigmoid()`
    if call.method in KEEPING and call.receiver is not None:
        return activation(facts, call.receiver, call.scope, call.order, depth + 1)
    return None


def _model_output(facts: Facts, expr: cst.BaseExpression) -> bool:
    """The output of a transformers model's forward: `model(**batch)`."""
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is None:
        return False
    found = facts.kind(call.node.func, call.scope, call.order)
    return found is not None and found.kind == "model"


def _module_output(facts: Facts, module: cst.BaseExpression, scope: Scope, order: int | None, depth: int) -> str | None:
    """What calling `module` returns: an `nn.Softmax`/`nn.Sigmoid` (probabilities), an `nn.Linear` (logits), an
    `nn.Sequential` as its last layer, the file's own module as its `forward` returns."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(module, cst.Call):
        call = facts.call_of(module)
        q = call.qualname if call is not None else None
        if q is None or not q.startswith("torch.nn."):
            cls = facts.classes.get(q.split(".", 1)[1]) if q is not None and q.startswith("<local>.") and q.count(".") == 1 else None
            return _forward_output(facts, cls, depth) if cls is not None else None
        last = q.rsplit(".", 1)[-1]
        if last in ("Softmax", "Sigmoid"):
            return ACTIVATIONS[last]
        if last == "Linear":
            return "logits"
        if last == "Sequential" and call.positional and not call.has_star_args:
            return _module_output(facts, call.positional[-1].value, call.scope, call.order, depth + 1)
        return None
    sources = _sources(facts, module, scope, order) if isinstance(module, (cst.Name, cst.Attribute)) else None
    if not sources or sources == [(module, scope, order)]:
        return None
    found = {_module_output(facts, e, s, o, depth + 1) for e, s, o in sources}
    return found.pop() if len(found) == 1 else None


def _forward_output(facts: Facts, cls, depth: int) -> str | None:
    forward = cls.methods.get("forward")
    if forward is None:
        return None
    scope = facts.scope_of(forward.body)
    returns = [n.value for n in walk(forward.body) if isinstance(n, cst.Return)]
    if not returns or any(r is None for r in returns):
        return None
    found = {activation(facts, r, scope, None, depth + 1) for r in returns}
    return found.pop() if len(found) == 1 else None
