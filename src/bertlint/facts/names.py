"""Name classification: which qualified names are transformers tokenizers, models, trainers and training arguments, and
the names a script gives its labels."""

from __future__ import annotations

import re


# ---------------------------------------------------------------------------------------------
# name classification (transformers & torch vocabulary)

TRANSFORMERS_ROOTS = ("transformers", "peft", "trl", "sentence_transformers")
# Model classes by their name. transformers 5.24 exports 30 classes named `*Encoder`/`*Decoder` (BertGenerationEncoder
# and -Decoder, DPRQuestionEncoder, ProphetNetEncoder, ...); all but LXMERT's two are `PreTrainedModel`s (checked with
# `issubclass(getattr(transformers, name), PreTrainedModel)` over `dir(transformers)`). The TensorFlow base models' body,
# `TF*MainLayer` (a keras Layer whose `call(input_ids, attention_mask=None, ...)` each `TF*Model` runs: 4.30.2
# models/bert/modeling_tf_bert.py:709 `TFBertMainLayer`, distilbert:341, roberta:573, xlm_roberta:663), is a model too.
_MODEL_SUFFIX = re.compile(r"(Model|LMHeadModel|For[A-Z]\w*|Transformer|Encoder|Decoder|^TF\w+MainLayer)$")
_NOT_MODEL = re.compile(r"(Config|Tokenizer|TokenizerFast|Processor|FeatureExtractor|Trainer|Arguments|Pipeline|Collator|Output|Callback|^Lxmert\w*Encoder$)")


def is_transformers_name(qualname: str | None) -> bool:
    return bool(qualname) and qualname.split(".", 1)[0] in TRANSFORMERS_ROOTS


# transformers 5.x tokenizer classes not named "Tokenizer": tokenization_utils_tokenizers.py:87 `TokenizersBackend`,
# tokenization_python.py:405 `PythonBackend`, tokenization_utils_sentencepiece.py:45 `SentencePieceBackend`,
# tokenization_mistral_common.py:194 `MistralCommonBackend` (each a `PreTrainedTokenizerBase`; 5.24)
TOKENIZER_BACKENDS = frozenset({"TokenizersBackend", "PythonBackend", "SentencePieceBackend", "MistralCommonBackend"})


def is_tokenizer_class(qualname: str | None) -> bool:
    if not is_transformers_name(qualname):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return "Tokenizer" in last and not last.endswith("Trainer") or last in TOKENIZER_BACKENDS


def is_model_class(qualname: str | None) -> bool:
    if not is_transformers_name(qualname):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return bool(_MODEL_SUFFIX.search(last)) and not _NOT_MODEL.search(last)


def model_head(class_name: str) -> str:
    """The task head a model class trains, from its name (AutoModelForCausalLM -> causal-lm)."""
    name = class_name.rsplit(".", 1)[-1]
    table = (
        ("SequenceClassification", "seq-cls"),
        ("TokenClassification", "token-cls"),
        ("CausalLM", "causal-lm"),
        ("LMHeadModel", "causal-lm"),
        ("MaskedLM", "masked-lm"),
        ("PreTraining", "masked-lm"),
        ("Seq2SeqLM", "seq2seq"),
        ("ConditionalGeneration", "seq2seq"),
        ("QuestionAnswering", "qa"),
        ("MultipleChoice", "multiple-choice"),
    )
    for needle, head in table:
        if needle in name:
            return head
    return "base"


# ---------------------------------------------------------------------------------------------

ENCODE_METHODS = frozenset({"__call__", "encode_plus", "batch_encode_plus", "encode", "prepare_seq2seq_batch"})
TRAINING_ARGS_CLASSES = ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "RewardConfig")
# The names a script gives its labels (`labels`, `y_train`, ...): read as label variables and label columns.
LABEL_NAMES = frozenset({"labels", "label", "y", "y_train", "train_labels", "targets", "target", "train_y", "ytrain", "classes"})
BUILTINS = frozenset({"int", "float", "str", "len", "list", "dict", "tuple", "range", "round", "min", "max", "sum", "abs", "print", "open", "set", "sorted", "zip", "enumerate", "map", "bool", "isinstance", "super", "iter", "next", "getattr"})


def same_symbol(found: str, wanted: str) -> bool:
    """`transformers.trainer.Trainer` is `transformers.Trainer`; `torch.optim.adamw.AdamW` is `torch.optim.AdamW`."""
    f_root, f_last = found.split(".", 1)[0], found.rsplit(".", 1)[-1]
    w_root, w_last = wanted.split(".", 1)[0], wanted.rsplit(".", 1)[-1]
    return f_root == w_root and f_last == w_last


# Conventional module aliases, resolved when nothing in the file binds them (a notebook's earlier cell or an
# exec'd preamble imported them): issue 10, cause 2.
CONVENTIONAL_MODULES = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "np": "numpy", "tf": "tensorflow"}
# Libraries whose `from m import *` makes the file's unbound names theirs.
# transformers `Trainer.__init__`'s positional parameters (4.x and 5.24 alike: trainer.py `__init__(self, model, args,
# data_collator, train_dataset, eval_dataset, processing_class, ...)`, `tokenizer` in 4.x's sixth place)
TRAINER_POSITION = {"model": 0, "args": 1, "data_collator": 2, "train_dataset": 3, "eval_dataset": 4, "processing_class": 5, "tokenizer": 5}
KNOWN_LIBRARIES = frozenset({*TRANSFORMERS_ROOTS, "torch", "numpy", "tensorflow", "keras", "tf_keras", "datasets", "accelerate"})


def is_trainer_class(qualname: str) -> bool:
    if not is_transformers_name(qualname):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return last.endswith("Trainer") and last != "TFTrainer"
