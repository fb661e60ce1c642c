"""tf.data: a `tf.data.Dataset` and what its methods return.

Sources: tensorflow/python/data/ops/dataset_ops.py: the `tf.data` constructors (`Dataset.from_tensor_slices`,
`TFRecordDataset`, ...) make a Dataset, and `map`, `batch`, `padded_batch`, `shuffle`, `prefetch`, `cache`, `repeat`,
`filter`, `take`, `skip`, `unbatch`, `zip`, `concatenate`, `with_options` return one; keras
`text_dataset_from_directory` returns one; datasets `Dataset.to_tf_dataset` and transformers
`TFPreTrainedModel.prepare_tf_dataset` make one. `Dataset.map` traces its function into a graph (its arguments are
symbolic tensors). The elements: `from_tensor_slices(x)`'s are the slices of `x` along its first axis, of the structure
`x` has (a tuple stays a tuple: `(ids, labels)` gives pairs); `from_tensors(x)`'s one element is `x`. `batch`,
`padded_batch` (rows of padded ids stay padded ids), `shuffle`, `prefetch`, `cache`, `repeat`, `filter`, `take`, `skip`,
`unbatch`, `shard`, `rebatch` and `with_options` keep what every element holds; `map`, `zip`, `concatenate` and the
other methods make new elements (a dataset whose elements are unknown). tensorflow/python/ops/script_ops.py: `tf.py_function`, `tf.numpy_function` (and TF1's `py_func`) run
the function they wrap eagerly, on real values, inside that graph.
"""

from __future__ import annotations

from typing import Any

from bertlint.facts.abstract import Binding
from bertlint.facts.nodes import UNKNOWN

# the methods that keep what every element holds, and those that make other elements
ELEMENT_KEEPING = frozenset({"batch", "padded_batch", "shuffle", "prefetch", "cache", "repeat", "filter", "take", "skip", "unbatch", "shard", "rebatch", "with_options"})
DATASET_METHODS = ELEMENT_KEEPING | {"map", "zip", "concatenate", "flat_map", "interleave", "window", "enumerate"}
SLICING = ("from_tensor_slices", "from_tensors")
FACTORIES = ("tensorflow.keras.utils.text_dataset_from_directory", "keras.utils.text_dataset_from_directory", "tensorflow.keras.preprocessing.text_dataset_from_directory")
CONVERTERS = ("to_tf_dataset", "prepare_tf_dataset")
# wrappers whose function runs eagerly inside a traced graph
EAGER_WRAPPERS = ("tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.compat.v1.py_func")


def call(ev, call) -> Any:
    q = call.qualname or ""
    if q.startswith("tensorflow.data.") or q in FACTORIES or call.method in CONVERTERS:
        return Binding("tf_dataset", call)
    if call.method in DATASET_METHODS and not q:  # asked before `datasets`' `map`: a tf.data map stays a tf.data dataset
        receiver = ev.kind(call.receiver, call.scope, call.order)
        if receiver is not None and receiver.kind == "tf_dataset":
            return receiver if call.method in ELEMENT_KEEPING else Binding("tf_dataset", call)
    return None


def iterate(values, base) -> Any:
    """What every element of a dataset holds: the sliced value's (a row of padded ids is padded ids), unknown for a
    dataset some other call made."""
    if not isinstance(base, Binding) or base.kind != "tf_dataset" or base.joined or base.call is None:
        return None
    made = base.call
    if made.method not in SLICING or not (made.qualname or "").startswith("tensorflow.data.") or made.has_star_args:
        return UNKNOWN
    arg = made.arg(0, "tensors")
    return values.evaluate(arg.value, made.scope, made.order) if arg is not None else UNKNOWN
