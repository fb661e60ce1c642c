import torch
from torch.nn.parallel import DistributedDataParallel
from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
model = DistributedDataParallel(AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2))
enc = tokenizer(["first review", "a second, longer review"], padding="max_length", truncation=True, max_length=64, return_tensors="pt")
with torch.no_grad():
    logits = model.module(enc["input_ids"]).logits
