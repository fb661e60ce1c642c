"""BL307: `model.eval()` inside the training loop and no `model.train()` before the next training step."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import Call, Facts
from bertlint.rules import Context, Rule


class EvalModeNotReset(Rule):
    code = "BL307"
    name = "eval-mode-not-reset"
    severity = "warning"
    summary = "`model.eval()` inside the training loop with no `model.train()` before the next training step"
    help = "call `model.train()` at the start of each epoch (or right after the evaluation), or restore the mode at the end of the evaluation function"
    needs = ("torch", "transformers")

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        reported: set[int] = set()
        optimised = _optimised(facts)
        for loop in facts.training_loops:
            if not loop.backward or loop.framework != "torch":
                continue
            outer = _outermost_loop(facts, loop.node)
            inside = [c for c in facts.calls if any(node is outer for node in c.loops)]
            modes = [(site, _mode(facts, c, optimised)) for site in inside for c in [site, *_reached(facts, site)]]
            if any(mode == "train" for _, mode in modes):
                continue
            for site, mode in modes:
                if mode != "eval" or id(site.node) in reported:
                    continue
                reported.add(id(site.node))
                via = "" if site.method == "eval" else f" (through `{facts.text(site.node.func)}`)"
                ctx.report(
                    site.node,
                    f"the model is put in eval mode inside the training loop{via} and nothing in the loop sets it back with "
                    "`model.train()`: every training step after the first evaluation runs with dropout off (and batch-norm "
                    "statistics frozen), so the rest of training silently loses its regularisation",
                )


def _outermost_loop(facts: Facts, node: cst.CSTNode) -> cst.CSTNode:
    """The outermost for/while loop of the same function around `node` (the epoch loop), or `node` itself."""
    around = facts.enclosing(node)
    last_def = max((i for i, s in enumerate(around) if isinstance(s, (cst.FunctionDef, cst.ClassDef))), default=-1)
    return next((s for s in around[last_def + 1 :] if isinstance(s, (cst.For, cst.While))), node)


def _mode(facts: Facts, call: Call, optimised: set[int]) -> str | None:
    """"eval" for `model.eval()` / `model.train(False)` on a model or torch module that is trained (its parameters go to
    an optimizer, when the file shows which); "train" for any `x.train()` that may set training mode (its receiver
    unresolved too: `self.net.train()` restores the mode as well)."""
    if call.method not in ("eval", "train") or call.qualname is not None:
        return None
    if call.method == "train":
        flag = facts.arg_value(call, 0, "mode", default=True)
        if flag is not False:
            return "train"
    elif call.node.args:
        return None
    found = facts.kind(call.receiver, call.scope, call.order)
    if found is None or found.kind not in ("model", "module") or found.call is None:
        return None
    return "eval" if not optimised or id(found.call) in optimised else None  # a frozen teacher stays in eval mode


def _optimised(facts: Facts) -> set[int]:
    """The models (by the call that made them) whose parameters a torch optimizer gets: `AdamW(model.parameters())`,
    grouped parameters from `model.named_parameters()`, through a name bound once."""
    found = set()
    for call in facts.calls:
        if call.method in ("parameters", "named_parameters") and call.receiver is not None:
            model = facts.kind(call.receiver, call.scope, call.order)
            if model is not None and model.kind in ("model", "module") and model.call is not None and _feeds_optimizer(facts, call):
                found.add(id(model.call))
    return found


def _feeds_optimizer(facts: Facts, call: Call) -> bool:
    """The statement of `call` builds an optimizer, or binds a name that an optimizer construction reads."""
    optimizers = [c for c in facts.calls if (c.qualname or "").startswith("torch.optim.") and c.qualname.rsplit(".", 1)[-1][:1].isupper()]
    if any(o.stmt is call.stmt for o in optimizers):
        return True
    stmt = call.stmt
    targets = {t.target.value for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()) if isinstance(small, cst.Assign) for t in small.targets if isinstance(t.target, cst.Name)}
    return any(isinstance(a.value, cst.Name) and a.value.value in targets for o in optimizers for a in o.node.args)


def _reached(facts: Facts, site: Call, depth: int = 3) -> list[Call]:
    """The calls in the file's own functions (or methods, by name) that `site` may run, a few calls deep."""
    func = site.node.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) and site.qualname is None else None
    if name is None or depth == 0:
        return []
    found = []
    for fn, _ in facts.functions.get(name, ()):
        for call in facts.calls:
            if call.function is fn:
                found += [call, *_reached(facts, call, depth - 1)]
    return found
