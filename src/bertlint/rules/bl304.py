"""BL304: float16 autocast in a training loop with no GradScaler: small gradients underflow to zero."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts, in_training_step
from bertlint.rules import Context, Rule

# qualified autocast -> (device it implies or None, positional index of `dtype`, of `enabled`)
_AUTOCASTS = {
    "torch.autocast": (None, 1, 2),
    "torch.amp.autocast": (None, 1, 2),
    "torch.amp.autocast_mode.autocast": (None, 1, 2),
    "torch.cuda.amp.autocast": ("cuda", 1, 0),
    "torch.cuda.amp.autocast_mode.autocast": ("cuda", 1, 0),
    "torch.cpu.amp.autocast": ("cpu", 1, 0),
    "torch.cpu.amp.autocast_mode.autocast": ("cpu", 1, 0),
}
_DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}  # torch's autocast defaults per device


class Fp16AutocastWithoutGradScaler(Rule):
    code = "BL304"
    name = "fp16-autocast-without-grad-scaler"
    severity = "warning"
    summary = "float16 autocast in a training loop without a `GradScaler`"
    help = 'scale the loss with `scaler = torch.amp.GradScaler("cuda")` (`scaler.scale(loss).backward()`, `scaler.step(optimizer)`, `scaler.update()`), or autocast to `torch.bfloat16`'
    needs = ("torch",)

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if _has_scaler(facts) or facts.calls_to("accelerate.Accelerator") or _scaled_backward(facts):
            return  # a scaler is built, or the backward goes through one (or through a framework that scales in fp16)
        loops = [loop.node for loop in facts.training_loops if loop.backward and loop.framework == "torch"]
        for call in facts.calls:
            if not _fp16_autocast(facts, call):
                continue
            around_a_loop = any(any(s is call.stmt for s in facts.enclosing(loop)) for loop in loops)
            if around_a_loop or in_training_step(facts, call):
                ctx.report(
                    call.node,
                    "float16 autocast in a training loop without a `GradScaler`: gradients below ~6e-8 underflow to zero in float16, "
                    "so parts of the model silently stop learning (or the loss turns NaN)",
                )


def _has_scaler(facts: Facts) -> bool:
    return any(c.qualname and c.qualname.startswith("torch.") and c.short in ("GradScaler", "ShardedGradScaler") for c in facts.calls)


def _scaled_backward(facts: Facts) -> bool:
    """A backward that scales the loss, whatever built the scaler: `self.scaler.scale(loss).backward()` (a Trainer's, or
    one made in another module), apex's `amp.scale_loss(...)`, or a framework's backward that takes the loss and scales
    it in fp16 itself: `accelerator.backward(loss)`, Lightning's `self.manual_backward(loss)`/`fabric.backward(loss)`,
    a DeepSpeed engine's `engine.backward(loss)`."""
    for call in facts.calls:
        if call.method == "scale_loss" or (call.qualname or "").endswith("amp.scale_loss"):
            return True
        if call.method not in ("backward", "manual_backward") or call.qualname is not None:
            continue
        inner = facts.call_of(call.receiver) if isinstance(call.receiver, cst.Call) else None
        if inner is not None and inner.method == "scale" or call.method == "manual_backward" or call.positional:
            return True
    return False


def _fp16_autocast(facts: Facts, call: Call) -> bool:
    spec = _AUTOCASTS.get(call.qualname or "")
    if spec is None:
        return False
    device, dtype_index, enabled_index = spec
    if facts.arg_value(call, enabled_index, "enabled", default=True) is not True:
        return False
    dtype_arg = call.arg(dtype_index, "dtype")
    if dtype_arg is None:
        if device is None:
            device = facts.arg_value(call, 0, "device_type")
        return isinstance(device, str) and _DEFAULT_DTYPE.get(device.split(":")[0]) == "float16"
    return _dtype_name(facts, dtype_arg.value, call) in ("float16", "half")


def _dtype_name(facts: Facts, expr: cst.BaseExpression, call: Call, depth: int = 0) -> str | None:
    """`torch.float16` -> "float16", also through a name bound once to it (`AMP_DTYPE = torch.float16`)."""
    qualname = facts.qualname(expr, call.scope)
    if qualname is not None:
        return qualname.rsplit(".", 1)[-1] if qualname.startswith("torch.") else None
    if isinstance(expr, cst.Name) and depth < 3 and (bound := facts.definition(expr, call.scope, call.order)) is not None:
        return _dtype_name(facts, bound.value, call, depth + 1)
    return None
