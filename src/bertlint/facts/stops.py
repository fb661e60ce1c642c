"""Where a script's run certainly stops: in each scope (the module, each function's body), the first statement run
for certain that raises whenever it runs.

A module-level statement runs once, in order, and nothing catches what it raises: the statements after it never run,
and what a rule finds there (an argument a later call rejects, a name a later import lacks) cannot happen when the file
runs as written. A function's body is the same whenever the function runs (and when it never runs, nothing in it
happens either), so its first certain raise ends it. Causes certain from the text alone:

- a name read where the statement certainly evaluates it (not under a lambda, a branch of a conditional expression,
  the right of an `and`/`or`, a comprehension's later clauses, an annotation) that nothing in the file binds, in any
  scope, and that is no builtin: `NameError` (`dataset = Dataset.from_pandas(df)` with `Dataset` never imported);
- such a name read by a module-level statement before the module's scope binds it: every statement that may bind it
  there comes later in the file (or it is the statement's own target, bound after its value is read), and no `global`
  declaration lets a function bind it first (`train_dataset.train_test_split(...)` above the line that loads it);
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
  (ValueError: "either a `model` or `model_init` argument, but not both"), and `TrainingArguments(beta=0.1, ...)`, a
  keyword that no release of the class up to the target has (TypeError: trl's `DPOConfig` keywords given to it);
- a keyword's constant that the target transformers refuses in the method the call runs (`_refused_value`,
  data/refusals.json `keyword_values`): `tokenizer(texts, return_tensors="tf")` (and `.encode`, `.pad`) of a tokenizer
  the value layer certainly knows, on >= 5.0 (ValueError: TensorType is pt/np/mlx only), and
  `BitsAndBytesConfig(bnb_4bit_compute_dtype="torch.bfloat16")` on >= 4.30 (AttributeError from `getattr(torch, ...)`);
- building a model class of the file whose `__init__` calls `self.init_weights()` before `self.post_init()` on
  transformers >= 5.0 (`_unready_model`, data/removed.json `before_post_init`): AttributeError;
- an API that the target release of its library removed and that no rule reports (`_removed_api`, data/removed.json:
  `from sklearn.metrics import plot_confusion_matrix` on scikit-learn >= 1.2, `load_in_8bit=` of a model class's
  `from_pretrained` on transformers >= 5.0, `from keras.engine.topology import Layer` on Keras >= 2.6); a removal a
  drift rule reports is reported there, with its fix;
- a call that the target release of a library refuses for the object the value layer certainly knows it is made on or
  given (`removals.refused`, the same data): `pd.read_csv(..., error_bad_lines=False)` and `df.append(...)` of a
  DataFrame on pandas >= 2.0, Lightning's `trainer.fit(model)` of a module that defines `training_epoch_end` on
  Lightning >= 2.0.

- plain Python errors the value layer's tables make certain (`attribute_stops`): an attribute of an argparse
  namespace that no `add_argument` of the file defines (`args.lr` beside `--learning_rate`: AttributeError),
  `self.NAME` in a method of the file's class whose chain of classes (all the file's) never binds NAME
  (AttributeError), and `parser.parse_args()` run in a notebook's kernel, whose `-f <connection file>` the parser
  does not take (SystemExit: "unrecognized arguments"; a notebook's module stop, as a library's refusal).

One more is probable, not certain: a template's placeholder checkpoint (`_placeholder_load`) or data file
(`_placeholder_path`), its value followed through the value layer (a parameter's from its call sites).
A call of one of the file's own functions whose body stops (certainly or probably) whenever it runs stops the caller
there too (`_reaches`: no `return` before that stop, no generator, no decorator but `staticmethod`/`classmethod`), and
so do `self.METHOD(...)` in a method of the file's class (one no class of the file subclasses) and the construction of
the file's class, whose `__init__` runs (no `__new__`, decorator or metaclass): a class whose `__init__` certainly stops
never yields an instance (`unbuildable`; `RelationModel.__init__` loads a Keras model through a method that compiles it
with `Adam(lr=...)`, which Keras 3 refuses). Each function's stop is computed
once. What never runs because of a stop (the statements after it, the functions only they name) is `liveness`'s.
Whether a stop silences every rule after it or only those whose finding says its own line fails (`Stop.every_rule`):
a library's refusal and a forgotten import (`_forgotten_import`) are crashes of a program; a name that no library
exports read unbound is as likely a fragment's object (a test snippet's or a bug report's `model`, a half-written
file), and a placeholder may name a folder that exists.

No stop of a name's binding (an unbound name, a read before the binding, a call of the file's function) wherever the
file's names may come from elsewhere: a notebook or a script exported from one (its cells ran in a kernel that may hold
names of cells since deleted: `get_ipython()`, `# In[1]:`, `# %%`, Colab's header), a star import,
`exec`/`eval`/`globals()`/`vars()`/`locals()`/`setattr()`, `__builtins__`, `sys.modules`, an import of `builtins`, a
call of an `install()` (`gettext.install()` adds `_` to the builtins). A library's refusal stops such a file's module
all the same (a notebook's Run All stops at the first cell that raises).
Statements run for certain: the module's own, and those of the `if __name__ == "__main__":` block; only the parts
of a compound statement that run before its body (an `if`'s test, a `for`'s iterable, a `with`'s managers, a class's
bases and a function's decorators and defaults). A name counts as bound when it appears anywhere inside what a
statement binds (an assignment's or a loop's target, `as` names, parameters, imports, `global`, `del`, patterns), which
counts too many: never a binding too few. One walk over the module, once per file.
"""

from __future__ import annotations

import builtins
import re
from typing import Iterator, NamedTuple

import libcst as cst

from bertlint import knowledge
from bertlint.facts.attribute_stops import kernel_exit, missing_attribute
from bertlint.facts.model import Model, per_file
from bertlint.facts.names import TRAINING_ARGS_CLASSES, is_model_class, is_tokenizer_class, is_transformers_name
from bertlint.facts.nodes import Call, dotted, iter_children, literal, walk
from bertlint.facts.removals import refused, shadowed

# Builtins of a Python other than the one running bertlint: newer releases' (3.13) and Windows' own.
_OTHER_BUILTINS = frozenset({"PythonFinalizationError", "_IncompleteInputError", "WindowsError"})
_BUILTINS = frozenset(dir(builtins)) | _OTHER_BUILTINS
# Names that hand the module's namespace to code bertlint does not see, or bind names by a computed string.
_NAMESPACE_NAMES = frozenset({"exec", "eval", "globals", "vars", "locals", "__import__", "setattr"})
# Decorators that leave a method's body as it is: calling it runs the body.
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})
# Calls that add names to the builtins: `gettext.install()` binds `_`, icecream's `install()` binds `ic`.
_INSTALLS = "install"
# A script exported from a notebook (Jupyter's `# In[3]:`, the percent format's `# %%`, Colab's header) or run by IPython.
_EXPORTED = re.compile(r"^#\s*(?:In\s*\[|%%)|get_ipython\s*\(|^\s*Automatically generated by Colab", re.MULTILINE)
# transformers' Auto classes, whose `__init__` raises: they are made only by `from_pretrained`/`from_config`.
_AUTO_CLASSES = frozenset({"AutoConfig", "AutoTokenizer", "AutoProcessor", "AutoFeatureExtractor", "AutoImageProcessor", "AutoVideoProcessor"})
# Documentation placeholders given as a checkpoint (see `_placeholder_load`).
_PLACEHOLDER_PATH = re.compile(r"^(?:/?path/to/|<[^<>]*>$|your[_-])|/your[_-]", re.IGNORECASE)
_PLACEHOLDER = re.compile(_PLACEHOLDER_PATH.pattern + r"|^(?:gpt-3\.5-turbo|gpt-4|text-davinci-\d+)(?:$|-)", re.IGNORECASE)
# Loaders that read the file they are given, and raise FileNotFoundError when it is not there: qualified name -> the
# (position, keyword) of the path. `open` in a reading mode (CPython); pandas' readers (`get_handle`/`stat`);
# `datasets.load_dataset(..., data_files=...)`: `data_files.resolve_pattern` raises FileNotFoundError ("Unable to find
# ...", `DataFilesNotFoundError` since datasets 2.15), its signature (path, name, data_dir, data_files).
_PATH_LOADERS = {"builtins.open": (0, "file"), "io.open": (0, "file"), "pandas.read_csv": (0, "filepath_or_buffer"),
                 "pandas.read_json": (0, "path_or_buf"), "pandas.read_parquet": (0, "path"), "pandas.read_excel": (0, "io"),
                 "datasets.load_dataset": (3, "data_files")}
# A variable's name quoted by mistake: the name of a name, path or id (`model_name`, `MODEL_ID`), never `model` or
# `output`, which a folder a previous script saved may well be called.
_QUOTED_VARIABLE = re.compile(r"^[A-Za-z_]\w*(?:name|_id|checkpoint)\w*$", re.IGNORECASE)
# transformers' names that a file reads unbound while importing from transformers: a forgotten import, not an object
# of a fragment (besides its Auto, model, tokenizer and training-arguments classes, caught by their names).
_TRANSFORMERS_NAMES = frozenset({"Trainer", "Seq2SeqTrainer", "DataCollatorWithPadding", "DataCollatorForSeq2Seq",
                                 "DataCollatorForLanguageModeling", "pipeline", "get_linear_schedule_with_warmup", "set_seed"})
_AUTO_MODEL = re.compile(r"(?:TF|Flax)?AutoModel(?:For\w+|WithLMHead)?")
# What binds the names inside it: (node type, the fields that hold them).
_BINDERS: dict[type, tuple[str, ...]] = {
    cst.AssignTarget: ("target",), cst.AnnAssign: ("target",), cst.AugAssign: ("target",), cst.For: ("target",),
    cst.CompFor: ("target",), cst.AsName: ("name",), cst.NamedExpr: ("target",), cst.Param: ("name",),
    cst.FunctionDef: ("name",), cst.ClassDef: ("name",), cst.Del: ("target",), cst.ImportAlias: ("name",),
    cst.NameItem: ("name",), cst.MatchAs: ("name",), cst.MatchStar: ("name",), cst.MatchMapping: ("rest",),
}


class _Order(NamedTuple):
    """Where the module's scope binds each name, for a module-level read before its first binding: `first`, the order of
    the first module-level statement that may bind the name in the module's scope (anywhere inside it but a function's
    body, a lambda and a parameter); `order`, each module-level statement (each small statement of a line, a compound
    statement; those of the main block take the block's) -> its order; `units`, the statement of each order;
    `declared`, the names a `global` statement declares (a function may bind them whenever it is called)."""
    first: dict[str, int]
    order: dict[cst.CSTNode, int]
    units: list[cst.CSTNode]
    declared: set[str]


class Stop(NamedTuple):
    """Where a scope's run stops: `statement`, the first of `scope`'s own statements (the module's, or a function's
    body when the function runs) that certainly raises. `every_rule`: the file is a program, not a fragment, so no
    finding after it can happen (a forgotten import, a library's certain crash); otherwise only findings that say their
    own line fails are dropped after it (a fragment's unbound `model`, a template's placeholder checkpoint)."""
    scope: cst.Module | cst.FunctionDef
    statement: cst.CSTNode
    every_rule: bool


@per_file
def run_stops(facts: Model) -> tuple[Stop, ...]:
    """The stop of the module and of each function of the file (see the module's docstring): a function's body stops
    at its first certain raise whenever the function runs, so what follows it in the body never runs either way.
    Where the file's names may come from elsewhere (notebook cells, a cell script, a notebook's export, `exec`), only
    where a library certainly refuses what the statement asks (a removed import, a name no release has, a refused
    split, a placeholder path, the kernel's argv): a name's binding cannot be known there, a library's refusal does not
    depend on it; a module-level call reaches a function's only where the module defined it before
    (`_stops_from_elsewhere`). A notebook's Run All stops at the first cell that raises, as a script does."""
    return _stops_and_classes(facts)[0]


def unbuildable(facts: Model) -> frozenset[cst.ClassDef]:
    """The module's classes whose construction certainly raises (every rule): `C(...)` runs `C.__init__`, whose body
    certainly reaches its stop (`Adam(lr=...)` on Keras 3 in a method it calls): no instance of them ever exists."""
    return _stops_and_classes(facts)[1]


@per_file
def _stops_and_classes(facts: Model) -> tuple[tuple[Stop, ...], frozenset[cst.ClassDef]]:
    """`run_stops` and `unbuildable`, in one pass: a call of the file's function, the construction of its class (its
    `__init__`) and `self.METHOD(...)` in a method of its class stop where the body they run stops."""
    functions: list[cst.FunctionDef] = []
    found = _bindings(facts.module, functions)
    if found is None or _names_from_elsewhere(facts):
        return _stops_from_elsewhere(facts, found), frozenset()
    bound, module_order = found
    autos = _auto_names(facts.module, bound)
    own = {f.name.value: f for f in facts.module.body if isinstance(f, cst.FunctionDef) and bound.get(f.name.value) == 1}
    classes = {c.name.value: c for c in facts.module.body if isinstance(c, cst.ClassDef) and bound.get(c.name.value) == 1}
    defined = {id(cls): methods_of(cls) for cls in classes.values()}  # each class's methods, read once
    methods = {id(m): cls for cls in classes.values() for m in defined[id(cls)].values()}
    subclassed = {dotted(base.value) for node in walk(facts.module) if isinstance(node, cst.ClassDef)
                  for base in node.bases} if classes else set()  # the tree walked only where the file has a class
    stops: dict[cst.CSTNode, tuple[cst.CSTNode, bool] | None] = {}

    def stop_of(scope: cst.Module | cst.FunctionDef) -> tuple[cst.CSTNode, bool] | None:
        if scope not in stops:
            stops[scope] = None  # a recursive call meanwhile: no stop
            order = module_order if isinstance(scope, cst.Module) else None
            cls = methods.get(id(scope))
            stops[scope] = _first_stop(facts, _body(scope), bound, autos, lambda func, _small: called(func, cls), order)
        return stops[scope]

    def reached(function: cst.FunctionDef | None) -> bool | None:
        stop = stop_of(function) if function is not None else None
        return stop[1] if stop is not None and _reaches(function, stop[0]) else None

    def called(func: cst.BaseExpression, cls: cst.ClassDef | None) -> bool | None:
        """every_rule of the stop that calling `func` certainly reaches, else None: the file's function `name`, the
        `__init__` of its class `name` (one without a `__new__`, a decorator or a metaclass), or `self.name` in a method
        of its class that no class of the file subclasses (a subclass's method of that name may run instead)."""
        if isinstance(func, cst.Name):
            if func.value in own:
                return reached(own[func.value])
            return reached(_constructor(classes[func.value], defined[id(classes[func.value])])) if func.value in classes else None
        if cls is not None and isinstance(func, cst.Attribute) and dotted(func.value) == "self" and cls.name.value not in subclassed:
            return reached(defined[id(cls)].get(func.attr.value))
        return None

    found_stops = tuple(Stop(scope, *stop) for scope in (facts.module, *functions) if (stop := stop_of(scope)) is not None)
    return found_stops, frozenset(cls for name, cls in classes.items() if called(cst.Name(name), None) is True)


def _stops_from_elsewhere(facts: Model, found: tuple[dict[str, int], _Order] | None) -> tuple[Stop, ...]:
    """The stops of a file whose names may come from elsewhere (`found`: its `_bindings`, None where a star import or
    `exec` hides them): only a library's certain refusal, no name's binding. A module-level call of the file's function
    that the module defines once, in a statement before the call (Run All has bound the name to it by then, whatever
    the kernel held), stops where the function's body stops (`main()` whose `parser.parse_args()` the kernel's argv
    refuses); each such function's own stop is one too."""
    bound, order = found if found is not None else ({}, None)
    own = {f.name.value: f for f in facts.module.body if isinstance(f, cst.FunctionDef) and bound.get(f.name.value) == 1}
    stops = {f: _first_stop(facts, _body(f), None, {}, lambda func, small: None, None) for f in own.values()}

    def called(func: cst.BaseExpression, small: cst.CSTNode) -> bool | None:
        function = own.get(func.value) if isinstance(func, cst.Name) and order is not None else None
        stop = stops[function] if function is not None and order.first[func.value] < order.order.get(small, -1) else None
        return stop[1] if stop is not None and _reaches(function, stop[0]) else None

    stop = _first_stop(facts, _body(facts.module), None, {}, called, None)
    return tuple(Stop(scope, *stop) for scope, stop in ((facts.module, stop), *stops.items()) if stop is not None)


def methods_of(cls: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    """The functions a class's body defines, each by its name, where it defines that name once."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    defined = [stmt for stmt in body if isinstance(stmt, cst.FunctionDef)]
    names = [f.name.value for f in defined]
    return {f.name.value: f for f in defined if names.count(f.name.value) == 1}


def _constructor(cls: cst.ClassDef, methods: dict[str, cst.FunctionDef]) -> cst.FunctionDef | None:
    """The `__init__` that `cls(...)` certainly runs (`methods`: its `methods_of`): its own, where no decorator,
    metaclass or `__new__` may make something else."""
    if cls.decorators or cls.keywords or "__new__" in methods:
        return None
    return methods.get("__init__")


def _names_from_elsewhere(facts: Model) -> bool:
    """The file's names may be bound where its text does not say: a notebook's cells or a cell script (a kernel may
    hold names of cells since deleted), a notebook's export."""
    return facts.runtime.notebook or facts.runtime.cells or _EXPORTED.search(facts.source) is not None


def statements_after(stop: Stop) -> Iterator[cst.CSTNode]:
    """The statements of `stop`'s scope that run after its statement (none of them runs), in order, the main block's in
    their place."""
    passed = False
    for stmt in dict.fromkeys(stmt for stmt, _small in _run_for_certain(_body(stop.scope))):
        if passed:
            yield stmt
        passed = passed or stmt is stop.statement


def _body(scope: cst.Module | cst.FunctionDef) -> tuple | list:
    return scope.body if isinstance(scope, cst.Module) else scope.body.body if isinstance(scope.body, cst.IndentedBlock) else ()


def _reaches(function: cst.FunctionDef, statement: cst.CSTNode) -> bool:
    """Does every call of `function` run its body up to `statement`: a plain function (no decorator but `staticmethod`
    or `classmethod`, not async, no generator) with no `return` in the statements before it (a return in a branch may
    skip it)."""
    if any(dotted(d.decorator) not in _PLAIN_DECORATORS for d in function.decorators) or function.asynchronous is not None:
        return False
    if any(isinstance(node, (cst.Yield, cst.Await)) for node in walk(function.body)):
        return False
    for stmt in _body(function):
        if stmt is statement:
            return True
        if any(isinstance(node, cst.Return) for node in walk(stmt)):
            return False
    return False


def _first_stop(facts: Model, body, bound: dict[str, int] | None, autos: dict[str, str], called,
                order: _Order | None) -> tuple[cst.CSTNode, bool] | None:
    """(statement, every_rule) of the first statement of `body` run for certain that certainly raises; `bound`: how
    often the file binds each name, None where that cannot be known (then no stop of a name's binding); `called(func)`:
    every_rule of the stop that calling `func` (the file's function or class, or a method of its class) reaches, or None; `order`: the module's (the
    module's own body only), for a read before the module binds the name."""
    releases = dict(facts.runtime.releases)
    for stmt, small in _run_for_certain(body):
        if isinstance(small, cst.ImportFrom) and _imports_what_is_not_there(facts, small):
            return stmt, True
        evaluated = list(_evaluated(small))  # read once: the removed-API check and the checks below walk the same nodes
        if _removed_api(facts, small, evaluated, releases):
            return stmt, True
        for node in evaluated:
            if isinstance(node, cst.Name) and bound is not None:
                first = _read_first(node.value, small, order) if order is not None else None
                if _unbound(node.value, bound) or first is False:
                    return stmt, _forgotten_import(facts, node.value)
                if first:
                    return stmt, True
            if bound is not None and missing_attribute(facts, node):
                return stmt, True
            if isinstance(node, cst.Call):
                if _auto_class(node.func, autos) or _refused_split(facts, node) or _refused_arguments(facts, node) \
                        or _refused_value(facts, node) or _unready_model(facts, node) or refused(facts, node) or kernel_exit(facts, node):
                    return stmt, True
                if _placeholder_load(facts, node, bound) or _placeholder_path(facts, node):
                    return stmt, False
                if (every := called(node.func, small)) is not None:
                    return stmt, every
    return None


def _forgotten_import(facts: Model, name: str) -> bool:
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
    `TrainingArguments` given a keyword that is a field of none of its releases up to the target (`beta=`, a keyword of
    trl's `DPOConfig`: TypeError; a `**` argument: no stop). A class named from transformers is transformers' own, never
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
    if known is not None and not any(arg.star for arg in call.args) and any(keyword not in known for keyword in given):
        return True  # `TrainingArguments(beta=0.1)`, a keyword of trl's DPOConfig: TypeError "unexpected keyword argument"
    check = knowledge.best_model_check(name, releases)
    return check is not None and _best_model_refused(facts, call, check)


def _refused_value(facts: Model, node: cst.Call) -> bool:
    """A keyword's constant that the target transformers refuses in the method the call runs (data/refusals.json
    'keyword_values'): the construction of transformers' class named (`BitsAndBytesConfig(bnb_4bit_compute_dtype=
    "torch.bfloat16")` from 4.30: AttributeError), or a method of a tokenizer (its call `tok(...)`, `tok.encode(...)`,
    `tok.pad(...)`: `return_tensors="tf"` from 5.0, ValueError). The tokenizer is one the value layer certainly knows
    (one plain, unconditional assignment of a load by transformers' own class, no Hub code: `trust_remote_code=`, or a
    `**` argument that may hold it), never guessed from a name. The value is the value layer's constant."""
    call = facts.call_of(node)
    if call is None or not call.kwargs:
        return False
    releases = dict(facts.runtime.releases)
    if call.qualname is not None and call.qualname.startswith("transformers."):
        owner, method, receiver = call.qualname.rpartition(".")[2], "__init__", None
    else:
        owner, method = knowledge.TOKENIZER, call.method or "__call__"
        receiver = call.receiver if call.method is not None else node.func
    refused = any(r.keyword in call.kwargs and r.refuses(_value(facts, node, call.kwargs[r.keyword].value))
                  for r in knowledge.refused_values(owner, method, releases))
    return refused and (receiver is None or _certain_tokenizer(facts, receiver, call))


def _certain_tokenizer(facts: Model, expr: cst.BaseExpression, call: Call) -> bool:
    """`expr`, read by `call`, certainly holds a tokenizer that transformers' own class loaded or made (no Hub code)."""
    found = facts.definite_kind(expr, call.scope, call.order)
    load = found.call if found is not None and found.kind == "tokenizer" else None
    return load is not None and (load.qualname or "").startswith("transformers.") and "trust_remote_code" not in load.kwargs \
        and not load.has_double_star


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
        return _value(facts, call, given[keyword]) if keyword in given else check.defaults[keyword]

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
        for name in _bound_by(node):
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
    for stmt in _body(init) if init is not None else ():
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


def _placeholder_load(facts: Model, call: cst.Call, bound: dict[str, int] | None) -> bool:
    """`X.from_pretrained("<placeholder>")` of a transformers class, the checkpoint a documentation placeholder: the
    file is a template whose run as written stops there (OSError: no such checkpoint). Placeholders: `/path/to/...`,
    `path/to/...`, `<...>`, `your_...`, an OpenAI model name (`gpt-3.5-turbo`, `gpt-4`: no Hub checkpoint), and the
    quoted name of a variable of the file (`from_pretrained('model_name')` beside `model_name = ...`). A folder of that
    name beside the script could hold a checkpoint, so this is no certain crash: only findings that say their own
    line fails are dropped after it, and the quoted name counts only where the file never writes it as a string
    elsewhere (`save_pretrained('model_name')` makes the folder)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" and call.args and call.args[0].keyword is None):
        return False
    if not is_transformers_name(facts.qualname(func)):
        return False
    text = literal(call.args[0].value)
    if not isinstance(text, str):
        text = _value(facts, call, call.args[0].value)
        return isinstance(text, str) and _PLACEHOLDER.search(text) is not None
    if _PLACEHOLDER.search(text):
        return True
    return bound is not None and text in bound and _QUOTED_VARIABLE.search(text) is not None and _string_count(facts, text) == 1


def _placeholder_path(facts: Model, call: cst.Call) -> bool:
    """A loader (`_PATH_LOADERS`) given a documentation placeholder path (`/path/to/...`, `path/to/...`, `<...>`,
    `your_...`), its value followed through the value layer (a parameter's value from its call sites): the run as
    written stops there with FileNotFoundError, unless the user made a file of that name (so probable, like a
    placeholder checkpoint). `open` counts only in a reading mode."""
    found = _PATH_LOADERS.get(facts.qualname(call.func) or "")
    wrapped = facts.call_of(call)
    if found is None or wrapped is None:
        return False
    arg = wrapped.arg(*found)
    if arg is None:
        return False
    if found[1] == "file":
        mode = wrapped.arg(1, "mode")
        mode = "r" if mode is None else _value(facts, call, mode.value)
        if not isinstance(mode, str) or set(mode) & set("wax+"):
            return False
    paths = _value(facts, call, arg.value)
    paths = list(paths.values()) if isinstance(paths, dict) else [paths]
    paths = [p for item in paths for p in (item if isinstance(item, (list, tuple)) else [item])]
    return any(isinstance(p, str) and _PLACEHOLDER_PATH.search(p) is not None for p in paths)


def _value(facts: Model, call: cst.Call, expr: cst.BaseExpression):
    """The constant `expr`, an argument of `call`, holds (the value layer's; anything else where there is none)."""
    wrapped = facts.call_of(call)
    return facts.value(expr, wrapped.scope, order=wrapped.order) if wrapped is not None else None


def _string_count(facts: Model, text: str) -> int:
    return sum(1 for node in walk(facts.module) if isinstance(node, cst.SimpleString) and literal(node) == text)


def _defined(facts: Model) -> set[str]:
    return {node.name.value for node in walk(facts.module) if isinstance(node, (cst.FunctionDef, cst.ClassDef))}


def _imports_what_is_not_there(facts: Model, stmt: cst.ImportFrom) -> bool:
    """`from datasets import tokenized_datasets`: a name no release of the library has (`knowledge.exported_names`),
    from the library itself, not a module of the file's folder of the same name (`datasets.py`, `datasets/`). From a
    submodule (`from transformers.models.bert import X`) there is no list: no stop."""
    module = dotted(stmt.module) if stmt.module is not None and not stmt.relative else None
    names = knowledge.exported_names(module) if module else None
    if names is None or isinstance(stmt.names, cst.ImportStar):
        return False
    return any(isinstance(alias.name, cst.Name) and alias.name.value not in names for alias in stmt.names) \
        and not shadowed(facts, module.split(".")[0])


def _removed_api(facts: Model, stmt: cst.CSTNode, evaluated: list[cst.CSTNode], releases: dict[str, knowledge.Release]) -> bool:
    """`stmt` certainly uses an API that the target release of its library removed and that no rule reports
    (data/removed.json; the targets in `facts.runtime.releases`, where a library's release is not known: silent): an
    import of a removed module or name (`from sklearn.metrics import plot_confusion_matrix` on scikit-learn >= 1.2:
    ImportError), unless a module of the file's folder has the library's name; an attribute read of one
    (`torchtext.data.Field()` after `import torchtext`: AttributeError); or a keyword that `from_pretrained` of a
    transformers PyTorch model class no longer takes (`load_in_8bit=` on transformers >= 5.0: TypeError from the
    model's `__init__`; a tokenizer's swallows it), unless the class may be a Hub model's own code (`trust_remote_code=`,
    or a `**` argument that may hold it). `evaluated`: `_evaluated(stmt)`; `releases`: `facts.runtime.releases`."""
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
        if isinstance(node, cst.Attribute) and (name := facts.qualname(node)) and "." in name:
            module, _, attribute = name.rpartition(".")
            if knowledge.removed_import(module, attribute, releases):
                return True  # `torchtext.data.Field(...)` with `import torchtext`: AttributeError
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "from_pretrained":
            owner = facts.qualname(node.func.value)
            keywords = {arg.keyword.value for arg in node.args if arg.keyword is not None}
            if is_model_class(owner) and not owner.rpartition(".")[2].startswith(("TF", "Flax")) and "trust_remote_code" not in keywords \
                    and not any(arg.star == "**" for arg in node.args) \
                    and keywords & knowledge.removed_keywords(knowledge.model_from_pretrained("transformers"), releases):
                return True  # a Hub model's own class (`trust_remote_code=`, maybe in `**kwargs`) may take any keyword
    return False


def _unbound(name: str, bound: dict[str, int]) -> bool:
    return name not in bound and _not_builtin(name)


def _not_builtin(name: str) -> bool:
    return name not in _BUILTINS and not (name.startswith("__") and name.endswith("__"))


def _read_first(name: str, small: cst.CSTNode, order: _Order) -> bool | None:
    """A read of `name` by the module-level statement `small` before the module's scope binds it, a certain NameError
    (no builtin, no `global` declaration that lets a function bind it whenever called): True where a later statement of
    the module binds it (a program's name read too early: `train_dataset` split before the line that loads it), or
    `small` itself, an assignment that binds it only in its targets, after its value is read (`ds = ds.map(f)` as the
    first `ds`); False where the module's scope binds it nowhere, only a function's body or a parameter does (as good
    as unbound: a fragment's object, or a forgotten import); None where it may be bound before."""
    at = order.order.get(small)
    if at is None or name in order.declared or not _not_builtin(name):
        return None
    first = order.first.get(name)
    if first is None:
        return False
    if first > at:
        return True
    return first == at and order.units[at] is small and isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)) \
        and small.value is not None and not any(name in _bound_by(node) for node in walk(small.value)) or None


def _bound_by(node: cst.CSTNode) -> Iterator[str]:
    """The names `node` binds, when it is a binding node (`_BINDERS`, `global`/`nonlocal`): every name inside its target."""
    kind = type(node)
    fields = () if kind is cst.ImportAlias and node.asname is not None else _BINDERS.get(kind, ())  # an `as` name binds
    for field in fields:
        target = getattr(node, field)
        if kind is cst.ImportAlias and field == "name":
            target = _head(target)
        for name in ([target] if isinstance(target, cst.Name) else walk(target) if target is not None else ()):
            if isinstance(name, cst.Name):
                yield name.value
    if kind in (cst.Global, cst.Nonlocal):
        yield from (item.name.value for item in node.names)


def _bindings(module: cst.Module, functions: list[cst.FunctionDef]) -> tuple[dict[str, int], _Order] | None:
    """How many times each name may be bound anywhere in the file, in any scope (every name inside a target counts:
    too many, never too few), and where the module's scope first binds each (`_Order`: anything but a function's body,
    a lambda or a parameter counts as the module's scope, a class's body and a comprehension's target too: too early,
    never too late); None when names may be bound where the file does not say (a star import, `exec`). Collects the
    file's functions into `functions` on the way (the same walk)."""
    bound: dict[str, int] = {}
    order = _Order({}, {}, [], set())
    _units(module, order)
    stack = [(unit, False) for unit in reversed(order.units)]
    unit_at = 0
    while stack:
        node, local = stack.pop()
        kind = type(node)
        unit_at = order.order.get(node, unit_at)
        if kind is cst.Name and node.value == "__builtins__" or kind is cst.Call and _namespace_call(node.func):
            return None
        if kind is cst.Attribute and node.attr.value in ("modules", "__dict__"):
            return None  # `sys.modules[__name__].x = ...`, `mod.__dict__.update(...)`
        if kind is cst.ImportFrom and (isinstance(node.names, cst.ImportStar) or dotted(node.module) in ("builtins", "__builtin__")) \
                or kind is cst.Import and any(dotted(a.name) in ("builtins", "__builtin__") for a in node.names):
            return None
        if kind is cst.FunctionDef:
            functions.append(node)
        if kind in _BINDERS or kind in (cst.Global, cst.Nonlocal):
            for name in _bound_by(node):
                bound[name] = bound.get(name, 0) + 1
                if not local and kind is not cst.Param:
                    order.first.setdefault(name, unit_at)
            if kind is cst.Global:
                order.declared.update(item.name.value for item in node.names)
        inner = kind is cst.FunctionDef or kind is cst.Lambda
        stack.extend((child, local or inner and child is node.body) for child in reversed(iter_children(node)))
    return bound, order


def _units(module: cst.Module, order: _Order) -> None:
    """The module's statements in order (each small statement of a line, each compound statement) into `order.units`,
    each given its order in `order.order`, the main block's statements the block's."""
    for stmt in module.body:
        for unit in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else (stmt,):
            order.order[unit] = len(order.units)
            order.units.append(unit)
        if isinstance(stmt, cst.If) and _main_guard(stmt.test) and isinstance(stmt.body, cst.IndentedBlock):
            order.order.update((small, order.order[stmt]) for _stmt, small in _run_for_certain(stmt.body.body))


def _namespace_call(func: cst.BaseExpression) -> bool:
    name = dotted(func)
    return name is not None and (name in _NAMESPACE_NAMES or name.rpartition(".")[2] == _INSTALLS)


def _head(name: cst.BaseExpression) -> cst.BaseExpression:
    """`a` of `import a.b.c`: the name the import binds."""
    while isinstance(name, cst.Attribute):
        name = name.value
    return name


def _auto_names(module: cst.Module, bound: dict[str, int]) -> dict[str, str]:
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


def _run_for_certain(body) -> Iterator[tuple[cst.CSTNode, cst.CSTNode]]:
    """(statement, small statement or compound statement) of the module in order, with the `if __name__ ==
    "__main__":` block's in its place."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                yield stmt, small
            continue
        yield stmt, stmt
        if isinstance(stmt, cst.If) and _main_guard(stmt.test) and isinstance(stmt.body, cst.IndentedBlock):
            yield from _run_for_certain(stmt.body.body)


def _main_guard(test: cst.BaseExpression) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = {dotted(test.left) or literal(test.left), dotted(test.comparisons[0].comparator) or literal(test.comparisons[0].comparator)}
    return sides == {"__name__", "__main__"}


def _evaluated(stmt: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The expressions `stmt` evaluates whenever it runs, before any body of its own."""
    if isinstance(stmt, (cst.Expr, cst.Assign, cst.AugAssign)):
        roots = [stmt.value]
    elif isinstance(stmt, (cst.AnnAssign, cst.Return)):
        roots = [stmt.value] if stmt.value is not None else []
    elif isinstance(stmt, (cst.If, cst.While)):
        roots = [stmt.test]
    elif isinstance(stmt, cst.For):
        roots = [stmt.iter]
    elif isinstance(stmt, cst.With):
        roots = [item.item for item in stmt.items]
    elif isinstance(stmt, cst.ClassDef):
        roots = [*(d.decorator for d in stmt.decorators), *(a.value for a in (*stmt.bases, *stmt.keywords))]
    elif isinstance(stmt, cst.FunctionDef):
        params = stmt.params
        roots = [*(d.decorator for d in stmt.decorators),
                 *(p.default for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.default is not None)]
    else:
        roots = []
    for root in roots:
        yield from _certain(root)


_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})


def _certain(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and the parts of it that evaluating it certainly evaluates; the names it reads are among them (an
    attribute's name and a keyword's are not reads)."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        kind = type(node)  # `is` on the exact class: none of these is subclassed, and `isinstance` against libcst's
        # classes goes through their ABC metaclass, a Python call per node
        if kind is cst.Lambda:
            continue
        if kind in _COMPREHENSIONS:
            stack.append(node.for_in.iter)
        elif kind is cst.IfExp:
            stack.append(node.test)
        elif kind is cst.BooleanOperation:
            stack.append(node.left)
        elif kind is cst.Attribute or kind is cst.Arg:
            stack.append(node.value)
        else:
            stack.extend(reversed(iter_children(node)))
