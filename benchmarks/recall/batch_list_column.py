import pandas as pd
from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
df = pd.read_csv("reviews.csv")
enc = tokenizer(list(df["text"]), padding="longest", max_length=200, return_tensors="pt")
