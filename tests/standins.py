"""Recording stand-ins for torch, transformers, pytorch_lightning, datasets, pandas and scikit-learn: tiny pure-Python classes that run a generated
training script for real and record what every model, optimizer, tokenizer and loader call receives.

`recording(filename)` puts them in `sys.modules` under the libraries' own names (so `import torch`,
`from transformers import AutoTokenizer` and `from torch.utils.data import DataLoader` find them) for the
length of a `with` block, and yields a `Recorder`. Every recorded call carries the line of the script that made
it (the nearest frame of `filename`); every object carries the line that made it:

- `Tokenizer.site`, `Model.site`, `Optimizer.site`, `DataLoader.site`: the line of its construction;
- an `Encoding` (what a tokenizer call returns) its tokenizer call's line;
- a `Tensor` its `trail`: (line, key) pairs, the tokenizer call and key that made it (`(12, "input_ids")`), then
  each DataLoader that batched it and the batch key it was yielded under (`(20, "input_ids")`, `(20, 0)`).
  A tensor made of constants has no trail and keeps its `data`.

Only provenance is faithful; shapes, dtypes and numerics are not modelled.
"""

from __future__ import annotations

import contextlib
import math
import random
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Iterator


@dataclass
class Record:
    line: int
    kind: str  # load_tokenizer | load_model | tokenize | forward | optimizer | training_args | dataloader
    answers: dict[str, Any]  # question -> what the call received


@dataclass
class Recorder:
    filename: str
    records: list[Record] = field(default_factory=list)

    def line(self) -> int:
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != self.filename:
            frame = frame.f_back
        return frame.f_lineno if frame is not None else 0

    def record(self, kind: str, **answers: Any) -> int:
        line = self.line()
        self.records.append(Record(line, kind, answers))
        return line


_ACTIVE: list[Recorder] = []


def _rec() -> Recorder:
    return _ACTIVE[-1]


# ---- torch ------------------------------------------------------------------------------


class Tensor:
    def __init__(self, rows: int, trail: tuple = (), data: Any = None):
        self.rows, self.trail, self.data = rows, trail, data

    def _same(self, *args, **kwargs) -> Tensor:
        return Tensor(self.rows, self.trail, self.data)

    to = cuda = cpu = long = int = float = half = squeeze = unsqueeze = view = reshape = clone = detach = contiguous = _same

    def __getitem__(self, index) -> Tensor:
        rows = len(range(self.rows)[index]) if isinstance(index, slice) else 1
        data = self.data[index] if isinstance(self.data, list) else None
        return Tensor(rows, self.trail, data)

    def __len__(self) -> int:
        return self.rows

    def __iter__(self):  # a tensor iterates its rows
        return (self[i] for i in range(self.rows))

    def tolist(self):
        return self.data

    @property
    def shape(self):
        return (self.rows, 4)


def _tensor(data=None, *args, **kwargs) -> Tensor:
    if isinstance(data, Tensor):
        return data._same()
    if isinstance(data, (list, tuple)) and len(data) == 1 and isinstance(data[0], Tensor):
        return data[0]._same()  # torch.tensor([ids]): a batch of one
    return Tensor(len(data) if isinstance(data, (list, tuple)) else 1, (), data)


def _stack(tensors, *args, **kwargs) -> Tensor:
    tensors = list(tensors)
    trails = {t.trail for t in tensors if isinstance(t, Tensor)}
    trail = trails.pop() if len(trails) == 1 and all(isinstance(t, Tensor) for t in tensors) else ()
    data = [t.data if isinstance(t, Tensor) else t for t in tensors]
    return Tensor(sum(t.rows if isinstance(t, Tensor) else 1 for t in tensors), trail, None if trail else data)


class Parameter:
    pass


class Module:
    def __call__(self, *args, **kwargs):  # torch/nn/modules/module.py `_call_impl`: hooks aside, `self.forward(...)`
        return self.forward(*args, **kwargs)

    def parameters(self):
        return [Parameter()]

    def to(self, *args, **kwargs):
        return self

    cuda = cpu = train = eval = half = float = to


class Optimizer:
    def __init__(self, params, lr=None, **kwargs):
        answers = {} if lr is None else {"lr": lr}
        self.site = _rec().record("optimizer", **answers)

    def step(self):
        pass

    def zero_grad(self):
        pass


def _optimizer(name: str) -> type:
    return type(name, (Optimizer,), {})


class Dataset:
    pass


class TensorDataset(Dataset):
    def __init__(self, *tensors):
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return len(self.tensors[0])


def _collate(items: list) -> Any:
    first = items[0]
    if isinstance(first, dict):
        return {key: _collate([item[key] for item in items]) for key in first}
    if isinstance(first, tuple):
        return tuple(_collate([item[i] for item in items]) for i in range(len(first)))
    if isinstance(first, Tensor):
        return _stack(items)
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return Tensor(len(items), (), list(items))
    return list(items)


def _mark(batch: Any, line: int) -> Any:
    """A batch's tensors remember this loader and the key they were yielded under."""
    def marked(value, key):
        return Tensor(value.rows, value.trail + ((line, key),), value.data) if isinstance(value, Tensor) else value

    if isinstance(batch, Encoding):
        return Encoding(batch.site, {k: marked(v, k) for k, v in batch.items()})
    if isinstance(batch, dict):
        return {k: marked(v, k) for k, v in batch.items()}
    if isinstance(batch, (tuple, list)):
        return type(batch)(marked(v, i) for i, v in enumerate(batch))
    return marked(batch, None)


class DataLoader:
    def __init__(self, dataset, batch_size=None, shuffle=False, collate_fn=None, **kwargs):
        self.dataset, self.batch_size, self.collate_fn = dataset, batch_size or 1, collate_fn
        self.site = _rec().record("dataloader", **({} if batch_size is None else {"batch_size": batch_size}))

    def __iter__(self) -> Iterator:
        n = len(self.dataset)
        for start in range(0, n, self.batch_size):
            items = [self.dataset[i] for i in range(start, min(n, start + self.batch_size))]
            yield _mark(self.collate_fn(items) if self.collate_fn is not None else _collate(items), self.site)

    def __len__(self):
        return -(-len(self.dataset) // self.batch_size)


# ---- transformers -----------------------------------------------------------------------


class Encoding(dict):
    def __init__(self, site: int, items: dict):
        super().__init__(items)
        self.site = site

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to(self, *args, **kwargs):
        return self


_TOKENIZE_KEYWORDS = ("padding", "truncation", "max_length")


class Tokenizer:
    pad_token = eos_token = "</s>"
    pad_token_id = eos_token_id = 0

    def __init__(self, site: int):
        self.site = site

    @classmethod
    def from_pretrained(cls, checkpoint, *args, **kwargs):
        return cls(_rec().record("load_tokenizer", checkpoint=checkpoint))

    def __call__(self, text=None, text_pair=None, **kwargs):
        answers = {"texts": text, **{k: kwargs[k] for k in _TOKENIZE_KEYWORDS if k in kwargs}, **{f"{k}_given": k in kwargs for k in _TOKENIZE_KEYWORDS}}
        site = _rec().record("tokenize", **answers)
        rows = len(text) if isinstance(text, (list, tuple)) else 1
        keys = ["input_ids"] + (["attention_mask"] if kwargs.get("return_attention_mask", True) else [])
        return Encoding(site, {key: Tensor(rows, ((site, key),)) for key in keys})

    encode_plus = batch_encode_plus = __call__


class Model(Module):
    def __init__(self, site: int):
        self.site = site

    @classmethod
    def from_pretrained(cls, checkpoint, *args, **kwargs):
        return cls(_rec().record("load_model", checkpoint=checkpoint))

    def __call__(self, input_ids=None, attention_mask=None, **kwargs):
        answers = {"model": self}
        for name, value in (("input_ids", input_ids), ("attention_mask", attention_mask), ("labels", kwargs.get("labels"))):
            if value is not None:
                answers[name] = value
        _rec().record("forward", **answers)
        return types.SimpleNamespace(loss=Tensor(1), logits=Tensor(1))

    forward = __call__


class HfArgumentParser:
    def __init__(self, dataclass_types, **kwargs):
        self.types = list(dataclass_types) if isinstance(dataclass_types, (list, tuple)) else [dataclass_types]

    def parse_args_into_dataclasses(self, *args, **kwargs):
        return tuple(t() for t in self.types)  # no command line: every field its default


class TrainingArguments:
    def __init__(self, output_dir=None, **kwargs):
        _rec().record("training_args", **{k: kwargs[k] for k in ("learning_rate", "per_device_train_batch_size") if k in kwargs})


class Trainer:
    """transformers `Trainer`: `train()` collates the train dataset's items two at a time with `data_collator` and runs
    `training_step(model, inputs)`, which runs `compute_loss(model, inputs, ...)` (5.24 trainer.py:2051-2090)."""

    def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, **kwargs):
        self.model, self.data_collator, self.train_dataset = model, data_collator, train_dataset

    def train(self):
        n = len(self.train_dataset)
        for start in range(0, n, 2):
            self.training_step(self.model, self.data_collator([self.train_dataset[i] for i in range(start, min(n, start + 2))]))

    def training_step(self, model, inputs, num_items_in_batch=None):
        return self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        return model(**inputs).loss


# ---- pytorch_lightning ----------------------------------------------------------------------


class AttributeDict(dict):
    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as missing:
            raise AttributeError(key) from missing


class HyperparametersMixin:
    """`save_hyperparameters(ignore=None)` as lightning 2.5.0 does it without positional arguments
    (utilities/parsing.py `save_hyperparameters`, `collect_init_args`, `_get_init_args`): the `__init__` arguments its
    caller's frame holds at the call (none where the frame has no `__class__` cell), the frames above that are `__init__`
    frames of such an object too, outermost last; `self`, `*args`, `**kwargs` left out (`**kwargs` merged), less
    `ignore`."""

    def save_hyperparameters(self, *args, ignore=None, logger=True):
        if args:
            raise NotImplementedError("save_hyperparameters(names or a mapping): not modelled")
        frame, found = sys._getframe(1), []
        while frame.f_back is not None and "__class__" in frame.f_locals and isinstance(frame.f_locals.get(_first_parameter(frame)), HyperparametersMixin):
            found.append(_init_args(frame))
            frame = frame.f_back
        hp = {}
        for local in found:
            hp.update(local)
        ignore = [ignore] if isinstance(ignore, str) else [i for i in ignore or () if isinstance(i, str)]
        self._hparams = AttributeDict({k: v for k, v in hp.items() if k not in ignore})

    @property
    def hparams(self):
        if not hasattr(self, "_hparams"):
            self._hparams = AttributeDict()
        return self._hparams


def _first_parameter(frame) -> str | None:
    names = frame.f_code.co_varnames[: frame.f_code.co_argcount]
    return names[0] if names else None


def _init_args(frame) -> dict:
    import inspect

    local_vars = frame.f_locals
    params = inspect.signature(local_vars["__class__"].__init__).parameters
    stars = [n for n, p in params.items() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    kwargs = next((n for n, p in params.items() if p.kind == p.VAR_KEYWORD), None)
    args = {k: local_vars[k] for k in params}
    if kwargs:
        args.update(args.get(kwargs, {}))
    return {k: v for k, v in args.items() if k not in (next(iter(params)), *stars, "__class__", "frame", "frame_args")}


class LightningModule(HyperparametersMixin, Module):
    pass


class LightningDataModule(HyperparametersMixin):
    pass


class LightningTrainer:
    """`fit(model, train_dataloaders=None, val_dataloaders=None, datamodule=None)`: every batch of the loader it is
    given (or a datamodule given there), else of the datamodule's `train_dataloader()`, else of the module's, to
    `training_step(batch, batch_idx)`."""

    def __init__(self, **kwargs):
        pass

    def fit(self, model, train_dataloaders=None, val_dataloaders=None, datamodule=None, ckpt_path=None):
        if isinstance(train_dataloaders, LightningDataModule):
            datamodule, train_dataloaders = train_dataloaders, None
        loader = train_dataloaders if train_dataloaders is not None else (datamodule if datamodule is not None else model).train_dataloader()
        for index, batch in enumerate(loader):
            model.training_step(batch, index)


# ---- datasets and pandas ----------------------------------------------------------------


class HFDataset:
    def __init__(self, columns: dict):
        self.columns = columns

    @classmethod
    def from_dict(cls, columns):
        return cls(dict(columns))

    def map(self, function, batched=False, remove_columns=(), **kwargs):
        kept = {k: v for k, v in self.columns.items() if k not in remove_columns}
        if batched:
            return HFDataset({**kept, **function(dict(self.columns))})
        outs = [function(self[i]) for i in range(len(self))]  # one example (a dict of one value per column) at a time
        return HFDataset({**kept, **{key: [out[key] for out in outs] for key in outs[0]}})

    def with_format(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        if isinstance(key, str):
            return list(self.columns[key])
        return {k: v[key] for k, v in self.columns.items()}

    def __len__(self):
        return len(next(iter(self.columns.values())))


class Series(list):
    def tolist(self):
        return list(self)

    @property
    def values(self):
        return list(self)

    def apply(self, fn):
        return Series(fn(x) for x in self)


class DataFrame:
    def __init__(self, columns):
        self.columns = {k: Series(v) for k, v in columns.items()}

    def __getitem__(self, key):
        return self.columns[key]

    def __len__(self) -> int:  # its rows
        return len(next(iter(self.columns.values()), ()))

    def __setitem__(self, key, value):  # a list, a Series or a tensor's rows (`.tolist()`) as a column
        self.columns[key] = Series(value)

    def __getattr__(self, name):  # `df.text`: a column
        try:
            return self.__dict__["columns"][name]
        except KeyError:
            raise AttributeError(name) from None


# ---- scikit-learn ----------------------------------------------------------------------


class Bunch(dict):
    def __getattr__(self, name):  # `bunch.data` is `bunch["data"]`
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def fetch_20newsgroups(subset="train", categories=None, remove=(), return_X_y=False, **kwargs):
    posts = ["From: a\nSubject: orbits", "From: b\nSubject: a longer post on medicine", "From: c\nSubject: moon"]
    bunch = Bunch(data=posts, target=[1, 0, 1], target_names=["sci.med", "sci.space"])
    return (bunch.data, bunch.target) if return_X_y else bunch


def train_test_split(*arrays, test_size=None, train_size=None, random_state=None, shuffle=True, stratify=None):
    """Each array's rows in two parts, as scikit-learn picks them (1.9.1 model_selection/_split.py:2797): test_size
    0.25 by default, a float a share rounded up (train the rest, rounded down), the rows a seeded permutation's
    (`ShuffleSplit`: test first) or, `shuffle=False`, the first and the next; each part of its array's kind."""
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise ValueError("Found input variables with inconsistent numbers of samples")
    test_size = 0.25 if test_size is None and train_size is None else test_size
    n_test = math.ceil(test_size * n) if isinstance(test_size, float) else test_size
    n_train = math.floor(train_size * n) if isinstance(train_size, float) else train_size
    n_train, n_test = (n - n_test if n_train is None else n_train), (n - n_train if n_test is None else n_test)
    if n_train <= 0 or n_test <= 0 or n_train + n_test > n:
        raise ValueError(f"With n_samples={n}, test_size={test_size} and train_size={train_size}, a set would be empty")
    if not shuffle:
        train, test = list(range(n_train)), list(range(n_train, n_train + n_test))
    else:
        order = random.Random(random_state).sample(range(n), n)
        test, train = order[:n_test], order[n_test : n_test + n_train]
    return [_rows(a, part) for a in arrays for part in (train, test)]


def _rows(array, index: list):
    """`_safe_indexing(array, index)`: those rows, in an object of the array's kind (a list for a list or tuple)."""
    if isinstance(array, Tensor):
        return Tensor(len(index), array.trail, [array.data[i] for i in index] if isinstance(array.data, list) else None)
    if isinstance(array, DataFrame):
        return DataFrame({k: [column[i] for i in index] for k, column in array.columns.items()})
    if isinstance(array, Series):
        return Series(array[i] for i in index)
    return [array[i] for i in index]


# ---- the modules ------------------------------------------------------------------------


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


def _modules() -> dict[str, types.ModuleType]:
    data = _module("torch.utils.data", DataLoader=DataLoader, Dataset=Dataset, TensorDataset=TensorDataset)
    utils = _module("torch.utils", data=data)
    optim = _module("torch.optim", **{n: _optimizer(n) for n in ("AdamW", "Adam", "SGD")})
    nn = _module("torch.nn", Module=Module)
    cuda = _module("torch.cuda", is_available=lambda: False)
    torch = _module("torch", tensor=_tensor, LongTensor=_tensor, stack=_stack, cat=_stack, Tensor=Tensor, optim=optim, nn=nn, utils=utils,
                    cuda=cuda, device=lambda name: name)
    auto = {n: type(n, (Tokenizer,), {}) for n in ("AutoTokenizer", "BertTokenizer", "BertTokenizerFast")}
    auto |= {n: type(n, (Model,), {}) for n in ("AutoModel", "AutoModelForSequenceClassification", "BertForSequenceClassification")}
    transformers = _module("transformers", TrainingArguments=TrainingArguments, HfArgumentParser=HfArgumentParser, Trainer=Trainer, **auto)
    lightning = _module("pytorch_lightning", LightningModule=LightningModule, LightningDataModule=LightningDataModule, Trainer=LightningTrainer)
    datasets = _module("datasets", Dataset=HFDataset)
    pandas = _module("pandas", DataFrame=DataFrame)
    sk_datasets = _module("sklearn.datasets", fetch_20newsgroups=fetch_20newsgroups)
    sk_selection = _module("sklearn.model_selection", train_test_split=train_test_split)
    sklearn = _module("sklearn", datasets=sk_datasets, model_selection=sk_selection)
    return {m.__name__: m for m in (torch, cuda, nn, optim, utils, data, transformers, lightning, datasets, pandas, sklearn, sk_datasets, sk_selection)}


@contextlib.contextmanager
def recording(filename: str) -> Iterator[Recorder]:
    """The stand-ins in `sys.modules` (and `sys.argv` bare, so `parse_args()` gives the defaults) for the block."""
    recorder = Recorder(filename)
    modules = _modules()
    saved = {name: sys.modules.get(name) for name in modules}
    argv = sys.argv
    sys.modules.update(modules)
    sys.argv = ["script.py"]
    _ACTIVE.append(recorder)
    try:
        yield recorder
    finally:
        _ACTIVE.pop()
        sys.argv = argv
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
