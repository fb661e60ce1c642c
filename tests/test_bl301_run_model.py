"""BL301 reads the optimizer of each TrainingArguments call, the model the Trainer is handed, and loralib's LoRA
(trigger corpus q, issue 22): the causes behind a miss and two wrong findings on real code."""

from __future__ import annotations

from conftest import lint_text

TRAINER = '''
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments
model = AutoModelForSequenceClassification.from_pretrained("bert-base-cased", num_labels=5)
first = TrainingArguments(output_dir="test_trainer"{first})
args = TrainingArguments(output_dir="test_trainer", learning_rate=1e-3{second})
Trainer(model=model, args=args, train_dataset=None).train()
'''

DONOR = '''
from transformers import RobertaForMaskedLM, RobertaForSequenceClassification, Trainer, TrainingArguments
mlm = RobertaForMaskedLM.from_pretrained("roberta-base")
cls = RobertaForSequenceClassification(mlm.config)
cls.roberta.load_state_dict(mlm.roberta.state_dict())
{freeze}
Trainer(model={trained}, args=TrainingArguments(output_dir="o", learning_rate=5e-4), train_dataset=None).train()
'''
FREEZE = "for p in cls.roberta.parameters():\n    p.requires_grad = False"


def bl301(source: str) -> list:
    return [f for f in lint_text(source) if f.code == "BL301"]


def test_each_training_args_call_has_its_own_optimizer():
    [finding] = bl301(TRAINER.format(first="", second=""))  # a second call no longer hides the rate
    assert finding.line == 5 and "10× above" in finding.message
    assert bl301(TRAINER.format(first="", second=', optim="sgd"')) == []  # that call's own SGD: no published range
    [finding] = bl301(TRAINER.format(first=', optim="sgd"', second=""))  # the other call's optim is not this one's
    assert finding.line == 5


def test_a_frozen_body_counts_on_the_model_the_trainer_gets():
    assert bl301(DONOR.format(freeze=FREEZE, trained="cls")) == []  # the masked LM only lends its weights
    assert len(bl301(DONOR.format(freeze="", trained="cls"))) == 1  # the classifier's encoder trains
    assert len(bl301(DONOR.format(freeze=FREEZE, trained="mlm"))) == 1  # the Trainer gets the unfrozen masked LM


def test_loralib_mark_only_lora_as_trainable_is_lora():
    source = '''
import loralib as lora
from transformers import RobertaForSequenceClassification, Trainer, TrainingArguments
model = RobertaForSequenceClassification.from_pretrained("roberta-base", num_labels=2)
{mark}
Trainer(model=model, args=TrainingArguments(output_dir="o", learning_rate={rate}), train_dataset=None).train()
'''
    assert bl301(source.format(mark="lora.mark_only_lora_as_trainable(model)", rate="5e-4")) == []
    [finding] = bl301(source.format(mark="lora.mark_only_lora_as_trainable(model)", rate="1e-1"))
    assert "LoRA" in finding.message and "10× above" in finding.message
    [finding] = bl301(source.format(mark="", rate="5e-4"))
    assert "RoBERTa" in finding.message


def test_one_keras_train_on_batch_is_a_demo_not_a_run():
    source = '''# bertlint-test: transformers-version=4.40
import tensorflow as tf
from transformers import TFAutoModelForSequenceClassification
model = TFAutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
{step}
'''
    assert bl301(source.format(step="model.train_on_batch(batch, labels)")) == []
    assert len(bl301(source.format(step="model.train_on_batch(batch, labels)\nmodel.fit(dataset, epochs=3)"))) == 1
    assert len(bl301(source.format(step="for batch, labels in dataset:\n    model.train_on_batch(batch, labels)"))) == 1


def test_a_training_args_rate_counts_on_the_models_its_trainers_get():
    source = '''
from transformers import AutoModelForTokenClassification, Trainer, TrainingArguments
full = AutoModelForTokenClassification.from_pretrained("bert-base-uncased", num_labels=9)
Trainer(model=full, args=TrainingArguments(output_dir="a", learning_rate=2e-5), train_dataset=None).train()
head = AutoModelForTokenClassification.from_pretrained("bert-base-uncased", num_labels=9)
head.base_model.requires_grad_(False)
head_args = TrainingArguments(output_dir="b", learning_rate=1e-3)
Trainer(model={model}, args=head_args, train_dataset=None).train()
'''
    assert bl301(source.format(model="head")) == []  # only the frozen-body model gets the 1e-3
    [finding] = bl301(source.format(model="full"))
    assert finding.line == 7


def test_several_training_args_rates_in_a_lora_file_are_left_alone():
    source = '''
from peft import LoraConfig
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
model = AutoModelForCausalLM.from_pretrained("gpt2")
config = LoraConfig(r=8)
Trainer(model=model, args=TrainingArguments(output_dir="a", learning_rate=1e-6), train_dataset=None).train()
{second}
'''
    assert len(bl301(source.format(second=""))) == 1  # one run: the adapters'
    second = 'Trainer(model=model, args=TrainingArguments(output_dir="b", learning_rate=1e-6), train_dataset=None).train()'
    assert bl301(source.format(second=second)) == []  # two runs: which one is LoRA is not evident
