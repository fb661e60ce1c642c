"""Wrappers that hand back what they wrap: accelerate `prepare`/`unwrap_model`, DataParallel, PEFT, tqdm.

Sources: accelerate `Accelerator.prepare(*args)` returns its arguments prepared, one for one (the only one alone);
`unwrap_model(model)`; torch `DataParallel(module)` / `DistributedDataParallel(module)` (`.module` is the module);
peft `get_peft_model(model, config)` / `prepare_model_for_kbit_training(model)`; `tqdm(iterable)` iterates its
iterable.
"""

from __future__ import annotations

from typing import Any

from bertlint.facts.abstract import UNKNOWN, Binding, Pack

DATA_PARALLEL = ("torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel")
PEFT_WRAPPERS = ("peft.get_peft_model", "peft.prepare_model_for_kbit_training")
ITERATION_WRAPPERS = ("tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm")


def call(ev, call) -> Any:
    q = call.qualname
    if not q:
        return None
    if q in DATA_PARALLEL and call.positional:  # `.module` is the model
        inner = ev.kind(call.positional[0].value)
        return inner if inner is not None and inner.kind == "model" else UNKNOWN
    if q in PEFT_WRAPPERS:
        first = call.arg(0, "model")
        return Binding("model", call, ev.kind(first.value) if first else None, "peft")
    if q in ITERATION_WRAPPERS and call.positional:
        return ev.eval(call.positional[0].value)
    return None


def method(ev, receiver, call) -> Any:
    if not isinstance(receiver, Binding) or receiver.kind != "accelerator" or call.has_star_args:
        return None
    if call.method == "unwrap_model" and call.positional:
        inner = ev.kind(call.positional[0].value)
        return inner if inner is not None and inner.kind == "model" else UNKNOWN
    if call.method == "prepare":  # prepare wraps, it keeps the kind
        found = tuple(ev.kind(a.value) or UNKNOWN for a in call.positional)
        return found[0] if len(found) == 1 else Pack(found) if found else UNKNOWN
    return None


def attribute(ev, base, attr: str) -> Any:
    if isinstance(base, Binding) and base.kind == "model" and attr in ("module", "base_model", "model"):
        return base
    return None
