import torch
from transformers import AutoModelForSequenceClassification

CFG = {"model": "bert-base-uncased", "lr": 3e-2, "epochs": 4}

model = AutoModelForSequenceClassification.from_pretrained(CFG["model"], num_labels=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=CFG["lr"])
