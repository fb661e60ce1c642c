"""torch tensors and the padding utilities: methods that keep what a tensor (or a module, an encoding) holds,
tensor constructors that keep ids ids, and the calls that pad sequences.

Sources: torch `Tensor.to/cuda/long/...` and `nn.Module.to/cuda/train/eval/...` return the same data (a module
returns itself); `torch.tensor/as_tensor/LongTensor/stack/cat` build a tensor of their argument's elements;
`torch.nn.utils.rnn.pad_sequence(sequences, batch_first, padding_value=0.0)`, `torch.nn.functional.pad(input, pad,
mode="constant", value=None)` (0), keras `pad_sequences(sequences, ..., padding="pre", value=0.0)` pad with a
value that is no token of the text.
"""

from __future__ import annotations

from typing import Any

from bertlint.facts.abstract import UNKNOWN, Binding

# methods that return their receiver's value unchanged (moved, cast, reshaped, put in a mode)
KEEPS = frozenset({
    "to", "cuda", "cpu", "train", "eval", "half", "bfloat16", "float", "double", "long", "int", "requires_grad_", "squeeze",
    "unsqueeze", "view", "reshape", "clone", "detach", "contiguous", "pin_memory", "to_device",
})
# constructors of a tensor from their first argument's elements
TENSOR_CONSTRUCTORS = ("torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.stack", "torch.cat")
# constant folding of an array of constants
CONSTANT_ARRAYS = ("numpy.array", "numpy.asarray", "torch.tensor")
# utilities that pad sequences to one length with a value that is no token
PADDERS = (
    "torch.nn.utils.rnn.pad_sequence", "torch.nn.functional.pad",
    "tensorflow.keras.preprocessing.sequence.pad_sequences", "keras.preprocessing.sequence.pad_sequences",
    "keras.utils.pad_sequences", "tensorflow.keras.utils.pad_sequences", "keras_preprocessing.sequence.pad_sequences",
)


def keeps(method: str) -> bool | None:
    return True if method in KEEPS else None


def call(ev, call) -> Any:
    q = call.qualname
    if not q:
        return None
    if q in CONSTANT_ARRAYS and call.positional:
        found = ev.const(call.positional[0].value)
        if found is not UNKNOWN:
            return found
    if q.startswith(TENSOR_CONSTRUCTORS):
        inner = call.arg(0)
        if inner is None:
            return UNKNOWN
        value = ev.eval(inner.value)
        element = ev.f.elements_of(value) if not isinstance(value, Binding) else value
        if isinstance(element, Binding) and element.kind == "ids":  # `torch.tensor([ids])`, `torch.cat(per_text_ids)`
            return element
        return value if isinstance(value, Binding) and value.kind == "ids" else UNKNOWN
    if q.startswith("torch") and q.rsplit(".", 1)[-1] == "pad_sequence" or q in PADDERS:
        return Binding("ids", call, None, "padded")
    return None
