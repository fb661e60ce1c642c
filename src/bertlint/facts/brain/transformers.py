"""transformers and the training objects around it: tokenizers and what they encode (BatchEncoding and its ids),
models and their loads, configs, training arguments, trainers, collators, optimizers, accelerators, losses, and the
file's own torch modules.

Sources: a tokenizer is called, or `encode`/`encode_plus`/`batch_encode_plus`/`pad`, for a `BatchEncoding` (a dict
of `input_ids`, `attention_mask`, ... also read as attributes and with `.get`), except `encode`, which returns the
ids alone (transformers 5.24 tokenization_utils_base.py:2282 `encode(text, ..., padding=False, ...)` returns
`encoded_inputs["input_ids"]` at :2332; 4.x the same); `convert_tokens_to_ids` gives ids;
`generate` gives generated ids; a model class loads with `from_pretrained`/`from_config` or its constructor.

PEFT: `PeftModel.from_pretrained(model, model_id, ...)` (and its task subclasses) loads the adapter `model_id` onto the
base `model` (peft peft_model.py:416, commit 5d602fdb): the checkpoint is its second argument and the model keeps the
base model's kind; `AutoPeftModelFor*.from_pretrained(pretrained_model_name_or_path, ...)` (auto.py:89) loads the
adapter and its base model of the class its name says (auto.py:202-229).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from bertlint.facts.abstract import UNKNOWN, Binding, Instance, Pack, Record
from bertlint.facts.names import ENCODE_METHODS, TRAINING_ARGS_CLASSES, TRANSFORMERS_ROOTS, is_model_class, is_tokenizer_class, is_trainer_class, is_transformers_name, model_head, same_symbol
from bertlint.facts.nodes import Call, Scope, dotted

OPTIMIZER_MODULES = (
    "torch.optim.", "torch.distributed.optim.", "bitsandbytes.optim.", "apex.optimizers.", "deepspeed.ops.",
    "tensorflow.keras.optimizers.", "keras.optimizers.", "tf_keras.optimizers.", "tensorflow.optimizers.",
)
NOT_OPTIMIZERS = (".lr_scheduler.", ".schedules.", ".swa_utils.")
# learning-rate schedules stepped like optimizers: torch's lr_scheduler classes, transformers' `get_*schedule*`
# factories (optimization.py)
TORCH_SCHEDULERS = "torch.optim.lr_scheduler."
TRANSFORMERS_OPTIMIZERS = ("AdamW", "Adafactor", "AdamWeightDecay")
# Special tokens a tokenizer adds around a text that `tokenize()` leaves out, written as strings (transformers 5.24
# defaults: BERT `cls_token="[CLS]"`, `sep_token="[SEP]"` models/bert/tokenization_bert.py:86; RoBERTa `bos_token="<s>"`,
# `eos_token="</s>"` models/roberta/tokenization_roberta.py:117; GPT-2 `"<|endoftext|>"` models/gpt2/tokenization_gpt2.py:69)
# and as the tokenizer attributes that hold them (tokenization_utils_base.py:995 `SPECIAL_TOKENS_ATTRIBUTES`).
SPECIAL_TOKENS = ("[CLS]", "[SEP]", "<s>", "</s>", "<|endoftext|>")
SPECIAL_TOKEN_ATTRIBUTES = ("cls_token", "sep_token", "bos_token", "eos_token")
# A processor's call (`processor(images=..., text=..., padding=True)`) hands `text` and the text keywords to its
# tokenizer and returns that encoding with the other modalities' features: transformers 5.24 processing_utils.py:672
# `ProcessorMixin.__call__(images, text, videos, audio, **kwargs)`, :719 `self.tokenizer(text, **text_kwargs)`. Older
# processors order their parameters each their own way (CLIPProcessor takes `text` first): only `text=` is read.
NOT_PROCESSORS = ("ImageProcessor", "VideoProcessor", "LogitsProcessor", "AudioProcessor")
# transformers collators that pad the batch they make: (position, keyword) of the `padding` field that may turn it off
# (default True), or None where they always pad. transformers 5.24 data/data_collator.py: DataCollatorWithPadding
# :220, DataCollatorForTokenClassification :274, DataCollatorForMultipleChoice :453 (`padding` second after `tokenizer`),
# DataCollatorForSeq2Seq :528 (third, after `model`); DataCollatorForLanguageModeling :772-788 (`tokenizer.pad`, or
# `_torch_collate_batch` filling with the pad id), DataCollatorForPermutationLanguageModeling :1052; 4.x
# DataCollatorForWholeWordMask (a DataCollatorForLanguageModeling "honoring their tokenizer's pad_token"). Not
# DefaultDataCollator nor DataCollatorWithFlattening (:1261, padding-free: no pad, no mask by design).
PADDING_COLLATORS = {
    "DataCollatorWithPadding": (1, "padding"), "DataCollatorForTokenClassification": (1, "padding"),
    "DataCollatorForMultipleChoice": (1, "padding"), "DataCollatorForSeq2Seq": (2, "padding"),
    "DataCollatorForLanguageModeling": None, "DataCollatorForPermutationLanguageModeling": None, "DataCollatorForWholeWordMask": None,
}
# The base model a transformers model with a head holds under its class's `base_model_prefix`, whose forward takes
# `input_ids` and `attention_mask` as the whole model's does: transformers 5.24 models/<type>/modeling_<type>.py,
# `base_model_prefix` of BertPreTrainedModel "bert" (bert:538), DistilBert "distilbert" (distilbert:288), RoBERTa and
# XLM-RoBERTa "roberta" (roberta:470, xlm_roberta:492), DeBERTa-v2 "deberta" (deberta_v2:680), ALBERT "albert",
# ELECTRA "electra", MPNet "mpnet", Longformer "longformer", GPT-2 and T5 "transformer" (gpt2:416, t5:538: the
# attribute of T5ForSequenceClassification; T5ForConditionalGeneration has none). (`model` — Llama, BART, ... — is a
# wrapper's attribute too: brain.wrappers.) The encoder of an encoder-decoder model (`T5ForConditionalGeneration.encoder`,
# a T5Stack, t5:919, forward(input_ids, attention_mask, ...) t5:668; `BartModel.encoder`, a BartEncoder, bart:690,
# forward bart:507; `get_encoder()`, modeling_utils.py:2206, returns the `encoder` attribute) takes `input_ids` and
# `attention_mask` first; an encoder-only model's `encoder` takes hidden states (BertEncoder), so only seq2seq models'.
BASE_MODEL_PREFIXES = frozenset({"bert", "distilbert", "roberta", "deberta", "albert", "electra", "mpnet", "longformer", "transformer"})
PART = "part"  # the `detail` of a model binding that is a part of the model (its base model, its encoder)
# A tokenizer's `pad_token_id` (transformers 5.24 tokenization_utils_base.py `PreTrainedTokenizerBase.__getattr__`:1317,
# the id of its `pad_token`, None where it has none) is the id it pads with (`_pad`:2865 `[self.pad_token_id] * difference`):
# a value of its own wherever it is passed or stored, so ids extended with it are padded (brain.tensors `operation`).
PAD_ID = "pad_token_id"
# names of functions that make, change or hand over a tokenizer: calling one encodes nothing
TOKENIZER_VERBS = ("set_", "get_", "load_", "build_", "make_", "create_", "init_", "setup_", "prepare_", "train_", "save_", "update_", "add_", "register_")
# `EncoderDecoderModel.from_encoder_decoder_pretrained(encoder_pretrained_model_name_or_path,
# decoder_pretrained_model_name_or_path, ...)` loads both halves from pretrained checkpoints (transformers 5.24
# models/encoder_decoder/modeling_encoder_decoder.py:183; the vision and speech variants vision_encoder_decoder:157,
# speech_encoder_decoder:165; the same in 4.x): a pretrained load, whose checkpoint is known where both halves name one.
ENCODER_DECODER_LOAD = "from_encoder_decoder_pretrained"
# Their constructors take the two halves as models, `EncoderDecoderModel(config=None, encoder=None, decoder=None)`
# (modeling_encoder_decoder.py `__init__`; vision and speech alike): built of two pretrained halves, the model is pretrained.
ENCODER_DECODER_CLASSES = frozenset({"EncoderDecoderModel", "VisionEncoderDecoderModel", "SpeechEncoderDecoderModel"})
# PEFT classes whose `from_pretrained(model, model_id)` puts an adapter on a base model (peft_model.py:119, 1745-3088)
PEFT_ADAPTER_LOADS = frozenset({
    "PeftModel", "PeftModelForSequenceClassification", "PeftModelForCausalLM", "PeftModelForSeq2SeqLM",
    "PeftModelForTokenClassification", "PeftModelForQuestionAnswering", "PeftModelForFeatureExtraction", "PeftMixedModel",
})


@dataclass(repr=False, eq=False)
class ModelLoad:
    """A transformers model the file loads or builds: the call, its class, how, and its checkpoint."""

    call: Call
    class_name: str  # qualified name of the transformers class (or the first transformers base of a local class)
    how: str  # "pretrained" | "config" | "constructor"
    checkpoint: Any  # resolved checkpoint string, or UNKNOWN
    head: str
    keras: bool
    adapter: bool = False  # a PEFT adapter loaded onto a base model the call is given: the model is the base's kind


def call(ev, call) -> Any:
    f = ev.f
    if is_tokenizer_load(f, call):
        return Binding("tokenizer", call)
    if (load := model_load(f, call)) is not None:
        base = call.arg(0, "model") if load.adapter else None
        return Binding("model", call, ev.kind(base.value), "peft") if base is not None else Binding("model", call)
    q = call.qualname
    if q:
        short = q.rsplit(".", 1)[-1]
        if (kind := object_kind(q)) is not None:
            return Binding(kind, call)
        if short in TRAINING_ARGS_CLASSES and is_transformers_name(q):
            return Binding("training_args", call)
        if call.method == "from_pretrained" and is_processor_class(q.rsplit(".", 1)[0]):
            return Binding("processor", call)
        config_class = q.rsplit(".", 1)[0] if call.method == "from_pretrained" else q
        if config_class.endswith("Config") and is_transformers_name(q):
            return Binding("config", call)  # `BertConfig(...)`, `AutoConfig.from_pretrained(...)`
        if any(is_trainer_class(b) for b in f.class_bases(q)):
            return Binding("trainer", call)
        if module_class(f, q) is not None:
            return Binding("module", call)  # the file's own torch module: its forward's parameters come from its calls
        if short.startswith("DataCollator") and is_transformers_name(q):
            return Binding("collator", call)
        return None
    func = call.node.func
    if call.method is None and isinstance(func, cst.Name) or isinstance(func, cst.Attribute):
        if looks_like_tokenizer(f, func, ev.scope) and ev.kind(func) is None:
            return Binding("encoding", call)  # `tokenizer(texts)` with an unresolved tokenizer
    return None


def method(ev, receiver, call) -> Any:
    if not isinstance(receiver, Binding):
        return None
    kind, name = receiver.kind, call.method
    if kind == "tokenizer" and name == "encode":
        return Binding("ids", call, Binding("encoding", call), "input_ids")  # its encoding's ids, padded as it says
    if kind == "tokenizer" and (name in ENCODE_METHODS or name == "pad"):
        return Binding("encoding", call)
    if kind == "tokenizer" and name == "apply_chat_template":
        return rendered_chat(ev, call)
    if kind == "tokenizer" and name == "convert_tokens_to_ids":
        return Binding("ids", call, None, "manual")
    if kind == "model" and name == "generate":
        return Binding("generated", call)
    if kind == "model" and name == "forward" and _returns_output(ev.f, receiver, call):
        return Binding("output", call, receiver)  # `model.forward(...)`: what `model(...)` returns, without the hooks
    if kind == "model" and name == "get_encoder" and not call.node.args and encoder_decoder(ev.f, receiver):
        return Binding("model", receiver.call, receiver, PART)
    if kind == "encoding" and name == "get":
        key = ev.f.arg_value(call, 0)
        return Binding("ids", receiver.call, receiver, key if isinstance(key, str) else "")
    return None


def rendered_chat(ev, call) -> Any:
    """`tok.apply_chat_template(messages, tokenize=False)`: the one string a conversation (a list of message dicts)
    renders to; a list of conversations renders to a list of strings (transformers 5.24 tokenization_utils_base.py:3040
    `apply_chat_template(conversation, ..., tokenize=True, ...)`, :3151-3159 batched when the first element is a list,
    :3186 one string otherwise; 4.x the same). Tokenized it is an encoding or its ids by `return_dict` (5.x default True,
    4.x False): not followed, its texts are a conversation, not a tokenizer call's."""
    if ev.f.kw_value(call, "tokenize", cli=ev.cli, default=True) is not False:
        return None
    arg = call.arg(0, "conversation")
    conversation = ev.sub(arg.value, call.scope, call.order) if arg is not None else UNKNOWN
    first = conversation.items[0] if isinstance(conversation, Pack) and conversation.items else conversation[0] if isinstance(conversation, (list, tuple)) and conversation else None
    return Instance("text", call) if isinstance(first, (dict, Record)) else UNKNOWN


def called(ev, obj, call) -> Any:
    if isinstance(obj, Binding) and obj.kind == "tokenizer":
        return Binding("encoding", call)
    if isinstance(obj, Binding) and obj.kind == "model" and _returns_output(ev.f, obj, call):
        return Binding("output", call, obj)  # a `ModelOutput`: a dict of tensors (unpacking it gives its keys)
    if isinstance(obj, Binding) and obj.kind == "processor" and "text" in call.kwargs:
        return Binding("encoding", call, None, "processor")  # its tokenizer's encoding of `text=`, and more
    if isinstance(obj, Binding) and obj.kind == "collator":
        return Binding("collated", call, obj)  # `batch = collator(features)`: a dict of tensors
    return None


def _returns_output(values, model: Binding, call: Call) -> bool:
    """The forward `call` of `model` certainly returns a `ModelOutput` (an `OrderedDict` subclass, whose iteration gives
    its keys, not its tensors: `loss, logits = model(...)` binds two strings): a transformers PyTorch class of its own
    (no subclass of the file, no Hub code) loaded with `from_pretrained` with none of `config=`, `torchscript=`,
    `trust_remote_code=` (nor a `**` that may pass them), load and forward given no `return_dict=` but `True` (the
    forward's `**` an encoding's or a collated batch's: a tokenizer's or collator's fields only), no `*`, on
    transformers >= 4.0, where `PretrainedConfig.return_dict` defaults to True (4.0.0 configuration_utils.py:166, 3.5.1
    :166 False; 5.24.0 configuration_utils.py:418 `return_dict: bool | None = True`; a forward given none falls back to
    the config's: 4.0.0 models/bert/modeling_bert.py:802 `config.use_return_dict`, 5.24.0 utils/generic.py:1032
    `can_return_tuple`; `ModelOutput(OrderedDict)` 4.0.0 file_utils.py:1292, 5.24.0 utils/generic.py:469, no `__iter__`
    of its own: on 5.24.0 `loss, logits = BertForSequenceClassification(tiny)(ids, labels=y)` binds 'loss' and
    'logits'), and the file never stores a `return_dict` or `torchscript` attribute (`model.config.return_dict = False`)."""
    release = dict(values.runtime.releases).get("transformers")
    load = model_load(values, model.call) if model.detail == "" and model.parent is None and model.call is not None else None
    if release is None or release < (4, 0) or load is None or load.keras or load.adapter or load.how != "pretrained" \
            or not is_transformers_name(model.call.qualname) or any(arg.star == "*" for arg in call.node.args):
        return False
    if any(values.gives(load.call, k) is not False for k in ("config", "torchscript", "trust_remote_code")) \
            or values.kw_value(load.call, "return_dict", cli=False, default=True) is not True:
        return False
    stars = [arg for arg in call.node.args if arg.star == "**"]
    if stars and all(_encoding(values, arg.value, call) for arg in stars):
        forward = "return_dict" not in call.kwargs  # `model(**batch)`: a tokenizer's or a collator's fields, never `return_dict`
    else:
        forward = values.kw_value(call, "return_dict", cli=False, default=True) is True
    return forward and not _output_settings_stored(values)


def _encoding(values, expr: cst.BaseExpression, call: Call) -> bool:
    found = values.kind(expr, call.scope, call.order)
    return isinstance(found, Binding) and found.kind in ("encoding", "collated")


def _output_settings_stored(values) -> bool:
    """The file stores a `return_dict` or `torchscript` attribute somewhere (`model.config.return_dict = False`): read
    once per file, not once per forward."""
    return values.memoised(("output settings stored",), lambda: any(
        isinstance(s.target, cst.Attribute) and s.target.attr.value in ("return_dict", "torchscript") for s in (*values.stores, *values.touched)))


def padding_collator(values, collator: Binding | None) -> str | None:
    """The class name of a transformers collator that pads the batches it makes, or None."""
    if collator is None or collator.kind != "collator" or collator.call is None or collator.call.qualname is None:
        return None
    name = collator.call.qualname.rsplit(".", 1)[-1]
    if name not in PADDING_COLLATORS:
        return None
    field = PADDING_COLLATORS[name]
    if field is None:
        return name
    arg = collator.call.arg(*field)
    padding = values.value(arg.value, collator.call.scope, order=collator.call.order) if arg is not None else True
    return name if padding is True or padding in ("longest", "max_length") else None


def attribute(ev, base, attr: str) -> Any:
    if isinstance(base, Binding) and base.kind == "tokenizer" and attr == PAD_ID:
        return Instance("pad_id", base.call)  # the id its pad token has: the value ids padded by hand are extended with
    if isinstance(base, Binding) and base.kind == "encoding":
        return Binding("ids", base.call, base, attr)
    if isinstance(base, Binding) and base.kind == "model" and (attr in BASE_MODEL_PREFIXES or attr == "encoder" and encoder_decoder(ev.f, base)):
        return Binding("model", base.call, base, PART)  # `model.bert`, `model.encoder`: a forward of its text stack
    return None


def item(values, base, key) -> Any:
    if not isinstance(base, Binding):
        return None
    if base.kind == "encoding" and isinstance(key, slice):
        return UNKNOWN  # a fast tokenizer's `tokenizers.Encoding` objects
    if base.kind == "encoding":
        return Binding("ids", base.call, base, key if isinstance(key, str) else "")
    if base.kind == "ids":
        return base  # an example's ids, a slice of them
    if base.kind == "collated":
        return Binding("ids", base.call, base, key) if isinstance(key, str) else UNKNOWN
    return None


def mapping(value) -> bool | None:
    return True if isinstance(value, Binding) and value.kind in ("encoding", "collated", "output") else None


def holds_tokenizer(values, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None) -> bool:
    """`expr` is a tokenizer: evaluated to one, or an unresolved name plainly called `tokenizer`."""
    found = values.kind(expr, scope, order)
    return found.kind == "tokenizer" if found is not None else looks_like_tokenizer(values, expr, scope)


def looks_like_tokenizer(values, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    """An unresolved name that is plainly a tokenizer: a parameter or attribute called `tokenizer`."""
    text = dotted(expr)
    if text is None or not values.imported(*TRANSFORMERS_ROOTS):
        return False
    last = text.rsplit(".", 1)[-1]
    if not (last in ("tokenizer", "tok", "processing_class") or last.endswith("_tokenizer") or last.startswith("tokenizer_")):
        return False
    if last.startswith(TOKENIZER_VERBS):
        return False  # `load_tokenizer(path)`, `handler.set_tokenizer(tok)`: a function that makes or takes one
    owner = scope.lookup_scope(last) if "." not in text else None
    if owner is not None and owner.events.get(last):
        return False  # bound to something we could not classify: not our business
    return last not in values.functions


def is_tokenizer_load(values, call: Call) -> bool:
    if call.qualname is None:
        return False
    base, _, tail = call.qualname.rpartition(".")
    # A resolved callee is a class or a function, never a method of an object: `transformers.BertTokenizer(...)` constructs.
    candidates = values.class_bases(base if tail == "from_pretrained" else call.qualname)
    return any(is_tokenizer_class(c) for c in candidates)


def model_load(values, call: Call) -> ModelLoad | None:
    if call.qualname is None:
        return None
    if call.method in ("from_pretrained", "from_config", ENCODER_DECODER_LOAD):
        cls = call.qualname.rsplit(".", 1)[0]
        how = "config" if call.method == "from_config" else "pretrained"
    else:  # `BertForMaskedLM(config)`, `transformers.BertForMaskedLM(config)`
        cls, how = call.qualname, "constructor"
    tf_class = next((b for b in values.class_bases(cls) if is_model_class(b)), None)
    if tf_class is None:
        return None
    checkpoint: Any = UNKNOWN
    adapter = how == "pretrained" and is_adapter_load(tf_class)
    if how == "constructor" and tf_class.rsplit(".", 1)[-1] in ENCODER_DECODER_CLASSES:
        halves = [_load_of(values, call.arg(1, "encoder"), call), _load_of(values, call.arg(2, "decoder"), call)]
        if all(half is not None and half.how == "pretrained" for half in halves):  # built of two pretrained halves
            how = "pretrained"
            names = {half.checkpoint for half in halves}
            checkpoint = names.pop() if len(names) == 1 else UNKNOWN
    elif how == "pretrained":
        halves = [call.arg(0, "encoder_pretrained_model_name_or_path"), call.arg(1, "decoder_pretrained_model_name_or_path")] if call.method == ENCODER_DECODER_LOAD else [checkpoint_argument(call, tf_class)]
        names = {values.value(arg.value, call.scope, order=call.order) if arg is not None else UNKNOWN for arg in halves}
        checkpoint = names.pop() if len(names) == 1 else UNKNOWN  # both halves of one checkpoint, or none known
    if not isinstance(checkpoint, str):
        checkpoint = UNKNOWN
    last = tf_class.rsplit(".", 1)[-1]
    return ModelLoad(call, tf_class, how, checkpoint, model_head(last), keras=last.startswith("TF"), adapter=adapter)


def _load_of(values, arg: cst.Arg | None, call: Call) -> ModelLoad | None:
    """The load of the model an argument holds (not through `values.model_loads`, which is being built)."""
    bound = values.kind(arg.value, call.scope, call.order) if arg is not None else None
    return model_load(values, bound.call) if isinstance(bound, Binding) and bound.kind == "model" and bound.call is not None else None


def is_processor_class(qualname: str) -> bool:
    """A multimodal processor (`AutoProcessor`, `LlavaProcessor`, ...): not an image, video or logits processor."""
    last = qualname.rsplit(".", 1)[-1]
    return is_transformers_name(qualname) and last.endswith("Processor") and not last.endswith(NOT_PROCESSORS)


def is_adapter_load(class_name: str) -> bool:
    return class_name.split(".", 1)[0] == "peft" and class_name.rsplit(".", 1)[-1] in PEFT_ADAPTER_LOADS


def checkpoint_argument(call: Call, class_name: str | None = None) -> cst.Arg | None:
    """The argument of a `from_pretrained` call that names the checkpoint: the first, or a PEFT adapter load's second
    (`PeftModel.from_pretrained(model, model_id)`)."""
    cls = class_name or (call.qualname or "").rsplit(".", 1)[0]
    return call.arg(1, "model_id") if is_adapter_load(cls) else call.arg(0, "pretrained_model_name_or_path")


def load_behind(values, model: Binding | None) -> ModelLoad | None:
    """The load a model comes from, through wrappers (`get_peft_model`, `.to()`, DataParallel): the base model's load
    for an adapter loaded onto it (`PeftModel.from_pretrained(base, id)` has the base's kind)."""
    while model is not None and model.kind == "model":
        load = next((load for load in values.model_loads if load.call is model.call), None)
        if load is not None and not (load.adapter and model.parent is not None):
            return load
        model = model.parent
    return None


def encoder_decoder(values, model: Binding) -> bool:
    """The model is an encoder-decoder (seq2seq) one: by its checkpoint when known, else by its class's head."""
    load = load_behind(values, model)
    if load is None:
        return False
    info = values.checkpoint_info(load)
    return info.architecture == "seq2seq" if info is not None else load.head == "seq2seq"


# Libraries whose estimators also have `fit(X, y)` and are no keras model (scikit-learn `BaseEstimator.fit`, the
# xgboost/lightgbm/catboost scikit-learn wrappers).
NOT_KERAS_FIT = ("sklearn.", "xgboost.", "lightgbm.", "catboost.")


def is_keras_model(values, call: Call) -> bool:
    recv = values.kind(call.receiver, call.scope, call.order)
    if recv is not None and recv.kind in ("model", "keras_model"):
        return True
    if not (values.imported("tensorflow", "keras", "tf_keras") and recv is None and call.receiver is not None and "model" in (dotted(call.receiver) or "").lower()):
        return False
    return not _estimator(values, call)


def _estimator(values, call: Call) -> bool:
    """The receiver of `call` is bound, where it runs, to a scikit-learn-style estimator (`model = LogisticRegression()`)."""
    made = values.definition(call.receiver, call.scope, call.order, identity=True)
    maker = values.call_of(made.value) if made is not None and isinstance(made.value, cst.Call) else None
    return maker is not None and (maker.qualname or "").startswith(NOT_KERAS_FIT)


def object_kind(qualname: str) -> str | None:
    """optimizer | scheduler | accelerator | gradient_tape | loss, for a constructor resolved through the imports."""
    root, last = qualname.split(".", 1)[0], qualname.rsplit(".", 1)[-1]
    if qualname.startswith(TORCH_SCHEDULERS) and last[:1].isupper() or is_transformers_name(qualname) and last.startswith("get_") and "schedule" in last:
        return "scheduler"
    if qualname.startswith(OPTIMIZER_MODULES) and last[:1].isupper():
        return None if any(part in qualname for part in NOT_OPTIMIZERS) else "optimizer"
    if is_transformers_name(qualname) and last in TRANSFORMERS_OPTIMIZERS:
        return "optimizer"
    if root == "accelerate" and last == "Accelerator":
        return "accelerator"
    if root == "tensorflow" and last == "GradientTape":
        return "gradient_tape"
    if qualname.startswith("torch.nn.") and last.endswith("Loss"):
        return "loss"
    return None


def module_class(values, qualname: str) -> str | None:
    """The file's own `torch.nn.Module` subclass (directly, or through its own classes), by its qualified name."""
    if not qualname.startswith("<local>.") or qualname.count(".") != 1:
        return None
    bases = values.class_bases(qualname)
    return qualname.split(".", 1)[1] if any(same_symbol(b, "torch.nn.Module") for b in bases if b.startswith("torch.")) else None
