import os

import torch
from transformers import AutoModelForSequenceClassification

LR = float(os.environ.get("LR", "3e-5"))
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
