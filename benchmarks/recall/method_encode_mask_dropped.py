import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer


class Classifier:
    def __init__(self, name="bert-base-uncased"):
        self.tokenizer = AutoTokenizer.from_pretrained(name)
        self.model = AutoModelForSequenceClassification.from_pretrained(name, num_labels=2)

    def encode(self, texts):
        return self.tokenizer(texts, padding=True, truncation=True, return_tensors="pt")

    def predict(self, texts):
        enc = self.encode(texts)
        with torch.no_grad():
            return self.model(input_ids=enc["input_ids"]).logits
