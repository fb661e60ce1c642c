import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification, AutoTokenizer

accelerator = Accelerator()
tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
model = accelerator.prepare(model)
enc = tokenizer(["one review", "another, longer review text"], padding=True, return_tensors="pt")
unwrapped = accelerator.unwrap_model(model)
with torch.no_grad():
    out = unwrapped(enc["input_ids"])
