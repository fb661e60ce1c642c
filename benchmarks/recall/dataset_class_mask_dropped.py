import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)


class ReviewDataset(Dataset):
    def __init__(self, texts, labels, max_len=128):
        self.enc = tokenizer(texts, padding="max_length", truncation=True, max_length=max_len)
        self.labels = labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": torch.tensor(self.enc["input_ids"][i]), "labels": torch.tensor(self.labels[i])}


loader = DataLoader(ReviewDataset(["good", "bad film"], [1, 0]), batch_size=2, shuffle=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for batch in loader:
    loss = model(input_ids=batch["input_ids"], labels=batch["labels"]).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
