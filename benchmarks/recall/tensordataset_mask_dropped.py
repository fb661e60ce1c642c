import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
enc = tokenizer(["good", "a bad film"], padding="max_length", truncation=True, max_length=64, return_tensors="pt")
data = TensorDataset(enc["input_ids"], enc["attention_mask"], torch.tensor([1, 0]))
loader = DataLoader(data, batch_size=2, shuffle=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for ids, mask, labels in loader:
    loss = model(input_ids=ids, labels=labels).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
