"""Fine-tune T5-large to summarize news articles.

This is bertlint's demo: a realistic script with the mistakes that cost real fine-tuning runs.
Run `bertlint demo/train.py` to see them before any GPU hour is spent.
"""

import argparse

import torch
from datasets import load_dataset
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
)

parser = argparse.ArgumentParser(description="news summarizer")
parser.add_argument("--model", default="t5-large")
parser.add_argument("--lr", type=float, default=3e-3)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--max-source-length", type=int, default=1024)
parser.add_argument("--max-target-length", type=int, default=128)
parser.add_argument("--batch-size", type=int, default=16)
args = parser.parse_args()

tokenizer = AutoTokenizer.from_pretrained(args.model)
model = AutoModelForSeq2SeqLM.from_pretrained(args.model)
news = load_dataset("csv", data_files={"train": "news_train.csv", "test": "news_test.csv"})


def preprocess(batch):
    inputs = tokenizer(
        ["summarize: " + article for article in batch["article"]],
        max_length=args.max_source_length,
        truncation=True,
        pad_to_max_length=True,
    )
    targets = tokenizer(
        text_target=batch["summary"],
        max_length=args.max_target_length,
        truncation=True,
        padding="max_length",
    )
    inputs["labels"] = targets["input_ids"]
    return inputs


encoded = news.map(preprocess, batched=True, remove_columns=["article", "summary"])

training_args = Seq2SeqTrainingArguments(
    output_dir="news-t5-large",
    learning_rate=args.lr,
    per_device_train_batch_size=args.batch_size,
    per_device_eval_batch_size=32,
    num_train_epochs=args.epochs,
    eval_strategy="epoch",
    save_strategy="epoch",
    logging_steps=50,
)
trainer = Seq2SeqTrainer(
    model=model,
    args=training_args,
    train_dataset=encoded["train"],
    eval_dataset=encoded["test"],
)
trainer.train()

# Summarize a few articles after training.
articles = [
    "The city council voted on Tuesday to extend the night bus network to the northern suburbs from March.",
    "Heavy rain flooded several roads near the river, and the regional rail service was suspended for the day.",
    "The museum reopened after a two-year renovation with a new wing for its collection of early photographs.",
]
batch = tokenizer(["summarize: " + article for article in articles], padding=True, truncation=True, return_tensors="pt").to(model.device)
model.eval()
with torch.no_grad():
    summary_ids = model.generate(batch["input_ids"], num_beams=4, max_new_tokens=60)
for text, summary in zip(articles, tokenizer.batch_decode(summary_ids, skip_special_tokens=True)):
    print(f"{summary}\n  <- {text}")
