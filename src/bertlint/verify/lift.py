"""Parent side: lift the values a probe needs from the script's facts into a JSON probe spec.

Import-free like the rest of the lint path. The file is parsed again (once per file with findings
to verify) and the finding is matched to the calls that contain its position. Rules' own queries
are reused where they exist, so a probe checks the very values the rule judged. A value that does
not resolve raises `CannotLift`, which becomes "could not run" with the reason.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, Callable

import libcst as cst

from bertlint import knowledge
from bertlint.config import Settings
from bertlint.facts import UNKNOWN, Call, Facts, ModelLoad, classifier, float_cast, known_labels, padding_of, trained_model, uses_peft
from bertlint.report import Finding
from bertlint.verify import training_steps
from bertlint.verify.sites import CannotLift, Site

# --------------------------------------------------------------------------- the model and tokenizer


def model_spec(site: Site, load: ModelLoad | None = None) -> dict[str, Any]:
    """The architecture a probe rebuilds: the checkpoint's known sizes, else its family from the class name."""
    facts = site.facts
    info = None
    if load is None:
        known = trained_model(facts)
        if known is not None:
            load, info = known
        elif facts.model_loads:
            load = facts.model_loads[0]  # no model trained (a script that only generates): the one it loads
    if info is None and load is not None and load.checkpoint is not UNKNOWN:
        info = facts.checkpoint_info(load)
    if info is not None:
        spec = dataclasses.asdict(info)
        local = info.source != "built-in"
        spec |= {"checkpoint": None if local else info.id, "config_dir": str(Path(info.source).parent) if local else None}
        return spec | {"head": load.head}
    model_type = knowledge.model_type_from_class_name(load.class_name.rsplit(".", 1)[-1]) if load is not None else None
    if model_type is None:
        raise CannotLift("the script's model is neither a known checkpoint nor a transformers class of a known family")
    return {"model_type": model_type, "head": load.head}


def _load_of(facts: Facts, call: Call | None) -> ModelLoad | None:
    return next((load for load in facts.model_loads if call is not None and load.call is call), None)


def tokenizer_spec(site: Site, call: Call, target: cst.BaseExpression | None = None) -> dict[str, Any]:
    """The tokenizer a call runs on (or `target` holds): its checkpoint and class as loaded, else the trained model's checkpoint."""
    facts = site.facts
    if target is None:
        target = call.receiver if call.method not in (None, "__call__") else call.node.func
    binding = facts.kind(target, call.scope, call.order)
    load = binding.call if binding is not None and binding.kind == "tokenizer" else None
    spec: dict[str, Any] = {"checkpoint": None, "class": None, "use_fast": None}
    if load is not None and load.qualname:
        pretrained = load.method == "from_pretrained"
        checkpoint = facts.arg_value(load, 0, "pretrained_model_name_or_path") if pretrained else None
        use_fast = facts.kw_value(load, "use_fast", default=None)
        spec = {"checkpoint": checkpoint if isinstance(checkpoint, str) else None,
                "class": load.qualname.rsplit(".", 2 if pretrained else 1)[-2 if pretrained else -1],
                "use_fast": use_fast if isinstance(use_fast, bool) else None}  # fmt: skip
    if spec["checkpoint"] is None and (known := trained_model(facts)) is not None:
        spec["checkpoint"] = known[1].id
    info = facts.checkpoint(spec["checkpoint"]) if spec["checkpoint"] else None
    spec["model_max_length"] = info.usable_max_tokens if info else None
    return spec


# --------------------------------------------------------------------------- per rule

TOKENIZER_KEYWORDS = ("padding", "pad_to_max_length", "max_length", "truncation", "add_special_tokens", "return_tensors", "pad_to_multiple_of")


def _tokenizer_call(site: Site, finding: Finding, settings: Settings) -> dict:
    facts = site.facts
    call = site.innermost(finding, facts.tokenizer_calls, "tokenizer call")
    if call.has_double_star:
        raise CannotLift("the tokenizer call passes `**kwargs`, whose keys are not known")
    kwargs = {k: site.value(call, k) for k in TOKENIZER_KEYWORDS if k in call.kwargs}
    if kwargs.get("return_tensors") not in (None, "pt", "np"):
        kwargs.pop("return_tensors")
    method = call.method if call.method in ("encode_plus", "batch_encode_plus") else "__call__"
    batch = padding_of(facts, call).batch is not False
    params = {"kwargs": kwargs, "batch": batch, "method": method, "tokenizer": tokenizer_spec(site, call), "texts": _literal_texts(facts, call)}
    return {"params": params}


def _position_limit(site: Site, finding: Finding, settings: Settings) -> dict:
    facts = site.facts
    call = site.innermost(finding, [c for c in facts.calls if "max_length" in c.kwargs], "call with `max_length=`")
    length = site.value(call, "max_length")
    if not isinstance(length, int) or length <= 0:
        raise CannotLift(f"`max_length` is {length!r}, not a length")
    return {"model": model_spec(site), "params": {"length": length}}


def _attention_mask(site: Site, finding: Finding, settings: Settings) -> dict:
    """The model call and the batch it gets: the tokenizer call's literal texts, padding, `max_length` and side when known."""
    facts = site.facts

    def model_of(call: Call):
        target = call.node.func if call.method is None else call.receiver
        return facts.kind(target, call.scope, call.order)

    calls = [c for c in facts.calls if c.method in (None, "forward", "generate") and (b := model_of(c)) is not None and b.kind == "model"]
    call = site.innermost(finding, calls, "model call")
    load = _load_of(facts, model_of(call).call)
    ids_arg = next((a for a in call.node.args if a.star == "**"), None) or call.arg(0, "input_ids")
    ids = facts.kind(ids_arg.value, call.scope, call.order) if ids_arg is not None else None
    encode = ids.call if ids is not None and ids.kind in ("ids", "encoding") and ids.call in facts.tokenizer_calls else None
    batch = _batch(site, encode) if encode is not None else {"texts": None, "padding": "longest", "max_length": None, "truncation": False}
    side = batch.pop("padding_side", None) or _padding_side(facts)
    generate_pad = call.kwargs.get("pad_token_id")
    generate_pad_text = facts.text(generate_pad.value) if generate_pad is not None else ""
    params = {**batch, "padding_side": side, "generate": call.method == "generate", "pad_is_eos": _pad_is_eos(facts),
              "generate_pad": "eos" if generate_pad_text.endswith("eos_token_id") else "pad" if generate_pad_text.endswith("pad_token_id") else None,
              "tokenizer": tokenizer_spec(site, encode) if encode is not None else None}  # fmt: skip
    return {"model": model_spec(site, load), "params": params}


def _batch(site: Site, call: Call) -> dict[str, Any]:
    """How the tokenizer call at `call` pads: its literal texts (None when not literal), padding, `max_length`, truncation."""
    facts = site.facts
    kwargs = {k: facts.kw_value(call, k, cli=False, default=None) for k in ("padding", "pad_to_max_length", "max_length", "truncation", "padding_side")}
    kwargs = {k: None if v is UNKNOWN else v for k, v in kwargs.items()}
    to_max = kwargs["padding"] == "max_length" or (kwargs["pad_to_max_length"] is True and kwargs["padding"] is None)
    length = kwargs["max_length"] if isinstance(kwargs["max_length"], int) and not isinstance(kwargs["max_length"], bool) else None
    side = kwargs["padding_side"] if kwargs["padding_side"] in ("left", "right") else None
    return {"texts": _literal_texts(facts, call), "padding": "max_length" if to_max and length else "longest", "max_length": length,
            "truncation": kwargs["truncation"] not in (None, False, "do_not_truncate"), **({"padding_side": side} if side else {})}  # fmt: skip


MAX_TEXTS = 64  # distinct texts a probe runs; the padding of a row depends on the longest text, not on how many repeat


def _literal_texts(facts: Facts, call: Call) -> list[str] | None:
    """The distinct texts a tokenizer call encodes, when the script spells them out (a string or a list of strings), else None."""
    if call.has_double_star or len(call.positional) > 1 or "text_pair" in call.kwargs:
        return None  # pairs: the probe encodes single texts
    texts = facts.arg_value(call, 0, "text", cli=False)
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, (list, tuple)) or not texts or not all(isinstance(t, str) for t in texts):
        return None
    return list(dict.fromkeys(texts))[:MAX_TEXTS]


def _padding_side(facts: Facts) -> str | None:
    """`tok.padding_side = "left"` or `from_pretrained(..., padding_side="left")`, when the script says."""
    sides = {facts.value(s.value, s.scope, order=s.order) for s in facts.stores if s.key == "padding_side"}
    sides |= {facts.kw_value(load, "padding_side") for load in facts.tokenizer_loads if "padding_side" in load.kwargs}
    return sides.pop() if len(sides) == 1 and sides <= {"left", "right"} else None


def _pad_is_eos(facts: Facts) -> bool:
    """`tok.pad_token = tok.eos_token` (or the ids): the script pads with the end-of-sequence token."""
    return any(s.key in ("pad_token", "pad_token_id") and facts.text(s.value).endswith(("eos_token", "eos_token_id")) for s in facts.stores)


def _label_length(site: Site, finding: Finding, settings: Settings) -> dict:
    from bertlint.facts import is_label_call
    from bertlint.rules.bl202 import padded_shape

    facts = site.facts
    label_calls = [c for c in facts.tokenizer_calls if is_label_call(facts, c)]
    label = site.innermost(finding, label_calls, "label tokenizer call")
    shapes = {padded_shape(facts, c, site.version) for c in facts.tokenizer_calls if c not in label_calls and c.function is label.function}
    label_shape = padded_shape(facts, label, site.version)
    if len(shapes) != 1 or None in shapes or label_shape is None:
        raise CannotLift("the inputs' padding and length are not known")
    heads = {load.head for load in facts.model_loads}
    if len(heads) != 1:
        raise CannotLift("the model's task head is not known")
    return {"model": model_spec(site), "params": {"head": heads.pop(), "inputs": list(shapes.pop()), "labels": list(label_shape)}}


CLASSIFIERS = ("seq-cls", "token-cls")


def _classifier(site: Site) -> tuple[ModelLoad, int]:
    """The one classification model load and its label count."""
    loads = [load for load in site.facts.model_loads if load.head in CLASSIFIERS]
    if len(loads) != 1:
        raise CannotLift("the script does not load exactly one sequence- or token-classification model")
    num_labels = classifier(site.facts, loads[0]).num_labels
    if num_labels is UNKNOWN:
        raise CannotLift("`num_labels` is not known statically")
    return loads[0], num_labels


def _label_range(site: Site, finding: Finding, settings: Settings) -> dict:
    load, num_labels = _classifier(site)
    per_token = load.head == "token-cls"
    found = [labels.values for labels in known_labels(site.facts) if labels.per_token == per_token and all(isinstance(v, int) for v in labels.values)]
    if not found:
        raise CannotLift("the label values are not known statically")
    distinct = sorted(set(found[0]) - {-100})
    if len(distinct) > 16:
        distinct = distinct[:8] + distinct[-8:]
    return {"model": model_spec(site, load), "params": {"head": load.head, "num_labels": num_labels, "labels": distinct}}


def _dtype(site: Site, finding: Finding, settings: Settings) -> dict:
    """Which tensor the script casts to float: a model's `input_ids` or `labels`, or a class loss's target."""
    from bertlint.rules.bl205 import called_model, is_class_loss

    facts = site.facts
    for call in sorted((c for c in facts.calls if site.covers(c.node, finding)), key=lambda c: len(facts.text(c.node))):
        model = called_model(facts, call)
        if model is not None:
            ids, labels = call.arg(0, "input_ids"), call.kwargs.get("labels")
            target = "input_ids" if ids is not None and site.covers(ids, finding) else "labels" if labels is not None and site.covers(labels, finding) else None
            load = _load_of(facts, model.call)
            if target is None or load is None:
                continue
            head = load.head if load.head in CLASSIFIERS else "seq-cls"
            num_labels = classifier(facts, load).num_labels if load.head in CLASSIFIERS else 2
            return {"model": model_spec(site, load), "params": {"target": target, "head": head, "num_labels": num_labels if num_labels is not UNKNOWN else 2}}
        if is_class_loss(facts, call):
            target = call.arg(1, "target")
            values = _float_cast_values(facts, target.value, call) if target is not None else None
            if values:
                return {"params": {"target": "loss", "labels": [int(v) for v in values[:16]], "num_labels": int(max(values)) + 1}}
    raise CannotLift("the float cast is not an argument of a model call or a class loss")


def _float_cast_values(facts: Facts, expr: cst.BaseExpression, call: Call) -> list | None:
    source = float_cast(facts, expr, call.scope, call.order)
    values = facts.value(source, call.scope, order=call.order) if source is not None else None
    return list(values) if isinstance(values, (list, tuple)) and values else None


def _added_tokens(site: Site, finding: Finding, settings: Settings) -> dict:
    from bertlint.rules.bl206 import adds_tokens

    facts = site.facts
    adds = [c for c in facts.calls if c.method in ("add_tokens", "add_special_tokens") and adds_tokens(facts, c)]
    tokens = [token for call in adds for token in _strings(facts.arg_value(call, 0, "new_tokens" if call.method == "add_tokens" else "special_tokens_dict"))]
    if not tokens:
        raise CannotLift("the added tokens cannot be read statically")
    return {"model": model_spec(site), "params": {"tokens": tokens, "count": len(tokens)}}


def _strings(value: Any) -> list[str]:
    """The token strings in an add_tokens/add_special_tokens argument (str, list, or dict of either)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def _learning_rate(site: Site, finding: Finding, settings: Settings) -> dict:
    from bertlint.rules.bl301 import default_rate_sites, model_type_of, rate_sites

    facts = site.facts
    match = next(((call, arg, opt) for call, arg, opt in rate_sites(facts) if site.covers(arg, finding) or site.covers(arg.value, finding)), None)
    default = next((d for d in default_rate_sites(facts, site.version) if site.covers(d.node, finding)), None) if match is None else None
    if match is None and default is None:
        raise CannotLift(f"no learning rate at {finding.line}:{finding.column}")
    if match is not None:
        call, arg, optimizer = match
        lr = facts.value(arg.value, call.scope, order=call.order)
    else:
        lr, optimizer = default.rate, default.optimizer
    if isinstance(lr, bool) or not isinstance(lr, (int, float)):
        raise CannotLift(f"the learning rate `{facts.text(arg.value)}` is not a constant")
    known, loads = trained_model(facts), facts.model_loads
    info = known[1] if known else None
    low, high, label = knowledge.lr_range(info, optimizer, from_scratch=all(load.how != "pretrained" for load in loads), peft=uses_peft(facts),
                                          model_type=None if info else model_type_of(loads), overrides=settings.lr_ranges)  # fmt: skip
    params = {"lr": float(lr), "reference_lr": math.sqrt(low * high), "low": low, "high": high, "optimizer": optimizer, "range": label}
    return {"model": model_spec(site), "params": params}


def _imbalance(site: Site, finding: Finding, settings: Settings) -> dict:
    from bertlint.rules.bl401 import MIN_EXAMPLES, label_distributions

    for counts, origin in label_distributions(site.facts):
        total, common = sum(counts.values()), counts.most_common()
        if total >= MIN_EXAMPLES and len(counts) >= 2 and common[0][1] / max(common[-1][1], 1) >= settings.imbalance_ratio:
            return {"params": {"counts": [[str(label), n] for label, n in common], "origin": origin}}
    raise CannotLift("the label distribution could not be read again")


def _eval_strategy(site: Site, finding: Finding, settings: Settings) -> dict:
    from bertlint.rules.bl402 import eval_strategy

    facts = site.facts
    trainer = site.innermost(finding, facts.trainers, "Trainer(...)")
    args = trainer.arg(1, "args")
    bound = facts.kind(args.value, trainer.scope, trainer.order) if args is not None else None
    if bound is None or bound.kind != "training_args" or bound.call is None:
        raise CannotLift("the Trainer's TrainingArguments are not known")
    keyword, strategy = eval_strategy(facts, bound.call)
    if strategy not in ("steps", "epoch"):
        raise CannotLift(f"`{keyword}` is not 'steps' or 'epoch'")
    return {"model": _optional_model(site), "params": {"eval_strategy": strategy}}


def _optional_model(site: Site) -> dict | None:
    """The script's model when known; Trainer probes fall back to a small BERT otherwise."""
    try:
        return model_spec(site)
    except CannotLift:
        return None


def _compute_loss(site: Site, finding: Finding, settings: Settings) -> dict:
    facts = site.facts
    overrides = [(c, c.methods["compute_loss"]) for c in facts.classes.values() if "compute_loss" in c.methods]
    around = [(c, fn) for c, fn in overrides if site.covers(fn, finding)] or overrides
    if not around:
        raise CannotLift("no `compute_loss` override found")
    cls, fn = around[0]
    p = fn.params
    params = [{"name": x.name.value, "kind": "positional", "default": x.default is not None} for x in (*p.posonly_params, *p.params)]
    if isinstance(p.star_arg, cst.Param):
        params.append({"name": p.star_arg.name.value, "kind": "var_positional", "default": False})
    params += [{"name": x.name.value, "kind": "keyword_only", "default": x.default is not None} for x in p.kwonly_params]
    if p.star_kwarg is not None:
        params.append({"name": p.star_kwarg.name.value, "kind": "var_keyword", "default": False})
    return {"model": _optional_model(site), "params": {"class": cls.name, "params": params}}


def _memory(site: Site, finding: Finding, settings: Settings) -> dict:
    from bertlint.rules.bl502 import training_run

    if trained_model(site.facts) is None:
        raise CannotLift("the trained checkpoint is not known")
    run = training_run(site.facts, site.version)
    if run is None:
        raise CannotLift("the batch size, sequence length or accumulation steps are not known statically, or the weights are quantized")
    precision = min(run.precisions, key=lambda p: run.estimate(p, run.micro).total)
    kind = {"adafactor": "adafactor", "sgd_momentum": "sgd"}.get(run.optimizer, "adamw")
    estimate = run.estimate(precision, run.micro)
    params = dict(batch=run.micro, seq=run.seq, target=run.target, precision=precision, attention=run.attention, gradient_checkpointing=run.checkpointing,
                  optimizer=run.optimizer, optimizer_kind=kind, head=run.load.head, estimate_bytes=estimate.total, context_bytes=estimate.overhead,
                  activation_bytes_per_example=run.estimate(precision, 2).total - run.estimate(precision, 1).total, budget_gib=settings.gpu_memory_gib)  # fmt: skip
    return {"model": model_spec(site, run.load), "params": params}


def _missing_pad(site: Site, finding: Finding, settings: Settings) -> dict:
    """What asks BL209's tokenizer to pad: a tokenizer call (its padding keywords and texts), `tokenizer.pad`, or a collator."""
    from bertlint.rules.bl209 import PADDING_COLLATORS

    facts = site.facts
    tokenizer_calls = {id(c.node) for c in facts.tokenizer_calls}
    calls = [c for c in facts.calls if id(c.node) in tokenizer_calls or c.method == "pad" or c.qualname in PADDING_COLLATORS]
    call = site.innermost(finding, calls, "call that pads")
    values = {k: facts.kw_value(call, k, default=None) for k in ("padding", "pad_to_max_length", "max_length")}
    kwargs = {k: v for k, v in values.items() if k in call.kwargs and v is not UNKNOWN}  # an unknown `max_length`: the tokenizer's own
    if call.qualname in PADDING_COLLATORS:
        arg = call.arg(0, "tokenizer")
        mlm = {}
        if call.qualname.endswith("LanguageModeling"):  # `mlm=True` by default (data_collator.py)
            mlm = {"mlm": facts.arg_value(call, 1, "mlm", default=True)}
            if mlm["mlm"] is UNKNOWN:
                raise CannotLift("the collator's `mlm=` is not a constant")
        params = {"kind": "collator", "collator": call.qualname.rsplit(".", 1)[-1], **mlm, "tokenizer": tokenizer_spec(site, call, arg.value)}
    elif call.method == "pad":
        params = {"kind": "pad", "kwargs": kwargs, "tokenizer": tokenizer_spec(site, call)}
    else:
        params = {"kind": "call", "kwargs": kwargs, "batch": padding_of(facts, call).batch is not False, "tokenizer": tokenizer_spec(site, call),
                  "texts": _literal_texts(facts, call)}  # fmt: skip
    return {"params": params}


def _generation_padding(site: Site, finding: Finding, settings: Settings) -> dict:
    """BL210: the prompts' tokenizer call and the decoder-only model whose `generate` continues them."""
    from bertlint.rules.bl210 import generated_load, prompt_encoding

    facts = site.facts
    encode = site.innermost(finding, facts.tokenizer_calls, "tokenizer call")
    generate = next((c for c in facts.calls if c.method == "generate" and (p := prompt_encoding(facts, c)) is not None and p.node is encode.node), None)
    load = generated_load(facts, generate) if generate is not None else None
    if load is None:
        raise CannotLift("the model that generates from these prompts is not known")
    batch = _batch(site, encode)
    batch.pop("padding_side", None)  # the probe pads on both sides
    return {"model": model_spec(site, load), "params": {**batch, "pad_is_eos": _pad_is_eos(facts), "tokenizer": tokenizer_spec(site, encode)}}


LIGHTNING_TRUE_HALF = "16-true"  # Lightning's pure float16 weights (no autocast)


def _fp16_t5(site: Site, finding: Finding, settings: Settings) -> dict:
    """BL306: the T5-family model and how float16 is turned on: autocast (fp16=True, mixed_precision, 16-mixed) or half weights."""
    from bertlint.rules.bl306 import trained_t5

    facts = site.facts
    models = trained_t5(facts)
    load = next((load for load in facts.model_loads if id(load.call) in models), None)
    if load is None:
        raise CannotLift("the T5-family model is not known")
    around = [c for c in facts.calls if site.covers(c.node, finding)]
    half = any(c.method in ("half", "to") or facts.kw_value(c, "precision", default=None) == LIGHTNING_TRUE_HALF for c in around)
    return {"model": model_spec(site, load), "params": {"precision": "half" if half else "autocast"}}


def _keras_loss(site: Site, finding: Finding, settings: Settings) -> dict:
    """BL404: which Keras cross-entropy the model is compiled with, and its label count."""
    from bertlint.rules.bl404 import hf_tf_model, probability_loss

    facts = site.facts
    call = site.innermost(finding, [c for c in facts.calls if c.method == "compile"], "`compile(...)`")
    load, arg = hf_tf_model(facts, call), call.arg(1, "loss")
    found = probability_loss(facts, arg.value, call) if load is not None and arg is not None else None
    if found is None:
        raise CannotLift("the compiled loss could not be read again")
    name = found[0]
    kind = next((k for k in ("sparse", "binary") if k in name.lower()), "categorical")
    num_labels = classifier(facts, load).num_labels if load.head in CLASSIFIERS else UNKNOWN
    known = isinstance(num_labels, int) and not isinstance(num_labels, bool) and num_labels >= 2
    return {"params": {"loss": name, "kind": kind, "num_labels": num_labels if known else 2, "num_labels_known": known}}


LIFTERS: dict[str, Callable[[Site, Finding, Settings], dict]] = {
    "BL101": _tokenizer_call, "BL102": _tokenizer_call, "BL104": _position_limit, "BL201": _attention_mask,
    "BL202": _label_length, "BL204": _label_range, "BL205": _dtype, "BL206": _added_tokens, "BL301": _learning_rate,
    "BL401": _imbalance, "BL402": _eval_strategy, "BL501": _memory, "BL502": _memory, "BL603": _compute_loss,
    "BL209": _missing_pad, "BL210": _generation_padding, "BL306": _fp16_t5, "BL404": _keras_loss, **training_steps.LIFTERS,
}  # fmt: skip


def spec_for(site: Site, finding: Finding, settings: Settings) -> dict:
    """The probe spec for one finding (without its id); CannotLift when a value is missing."""
    lifted = LIFTERS[finding.code](site, finding, settings)
    return {"code": finding.code, "model": lifted.get("model"), "params": lifted["params"]}
