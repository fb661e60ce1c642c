"""BL106 stays silent where fixed shapes are the point and the file says so outside its code: a notebook saved with a
TPU runtime (Colab's `"accelerator": "TPU"` metadata, Kaggle's `"kaggle": {"accelerator": "tpu1vmV38"}`)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bertlint.cli import main

CELLS = [
    "from datasets import load_dataset\nfrom transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments\n",
    'tokenizer = AutoTokenizer.from_pretrained("bert-base-cased")\nmodel = AutoModelForSequenceClassification.from_pretrained("bert-base-cased", num_labels=5)\n',
    'yelp = load_dataset("yelp_review_full")\nyelp = yelp.map(lambda rows: tokenizer(rows["text"], padding="max_length", truncation=True, max_length=256), batched=True)\n',
    'Trainer(model=model, args=TrainingArguments("out", report_to="none"), train_dataset=yelp["train"]).train()\n',
]


@pytest.mark.parametrize(("metadata", "codes"), [
    ({}, ["BL106"]),
    ({"accelerator": "GPU", "colab": {"gpuType": "T4"}}, ["BL106"]),
    ({"accelerator": "TPU", "colab": {"provenance": []}}, []),
    ({"kaggle": {"accelerator": "tpu1vmV38", "isInternetEnabled": True}}, []),
], ids=["none", "colab-gpu", "colab-tpu", "kaggle-tpu"])
def test_a_notebook_saved_with_a_tpu_runtime_wants_fixed_shapes(tmp_path, monkeypatch, metadata, codes):
    monkeypatch.chdir(tmp_path)
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": [c]} for c in CELLS]
    (tmp_path / "train.ipynb").write_text(json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}))
    result = CliRunner().invoke(main, ["--format", "json", "--no-cache", "--isolated", "--preview", "--transformers-version", "5.23", "--select", "BL106", "train.ipynb"],
                                catch_exceptions=False)
    assert [f["code"] for f in json.loads(result.stdout)] == codes


@pytest.mark.parametrize(("on_disk", "given", "codes"), [
    (None, {"accelerator": "TPU"}, []),
    ({"accelerator": "TPU"}, {}, ["BL106"]),
], ids=["stdin-tpu-no-file", "stdin-gpu-file-tpu"])
def test_the_runtime_is_read_from_the_text_linted_not_from_disk(tmp_path, monkeypatch, on_disk, given, codes):
    """The accelerator comes with the notebook's text: a buffer on stdin (or in an editor) is judged by its own
    metadata, whatever a file of that name on disk says."""
    monkeypatch.chdir(tmp_path)
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": [c]} for c in CELLS]
    if on_disk is not None:
        (tmp_path / "train.ipynb").write_text(json.dumps({"cells": cells, "metadata": on_disk, "nbformat": 4, "nbformat_minor": 5}))
    text = json.dumps({"cells": cells, "metadata": given, "nbformat": 4, "nbformat_minor": 5})
    result = CliRunner().invoke(main, ["--format", "json", "--isolated", "--preview", "--transformers-version", "5.23", "--select", "BL106",
                                       "--stdin-filename", "train.ipynb", "-"], input=text, catch_exceptions=False)
    assert [f["code"] for f in json.loads(result.stdout)] == codes


LAYOUT_OR_NOT = """\
import matplotlib.pyplot as plt
from datasets import load_dataset
from transformers import AutoModelForTokenClassification, AutoTokenizer, Trainer, TrainingArguments

tokenizer = AutoTokenizer.from_pretrained("{checkpoint}")
model = AutoModelForTokenClassification.from_pretrained("{checkpoint}", num_labels=7)
funsd = load_dataset("nielsr/funsd-layoutlmv3")


def encode(batch):
    return tokenizer(batch["tokens"], {boxes}truncation=True, padding="max_length", max_length=512)


train = funsd["train"].map(encode, batched=True)
Trainer(model=model, args=TrainingArguments("out", report_to="none"), train_dataset=train).train()
fig, ax = plt.subplots()
ax.text(0.5, 0.5, "loss curve", bbox=dict(boxstyle="round", facecolor="wheat"))
"""


@pytest.mark.parametrize(("checkpoint", "boxes", "codes"), [
    ("roberta-base", "is_split_into_words=True, ", ["BL106"]),  # matplotlib's `bbox=` is no layout model's
    ("roberta-base", 'boxes=batch["bboxes"], ', []),  # boxes handed to the encoding call
    ("microsoft/layoutlmv3-base", "", []),  # a layout checkpoint
], ids=["text-only-with-a-plot-bbox", "boxes", "layout-checkpoint"])
def test_layout_inputs_are_boxes_for_the_tokenizer_not_any_bbox(lint, checkpoint, boxes, codes):
    found = lint(LAYOUT_OR_NOT.format(checkpoint=checkpoint, boxes=boxes))
    assert [f.code for f in found if f.code == "BL106"] == codes
