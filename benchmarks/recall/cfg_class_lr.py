import torch
from transformers import AutoModelForSequenceClassification


class Config:
    model_name = "bert-base-uncased"
    lr = 0.01
    epochs = 3


model = AutoModelForSequenceClassification.from_pretrained(Config.model_name, num_labels=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=Config.lr)
