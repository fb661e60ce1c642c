"""Training-script facts: what the rules query about one file.

Rules never walk the tree themselves. One walk over the libcst tree builds the file's semantic
model (imports, scopes and binding events, calls, classes; libcst's own scope metadata costs ~9x
the parse). On it sits the value layer: one evaluator that gives each expression an abstract
value with its provenance — a constant, an object (tokenizer, model, encoding, ids, dataloader,
...) and the call that made it, or UNKNOWN — lazily, memoised once per file, seeing through the
file's own functions, classes, loaders and configuration. UNKNOWN is the one sentinel every rule
treats as "say nothing": precision beats recall.

The modules import in one direction, each only from those before it:
`nodes` (the data model, UNKNOWN, tree helpers) <- `names` (library vocabulary, the names a script gives its labels) <- `walker` (the one walk that
records a file) and `bindings` (which binding events a read sees) <- `model` (the semantic model) <- `abstract`
(the abstract values) <- `runs` (where a function's code runs, seen from the scope around it) <- `functions` (the
file's own functions: callees, arguments, returns) <- the parts of the evaluator, each knowing Python and no
library: `folding`, `strings`, `reaching`, `items`, `iteration`, `calls` (builtins, library calls asked of the
brains, the file's functions evaluated for a call), `operators` (constants, displays, operators), `reads` (names
and the bindings that reach a read), `access` (attributes and items), `protocol` (items, iteration and unpacking of
a value), `sharing` (aliasing and change in place) <- `evaluator` (`Evaluation`: the memo and the library hooks;
`Evaluator`: one read, the mixins above) <-
`brain/*` (the library models the evaluator runs: tables and small hooks, one module per library
family) <- `values` (the evaluator with its brains, the queries, run-wide lists) <- `uses` (where a value goes: the
reads that consume it, through names, conversions and returns to the file's callers; an import binding no read sees) <- `training`,
`loops`, the label queries (`file_reads`: the local data file a read call reads <- `frame_columns`: the columns a script
renames, reads into its labels and rewrites, and `frame_rows`: whether a frame keeps its file's rows <- `data_labels`:
the label values counted from that file <- `labels`: a classifier's labels, the known label values, regression losses;
`token_labels`: the ignore index, the collators and tokenizer calls that make labels), `tensors` (where a training
step's values came from), `trainable` (the weights a run really trains:
frozen bodies, fresh heads, what a keras optimizer is compiled into), `weights` (float16 models and
what trains them), `flow` (what a value is built from, as written), `guards` (the feature tests, `try`s and version branches a line
runs under), `inspection` (reads that only look
at a value), `demos` (a forward that runs one example only to show its output), `texts` (how long the texts a
tokenizer call encodes can be), `graphs` (the calls a
function traced into a TensorFlow graph runs) (derived queries: padding, dtypes, labels, training loops) <- `core` (Facts, the
one object the rules hold). `liveness` (which code runs when the file runs, computed
once: the engine reports nothing in code that never runs, and every rule asking "does this run?" queries it) and `stops`
(the statement where the run of the module or of a function's body certainly stops, which `liveness` reads; the engine
of the kinds of stop in `name_stops`, `library_stops`, `attribute_stops` and `placeholder_stops`, over `certain_runs`)
read only the model (and `library_stops` the knowledge's lists of the names a library exports).
"""

import importlib

# `liveness` names its module and the function the engine asks: imported here, the name is the function (a lazy
# look-up would find the module, which the package holds once any fact module imports it).
from bertlint.facts.liveness import NEVER, PROBABLY_NOT, RUNS, Liveness, is_script, liveness, unreached

# The names the rules import from `bertlint.facts`, by the module that defines them. Each module is imported on the
# first use of one of its names (PEP 562): a run imports the fact modules its selected rules ask for, not all of them.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "abstract": ("shared",),
    "core": ("Facts",),
    "labels": ("Classifier", "KnownLabels", "classifier", "known_labels", "regression_loss"),
    "token_labels": ("at_pad_positions", "ignore_index_markers", "is_label_call", "label_building_collators", "never_served", "over_leading_positions"),
    "file_reads": ("data_file_of", "index_taken_from_rows"),
    "frame_columns": ("column_renames", "label_columns", "mapped_counts", "mapped_label_columns", "rewritten_columns"),
    "frame_rows": ("data_file_rows_of",),
    "branches": ("not_taken",),
    "stops": ("Stop", "run_stops"),
    "loops": ("GRAD_MODES", "NO_GRAD_MODES", "MisplacedClip", "TrainingLoop", "calls_reached", "epoch_loop", "epochs_of", "float_cast", "forward_model", "grad_mode", "in_context", "in_training_step", "is_clip", "iterated_loader", "is_model_call", "misplaced_clips", "never_steps", "steps_every_n", "under_grad_mode"),
    "model": ("Runtime",),
    "names": ("ENCODE_METHODS", "LABEL_NAMES", "TRAINER_POSITION", "TRAINING_ARGS_CLASSES", "TRANSFORMERS_ROOTS", "is_model_class", "is_tokenizer_class", "is_trainer_class", "is_transformers_name", "model_head"),
    "nodes": ("UNKNOWN", "Call", "ClassDef", "Definition", "Event", "Scope", "Store", "Variable", "dotted", "iter_children", "literal", "names_in", "walk"),
    "training": ("EOS_ATTRIBUTES", "STRUCTURED_TOKENIZERS", "Padding", "amp_enabled", "asks_for_tpu", "feeds_layout_model", "eos_as_pad", "eos_pad_in_force", "chunk_length", "in_call_to", "lightning_spelling", "longest_of_a_set", "map_calls", "map_functions", "mapped_function", "mixed_precision", "module_step", "only_called_directly", "only_evaluated", "eos_in_data", "gpu_card", "same_tokenizer", "trained_trainers", "pad_guarded", "padding_at", "padding_of", "padding_side", "run_anchor", "runs_at_module_level", "runs_on_cpu", "runs_on_mps", "structured_tokenizer", "text_container", "tokenizer_load_of", "tokenizer_names", "training_arg", "training_field", "uses_peft", "weight_dtype"),
    "flow": ("data_path", "keyed_values", "model_input_ids", "same_arrays", "same_data", "sources", "tokens_from_tokenize"),
    "graphs": ("traced_calls",),
    "guards": ("Failure",),
    "functions": ("forwards_kwargs", "in_class_or_lambda"),
    "inspection": ("INSPECTIONS", "SHAPE_READS", "inspected", "never_fed", "never_seen", "only_inspected", "only_shape_read", "unfed_map_function"),
    "demos": ("shown_example",),
    "brain.keras": ("keras_feed",),
    "padded": ("fed_alone", "padded_call", "padded_ids", "padded_on_the_left", "padding_for_pad_to_max_length"),
    "trainable": ("default_collated", "examples_trained", "fails_before_a_step", "freezes_parameters", "frozen_bodies", "frozen_models", "keras_trains_pretrained", "optimised_models", "params_without_rates", "trained_checkpoints", "trained_model", "trained_models", "trainer_models", "trains_on_a_handful", "trains_pretrained", "untrained_models"),
    "texts": ("SPECIAL_TOKENS_ADDED", "longest_text", "token_bound"),
    "tensors": ("Inert", "activation", "inert_statements", "is_loss_value", "only_reported", "receiver_role"),
    "values": ("Binding", "Instance", "ModelLoad", "Pack", "Series", "checkpoint_argument", "holds_tokenizer", "load_behind"),
    "uses": ("Unread", "passed_as", "unread_import"),
    "weights": ("HalfTraining", "chained_half_models", "half_trained_models"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = ["NEVER", "PROBABLY_NOT", "RUNS", "Liveness", "is_script", "liveness", "unreached", *_MODULE_OF]


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
    globals()[name] = value
    return value
