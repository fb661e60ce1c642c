"""Training-script facts, extracted once per file by one walk over the libcst tree.

Rules never walk the tree themselves: they query these facts. Names are resolved through the
file's imports with a light pass of our own (libcst's scope metadata costs ~9x the parse), and
values are evaluated on demand by a small constant folder that gives up (returns UNKNOWN)
whenever a value could differ at run time — precision beats recall.

Where things live: `nodes` (the data model, UNKNOWN, tree helpers), `names` (transformers
vocabulary), `core` (Facts and the walk that fills it), `kinds` (what an expression holds),
`evaluate` (the constant folder, argparse), `training` (run-wide derived facts), `labels`
(classification labels), `loops` (hand-written training loops).
"""

from bertlint.facts.core import Facts
from bertlint.facts.evaluate import MAX_SEQ, param_arguments
from bertlint.facts.kinds import ModelLoad
from bertlint.facts.labels import LABEL_NAMES, Classifier, KnownLabels, classifier, known_labels
from bertlint.facts.loops import TrainingLoop, float_cast, frozen_models, in_context, in_training_step, is_model_call
from bertlint.facts.names import ENCODE_METHODS, TRAINING_ARGS_CLASSES, TRANSFORMERS_ROOTS, is_model_class, is_tokenizer_class, is_trainer_class, is_transformers_name, model_head
from bertlint.facts.nodes import UNKNOWN, Binding, Call, ClassDef, Event, Scope, Store, dotted, iter_children, literal, walk
from bertlint.facts.training import (
    STRUCTURED_TOKENIZERS, Padding, amp_enabled, holds_tokenizer, mixed_precision, padding_at, padding_of, run_anchor, structured_tokenizer,
    tokenizer_load_of, trained_model, training_arg, uses_peft, weight_dtype,
)

__all__ = [
    # nodes
    "UNKNOWN", "Binding", "Call", "ClassDef", "Event", "Scope", "Store", "dotted", "iter_children", "literal", "walk",
    # names
    "ENCODE_METHODS", "TRAINING_ARGS_CLASSES", "TRANSFORMERS_ROOTS", "is_model_class", "is_tokenizer_class", "is_trainer_class", "is_transformers_name", "model_head",
    # core
    "Facts",
    # kinds
    "ModelLoad",
    # evaluate
    "MAX_SEQ", "param_arguments",
    # training
    "STRUCTURED_TOKENIZERS", "Padding", "amp_enabled", "holds_tokenizer", "mixed_precision", "padding_at", "padding_of", "run_anchor",
    "structured_tokenizer", "tokenizer_load_of", "trained_model", "training_arg", "uses_peft", "weight_dtype",
    # labels
    "LABEL_NAMES", "Classifier", "KnownLabels", "classifier", "known_labels",
    # loops
    "TrainingLoop", "float_cast", "frozen_models", "in_context", "in_training_step", "is_model_call",
]
