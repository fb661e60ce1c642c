"""The keras library model (facts/brain/keras.py) and tf.data's elements (facts/brain/tf_data.py): a functional
model's `Input` holds what the model built on it is fed; a keras model's `call` gets what its runs are given."""

from __future__ import annotations

from bertlint import knowledge, versions
from bertlint.facts import UNKNOWN, Binding, keras_feed
from bertlint.facts.names import is_model_class
from test_values import facts_of, last_call

HEAD = """
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Dense, Input
from tensorflow.keras.models import Model
from transformers import AutoTokenizer, TFBertModel

tok = AutoTokenizer.from_pretrained("bert-base-uncased")
enc = tok(["a", "b c"], padding="max_length", max_length=8)
ids, mask = np.array(enc["input_ids"]), np.array(enc["attention_mask"])
bert = TFBertModel.from_pretrained("bert-base-uncased")
"""


def _input_value(body: str, name: str = "ids_in"):
    """What the name `name` holds where the transformer is called on it (`bert(<name>)`)."""
    facts = facts_of(HEAD + body)
    call = next(c for c in facts.calls if facts.text(c.node).startswith(f"bert({name}"))
    return facts, facts.evaluate(call.positional[0].value, call.scope, call.order)


def _is_ids(value) -> bool:
    return isinstance(value, Binding) and value.kind == "ids" and value.detail == "input_ids"


def test_an_input_holds_the_array_fit_is_given():
    facts, value = _input_value("""
ids_in = Input(shape=(8,), dtype=tf.int32)
model = Model(inputs=ids_in, outputs=Dense(1)(bert(ids_in)[0][:, 0]))
model.fit(ids, np.array([0, 1]))
""")
    assert _is_ids(value)


def test_an_input_holds_the_first_part_of_a_datasets_elements_through_element_keeping_methods():
    facts = facts_of(HEAD + """
def build(transformer):
    ids_in = Input(shape=(8,), dtype=tf.int32)
    return Model(ids_in, Dense(1)(transformer(ids_in)[0][:, 0]))
ds = tf.data.Dataset.from_tensor_slices((ids, np.array([0, 1]))).repeat().shuffle(8).batch(2).cache().prefetch(1)
model = build(bert)
model.fit(ds)
""")
    call = last_call(facts, "transformer")
    assert _is_ids(facts.evaluate(call.positional[0].value, call.scope, call.order))


def test_a_mapped_dataset_has_elements_of_its_own():
    facts, value = _input_value("""
ids_in = Input(shape=(8,), dtype=tf.int32)
model = Model(inputs=ids_in, outputs=Dense(1)(bert(ids_in)[0][:, 0]))
model.fit(tf.data.Dataset.from_tensor_slices((ids, np.array([0, 1]))).map(lambda x, y: (x + 1, y)))
""")
    assert value is UNKNOWN


def test_list_inputs_take_their_position_and_dict_inputs_their_key_or_name():
    listed = """
ids_in = Input(shape=(8,), dtype=tf.int32, name="input_ids")
mask_in = Input(shape=(8,), dtype=tf.int32, name="attention_mask")
model = Model(inputs=[mask_in, ids_in], outputs=Dense(1)(bert(ids_in)[0][:, 0]))
"""
    assert _is_ids(_input_value(listed + "model.fit([mask, ids], np.array([0, 1]))\n")[1])
    assert _input_value(listed + "model.fit([ids, mask], np.array([0, 1]))\n")[1].detail == "attention_mask"
    assert _is_ids(_input_value(listed + 'model.predict({"attention_mask": mask, "input_ids": ids})\n')[1])
    keyed = """
ids_in = Input(shape=(8,), dtype=tf.int32)
model = Model(inputs={"tokens": ids_in}, outputs=Dense(1)(bert(ids_in)[0][:, 0]))
model.predict({"tokens": ids})
"""
    assert _is_ids(_input_value(keyed)[1])


def test_an_input_is_unknown_where_a_run_feeds_it_something_unknown_or_nothing_runs_it():
    built = """
ids_in = Input(shape=(8,), dtype=tf.int32)
model = Model(inputs=ids_in, outputs=Dense(1)(bert(ids_in)[0][:, 0]))
"""
    assert _input_value(built + "model.fit(ids, np.array([0, 1]))\nmodel.predict(np.load('x.npy'))\n")[1] is UNKNOWN
    assert _input_value(built)[1] is UNKNOWN
    assert _is_ids(_input_value(built + "print(model(ids))\n")[1])  # a call of the model runs the graph too


def test_a_keras_models_call_gets_what_its_runs_are_given_and_no_keywords():
    facts = facts_of(HEAD.replace("TFBertModel", "TFBertMainLayer, TFBertPreTrainedModel") + """
class Classifier(TFBertPreTrainedModel):
    def __init__(self, config, *inputs, **kwargs):
        super().__init__(config, *inputs, **kwargs)
        self.bert = TFBertMainLayer(config)

    def call(self, inputs, training=False, **kwargs):
        return self.bert(inputs, training=training, **kwargs)[0]

model = Classifier.from_pretrained("bert-base-uncased")
model.fit(tf.data.Dataset.from_tensor_slices((tf.constant(ids), np.array([0, 1]))).batch(2))
""")
    call = last_call(facts, "self.bert")
    assert _is_ids(facts.evaluate(call.positional[0].value, call.scope, call.order))
    assert facts.gives(call, "attention_mask") is False
    assert keras_feed(facts, call.positional[0].value, call.scope, call.order) == "call"


def test_keras_feed_tells_an_input_from_other_values():
    facts, _ = _input_value("""
ids_in = Input(shape=(8,), dtype=tf.int32)
model = Model(inputs=ids_in, outputs=Dense(1)(bert(ids_in)[0][:, 0]))
other = bert(ids)
""")
    forward, other = (c for c in facts.calls if facts.text(c.node).startswith("bert("))
    assert keras_feed(facts, forward.positional[0].value, forward.scope, forward.order) == "input"
    assert keras_feed(facts, other.positional[0].value, other.scope, other.order) is None


def test_iterating_a_sliced_dataset_gives_its_elements():
    facts = facts_of(HEAD + """
for x, y in tf.data.Dataset.from_tensor_slices((ids, np.array([0, 1]))).batch(2):
    print(x)
""")
    call = last_call(facts, "print")
    assert _is_ids(facts.evaluate(call.positional[0].value, call.scope, call.order))


def test_tf_main_layers_are_bidirectional_models_that_transformers_5_removed():
    assert is_model_class("transformers.TFDistilBertMainLayer") and not is_model_class("transformers.TFDistilBertMainLayerX")
    assert knowledge.attention_of(class_name="transformers.TFXLMRobertaMainLayer") == "bidirectional"
    assert versions.symbol_removed("tensorflow", "transformers.TFBertMainLayer", (5, 0, 0))
    assert not versions.symbol_removed("tensorflow", "transformers.TFBertMainLayer", (4, 57))
    assert not versions.symbol_removed("tensorflow", "transformers.BertModel", (5, 0, 0))


def test_a_functional_model_may_train_the_transformer_its_graph_runs():
    from bertlint.facts import keras_trains_pretrained

    facts = facts_of(HEAD + """
ids_in = Input(shape=(8,), dtype=tf.int32)
model = Model(inputs=ids_in, outputs=Dense(1)(bert(ids_in)[0][:, 0]))
model.compile(tf.keras.optimizers.Adam(), loss="mse")
stack = tf.keras.Sequential([Dense(4), Dense(1)])
stack.compile(tf.keras.optimizers.SGD(), loss="mse")
""")
    adam, sgd = (next(c for c in facts.calls if c.short == name) for name in ("Adam", "SGD"))
    assert keras_trains_pretrained(facts, adam) and not keras_trains_pretrained(facts, sgd)
