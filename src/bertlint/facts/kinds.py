"""What an expression holds (tokenizer, model, encoding, ids, optimizer, ...), and the model loads of a file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import libcst as cst

from bertlint.facts.evaluate import param_arguments
from bertlint.facts.names import ENCODE_METHODS, TRAINING_ARGS_CLASSES, TRANSFORMERS_ROOTS, is_model_class, is_tokenizer_class, is_trainer_class, is_transformers_name, model_head
from bertlint.facts.nodes import UNKNOWN, Binding, Call, Event, Scope, dotted, iter_children

if TYPE_CHECKING:
    from bertlint.facts.core import Facts


def _is_keras_model(facts: Facts, call: Call) -> bool:
    recv = facts.kind(call.receiver, call.scope, call.order)
    if recv is not None and recv.kind in ("model", "keras_model"):
        return True
    return facts.imported("tensorflow", "keras", "tf_keras") and recv is None and call.receiver is not None and "model" in (dotted(call.receiver) or "").lower()


def _looks_like_tokenizer(expr: cst.BaseExpression | None, facts: Facts, scope: Scope) -> bool:
    """An unresolved name that is plainly a tokenizer: a parameter or attribute called `tokenizer`."""
    text = dotted(expr)
    if text is None or not facts.imported(*TRANSFORMERS_ROOTS):
        return False
    last = text.rsplit(".", 1)[-1]
    if not (last in ("tokenizer", "tok", "processing_class") or last.endswith("_tokenizer") or last.startswith("tokenizer_")):
        return False
    owner = scope.lookup_scope(last) if "." not in text else None
    if owner is not None and owner.events.get(last):
        return False  # bound to something we could not classify: not our business
    return last not in facts.functions


def _is_tokenizer_load(facts: Facts, call: Call) -> bool:
    if call.qualname is None:
        return False
    base, _, tail = call.qualname.rpartition(".")
    # A resolved callee is a class or a function, never a method of an object: `transformers.BertTokenizer(...)` constructs.
    candidates = facts.class_bases(base if tail == "from_pretrained" else call.qualname)
    return any(is_tokenizer_class(c) for c in candidates)


@dataclass(eq=False)
class ModelLoad:
    call: Call
    class_name: str  # qualified name of the transformers class (or the first transformers base of a local class)
    how: str  # "pretrained" | "config" | "constructor"
    checkpoint: Any  # resolved checkpoint string, or UNKNOWN
    head: str
    keras: bool


def _model_load(facts: Facts, call: Call) -> ModelLoad | None:
    if call.qualname is None:
        return None
    if call.method in ("from_pretrained", "from_config"):
        cls = call.qualname.rsplit(".", 1)[0]
        how = "pretrained" if call.method == "from_pretrained" else "config"
    else:  # `BertForMaskedLM(config)`, `transformers.BertForMaskedLM(config)`
        cls, how = call.qualname, "constructor"
    tf_class = next((b for b in facts.class_bases(cls) if is_model_class(b)), None)
    if tf_class is None:
        return None
    checkpoint: Any = UNKNOWN
    if how == "pretrained":
        checkpoint = facts.arg_value(call, 0, "pretrained_model_name_or_path")
        if not isinstance(checkpoint, str):
            checkpoint = UNKNOWN
    last = tf_class.rsplit(".", 1)[-1]
    return ModelLoad(call, tf_class, how, checkpoint, model_head(last), keras=last.startswith("TF"))


def _classify(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int | None) -> Binding | None:
    """What kind of object `expr` evaluates to (tokenizer, model, encoding, ids, ...)."""
    if isinstance(expr, cst.Name):
        owner, events = facts.binding_events(expr.value, scope, order)
        if owner is None:
            return None
        if not events and expr.value in owner.params:
            return _param_kind(facts, owner, expr.value)
        for event in reversed(events or owner.events.get(expr.value, [])):
            if event.op == "assign" and event.value is not None and event.index is None:
                return facts.kind(event.value, owner, event.order)
            if event.op == "assign" and event.index is not None and (passed := _prepared_argument(facts, event.value, event.index)) is not None:
                return facts.kind(passed, owner, event.order)
            if event.op == "param" and event.value is not None:
                return facts.kind(event.value, owner, event.order)
            if event.op == "for":
                return _loop_item(facts, event, owner)
        return None
    if isinstance(expr, cst.Attribute):
        text = dotted(expr)
        if text and text.startswith("self."):
            return _classify_self_attr(facts, text, scope)
        base = facts.kind(expr.value, scope, order)
        attr = expr.attr.value
        if base is not None:
            if base.kind == "encoding":
                return Binding("ids", base.call, base, attr)
            if base.kind == "dataloader_item":
                return Binding("ids", base.call, base, attr)
            if base.kind == "model" and attr in ("module", "base_model", "model"):
                return base
        return None
    if isinstance(expr, cst.Subscript):
        base = facts.kind(expr.value, scope, order)
        if base is not None and base.kind in ("encoding", "dataloader_item"):
            key = facts.value(expr.slice[0].slice.value, scope, order=order) if isinstance(expr.slice[0].slice, cst.Index) else UNKNOWN
            return Binding("ids", base.call, base, key if isinstance(key, str) else "")
        if base is not None and base.kind == "ids":
            return base
        return None
    if isinstance(expr, cst.Call):
        call = facts.call_of(expr)
        if call is None:
            return None
        if _is_tokenizer_load(facts, call):
            return Binding("tokenizer", call)
        load = _model_load(facts, call)
        if load is not None:
            return Binding("model", call)
        if call.qualname:
            short = call.qualname.rsplit(".", 1)[-1]
            if (kind := _object_kind(call.qualname)) is not None:
                return Binding(kind, call)
            if short in TRAINING_ARGS_CLASSES and is_transformers_name(call.qualname):
                return Binding("training_args", call)
            if any(is_trainer_class(b) for b in facts.class_bases(call.qualname)):
                return Binding("trainer", call)
            if call.qualname.startswith("torch.utils.data") and short == "DataLoader":
                return Binding("dataloader", call)
            if short.startswith("DataCollator") and is_transformers_name(call.qualname):
                return Binding("collator", call)
            if call.qualname in ("peft.get_peft_model", "peft.prepare_model_for_kbit_training"):
                return Binding("model", call, facts.kind(call.arg(0, "model").value if call.arg(0, "model") else None, scope, order))
            if call.qualname.startswith(("torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.stack", "torch.cat")) or call.qualname in ("torch.tensor", "torch.as_tensor"):
                inner = call.arg(0)
                value = inner.value if inner else None
                if isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) == 1:
                    value = value.elements[0].value  # torch.tensor([ids]): a batch of one
                inner_kind = facts.kind(value, scope, order)
                return inner_kind if inner_kind and inner_kind.kind == "ids" else None
            if short in ("pad_sequence",) and call.qualname.startswith("torch"):
                return Binding("ids", call, None, "padded")
        if call.method is not None:
            recv = facts.kind(call.receiver, call.scope, call.order)
            if recv is not None:
                if call.method in ("to", "cuda", "cpu", "train", "eval", "half", "bfloat16", "float", "double", "long", "int", "requires_grad_", "squeeze", "unsqueeze", "view", "reshape", "clone", "detach", "contiguous", "pin_memory", "to_device"):
                    if recv.kind in ("model", "encoding", "ids"):
                        return recv
                if recv.kind == "tokenizer" and call.method in ENCODE_METHODS:
                    return Binding("encoding", call)
                if recv.kind == "tokenizer" and call.method == "convert_tokens_to_ids":
                    return Binding("ids", call, None, "manual")
                if recv.kind == "model" and call.method in ("generate",):
                    return Binding("generated", call)
                if recv.kind in ("encoding",) and call.method == "get":
                    key = facts.arg_value(call, 0)
                    return Binding("ids", recv.call, recv, key if isinstance(key, str) else "")
            if (passed := _prepared_argument(facts, expr, None)) is not None:
                return facts.kind(passed, scope, order)
        fn = call.node.func
        if call.qualname is None and isinstance(fn, (cst.Name, cst.Attribute)):
            recv = facts.kind(fn, scope, order)
            if recv is not None and recv.kind == "tokenizer":
                return Binding("encoding", call)
            if recv is None and _looks_like_tokenizer(fn, facts, scope):
                return Binding("encoding", call)
            if isinstance(fn, cst.Name) and len(facts.functions.get(fn.value, ())) == 1:
                return _returned_kind(facts, *facts.functions[fn.value][0])
    return None


def _returned_kind(facts: Facts, fn: cst.FunctionDef, scope: Scope) -> Binding | None:
    """What a function of the file returns, when every `return` of its own body returns the same kind."""
    found = []
    stack = list(iter_children(fn.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Return):
            found.append(facts.kind(node.value, scope) if node.value is not None else None)
        stack.extend(iter_children(node))
    kinds = {b.kind if b is not None else None for b in found}
    return found[0] if len(kinds) == 1 else None


_OPTIMIZER_MODULES = (
    "torch.optim.", "torch.distributed.optim.", "bitsandbytes.optim.", "apex.optimizers.", "deepspeed.ops.",
    "tensorflow.keras.optimizers.", "keras.optimizers.", "tf_keras.optimizers.", "tensorflow.optimizers.",
)


def _object_kind(qualname: str) -> str | None:
    """optimizer | accelerator | gradient_tape, for a constructor resolved through the imports."""
    root, last = qualname.split(".", 1)[0], qualname.rsplit(".", 1)[-1]
    if qualname.startswith(_OPTIMIZER_MODULES) and last[:1].isupper():
        return None if any(part in qualname for part in (".lr_scheduler.", ".schedules.", ".swa_utils.")) else "optimizer"
    if is_transformers_name(qualname) and last in ("AdamW", "Adafactor", "AdamWeightDecay"):
        return "optimizer"
    if root == "accelerate" and last == "Accelerator":
        return "accelerator"
    if root == "tensorflow" and last == "GradientTape":
        return "gradient_tape"
    return None


def _prepared_argument(facts: Facts, value: cst.CSTNode | None, index: int | None) -> cst.BaseExpression | None:
    """What `accelerator.prepare(a, b)` hands back at `index` (None: its only result): prepare wraps, it keeps the kind."""
    call = facts.call_of(value) if isinstance(value, cst.Call) else None
    if call is None or call.method != "prepare" or call.has_star_args:
        return None
    accelerator = facts.kind(call.receiver, call.scope, call.order)
    if accelerator is None or accelerator.kind != "accelerator":
        return None
    args = call.positional
    if index is None:
        return args[0].value if len(args) == 1 else None
    return args[index].value if index < len(args) else None


def _param_kind(facts: Facts, owner: Scope, name: str) -> Binding | None:
    """A parameter holds what the file's call sites pass, when they all agree: `train(model, optimizer, loader)`."""
    sources = param_arguments(facts, owner, name)
    found = [facts.kind(expr, scope, order) for expr, scope, order in sources or ()]
    return found[0] if found and len({b.kind if b else None for b in found}) == 1 else None


_ITERATION_WRAPPERS = ("builtins.enumerate", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm")


def _loop_item(facts: Facts, event: Event, scope: Scope) -> Binding | None:
    """`for batch in loader` / `for step, batch in enumerate(tqdm(loader))`: a batch of that DataLoader."""
    iterable, index = event.value, event.index
    while isinstance(iterable, cst.Call) and iterable.args:
        wrapper = facts.qualname(iterable.func, scope)
        if wrapper not in _ITERATION_WRAPPERS:
            break
        if wrapper == "builtins.enumerate":
            if index != 1:
                return None
            index = None
        iterable = iterable.args[0].value
    loader = facts.kind(iterable, scope, event.order) if index is None else None
    return Binding("dataloader_item", loader.call) if loader is not None and loader.kind == "dataloader" else None


def _classify_self_attr(facts: Facts, text: str, scope: Scope) -> Binding | None:
    """`self.model` / `self.tokenizer`: classify by any assignment to that attribute in the file."""
    for value, owner, order in facts._self_attrs.get(text, ()):
        found = facts.kind(value, owner, order)
        if found is not None:
            return found
    return None
