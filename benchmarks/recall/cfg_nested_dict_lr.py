from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

CONFIG = {
    "model": {"name": "roberta-base", "num_labels": 3},
    "train": {"lr": 0.002, "epochs": 3, "batch_size": 16},
}

model = AutoModelForSequenceClassification.from_pretrained(CONFIG["model"]["name"], num_labels=CONFIG["model"]["num_labels"])
args = TrainingArguments(
    output_dir="out",
    learning_rate=CONFIG["train"]["lr"],
    num_train_epochs=CONFIG["train"]["epochs"],
    per_device_train_batch_size=CONFIG["train"]["batch_size"],
)
trainer = Trainer(model=model, args=args)
trainer.train()
