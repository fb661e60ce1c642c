import torch
from transformers import AutoModelForSequenceClassification


def build_optimizer(model, lr=1e-2, weight_decay=0.01):
    params = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)


model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
optimizer = build_optimizer(model, lr=3e-5)
