from transformers import AutoModelForSequenceClassification

LABEL2ID = {"neg": 0, "neu": 1, "pos": 2}
labels = [LABEL2ID[name] for name in ["neg", "pos", "neu", "pos"]]
labels = [0, 2, 1, 2]
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
