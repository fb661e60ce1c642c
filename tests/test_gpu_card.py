"""BL502's budget is the card the file shows it runs on, when no budget is configured: the GPU a notebook's saved runtime
names (Colab's `gpuType`, Kaggle's accelerator). RoBERTa-large at batch 32 x 512 in fp32 needs about 33 GiB: over a T4,
within Colab's 40 GB A100; a configured `--gpu-memory` wins over the runtime."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bertlint.cli import main

CELLS = [
    "from datasets import load_dataset\nfrom transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments\n",
    'tokenizer = AutoTokenizer.from_pretrained("roberta-large")\nmodel = AutoModelForSequenceClassification.from_pretrained("roberta-large", num_labels=5)\n',
    'yelp = load_dataset("yelp_review_full")\nyelp = yelp.map(lambda rows: tokenizer(rows["text"], padding="max_length", truncation=True, max_length=512), batched=True)\n',
    'Trainer(model=model, args=TrainingArguments("out", per_device_train_batch_size=32), train_dataset=yelp["train"]).train()\n',
]


@pytest.mark.parametrize(("metadata", "flags", "budget"), [
    ({}, [], "16"),
    ({"accelerator": "GPU", "colab": {"gpuType": "T4"}}, [], "15"),
    ({"kaggle": {"accelerator": "nvidiaTeslaT4"}}, [], "15"),
    ({"accelerator": "GPU", "colab": {"gpuType": "A100"}}, [], None),
    ({"accelerator": "GPU", "colab": {"gpuType": "A100"}}, ["--gpu-memory", "16"], "16"),
], ids=["none", "colab-t4", "kaggle-t4", "colab-a100", "a100-configured-16"])
def test_the_budget_is_the_card_the_notebook_runs_on(tmp_path, monkeypatch, metadata, flags, budget):
    monkeypatch.chdir(tmp_path)
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": [c]} for c in CELLS]
    (tmp_path / "train.ipynb").write_text(json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}))
    result = CliRunner().invoke(main, ["--format", "json", "--no-cache", "--isolated", "--preview", "--transformers-version", "5.23", "--select", "BL502", *flags,
                                       "train.ipynb"], catch_exceptions=False)
    found = json.loads(result.stdout)
    assert [f["code"] for f in found] == (["BL502"] if budget else [])
    if budget:
        assert f"over the {budget} GiB budget" in found[0]["message"]
