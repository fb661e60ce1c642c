"""torch tensors and the padding utilities: methods that keep what a tensor (or a module, an encoding) holds,
tensor constructors that keep ids ids, and the calls that pad sequences.

Sources: torch `Tensor.to/cuda/long/...` and `nn.Module.to/cuda/train/eval/...` return the same data (a module
returns itself); `torch.tensor/as_tensor/LongTensor/stack/cat` build a tensor of their argument's elements;
`torch.nn.utils.rnn.pad_sequence(sequences, batch_first, padding_value=0.0)`, `torch.nn.functional.pad(input, pad,
mode="constant", value=None)` (0), keras `pad_sequences(sequences, ..., padding="pre", value=0.0)` pad with a
value that is no token of the text.

A tensor the file makes itself, by a torch factory (`torch.randn/rand/zeros/ones/empty/full/randint/normal/arange/linspace/
eye` and their `*_like` twins, torch 2.13 `torch/_torch_docs.py`) or as `nn.Parameter(data)` (torch/nn/parameter.py: a new
leaf tensor over `data`), is `Instance("tensor")`: no model's weights. An optimizer over such tensors (a gradient-inversion
attack's dummy input, a soft prompt) trains no model (`torch.optim.Adam(params)`: "an iterable of `torch.Tensor`s or dicts").

A torch layer whose forward refuses anything but a tensor as its input (`TENSOR_LAYERS`: called with a str, torch 2.13
raises TypeError from the op's argument parser, `linear(): argument 'input' (position 1) must be Tensor, not str`, or
AttributeError from `input.dim()`/`.softmax`: run on the 2.13.0 CPU wheel, each in train and eval mode) is
`Instance("layer")`; `nn.Identity` (returns its input) and containers are not.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import UNKNOWN, Binding, Instance, Pack, constant

# methods that return their receiver's value unchanged (moved, cast, reshaped, put in a mode)
KEEPS = frozenset({
    "to", "cuda", "cpu", "train", "eval", "half", "bfloat16", "float", "double", "long", "int", "requires_grad_", "squeeze",
    "unsqueeze", "view", "reshape", "flatten", "ravel", "clone", "detach", "contiguous", "pin_memory", "to_device", "copy",
})
COPIES = ("copy.copy", "copy.deepcopy")  # a copy holds what the original holds
# the objects those methods are called on (a trainer's `train()` returns no trainer)
KEEPING_KINDS = frozenset({"model", "module", "encoding", "ids", "dataloader_item"})
# factories of a tensor of the file's own (no model's weights): `Instance(TENSOR)`
TENSOR = "tensor"
TENSOR_FACTORIES = frozenset({
    f"torch.{name}{like}" for name in ("randn", "rand", "zeros", "ones", "empty", "full", "randint") for like in ("", "_like")
} | {"torch.normal", "torch.arange", "torch.linspace", "torch.eye", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# torch layers whose call refuses a str as its first argument (see the module's docstring): `Instance(LAYER)`
LAYER = "layer"
TENSOR_LAYERS = frozenset(f"torch.nn.{name}" for name in (
    "Linear", "Dropout", "LayerNorm", "ReLU", "Tanh", "GELU", "LSTM", "GRU", "Conv1d", "BatchNorm1d", "Embedding", "Softmax"))
# constructors of a tensor from their first argument's elements
TENSOR_CONSTRUCTORS = ("torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.stack", "torch.cat")
# arrays of their first argument's elements (numpy `array(object)`, tensorflow `constant(value)`/`convert_to_tensor(value)`)
ARRAY_CONSTRUCTORS = ("numpy.array", "numpy.asarray", "tensorflow.constant", "tensorflow.convert_to_tensor")
# tokenizer methods whose result is the list of ids itself
ID_LISTS = ("encode",)
# constant folding of an array of constants
CONSTANT_ARRAYS = ("numpy.array", "numpy.asarray", "torch.tensor")
# dtypes by their last name (`np.float32`, `torch.float`, `"float64"`, `float`): numpy's and torch's float and int types
FLOAT_DTYPES = frozenset({"float", "float16", "float32", "float64", "double", "half", "single", "bfloat16", "float_", "longdouble"})
INT_DTYPES = frozenset({"int", "int8", "int16", "int32", "int64", "long", "short", "int_", "intp", "uint8", "uint16", "uint32", "uint64"})
# utilities that pad sequences to one length with a value that is no token: the keyword that says the side, its
# default, and what each value means
_TORCH_SIDE = ("padding_side", "right", {"left": "left", "right": "right"})
_KERAS_SIDE = ("padding", "pre", {"pre": "left", "post": "right"})
PADDERS = {
    "torch.nn.utils.rnn.pad_sequence": _TORCH_SIDE,
    "tensorflow.keras.preprocessing.sequence.pad_sequences": _KERAS_SIDE, "keras.preprocessing.sequence.pad_sequences": _KERAS_SIDE,
    "keras.utils.pad_sequences": _KERAS_SIDE, "tensorflow.keras.utils.pad_sequences": _KERAS_SIDE, "keras_preprocessing.sequence.pad_sequences": _KERAS_SIDE,
}
PAD_ANY_TENSOR = ("torch.nn.functional.pad",)  # pads any tensor: padded ids only where it held ids
# torchtext: `ToTensor(padding_value=None, dtype=torch.long)` (torchtext/transforms.py) runs `functional.to_tensor(input,
# padding_value)`, which for a batch of id lists with a `padding_value` returns `pad_sequence([...], batch_first=True,
# padding_value=...)` (right padding), and with none `torch.tensor(input)` (no padding) (torchtext/functional.py
# `to_tensor`, pytorch/text 0fd1c0c); `Sequential(*transforms)` runs them in order and returns the last one's output
# (torchtext/transforms.py `Sequential.forward`, a `torch.nn.Sequential`).
TEXT_TO_TENSOR = "torchtext.functional.to_tensor"
TEXT_PADDING_TRANSFORMS = ("torchtext.transforms.ToTensor",)
TRANSFORM_SEQUENCES = ("torchtext.transforms.Sequential", "torch.nn.Sequential")

# grad-mode decorators: `decorate_context` runs the function inside the mode when the wrapper is called
# (torch/utils/_contextlib.py, torch/autograd/grad_mode.py)
GRAD_MODES = frozenset({"torch.no_grad", "torch.inference_mode", "torch.enable_grad", "torch.set_grad_enabled"})

# functions that never run an object they are given: `torch.save(obj, f)` pickles it (torch 2.13.0
# torch/serialization.py:944 `save` -> `_save`: `pickler.dump(obj)`; a module pickles its `__dict__`,
# nn/modules/module.py:1919 `Module.__getstate__`)
LEAVES_ALONE = frozenset({"torch.save"})


def wraps(decorator: str | None) -> bool | None:
    return True if decorator in GRAD_MODES else None


def leaves_alone(qualname: str | None) -> bool | None:
    return True if qualname in LEAVES_ALONE else None


def operation(ev, left, operator, right) -> Any:
    """`ids + [0] * (n - len(ids))`, `ids + [tok.pad_token_id] * k` (and `ids += ...`, `ids.extend(...)`): ids padded
    by hand with the pad id (or 0), also where the pad id reaches the list through a name or a parameter
    (`pad(ids, tok.pad_token_id, n)`, `pad_id = tok.pad_token_id`): its value is the tokenizer's `pad_id`."""
    if not (isinstance(left, Binding) and left.kind in ("ids", "encoding") and isinstance(operator, cst.Add)):
        return None
    if not (isinstance(right, cst.BinaryOperation) and isinstance(right.operator, cst.Multiply) and isinstance(right.left, cst.List) and len(right.left.elements) == 1):
        return None
    pad = right.left.elements[0].value
    value = ev.eval(pad)
    if constant(value) == 0 or isinstance(value, Instance) and value.kind == "pad_id" or isinstance(pad, cst.Attribute) and pad.attr.value == "pad_token_id":
        return Binding("ids", left.call, left, "padded by hand")
    return None


def _typed(ev, call, found: Any) -> Any:
    """The constants of `np.array(object, dtype)` / `torch.tensor(data, dtype=...)` as the dtype makes them: floats for
    a float dtype (`np.array([1, 2], dtype=np.float32)` holds 1.0 and 2.0, no class index), ints kept for an int dtype;
    UNKNOWN for any other dtype or a conversion that could change a value."""
    dtype = call.arg(1, "dtype") if call.qualname.startswith("numpy.") else call.kwargs.get("dtype")
    if dtype is None:
        return found
    name = ev.f.qualname(dtype.value, call.scope) or ev.const(dtype.value)
    kind = name.rsplit(".", 1)[-1] if isinstance(name, str) else None
    if kind in FLOAT_DTYPES:
        return _converted(found, float)
    if kind in INT_DTYPES:
        return _converted(found, int)
    return UNKNOWN


def _converted(value: Any, to: type) -> Any:
    """Each number of a (nested) list or tuple as `to`; UNKNOWN where an element is no number or `to` would change it."""
    if isinstance(value, (list, tuple)):
        items = [_converted(v, to) for v in value]
        return UNKNOWN if any(v is UNKNOWN for v in items) else type(value)(items)
    if isinstance(value, (int, float)) and (to is float or isinstance(value, int) or value.is_integer()):
        return to(value)
    return UNKNOWN


def keeps(method: str, receiver=None) -> bool | None:
    """`method` returns its receiver's value: on an element of a comprehension (no receiver known), or on a tensor,
    a module or an encoding."""
    if method not in KEEPS:
        return None
    return True if receiver is None or isinstance(receiver, Binding) and receiver.kind in KEEPING_KINDS or own_tensor(receiver) else None


def own_tensor(value: Any) -> bool:
    """`value` is a tensor the file made itself (`TENSOR_FACTORIES`), no model's weights."""
    return isinstance(value, Instance) and value.kind == TENSOR


def own_tensors(value: Any) -> bool:
    """`value` is a list or tuple of one or more tensors the file made itself, nothing else: parameters of no model."""
    items = value.items if isinstance(value, Pack) else value if isinstance(value, (list, tuple)) else (value,)
    return bool(items) and all(own_tensor(item) for item in items)


def call(ev, call) -> Any:
    q = call.qualname
    if not q:
        return None
    if q in TENSOR_FACTORIES:
        return Instance(TENSOR, call)
    if q in TENSOR_LAYERS:
        return Instance(LAYER, call)
    if q in COPIES and len(call.positional) == 1:
        found = ev.eval(call.positional[0].value)
        return found if isinstance(found, Binding) else UNKNOWN
    if q in CONSTANT_ARRAYS and call.positional:
        found = ev.const(call.positional[0].value)
        if found is not UNKNOWN:
            return _typed(ev, call, found)
    if q.startswith(TENSOR_CONSTRUCTORS) or q in ARRAY_CONSTRUCTORS:
        inner = call.arg(0)
        if inner is None:
            return UNKNOWN
        value = ev.eval(inner.value)
        element = ev.f.elements_of(value) if not isinstance(value, Binding) else value
        for found in (element, value):  # `torch.tensor([ids])`, `torch.cat(per_text_ids)`, `torch.tensor(ids)`
            if isinstance(found, Binding) and found.kind == "ids":
                return found
        return UNKNOWN
    if q in PAD_ANY_TENSOR:  # a tensor of any kind: padded ids only where it held ids
        inner = ev.kind(call.positional[0].value) if call.positional else None
        return Binding("ids", call, inner, "padded") if inner is not None and inner.kind in ("ids", "encoding") else UNKNOWN
    if padder(q) is not None:
        return Binding("ids", call, None, "padded")
    if q == TEXT_TO_TENSOR:
        return Binding("ids", call, None, "padded") if _pads_with(ev, call, 1) else UNKNOWN
    if q in TEXT_PADDING_TRANSFORMS:
        return Binding("padding_transform", call) if _pads_with(ev, call, 0) else UNKNOWN
    if q in TRANSFORM_SEQUENCES and call.positional and not call.has_star_args:
        last = ev.eval(call.positional[-1].value)  # the output is what the last transform makes
        return last if isinstance(last, Binding) and last.kind == "padding_transform" else None
    return None


def _pads_with(ev, call, position: int) -> bool:
    """torchtext's `padding_value` is given (a value that cannot be told counts as given; `None` pads nothing)."""
    arg = call.arg(position, "padding_value")
    return arg is not None and ev.f.value(arg.value, call.scope, order=call.order) is not None


def called(ev, obj, call) -> Any:
    """A torchtext padding transform (or a sequence of transforms ending in one) called on a batch of id lists."""
    if isinstance(obj, Binding) and obj.kind == "padding_transform":
        return Binding("ids", call, obj, "padded")
    return None


def padder(qualname: str | None) -> tuple | None:
    """(side keyword, its default, value -> side) of a padding utility, or None."""
    if qualname and qualname.startswith("torch") and qualname.endswith(".pad_sequence"):
        return _TORCH_SIDE
    return PADDERS.get(qualname)


def pad_side(values, call) -> Any:
    """"left" | "right" | UNKNOWN: the side a padding utility pads on; None for a call that is none. `F.pad(x, (a, b))`
    pads the last dimension `a` before and `b` after; torchtext's `to_tensor` and its transforms pad on the right."""
    if call.qualname == TEXT_TO_TENSOR:
        return "right"
    if call.qualname is None or call.qualname.startswith("<local>."):
        made = values.kind(call.node.func, call.scope, call.order)
        if made is not None and made.kind == "padding_transform":
            return "right"
    if call.qualname in PAD_ANY_TENSOR:
        pad = values.arg_value(call, 1, "pad")
        if isinstance(pad, (tuple, list)) and len(pad) >= 2 and all(isinstance(p, int) for p in pad[:2]):
            return "left" if pad[0] else "right"
        return UNKNOWN
    found = padder(call.qualname)
    if found is None:
        return None
    keyword, default, sides = found
    return sides.get(values.kw_value(call, keyword, default=default), UNKNOWN)
