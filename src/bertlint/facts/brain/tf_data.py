"""tf.data: a `tf.data.Dataset` and what its methods return.

Sources: tensorflow/python/data/ops/dataset_ops.py: the `tf.data` constructors (`Dataset.from_tensor_slices`,
`TFRecordDataset`, ...) make a Dataset, and `map`, `batch`, `padded_batch`, `shuffle`, `prefetch`, `cache`, `repeat`,
`filter`, `take`, `skip`, `unbatch`, `zip`, `concatenate`, `with_options` return one; keras
`text_dataset_from_directory` returns one; datasets `Dataset.to_tf_dataset` and transformers
`TFPreTrainedModel.prepare_tf_dataset` make one. `Dataset.map` traces its function into a graph (its arguments are
symbolic tensors); tensorflow/python/ops/script_ops.py: `tf.py_function`, `tf.numpy_function` (and TF1's `py_func`) run
the function they wrap eagerly, on real values, inside that graph.
"""

from __future__ import annotations

from typing import Any

from bertlint.facts.abstract import Binding

DATASET_METHODS = frozenset({"map", "batch", "padded_batch", "shuffle", "prefetch", "cache", "repeat", "filter", "take", "skip", "unbatch", "zip", "concatenate", "with_options"})
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
            return receiver
    return None
