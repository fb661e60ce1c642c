"""Catalogue 2 (issue 14): BL209, BL210, BL306, BL211 — behaviour the fixtures do not pin down."""

from __future__ import annotations

import pytest

from bertlint import knowledge
from conftest import codes, lint_text


def only(code: str, source: str, **opts) -> list:
    return [f for f in lint_text(source, **opts) if f.code == code]


# ---------------------------------------------------------------------------------------------- knowledge


@pytest.mark.parametrize(
    ("checkpoint", "lacks_pad", "pads_right"),
    [
        ("gpt2", True, True),
        ("openai-community/gpt2-xl", True, True),
        ("meta-llama/Llama-2-7b-chat-hf", True, False),  # LlamaTokenizer pads on the left by default
        ("mistralai/Mistral-7B-v0.1", True, False),
        ("Qwen/Qwen2.5-0.5B", False, False),  # Qwen2Tokenizer defaults pad_token to <|endoftext|>
        ("EleutherAI/pythia-160m", False, True),  # 5.x GPTNeoXTokenizer defaults pad_token to <|padding|>
        ("bert-base-uncased", False, False),
        ("./gpt2", False, False),
    ],
)
def test_tokenizer_traits(checkpoint: str, lacks_pad: bool, pads_right: bool) -> None:
    assert knowledge.tokenizer_lacks_pad_token(checkpoint) is lacks_pad
    assert knowledge.tokenizer_pads_right(checkpoint) is pads_right


def test_t5_family() -> None:
    assert knowledge.is_t5_family(checkpoint="google/flan-t5-xl")
    assert knowledge.is_t5_family(checkpoint="google/byt5-small")
    assert knowledge.is_t5_family(class_name="transformers.MT5ForConditionalGeneration")
    assert not knowledge.is_t5_family(class_name="transformers.BartForConditionalGeneration")
    assert not knowledge.is_t5_family(class_name="transformers.AutoModelForSeq2SeqLM")
    assert not knowledge.is_t5_family(info=knowledge.lookup_checkpoint("facebook/bart-base"), checkpoint="t5-small")
    assert not knowledge.t5_overflows_fp16(checkpoint="t5-small", class_name="transformers.T5ForConditionalGeneration")
    assert not knowledge.t5_overflows_fp16(class_name="transformers.T5ForConditionalGeneration")
    assert knowledge.t5_overflows_fp16(class_name="transformers.UMT5ForConditionalGeneration")


# ---------------------------------------------------------------------------------------------- BL209

GPT2_PAD = """\
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("gpt2"{load})
{before}
enc = tok(["a", "b c"], padding=True)
{after}
"""


def test_bl209_names_the_error_and_the_checkpoint() -> None:
    [finding] = only("BL209", GPT2_PAD.format(load="", before="", after=""))
    assert "`gpt2` tokenizer has no pad token" in finding.message
    assert "Asking to pad but the tokenizer does not have a padding token" in finding.message
    assert "tokenizer.pad_token = tokenizer.eos_token" in finding.help


@pytest.mark.parametrize(
    ("load", "before", "after"),
    [
        (', pad_token="<|endoftext|>"', "", ""),
        ("", "tok.pad_token_id = 50256", ""),
        ("", 'setattr(tok, "pad_token", tok.eos_token)', ""),
        ("", "tok.add_special_tokens(SPECIAL)", ""),
        ("", "", "tok.pad_token = tok.eos_token  # later in the file: silent (it may run first)"),
        ("", "", "from trl import SFTTrainer\nSFTTrainer(model='gpt2', processing_class=tok)"),
    ],
)
def test_bl209_silent_when_a_pad_token_may_be_set(load: str, before: str, after: str) -> None:
    assert only("BL209", GPT2_PAD.format(load=load, before=before, after=after)) == []


def test_bl209_add_special_tokens_without_pad_sets_none() -> None:
    source = GPT2_PAD.format(load="", before='tok.add_special_tokens({"additional_special_tokens": ["<sep>"]})', after="")
    assert codes(only("BL209", source)) == ["BL209"]


def test_bl209_padding_max_length_needs_a_length() -> None:
    """Without `max_length`, `padding="max_length"` pads to `model_max_length`, which for Llama is the unset
    sentinel: the tokenizer then does not pad at all (tokenization_utils_base.py, LARGE_INTEGER)."""
    source = """\
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("meta-llama/Llama-2-7b-hf")
a = tok("one text", padding="max_length")
b = tok("one text", padding="max_length", max_length=64, truncation=True)
c = tok("one text", padding=False)
"""
    assert [f.line for f in only("BL209", source)] == [4]


# ---------------------------------------------------------------------------------------------- BL210

GPT2_GENERATE = """\
from transformers import AutoModelForCausalLM, AutoTokenizer
tok = AutoTokenizer.from_pretrained("gpt2")
tok.pad_token = tok.eos_token
model = AutoModelForCausalLM.from_pretrained("gpt2")
enc = tok(["Once upon a time", "The dragon said"], padding=True, return_tensors="pt")
out = model.generate({args}, max_new_tokens=20)
"""


@pytest.mark.parametrize("args", ["**enc", "enc['input_ids']", "input_ids=enc.input_ids.to('cpu')", "enc['input_ids'], attention_mask=enc['attention_mask']"])
def test_bl210_follows_the_prompt_ids(args: str) -> None:
    [finding] = only("BL210", GPT2_GENERATE.format(args=args))
    assert finding.line == 5 and "`gpt2` tokenizer's default" in finding.message


def test_bl210_fix_pads_on_the_left() -> None:
    from bertlint import fixer

    source = GPT2_GENERATE.format(args="**enc")
    fixed, _ = fixer.apply_edits(source, lint_text(source), {"safe", "unsafe"})
    assert 'padding=True, padding_side="left", return_tensors="pt"' in fixed
    assert only("BL210", fixed) == []


def test_bl210_no_call_time_fix_before_4_45() -> None:
    [finding] = only("BL210", GPT2_GENERATE.format(args="**enc"), transformers_version="4.44")
    assert finding.fix is None


def test_bl210_generated_ids_of_another_encoding_are_not_prompts() -> None:
    source = GPT2_GENERATE.format(args="**tok('one prompt', return_tensors='pt')")
    assert only("BL210", source) == []


# ---------------------------------------------------------------------------------------------- BL306

T5_LOOP = """\
import torch
from transformers import T5ForConditionalGeneration
model = T5ForConditionalGeneration.from_pretrained("{checkpoint}"){cast}
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for batch in range(10):
    with {autocast}:
        loss = model(input_ids=batch, labels=batch).loss
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    ("cast", "autocast", "fires"),
    [
        ("", 'torch.autocast(device_type="cuda")', True),
        ("", "torch.cuda.amp.autocast()", True),
        ("", 'torch.autocast("cuda", dtype=torch.float16)', True),
        (".half()", "torch.no_grad()", True),
        (".to(torch.float16)", "torch.no_grad()", True),
        ("", 'torch.autocast("cuda", dtype=torch.bfloat16)', False),
        ("", 'torch.autocast("cpu")', False),  # the CPU default is bfloat16
        ("", 'torch.autocast("cuda", enabled=False)', False),
        (".to(torch.bfloat16)", "torch.no_grad()", False),
        (".to('cuda')", "torch.no_grad()", False),
    ],
)
def test_bl306_float16_shapes(cast: str, autocast: str, fires: bool) -> None:
    found = only("BL306", T5_LOOP.format(checkpoint="google/t5-v1_1-base", cast=cast, autocast=autocast))
    assert bool(found) is fires


@pytest.mark.parametrize(
    ("checkpoint", "fires"),
    [("t5-small", False), ("google-t5/t5-base", False), ("t5-large", True), ("google/flan-t5-base", True), ("google/byt5-small", True), ("UNKNOWN", False)],
)
def test_bl306_original_small_and_base_tolerate_fp16(checkpoint: str, fires: bool) -> None:
    """transformers#23918: t5-small and t5-base train in fp16 (the HF notebooks do), t5-large and v1.1 models turn NaN."""
    source = T5_LOOP.format(checkpoint=checkpoint, cast="", autocast="torch.cuda.amp.autocast()")
    if checkpoint == "UNKNOWN":
        source = source.replace('"UNKNOWN"', "input()")
    assert bool(only("BL306", source)) is fires


def test_bl306_mt5_class_with_an_unknown_checkpoint() -> None:
    source = T5_LOOP.format(checkpoint="x", cast="", autocast="torch.cuda.amp.autocast()").replace("T5ForConditionalGeneration", "MT5ForConditionalGeneration").replace('"x"', "input()")
    assert [f.line for f in only("BL306", source)] == [6]


def test_bl306_names_the_model_and_the_cause() -> None:
    [finding] = only("BL306", T5_LOOP.format(checkpoint="google/umt5-small", cast="", autocast="torch.cuda.amp.autocast()"))
    assert "float16 autocast with the T5-family model `google/umt5-small`" in finding.message
    assert "bfloat16" in finding.help


def test_bl306_lightning_precision() -> None:
    source = """\
import pytorch_lightning as pl
from transformers import AutoModelForSeq2SeqLM
model = AutoModelForSeq2SeqLM.from_pretrained("t5-large")
loss = model(input_ids=1, labels=1).loss
loss.backward()
pl.Trainer(precision="16-mixed", max_epochs=3)
pl.Trainer(precision="bf16-mixed", max_epochs=3)
"""
    assert [f.line for f in only("BL306", source)] == [6]


def test_bl306_needs_training() -> None:
    source = """\
import torch
from transformers import T5ForConditionalGeneration
model = T5ForConditionalGeneration.from_pretrained("t5-small")
with torch.autocast("cuda"):
    out = model.generate(input_ids=torch.ones(1, 3, dtype=torch.long))
"""
    assert only("BL306", source) == []


# ---------------------------------------------------------------------------------------------- BL211

EOS_PAD = """\
from transformers import AutoTokenizer, DataCollatorForLanguageModeling
tok = AutoTokenizer.from_pretrained("gpt2")
other = AutoTokenizer.from_pretrained("distilgpt2")
tok.pad_token = {pad}
def encode(example):
    return tok(example["text"] + tok.eos_token)
collator = DataCollatorForLanguageModeling({collated}, mlm={mlm})
"""


@pytest.mark.parametrize(
    ("pad", "collated", "mlm", "fires"),
    [
        ("tok.eos_token", "tok", "False", True),
        ("tok.eos_token", "tokenizer=tok", "False", True),
        ("tok.eos_token", "other", "False", False),  # another tokenizer's collator
        ("tok.eos_token", "tok", "True", False),
        ("other.eos_token", "tok", "False", False),  # not this tokenizer's EOS
        ('"<|endoftext|>"', "tok", "False", False),  # a literal: left unknown
    ],
)
def test_bl211_shapes(pad: str, collated: str, mlm: str, fires: bool) -> None:
    found = only("BL211", EOS_PAD.format(pad=pad, collated=collated, mlm=mlm))
    assert bool(found) is fires
    if fires:
        assert found[0].line == 4 and "every EOS is masked too" in found[0].message


# ---------------------------------------------------------------------------------------------- BL404

KERAS = """\
import tensorflow as tf
from transformers import TFAutoModelForSequenceClassification
model = TFAutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
model.compile(optimizer="adam", loss={loss})
"""


@pytest.mark.parametrize(
    ("loss", "fixed"),
    [
        ("tf.keras.losses.SparseCategoricalCrossentropy()", "tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)"),
        ("tf.keras.losses.CategoricalCrossentropy(label_smoothing=0.1)", "tf.keras.losses.CategoricalCrossentropy(label_smoothing=0.1, from_logits=True)"),
        ("tf.keras.losses.BinaryCrossentropy(from_logits=False)", "tf.keras.losses.BinaryCrossentropy(from_logits=True)"),
    ],
)
def test_bl404_fix_adds_from_logits(loss: str, fixed: str) -> None:
    from bertlint import fixer

    source = KERAS.format(loss=loss)
    after, _ = fixer.apply_edits(source, lint_text(source, transformers_version="4.46"), {"safe"})
    assert fixed in after
    assert only("BL404", after, transformers_version="4.46") == []


@pytest.mark.parametrize(
    ("loss", "fires"),
    [
        ('"categorical_crossentropy"', True),
        ("tf.keras.losses.sparse_categorical_crossentropy", True),
        ('"mse"', False),
        ("tf.keras.losses.SparseCategoricalCrossentropy(True)", False),  # positional from_logits
        ("tf.keras.losses.SparseCategoricalCrossentropy(from_logits=FLAG)", False),  # unknown
    ],
)
def test_bl404_loss_shapes(loss: str, fires: bool) -> None:
    assert bool(only("BL404", KERAS.format(loss=loss), transformers_version="4.46")) is fires


def test_bl404_message_and_target() -> None:
    source = KERAS.format(loss='"sparse_categorical_crossentropy"')
    [finding] = only("BL404", source, transformers_version="4.46")
    assert 'loss="sparse_categorical_crossentropy"' in finding.message and "logits" in finding.message and finding.fix is None
    assert only("BL404", source, transformers_version="5.0") == []


# ---------------------------------------------------------------------------------------------- BL309

SAME_SPLIT = """\
from transformers import AutoModelForSequenceClassification, Trainer
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
trainer = Trainer(model=model, train_dataset={train}, eval_dataset={evaluated})
trainer.train()
{after}
"""


@pytest.mark.parametrize(
    ("train", "evaluated", "after", "fires"),
    [
        ("ds", "ds", "", True),
        ("ds['train']", 'ds[ "train" ]', "", True),
        ("ds['train']", "ds['test']", "", False),
        ("ds['train']", "ds['train'].select(range(100))", "", False),
        ("ds", "ds", "trainer.predict(test_ds)", False),  # a real held-out score beside it
        ("ds", "ds", "trainer.evaluate()", True),
    ],
)
def test_bl309_trainer_shapes(train: str, evaluated: str, after: str, fires: bool) -> None:
    found = only("BL309", SAME_SPLIT.format(train=train, evaluated=evaluated, after=after))
    assert bool(found) is fires
    if fires:
        assert "the evaluation data is the training data" in found[0].message


# ---------------------------------------------------------------------------------------------- BL310

LOADER = """\
import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForSequenceClassification
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
loader = DataLoader(TensorDataset(torch.ones(4, 3)), {args})
for (ids,) in loader:
    model(input_ids=ids).loss.backward()
"""


@pytest.mark.parametrize(
    ("args", "fixed"),
    [
        ("batch_size=2", "batch_size=2, shuffle=True)"),
        ("batch_size=2,", "batch_size=2, shuffle=True,)"),
        ("batch_size=2, shuffle=False", "batch_size=2, shuffle=True)"),
    ],
)
def test_bl310_fix(args: str, fixed: str) -> None:
    from bertlint import fixer

    source = LOADER.format(args=args)
    [finding] = only("BL310", source)
    after, _ = fixer.apply_edits(source, lint_text(source), {"safe", "unsafe"})
    assert fixed in after and only("BL310", after) == []


@pytest.mark.parametrize("args", ["batch_size=2, shuffle=True", "batch_size=2, batch_sampler=buckets", "**loader_kwargs", "2, True"])
def test_bl310_silent(args: str) -> None:
    assert only("BL310", LOADER.format(args=args)) == []


def test_bl310_loader_of_one_branch_is_left_alone() -> None:
    source = LOADER.format(args="batch_size=2").replace("loader = DataLoader(", "if FAKE:\n    loader = DataLoader(")
    assert only("BL310", source) == []


# ---------------------------------------------------------------------------------------------- BL307

EPOCHS = """\
import torch
from transformers import AutoModelForSequenceClassification
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
def run_epoch(batches):
    {restore}
    for batch in batches:
        model(**batch).loss.backward()
        optimizer.step()
for epoch in range(3):
    run_epoch(torch.load("train.pt"))
    model.eval()
"""


@pytest.mark.parametrize(("restore", "fires"), [("pass", False), ("model.train()", False)])
def test_bl307_training_loop_in_a_helper_is_not_this_loop(restore: str, fires: bool) -> None:
    """The step loop lives in `run_epoch`: the epoch loop outside it is not seen as the training loop (no finding)."""
    assert bool(only("BL307", EPOCHS.format(restore=restore))) is fires


def test_bl307_train_false_is_eval_and_message() -> None:
    source = """\
import torch
from transformers import AutoModelForSequenceClassification
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for epoch in range(3):
    for batch in range(10):
        model(batch).loss.backward()
        optimizer.step()
    model.train(False)
"""
    [finding] = only("BL307", source)
    assert finding.line == 9 and "dropout off" in finding.message and "model.train()" in finding.help
    assert only("BL307", source.replace("model.train(False)", "model.train(True)")) == []


def test_bl307_parameters_read_in_a_compound_statement() -> None:
    """`for p in model.parameters():` heads a compound statement (it used to crash the optimizer lookup)."""
    source = """\
import torch
from transformers import AutoModelForSequenceClassification
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
for p in model.parameters():
    p.requires_grad = True
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for epoch in range(3):
    for batch in range(10):
        model(batch).loss.backward()
        optimizer.step()
    model.eval()
"""
    assert [f.line for f in only("BL307", source)] == [11]


# ---------------------------------------------------------------------------------------------- BL308

SCHEDULE = """\
import torch
from transformers import AutoModelForSequenceClassification, get_linear_schedule_with_warmup
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
batches = torch.load("b.pt")
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
sched = get_linear_schedule_with_warmup(optimizer, 10, {length})
for epoch in range(3):
    for batch in batches:
        model(**batch).loss.backward()
        {inner}
    {outer}
"""


@pytest.mark.parametrize(
    ("length", "inner", "outer", "line"),
    [
        ("len(batches) * 3", "optimizer.step()", "sched.step()", 11),
        ("len(batches) * 3", "sched.step(); optimizer.step()", "pass", 10),
        ("1000", "sched.step(); optimizer.step()", "pass", 10),
        ("len(batches) * 3", "optimizer.step(); sched.step()", "pass", None),
        ("3", "optimizer.step()", "sched.step()", None),  # sized in epochs
        ("num_training_steps=N", "optimizer.step()", "sched.step()", None),  # unknown length
    ],
)
def test_bl308_shapes(length: str, inner: str, outer: str, line: int | None) -> None:
    found = only("BL308", SCHEDULE.format(length=length, inner=inner, outer=outer))
    assert [f.line for f in found] == ([line] if line else [])
