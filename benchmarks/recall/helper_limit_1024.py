from transformers import AutoModelForSequenceClassification, AutoTokenizer

CHECKPOINT = "bert-base-uncased"
tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
model = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=2)


def encode(texts, max_len=1024):
    return tokenizer(texts, truncation=True, padding="max_length", max_length=max_len, return_tensors="pt")


batch = encode(["first document", "second document"])
outputs = model(**batch)
