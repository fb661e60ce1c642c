"""BL503: a forward pass outside training that still records the autograd graph."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts, Scope, forward_model, frozen_models, grad_mode, in_class_or_lambda, in_training_step, is_model_call, only_shape_read, under_grad_mode
from bertlint.rules import Context, Replacement, Rule


class InferenceWithoutNoGrad(Rule):
    code = "BL503"
    name = "inference-without-no-grad"
    severity = "info"
    summary = "A forward pass outside any training step, without `torch.no_grad()`/`torch.inference_mode()`"
    help = "run inference under `with torch.inference_mode():` (or `torch.no_grad()`)"
    fix = "unsafe"
    fix_title = "wrap the statement in `with torch.inference_mode():`"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if any(c.short == "set_grad_enabled" and grad_mode(c.qualname) and isinstance(c.stmt, cst.SimpleStatementLine) for c in facts.calls):
            return  # `torch.set_grad_enabled(False)` as a statement: the script manages grad mode itself
        reported: set[int] = set()
        frozen: frozenset[int] | None = None
        for call in facts.calls:
            if id(call.stmt) in reported or not _is_forward(facts, call) or in_class_or_lambda(call.scope):  # methods run inside frameworks (a `compute_loss`, a `forward`); lambdas who knows where
                continue
            if under_grad_mode(facts, call) or in_training_step(facts, call) or only_shape_read(facts, call.node):
                continue
            frozen = frozen_models(facts) if frozen is None else frozen
            if forward_model(facts, call) in frozen:
                continue  # every weight has requires_grad=False: the forward records no graph
            reported.add(id(call.stmt))
            ctx.report(
                call.node,
                "this forward pass runs with autograd on: every layer's activations are kept for a backward pass that never "
                "comes, several times the memory and slower (`model.eval()` does not turn this off)",
                fix=_wrap(facts, call),
            )


def _is_forward(facts: Facts, call: Call) -> bool:
    """A forward pass of a PyTorch model (`generate()` already runs without gradients; TF/Flax have no autograd to stop)."""
    if call.method == "generate" or not is_model_call(facts, call):
        return False
    return not any(load.class_name.rsplit(".", 1)[-1].startswith(("TF", "Flax")) for load in facts.model_loads)


def _wrap(facts: Facts, call: Call) -> list[Replacement] | None:
    """`out = model(**enc)` -> `with torch.inference_mode():` and the statement one level deeper, for a one-statement
    line. libcst renders it, so continuation lines move with it and string literals stay byte for byte."""
    stmt = call.stmt
    manager = _inference_mode_name(facts, call.scope)
    if manager is None or not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    levels = facts.statement_paths[id(stmt)][1]
    indent, unit = "".join(levels), (levels[-1] if levels else facts.module.default_indent)
    line = stmt.with_changes(leading_lines=(), trailing_whitespace=cst.TrailingWhitespace())  # comments stay where they are
    block: cst.BaseStatement = cst.With([cst.WithItem(cst.parse_expression(f"{manager}()"))], cst.IndentedBlock([line], indent=unit))
    if indent:  # render at the statement's depth, then drop the scaffolding
        block = cst.If(cst.Name("True"), cst.IndentedBlock([block], indent=indent))
    code = cst.Module([block], default_indent=facts.module.default_indent, default_newline=facts.module.default_newline).code
    if indent:
        code = code.split("\n", 1)[1][len(indent) :]
    return [Replacement(stmt.body[0], code.rstrip("\r\n"))]


def _inference_mode_name(facts: Facts, scope: Scope) -> str | None:
    """How this scope can spell `torch.inference_mode` with the file's imports, if it can."""
    for local, qualname in facts.imports.items():
        candidate = f"{local}.inference_mode" if qualname == "torch" else local
        if facts.qualname(cst.parse_expression(candidate), scope) == "torch.inference_mode":
            return candidate
    return None
