from transformers import AutoModelForSequenceClassification

LABELS = ["negative", "neutral", "positive"]
label_ids = [0, 1, 2, 3, 4, 2, 1]
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=len(LABELS))
labels = label_ids
