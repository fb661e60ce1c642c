"""A library's refusals: what a statement certainly asks of a library that its target release refuses (`stops` asks
them per statement; every one a crash of a program, so it silences every rule after it):

- an import of a name that no release of the library has, where bertlint has the library's list of names
  (data/exports.json: `datasets`, `torch.utils.data`, `transformers` over its releases 2.0 to 5.x):
  `from torch.utils.data import Dataloader` raises ImportError, and `from transformers import DNATokenizer` says the
  file runs on a fork of transformers (DNABERT's), not on any release bertlint knows;
- a transformers Auto class called directly (`AutoTokenizer("bert-base-uncased")`): every Auto class's `__init__`
  raises `OSError` (`EnvironmentError` before 4.23) and says to call `from_pretrained` (transformers 2.x to 5.24:
  `models/auto/tokenization_auto.py`, `configuration_auto.py`, `auto_factory.py`, `processing_auto.py`,
  `feature_extraction_auto.py`, `image_processing_auto.py`);
- `train_test_split(test_size=0)` of datasets or scikit-learn (`_refused_split`);
- a transformers class that the target release refuses to make from the arguments given (`_refused_arguments`,
  data/refusals.json): a config class given a positional argument on transformers >= 5.4
  (`BertConfig('roberta-large', num_labels=2)`: ValueError "accepts only keyword arguments"), and
  `TrainingArguments(load_best_model_at_end=True, ...)` on >= 4.9 whose evaluation and save strategies certainly
  differ (`eval_strategy="epoch"` beside the default save strategy "steps") or whose `save_steps` is certainly no
  multiple of `eval_steps` (ValueError in `__post_init__`), `Trainer(model=..., model_init=...)` on >= 5.2
  (ValueError: "either a `model` or `model_init` argument, but not both"), and `TrainingArguments(beta=0.1, ...)` or
  `Trainer(TrainingArguments=args)`, a keyword that no release of the class up to the target takes (TypeError: trl's
  `DPOConfig` keywords given to transformers' class; a trainer's keyword misspelt);
- a keyword's constant that the target transformers refuses in the method the call runs (`_refused_value`,
  data/refusals.json `keyword_values`): `tokenizer(texts, return_tensors="tf")` (and `.encode`, `.pad`) of a tokenizer
  the value layer certainly knows, on >= 5.0 (ValueError: TensorType is pt/np/mlx only),
  `BitsAndBytesConfig(bnb_4bit_compute_dtype="torch.bfloat16")` on >= 4.30 (AttributeError from `getattr(torch, ...)`),
  and `TrainingArguments(optim="adamw_hf")` on >= 4.50 (`"adamw_apex_fused"` on >= 5.8; trl's SFT, DPO and reward
  configs alike: ValueError from `OptimizerNames`);
- keywords that `from_pretrained` of a transformers model class refuses together (`_conflicting_load`,
  data/refusals.json `conflicting_keywords`): `load_in_8bit=True` beside a `quantization_config=` certainly not None
  on 4.38 to 4.57 (ValueError; 5.x refuses `load_in_8bit=` alone, below);
- building a model class of the file whose `__init__` calls `self.init_weights()` before `self.post_init()` on
  transformers >= 5.0 (`_unready_model`, data/removed.json `before_post_init`): AttributeError;
- an API that the target release of its library removed and that no rule reports (`removed_api`, data/removed.json:
  `from sklearn.metrics import plot_confusion_matrix` on scikit-learn >= 1.2, `load_in_8bit=` of a model class's
  `from_pretrained` on transformers >= 5.0, `from keras.engine.topology import Layer` on Keras >= 2.6); a removal a
  drift rule reports is reported there, with its fix;
- a call that the target release of a library refuses for the object the value layer certainly knows it is made on or
  given (`removals.refused`, the same data): `pd.read_csv(..., error_bad_lines=False)` and `df.append(...)` of a
  DataFrame on pandas >= 2.0, Lightning's `trainer.fit(model)` of a module that defines `training_epoch_end` on
  Lightning >= 2.0;
- a transformers `Trainer` handed, as `train_dataset=` (or `eval_dataset=`), an instance of the file's subclass of
  `datasets.Dataset` whose `__init__` never runs the base's (`_columnless_dataset`): the object has no `_data`, and a
  Trainer that removes the columns its model does not take (`remove_unused_columns`, True by default) reads
  `dataset.column_names` (`self._data.column_names`) of every `datasets.Dataset`: AttributeError before the first
  step, at `trainer.train()` (transformers >= 4.6), at the Trainer's construction (3.2 to 4.5).

And a forgotten import (`forgotten_import`): a name read unbound (`name_stops`) that a library the file imports from
exports is a crash of a program too, where a name that no library exports is as likely a fragment's object.
"""

from __future__ import annotations

import re

import libcst as cst

from bertlint import knowledge
from bertlint.facts.abstract import Binding, Instance
from bertlint.facts.brain.steps import HF_BATCH_MAKERS, HF_TRAINERS
from bertlint.facts.certain_runs import argument_value, body_of, bound_by
from bertlint.facts.model import Model, per_file
from bertlint.facts.names import TRAINER_POSITION, TRAINING_ARGS_CLASSES, is_model_class, is_tokenizer_class, is_transformers_name
from bertlint.facts.nodes import UNKNOWN, Call, dotted, walk
from bertlint.facts.removals import refused, shadowed

# transformers' Auto classes, whose `__init__` raises: they are made only by `from_pretrained`/`from_config`.
_AUTO_CLASSES = frozenset({"AutoConfig", "AutoTokenizer", "AutoProcessor", "AutoFeatureExtractor", "AutoImageProcessor", "AutoVideoProcessor"})
_AUTO_MODEL = re.compile(r"(?:TF|Flax)?AutoModel(?:For\w+|WithLMHead)?")
# The libraries whose classes data/refusals.json 'keyword_values' names by their own name: transformers', and trl's
# configs, which run transformers' `TrainingArguments.__post_init__`.
_CLASS_ROOTS = ("transformers", "trl")
# transformers' names that a file reads unbound while importing from transformers: a forgotten import, not an object
# of a fragment (besides its Auto, model, tokenizer and training-arguments classes, caught by their names).
_TRANSFORMERS_NAMES = frozenset({"Trainer", "Seq2SeqTrainer", "DataCollatorWithPadding", "DataCollatorForSeq2Seq",
                                 "DataCollatorForLanguageModeling", "pipeline", "get_linear_schedule_with_warmup", "set_seed"})
# Where a transformers Trainer reads `column_names` of a `datasets.Dataset` it is given (`_remove_unused_columns`,
# which returns at once where `args.remove_unused_columns` is False): 3.2.0 to 4.5.x in `Trainer.__init__` for
# `train_dataset` and `eval_dataset` (3.2.0 trainer.py:289-292, 4.0.0 :285-288, 4.5.0 :387-390; 3.1 checked
# `nlp.Dataset`); from 4.6.0 in `get_train_dataloader` (4.6.0 :605-606, 4.20.0 :784; 5.24.0 `_get_dataloader`
# :1019-1020, reached from `get_train_dataloader` :916), which `train()` runs before its first step. datasets
# `Dataset.column_names` returns `self._data.column_names` (datasets 1.0.0, 2.0.0, 5.2.0 arrow_dataset.py), and
# `_data` is bound by `Dataset.__init__` alone.
_COLUMNS_IN_INIT, _COLUMNS_IN_TRAIN = (3, 2), (4, 6)
_ARROW_DATASETS = frozenset({"datasets.Dataset", "datasets.arrow_dataset.Dataset"})
# what a subclass may define that answers `column_names` or builds the object some other way
_OWN_COLUMNS = frozenset({"column_names", "_data", "__new__", "__getattr__", "__getattribute__"})


def refused_call(facts: Model, call: cst.Call, autos: dict[str, str]) -> bool:
    """Does the target release of its library certainly refuse `call` (see the module's docstring): an Auto class
    called directly (`autos`: the file's `auto_names`), a refused split, arguments or keyword value, an unready model
    class built, or a call refused for the object it is made on (`removals.refused`)?"""
    return _auto_class(call.func, autos) or _refused_split(facts, call) or _refused_arguments(facts, call) \
        or _refused_value(facts, call) or _conflicting_load(facts, call) or _unready_model(facts, call) or refused(facts, call) \
        or _columnless_dataset(facts, call)


def _columnless_dataset(facts: Model, node: cst.Call) -> bool:
    """`trainer.train()` (transformers >= 4.6) or the construction of the Trainer (3.2 to 4.5) of a transformers
    `Trainer` (or `Seq2SeqTrainer`, or the file's subclass of one that overrides neither `__init__`, `train` nor how
    batches are made) that removes unused columns (no `args=`, or `TrainingArguments` whose `remove_unused_columns` is
    certainly True) and is given a dataset of the file's class whose `__init__` never runs `datasets.Dataset.__init__`
    (`_unbuilt_arrow_dataset`): AttributeError on `column_names` (see `_COLUMNS_IN_INIT`)."""
    release = dict(facts.runtime.releases).get("transformers")
    func = node.func
    if release is None or release < _COLUMNS_IN_INIT or not isinstance(func, (cst.Name, cst.Attribute)):
        return False
    if release >= _COLUMNS_IN_TRAIN:
        found = facts.call_of(node) if isinstance(func, cst.Attribute) and func.attr.value == "train" and not node.args else None
        made = facts.kind(found.receiver, found.scope, found.order) if found is not None and found.receiver is not None else None
        trainer = made.call if isinstance(made, Binding) and made.kind == "trainer" else None
        given = ("train_dataset",)
    else:
        trainer = facts.call_of(node)
        given = ("train_dataset", "eval_dataset")
    if trainer is None or not _plain_trainer(facts, trainer.qualname) \
            or not _removes_columns(facts, trainer):
        return False
    for name in given:
        arg = trainer.arg(TRAINER_POSITION[name], name)
        data = facts.evaluate(arg.value, trainer.scope, trainer.order) if arg is not None else None
        if isinstance(data, (Binding, Instance)) and data.call is not None and _unbuilt_arrow_dataset(facts, data.call.qualname):
            return True
    return False


def _plain_trainer(facts: Model, qualname: str | None) -> bool:
    """transformers' `Trainer`/`Seq2SeqTrainer`, or the file's subclass of one whose classes define none of `__init__`,
    `train` and the methods that make or prepare batches (`HF_BATCH_MAKERS`)."""
    if qualname in HF_TRAINERS:
        return True
    chain = _local_chain(facts, qualname)
    return chain is not None and chain[1] in HF_TRAINERS \
        and not any({"__init__", "train", *HF_BATCH_MAKERS} & set(cls.methods) for cls in chain[0])


def _removes_columns(facts: Model, trainer: Call) -> bool:
    """The Trainer's `args.remove_unused_columns` is certainly True: no `args=` (the default `TrainingArguments`), or
    transformers' `TrainingArguments`/`Seq2SeqTrainingArguments` that leave it at its default True or give it True."""
    arg = trainer.arg(TRAINER_POSITION["args"], "args")
    if arg is None:
        return not trainer.has_double_star and not trainer.has_star_args
    made = facts.kind(arg.value, trainer.scope, trainer.order)
    call = made.call if isinstance(made, Binding) and made.kind == "training_args" else None
    return call is not None and call.qualname in ("transformers.TrainingArguments", "transformers.Seq2SeqTrainingArguments") \
        and facts.kw_value(call, "remove_unused_columns", cli=False, default=True) is True


def _unbuilt_arrow_dataset(facts: Model, qualname: str | None) -> bool:
    """The file's class `qualname` subclasses `datasets.Dataset` through the file's classes alone (one base each, no
    decorator, no metaclass, none defining `column_names`, `_data`, `__new__` or an attribute hook), the first
    `__init__` of the chain runs no other `__init__` (no `super`, no `X.__init__`, no method of `self`), and the file
    stores no attribute `_data` anywhere: the instance never gets `_data`."""
    chain = _local_chain(facts, qualname)
    if chain is None or chain[1] not in _ARROW_DATASETS or any(_OWN_COLUMNS & set(cls.methods) for cls in chain[0]) \
            or any(_OWN_COLUMNS & set(cls.scope.events) for cls in chain[0]):
        return False
    init = next((cls.methods["__init__"] for cls in chain[0] if "__init__" in cls.methods), None)
    if init is None or any(isinstance(store.target, cst.Attribute) and store.target.attr.value == "_data" for store in (*facts.stores, *facts.touched)):
        return False
    return not any(type(node) is cst.Name and node.value in ("super", "setattr", "vars")
                   or type(node) is cst.Attribute and (node.attr.value in ("__init__", "__dict__") or type(node.value) is cst.Name
                                                       and init.params.params and node.value.value == init.params.params[0].name.value
                                                       and node.attr.value in {m for cls in chain[0] for m in cls.methods})
                   for node in walk(init.body))


def _local_chain(facts: Model, qualname: str | None) -> tuple[tuple, str] | None:
    """(the file's classes from `qualname` up, the first base that is not the file's) where each has one base and no
    decorator or metaclass; None otherwise."""
    chain = []
    while qualname is not None and qualname.startswith("<local>.") and len(chain) < 8:
        cls = facts.classes.get(qualname.removeprefix("<local>."))
        if cls is None or len(cls.node.bases) != 1 or len(cls.bases) != 1 or cls.node.decorators or cls.node.keywords:
            return None
        chain.append(cls)
        qualname = cls.bases[0]
    return (tuple(chain), qualname) if chain and qualname is not None and not qualname.startswith("<local>.") else None


def imports_what_is_not_there(facts: Model, stmt: cst.ImportFrom) -> bool:
    """`from datasets import tokenized_datasets`: a name no release of the library has (`knowledge.exported_names`),
    from the library itself, not a module of the file's folder of the same name (`datasets.py`, `datasets/`). From a
    submodule (`from transformers.models.bert import X`) there is no list: no stop."""
    module = dotted(stmt.module) if stmt.module is not None and not stmt.relative else None
    names = knowledge.exported_names(module) if module else None
    if names is None or isinstance(stmt.names, cst.ImportStar):
        return False
    return any(isinstance(alias.name, cst.Name) and alias.name.value not in names for alias in stmt.names) \
        and not shadowed(facts, module.split(".")[0])


def removed_api(facts: Model, stmt: cst.CSTNode, evaluated: list[cst.CSTNode], releases: dict[str, knowledge.Release]) -> bool:
    """`stmt` certainly uses an API that the target release of its library removed and that no rule reports
    (data/removed.json; the targets in `facts.runtime.releases`, where a library's release is not known: silent): an
    import of a removed module or name (`from sklearn.metrics import plot_confusion_matrix` on scikit-learn >= 1.2:
    ImportError), unless a module of the file's folder has the library's name; an attribute read of one
    (`torchtext.data.Field()` after `import torchtext`: AttributeError); or a keyword that `from_pretrained` of a
    transformers PyTorch model class no longer takes (`load_in_8bit=` on transformers >= 5.0: TypeError from the
    model's `__init__`; a tokenizer's swallows it), unless the class may be a Hub model's own code (`trust_remote_code=`,
    or a `**` argument whose keys are not known); a `**` mapping's known keys count as keywords (Python's binding). `evaluated`: `evaluated_by(stmt)`; `releases`: `facts.runtime.releases`."""
    if isinstance(stmt, (cst.Import, cst.ImportFrom)):
        if isinstance(stmt, cst.Import):
            pairs = [(dotted(alias.name), None) for alias in stmt.names]
        elif stmt.module is None or stmt.relative or isinstance(stmt.names, cst.ImportStar):
            return False
        else:
            pairs = [(dotted(stmt.module), alias.name.value) for alias in stmt.names if isinstance(alias.name, cst.Name)]
        gone = [module for module, name in pairs if module and knowledge.removed_import(module, name, releases)]
        return bool(gone) and not any(shadowed(facts, module.split(".")[0]) for module in gone)
    for node in evaluated:
        kind = type(node)  # the exact class, as `stops._first_stop` reads the same nodes
        if kind is cst.Attribute and (name := facts.qualname(node)) and "." in name:
            module, _, attribute = name.rpartition(".")
            if knowledge.removed_import(module, attribute, releases):
                return True  # `torchtext.data.Field(...)` with `import torchtext`: AttributeError
        if kind is cst.Call and _own_model_load(facts, node) \
                and set(facts.keywords(facts.call_of(node))) & knowledge.removed_keywords(knowledge.model_from_pretrained("transformers"), releases):
            return True  # (a `**` mapping's known keys are keywords)
    return False


def _own_model_load(facts: Model, call: cst.Call) -> str | None:
    """The model class of `call` when it is `X.from_pretrained(...)` of a transformers PyTorch model class (its
    qualified name) that runs transformers' own code: a Hub model's own class (`trust_remote_code=`, maybe in a `**`
    argument) may take any keyword. None otherwise."""
    if type(call.func) is not cst.Attribute or call.func.attr.value != "from_pretrained":
        return None
    owner, wrapped = facts.qualname(call.func.value), facts.call_of(call)
    if not is_model_class(owner) or owner.rpartition(".")[2].startswith(("TF", "Flax")) or wrapped is None \
            or facts.gives(wrapped, "trust_remote_code") is not False:
        return None
    return owner


def auto_names(module: cst.Module, bound: dict[str, int]) -> dict[str, str]:
    """Local name -> what it names among transformers and its Auto classes, for names bound once: by their import."""
    names = {}
    for line in module.body:
        for small in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.ImportFrom) and dotted(small.module) == "transformers" and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    if isinstance(alias.name, cst.Name) and _is_auto(alias.name.value):
                        names[_local(alias)] = alias.name.value
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    if dotted(alias.name) == "transformers":
                        names[_local(alias)] = "transformers"
    return {local: name for local, name in names.items() if bound.get(local) == 1}


def _local(alias: cst.ImportAlias) -> str:
    return alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else dotted(alias.name) or ""


def _is_auto(name: str) -> bool:
    return name in _AUTO_CLASSES or _AUTO_MODEL.fullmatch(name) is not None


def _auto_class(func: cst.BaseExpression, autos: dict[str, str]) -> bool:
    """`AutoTokenizer` (imported from transformers) or `transformers.AutoTokenizer` (transformers imported whole)."""
    if isinstance(func, cst.Name):
        return func.value in autos and autos[func.value] != "transformers"
    return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and autos.get(func.value.value) == "transformers"
            and _is_auto(func.attr.value))


def forgotten_import(facts: Model, name: str) -> bool:
    """An unbound name that a library the file imports from exports (`AutoTokenizer` read, `from transformers import
    Trainer` written, `AutoTokenizer` never imported): a forgotten import in a program, a certain NameError. A
    fragment's unbound names are its objects (`model`, `tokenizer`, `df`), which no library exports."""
    for module in ("datasets", "torch.utils.data"):
        if facts.imported(module.split(".")[0]) and name in (knowledge.exported_names(module) or ()):
            return True
    qualname = f"transformers.{name}"
    return facts.imported("transformers") and (
        _is_auto(name) or is_model_class(qualname) or is_tokenizer_class(qualname) or name in TRAINING_ARGS_CLASSES
        or name in _TRANSFORMERS_NAMES)


def _refused_split(facts: Model, call: cst.Call) -> bool:
    """`ds.train_test_split(test_size=0)` (datasets) or `train_test_split(x, test_size=0)` (scikit-learn): both refuse
    a test size of 0 or 0.0 with ValueError ("test_size=0 should be either positive and smaller than the number of
    samples ... or a float in the (0, 1) range": datasets `Dataset.train_test_split`, arrow_dataset.py, since its first
    release; scikit-learn `_validate_shuffle_split`). datasets returns an empty dataset unsplit before that check: an
    empty training set is no run either. A method of that name counts only where the file imports datasets and
    defines no function of that name itself."""
    size = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "test_size"), None)
    if not (isinstance(size, cst.Integer) and size.evaluated_value == 0 or isinstance(size, cst.Float) and size.evaluated_value == 0.0):
        return False
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "train_test_split":
        return facts.imported("datasets") and "train_test_split" not in _defined(facts)
    return facts.qualname(func) == "sklearn.model_selection.train_test_split"


def _refused_arguments(facts: Model, call: cst.Call) -> bool:
    """A transformers class that its target release refuses to make from these arguments (data/refusals.json): a
    config class given a positional argument (`BertConfig('roberta-large', num_labels=2)`: from 5.4 every config class
    is a keyword-only dataclass and raises ValueError "accepts only keyword arguments"), or training arguments whose
    `load_best_model_at_end=True` the target refuses in `__post_init__` (`_best_model_refused`), or a trainer given
    both `model=` and `model_init=` (from 5.2: ValueError; `None` written for either is no stop), or a
    `TrainingArguments` or `Trainer` given a keyword that none of its releases up to the target takes (`beta=`, a keyword of
    trl's `DPOConfig`; `Trainer(TrainingArguments=args)`: TypeError; the known keys of a `**` mapping count, one of unknown keys adds none). A class named from transformers is transformers' own, never
    a Hub model's code; a `*` argument may be empty: no stop."""
    qualname = facts.qualname(call.func)
    if not is_transformers_name(qualname):
        return False
    name, releases = qualname.rpartition(".")[2], dict(facts.runtime.releases)
    if any(arg.keyword is None and not arg.star for arg in call.args) and knowledge.keyword_only_config(name, releases):
        return True
    exclusive = knowledge.exclusive_keywords(name, releases)
    given = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if exclusive and all(keyword in given and dotted(given[keyword]) != "None" for keyword in exclusive):
        return True  # `Trainer(model=model, model_init=init)`: ValueError "... either a `model` or `model_init` argument, but not both"
    known = knowledge.closed_keywords(name, releases) if qualname.startswith("transformers.") else None
    passed = facts.keywords(facts.call_of(call)) if known is not None and facts.call_of(call) is not None else given
    if known is not None and not any(arg.star == "*" for arg in call.args) and any(keyword not in known for keyword in passed):
        return True  # `TrainingArguments(beta=0.1)`, `Trainer(TrainingArguments=a)`: TypeError "unexpected keyword argument"
    check = knowledge.best_model_check(name, releases)
    return check is not None and _best_model_refused(facts, call, check)


def _refused_value(facts: Model, node: cst.Call) -> bool:
    """A keyword's constant that the target transformers refuses in the method the call runs (data/refusals.json
    'keyword_values'): the construction of transformers' class named (`BitsAndBytesConfig(bnb_4bit_compute_dtype=
    "torch.bfloat16")` from 4.30: AttributeError; `TrainingArguments(optim="adamw_hf")` from 4.50: ValueError), or of
    trl's config named, a subclass of `TrainingArguments` whose `__post_init__` runs transformers' (`SFTConfig(optim=
    "adamw_hf")`), or a method of a tokenizer (its call `tok(...)`, `tok.encode(...)`, `tok.pad(...)`:
    `return_tensors="tf"` from 5.0, ValueError). The tokenizer is one the value layer certainly knows (one plain,
    unconditional assignment of a load by transformers' own class, no Hub code: `trust_remote_code=`, or a `**`
    argument that may hold it), never guessed from a name. The value is the value layer's constant."""
    call = facts.call_of(node)
    if call is None or not call.kwargs and not call.has_double_star:
        return False
    releases = dict(facts.runtime.releases)
    if call.qualname is not None and call.qualname.split(".", 1)[0] in _CLASS_ROOTS:
        owner, method, receiver = call.qualname.rpartition(".")[2], "__init__", None
    else:
        owner, method = knowledge.TOKENIZER, call.method or "__call__"
        receiver = call.receiver if call.method is not None else node.func
    given = facts.keywords(call)  # a `**mapping`'s known keys too
    refused = any(r.keyword in given and r.refuses(argument_value(facts, node, given[r.keyword].value))
                  for r in knowledge.refused_values(owner, method, releases))
    return refused and (receiver is None or _certain_tokenizer(facts, receiver, call))


def _conflicting_load(facts: Model, node: cst.Call) -> bool:
    """`from_pretrained` of a transformers model class (its own code, transformers' own class: `_own_model_load`) given
    keywords its target refuses together (data/refusals.json 'conflicting_keywords'): `load_in_8bit=True` (or
    `load_in_4bit=`) beside `quantization_config=bnb` on 4.38 to 4.57, ValueError. The flag a constant that is true
    (the value layer's), the config a value certainly not None: a constant, or an object the value layer certainly
    knows a transformers class made (`BitsAndBytesConfig(...)`, or a name one plain, unconditional assignment binds to
    one); a name that may hold None (`bnb if quantize else None`) is no stop."""
    owner = _own_model_load(facts, node)
    conflicts = knowledge.load_conflicts(dict(facts.runtime.releases)) if owner is not None and owner.startswith("transformers.") else ()
    call = facts.call_of(node) if conflicts else None
    if call is None:
        return False

    given = facts.keywords(call)  # a `**` mapping's known keys too

    def true(keyword: str) -> bool:
        value = argument_value(facts, node, given[keyword].value) if keyword in given else False
        return isinstance(value, (bool, int, float, str)) and bool(value)

    def not_none(keyword: str) -> bool:
        if keyword not in given:
            return False
        expr = given[keyword].value
        value = argument_value(facts, node, expr)
        if value is not UNKNOWN:
            return value is not None
        found = facts.definite_kind(expr, call.scope, call.order)
        return found is not None and found.call is not None and (found.call.qualname or "").startswith("transformers.")

    return any(any(true(k) for k in conflict.any_true) and all(not_none(k) for k in conflict.not_none) for conflict in conflicts)


def _certain_tokenizer(facts: Model, expr: cst.BaseExpression, call: Call) -> bool:
    """`expr`, read by `call`, certainly holds a tokenizer that transformers' own class loaded or made (no Hub code)."""
    found = facts.definite_kind(expr, call.scope, call.order)
    load = found.call if found is not None and found.kind == "tokenizer" else None
    return load is not None and (load.qualname or "").startswith("transformers.") and facts.gives(load, "trust_remote_code") is False


def _best_model_refused(facts: Model, call: cst.Call, check: knowledge.BestModelCheck) -> bool:
    """`TrainingArguments(load_best_model_at_end=True, ...)` whose evaluation and save strategies certainly differ,
    or are both "steps" with `save_steps` certainly no multiple of `eval_steps` (which falls back to `logging_steps`):
    ValueError "--load_best_model_at_end requires the save and eval strategy to match" / "... a round multiple of the
    evaluation steps". Each value a constant (the value layer's) or the field's default; `eval_strategy` and its old
    name `evaluation_strategy` alike (the drift rules report the one the target lacks, and the user's rename keeps the
    value); `save_strategy="best"`, a value not known, a `**` argument or a second positional one: no stop."""
    if any(arg.star for arg in call.args) or sum(arg.keyword is None for arg in call.args) > 1:
        return False
    given = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    evaluation = [keyword for keyword in check.eval_keywords if keyword in given]
    if len(evaluation) > 1:
        return False

    def value(keyword: str):
        return argument_value(facts, call, given[keyword]) if keyword in given else check.defaults[keyword]

    if value("load_best_model_at_end") is not True:
        return False
    strategies = (value(evaluation[0]) if evaluation else check.defaults["eval_strategy"], value("save_strategy"))
    if not all(isinstance(s, str) and s in check.strategies for s in strategies):
        return False
    if strategies[0] != strategies[1]:
        return True
    steps = value("eval_steps")
    steps = (value("logging_steps") if steps is None or steps == 0 else steps, value("save_steps"))
    return strategies[0] == "steps" and all(type(n) is int and n >= 1 for n in steps) and steps[1] % steps[0] != 0


def _unready_model(facts: Model, call: cst.Call) -> bool:
    """`Model(config)` or `Model.from_pretrained(...)` of a class the module defines once, a subclass of a transformers
    `*PreTrainedModel` base (`BertPreTrainedModel`, `PreTrainedModel`: none of them calls `post_init`, which each
    concrete model's own `__init__` does last), whose `__init__` calls `self.init_weights()` before `self.post_init()`
    in the statements it runs for certain: from transformers 5.0 on `init_weights` reads what only `post_init` sets,
    and building the model raises AttributeError (data/removed.json `before_post_init`)."""
    func = call.func.value if isinstance(call.func, cst.Attribute) and call.func.attr.value == "from_pretrained" else call.func
    return isinstance(func, cst.Name) and func.value in _unready_classes(facts)


@per_file
def _unready_classes(facts: Model) -> frozenset[str]:
    """The names of the module's classes that `_unready_model` stops at, on the file's target."""
    methods = knowledge.before_post_init("transformers", dict(facts.runtime.releases))
    found = {stmt.name.value for stmt in facts.module.body if methods and isinstance(stmt, cst.ClassDef) and any(
        _pretrained_base(facts.qualname(base.value)) for base in stmt.bases) and _calls_first(stmt, methods)}
    if not found:
        return frozenset()
    names: dict[str, int] = {}  # bindings of each name anywhere in the file: a class bound once is that class
    for node in walk(facts.module):
        for name in bound_by(node):
            names[name] = names.get(name, 0) + 1
    return frozenset(name for name in found if names.get(name) == 1)


def _pretrained_base(name: str | None) -> bool:
    """A transformers PyTorch `*PreTrainedModel` base class (not a concrete model, whose `__init__` calls `post_init`)."""
    if not name or not name.startswith("transformers."):
        return False
    last = name.rpartition(".")[2]
    return last.endswith("PreTrainedModel") and not last.startswith(("TF", "Flax"))


def _calls_first(cls: cst.ClassDef, methods: frozenset[str]) -> bool:
    """Does the class's `__init__` call `self.METHOD()` (one of `methods`) before `self.post_init()`, both among the
    statements of its body that run for certain (before any statement holding a `return`)?"""
    init = next((f for f in cls.body.body if isinstance(f, cst.FunctionDef) and f.name.value == "__init__"), None) \
        if isinstance(cls.body, cst.IndentedBlock) else None
    for stmt in body_of(init) if init is not None else ():
        if any(isinstance(node, cst.Return) for node in walk(stmt)):
            return False
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            call = small.value if isinstance(small, cst.Expr) else None
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and dotted(call.func.value) == "self":
                if call.func.attr.value == "post_init":
                    return False
                if call.func.attr.value in methods:
                    return True
    return False


def _defined(facts: Model) -> set[str]:
    return {node.name.value for node in walk(facts.module) if isinstance(node, (cst.FunctionDef, cst.ClassDef))}
