import torch
from torch import nn
from transformers import AutoModel, AutoTokenizer


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = AutoModel.from_pretrained("bert-base-uncased")
        self.head = nn.Linear(768, 2)

    def forward(self, input_ids, attention_mask=None):
        hidden = self.bert(input_ids=input_ids).last_hidden_state
        return self.head(hidden[:, 0])


tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
enc = tokenizer(["good", "a much worse film"], padding=True, return_tensors="pt")
model = Classifier()
with torch.no_grad():
    logits = model(enc["input_ids"], enc["attention_mask"])
