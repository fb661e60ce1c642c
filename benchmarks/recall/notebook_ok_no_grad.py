from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
enc = tokenizer(["one review", "another, longer review text"], padding=True, return_tensors="pt")
with torch.no_grad():
    out = model(**enc)
