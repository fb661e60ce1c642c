import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)


def make_inputs(texts):
    return tokenizer(texts, padding=True, truncation=True, return_tensors="pt")


enc = make_inputs(["good", "a rather long and detailed bad review"])
with torch.no_grad():
    logits = model(enc["input_ids"], attention_mask=enc["attention_mask"]).logits
