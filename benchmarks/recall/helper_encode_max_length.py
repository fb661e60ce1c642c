import pandas as pd
from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)


def encode(texts, n):
    return tokenizer(texts, padding="max_length", max_length=n, return_tensors="pt")


reviews = pd.read_csv("reviews.csv")
batch = encode(list(reviews["text"]), 128)
outputs = model(**batch)
