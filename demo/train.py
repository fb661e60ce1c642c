"""Fine-tune BERT-large to flag toxic comments.

This is bertlint's demo: a realistic script with the mistakes that cost real fine-tuning runs.
Run `bertlint demo/train.py` to see them before any GPU hour is spent.
"""

import argparse

import numpy as np
import torch
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

parser = argparse.ArgumentParser(description="toxic-comment classifier")
parser.add_argument("--model", default="bert-large-uncased")
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--max-length", type=int, default=512)
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()

tokenizer = AutoTokenizer.from_pretrained(args.model)
model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=2)
comments = load_dataset("csv", data_files={"train": "comments_train.csv", "test": "comments_test.csv"})


def tokenize(batch):
    return tokenizer(
        batch["comment_text"],
        max_length=args.max_length,
        truncation=True,
        pad_to_max_length=True,
    )


encoded = comments.map(tokenize, batched=True, remove_columns=["comment_text"])


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    predictions = np.argmax(logits, axis=-1)
    return {"accuracy": float((predictions == labels).mean())}


training_args = TrainingArguments(
    output_dir="toxic-bert-large",
    learning_rate=args.lr,
    per_device_train_batch_size=args.batch_size,
    per_device_eval_batch_size=64,
    num_train_epochs=args.epochs,
    eval_strategy="epoch",
    save_strategy="epoch",
    logging_steps=50,
)
trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=encoded["train"],
    eval_dataset=encoded["test"],
    compute_metrics=compute_metrics,
)
trainer.train()

# Spot-check a few comments after training.
samples = [
    "Thanks for fixing the citation, much appreciated.",
    "Nobody cares about your opinion, get lost.",
    "I reverted the edit because the source was unreliable.",
]
batch = tokenizer(samples, padding=True, truncation=True, return_tensors="pt").to(model.device)
model.eval()
with torch.no_grad():
    logits = model(batch["input_ids"]).logits
for text, probs in zip(samples, logits.softmax(-1)):
    print(f"{probs[1]:.2f}  {text}")
