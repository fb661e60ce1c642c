from types import SimpleNamespace

import torch
from transformers import AutoModelForSequenceClassification

args = SimpleNamespace(model_name="bert-base-uncased", lr=0.02, epochs=2)
model = AutoModelForSequenceClassification.from_pretrained(args.model_name, num_labels=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
