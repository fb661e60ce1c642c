from datasets import load_dataset
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, Seq2SeqTrainer, Seq2SeqTrainingArguments

tokenizer = AutoTokenizer.from_pretrained("t5-small")
model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
raw = load_dataset("cnn_dailymail", "3.0.0")


def preprocess(batch, max_source=512, max_target=64):
    inputs = tokenizer(batch["article"], max_length=max_source, truncation=True, padding="max_length")
    targets = tokenizer(batch["highlights"], max_length=max_target, truncation=True, padding="max_length")
    inputs["labels"] = targets["input_ids"]
    return inputs


train = raw["train"].map(preprocess, batched=True)
args = Seq2SeqTrainingArguments("out", learning_rate=3e-4, per_device_train_batch_size=8)
trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=train)
trainer.train()
