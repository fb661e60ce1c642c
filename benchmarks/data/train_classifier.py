"""Fine-tune a BERT-style encoder for sentiment classification, then evaluate and export it.

A realistic, medium-sized training script used as the single-file benchmark input.
"""

import argparse
import json
import logging
import math
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    EarlyStoppingCallback,
    Trainer,
    TrainingArguments,
    get_linear_schedule_with_warmup,
    set_seed,
)

logger = logging.getLogger(__name__)

LABELS = ["negative", "neutral", "positive"]
LABEL2ID = {label: i for i, label in enumerate(LABELS)}
ID2LABEL = {i: label for label, i in LABEL2ID.items()}


@dataclass
class RunConfig:
    model_name: str = "bert-base-uncased"
    train_file: str = "data/train.csv"
    eval_file: str = "data/dev.csv"
    output_dir: str = "outputs/sentiment"
    max_length: int = 256
    batch_size: int = 32
    eval_batch_size: int = 64
    learning_rate: float = 2e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    epochs: int = 3
    gradient_accumulation_steps: int = 1
    seed: int = 42
    fp16: bool = True
    label_smoothing: float = 0.0
    extra_tags: list = field(default_factory=list)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model_name", default="bert-base-uncased")
    parser.add_argument("--train_file", default="data/train.csv")
    parser.add_argument("--eval_file", default="data/dev.csv")
    parser.add_argument("--output_dir", default="outputs/sentiment")
    parser.add_argument("--max_length", type=int, default=256)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--eval_batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--warmup_ratio", type=float, default=0.06)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--use_trainer", action="store_true")
    parser.add_argument("--label_smoothing", type=float, default=0.0)
    return parser.parse_args()


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    set_seed(seed)


def read_split(path):
    frame = pd.read_csv(path)
    frame = frame.dropna(subset=["text", "label"])
    frame["label"] = frame["label"].map(LABEL2ID)
    return frame["text"].tolist(), frame["label"].tolist()


class SentimentDataset(Dataset):
    def __init__(self, texts, labels, tokenizer, max_length):
        self.texts = texts
        self.labels = labels
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, index):
        encoding = self.tokenizer(
            self.texts[index],
            truncation=True,
            max_length=self.max_length,
            padding="max_length",
            return_tensors="pt",
        )
        item = {key: value.squeeze(0) for key, value in encoding.items()}
        item["labels"] = torch.tensor(self.labels[index], dtype=torch.long)
        return item


def build_model(args):
    config = AutoConfig.from_pretrained(
        args.model_name,
        num_labels=len(LABELS),
        id2label=ID2LABEL,
        label2id=LABEL2ID,
    )
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name, config=config)
    return model


def build_optimizer(model, args):
    no_decay = ["bias", "LayerNorm.weight"]
    grouped = [
        {
            "params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
            "weight_decay": args.weight_decay,
        },
        {
            "params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
            "weight_decay": 0.0,
        },
    ]
    return torch.optim.AdamW(grouped, lr=args.learning_rate)


def accuracy(predictions, labels):
    predictions = np.asarray(predictions)
    labels = np.asarray(labels)
    return float((predictions == labels).mean())


def macro_f1(predictions, labels, num_labels):
    scores = []
    for label in range(num_labels):
        tp = sum(1 for p, y in zip(predictions, labels) if p == label and y == label)
        fp = sum(1 for p, y in zip(predictions, labels) if p == label and y != label)
        fn = sum(1 for p, y in zip(predictions, labels) if p != label and y == label)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        scores.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return sum(scores) / len(scores)


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    predictions = np.argmax(logits, axis=-1)
    return {"accuracy": accuracy(predictions, labels), "macro_f1": macro_f1(predictions, labels, len(LABELS))}


def evaluate(model, loader, device):
    model.eval()
    predictions, references, losses = [], [], []
    with torch.no_grad():
        for batch in loader:
            batch = {key: value.to(device) for key, value in batch.items()}
            outputs = model(**batch)
            losses.append(outputs.loss.item())
            predictions.extend(outputs.logits.argmax(dim=-1).tolist())
            references.extend(batch["labels"].tolist())
    model.train()
    return {
        "loss": sum(losses) / max(len(losses), 1),
        "accuracy": accuracy(predictions, references),
        "macro_f1": macro_f1(predictions, references, len(LABELS)),
    }


def train_loop(args, model, tokenizer, train_set, eval_set):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    train_loader = DataLoader(train_set, sampler=RandomSampler(train_set), batch_size=args.batch_size)
    eval_loader = DataLoader(eval_set, sampler=SequentialSampler(eval_set), batch_size=args.eval_batch_size)
    optimizer = build_optimizer(model, args)
    steps_per_epoch = math.ceil(len(train_loader) / args.gradient_accumulation_steps)
    total_steps = steps_per_epoch * args.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, int(args.warmup_ratio * total_steps), total_steps)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    best_f1, history = 0.0, []
    model.train()
    for epoch in range(args.epochs):
        started = time.time()
        running = 0.0
        for step, batch in enumerate(train_loader):
            batch = {key: value.to(device) for key, value in batch.items()}
            labels = batch.pop("labels")
            with torch.cuda.amp.autocast(enabled=args.fp16):
                outputs = model(**batch)
                loss = loss_fn(outputs.logits, labels) / args.gradient_accumulation_steps
            scaler.scale(loss).backward()
            running += loss.item()
            if (step + 1) % args.gradient_accumulation_steps == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                optimizer.zero_grad()
            if step % 100 == 0:
                logger.info("epoch %d step %d loss %.4f", epoch, step, running / (step + 1))
        metrics = evaluate(model, eval_loader, device)
        metrics["epoch"] = epoch
        metrics["seconds"] = time.time() - started
        history.append(metrics)
        logger.info("epoch %d: %s", epoch, json.dumps(metrics))
        if metrics["macro_f1"] > best_f1:
            best_f1 = metrics["macro_f1"]
            model.save_pretrained(args.output_dir)
            tokenizer.save_pretrained(args.output_dir)
    return history


def train_with_trainer(args, model, tokenizer, train_set, eval_set):
    training_args = TrainingArguments(
        output_dir=args.output_dir,
        learning_rate=args.learning_rate,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.eval_batch_size,
        num_train_epochs=args.epochs,
        weight_decay=args.weight_decay,
        warmup_ratio=args.warmup_ratio,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        evaluation_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        metric_for_best_model="macro_f1",
        fp16=args.fp16,
        logging_steps=50,
        report_to="none",
        seed=args.seed,
    )
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_set,
        eval_dataset=eval_set,
        tokenizer=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
        callbacks=[EarlyStoppingCallback(early_stopping_patience=2)],
    )
    trainer.train()
    return trainer.evaluate()


def export(model, tokenizer, output_dir, history):
    path = Path(output_dir)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path / "final")
    tokenizer.save_pretrained(path / "final")
    with open(path / "history.json", "w") as handle:
        json.dump(history, handle, indent=2)
    sample = tokenizer("the movie was great", return_tensors="pt")
    traced = torch.jit.trace(model.cpu().eval(), (sample["input_ids"], sample["attention_mask"]), strict=False)
    torch.jit.save(traced, str(path / "model.pt"))


def summarize(history):
    if not history:
        return "no epochs run"
    best = max(history, key=lambda row: row.get("macro_f1", 0.0))
    lines = [f"epochs: {len(history)}", f"best epoch: {best.get('epoch')}"]
    for key in ("loss", "accuracy", "macro_f1"):
        if key in best:
            lines.append(f"{key}: {best[key]:.4f}")
    return "\n".join(lines)


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    seed_everything(args.seed)
    os.makedirs(args.output_dir, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(args.model_name, use_fast=True)
    train_texts, train_labels = read_split(args.train_file)
    eval_texts, eval_labels = read_split(args.eval_file)
    logger.info("train=%d eval=%d", len(train_texts), len(eval_texts))
    train_set = SentimentDataset(train_texts, train_labels, tokenizer, args.max_length)
    eval_set = SentimentDataset(eval_texts, eval_labels, tokenizer, args.max_length)
    model = build_model(args)
    if args.use_trainer:
        metrics = train_with_trainer(args, model, tokenizer, train_set, eval_set)
        history = [metrics]
    else:
        history = train_loop(args, model, tokenizer, train_set, eval_set)
    export(model, tokenizer, args.output_dir, history)
    print(summarize(history))


if __name__ == "__main__":
    main()
