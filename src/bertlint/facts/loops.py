"""Hand-written training loops and the questions rules ask about a training step (backward, updates, casts, forward calls)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import libcst as cst

from bertlint.facts.brain.wrappers import ITERATION_WRAPPERS
from bertlint.facts.model import per_file
from bertlint.facts.names import same_symbol
from bertlint.facts.nodes import UNKNOWN, Call, Scope, dotted, names_in, walk
from bertlint.facts.values import Values as Facts


# ---------------------------------------------------------------------------------------------
# hand-written training loops


@dataclass(repr=False, eq=False)
class TrainingLoop:
    """The innermost for/while loop around a hand-written weight update or backward pass."""

    node: cst.For | cst.While
    framework: str  # "torch" | "tensorflow"
    backward: list[Call]  # gradient calls in it, nested loops included
    steps: list[Call]  # `optimizer.step()`, `scaler.step(optimizer)`, `optimizer.apply_gradients(...)` in it
    zeroed: bool  # gradients reset in it or an enclosing loop, directly or through a local helper; or never kept in `.grad`
    every_iteration_zero_grads: list[Call]  # `optimizer/model.zero_grad()` that run on every iteration
    gate: cst.If | None  # the `if ... % n ...` every step sits under: accumulation written by hand
    accumulation_expr: cst.BaseExpression | None  # that n as written
    accumulation_steps: Any  # its value, or UNKNOWN
    recreated_accumulators: list[cst.Assign]  # TF: gradient accumulators rebuilt with zeros on every iteration
    accelerate: bool  # backward through an `Accelerator`, or `accelerator.accumulate()`: it takes care of all this
    loss_divided: bool | None  # torch: the loss is divided (or multiplied) on its way to backward; None: cannot tell
    optimizers: list[str | None]  # the class of each optimizer its steps update (qualified name), None where unknown


@per_file
def gradient_calls(facts: Facts) -> list[Call]:
    """Backward passes: `.backward()` (a loss, an accelerator), `torch.autograd.grad/backward`, `tape.gradient(...)`."""
    return [c for c in facts.calls if _is_gradient_call(facts, c)]


@per_file
def training_loops(facts: Facts) -> list[TrainingLoop]:
    """The loops around the file's updates and backward passes; one that never runs (`Values.never_runs`) steps nothing."""
    steps = {id(c) for c in facts.calls if c.loops and _is_update(facts, c) and not facts.never_runs(c)}
    grads = {id(c) for c in gradient_calls(facts) if c.loops and not facts.never_runs(c)}
    index: dict[int, list[Call]] = {}  # id(loop or function) -> the calls inside it
    for call in facts.calls:
        for owner in (*call.loops, call.function):
            index.setdefault(id(owner), []).append(call)
    innermost = {id(c.loops[-1]) for c in facts.calls if id(c) in steps or id(c) in grads}
    return [_training_loop(facts, node, steps, grads, index) for node, _, _ in facts.loops if id(node) in innermost]


@per_file
def steps_every_n(facts: Facts) -> bool:
    """Some loop calls a `.step()` under an `if` that tests `... % n` (`if (i + 1) % accum == 0: optimizer.step()`):
    accumulation written by hand, or a schedule stepped every n iterations."""
    for loop, _, _ in facts.loops:
        for node in walk(loop):
            if isinstance(node, cst.If) and any(isinstance(op, cst.BinaryOperation) and isinstance(op.operator, cst.Modulo) for op in walk(node.test)):
                if any(c.method == "step" for c in facts.calls_in(node.body)):
                    return True
    return False


def _steps_of(facts: Facts, optimizer: Call) -> list[Call]:
    """The update calls (`opt.step()`, `scaler.step(opt)`, ...) that step the optimizer `optimizer` builds."""
    found = []
    for call in facts.calls:
        if call.method in ("step", "apply_gradients", "optimizer_step") and _is_update(facts, call):
            first = call.arg(0, "optimizer")
            for expr in (call.receiver, first.value if first is not None else None):
                made = facts.kind(expr, call.scope, call.order)
                if made is not None and made.kind == "optimizer" and made.call is optimizer:
                    found.append(call)
                    break
    return found


def never_steps(facts: Facts, optimizer: Call) -> bool:
    """The optimizer `optimizer` builds is stepped by hand, and only inside loops that never run (`Values.never_runs`), and no
    Trainer is handed optimizers to step: no update ever happens, whatever its rate."""
    if any("optimizers" in t.kwargs for t in facts.trainers):
        return False
    steps = _steps_of(facts, optimizer)
    return bool(steps) and all(facts.never_runs(c) for c in steps)


def epochs_of(facts: Facts, optimizer: Call) -> int | None:
    """How many passes a hand-written loop makes with the optimizer `optimizer` builds, where the file says: every step of it
    sits in an inner loop (over the batches) inside `for ... in range(N)` loops of known N (`for epoch in range(EPOCHS):`),
    under no `if` (accumulation by hand, `if (i + 1) % k == 0:`, steps less often) in loops without a `break`, and all
    steps agree; the product of those N (a loop that also builds the optimizer, one per fold, not counted). None otherwise (a step in a single loop, or in a function, or an unknown count)."""
    counts = set()
    for step in _steps_of(facts, optimizer):
        if not step.loops or any(isinstance(s, cst.If) for s in _in_loop(facts, step.loops[0], step.stmt)) or any(isinstance(n, cst.Break) for n in walk(step.loops[0])):
            return None
        fresh = {id(loop) for loop in optimizer.loops}  # a loop that builds the optimizer anew (k folds) restarts it: no more epochs
        sizes = [len(value) for loop in step.loops[:-1] if id(loop) not in fresh and isinstance(value := facts.iterated(loop), range)]
        if not sizes:
            return None
        counts.add(math.prod(sizes))
    return counts.pop() if len(counts) == 1 else None


def _training_loop(facts: Facts, node, step_ids: set[int], grad_ids: set[int], index: dict[int, list[Call]]) -> TrainingLoop:
    inside = index.get(id(node), [])
    steps = [c for c in inside if id(c) in step_ids]
    backward = [c for c in inside if id(c) in grad_ids]
    framework = "tensorflow" if any(c.method in ("apply_gradients", "gradient") for c in steps + backward) else "torch"
    gates = [_accumulation_gate(facts, node, c) for c in steps]
    gate, accumulation_expr, accumulation_steps = gates[0] if gates and all(gates) else (None, None, UNKNOWN)
    body = list(walk(node.body))
    # a `continue` may skip what looks unconditional: then nothing counts as run on every iteration
    can_skip = any(isinstance(n, cst.Continue) for n in body)
    zero_grads = [
        c for c in inside
        if c.method == "zero_grad" and c.loops[-1] is node and not can_skip and _every_iteration(facts, node, c.stmt)
        and (_kind_is(facts, c.receiver, c, "optimizer") or _kind_is(facts, c.receiver, c, "model"))
    ]
    recreated = []
    if gate is not None and framework == "tensorflow" and not can_skip:
        used = names_in(gate)
        for assign in (n for n in body if isinstance(n, cst.Assign) and len(n.targets) == 1):
            target = assign.targets[0].target
            if isinstance(target, cst.Name) and target.value in used and _creates_zeros(facts, assign.value) and _every_iteration(facts, node, facts.parent(assign)):
                recreated.append(assign)
    accelerate = any(c.method in ("backward", "accumulate") and _kind_is(facts, c.receiver, c, "accelerator") for c in inside)
    verdicts = {_divided(facts, loss, c.scope, c.order, node) for c in backward if (loss := _backward_loss(facts, c)) is not None}
    zeroed = _zeroed(facts, node, index) or not any(_accumulates(c) for c in backward)
    return TrainingLoop(
        node, framework, backward, steps, zeroed, zero_grads, gate, accumulation_expr, accumulation_steps, recreated, accelerate,
        verdicts.pop() if len(verdicts) == 1 and framework == "torch" else None, [_optimizer_class(facts, c) for c in steps],
    )


def in_context(facts: Facts, call: Call, here: Callable[[Call], bool], _seen: set[int] | None = None) -> bool:
    """`here(call)`, or `here` holds at a call site of the local function `call` sits in (transitively)."""
    if here(call):
        return True
    fn = call.function
    seen = _seen if _seen is not None else set()
    if fn is None or id(fn) in seen:
        return False
    seen.add(id(fn))
    return any(in_context(facts, site, here, seen) for site in _calls_of_function(facts, fn))


def in_training_step(facts: Facts, call: Call) -> bool:
    """Is `call` part of a training step: in a loop that runs a backward pass, beside a backward pass at its own or an
    outer loop level of the same function, or in a local function that such a step calls?"""
    training = {id(loop.node) for loop in training_loops(facts) if loop.backward}

    def here(c: Call) -> bool:
        return any(id(loop) in training for loop in c.loops) or any(g.scope is c.scope and _prefix(g.loops, c.loops) for g in gradient_calls(facts))

    return in_context(facts, call, here)


def _within(loops: tuple, node: cst.CSTNode) -> bool:
    return any(loop is node for loop in loops)


def _prefix(short: tuple, long: tuple) -> bool:
    return len(short) <= len(long) and all(a is b for a, b in zip(short, long))


def _kind_is(facts: Facts, expr: cst.BaseExpression | None, call: Call, kind: str) -> bool:
    found = facts.kind(expr, call.scope, call.order)
    return found is not None and found.kind == kind


def _is_gradient_call(facts: Facts, call: Call) -> bool:
    if call.method == "backward" or call.qualname in ("torch.autograd.grad", "torch.autograd.backward"):
        return True
    return call.method == "gradient" and _kind_is(facts, call.receiver, call, "gradient_tape")


def _accumulates(call: Call) -> bool:
    """Does this gradient call add into the parameters' `.grad`? `torch.autograd.grad` returns the gradients instead,
    `torch.distributed.autograd.backward(context_id, ...)` keeps them per context (the `DistributedOptimizer` steps
    with that context: pytorch/examples distributed/rpc), a tape's `gradient` returns them."""
    if call.qualname is not None and call.qualname.startswith("torch.distributed.autograd"):
        return False
    return call.method == "backward" or call.qualname == "torch.autograd.backward"


def _is_update(facts: Facts, call: Call) -> bool:
    """`optimizer.step()`, `optimizer.apply_gradients(...)`, `scaler.step(optimizer)`, `xm.optimizer_step(optimizer)`."""
    if call.method in ("step", "apply_gradients") and _kind_is(facts, call.receiver, call, "optimizer"):
        return True
    if call.method == "step" or (call.qualname and same_symbol(call.qualname, "torch_xla.core.xla_model.optimizer_step")):
        first = call.arg(0, "optimizer")
        return first is not None and _kind_is(facts, first.value, call, "optimizer")
    return False


def _optimizer_class(facts: Facts, step: Call) -> str | None:
    """The qualified class of the optimizer an update call steps (`AdamW` made in the file), or None."""
    first = step.arg(0, "optimizer")
    for expr in (step.receiver, first.value if first is not None else None):
        found = facts.kind(expr, step.scope, step.order)
        if found is not None and found.kind == "optimizer":
            return found.call.qualname if found.call is not None else None
    return None


def _in_loop(facts: Facts, loop, stmt) -> tuple:
    """The compound statements between `loop` and `stmt`."""
    around = facts.enclosing(stmt)
    index = next((i for i, s in enumerate(around) if s is loop), None)
    return () if index is None else around[index + 1 :]


def _every_iteration(facts: Facts, loop, stmt) -> bool:
    """`stmt` runs on every iteration of `loop`: nothing but `with` blocks between them."""
    return stmt is not None and all(isinstance(s, cst.With) for s in _in_loop(facts, loop, stmt))


def _accumulation_gate(facts: Facts, loop, call: Call) -> tuple[cst.If, cst.BaseExpression, Any] | None:
    """The `if` on `... % n` (directly or through a flag set from it) that a step sits under, with n; None for n == 1."""
    for stmt in _in_loop(facts, loop, call.stmt):
        if not isinstance(stmt, cst.If):
            continue
        sources = [stmt.test]
        for name in (n for n in walk(stmt.test) if isinstance(n, cst.Name)):
            _, events = facts.binding_events(name.value, call.scope, call.order)
            sources += [e.value for e in events[-1:] if e.op == "assign" and e.value is not None]
        modulo = next((n for s in sources for n in walk(s) if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo)), None)
        if modulo is not None:
            steps = facts.value(modulo.right, call.scope, order=call.order)
            return None if steps == 1 else (stmt, modulo.right, steps)
    return None


def _grad_attribute(expr: cst.BaseExpression | None) -> bool:
    """`p.grad` or `p.grad.data`."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        expr = expr.value
    return isinstance(expr, cst.Attribute) and expr.attr.value == "grad"


def _resets_gradients(calls: list[Call], root: cst.CSTNode) -> bool:
    """`zero_grad()` (optimizer, model, accelerated or DeepSpeed wrapper), `p.grad.zero_()`/`.fill_(0)`/`.mul_(0)`,
    `p.grad = None` (or any value: it replaces what backward added) or `del p.grad` under `root`."""
    if any(c.method == "zero_grad" or (c.method in ("zero_", "fill_", "mul_") and _grad_attribute(c.receiver) and (c.method == "zero_" or _zero_arg(c))) for c in calls):
        return True
    return any(
        isinstance(n, cst.Assign) and any(_grad_attribute(t.target) for t in n.targets)
        or isinstance(n, cst.Del) and _grad_attribute(n.target)
        for n in walk(root)
    )


def _zero_arg(call: Call) -> bool:
    arg = call.arg(0, "value")
    return arg is not None and isinstance(arg.value, (cst.Integer, cst.Float)) and arg.value.evaluated_value == 0


def _zeroed(facts: Facts, node, index: dict[int, list[Call]]) -> bool:
    """Gradients are reset in the outermost loop of this function around `node`, or by a local helper called in `node`."""
    outer = epoch_loop(facts, node)
    if _resets_gradients(index.get(id(outer), []), outer):
        return True
    helpers = {id(fn): fn for call in index.get(id(node), []) for fn in _local_functions(facts, call)}
    return any(_resets_gradients(index.get(id(fn), []), fn.body) for fn in helpers.values())


def epoch_loop(facts: Facts, node: cst.CSTNode) -> cst.CSTNode:
    """The outermost for/while loop of the same function around `node` (the epoch loop), or `node` itself."""
    around = facts.enclosing(node)
    last_def = max((i for i, s in enumerate(around) if isinstance(s, (cst.FunctionDef, cst.ClassDef))), default=-1)
    return next((s for s in around[last_def + 1 :] if isinstance(s, (cst.For, cst.While))), node)


def calls_reached(facts: Facts, site: Call, depth: int = 3) -> list[Call]:
    """The calls in the file's own functions (or methods of any receiver, by name, when the call is no library's) that
    `site` may run, `depth` calls deep."""
    func = site.node.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) and site.qualname is None else None
    if name is None or depth == 0:
        return []
    found = []
    for fn, _ in facts.functions.get(name, ()):
        for call in facts.calls:
            if call.function is fn:
                found += [call, *calls_reached(facts, call, depth - 1)]
    return found


# calls whose iteration walks their first argument's items (numbered, or with a progress bar)
LOOP_WRAPPERS = ("builtins.enumerate", *ITERATION_WRAPPERS)


def iterated_loader(facts: Facts, loop: cst.CSTNode) -> Call | None:
    """The `DataLoader(...)` call a `for` loop iterates (through enumerate/tqdm), or None; a module name read in a
    function is taken as it is bound where the function runs (the value layer's), not as a later cell rebinds it."""
    if not isinstance(loop, cst.For):
        return None
    iterable = loop.iter
    scope = facts.scope_of(loop)
    while isinstance(iterable, cst.Call) and iterable.args and facts.qualname(iterable.func, scope) in LOOP_WRAPPERS:
        iterable = iterable.args[0].value
    call = facts.call_of(iterable) if isinstance(iterable, cst.Call) else None
    found = facts.kind(iterable, scope, call.order if call is not None else None)
    return found.call if found is not None and found.kind == "dataloader" and found.call is not None else None


def _local_functions(facts: Facts, call: Call) -> list[cst.FunctionDef]:
    """The file's own functions (or `self.` methods) a call may run, by name."""
    if call.qualname is None and isinstance(call.node.func, cst.Name):
        name = call.node.func.value
    elif call.method is not None and dotted(call.receiver) == "self":
        name = call.method
    else:
        return []
    return [fn for fn, _ in facts.functions.get(name, ())]


def _calls_of_function(facts: Facts, fn: cst.FunctionDef) -> list[Call]:
    return [c for c in facts.calls_by_short.get(fn.name.value, ()) if any(f is fn for f in _local_functions(facts, c))]


def _creates_zeros(facts: Facts, value: cst.BaseExpression) -> bool:
    """`[tf.zeros_like(v) for v in ...]`, `[tf.Variable(tf.zeros_like(v)) ...]`: a fresh accumulator."""
    for node in walk(value):
        call = facts.call_of(node) if isinstance(node, cst.Call) else None
        if call is not None and call.qualname and any(same_symbol(call.qualname, f"tensorflow.{name}") for name in ("zeros_like", "zeros")):
            return True
    return False


def _backward_loss(facts: Facts, call: Call) -> cst.BaseExpression | None:
    """The loss a torch backward call differentiates: `loss.backward()`, `scaler.scale(loss).backward()`, `accelerator.backward(loss)`."""
    if call.method != "backward":
        return None
    if call.qualname is not None or _kind_is(facts, call.receiver, call, "accelerator"):
        return call.positional[0].value if call.positional else None
    loss = call.receiver
    inner = facts.call_of(loss) if isinstance(loss, cst.Call) else None
    if inner is not None and inner.method == "scale" and len(inner.positional) == 1:
        loss = inner.positional[0].value
    return loss


def _divided(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None, loop, depth: int = 0) -> bool | None:
    """Is the loss divided (or multiplied) on its way to backward inside `loop`? None when that cannot be seen."""
    nodes = list(walk(expr))
    calls = [c for n in nodes if isinstance(n, cst.Call) and (c := facts.call_of(n)) is not None]
    if any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Divide, cst.Multiply)) for n in nodes):
        return True
    if any(c.method in ("div", "div_", "mul", "mul_") for c in calls):
        return True
    if any(_local_functions(facts, c) for c in calls):
        return None  # a helper of the file's own may divide inside
    if not isinstance(expr, cst.Name) or depth > 4:
        return False
    owner, events = facts.binding_events(expr.value, scope, order)
    here = [e for e in events if _within(e.loops, loop)]
    if not here or owner is None:
        return None
    if any(e.op in ("augmul", "augother") for e in here):
        return True
    verdicts = {_divided(facts, e.value, owner, e.order, loop, depth + 1) for e in here if e.op == "assign" and e.value is not None}
    return True if True in verdicts else (False if verdicts == {False} else None)


_FLOAT_DTYPES = frozenset({"float", "float16", "float32", "float64", "double", "half", "bfloat16", "FloatTensor", "DoubleTensor", "HalfTensor"})


def float_cast(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None) -> cst.BaseExpression | None:
    """What `expr` casts to a float dtype (`x.float()`, `x.to(torch.float32)`, `torch.tensor(x, dtype=torch.float)`,
    `a.astype(np.float32)`), following one plain assignment of a name; None when it is no such cast."""
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, scope, order)
        assigns = [e for e in events if e.op == "assign"]
        if owner is None or len(assigns) != 1 or assigns[0].index is not None or not isinstance(assigns[0].value, cst.Call):
            return None
        expr = assigns[0].value
    call = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    if call is None:
        return None
    if call.qualname is None and call.method in ("float", "double", "half", "bfloat16") and not call.node.args:
        return call.receiver
    if call.qualname is None and call.method in ("to", "type", "astype"):
        dtypes = [a for a in call.node.args if a.keyword is None or a.keyword.value == "dtype"]
        return call.receiver if any(_float_dtype(facts, a.value, call) for a in dtypes) else None
    if call.qualname in ("torch.tensor", "torch.as_tensor", "numpy.array", "numpy.asarray") and call.positional:
        dtype = call.kwargs.get("dtype")
        return call.positional[0].value if dtype is not None and _float_dtype(facts, dtype.value, call) else None
    if call.qualname in ("torch.FloatTensor", "torch.DoubleTensor") and call.positional:
        return call.positional[0].value
    return None


def _float_dtype(facts: Facts, expr: cst.BaseExpression, call: Call) -> bool:
    qualname = facts.qualname(expr, call.scope)
    if qualname is not None:
        return (qualname.split(".", 1)[0] in ("torch", "numpy") or qualname == "builtins.float") and qualname.rsplit(".", 1)[-1] in _FLOAT_DTYPES
    value = facts.value(expr, call.scope, order=call.order)
    return isinstance(value, str) and value in _FLOAT_DTYPES


def is_model_call(facts: Facts, call: Call) -> bool:
    """A forward pass: `model(...)`, `self.model(...)`, `model.forward(...)`, `model.generate(...)`."""
    target = call.receiver if call.method in ("forward", "generate") else call.node.func
    found = facts.kind(target, call.scope, call.order)
    return found is not None and found.kind == "model"


# torch's grad-mode managers (torch.* and torch.autograd.*), and those of them that turn gradients off
GRAD_MODES = frozenset({"no_grad", "inference_mode", "set_grad_enabled", "enable_grad"})
NO_GRAD_MODES = frozenset({"no_grad", "inference_mode"})


def grad_mode(qualname: str | None, modes: frozenset[str] = GRAD_MODES) -> bool:
    """Does `qualname` name one of torch's grad-mode managers in `modes` (`torch.no_grad`, `torch.autograd.inference_mode`)?"""
    return bool(qualname) and qualname.split(".", 1)[0] == "torch" and qualname.rsplit(".", 1)[-1] in modes


def under_grad_mode(facts: Facts, call: Call, modes: frozenset[str] = GRAD_MODES) -> bool:
    """Does `call` run under one of the grad modes in `modes`: a `with` of it, a function decorated with it, or a local
    function only called from there?"""

    def here(c: Call) -> bool:
        managers = [facts.call_of(item.item) for w in c.in_with for item in w.items if isinstance(item.item, cst.Call)]
        if any(m is not None and grad_mode(m.qualname, modes) for m in managers):
            return True
        fn = c.function
        if fn is None:
            return False
        outer = facts.scope_of(fn.body).parent
        decorators = [d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator for d in fn.decorators]
        return any(grad_mode(facts.qualname(d, outer), modes) for d in decorators)

    return in_context(facts, call, here)


def forward_model(facts: Facts, call: Call) -> int | None:
    """id of the call that made the model a forward pass (`is_model_call`) runs: what `frozen_models` keys by."""
    found = facts.kind(call.receiver if call.method in ("forward", "generate") else call.node.func, call.scope, call.order)
    return id(found.call) if found is not None and found.kind == "model" and found.call is not None else None


# ---------------------------------------------------------------------------------------------
# statement order inside a training step

CLIP_FUNCTIONS = frozenset({"clip_grad_norm_", "clip_grad_value_", "clip_grad_norm"})
# Optimizers that clip the gradient norm inside step() (pytorch_pretrained_bert/optimization.py: BertAdam and
# optimization_openai.py: OpenAIAdam, "if group['max_grad_norm'] > 0: clip_grad_norm_(p, group['max_grad_norm'])",
# default 1.0), and the many copies of them in users' code: their update is clipped whatever the loop does.
SELF_CLIPPING_OPTIMIZERS = frozenset({"BertAdam", "OpenAIAdam"})


@dataclass(frozen=True, repr=False)
class MisplacedClip:
    """A gradient clip that runs where it cannot clip the gradients the next update uses."""

    call: Call
    where: str  # "before_backward": before the backward that adds this step's gradients after it;
    # "after_step": after the last update, on gradients that update already used
    block: cst.CSTNode  # the loop (or, in a step function without one, the function) whose body is one training step
    backward: list[Call]
    steps: list[Call]
    zero_grads: list[Call]


def is_clip(facts: Facts, call: Call) -> bool:
    """`torch.nn.utils.clip_grad_norm_(...)` (and `_value_`, the deprecated `clip_grad_norm`), `accelerator.clip_grad_norm_(...)`."""
    if call.qualname is not None:
        return call.qualname.startswith("torch.nn.utils") and call.qualname.rsplit(".", 1)[-1] in CLIP_FUNCTIONS
    return call.method in CLIP_FUNCTIONS and _kind_is(facts, call.receiver, call, "accelerator")


def _clips_itself(facts: Facts, step: Call) -> bool:
    """The optimizer a `step()` runs was built with `max_grad_norm=` or is a BertAdam/OpenAIAdam (they clip in step())."""
    expr = step.receiver
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, step.scope, step.order)
        values = [e.value for e in events if e.op == "assign"]
        expr = values[-1] if owner is not None and values else expr
    made = facts.call_of(expr) if isinstance(expr, cst.Call) else None
    name = (dotted(made.node.func) or "").rsplit(".", 1)[-1] if made is not None else ""
    return made is not None and (name in SELF_CLIPPING_OPTIMIZERS or "max_grad_norm" in made.kwargs)


def _block(call: Call) -> cst.CSTNode | None:
    return call.loops[-1] if call.loops else call.function


@per_file
def misplaced_clips(facts: Facts) -> list[MisplacedClip]:
    """Clips in a training step — the body of the innermost loop around them, or of a step function without a loop — that
    come before the step's first backward pass while an update follows that backward (clip → backward → step), or after
    its last backward and last update (backward → step → clip). The backward passes must add into `.grad` and run on
    every pass through the step; an update is an optimizer's `step()` (the value layer's optimizer, or any receiver that
    also runs `zero_grad()` in the step: only an optimizer has both)."""
    found = []
    for clip in (c for c in facts.calls if is_clip(facts, c)):
        block = _block(clip)
        if block is None:
            continue
        own = [c for c in facts.calls if _block(c) is block and c.function is clip.function]
        backward = [c for c in own if _is_gradient_call(facts, c)]
        zeroing = {facts.text(c.receiver) for c in own if c.method == "zero_grad" and c.receiver is not None and not c.node.args}
        steps = [c for c in own if _is_update(facts, c) or c.method == "step" and not c.node.args and c.receiver is not None and facts.text(c.receiver) in zeroing]
        if not backward or not steps or not all(_accumulates(c) and _every_iteration(facts, block, c.stmt) for c in backward):
            continue
        if any(_clips_itself(facts, s) for s in steps):
            continue
        first, last = min(c.order for c in backward), max(c.order for c in backward)
        zero_grads = [c for c in own if c.method == "zero_grad"]
        if clip.order < first and any(s.order > last for s in steps) and not any(clip.order < s.order < first for s in steps):
            found.append(MisplacedClip(clip, "before_backward", block, backward, steps, zero_grads))
        elif clip.order > last and all(s.order < clip.order and _every_iteration(facts, block, s.stmt) for s in steps):
            found.append(MisplacedClip(clip, "after_step", block, backward, steps, zero_grads))
    return found
