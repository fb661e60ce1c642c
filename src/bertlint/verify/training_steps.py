"""`--verify` for catalogue 3 (BL311, BL312, BL405, BL505): the lifters (parent side, import-free) and the probes
(child side: torch is imported inside them), each a few seconds on CPU.

Every probe decides from an effect no float rounding can flip: an exact zero or an exact ratio (BL311, BL312), NaN
against finite (BL505), a sign (NLLLoss on logits below 0) or a wide gap held on every one of several seeds (BL405),
and reports the margin and the spread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from bertlint.facts import UNKNOWN, activation, chained_half_models, half_trained_models, inert_statements, misplaced_clips, training_arg
from bertlint.verify.sites import CannotLift, Site
from bertlint.verify.verdicts import Env, error_text, verdict

if TYPE_CHECKING:
    from bertlint.config import Settings
    from bertlint.report import Finding

SEEDS = (0, 1, 2)


# --------------------------------------------------------------------------- lifters (parent side)


def _inert(site: Site, finding: Finding, settings: Settings) -> dict:
    """BL311: which control was named without effect, and on what."""
    found = next((i for i in inert_statements(site.facts) if site.covers(i.node, finding)), None)
    if found is None:
        raise CannotLift("the statement could not be found again")
    return {"params": {"what": found.what.rsplit(".", 1)[-1], "role": found.role}}


def _clip_order(site: Site, finding: Finding, settings: Settings) -> dict:
    """BL312: the order of zero_grad, clip, backward and step in the loop body, and the clip's threshold."""
    facts = site.facts
    found = next((m for m in misplaced_clips(facts) if site.covers(m.call.node, finding)), None)
    if found is None:
        raise CannotLift("the clip could not be found again")
    ids = {id(c): "backward" for c in found.backward} | {id(c): "step" for c in found.steps} | {id(found.call): "clip"}
    ids |= {id(c): "zero_grad" for c in found.zero_grads}
    own = [c for c in facts.calls if id(c) in ids]
    order = [ids[id(c)] for c in sorted(own, key=lambda c: c.order)]
    value = facts.arg_value(found.call, 1, "clip_value" if "value" in (found.call.short or "") else "max_norm")
    threshold = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 1.0
    return {"params": {"order": order, "threshold": threshold, "known_threshold": value is not UNKNOWN, "by_value": "value" in (found.call.short or "")}}


def _loss_input(site: Site, finding: Finding, settings: Settings) -> dict:
    """BL405: the loss and what its input went through."""
    from bertlint.rules.bl405 import loss_class

    facts = site.facts
    for call in facts.calls:
        arg = call.arg(0, "input")
        loss = loss_class(facts, call)
        if loss is not None and arg is not None and site.covers(arg.value, finding):
            return {"params": {"loss": loss, "activation": activation(facts, arg.value, call.scope, call.order)}}
    raise CannotLift("the loss call could not be found again")


def _half_training(site: Site, finding: Finding, settings: Settings) -> dict:
    """BL505: the optimizer's learning rate (the Trainer's `learning_rate`, default 5e-5) and whether fp16 autocast is on."""
    facts = site.facts
    found = next((h for h in [*half_trained_models(facts), *chained_half_models(facts)] if site.covers(h.where, finding)), None)
    if found is None:
        raise CannotLift("the float16 model could not be found again")
    by = found.trained_by
    if by.qualname is not None and by.qualname.startswith("torch.optim"):
        lr = facts.arg_value(by, 1, "lr", default=1e-3)  # torch.optim.Adam/AdamW's default
        fp16 = False
    else:
        lr = training_arg(facts, "learning_rate", default=5e-5)  # TrainingArguments' default
        fp16 = training_arg(facts, "fp16", default=False) is True
    known = isinstance(lr, (int, float)) and not isinstance(lr, bool) and lr > 0
    return {"params": {"lr": float(lr) if known else 5e-5, "lr_known": known, "fp16": fp16}}


LIFTERS: dict[str, Callable[[Site, Finding, Settings], dict]] = {"BL311": _inert, "BL312": _clip_order, "BL405": _loss_input, "BL505": _half_training}


# --------------------------------------------------------------------------- probes (child side)


def probe_inert(spec: dict, env: Env) -> dict:
    """BL311: run the bare statement and look at the state it was meant to change."""
    import torch


    what = spec["params"]["what"]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 2))
    x = torch.randn(4, 8)
    setup = "a two-layer torch module with dropout on random inputs"
    if what in ("no_grad", "inference_mode"):
        getattr(torch, what)()  # the statement as the script writes it
        out = model(x)
        with getattr(torch, what)():
            inside = model(x)
        m = dict(requires_grad_after_bare=int(out.requires_grad), requires_grad_inside_with=int(inside.requires_grad))
        ok = out.requires_grad and not inside.requires_grad
        return verdict("confirmed" if ok else "not_confirmed",
                       f"after `torch.{what}()` as a statement the output still has requires_grad={out.requires_grad} (a graph is recorded); "
                       f"inside `with torch.{what}():` it is {inside.requires_grad}", setup, **m)  # fmt: skip
    if what == "enable_grad":
        with torch.no_grad():
            torch.enable_grad()
            out = model(x)
        return verdict("confirmed" if not out.requires_grad else "not_confirmed",
                       f"under `no_grad`, `torch.enable_grad()` as a statement leaves requires_grad={out.requires_grad}", setup,
                       requires_grad_after_bare=int(out.requires_grad))  # fmt: skip
    if what in ("eval", "train"):
        if what == "train":
            model.eval()
        getattr(model, what)  # the reference, no call
        differs = (model(x) - model(x)).abs().max().item()
        wanted = what == "train"
        ok = model.training != wanted
        return verdict("confirmed" if ok else "not_confirmed",
                       f"after `model.{what}` the module's training flag is still {model.training}; two forwards of the same input differ by "
                       f"{differs:.3g} (dropout {'on' if model.training else 'off'})", setup, training=int(model.training), forward_difference=differs)  # fmt: skip
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(x).pow(2).mean()
    if what == "backward":
        loss.backward  # the reference, no call
        missing = sum(p.grad is None for p in model.parameters())
        return verdict("confirmed" if missing == len(list(model.parameters())) else "not_confirmed",
                       f"after `loss.backward` {missing} of {len(list(model.parameters()))} parameters have no gradient", setup, parameters_without_grad=missing)  # fmt: skip
    if what == "zero_grad":
        model.eval()
        model(x).pow(2).mean().backward()
        first = torch.cat([p.grad.flatten() for p in model.parameters()]).clone()
        optimizer.zero_grad  # the reference, no call
        model(x).pow(2).mean().backward()
        second = torch.cat([p.grad.flatten() for p in model.parameters()])
        ratio = (second.norm() / first.norm()).item()
        return verdict("confirmed" if abs(ratio - 2) < 1e-3 else "not_confirmed",
                       f"after `optimizer.zero_grad` and a second backward of the same batch the gradient is {ratio:.4f}× the first (summed, not reset)",
                       setup, gradient_ratio=ratio)  # fmt: skip
    if spec["params"]["role"] == "scheduler":
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
        for _ in range(3):
            optimizer.step()
            scheduler.step  # the reference, no call
        lr = optimizer.param_groups[0]["lr"]
        return verdict("confirmed" if lr == 0.1 else "not_confirmed", f"after 3 epochs of `scheduler.step` (StepLR, ×0.5 per step) the learning rate is still {lr:g}",
                       setup, learning_rate=lr)  # fmt: skip
    loss.backward()
    before = [p.detach().clone() for p in model.parameters()]
    optimizer.step  # the reference, no call
    moved = max((p.detach() - b).abs().max().item() for p, b in zip(model.parameters(), before))
    return verdict("confirmed" if moved == 0 else "not_confirmed", f"after `optimizer.step` the largest weight change is {moved:g}", setup, largest_weight_change=moved)


CLIP_STEPS = 3
GRADIENT_SCALE = 10.0  # the loss is scaled so that the gradients' norm is about this many times the threshold


def probe_clip_order(spec: dict, env: Env) -> dict:
    """BL312: replay the loop's order of zero_grad / clip / backward / step on a small model whose gradients are far over the
    threshold; record the norm each clip sees and the norm each step uses, against the clip between backward and step."""
    import torch


    p = spec["params"]
    threshold = p["threshold"]

    def replay(order: list[str]) -> tuple[list[float], list[float]]:
        torch.manual_seed(0)
        model = torch.nn.Linear(16, 4)
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
        x = torch.randn(32, 16)
        seen, used = [], []
        for _ in range(CLIP_STEPS):
            for op in order:
                if op == "zero_grad":
                    optimizer.zero_grad()
                elif op == "backward":
                    (model(x).pow(2).mean() * 1e3).backward()
                elif op == "clip":
                    params = [q for q in model.parameters() if q.grad is not None]
                    norm = float(torch.cat([q.grad.flatten() for q in params]).norm()) if params else 0.0
                    if p["by_value"]:
                        torch.nn.utils.clip_grad_value_(model.parameters(), threshold)
                    else:
                        torch.nn.utils.clip_grad_norm_(model.parameters(), threshold)
                    seen.append(norm)
                elif op == "step":
                    used.append(max(float(q.grad.abs().max()) for q in model.parameters()) if p["by_value"] else float(torch.cat([q.grad.flatten() for q in model.parameters()]).norm()))
                    optimizer.step()
        return seen, used

    seen, used = replay(p["order"])
    fixed = [op for op in p["order"] if op != "clip"]
    fixed.insert(fixed.index("backward") + 1, "clip")
    _, used_fixed = replay(fixed)
    over = min(used) / threshold if used else 0.0
    ok = bool(used) and over > 1.5 and max(used_fixed) <= threshold * (1 + 1e-4)
    measure = "largest gradient entry" if p["by_value"] else "gradient norm"
    text = (f"the loop's order {' → '.join(p['order'])} over {CLIP_STEPS} steps: the clip saw {measure}s {', '.join(f'{s:.3g}' for s in seen)}, "
            f"the step used {', '.join(f'{u:.3g}' for u in used)} (threshold {threshold:g}, at least {over:.1f}× over it); with the clip "
            f"between backward and step the step used at most {max(used_fixed):.3g}")  # fmt: skip
    setup = f"a torch Linear(16, 4) with a loss scaled to put its gradients far over the threshold{'' if p['known_threshold'] else ' (threshold not a constant in the script: 1.0 assumed)'}"
    return verdict("confirmed" if ok else "not_confirmed", text, setup, threshold=threshold, smallest_used_over_threshold=over, largest_used_when_fixed=max(used_fixed))


TASK = {"examples": 256, "test": 2048, "dim": 16, "steps": 40, "lr": 0.5}
DOUBLE_SIGMOID_FLOOR = 0.3133  # log(1 + e^-1): BCE-with-logits of a sigmoid output, at its best (sigmoid(1) for a positive)
GAP = 0.03  # accuracy points the probability loss must trail the logits on every seed


def probe_loss_input(spec: dict, env: Env) -> dict:
    """BL405: a linear classifier trained with the script's loss on the script's activation of its logits, against the loss
    on the logits, on one synthetic task per seed: test accuracy, the logit cross-entropy reached, the first gradient's norm."""
    import torch
    import torch.nn.functional as F


    p = spec["params"]
    loss_name, act = p["loss"], p["activation"]
    binary = loss_name == "BCEWithLogitsLoss"
    k = 1 if binary else 10

    def wrong(z, y):
        if act == "logits":
            return F.nll_loss(z, y)
        z = torch.sigmoid(z) if act == "sigmoid" else F.softmax(z, -1)
        if binary:
            return F.binary_cross_entropy_with_logits(z.squeeze(-1), y.float())
        return F.nll_loss(z, y) if loss_name == "NLLLoss" else F.cross_entropy(z, y)

    def right(z, y):
        return F.binary_cross_entropy_with_logits(z.squeeze(-1), y.float()) if binary else F.cross_entropy(z, y)

    def run(seed: int, loss_fn) -> tuple[float, float, float, float]:
        g = torch.Generator().manual_seed(seed)
        classes = 2 if binary else k
        means = torch.randn(classes, TASK["dim"], generator=g)
        y = torch.randint(0, classes, (TASK["examples"],), generator=g)
        x = means[y] + torch.randn(TASK["examples"], TASK["dim"], generator=g)
        ty = torch.randint(0, classes, (TASK["test"],), generator=g)
        tx = means[ty] + torch.randn(TASK["test"], TASK["dim"], generator=g)
        torch.manual_seed(seed)
        head = torch.nn.Linear(TASK["dim"], k)
        opt = torch.optim.SGD(head.parameters(), lr=TASK["lr"])
        first = None
        for _ in range(TASK["steps"]):
            opt.zero_grad()
            loss = loss_fn(head(x), y)
            loss.backward()
            first = first if first is not None else float(head.weight.grad.norm())
            opt.step()
        with torch.no_grad():
            z = head(tx)
            pred = (z.squeeze(-1) > 0).long() if binary else z.argmax(-1)
            return float((pred == ty).float().mean()), float(right(head(x), y)), float(loss), first

    runs = [(run(s, wrong), run(s, right)) for s in SEEDS]
    gaps = [r[0] - w[0] for w, r in runs]
    finals = [w[2] for w, _ in runs]
    grad_ratio = min(r[3] / max(w[3], 1e-12) for w, r in runs)
    fit_r = [r[1] for _, r in runs]
    if act == "logits":
        ok = max(finals) < 0  # a loss of log-probabilities is never below 0: on logits it has no floor
        verdict_text = f"the NLL loss on logits ends at {min(finals):.3g}…{max(finals):.3g} (below 0, no floor)"
    elif binary:  # on a linear binary task the direction (so the accuracy) is found either way: the loss stalls at its floor
        ok = min(finals) >= DOUBLE_SIGMOID_FLOOR - 1e-4 and max(fit_r) < DOUBLE_SIGMOID_FLOOR / 2
        verdict_text = (f"the double-sigmoid loss stalls at {min(finals):.3g}…{max(finals):.3g}, never below log(1 + 1/e) = {DOUBLE_SIGMOID_FLOOR}, "
                        f"its predicted probabilities stay inside (0.27, 0.73), and the first gradient is {grad_ratio:.1f}× smaller")  # fmt: skip
    else:
        ok = min(gaps) > GAP
        verdict_text = f"the first gradient is {grad_ratio:.1f}× smaller"
    acc_w = [w[0] for w, _ in runs]
    acc_r = [r[0] for _, r in runs]
    fit_w = [w[1] for w, _ in runs]
    what = f"{loss_name} on {act} outputs" if act != "logits" else "NLLLoss on raw logits"
    text = (f"{what}: test accuracy {min(acc_w):.0%}…{max(acc_w):.0%} against {min(acc_r):.0%}…{max(acc_r):.0%} on the logits "
            f"(gap {min(gaps):+.1%}…{max(gaps):+.1%} over {len(SEEDS)} seeds, margin {GAP:.0%}); cross-entropy of the logits reached "
            f"{min(fit_w):.3g}…{max(fit_w):.3g} against {min(fit_r):.3g}…{max(fit_r):.3g}; {verdict_text}")  # fmt: skip
    setup = (f"a linear {'binary ' if binary else f'{k}-class '}classifier on synthetic Gaussian classes, {TASK['steps']} SGD steps at "
             f"lr {TASK['lr']}, seeds {', '.join(map(str, SEEDS))}")  # fmt: skip
    return verdict("confirmed" if ok else "not_confirmed", text, setup, smallest_accuracy_gap=min(gaps), largest_accuracy_gap=max(gaps),
                   first_gradient_ratio=grad_ratio, final_wrong_loss=max(finals))  # fmt: skip


HALF_STEPS = 5


def probe_half_training(spec: dict, env: Env) -> dict:
    """BL505: a small random BERT classifier trained a few AdamW steps at the script's learning rate with float16 weights,
    against the same steps with fp32 weights; with `fp16=True`, what the GradScaler does with float16 gradients."""
    import torch
    import transformers


    p = spec["params"]
    config = transformers.BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                     max_position_embeddings=64, num_labels=2)  # fmt: skip
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 60, (8, 16), generator=g)
    labels = torch.randint(0, 2, (8,), generator=g)

    def train(dtype) -> tuple[list[float], float, int]:
        torch.manual_seed(0)
        model = transformers.BertForSequenceClassification(config).to(dtype)
        optimizer = torch.optim.AdamW(model.parameters(), lr=p["lr"])
        losses = []
        zero_grad_entries = 0
        for step in range(HALF_STEPS):
            optimizer.zero_grad()
            loss = model(input_ids=ids, labels=labels).loss
            loss.backward()
            if step == 0:
                zero_grad_entries = sum(int((q.grad == 0).sum()) for q in model.parameters() if q.grad is not None)
            optimizer.step()
            losses.append(float(loss))
        nan = sum(int(torch.isnan(q).sum()) for q in model.parameters()) / sum(q.numel() for q in model.parameters())
        return losses, nan, zero_grad_entries

    half, half_nan, zeros = train(torch.float16)
    full, full_nan, _ = train(torch.float32)
    first_nan = next((i + 1 for i, v in enumerate(half) if v != v), None)
    ok = half_nan > 0 and full_nan == 0 and all(v == v for v in full)
    scaler = ""
    if p["fp16"]:
        model = transformers.BertForSequenceClassification(config).to(torch.float16)
        optimizer = torch.optim.AdamW(model.parameters(), lr=p["lr"])
        grad_scaler = torch.amp.GradScaler("cpu")
        grad_scaler.scale(model(input_ids=ids, labels=labels).loss).backward()
        try:
            grad_scaler.unscale_(optimizer)
            scaler = "; the GradScaler of `fp16=True` unscaled the float16 gradients without error"
        except ValueError as exc:
            scaler = f"; with `fp16=True` the GradScaler raises at the first unscale: {error_text(exc)}"
            ok = True
    text = (f"float16 weights, {HALF_STEPS} AdamW steps at lr {p['lr']:g}: losses {', '.join(f'{v:.4g}' for v in half)}"
            f"{f' (NaN from step {first_nan})' if first_nan else ''}, {half_nan:.0%} of the weights NaN; the first step had {zeros} "
            f"gradient entries exactly 0 (0/0 once eps rounds to 0); fp32 weights: losses {', '.join(f'{v:.4g}' for v in full)}, "
            f"{full_nan:.0%} NaN{scaler}")  # fmt: skip
    setup = f"a random BertForSequenceClassification (2 layers × 32 wide){'' if p['lr_known'] else ' (learning rate not a constant: 5e-5 assumed)'}"
    return verdict("confirmed" if ok else "not_confirmed", text, setup, nan_fraction_half=half_nan, nan_fraction_fp32=full_nan, zero_gradient_entries=zeros)


PROBES: dict[str, Callable[[dict, Env], dict]] = {"BL311": probe_inert, "BL312": probe_clip_order, "BL405": probe_loss_input, "BL505": probe_half_training}
