"""BL203-BL208, BL402, BL403: model inputs, labels, evaluation and tf.data; what fires, what stays silent, what the fix does."""

from __future__ import annotations

import textwrap

import pytest

from bertlint import fixer
from conftest import lint_text

HEAD = """\
import numpy as np
import torch
from datasets import Dataset
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoModelForSequenceClassification, AutoTokenizer
"""


def found(code: str, body: str, **options) -> list:
    return [f for f in lint_text(HEAD + textwrap.dedent(body), **options) if f.code == code]


# --------------------------------------------------------------------------- BL203

SEQ2SEQ = """\
tok = AutoTokenizer.from_pretrained("t5-small")
model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
"""
# stored labels reach a loss only where the file trains
TRAINS = """
from transformers import Trainer
Trainer(model=model).train()
"""
TRAINS_DS = TRAINS.replace("model=model", "model=model, train_dataset=ds")  # a mapped dataset reaches the loss only when fed


@pytest.mark.parametrize(
    "body",
    [
        # targets padded to a fixed length, copied into labels
        """
        def prep(batch):
            enc = tok(batch["src"], truncation=True, max_length=256)
            target = tok(text_target=batch["tgt"], padding="max_length", truncation=True, max_length=64)
            enc["labels"] = target["input_ids"]
            return enc
        """,
        # inputs and targets in one call: "labels" comes back padded
        """
        def prep(batch):
            return tok(batch["src"], text_target=batch["tgt"], padding="max_length", truncation=True, max_length=64)
        """,
        # a padded batch passed as labels in a hand-written step
        """
        target = tok(["a b c", "d"], padding=True, return_tensors="pt")
        loss = model(input_ids=target["input_ids"], attention_mask=target["attention_mask"], labels=target["input_ids"].clone()).loss
        """,
    ],
)
def test_bl203_fires_on_padded_labels(body):
    assert len(found("BL203", SEQ2SEQ + textwrap.dedent(body) + TRAINS)) == 1


def test_bl203_stored_labels_need_a_training_run_a_forward_does_not():
    stored = SEQ2SEQ + textwrap.dedent("""
        def prep(batch):
            return tok(batch["src"], text_target=batch["tgt"], padding="max_length", truncation=True, max_length=64)
        """)
    assert found("BL203", stored) == []  # tokenized (and saved) here, trained elsewhere
    forward = SEQ2SEQ + textwrap.dedent("""
        target = tok(["a b c", "d"], padding=True, return_tensors="pt")
        loss = model(input_ids=target["input_ids"], labels=target["input_ids"]).loss
        """)
    [finding] = found("BL203", forward)
    assert "dilute" in finding.message and "trains the model" not in finding.message
    [finding] = found("BL203", forward + TRAINS)
    assert "trains the model to predict [PAD]" in finding.message


def test_bl203_causal_lm_copy_of_input_ids_in_batched_map():
    body = """
    tok = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2")

    def prep(batch):
        enc = tok(batch["text"], padding=True, truncation=True, max_length=128)
        enc["labels"] = enc["input_ids"].copy()
        return enc

    ds = Dataset.from_json("train.jsonl").map(prep, batched=True)  # a real run, no handful
    """
    [finding] = found("BL203", body + textwrap.indent(TRAINS_DS, "    "))
    assert "padding=True" in finding.message and "-100" in finding.message


@pytest.mark.parametrize(
    "body",
    [
        # the -100 replacement
        """
        def prep(batch):
            target = tok(text_target=batch["tgt"], padding="max_length", truncation=True, max_length=64)
            batch["labels"] = [[t if t != tok.pad_token_id else -100 for t in row] for row in target["input_ids"]]
            return batch
        """,
        # a collator that pads unpadded labels with -100
        """
        from transformers import DataCollatorForSeq2Seq
        collator = DataCollatorForSeq2Seq(tok, model=model)
        def prep(batch):
            return tok(batch["src"], text_target=batch["tgt"], truncation=True, max_length=64)
        """,
        # -100 written where the pads are, in every way scripts do it
        """
        IGNORE = -100
        def prep(batch):
            target = tok(text_target=batch["tgt"], padding="max_length", truncation=True, max_length=64)
            labels = torch.tensor(target["input_ids"])
            labels[labels == tok.pad_token_id] = IGNORE
            batch["labels"] = labels
            return batch
        """,
        """
        def prep(batch):
            target = tok(text_target=batch["tgt"], padding="max_length", truncation=True, max_length=64)
            for row in target["input_ids"]:
                for i, t in enumerate(row):
                    if t == 0:
                        row[i] = -100
            batch["labels"] = target["input_ids"]
            return batch
        """,
        # one unpadded text
        """
        target = tok("a b c", return_tensors="pt")
        loss = model(**target, labels=target["input_ids"]).loss
        """,
        # a loss that skips the pad id
        """
        target = tok(["a b c", "d"], padding=True, return_tensors="pt")
        logits = model(**target, decoder_input_ids=target["input_ids"]).logits
        loss = torch.nn.CrossEntropyLoss(ignore_index=tok.pad_token_id)(logits.view(-1, logits.size(-1)), target["input_ids"].view(-1))
        """,
    ],
)
def test_bl203_silent(body):
    assert found("BL203", SEQ2SEQ + textwrap.dedent(body) + TRAINS) == []


def test_bl203_seq2seq_collator_keeps_the_pad_ids_already_in_the_labels():
    body = SEQ2SEQ + textwrap.dedent(
        """
        from transformers import DataCollatorForSeq2Seq
        collator = DataCollatorForSeq2Seq(tok, model=model, label_pad_token_id=-100)
        def prep(batch):
            return tok(batch["src"], text_target=batch["tgt"], padding="max_length", truncation=True, max_length=64)
        """
    ) + TRAINS
    [finding] = found("BL203", body)
    assert "only the positions it adds itself" in finding.message


def test_bl203_masking_the_prompt_is_not_masking_the_pads():
    body = """
    tok = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2")

    def prep(batch):
        enc = tok(batch["text"], padding="max_length", truncation=True, max_length=128)
        prompt_len = len(tok(batch["prompt"])["input_ids"])
        enc["labels"] = [[-100] * prompt_len + row[prompt_len:] for row in enc["input_ids"]]
        return enc

    ds = Dataset.from_json("train.jsonl").map(prep, batched=True)  # a real run, no handful
    """ + textwrap.indent(TRAINS_DS, "    ")
    assert len(found("BL203", body.replace('[[-100] * prompt_len + row[prompt_len:] for row in enc["input_ids"]]', 'enc["input_ids"]'))) == 1
    assert len(found("BL203", body)) == 0  # the labels are built, not copied: nothing to check
    copied = body.replace('enc["labels"] = [[-100] * prompt_len + row[prompt_len:] for row in enc["input_ids"]]',
                          'enc["labels"] = enc["input_ids"].copy()\n        enc["labels"][:prompt_len] = [-100] * prompt_len')
    assert len(found("BL203", copied)) == 1


def test_bl203_silent_for_a_classifier():
    body = """
    tok = AutoTokenizer.from_pretrained("bert-base-uncased")
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
    enc = tok(["a", "b c"], padding=True, return_tensors="pt")
    enc["labels"] = enc["input_ids"]
    """
    assert found("BL203", body) == []


def test_bl203_pad_to_max_length_stops_padding_in_4_52():
    body = SEQ2SEQ + textwrap.dedent(
        """
        def prep(batch):
            return tok(batch["src"], text_target=batch["tgt"], pad_to_max_length=True, truncation=True, max_length=64)
        """
    ) + TRAINS
    assert len(found("BL203", body, transformers_version="4.40")) == 1
    assert found("BL203", body, transformers_version="4.52") == []


# --------------------------------------------------------------------------- BL204

CLASSIFIER = 'model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased"{})\n'


@pytest.mark.parametrize(
    "kwargs, labels, bad",
    [
        (", num_labels=3", "labels = [0, 1, 2, 3, 2]", 3),
        (", num_labels=4", "labels = [1, 2, 3, 4]", 4),  # 1-based
        ("", "labels = [0, 1, 2, 1]", 2),  # no num_labels: two outputs
        (', id2label={0: "neg", 1: "pos"}', "labels = [0, 1, -1]", -1),
        (", num_labels=N", "N = 2\nlabels = [0] * 10 + [1] * 10 + [2] * 5", 2),
    ],
)
def test_bl204_fires(kwargs, labels, bad):
    [finding] = found("BL204", labels + "\n" + CLASSIFIER.format(kwargs))
    assert f"IndexError: Target {bad} is out of bounds." in finding.message
    assert "device-side assert triggered" in finding.message


def test_bl204_sits_on_num_labels_in_the_config():
    body = """
    labels = [0, 1, 2, 3]
    config = AutoConfig.from_pretrained("bert-base-uncased", num_labels=3)
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", config=config)
    """
    [finding] = found("BL204", body)
    assert finding.line == HEAD.count("\n") + 3 and "`num_labels=3`" in finding.message


def test_bl204_dataset_column_and_model_labels():
    body = """
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    train = Dataset.from_dict({"text": ["a", "b", "c"], "label": [0, 1, 2]})
    """
    [finding] = found("BL204", body)
    assert "the `label` column" in finding.message


def test_bl204_keras_face():
    body = """
    from transformers import TFAutoModelForSequenceClassification
    y_train = [0, 1, 2, 3]
    model = TFAutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=3)
    """
    [finding] = found("BL204", body, transformers_version="4.40")
    assert "outside the valid range of [0, 3)" in finding.message


@pytest.mark.parametrize(
    "body",
    [
        CLASSIFIER.format(", num_labels=4") + "labels = [0, 1, 2, 3]",
        CLASSIFIER.format(", num_labels=3") + "labels = [0, 1, -100, 2]",  # ignored positions
        CLASSIFIER.format(", num_labels=1") + "labels = [0, 1, 2, 3]",  # BL208's case
        CLASSIFIER.format(', num_labels=3, problem_type="multi_label_classification"') + "labels = [0, 1, 5]",
        'model = AutoModelForSequenceClassification.from_pretrained("./my-finetuned")\nlabels = [0, 1, 2]',  # its num_labels is not known
        CLASSIFIER.format(", num_labels=3") + "labels = load_labels()",  # unknown labels
        CLASSIFIER.format(", **cfg") + "labels = [0, 1, 2, 3]",
    ],
)
def test_bl204_silent(body):
    assert found("BL204", body) == []


def test_bl204_silent_when_the_config_is_changed_after():
    body = """
    labels = [0, 1, 2]
    config = AutoConfig.from_pretrained("bert-base-uncased")
    config.num_labels = 3
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", config=config)
    """
    assert found("BL204", body) == []


@pytest.mark.parametrize(
    ("body", "fires"),
    [
        # the value layer follows the config through the file's own function
        ('def make_config(n):\n    return AutoConfig.from_pretrained("bert-base-uncased", num_labels=n)\nconfig = make_config(3)', True),
        # a label attribute set on the same config under another name
        ('config = AutoConfig.from_pretrained("bert-base-uncased", num_labels=3)\nsame = config\nsame.num_labels = 4', False),
        # another config's label attribute does not count
        ('config = AutoConfig.from_pretrained("bert-base-uncased", num_labels=3)\nother = AutoConfig.from_pretrained("roberta-base")\nother.num_labels = 4', True),
        # a branch may bind either config: not known
        ('if big:\n    config = AutoConfig.from_pretrained("bert-base-uncased", num_labels=3)\nelse:\n    config = AutoConfig.from_pretrained("bert-base-uncased", num_labels=4)', False),
    ],
)
def test_bl204_config_is_the_object_the_argument_holds(body, fires):
    body += '\nlabels = [0, 1, 2, 3]\nmodel = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", config=config)\n'
    assert len(found("BL204", body)) == int(fires)


# --------------------------------------------------------------------------- BL205

LOOP = """\
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels={n}{extra})
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
enc = tok(["a b", "c"], padding=True, truncation=True, max_length=32, return_tensors="pt")
for epoch in range(3):
    {line}
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def loop(line: str, n: int = 3, extra: str = "") -> str:
    return LOOP.format(line=line, n=n, extra=extra)


@pytest.mark.parametrize(
    "line, what",
    [
        ('out = model(input_ids=enc["input_ids"].float(), attention_mask=enc["attention_mask"])', "Expected tensor for argument #1 'indices'"),
        ('out = model(enc["input_ids"].to(torch.float32), attention_mask=enc["attention_mask"])', "Expected tensor for argument #1 'indices'"),
        ('out = model(**enc, labels=torch.tensor([0, 2], dtype=torch.float))', "Target size (torch.Size([N]))"),
        ('out = model(**enc, labels=torch.tensor([0, 2]).float())', "must be the same as input size (torch.Size([N, 3]))"),
    ],
)
def test_bl205_fires(line, what):
    [finding] = found("BL205", loop(line))
    assert what in finding.message


def test_bl205_float_targets_for_cross_entropy():
    body = """
    criterion = torch.nn.CrossEntropyLoss()
    logits = torch.randn(4, 3, requires_grad=True)
    targets = torch.tensor([0, 2, 1, 1], dtype=torch.float32)
    loss = criterion(logits, targets)
    """
    [finding] = found("BL205", body)
    assert "expected target dtype to be Long" in finding.message


@pytest.mark.parametrize(
    "line, n, extra",
    [
        ('out = model(**enc, labels=torch.tensor([0, 2]))', 3, ""),
        ('out = model(enc["input_ids"], attention_mask=enc["attention_mask"].float())', 3, ""),  # masks may be float
        ('out = model(**enc, labels=torch.tensor([0.5, 2.0], dtype=torch.float))', 1, ""),  # regression
        ('out = model(**enc, labels=torch.tensor([[1, 0, 1], [0, 1, 0]], dtype=torch.float))', 3, ""),  # multi-hot rows
        ('out = model(**enc, labels=torch.tensor([0, 2], dtype=torch.float))', 3, ', problem_type="multi_label_classification"'),
        ('out = model(**enc, labels=y.float())', 3, ""),  # unknown values
    ],
)
def test_bl205_silent(line, n, extra):
    assert found("BL205", loop(line, n, extra)) == []


# --------------------------------------------------------------------------- BL206

ADD_TOKENS = """\
tok = AutoTokenizer.from_pretrained("gpt2")
model = AutoModelForCausalLM.from_pretrained("gpt2")
{line}
"""


@pytest.mark.parametrize(
    "line",
    [
        'tok.add_tokens(["<user>", "<bot>"])',
        'tok.add_special_tokens({"pad_token": "[PAD]"})',  # GPT-2 has no [PAD]
        'tok.add_special_tokens({"additional_special_tokens": ["<ctx>"]})',
    ],
)
def test_bl206_fires(line):
    [finding] = found("BL206", ADD_TOKENS.format(line=line))
    assert "IndexError: index out of range in self" in finding.message and finding.fix is not None


@pytest.mark.parametrize(
    "body",
    [
        ADD_TOKENS.format(line='tok.add_tokens(["<user>"])\nmodel.resize_token_embeddings(len(tok))'),
        ADD_TOKENS.format(line="tok.add_special_tokens({'pad_token': tok.eos_token})"),  # reuses a token it has
        ADD_TOKENS.format(line='tok.add_special_tokens({"eos_token": "<|endoftext|>"})'),
        ADD_TOKENS.format(line="tok.add_tokens([])"),
        # BERT's vocabulary holds [PAD] already
        'tok = AutoTokenizer.from_pretrained("bert-base-uncased")\nmodel = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")\n'
        'tok.add_special_tokens({"pad_token": "[PAD]"})\n',
        # a local tokenizer: whether it has [PAD] is not known
        'tok = AutoTokenizer.from_pretrained("./tok")\nmodel = AutoModelForCausalLM.from_pretrained("gpt2")\ntok.add_special_tokens({"pad_token": "[PAD]"})\n',
        # a model built for the tokenizer's size
        'from transformers import GPT2Config\ntok = AutoTokenizer.from_pretrained("gpt2")\ntok.add_tokens(["<x>"])\n'
        "model = AutoModelForCausalLM.from_config(GPT2Config(vocab_size=len(tok)))\n",
        # no model in this script
        'tok = AutoTokenizer.from_pretrained("gpt2")\ntok.add_tokens(["<x>"])\ntok.save_pretrained("out")\n',
    ],
)
def test_bl206_silent(body):
    assert found("BL206", body) == []


def _fix_all(text: str) -> str:
    findings = lint_text(text)
    fixed, _ = fixer.apply_edits(text, findings, {"safe", "unsafe"})
    return fixed


@pytest.mark.parametrize(
    "source, inserted",
    [
        # after the adding statement, at its indentation, below its comment
        (
            HEAD + ADD_TOKENS.format(line='if True:\n    tok.add_special_tokens({"pad_token": "[PAD]"})  # for batching\nprint(len(tok))'),
            '    tok.add_special_tokens({"pad_token": "[PAD]"})  # for batching\n    model.resize_token_embeddings(len(tok))\nprint',
        ),
        # after the model load when that comes last
        (
            HEAD + 'tok = AutoTokenizer.from_pretrained("gpt2")\ntok.add_tokens(["<x>"])\nmodel = AutoModelForCausalLM.from_pretrained("gpt2").to("cpu")\n',
            'model = AutoModelForCausalLM.from_pretrained("gpt2").to("cpu")\nmodel.resize_token_embeddings(len(tok))\n',
        ),
        # at the end of a file without a final newline
        (HEAD + ADD_TOKENS.format(line='tok.add_tokens(["<x>"])').rstrip("\n"), 'tok.add_tokens(["<x>"])\nmodel.resize_token_embeddings(len(tok))'),
    ],
)
def test_bl206_fix_through_the_engine(source, inserted):
    fixed = _fix_all(source)
    assert inserted in fixed
    assert fixer.parses(fixed)
    assert [f for f in lint_text(fixed) if f.code == "BL206"] == []
    assert _fix_all(fixed) == fixed


def test_bl206_no_fix_when_the_model_lives_elsewhere():
    body = """
    model = AutoModelForCausalLM.from_pretrained("gpt2")

    def build():
        tok = AutoTokenizer.from_pretrained("gpt2")
        tok.add_tokens(["<x>"])
        return tok
    """
    [finding] = found("BL206", body)
    assert finding.fix is None


# --------------------------------------------------------------------------- BL207


@pytest.mark.parametrize(
    "tokenizer, model",
    [
        ("bert-base-cased", "bert-base-uncased"),
        ("bert-base-uncased", "roberta-base"),
        ("gpt2", "EleutherAI/pythia-160m"),
    ],
)
def test_bl207_fires(tokenizer, model):
    body = f'tok = AutoTokenizer.from_pretrained("{tokenizer}")\nmodel = AutoModelForSequenceClassification.from_pretrained("{model}", num_labels=2)\n'
    [finding] = found("BL207", body)
    assert tokenizer in finding.message and model in finding.message


def test_bl207_names_the_index_error_when_the_tokenizer_is_larger():
    body = 'tok = AutoTokenizer.from_pretrained("roberta-base")\nmodel = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)\n'
    [finding] = found("BL207", body)
    assert "50,265 vs 30,522" in finding.message and "IndexError" in finding.message


@pytest.mark.parametrize(
    "tokenizer, model",
    [
        ("bert-base-uncased", "distilbert-base-uncased"),  # one vocabulary
        ("roberta-base", "facebook/bart-base"),
        ("bert-base-uncased", "./checkpoints/run-1"),  # unknown model
        ("./my-tokenizer", "bert-base-cased"),  # unknown tokenizer
    ],
)
def test_bl207_silent(tokenizer, model):
    body = f'tok = AutoTokenizer.from_pretrained("{tokenizer}")\nmodel = AutoModelForSequenceClassification.from_pretrained("{model}", num_labels=2)\n'
    assert found("BL207", body) == []


def test_bl207_silent_when_each_model_has_its_tokenizer():
    body = """
    teacher_tok = AutoTokenizer.from_pretrained("roberta-large")
    student_tok = AutoTokenizer.from_pretrained("distilbert-base-uncased")
    teacher = AutoModelForSequenceClassification.from_pretrained("roberta-large", num_labels=2)
    student = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
    """
    assert found("BL207", body) == []


# --------------------------------------------------------------------------- BL208


@pytest.mark.parametrize(
    "body, why",
    [
        (CLASSIFIER.format(", num_labels=1") + "labels = [0, 1, 2, 1]", "integer classes [0, 1, 2]"),
        (CLASSIFIER.format(", num_labels=1") + "def metrics(p):\n    return {'acc': (p.predictions.argmax(-1) == p.label_ids).mean()}", "argmax"),
        ("import evaluate\nmetric = evaluate.load('accuracy')\n" + CLASSIFIER.format(", num_labels=1"), '"accuracy" metric'),
        ("from sklearn.metrics import f1_score\nN = 1\n" + CLASSIFIER.format(", num_labels=N") + "print(f1_score(y_true, y_pred))", "f1_score"),
    ],
)
def test_bl208_fires(body, why):
    [finding] = found("BL208", body)
    assert why in finding.message


@pytest.mark.parametrize(
    "body",
    [
        CLASSIFIER.format(', num_labels=1, problem_type="regression"') + "labels = [0, 1, 2]",
        CLASSIFIER.format(", num_labels=1") + "labels = [0.5, 1.0, 4.2]",  # float targets: a regression
        CLASSIFIER.format(", num_labels=1") + "from scipy.stats import pearsonr",  # nothing says classification
        CLASSIFIER.format(", num_labels=3") + "labels = [0, 1, 2]",
    ],
)
def test_bl208_silent(body):
    assert found("BL208", body) == []


# --------------------------------------------------------------------------- BL402

TRAINER = """\
from transformers import Trainer, TrainingArguments
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
args = TrainingArguments(output_dir="out", {strategy})
trainer = Trainer(model=model, args=args, train_dataset=train_ds{extra})
"""


@pytest.mark.parametrize(
    "version, strategy, words",
    [
        ("5.23", 'eval_strategy="epoch"', "fails at `Trainer(...)` with `ValueError: You have set `args.eval_strategy` to IntervalStrategy.EPOCH"),
        ("4.46", 'eval_strategy="steps"', "to IntervalStrategy.STEPS but you didn't pass an `eval_dataset`"),
        ("4.40", 'evaluation_strategy="epoch"', "after a full epoch of training with `ValueError: Trainer: evaluation requires an eval_dataset.`"),
        ("4.45", 'evaluation_strategy="steps"', "after the first `eval_steps`"),
    ],
)
def test_bl402_message_follows_the_version(version, strategy, words):
    [finding] = found("BL402", TRAINER.format(strategy=strategy, extra=""), transformers_version=version)
    assert words in finding.message


def test_bl402_interval_strategy_enum():
    body = "from transformers import IntervalStrategy\n" + TRAINER.format(strategy="eval_strategy=IntervalStrategy.EPOCH", extra=", eval_dataset=None")
    assert len(found("BL402", body)) == 1


@pytest.mark.parametrize(
    "strategy, extra",
    [
        ('eval_strategy="epoch"', ", eval_dataset=val_ds"),
        ('eval_strategy="no"', ""),
        ("save_strategy='epoch'", ""),
        ('eval_strategy="steps" if do_eval else "no"', ""),
        ('eval_strategy="epoch"', ", **extra"),
    ],
)
def test_bl402_silent(strategy, extra):
    assert found("BL402", TRAINER.format(strategy=strategy, extra=extra)) == []


def test_bl402_eval_dataset_set_later_counts_only_before_4_46():
    body = TRAINER.format(strategy='evaluation_strategy="epoch"', extra="") + "trainer.eval_dataset = val_ds\n"
    assert found("BL402", body, transformers_version="4.40") == []
    assert len(found("BL402", body.replace("evaluation_strategy", "eval_strategy"), transformers_version="4.46")) == 1


# --------------------------------------------------------------------------- BL403

TF_HEAD = """\
import tensorflow as tf
from transformers import AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
ds = tf.data.Dataset.from_tensor_slices((["a b", "c"], [0, 1])).shuffle(2)
"""


@pytest.mark.parametrize(
    "body",
    [
        "def encode(text, label):\n    return tokenizer(text, truncation=True, max_length=32)['input_ids'], label\nds = ds.map(encode)\n",
        "ds = ds.batch(2).map(lambda text, label: (tokenizer(text, truncation=True)['input_ids'], label))\n",
        # through a helper of the file
        "def ids(text):\n    return tokenizer.encode(text)\ndef encode(text, label):\n    return ids(text), label\ntrain = ds.map(encode, num_parallel_calls=tf.data.AUTOTUNE)\n",
    ],
)
def test_bl403_fires(body):
    assert len(found("BL403", TF_HEAD + body)) == 1


@pytest.mark.parametrize(
    "body",
    [
        # wrapped in tf.py_function: eager tensors
        "def encode(text, label):\n    return tokenizer(text.numpy().decode(), truncation=True)['input_ids'], label\n"
        "ds = ds.map(lambda t, l: tf.py_function(encode, [t, l], [tf.int32, tf.int64]))\n",
        # tokenized before the dataset is built
        "enc = tokenizer(['a b', 'c'], padding=True, truncation=True, return_tensors='tf')\n"
        "train = tf.data.Dataset.from_tensor_slices((dict(enc), [0, 1])).map(lambda x, y: (x, tf.cast(y, tf.float32)))\n",
        # a Hugging Face datasets map runs eagerly on Python strings
        "from datasets import load_dataset\nraw = load_dataset('imdb')\nraw = raw.map(lambda b: tokenizer(b['text'], truncation=True), batched=True)\n",
    ],
)
def test_bl403_silent(body):
    assert found("BL403", TF_HEAD + body) == []


def test_bl208_silent_when_labels_are_cast_to_float():
    body = CLASSIFIER.format(", num_labels=1") + (
        "def collate(rows):\n"
        "    batch = {}\n"
        "    batch['labels'] = torch.tensor([y for _, y in rows], dtype=torch.float)\n"
        "    return batch\n"
        "print(np.argmax([0.1]))\n"
    )
    assert found("BL208", body) == []
    assert len(found("BL208", body.replace(", dtype=torch.float", ""))) == 1


def test_bl204_default_two_labels_only_for_the_exact_base_checkpoint():
    body = 'labels = [0, 1, 2]\nmodel = AutoModelForSequenceClassification.from_pretrained("{}")\n'
    assert len(found("BL204", body.format("bert-base-uncased"))) == 1
    assert found("BL204", body.format("someone/bert-base-uncased")) == []  # a fine-tune may carry its own labels


def test_bl203_is_silent_on_a_smoke_run_of_one_batch():
    body = """
    tok = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2")

    def prep(batch):
        enc = tok(batch["text"], padding=True, truncation=True, max_length=128)
        enc["labels"] = enc["input_ids"].copy()
        return enc

    ds = Dataset.from_json("train.jsonl").map(prep, batched=True)
    """ + textwrap.indent(TRAINS_DS, "    ")
    assert len(found("BL203", body)) == 1
    assert found("BL203", body.replace('Dataset.from_json("train.jsonl")', 'Dataset.from_dict({"text": ["a"]})')) == []  # a smoke run
    assert found("BL203", body.replace('Dataset.from_json("train.jsonl")', 'Dataset.from_json("train.jsonl").select(range(1))')) == []
    assert found("BL203", body.replace('Dataset.from_json("train.jsonl")', 'Dataset.from_dict({"text": ["a", "b", "c"]})')) == []  # three mock sentences
    assert found("BL203", body.replace('Dataset.from_json("train.jsonl")', 'Dataset.from_json("train.jsonl").select(range(8))')) == []  # one default batch
    # a lab run on more than one batch still trains on the pads
    assert len(found("BL203", body.replace('Dataset.from_json("train.jsonl")', 'Dataset.from_json("train.jsonl").select(range(9))'))) == 1
    assert len(found("BL203", body.replace('Dataset.from_json("train.jsonl")', 'Dataset.from_json("train.jsonl").select(range(100))'))) == 1
